/* SPDX-License-Identifier: MIT */
/* The MPI layer: generated wrappers (zc_mpi_gen.c) call these helpers to record MPI events.
 *
 * libzecoll.so must load into programs without MPI, so it does not link libmpi: PMPI functions
 * and Open MPI's predefined handles (MPI_COMM_WORLD is &ompi_mpi_comm_world, ...) are weak
 * references, NULL when no MPI library is loaded. tests/collector/check_exports.sh checks that
 * every MPI symbol libzecoll.so needs is weak. Only code reached from an MPI call uses them. */
#ifndef ZC_MPI_INTERNAL_H
#define ZC_MPI_INTERNAL_H

#include <mpi.h>
#include <otf2/OTF2_Events.h>
#include <stddef.h>
#include <string.h>

#include "zc_core.h"
#include "zc_mpi_flavour.h"
#include "zc_papi.h"

/* The core's globals that the wrappers read on every call, declared again as what they are:
 * hidden in libzecoll.so, like everything of ours not exported. The compiler then reads them
 * directly, not through the GOT (the address load that the linker turns into a lea): one
 * instruction fewer per read. */
extern _Atomic uint64_t zc_rec __attribute__((visibility("hidden")));
extern atomic_bool zc_is_active __attribute__((visibility("hidden")));
extern bool zc_own_locked __attribute__((visibility("hidden")));
extern bool zc_tsc __attribute__((visibility("hidden")));

/* What the flavour's MPI_Status holds beyond SOURCE, TAG and ERROR, read without a call (the
 * writer matches receives by them): the bytes received and the cancelled flag. Open MPI 4/5:
 * _ucount, _cancelled; the MPICH ABI (MPICH, Intel MPI, Cray MPICH): the bytes in count_lo and
 * the bits of count_hi_and_cancelled above bit 0, which is the flag. A flavour without such
 * fields asks MPI (PMPI_Get_count, PMPI_Test_cancelled). */
/* The writer-matched completions (ZC_EV_MPI_DONE_H, zc_mpi_req.h) carry the same as two words
 * read with the fewest instructions on the application thread, a flags word (ZC_DONE_STATUS and
 * zc_st_raw_a) and zc_st_raw_b, which the writer's thread decodes (zc_mpi_resolve.c:
 * zc_st_raw_bytes, zc_st_raw_cancelled): MPICH's two count words are stored as they are. */
#if defined(OMPI_MAJOR_VERSION)
#define ZC_MPI_STATUS_FIELDS 1
static inline uint64_t zc_st_bytes(const MPI_Status *st) { return (uint64_t)st->_ucount; }
static inline uint32_t zc_st_cancelled(const MPI_Status *st) { return st->_cancelled != 0; }
static inline uint32_t zc_st_raw_a(const MPI_Status *st) { return zc_st_cancelled(st) << 1; }
static inline uint64_t zc_st_raw_b(const MPI_Status *st) { return zc_st_bytes(st); }
static inline uint64_t zc_st_raw_bytes(uint32_t a, uint64_t b) { return (void)a, b; }
static inline uint32_t zc_st_raw_cancelled(uint32_t a, uint64_t b) { return (void)b, a >> 1 != 0; }
#elif defined(MPICH)
#define ZC_MPI_STATUS_FIELDS 1
static inline uint64_t zc_st_bytes(const MPI_Status *st) {
    return (uint64_t)(uint32_t)st->count_lo | (uint64_t)((uint32_t)st->count_hi_and_cancelled >> 1) << 32;
}
static inline uint32_t zc_st_cancelled(const MPI_Status *st) { return (uint32_t)st->count_hi_and_cancelled & 1; }
_Static_assert(offsetof(MPI_Status, count_hi_and_cancelled) == offsetof(MPI_Status, count_lo) + 4, "MPI_Status layout");
_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "the raw status word is count_lo | count_hi_and_cancelled << 32");
static inline uint32_t zc_st_raw_a(const MPI_Status *st) { return (void)st, 0; }
static inline uint64_t zc_st_raw_b(const MPI_Status *st) {
    uint64_t w;
    memcpy(&w, &st->count_lo, sizeof(w));
    return w;
}
static inline uint64_t zc_st_raw_bytes(uint32_t a, uint64_t b) { return (void)a, (uint32_t)b | (b >> 33) << 32; }
static inline uint32_t zc_st_raw_cancelled(uint32_t a, uint64_t b) { return (void)a, (uint32_t)(b >> 32) & 1; }
#else
static inline uint64_t zc_st_raw_bytes(uint32_t a, uint64_t b) { return (void)a, b; }
static inline uint32_t zc_st_raw_cancelled(uint32_t a, uint64_t b) { return (void)b, a >> 1 != 0; }
#endif

