/* SPDX-License-Identifier: MIT */
/* The floor of any MPI tracer that times the calls of zc_mpi_bench's loop and keeps what zecoll
 * keeps of them (bench/results/rounds.md, "Ninth round"): preloaded instead of libzecoll.so, it wraps
 * MPI_Irecv, MPI_Isend and MPI_Waitall through PMPI with nothing but
 *   - the call's Enter and Leave times (two rdtsc; none when built with ZC_FLOOR_NOCLOCK),
 *   - one 64-byte record per call in a thread-local ring that nobody reads (no writer thread, no
 *     lock, no check of any state): the arguments as raw handles, the request handles before and
 *     after a completion call, and the statuses of completed requests (asked of MPI where the
 *     application ignores them, as any tracer that reports received bytes must).
 * MPI_Send, MPI_Wait and MPI_Sendrecv the same way: LAMMPS's halo exchange (Irecv, Send, Wait; a
 * Sendrecv at each re-neighbouring), so that fullnode.sh can run the floor beside the collector on it.
 * It records nothing anyone could read: a measuring instrument, not a tracer. */
#include <mpi.h>
#include <stdint.h>
#include <string.h>

#ifdef ZC_FLOOR_NOCLOCK
__attribute__((visibility("hidden"))) __thread uint64_t zc_floor_count;
static inline uint64_t floor_tick(void) { return ++zc_floor_count; }
#else
static inline uint64_t floor_tick(void) { return __builtin_ia32_rdtsc(); }
#endif

struct floor_rec {
    uint64_t t0, t1;
    uint64_t w[6];
};
enum { FLOOR_RING = 4096 }; /* 256 KiB per thread: stays in the core's L2 */
/* Not static, and each record passed to an empty asm: the compiler must not drop the stores of a
 * ring that nothing in this file reads. */
__attribute__((visibility("hidden"))) __thread struct floor_rec zc_floor_ring[FLOOR_RING];
__attribute__((visibility("hidden"))) __thread unsigned zc_floor_at;

static inline struct floor_rec *floor_next(void) { return &zc_floor_ring[zc_floor_at++ % FLOOR_RING]; }
static inline void floor_keep(struct floor_rec *r) { __asm__ volatile("" ::"r"(r) : "memory"); }

#define FLOOR_EXPORT __attribute__((visibility("default")))

/* The record of a call that starts a request (kind 1: receive, 2: send). */
static inline void floor_start(uint64_t kind, uint64_t t0, uint64_t t1, int count, MPI_Datatype type, int peer, int tag,
                               MPI_Comm comm, const MPI_Request *req) {
    struct floor_rec *r = floor_next();
    *r = (struct floor_rec){t0, t1, {kind, (uint64_t)count, (uint64_t)(uintptr_t)type,
                                     (uint64_t)(uint32_t)peer << 32 | (uint32_t)tag, (uint64_t)(uintptr_t)comm,
                                     (uint64_t)(uintptr_t)*req}};
    floor_keep(r);
}

FLOOR_EXPORT int MPI_Irecv(void *buf, int count, MPI_Datatype type, int src, int tag, MPI_Comm comm,
                           MPI_Request *req) {
    uint64_t t0 = floor_tick();
    int rc = PMPI_Irecv(buf, count, type, src, tag, comm, req);
    floor_start(1, t0, floor_tick(), count, type, src, tag, comm, req);
    return rc;
}

FLOOR_EXPORT int MPI_Isend(const void *buf, int count, MPI_Datatype type, int dst, int tag, MPI_Comm comm,
                           MPI_Request *req) {
    uint64_t t0 = floor_tick();
    int rc = PMPI_Isend(buf, count, type, dst, tag, comm, req);
    floor_start(2, t0, floor_tick(), count, type, dst, tag, comm, req);
    return rc;
}

FLOOR_EXPORT int MPI_Waitall(int n, MPI_Request reqs[], MPI_Status sts[]) {
    enum { K = 4 };
    if (n > K) return PMPI_Waitall(n, reqs, sts); /* the loop waits for 2 */
    MPI_Request before[K];
    MPI_Status own[K];
    MPI_Status *st = sts == MPI_STATUSES_IGNORE ? own : sts;
    memcpy(before, reqs, (size_t)n * sizeof *reqs);
    uint64_t t0 = floor_tick();
    int rc = PMPI_Waitall(n, reqs, st);
    uint64_t t1 = floor_tick();
    struct floor_rec *r = floor_next();
    *r = (struct floor_rec){t0, t1, {3, (uint64_t)n}};
    for (int i = 0; i < n && i < 2; i++) {
        r->w[2 + 2 * i] = (uint64_t)(uintptr_t)before[i];
        r->w[3 + 2 * i] = (uint64_t)(uint32_t)st[i].MPI_SOURCE << 32 | (uint32_t)st[i].MPI_TAG;
    }
    floor_keep(r);
    return rc;
}

FLOOR_EXPORT int MPI_Send(const void *buf, int count, MPI_Datatype type, int dst, int tag, MPI_Comm comm) {
    uint64_t t0 = floor_tick();
    int rc = PMPI_Send(buf, count, type, dst, tag, comm);
    MPI_Request none = MPI_REQUEST_NULL;
    floor_start(4, t0, floor_tick(), count, type, dst, tag, comm, &none);
    return rc;
}

FLOOR_EXPORT int MPI_Wait(MPI_Request *req, MPI_Status *sts) {
    MPI_Request before = *req;
    MPI_Status own;
    MPI_Status *st = sts == MPI_STATUS_IGNORE ? &own : sts;
    uint64_t t0 = floor_tick();
    int rc = PMPI_Wait(req, st);
    uint64_t t1 = floor_tick();
    struct floor_rec *r = floor_next();
    *r = (struct floor_rec){t0, t1, {5, 1, (uint64_t)(uintptr_t)before,
                                     (uint64_t)(uint32_t)st->MPI_SOURCE << 32 | (uint32_t)st->MPI_TAG}};
    floor_keep(r);
    return rc;
}

FLOOR_EXPORT int MPI_Sendrecv(const void *sbuf, int scount, MPI_Datatype stype, int dst, int stag, void *rbuf,
                              int rcount, MPI_Datatype rtype, int src, int rtag, MPI_Comm comm, MPI_Status *sts) {
    MPI_Status own;
    MPI_Status *st = sts == MPI_STATUS_IGNORE ? &own : sts;
    uint64_t t0 = floor_tick();
    int rc = PMPI_Sendrecv(sbuf, scount, stype, dst, stag, rbuf, rcount, rtype, src, rtag, comm, st);
    uint64_t t1 = floor_tick();
    struct floor_rec *r = floor_next();
    *r = (struct floor_rec){t0, t1, {6, (uint64_t)scount << 32 | (uint32_t)rcount, (uint64_t)(uintptr_t)stype,
                                     (uint64_t)(uint32_t)dst << 32 | (uint32_t)stag, (uint64_t)(uintptr_t)comm,
                                     (uint64_t)(uint32_t)st->MPI_SOURCE << 32 | (uint32_t)st->MPI_TAG}};
    floor_keep(r);
    return rc;
}
