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
 * denominator being its span less that time. */
#include <errno.h>
#include <otf2/otf2.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

enum { K_GEMM, K_AXPY, K_REDUCE, NKERNELS };
static const char *const kname[NKERNELS] = {"k_gemm", "k_axpy", "k_reduce"};
static const uint64_t kbase[NKERNELS] = {40000, 8000, 15000};
enum op_kind { O_KERNEL, O_COPY, O_FILL, O_BARRIER };
enum mem { M_H2D, M_D2H, M_D2D, NMEM };
static const char *const mname[NMEM] = {"H2D", "D2H", "D2D"};
static const uint64_t sizes[4] = {256, 4096, 65536, 1048576};

/* regions (global ids) */
enum {
    R_ZEINIT, R_MPI_INIT, R_MPI_ALLREDUCE, R_MPI_FINALIZE, R_APP_LAUNCH, R_APP_COPY, R_APP_FILL, R_APP_BARRIER,
    R_K0, /* + kernel */
    R_COPY0 = R_K0 + NKERNELS, /* + mem */
    R_FILL = R_COPY0 + NMEM, R_BARRIER, NREGIONS
};

struct op {
    uint64_t start, end, t_app, cs, bytes;
    uint32_t region, q, i;
    uint8_t kind, mem, repeat;
};

