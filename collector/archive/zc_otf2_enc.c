/* SPDX-License-Identifier: MIT */
/* zc_enc_*: the collector's records as OTF2 3.0 event-file bytes (zc_otf2_enc.h). Learned from
 * the files libotf2 3.0.2 writes for known event sequences; tests/writer compares the two. */
#include "zc_otf2_enc.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* OTF2 3.0's record type ids (its event file format) */
enum {
    T_END_OF_CHUNK = 0,
    T_END_OF_BUFFER = 1,
    T_END_OF_FILE = 2,
    T_CHUNK_HEADER = 3,
    T_TIMESTAMP = 5,
    T_BUFFER_FLUSH = 10,
    T_MEASUREMENT_ON_OFF = 11,
    T_ENTER = 12,
    T_LEAVE = 13,
    T_MPI_SEND = 14,
    T_MPI_ISEND = 15,
    T_MPI_ISEND_COMPLETE = 16,
    T_MPI_IRECV_REQUEST = 17,
    T_MPI_RECV = 18,
    T_MPI_IRECV = 19,
    T_MPI_REQUEST_TEST = 20,
    T_MPI_REQUEST_CANCELLED = 21,
    T_MPI_COLLECTIVE_BEGIN = 22,
    T_MPI_COLLECTIVE_END = 23,
    T_METRIC = 31,
    T_PARAMETER_UNSIGNED_INT = 34,
    T_RMA_PUT = 46,
    T_RMA_GET = 47,
    T_RMA_OP_COMPLETE_BLOCKING = 49,
    T_NBC_REQUEST = 85,
    T_NBC_COMPLETE = 86,
};

/* The largest size OTF2 reckons for each record (type byte, length byte where there is one,
 * every field at its longest: 5 for a 32-bit, 9 for a 64-bit compressed integer), which decides
 * where a chunk ends; plus 9 for a timestamp, counted whether or not one is written. */
enum {
    EST_TS = 9,
    EST_ENTER = 1 + 5,                         /* Enter, Leave */
    EST_REQ = 1 + 9,                           /* one request id: no length byte (OTF2 1.x's records) */
    EST_NBC_REQ = 1 + 1 + 9,                   /* NonBlockingCollectiveRequest (3.0): a length byte */
    EST_COLL_BEGIN = 1 + 1,                    /* no fields, a length byte (0) */
    EST_ONOFF = 1 + 1 + 1,                     /* MeasurementOnOff */
    EST_FLUSH = 1 + 1 + 8,                     /* BufferFlush */
    EST_P2P = 1 + 1 + 5 + 5 + 5 + 9,           /* MpiSend, MpiRecv */
    EST_P2P_REQ = EST_P2P + 9,                 /* MpiIsend, MpiIrecv */
    EST_COLL_END = 1 + 1 + 1 + 5 + 5 + 9 + 9,  /* op, comm, root, sent, received */
    EST_NBC_COMPLETE = EST_COLL_END + 9,       /* and the request id */
    EST_PARAM = 1 + 1 + 5 + 9,                 /* ParameterUnsignedInt */
    EST_RMA = 1 + 1 + 5 + 5 + 9 + 9,           /* RmaPut, RmaGet */
    EST_RMA_DONE = 1 + 1 + 5 + 9,              /* RmaOpCompleteBlocking */
};

/* Compressed integers: 0 and all-ones are the byte itself, else the number of bytes and the
 * low bytes. The whole word is copied (the record's reckoned size leaves room for it). Two
 * functions of the same shape on purpose: one on 64 bits for both cost 2.6% more (callgrind). */
static inline uint8_t *put_u32(uint8_t *p, uint32_t v) {
    if (v == 0 || v == UINT32_MAX) {
        *p = (uint8_t)v;
        return p + 1;
    }
    unsigned n = (unsigned)(32 - __builtin_clz(v) + 7) >> 3;
    *p = (uint8_t)n;
    memcpy(p + 1, &v, 4);
    return p + 1 + n;
}

static inline uint8_t *put_u64(uint8_t *p, uint64_t v) {
    if (v == 0 || v == UINT64_MAX) {
        *p = (uint8_t)v;
        return p + 1;
    }
    unsigned n = (unsigned)(64 - __builtin_clzll(v) + 7) >> 3;
    *p = (uint8_t)n;
    memcpy(p + 1, &v, 8);
    return p + 1 + n;
}

