/* SPDX-License-Identifier: MIT */
/* Request matching done by the writer (MPI_THREAD_SINGLE and FUNNELED): the thread that makes
 * every MPI call only writes what it sees (a request started, with its handle; a handle
 * completed, with its status), and whoever converts that thread's buffers pairs them here, in
 * order, with a per-location map from handle to the requests started under it (a FIFO: Open MPI
 * hands out one predefined request for every send that completes at once). Request ids are
 * given here, per location. Persistent and collective requests stay in the table (zc_mpi_req.h). */
#include "zc_mpi_internal.h"

#include <stdlib.h>

/* The map is an open-addressing table (linear probing) of handles, each slot holding the oldest
 * request started under its handle inline and the younger ones, rarely any, on a list. A slot
 * stays when its handle has no request left: MPI recycles its request objects, so the same few
 * handles come back at once and are found on the first probe, with nothing inserted, deleted or
 * allocated (the chained map before cost ~48 instructions per record, bench/README.md). A
 * rehash at half full drops the empty slots. */
struct rreq { /* one request: its id, communicator and kind (ZR_V_ISEND, ZR_V_ISEND_NULL, ZR_V_IRECV) */
    uint64_t id;
    uint32_t comm;
    uint8_t kind;
};
struct rnode { /* a younger request under the same handle, or on the spare list */
    struct rreq r;
    struct rnode *next;
};
struct rslot {
    uint64_t handle;
    struct rreq r;              /* the oldest request, if live */
    bool used, live;            /* used: the handle is the slot's (it stays until a rehash) */
    struct rnode *more, *tail;  /* the younger ones, oldest first */
};
struct rstate {
    struct rslot *slot;
    size_t mask, used; /* capacity - 1; slots in use */
    uint64_t next_id;
    struct rnode *spare;
};

/* Ids of their own: even, 2, 4, ... The table's requests (persistent, collective, and all of
 * them under MPI_THREAD_MULTIPLE) on the same location have the odd ones (zc_thread.requests).
 * Small ids take 1-3 bytes in the journal and in OTF2; counted from 2^62, as they once were,
 * each took 9 and 8. */
static uint64_t next_id(struct rstate *s) { return s->next_id += 2; }

static size_t rhash(uint64_t h, size_t mask) { return (size_t)((h * 0x9e3779b97f4a7c15ull) >> 32) & mask; }

/* The slot of handle h, or the free slot where it would go (never full: rehashed at half). A
 * free slot's handle may equal h (both 0): it has no request, as a slot of h without one. */
static inline __attribute__((always_inline)) struct rslot *slot_of(const struct rstate *s, uint64_t h) {
    size_t i = rhash(h, s->mask);
    while (s->slot[i].handle != h && s->slot[i].used) i = (i + 1) & s->mask;
    return &s->slot[i];
}

static struct rstate *state_of(struct zc_loc *loc) {
    struct rstate *s = loc->resolve;
    if (s) return s;
    s = calloc(1, sizeof(*s));
    if (!s) return NULL;
    s->mask = 255;
    if (!(s->slot = calloc(s->mask + 1, sizeof(*s->slot)))) {
        free(s);
        return NULL;
    }
    loc->resolve = s;
    return s;
}

/* At half full: the slots of handles with requests, in a table of at least four times as many
 * (a failed allocation keeps the old one, which still has room: callers check). */
static void rehash(struct rstate *s) {
    size_t keep = 0;
    for (size_t i = 0; i <= s->mask; i++) keep += s->slot[i].live;
    size_t cap = 256;
    while (cap < 4 * keep) cap *= 2;
    struct rslot *old = s->slot, *ns = calloc(cap, sizeof(*ns));
    if (!ns) return;
    size_t omask = s->mask;
    s->slot = ns;
    s->mask = cap - 1;
    s->used = 0;
    for (size_t i = 0; i <= omask; i++)
        if (old[i].live) {
            *slot_of(s, old[i].handle) = old[i];
            s->used++;
        }
    free(old);
}

