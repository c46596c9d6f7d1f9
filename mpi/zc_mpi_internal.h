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

#include "../collector/zc_core.h"
#include "../collector/zc_papi.h"

/* Open MPI's predefined objects behind the handles we use. */
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
#pragma weak PMPI_Group_size
#pragma weak PMPI_Group_translate_ranks
#pragma weak PMPI_Group_free
#pragma weak PMPI_Type_size
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

enum zc_mpi_req_kind { ZC_MPI_REQ_ISEND, ZC_MPI_REQ_IRECV, ZC_MPI_REQ_PSEND, ZC_MPI_REQ_PRECV, ZC_MPI_REQ_NBC };

#define ZC_MPI_PENDING 12 /* events a call batches (zc_loc_put takes at most 14 at once) */
/* zc_mpi_call.split: the call's Enter is already written, because it has more events than
 * ZC_MPI_PENDING (the first ones went with it) or because it is sampled (ZC_MPI_PAPI: Metric
 * records before its Enter and its Leave). Any bit sends its end down the slow path. */
#define ZC_MPI_ENTERED 1u
#define ZC_MPI_PAPI 2u
struct zc_mpi_call {
    struct zc_thread *t;
    uint64_t t0;
    uint32_t fn;
    bool events;   /* MPI events are recorded (top-level call, tracing on) */
    uint8_t split; /* ZC_MPI_ENTERED | ZC_MPI_PAPI */
    int n;
    struct zc_ev ev[ZC_MPI_PENDING]; /* the events inside the call's region; ts 0 = the Leave time */
};

/* Inlined into every wrapper: a recorded call costs two TSC reads, a TLS load, and one
 * ZC_EV_CALL record plus its events in the thread's own buffer, no lock and no atomic
 * instruction (zc_core.h: zc_own_begin). zc_mpi_thread is the thread's record for this inline
 * path: NULL until its first call, and NULL for good while PAPI counts (papi.events), so that
 * sampled calls take zc_mpi_begin_slow without a single extra instruction when PAPI is off.
 * Not tracked at all (plain PMPI call): before MPI_Init and after MPI_Finalize, and for MPI calls
 * made inside MPI (ROMIO implements MPI-IO with MPI calls: they are part of the outer call).
 * Tracked without events: tracing off or paused; requests and communicators are still followed,
 * so that what is recorded later is attributed right. */
extern _Thread_local int zc_mpi_depth __attribute__((tls_model("initial-exec")));
extern _Thread_local struct zc_thread *zc_mpi_thread __attribute__((tls_model("initial-exec")));
extern uint32_t zc_mpi_region_cache[]; /* region + 1 per function, 0 = not defined yet */
uint32_t zc_mpi_region(uint32_t fn); /* the function's region (defined on first use) */
bool zc_mpi_begin_slow(struct zc_mpi_call *c);
void zc_mpi_end_slow(struct zc_mpi_call *c, uint64_t t1);
static inline bool zc_mpi_ready(void);
static inline __attribute__((always_inline)) bool zc_mpi_begin(struct zc_mpi_call *c, uint32_t fn) {
    if (__builtin_expect(!zc_mpi_ready() || zc_mpi_depth > 0, 0)) return false;
    zc_mpi_depth = 1;
    c->fn = fn;
    c->n = 0;
    c->split = 0;
    struct zc_thread *t = zc_mpi_thread;
    c->t = t;
    c->events = t && zc_active() && zc_on(ZC_F_MPI);
    if (__builtin_expect(!t, 0)) return zc_mpi_begin_slow(c);
    if (c->events) c->t0 = zc_tick();
    return true;
}
static inline __attribute__((always_inline)) void zc_mpi_end(struct zc_mpi_call *c) {
    zc_mpi_depth = 0;
    if (!c->events) return;
    uint64_t t1 = zc_tick();
    uint32_t region = __atomic_load_n(&zc_mpi_region_cache[c->fn], __ATOMIC_RELAXED);
    struct zc_loc *l = c->t->loc;
    int n = c->n;
    if (__builtin_expect(region != 0 && !c->split && l->n + 1 + (size_t)n <= l->lim, 1)) {
        if (zc_own_begin(l)) {
            struct zc_ev *d = &l->buf[l->n];
            d[0] = (struct zc_ev){c->t0, ZC_EV_CALL, region - 1, t1, 0, (uint64_t)n};
            for (int i = 0; i < n; i++) {
                d[1 + i] = c->ev[i];
                if (!c->ev[i].ts) d[1 + i].ts = t1;
            }
            zc_loc_publish(l, l->n + 1 + (size_t)n);
        }
        zc_own_end(l);
        return;
    }
    zc_mpi_end_slow(c, t1);
}

void zc_mpi_ev_send(struct zc_mpi_call *c, int count, MPI_Datatype t, int peer, int tag, MPI_Comm comm);
void zc_mpi_ev_recv(struct zc_mpi_call *c, MPI_Datatype t, MPI_Comm comm, const MPI_Status *st);
struct zc_req;
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
void zc_mpi_req_forget(MPI_Request req);
/* Whether requests may be completed concurrently (MPI_THREAD_MULTIPLE): set once in MPI_Init. */
void zc_mpi_set_thread_multiple(bool mt);
void zc_mpi_req_cancelled(MPI_Request req);
void zc_mpi_coll_peers(MPI_Comm comm, int neighbor, int *in, int *out);
void zc_mpi_coll_begin(struct zc_mpi_call *c);
void zc_mpi_coll_end(struct zc_mpi_call *c, OTF2_CollectiveOp op, int neighbor, MPI_Comm comm, int scount,
                     MPI_Datatype stype, int rcount, MPI_Datatype rtype, const int *scounts, const int *rcounts,
                     const MPI_Datatype *stypes, const MPI_Datatype *rtypes, int root);
void zc_mpi_icoll(struct zc_mpi_call *c, OTF2_CollectiveOp op, int neighbor, MPI_Comm comm, int scount,
                  MPI_Datatype stype, int rcount, MPI_Datatype rtype, const int *scounts, const int *rcounts,
                  const MPI_Datatype *stypes, const MPI_Datatype *rtypes, int root, MPI_Request req);
void zc_mpi_comm_new(struct zc_mpi_call *c, enum zc_mpi_how how, MPI_Comm parent, MPI_Comm newcomm, int tag);
void zc_mpi_comm_forget(MPI_Comm comm);
/* Statuses/requests for the app's ignored or about-to-be-nulled arrays (malloc above n_stack). */
MPI_Status *zc_mpi_statuses(MPI_Status *stack, int n_stack, int n);

/* zc_mpi_special.c */
extern atomic_bool zc_mpi_is_ready;
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
/* registers MPI_COMM_WORLD/SELF and sets up state after the app's MPI_Init (zc_mpi.c) */
void zc_mpi_comms_init(int rank, int size);
/* A PMPI function when libmpi came by dlopen after us (mpi4py): the weak references are NULL and
 * every wrapper passes through to what this returns (NULL: not found). */
void *zc_mpi_resolve(const char *name);

#include "zc_mpi_req.h"

#endif