static void header(struct zc_enc *e) {
    uint8_t *p = e->chunk;
    p[0] = T_CHUNK_HEADER;
    p[1] = 0x42; /* little endian */
    uint64_t first = e->events + 1, last = 0;
    memcpy(p + 2, &first, 8);
    memcpy(p + 10, &last, 8);
    e->pos = p + 18;
}

/* The chunk is full: its last event number, the rest end-of-chunk bytes, to the sink; the next
 * one opens with the time of the record that did not fit. */
static void next_chunk(struct zc_enc *e, uint64_t t) {
    memcpy(e->chunk + 10, &e->events, 8);
    memset(e->pos, T_END_OF_CHUNK, (size_t)(e->end - e->pos));
    int r = e->sink(e->ud, e->chunk, (size_t)e->chunk_size);
    if (r && !e->err) e->err = r;
    header(e);
    uint8_t *p = e->pos;
    *p++ = T_TIMESTAMP;
    memcpy(p, &t, 8);
    e->pos = p + 8;
    e->time = t;
}

int zc_enc_open(struct zc_enc *e, uint64_t chunk_size, zc_enc_sink sink, void *ud) {
    memset(e, 0, sizeof(*e));
    e->chunk = malloc(chunk_size + 16); /* room for the end marks after a record that left one byte */
    if (!e->chunk) return ENOMEM;
    e->chunk_size = chunk_size;
    e->end = e->chunk + chunk_size;
    e->sink = sink;
    e->ud = ud;
    header(e);
    return 0;
}

/* A record with a length byte: its type, then the length once the fields are written. */
#define LEN_BEGIN(p, type) ((p)[0] = (type), (p) + 2)
#define LEN_END(start, p) ((start)[1] = (uint8_t)((p) - (start)-2))

static inline uint8_t *put_p2p(uint8_t *p, const struct zc_ev *x, uint8_t type, bool req) {
    uint8_t *s = p;
    p = LEN_BEGIN(p, type);
    p = put_u32(p, (uint32_t)(x->c >> 32));
    p = put_u32(p, x->a);
    p = put_u32(p, (uint32_t)x->c);
    p = put_u64(p, x->b);
    if (req) p = put_u64(p, x->d);
    LEN_END(s, p);
    return p;
}

/* MpiCollectiveEnd, NonBlockingCollectiveComplete: op, comm, root, sent, received [, request] */
static inline uint8_t *put_coll(uint8_t *p, const struct zc_ev *x, uint8_t type, const uint64_t *req) {
    uint8_t *s = p;
    p = LEN_BEGIN(p, type);
    *p++ = (uint8_t)(x->d >> 32);
    p = put_u32(p, x->a);
    p = put_u32(p, (uint32_t)x->d);
    p = put_u64(p, x->b);
    p = put_u64(p, x->c);
    if (req) p = put_u64(p, *req);
    LEN_END(s, p);
    return p;
}

static inline uint8_t *put_id(uint8_t *p, uint8_t type, uint32_t id) {
    *p = type;
    return put_u32(p + 1, id);
}

static inline uint8_t *put_req(uint8_t *p, uint8_t type, uint64_t id) {
    *p = type;
    return put_u64(p + 1, id);
}

static inline uint8_t *put_param(uint8_t *p, uint32_t param, uint64_t v) {
    uint8_t *s = p;
    p = LEN_BEGIN(p, T_PARAMETER_UNSIGNED_INT);
    p = put_u32(p, param);
    p = put_u64(p, v);
    LEN_END(s, p);
    return p;
}

/* Room for a record of at most est bytes at time tt (a new chunk where it would not fit, as OTF2
 * decides), its timestamp where one is due, the event counted. The state lives in locals (p, end,
 * time, events): the byte stores through p could otherwise alias e's fields, which the compiler
 * would reload after each one (a copy of each record for the same reason cost more than it saved). A time before the last one is refused, as by OTF2. */
#define OPEN(tt, est)                                                                                                  \
    do {                                                                                                               \
        uint64_t t_ = (tt);                                                                                            \
        if (t_ < time) goto refused;                                                                                   \
        if (!((uint64_t)(est) + EST_TS < (uint64_t)(end - p))) {                                                       \
            e->pos = p;                                                                                                \
            e->events = events;                                                                                        \
            next_chunk(e, t_);                                                                                         \
            p = e->pos;                                                                                                \
            time = e->time;                                                                                            \
        }                                                                                                              \
        if (t_ > time || (t_ == 0 && time == 0)) {                                                                     \
            *p = T_TIMESTAMP;                                                                                          \
            memcpy(p + 1, &t_, 8);                                                                                     \
            p += 9;                                                                                                    \
            time = t_;                                                                                                 \
        }                                                                                                              \
        events++;                                                                                                      \
    } while (0)

