/* SPDX-License-Identifier: MIT */
/* zecoll-synth: writes a synthetic many-rank archive that follows docs/archive.md, and (with
 * --expected) its own account of what it wrote: kernel, copy and utilisation statistics computed
 * directly from the generated operations (unions by sorting intervals, not by replaying events),
 * for the aggregator's tests and its scale benchmark. It also writes what the collector does not
 * write yet (A18 measurement windows, A19 metrics) and, with --break RULE, one deliberate violation
 * of the contract, so that tests/aggregate/check_archive.py is tested on both sides.
 *
 *   zecoll-synth --out DIR [--ranks R] [--queues Q] [--ops N] [--seed S] [--skew] [--off]
 *                [--metrics] [--expected FILE] [--break A2|A8|A12|A14|A15|A16] [--small-chunks]
 *
 * Rank r: one host thread, Q streams on one device (two ranks per device, eight per host). Queue
 * roles cycle: kernels (k_gemm, k_axpy), copies (H2D, D2H, four sizes), kernels (k_reduce, every
 * tenth one a re-execution of a recorded list), D2D copies, fills and barriers. The last rank's
 * k_gemm is 25% slower (a straggler). --off: every third rank has one measurement-off window on all
 * its locations, in a gap of every queue. --skew: per-rank clock skews undone by ClockOffsets.
 * --metrics: PAPI-like counters at the Enter and Leave of every host region (A19), two classes so
 * that ranks differ as hosts can: even ranks count PAPI_TOT_INS (t / 7), odd ranks PAPI_TOT_INS and
 * perf::TASK-CLOCK (ns, t / 2, half of any region's duration); the expected statistics carry the
 * per-region and per-rank sums of Leave - Enter and each rank's first-to-last span. The expected
 * statistics also carry each rank's host-thread off time (mpi_off_ns), the MPI share's
 * denominator being its span less that time. The definitions are written by zc_synth_defs.c. */
#include "zc_synth.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char *const kname[NKERNELS] = {"k_gemm", "k_axpy", "k_reduce"};
static const uint64_t kbase[NKERNELS] = {40000, 8000, 15000};
enum op_kind { O_KERNEL, O_COPY, O_FILL, O_BARRIER };
static const char *const mname[NMEM] = {"H2D", "D2H", "D2D"};
static const uint64_t sizes[4] = {256, 4096, 65536, 1048576};

const char *const synth_region_names[NREGIONS] = {
    "zeInit", "MPI_Init", "MPI_Allreduce", "MPI_Finalize", "zeCommandListAppendLaunchKernel",
    "zeCommandListAppendMemoryCopy", "zeCommandListAppendMemoryFill", "zeCommandListAppendBarrier",
    "k_gemm", "k_axpy", "k_reduce",
    "zeCommandListAppendMemoryCopy(H2D)", "zeCommandListAppendMemoryCopy(D2H)", "zeCommandListAppendMemoryCopy(D2D)",
    "zeCommandListAppendMemoryFill(D)", "zeCommandListAppendBarrier",
    "MPI_Send", "MPI_Recv", "MPI_Ssend", "MPI_Bcast", "MPI_Reduce", "MPI_Barrier"};

struct op {
    uint64_t start, end, t_app, cs, bytes;
    uint32_t region, q, i;
    uint8_t kind, mem, repeat;
};