#ifdef OMPI_MAJOR_VERSION
/* Open MPI's predefined objects behind the handles we use (an MPICH handle is an int constant). */
#pragma weak ompi_mpi_comm_world
#pragma weak ompi_mpi_comm_self
#pragma weak ompi_mpi_comm_null
#pragma weak ompi_request_null
#pragma weak ompi_mpi_group_null
#pragma weak ompi_mpi_byte
#pragma weak ompi_mpi_int
#pragma weak ompi_mpi_uint64_t
#pragma weak ompi_mpi_int64_t
#pragma weak ompi_mpi_op_min
#pragma weak ompi_mpi_op_max
#pragma weak ompi_mpi_op_sum
#endif
/* PMPI functions the hand-written parts call (the generated file declares its own). */
#pragma weak PMPI_Init
#pragma weak PMPI_Init_thread
#pragma weak PMPI_Finalize
#pragma weak PMPI_Pcontrol
#pragma weak PMPI_Abort
#pragma weak PMPI_Initialized
#pragma weak PMPI_Finalized
#pragma weak PMPI_Comm_rank
#pragma weak PMPI_Comm_size
#pragma weak PMPI_Comm_remote_size
#pragma weak PMPI_Comm_dup
#pragma weak PMPI_Comm_free
#pragma weak PMPI_Comm_group
#pragma weak PMPI_Comm_remote_group
#pragma weak PMPI_Comm_test_inter
#pragma weak PMPI_Comm_get_name
#pragma weak PMPI_Group_size
#pragma weak PMPI_Group_translate_ranks
#pragma weak PMPI_Group_free
#pragma weak PMPI_Type_size
#pragma weak PMPI_Type_get_envelope
#pragma weak PMPI_Get_count
#pragma weak PMPI_Test_cancelled
#pragma weak PMPI_Topo_test
#pragma weak PMPI_Cartdim_get
#pragma weak PMPI_Graph_neighbors_count
#pragma weak PMPI_Dist_graph_neighbors_count
#pragma weak PMPI_Send
#pragma weak PMPI_Recv
#pragma weak PMPI_Bcast
#pragma weak PMPI_Barrier
#pragma weak PMPI_Gather
#pragma weak PMPI_Gatherv
#pragma weak PMPI_Scatter
#pragma weak PMPI_Scatterv
#pragma weak PMPI_Allreduce
#pragma weak PMPI_Comm_split
#pragma weak PMPI_Query_thread

/* Sentinels for roles a shape does not have (no handle symbol needed). */
#define MPI_DATATYPE_NULL_ZC ((MPI_Datatype)0)
#define MPI_COMM_NULL_ZC ((MPI_Comm)0)
#define ZC_MPI_NO_ROOT (-32767)

enum zc_mpi_how {
    ZC_MPI_HOW_DUP, ZC_MPI_HOW_SPLIT, ZC_MPI_HOW_CREATE, ZC_MPI_HOW_CREATE_GROUP, ZC_MPI_HOW_SPLIT_TYPE,
    ZC_MPI_HOW_INTERCOMM, ZC_MPI_HOW_MERGE, ZC_MPI_HOW_TOPO, ZC_MPI_HOW_DYNAMIC
};

