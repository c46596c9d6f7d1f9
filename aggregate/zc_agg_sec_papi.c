/* SPDX-License-Identifier: MIT */
/* The PAPI counters section (docs/archive.md A19): the counters, each counter over each
 * region's instances with a Metric at both ends (Leave - Enter, exact sums), and per rank what
 * each counter counted, in MPI and in Level Zero. Shown only for archives with counters. */
#include "zc_agg_report.h"

#include <otf2/otf2.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- build */
static int cmp_mregion(const void *x, const void *y) {
    const struct r_mregion *a = x, *b = y;
    if (a->member != b->member) return a->member < b->member ? -1 : 1;
    int c = rep_cmp_u64_desc(a->total, b->total);
    return c ? c : rep_cmp_named(a->name, a->region, b->name, b->region);
}

static const struct rep_key mrank_order[] = {REP_ASC(r_mrank, rank), REP_ASC(r_mrank, member)};

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

static void build_counters(struct agg_report *r) {
    const struct agg_defs *d = r->d;
    for (uint32_t m = 0; m < d->nmmembers; m++) {
        const struct agg_mmember *mm = &d->mmembers[m];
        if (!mm->defined) continue;
        r->pc[r->npc++] = (struct r_counter){m, agg_str(d, mm->name), agg_str(d, mm->unit), agg_str(d, mm->descr),
                                             otf2_type_name(mm->type), mm->scaled ? "scaled" : otf2_mode_name(mm->mode),
                                             agg_member_summed(mm), 0};
    }
}

static void build_regions(struct agg_report *r, const struct agg_stats *s) {
    const struct agg_defs *d = r->d;
    for (uint32_t i = 0; i < s->n; i++) {
        const struct agg_key *key = &s->keys[i];
        const struct agg_acc *a = &s->accs[i];
        if (key->table != T_METRIC || key->b >= d->nmmembers || key->a >= d->nregions) continue;
        const struct agg_mmember *mm = &d->mmembers[key->b];
        uint8_t hc = d->regions[key->a].host_class;
        bool ns = strcmp(agg_str(d, mm->unit), "ns") == 0;
        r->pm[r->npm++] = (struct r_mregion){(uint32_t)key->b, key->a, agg_str(d, mm->name), agg_str(d, mm->unit),
                                             rep_region_name(r, key->a),
                                             hc == AGG_H_MPI ? "MPI" : hc == AGG_H_L0 ? "Level Zero" : "other",
                                             a->n, a->sum, a->min, a->max, a->x[0], rep_mean(a),
                                             ns ? rep_ratio(a->sum, a->x[0]) : -1.0};
    }
    qsort(r->pm, r->npm, sizeof(*r->pm), cmp_mregion);
}

