/* SPDX-License-Identifier: MIT */
/* The device utilisation section: the union of busy intervals (kernels, transfers, fills) per
 * rank and device, summed per device node and job-wide, compute vs copy and their overlap, the
 * idle gaps between busy periods, and the rank x time map. The denominator is the rank's wall
 * time less the time measurement was off while the device was idle (both reported). */
#include "zc_agg_report.h"

#include <stdlib.h>

/* ---------------------------------------------------------------- build */
static const struct rep_key util_order[] = {REP_ASC(r_util, rank), REP_ASC(r_util, node)};

static void util_shares(struct r_util *w) {
    w->util = rep_ratio(w->busy, w->denom);
    w->util_compute = rep_ratio(w->compute, w->denom);
    w->util_copy = rep_ratio(w->copy, w->denom);
    w->overlap_share = rep_ratio(w->overlap, w->busy);
}

static void util_add(struct r_util *to, const struct r_util *w) {
    to->busy += w->busy;
    to->compute += w->compute;
    to->copy += w->copy;
    to->overlap += w->overlap;
    to->off += w->off;
    to->window += w->window;
    to->denom += w->denom;
}

/* per rank and device, then their sums per device node (in the order the ranks first use
 * them) and over the job */
static int build_util(struct agg_report *r, const struct agg_stats *s) {
    if (!REP_ALLOC(r, r->u, rep_count(s, T_DEVUTIL)) || !REP_ALLOC(r, r->ud, r->d->nnodes)) return -1;
    for (uint32_t i = 0; i < s->n; i++) {
        if (s->keys[i].table != T_DEVUTIL) continue;
        const struct agg_acc *a = &s->accs[i];
        struct r_util *w = &r->u[r->nu++];
        *w = (struct r_util){.rank = (uint32_t)s->keys[i].b, .node = (uint32_t)s->keys[i].c, .busy = a->sum,
                             .compute = a->x[0], .copy = a->x[1], .overlap = a->x[2], .off = a->x[3], .window = a->bytes};
        w->denom = w->window > w->off ? w->window - w->off : 0;
    }
    REP_SORT(r->u, r->nu, util_order);
    for (uint32_t i = 0; i < r->nu; i++) {
        struct r_util *w = &r->u[i];
        util_shares(w);
        util_add(&r->job, w);
        uint32_t k = 0;
        while (k < r->nud && r->ud[k].node != w->node) k++;
        if (k == r->nud) r->ud[r->nud++] = (struct r_util){.node = w->node, .rank = 0};
        r->ud[k].rank++; /* ranks using it */
        util_add(&r->ud[k], w);
    }
    for (uint32_t k = 0; k < r->nud; k++) util_shares(&r->ud[k]);
    util_shares(&r->job);
    return 0;
}

static int build_gaps(struct agg_report *r, const struct agg_stats *s) {
    if (!REP_ALLOC(r, r->gap, rep_count(s, T_GAP))) return -1;
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
    return 0;
}

/* rank x time: each bin's busy time over the bin's length times the rank's devices */
static int build_map(struct agg_report *r, const struct agg_stats *s) {
    const struct agg_defs *d = r->d;
    r->nbins = s->nbins;
    r->bin_ns = s->nbins ? (d->span + s->nbins - 1) / s->nbins : 0;
    if (!s->nbins) return 0;
    if (!REP_ALLOC(r, r->umat, (size_t)d->nranks * s->nbins)) return -1;
    for (uint32_t q = 0; q < d->nranks; q++) {
        const struct agg_rank *x = &s->ranks[q];
        for (uint32_t b = 0; b < s->nbins; b++) {
            uint64_t lo = d->t0 + (uint64_t)((unsigned __int128)d->span * b / s->nbins);
            uint64_t hi = d->t0 + (uint64_t)((unsigned __int128)d->span * (b + 1) / s->nbins);
            double cap = (double)(hi > lo ? hi - lo : 1) * (double)(x->ndev ? x->ndev : 1);
            r->umat[(size_t)q * s->nbins + b] = !x->present ? -1.0 : x->bins ? (double)x->bins[b] / cap : 0.0;
        }
    }
    return 0;
}

static int build(struct agg_report *r, const struct agg_stats *s) {
    return build_util(r, s) || build_gaps(r, s) || build_map(r, s) ? -1 : 0;
}

/* ---------------------------------------------------------------- text */
#define UC(field) REP_OFF(r_util, field)

static const char *node_name(const struct agg_report *r, const void *row, char *buf, size_t n) {
    return rep_node_name(r, ((const struct r_util *)row)->node);
}

static const char *rank_device(const struct agg_report *r, const void *row, char *buf, size_t n) {
    const struct r_util *x = row;
    snprintf(buf, n, "%u / %s", x->rank, rep_node_name(r, x->node));
    return buf;
}