static uint64_t mix(uint64_t x) {
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

static uint64_t rnd(const struct opts *o, uint64_t a, uint64_t b, uint64_t c) {
    return mix(o->seed ^ mix(a * 0x100000001b3ull ^ mix(b * 31 + c)));
}

/* ---------------------------------------------------------------- expected statistics */
struct kstat {
    uint64_t calls, total, min, max;
    uint64_t *rank_total;
};
struct cstat {
    uint64_t calls, bytes, busy;
};

static struct kstat ks[NKERNELS];
static struct cstat cs_[NMEM];
static FILE *ex;
static uint64_t ex_off_windows, ex_off_ns, ex_metrics, ex_reexec, ex_events, ex_lat_n, ex_lat_min = UINT64_MAX, ex_lat_max;
static bool ex_first_util = true, ex_first_mpi = true;

/* a growing string: per-rank JSON members */
struct sbuf {
    char *p;
    size_t len, cap;
};
static struct sbuf mpi_json, moff_json /* rank -> its host thread's off time (MPI share's denominator) */, span_json;

static void append(struct sbuf *b, const char *s, size_t n) {
    if (b->len + n + 1 > b->cap) {
        b->cap = b->cap ? 2 * b->cap : 4096;
        while (b->len + n + 1 > b->cap) b->cap *= 2;
        b->p = realloc(b->p, b->cap);
        if (!b->p) exit(1);
    }
    memcpy(b->p + b->len, s, n + 1);
    b->len += n;
}

/* a rank's MPI time, its first and last event on rank 0's clock, and how long its thread was off */
static void mpi_add(uint32_t r, uint64_t ns, uint64_t first, uint64_t last, uint64_t off) {
    char b[128];
    int m = snprintf(b, sizeof(b), "%s\"%u\":%llu", ex_first_mpi ? "" : ",", r, (unsigned long long)off);
    append(&moff_json, b, (size_t)m);
    int n = snprintf(b, sizeof(b), "%s\"%u\":%llu", ex_first_mpi ? "" : ",", r, (unsigned long long)ns);
    append(&mpi_json, b, (size_t)n);
    n = snprintf(b, sizeof(b), "%s\"%u\":[%llu,%llu]", ex_first_mpi ? "" : ",", r, (unsigned long long)first,
                 (unsigned long long)last);
    append(&span_json, b, (size_t)n);
    ex_first_mpi = false;
}

struct iv {
    uint64_t s, e;
};

static int cmp_iv(const void *a, const void *b) {
    const struct iv *x = a, *y = b;
    if (x->s != y->s) return x->s < y->s ? -1 : 1;
    return (x->e > y->e) - (x->e < y->e);
}

/* measure of the union, by sorting and merging */
static uint64_t union_len(struct iv *v, size_t n) {
    if (!n) return 0;
    qsort(v, n, sizeof(*v), cmp_iv);
    uint64_t tot = 0, s = v[0].s, e = v[0].e;
    for (size_t i = 1; i < n; i++) {
        if (v[i].s <= e) {
            if (v[i].e > e) e = v[i].e;
        } else {
            tot += e - s;
            s = v[i].s;
            e = v[i].e;
        }
    }
    return tot + e - s;
}

/* a rank's device intervals: all busy, compute, copy (fills are copies) */
struct ivs {
    struct iv *all, *c, *x;
    size_t nall, nc, nx;
};

/* ---------------------------------------------------------------- writing */
static uint64_t last_local;


/* ---------------------------------------------------------------- PAPI-like counters (A19) */
static uint64_t pm_value(int m, uint64_t t) { return m == PM_INS ? t / 7 : t / 2; }
static int pm_count(uint32_t r) { return r % 2 ? 2 : 1; } /* members of rank r's class (class r % 2) */
struct pmreg {
    uint64_t calls, total, min, max, region_ns;
};
static struct pmreg *pm_reg;                 /* [region * NPM + member] */
static uint64_t (*pm_rank)[NPM][5];          /* [rank][member]: counted, in MPI, MPI regions, in L0, L0 regions */
static uint64_t pm_first[NPM], pm_last[NPM]; /* the rank being written */
static bool pm_seen;

/* a host region's counters at both ends: what the aggregator must find (mpi: an MPI region) */
static void pm_region(const struct ctx *c, uint32_t region, uint64_t a, uint64_t b, bool mpi) {
    if (!c->o->metrics || !pm_reg) return;
    for (int m = 0; m < pm_count(c->r); m++) {
        uint64_t d = pm_value(m, b) - pm_value(m, a);
        struct pmreg *x = &pm_reg[region * NPM + (uint32_t)m];
        if (!x->calls || d < x->min) x->min = d;
        if (d > x->max) x->max = d;
        x->calls++;
        x->total += d;
        x->region_ns += b - a;
        pm_rank[c->r][m][mpi ? 1 : 3] += d;
        pm_rank[c->r][m][mpi ? 2 : 4]++;
    }
}

/* every record: the job's span, time order on the location, the local (skewed) time written */
void synth_tick(struct ctx *c, uint64_t global_t) {
    if (global_t < c->sy.gmin) c->sy.gmin = global_t;
    if (global_t > c->sy.gmax) c->sy.gmax = global_t;
    if (global_t < c->last) {
        fprintf(stderr, "zecoll-synth: internal error: time goes back (%llu < %llu)\n", (unsigned long long)global_t,
                (unsigned long long)c->last);
        exit(1);
    }
    c->last = global_t;
    last_local = (uint64_t)((int64_t)global_t + c->skew);
    c->n++;
}

#define LT(t) SYNTH_LT(c, t) /* local (skewed) time written */

static void ev_enter(struct ctx *c, uint64_t t, uint32_t region) {
    synth_tick(c, t);
    OTF2_EvtWriter_Enter(c->w, NULL, LT(t), region);
}
static void ev_leave(struct ctx *c, uint64_t t, uint32_t region) {
    synth_tick(c, t);
    OTF2_EvtWriter_Leave(c->w, NULL, LT(t), region);
}
static void ev_param(struct ctx *c, uint64_t t, uint64_t v) {
    synth_tick(c, t);
    OTF2_EvtWriter_ParameterUnsignedInt(c->w, NULL, LT(t), 0, v);
}
static void ev_metric(struct ctx *c, uint64_t t) {
    if (!c->o->metrics) return;
    synth_tick(c, t);
    OTF2_Type ty[NPM] = {OTF2_TYPE_UINT64, OTF2_TYPE_INT64};
    OTF2_MetricValue mv[NPM];
    int n = pm_count(c->r);
    for (int m = 0; m < n; m++) {
        mv[m].unsigned_int = pm_value(m, t);
        if (!pm_seen) pm_first[m] = mv[m].unsigned_int;
        pm_last[m] = mv[m].unsigned_int;
    }
    pm_seen = true;
    OTF2_EvtWriter_Metric(c->w, NULL, LT(t), c->r % 2, (uint8_t)n, ty, mv);
    ex_metrics++;
}
static void ev_onoff(struct ctx *c, uint64_t t, bool on) {
    synth_tick(c, t);
    OTF2_EvtWriter_MeasurementOnOff(c->w, NULL, LT(t), on ? OTF2_MEASUREMENT_ON : OTF2_MEASUREMENT_OFF);
}

static void host_region(struct ctx *c, uint64_t a, uint64_t b, uint32_t region, uint64_t cs, bool mpi) {
    ev_metric(c, a);
    ev_enter(c, a, region);
    if (cs) ev_param(c, a, cs);
    ev_metric(c, b);
    ev_leave(c, b, region);
    pm_region(c, region, a, b, mpi);
}

/* Chunks stay in memory until a location's writer closes (no memory callbacks), so no flush
 * happens while writing and no BufferFlush record is added; the callbacks are still required. */
static OTF2_FlushType pre_flush(void *ud, OTF2_FileType ft, OTF2_LocationRef loc, void *cd, bool final) { return OTF2_FLUSH; }
static OTF2_TimeStamp post_flush(void *ud, OTF2_FileType ft, OTF2_LocationRef loc) { return last_local; }
static const OTF2_FlushCallbacks flush_cbs = {pre_flush, post_flush};

/* ---------------------------------------------------------------- the operations of a rank */
/* The measurement-off window of a rank (--off: every third one), between its two halves. */
struct window {
    bool on;
    uint64_t a, b;
};

/* Queue roles 0 and 2: kernels. Role 0 alternates k_gemm (the last rank's 25% slower: the
 * straggler) and k_axpy (--slowdown slower); role 2 runs k_reduce, every tenth one a
 * re-execution of a recorded list. */
static uint64_t plan_kernel(const struct opts *o, struct op *x, uint32_t r, uint32_t role, uint32_t i, uint64_t h) {
    int k = role == 2 ? K_REDUCE : (i % 2 ? K_AXPY : K_GEMM);
    uint64_t base = kbase[k];
    if (k == K_GEMM && r == o->ranks - 1) base = base * 5 / 4;
    if (k == K_AXPY) base = base * (100 + o->slowdown) / 100;
    x->kind = O_KERNEL;
    x->region = R_K0 + (uint32_t)k;
    x->repeat = role == 2 && i % 10 == 9;
    return base * (95 + h % 11) / 100;
}

/* Queue role 1: H2D and D2H copies of four sizes, bandwidth-bound. */
static uint64_t plan_copy(struct op *x, uint32_t i, uint64_t h) {
    x->kind = O_COPY;
    x->mem = i % 2 ? M_D2H : M_H2D;
    x->bytes = sizes[(h >> 8) % 4];
    x->region = R_COPY0 + x->mem;
    return 2000 + x->bytes / 10 + h % 500;
}

/* Queue role 3: D2D copies, fills (no bytes in the archive, A15) and every 25th a barrier. */
static uint64_t plan_mixed(struct op *x, uint32_t i, uint64_t h) {
    if (i % 25 == 24) {
        x->kind = O_BARRIER;
        x->region = R_BARRIER;
        return 300 + h % 100;
    }
    if (i % 2) {
        x->kind = O_FILL;
        x->region = R_FILL;
        x->bytes = 0;
        return 1500 + h % 700;
    }
    x->kind = O_COPY;
    x->mem = M_D2D;
    x->bytes = sizes[(h >> 8) % 4];
    x->region = R_COPY0 + M_D2D;
    return 1000 + x->bytes / 40 + h % 300;
}

/* Operation i of queue q, after the queue's last (qt); its Append 1-6 us before its start. */
static void plan_op(const struct opts *o, struct op *x, uint32_t r, uint32_t q, uint32_t i, uint64_t *qt) {
    uint64_t h = rnd(o, r, q, i);
    memset(x, 0, sizeof(*x));
    x->q = q;
    x->i = i;
    uint32_t role = q % 4;
    uint64_t dur = role == 0 || role == 2 ? plan_kernel(o, x, r, role, i, h) : role == 1 ? plan_copy(x, i, h) : plan_mixed(x, i, h);
    x->start = *qt + 500 + (h >> 16) % 2000;
    x->end = x->start + dur;
    *qt = x->end;
    x->t_app = x->start - (1000 + (h >> 24) % 5000);
}

/* Operations, queue by queue, in two halves; with --off a measurement-off window lies between
 * them, after every queue's first half (margin before and after it). */
static void plan_rank(const struct opts *o, uint32_t r, uint64_t T, struct op *ops, struct window *w) {
    const uint64_t margin = 20000, W = 200000;
    uint32_t Q = o->queues, N = o->ops;
    uint64_t qt[64], endA = 0;
    for (uint32_t q = 0; q < Q; q++) qt[q] = T + 100000 + q * 300;
    *w = (struct window){.on = o->off && r % 3 == 1};
    for (uint32_t half = 0; half < 2; half++) {
        if (half == 1) {
            if (w->on) {
                w->a = endA + margin;
                w->b = w->a + W;
            }
            for (uint32_t q = 0; q < Q; q++) qt[q] = (w->on ? w->b + margin : endA + 1000) + q * 300;
        }
        for (uint32_t q = 0; q < Q; q++)
            for (uint32_t i = half ? N / 2 : 0; i < (half ? N : N / 2); i++) {
                struct op *x = &ops[(size_t)q * N + i];
                plan_op(o, x, r, q, i, &qt[q]);
                if (x->end > endA) endA = x->end;
            }
    }
}

static int cmp_app(const void *a, const void *b) {
    const struct op *x = *(const struct op *const *)a, *y = *(const struct op *const *)b;
    if (x->t_app != y->t_app) return x->t_app < y->t_app ? -1 : 1;
    if (x->q != y->q) return x->q < y->q ? -1 : 1;
    return (x->i > y->i) - (x->i < y->i);
}

/* Host Appends in time order, never overlapping (150 ns each); ids increase with time. A
 * re-execution has no Append of its own: it carries the id of the operation before it. */
static size_t plan_appends(const struct opts *o, struct op *ops, struct op **app, uint64_t T) {
    uint32_t Q = o->queues, N = o->ops;
    size_t na = 0;
    for (size_t k = 0; k < (size_t)Q * N; k++)
        if (!ops[k].repeat) app[na++] = &ops[k];
    qsort(app, na, sizeof(*app), cmp_app);
    uint64_t prev = T + 60000;
    for (size_t k = 0; k < na; k++) {
        if (app[k]->t_app < prev) app[k]->t_app = prev;
        prev = app[k]->t_app + 150;
        app[k]->cs = (UINT64_C(1) << 40) | (k + 1);
    }
    for (uint32_t q = 0; q < Q; q++)
        for (uint32_t i = 1; i < N; i++) {
            struct op *x = &ops[(size_t)q * N + i];
            if (x->repeat) x->cs = ops[(size_t)q * N + i - 1].cs;
        }
    return na;
}

/* ---------------------------------------------------------------- the host thread */
static void begin_location(struct ctx *c, uint64_t id) {
    c->w = OTF2_Archive_GetEvtWriter(c->sy.ar, id);
    c->n = 0;
    c->last = 0;
}

static void end_location(struct ctx *c, uint32_t r, uint32_t k) {
    c->sy.nevents[(size_t)r * (c->o->queues + 1) + k] = c->n;
    ex_events += c->n;
    OTF2_Archive_CloseEvtWriter(c->sy.ar, c->w);
}

/* four MPI_Allreduce from t, their time */
static uint64_t write_allreduces(struct ctx *c, uint64_t *t) {
    uint64_t mpi_ns = 0;
    for (int m = 0; m < 4; m++) {
        uint64_t d = 5000 + rnd(c->o, c->r, 1000, (uint64_t)m) % 1000;
        ev_metric(c, *t);
        ev_enter(c, *t, R_MPI_ALLREDUCE);
        synth_tick(c, *t);
        OTF2_EvtWriter_MpiCollectiveBegin(c->w, NULL, LT(*t));
        synth_tick(c, *t + d);
        OTF2_EvtWriter_MpiCollectiveEnd(c->w, NULL, LT(*t + d), OTF2_COLLECTIVE_OP_ALLREDUCE, c->o->ranks,
                                        OTF2_COLLECTIVE_ROOT_NONE, 8, 8);
        ev_metric(c, *t + d);
        ev_leave(c, *t + d, R_MPI_ALLREDUCE);
        pm_region(c, R_MPI_ALLREDUCE, *t, *t + d, true);
        if (c->o->waits) synth_waits_allreduce(c->o, c->r, (uint32_t)m, *t, d);
        mpi_ns += d;
        *t += d + 2000;
    }
    return mpi_ns;
}

/* zeInit, MPI_Init, the Appends (the window before the first one after it starts), the
 * allreduces after the last operation, MPI_Finalize. */
static void write_host(struct ctx *c, uint64_t T, struct op **app, size_t na, const struct window *w, uint64_t last_op) {
    uint32_t r = c->r;
    uint64_t mpi_ns = 0;
    begin_location(c, r);
    pm_seen = false;
    host_region(c, T - 20000, T - 10000, R_ZEINIT, 0, false);
    uint64_t init_end = T + 50000 + (r % 8) * 1000ull; /* before the first Append (T + 60 us) */
    host_region(c, T, init_end, R_MPI_INIT, 0, true);
    mpi_ns += init_end - T;
    for (size_t k = 0; k < na; k++) {
        struct op *x = app[k];
        if (w->on && x->t_app >= w->a && c->last < w->a) {
            ev_onoff(c, w->a, false);
            ev_onoff(c, w->b, true);
        }
        uint32_t reg = x->kind == O_KERNEL ? R_APP_LAUNCH : x->kind == O_COPY ? R_APP_COPY
                       : x->kind == O_FILL ? R_APP_FILL : R_APP_BARRIER;
        host_region(c, x->t_app, x->t_app + 150, reg, x->cs, false);
    }
    uint64_t t = (last_op > c->last ? last_op : c->last) + 10000;
    mpi_ns += write_allreduces(c, &t);
    if (c->o->waits) {
        mpi_ns += synth_write_waits(c);
        t = c->last + 10000;
    }
    host_region(c, t, t + 30000, R_MPI_FINALIZE, 0, true);
    mpi_ns += 30000;
    if (c->o->metrics && pm_rank && pm_seen)
        for (int m = 0; m < pm_count(r); m++) pm_rank[r][m][0] = pm_last[m] - pm_first[m];
    uint64_t host_last = c->last;
    end_location(c, r, 0);
    if (ex) mpi_add(r, mpi_ns, T - 20000, host_last, w->on ? w->b - w->a : 0); /* no MPI call in the window */
    if (w->on) {
        ex_off_windows += 1 + c->o->queues;
        ex_off_ns += (w->b - w->a) * (1 + c->o->queues);
    }
}

/* ---------------------------------------------------------------- the streams */
/* what the aggregator must find of one device operation */
static void expect_op(const struct ctx *c, const struct op *x, struct ivs *iv) {
    uint64_t dur = x->end - x->start;
    if (x->kind == O_KERNEL) {
        struct kstat *k = &ks[x->region - R_K0];
        k->calls++;
        k->total += dur;
        k->min = dur < k->min ? dur : k->min;
        k->max = dur > k->max ? dur : k->max;
        k->rank_total[c->r] += dur;
        iv->c[iv->nc++] = (struct iv){x->start, x->end};
    } else if (x->kind == O_COPY) {
        cs_[x->mem].calls++;
        cs_[x->mem].bytes += x->bytes;
        cs_[x->mem].busy += dur;
        iv->x[iv->nx++] = (struct iv){x->start, x->end};
    } else if (x->kind == O_FILL) {
        iv->x[iv->nx++] = (struct iv){x->start, x->end};
    }
    if (x->kind != O_BARRIER) iv->all[iv->nall++] = (struct iv){x->start, x->end};
    if (x->repeat) ex_reexec++;
    else if (!(c->o->brk.a16 && c->r == 0 && x->q == 0 && x->i == 0)) {
        uint64_t lat = x->start > x->t_app ? x->start - x->t_app : 0;
        ex_lat_n++;
        ex_lat_min = lat < ex_lat_min ? lat : ex_lat_min;
        ex_lat_max = lat > ex_lat_max ? lat : ex_lat_max;
    }
}

/* One device record: Enter, its callsite, a copy's RMA transfer, Leave; the breaks of A14
 * (never left), A15 (a record nested in another) and A16 (a callsite no Append has). */
static void write_op(struct ctx *c, const struct op *x, uint64_t *match) {
    const struct breaks *b = &c->o->brk;
    bool first = c->r == 0 && x->q == 0;
    ev_enter(c, x->start, x->region);
    if (b->a15 && first && x->i == 1) {
        ev_enter(c, x->start, R_K0 + K_AXPY);
        ev_leave(c, x->start, R_K0 + K_AXPY);
    }
    ev_param(c, x->start, b->a16 && first && x->i == 0 ? (UINT64_C(1) << 40) | 999999999ull : x->cs);
    if (x->kind == O_COPY) {
        synth_tick(c, x->start);
        if (x->mem == M_D2H) OTF2_EvtWriter_RmaPut(c->w, NULL, LT(x->start), c->r, 0, x->bytes, ++*match);
        else OTF2_EvtWriter_RmaGet(c->w, NULL, LT(x->start), c->r, x->mem == M_D2D ? 1 + x->q : 0, x->bytes, ++*match);
        synth_tick(c, x->end);
        OTF2_EvtWriter_RmaOpCompleteBlocking(c->w, NULL, LT(x->end), c->r, *match);
    }
    if (!(b->a14 && first && x->i == c->o->ops - 1)) ev_leave(c, x->end, x->region);
}

static void write_streams(struct ctx *c, const struct op *ops, const struct window *w, struct ivs *iv) {
    uint32_t N = c->o->ops;
    for (uint32_t q = 0; q < c->o->queues; q++) {
        begin_location(c, synth_loc_id(c->r, 1 + q));
        uint64_t match = 0;
        for (uint32_t i = 0; i < N; i++) {
            const struct op *x = &ops[(size_t)q * N + i];
            if (w->on && i == N / 2) {
                ev_onoff(c, w->a, false);
                ev_onoff(c, w->b, true);
            }
            write_op(c, x, &match);
            expect_op(c, x, iv);
        }
        end_location(c, c->r, 1 + q);
    }
}

/* the rank's device utilisation, from the unions of its intervals */
static void expect_util(uint32_t r, struct ivs *iv, const struct window *w) {
    uint64_t busy = union_len(iv->all, iv->nall), comp = union_len(iv->c, iv->nc), copy = union_len(iv->x, iv->nx);
    fprintf(ex, "%s\n{\"rank\":%u,\"device\":\"synth GPU %u [%u]\",\"busy_ns\":%llu,\"compute_ns\":%llu,"
                "\"copy_ns\":%llu,\"overlap_ns\":%llu,\"off_ns\":%llu}",
            ex_first_util ? "" : ",", r, synth_host_of(r) * 4 + synth_dev_of(r), synth_dev_of(r), (unsigned long long)busy,
            (unsigned long long)comp, (unsigned long long)copy, (unsigned long long)(comp + copy - busy),
            (unsigned long long)(w->on ? w->b - w->a : 0));
    ex_first_util = false;
}

/* ---------------------------------------------------------------- a rank */
struct plan {
    struct op *ops, **app;
    struct ivs iv;
};

static void write_rank(struct ctx *c, struct plan *p, uint32_t r) {
    const struct opts *o = c->o;
    uint64_t T = 1000000000ull + (uint64_t)r * 1000;
    struct window w;
    plan_rank(o, r, T, p->ops, &w);
    size_t na = plan_appends(o, p->ops, p->app, T);
    uint64_t last_op = 0;
    for (size_t k = 0; k < (size_t)o->queues * o->ops; k++) last_op = p->ops[k].end > last_op ? p->ops[k].end : last_op;
    c->skew = synth_skew_of(o, r);
    c->r = r;
    write_host(c, T, p->app, na, &w, last_op);
    p->iv.nall = p->iv.nc = p->iv.nx = 0;
    write_streams(c, p->ops, &w, &p->iv);
    if (ex) expect_util(r, &p->iv, &w);
    c->skew = 0;
}

/* --waits: after every rank's allreduces (each at most 6 us + 2 us apart, after its last
 * operation and Append) */
static uint64_t waits_start(const struct opts *o, struct plan *p) {
    uint64_t at = 0;
    for (uint32_t r = 0; r < o->ranks; r++) {
        uint64_t T = 1000000000ull + (uint64_t)r * 1000, last = 0;
        struct window w;
        plan_rank(o, r, T, p->ops, &w);
        size_t na = plan_appends(o, p->ops, p->app, T);
        for (size_t k = 0; k < (size_t)o->queues * o->ops; k++) last = p->ops[k].end > last ? p->ops[k].end : last;
        for (size_t k = 0; k < na; k++) last = p->app[k]->t_app + 150 > last ? p->app[k]->t_app + 150 : last;
        if (w.on && w.b > last) last = w.b;
        if (last + 10000 + 4 * 8000 > at) at = last + 10000 + 4 * 8000;
    }
    return at + 20000;
}

/* ---------------------------------------------------------------- the expected statistics */
static void write_expected_papi(uint32_t R) {
    static const char *const pmname[NPM] = {"PAPI_TOT_INS", "perf::TASK-CLOCK"};
    fputs(",\n\"papi\":{\"regions\":[", ex);
    bool first_row = true;
    for (int i = 0; i < NREGIONS; i++)
        for (int m = 0; m < NPM; m++) {
            const struct pmreg *x = &pm_reg[i * NPM + m];
            if (!x->calls) continue;
            fprintf(ex, "%s{\"counter\":\"%s\",\"region\":\"%s\",\"calls\":%llu,\"total\":%llu,\"min\":%llu,"
                        "\"max\":%llu,\"region_ns\":%llu}",
                    first_row ? "" : ",", pmname[m], synth_region_names[i], (unsigned long long)x->calls,
                    (unsigned long long)x->total, (unsigned long long)x->min, (unsigned long long)x->max,
                    (unsigned long long)x->region_ns);
            first_row = false;
        }
    fputs("],\"ranks\":[", ex);
    for (uint32_t r = 0; r < R; r++)
        for (int m = 0; m < pm_count(r); m++)
            fprintf(ex, "%s{\"rank\":%u,\"counter\":\"%s\",\"threads\":1,\"counted\":%llu,\"in_mpi\":%llu,"
                        "\"mpi_regions\":%llu,\"in_level_zero\":%llu,\"level_zero_regions\":%llu}",
                    r || m ? "," : "", r, pmname[m], (unsigned long long)pm_rank[r][m][0], (unsigned long long)pm_rank[r][m][1],
                    (unsigned long long)pm_rank[r][m][2], (unsigned long long)pm_rank[r][m][3],
                    (unsigned long long)pm_rank[r][m][4]);
    fputs("]}", ex);
}

static int write_expected(const struct opts *o) {
    uint32_t R = o->ranks;
    fputs("],\n\"kernels\":{", ex);
    for (int k = 0; k < NKERNELS; k++) {
        uint32_t slow = 0;
        for (uint32_t r = 1; r < R; r++)
            if (ks[k].rank_total[r] > ks[k].rank_total[slow]) slow = r;
        if (k) fputc(',', ex);
        fprintf(ex, "\"%s\":{\"calls\":%llu,\"total_ns\":%llu,\"min_ns\":%llu,\"max_ns\":%llu,\"slowest_rank\":%u}", kname[k],
                (unsigned long long)ks[k].calls, (unsigned long long)ks[k].total, (unsigned long long)ks[k].min,
                (unsigned long long)ks[k].max, slow);
    }
    fputs("},\n\"copies\":{", ex);
    bool first = true;
    for (int m = 0; m < NMEM; m++) {
        if (!cs_[m].calls) continue;
        fprintf(ex, "%s\"%s\":{\"calls\":%llu,\"bytes\":%llu,\"busy_ns\":%llu}", first ? "" : ",", mname[m],
                (unsigned long long)cs_[m].calls, (unsigned long long)cs_[m].bytes, (unsigned long long)cs_[m].busy);
        first = false;
    }
    fprintf(ex, "},\n\"measurement_off\":{\"windows\":%llu,\"ns\":%llu},\"metric_records\":%llu,\"reexecutions\":%llu,"
                "\"appends_without_record\":%d,\"records_without_append\":%d,\"launch_latency\":[%llu,%llu,%llu],"
                "\"events\":%llu,\n\"mpi_ns\":{%s},\n\"mpi_off_ns\":{%s},\n\"span\":{%s}",
            (unsigned long long)ex_off_windows, (unsigned long long)ex_off_ns, (unsigned long long)ex_metrics,
            (unsigned long long)ex_reexec, o->brk.a16 ? 1 : 0, o->brk.a16 ? 1 : 0, (unsigned long long)ex_lat_n,
            (unsigned long long)(ex_lat_n ? ex_lat_min : 0), (unsigned long long)ex_lat_max, (unsigned long long)ex_events,
            mpi_json.p ? mpi_json.p : "", moff_json.p ? moff_json.p : "", span_json.p ? span_json.p : "");
    if (o->metrics) write_expected_papi(R); /* "papi": its regions and ranks, as report.json spells them */
    if (o->waits) synth_waits_expected(ex, o);
    fputs("}\n", ex);
    return fclose(ex) != 0 ? -1 : 0;
}

/* ---------------------------------------------------------------- main */
static void usage(void) {
    fputs("usage: zecoll-synth --out DIR [--ranks R] [--queues Q] [--ops N] [--seed S] [--skew] [--off] [--metrics] [--waits]\n"
          "                    [--expected FILE] [--break A2|A8|A12|A14|A15|A16]\n",
          stderr);
}

/* --break RULE: an unknown rule breaks nothing */
static void parse_break(const char *v, struct breaks *b) {
    b->a2 = !strcmp(v, "A2"), b->a8 = !strcmp(v, "A8"), b->a12 = !strcmp(v, "A12");
    b->a14 = !strcmp(v, "A14"), b->a15 = !strcmp(v, "A15"), b->a16 = !strcmp(v, "A16");
}

static int parse_opts(int argc, char **argv, struct opts *o) {
    *o = (struct opts){.ranks = 4, .queues = 4, .ops = 100, .seed = 1};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--out") && v) o->out = v, i++;
        else if (!strcmp(a, "--expected") && v) o->expected = v, i++;
        else if (!strcmp(a, "--break") && v) parse_break(v, &o->brk), i++;
        else if (!strcmp(a, "--ranks") && v) o->ranks = (uint32_t)strtoul(v, NULL, 10), i++;
        else if (!strcmp(a, "--queues") && v) o->queues = (uint32_t)strtoul(v, NULL, 10), i++;
        else if (!strcmp(a, "--ops") && v) o->ops = (uint32_t)strtoul(v, NULL, 10), i++;
        else if (!strcmp(a, "--seed") && v) o->seed = strtoull(v, NULL, 10), i++;
        else if (!strcmp(a, "--slowdown") && v) o->slowdown = (uint32_t)strtoul(v, NULL, 10), i++;
        else if (!strcmp(a, "--skew")) o->skew = true;
        else if (!strcmp(a, "--off")) o->off = true;
        else if (!strcmp(a, "--metrics")) o->metrics = true;
        else if (!strcmp(a, "--waits")) o->waits = true;
        else if (!strcmp(a, "--small-chunks")) o->small_chunks = true; /* OTF2's minimum: cheaper to read (fuzzing) */
        else return -1;
    }
    return !o->out || !o->ranks || !o->queues || o->queues > 64 || o->ops < 2 ? -1 : 0;
}

