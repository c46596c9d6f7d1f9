/* SPDX-License-Identifier: MIT */
/* The hot part of the MPI layer, inlined into every generated wrapper (included by
 * zc_mpi_internal.h): events of a call, communicator ids, and the request table from creation
 * to completion. A recorded Isend, Irecv or Waitall takes no lock and no atomic instruction
 * (the table is locked only under MPI_THREAD_MULTIPLE). */
#ifndef ZC_MPI_REQ_H
#define ZC_MPI_REQ_H

#include <stdlib.h>

/* ---------------------------------------------------------------- events of a call */
void zc_mpi_flush_split(struct zc_mpi_call *c);
/* Room for n more events; they are written in place at c->ev[c->n...] (building them on the
 * stack and copying would stall store forwarding). */
static inline __attribute__((always_inline)) struct zc_ev *zc_mpi_pend_slots(struct zc_mpi_call *c, int n) {
    if (__builtin_expect(c->n + n > ZC_MPI_PENDING, 0)) zc_mpi_flush_split(c);
    struct zc_ev *e = &c->ev[c->n];
    c->n += n;
    return e;
}

static inline uint64_t zc_mpi_peer_tag(int peer, int tag) { return ((uint64_t)(uint32_t)peer << 32) | (uint32_t)tag; }

static inline uint64_t zc_mpi_bytes_of(int count, MPI_Datatype t) {
    if (count <= 0 || t == MPI_DATATYPE_NULL_ZC) return 0;
    int sz = 0;
    if (PMPI_Type_size(t, &sz) != MPI_SUCCESS || sz < 0) return 0;
    return (uint64_t)count * (uint64_t)sz;
}

/* NULL when out of memory: the call then goes untracked */
static inline MPI_Request *zc_mpi_copy_requests(MPI_Request *stack, int n_stack, const MPI_Request *reqs, int n) {
    if (n <= 0 || !reqs) return NULL;
    MPI_Request *d = n <= n_stack ? stack : malloc((size_t)n * sizeof(*d));
    if (d)
        for (int i = 0; i < n; i++) d[i] = reqs[i];
    return d;
}

/* ---------------------------------------------------------------- communicators */
/* The last communicator a thread used, valid while no communicator was registered or forgotten
 * since (handles are recycled): most calls use the one of the call before. */
extern atomic_uint_fast64_t zc_mpi_comm_epoch;
struct zc_mpi_last_comm {
    MPI_Comm comm;
    uint32_t id;
    uint64_t epoch;
};
extern _Thread_local struct zc_mpi_last_comm zc_mpi_last_comm __attribute__((tls_model("initial-exec")));
uint32_t zc_mpi_comm_id_slow(MPI_Comm comm);
static inline uint32_t zc_mpi_comm_id(MPI_Comm comm) {
    if (__builtin_expect(zc_mpi_last_comm.comm == comm &&
                             zc_mpi_last_comm.epoch == atomic_load_explicit(&zc_mpi_comm_epoch, memory_order_acquire), 1))
        return zc_mpi_last_comm.id;
    return zc_mpi_comm_id_slow(comm);
}

/* ---------------------------------------------------------------- requests */
extern _Thread_local uint64_t zc_mpi_next_request __attribute__((tls_model("initial-exec")));
/* A completing call takes the requests it is given out of the table before it calls MPI and puts
 * back those that did not complete: while a request is active nobody else can be handed its
 * handle, but once MPI frees it another thread may get the same handle for a new request before
 * this one has recorded the completion (MPI_THREAD_MULTIPLE). */
struct zc_req {
    struct zc_req *next; /* other records under the same handle; the spare list */
    const void *owner;   /* the thread that started it (zc_thread) */
    uint64_t id;         /* request id of the current activation */
    uint64_t bytes;      /* sends; collectives: sent */
    uint64_t recvd;      /* collectives: received */
    MPI_Datatype type;
    uint32_t comm;
    int peer, tag;
    uint8_t kind;        /* enum zc_mpi_req_kind */
    bool active, cancelled;
    OTF2_CollectiveOp op;
    uint32_t root;
};

