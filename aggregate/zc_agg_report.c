/* SPDX-License-Identifier: MIT */
/* The report model from the merged statistics, and its text and CSV forms. Rows are sorted
 * with a total order (value, then name, then id), so equal values never depend on hash order. */
#include "zc_agg_report.h"

#include <errno.h>
#include <math.h>
#include <otf2/otf2.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* ---------------------------------------------------------------- formatting */
void agg_fmt_ns(char *out, size_t n, double ns) {
    if (ns < 1e3) snprintf(out, n, "%.0f ns", ns);
    else if (ns < 1e6) snprintf(out, n, "%.2f us", ns / 1e3);
    else if (ns < 1e9) snprintf(out, n, "%.2f ms", ns / 1e6);
    else snprintf(out, n, "%.3f s", ns / 1e9);
}

void agg_fmt_bytes(char *out, size_t n, double b) {
    const char *u[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    int i = 0;
    while (b >= 1024 && i < 5) b /= 1024, i++;
    if (i == 0) snprintf(out, n, "%.0f B", b);
    else snprintf(out, n, "%.2f %s", b, u[i]);
}

void agg_fmt_rate(char *out, size_t n, double bps) {
    const char *u[] = {"B/s", "kB/s", "MB/s", "GB/s", "TB/s"};
    int i = 0;
    while (bps >= 1000 && i < 4) bps /= 1000, i++;
    snprintf(out, n, "%.3g %s", bps, u[i]);
}

static void fmt_size_class(char *out, size_t n, uint32_t cls) {
    if (cls == 0) {
        snprintf(out, n, "0 B");
        return;
    }
    char a[32], b[32];
    agg_fmt_bytes(a, sizeof(a), (double)((uint64_t)1 << (cls - 1)));
    if (cls >= 64) snprintf(b, sizeof(b), "max");
    else agg_fmt_bytes(b, sizeof(b), (double)((uint64_t)1 << cls));
    /* "4.00 KiB" -> "4 KiB" for powers of two */
    char *p;
    if ((p = strstr(a, ".00"))) memmove(p, p + 3, strlen(p + 3) + 1);
    if ((p = strstr(b, ".00"))) memmove(p, p + 3, strlen(p + 3) + 1);
    size_t la = strlen(a), lb = strlen(b);
    if (la + lb + 5 > n) {
        snprintf(out, n, "?");
        return;
    }
    out[0] = '[';
    memcpy(out + 1, a, la);
    memcpy(out + 1 + la, ", ", 2);
    memcpy(out + 3 + la, b, lb);
    memcpy(out + 3 + la + lb, ")", 2);
}

/* ---------------------------------------------------------------- names */
const char *rep_node_name(const struct agg_report *r, uint32_t node) {
    const struct agg_defs *d = r->d;
    return node < d->nnodes ? agg_str(d, d->nodes[node].name) : "?";
}

const char *rep_host_of_rank(const struct agg_report *r, uint32_t rank) {
    const struct agg_defs *d = r->d;
    return rank < d->nprocs ? rep_node_name(r, d->procs[rank].host) : "?";
}

const char *rep_loc_name(const struct agg_report *r, uint32_t li) {
    return li < r->d->nlocs ? agg_str(r->d, r->d->locs[li].name) : "?";
}

static const char *rname(const struct agg_defs *d, uint32_t region) {
    return region < d->nregions ? agg_str(d, d->regions[region].name) : "?";
}

/* ---------------------------------------------------------------- helpers */
static double mean_of(const struct agg_acc *a) { return a->n ? (double)a->sum / (double)a->n : 0.0; }

static double sd_of(const struct agg_acc *a) {
    if (a->n < 2) return 0.0;
    long double n = (long double)a->n, s = (long double)a->sum, q = (long double)a->sq;
    long double v = (q - s * s / n) / n;
    return v > 0 ? (double)sqrtl(v) : 0.0;
}

static uint64_t clampq(uint64_t v, const struct agg_acc *a) {
    if (v < a->min) return a->min;
    if (v > a->max) return a->max;
    return v;
}

static double ratio(uint64_t a, uint64_t b) { return b ? (double)a / (double)b : 0.0; }

/* rows of one table */
static uint32_t count_table(const struct agg_stats *s, uint32_t t) {
    uint32_t n = 0;
    for (uint32_t i = 0; i < s->n; i++) n += s->keys[i].table == t;
    return n;
}

static const char *g_sort = "total";

static int cmp_u64_desc(uint64_t a, uint64_t b) { return a > b ? -1 : a < b; }

static int cmp_kernel(const void *x, const void *y) {
    const struct r_kernel *a = x, *b = y;
    int c = 0;
    if (!strcmp(g_sort, "calls")) c = cmp_u64_desc(a->calls, b->calls);
    else if (!strcmp(g_sort, "mean")) c = a->mean > b->mean ? -1 : a->mean < b->mean;
    else if (!strcmp(g_sort, "max")) c = cmp_u64_desc(a->max, b->max);
    else if (!strcmp(g_sort, "imbalance")) c = a->max_over_mean > b->max_over_mean ? -1 : a->max_over_mean < b->max_over_mean;
    else if (strcmp(g_sort, "name")) c = cmp_u64_desc(a->total, b->total);
    if (c) return c;
    c = strcmp(a->name, b->name);
    return c ? c : (a->region > b->region) - (a->region < b->region);
}

static int cmp_rowk(const void *x, const void *y) {
    const struct r_rowk *a = x, *b = y;
    if (a->region != b->region) return a->region < b->region ? -1 : 1; /* regrouped by kernel order below */
    int c = cmp_u64_desc(a->total, b->total);
    if (c) return c;
    if (a->rank != b->rank) return a->rank < b->rank ? -1 : 1;
    if (a->node != b->node) return a->node < b->node ? -1 : 1;
    return (a->loc > b->loc) - (a->loc < b->loc);
}

static int cmp_simple(const void *x, const void *y) {
    const struct r_simple *a = x, *b = y;
    int c = cmp_u64_desc(a->total, b->total);
    if (c) return c;
    c = strcmp(a->name, b->name);
    return c ? c : (a->region > b->region) - (a->region < b->region);
}

static int cmp_xfer(const void *x, const void *y) {
    const struct r_xfer *a = x, *b = y;
    int c = cmp_u64_desc(a->busy, b->busy);
    if (c) return c;
    if (a->xfer != b->xfer) return a->xfer < b->xfer ? -1 : 1;
    if (a->cls != b->cls) return a->cls < b->cls ? -1 : 1;
    return (a->rank > b->rank) - (a->rank < b->rank);
}

static int cmp_xsize(const void *x, const void *y) { /* by transfer kind, then size */
    const struct r_xfer *a = x, *b = y;
    if (a->xfer != b->xfer) return a->xfer < b->xfer ? -1 : 1;
    return (a->cls > b->cls) - (a->cls < b->cls);
}

static int cmp_util(const void *x, const void *y) {
    const struct r_util *a = x, *b = y;
    if (a->rank != b->rank) return a->rank < b->rank ? -1 : 1;
    return (a->node > b->node) - (a->node < b->node);
}

static int cmp_lat(const void *x, const void *y) {
    const struct r_lat *a = x, *b = y;
    int c = a->mean > b->mean ? -1 : a->mean < b->mean;
    if (c) return c;
    if (a->rank != b->rank) return a->rank < b->rank ? -1 : 1;
    if (a->loc != b->loc) return a->loc < b->loc ? -1 : 1;
    return (a->region > b->region) - (a->region < b->region);
}

static int cmp_coll(const void *x, const void *y) {
    const struct r_coll *a = x, *b = y;
    int c = cmp_u64_desc(a->total, b->total);
    if (c) return c;
    if (a->comm != b->comm) return a->comm < b->comm ? -1 : 1;
    return (a->region > b->region) - (a->region < b->region);
}

static int cmp_mregion(const void *x, const void *y) {
    const struct r_mregion *a = x, *b = y;
    if (a->member != b->member) return a->member < b->member ? -1 : 1;
    int c = cmp_u64_desc(a->total, b->total);
    if (c) return c;
    c = strcmp(a->name, b->name);
    return c ? c : (a->region > b->region) - (a->region < b->region);
}

static int cmp_mrank(const void *x, const void *y) {
    const struct r_mrank *a = x, *b = y;
    if (a->rank != b->rank) return a->rank < b->rank ? -1 : 1;
    return (a->member > b->member) - (a->member < b->member);
}

static const char *otf2_type_name(uint8_t t) {
    switch (t) {
    case OTF2_TYPE_INT64: return "INT64";
    case OTF2_TYPE_UINT64: return "UINT64";
    case OTF2_TYPE_DOUBLE: return "DOUBLE";
    default: return "other";
    }
}

static const char *otf2_mode_name(uint8_t m) {
    switch (m) {
    case OTF2_METRIC_ACCUMULATED_START: return "ACCUMULATED_START";
    case OTF2_METRIC_ACCUMULATED_POINT: return "ACCUMULATED_POINT";
    case OTF2_METRIC_ACCUMULATED_LAST: return "ACCUMULATED_LAST";
    case OTF2_METRIC_ACCUMULATED_NEXT: return "ACCUMULATED_NEXT";
    case OTF2_METRIC_ABSOLUTE_POINT: return "ABSOLUTE_POINT";
    case OTF2_METRIC_ABSOLUTE_LAST: return "ABSOLUTE_LAST";
    case OTF2_METRIC_ABSOLUTE_NEXT: return "ABSOLUTE_NEXT";
    case OTF2_METRIC_RELATIVE_POINT: return "RELATIVE_POINT";
    case OTF2_METRIC_RELATIVE_LAST: return "RELATIVE_LAST";
    case OTF2_METRIC_RELATIVE_NEXT: return "RELATIVE_NEXT";
    default: return "other";
    }
}

/* PAPI counters (A19): counters, per region and per rank, from T_METRIC / T_METRIC_RANK. */
static int build_papi(struct agg_report *r, const struct agg_defs *d, const struct agg_stats *s) {
    uint32_t used = 0;
    for (uint32_t m = 0; m < d->nmmembers; m++) used += d->mmembers[m].defined;
    r->pc = calloc(used + 1, sizeof(*r->pc));
    r->pm = calloc(count_table(s, T_METRIC) + 1, sizeof(*r->pm));
    r->pr = calloc((size_t)d->nranks * (used ? used : 1) + 1, sizeof(*r->pr));
    if (!r->pc || !r->pm || !r->pr) return -1;
    for (uint32_t m = 0; m < d->nmmembers; m++) {
        const struct agg_mmember *mm = &d->mmembers[m];
        if (!mm->defined) continue;
        r->pc[r->npc++] = (struct r_counter){m, agg_str(d, mm->name), agg_str(d, mm->unit), agg_str(d, mm->descr),
                                             otf2_type_name(mm->type), mm->scaled ? "scaled" : otf2_mode_name(mm->mode),
                                             agg_member_summed(mm), 0};
    }
    for (uint32_t i = 0; i < s->n; i++) {
        const struct agg_key *key = &s->keys[i];
        const struct agg_acc *a = &s->accs[i];
        if (key->table != T_METRIC || key->b >= d->nmmembers || key->a >= d->nregions) continue;
        const struct agg_mmember *mm = &d->mmembers[key->b];
        uint8_t hc = d->regions[key->a].host_class;
        bool ns = strcmp(agg_str(d, mm->unit), "ns") == 0;
        r->pm[r->npm++] = (struct r_mregion){(uint32_t)key->b, key->a, agg_str(d, mm->name), agg_str(d, mm->unit),
                                             rname(d, key->a), hc == AGG_H_MPI ? "MPI" : hc == AGG_H_L0 ? "Level Zero" : "other",
                                             a->n, a->sum, a->min, a->max, a->x[0], mean_of(a),
                                             ns ? ratio(a->sum, a->x[0]) : -1.0};
    }
    qsort(r->pm, r->npm, sizeof(*r->pm), cmp_mregion);
    for (uint32_t q = 0; q < d->nranks; q++) {
        for (uint32_t c = 0; c < r->npc; c++) {
            uint32_t m = r->pc[c].member;
            const struct agg_acc *sp = agg_stats_find(s, T_METRIC_RANK, m, q, AGG_MK_SPAN);
            const struct agg_acc *mp = agg_stats_find(s, T_METRIC_RANK, m, q, AGG_MK_MPI);
            const struct agg_acc *l0 = agg_stats_find(s, T_METRIC_RANK, m, q, AGG_MK_L0);
            if (!sp && !mp && !l0) continue;
            r->pc[c].ranks++;
            r->pr[r->npr++] = (struct r_mrank){q, m, r->pc[c].name, r->pc[c].unit, sp ? sp->n : 0, sp ? sp->sum : 0,
                                               mp ? mp->sum : 0, mp ? mp->n : 0, l0 ? l0->sum : 0, l0 ? l0->n : 0};
        }
    }
    qsort(r->pr, r->npr, sizeof(*r->pr), cmp_mrank);
    for (uint32_t i = 0; i < s->n; i++) {
        if (s->keys[i].table != T_MQ) continue;
        r->dq_m_unpaired += s->accs[i].x[0];
        r->dq_m_decreasing += s->accs[i].x[1];
        r->dq_m_one_sided += s->accs[i].x[2];
    }
    return 0;
}

static int cmp_strag(const void *x, const void *y) {
    const struct r_strag *a = x, *b = y;
    int c = cmp_u64_desc(a->top_ns, b->top_ns);
    return c ? c : (a->rank > b->rank) - (a->rank < b->rank);
}

/* ---------------------------------------------------------------- build */
#define ALLOC(p, n)                                                                                                    \
    do {                                                                                                               \
        (p) = calloc((size_t)(n) + 1, sizeof(*(p)));                                                                   \
        if (!(p)) goto oom;                                                                                            \
    } while (0)

struct agg_report *agg_report_build(const struct agg_defs *d, const struct agg_stats *s, const struct agg_report_opts *o) {
    struct agg_report *r = calloc(1, sizeof(*r));
    if (!r) return NULL;
    r->d = d;
    r->o = *o;
    snprintf(r->archive, sizeof(r->archive), "%s", o->archive ? o->archive : "");
    g_sort = o->sort ? o->sort : "total";
    /* job span and rank presence */
    r->first = UINT64_MAX;
    for (uint32_t k = 0; k < s->nranks; k++) {
        const struct agg_rank *x = &s->ranks[k];
        if (!x->present) continue;
        r->ranks_read++;
        r->events += x->events;
        if (x->events && x->first < r->first) r->first = x->first;
        if (x->events && x->last > r->last) r->last = x->last;
    }
    if (r->first == UINT64_MAX) r->first = r->last = 0;
    r->wall = r->last - r->first;

    /* kernels */
    ALLOC(r->k, count_table(s, T_KERNEL));
    uint64_t *rank_tot = calloc(d->nranks + 1, sizeof(uint64_t));
    if (!rank_tot) goto oom;
    for (uint32_t i = 0; i < s->n; i++) {
        if (s->keys[i].table != T_KERNEL) continue;
        const struct agg_acc *a = &s->accs[i];
        struct r_kernel *k = &r->k[r->nk++];
        k->region = s->keys[i].a;
        k->name = rname(d, k->region);
        k->calls = a->n;
        k->total = a->sum;
        k->min = a->min;
        k->max = a->max;
        k->mean = mean_of(a);
        k->sd = sd_of(a);
        k->p50 = clampq(agg_sketch_quantile(a->sk, a->n, 50), a);
        k->p90 = clampq(agg_sketch_quantile(a->sk, a->n, 90), a);
        k->p99 = clampq(agg_sketch_quantile(a->sk, a->n, 99), a);
        k->top = a->top;
        r->k_total += a->sum;
        /* imbalance: per-rank totals over every rank of the job */
        memset(rank_tot, 0, (d->nranks + 1) * sizeof(uint64_t));
        for (uint32_t j = 0; j < s->n; j++)
            if (s->keys[j].table == T_KERNEL_RANK && s->keys[j].a == k->region && s->keys[j].b < d->nranks)
                rank_tot[s->keys[j].b] += s->accs[j].sum;
        long double sum = 0, sq = 0;
        uint32_t n = d->nranks ? d->nranks : 1;
        for (uint32_t q = 0; q < d->nranks; q++) {
            sum += rank_tot[q];
            sq += (long double)rank_tot[q] * rank_tot[q];
            if (rank_tot[q]) k->ranks_running++;
            if (rank_tot[q] > k->rank_max) {
                k->rank_max = rank_tot[q];
                k->max_rank = q;
            }
        }
        long double m = sum / n, var = sq / n - m * m;
        k->rank_mean = (double)m;
        k->rank_cv = m > 0 && var > 0 ? (double)(sqrtl(var) / m) : 0.0;
        k->max_over_mean = m > 0 ? (double)((long double)k->rank_max / m) : 0.0;
        k->max_host = rep_host_of_rank(r, k->max_rank);
        /* the device of the slowest rank's largest share of this kernel */
        uint64_t best = 0;
        k->max_device = "";
        for (uint32_t j = 0; j < s->n; j++)
            if (s->keys[j].table == T_KERNEL_QUEUE && s->keys[j].a == k->region) {
                uint32_t li = (uint32_t)s->keys[j].b;
                if (li < d->nlocs && d->locs[li].proc == k->max_rank && s->accs[j].sum > best) {
                    best = s->accs[j].sum;
                    k->max_device = rep_node_name(r, d->locs[li].device);
                }
            }
    }
    free(rank_tot);
    for (uint32_t i = 0; i < r->nk; i++) r->k[i].share = ratio(r->k[i].total, r->k_total);
    qsort(r->k, r->nk, sizeof(*r->k), cmp_kernel);
    /* per rank / device / queue rows, ordered like the kernels */
    uint32_t *korder = calloc(d->nregions + 1, sizeof(uint32_t));
    if (!korder) goto oom;
    for (uint32_t i = 0; i < r->nk; i++) korder[r->k[i].region] = i;
    ALLOC(r->kr, count_table(s, T_KERNEL_RANK));
    ALLOC(r->kd, count_table(s, T_KERNEL_DEV));
    ALLOC(r->kq, count_table(s, T_KERNEL_QUEUE));
    for (uint32_t i = 0; i < s->n; i++) {
        const struct agg_key *key = &s->keys[i];
        const struct agg_acc *a = &s->accs[i];
        struct r_rowk *w;
        if (key->table == T_KERNEL_RANK) w = &r->kr[r->nkr++], *w = (struct r_rowk){.rank = (uint32_t)key->b, .node = AGG_NONE, .loc = AGG_NONE};
        else if (key->table == T_KERNEL_DEV) w = &r->kd[r->nkd++], *w = (struct r_rowk){.rank = AGG_NONE, .node = (uint32_t)key->b, .loc = AGG_NONE};
        else if (key->table == T_KERNEL_QUEUE) {
            uint32_t li = (uint32_t)key->b;
            w = &r->kq[r->nkq++];
            *w = (struct r_rowk){.loc = li, .rank = li < d->nlocs ? d->locs[li].proc : AGG_NONE,
                                 .node = li < d->nlocs ? d->locs[li].device : AGG_NONE};
        } else continue;
        w->region = korder[key->a < d->nregions ? key->a : 0]; /* sort key: kernel order */
        w->calls = a->n;
        w->total = a->sum;
        w->min = a->min;
        w->max = a->max;
        w->mean = mean_of(a);
    }
    qsort(r->kr, r->nkr, sizeof(*r->kr), cmp_rowk);
    qsort(r->kd, r->nkd, sizeof(*r->kd), cmp_rowk);
    qsort(r->kq, r->nkq, sizeof(*r->kq), cmp_rowk);
    for (uint32_t i = 0; i < r->nkr; i++) r->kr[i].region = r->k[r->kr[i].region].region;
    for (uint32_t i = 0; i < r->nkd; i++) r->kd[i].region = r->k[r->kd[i].region].region;
    for (uint32_t i = 0; i < r->nkq; i++) r->kq[i].region = r->k[r->kq[i].region].region;
    free(korder);

    /* transfers */
    ALLOC(r->x, count_table(s, T_XFER));
    ALLOC(r->xs, count_table(s, T_XFER_SIZE));
    ALLOC(r->xr, count_table(s, T_XFER_RANK));
    for (uint32_t i = 0; i < s->n; i++) {
        const struct agg_key *key = &s->keys[i];
        const struct agg_acc *a = &s->accs[i];
        struct r_xfer *w;
        if (key->table == T_XFER) w = &r->x[r->nx++];
        else if (key->table == T_XFER_SIZE) w = &r->xs[r->nxs++];
        else if (key->table == T_XFER_RANK) w = &r->xr[r->nxr++];
        else continue;
        memset(w, 0, sizeof(*w));
        w->xfer = key->a;
        agg_xfer_name(w->xfer, w->mem, sizeof(w->mem));
        w->kind = agg_xfer_kind(w->xfer);
        w->dir = agg_xfer_direction(w->xfer);
        w->calls = a->n;
        w->bytes = a->bytes;
        w->busy = a->sum;
        w->min = a->min;
        w->max = a->max;
        w->mean = mean_of(a);
        w->bw = a->sum ? (double)a->bytes * 1e9 / (double)a->sum : 0.0;
        w->p50_bw = a->sk ? agg_sketch_quantile(a->sk, a->sk ? a->n : 0, 50) : 0;
        if (key->table == T_XFER_SIZE) {
            w->cls = (uint32_t)key->b;
            w->lo = w->cls ? (uint64_t)1 << (w->cls - 1) : 0;
            w->hi = w->cls ? (w->cls >= 64 ? UINT64_MAX : (uint64_t)1 << w->cls) : 0;
        }
        if (key->table == T_XFER_RANK) w->rank = (uint32_t)key->b;
    }
    /* the bandwidth sketch counts only transfers with bytes and time: its total is its own */
    for (uint32_t pass = 0; pass < 2; pass++) {
        struct r_xfer *v = pass ? r->xs : r->x;
        uint32_t nv = pass ? r->nxs : r->nx;
        for (uint32_t i = 0; i < nv; i++) {
            const struct agg_acc *a = agg_stats_find(s, pass ? T_XFER_SIZE : T_XFER, v[i].xfer, pass ? v[i].cls : 0, 0);
            uint64_t tot = 0;
            if (a && a->sk)
                for (uint32_t b = 0; b < a->sk->n; b++) tot += a->sk->c[b];
            v[i].p50_bw = a && a->sk ? agg_sketch_quantile(a->sk, tot, 50) : 0;
        }
    }
    qsort(r->x, r->nx, sizeof(*r->x), cmp_xfer);
    qsort(r->xs, r->nxs, sizeof(*r->xs), cmp_xsize);
    qsort(r->xr, r->nxr, sizeof(*r->xr), cmp_xfer);

    /* barriers, host API, MPI functions */
    ALLOC(r->bar, count_table(s, T_BARRIER));
    ALLOC(r->api, count_table(s, T_API));
    ALLOC(r->mpi, count_table(s, T_MPI));
    for (uint32_t i = 0; i < s->n; i++) {
        const struct agg_key *key = &s->keys[i];
        const struct agg_acc *a = &s->accs[i];
        struct r_simple *w;
        if (key->table == T_BARRIER) w = &r->bar[r->nbar++];
        else if (key->table == T_API) {
            if (key->a < d->nregions && d->regions[key->a].host_class == AGG_H_MEASUREMENT) {
                r->dq_flush_ns += a->sum;
                continue;
            }
            w = &r->api[r->napi++];
            r->api_total += a->sum;
        } else if (key->table == T_MPI) {
            w = &r->mpi[r->nmpi++];
            r->mpi_total += a->sum;
        } else continue;
        *w = (struct r_simple){.region = key->a, .name = rname(d, key->a), .calls = a->n, .total = a->sum, .min = a->min,
                               .max = a->max, .bytes = a->bytes, .mean = mean_of(a)};
    }
    for (uint32_t i = 0; i < r->napi; i++) r->api[i].share = ratio(r->api[i].total, r->api_total);
    for (uint32_t i = 0; i < r->nmpi; i++) r->mpi[i].share = ratio(r->mpi[i].total, r->mpi_total);
    qsort(r->bar, r->nbar, sizeof(*r->bar), cmp_simple);
    qsort(r->api, r->napi, sizeof(*r->api), cmp_simple);
    qsort(r->mpi, r->nmpi, sizeof(*r->mpi), cmp_simple);

    /* collectives by communicator */
    ALLOC(r->coll, count_table(s, T_COLL));
    for (uint32_t i = 0; i < s->n; i++) {
        if (s->keys[i].table != T_COLL) continue;
        const struct agg_acc *a = &s->accs[i];
        struct r_coll *w = &r->coll[r->ncoll++];
        w->region = s->keys[i].a;
        w->comm = (uint32_t)s->keys[i].b;
        w->name = rname(d, w->region);
        const struct agg_comm *c = w->comm < d->ncomms && d->comms[w->comm].defined ? &d->comms[w->comm] : NULL;
        w->comm_size = c ? c->size : 0;
        if (c && agg_str(d, c->name)[0]) snprintf(w->comm_name, sizeof(w->comm_name), "%s", agg_str(d, c->name));
        else snprintf(w->comm_name, sizeof(w->comm_name), "comm %u%s", w->comm, c && c->inter ? " (inter)" : "");
        w->calls = a->n;
        w->total = a->sum;
        w->bytes = a->bytes;
        w->mean = mean_of(a);
    }
    qsort(r->coll, r->ncoll, sizeof(*r->coll), cmp_coll);

    /* MPI per rank */
    ALLOC(r->mr, d->nranks);
    for (uint32_t q = 0; q < s->nranks; q++) {
        const struct agg_rank *x = &s->ranks[q];
        if (!x->present) continue;
        struct r_mpirank *w = &r->mr[r->nmr++];
        w->rank = q;
        w->mpi_ns = x->mpi_ns;
        w->kernel_ns = x->kernel_ns;
        w->wall = x->last > x->first ? x->last - x->first : 0;
        /* MPI time is only what was recorded: measurement-off time is not in the denominator */
        w->off = x->host_off_ns < w->wall ? x->host_off_ns : w->wall;
        w->denom = w->wall - w->off;
        w->share = ratio(w->mpi_ns, w->denom);
    }

    /* utilisation (union of busy intervals per rank and device) */
    ALLOC(r->u, count_table(s, T_DEVUTIL));
    ALLOC(r->ud, d->nnodes);
    for (uint32_t i = 0; i < s->n; i++) {
        if (s->keys[i].table != T_DEVUTIL) continue;
        const struct agg_acc *a = &s->accs[i];
        struct r_util *w = &r->u[r->nu++];
        w->rank = (uint32_t)s->keys[i].b;
        w->node = (uint32_t)s->keys[i].c;
        w->busy = a->sum;
        w->compute = a->x[0];
        w->copy = a->x[1];
        w->overlap = a->x[2];
        w->off = a->x[3];
        w->window = a->bytes;
        w->denom = w->window > w->off ? w->window - w->off : 0;
    }
    qsort(r->u, r->nu, sizeof(*r->u), cmp_util);
    for (uint32_t i = 0; i < r->nu; i++) {
        struct r_util *w = &r->u[i];
        w->util = ratio(w->busy, w->denom);
        w->util_compute = ratio(w->compute, w->denom);
        w->util_copy = ratio(w->copy, w->denom);
        w->overlap_share = ratio(w->overlap, w->busy);
        r->job.busy += w->busy;
        r->job.compute += w->compute;
        r->job.copy += w->copy;
        r->job.overlap += w->overlap;
        r->job.off += w->off;
        r->job.window += w->window;
        r->job.denom += w->denom;
        /* per device node, in node order */
        uint32_t k;
        for (k = 0; k < r->nud && r->ud[k].node != w->node; k++) {
        }
        if (k == r->nud) r->ud[r->nud++] = (struct r_util){.node = w->node, .rank = 0};
        struct r_util *v = &r->ud[k];
        v->rank++; /* ranks using it */
        v->busy += w->busy;
        v->compute += w->compute;
        v->copy += w->copy;
        v->overlap += w->overlap;
        v->off += w->off;
        v->window += w->window;
        v->denom += w->denom;
    }
    for (uint32_t k = 0; k < r->nud; k++) {
        struct r_util *v = &r->ud[k];
        v->util = ratio(v->busy, v->denom);
        v->util_compute = ratio(v->compute, v->denom);
        v->util_copy = ratio(v->copy, v->denom);
        v->overlap_share = ratio(v->overlap, v->busy);
    }
    r->job.util = ratio(r->job.busy, r->job.denom);
    r->job.util_compute = ratio(r->job.compute, r->job.denom);
    r->job.util_copy = ratio(r->job.copy, r->job.denom);
    r->job.overlap_share = ratio(r->job.overlap, r->job.busy);
    ALLOC(r->gap, count_table(s, T_GAP));
    for (uint32_t i = 0; i < s->n; i++) {
        if (s->keys[i].table != T_GAP) continue;
        struct r_gap *g = &r->gap[r->ngap++];
        g->cls = s->keys[i].a;
        g->lo = g->cls ? (uint64_t)1 << (g->cls - 1) : 0;
        g->hi = g->cls >= 64 ? UINT64_MAX : (uint64_t)1 << g->cls;
        g->count = s->accs[i].n;
        g->total = s->accs[i].sum;
    }
    for (uint32_t i = 1; i < r->ngap; i++) /* few rows: insertion sort by class */
        for (uint32_t j = i; j > 0 && r->gap[j].cls < r->gap[j - 1].cls; j--) {
            struct r_gap t = r->gap[j];
            r->gap[j] = r->gap[j - 1];
            r->gap[j - 1] = t;
        }
    /* rank x time */
    r->nbins = s->nbins;
    r->bin_ns = s->nbins ? (d->span + s->nbins - 1) / s->nbins : 0;
    if (s->nbins) {
        r->umat = calloc((size_t)d->nranks * s->nbins + 1, sizeof(double));
        if (!r->umat) goto oom;
        for (uint32_t q = 0; q < d->nranks; q++) {
            const struct agg_rank *x = &s->ranks[q];
            for (uint32_t b = 0; b < s->nbins; b++) {
                uint64_t lo = d->t0 + (uint64_t)((unsigned __int128)d->span * b / s->nbins);
                uint64_t hi = d->t0 + (uint64_t)((unsigned __int128)d->span * (b + 1) / s->nbins);
                double cap = (double)(hi > lo ? hi - lo : 1) * (double)(x->ndev ? x->ndev : 1);
                r->umat[(size_t)q * s->nbins + b] = !x->present ? -1.0 : x->bins ? (double)x->bins[b] / cap : 0.0;
            }
        }
    }

    /* launch latency */
    const struct agg_acc *la = agg_stats_find(s, T_LAT_ALL, 0, 0, 0);
    if (la) {
        r->lat_all = (struct r_lat){.n = la->n, .min = la->min, .max = la->max, .mean = mean_of(la), .name = "all",
                                    .p50 = clampq(agg_sketch_quantile(la->sk, la->n, 50), la),
                                    .p90 = clampq(agg_sketch_quantile(la->sk, la->n, 90), la),
                                    .p99 = clampq(agg_sketch_quantile(la->sk, la->n, 99), la)};
    }
    ALLOC(r->lq, count_table(s, T_LAT_QUEUE));
    ALLOC(r->lk, count_table(s, T_LAT_REGION));
    for (uint32_t i = 0; i < s->n; i++) {
        const struct agg_key *key = &s->keys[i];
        const struct agg_acc *a = &s->accs[i];
        if (key->table == T_LAT_QUEUE) {
            uint32_t li = (uint32_t)key->b;
            r->lq[r->nlq++] = (struct r_lat){.loc = li, .rank = li < d->nlocs ? d->locs[li].proc : AGG_NONE,
                                             .region = AGG_NONE, .name = rep_loc_name(r, li), .n = a->n, .min = a->min,
                                             .max = a->max, .mean = mean_of(a)};
        } else if (key->table == T_LAT_REGION) {
            r->lk[r->nlk++] = (struct r_lat){.region = key->a, .loc = AGG_NONE, .rank = AGG_NONE, .name = rname(d, key->a),
                                             .n = a->n, .min = a->min, .max = a->max, .mean = mean_of(a),
                                             .p50 = clampq(agg_sketch_quantile(a->sk, a->n, 50), a),
                                             .p90 = clampq(agg_sketch_quantile(a->sk, a->n, 90), a),
                                             .p99 = clampq(agg_sketch_quantile(a->sk, a->n, 99), a)};
        }
    }
    qsort(r->lq, r->nlq, sizeof(*r->lq), cmp_lat);
    qsort(r->lk, r->nlk, sizeof(*r->lk), cmp_lat);

    /* stragglers over the top kernels */
    r->strag_kernels = r->nk < o->top ? r->nk : o->top;
    ALLOC(r->strag, d->nranks);
    for (uint32_t q = 0; q < d->nranks; q++) {
        if (!s->ranks[q].present) continue;
        struct r_strag *w = &r->strag[r->nstrag++];
        w->rank = q;
        w->mpi_ns = s->ranks[q].mpi_ns;
        for (uint32_t i = 0; i < r->strag_kernels; i++) {
            const struct agg_acc *a = agg_stats_find(s, T_KERNEL_RANK, r->k[i].region, q, 0);
            if (a) w->top_ns += a->sum;
        }
    }
    long double ssum = 0;
    for (uint32_t i = 0; i < r->nstrag; i++) ssum += r->strag[i].top_ns;
    for (uint32_t i = 0; i < r->nstrag; i++)
        r->strag[i].ratio = ssum > 0 ? (double)((long double)r->strag[i].top_ns * r->nstrag / ssum) : 0.0;
    qsort(r->strag, r->nstrag, sizeof(*r->strag), cmp_strag);

    if (build_papi(r, d, s) != 0) goto oom;

    /* data quality */
    r->dq_props = d->have_props;
    ALLOC(r->loc, d->nlocs);
    for (uint32_t li = 0; li < d->nlocs; li++) {
        const struct agg_loc *L = &d->locs[li];
        const struct agg_acc *a = agg_stats_find(s, T_LOC, 0, li, 0);
        struct r_loc *w = &r->loc[r->nloc++];
        *w = (struct r_loc){.li = li, .rank = L->proc, .defined = L->def_events, .recorded = L->p_events,
                            .clamped = L->p_clamped, .dropped = L->p_dropped, .props = L->have_props != 0,
                            .missing = L->missing};
        if (a) {
            w->read = a->n;
            w->metrics = a->sum;
            w->unclosed = a->x[0];
            w->badleave = a->x[1];
            w->offcount = a->x[2];
            w->offns = a->x[3];
            w->noffsets = a->bytes;
        }
        /* A4: in an MPI job every location with events has its rank's clock offsets */
        r->dq_no_offsets += d->mpi && w->read > 0 && w->noffsets == 0;
        r->dq_missing_locs += L->missing;
        r->dq_unclosed += w->unclosed;
        r->dq_badleave += w->badleave;
        r->dq_clamped += w->clamped;
        r->dq_dropped += w->dropped;
        r->dq_metrics += w->metrics;
        r->dq_short += !L->missing && w->read < w->defined;
    }
    ALLOC(r->rq, d->nranks);
    for (uint32_t q = 0; q < d->nranks; q++) {
        const struct agg_rank *x = &s->ranks[q];
        struct r_rankq *w = &r->rq[r->nrq++];
        *w = (struct r_rankq){.rank = q, .present = x->present != 0, .events = x->events, .cs_host_only = x->cs_host_only,
                              .cs_dev_only = x->cs_dev_only, .cs_repeat = x->cs_repeat, .lat_negative = x->lat_negative,
                              .lat_negative_max = x->lat_negative_max, .off_count = x->off_count, .off_ns = x->off_ns,
                              .noffsets = x->noffsets, .off_t0 = x->off_t0, .off_t1 = x->off_t1, .off_v0 = x->off_v0,
                              .off_v1 = x->off_v1, .first = x->first, .last = x->last};
        memcpy(&w->sd0, &x->off_sd0, sizeof(double));
        memcpy(&w->sd1, &x->off_sd1, sizeof(double));
        if (x->noffsets >= 2 && x->off_t1 > x->off_t0)
            w->drift_ppm = (double)(x->off_v1 - x->off_v0) * 1e6 / (double)(x->off_t1 - x->off_t0);
        /* missing: not read, or every location that should have events lacks its file */
        uint32_t with_events = 0, missing = 0;
        for (uint32_t i = 0; q < d->nprocs && i < d->procs[q].nlocs; i++) {
            const struct agg_loc *L = &d->locs[d->procs[q].locs[i]];
            with_events += L->def_events > 0;
            missing += L->missing;
        }
        r->dq_missing_ranks += !x->present || (with_events > 0 && missing == with_events);
        /* A20: the rank's data end (each of its locations carries it, on the rank's clock) */
        uint64_t end = 0;
        for (uint32_t i = 0; q < d->nprocs && i < d->procs[q].nlocs; i++) {
            uint64_t e = d->locs[d->procs[q].locs[i]].p_data_end;
            end = e > end ? e : end;
        }
        if (end) {
            long double off = 0;
            if (x->noffsets == 1 || (x->noffsets >= 2 && x->off_t1 == x->off_t0)) off = (long double)x->off_v0;
            else if (x->noffsets >= 2)
                off = (long double)x->off_v0 + ((long double)end - (long double)x->off_t0) *
                                                   (long double)(x->off_v1 - x->off_v0) /
                                                   ((long double)x->off_t1 - (long double)x->off_t0);
            w->data_end = (uint64_t)((long double)end + off);
        }
        r->dq_off_count += x->off_count;
        r->dq_off_ns += x->off_ns;
        r->dq_cs_host_only += x->cs_host_only;
        r->dq_cs_dev_only += x->cs_dev_only;
        r->dq_cs_repeat += x->cs_repeat;
        r->dq_lat_negative += x->lat_negative;
    }
    return r;
oom:
    agg_report_free(r);
    return NULL;
}

void agg_report_free(struct agg_report *r) {
    if (!r) return;
    free(r->k), free(r->kr), free(r->kd), free(r->kq);
    free(r->x), free(r->xs), free(r->xr), free(r->bar);
    free(r->u), free(r->ud), free(r->gap), free(r->umat);
    free(r->lq), free(r->lk), free(r->mpi), free(r->mr), free(r->coll), free(r->api), free(r->strag);
    free(r->loc), free(r->rq);
    free(r->pc), free(r->pm), free(r->pr);
    free(r);
}

/* ---------------------------------------------------------------- text */
struct col {
    const char *head;
    int width;   /* 0 = the flexible name column */
    bool left;
};

struct tab {
    FILE *f;
    const struct col *c;
    int n, namew;
    bool hide[16];
};

/* Columns that do not fit the width are left out, from the right (the name column and the first
 * two value columns always stay). */
static void tab_start(struct tab *t, FILE *f, const struct col *c, int n, uint32_t width) {
    t->f = f;
    t->c = c;
    t->n = n;
    memset(t->hide, 0, sizeof(t->hide));
    int fixed = 0;
    for (int i = 0; i < n; i++) fixed += c[i].width ? c[i].width + 1 : 0;
    for (int i = n - 1; i > 2 && fixed + 16 + 1 > (int)width; i--)
        if (c[i].width) {
            t->hide[i] = true;
            fixed -= c[i].width + 1;
        }
    t->namew = (int)width - fixed - 1;
    if (t->namew < 16) t->namew = 16;
    if (t->namew > 60) t->namew = 60;
    bool first = true;
    for (int i = 0; i < n; i++) {
        if (t->hide[i]) continue;
        int w = c[i].width ? c[i].width : t->namew;
        fprintf(f, "%s%*s", first ? "" : " ", c[i].left ? -w : w, c[i].head);
        first = false;
    }
    fputc('\n', f);
}

/* cells: one string per column */
static void tab_row(struct tab *t, const char **cell) {
    bool first = true;
    for (int i = 0; i < t->n; i++) {
        if (t->hide[i]) continue;
        int w = t->c[i].width ? t->c[i].width : t->namew;
        char buf[256];
        const char *s = cell[i];
        if ((int)strlen(s) > w) { /* long names: keep the start and the end */
            int keep = w - 3, head = keep - keep / 3;
            snprintf(buf, sizeof(buf), "%.*s...%s", head, s, s + strlen(s) - (keep - head));
            s = buf;
        }
        fprintf(t->f, "%s%*s", first ? "" : " ", t->c[i].left ? -w : w, s);
        first = false;
    }
    fputc('\n', t->f);
}

#define NS(buf, v) (agg_fmt_ns(buf, sizeof(buf), (double)(v)), buf)
#define PCT(buf, v) (snprintf(buf, sizeof(buf), "%.1f%%", 100.0 * (v)), buf)
#define U64(buf, v) (snprintf(buf, sizeof(buf), "%llu", (unsigned long long)(v)), buf)

static void section(FILE *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void section(FILE *f, const char *fmt, ...) {
    va_list va;
    va_start(va, fmt);
    fputs("\n== ", f);
    vfprintf(f, fmt, va);
    fputc('\n', f);
    va_end(va);
}

/* a counter's value: ns counters as times, others as integers (means with one decimal) */
static const char *cval(char *buf, size_t n, const char *unit, double v, bool integer) {
    if (!strcmp(unit, "ns")) agg_fmt_ns(buf, n, v);
    else if (integer) snprintf(buf, n, "%.0f", v);
    else snprintf(buf, n, "%.1f", v);
    return buf;
}

static void text_papi(const struct agg_report *r, FILE *f, uint32_t W, uint32_t top) {
    char a[64], b[64], c[64], e[64], g[64], h[64], k[64], l[64];
    section(f, "PAPI counters (A19): counter value at a region's Leave - at its Enter, over the instances with both; "
               "exact sums");
    for (uint32_t i = 0; i < r->npc; i++) {
        const struct r_counter *x = &r->pc[i];
        fprintf(f, "%s [%s]: %s; %s %s on %u rank%s%s\n", x->name, x->unit, x->descr, x->type, x->mode, x->ranks,
                x->ranks == 1 ? "" : "s", x->summed ? "" : " (not summed: not an accumulating integer counter)");
    }
    static const struct col cl[] = {{"counter", 18, true}, {"region", 0, true}, {"kind", 10, true}, {"calls", 8, false},
                                    {"total", 11, false}, {"mean", 11, false}, {"min", 11, false}, {"max", 11, false},
                                    {"of time", 7, false}};
    struct tab t;
    tab_start(&t, f, cl, 9, W);
    uint32_t shown = 0, member = UINT32_MAX;
    for (uint32_t i = 0; i < r->npm; i++) {
        const struct r_mregion *x = &r->pm[i];
        if (x->member != member) member = x->member, shown = 0;
        if (shown++ >= top) continue; /* the top regions of each counter */
        if (x->of_time >= 0) snprintf(h, sizeof(h), "%.1f%%", 100.0 * x->of_time);
        else snprintf(h, sizeof(h), "-");
        const char *cells[] = {x->counter, x->name, x->kind, U64(a, x->calls), cval(b, sizeof(b), x->unit, (double)x->total, true),
                               cval(c, sizeof(c), x->unit, x->mean, false), cval(e, sizeof(e), x->unit, (double)x->min, true),
                               cval(g, sizeof(g), x->unit, (double)x->max, true), h};
        tab_row(&t, cells);
    }
    fprintf(f, "\"of time\": the counter (in ns) / the regions' duration. Per rank: counted = first to last sample of each "
               "thread, summed over its threads; in MPI / in Level Zero = the region deltas above\n");
    static const struct col cr[] = {{"rank", 5, false}, {"counter", 0, true}, {"threads", 7, false}, {"counted", 12, false},
                                    {"in MPI", 12, false}, {"regions", 8, false}, {"in L0", 12, false}, {"regions", 8, false}};
    tab_start(&t, f, cr, 8, W < 110 ? W : 110);
    for (uint32_t i = 0; i < r->npr && i < 4 * top; i++) {
        const struct r_mrank *x = &r->pr[i];
        snprintf(a, sizeof(a), "%u", x->rank);
        const char *cells[] = {a, x->counter, U64(b, x->threads), cval(c, sizeof(c), x->unit, (double)x->counted, true),
                               cval(e, sizeof(e), x->unit, (double)x->in_mpi, true), U64(g, x->mpi_regions),
                               cval(k, sizeof(k), x->unit, (double)x->in_l0, true), U64(l, x->l0_regions)};
        tab_row(&t, cells);
    }
    if (r->npr > 4 * top) fprintf(f, "... %u more rows in the CSV/JSON\n", r->npr - 4 * top);
}

int agg_report_text(const struct agg_report *r, FILE *f) {
    const struct agg_defs *d = r->d;
    uint32_t W = r->o.width ? r->o.width : 120, top = r->o.top;
    char a[64], b[64], c[64], e[64], g[64], h[64], i_[64], j[64], k[64], l[64], m[64];
    fprintf(f, "zecoll-aggregate report: %s\n", r->archive);
    fprintf(f, "job: %u rank%s (%s) on %u host%s, %u device%s, %u thread and %u stream locations; wall %s; %llu events\n",
            d->nranks, d->nranks == 1 ? "" : "s", d->mpi ? "MPI" : "processes", d->nhosts, d->nhosts == 1 ? "" : "s",
            d->ndevices, d->ndevices == 1 ? "" : "s", d->nthreads, d->nstreams, NS(a, r->wall),
            (unsigned long long)r->events);
    fprintf(f, "percentiles: log-linear sketch, nearest rank, relative error <= %.2f%%; every percentage names its "
               "denominator\n", 100.0 * AGG_SKETCH_REL_ERROR);

    section(f, "Kernels: top %u of %u by %s; share = %% of all kernel time (%s)", top < r->nk ? top : r->nk, r->nk,
            r->o.sort ? r->o.sort : "total", NS(a, r->k_total));
    {
        static const struct col cl[] = {{"kernel", 0, true}, {"calls", 9, false}, {"total", 10, false}, {"share", 6, false},
                                        {"mean", 10, false}, {"min", 10, false}, {"max", 10, false}, {"stddev", 10, false},
                                        {"p50", 10, false}, {"p90", 10, false}, {"p99", 10, false}};
        struct tab t;
        tab_start(&t, f, cl, 11, W);
        for (uint32_t i = 0; i < r->nk && i < top; i++) {
            const struct r_kernel *x = &r->k[i];
            const char *cells[] = {x->name, U64(a, x->calls), NS(b, x->total), PCT(c, x->share), NS(e, x->mean),
                                   NS(g, x->min), NS(h, x->max), NS(i_, x->sd), NS(j, x->p50), NS(k, x->p90), NS(l, x->p99)};
            tab_row(&t, cells);
        }
    }
    section(f, "Imbalance across ranks (top %u kernels): per-rank total, mean over all %u ranks", top < r->nk ? top : r->nk,
            d->nranks);
    {
        static const struct col cl[] = {{"kernel", 0, true},   {"ranks", 6, false},   {"mean/rank", 10, false},
                                        {"max/rank", 10, false}, {"max/mean", 8, false}, {"cv", 6, false},
                                        {"slowest", 7, false}, {"host", 14, true},    {"device", 18, true}};
        struct tab t;
        tab_start(&t, f, cl, 9, W);
        for (uint32_t i = 0; i < r->nk && i < top; i++) {
            const struct r_kernel *x = &r->k[i];
            snprintf(c, sizeof(c), "%.2f", x->max_over_mean);
            snprintf(e, sizeof(e), "%.3f", x->rank_cv);
            snprintf(g, sizeof(g), "%u", x->max_rank);
            const char *cells[] = {x->name, U64(h, x->ranks_running), NS(a, x->rank_mean), NS(b, x->rank_max), c, e, g,
                                   x->max_host, x->max_device};
            tab_row(&t, cells);
        }
    }
    if (r->nstrag && r->strag_kernels) {
        section(f, "Straggler ranks: time in the top %u kernels; ratio = / mean over ranks; MPI time beside it",
                r->strag_kernels);
        static const struct col cl[] = {{"rank", 0, true}, {"top kernels", 12, false}, {"ratio", 6, false}, {"MPI time", 12, false}, {"host", 20, true}};
        struct tab t;
        tab_start(&t, f, cl, 5, W < 80 ? W : 80);
        for (uint32_t i = 0; i < r->nstrag && i < 5; i++) {
            const struct r_strag *x = &r->strag[i];
            snprintf(a, sizeof(a), "%u", x->rank);
            snprintf(c, sizeof(c), "%.2f", x->ratio);
            const char *cells[] = {a, NS(b, x->top_ns), c, NS(e, x->mpi_ns), rep_host_of_rank(r, x->rank)};
            tab_row(&t, cells);
        }
    }
    if (r->nk) {
        section(f, "Slowest instances of the top %u kernels (rank, location, start since the job's start)",
                top < r->nk ? (top < 5 ? top : 5) : (r->nk < 5 ? r->nk : 5));
        for (uint32_t i = 0; i < r->nk && i < top && i < 5; i++) {
            const struct r_kernel *x = &r->k[i];
            fprintf(f, "%s:", x->name);
            for (uint32_t q = 0; x->top && q < x->top->n; q++) {
                const struct agg_top_ent *t = &x->top->e[q];
                fprintf(f, "%s %s (rank %llu, %s, at %s)", q ? "," : "", NS(a, t->dur), (unsigned long long)t->rank,
                        rep_loc_name(r, agg_loc_index(d, t->loc)), NS(b, t->start > d->t0 ? t->start - d->t0 : 0));
            }
            fputc('\n', f);
        }
    }

    section(f, "Transfers and fills by memory (H host, D device, S shared, M other, I image); bandwidth = bytes / busy "
               "time (sum of durations)");
    {
        static const struct col cl[] = {{"kind", 0, true},     {"memory", 6, true},  {"dir", 5, true},
                                        {"calls", 9, false},   {"bytes", 11, false}, {"busy", 10, false},
                                        {"mean", 10, false},   {"bandwidth", 11, false}, {"median bw", 11, false}};
        struct tab t;
        tab_start(&t, f, cl, 9, W < 100 ? W : 100);
        for (uint32_t i = 0; i < r->nx; i++) {
            const struct r_xfer *x = &r->x[i];
            bool nob = x->xfer >> 16 != 1;
            if (nob) snprintf(b, sizeof(b), "n/a");
            else agg_fmt_bytes(b, sizeof(b), (double)x->bytes);
            if (nob) snprintf(g, sizeof(g), "n/a"), snprintf(h, sizeof(h), "n/a");
            else agg_fmt_rate(g, sizeof(g), x->bw), agg_fmt_rate(h, sizeof(h), (double)x->p50_bw);
            const char *cells[] = {x->kind, x->mem, x->dir, U64(a, x->calls), b, NS(c, x->busy), NS(e, x->mean), g, h};
            tab_row(&t, cells);
        }
        if (!r->nx) fprintf(f, "(none)\n");
    }
    if (r->nxs) {
        section(f, "Copies by size class (log2): bandwidth = bytes / busy time; median of the per-copy bandwidths");
        static const struct col cl[] = {{"memory", 0, true}, {"size", 22, true},  {"calls", 9, false},
                                        {"bytes", 11, false}, {"busy", 10, false}, {"bandwidth", 11, false},
                                        {"median bw", 11, false}};
        struct tab t;
        tab_start(&t, f, cl, 7, W < 100 ? W : 100);
        for (uint32_t i = 0; i < r->nxs; i++) {
            const struct r_xfer *x = &r->xs[i];
            if (x->xfer >> 16 != 1) continue;
            fmt_size_class(c, sizeof(c), x->cls);
            agg_fmt_bytes(e, sizeof(e), (double)x->bytes);
            agg_fmt_rate(g, sizeof(g), x->bw);
            agg_fmt_rate(h, sizeof(h), (double)x->p50_bw);
            snprintf(m, sizeof(m), "%s %s", x->mem, x->dir);
            const char *cells[] = {m, c, U64(a, x->calls), e, NS(b, x->busy), g, h};
            tab_row(&t, cells);
        }
    }
    if (r->nbar) {
        section(f, "Barriers (device time, not kernels)");
        static const struct col cl[] = {{"barrier", 0, true}, {"calls", 9, false}, {"total", 10, false}, {"mean", 10, false}, {"max", 10, false}};
        struct tab t;
        tab_start(&t, f, cl, 5, W < 100 ? W : 100);
        for (uint32_t i = 0; i < r->nbar; i++) {
            const struct r_simple *x = &r->bar[i];
            const char *cells[] = {x->name, U64(a, x->calls), NS(b, x->total), NS(c, x->mean), NS(e, x->max)};
            tab_row(&t, cells);
        }
    }

    section(f, "Device utilisation: union of busy intervals (kernels, transfers, fills) / (rank's wall time - measurement "
               "off)");
    fprintf(f, "job: %s busy of %s = %s (compute %s, copy %s); copy/compute overlap %s of busy time\n", NS(a, r->job.busy),
            NS(b, r->job.denom), PCT(c, r->job.util), PCT(e, r->job.util_compute), PCT(g, r->job.util_copy),
            PCT(h, r->job.overlap_share));
    {
        static const struct col cl[] = {{"device", 0, true},  {"ranks", 6, false},  {"busy", 10, false},
                                        {"util", 6, false},   {"compute", 8, false}, {"copy", 6, false},
                                        {"overlap", 8, false}};
        struct tab t;
        tab_start(&t, f, cl, 7, W < 100 ? W : 100);
        for (uint32_t i = 0; i < r->nud; i++) {
            const struct r_util *x = &r->ud[i];
            const char *cells[] = {rep_node_name(r, x->node), U64(a, x->rank), NS(b, x->busy), PCT(c, x->util),
                                   PCT(e, x->util_compute), PCT(g, x->util_copy), PCT(h, x->overlap_share)};
            tab_row(&t, cells);
        }
    }
    {
        fprintf(f, "per rank (lowest utilisation first, top %u):\n", top);
        static const struct col cl[] = {{"rank / device", 0, true}, {"busy", 10, false}, {"wall", 10, false},
                                        {"off", 10, false}, {"util", 6, false}, {"compute", 8, false}, {"copy", 6, false}};
        struct tab t;
        tab_start(&t, f, cl, 7, W < 100 ? W : 100);
        /* lowest first: a stable index order sorted by utilisation, then rank */
        uint32_t *idx = calloc(r->nu + 1, sizeof(uint32_t));
        for (uint32_t i = 0; idx && i < r->nu; i++) idx[i] = i;
        for (uint32_t i = 1; idx && i < r->nu; i++)
            for (uint32_t q = i; q > 0 && r->u[idx[q]].util < r->u[idx[q - 1]].util; q--) {
                uint32_t tmp = idx[q];
                idx[q] = idx[q - 1];
                idx[q - 1] = tmp;
            }
        for (uint32_t i = 0; idx && i < r->nu && i < top; i++) {
            const struct r_util *x = &r->u[idx[i]];
            snprintf(m, sizeof(m), "%u / %s", x->rank, rep_node_name(r, x->node));
            const char *cells[] = {m, NS(a, x->busy), NS(b, x->window), NS(c, x->off), PCT(e, x->util), PCT(g, x->util_compute),
                                   PCT(h, x->util_copy)};
            tab_row(&t, cells);
        }
        free(idx);
    }
    if (r->ngap) {
        uint64_t n = 0;
        for (uint32_t i = 0; i < r->ngap; i++) n += r->gap[i].count;
        fprintf(f, "idle gaps between busy periods (%llu): ", (unsigned long long)n);
        for (uint32_t i = 0; i < r->ngap; i++)
            fprintf(f, "%s<%s: %llu", i ? ", " : "", NS(a, (double)r->gap[i].hi), (unsigned long long)r->gap[i].count);
        fputc('\n', f);
    }

    section(f, "Launch latency: host Append -> device start (first execution of each Append)");
    if (r->lat_all.n) {
        fprintf(f, "all: %llu operations, mean %s, p50 %s, p90 %s, p99 %s, max %s\n", (unsigned long long)r->lat_all.n,
                NS(a, r->lat_all.mean), NS(b, r->lat_all.p50), NS(c, r->lat_all.p90), NS(e, r->lat_all.p99),
                NS(g, r->lat_all.max));
        static const struct col cl[] = {{"operation", 0, true}, {"count", 9, false}, {"mean", 10, false}, {"p50", 10, false},
                                        {"p90", 10, false}, {"p99", 10, false}, {"max", 10, false}};
        struct tab t;
        tab_start(&t, f, cl, 7, W < 110 ? W : 110);
        for (uint32_t i = 0; i < r->nlk && i < top; i++) {
            const struct r_lat *x = &r->lk[i];
            const char *cells[] = {x->name, U64(a, x->n), NS(b, x->mean), NS(c, x->p50), NS(e, x->p90), NS(g, x->p99), NS(h, x->max)};
            tab_row(&t, cells);
        }
        fprintf(f, "per queue (highest mean first, top %u):\n", top < 5 ? top : 5);
        static const struct col cq[] = {{"rank / queue", 0, true}, {"count", 9, false}, {"mean", 10, false}, {"min", 10, false}, {"max", 10, false}};
        tab_start(&t, f, cq, 5, W < 90 ? W : 90);
        for (uint32_t i = 0; i < r->nlq && i < top && i < 5; i++) {
            const struct r_lat *x = &r->lq[i];
            snprintf(m, sizeof(m), "%u / %s", x->rank, x->name);
            const char *cells[] = {m, U64(a, x->n), NS(b, x->mean), NS(c, x->min), NS(e, x->max)};
            tab_row(&t, cells);
        }
    } else {
        fprintf(f, "(no linked device records)\n");
    }

    if (r->nmpi) {
        section(f, "MPI: top %u functions; share = %% of all MPI time (%s)", top < r->nmpi ? top : r->nmpi, NS(a, r->mpi_total));
        static const struct col cl[] = {{"function", 0, true}, {"calls", 9, false}, {"total", 10, false}, {"share", 6, false},
                                        {"mean", 10, false}, {"max", 10, false}, {"bytes", 11, false}};
        struct tab t;
        tab_start(&t, f, cl, 7, W < 100 ? W : 100);
        for (uint32_t i = 0; i < r->nmpi && i < top; i++) {
            const struct r_simple *x = &r->mpi[i];
            agg_fmt_bytes(h, sizeof(h), (double)x->bytes);
            const char *cells[] = {x->name, U64(a, x->calls), NS(b, x->total), PCT(c, x->share), NS(e, x->mean), NS(g, x->max), h};
            tab_row(&t, cells);
        }
        bool off = false;
        for (uint32_t i = 0; i < r->nmr; i++) off |= r->mr[i].off != 0;
        fprintf(f, "per rank: MPI time / rank's wall time%s:", off ? " while recording (wall - measurement off)" : "");
        for (uint32_t i = 0; i < r->nmr && i < 16; i++) fprintf(f, " %u: %s", r->mr[i].rank, PCT(a, r->mr[i].share));
        fprintf(f, "%s\n", r->nmr > 16 ? " ... (all in the CSV/JSON)" : "");
        if (r->ncoll) {
            fprintf(f, "collectives by communicator (top %u):\n", top);
            static const struct col cc[] = {{"communicator", 0, true}, {"size", 5, false}, {"function", 22, true},
                                            {"calls", 9, false}, {"total", 10, false}, {"bytes", 11, false}};
            tab_start(&t, f, cc, 6, W < 100 ? W : 100);
            for (uint32_t i = 0; i < r->ncoll && i < top; i++) {
                const struct r_coll *x = &r->coll[i];
                agg_fmt_bytes(e, sizeof(e), (double)x->bytes);
                const char *cells[] = {x->comm_name, U64(a, x->comm_size), x->name, U64(b, x->calls), NS(c, x->total), e};
                tab_row(&t, cells);
            }
        }
    }
    if (r->napi) {
        section(f, "Host Level Zero API: top %u; share = %% of all API time (%s); return codes are not in the archive",
                top < r->napi ? top : r->napi, NS(a, r->api_total));
        static const struct col cl[] = {{"function", 0, true}, {"calls", 9, false}, {"total", 10, false}, {"share", 6, false},
                                        {"mean", 10, false}, {"max", 10, false}};
        struct tab t;
        tab_start(&t, f, cl, 6, W < 100 ? W : 100);
        for (uint32_t i = 0; i < r->napi && i < top; i++) {
            const struct r_simple *x = &r->api[i];
            const char *cells[] = {x->name, U64(a, x->calls), NS(b, x->total), PCT(c, x->share), NS(e, x->mean), NS(g, x->max)};
            tab_row(&t, cells);
        }
    }

    if (r->npc) text_papi(r, f, W, top);

    section(f, "Data quality");
    fprintf(f, "ranks: %u defined, %u read%s; locations: %u (%llu with a missing event file, %llu with fewer events than "
               "defined)\n",
            d->nranks, r->ranks_read, r->dq_missing_ranks ? " (some missing)" : "", d->nlocs,
            (unsigned long long)r->dq_missing_locs, (unsigned long long)r->dq_short);
    if (r->dq_props)
        fprintf(f, "collector counts: %llu records clamped (completed out of order), %llu dropped\n",
                (unsigned long long)r->dq_clamped, (unsigned long long)r->dq_dropped);
    else
        fprintf(f, "collector counts: clamped/dropped unknown (the archive has no zecoll:: location properties)\n");
    if (d->salvaged[0]) {
        fprintf(f, "salvaged: rebuilt by zecoll salvage from the journal of a run that died (%s); data ends at "
                   "(after the start):",
                d->salvaged);
        uint32_t shown = 0;
        for (uint32_t i = 0; i < r->nrq && shown < 16; i++) {
            const struct r_rankq *x = &r->rq[i];
            if (!x->data_end) continue;
            shown++;
            fprintf(f, " rank %u %s;", x->rank, NS(a, (double)(x->data_end > r->first ? x->data_end - r->first : 0)));
        }
        fprintf(f, "%s\n", r->nrq > 16 ? " ..." : "");
    }
    fprintf(f, "unmatched: %llu regions never left, %llu Leaves without their Enter; %llu Appends without a device record, "
               "%llu device records without an Append; %llu re-executions of recorded lists\n",
            (unsigned long long)r->dq_unclosed, (unsigned long long)r->dq_badleave, (unsigned long long)r->dq_cs_host_only,
            (unsigned long long)r->dq_cs_dev_only, (unsigned long long)r->dq_cs_repeat);
    fprintf(f, "measurement off: %llu windows, %s (summed over locations); collector's own buffer flushes %s\n",
            (unsigned long long)r->dq_off_count, NS(a, r->dq_off_ns), NS(b, r->dq_flush_ns));
    fprintf(f, "PAPI metric records: %llu read; %llu not right before an Enter/Leave at their time (or of an unknown class), "
               "%llu values lower than the thread's previous one, %llu regions with counters at one end only\n",
            (unsigned long long)r->dq_metrics, (unsigned long long)r->dq_m_unpaired, (unsigned long long)r->dq_m_decreasing,
            (unsigned long long)r->dq_m_one_sided);
    if (r->dq_lat_negative) fprintf(f, "%llu device starts earlier than their Append (clock conversion error)\n",
                                    (unsigned long long)r->dq_lat_negative);
    if (d->mpi) {
        if (r->dq_no_offsets)
            fprintf(f, "%llu locations with events have no clock offsets: their times are on their own clock\n",
                    (unsigned long long)r->dq_no_offsets);
        fprintf(f, "clock offsets (to rank 0; stddev = measurement uncertainty):");
        uint32_t shown = 0;
        for (uint32_t i = 0; i < r->nrq && shown < 8; i++) {
            const struct r_rankq *x = &r->rq[i];
            if (!x->present) continue;
            shown++;
            if (x->noffsets == 0) fprintf(f, " %u: none;", x->rank);
            else fprintf(f, " %u: %+lld..%+lld ns (sd %.0f ns, drift %.2f ppm);", x->rank, (long long)x->off_v0,
                         (long long)x->off_v1, x->sd0 > x->sd1 ? x->sd0 : x->sd1, x->drift_ppm);
        }
        fprintf(f, "%s\n", r->nrq > 8 ? " ..." : "");
    }
    return ferror(f) ? -1 : 0;
}

/* ---------------------------------------------------------------- CSV */
static void csv_str(FILE *f, const char *s) {
    bool q = strpbrk(s, ",\"\n") != NULL;
    if (!q) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"') fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

static FILE *csv_open(const char *dir, const char *name, const char *header, struct agg_err *e) {
    char path[PATH_MAX + 64];
    snprintf(path, sizeof(path), "%s/%s.csv", dir, name);
    FILE *f = fopen(path, "w");
    if (!f) agg_err_set(e, path, "cannot write (%s)", strerror(errno));
    else fprintf(f, "%s\n", header);
    return f;
}

#define LLU(x) ((unsigned long long)(x))

int agg_report_csv(const struct agg_report *r, const char *dir, struct agg_err *e) {
    const struct agg_defs *d = r->d;
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
        agg_err_set(e, dir, "cannot create the CSV directory (%s)", strerror(errno));
        return -1;
    }
    FILE *f;
    char rp[PATH_MAX + 64];
    snprintf(rp, sizeof(rp), "%s/README.txt", dir);
    if ((f = fopen(rp, "w"))) {
        fprintf(f, "zecoll-aggregate report of %s, one CSV file per table (docs/report-schema.md).\n"
                   "Times in ns, sizes in bytes, bandwidths in bytes/s, shares as fractions of the denominator named in "
                   "the JSON report.\nPercentiles (p50_ns, p90_ns, p99_ns, median_bandwidth_Bps): nearest rank from a "
                   "log-linear sketch, relative error <= %.2f%%.\n",
                r->archive, 100.0 * AGG_SKETCH_REL_ERROR);
        fclose(f);
    }
    if (!(f = csv_open(dir, "kernels",
                       "kernel,calls,total_ns,share_of_kernel_time,mean_ns,min_ns,max_ns,stddev_ns,p50_ns,p90_ns,p99_ns,"
                       "ranks_running,rank_mean_ns,rank_max_ns,slowest_rank,max_over_mean,rank_cv",
                       e)))
        return -1;
    for (uint32_t i = 0; i < r->nk; i++) {
        const struct r_kernel *k = &r->k[i];
        csv_str(f, k->name);
        fprintf(f, ",%llu,%llu,%.6f,%.1f,%llu,%llu,%.1f,%llu,%llu,%llu,%u,%.1f,%llu,%u,%.4f,%.4f\n", LLU(k->calls),
                LLU(k->total), k->share, k->mean, LLU(k->min), LLU(k->max), k->sd, LLU(k->p50), LLU(k->p90), LLU(k->p99),
                k->ranks_running, k->rank_mean, LLU(k->rank_max), k->max_rank, k->max_over_mean, k->rank_cv);
    }
    fclose(f);
    const struct {
        const char *file, *key;
        const struct r_rowk *v;
        uint32_t n;
    } rk[] = {{"kernels_by_rank", "rank", r->kr, r->nkr}, {"kernels_by_device", "device", r->kd, r->nkd},
              {"kernels_by_queue", "rank,queue", r->kq, r->nkq}};
    for (int t = 0; t < 3; t++) {
        char head[200];
        snprintf(head, sizeof(head), "kernel,%s,calls,total_ns,mean_ns,min_ns,max_ns", rk[t].key);
        if (!(f = csv_open(dir, rk[t].file, head, e))) return -1;
        for (uint32_t i = 0; i < rk[t].n; i++) {
            const struct r_rowk *w = &rk[t].v[i];
            csv_str(f, rname(d, w->region));
            if (t == 0) fprintf(f, ",%u", w->rank);
            else if (t == 1) fputc(',', f), csv_str(f, rep_node_name(r, w->node));
            else fprintf(f, ",%u,", w->rank), csv_str(f, rep_loc_name(r, w->loc));
            fprintf(f, ",%llu,%llu,%.1f,%llu,%llu\n", LLU(w->calls), LLU(w->total), w->mean, LLU(w->min), LLU(w->max));
        }
        fclose(f);
    }
    if (!(f = csv_open(dir, "transfers", "kind,memory,direction,calls,bytes,busy_ns,mean_ns,min_ns,max_ns,bandwidth_Bps,median_bandwidth_Bps", e)))
        return -1;
    for (uint32_t i = 0; i < r->nx; i++) {
        const struct r_xfer *x = &r->x[i];
        fprintf(f, "%s,%s,%s,%llu,%llu,%llu,%.1f,%llu,%llu,%.1f,%llu\n", x->kind, x->mem, x->dir, LLU(x->calls), LLU(x->bytes),
                LLU(x->busy), x->mean, LLU(x->min), LLU(x->max), x->bw, LLU(x->p50_bw));
    }
    fclose(f);
    if (!(f = csv_open(dir, "transfers_by_size", "kind,memory,direction,size_from,size_to,calls,bytes,busy_ns,bandwidth_Bps,median_bandwidth_Bps", e)))
        return -1;
    for (uint32_t i = 0; i < r->nxs; i++) {
        const struct r_xfer *x = &r->xs[i];
        fprintf(f, "%s,%s,%s,%llu,%llu,%llu,%llu,%llu,%.1f,%llu\n", x->kind, x->mem, x->dir, LLU(x->lo), LLU(x->hi),
                LLU(x->calls), LLU(x->bytes), LLU(x->busy), x->bw, LLU(x->p50_bw));
    }
    fclose(f);
    if (!(f = csv_open(dir, "transfers_by_rank", "kind,memory,direction,rank,calls,bytes,busy_ns", e))) return -1;
    for (uint32_t i = 0; i < r->nxr; i++) {
        const struct r_xfer *x = &r->xr[i];
        fprintf(f, "%s,%s,%s,%u,%llu,%llu,%llu\n", x->kind, x->mem, x->dir, x->rank, LLU(x->calls), LLU(x->bytes), LLU(x->busy));
    }
    fclose(f);
    if (!(f = csv_open(dir, "utilisation", "rank,device,busy_ns,compute_ns,copy_ns,overlap_ns,measurement_off_ns,wall_ns,utilisation,compute,copy", e)))
        return -1;
    for (uint32_t i = 0; i < r->nu; i++) {
        const struct r_util *u = &r->u[i];
        fprintf(f, "%u,", u->rank);
        csv_str(f, rep_node_name(r, u->node));
        fprintf(f, ",%llu,%llu,%llu,%llu,%llu,%llu,%.6f,%.6f,%.6f\n", LLU(u->busy), LLU(u->compute), LLU(u->copy),
                LLU(u->overlap), LLU(u->off), LLU(u->window), u->util, u->util_compute, u->util_copy);
    }
    fclose(f);
    if (!(f = csv_open(dir, "utilisation_timeline", "rank,bin,bin_start_ns,utilisation", e))) return -1;
    for (uint32_t q = 0; r->umat && q < d->nranks; q++)
        for (uint32_t b = 0; b < r->nbins; b++) {
            double v = r->umat[(size_t)q * r->nbins + b];
            if (v >= 0) fprintf(f, "%u,%u,%llu,%.6f\n", q, b, LLU((unsigned __int128)d->span * b / r->nbins), v);
        }
    fclose(f);
    if (!(f = csv_open(dir, "idle_gaps", "from_ns,to_ns,count,total_ns", e))) return -1;
    for (uint32_t i = 0; i < r->ngap; i++) fprintf(f, "%llu,%llu,%llu,%llu\n", LLU(r->gap[i].lo), LLU(r->gap[i].hi), LLU(r->gap[i].count), LLU(r->gap[i].total));
    fclose(f);
    if (!(f = csv_open(dir, "launch_latency", "operation,count,mean_ns,min_ns,max_ns,p50_ns,p90_ns,p99_ns", e))) return -1;
    if (r->lat_all.n)
        fprintf(f, "all,%llu,%.1f,%llu,%llu,%llu,%llu,%llu\n", LLU(r->lat_all.n), r->lat_all.mean, LLU(r->lat_all.min),
                LLU(r->lat_all.max), LLU(r->lat_all.p50), LLU(r->lat_all.p90), LLU(r->lat_all.p99));
    for (uint32_t i = 0; i < r->nlk; i++) {
        const struct r_lat *x = &r->lk[i];
        csv_str(f, x->name);
        fprintf(f, ",%llu,%.1f,%llu,%llu,%llu,%llu,%llu\n", LLU(x->n), x->mean, LLU(x->min), LLU(x->max), LLU(x->p50),
                LLU(x->p90), LLU(x->p99));
    }
    fclose(f);
    if (!(f = csv_open(dir, "launch_latency_by_queue", "rank,queue,count,mean_ns,min_ns,max_ns", e))) return -1;
    for (uint32_t i = 0; i < r->nlq; i++) {
        const struct r_lat *x = &r->lq[i];
        fprintf(f, "%u,", x->rank);
        csv_str(f, x->name);
        fprintf(f, ",%llu,%.1f,%llu,%llu\n", LLU(x->n), x->mean, LLU(x->min), LLU(x->max));
    }
    fclose(f);
    const struct {
        const char *file;
        const struct r_simple *v;
        uint32_t n;
    } sm[] = {{"mpi", r->mpi, r->nmpi}, {"level_zero_api", r->api, r->napi}, {"barriers", r->bar, r->nbar}};
    for (int t = 0; t < 3; t++) {
        if (!(f = csv_open(dir, sm[t].file, "name,calls,total_ns,share,mean_ns,min_ns,max_ns,bytes", e))) return -1;
        for (uint32_t i = 0; i < sm[t].n; i++) {
            const struct r_simple *x = &sm[t].v[i];
            csv_str(f, x->name);
            fprintf(f, ",%llu,%llu,%.6f,%.1f,%llu,%llu,%llu\n", LLU(x->calls), LLU(x->total), x->share, x->mean, LLU(x->min),
                    LLU(x->max), LLU(x->bytes));
        }
        fclose(f);
    }
    if (!(f = csv_open(dir, "mpi_by_rank", "rank,mpi_ns,wall_ns,measurement_off_ns,denominator_ns,share_of_wall,kernel_ns", e)))
        return -1;
    for (uint32_t i = 0; i < r->nmr; i++)
        fprintf(f, "%u,%llu,%llu,%llu,%llu,%.6f,%llu\n", r->mr[i].rank, LLU(r->mr[i].mpi_ns), LLU(r->mr[i].wall),
                LLU(r->mr[i].off), LLU(r->mr[i].denom), r->mr[i].share, LLU(r->mr[i].kernel_ns));
    fclose(f);
    if (!(f = csv_open(dir, "collectives", "communicator,comm_id,size,function,calls,total_ns,bytes", e))) return -1;
    for (uint32_t i = 0; i < r->ncoll; i++) {
        const struct r_coll *x = &r->coll[i];
        csv_str(f, x->comm_name);
        fprintf(f, ",%u,%u,%s,%llu,%llu,%llu\n", x->comm, x->comm_size, x->name, LLU(x->calls), LLU(x->total), LLU(x->bytes));
    }
    fclose(f);
    if (!(f = csv_open(dir, "slowest", "kernel,duration_ns,rank,location,start_ns", e))) return -1;
    for (uint32_t i = 0; i < r->nk; i++)
        for (uint32_t q = 0; r->k[i].top && q < r->k[i].top->n; q++) {
            const struct agg_top_ent *t = &r->k[i].top->e[q];
            csv_str(f, r->k[i].name);
            fprintf(f, ",%llu,%llu,", LLU(t->dur), LLU(t->rank));
            csv_str(f, rep_loc_name(r, agg_loc_index(d, t->loc)));
            fprintf(f, ",%llu\n", LLU(t->start > d->t0 ? t->start - d->t0 : 0));
        }
    fclose(f);
    if (!(f = csv_open(dir, "data_quality_locations",
                       "rank,location,location_id,events_read,events_defined,recorded,clamped,dropped,metrics,unclosed,"
                       "bad_leaves,measurement_off,measurement_off_ns,missing_file",
                       e)))
        return -1;
    for (uint32_t i = 0; i < r->nloc; i++) {
        const struct r_loc *x = &r->loc[i];
        fprintf(f, "%u,", x->rank);
        csv_str(f, rep_loc_name(r, x->li));
        fprintf(f, ",%llu,%llu,%llu,", LLU(d->locs[x->li].id), LLU(x->read), LLU(x->defined));
        if (x->props) fprintf(f, "%llu,%llu,%llu", LLU(x->recorded), LLU(x->clamped), LLU(x->dropped));
        else fputs(",,", f);
        fprintf(f, ",%llu,%llu,%llu,%llu,%llu,%d\n", LLU(x->metrics), LLU(x->unclosed), LLU(x->badleave), LLU(x->offcount),
                LLU(x->offns), x->missing);
    }
    fclose(f);
    if (!(f = csv_open(dir, "data_quality_ranks",
                       "rank,read,events,appends_without_record,records_without_append,reexecutions,negative_latencies,"
                       "measurement_off,measurement_off_ns,clock_offsets,offset_first_ns,offset_last_ns,stddev_first_ns,"
                       "stddev_last_ns,drift_ppm",
                       e)))
        return -1;
    for (uint32_t i = 0; i < r->nrq; i++) {
        const struct r_rankq *x = &r->rq[i];
        fprintf(f, "%u,%d,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%lld,%lld,%.1f,%.1f,%.4f\n", x->rank, x->present,
                LLU(x->events), LLU(x->cs_host_only), LLU(x->cs_dev_only), LLU(x->cs_repeat), LLU(x->lat_negative),
                LLU(x->off_count), LLU(x->off_ns), LLU(x->noffsets), (long long)x->off_v0, (long long)x->off_v1, x->sd0,
                x->sd1, x->drift_ppm);
    }
    fclose(f);
    /* PAPI counters (A19) */
    if (!(f = csv_open(dir, "papi_counters", "id,name,unit,type,mode,summed,ranks,description", e))) return -1;
    for (uint32_t i = 0; i < r->npc; i++) {
        const struct r_counter *x = &r->pc[i];
        fprintf(f, "%u,", x->member);
        csv_str(f, x->name);
        fputc(',', f);
        csv_str(f, x->unit);
        fprintf(f, ",%s,%s,%d,%u,", x->type, x->mode, x->summed, x->ranks);
        csv_str(f, x->descr);
        fputc('\n', f);
    }
    fclose(f);
    if (!(f = csv_open(dir, "papi_regions", "counter,unit,region,kind,calls,total,mean,min,max,region_ns,of_time", e)))
        return -1;
    for (uint32_t i = 0; i < r->npm; i++) {
        const struct r_mregion *x = &r->pm[i];
        csv_str(f, x->counter);
        fputc(',', f);
        csv_str(f, x->unit);
        fputc(',', f);
        csv_str(f, x->name);
        fprintf(f, ",%s,%llu,%llu,%.1f,%llu,%llu,%llu,", x->kind, LLU(x->calls), LLU(x->total), x->mean, LLU(x->min),
                LLU(x->max), LLU(x->region_ns));
        if (x->of_time >= 0) fprintf(f, "%.6f", x->of_time);
        fputc('\n', f);
    }
    fclose(f);
    if (!(f = csv_open(dir, "papi_ranks", "rank,counter,unit,threads,counted,in_mpi,mpi_regions,in_level_zero,level_zero_regions", e)))
        return -1;
    for (uint32_t i = 0; i < r->npr; i++) {
        const struct r_mrank *x = &r->pr[i];
        fprintf(f, "%u,", x->rank);
        csv_str(f, x->counter);
        fputc(',', f);
        csv_str(f, x->unit);
        fprintf(f, ",%llu,%llu,%llu,%llu,%llu,%llu\n", LLU(x->threads), LLU(x->counted), LLU(x->in_mpi), LLU(x->mpi_regions),
                LLU(x->in_l0), LLU(x->l0_regions));
    }
    fclose(f);
    return 0;
}