static const struct txt_col device_cols[] = {
    TXT_FN("device", 0, true, node_name),     TXT_COL("ranks", 6, RK_U32, UC(rank)),
    TXT_COL("busy", 10, RK_NS, UC(busy)),     TXT_COL("util", 6, RK_PCT, UC(util)),
    TXT_COL("compute", 8, RK_PCT, UC(util_compute)), TXT_COL("copy", 6, RK_PCT, UC(util_copy)),
    TXT_COL("overlap", 8, RK_PCT, UC(overlap_share)),
};

static const struct txt_col rank_cols[] = {
    TXT_FN("rank / device", 0, true, rank_device), TXT_COL("busy", 10, RK_NS, UC(busy)),
    TXT_COL("wall", 10, RK_NS, UC(window)),        TXT_COL("off", 10, RK_NS, UC(off)),
    TXT_COL("util", 6, RK_PCT, UC(util)),          TXT_COL("compute", 8, RK_PCT, UC(util_compute)),
    TXT_COL("copy", 6, RK_PCT, UC(util_copy)),
};

/* the top ranks and devices by lowest utilisation (ties: in rank order, as an insertion sort of
 * the rank-ordered rows keeps them) */
static void text_lowest(const struct agg_report *r, struct agg_text *t) {
    fprintf(t->f, "per rank (lowest utilisation first, top %u):\n", t->top);
    txt_table_start(t, rank_cols, (int)(sizeof(rank_cols) / sizeof(*rank_cols)), 100);
    uint32_t *idx = calloc(r->nu + 1, sizeof(uint32_t));
    if (!idx) return;
    for (uint32_t i = 0; i < r->nu; i++) idx[i] = i;
    for (uint32_t i = 1; i < r->nu; i++)
        for (uint32_t q = i; q > 0 && r->u[idx[q]].util < r->u[idx[q - 1]].util; q--) {
            uint32_t tmp = idx[q];
            idx[q] = idx[q - 1];
            idx[q - 1] = tmp;
        }
    for (uint32_t i = 0; i < r->nu && i < t->top; i++) txt_table_row(t, &r->u[idx[i]]);
    free(idx);
}

static void text(const struct agg_report *r, struct agg_text *t) {
    if (!r->any_l0) return; /* no Level Zero activity: said once, in the findings */
    char a[64], b[64], c[64], e[64], g[64], h[64];
    txt_heading(t, "Device utilisation: union of busy intervals (kernels, transfers, fills) / (rank's wall time - measurement "
                   "off)");
    fprintf(t->f, "job: %s busy of %s = %s (compute %s, copy %s); copy/compute overlap %s of busy time\n",
            TXT_NS(a, r->job.busy), TXT_NS(b, r->job.denom), TXT_PCT(c, r->job.util), TXT_PCT(e, r->job.util_compute),
            TXT_PCT(g, r->job.util_copy), TXT_PCT(h, r->job.overlap_share));
    TXT_TABLE(t, device_cols, 100, r->ud, r->nud);
    text_lowest(r, t);
    if (r->ngap) {
        uint64_t n = 0;
        for (uint32_t i = 0; i < r->ngap; i++) n += r->gap[i].count;
        fprintf(t->f, "idle gaps between busy periods (%llu): ", LLU(n));
        for (uint32_t i = 0; i < r->ngap; i++)
            fprintf(t->f, "%s<%s: %llu", i ? ", " : "", TXT_NS(a, (double)r->gap[i].hi), LLU(r->gap[i].count));
        fputc('\n', t->f);
    }
}

/* ---------------------------------------------------------------- CSV */
static void csv_util(FILE *f, const struct agg_report *r, const void *row) {
    const struct r_util *u = row;
    fprintf(f, "%u,", u->rank);
    csv_str(f, rep_node_name(r, u->node));
    fprintf(f, ",%llu,%llu,%llu,%llu,%llu,%llu,%.6f,%.6f,%.6f\n", LLU(u->busy), LLU(u->compute), LLU(u->copy),
            LLU(u->overlap), LLU(u->off), LLU(u->window), u->util, u->util_compute, u->util_copy);
}

/* the rank x time map, ranks not read left out */
static int csv_map(const struct agg_report *r, struct agg_csv *c) {
    const struct agg_defs *d = r->d;
    FILE *f = csv_open(c, "utilisation_timeline", "rank,bin,bin_start_ns,utilisation");
    if (!f) return -1;
    for (uint32_t q = 0; r->umat && q < d->nranks; q++)
        for (uint32_t b = 0; b < r->nbins; b++) {
            double v = r->umat[(size_t)q * r->nbins + b];
            if (v >= 0) fprintf(f, "%u,%u,%llu,%.6f\n", q, b, LLU((unsigned __int128)d->span * b / r->nbins), v);
        }
    fclose(f);
    return 0;
}

static void csv_gap(FILE *f, const struct agg_report *r, const void *row) {
    const struct r_gap *g = row;
    fprintf(f, "%llu,%llu,%llu,%llu\n", LLU(g->lo), LLU(g->hi), LLU(g->count), LLU(g->total));
}