/* ZC_MPI_REQ_PNBC: a persistent collective (MPI_Allreduce_init, ...), inactive between its starts.
 * ZC_MPI_REQ_ISENDRECV: the receive of an MPI_Isendrecv(_replace), recorded as posted (source,
 * tag, the receive buffer's bytes): MPICH 4.0.2 leaves its status unset (measured: zeros). */
enum zc_mpi_req_kind {
    ZC_MPI_REQ_ISEND, ZC_MPI_REQ_IRECV, ZC_MPI_REQ_PSEND, ZC_MPI_REQ_PRECV, ZC_MPI_REQ_NBC, ZC_MPI_REQ_PNBC,
    ZC_MPI_REQ_ISENDRECV
};

/* A recorded call's events go straight into the thread's buffer once the MPI call returned:
 * zc_mpi_open reads the Leave time, opens the thread's own location (zc_own_begin) and writes
 * the call's ZC_EV_CALL record (Enter, Leave, d = ZC_CALL_RUN: the MPI events after it are
 * inside it); what the call completed or started follows it (zc_mpi_slots); zc_mpi_close
 * closes the location. Nothing between the two records on this location: only local
 * MPI queries (type sizes, communicator groups, statuses) run while it is open, never an MPI call
 * that could move data (and so call Level Zero on this thread). An event that belongs before the
 * MPI call (MpiSend, MpiCollectiveBegin: they carry the Enter time) waits in `pre` until then.
 * Events of what the call starts carry the Enter time, those of what it finishes the Leave time. */
struct zc_mpi_call {
    struct zc_thread *t;      /* NULL: no events (requests and communicators are still followed) */
    uint64_t t0, t1;          /* Enter; Leave (read by zc_mpi_open) */
    struct zc_loc *l;         /* open: the thread's location */
    size_t at;                /* open: where the next event goes in l->buf; published as l->n at the
                               * close (the journal's flusher copies l's records below n) */
    uint8_t mode;             /* set by zc_mpi_open: ZC_MPI_SHUT, ZC_MPI_OPEN, ZC_MPI_OPEN_SLOW */
    bool has_pre;             /* pre holds an event (shapes with one: the wrapper clears it first) */
    bool papi;                /* sampled (papi.events): Metric records and the Enter went out before */
    bool split;               /* slow: the Enter went out before (full buffer, or sampled) */
    bool closed;              /* recording is off: bookkeeping only, or a completion of a followed
                               * request (set by zc_mpi_begin for completion calls only) */
    uint32_t region;          /* slow */
    uint64_t f0, f1;          /* slow: a buffer flush (its region is recorded after the call) */
    struct zc_thread *tok;    /* zc_mpi_tls.fast after the call */
    struct zc_ev pre;
};
enum { ZC_MPI_SHUT, ZC_MPI_OPEN, ZC_MPI_OPEN_SLOW /* zc_mpi_close_slow finishes: lock, flush */ };

/* Inlined into every wrapper: a recorded call costs two TSC reads, a TLS load, and one
 * ZC_EV_CALL record plus its events in the thread's own buffer, no lock and no atomic
 * instruction (zc_core.h: zc_own_begin). zc_mpi_tls.t is the thread's record for this inline
 * path: NULL until its first call, and NULL for good while PAPI counts (papi.events), so that
 * sampled calls take zc_mpi_begin_slow at the cost of one store (c->papi) when PAPI is off.
 * Not tracked at all (plain PMPI call): before MPI_Init and after MPI_Finalize, and for MPI calls
 * made inside MPI (ROMIO implements MPI-IO with MPI calls: they are part of the outer call).
 * Tracked without events: MPI recording off (record.mpi); requests and communicators are still
 * followed, so that what is recorded later is attributed right.
 * While recording is off (a window closed, an unselected rank) the mode, a constant per wrapper,
 * decides, at the cost of one load: ZC_MPI_PASS calls straight through (what starts
 * communication: a message or request started then is never recorded, nor its completion);
 * ZC_MPI_KEEP keeps the bookkeeping the archive needs later (communicators, persistent
 * requests, request frees and cancels); ZC_MPI_DONE (wait/test) passes through unless requests
 * started while recording are still pending (zc_mpi_closed_pending): a call that tests or
 * completes one of them is recorded, so no recorded request is left without its completion. */