int zc_enc_write(struct zc_enc *e, const struct zc_ev *ev, size_t n, uint32_t param_callsite,
                 const uint8_t *metric_types, uint64_t *ts_min, uint64_t *ts_max) {
    size_t leave_at = SIZE_MAX;
    const struct zc_ev *call = NULL;
    uint64_t lo = *ts_min, hi = *ts_max;
    uint8_t *p = e->pos, *const end = e->end;
    uint64_t time = e->time, events = e->events;
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        if (i > leave_at) { /* the end of a call's events (as zc_evt_write) */
            OPEN(call->b, EST_ENTER);
            p = put_id(p, T_LEAVE, call->a);
            leave_at = SIZE_MAX;
        }
        const struct zc_ev *x = &ev[i];
        if (x->type == ZC_EV_MPI_NOP) continue;
        uint64_t t = x->ts;
        if (t < lo) lo = t;
        if (t > hi) hi = t;
        switch (x->type) {
        case ZC_EV_ENTER: OPEN(t, EST_ENTER); p = put_id(p, T_ENTER, x->a); break;
        case ZC_EV_LEAVE: OPEN(t, EST_ENTER); p = put_id(p, T_LEAVE, x->a); break;
        case ZC_EV_PARAM_U64: OPEN(t, EST_PARAM); p = put_param(p, x->a, x->b); break;
        case ZC_EV_RMA_GET:
        case ZC_EV_RMA_PUT: {
            OPEN(t, EST_RMA);
            uint8_t *s = p;
            p = LEN_BEGIN(p, x->type == ZC_EV_RMA_GET ? T_RMA_GET : T_RMA_PUT);
            p = put_u32(p, x->a);
            p = put_u32(p, (uint32_t)(x->c >> 32));
            p = put_u64(p, x->b);
            p = put_u64(p, x->c & 0xffffffffu);
            LEN_END(s, p);
            break;
        }
        case ZC_EV_RMA_COMPLETE: {
            OPEN(t, EST_RMA_DONE);
            uint8_t *s = p;
            p = LEN_BEGIN(p, T_RMA_OP_COMPLETE_BLOCKING);
            p = put_u32(p, x->a);
            p = put_u64(p, x->c);
            LEN_END(s, p);
            break;
        }
        case ZC_EV_BUFFER_FLUSH:
            OPEN(t, EST_FLUSH);
            p[0] = T_BUFFER_FLUSH;
            p[1] = 8;
            memcpy(p + 2, &x->b, 8);
            p += 10;
            break;
        case ZC_EV_MEASUREMENT:
            OPEN(t, EST_ONOFF);
            p[0] = T_MEASUREMENT_ON_OFF;
            p[1] = 1;
            p[2] = x->a ? 1 : 2; /* OTF2_MEASUREMENT_ON : OTF2_MEASUREMENT_OFF */
            p += 3;
            break;
        case ZC_EV_CALL:
            OPEN(t, EST_ENTER);
            p = put_id(p, T_ENTER, x->a);
            if (x->c) {
                OPEN(t, EST_PARAM);
                p = put_param(p, param_callsite, x->c);
            }
            if (x->d && i + x->d < n) {
                leave_at = i + x->d;
                call = x;
            } else {
                OPEN(x->b, EST_ENTER);
                p = put_id(p, T_LEAVE, x->a);
            }
            if (x->b > hi) hi = x->b;
            break;
        case ZC_EV_CALL_IRECV: /* an MPI_Irecv and its request (zc_ev.h), as zc_evt_write */
            OPEN(t, EST_ENTER);
            p = put_id(p, T_ENTER, x->a);
            if (x->c) {
                OPEN(t, EST_PARAM);
                p = put_param(p, param_callsite, x->c);
            }
            OPEN(t, EST_REQ);
            p = put_req(p, T_MPI_IRECV_REQUEST, x->d);
            OPEN(x->b, EST_ENTER);
            p = put_id(p, T_LEAVE, x->a);
            if (x->b > hi) hi = x->b;
            break;
        case ZC_EV_MPI_SEND: OPEN(t, EST_P2P); p = put_p2p(p, x, T_MPI_SEND, false); break;
        case ZC_EV_MPI_RECV: OPEN(t, EST_P2P); p = put_p2p(p, x, T_MPI_RECV, false); break;
        case ZC_EV_MPI_ISEND: OPEN(t, EST_P2P_REQ); p = put_p2p(p, x, T_MPI_ISEND, true); break;
        case ZC_EV_MPI_IRECV: OPEN(t, EST_P2P_REQ); p = put_p2p(p, x, T_MPI_IRECV, true); break;
        case ZC_EV_MPI_ISEND_COMPLETE: OPEN(t, EST_REQ); p = put_req(p, T_MPI_ISEND_COMPLETE, x->d); break;
        case ZC_EV_MPI_IRECV_REQUEST: OPEN(t, EST_REQ); p = put_req(p, T_MPI_IRECV_REQUEST, x->d); break;
        case ZC_EV_MPI_REQUEST_TEST: OPEN(t, EST_REQ); p = put_req(p, T_MPI_REQUEST_TEST, x->d); break;
        case ZC_EV_MPI_REQUEST_CANCELLED: OPEN(t, EST_REQ); p = put_req(p, T_MPI_REQUEST_CANCELLED, x->d); break;
        case ZC_EV_MPI_COLL_BEGIN:
            OPEN(t, EST_COLL_BEGIN);
            p[0] = T_MPI_COLLECTIVE_BEGIN;
            p[1] = 0;
            p += 2;
            break;
        case ZC_EV_MPI_COLL_END: OPEN(t, EST_COLL_END); p = put_coll(p, x, T_MPI_COLLECTIVE_END, NULL); break;
        case ZC_EV_MPI_NBC_REQUEST: {
            OPEN(t, EST_NBC_REQ);
            uint8_t *s = p;
            p = LEN_BEGIN(p, T_NBC_REQUEST);
            p = put_u64(p, x->d);
            LEN_END(s, p);
            break;
        }
        case ZC_EV_MPI_NBC_COMPLETE:
            if (i + 1 < n && ev[i + 1].type == ZC_EV_MPI_NBC_REQID) {
                OPEN(t, EST_NBC_COMPLETE);
                p = put_coll(p, x, T_NBC_COMPLETE, &ev[i + 1].d);
                i++;
            }
            break;
        case ZC_EV_METRIC: {
            /* values in b, c, d here and in the ZC_EV_METRIC_MORE records after it (zc_ev.h);
             * each written as its 64 bits compressed, whatever its type (as OTF2 3.0 does) */
            uint32_t nv = x->a;
            size_t more = nv ? (nv + ZC_PAPI_PER_REC - 1) / ZC_PAPI_PER_REC - 1 : 0;
            if (!metric_types || nv == 0 || nv > ZC_PAPI_MAX_EVENTS || i + more >= n) break; /* cannot happen */
            OPEN(t, 1 + 1 + 5 + 1 + 10 * nv); /* metric, count, a type byte and a value each */
            uint8_t *s = p;
            p = LEN_BEGIN(p, T_METRIC);
            *p++ = 0; /* the process's metric class: local id 0 */
            *p++ = (uint8_t)nv;
            for (uint32_t j = 0; j < nv; j++) {
                const struct zc_ev *r = &ev[i + j / ZC_PAPI_PER_REC];
                uint32_t k = j % ZC_PAPI_PER_REC;
                *p++ = metric_types[j];
                p = put_u64(p, k == 0 ? r->b : k == 1 ? r->c : r->d);
            }
            LEN_END(s, p);
            i += more;
            break;
        }
        default: break;
        }
    }
    if (leave_at != SIZE_MAX) {
        OPEN(call->b, EST_ENTER);
        p = put_id(p, T_LEAVE, call->a);
    }
    goto done;
refused:
    rc = -1;
done:
    e->pos = p;
    e->time = time;
    e->events = events;
    *ts_min = lo;
    *ts_max = hi;
    return rc;
}

int zc_enc_close(struct zc_enc *e) {
    if (!e->chunk) return e->err;
    memcpy(e->chunk + 10, &e->events, 8);
    e->pos[0] = T_END_OF_FILE;
    e->pos[1] = T_END_OF_BUFFER;
    int r = e->sink(e->ud, e->chunk, (size_t)(e->pos + 2 - e->chunk));
    if (r && !e->err) e->err = r;
    free(e->chunk);
    e->chunk = e->pos = e->end = NULL;
    return e->err;
}
