/* SPDX-License-Identifier: MIT */
/* The kernels section: kernels by name with their distribution, their rows per rank, device and
 * queue, the imbalance of each across ranks, the straggler ranks over the top kernels and the
 * slowest instances of each. */
#include "zc_agg_report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- build */
static int cmp_kernel(const void *x, const void *y, void *sort) {
    const struct r_kernel *a = x, *b = y;
    const char *key = sort;
    int c = 0;
    if (!strcmp(key, "calls")) c = rep_cmp_u64_desc(a->calls, b->calls);
    else if (!strcmp(key, "mean")) c = a->mean > b->mean ? -1 : a->mean < b->mean;
    else if (!strcmp(key, "max")) c = rep_cmp_u64_desc(a->max, b->max);
    else if (!strcmp(key, "imbalance")) c = a->max_over_mean > b->max_over_mean ? -1 : a->max_over_mean < b->max_over_mean;
    else if (strcmp(key, "name")) c = rep_cmp_u64_desc(a->total, b->total);
    return c ? c : rep_cmp_named(a->name, a->region, b->name, b->region);
}

/* rows of a kernel are grouped in the kernels' order (region holds that position while sorting) */
static const struct rep_key rowk_order[] = {
    REP_ASC(r_rowk, region), REP_DESC(r_rowk, total), REP_ASC(r_rowk, rank), REP_ASC(r_rowk, node), REP_ASC(r_rowk, loc),
};

static const struct rep_key strag_order[] = {REP_DESC(r_strag, top_ns), REP_ASC(r_strag, rank)};

/* Imbalance of one kernel: its per-rank totals over every rank of the job (a rank that did not
 * run it counts 0). rank_tot is scratch for d->nranks + 1 totals. */
