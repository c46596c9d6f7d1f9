/* SPDX-License-Identifier: MIT */
/* The request table's out-of-line parts (the hot ones are zc_mpi_req.h): records of requests the
 * inline words cannot hold, the table's growth, and settling what a Wait/Test call did to its
 * requests when it is not "all completed". */
#include "zc_mpi_internal.h"

#include <stdlib.h>

/* ---------------------------------------------------------------- the table */
_Atomic size_t zc_mpi_nfollowed;
static struct zc_rt_slot zr_empty[1]; /* the table before the first request: one free slot */
struct zc_mpi_rt zc_mpi_rt = {zr_empty, 0, 0};
pthread_mutex_t zc_mpi_reqs_lock = PTHREAD_MUTEX_INITIALIZER;
bool zc_mpi_reqs_mt, zc_mpi_deferred, zc_mpi_rt_used;

void zc_mpi_set_thread_level(int level) {
    zc_mpi_reqs_mt = level == MPI_THREAD_MULTIPLE;
#ifdef ZC_MPI_STATUS_FIELDS /* the writer reads cancellation and size from the status */
    /* only the thread that initialised MPI makes MPI calls: its location sees every request */
    zc_mpi_deferred = level <= MPI_THREAD_FUNNELED && zc_knobs.MPI_WRITER_MATCHING;
    if (zc_mpi_deferred) zc_mpi_resolver_install();
#endif
}

/* Out of line: rare, and they keep the wrappers short. */
struct zc_req *zc_mpi_req_alloc_slow(void) { return calloc(1, sizeof(struct zc_req)); }
void zc_mpi_req_free_slow(struct zc_req *r) { free(r); }

struct zc_rt_slot *zc_mpi_rt_add(MPI_Request k) {
    if (!zc_mpi_rt_used) {
        zc_mpi_rt_used = true;
        __atomic_store_n(&zc_mpi_fast_done, false, __ATOMIC_RELAXED); /* completions look at the table now */
    }
    if ((zc_mpi_rt.n + 1) * 2 > zc_mpi_rt.mask + 1 && !zc_mpi_rt_grow()) return NULL;
    size_t i = zr_hash(k, zc_mpi_rt.mask);
    while (zc_mpi_rt.s[i].key) i = (i + 1) & zc_mpi_rt.mask;
    zc_mpi_rt.s[i] = (struct zc_rt_slot){k, 0, NULL, 0};
    zc_mpi_rt.n++;
    return &zc_mpi_rt.s[i];
}

/* Rehash at the same or a larger size, keeping only handles with requests. */
bool zc_mpi_rt_grow(void) {
    size_t live = 0, cap = zc_mpi_rt.mask + 1;
    for (size_t j = 0; j < cap; j++) live += zc_mpi_rt.s[j].key && (zc_mpi_rt.s[j].head || zc_mpi_rt.s[j].v);
    size_t ncap = 256;
    while ((live + 1) * 4 > ncap) ncap *= 2;
    struct zc_rt_slot *ns = calloc(ncap, sizeof(*ns));
    if (!ns) return false;
    for (size_t j = 0; j < cap; j++) {
        if (!zc_mpi_rt.s[j].key || (!zc_mpi_rt.s[j].head && !zc_mpi_rt.s[j].v)) continue;
        size_t i = zr_hash(zc_mpi_rt.s[j].key, ncap - 1);
        while (ns[i].key) i = (i + 1) & (ncap - 1);
        ns[i] = zc_mpi_rt.s[j];
    }
    if (zc_mpi_rt.s != zr_empty) free(zc_mpi_rt.s);
    zc_mpi_rt.s = ns;
    zc_mpi_rt.mask = ncap - 1;
    zc_mpi_rt.n = live;
    return true;
}

/* ---------------------------------------------------------------- records */
void zc_mpi_req_new_rec(struct zc_mpi_call *c, enum zc_mpi_req_kind kind, int64_t count, MPI_Datatype t, int peer, int tag,
                        uint32_t comm, MPI_Request req) {
    struct zc_req *ri = zr_alloc();
    if (!ri) return;
    ri->owner = c->t;
    ri->bytes = kind == ZC_MPI_REQ_ISEND || kind == ZC_MPI_REQ_PSEND ? zc_mpi_bytes_of(count, t) : 0;
    ri->recvd = kind == ZC_MPI_REQ_ISENDRECV ? zc_mpi_bytes_of(count, t) : 0;
    ri->type = t;
    ri->comm = comm;
    ri->peer = peer;
    ri->tag = tag;
    ri->kind = (uint8_t)kind;
    ri->op = 0;
    ri->root = 0;
    /* persistent requests are inactive until MPI_Start */
    if (!zr_persistent(ri)) zr_activate(c, ri);
    else ri->active = ri->cancelled = false, ri->id = 0;
    zr_insert(req, ri);
}