/* A request started under handle, behind the ones already there (out of memory: it is not kept,
 * and its completion is not recorded). */
static inline __attribute__((always_inline)) void push(struct rstate *s, uint64_t handle, uint8_t kind, uint32_t comm, uint64_t id) {
    struct rslot *x = slot_of(s, handle);
    if (__builtin_expect(!x->used, 0)) {
        if (2 * (s->used + 1) > s->mask + 1) {
            rehash(s);
            if (2 * (s->used + 1) > s->mask + 1) return;
            x = slot_of(s, handle);
        }
        *x = (struct rslot){.handle = handle, .used = true};
        s->used++;
    }
    struct rreq r = {id, comm, kind};
    if (__builtin_expect(!x->live, 1)) {
        x->r = r;
        x->live = true;
        return;
    }
    struct rnode *m = s->spare;
    if (m) s->spare = m->next;
    else if (!(m = malloc(sizeof(*m)))) return;
    *m = (struct rnode){r, NULL};
    if (x->more) x->tail->next = m;
    else x->more = m;
    x->tail = m;
}

/* The oldest request under handle, or NULL; take: it leaves the map (valid until the next push). */
static inline __attribute__((always_inline)) struct rreq *find(struct rstate *s, uint64_t handle, bool take, struct rreq *out) {
    struct rslot *x = slot_of(s, handle);
    if (x->handle != handle || !x->live) return NULL;
    if (!take) return &x->r;
    *out = x->r;
    struct rnode *m = x->more;
    if (__builtin_expect(m != NULL, 0)) { /* the next one moves up */
        x->r = m->r;
        x->more = m->next;
        m->next = s->spare;
        s->spare = m;
    } else {
        x->live = false;
    }
    return out;
}

/* A send or receive started: its id is given now (a send to MPI_PROC_NULL gets none and is no
 * event: its completion is not one either). */
/* A receive started under handle h on communicator comm: its request id (out of memory: its
 * completion is not recorded). */
static inline __attribute__((always_inline)) uint64_t start_irecv(struct rstate *s, uint64_t h, uint32_t comm) {
    uint64_t id = next_id(s);
    push(s, h, ZR_V_IRECV, comm, id);
    return id;
}

static inline __attribute__((always_inline)) void resolve_start(struct rstate *s, struct zc_ev *e) {
    uint64_t h = e->d;
    if (e->type == ZC_EV_MPI_IRECV_H) {
        *e = (struct zc_ev){e->ts, ZC_EV_MPI_IRECV_REQUEST, e->a, 0, 0, start_irecv(s, h, e->a)};
    } else if ((uint32_t)(e->c >> 32) == (uint32_t)MPI_PROC_NULL) {
        push(s, h, ZR_V_ISEND_NULL, e->a, 0);
        e->type = ZC_EV_MPI_NOP;
    } else {
        uint64_t id = next_id(s);
        push(s, h, ZR_V_ISEND, e->a, id);
        e->type = ZC_EV_MPI_ISEND;
        e->d = id;
    }
}

/* A handle completed: the oldest request started under it, with what its status says (as the
 * application's thread read it: zc_mpi_done_h_st; decoded here, off that thread). */
static inline __attribute__((always_inline)) void resolve_done(struct rstate *s, struct zc_ev *e) {
    struct rreq buf, *x = find(s, e->d, true, &buf);
    uint32_t flags = e->a;
    bool st = flags & ZC_DONE_STATUS;
    e->type = ZC_EV_MPI_NOP; /* not one we followed, or nothing to say */
    if (!x) return;
    if (st && zc_st_raw_cancelled(flags, e->b)) { /* the status says cancelled */
        *e = (struct zc_ev){e->ts, ZC_EV_MPI_REQUEST_CANCELLED, x->comm, 0, 0, x->id};
    } else if (x->kind == ZR_V_ISEND) {
        *e = (struct zc_ev){e->ts, ZC_EV_MPI_ISEND_COMPLETE, x->comm, 0, 0, x->id};
    } else if (x->kind == ZR_V_IRECV && st) {
        uint64_t peer_tag = zc_mpi_raw_peer_tag(e->c);
        if ((uint32_t)(peer_tag >> 32) != (uint32_t)MPI_PROC_NULL) /* bytes, peer and tag from the status */
            *e = (struct zc_ev){e->ts, ZC_EV_MPI_IRECV, x->comm, zc_st_raw_bytes(flags, e->b), peer_tag, x->id};
    }
}