enum { ZC_MPI_PASS, ZC_MPI_KEEP, ZC_MPI_DONE, ZC_MPI_PASS_ON /* generated: recording was on at entry */ };
struct zc_req;
struct zc_mpi_last_comm {
    MPI_Comm comm;
    uint32_t id;
    uint64_t epoch;
};
/* One entry of a thread's datatype size cache (zc_mpi_req.h, zc_mpi_bytes_of). */
struct zc_mpi_tsz {
    uintptr_t h; /* the handle */
    int64_t sz1; /* a predefined datatype: its size + 1; -1: a derived one (asked each time); 0: empty */
};
/* Everything the MPI layer keeps per thread, in one TLS block: a wrapper finds it with one load
 * of its offset (initial-exec) instead of one per variable. */
struct zc_mpi_tls {
    int nspare;
    struct zc_thread *t;      /* zc_tls_thread once the thread made a tracked call */
    /* ZC_MPI_INSIDE while a tracked MPI call of this thread is under way (a call MPI makes
     * itself then, as ROMIO does, is part of it: not tracked); otherwise t, or NULL while t is
     * (the thread then takes the general path): the fast paths (zc_mpi_fast_ok) test one word */
    struct zc_thread *fast;
    int *err;                 /* this thread's errno (saved and restored around our work) */
    /* requests the writer matches (zc_mpi_deferred) whose start was recorded and whose completion
     * (or free) was not yet: while recording is off, completion calls are recorded while it is
     * not 0. Only one thread makes MPI calls when the writer matches (SINGLE, FUNNELED). */
    uint64_t raw_pending;
    struct zc_req *spare;     /* recycled request records */
    /* the last communicator this thread used, valid while no communicator was registered or
     * forgotten since (handles are recycled): most calls use the one of the call before */
    struct zc_mpi_last_comm last_comm;
    struct zc_mpi_tsz tsz[4]; /* sizes of the predefined datatypes this thread used last */
};
extern _Thread_local struct zc_mpi_tls zc_mpi_tls __attribute__((tls_model("initial-exec")));
extern uint32_t zc_mpi_region_cache[]; /* region per function, ZC_NO_ID = not defined yet (the hot
                                         * paths store it as read: no + 1 to undo) */
uint32_t zc_mpi_region(uint32_t fn); /* the function's region (defined on first use) */
bool zc_mpi_begin_slow(struct zc_mpi_call *c, uint32_t fn);
/* Active requests in the table, i.e. started while recording and not completed (zc_mpi_req.h). */
extern _Atomic size_t zc_mpi_nfollowed;
extern bool zc_mpi_deferred;
/* Whether requests started while recording may still be pending: a completion call while
 * recording is off then takes its requests and is recorded if it completes one of them. */
static inline bool zc_mpi_closed_pending(void) {
    return atomic_load_explicit(&zc_mpi_nfollowed, memory_order_relaxed) || zc_mpi_tls.raw_pending;
}
/* Whether a wrapper of this mode (a constant) has work while recording is off. */
#define ZC_MPI_CLOSED_WANTS(mode) ((mode) == ZC_MPI_KEEP || ((mode) == ZC_MPI_DONE && zc_mpi_closed_pending()))
bool zc_mpi_begin_closed(struct zc_mpi_call *c, uint32_t fn, int mode);
/* A completion call while recording is off, after it took its requests' records: recorded if one
 * of them was started while recording (active), or the writer matches some that were. */
void zc_mpi_closed_taken(struct zc_mpi_call *c, struct zc_req *const *ris, int n);
/* Owners lock (no membarrier) or PAPI counts: every call takes zc_mpi_open_slow. */
extern bool zc_mpi_open_slowly;
void zc_mpi_open_slow(struct zc_mpi_call *c, uint32_t fn);
void zc_mpi_more(struct zc_mpi_call *c);
void zc_mpi_close_slow(struct zc_mpi_call *c);
static inline bool zc_mpi_ready(void);
#define ZC_MPI_INSIDE ((struct zc_thread *)1)
/* Inside a tracked call of this thread: a call MPI makes itself (ROMIO), not tracked. */
static inline bool zc_mpi_nested(void) { return zc_mpi_tls.fast == ZC_MPI_INSIDE; }
/* Whether the call is tracked; fn is the function (ZC_MPI_*). Whether the collector is still
 * active is checked when the location is opened (zc_own_begin). */
