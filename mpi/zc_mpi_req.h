/* SPDX-License-Identifier: MIT */
/* The hot part of the MPI layer, inlined into every generated wrapper (included by
 * zc_mpi_internal.h): events of a call, communicator ids, and the request table from creation
 * to completion. A recorded Isend, Irecv or Waitall takes no lock and no atomic instruction
 * (the table is locked only under MPI_THREAD_MULTIPLE). */
#ifndef ZC_MPI_REQ_H
#define ZC_MPI_REQ_H

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- events of a call */
static inline uint64_t zc_mpi_peer_tag(int peer, int tag) { return ((uint64_t)(uint32_t)peer << 32) | (uint32_t)tag; }

/* count elements of t in bytes. A predefined datatype's size comes from the thread's cache: its
 * handle lives as long as MPI and is never freed (MPI_Type_free of one is erroneous), so the
 * cache needs no MPI_Type_free wrapper; a derived one is asked of MPI each time, since its
 * handle may be freed and reused for another type. errno is kept. */
uint64_t zc_mpi_type_bytes_slow(int64_t count, MPI_Datatype t, struct zc_mpi_tsz *e);
static inline uint64_t zc_mpi_bytes_of(int64_t count, MPI_Datatype t) {
    if (count <= 0 || t == MPI_DATATYPE_NULL_ZC) return 0;
    uint64_t k = (uint64_t)(uintptr_t)t; /* a pointer (Open MPI) or an int (MPICH) */
    struct zc_mpi_tsz *e = &zc_mpi_tls.tsz[(k * UINT64_C(0x9E3779B97F4A7C15)) >> 62];
    if (__builtin_expect(e->h == (uintptr_t)t && e->sz1 > 0, 1)) return (uint64_t)count * (uint64_t)(e->sz1 - 1);
    return zc_mpi_type_bytes_slow(count, t, e);
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
extern atomic_uint_fast64_t zc_mpi_comm_epoch;
uint32_t zc_mpi_comm_id_slow(MPI_Comm comm);
static inline uint32_t zc_mpi_comm_id(MPI_Comm comm) {
    if (__builtin_expect(zc_mpi_tls.last_comm.comm == comm &&
                             zc_mpi_tls.last_comm.epoch == atomic_load_explicit(&zc_mpi_comm_epoch, memory_order_acquire), 1))
        return zc_mpi_tls.last_comm.id;
    return zc_mpi_comm_id_slow(comm);
}

/* ---------------------------------------------------------------- requests */
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

/* The common request (an active Isend or Irecv, below MPI_THREAD_MULTIPLE) is not a record but
 * one word in its table slot, so that starting and completing it allocates nothing and follows
 * no pointer: completing it needs only its kind, communicator and request id (a receive's peer,
 * tag and size come from its status, Open MPI's _ucount).
 *   bit 0       1 (an inline record is never 0, and odd: see zr_ref)
 *   bits 1-2    ZR_V_ISEND, ZR_V_ISEND_NULL (to MPI_PROC_NULL: its completion is not an event),
 *               ZR_V_IRECV
 *   bit 3       cancelled (MPI_Cancel)
 *   bits 4-23   local communicator id
 *   bits 24-63  request id
 * Everything else (persistent and collective requests, ids or communicators too large, a second
 * request under the same handle, MPI_THREAD_MULTIPLE) is a struct zc_req on the slot's chain.
 * Taken out of the table, both travel as a `struct zc_req *`: an odd value is an inline word. */
enum { ZR_V_ISEND = 0, ZR_V_ISEND_NULL = 1, ZR_V_IRECV = 2 };
#define ZR_V_CANCELLED 8u
#define ZR_V_COMM_BITS 20
#define ZR_V_ID_SHIFT 24
static inline uint64_t zr_pack(unsigned kind, uint32_t comm, uint64_t id) {
    return 1u | (uint64_t)kind << 1 | (uint64_t)comm << 4 | id << ZR_V_ID_SHIFT;
}
static inline bool zr_is_v(const struct zc_req *r) { return ((uintptr_t)r & 1) != 0; }
static inline uint64_t zr_v(const struct zc_req *r) { return (uint64_t)(uintptr_t)r; }
static inline unsigned zr_v_kind(uint64_t v) { return (unsigned)(v >> 1) & 3; }
static inline uint32_t zr_v_comm(uint64_t v) { return (uint32_t)(v >> 4) & ((1u << ZR_V_COMM_BITS) - 1); }
static inline uint64_t zr_v_id(uint64_t v) { return v >> ZR_V_ID_SHIFT; }

/* Handles are not unique among live requests: Open MPI returns one predefined, already
 * completed request for every MPI_Isend it completes at once. Each handle maps to an inline
 * word and a chain of records; a completion takes one of them, the calling thread's if there is
 * one (the request ids of a thread's location must pair up), else any (they are alike: sends
 * that completed).
 *
 * The table is an open-addressing hash (linear probing). A handle's slot stays when it empties:
 * MPI recycles its request objects, so the same handles come back at once, and their slots are
 * found on the first probe without insertion or deletion; a rehash (at half full) drops the empty
 * ones. It is locked only when MPI provides MPI_THREAD_MULTIPLE: at lower levels the application
 * never has two threads in MPI at once, and every lock is an atomic instruction that waits for
 * the call's stores to drain (measured: the locks were a third of the cost of a call). */
struct zc_rt_slot {
    MPI_Request key;     /* NULL: free */
    uint64_t v;          /* the inline record, 0 if none */
    struct zc_req *head; /* records */
    uint64_t pad;        /* 32 bytes: a slot is one shift away */
};
extern struct zc_mpi_rt {
    struct zc_rt_slot *s; /* never NULL: a one-slot empty table until the first request */
    size_t mask, n;       /* capacity - 1; keys, empty slots included */
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
struct zc_rt_slot *zc_mpi_rt_add(MPI_Request k); /* a new key (out of line: grows the table) */

static inline void zr_lock(void) {
    if (__builtin_expect(zc_mpi_reqs_mt, 0)) pthread_mutex_lock(&zc_mpi_reqs_lock);
}
static inline void zr_unlock(void) {
    if (__builtin_expect(zc_mpi_reqs_mt, 0)) pthread_mutex_unlock(&zc_mpi_reqs_lock);
}

static inline size_t zr_hash(MPI_Request k, size_t mask) {
    uint64_t h = (uint64_t)(uintptr_t)k * 0x9e3779b97f4a7c15ull;
    return (size_t)(h >> 32) & mask;
}

static inline __attribute__((always_inline)) struct zc_rt_slot *zr_find(MPI_Request k) {
    struct zc_rt_slot *s = zc_mpi_rt.s;
    size_t mask = zc_mpi_rt.mask;
    for (size_t i = zr_hash(k, mask);; i = (i + 1) & mask) {
        if (__builtin_expect(s[i].key == k, 1)) return &s[i];
        if (!s[i].key) return NULL;
    }
}

/* the slot for k, created empty if absent; NULL when out of memory */
static inline __attribute__((always_inline)) struct zc_rt_slot *zr_slot_of(MPI_Request k) {
    struct zc_rt_slot *f = zr_find(k);
    if (__builtin_expect(f != NULL, 1)) return f;
    return zc_mpi_rt_add(k);
}

/* Records are recycled per thread: a request's life is a few hundred ns in a halo loop. */
#define ZC_REQ_SPARE 64
struct zc_req *zc_mpi_req_alloc_slow(void);
void zc_mpi_req_free_slow(struct zc_req *r);

/* Every field is set by the caller (req_new, zc_mpi_icoll). */
static inline struct zc_req *zr_alloc(void) {
    struct zc_req *r = zc_mpi_tls.spare;
    if (__builtin_expect(!r, 0)) return zc_mpi_req_alloc_slow();
    zc_mpi_tls.spare = r->next;
    zc_mpi_tls.nspare--;
    return r;
}

static inline void zr_free(struct zc_req *r) {
    if (!r || zr_is_v(r)) return;
    if (__builtin_expect(zc_mpi_tls.nspare >= ZC_REQ_SPARE, 0)) {
        zc_mpi_req_free_slow(r);
        return;
    }
    r->next = zc_mpi_tls.spare;
    zc_mpi_tls.spare = r;
    zc_mpi_tls.nspare++;
}

static inline void zr_followed_if(const struct zc_req *ri, long d) { zr_followed(d * (long)ri->active); }

static inline bool zr_persistent(const struct zc_req *ri) {
    return ri->kind == ZC_MPI_REQ_PSEND || ri->kind == ZC_MPI_REQ_PRECV || ri->kind == ZC_MPI_REQ_PNBC;
}

/* A new id from the table: the k-th request of the thread's location has 2k - 1. Odd, because
 * the writer's resolver gives the even ones (zc_core.h: zc_thread.requests). */
static inline uint64_t zr_new_id(struct zc_thread *t) { return 2 * ++t->requests - 1; }

/* Only with events (c->t): a request started untraced stays inactive, so its completion is
 * not recorded either. */
static inline void zr_activate(struct zc_mpi_call *c, struct zc_req *ri) {
    /* unique per location: a thread slot's counter continues where the slot's previous thread
     * left it (zc_core.h); only recorded calls (c->t) start requests */
    ri->id = zr_new_id(c->t);
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
    case ZC_MPI_REQ_PRECV:
    case ZC_MPI_REQ_ISENDRECV: type = ZC_EV_MPI_IRECV_REQUEST; break;
    default: type = ZC_EV_MPI_NBC_REQUEST; break;
    }
    /* a request starts with the call that starts it: a receive may complete before that call
     * returns, so the Leave time would put the send after its receive */
    *zc_mpi_slots(c, 1) = (struct zc_ev){c->t0, type, ri->comm, ri->bytes, zc_mpi_peer_tag(ri->peer, ri->tag), ri->id};
}

static inline __attribute__((always_inline)) void zr_insert(MPI_Request req, struct zc_req *ri) {
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

/* MPI_THREAD_SINGLE or FUNNELED (one thread makes every MPI call): sends and receives are not
 * followed here at all; their start and completion are written with their handles, and the
 * writer pairs them (zc_mpi_resolve.c). Persistent and collective requests still use the table;
 * zc_mpi_rt_used says whether it has ever held one (if not, completions need not look). */
extern bool zc_mpi_deferred;
extern bool zc_mpi_rt_used;
#ifdef ZC_MPI_STATUS_FIELDS
/* MPI_SOURCE and MPI_TAG in one load, as they lie (adjacent in the statuses of Open MPI and
 * MPICH); zc_mpi_raw_peer_tag (zc_mpi_resolve.c) makes zc_mpi_peer_tag's word of it */
_Static_assert(offsetof(MPI_Status, MPI_TAG) == offsetof(MPI_Status, MPI_SOURCE) + 4, "MPI_Status layout");
static inline uint64_t zc_mpi_status_source_tag(const MPI_Status *st) {
    uint64_t w;
    memcpy(&w, &st->MPI_SOURCE, sizeof(w));
    return w;
}
#endif
static inline uint64_t zc_mpi_raw_peer_tag(uint64_t w) {
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    return w << 32 | w >> 32;
#else
    return w;
#endif
}
/* k completions (or frees) of the writer's handles recorded (none below 0: a handle started
 * while recording was off may complete in a recorded call) */
static inline void zr_raw_gone(uint64_t k) {
    /* p > k ? p - k : 0, with the subtraction's sign (both far below 2^63) */
    int64_t p = (int64_t)(zc_mpi_tls.raw_pending - k);
    zc_mpi_tls.raw_pending = (uint64_t)p;
    if (__builtin_expect(p < 0, 0)) zc_mpi_tls.raw_pending = 0;
}
/* The events the writer matches (zc_mpi_resolve.c), built here only: the start of handle h (bytes
 * and peer_tag as zc_mpi_bytes_of and zc_mpi_peer_tag give them) ... */
static inline __attribute__((always_inline)) struct zc_ev zc_mpi_start_h(uint64_t t0, bool send, uint32_t comm_id, uint64_t bytes,
                                                                        uint64_t peer_tag, MPI_Request h) {
    return (struct zc_ev){t0, send ? ZC_EV_MPI_ISEND_H : ZC_EV_MPI_IRECV_H, comm_id, bytes, peer_tag, (uint64_t)(uintptr_t)h};
}
/* ... its completion with no status ... */
static inline __attribute__((always_inline)) struct zc_ev zc_mpi_done_h(uint64_t t1, MPI_Request h) {
    return (struct zc_ev){t1, ZC_EV_MPI_DONE_H, 0, 0, 0, (uint64_t)(uintptr_t)h};
}
/* ... and with its status st, as read (the writer's thread decodes it: zc_mpi_resolve.c; an MPI
 * whose status fields we do not know: as without) */
static inline __attribute__((always_inline)) struct zc_ev zc_mpi_done_h_st(uint64_t t1, MPI_Request h, const MPI_Status *st) {
#ifdef ZC_MPI_STATUS_FIELDS
    return (struct zc_ev){t1, ZC_EV_MPI_DONE_H, ZC_DONE_STATUS | zc_st_raw_a(st), zc_st_raw_b(st),
                          zc_mpi_status_source_tag(st), (uint64_t)(uintptr_t)h};
#else
    (void)st;
    return zc_mpi_done_h(t1, h);
#endif
}
static inline void zr_raw_done(struct zc_mpi_call *c, MPI_Request h, const MPI_Status *st) {
    if (!c->t) return;
    zr_raw_gone(1);
    *zc_mpi_slots(c, 1) = st && st != MPI_STATUS_IGNORE ? zc_mpi_done_h_st(c->t1, h, st) : zc_mpi_done_h(c->t1, h);
}
static inline void zr_raw_test(struct zc_mpi_call *c, MPI_Request h) {
    if (c->t) *zc_mpi_slots(c, 1) = (struct zc_ev){c->t1, ZC_EV_MPI_TEST_H, 0, 0, 0, (uint64_t)(uintptr_t)h};
}
/* A handle whose completion the writer matches (not in the table). */
static inline bool zr_raw(const struct zc_req *ri, MPI_Request h) { return !ri && zc_mpi_deferred && h != MPI_REQUEST_NULL; }

/* A request with a record (zr_insert); the common ones get an inline word instead. */
void zc_mpi_req_new_rec(struct zc_mpi_call *c, enum zc_mpi_req_kind kind, int64_t count, MPI_Datatype t, int peer, int tag,
                        uint32_t comm, MPI_Request req);

static inline __attribute__((always_inline)) void zc_mpi_req_new(struct zc_mpi_call *c, enum zc_mpi_req_kind kind, int64_t count,
                                                                 MPI_Datatype t, int peer, int tag, MPI_Comm comm, MPI_Request req) {
    /* a request started untraced is not followed: its completion is then not recorded either.
     * Persistent requests are, whenever they are created (once, often while recording is off):
     * their starts while recording are recorded. */
    bool persistent = kind == ZC_MPI_REQ_PSEND || kind == ZC_MPI_REQ_PRECV;
    if ((!c->t && !persistent) || req == MPI_REQUEST_NULL) return;
    uint32_t comm_id = zc_mpi_comm_id(comm);
    bool send = kind == ZC_MPI_REQ_ISEND;
    if (zc_mpi_deferred && (send || kind == ZC_MPI_REQ_IRECV)) {
        zc_mpi_tls.raw_pending++;
        /* a request starts with the call that starts it (zr_activate) */
        *zc_mpi_slots(c, 1) = zc_mpi_start_h(c->t0, send, comm_id, send ? zc_mpi_bytes_of(count, t) : 0,
                                             zc_mpi_peer_tag(peer, tag), req);
        return;
    }
#ifdef ZC_MPI_STATUS_FIELDS
    bool inl = send || kind == ZC_MPI_REQ_IRECV; /* a receive's size is in its status */
#else
    bool inl = send;
#endif
    if (__builtin_expect(!inl || zc_mpi_reqs_mt || comm_id >> ZR_V_COMM_BITS, 0)) {
        zc_mpi_req_new_rec(c, kind, count, t, peer, tag, comm_id, req);
        return;
    }
    uint64_t id = zr_new_id(c->t);
    struct zc_rt_slot *f = zr_find(req);
    if (__builtin_expect(!f || f->v || id >> (64 - ZR_V_ID_SHIFT), 0)) {
        --c->t->requests; /* the id back */
        zc_mpi_req_new_rec(c, kind, count, t, peer, tag, comm_id, req);
        return;
    }
    unsigned vk = send ? (peer == MPI_PROC_NULL ? ZR_V_ISEND_NULL : ZR_V_ISEND) : ZR_V_IRECV;
    f->v = zr_pack(vk, comm_id, id);
    zr_followed(1);
    if (vk == ZR_V_ISEND_NULL) return;
    /* a request starts with the call that starts it (zr_activate) */
    *zc_mpi_slots(c, 1) = (struct zc_ev){c->t0, send ? ZC_EV_MPI_ISEND : ZC_EV_MPI_IRECV_REQUEST, comm_id,
                                         send ? zc_mpi_bytes_of(count, t) : 0, zc_mpi_peer_tag(peer, tag), id};
}

struct zc_req *zc_mpi_take_slow(struct zc_rt_slot *f, const void *me);
static inline __attribute__((always_inline)) struct zc_req *zr_take(MPI_Request req, const void *me) {
    if (req == MPI_REQUEST_NULL) return NULL;
    zr_lock();
    struct zc_rt_slot *f = zr_find(req);
    struct zc_req *ri = NULL;
    if (__builtin_expect(f != NULL, 1)) {
        if (__builtin_expect(!f->head, 1)) {
            ri = (struct zc_req *)(uintptr_t)f->v;
            if (ri) zr_followed(-1); /* an inline word is active */
            f->v = 0;
        } else {
            ri = zc_mpi_take_slow(f, me);
        }
    }
    zr_unlock();
    return ri;
}


static inline struct zc_req **zc_mpi_take_all(struct zc_req **stack, int n_stack, const MPI_Request *r, int n) {
    struct zc_req **ris = n <= n_stack ? stack : malloc((size_t)n * sizeof(*ris));
    if (!ris) return NULL; /* out of memory: these completions go unrecorded */
    const void *me = zc_mpi_tls.t;
    for (int i = 0; i < n; i++) ris[i] = zr_take(r[i], me);
    return ris;
}


/* Whether completing ri needs its status: receives take their size and peer from it, and a
 * cancellation shows there too. */
static inline bool zr_needs_status(const struct zc_req *ri) {
    return zr_is_v(ri) ? (zr_v_kind(zr_v(ri)) == ZR_V_IRECV || (zr_v(ri) & ZR_V_CANCELLED))
                       : (ri->kind == ZC_MPI_REQ_IRECV || ri->kind == ZC_MPI_REQ_PRECV || ri->kind == ZC_MPI_REQ_ISENDRECV ||
                          ri->cancelled);
}

/* The requests of a Wait/Test-all/any/some call, taken out of the table (ris NULL: untracked),
 * with the handles as they were before MPI reset them. need: a completion needs its status. */
struct zc_mpi_reqs {
    MPI_Request *before;
    struct zc_req **ris;
    void *heap; /* one allocation for both arrays beyond n_stack (freed by the wrapper) */
    bool need;
};
void *zc_mpi_reqs_alloc(int n); /* before and ris for n requests, or NULL */
static inline __attribute__((always_inline)) struct zc_mpi_reqs zc_mpi_take_reqs(MPI_Request *before_stack, struct zc_req **ris_stack,
                                                                                  int n_stack, const MPI_Request *r, int n) {
    struct zc_mpi_reqs q = {before_stack, ris_stack, NULL, false};
    if (n <= 0 || !r) return (struct zc_mpi_reqs){NULL, NULL, NULL, false};
    if (__builtin_expect(n > n_stack, 0)) {
        q.heap = zc_mpi_reqs_alloc(n);
        if (!q.heap) return (struct zc_mpi_reqs){NULL, NULL, NULL, false}; /* these completions go unrecorded */
        q.before = q.heap;
        q.ris = (struct zc_req **)(q.before + n);
    }
    if (zc_mpi_deferred && !zc_mpi_rt_used) { /* nothing in the table: the writer matches them all */
        for (int i = 0; i < n; i++) q.before[i] = r[i];
        q.ris = NULL; /* with before: every handle is the writer's (zc_mpi_settle_all) */
        q.need = true;
        return q;
    }
    const void *me = zc_mpi_tls.t;
    bool need = zc_mpi_deferred;
    for (int i = 0; i < n; i++) {
        MPI_Request h = r[i];
        struct zc_req *ri = zr_take(h, me);
        q.before[i] = h;
        q.ris[i] = ri;
        if (ri) need |= zr_needs_status(ri);
    }
    q.need = need;
    return q;
}

/* bytes a completed receive brought (the status holds them; else count x type size) */
static inline uint64_t zr_status_bytes(const MPI_Status *st, MPI_Datatype t) {
#ifdef ZC_MPI_STATUS_FIELDS
    (void)t;
    return zc_st_bytes(st);
#else
    int count = 0;
    if (PMPI_Get_count(st, t, &count) != MPI_SUCCESS || count == MPI_UNDEFINED) count = 0;
    return zc_mpi_bytes_of(count, t);
#endif
}

/* A request completed (an inline word or a record). */
void zc_mpi_completed_rec(struct zc_mpi_call *c, MPI_Request before, struct zc_req *ri, const MPI_Status *st);
static inline __attribute__((always_inline)) void zr_completed(struct zc_mpi_call *c, MPI_Request before, struct zc_req *ri,
                                                               const MPI_Status *st) {
    if (__builtin_expect(!zr_is_v(ri), 0)) {
        zc_mpi_completed_rec(c, before, ri, st);
        return;
    }
    uint64_t v = zr_v(ri);
    if (!c->t) return;
    if (__builtin_expect(v & ZR_V_CANCELLED, 0)) {
        int cancelled = 0;
        if (st && st != MPI_STATUS_IGNORE) PMPI_Test_cancelled(st, &cancelled);
        if (cancelled) {
            *zc_mpi_slots(c, 1) = (struct zc_ev){c->t1, ZC_EV_MPI_REQUEST_CANCELLED, zr_v_comm(v), 0, 0, zr_v_id(v)};
            return;
        }
    }
    switch (zr_v_kind(v)) {
    case ZR_V_ISEND: *zc_mpi_slots(c, 1) = (struct zc_ev){c->t1, ZC_EV_MPI_ISEND_COMPLETE, zr_v_comm(v), 0, 0, zr_v_id(v)}; break;
    case ZR_V_IRECV:
        /* a receive from MPI_PROC_NULL received nothing */
        if (st && st != MPI_STATUS_IGNORE && st->MPI_SOURCE != MPI_PROC_NULL)
            *zc_mpi_slots(c, 1) = (struct zc_ev){c->t1, ZC_EV_MPI_IRECV, zr_v_comm(v), zc_st_bytes(st),
                                                 zc_mpi_peer_tag(st->MPI_SOURCE, st->MPI_TAG), zr_v_id(v)};
        break;
    default: break;
    }
}

/* Waitall and friends: the common case (every request completed, success) inline. */
void zc_mpi_settle_all_slow(struct zc_mpi_call *c, const MPI_Request *before, struct zc_req **ris, int n,
                            const MPI_Request *after, int rc, int flag, bool test, const MPI_Status *sts);
void zc_mpi_settle_raw_slow(struct zc_mpi_call *c, const MPI_Request *before, int n, const MPI_Request *after, int rc,
                            int flag, bool test, const MPI_Status *sts);
#define ZC_MPI_RAW_BATCH 64 /* completions written with one room check */
static inline __attribute__((always_inline)) void zc_mpi_settle_all(struct zc_mpi_call *c, const MPI_Request *before,
                                                                    struct zc_req **ris, int n, const MPI_Request *after,
                                                                    int rc, int flag, bool test, const MPI_Status *sts) {
    if (!ris) {
        if (!before) return; /* not followed */
        /* every handle is the writer's: one event each, in one batch */
        if (__builtin_expect(rc != MPI_SUCCESS || !flag || n > ZC_MPI_RAW_BATCH, 0)) {
            zc_mpi_settle_raw_slow(c, before, n, after, rc, flag, test, sts);
            return;
        }
        if (!c->t) return;
        struct zc_ev *e = zc_mpi_slots(c, (size_t)n);
        int k = 0;
        for (int i = 0; i < n; i++) {
            MPI_Request h = before[i];
            if (h == MPI_REQUEST_NULL) continue;
            e[k++] = sts ? zc_mpi_done_h_st(c->t1, h, &sts[i]) : zc_mpi_done_h(c->t1, h);
        }
        c->at -= (size_t)(n - k); /* the slots of null handles back */
        zr_raw_gone((uint64_t)k);
        return;
    }
    if (__builtin_expect(rc != MPI_SUCCESS || !flag, 0)) {
        zc_mpi_settle_all_slow(c, before, ris, n, after, rc, flag, test, sts);
        return;
    }
    for (int i = 0; i < n; i++) {
        if (ris[i]) zr_completed(c, before[i], ris[i], sts ? &sts[i] : NULL);
        else if (zr_raw(NULL, before[i])) zr_raw_done(c, before[i], sts ? &sts[i] : NULL);
    }
}

/* ---------------------------------------------------------------- fast paths */
/* The commonest calls of an MPI_THREAD_SINGLE/FUNNELED program (MPI_Isend and its modes,
 * MPI_Irecv, MPI_Wait, MPI_Waitall of up to 16 requests, MPI_Send and its modes: a third of
 * LAMMPS's calls, bench/lammps_ir.sh) take a path of their own, generated beside the general one
 * (mpi/gen/gen_mpi_wrappers.py, FAST_SHAPES): the same events (a ZC_EV_CALL, then the
 * writer's request events; MPI_Irecv's call and request in one ZC_EV_CALL_IRECV), written with what the general path tests once per call settled in
 * two global flags, set when MPI becomes ready (zc_mpi_call.c: fast_update): the writer matches
 * requests, the TSC ticks, owners do not lock, MPI recording is on and PAPI off (and, for
 * completions, the request table has never been used). Everything else, before the MPI call,
 * goes to the general path; after it (an error, a null request, a full buffer, a region not yet
 * defined, a communicator not the last one, the collector finalizing) to an out-of-line tail
 * that finishes the call as the general path would. Nothing on the fast path changes errno. */
extern bool zc_mpi_fast_start, zc_mpi_fast_done;
/* Whether this call may take the fast path (flag: zc_mpi_fast_start or zc_mpi_fast_done): the
 * thread is registered and not inside a tracked call. */
static inline __attribute__((always_inline)) bool zc_mpi_fast_ok(const bool *flag) {
    return (uintptr_t)zc_mpi_tls.fast > (uintptr_t)ZC_MPI_INSIDE && __atomic_load_n(flag, __ATOMIC_ACQUIRE);
}
/* The fast path's start (zc_mpi_fast_ok said yes): the thread's record; until the fast path
 * ends (zc_mpi_fast_req, zc_mpi_fast_all), calls of this thread are nested. */
static inline __attribute__((always_inline)) struct zc_thread *zc_mpi_fast_begin(void) {
    struct zc_thread *t = zc_mpi_tls.fast;
    zc_mpi_tls.fast = ZC_MPI_INSIDE;
    return t;
}
void zc_mpi_fast_req_slow(struct zc_thread *t, uint32_t fn, uint64_t t0, uint64_t t1, int rc, bool send, uint64_t bytes,
                          uint64_t peer_tag, MPI_Comm comm, const MPI_Request *request);
/* After MPI_Isend/Irecv (t0: the Enter tick, rc: the call's result; bytes and peer_tag as in
 * ZC_EV_MPI_ISEND_H, taken before the call so that fewer values live across it): the call and
 * its request for the writer to match, as zc_mpi_req_new writes them (a send), or in one record
 * (a receive: ZC_EV_CALL_IRECV, the communicator and the handle in c and d). */
static inline __attribute__((always_inline)) void zc_mpi_fast_req(struct zc_thread *t, uint32_t fn, uint64_t t0, int rc,
                                                                  bool send, uint64_t bytes, uint64_t peer_tag,
                                                                  MPI_Comm comm, const MPI_Request *request) {
    uint64_t t1 = zc_tick_tsc();
    struct zc_loc *l = t->loc;
    size_t n = l->n;
    uint32_t region = __atomic_load_n(&zc_mpi_region_cache[fn], __ATOMIC_RELAXED);
    MPI_Request h;
    if (__builtin_expect(rc == MPI_SUCCESS && region != ZC_NO_ID && n + 2 <= l->lim && (h = *request) != MPI_REQUEST_NULL &&
                             zc_mpi_tls.last_comm.comm == comm, /* no epoch: zc_mpi_comm.c, epoch_bump */
                         1)) {
        uint64_t s;
        if (__builtin_expect(zc_own_begin_seq(l, &s), 1)) {
            struct zc_ev *e = &l->buf[n];
            if (send) {
                e[0] = (struct zc_ev){t0, ZC_EV_CALL, region, t1, 0, ZC_CALL_RUN};
                /* a request starts with the call that starts it (zr_activate) */
                e[1] = zc_mpi_start_h(t0, send, zc_mpi_tls.last_comm.id, bytes, peer_tag, h);
                zc_loc_publish(l, n + 2);
            } else { /* the call and its request in one record (zc_ev.h): one record fewer downstream */
                e[0] = (struct zc_ev){t0, ZC_EV_CALL_IRECV, region, t1, zc_mpi_tls.last_comm.id, (uint64_t)(uintptr_t)h};
                zc_loc_publish(l, n + 1);
            }
            zc_mpi_tls.raw_pending++;
        }
        zc_own_end_seq(l, s);
    } else {
        zc_mpi_fast_req_slow(t, fn, t0, t1, rc, send, bytes, peer_tag, comm, request);
    }
    zc_mpi_tls.fast = t;
}
void zc_mpi_fast_send_slow(struct zc_thread *t, uint32_t fn, uint64_t t0, uint64_t t1, uint64_t bytes, int peer,
                           uint64_t peer_tag, MPI_Comm comm);
/* After a blocking send (MPI_Send and its modes; bytes and peer_tag taken before the call): the
 * call and its MpiSend at the Enter time, as the general path writes them (zc_mpi_ev_send), for
 * any result (the general path records the send whatever MPI returned); to MPI_PROC_NULL the
 * call alone, through the tail. */
static inline __attribute__((always_inline)) void zc_mpi_fast_send(struct zc_thread *t, uint32_t fn, uint64_t t0,
                                                                   uint64_t bytes, int peer, uint64_t peer_tag,
                                                                   MPI_Comm comm) {
    uint64_t t1 = zc_tick_tsc();
    struct zc_loc *l = t->loc;
    size_t n = l->n;
    uint32_t region = __atomic_load_n(&zc_mpi_region_cache[fn], __ATOMIC_RELAXED);
    if (__builtin_expect(region != ZC_NO_ID && n + 2 <= l->lim && peer != MPI_PROC_NULL &&
                             zc_mpi_tls.last_comm.comm == comm, /* no epoch: zc_mpi_comm.c, epoch_bump */
                         1)) {
        uint64_t s;
        if (__builtin_expect(zc_own_begin_seq(l, &s), 1)) {
            struct zc_ev *e = &l->buf[n];
            e[0] = (struct zc_ev){t0, ZC_EV_CALL, region, t1, 0, ZC_CALL_RUN};
            e[1] = (struct zc_ev){t0, ZC_EV_MPI_SEND, zc_mpi_tls.last_comm.id, bytes, peer_tag, 0};
            zc_loc_publish(l, n + 2);
        }
        zc_own_end_seq(l, s);
    } else {
        zc_mpi_fast_send_slow(t, fn, t0, t1, bytes, peer, peer_tag, comm);
    }
    zc_mpi_tls.fast = t;
}
void zc_mpi_fast_all_slow(struct zc_thread *t, uint32_t fn, uint64_t t0, uint64_t t1, int rc, int n,
                          const MPI_Request *before, const MPI_Request *after, const MPI_Status *sts);
/* Before MPI_Waitall: whether the fast path takes it (n requests, at most n_stack). */
static inline bool zc_mpi_fast_all_ok(int n, int n_stack, const MPI_Request *r) { return n > 0 && n <= n_stack && r; }
/* ... and its n > 0 handles as they were (MPI resets completed ones): two at a time (one move of
 * 8 or 16 bytes), not a loop of one per handle nor a call of memcpy, for the few of a call. */
static inline __attribute__((always_inline)) void zc_mpi_copy_handles(MPI_Request *d, const MPI_Request *r, int n) {
    int i = 0;
    for (; i + 1 < n; i += 2) {
        memcpy(&d[i], &r[i], 2 * sizeof(*r));
        __asm__("" : "+r"(i)); /* not vectorised further: it would cost more than it saves */
    }
    if (i < n) d[i] = r[i];
}
/* After MPI_Waitall (or MPI_Wait, n = 1): before[] holds the handles as they were, sts their
 * statuses (never MPI_STATUSES_IGNORE: the wrapper's own when the application ignores them). */
static inline __attribute__((always_inline)) void zc_mpi_fast_all(struct zc_thread *t, uint32_t fn, uint64_t t0, int rc, int n,
                                                                  const MPI_Request *before, const MPI_Request *after,
                                                                  const MPI_Status *sts) {
    uint64_t t1 = zc_tick_tsc();
    struct zc_loc *l = t->loc;
    size_t at = l->n;
    uint32_t region = __atomic_load_n(&zc_mpi_region_cache[fn], __ATOMIC_RELAXED);
    if (__builtin_expect(rc == MPI_SUCCESS && region != ZC_NO_ID && at + 1 + (size_t)n <= l->lim, 1)) {
        uint64_t s;
        if (__builtin_expect(zc_own_begin_seq(l, &s), 1)) {
            struct zc_ev *e = &l->buf[at];
            e[0] = (struct zc_ev){t0, ZC_EV_CALL, region, t1, 0, ZC_CALL_RUN};
            struct zc_ev *d = e + 1;
            for (int i = 0; i < n; i++) {
                MPI_Request h = before[i];
                if (h == MPI_REQUEST_NULL) continue;
                *d++ = zc_mpi_done_h_st(t1, h, &sts[i]);
            }
            size_t k = (size_t)(d - (e + 1));
            zc_loc_publish(l, at + 1 + k);
            zr_raw_gone(k);
        }
        zc_own_end_seq(l, s);
    } else {
        zc_mpi_fast_all_slow(t, fn, t0, t1, rc, n, before, after, sts);
    }
    zc_mpi_tls.fast = t;
}

#endif