static void imbalance(struct agg_report *r, const struct agg_stats *s, struct r_kernel *k, uint64_t *rank_tot) {
    const struct agg_defs *d = r->d;
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
    /* the device of the slowest rank's largest share of this kernel (on a tie between two of its
     * queues, the first in the statistics' key order) */
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

static int build_kernels(struct agg_report *r, const struct agg_stats *s) {
    uint64_t *rank_tot;
    if (!REP_ALLOC(r, r->k, rep_count(s, T_KERNEL)) || !REP_ALLOC(r, rank_tot, r->d->nranks)) return -1;
    for (uint32_t i = 0; i < s->n; i++) {
        if (s->keys[i].table != T_KERNEL) continue;
        const struct agg_acc *a = &s->accs[i];
        struct r_kernel *k = &r->k[r->nk++];
        *k = (struct r_kernel){.region = s->keys[i].a, .name = rep_region_name(r, s->keys[i].a), .calls = a->n,
                               .total = a->sum, .min = a->min, .max = a->max, .mean = rep_mean(a), .sd = rep_sd(a),
                               .p50 = rep_quantile(a, 50), .p90 = rep_quantile(a, 90), .p99 = rep_quantile(a, 99),
                               .top = a->top};
        r->k_total += a->sum;
        imbalance(r, s, k, rank_tot);
    }
    for (uint32_t i = 0; i < r->nk; i++) r->k[i].share = rep_ratio(r->k[i].total, r->k_total);
    qsort_r(r->k, r->nk, sizeof(*r->k), cmp_kernel, (void *)(r->o.sort ? r->o.sort : "total"));
    return 0;
}

/* per rank / device / queue rows, ordered like the kernels */
static int build_rows(struct agg_report *r, const struct agg_stats *s) {
    const struct agg_defs *d = r->d;
    uint32_t *korder;
    if (!REP_ALLOC(r, korder, d->nregions) || !REP_ALLOC(r, r->kr, rep_count(s, T_KERNEL_RANK)) ||
        !REP_ALLOC(r, r->kd, rep_count(s, T_KERNEL_DEV)) || !REP_ALLOC(r, r->kq, rep_count(s, T_KERNEL_QUEUE)))
        return -1;
    for (uint32_t i = 0; i < r->nk; i++) korder[r->k[i].region] = i;
    for (uint32_t i = 0; i < s->n; i++) {
        const struct agg_key *key = &s->keys[i];
        const struct agg_acc *a = &s->accs[i];
        struct r_rowk *w;
        if (key->table == T_KERNEL_RANK) {
            w = &r->kr[r->nkr++];
            *w = (struct r_rowk){.rank = (uint32_t)key->b, .node = AGG_NONE, .loc = AGG_NONE};
        } else if (key->table == T_KERNEL_DEV) {
            w = &r->kd[r->nkd++];
            *w = (struct r_rowk){.rank = AGG_NONE, .node = (uint32_t)key->b, .loc = AGG_NONE};
        } else if (key->table == T_KERNEL_QUEUE) {
            uint32_t li = (uint32_t)key->b;
            w = &r->kq[r->nkq++];
            *w = (struct r_rowk){.loc = li, .rank = li < d->nlocs ? d->locs[li].proc : AGG_NONE,
                                 .node = li < d->nlocs ? d->locs[li].device : AGG_NONE};
        } else {
            continue;
        }
        w->region = korder[key->a < d->nregions ? key->a : 0]; /* sort key: kernel order */
        w->calls = a->n;
        w->total = a->sum;
        w->min = a->min;
        w->max = a->max;
        w->mean = rep_mean(a);
    }
    struct {
        struct r_rowk *v;
        uint32_t n;
    } sets[] = {{r->kr, r->nkr}, {r->kd, r->nkd}, {r->kq, r->nkq}};
    for (int t = 0; t < 3; t++) {
        REP_SORT(sets[t].v, sets[t].n, rowk_order);
        for (uint32_t i = 0; i < sets[t].n; i++) sets[t].v[i].region = r->k[sets[t].v[i].region].region;
    }
    return 0;
}

/* each rank's time in the top kernels, against the mean over ranks */
static int build_stragglers(struct agg_report *r, const struct agg_stats *s) {
    const struct agg_defs *d = r->d;
    r->strag_kernels = r->nk < r->o.top ? r->nk : r->o.top;
    if (!REP_ALLOC(r, r->strag, d->nranks)) return -1;
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
    REP_SORT(r->strag, r->nstrag, strag_order);
    return 0;
}

static int build(struct agg_report *r, const struct agg_stats *s) {
    return build_kernels(r, s) || build_rows(r, s) || build_stragglers(r, s) ? -1 : 0;
}

/* ---------------------------------------------------------------- text */
#define KC(field) REP_OFF(r_kernel, field)
#define SC(field) REP_OFF(r_strag, field)

static const char *host_of_strag(const struct agg_report *r, const void *row, char *buf, size_t n) {
    (void)buf, (void)n;
    return rep_host_of_rank(r, ((const struct r_strag *)row)->rank);
}

static const struct txt_col kernel_cols[] = {
    TXT_LEFT("kernel", 0, RK_STR, KC(name)), TXT_COL("calls", 9, RK_U64, KC(calls)), TXT_COL("total", 10, RK_NS, KC(total)),
    TXT_COL("share", 6, RK_PCT, KC(share)),  TXT_COL("mean", 10, RK_NSF, KC(mean)),  TXT_COL("min", 10, RK_NS, KC(min)),
    TXT_COL("max", 10, RK_NS, KC(max)),      TXT_COL("stddev", 10, RK_NSF, KC(sd)),  TXT_COL("p50", 10, RK_NS, KC(p50)),
    TXT_COL("p90", 10, RK_NS, KC(p90)),      TXT_COL("p99", 10, RK_NS, KC(p99)),
};

static const struct txt_col imbalance_cols[] = {
    TXT_LEFT("kernel", 0, RK_STR, KC(name)),       TXT_COL("ranks", 6, RK_U32, KC(ranks_running)),
    TXT_COL("mean/rank", 10, RK_NSF, KC(rank_mean)), TXT_COL("max/rank", 10, RK_NS, KC(rank_max)),
    TXT_F("max/mean", 8, KC(max_over_mean), 2),    TXT_F("cv", 6, KC(rank_cv), 3),
    TXT_COL("slowest", 7, RK_U32, KC(max_rank)),   TXT_LEFT("host", 14, RK_STR, KC(max_host)),
    TXT_LEFT("device", 18, RK_STR, KC(max_device)),
};

static const struct txt_col straggler_cols[] = {
    TXT_LEFT("rank", 0, RK_U32, SC(rank)),     TXT_COL("top kernels", 12, RK_NS, SC(top_ns)), TXT_F("ratio", 6, SC(ratio), 2),
    TXT_COL("MPI time", 12, RK_NS, SC(mpi_ns)), TXT_FN("host", 20, true, host_of_strag),
};

/* the k slowest instances of the top kernels, where to find them in a viewer */
static void text_slowest(const struct agg_report *r, struct agg_text *t) {
    uint32_t top = t->top, shown = txt_min(txt_min(top, r->nk), 5);
    char a[64], b[64];
    txt_heading(t, "Slowest instances of the top %u kernels (rank, location, start since the job's start)", shown);
    for (uint32_t i = 0; i < shown; i++) {
        const struct r_kernel *x = &r->k[i];
        fprintf(t->f, "%s:", x->name);
        for (uint32_t q = 0; x->top && q < x->top->n; q++) {
            const struct agg_top_ent *e = &x->top->e[q];
            fprintf(t->f, "%s %s (rank %llu, %s, at %s)", q ? "," : "", TXT_NS(a, e->dur), LLU(e->rank),
                    rep_loc_name(r, agg_loc_index(r->d, e->loc)), TXT_NS(b, rep_since_start(r, e->start)));
        }
        fputc('\n', t->f);
    }
}

static void text(const struct agg_report *r, struct agg_text *t) {
    if (!r->any_l0) return; /* no Level Zero activity: said once, in the findings */
    char a[64];
    uint32_t top = txt_min(t->top, r->nk);
    txt_heading(t, "Kernels: top %u of %u by %s; share = %% of all kernel time (%s)", top, r->nk,
                r->o.sort ? r->o.sort : "total", TXT_NS(a, r->k_total));
    TXT_TABLE(t, kernel_cols, UINT32_MAX, r->k, top);
    txt_heading(t, "Imbalance across ranks (top %u kernels): per-rank total, mean over all %u ranks", top, r->d->nranks);
    TXT_TABLE(t, imbalance_cols, UINT32_MAX, r->k, top);
    if (r->nstrag && r->strag_kernels) {
        txt_heading(t, "Straggler ranks: time in the top %u kernels; ratio = / mean over ranks; MPI time beside it",
                    r->strag_kernels);
        TXT_TABLE(t, straggler_cols, 80, r->strag, txt_min(r->nstrag, 5));
    }
    if (r->nk) text_slowest(r, t);
}

/* ---------------------------------------------------------------- CSV */
static void csv_kernel(FILE *f, const struct agg_report *r, const void *row) {
    const struct r_kernel *k = row;
    csv_str(f, k->name);
    fprintf(f, ",%llu,%llu,%.6f,%.1f,%llu,%llu,%.1f,%llu,%llu,%llu,%u,%.1f,%llu,%u,%.4f,%.4f\n", LLU(k->calls), LLU(k->total),
            k->share, k->mean, LLU(k->min), LLU(k->max), k->sd, LLU(k->p50), LLU(k->p90), LLU(k->p99), k->ranks_running,
            k->rank_mean, LLU(k->rank_max), k->max_rank, k->max_over_mean, k->rank_cv);
}

/* the kernels' rows per rank, device and queue: the kernel, what the row is of, its numbers */
static void csv_rowk(FILE *f, const struct agg_report *r, const struct r_rowk *w, int t) {
    csv_str(f, rep_region_name(r, w->region));
    if (t == 0) fprintf(f, ",%u", w->rank);
    else if (t == 1) fputc(',', f), csv_str(f, rep_node_name(r, w->node));
    else fprintf(f, ",%u,", w->rank), csv_str(f, rep_loc_name(r, w->loc));
    fprintf(f, ",%llu,%llu,%.1f,%llu,%llu\n", LLU(w->calls), LLU(w->total), w->mean, LLU(w->min), LLU(w->max));
}
static void csv_by_rank(FILE *f, const struct agg_report *r, const void *row) { csv_rowk(f, r, row, 0); }
static void csv_by_device(FILE *f, const struct agg_report *r, const void *row) { csv_rowk(f, r, row, 1); }
static void csv_by_queue(FILE *f, const struct agg_report *r, const void *row) { csv_rowk(f, r, row, 2); }

static void csv_slowest(FILE *f, const struct agg_report *r, const void *row) {
    const struct r_kernel *k = row;
    for (uint32_t q = 0; k->top && q < k->top->n; q++) {
        const struct agg_top_ent *t = &k->top->e[q];
        csv_str(f, k->name);
        fprintf(f, ",%llu,%llu,", LLU(t->dur), LLU(t->rank));
        csv_str(f, rep_loc_name(r, agg_loc_index(r->d, t->loc)));
        fprintf(f, ",%llu\n", LLU(rep_since_start(r, t->start)));
    }
}

static int csv(const struct agg_report *r, struct agg_csv *c) {
    if (CSV_TABLE(c, "kernels",
                  "kernel,calls,total_ns,share_of_kernel_time,mean_ns,min_ns,max_ns,stddev_ns,p50_ns,p90_ns,p99_ns,"
                  "ranks_running,rank_mean_ns,rank_max_ns,slowest_rank,max_over_mean,rank_cv",
                  r, r->k, r->nk, csv_kernel) != 0)
        return -1;
    if (CSV_TABLE(c, "kernels_by_rank", "kernel,rank,calls,total_ns,mean_ns,min_ns,max_ns", r, r->kr, r->nkr, csv_by_rank))
        return -1;
    if (CSV_TABLE(c, "kernels_by_device", "kernel,device,calls,total_ns,mean_ns,min_ns,max_ns", r, r->kd, r->nkd,
                  csv_by_device))
        return -1;
    if (CSV_TABLE(c, "kernels_by_queue", "kernel,rank,queue,calls,total_ns,mean_ns,min_ns,max_ns", r, r->kq, r->nkq,
                  csv_by_queue))
        return -1;
    return CSV_TABLE(c, "slowest", "kernel,duration_ns,rank,location,start_ns", r, r->k, r->nk, csv_slowest);
}

/* ---------------------------------------------------------------- JSON */
static void json_kernel(const struct agg_report *r, FILE *f, const struct r_kernel *k) {
    json_kv(f, "name", k->name, true);
    fprintf(f,
            "\"calls\":%llu,\"total_ns\":%llu,\"share\":%.6f,\"mean_ns\":%.1f,\"min_ns\":%llu,\"max_ns\":%llu,"
            "\"stddev_ns\":%.1f,\"p50_ns\":%llu,\"p90_ns\":%llu,\"p99_ns\":%llu,",
            LLU(k->calls), LLU(k->total), k->share, k->mean, LLU(k->min), LLU(k->max), k->sd, LLU(k->p50), LLU(k->p90),
            LLU(k->p99));
    fprintf(f, "\"imbalance\":{\"ranks_running\":%u,\"rank_mean_ns\":%.1f,\"rank_max_ns\":%llu,\"slowest_rank\":%u,",
            k->ranks_running, k->rank_mean, LLU(k->rank_max), k->max_rank);
    json_kv(f, "slowest_host", k->max_host, true);
    json_kv(f, "slowest_device", k->max_device, true);
    fprintf(f, "\"max_over_mean\":%.6f,\"cv\":%.6f},\"slowest\":[", k->max_over_mean, k->rank_cv);
    for (uint32_t q = 0; k->top && q < k->top->n; q++) {
        const struct agg_top_ent *t = &k->top->e[q];
        fprintf(f, "%s{\"duration_ns\":%llu,\"rank\":%llu,", q ? "," : "", LLU(t->dur), LLU(t->rank));
        json_kv(f, "location", rep_loc_name(r, agg_loc_index(r->d, t->loc)), true);
        fprintf(f, "\"location_id\":%llu,\"start_ns\":%llu}", LLU(t->loc), LLU(rep_since_start(r, t->start)));
    }
    fputs("]}", f);
}

static void json_rows(const struct agg_report *r, FILE *f, const char *name, const struct r_rowk *v, uint32_t n, int t) {
    fprintf(f, "\"%s\":[", name);
    for (uint32_t i = 0; i < n; i++) {
        const struct r_rowk *w = &v[i];
        json_row(f, i);
        json_kv(f, "kernel", rep_region_name(r, w->region), true);
        if (t == 0) fprintf(f, "\"rank\":%u,", w->rank);
        else if (t == 1) json_kv(f, "device", rep_node_name(r, w->node), true);
        else {
            fprintf(f, "\"rank\":%u,", w->rank);
            json_kv(f, "queue", rep_loc_name(r, w->loc), true);
        }
        fprintf(f, "\"calls\":%llu,\"total_ns\":%llu,\"mean_ns\":%.1f,\"min_ns\":%llu,\"max_ns\":%llu}", LLU(w->calls),
                LLU(w->total), w->mean, LLU(w->min), LLU(w->max));
    }
    fputs("],\n", f);
}

static void json(const struct agg_report *r, FILE *f) {
    fprintf(f, "\"kernels\":{\"share_denominator\":\"total_ns (all kernel time)\",\"total_ns\":%llu,\"rows\":[",
            LLU(r->k_total));
    for (uint32_t i = 0; i < r->nk; i++) {
        json_row(f, i);
        json_kernel(r, f, &r->k[i]);
    }
    fputs("]},\n", f);
    json_rows(r, f, "kernels_by_rank", r->kr, r->nkr, 0);
    json_rows(r, f, "kernels_by_device", r->kd, r->nkd, 1);
    json_rows(r, f, "kernels_by_queue", r->kq, r->nkq, 2);
    fprintf(f, "\"stragglers\":{\"kernels\":%u,\"ratio_denominator\":\"mean over ranks of the time in those kernels\",\"rows\":[",
            r->strag_kernels);
    for (uint32_t i = 0; i < r->nstrag; i++)
        fprintf(f, "%s{\"rank\":%u,\"top_kernels_ns\":%llu,\"ratio\":%.6f,\"mpi_ns\":%llu}", i ? ",\n" : "\n", r->strag[i].rank,
                LLU(r->strag[i].top_ns), r->strag[i].ratio, LLU(r->strag[i].mpi_ns));
    fputs("]}", f);
}

/* ---------------------------------------------------------------- HTML */
static void td_max_over_mean(FILE *f, const struct agg_report *r, const void *row) {
    const struct r_kernel *k = row;
    (void)r;
    fprintf(f, "<td data-s=\"%.4f\">%.2f</td>", k->max_over_mean, k->max_over_mean);
}

static void td_slowest_rank(FILE *f, const struct agg_report *r, const void *row) {
    const struct r_kernel *k = row;
    (void)r;
    fprintf(f, "<td data-s=\"%u\">%u (", k->max_rank, k->max_rank);
    html_esc(f, k->max_host);
    fputs(")</td>", f);
}

static const struct html_col kernel_html[] = {
    HTML_COL("kernel", RK_STR, KC(name)), HTML_COL("calls", RK_U64, KC(calls)), HTML_COL("total", RK_NS, KC(total)),
    HTML_COL("share", RK_PCT, KC(share)), HTML_COL("mean", RK_NSF, KC(mean)),   HTML_COL("min", RK_NS, KC(min)),
    HTML_COL("max", RK_NS, KC(max)),      HTML_COL("stddev", RK_NSF, KC(sd)),   HTML_COL("p50", RK_NS, KC(p50)),
    HTML_COL("p90", RK_NS, KC(p90)),      HTML_COL("p99", RK_NS, KC(p99)),      HTML_FN("max/mean rank", td_max_over_mean),
    HTML_FN("slowest rank", td_slowest_rank),
};

static void html(const struct agg_report *r, FILE *f) {
    if (!r->any_l0) return; /* no Level Zero activity: said once, in the findings */
    fputs("<h2>Kernels</h2>\n", f);
    HTML_TABLE(f, r, kernel_html, r->k, txt_min(r->nk, 200));
}

const struct agg_section agg_sec_kernels = {"kernels", build, text, csv, json, html};