static inline __attribute__((always_inline)) bool zc_mpi_begin(struct zc_mpi_call *c, uint32_t fn, int mode) {
    if (mode != ZC_MPI_PASS_ON && __builtin_expect(!zc_rec_open(), 0))
        return mode != ZC_MPI_PASS && zc_mpi_begin_closed(c, fn, mode);
    if (__builtin_expect(!zc_mpi_ready() || zc_mpi_nested(), 0)) return false;
    c->tok = zc_mpi_tls.fast;
    zc_mpi_tls.fast = ZC_MPI_INSIDE;
    if (mode == ZC_MPI_DONE) c->closed = false; /* read by completion calls only */
    /* NULL until the thread's first call, and for good while PAPI counts (every call sampled) */
    struct zc_thread *t = zc_mpi_tls.t;
    if (__builtin_expect(!t, 0)) return zc_mpi_begin_slow(c, fn);
    c->papi = false;
    c->t = zc_on(ZC_F_MPI) ? t : NULL;
    if (c->t) c->t0 = zc_tick();
    return true;
}
/* errno as MPI left it is restored after our work (valid once zc_mpi_begin said yes) */
static inline int *zc_mpi_errno(void) { return zc_mpi_tls.err; }
/* A handle argument read by a wrapper: NULL (an application's error, which MPI reports with
 * MPI_ERR_REQUEST/MPI_ERR_COMM or its error handler) reads as the null handle, so that the
 * wrapper never faults where MPI would have returned an error. */
static inline MPI_Request zc_mpi_req_at(const MPI_Request *p) { return p ? *p : MPI_REQUEST_NULL; }
static inline MPI_Comm zc_mpi_comm_at(const MPI_Comm *p) { return p ? *p : MPI_COMM_NULL; }

/* Opens the thread's location l for the call's records in mode: ZC_MPI_OPEN (the inline open,
 * which saw that owners need no lock) or ZC_MPI_OPEN_SLOW (zc_mpi_open_slow: they may). False
 * when the collector is finalizing: the call records nothing more. */
static inline __attribute__((always_inline)) bool zc_mpi_own(struct zc_mpi_call *c, struct zc_loc *l, uint8_t mode) {
    bool slow = mode == ZC_MPI_OPEN_SLOW;
    if (!(slow ? zc_own_begin(l) : zc_own_begin_unlocked(l))) {
        if (slow) zc_own_end(l);
        else zc_own_end_unlocked(l);
        c->t = NULL;
        c->mode = ZC_MPI_SHUT;
        return false;
    }
    c->mode = mode;
    c->l = l;
    return true;
}
/* Right after the MPI call returned (fn: a constant in every wrapper); t1: the Leave time
 * (c->t set). */
static inline __attribute__((always_inline)) void zc_mpi_open_at(struct zc_mpi_call *c, uint32_t fn, uint64_t t1) {
    c->t1 = t1;
    uint32_t region = __atomic_load_n(&zc_mpi_region_cache[fn], __ATOMIC_RELAXED);
    struct zc_loc *l = c->t->loc;
    if (__builtin_expect(region == ZC_NO_ID || l->n + 2 > l->lim ||
                             __atomic_load_n(&zc_mpi_open_slowly, __ATOMIC_RELAXED),
                         0)) {
        zc_mpi_open_slow(c, fn);
        return;
    }
    if (!zc_mpi_own(c, l, ZC_MPI_OPEN)) return;
    size_t at = l->n;
    l->buf[at] = (struct zc_ev){c->t0, ZC_EV_CALL, region, t1, 0, ZC_CALL_RUN};
    c->at = at + 1;
}
static inline __attribute__((always_inline)) void zc_mpi_open(struct zc_mpi_call *c, uint32_t fn) {
    if (!c->t) {
        c->mode = ZC_MPI_SHUT;
        return;
    }
    zc_mpi_open_at(c, fn, zc_tick());
}
/* The same for the shapes that may hold an event from before the call (c->has_pre). */
static inline __attribute__((always_inline)) void zc_mpi_open_pre(struct zc_mpi_call *c, uint32_t fn) {
    zc_mpi_open(c, fn);
    if (c->mode != ZC_MPI_SHUT && c->has_pre) c->l->buf[c->at++] = c->pre;
}
/* Room for k events of the open call (k <= ZC_MPI_RAW_BATCH = 64: a buffer holds at least 1008):
 * written in place, ts included. */
