/* SPDX-License-Identifier: MIT */
/* The report model: sorted rows built once from the merged statistics, with every derived
 * floating-point number computed here and nowhere else. Text, CSV, JSON and HTML print it. */
#ifndef ZC_AGG_REPORT_H
#define ZC_AGG_REPORT_H

#include "zc_agg.h"

struct r_kernel {
    uint32_t region;
    const char *name;
    uint64_t calls, total, min, max, p50, p90, p99;
    double mean, sd, share;
    /* imbalance over all ranks (a rank that did not run it counts 0) */
    uint32_t ranks_running, max_rank;
    uint64_t rank_max;
    double rank_mean, rank_cv, max_over_mean;
    const char *max_host, *max_device;
    const struct agg_top *top;
};

struct r_rowk {          /* per rank / device / queue rows of a kernel */
    uint32_t region, rank;
    uint32_t node, loc;  /* device node; queue location (AGG_NONE if n/a) */
    uint64_t calls, total, min, max;
    double mean;
};

struct r_xfer {
    uint32_t xfer, cls;  /* cls: size class (T_XFER_SIZE rows) */
    char mem[4];
    const char *kind, *dir;
    uint64_t calls, bytes, busy, min, max, p50_bw, lo, hi;
    double mean, bw;
    uint32_t rank;       /* per-rank rows */
};

struct r_simple {        /* barriers, Level Zero API, MPI functions */
    uint32_t region;
    const char *name;
    uint64_t calls, total, min, max, bytes;
    double mean, share;
};

struct r_util {
    uint32_t rank, node;
    uint64_t busy, compute, copy, overlap, off, window, denom;
    double util, util_compute, util_copy, overlap_share;
};

struct r_gap {
    uint32_t cls;
    uint64_t lo, hi, count, total;
};

struct r_lat {
    uint32_t region, loc, rank;
    const char *name;
    uint64_t n, min, max, p50, p90, p99;
    double mean;
};

struct r_coll {
    uint32_t region, comm, comm_size;
    const char *name;
    char comm_name[96];
    uint64_t calls, total, bytes;
    double mean;
};

struct r_mpirank {
    uint32_t rank;
    uint64_t mpi_ns, wall, kernel_ns;
    uint64_t off, denom; /* host measurement off (agg_rank.host_off_ns); denom = wall - off */
    double share;        /* mpi_ns / denom */
};

struct r_strag {
    uint32_t rank;
    uint64_t top_ns, mpi_ns;
    double ratio;
};

struct r_loc {
    uint32_t li, rank;
    uint64_t read, defined, recorded, clamped, dropped, metrics, unclosed, badleave, offcount, offns;
    uint64_t noffsets;
    bool props, missing;
};

struct r_rankq {
    uint32_t rank;
    uint64_t events, cs_host_only, cs_dev_only, cs_repeat, lat_negative, lat_negative_max, off_count, off_ns;
    uint64_t noffsets, off_t0, off_t1, first, last;
    int64_t off_v0, off_v1;
    double sd0, sd1, drift_ppm;
    uint64_t data_end; /* salvaged archives (A20): where its data ends, offsets applied; 0 = none */
    bool present;
};

/* PAPI counters (A19) */
struct r_counter {       /* a metric member */
    uint32_t member;
    const char *name, *unit, *descr, *type, *mode;
    bool summed;         /* deltas summed: accumulated from a start, integer values */
    uint32_t ranks;      /* ranks whose threads counted it */
};

struct r_mregion {       /* one counter over one region's instances with a Metric at both ends */
    uint32_t member, region;
    const char *counter, *unit, *name, *kind; /* kind: "MPI", "Level Zero", "other" */
    uint64_t calls, total, min, max, region_ns;
    double mean, of_time; /* of_time: total / region_ns for counters in ns, -1 otherwise */
};

struct r_mrank {         /* one counter on one rank */
    uint32_t rank, member;
    const char *counter, *unit;
    uint64_t threads, counted, in_mpi, mpi_regions, in_l0, l0_regions;
};

struct agg_report {
    const struct agg_defs *d;
    struct agg_report_opts o;
    char archive[PATH_MAX];
    uint64_t first, last, wall, events;
    uint32_t ranks_read;
    /* kernels */
    struct r_kernel *k;
    uint32_t nk;
    uint64_t k_total;
    struct r_rowk *kr, *kd, *kq;
    uint32_t nkr, nkd, nkq;
    /* transfers */
    struct r_xfer *x, *xs, *xr;
    uint32_t nx, nxs, nxr;
    struct r_simple *bar;
    uint32_t nbar;
    /* utilisation */
    struct r_util *u, *ud, job;
    uint32_t nu, nud;
    struct r_gap *gap;
    uint32_t ngap;
    uint32_t nbins;
    uint64_t bin_ns;
    double *umat; /* ranks x bins; -1: rank absent */
    /* launch latency */
    struct r_lat lat_all, *lq, *lk;
    uint32_t nlq, nlk;
    /* MPI */
    struct r_simple *mpi;
    uint32_t nmpi;
    uint64_t mpi_total;
    struct r_mpirank *mr;
    uint32_t nmr;
    struct r_coll *coll;
    uint32_t ncoll;
    /* host API */
    struct r_simple *api;
    uint32_t napi;
    uint64_t api_total;
    struct r_strag *strag;
    uint32_t nstrag, strag_kernels;
    /* PAPI counters */
    struct r_counter *pc;
    uint32_t npc;
    struct r_mregion *pm;
    uint32_t npm;
    struct r_mrank *pr;
    uint32_t npr;
    /* data quality */
    struct r_loc *loc;
    uint32_t nloc;
    struct r_rankq *rq;
    uint32_t nrq;
    uint64_t dq_missing_ranks, dq_missing_locs, dq_unclosed, dq_badleave, dq_clamped, dq_dropped, dq_metrics;
    uint64_t dq_off_count, dq_off_ns, dq_cs_host_only, dq_cs_dev_only, dq_cs_repeat, dq_lat_negative, dq_short;
    uint64_t dq_flush_ns, dq_no_offsets;
    uint64_t dq_m_unpaired, dq_m_decreasing, dq_m_one_sided; /* A19: see docs/report-schema.md */
    bool dq_props;
};

/* names used by every writer */
const char *rep_host_of_rank(const struct agg_report *r, uint32_t rank);
const char *rep_node_name(const struct agg_report *r, uint32_t node);
const char *rep_loc_name(const struct agg_report *r, uint32_t li);

#endif
