/* SPDX-License-Identifier: MIT */
/* The reader's state while it reads one process (zc_agg_read.c): per location its open regions
 * and counters, per device its busy counters (zc_agg_busy.c), the host's MPI and measurement-off
 * state, the callsite links between host Appends and device records (zc_agg_events.c) and the
 * PAPI metrics waiting for their region (zc_agg_metrics.c). Internal to the reader. */
#ifndef ZC_AGG_READ_H
#define ZC_AGG_READ_H

#include "zc_agg.h"

#include <otf2/otf2.h>

/* ---------------------------------------------------------------- u64 map with deletion (zc_agg_map.c) */
/* key -> (v0, v1), open addressing; what the callsite links keep while their other end is
 * unread. oom is set (and the put dropped) when it cannot grow. */
struct u64map {
    uint64_t *k, *v0, *v1;
    uint8_t *used;
    size_t cap, n;
    bool oom;
};
size_t agg_map_find(const struct u64map *m, uint64_t k); /* slot, or SIZE_MAX */
void agg_map_put(struct u64map *m, uint64_t k, uint64_t v0, uint64_t v1);
void agg_map_del(struct u64map *m, size_t slot);
void agg_map_free(struct u64map *m);

/* ---------------------------------------------------------------- state */
struct frame { /* an open region */
    uint32_t region, comm;
    uint64_t t, cs, bytes;
    uint32_t mclass; /* the metric class of the Metric right before its Enter (A19), AGG_NONE: none */
};

/* A19 on one location: the Metric waiting for its Enter/Leave, the Enter values of the open
 * regions (stride: the largest class), each counter's first and last value (monotonic check and
 * the counted span), and the quality counts. Allocated with the location's first Metric. */
struct lmet {
    bool pending;
    uint32_t pclass;
    uint64_t pt;
    uint64_t *pv;           /* pending values (mclass_max) */
    uint64_t *stack;        /* Enter values, frame k at k * mclass_max */
    uint32_t stack_cap;     /* frames */
    uint64_t *first, *last; /* per member */
    uint8_t *seen;
    uint64_t unpaired, decreasing, one_sided;
};

struct lst { /* a location */
    uint32_t li; /* location index */
    uint8_t stream;
    uint32_t dev; /* index into devs */
    struct frame *fr;
    uint32_t depth, cap;
    uint64_t nev, limit, nmetric, badleave, offcount, offns, first, last, off_start;
    uint64_t noffsets; /* clock offsets in its local definitions */
    bool off;
    bool in_mpi;      /* threads: inside an MPI call (an MPI region on its stack) */
    uint32_t in_sync; /* threads: Level Zero host synchronisations open on its stack */
    size_t *pend;     /* records of the MPI call in progress waiting for its Leave (zc_agg_comm.c) */
    uint32_t npend, cappend;
    struct lmet *met; /* NULL until its first Metric */
};

struct dst { /* a device: operations running now by class, and what they add up to */
    uint32_t node;
    int32_t act_c, act_x, off;
    uint64_t last_t, busy, busy_c, busy_x, overlap, offns, first, last, idle_start;
    bool any, idle, gap_off;
    uint64_t g_t, g_ns[AGG_IDLE_NCAUSES]; /* the gap in progress: accounted up to g_t, by host cause */
    size_t g_rec;                          /* the first record since it began (its MPI pieces) */
};

struct gap_top { /* one of the process's longest idle gaps */
    uint64_t dur, node, start, end, ns[AGG_IDLE_NCAUSES];
};
#define AGG_GAP_TOP 10

struct pctx { /* the process */
    const struct agg_defs *d;
    struct agg_stats *s;
    const struct agg_proc *p;
    uint32_t rank;
    struct lst *ls;
    uint32_t nls;
    uint64_t *lkey; /* location id -> ls index (small open table) */
    uint32_t *lval;
    size_t lcap;
    uint32_t last_hit;
    struct dst *devs;
    uint32_t ndevs;
    struct u64map pend;  /* host callsite -> (Append time, -) */
    struct u64map early; /* device callsite seen before its Append -> (start, region << 32 | location) */
    struct u64map wmark; /* thread index -> highest callsite counter seen on the host */
    uint64_t first, last, kernel_ns, mpi_ns, events;
    /* the rank's host measurement-off time: a thread location off while no thread is inside an
     * MPI call (what the MPI share's denominator leaves out; calls recorded while off, A18,
     * stay in it) */
    int32_t h_off, h_mpi;
    uint64_t h_last, host_offns;
    uint64_t cs_repeat, lat_neg, lat_neg_max;
    /* MPI records (zc_agg_comm.c): posted non-blocking receives, collectives per communicator */
    struct u64map irecv_post, coll_seq;
    /* GPU idle (zc_agg_idle.c): threads in a Level Zero synchronisation; the MPI call that idle
     * time is attributed to (the first thread in MPI), since when; the longest gaps */
    int32_t h_sync;
    uint32_t own;        /* ls index, AGG_NONE: no thread in MPI */
    uint64_t own_since, own_enter; /* own_enter: its call's Enter (the key of its wait state) */
    struct gap_top gtop[AGG_GAP_TOP];
    uint32_t ngtop;
    uint64_t bin_lo, bin_span;
    uint64_t *bins;
    struct agg_timeline *tl;
    bool corrupt;
    uint32_t corrupt_li;
    char why[160];
};