/* An inline word as a record (to go on a chain, or through the general settling code). */
static struct zc_req *zr_unpack(uint64_t v, const void *owner) {
    struct zc_req *r = zr_alloc();
    if (!r) return NULL;
    unsigned k = zr_v_kind(v);
    *r = (struct zc_req){.owner = owner, .id = zr_v_id(v), .comm = zr_v_comm(v),
                         .peer = k == ZR_V_ISEND_NULL ? MPI_PROC_NULL : 0,
                         .kind = k == ZR_V_IRECV ? ZC_MPI_REQ_IRECV : ZC_MPI_REQ_ISEND, .active = true,
                         .cancelled = (v & ZR_V_CANCELLED) != 0};
    return r;
}

/* A handle with records on its chain: the calling thread's first (the ids of a location must
 * pair up), then the inline word (whose thread is not known), then any. */
struct zc_req *zc_mpi_take_slow(struct zc_rt_slot *f, const void *me) {
    struct zc_req **link = NULL;
    for (struct zc_req **l = &f->head; *l; l = &(*l)->next)
        if ((*l)->owner == me) {
            link = l;
            break;
        }
    if (!link && f->v) {
        struct zc_req *ri = (struct zc_req *)(uintptr_t)f->v;
        f->v = 0;
        zr_followed(-1); /* an inline word is active */
        return ri;
    }
    if (!link) link = &f->head;
    struct zc_req *ri = *link;
    *link = ri->next;
    ri->next = NULL;
    zr_followed_if(ri, -1);
    return ri;
}

/* Back into the table (not completed, or persistent): an inline word goes back inline if its
 * place is free, else as a record. */
static void zr_put_back(MPI_Request req, struct zc_req *ri) {
    if (zr_is_v(ri)) {
        zr_lock();
        struct zc_rt_slot *f = zr_slot_of(req);
        bool done = f && !f->v;
        if (done) {
            f->v = zr_v(ri);
            zr_followed(1);
        }
        zr_unlock();
        if (done) return;
        ri = zr_unpack(zr_v(ri), zc_mpi_tls.t);
        if (!ri) return;
    }
    zr_insert(req, ri);
}

/* ---------------------------------------------------------------- completions */
void zc_mpi_completed_rec(struct zc_mpi_call *c, MPI_Request before, struct zc_req *ri, const MPI_Status *st) {
    if (c->t && ri->active) {
        int cancelled = 0;
        if (__builtin_expect(ri->cancelled, 0) && st && st != MPI_STATUS_IGNORE) PMPI_Test_cancelled(st, &cancelled);
        if (cancelled) {
            *zc_mpi_slots(c, 1) = (struct zc_ev){c->t1, ZC_EV_MPI_REQUEST_CANCELLED, ri->comm, 0, 0, ri->id};
        } else if (ri->kind == ZC_MPI_REQ_ISEND || ri->kind == ZC_MPI_REQ_PSEND) {
            if (ri->peer != MPI_PROC_NULL) *zc_mpi_slots(c, 1) = (struct zc_ev){c->t1, ZC_EV_MPI_ISEND_COMPLETE, ri->comm, 0, 0, ri->id};
        } else if (ri->kind == ZC_MPI_REQ_NBC || ri->kind == ZC_MPI_REQ_PNBC) {
            struct zc_ev *e = zc_mpi_slots(c, 2);
            e[0] = (struct zc_ev){c->t1, ZC_EV_MPI_NBC_COMPLETE, ri->comm, ri->bytes, ri->recvd, ((uint64_t)ri->op << 32) | ri->root};
            e[1] = (struct zc_ev){c->t1, ZC_EV_MPI_NBC_REQID, 0, 0, 0, ri->id};
        } else if (ri->kind == ZC_MPI_REQ_ISENDRECV) {
            bool any = ri->peer == MPI_ANY_SOURCE || ri->tag == MPI_ANY_TAG, seen = st && st != MPI_STATUS_IGNORE;
            int peer = any && seen ? st->MPI_SOURCE : ri->peer, tag = any && seen ? st->MPI_TAG : ri->tag;
            if (peer != MPI_PROC_NULL && peer != MPI_ANY_SOURCE)
                *zc_mpi_slots(c, 1) = (struct zc_ev){c->t1, ZC_EV_MPI_IRECV, ri->comm, ri->recvd, zc_mpi_peer_tag(peer, tag), ri->id};
        } else if (st && st != MPI_STATUS_IGNORE && st->MPI_SOURCE != MPI_PROC_NULL) {
            *zc_mpi_slots(c, 1) = (struct zc_ev){c->t1, ZC_EV_MPI_IRECV, ri->comm, zr_status_bytes(st, ri->type),
                                                 zc_mpi_peer_tag(st->MPI_SOURCE, st->MPI_TAG), ri->id};
        }
        /* else a receive from MPI_PROC_NULL: nothing was received */
    }
    ri->active = false;
    if (zr_persistent(ri)) zr_insert(before, ri); /* inactive until the next MPI_Start */
    else zr_free(ri);
}