struct opts {
    const char *out, *expected, *brk;
    uint32_t ranks, queues, ops, slowdown; /* slowdown: k_axpy that many percent slower (for --diff tests) */
    uint64_t seed;
    bool skew, off, metrics, small_chunks;
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
static char *mpi_json;
static size_t mpi_len, mpi_cap;

static char *span_json;
static char *moff_json; /* rank -> its host thread's measurement-off time (MPI share's denominator) */
static size_t moff_len, moff_cap;
static size_t span_len, span_cap;

static void append(char **buf, size_t *len, size_t *cap, const char *b, size_t n) {
    if (*len + n + 1 > *cap) {
        *cap = *cap ? 2 * *cap : 4096;
        while (*len + n + 1 > *cap) *cap *= 2;
        *buf = realloc(*buf, *cap);
        if (!*buf) exit(1);
    }
    memcpy(*buf + *len, b, n + 1);
    *len += n;
}

/* a rank's MPI time, its first and last event on rank 0's clock, and how long its thread was off */
static void mpi_add(uint32_t r, uint64_t ns, uint64_t first, uint64_t last, uint64_t off) {
    char b[128];
    int m = snprintf(b, sizeof(b), "%s\"%u\":%llu", ex_first_mpi ? "" : ",", r, (unsigned long long)off);
    append(&moff_json, &moff_len, &moff_cap, b, (size_t)m);
    int n = snprintf(b, sizeof(b), "%s\"%u\":%llu", ex_first_mpi ? "" : ",", r, (unsigned long long)ns);
    append(&mpi_json, &mpi_len, &mpi_cap, b, (size_t)n);
    n = snprintf(b, sizeof(b), "%s\"%u\":[%llu,%llu]", ex_first_mpi ? "" : ",", r, (unsigned long long)first,
                 (unsigned long long)last);
    append(&span_json, &span_len, &span_cap, b, (size_t)n);
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

/* ---------------------------------------------------------------- writing */
static uint64_t last_local;

struct ctx {
    const struct opts *o;
    OTF2_Archive *ar;
    uint64_t gmin, gmax;
    uint64_t *nevents;     /* per location: [r * (1 + Q) + k] */
    OTF2_EvtWriter *w;
    uint64_t n, last;
    int64_t skew;
    uint32_t r;            /* the rank being written */
};

/* ---------------------------------------------------------------- PAPI-like counters (A19) */
enum { PM_INS, PM_CLOCK, NPM };
static uint64_t pm_value(int m, uint64_t t) { return m == PM_INS ? t / 7 : t / 2; }
static int pm_count(uint32_t r) { return r % 2 ? 2 : 1; } /* members of rank r's class (class r % 2) */
struct pmreg {
    uint64_t calls, total, min, max, region_ns;
};
static struct pmreg *pm_reg;                     /* [region * NPM + member] */
static uint64_t (*pm_rank)[NPM][5];              /* [rank][member]: counted, in MPI, MPI regions, in L0, L0 regions */
static uint64_t pm_first[NPM], pm_last[NPM];     /* the rank being written */
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

static void tick(struct ctx *c, uint64_t global_t) {
    if (global_t < c->gmin) c->gmin = global_t;
    if (global_t > c->gmax) c->gmax = global_t;
    if (global_t < c->last) {
        fprintf(stderr, "zecoll-synth: internal error: time goes back (%llu < %llu)\n", (unsigned long long)global_t,
                (unsigned long long)c->last);
        exit(1);
    }
    c->last = global_t;
    last_local = (uint64_t)((int64_t)global_t + c->skew);
    c->n++;
}

#define LT(t) ((uint64_t)((int64_t)(t) + cx->skew)) /* local (skewed) time written */

static void ev_enter(struct ctx *c, uint64_t t, uint32_t region) {
    struct ctx *cx = c;
    tick(c, t);
    OTF2_EvtWriter_Enter(c->w, NULL, LT(t), region);
}
static void ev_leave(struct ctx *c, uint64_t t, uint32_t region) {
    struct ctx *cx = c;
    tick(c, t);
    OTF2_EvtWriter_Leave(c->w, NULL, LT(t), region);
}
static void ev_param(struct ctx *c, uint64_t t, uint64_t v) {
    struct ctx *cx = c;
    tick(c, t);
    OTF2_EvtWriter_ParameterUnsignedInt(c->w, NULL, LT(t), 0, v);
}
static void ev_metric(struct ctx *c, uint64_t t) {
    if (!c->o->metrics) return;
    struct ctx *cx = c;
    tick(c, t);
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
    struct ctx *cx = c;
    tick(c, t);
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

static int cmp_app(const void *a, const void *b) {
    const struct op *x = *(const struct op *const *)a, *y = *(const struct op *const *)b;
    if (x->t_app != y->t_app) return x->t_app < y->t_app ? -1 : 1;
    if (x->q != y->q) return x->q < y->q ? -1 : 1;
    return (x->i > y->i) - (x->i < y->i);
}

/* Chunks stay in memory until a location's writer closes (no memory callbacks), so no flush
 * happens while writing and no BufferFlush record is added; the callbacks are still required. */
static OTF2_FlushType pre_flush(void *ud, OTF2_FileType ft, OTF2_LocationRef loc, void *cd, bool final) { return OTF2_FLUSH; }
static OTF2_TimeStamp post_flush(void *ud, OTF2_FileType ft, OTF2_LocationRef loc) { return last_local; }
static const OTF2_FlushCallbacks flush_cbs = {pre_flush, post_flush};

/* rank 0's clock is the reference (A4) */
static int64_t skew_of(const struct opts *o, uint32_t r) { return o->skew && r ? ((int64_t)(r % 5) - 2) * 1000000 : 0; }

static uint32_t dev_of(uint32_t r) { return (r % 8) / 2; }
static uint32_t host_of(uint32_t r) { return r / 8; }

static void usage(void) {
    fputs("usage: zecoll-synth --out DIR [--ranks R] [--queues Q] [--ops N] [--seed S] [--skew] [--off] [--metrics]\n"
          "                    [--expected FILE] [--break A2|A8|A12|A14|A15|A16]\n",
          stderr);
}

int main(int argc, char **argv) {
    struct opts o = {.ranks = 4, .queues = 4, .ops = 100, .seed = 1};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--out") && v) o.out = v, i++;
        else if (!strcmp(a, "--expected") && v) o.expected = v, i++;
        else if (!strcmp(a, "--break") && v) o.brk = v, i++;
        else if (!strcmp(a, "--ranks") && v) o.ranks = (uint32_t)strtoul(v, NULL, 10), i++;
        else if (!strcmp(a, "--queues") && v) o.queues = (uint32_t)strtoul(v, NULL, 10), i++;
        else if (!strcmp(a, "--ops") && v) o.ops = (uint32_t)strtoul(v, NULL, 10), i++;
        else if (!strcmp(a, "--seed") && v) o.seed = strtoull(v, NULL, 10), i++;
        else if (!strcmp(a, "--slowdown") && v) o.slowdown = (uint32_t)strtoul(v, NULL, 10), i++;
        else if (!strcmp(a, "--skew")) o.skew = true;
        else if (!strcmp(a, "--off")) o.off = true;
        else if (!strcmp(a, "--metrics")) o.metrics = true;
        else if (!strcmp(a, "--small-chunks")) o.small_chunks = true; /* OTF2's minimum: cheaper to read (fuzzing) */
        else {
            usage();
            return 2;
        }
    }
    if (!o.out || !o.ranks || !o.queues || o.queues > 64 || o.ops < 2) {
        usage();
        return 2;
    }
    struct stat st;
    if (stat(o.out, &st) == 0) {
        fprintf(stderr, "zecoll-synth: %s exists; not overwritten\n", o.out);
        return 2;
    }
    const char *brk = o.brk ? o.brk : "";
    uint32_t R = o.ranks, Q = o.queues, N = o.ops;
    if (o.metrics) {
        pm_reg = calloc((size_t)NREGIONS * NPM, sizeof(*pm_reg));
        pm_rank = calloc(R, sizeof(*pm_rank));
        if (!pm_reg || !pm_rank) return 1;
    }
    for (int k = 0; k < NKERNELS; k++) {
        ks[k].min = UINT64_MAX;
        ks[k].rank_total = calloc(R, sizeof(uint64_t));
        if (!ks[k].rank_total) return 1;
    }
    if (o.expected) {
        ex = fopen(o.expected, "w");
        if (!ex) {
            fprintf(stderr, "zecoll-synth: cannot write %s\n", o.expected);
            return 2;
        }
        fputs("{\"utilisation\":[", ex);
    }

    OTF2_Archive *ar = OTF2_Archive_Open(o.out, "traces", OTF2_FILEMODE_WRITE, o.small_chunks ? OTF2_CHUNK_SIZE_MIN : 1024 * 1024,
                                         o.small_chunks ? OTF2_CHUNK_SIZE_MIN : 4 * 1024 * 1024,
                                         OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE);
    if (!ar || OTF2_Archive_SetFlushCallbacks(ar, &flush_cbs, NULL) != OTF2_SUCCESS ||
        OTF2_Archive_SetSerialCollectiveCallbacks(ar) != OTF2_SUCCESS ||
        OTF2_Archive_SetCreator(ar, "zecoll-synth") != OTF2_SUCCESS || OTF2_Archive_OpenEvtFiles(ar) != OTF2_SUCCESS) {
        fprintf(stderr, "zecoll-synth: cannot create the archive %s\n", o.out);
        return 1;
    }
    struct ctx c = {.o = &o, .ar = ar, .gmin = UINT64_MAX}, *cx = &c;
    c.nevents = calloc((size_t)R * (Q + 1), sizeof(uint64_t));
    struct op *ops = calloc((size_t)Q * N + 1, sizeof(*ops));
    struct op **app = calloc((size_t)Q * N + 1, sizeof(*app));
    struct iv *iv_all = calloc((size_t)Q * N + 1, sizeof(*iv_all)), *iv_c = calloc((size_t)Q * N + 1, sizeof(*iv_c)),
              *iv_x = calloc((size_t)Q * N + 1, sizeof(*iv_x));
    if (!c.nevents || !ops || !app || !iv_all || !iv_c || !iv_x) return 1;
    const uint64_t margin = 20000, W = 200000;

    for (uint32_t r = 0; r < R; r++) {
        int64_t skew = skew_of(&o, r);
        uint64_t T = 1000000000ull + (uint64_t)r * 1000;
        bool off = o.off && r % 3 == 1;
        /* operations, queue by queue; with a measurement-off window between two halves */
        uint64_t P = T + 100000, endA = 0;
        uint64_t qt[64];
        for (uint32_t q = 0; q < Q; q++) qt[q] = P + q * 300;
        uint64_t off_a = 0, off_b = 0;
        for (uint32_t half = 0; half < 2; half++) {
            if (half == 1) {
                if (off) {
                    off_a = endA + margin;
                    off_b = off_a + W;
                    for (uint32_t q = 0; q < Q; q++) qt[q] = off_b + margin + q * 300;
                } else {
                    for (uint32_t q = 0; q < Q; q++) qt[q] = endA + 1000 + q * 300;
                }
            }
            for (uint32_t q = 0; q < Q; q++) {
                uint32_t i0 = half ? N / 2 : 0, i1 = half ? N : N / 2;
                for (uint32_t i = i0; i < i1; i++) {
                    struct op *x = &ops[(size_t)q * N + i];
                    uint64_t h = rnd(&o, r, q, i);
                    memset(x, 0, sizeof(*x));
                    x->q = q;
                    x->i = i;
                    uint32_t role = q % 4;
                    uint64_t dur;
                    if (role == 0 || role == 2) {
                        int k = role == 2 ? K_REDUCE : (i % 2 ? K_AXPY : K_GEMM);
                        uint64_t base = kbase[k];
                        if (k == K_GEMM && r == R - 1) base = base * 5 / 4;
                        if (k == K_AXPY) base = base * (100 + o.slowdown) / 100;
                        dur = base * (95 + h % 11) / 100;
                        x->kind = O_KERNEL;
                        x->region = R_K0 + (uint32_t)k;
                        x->repeat = role == 2 && i % 10 == 9;
                    } else if (role == 1) {
                        x->kind = O_COPY;
                        x->mem = i % 2 ? M_D2H : M_H2D;
                        x->bytes = sizes[(h >> 8) % 4];
                        dur = 2000 + x->bytes / 10 + h % 500;
                        x->region = R_COPY0 + x->mem;
                    } else {
                        if (i % 25 == 24) {
                            x->kind = O_BARRIER;
                            x->region = R_BARRIER;
                            dur = 300 + h % 100;
                        } else if (i % 2) {
                            x->kind = O_FILL;
                            x->region = R_FILL;
                            x->bytes = 0;
                            dur = 1500 + h % 700;
                        } else {
                            x->kind = O_COPY;
                            x->mem = M_D2D;
                            x->bytes = sizes[(h >> 8) % 4];
                            dur = 1000 + x->bytes / 40 + h % 300;
                            x->region = R_COPY0 + M_D2D;
                        }
                    }
                    x->start = qt[q] + 500 + (h >> 16) % 2000;
                    x->end = x->start + dur;
                    qt[q] = x->end;
                    x->t_app = x->start - (1000 + (h >> 24) % 5000);
                    if (x->end > endA) endA = x->end;
                }
            }
        }
        /* host Appends in time order, never overlapping (150 ns each); ids increase with time */
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
        uint64_t last_op = 0;
        for (size_t k = 0; k < (size_t)Q * N; k++) last_op = ops[k].end > last_op ? ops[k].end : last_op;

        /* ---- host thread */
        c.skew = skew;
        c.w = OTF2_Archive_GetEvtWriter(ar, r);
        c.n = 0;
        c.last = 0;
        uint64_t mpi_ns = 0;
        c.r = r;
        pm_seen = false;
        host_region(&c, T - 20000, T - 10000, R_ZEINIT, 0, false);
        uint64_t init_end = T + 50000 + (r % 8) * 1000ull; /* before the first Append (T + 60 us) */
        host_region(&c, T, init_end, R_MPI_INIT, 0, true);
        mpi_ns += init_end - T;
        for (size_t k = 0; k < na; k++) {
            struct op *x = app[k];
            if (off && x->t_app >= off_a && c.last < off_a) {
                ev_onoff(&c, off_a, false);
                ev_onoff(&c, off_b, true);
            }
            uint32_t reg = x->kind == O_KERNEL ? R_APP_LAUNCH : x->kind == O_COPY ? R_APP_COPY
                           : x->kind == O_FILL ? R_APP_FILL : R_APP_BARRIER;
            host_region(&c, x->t_app, x->t_app + 150, reg, x->cs, false);
        }
        uint64_t t = (last_op > c.last ? last_op : c.last) + 10000;
        for (int m = 0; m < 4; m++) {
            uint64_t d = 5000 + rnd(&o, r, 1000, (uint64_t)m) % 1000;
            ev_metric(&c, t);
            ev_enter(&c, t, R_MPI_ALLREDUCE);
            tick(&c, t);
            OTF2_EvtWriter_MpiCollectiveBegin(c.w, NULL, LT(t));
            tick(&c, t + d);
            OTF2_EvtWriter_MpiCollectiveEnd(c.w, NULL, LT(t + d), OTF2_COLLECTIVE_OP_ALLREDUCE, R, OTF2_COLLECTIVE_ROOT_NONE, 8, 8);
            ev_metric(&c, t + d);
            ev_leave(&c, t + d, R_MPI_ALLREDUCE);
            pm_region(&c, R_MPI_ALLREDUCE, t, t + d, true);
            mpi_ns += d;
            t += d + 2000;
        }
        host_region(&c, t, t + 30000, R_MPI_FINALIZE, 0, true);
        mpi_ns += 30000;
        if (o.metrics && pm_rank && pm_seen)
            for (int m = 0; m < pm_count(r); m++) pm_rank[r][m][0] = pm_last[m] - pm_first[m];
        uint64_t host_last = c.last;
        c.nevents[(size_t)r * (Q + 1)] = c.n;
        ex_events += c.n;
        OTF2_Archive_CloseEvtWriter(ar, c.w);
        if (ex) mpi_add(r, mpi_ns, T - 20000, host_last, off ? off_b - off_a : 0); /* no MPI call in the window */
        if (off) {
            ex_off_windows += 1 + Q;
            ex_off_ns += (off_b - off_a) * (1 + Q);
        }

        /* ---- streams */
        size_t nall = 0, nc = 0, nx = 0;
        for (uint32_t q = 0; q < Q; q++) {
            c.w = OTF2_Archive_GetEvtWriter(ar, (UINT64_C(1) << 63) | ((uint64_t)q << 32) | r);
            c.n = 0;
            c.last = 0;
            uint64_t match = 0;
            for (uint32_t i = 0; i < N; i++) {
                struct op *x = &ops[(size_t)q * N + i];
                if (off && i == N / 2) {
                    ev_onoff(&c, off_a, false);
                    ev_onoff(&c, off_b, true);
                }
                ev_enter(&c, x->start, x->region);
                if (!strcmp(brk, "A15") && r == 0 && q == 0 && i == 1) { /* a record nested in another */
                    ev_enter(&c, x->start, R_K0 + K_AXPY);
                    ev_leave(&c, x->start, R_K0 + K_AXPY);
                }
                /* --break A16: a device record whose callsite no Append has */
                ev_param(&c, x->start, !strcmp(brk, "A16") && r == 0 && q == 0 && i == 0 ? (UINT64_C(1) << 40) | 999999999ull : x->cs);
                if (x->kind == O_COPY) {
                    tick(&c, x->start);
                    if (x->mem == M_D2H) OTF2_EvtWriter_RmaPut(c.w, NULL, LT(x->start), r, 0, x->bytes, ++match);
                    else OTF2_EvtWriter_RmaGet(c.w, NULL, LT(x->start), r, x->mem == M_D2D ? 1 + q : 0, x->bytes, ++match);
                    tick(&c, x->end);
                    OTF2_EvtWriter_RmaOpCompleteBlocking(c.w, NULL, LT(x->end), r, match);
                }
                if (!(!strcmp(brk, "A14") && r == 0 && q == 0 && i == N - 1)) ev_leave(&c, x->end, x->region);
                /* expectations */
                uint64_t dur = x->end - x->start;
                if (x->kind == O_KERNEL) {
                    struct kstat *k = &ks[x->region - R_K0];
                    k->calls++;
                    k->total += dur;
                    k->min = dur < k->min ? dur : k->min;
                    k->max = dur > k->max ? dur : k->max;
                    k->rank_total[r] += dur;
                    iv_c[nc++] = (struct iv){x->start, x->end};
                } else if (x->kind == O_COPY) {
                    cs_[x->mem].calls++;
                    cs_[x->mem].bytes += x->bytes;
                    cs_[x->mem].busy += dur;
                    iv_x[nx++] = (struct iv){x->start, x->end};
                } else if (x->kind == O_FILL) {
                    iv_x[nx++] = (struct iv){x->start, x->end};
                }
                if (x->kind != O_BARRIER) iv_all[nall++] = (struct iv){x->start, x->end};
                if (x->repeat) ex_reexec++;
                else if (!(!strcmp(brk, "A16") && r == 0 && q == 0 && i == 0)) {
                    uint64_t lat = x->start > x->t_app ? x->start - x->t_app : 0;
                    ex_lat_n++;
                    ex_lat_min = lat < ex_lat_min ? lat : ex_lat_min;
                    ex_lat_max = lat > ex_lat_max ? lat : ex_lat_max;
                }
            }
            c.nevents[(size_t)r * (Q + 1) + 1 + q] = c.n;
            ex_events += c.n;
            OTF2_Archive_CloseEvtWriter(ar, c.w);
        }
        (void)host_last;
        if (ex) {
            uint64_t busy = union_len(iv_all, nall), comp = union_len(iv_c, nc), copy = union_len(iv_x, nx);
            fprintf(ex, "%s\n{\"rank\":%u,\"device\":\"synth GPU %u [%u]\",\"busy_ns\":%llu,\"compute_ns\":%llu,"
                        "\"copy_ns\":%llu,\"overlap_ns\":%llu,\"off_ns\":%llu}",
                    ex_first_util ? "" : ",", r, host_of(r) * 4 + dev_of(r), dev_of(r), (unsigned long long)busy,
                    (unsigned long long)comp, (unsigned long long)copy, (unsigned long long)(comp + copy - busy),
                    (unsigned long long)(off ? off_b - off_a : 0));
            ex_first_util = false;
        }
        c.skew = 0;
    }
    if (OTF2_Archive_CloseEvtFiles(ar) != OTF2_SUCCESS) {
        fprintf(stderr, "zecoll-synth: cannot close the event files\n");
        return 1;
    }

    /* ---- local definitions: clock offsets (rank 0's clock minus the rank's) */
    OTF2_Archive_OpenDefFiles(ar);
    for (uint32_t r = 0; r < R; r++) {
        int64_t skew = skew_of(&o, r);
        for (uint32_t k = 0; k <= Q; k++) {
            uint64_t id = k == 0 ? r : (UINT64_C(1) << 63) | ((uint64_t)(k - 1) << 32) | r;
            OTF2_DefWriter *dw = OTF2_Archive_GetDefWriter(ar, id);
            OTF2_DefWriter_WriteClockOffset(dw, (uint64_t)(1000000000ll + skew), -skew, r ? 1000.0 : 0.0);
            OTF2_DefWriter_WriteClockOffset(dw, (uint64_t)((int64_t)c.gmax + skew), -skew, r ? 1000.0 : 0.0);
            OTF2_Archive_CloseDefWriter(ar, dw);
        }
    }
    OTF2_Archive_CloseDefFiles(ar);

    /* ---- global definitions (ids dense and ascending per type) */
    OTF2_GlobalDefWriter *g = OTF2_Archive_GetGlobalDefWriter(ar);
    OTF2_GlobalDefWriter_WriteClockProperties(g, 1000000000u, c.gmin, c.gmax - c.gmin, OTF2_UNDEFINED_TIMESTAMP);
    uint32_t ns = 0;
    char buf[128];
#define STR(s) (OTF2_GlobalDefWriter_WriteString(g, ns, (s)), ns++)
    uint32_t s_empty = STR(""), s_l0 = STR("Level Zero"), s_machine = STR("machine"), s_node = STR("node");
    uint32_t s_devcls = STR("Level Zero Device"), s_uuid = STR("UUID"), s_cs = STR("callsite id"), s_win = STR("L0_WINDOW");
    uint32_t s_comm = STR("L0"), s_mpi = STR("MPI"), s_world = STR("MPI_COMM_WORLD"), s_master = STR("Master thread");
    uint32_t s_ctx = STR("L0 Context 0"), s_pe = STR("zecoll::events"), s_pc = STR("zecoll::clamped"), s_pd = STR("zecoll::dropped");
    uint32_t s_metric = STR("PAPI_TOT_INS"), s_unit = STR("#"), s_clock = STR("perf::TASK-CLOCK"), s_ns = STR("ns");
    static const char *const rnames[NREGIONS] = {
        "zeInit", "MPI_Init", "MPI_Allreduce", "MPI_Finalize", "zeCommandListAppendLaunchKernel",
        "zeCommandListAppendMemoryCopy", "zeCommandListAppendMemoryFill", "zeCommandListAppendBarrier",
        "k_gemm", "k_axpy", "k_reduce",
        "zeCommandListAppendMemoryCopy(H2D)", "zeCommandListAppendMemoryCopy(D2H)", "zeCommandListAppendMemoryCopy(D2D)",
        "zeCommandListAppendMemoryFill(D)", "zeCommandListAppendBarrier"};
    uint32_t s_reg[NREGIONS];
    for (int i = 0; i < NREGIONS; i++) s_reg[i] = STR(rnames[i]);
    uint32_t nhosts = (R + 7) / 8, ndev = nhosts * 4;
    uint32_t s_host0 = ns;
    for (uint32_t h = 0; h < nhosts; h++) snprintf(buf, sizeof(buf), "synth-node%u", h), STR(buf);
    uint32_t s_dev0 = ns;
    for (uint32_t k = 0; k < ndev; k++) snprintf(buf, sizeof(buf), "synth GPU %u [%u]", k, k % 4), STR(buf);
    uint32_t s_uuid0 = ns;
    for (uint32_t k = 0; k < ndev; k++) snprintf(buf, sizeof(buf), "73796e7468%022x", k), STR(buf);
    uint32_t s_rank0 = ns;
    for (uint32_t r = 0; r < R; r++) snprintf(buf, sizeof(buf), "MPI Rank %u", r), STR(buf);
    uint32_t s_stream0 = ns;
    for (uint32_t k = 0; k < 4; k++)
        for (uint32_t q = 0; q < Q; q++) {
            if (!strcmp(brk, "A8") && k == 0 && q == 0) snprintf(buf, sizeof(buf), "GPU stream");
            else snprintf(buf, sizeof(buf), "L0[%u:%u]", k, q);
            STR(buf);
        }
    OTF2_GlobalDefWriter_WriteParadigm(g, OTF2_PARADIGM_OPENCL, s_l0, OTF2_PARADIGM_CLASS_ACCELERATOR);
    for (int i = 0; i < NREGIONS; i++) {
        OTF2_RegionRole role = OTF2_REGION_ROLE_FUNCTION;
        OTF2_Paradigm par = OTF2_PARADIGM_OPENCL;
        if (i == R_MPI_INIT || i == R_MPI_FINALIZE) par = OTF2_PARADIGM_MPI;
        if (i == R_MPI_ALLREDUCE) par = OTF2_PARADIGM_MPI, role = OTF2_REGION_ROLE_COLL_ALL2ALL;
        if (i == R_APP_LAUNCH) role = OTF2_REGION_ROLE_WRAPPER;
        if (i == R_APP_COPY || (i >= R_COPY0 && i <= R_FILL)) role = OTF2_REGION_ROLE_DATA_TRANSFER;
        if (i == R_BARRIER) role = OTF2_REGION_ROLE_BARRIER;
        OTF2_GlobalDefWriter_WriteRegion(g, (uint32_t)i, s_reg[i], s_reg[i], s_empty, role, par, OTF2_REGION_FLAG_NONE,
                                         s_empty, 0, 0);
    }
    OTF2_GlobalDefWriter_WriteParameter(g, 0, s_cs, OTF2_PARAMETER_TYPE_UINT64);
    OTF2_GlobalDefWriter_WriteSystemTreeNode(g, 0, s_machine, s_machine, OTF2_UNDEFINED_SYSTEM_TREE_NODE);
    for (uint32_t h = 0; h < nhosts; h++) {
        OTF2_GlobalDefWriter_WriteSystemTreeNode(g, 1 + h, s_host0 + h, s_node, 0);
        OTF2_GlobalDefWriter_WriteSystemTreeNodeDomain(g, 1 + h, OTF2_SYSTEM_TREE_DOMAIN_SHARED_MEMORY);
    }
    for (uint32_t k = 0; k < ndev; k++) {
        uint32_t id = 1 + nhosts + k;
        OTF2_GlobalDefWriter_WriteSystemTreeNode(g, id, s_dev0 + k, s_devcls, 1 + k / 4);
        OTF2_GlobalDefWriter_WriteSystemTreeNodeDomain(g, id, OTF2_SYSTEM_TREE_DOMAIN_ACCELERATOR_DEVICE);
        OTF2_AttributeValue v;
        v.stringRef = s_uuid0 + k;
        OTF2_GlobalDefWriter_WriteSystemTreeNodeProperty(g, id, s_uuid, OTF2_TYPE_STRING, v);
    }
    for (uint32_t r = 0; r < R; r++)
        OTF2_GlobalDefWriter_WriteLocationGroup(g, r, s_rank0 + r, OTF2_LOCATION_GROUP_TYPE_PROCESS, 1 + host_of(r),
                                                OTF2_UNDEFINED_LOCATION_GROUP);
    for (uint32_t r = 0; r < R; r++)
        OTF2_GlobalDefWriter_WriteLocationGroup(g, R + r, s_ctx, OTF2_LOCATION_GROUP_TYPE_ACCELERATOR,
                                                1 + nhosts + host_of(r) * 4 + dev_of(r), r);
    for (uint32_t r = 0; r < R; r++)
        for (uint32_t k = 0; k <= Q; k++) {
            uint64_t n = c.nevents[(size_t)r * (Q + 1) + k] + (!strcmp(brk, "A2") && r == 0 && k == 0);
            if (k == 0) OTF2_GlobalDefWriter_WriteLocation(g, r, s_master, OTF2_LOCATION_TYPE_CPU_THREAD, n, r);
            else
                OTF2_GlobalDefWriter_WriteLocation(g, (UINT64_C(1) << 63) | ((uint64_t)(k - 1) << 32) | r,
                                                   s_stream0 + dev_of(r) * Q + (k - 1), OTF2_LOCATION_TYPE_ACCELERATOR_STREAM, n,
                                                   R + r);
        }
    for (uint32_t r = 0; r < R; r++)
        for (uint32_t k = 0; k <= Q; k++) {
            if (!strcmp(brk, "A12") && r == 0 && k == 1) continue;
            uint64_t id = k == 0 ? r : (UINT64_C(1) << 63) | ((uint64_t)(k - 1) << 32) | r;
            OTF2_AttributeValue v;
            v.uint64 = c.nevents[(size_t)r * (Q + 1) + k];
            OTF2_GlobalDefWriter_WriteLocationProperty(g, id, s_pe, OTF2_TYPE_UINT64, v);
            v.uint64 = k ? r % 3 : 0;
            OTF2_GlobalDefWriter_WriteLocationProperty(g, id, s_pc, OTF2_TYPE_UINT64, v);
            v.uint64 = 0;
            OTF2_GlobalDefWriter_WriteLocationProperty(g, id, s_pd, OTF2_TYPE_UINT64, v);
        }
    /* groups: 0 every location, 1+r rank r's L0 communicator, then MPI */
    uint64_t *mem = calloc((size_t)R * (Q + 1) + R + 1, sizeof(uint64_t));
    if (!mem) return 1;
    for (uint32_t r = 0; r < R; r++)
        for (uint32_t k = 0; k <= Q; k++)
            mem[(size_t)r * (Q + 1) + k] = k == 0 ? r : (UINT64_C(1) << 63) | ((uint64_t)(k - 1) << 32) | r;
    OTF2_GlobalDefWriter_WriteGroup(g, 0, s_comm, OTF2_GROUP_TYPE_COMM_LOCATIONS, OTF2_PARADIGM_OPENCL, OTF2_GROUP_FLAG_NONE,
                                    R * (Q + 1), mem);
    for (uint32_t r = 0; r < R; r++) {
        for (uint32_t k = 0; k <= Q; k++) mem[k] = (uint64_t)r * (Q + 1) + k;
        OTF2_GlobalDefWriter_WriteGroup(g, 1 + r, s_comm, OTF2_GROUP_TYPE_COMM_GROUP, OTF2_PARADIGM_OPENCL,
                                        OTF2_GROUP_FLAG_NONE, Q + 1, mem);
    }
    for (uint32_t r = 0; r < R; r++) mem[r] = r;
    OTF2_GlobalDefWriter_WriteGroup(g, 1 + R, s_mpi, OTF2_GROUP_TYPE_COMM_LOCATIONS, OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE,
                                    R, mem);
    OTF2_GlobalDefWriter_WriteGroup(g, 2 + R, s_empty, OTF2_GROUP_TYPE_COMM_GROUP, OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE, R,
                                    mem);
    free(mem);
    for (uint32_t r = 0; r < R; r++) OTF2_GlobalDefWriter_WriteComm(g, r, s_comm, 1 + r, OTF2_UNDEFINED_COMM, OTF2_COMM_FLAG_NONE);
    OTF2_GlobalDefWriter_WriteComm(g, R, s_world, 2 + R, OTF2_UNDEFINED_COMM, OTF2_COMM_FLAG_NONE);
    for (uint32_t r = 0; r < R; r++) OTF2_GlobalDefWriter_WriteRmaWin(g, r, s_win, r, OTF2_RMA_WIN_FLAG_NONE);
    if (o.metrics) {
        OTF2_GlobalDefWriter_WriteMetricMember(g, PM_INS, s_metric, s_metric, OTF2_METRIC_TYPE_PAPI,
                                               OTF2_METRIC_ACCUMULATED_START, OTF2_TYPE_UINT64, OTF2_BASE_DECIMAL, 0, s_unit);
        OTF2_GlobalDefWriter_WriteMetricMember(g, PM_CLOCK, s_clock, s_clock, OTF2_METRIC_TYPE_PAPI,
                                               OTF2_METRIC_ACCUMULATED_START, OTF2_TYPE_INT64, OTF2_BASE_DECIMAL, 0, s_ns);
        OTF2_MetricMemberRef m[NPM] = {PM_INS, PM_CLOCK};
        OTF2_GlobalDefWriter_WriteMetricClass(g, 0, 1, m, OTF2_METRIC_SYNCHRONOUS, OTF2_RECORDER_KIND_CPU);
        OTF2_GlobalDefWriter_WriteMetricClass(g, 1, 2, m, OTF2_METRIC_SYNCHRONOUS, OTF2_RECORDER_KIND_CPU);
    }
    OTF2_Archive_CloseGlobalDefWriter(ar, g);
    if (OTF2_Archive_Close(ar) != OTF2_SUCCESS) {
        fprintf(stderr, "zecoll-synth: cannot close the archive\n");
        return 1;
    }

    if (ex) {
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
                (unsigned long long)ex_reexec, !strcmp(brk, "A16") ? 1 : 0, !strcmp(brk, "A16") ? 1 : 0, (unsigned long long)ex_lat_n,
                (unsigned long long)(ex_lat_n ? ex_lat_min : 0), (unsigned long long)ex_lat_max, (unsigned long long)ex_events,
                mpi_json ? mpi_json : "", moff_json ? moff_json : "", span_json ? span_json : "");
        if (o.metrics) { /* "papi": its regions and ranks, as report.json spells them */
            static const char *const pmname[NPM] = {"PAPI_TOT_INS", "perf::TASK-CLOCK"};
            fputs(",\n\"papi\":{\"regions\":[", ex);
            bool first_row = true;
            for (int i = 0; i < NREGIONS; i++)
                for (int m = 0; m < NPM; m++) {
                    const struct pmreg *x = &pm_reg[i * NPM + m];
                    if (!x->calls) continue;
                    fprintf(ex, "%s{\"counter\":\"%s\",\"region\":\"%s\",\"calls\":%llu,\"total\":%llu,\"min\":%llu,"
                                "\"max\":%llu,\"region_ns\":%llu}",
                            first_row ? "" : ",", pmname[m], rnames[i], (unsigned long long)x->calls, (unsigned long long)x->total,
                            (unsigned long long)x->min, (unsigned long long)x->max, (unsigned long long)x->region_ns);
                    first_row = false;
                }
            fputs("],\"ranks\":[", ex);
            for (uint32_t r = 0; r < R; r++)
                for (int m = 0; m < pm_count(r); m++)
                    fprintf(ex, "%s{\"rank\":%u,\"counter\":\"%s\",\"threads\":1,\"counted\":%llu,\"in_mpi\":%llu,"
                                "\"mpi_regions\":%llu,\"in_level_zero\":%llu,\"level_zero_regions\":%llu}",
                            r || m ? "," : "", r, pmname[m], (unsigned long long)pm_rank[r][m][0],
                            (unsigned long long)pm_rank[r][m][1], (unsigned long long)pm_rank[r][m][2],
                            (unsigned long long)pm_rank[r][m][3], (unsigned long long)pm_rank[r][m][4]);
            fputs("]}", ex);
        }
        fputs("}\n", ex);
        if (fclose(ex) != 0) return 1;
    }
    return 0;
}