/* ---------------------------------------------------------------- busy time (zc_agg_busy.c) */
/* The device's busy counters up to t (its state has not changed since last_t). */
void agg_dev_advance(struct pctx *c, struct dst *v, uint64_t t);
/* An operation of one class (copy or compute) starts (+1) or ends (-1) on the device at t. */
void agg_dev_change(struct pctx *c, struct dst *v, uint64_t t, bool copy, int delta);
/* The host's measurement-off time up to t. */
void agg_host_advance(struct pctx *c, uint64_t t);
/* A thread's MPI state after its stack changed (one MPI region anywhere on it: in MPI). */
void agg_host_mpi_update(struct pctx *c, struct lst *l, uint64_t t);

/* ---------------------------------------------------------------- GPU idle (zc_agg_idle.c) */
/* The idle devices' gaps up to t by what the host does now (before the host's state changes). */
void agg_idle_host(struct pctx *c, uint64_t t);
/* A device's gap starts (busy -> idle) or ends (idle -> busy) at t. */
void agg_idle_gap_start(struct pctx *c, struct dst *v, uint64_t t);
void agg_idle_gap_end(struct pctx *c, struct dst *v, uint64_t t);
/* Thread l entered (in) or left its MPI call at t (after agg_idle_host). */
void agg_idle_mpi(struct pctx *c, struct lst *l, uint64_t t, bool in);
/* The end of the process: its longest gaps into the records. */
void agg_idle_flush(struct pctx *c);

/* ---------------------------------------------------------------- MPI records (zc_agg_comm.c) */
/* The callbacks of the point-to-point and collective records (messages, sizes, records). */
void agg_comm_callbacks(OTF2_GlobalEvtReaderCallbacks *cb);
/* An MPI region of l closed at t: its records get their Leave. */
void agg_comm_leave(struct pctx *c, struct lst *l, uint64_t t);
void agg_comm_free(struct pctx *c);

/* ---------------------------------------------------------------- events (zc_agg_events.c) */
/* Every record but Enter, Leave and Metric: its location, counted; NULL = stop reading. */
struct lst *agg_ev_record(struct pctx *c, OTF2_LocationRef loc, uint64_t t);
/* The callbacks of OTF2's global event reader, with the pctx as their user data. */
OTF2_GlobalEvtReaderCallbacks *agg_event_callbacks(void);
/* Measurement of l was off until t: its window ends (also at the end of the location). */
void agg_end_off(struct pctx *c, struct lst *l, uint64_t t);

/* ---------------------------------------------------------------- metrics (zc_agg_metrics.c) */
/* A Metric record on l at t, kept until the Enter or Leave it belongs to; 0, or -1 out of memory. */
int agg_metric_sample(struct pctx *c, struct lst *l, uint64_t t, OTF2_MetricRef mref, uint8_t n, const OTF2_Type *types,
                      const OTF2_MetricValue *vals);
/* The pending Metric, if it is the one of this Enter/Leave at t: its class (values in met->pv).
 * Inline, with agg_metric_orphan: every Enter and Leave asks. */
static inline uint32_t agg_metric_take(struct lst *l, uint64_t t) {
    struct lmet *m = l->met;
    if (!m || !m->pending) return AGG_NONE;
    m->pending = false;
    if (m->pt != t) {
        m->unpaired++;
        return AGG_NONE;
    }
    return m->pclass;
}
/* A Metric waiting before a record that is not its Enter/Leave (A19 broken). */
static inline void agg_metric_orphan(struct lst *l) {
    l->met->pending = false;
    l->met->unpaired++;
}
/* The Enter's counter values of a region being entered with class mclass; 0, or -1 out of memory. */
int agg_metric_push(struct pctx *c, struct lst *l, uint32_t mclass);
/* A region with its counters at both ends: Leave - Enter per summed counter. */
void agg_metric_region(struct pctx *c, struct lst *l, const struct frame *f, uint32_t mclass, uint64_t dur);
/* The end of a location: its quality counts and what each counter counted on it. */
void agg_metric_flush(struct pctx *c, struct lst *l);
void agg_metric_free(struct lst *l);

#endif