void zc_mpi_start(struct zc_mpi_call *c, MPI_Request req) {
    /* persistent requests have handles of their own; one started untraced stays inactive */
    if (!c->t) return;
    zr_lock();
    struct zc_rt_slot *f = zr_find(req);
    if (f && f->head) {
        if (!f->head->active) zr_followed(1);
        zr_activate(c, f->head);
    }
    zr_unlock();
}

struct zc_req *zc_mpi_take(MPI_Request req) { return zr_take(req, zc_thread_get()); }

void *zc_mpi_reqs_alloc(int n) { return malloc((size_t)n * (sizeof(MPI_Request) + sizeof(struct zc_req *))); }

bool zc_mpi_need_status(struct zc_req *const *ris, int n) {
    if (zc_mpi_deferred) return n > 0; /* whatever the writer matches may be a receive */
    for (int i = 0; ris && i < n; i++)
        if (ris[i] && zr_needs_status(ris[i])) return true;
    return false;
}

/* ---------------------------------------------------------------- settling a Wait/Test call */
static void not_completed(struct zc_mpi_call *c, MPI_Request before, struct zc_req *ri, bool tested) {
    if (tested && c->t) {
        if (zr_is_v(ri)) *zc_mpi_slots(c, 1) = (struct zc_ev){c->t1, ZC_EV_MPI_REQUEST_TEST, 0, 0, 0, zr_v_id(zr_v(ri))};
        else if (ri->active) *zc_mpi_slots(c, 1) = (struct zc_ev){c->t1, ZC_EV_MPI_REQUEST_TEST, 0, 0, 0, ri->id};
    }
    zr_put_back(before, ri);
}

/* After a call that failed: a request whose handle MPI reset to MPI_REQUEST_NULL completed (its
 * status is not reliable, so no receive details), the others are put back. */
static void settle_failed(struct zc_mpi_call *c, MPI_Request before, struct zc_req *ri, MPI_Request after) {
    if (after == MPI_REQUEST_NULL && (zr_is_v(ri) || !zr_persistent(ri))) zr_completed(c, before, ri, MPI_STATUS_IGNORE);
    else zr_put_back(before, ri);
}

/* A handle the writer matches: what the call did to it (as settle_failed, zr_completed and
 * not_completed do to a record). */
static void raw_settle(struct zc_mpi_call *c, MPI_Request before, MPI_Request after, int rc, bool completed, bool tested,
                       const MPI_Status *st) {
    if (rc != MPI_SUCCESS) {
        if (after == MPI_REQUEST_NULL) zr_raw_done(c, before, MPI_STATUS_IGNORE);
    } else if (completed) {
        zr_raw_done(c, before, st);
    } else if (tested) {
        zr_raw_test(c, before);
    }
}

/* Anything but every request completing (a test that found some pending, a failure). */
void zc_mpi_settle_all_slow(struct zc_mpi_call *c, const MPI_Request *before, struct zc_req **ris, int n,
                            const MPI_Request *after, int rc, int flag, bool test, const MPI_Status *sts) {
    for (int i = 0; i < n; i++) {
        if (!ris[i]) {
            if (zr_raw(NULL, before[i]))
                raw_settle(c, before[i], after ? after[i] : before[i], rc, flag, test, sts ? &sts[i] : NULL);
            continue;
        }
        if (rc != MPI_SUCCESS) settle_failed(c, before[i], ris[i], after ? after[i] : before[i]);
        else if (flag) zr_completed(c, before[i], ris[i], sts ? &sts[i] : NULL);
        else not_completed(c, before[i], ris[i], test);
    }
}

void zc_mpi_settle_one(struct zc_mpi_call *c, MPI_Request before, struct zc_req *ri, MPI_Request after, int rc, int flag,
                       bool test, const MPI_Status *st) {
    if (!ri) {
        if (zr_raw(NULL, before)) raw_settle(c, before, after, rc, flag, test, st);
        return;
    }
    if (rc != MPI_SUCCESS) settle_failed(c, before, ri, after);
    else if (flag) zr_completed(c, before, ri, st);
    else not_completed(c, before, ri, test);
}