/* per rank and counter; a counter's rank count is the ranks with a row */
static void build_ranks(struct agg_report *r, const struct agg_stats *s) {
    for (uint32_t q = 0; q < r->d->nranks; q++) {
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
    REP_SORT(r->pr, r->npr, mrank_order);
}

static int build(struct agg_report *r, const struct agg_stats *s) {
    const struct agg_defs *d = r->d;
    uint32_t used = 0;
    for (uint32_t m = 0; m < d->nmmembers; m++) used += d->mmembers[m].defined;
    if (!REP_ALLOC(r, r->pc, used) || !REP_ALLOC(r, r->pm, rep_count(s, T_METRIC)) ||
        !REP_ALLOC(r, r->pr, (size_t)d->nranks * (used ? used : 1)))
        return -1;
    build_counters(r);
    build_regions(r, s);
    build_ranks(r, s);
    /* the Metric records' quality counts, for the data quality section */
    for (uint32_t i = 0; i < s->n; i++) {
        if (s->keys[i].table != T_MQ) continue;
        r->dq_m_unpaired += s->accs[i].x[0];
        r->dq_m_decreasing += s->accs[i].x[1];
        r->dq_m_one_sided += s->accs[i].x[2];
    }
    return 0;
}

/* ---------------------------------------------------------------- text */
#define PM(field) REP_OFF(r_mregion, field)
#define PR(field) REP_OFF(r_mrank, field)

static const char *of_time(const struct agg_report *r, const void *row, char *buf, size_t n) {
    const struct r_mregion *x = row;
    if (x->of_time < 0) return "-";
    snprintf(buf, n, "%.1f%%", 100.0 * x->of_time);
    return buf;
}

static const struct txt_col region_cols[] = {
    TXT_LEFT("counter", 18, RK_STR, PM(counter)),         TXT_LEFT("region", 0, RK_STR, PM(name)),
    TXT_LEFT("kind", 10, RK_STR, PM(kind)),               TXT_COL("calls", 8, RK_U64, PM(calls)),
    TXT_UNIT("total", 11, RK_COUNT, PM(total), PM(unit)), TXT_UNIT("mean", 11, RK_MEAN, PM(mean), PM(unit)),
    TXT_UNIT("min", 11, RK_COUNT, PM(min), PM(unit)),     TXT_UNIT("max", 11, RK_COUNT, PM(max), PM(unit)),
    TXT_FN("of time", 7, false, of_time),
};

static const struct txt_col rank_cols[] = {
    TXT_COL("rank", 5, RK_U32, PR(rank)),                     TXT_LEFT("counter", 0, RK_STR, PR(counter)),
    TXT_COL("threads", 7, RK_U64, PR(threads)),               TXT_UNIT("counted", 12, RK_COUNT, PR(counted), PR(unit)),
    TXT_UNIT("in MPI", 12, RK_COUNT, PR(in_mpi), PR(unit)),   TXT_COL("regions", 8, RK_U64, PR(mpi_regions)),
    TXT_UNIT("in L0", 12, RK_COUNT, PR(in_l0), PR(unit)),     TXT_COL("regions", 8, RK_U64, PR(l0_regions)),
};

static void text(const struct agg_report *r, struct agg_text *t) {
    if (!r->npc) return;
    uint32_t top = t->top;
    txt_heading(t, "PAPI counters (A19): counter value at a region's Leave - at its Enter, over the instances with both; "
                   "exact sums");
    for (uint32_t i = 0; i < r->npc; i++) {
        const struct r_counter *x = &r->pc[i];
        fprintf(t->f, "%s [%s]: %s; %s %s on %u rank%s%s\n", x->name, x->unit, x->descr, x->type, x->mode, x->ranks,
                x->ranks == 1 ? "" : "s", x->summed ? "" : " (not summed: not an accumulating integer counter)");
    }
    txt_table_start(t, region_cols, (int)(sizeof(region_cols) / sizeof(*region_cols)), UINT32_MAX);
    uint32_t shown = 0, member = UINT32_MAX;
    for (uint32_t i = 0; i < r->npm; i++) {
        const struct r_mregion *x = &r->pm[i];
        if (x->member != member) member = x->member, shown = 0;
        if (shown++ < top) txt_table_row(t, x); /* the top regions of each counter */
    }
    fprintf(t->f, "\"of time\": the counter (in ns) / the regions' duration. Per rank: counted = first to last sample of each "
                  "thread, summed over its threads; in MPI / in Level Zero = the region deltas above\n");
    TXT_TABLE(t, rank_cols, 110, r->pr, txt_min(r->npr, 4 * top));
    if (r->npr > 4 * top) fprintf(t->f, "... %u more rows in the CSV/JSON\n", r->npr - 4 * top);
}

/* ---------------------------------------------------------------- CSV */
static void csv_counter(FILE *f, const struct agg_report *r, const void *row) {
    const struct r_counter *x = row;
    fprintf(f, "%u,", x->member);
    csv_strs(f, x->name, x->unit);
    fprintf(f, ",%s,%s,%d,%u,", x->type, x->mode, x->summed, x->ranks);
    csv_str(f, x->descr);
    fputc('\n', f);
}

static void csv_region(FILE *f, const struct agg_report *r, const void *row) {
    const struct r_mregion *x = row;
    csv_strs(f, x->counter, x->unit);
    fputc(',', f);
    csv_str(f, x->name);
    fprintf(f, ",%s,%llu,%llu,%.1f,%llu,%llu,%llu,", x->kind, LLU(x->calls), LLU(x->total), x->mean, LLU(x->min),
            LLU(x->max), LLU(x->region_ns));
    if (x->of_time >= 0) fprintf(f, "%.6f", x->of_time);
    fputc('\n', f);
}

static void csv_rank(FILE *f, const struct agg_report *r, const void *row) {
    const struct r_mrank *x = row;
    fprintf(f, "%u,", x->rank);
    csv_strs(f, x->counter, x->unit);
    fprintf(f, ",%llu,%llu,%llu,%llu,%llu,%llu\n", LLU(x->threads), LLU(x->counted), LLU(x->in_mpi), LLU(x->mpi_regions),
            LLU(x->in_l0), LLU(x->l0_regions));
}

/* written for every archive (empty tables without counters): the CSV set does not depend on it */
static int csv(const struct agg_report *r, struct agg_csv *c) {
    if (CSV_TABLE(c, "papi_counters", "id,name,unit,type,mode,summed,ranks,description", r, r->pc, r->npc, csv_counter))
        return -1;
    if (CSV_TABLE(c, "papi_regions", "counter,unit,region,kind,calls,total,mean,min,max,region_ns,of_time", r, r->pm, r->npm,
                  csv_region))
        return -1;
    return CSV_TABLE(c, "papi_ranks", "rank,counter,unit,threads,counted,in_mpi,mpi_regions,in_level_zero,level_zero_regions",
                     r, r->pr, r->npr, csv_rank);
}

/* ---------------------------------------------------------------- JSON */
static void json(const struct agg_report *r, FILE *f) {
    fputs("\"papi\":{\"definition\":\"per counter: its value at a region's Leave minus at its Enter, summed over the "
          "region's instances with a Metric at both ends (accumulating integer counters only: summed); counted: from each "
          "thread's first sample to its last, summed over the rank's threads\",\"counters\":[",
          f);
    for (uint32_t i = 0; i < r->npc; i++) {
        const struct r_counter *x = &r->pc[i];
        fprintf(f, "%s{\"id\":%u,", i ? ",\n" : "\n", x->member);
        json_kv(f, "name", x->name, true);
        json_kv(f, "unit", x->unit, true);
        json_kv(f, "description", x->descr, true);
        json_kv(f, "type", x->type, true);
        json_kv(f, "mode", x->mode, true);
        fprintf(f, "\"summed\":%s,\"ranks\":%u}", x->summed ? "true" : "false", x->ranks);
    }
    fputs("],\"regions\":[", f);
    for (uint32_t i = 0; i < r->npm; i++) {
        const struct r_mregion *x = &r->pm[i];
        json_row(f, i);
        json_kv(f, "counter", x->counter, true);
        json_kv(f, "unit", x->unit, true);
        json_kv(f, "region", x->name, true);
        json_kv(f, "kind", x->kind, true);
        fprintf(f, "\"calls\":%llu,\"total\":%llu,\"mean\":%.1f,\"min\":%llu,\"max\":%llu,\"region_ns\":%llu,", LLU(x->calls),
                LLU(x->total), x->mean, LLU(x->min), LLU(x->max), LLU(x->region_ns));
        if (x->of_time >= 0) fprintf(f, "\"of_time\":%.6f}", x->of_time);
        else fputs("\"of_time\":null}", f);
    }
    fputs("],\"ranks\":[", f);
    for (uint32_t i = 0; i < r->npr; i++) {
        const struct r_mrank *x = &r->pr[i];
        fprintf(f, "%s{\"rank\":%u,", i ? ",\n" : "\n", x->rank);
        json_kv(f, "counter", x->counter, true);
        json_kv(f, "unit", x->unit, true);
        fprintf(f, "\"threads\":%llu,\"counted\":%llu,\"in_mpi\":%llu,\"mpi_regions\":%llu,\"in_level_zero\":%llu,"
                   "\"level_zero_regions\":%llu}",
                LLU(x->threads), LLU(x->counted), LLU(x->in_mpi), LLU(x->mpi_regions), LLU(x->in_l0), LLU(x->l0_regions));
    }
    fputs("]}", f);
}

/* ---------------------------------------------------------------- HTML */
static void td_of_time(FILE *f, const struct agg_report *r, const void *row) {
    const struct r_mregion *x = row;
    if (x->of_time >= 0) html_td_pct(f, x->of_time);
    else fputs("<td data-s=\"-1\">-</td>", f);
}

static const struct html_col region_html[] = {
    HTML_COL("counter", RK_STR, PM(counter)),         HTML_COL("region", RK_STR, PM(name)),
    HTML_COL("kind", RK_STR, PM(kind)),               HTML_COL("calls", RK_U64, PM(calls)),
    HTML_UNIT("total", RK_COUNT, PM(total), PM(unit)), HTML_UNIT("mean", RK_MEAN, PM(mean), PM(unit)),
    HTML_UNIT("min", RK_COUNT, PM(min), PM(unit)),     HTML_UNIT("max", RK_COUNT, PM(max), PM(unit)),
    HTML_FN("of time", td_of_time),
};

static const struct html_col rank_html[] = {
    HTML_COL("rank", RK_U32, PR(rank)),
    HTML_COL("counter", RK_STR, PR(counter)),
    HTML_COL("threads", RK_U64, PR(threads)),
    HTML_UNIT("counted", RK_COUNT, PR(counted), PR(unit)),
    HTML_UNIT("in MPI", RK_COUNT, PR(in_mpi), PR(unit)),
    HTML_COL("MPI regions", RK_U64, PR(mpi_regions)),
    HTML_UNIT("in Level Zero", RK_COUNT, PR(in_l0), PR(unit)),
    HTML_COL("Level Zero regions", RK_U64, PR(l0_regions)),
};

static void html(const struct agg_report *r, FILE *f) {
    if (!r->npc) return;
    fputs("<h2>PAPI counters</h2><div class=\"note\">Per counter and region: its value at the Leave minus at the Enter, "
          "summed over the instances (exact); <i>of time</i> = a counter in ns / the regions' duration. Counters:",
          f);
    for (uint32_t i = 0; i < r->npc; i++) {
        fputs(i ? "; " : " ", f);
        html_esc(f, r->pc[i].name);
        fputs(" [", f);
        html_esc(f, r->pc[i].unit);
        fputs("] ", f);
        html_esc(f, r->pc[i].descr);
    }
    fputs("</div>\n", f);
    HTML_TABLE(f, r, region_html, r->pm, txt_min(r->npm, 500));
    fputs("<div class=\"note\">Per rank: <i>counted</i> = from each thread's first sample to its last, "
          "summed over the rank's threads; in MPI / in Level Zero = the region deltas.</div>\n",
          f);
    HTML_TABLE(f, r, rank_html, r->pr, txt_min(r->npr, 2000));
}

const struct agg_section agg_sec_papi = {"PAPI counters", build, text, csv, json, html};
