/* SPDX-License-Identifier: MIT */
/* zecoll-synth internals: the job model it writes (ranks, queues, regions, ids) shared by the
 * event writer and its expected statistics (zc_synth.c) and the definitions (zc_synth_defs.c). */
#ifndef ZC_SYNTH_H
#define ZC_SYNTH_H

#include <otf2/otf2.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

enum { K_GEMM, K_AXPY, K_REDUCE, NKERNELS };
enum mem { M_H2D, M_D2H, M_D2D, NMEM };
enum { PM_INS, PM_CLOCK, NPM }; /* PAPI-like counters (A19) */

/* regions (global ids) */
enum {
    R_ZEINIT, R_MPI_INIT, R_MPI_ALLREDUCE, R_MPI_FINALIZE, R_APP_LAUNCH, R_APP_COPY, R_APP_FILL, R_APP_BARRIER,
    R_K0, /* + kernel */
    R_COPY0 = R_K0 + NKERNELS, /* + mem */
    R_FILL = R_COPY0 + NMEM, R_BARRIER,
    R_MPI_SEND, R_MPI_RECV, R_MPI_SSEND, R_MPI_BCAST, R_MPI_REDUCE, R_MPI_BARRIER, /* --waits */
    NREGIONS
};
extern const char *const synth_region_names[NREGIONS];

/* --break RULE: one deliberate violation of docs/archive.md */
struct breaks {
    bool a2, a8, a12, a14, a15, a16;
};

struct opts {
    const char *out, *expected;
    uint32_t ranks, queues, ops, slowdown; /* slowdown: k_axpy that many percent slower (for --diff tests) */
    uint64_t seed;
    bool skew, off, metrics, small_chunks, waits;
    struct breaks brk;
};

/* The archive being written: what the definitions need of the events. */
struct synth {
    const struct opts *o;
    OTF2_Archive *ar;
    uint64_t gmin, gmax; /* first and last event, rank 0's clock */
    uint64_t *nevents;   /* events per location: [r * (1 + Q) + k], k = 0 the thread, 1 + q the streams */
};

/* Rank r: its thread is location r; its stream q is 1 << 63 | q << 32 | r. */
static inline uint64_t synth_loc_id(uint32_t r, uint32_t k) {
    return k == 0 ? r : (UINT64_C(1) << 63) | ((uint64_t)(k - 1) << 32) | r;
}
static inline uint32_t synth_dev_of(uint32_t r) { return (r % 8) / 2; } /* two ranks per device */
static inline uint32_t synth_host_of(uint32_t r) { return r / 8; }      /* eight per host */
/* rank 0's clock is the reference (A4) */
static inline int64_t synth_skew_of(const struct opts *o, uint32_t r) {
    return o->skew && r ? ((int64_t)(r % 5) - 2) * 1000000 : 0;
}

/* The rank being written. */
struct ctx {
    struct synth sy;
    const struct opts *o;
    OTF2_EvtWriter *w;
    uint64_t n, last;
    int64_t skew;
    uint32_t r;        /* the rank being written */
    uint64_t waits_at; /* --waits: when every rank's planted waits begin (rank 0's clock) */
};
/* every record: the job's span, time order on the location, the local (skewed) time written */
void synth_tick(struct ctx *c, uint64_t global_t);
#define SYNTH_LT(c, t) ((uint64_t)((int64_t)(t) + (c)->skew))

/* --waits (zc_synth_waits.c): rank c->r's planted wait states from c->waits_at; its MPI time */
uint64_t synth_write_waits(struct ctx *c);
/* the allreduces every rank writes: their Wait at NxN is expected too */
void synth_waits_allreduce(const struct opts *o, uint32_t r, uint32_t m, uint64_t enter, uint64_t dur);
/* ,"waits":{...} of the expected statistics */
void synth_waits_expected(FILE *ex, const struct opts *o);

/* The clock offsets (local definitions) and the global definitions. */
void synth_write_defs(const struct synth *s);

#endif