/* Handles are not unique among live requests: Open MPI returns one predefined, already
 * completed request for every MPI_Isend it completes at once. Each handle maps to a chain of
 * records; a completion takes one of them, the calling thread's if there is one (the request
 * ids of a thread's location must pair up), else any (they are alike: sends that completed).
 *
 * The table is an open-addressing hash (linear probing). A handle's slot stays when its chain
 * empties: MPI recycles its request objects, so the same handles come back at once, and their
 * slots are found on the first probe without insertion or deletion; a rehash (at half full)
 * drops the empty ones. It is locked only when MPI provides MPI_THREAD_MULTIPLE: at lower levels
 * the application never has two threads in MPI at once, and every lock is an atomic instruction
 * that waits for the call's stores to drain (measured: the locks were a third of the cost of a
 * call). */
struct zc_rt_slot {
    MPI_Request key; /* NULL: free */
    struct zc_req *head;
};
extern struct zc_mpi_rt {
    struct zc_rt_slot *s;
    size_t cap, n; /* n: keys, empty chains included */
} zc_mpi_rt;
extern pthread_mutex_t zc_mpi_reqs_lock;
extern bool zc_mpi_reqs_mt; /* set once in MPI_Init, before any wrapper records */
/* Active records in the table, i.e. requests started while recording that have not completed:
 * while it is 0, completion calls pass straight through while recording is off. Changed under
 * the table's lock (or by the one thread in MPI) with plain loads and stores, no atomic
 * instruction on the hot path; read without the lock as a hint by closed calls. */
extern _Atomic size_t zc_mpi_nfollowed;
static inline void zr_followed(long d) {
    atomic_store_explicit(&zc_mpi_nfollowed, atomic_load_explicit(&zc_mpi_nfollowed, memory_order_relaxed) + (size_t)d,
                          memory_order_relaxed);
}
/* d = +1 or -1 if the record is active (branchless: the common case is active) */
static inline void zr_followed_if(const struct zc_req *ri, long d);
bool zc_mpi_rt_grow(void);

static inline void zr_lock(void) {
    if (__builtin_expect(zc_mpi_reqs_mt, 0)) pthread_mutex_lock(&zc_mpi_reqs_lock);
}
static inline void zr_unlock(void) {
    if (__builtin_expect(zc_mpi_reqs_mt, 0)) pthread_mutex_unlock(&zc_mpi_reqs_lock);
}

static inline size_t zr_hash(MPI_Request k, size_t cap) {
    uint64_t h = (uint64_t)(uintptr_t)k * 0x9e3779b97f4a7c15ull;
    return (size_t)(h >> 20) & (cap - 1);
}

static inline struct zc_rt_slot *zr_find(MPI_Request k) {
    if (__builtin_expect(!zc_mpi_rt.cap, 0)) return NULL;
    for (size_t i = zr_hash(k, zc_mpi_rt.cap);; i = (i + 1) & (zc_mpi_rt.cap - 1)) {
        if (zc_mpi_rt.s[i].key == k) return &zc_mpi_rt.s[i];
        if (!zc_mpi_rt.s[i].key) return NULL;
    }
}

/* the slot for k, created empty if absent; NULL when out of memory */
static inline struct zc_rt_slot *zr_slot_of(MPI_Request k) {
    struct zc_rt_slot *f = zr_find(k);
    if (__builtin_expect(f != NULL, 1)) return f;
    if ((zc_mpi_rt.n + 1) * 2 > zc_mpi_rt.cap && !zc_mpi_rt_grow()) return NULL;
    size_t i = zr_hash(k, zc_mpi_rt.cap);
    while (zc_mpi_rt.s[i].key) i = (i + 1) & (zc_mpi_rt.cap - 1);
    zc_mpi_rt.s[i].key = k;
    zc_mpi_rt.s[i].head = NULL;
    zc_mpi_rt.n++;
    return &zc_mpi_rt.s[i];
}

/* Records are recycled per thread: a request's life is a few hundred ns in a halo loop. */
#define ZC_REQ_SPARE 64
extern _Thread_local struct zc_req *zc_mpi_spare_reqs __attribute__((tls_model("initial-exec")));
extern _Thread_local int zc_mpi_nspare __attribute__((tls_model("initial-exec")));