static inline __attribute__((always_inline)) struct zc_ev *zc_mpi_slots(struct zc_mpi_call *c, size_t k) {
    struct zc_loc *l = c->l;
    if (__builtin_expect(c->at + k > l->lim, 0)) zc_mpi_more(c);
    struct zc_ev *e = &l->buf[c->at];
    c->at += k;
    return e;
}
static inline __attribute__((always_inline)) void zc_mpi_close(struct zc_mpi_call *c) {
    if (__builtin_expect(c->mode == ZC_MPI_OPEN, 1)) {
        zc_loc_publish(c->l, c->at); /* the call's records, complete */
        zc_own_end_unlocked(c->l);
    }
    else if (c->mode != ZC_MPI_SHUT) zc_mpi_close_slow(c);
    zc_mpi_tls.fast = c->tok;
}
/* A call that records nothing after it (MPI_Pcontrol). */
static inline void zc_mpi_end(struct zc_mpi_call *c, uint32_t fn) {
    zc_mpi_open(c, fn);
    zc_mpi_close(c);
}

void zc_mpi_ev_send(struct zc_mpi_call *c, int64_t count, MPI_Datatype t, int peer, int tag, MPI_Comm comm);
void zc_mpi_ev_recv(struct zc_mpi_call *c, MPI_Datatype t, MPI_Comm comm, const MPI_Status *st);
void zc_mpi_start(struct zc_mpi_call *c, MPI_Request req);
/* Completion: the requests are taken out of the table before the call and settled after it:
 * recorded as completed (flag), or put back (a test record if test). rc is the call's result;
 * before/after are the handles before the call and as MPI left them. */
struct zc_req *zc_mpi_take(MPI_Request req);
/* Whether completing these records needs their statuses (receives, cancelled requests): if not,
 * an application that ignores statuses lets MPI skip them for us too. */
bool zc_mpi_need_status(struct zc_req *const *ris, int n);
void zc_mpi_settle_one(struct zc_mpi_call *c, MPI_Request before, struct zc_req *ri, MPI_Request after, int rc, int flag,
                       bool test, const MPI_Status *st);
void zc_mpi_settle_any(struct zc_mpi_call *c, const MPI_Request *before, struct zc_req **ris, int n,
                       const MPI_Request *after, int rc, int flag, bool test, int index, const MPI_Status *st);
void zc_mpi_settle_some(struct zc_mpi_call *c, const MPI_Request *before, struct zc_req **ris, int n,
                        const MPI_Request *after, int rc, bool test, int outcount, const int *indices,
                        const MPI_Status *sts);
void zc_mpi_req_forget(struct zc_mpi_call *c, MPI_Request req);
/* The thread level MPI provides, set once in MPI_Init before any wrapper records: whether
 * requests may be completed concurrently (MPI_THREAD_MULTIPLE: the table is locked), or all by
 * one thread (up to FUNNELED: the writer matches sends and receives, zc_mpi_resolve.c). */