/* The records the writer matches: the ZC_EV_MPI_*_H and the MPI_Irecv calls that carry their
 * request (ZC_EV_CALL_IRECV), one test of the type for all (every type is below 64). */
#define RESOLVE_TYPES                                                                                                \
    ((((UINT64_C(1) << (ZC_EV_MPI_FREE_H + 1)) - 1) & ~((UINT64_C(1) << ZC_EV_MPI_ISEND_H) - 1)) |               \
     UINT64_C(1) << ZC_EV_CALL_IRECV)
_Static_assert(ZC_EV_CALL_IRECV < 64, "record types fit the mask");
_Static_assert(ZC_EV_MPI_IRECV_H == ZC_EV_MPI_ISEND_H + 1 && ZC_EV_MPI_DONE_H == ZC_EV_MPI_IRECV_H + 1 &&
                   ZC_EV_MPI_TEST_H == ZC_EV_MPI_DONE_H + 1 && ZC_EV_MPI_FREE_H == ZC_EV_MPI_TEST_H + 1,
               "the order resolve() tests them in");

/* Without the location's map (out of memory): its requests go unrecorded. */
static void resolve_none(struct zc_ev *e, struct zc_ev *end) {
    for (; e < end; e++) {
        if (!(RESOLVE_TYPES >> (e->type & 63) & 1)) continue;
        if (e->type == ZC_EV_CALL_IRECV) *e = (struct zc_ev){e->ts, ZC_EV_CALL, e->a, e->b, 0, 0};
        else e->type = ZC_EV_MPI_NOP;
    }
}

static void resolve(struct zc_loc *loc, struct zc_ev *ev, size_t n) {
    struct rstate *s = loc->resolve;
    struct zc_ev *e = ev, *const end = ev + n;
    if (__builtin_expect(!s, 0)) { /* the map is made with the location's first record to match */
        while (e < end && !(RESOLVE_TYPES >> (e->type & 63) & 1)) e++;
        if (e == end) return;
        if (!(s = state_of(loc))) {
            resolve_none(e, end);
            return;
        }
    }
    for (; e < end; e++) {
        uint32_t type = e->type;
        if (!(RESOLVE_TYPES >> (type & 63) & 1)) continue;
        /* tests in the order of their frequency (a jump table's bounds check and indirect
         * branch cost more): completions, then starts */
        struct rreq buf, *x;
        if (__builtin_expect(type == ZC_EV_MPI_DONE_H, 1)) {
            resolve_done(s, e);
        } else if (type == ZC_EV_CALL_IRECV) { /* the call stays, its request gets its id (c: the communicator, then no callsite) */
            e->d = start_irecv(s, e->d, (uint32_t)e->c);
            e->c = 0;
        } else if (type <= ZC_EV_MPI_IRECV_H) { /* ZC_EV_MPI_ISEND_H, ZC_EV_MPI_IRECV_H */
            resolve_start(s, e);
        } else if (type == ZC_EV_MPI_TEST_H) {
            x = find(s, e->d, false, &buf);
            if (x && x->kind != ZR_V_ISEND_NULL) *e = (struct zc_ev){e->ts, ZC_EV_MPI_REQUEST_TEST, 0, 0, 0, x->id};
            else e->type = ZC_EV_MPI_NOP;
        } else { /* ZC_EV_MPI_FREE_H */
            find(s, e->d, true, &buf);
            e->type = ZC_EV_MPI_NOP;
        }
    }
}

void zc_mpi_resolver_install(void) { zc_loc_resolver = resolve; }