static int csv(const struct agg_report *r, struct agg_csv *c) {
    if (CSV_TABLE(c, "utilisation",
                  "rank,device,busy_ns,compute_ns,copy_ns,overlap_ns,measurement_off_ns,wall_ns,utilisation,compute,copy", r,
                  r->u, r->nu, csv_util))
        return -1;
    if (csv_map(r, c)) return -1;
    return CSV_TABLE(c, "idle_gaps", "from_ns,to_ns,count,total_ns", r, r->gap, r->ngap, csv_gap);
}

/* ---------------------------------------------------------------- JSON */
static void util_obj(FILE *f, const struct r_util *u) {
    fprintf(f,
            "\"busy_ns\":%llu,\"compute_ns\":%llu,\"copy_ns\":%llu,\"overlap_ns\":%llu,\"measurement_off_ns\":%llu,"
            "\"wall_ns\":%llu,\"denominator_ns\":%llu,\"utilisation\":%.6f,\"compute\":%.6f,\"copy\":%.6f,"
            "\"overlap_of_busy\":%.6f",
            LLU(u->busy), LLU(u->compute), LLU(u->copy), LLU(u->overlap), LLU(u->off), LLU(u->window), LLU(u->denom), u->util,
            u->util_compute, u->util_copy, u->overlap_share);
}

static void json_map(const struct agg_report *r, FILE *f) {
    const struct agg_defs *d = r->d;
    fprintf(f, "\"timeline\":{\"bins\":%u,\"t0_ns\":%llu,\"span_ns\":%llu,\"value\":\"busy / (bin length x the "
               "rank's devices); null: rank not read\",\"ranks\":[",
            r->nbins, LLU(d->t0), LLU(d->span));
    for (uint32_t q = 0; r->umat && q < d->nranks; q++) {
        fputs(q ? ",\n[" : "\n[", f);
        for (uint32_t b = 0; b < r->nbins; b++) {
            double v = r->umat[(size_t)q * r->nbins + b];
            if (v < 0) fprintf(f, "%snull", b ? "," : "");
            else fprintf(f, "%s%.4f", b ? "," : "", v);
        }
        fputc(']', f);
    }
    fputs("]}", f);
}

static void json(const struct agg_report *r, FILE *f) {
    fputs("\"utilisation\":{\"definition\":\"union of the busy intervals of kernels, transfers and fills per rank and "
          "device; denominator = the rank's wall time minus the time measurement was off there while the device was not busy\",\"job\":{",
          f);
    util_obj(f, &r->job);
    fputs("},\"devices\":[", f);
    for (uint32_t i = 0; i < r->nud; i++) {
        json_row(f, i);
        json_kv(f, "device", rep_node_name(r, r->ud[i].node), true);
        fprintf(f, "\"ranks\":%u,", r->ud[i].rank);
        util_obj(f, &r->ud[i]);
        fputc('}', f);
    }
    fputs("],\"ranks\":[", f);
    for (uint32_t i = 0; i < r->nu; i++) {
        fprintf(f, "%s{\"rank\":%u,", i ? ",\n" : "\n", r->u[i].rank);
        json_kv(f, "device", rep_node_name(r, r->u[i].node), true);
        util_obj(f, &r->u[i]);
        fputc('}', f);
    }
    fputs("],\"idle_gaps\":[", f);
    for (uint32_t i = 0; i < r->ngap; i++)
        fprintf(f, "%s{\"from_ns\":%llu,\"to_ns\":%llu,\"count\":%llu,\"total_ns\":%llu}", i ? "," : "", LLU(r->gap[i].lo),
                LLU(r->gap[i].hi), LLU(r->gap[i].count), LLU(r->gap[i].total));
    fputs("],\n", f);
    json_map(r, f);
    fputc('}', f);
}

/* ---------------------------------------------------------------- HTML */
static void td_node(FILE *f, const struct agg_report *r, const void *row) {
    html_td_s(f, rep_node_name(r, ((const struct r_util *)row)->node));
}

static const struct html_col device_html[] = {
    HTML_FN("device", td_node),
    HTML_COL("ranks", RK_U32, UC(rank)),
    HTML_COL("busy", RK_NS, UC(busy)),
    HTML_COL("utilisation", RK_PCT, UC(util)),
    HTML_COL("compute", RK_PCT, UC(util_compute)),
    HTML_COL("copy", RK_PCT, UC(util_copy)),
    HTML_COL("overlap of busy", RK_PCT, UC(overlap_share)),
};

static void html(const struct agg_report *r, FILE *f) {
    if (!r->any_l0) return; /* no Level Zero activity: said once, in the findings */
    fputs("<h2>Devices</h2>\n", f);
    HTML_TABLE(f, r, device_html, r->ud, r->nud);
}

const struct agg_section agg_sec_util = {"utilisation", build, text, csv, json, html};
