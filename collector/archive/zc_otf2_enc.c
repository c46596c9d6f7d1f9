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
    if (v < 256) { /* ids, ranks and tags mostly: no bit search */
        p[0] = 1;
        p[1] = (uint8_t)v;
        return p + 2;
    }
    unsigned n = ((unsigned)(31 ^ __builtin_clz(v)) + 8) >> 3; /* the highest bit's index: bsr */
    *p = (uint8_t)n;
    memcpy(p + 1, &v, 4);
    return p + 1 + n;
}

static inline uint8_t *put_u64(uint8_t *p, uint64_t v) {
    if (v == 0 || v == UINT64_MAX) {
        *p = (uint8_t)v;
        return p + 1;
    }
    unsigned n = ((unsigned)(63 ^ __builtin_clzll(v)) + 8) >> 3;
    *p = (uint8_t)n;
    memcpy(p + 1, &v, 8);
    return p + 1 + n;
}

/* A record is written only where its largest size plus a timestamp is less than the chunk's
 * free bytes (open_ev): a chunk between records has at least one free */
enum { ROOM_RESUME = 1 };

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

int zc_enc_resume(struct zc_enc *e, uint64_t chunk_size, zc_enc_sink sink, void *ud, const uint8_t *chunk,
                  size_t used, uint64_t events, uint64_t time) {
    if (used < 18 || used + ROOM_RESUME > chunk_size) return EINVAL;
    int r = zc_enc_open(e, chunk_size, sink, ud);
    if (r) return r;
    memcpy(e->chunk, chunk, used);
    e->pos = e->chunk + used;
    e->events = events;
    e->time = time;
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

/* ParameterUnsignedInt: the parameter's id as encoded once per batch (pre: its compressed bytes
 * in the low end of a word, pn: how many), then the value */
static inline uint8_t *put_param(uint8_t *p, uint64_t pre, unsigned pn, uint64_t v) {
    uint8_t *s = p;
    p = LEN_BEGIN(p, T_PARAMETER_UNSIGNED_INT);
    memcpy(p, &pre, 8);
    p = put_u64(p + pn, v);
    LEN_END(s, p);
    return p;
}

/* A parameter id's compressed bytes as one word (put_param) */
static unsigned param_pre(uint32_t param, uint64_t *pre) {
    uint8_t b[16] = {0};
    unsigned n = (unsigned)(put_u32(b, param) - b);
    memcpy(pre, b, 8);
    return n;
}

/* The encoder's state while it writes a batch, in locals: the byte stores through p could
 * otherwise alias e's fields, which the compiler would reload after each one. */
struct st {
    uint8_t *p;
    uint64_t time, events; /* e->time, e->events */
    uint64_t lo, hi;       /* the batch's time range (zc_evt_write's) */
    uintptr_t leave_after; /* the record after which a call's Leave is due (UINTPTR_MAX: none) */
    const struct zc_ev *call;
    const struct zc_ev *last; /* the batch's last record */
    size_t n;                 /* its records */
    uint32_t cs;              /* the callsite parameter's id */
    unsigned cs_n;            /* and its encoding (put_param) */
    uint64_t cs_pre;
};

/* An event at time t of at most est bytes: refused (false) before the last time, as by OTF2;
 * else its timestamp where one is due (a later time, or 0 while the last is 0) and the event
 * counted. `room`: first a new chunk where the event would not fit, as OTF2 decides (est plus a
 * timestamp not less than the chunk's free bytes); without, the caller knows there is room. */
static inline __attribute__((always_inline)) bool open_ev(struct zc_enc *e, struct st *s, uint64_t t, unsigned est,
                                                          bool room) {
    if (room) {
        if (t < s->time) return false;
        if (!((uint64_t)est + EST_TS < (uint64_t)(e->end - s->p))) {
            e->pos = s->p;
            e->events = s->events;
            next_chunk(e, t);
            s->p = e->pos;
            s->time = e->time;
        }
        if (t > s->time || t == 0) { /* t >= time: t == 0 only while time is 0 */
            s->p[0] = T_TIMESTAMP;
            memcpy(s->p + 1, &t, 8);
            s->p += 9;
            s->time = t;
        }
    } else if (__builtin_expect(t > s->time, 1)) {
        s->p[0] = T_TIMESTAMP;
        memcpy(s->p + 1, &t, 8);
        s->p += 9;
        s->time = t;
    } else if (t < s->time) {
        return false; /* also t == 0 after a later time, which `t - 1 >= time` would take */
    } else if (t == 0) {
        s->p[0] = T_TIMESTAMP;
        memcpy(s->p + 1, &t, 8);
        s->p += 9;
    }
    s->events++;
    return true;
}

/* A second event at the time of the one just written (a call's callsite parameter): a timestamp
 * only at time 0. */
static inline __attribute__((always_inline)) void open_same(struct zc_enc *e, struct st *s, uint64_t t, unsigned est,
                                                            bool room) {
    if (room) {
        open_ev(e, s, t, est, true); /* t is the last time: never refused */
        return;
    }
    if (t == 0) {
        s->p[0] = T_TIMESTAMP;
        memset(s->p + 1, 0, 8);
        s->p += 9;
    }
    s->events++;
}

/* A call's Leave where the room is known (no chunk ends between it and its Enter): the Enter's
 * region bytes copied (one word: the record's reckoned size and the copy's 9 bytes both fit the
 * room known), not compressed again. */
static inline uint8_t *put_leave_as(uint8_t *p, const uint8_t *enter, size_t len) {
    uint64_t w;
    memcpy(&w, enter + 1, 8); /* through a register: the Leave may overlap the Enter's word */
    p[0] = T_LEAVE;
    memcpy(p + 1, &w, 8);
    return p + len;
}

/* The records inside a call that its own step writes with it, at most (step, "fused"), and the
 * most bytes that step writes: a Leave due before it, the Enter, the callsite, FUSE_MAX
 * messages with a request (the largest record of the fused types) and the copied Leave, each
 * with a timestamp. */
enum {
    FUSE_MAX = 3,
    EST_FUSED = (EST_ENTER + EST_TS) + (EST_ENTER + EST_TS) + (EST_PARAM + EST_TS) + FUSE_MAX * (EST_P2P_REQ + EST_TS) +
                (9 + EST_TS),
};

/* The most bytes one step of the loop below writes (a call's Leave due before the record, then
 * the record: a Metric of 16 values, 15 + 173; or a call with its records, EST_FUSED) and the
 * most room OTF2 asks for one event (the same Metric's 168, plus a timestamp): steps taken with
 * at least both free need no check of the room. The compressed integers' whole-word stores stay
 * within a field's largest size. */
enum { STEP_MAX = EST_FUSED > 15 + 173 ? EST_FUSED : 15 + 173, ROOM_MAX = 192 };
_Static_assert(EST_P2P_REQ >= EST_P2P && EST_P2P_REQ >= EST_REQ, "the fused types' largest record");

/* A record inside a call, written by the call's step where the room is known (fused): true
 * when written (or nothing to write: a NOP); false leaves it to a step of its own, for a type
 * not fused or an event refused (before the last time: that step refuses it again and keeps
 * the time range as zc_evt_write does). The commonest of an MPI call's records (a blocking
 * send, a completion, a wait's receive): no step, no dispatch of its own, no pending Leave. */
static inline __attribute__((always_inline)) bool put_inner(struct zc_enc *e, struct st *s, const struct zc_ev *y) {
    uint64_t t = y->ts;
    uint32_t type = y->type;
    /* a blocking send's and a wait's records first, by compares: the jump table costs more */
    if (type == ZC_EV_MPI_SEND) {
        if (!open_ev(e, s, t, EST_P2P, false)) return false;
        s->p = put_p2p(s->p, y, T_MPI_SEND, false);
        return true;
    }
    if (type == ZC_EV_MPI_IRECV) {
        if (!open_ev(e, s, t, EST_P2P_REQ, false)) return false;
        s->p = put_p2p(s->p, y, T_MPI_IRECV, true);
        return true;
    }
    switch (type) {
    case ZC_EV_MPI_NOP: return true;
    case ZC_EV_MPI_ISEND:
        if (!open_ev(e, s, t, EST_P2P_REQ, false)) return false;
        s->p = put_p2p(s->p, y, T_MPI_ISEND, true);
        return true;
    case ZC_EV_MPI_RECV:
        if (!open_ev(e, s, t, EST_P2P, false)) return false;
        s->p = put_p2p(s->p, y, T_MPI_RECV, false);
        return true;
    case ZC_EV_MPI_ISEND_COMPLETE:
        if (!open_ev(e, s, t, EST_REQ, false)) return false;
        s->p = put_req(s->p, T_MPI_ISEND_COMPLETE, y->d);
        return true;
    case ZC_EV_MPI_IRECV_REQUEST:
        if (!open_ev(e, s, t, EST_REQ, false)) return false;
        s->p = put_req(s->p, T_MPI_IRECV_REQUEST, y->d);
        return true;
    default: return false;
    }
}

/* One step: the Leave of a call whose records ended, then record *xp (a Metric or a
 * NonBlockingCollectiveComplete takes the records after it too: *xp moves on). false: refused.
 * `room`: check the room before each event (near a chunk's end) and keep the time range record
 * by record; without, the time range is kept where zc_enc_write's end cannot see it (records
 * not written, a refusal). */
static inline __attribute__((always_inline)) bool step(struct zc_enc *e, struct st *s, const struct zc_ev **xp,
                                                       const uint8_t *metric_types, bool room) {
    const struct zc_ev *x = *xp;
    if ((uintptr_t)x > s->leave_after) { /* the end of a call's events (as zc_evt_write) */
        if (!open_ev(e, s, s->call->b, EST_ENTER, room)) return false;
        s->p = put_id(s->p, T_LEAVE, s->call->a);
        s->leave_after = UINTPTR_MAX;
    }
    uint64_t t = x->ts;
    if (room && x->type != ZC_EV_MPI_NOP) {
        if (t < s->lo) s->lo = t;
        if (t > s->hi) s->hi = t;
    }
    uint8_t *p;
#define OPEN(tt, est)                                                                                                  \
    do {                                                                                                               \
        if (!open_ev(e, s, (tt), (est), room)) goto refused;                                                           \
        p = s->p;                                                                                                      \
    } while (0)
#define DONE(q) (s->p = (q))
    /* a call first: the commonest record of a thread (an MPI call's, a Level Zero call's), and a
     * compare is cheaper than the jump table */
    if (zc_ev_is_call(x->type)) {
        if (room && x->b > s->hi) s->hi = x->b;
        OPEN(t, EST_ENTER);
        const uint8_t *enter = p;
        DONE(put_id(p, T_ENTER, x->a));
        size_t enter_len = (size_t)(s->p - enter);
        if (x->c) {
            open_same(e, s, t, EST_PARAM, room);
            DONE(put_param(s->p, s->cs_pre, s->cs_n, x->c));
        }
        if (x->type == ZC_EV_CALL_IRECV) { /* an MPI_Irecv and its request (zc_ev.h), as zc_evt_write */
            open_same(e, s, t, EST_REQ, room);
            DONE(put_req(s->p, T_MPI_IRECV_REQUEST, x->d));
        } else if (x->d - 1 < s->n && x + x->d <= s->last) { /* d records inside, all in this batch */
            const struct zc_ev *end = x + x->d;
            if (!room) { /* its records and its Leave in this step, as far as put_inner takes them */
                const struct zc_ev *y = x + 1; /* d >= 1: the first is there */
                while (put_inner(e, s, y) && ++y <= end && y - x <= FUSE_MAX) {
                }
                if (y > end && open_ev(e, s, x->b, EST_ENTER, false)) {
                    *xp = end;
                    DONE(put_leave_as(s->p, enter, enter_len));
                    return true;
                }
                *xp = y - 1; /* the rest, or the Leave refused, as if the records were steps */
            }
            s->leave_after = (uintptr_t)end;
            s->call = x;
            return true;
        }
        OPEN(x->b, EST_ENTER);
        DONE(room ? put_id(p, T_LEAVE, x->a) : put_leave_as(p, enter, enter_len));
        return true;
    }
    switch (x->type) {
    case ZC_EV_MPI_NOP: break;
    case ZC_EV_ENTER: OPEN(t, EST_ENTER); DONE(put_id(p, T_ENTER, x->a)); break;
    case ZC_EV_LEAVE: OPEN(t, EST_ENTER); DONE(put_id(p, T_LEAVE, x->a)); break;
    case ZC_EV_PARAM_U64: {
        OPEN(t, EST_PARAM);
        uint64_t pre = s->cs_pre;
        unsigned pn = s->cs_n;
        if (x->a != s->cs) pn = param_pre(x->a, &pre); /* a parameter other than the callsite */
        DONE(put_param(p, pre, pn, x->b));
        break;
    }
    case ZC_EV_MPI_SEND: OPEN(t, EST_P2P); DONE(put_p2p(p, x, T_MPI_SEND, false)); break;
    case ZC_EV_MPI_RECV: OPEN(t, EST_P2P); DONE(put_p2p(p, x, T_MPI_RECV, false)); break;
    case ZC_EV_MPI_ISEND: OPEN(t, EST_P2P_REQ); DONE(put_p2p(p, x, T_MPI_ISEND, true)); break;
    case ZC_EV_MPI_IRECV: OPEN(t, EST_P2P_REQ); DONE(put_p2p(p, x, T_MPI_IRECV, true)); break;
    case ZC_EV_MPI_ISEND_COMPLETE: OPEN(t, EST_REQ); DONE(put_req(p, T_MPI_ISEND_COMPLETE, x->d)); break;
    case ZC_EV_MPI_IRECV_REQUEST: OPEN(t, EST_REQ); DONE(put_req(p, T_MPI_IRECV_REQUEST, x->d)); break;
    case ZC_EV_MPI_REQUEST_TEST: OPEN(t, EST_REQ); DONE(put_req(p, T_MPI_REQUEST_TEST, x->d)); break;
    case ZC_EV_MPI_REQUEST_CANCELLED: OPEN(t, EST_REQ); DONE(put_req(p, T_MPI_REQUEST_CANCELLED, x->d)); break;
    case ZC_EV_RMA_GET:
    case ZC_EV_RMA_PUT: {
        OPEN(t, EST_RMA);
        uint8_t *s0 = p;
        p = LEN_BEGIN(p, x->type == ZC_EV_RMA_GET ? T_RMA_GET : T_RMA_PUT);
        p = put_u32(p, x->a);
        p = put_u32(p, (uint32_t)(x->c >> 32));
        p = put_u64(p, x->b);
        p = put_u64(p, x->c & 0xffffffffu);
        LEN_END(s0, p);
        DONE(p);
        break;
    }
    case ZC_EV_RMA_COMPLETE: {
        OPEN(t, EST_RMA_DONE);
        uint8_t *s0 = p;
        p = LEN_BEGIN(p, T_RMA_OP_COMPLETE_BLOCKING);
        p = put_u32(p, x->a);
        p = put_u64(p, x->c);
        LEN_END(s0, p);
        DONE(p);
        break;
    }
    case ZC_EV_BUFFER_FLUSH:
        OPEN(t, EST_FLUSH);
        p[0] = T_BUFFER_FLUSH;
        p[1] = 8;
        memcpy(p + 2, &x->b, 8);
        DONE(p + 10);
        break;
    case ZC_EV_MEASUREMENT:
        OPEN(t, EST_ONOFF);
        p[0] = T_MEASUREMENT_ON_OFF;
        p[1] = 1;
        p[2] = x->a ? 1 : 2; /* OTF2_MEASUREMENT_ON : OTF2_MEASUREMENT_OFF */
        DONE(p + 3);
        break;
    case ZC_EV_MPI_COLL_BEGIN:
        OPEN(t, EST_COLL_BEGIN);
        p[0] = T_MPI_COLLECTIVE_BEGIN;
        p[1] = 0;
        DONE(p + 2);
        break;
    case ZC_EV_MPI_COLL_END: OPEN(t, EST_COLL_END); DONE(put_coll(p, x, T_MPI_COLLECTIVE_END, NULL)); break;
    case ZC_EV_MPI_NBC_REQUEST: {
        OPEN(t, EST_NBC_REQ);
        uint8_t *s0 = p;
        p = LEN_BEGIN(p, T_NBC_REQUEST);
        p = put_u64(p, x->d);
        LEN_END(s0, p);
        DONE(p);
        break;
    }
    case ZC_EV_MPI_NBC_COMPLETE:
        if (x < s->last && x[1].type == ZC_EV_MPI_NBC_REQID) {
            OPEN(t, EST_NBC_COMPLETE);
            DONE(put_coll(p, x, T_NBC_COMPLETE, &x[1].d));
            *xp = x + 1;
        } else {
            goto unwritten;
        }
        break;
    case ZC_EV_METRIC: {
        /* values in b, c, d here and in the ZC_EV_METRIC_MORE records after it (zc_ev.h);
         * each written as its 64 bits compressed, whatever its type (as OTF2 3.0 does) */
        uint32_t nv = x->a;
        size_t more = nv ? (nv + ZC_PAPI_PER_REC - 1) / ZC_PAPI_PER_REC - 1 : 0;
        if (!metric_types || nv == 0 || nv > ZC_PAPI_MAX_EVENTS || more > (size_t)(s->last - x))
            goto unwritten; /* cannot happen */
        OPEN(t, 1 + 1 + 5 + 1 + 10 * nv); /* metric, count, a type byte and a value each */
        uint8_t *s0 = p;
        p = LEN_BEGIN(p, T_METRIC);
        *p++ = 0; /* the process's metric class: local id 0 */
        *p++ = (uint8_t)nv;
        for (uint32_t j = 0; j < nv; j++) {
            const struct zc_ev *r = &x[j / ZC_PAPI_PER_REC];
            uint32_t k = j % ZC_PAPI_PER_REC;
            *p++ = metric_types[j];
            p = put_u64(p, k == 0 ? r->b : k == 1 ? r->c : r->d);
        }
        LEN_END(s0, p);
        DONE(p);
        *xp = x + more;
        break;
    }
    default: goto unwritten;
    }
#undef OPEN
#undef DONE
    return true;
unwritten: /* a record that makes no event still counts in the time range (as zc_evt_write) */
    if (!room) {
        if (t < s->lo) s->lo = t;
        if (t > s->hi) s->hi = t;
    }
    return true;
refused: /* the record counts in the time range up to here, a call with its Leave */
    if (!room) {
        if (t < s->lo) s->lo = t;
        if (zc_ev_is_call(x->type) && x->b > s->hi) s->hi = x->b;
    }
    return false;
}

/* A batch: where the chunk has room for a run of steps (STEP_MAX each, ROOM_MAX left after the
 * last), the run goes without a room check; near the chunk's end, step by step with one. The
 * time range: written events lie between the last time before the batch and the last one
 * after it (OTF2 refuses a time before the last), so a location that has written an event
 * keeps it only at the batch's end and where zc_evt_write counts a record that writes nothing
 * (a refusal, a record of no event); before its first event, record by record. */
int zc_enc_write(struct zc_enc *e, const struct zc_ev *ev, size_t n, uint32_t param_callsite,
                 const uint8_t *metric_types, uint64_t *ts_min, uint64_t *ts_max) {
    if (n == 0) return 0;
    struct st s = {e->pos, e->time, e->events, *ts_min, *ts_max, UINTPTR_MAX, NULL, ev + n - 1, n, param_callsite, 0, 0};
    s.cs_n = param_pre(param_callsite, &s.cs_pre);
    int rc = 0;
    const struct zc_ev *x = ev, *const stop = ev + n;
    while (x < stop) {
        size_t free_ = (size_t)(e->end - s.p);
        size_t k = free_ > ROOM_MAX ? (free_ - ROOM_MAX - 1) / STEP_MAX : 0;
        if (k && s.events) {
            const struct zc_ev *lim = (size_t)(stop - x) > k ? x + k : stop;
            for (; x < lim; x++)
                if (!step(e, &s, &x, metric_types, false)) goto refused;
        } else {
            if (!step(e, &s, &x, metric_types, true)) goto refused;
            x++;
        }
    }
    if (s.leave_after != UINTPTR_MAX) {
        if (!open_ev(e, &s, s.call->b, EST_ENTER, true)) goto refused;
        s.p = put_id(s.p, T_LEAVE, s.call->a);
    }
    goto done;
refused:
    rc = -1;
    if (s.leave_after != UINTPTR_MAX && s.call->b > s.hi) s.hi = s.call->b; /* counted at its call */
done:
    if (s.time > s.hi && s.events) s.hi = s.time;
    e->pos = s.p;
    e->time = s.time;
    e->events = s.events;
    *ts_min = s.lo;
    *ts_max = s.hi;
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