/* the expected statistics' accumulators; 0, 1 out of memory, 2 cannot write */
static int expect_init(const struct opts *o) {
    if (o->metrics) {
        pm_reg = calloc((size_t)NREGIONS * NPM, sizeof(*pm_reg));
        pm_rank = calloc(o->ranks, sizeof(*pm_rank));
        if (!pm_reg || !pm_rank) return 1;
    }
    for (int k = 0; k < NKERNELS; k++) {
        ks[k].min = UINT64_MAX;
        ks[k].rank_total = calloc(o->ranks, sizeof(uint64_t));
        if (!ks[k].rank_total) return 1;
    }
    if (o->expected) {
        ex = fopen(o->expected, "w");
        if (!ex) {
            fprintf(stderr, "zecoll-synth: cannot write %s\n", o->expected);
            return 2;
        }
        fputs("{\"utilisation\":[", ex);
    }
    return 0;
}

static OTF2_Archive *archive_open(const struct opts *o) {
    uint64_t chunk = o->small_chunks ? OTF2_CHUNK_SIZE_MIN : 1024 * 1024;
    uint64_t pool = o->small_chunks ? OTF2_CHUNK_SIZE_MIN : 4 * 1024 * 1024;
    OTF2_Archive *ar = OTF2_Archive_Open(o->out, "traces", OTF2_FILEMODE_WRITE, chunk, pool, OTF2_SUBSTRATE_POSIX,
                                         OTF2_COMPRESSION_NONE);
    if (!ar || OTF2_Archive_SetFlushCallbacks(ar, &flush_cbs, NULL) != OTF2_SUCCESS ||
        OTF2_Archive_SetSerialCollectiveCallbacks(ar) != OTF2_SUCCESS ||
        OTF2_Archive_SetCreator(ar, "zecoll-synth") != OTF2_SUCCESS || OTF2_Archive_OpenEvtFiles(ar) != OTF2_SUCCESS) {
        fprintf(stderr, "zecoll-synth: cannot create the archive %s\n", o->out);
        return NULL;
    }
    return ar;
}