/* Every field is set by the caller (req_new, zc_mpi_icoll). */
static inline struct zc_req *zr_alloc(void) {
    struct zc_req *r = zc_mpi_spare_reqs;
    if (__builtin_expect(!r, 0)) return calloc(1, sizeof(*r));
    zc_mpi_spare_reqs = r->next;
    zc_mpi_nspare--;
    return r;
}

static inline void zr_free(struct zc_req *r) {
    if (!r) return;
    if (__builtin_expect(zc_mpi_nspare >= ZC_REQ_SPARE, 0)) {
        free(r);
        return;
    }
    r->next = zc_mpi_spare_reqs;
    zc_mpi_spare_reqs = r;
    zc_mpi_nspare++;
}

static inline void zr_followed_if(const struct zc_req *ri, long d) { zr_followed(d * (long)ri->active); }

static inline bool zr_persistent(const struct zc_req *ri) { return ri->kind == ZC_MPI_REQ_PSEND || ri->kind == ZC_MPI_REQ_PRECV; }

/* Only with events (c->events): a request started untraced stays inactive, so its completion is
 * not recorded either. */
static inline void zr_activate(struct zc_mpi_call *c, struct zc_req *ri) {
    /* unique per location: a thread slot's counter continues where the slot's previous thread
     * left it (zc_core.h); calls not recorded use their own range */
    ri->id = c->t ? ++c->t->requests : (UINT64_C(1) << 63) | ++zc_mpi_next_request;
    ri->active = true;
    ri->cancelled = false;
    uint32_t type;
    switch (ri->kind) {
    case ZC_MPI_REQ_ISEND:
    case ZC_MPI_REQ_PSEND:
        if (ri->peer == MPI_PROC_NULL) return;
        type = ZC_EV_MPI_ISEND;
        break;
    case ZC_MPI_REQ_IRECV:
    case ZC_MPI_REQ_PRECV: type = ZC_EV_MPI_IRECV_REQUEST; break;
    default: type = ZC_EV_MPI_NBC_REQUEST; break;
    }
    /* a request starts with the call that starts it: a receive may complete before that call
     * returns, so the Leave time would put the send after its receive */
    *zc_mpi_pend_slots(c, 1) = (struct zc_ev){c->t0, type, ri->comm, ri->bytes, zc_mpi_peer_tag(ri->peer, ri->tag), ri->id};
}

static inline void zr_insert(MPI_Request req, struct zc_req *ri) {
    zr_lock();
    struct zc_rt_slot *f = zr_slot_of(req);
    if (__builtin_expect(f != NULL, 1)) {
        ri->next = f->head;
        f->head = ri;
        zr_followed_if(ri, 1);
    }
    zr_unlock();
    if (!f) zr_free(ri); /* out of memory: this request goes unrecorded */
}

