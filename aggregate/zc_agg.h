/* SPDX-License-Identifier: MIT */
/* zecoll-aggregate internals: the archive's global definitions (read by every reader rank), the
 * exact mergeable statistics (integer sums, fixed-layout sketches), the per-process event reader,
 * the report model and its writers. Nothing here uses MPI: zc_agg_main.c distributes processes
 * over the reader ranks and reduces the serialised statistics, so the fuzzer and the tests can
 * drive the reader path in one process. Depends on the collector only through docs/archive.md. */
#ifndef ZC_AGG_H
#define ZC_AGG_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define AGG_NONE UINT32_MAX
#define AGG_SCHEMA_VERSION 3
#define AGG_SCHEMA_VERSION_MIN 1 /* --diff reads reports back to this version */
#define AGG_TOPK_MAX 16

/* ---------------------------------------------------------------- errors */
/* The first fatal problem: which file, what. Bad input is exit code 2. */
struct agg_err {
    int code;          /* 0 = none */
    char file[PATH_MAX];
    char msg[512];
};
void agg_err_set(struct agg_err *e, const char *file, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* OTF2 reports its errors through a callback: the last message is kept for agg_err_set. */
void agg_otf2_errors_capture(void);
const char *agg_otf2_last_error(void);

/* ---------------------------------------------------------------- definitions */
enum agg_dev_class { AGG_D_KERNEL, AGG_D_COPY, AGG_D_IMAGE, AGG_D_FILL, AGG_D_BARRIER };
enum agg_host_class { AGG_H_L0, AGG_H_MPI, AGG_H_MEASUREMENT, AGG_H_OTHER };
enum agg_loc_type { AGG_LOC_THREAD, AGG_LOC_STREAM, AGG_LOC_OTHER };

struct agg_region {
    uint32_t name;
    uint8_t role, paradigm;
    uint8_t dev_class, host_class;
    bool l0_sync;       /* a Level Zero host synchronisation (GPU idle attribution) */
    uint32_t xfer;      /* transfers: kind << 16 | source letter << 8 | destination letter */
};

struct agg_lgroup {
    uint32_t name;
    uint8_t type;       /* OTF2_LocationGroupType */
    uint32_t node;      /* system tree parent */
    uint32_t creator;   /* creating group */
    bool defined;
};

struct agg_node {
    uint32_t name, cls, parent;
    bool defined, device, host;
};

struct agg_loc {
    uint64_t id;
    uint32_t name;
    uint8_t type;       /* enum agg_loc_type */
    uint32_t group;
    uint64_t def_events;
    uint64_t p_events, p_clamped, p_dropped; /* location properties (A12) */
    uint64_t p_data_end;                     /* salvaged archives (A20): where its rank's data ends */
    uint8_t have_props;                      /* bit per property */
    uint32_t proc;      /* index into agg_defs.procs */
    uint32_t device;    /* streams: device node (AGG_NONE if unknown) */
    uint32_t queue;     /* streams: index of the base location of its queue (A8) */
    uint64_t file_size; /* event file bytes (0: none) */
    bool missing;       /* has events by its definition but no event file */
    bool empty;         /* has events by its definition and an empty event file (truncated) */
};

struct agg_comm {
    uint32_t name, group, group_b, parent, size; /* group_b: an intercommunicator's second group */
    bool inter, defined;
};

struct agg_proc {
    uint32_t group, rank;
    uint32_t *locs, nlocs; /* sorted by location id */
    uint64_t bytes;        /* summed event file sizes */
    uint32_t host;         /* host node */
};

/* A19: PAPI counters. A member is one counter; a class, the members a Metric record carries. */
struct agg_mmember {
    uint32_t name, descr, unit;
    uint8_t type, mode; /* OTF2_Type, OTF2_MetricMode */
    bool scaled;        /* base or exponent other than decimal 10^0 */
    bool defined;
};
struct agg_mclass {
    uint32_t n;
    uint32_t *m;        /* member ids */
    bool defined;
};
/* Whether deltas of a member are summed: accumulated from a start, integer values. */
bool agg_member_summed(const struct agg_mmember *m);

struct agg_defs {
    uint64_t ticks, t0, span; /* clock properties */
    char **strings;
    uint32_t nstrings;
    struct agg_region *regions;
    uint32_t nregions;
    struct agg_lgroup *groups;
    uint32_t ngroups;
    struct agg_node *nodes;
    uint32_t nnodes;
    struct agg_loc *locs;
    uint32_t nlocs;
    struct agg_comm *comms;
    uint32_t ncomms;
    struct agg_mgroup *mgroups; /* MPI groups by group id (zc_agg_comm.c) */
    uint32_t nmgroups, mpi_locs_group;
    uint32_t *group_size; /* members of groups (by group id), for communicator sizes */
    uint32_t ngroup_size;
    uint32_t callsite_param; /* "callsite id" parameter id, AGG_NONE if absent */
    struct agg_proc *procs;  /* one per process location group, by rank */
    uint32_t nprocs;
    uint32_t nranks;         /* highest rank + 1 */
    uint32_t nhosts, ndevices, nthreads, nstreams;
    /* location id -> index */
    uint64_t *loc_ht_key;
    uint32_t *loc_ht_val;
    size_t loc_ht_cap;
    struct agg_mmember *mmembers;
    uint32_t nmmembers;
    struct agg_mclass *mclasses;
    uint32_t nmclasses, mclass_max; /* most members in one class */
    int have_props;          /* any location property seen */
    int mpi;                 /* "MPI Rank" process groups */
    char salvaged[64];       /* the ZECOLL::SALVAGED anchor property (A20), "" when absent */
    /* A21: the Level Zero spec versions and the calls to entries passed through untraced; "" when
     * the archive has no ZECOLL::L0_SPEC_KNOWN (no Level Zero use, or an older collector) */
    char l0_known[16], l0_asked[64], l0_untraced[1024]; /* l0_untraced: "name n, name n, ..." */
    uint64_t l0_untraced_calls;
    char l0_uncounted[1024]; /* ZECOLL::L0_UNTRACED_UNCOUNTED: "name, name, ..." */
};

/* MPI groups (zc_agg_comm.c): a COMM_LOCATIONS group lists locations, a communicator's group the
 * indices into it; world rank = location id & 0xffffffff (A8, A13). */
struct agg_mgroup {
    uint64_t *m;
    uint32_t n;
    uint8_t type; /* OTF2_GroupType */
};
int agg_group_keep(struct agg_defs *d, uint32_t self, uint8_t type, uint32_t n, const uint64_t *members);
void agg_groups_free(struct agg_defs *d);
/* The world rank of rank `local` of communicator comm seen from world rank `self` (an
 * intercommunicator's peer is in the other group); AGG_NONE when unknown. */
uint32_t agg_comm_world(const struct agg_defs *d, uint32_t comm, uint32_t local, uint32_t self);
bool agg_is_l0_sync(const char *region_name);

/* Reads anchor + global definitions of ARCHIVE (the directory or its traces.otf2); stats every
 * event file. 0, or -1 with e filled. */
int agg_defs_read(struct agg_defs *d, const char *archive, struct agg_err *e);
/* agg_defs_read in a child process first: -1 (e names the file) when OTF2 crashes or makes no
 * progress for stall_s seconds on the anchor or the global definitions; 0 otherwise. Call it
 * before MPI_Init (it forks). */
int agg_defs_probe(const char *archive, int stall_s, struct agg_err *e);
void agg_defs_free(struct agg_defs *d);
const char *agg_str(const struct agg_defs *d, uint32_t s);
uint32_t agg_loc_index(const struct agg_defs *d, uint64_t id);
/* the anchor file (traces.otf2) and the archive's directory of an archive argument (either) */
void agg_archive_paths(const char *archive, char anchor[PATH_MAX], char dir[PATH_MAX]);
/* transfer letters as text: "H2D", "D" (fills) */
void agg_xfer_name(uint32_t xfer, char *out, size_t n);
const char *agg_xfer_kind(uint32_t xfer);
const char *agg_xfer_direction(uint32_t xfer); /* H2D D2H D2D H2H, or "fill"/"image" classes */

/* ---------------------------------------------------------------- sketch */
/* Log-linear buckets with 128 sub-buckets per power of two: values below 128 are exact, every
 * other bucket spans at most 1/128 of its lower bound, and its midpoint is returned, so a
 * reported percentile is within 2^-8 = 0.39% of the true nearest-rank value. Integer counts,
 * fixed layout: merging is addition, independent of order. */
#define AGG_SKETCH_SUB 7
#define AGG_SKETCH_REL_ERROR (1.0 / 256.0)
struct agg_sketch {
    int32_t lo;     /* first bucket index held */
    uint32_t n;     /* buckets held */
    uint64_t *c;
};
uint32_t agg_sketch_index(uint64_t v);
uint64_t agg_sketch_value(uint32_t idx); /* representative (midpoint) */
int agg_sketch_add(struct agg_sketch *s, uint64_t v, uint64_t count);
int agg_sketch_merge(struct agg_sketch *dst, const struct agg_sketch *src);
/* nearest-rank percentile (p in 0..100], clamped into [min, max] by the caller */
uint64_t agg_sketch_quantile(const struct agg_sketch *s, uint64_t total, double p);
void agg_sketch_free(struct agg_sketch *s);

/* ---------------------------------------------------------------- accumulators */
struct agg_top_ent {
    uint64_t dur, rank, loc, start;
};
struct agg_top {
    uint32_t n;
    struct agg_top_ent e[AGG_TOPK_MAX];
};
struct agg_acc {
    uint64_t n, sum, min, max;
    unsigned __int128 sq;
    uint64_t bytes;
    uint64_t x[4];
    struct agg_sketch *sk; /* distribution of the values (or bandwidths for transfers) */
    struct agg_top *top;   /* slowest instances */
};
static inline void agg_acc_add(struct agg_acc *a, uint64_t v) {
    if (a->n == 0 || v < a->min) a->min = v;
    if (v > a->max) a->max = v;
    a->n++;
    a->sum += v;
    a->sq += (unsigned __int128)v * v;
}

enum agg_table {
    T_KERNEL = 1,   /* a region: durations; sketch; top */
    T_KERNEL_RANK,  /* a region, b rank */
    T_KERNEL_DEV,   /* a region, b device node */
    T_KERNEL_QUEUE, /* a region, b queue location index */
    T_XFER,         /* a xfer code: durations, bytes; sketch of bandwidth B/s */
    T_XFER_SIZE,    /* a xfer code, b size class (log2): durations, bytes; sketch of bandwidth */
    T_XFER_RANK,    /* a xfer code, b rank */
    T_BARRIER,      /* a region */
    T_DEVUTIL,      /* b rank, c device node: sum busy, x0 compute, x1 copy, x2 overlap, x3 off; min/max first/last op; bytes window */
    T_GAP,          /* a log2 class of idle gaps */
    T_LAT_ALL,      /* launch latency; sketch */
    T_LAT_QUEUE,    /* b queue location index */
    T_LAT_REGION,   /* a region; sketch */
    T_MPI,          /* a region: durations, bytes */
    T_MPI_RANK,     /* a region, b rank */
    T_COLL,         /* a region, b communicator */
    T_API,          /* a region: host Level Zero calls */
    T_LOC,          /* b location index: n events, sum metrics, x0 unclosed, x1 bad leaves, x2 off count, x3 off ns; min/max first/last */
    T_METRIC,       /* a region, b metric member: counter deltas over the region's instances; x0 their durations */
    T_METRIC_RANK,  /* a metric member, b rank, c AGG_MK_*: n, sum (deltas; threads and counted spans) */
    T_MQ,           /* b location index: x0 Metric records without their Enter/Leave, x1 decreasing values, x2 one-sided regions */
    T_MSG,          /* a communicator, b sender, c receiver (world ranks): n messages, bytes (the send side) */
    T_MPI_SIZE,     /* a region, b size class (log2) of a message or a collective's bytes: n, bytes */
    T_IDLE,         /* a enum agg_idle_cause, b rank, c device node: idle-gap ns while the host did that (sum), gaps (n) */
    T_COUNT
};

enum agg_metric_kind { AGG_MK_MPI, AGG_MK_L0, AGG_MK_OTHER, AGG_MK_SPAN };

struct agg_key {
    uint32_t table, a;
    uint64_t b, c;
};

/* What a rank's host did while its GPU was idle (priority in this order) */
enum agg_idle_cause { AGG_IDLE_MPI, AGG_IDLE_SYNC, AGG_IDLE_OFF, AGG_IDLE_COMPUTE, AGG_IDLE_NCAUSES };

/* Event records for what needs the other ranks (zc_agg_comm.c, zc_agg_idle.c): readers append
 * them, rank 0 gathers all and sorts them before use (zc_agg_waits.c), so their order, which
 * depends on the number of readers, never shows. AGG_REC_W words each, word 0 the type. */
enum agg_rec_type {
    REC_SEND = 1, /* comm, src << 32 | dst, tag, t event, t enter, t leave, region << 8 | blocking, loc index, bytes */
    REC_RECV,     /* comm, src << 32 | dst, tag, t posted, t enter (completing call), t leave, region << 8 | blocking, loc index, bytes */
    REC_COLL,     /* comm, rank << 32 | sequence on (rank, comm), op << 32 | root (world), t enter, t leave, -, region, loc index */
    REC_PIECE,    /* rank << 32 | device node, gap start, call loc index, call enter, piece start, piece end, 1 once the gap ended: idle during an MPI call */
    REC_GAP,      /* rank << 32 | device node, start, end, ns by enum agg_idle_cause (4 words): a process's longest gaps */
};
#define AGG_REC_W 10

/* Per-rank record (dense by rank). */
struct agg_rank {
    uint64_t present;   /* 1 once read */
    uint64_t first, last;     /* first and last event (offsets applied) */
    uint64_t ndev;            /* devices with streams */
    uint64_t mpi_ns, kernel_ns, events;
    uint64_t cs_host_only, cs_dev_only, cs_repeat, lat_negative, lat_negative_max;
    uint64_t off_count, off_ns;
    uint64_t host_off_ns;     /* any thread off while none was in an MPI call (the MPI share's denominator) */
    uint64_t noffsets;
    uint64_t off_t0, off_t1;  /* local times of the first and last clock offset */
    int64_t off_v0, off_v1;   /* their offsets */
    uint64_t off_sd0, off_sd1; /* their standard deviations, as IEEE bits */
    uint64_t *bins;           /* nbins: busy ns summed over the rank's devices */
};

struct agg_stats {
    /* keyed table */
    struct agg_key *keys;
    struct agg_acc *accs;
    uint32_t n, cap;
    uint32_t *slot;
    size_t nslot;
    /* ranks */
    struct agg_rank *ranks;
    uint32_t nranks, nbins;
    uint32_t topk;
    bool oom;
    /* event records (enum agg_rec_type), n records of AGG_REC_W words */
    uint64_t *rec;
    size_t nrec, caprec;
    /* direct-mapped memo of recent lookups (entry indices are stable: entries are never removed) */
    uint32_t memo[1024];
};
int agg_stats_init(struct agg_stats *s, uint32_t nranks, uint32_t nbins, uint32_t topk);
void agg_stats_free(struct agg_stats *s);
struct agg_acc *agg_stats_get(struct agg_stats *s, uint32_t table, uint32_t a, uint64_t b, uint64_t c);
struct agg_acc *agg_stats_find(const struct agg_stats *s, uint32_t table, uint32_t a, uint64_t b, uint64_t c);
uint64_t *agg_stats_rank_bins(struct agg_stats *s, uint32_t rank); /* allocated on first use */
/* A new zeroed record of type t; its index, or SIZE_MAX (s->oom set) */
size_t agg_rec_add(struct agg_stats *s, uint64_t t);
static inline uint64_t *agg_rec(const struct agg_stats *s, size_t i) { return s->rec + i * AGG_REC_W; }
void agg_top_add(struct agg_top *t, uint32_t k, const struct agg_top_ent *e);
/* Serialises into a malloc'd array of 64-bit words. */
uint64_t *agg_stats_pack(const struct agg_stats *s, size_t *nwords);
/* Adds a packed partial result; -1 if malformed or out of memory. */
int agg_stats_merge_packed(struct agg_stats *s, const uint64_t *w, size_t nwords);

/* ---------------------------------------------------------------- reading */
struct agg_timeline;
struct agg_read_opts {
    uint64_t stall_events_factor; /* unused: reserved */
    struct agg_timeline *timeline; /* may be NULL */
    /* progress: called between batches with bytes of the current process done */
    void (*progress)(void *ud, uint64_t bytes_done_in_proc);
    void *progress_ud;
};
/* Reads every event of one process (its locations time-merged, clock offsets applied) into s.
 * 0, or -1 with e naming the file at fault. */
int agg_read_process(const struct agg_defs *d, const char *archive, uint32_t proc, struct agg_stats *s,
                     const struct agg_read_opts *o, struct agg_err *e);

/* ---------------------------------------------------------------- timeline (Chrome trace JSON) */
struct agg_timeline_opts {
    uint64_t from, to;          /* ns since the job's start; to = UINT64_MAX: to the end */
    const char *ranks;          /* "0,2-5" or NULL: all */
};
struct agg_timeline *agg_timeline_open(const char *part_path, const struct agg_defs *d, const struct agg_timeline_opts *o);
bool agg_timeline_wants(struct agg_timeline *t, uint32_t rank);
void agg_timeline_begin_proc(struct agg_timeline *t, uint32_t proc);
void agg_timeline_region(struct agg_timeline *t, uint32_t loc, uint32_t region, uint64_t start, uint64_t end,
                         uint64_t bytes, uint64_t callsite, const char *cat);
void agg_timeline_end_proc(struct agg_timeline *t, uint64_t *offset, uint64_t *length);
/* the processes written so far: their part-file offsets and lengths */
uint32_t agg_timeline_ranges(const struct agg_timeline *t, const uint32_t **procs, const uint64_t **off,
                             const uint64_t **len);
int agg_timeline_close(struct agg_timeline *t);
/* rank 0: the final file from the parts: header, each process's byte range in rank order */
int agg_timeline_assemble(const char *out, const struct agg_defs *d, const char *const *parts,
                          const uint64_t *part_of, const uint64_t *off, const uint64_t *len, uint32_t nprocs,
                          const struct agg_timeline_opts *o, struct agg_err *e);

/* ---------------------------------------------------------------- report */
struct agg_report_opts {
    const char *archive;
    uint32_t top, width, topk;
    const char *sort;  /* total, calls, mean, max, name */
};
struct agg_report;
/* Builds the report (every floating-point number is computed here, once) from merged stats. */
struct agg_report *agg_report_build(const struct agg_defs *d, const struct agg_stats *s, const struct agg_report_opts *o);
void agg_report_free(struct agg_report *r);
int agg_report_text(const struct agg_report *r, FILE *f);
int agg_report_csv(const struct agg_report *r, const char *dir, struct agg_err *e);
int agg_report_json(const struct agg_report *r, FILE *f);
int agg_report_html(const struct agg_report *r, FILE *f);

/* ---------------------------------------------------------------- diff */
struct agg_diff_opts {
    double threshold;   /* fraction, e.g. 0.10 */
    double min_share;   /* kernels below this share of kernel time are not compared */
};
/* 0 no regression past the threshold, 1 regression, 2 bad input (message printed) */
int agg_diff(const char *a, const char *b, const struct agg_diff_opts *o, FILE *out);

/* ---------------------------------------------------------------- small helpers */
/* A 64-bit mix (murmur3's finalizer) for the open-addressing tables of ids. */
static inline uint64_t agg_hash64(uint64_t x) {
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    x ^= x >> 33;
    return x;
}
void agg_fmt_ns(char *out, size_t n, double ns);      /* "1.23 ms" */
void agg_fmt_bytes(char *out, size_t n, double b);    /* "4.00 MiB" */
void agg_fmt_rate(char *out, size_t n, double bps);   /* "12.3 GB/s" */
void agg_json_str(FILE *f, const char *s);            /* quoted, escaped */
uint32_t agg_size_class(uint64_t bytes);              /* 0 for 0, else floor(log2)+1 */

#endif
