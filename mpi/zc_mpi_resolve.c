/* SPDX-License-Identifier: MIT */
/* Request matching done by the writer (MPI_THREAD_SINGLE and FUNNELED): the thread that makes
 * every MPI call only writes what it sees (a request started, with its handle; a handle
 * completed, with its status), and whoever converts that thread's buffers pairs them here, in
 * order, with a per-location map from handle to the requests started under it (a FIFO: Open MPI
 * hands out one predefined request for every send that completes at once). Request ids are
 * given here, per location. Persistent and collective requests stay in the table (zc_mpi_req.h). */
#include "zc_mpi_internal.h"

#include <stdlib.h>

struct rnode {
    uint64_t handle;
    uint64_t id;
    uint32_t comm;
    uint8_t kind; /* ZR_V_ISEND, ZR_V_ISEND_NULL, ZR_V_IRECV */
    struct rnode *next; /* same handle (FIFO), or the free list */
};
struct rstate {
    struct rnode **head, **tail; /* per bucket: the FIFO of each handle is in its bucket, in order */
    size_t mask, live;
    uint64_t next_id;
    struct rnode *spare;
};

/* Ids of their own: even, 2, 4, ... The table's requests (persistent, collective, and all of
 * them under MPI_THREAD_MULTIPLE) on the same location have the odd ones (zc_thread.requests).
 * Small ids take 1-3 bytes in the journal and in OTF2; counted from 2^62, as they once were,
 * each took 9 and 8. */
static uint64_t next_id(struct rstate *s) { return s->next_id += 2; }

static size_t rhash(uint64_t h, size_t mask) { return (size_t)((h * 0x9e3779b97f4a7c15ull) >> 32) & mask; }

static struct rstate *state_of(struct zc_loc *loc) {
    struct rstate *s = loc->resolve;
    if (s) return s;
    s = calloc(1, sizeof(*s));
    if (!s) return NULL;
    s->mask = 255;
    s->head = calloc(s->mask + 1, sizeof(*s->head));
    s->tail = calloc(s->mask + 1, sizeof(*s->tail));
    if (!s->head || !s->tail) {
        free(s->head);
        free(s->tail);
        free(s);
        return NULL;
    }
    s->next_id = 0;
    loc->resolve = s;
    return s;
}

/* Doubles the buckets (keeping each handle's order: nodes move in bucket order). */
static void grow(struct rstate *s) {
    size_t nmask = 2 * s->mask + 1;
    struct rnode **nh = calloc(nmask + 1, sizeof(*nh)), **nt = calloc(nmask + 1, sizeof(*nt));
    if (!nh || !nt) {
        free(nh);
        free(nt);
        return; /* longer chains, still correct */
    }
    for (size_t b = 0; b <= s->mask; b++)
        for (struct rnode *x = s->head[b], *next; x; x = next) {
            next = x->next;
            size_t i = rhash(x->handle, nmask);
            x->next = NULL;
            if (nt[i]) nt[i]->next = x;
            else nh[i] = x;
            nt[i] = x;
        }
    free(s->head);
    free(s->tail);
    s->head = nh;
    s->tail = nt;
    s->mask = nmask;
}

static void push(struct rstate *s, uint64_t handle, uint8_t kind, uint32_t comm, uint64_t id) {
    struct rnode *x = s->spare;
    if (x) s->spare = x->next;
    else if (!(x = malloc(sizeof(*x)))) return; /* out of memory: its completion is not recorded */
    *x = (struct rnode){handle, id, comm, kind, NULL};
    size_t i = rhash(handle, s->mask);
    if (s->tail[i]) s->tail[i]->next = x;
    else s->head[i] = x;
    s->tail[i] = x;
    if (++s->live > s->mask) grow(s);
}

/* The oldest request under handle (taken out of the map if take), or NULL. */
static struct rnode *find(struct rstate *s, uint64_t handle, bool take) {
    size_t i = rhash(handle, s->mask);
    struct rnode *prev = NULL;
    for (struct rnode *x = s->head[i]; x; prev = x, x = x->next) {
        if (x->handle != handle) continue;
        if (take) {
            if (prev) prev->next = x->next;
            else s->head[i] = x->next;
            if (s->tail[i] == x) s->tail[i] = prev;
            s->live--;
        }
        return x;
    }
    return NULL;
}

static void drop(struct rstate *s, struct rnode *x) {
    x->next = s->spare;
    s->spare = x;
}

/* A send or receive started: its id is given now (a send to MPI_PROC_NULL gets none and is no
 * event: its completion is not one either). */
static void resolve_start(struct rstate *s, struct zc_ev *e) {
    uint64_t h = e->d;
    if (e->type == ZC_EV_MPI_IRECV_H) {
        uint64_t id = next_id(s);
        push(s, h, ZR_V_IRECV, e->a, id);
        *e = (struct zc_ev){e->ts, ZC_EV_MPI_IRECV_REQUEST, e->a, 0, 0, id};
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
static void resolve_done(struct rstate *s, struct zc_ev *e) {
    struct rnode *x = find(s, e->d, true);
    uint32_t flags = e->a;
    bool st = flags & ZC_DONE_STATUS;
    uint64_t peer_tag = zc_mpi_raw_peer_tag(e->c);
    e->type = ZC_EV_MPI_NOP; /* not one we followed, or nothing to say */
    if (!x) return;
    if (st && zc_st_raw_cancelled(flags, e->b)) { /* the status says cancelled */
        *e = (struct zc_ev){e->ts, ZC_EV_MPI_REQUEST_CANCELLED, x->comm, 0, 0, x->id};
    } else if (x->kind == ZR_V_ISEND) {
        *e = (struct zc_ev){e->ts, ZC_EV_MPI_ISEND_COMPLETE, x->comm, 0, 0, x->id};
    } else if (x->kind == ZR_V_IRECV && st && (uint32_t)(peer_tag >> 32) != (uint32_t)MPI_PROC_NULL) {
        /* bytes, peer and tag from the status */
        *e = (struct zc_ev){e->ts, ZC_EV_MPI_IRECV, x->comm, zc_st_raw_bytes(flags, e->b), peer_tag, x->id};
    }
    drop(s, x);
}

static void resolve(struct zc_loc *loc, struct zc_ev *ev, size_t n) {
    struct rstate *s = NULL;
    for (size_t i = 0; i < n; i++) {
        struct zc_ev *e = &ev[i];
        if (e->type < ZC_EV_MPI_ISEND_H || e->type > ZC_EV_MPI_FREE_H) continue;
        if (!s && !(s = state_of(loc))) { /* out of memory: these requests go unrecorded */
            e->type = ZC_EV_MPI_NOP;
            continue;
        }
        switch (e->type) {
        case ZC_EV_MPI_ISEND_H:
        case ZC_EV_MPI_IRECV_H: resolve_start(s, e); break;
        case ZC_EV_MPI_DONE_H: resolve_done(s, e); break;
        case ZC_EV_MPI_TEST_H: {
            struct rnode *x = find(s, e->d, false);
            if (x && x->kind != ZR_V_ISEND_NULL) *e = (struct zc_ev){e->ts, ZC_EV_MPI_REQUEST_TEST, 0, 0, 0, x->id};
            else e->type = ZC_EV_MPI_NOP;
            break;
        }
        case ZC_EV_MPI_FREE_H: {
            struct rnode *x = find(s, e->d, true);
            if (x) drop(s, x);
            e->type = ZC_EV_MPI_NOP;
            break;
        }
        default: break;
        }
    }
}

void zc_mpi_resolver_install(void) { zc_loc_resolver = resolve; }