int main(int argc, char **argv) {
    struct opts o;
    if (parse_opts(argc, argv, &o) != 0) {
        usage();
        return 2;
    }
    struct stat st;
    if (stat(o.out, &st) == 0) {
        fprintf(stderr, "zecoll-synth: %s exists; not overwritten\n", o.out);
        return 2;
    }
    int rc = expect_init(&o);
    if (rc != 0) return rc;
    OTF2_Archive *ar = archive_open(&o);
    if (!ar) return 1;
    size_t nops = (size_t)o.queues * o.ops + 1;
    struct ctx c = {.sy = {.o = &o, .ar = ar, .gmin = UINT64_MAX}, .o = &o};
    c.sy.nevents = calloc((size_t)o.ranks * (o.queues + 1), sizeof(uint64_t));
    struct plan p = {calloc(nops, sizeof(*p.ops)), calloc(nops, sizeof(*p.app)),
                     {calloc(nops, sizeof(struct iv)), calloc(nops, sizeof(struct iv)), calloc(nops, sizeof(struct iv)), 0, 0, 0}};
    if (!c.sy.nevents || !p.ops || !p.app || !p.iv.all || !p.iv.c || !p.iv.x) return 1;
    if (o.waits) c.waits_at = waits_start(&o, &p);
    for (uint32_t r = 0; r < o.ranks; r++) write_rank(&c, &p, r);
    if (OTF2_Archive_CloseEvtFiles(ar) != OTF2_SUCCESS) {
        fprintf(stderr, "zecoll-synth: cannot close the event files\n");
        return 1;
    }
    synth_write_defs(&c.sy);
    if (OTF2_Archive_Close(ar) != OTF2_SUCCESS) {
        fprintf(stderr, "zecoll-synth: cannot close the archive\n");
        return 1;
    }
    return ex && write_expected(&o) != 0 ? 1 : 0;
}