void zc_mpi_set_thread_level(int level);
void zc_mpi_resolver_install(void);
void zc_mpi_req_cancelled(MPI_Request req);
void zc_mpi_coll_peers(MPI_Comm comm, int neighbor, int *in, int *out);
void zc_mpi_coll_begin(struct zc_mpi_call *c);
/* flags of a collective: a neighbourhood one; its count arrays are MPI_Count (large-count _c
 * forms), not int; a persistent one (created by MPI_<coll>_init, recorded from each MPI_Start) */
enum { ZC_COLL_NEIGHBOR = 1, ZC_COLL_WIDE = 2, ZC_COLL_PERSISTENT = 4 };
void zc_mpi_coll_end(struct zc_mpi_call *c, OTF2_CollectiveOp op, int flags, MPI_Comm comm, int64_t scount,
                     MPI_Datatype stype, int64_t rcount, MPI_Datatype rtype, const void *scounts, const void *rcounts,
                     const MPI_Datatype *stypes, const MPI_Datatype *rtypes, int root);
void zc_mpi_icoll(struct zc_mpi_call *c, OTF2_CollectiveOp op, int flags, MPI_Comm comm, int64_t scount,
                  MPI_Datatype stype, int64_t rcount, MPI_Datatype rtype, const void *scounts, const void *rcounts,
                  const MPI_Datatype *stypes, const MPI_Datatype *rtypes, int root, MPI_Request req);
void zc_mpi_comm_new(struct zc_mpi_call *c, enum zc_mpi_how how, MPI_Comm parent, MPI_Comm newcomm, int tag);
/* Before MPI_Comm_free (and disconnect): takes comm's entry out (returned); after it,
 * zc_mpi_comm_freed frees the entry, or puts it back if the call failed (rc). */
void *zc_mpi_comm_forget(MPI_Comm comm);
void zc_mpi_comm_freed(MPI_Comm comm, void *entry, int rc);
/* After a successful MPI_Comm_set_name: the communicator's definition takes its name. */
void zc_mpi_comm_named(MPI_Comm comm);
/* Statuses/requests for the app's ignored or about-to-be-nulled arrays (malloc above n_stack). */
MPI_Status *zc_mpi_statuses(MPI_Status *stack, int n_stack, int n);

/* zc_mpi_special.c */
extern atomic_bool zc_mpi_is_ready;
void zc_mpi_set_ready(bool on); /* and what the fast paths may take (zc_mpi_call.c) */
/* MPI initialised by the app, our state set up, not finalizing */
static inline bool zc_mpi_ready(void) { return atomic_load_explicit(&zc_mpi_is_ready, memory_order_acquire); }

/* Shared by the C and Fortran entry points of MPI_Init, MPI_Init_thread and MPI_Finalize: after
 * a successful PMPI init (fn = ZC_MPI_MPI_Init or ZC_MPI_MPI_Init_thread; s begun and ended
 * around the PMPI call), and everything before the PMPI finalize. zc_mpi_linked(): libmpi was
 * loaded with the program, so the weak PMPI references resolve (otherwise every wrapper passes
 * through). MPI_Init and MPI_Finalize are recorded from their two times once the collector knows
 * whether it records; PAPI counters are read right after the first (begin) and right before the
 * second (end). */
struct zc_mpi_special {
    uint64_t t0, t1;
    size_t k0, k1;
    struct zc_ev m0[ZC_PAPI_MAX_RECS], m1[ZC_PAPI_MAX_RECS];
};
void zc_mpi_special_begin(struct zc_mpi_special *s);
void zc_mpi_special_end(struct zc_mpi_special *s);
void zc_mpi_init_done(uint32_t fn, struct zc_mpi_special *s);
void zc_mpi_finalize_prepare(void);
/* MPI_Abort (C and Fortran): the rank's records go to the salvage journal first (bounded). */
void zc_mpi_abort_prepare(void);
bool zc_mpi_linked(void);
/* registers MPI_COMM_WORLD/SELF and sets up state after the app's MPI_Init (zc_mpi_comm.c) */
void zc_mpi_comms_init(int rank, int size);
/* A PMPI function when libmpi came by dlopen after us (mpi4py): zc_mpi_resolve (zc_mpi_flavour.h). */

#include "zc_mpi_req.h"

#endif