static inline __attribute__((always_inline)) void zc_mpi_req_new(struct zc_mpi_call *c, enum zc_mpi_req_kind kind, int count, MPI_Datatype t, int peer, int tag,
                    MPI_Comm comm, MPI_Request req) {
    /* a request started untraced is not followed: its completion is then not recorded either.
     * Persistent requests are, whenever they are created (once, often while recording is off):
     * their starts while recording are recorded. */
    bool persistent = kind == ZC_MPI_REQ_PSEND || kind == ZC_MPI_REQ_PRECV;
    if ((!c->events && !persistent) || req == MPI_REQUEST_NULL) return;
    struct zc_req *ri = zr_alloc();
    if (!ri) return;
    ri->owner = c->t;
    ri->bytes = kind == ZC_MPI_REQ_ISEND || kind == ZC_MPI_REQ_PSEND ? zc_mpi_bytes_of(count, t) : 0;
    ri->recvd = 0;
    ri->type = t;
    ri->comm = zc_mpi_comm_id(comm);
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


static inline struct zc_req *zr_take(MPI_Request req, const void *me) {
    if (req == MPI_REQUEST_NULL) return NULL;
    zr_lock();
    struct zc_rt_slot *f = zr_find(req);
    struct zc_req *ri = NULL;
    if (f && f->head) {
        struct zc_req **link = &f->head;
        if ((*link)->owner != me) /* ours first; else the first */
            for (struct zc_req **l = &(*link)->next; *l; l = &(*l)->next)
                if ((*l)->owner == me) {
                    link = l;
                    break;
                }
        ri = *link;
        *link = ri->next;
        ri->next = NULL;
        zr_followed_if(ri, -1);
    }
    zr_unlock();
    return ri;
}


static inline struct zc_req **zc_mpi_take_all(struct zc_req **stack, int n_stack, const MPI_Request *r, int n) {
    struct zc_req **ris = n <= n_stack ? stack : malloc((size_t)n * sizeof(*ris));
    if (!ris) return NULL; /* out of memory: these completions go unrecorded */
    const void *me = zc_thread_get();
    for (int i = 0; i < n; i++) ris[i] = zr_take(r[i], me);
    return ris;
}


/* bytes a completed receive brought (Open MPI's status holds them; else count x type size) */
static inline uint64_t zr_status_bytes(const MPI_Status *st, MPI_Datatype t) {
#ifdef OMPI_MAJOR_VERSION
    (void)t;
    return (uint64_t)st->_ucount;
#else
    int count = 0;
    if (PMPI_Get_count(st, t, &count) != MPI_SUCCESS || count == MPI_UNDEFINED) count = 0;
    return zc_mpi_bytes_of(count, t);
#endif
}

static inline void zr_completed(struct zc_mpi_call *c, MPI_Request before, struct zc_req *ri, const MPI_Status *st) {
    if (c->events && ri->active) {
        int cancelled = 0;
        if (__builtin_expect(ri->cancelled, 0) && st && st != MPI_STATUS_IGNORE) PMPI_Test_cancelled(st, &cancelled);
        if (cancelled) {
            *zc_mpi_pend_slots(c, 1) = (struct zc_ev){0, ZC_EV_MPI_REQUEST_CANCELLED, ri->comm, 0, 0, ri->id};
        } else if (ri->kind == ZC_MPI_REQ_ISEND || ri->kind == ZC_MPI_REQ_PSEND) {
            if (ri->peer != MPI_PROC_NULL) *zc_mpi_pend_slots(c, 1) = (struct zc_ev){0, ZC_EV_MPI_ISEND_COMPLETE, ri->comm, 0, 0, ri->id};
        } else if (ri->kind == ZC_MPI_REQ_NBC) {
            struct zc_ev *e = zc_mpi_pend_slots(c, 2);
            e[0] = (struct zc_ev){0, ZC_EV_MPI_NBC_COMPLETE, ri->comm, ri->bytes, ri->recvd, ((uint64_t)ri->op << 32) | ri->root};
            e[1] = (struct zc_ev){0, ZC_EV_MPI_NBC_REQID, 0, 0, 0, ri->id};
        } else if (st && st != MPI_STATUS_IGNORE && st->MPI_SOURCE != MPI_PROC_NULL) {
            *zc_mpi_pend_slots(c, 1) = (struct zc_ev){0, ZC_EV_MPI_IRECV, ri->comm, zr_status_bytes(st, ri->type),
                                               zc_mpi_peer_tag(st->MPI_SOURCE, st->MPI_TAG), ri->id};
        }
        /* else a receive from MPI_PROC_NULL: nothing was received */
    }
    ri->active = false;
    if (zr_persistent(ri)) zr_insert(before, ri); /* inactive until the next MPI_Start */
    else zr_free(ri);
}

/* Waitall and friends: the common case (every request completed, success) inline. */
void zc_mpi_settle_all_slow(struct zc_mpi_call *c, const MPI_Request *before, struct zc_req **ris, int n,
                            const MPI_Request *after, int rc, int flag, bool test, const MPI_Status *sts);
static inline void zc_mpi_settle_all(struct zc_mpi_call *c, const MPI_Request *before, struct zc_req **ris, int n,
                                     const MPI_Request *after, int rc, int flag, bool test, const MPI_Status *sts) {
    if (!ris) return;
    if (__builtin_expect(rc != MPI_SUCCESS || !flag, 0)) {
        zc_mpi_settle_all_slow(c, before, ris, n, after, rc, flag, test, sts);
        return;
    }
    for (int i = 0; i < n; i++)
        if (ris[i]) zr_completed(c, before[i], ris[i], sts ? &sts[i] : NULL);
}

#endif