void zc_mpi_settle_any(struct zc_mpi_call *c, const MPI_Request *before, struct zc_req **ris, int n,
                       const MPI_Request *after, int rc, int flag, bool test, int index, const MPI_Status *st) {
    if (!ris && !before) return; /* not followed; ris NULL with before: all the writer's */
    for (int i = 0; i < n; i++) {
        /* one test record per call */
        if (!ris || !ris[i]) {
            if (zr_raw(NULL, before[i]))
                raw_settle(c, before[i], after ? after[i] : before[i], rc, flag && i == index, test && i == 0, st);
            continue;
        }
        if (rc != MPI_SUCCESS) settle_failed(c, before[i], ris[i], after ? after[i] : before[i]);
        else if (flag && i == index) zr_completed(c, before[i], ris[i], st);
        else not_completed(c, before[i], ris[i], test && i == 0);
    }
}

/* zc_mpi_settle_all's other cases when every handle is the writer's */
void zc_mpi_settle_raw_slow(struct zc_mpi_call *c, const MPI_Request *before, int n, const MPI_Request *after, int rc,
                            int flag, bool test, const MPI_Status *sts) {
    for (int i = 0; i < n; i++)
        if (before[i] != MPI_REQUEST_NULL)
            raw_settle(c, before[i], after ? after[i] : before[i], rc, flag, test, sts ? &sts[i] : NULL);
}

#define ZR_SETTLED ((struct zc_req *)(uintptr_t)2) /* settle_some: completed already */
void zc_mpi_settle_some(struct zc_mpi_call *c, const MPI_Request *before, struct zc_req **ris, int n,
                        const MPI_Request *after, int rc, bool test, int outcount, const int *indices,
                        const MPI_Status *sts) {
    struct zc_req *own[64], **scratch = NULL;
    if (!ris) { /* all the writer's (or not followed): a scratch array to mark the completed */
        if (!before || n <= 0) return;
        ris = scratch = n <= 64 ? own : calloc((size_t)n, sizeof(*ris));
        if (!ris) return;
        if (ris == own) memset(own, 0, (size_t)n * sizeof(*own));
    }
    if (rc == MPI_SUCCESS && outcount != MPI_UNDEFINED && indices) /* indices NULL: out of memory */
        for (int k = 0; k < outcount; k++) {
            int i = indices[k];
            if (i < 0 || i >= n || ris[i] == ZR_SETTLED) continue;
            if (ris[i]) zr_completed(c, before[i], ris[i], sts ? &sts[k] : NULL);
            else if (zr_raw(NULL, before[i])) zr_raw_done(c, before[i], sts ? &sts[k] : NULL);
            ris[i] = ZR_SETTLED;
        }
    for (int i = 0; i < n; i++) {
        if (ris[i] == ZR_SETTLED) continue;
        if (!ris[i]) {
            if (zr_raw(NULL, before[i])) raw_settle(c, before[i], after ? after[i] : before[i], rc, false, test, NULL);
            continue;
        }
        if (rc != MPI_SUCCESS) settle_failed(c, before[i], ris[i], after ? after[i] : before[i]);
        else not_completed(c, before[i], ris[i], test);
    }
    if (scratch && scratch != own) free(scratch);
}

/* ---------------------------------------------------------------- frees and cancels */
/* before MPI_Request_free: a request of the table goes; the writer forgets one it matches */
void zc_mpi_req_forget(struct zc_mpi_call *c, MPI_Request req) {
    c->has_pre = false;
    struct zc_req *r = zc_mpi_take(req);
    if (r) zr_free(r);
    else if (zr_raw(NULL, req) && c->t) {
        c->pre = (struct zc_ev){c->t0, ZC_EV_MPI_FREE_H, 0, 0, 0, (uint64_t)(uintptr_t)req};
        zr_raw_gone(1);
        c->has_pre = true;
    }
}

void zc_mpi_req_cancelled(MPI_Request req) {
    zr_lock();
    struct zc_rt_slot *f = zr_find(req);
    if (f && f->v) f->v |= ZR_V_CANCELLED;
    else if (f && f->head) f->head->cancelled = true;
    zr_unlock();
}

/* ---------------------------------------------------------------- statuses */
MPI_Status *zc_mpi_statuses(MPI_Status *stack, int n_stack, int n) {
    if (n <= n_stack) return stack;
    MPI_Status *s = malloc((size_t)n * sizeof(*s));
    return s ? s : MPI_STATUSES_IGNORE; /* out of memory: completions then carry no status */
}
