/* SPDX-License-Identifier: MIT */
/* The MPI section: calls, time and bytes per function, each rank's share of its time in MPI
 * (of the time it recorded: measurement-off time is not in the denominator), and collectives by
 * communicator. */
#include "zc_agg_report.h"

#include <stdlib.h>

/* ---------------------------------------------------------------- build */
static const struct rep_key coll_order[] = {REP_DESC(r_coll, total), REP_ASC(r_coll, comm), REP_ASC(r_coll, region)};

static int build_colls(struct agg_report *r, const struct agg_stats *s) {
    const struct agg_defs *d = r->d;
    if (!REP_ALLOC(r, r->coll, rep_count(s, T_COLL))) return -1;
    for (uint32_t i = 0; i < s->n; i++) {
        if (s->keys[i].table != T_COLL) continue;
        const struct agg_acc *a = &s->accs[i];
        struct r_coll *w = &r->coll[r->ncoll++];
        w->region = s->keys[i].a;
        w->comm = (uint32_t)s->keys[i].b;
        w->name = rep_region_name(r, w->region);
        const struct agg_comm *c = w->comm < d->ncomms && d->comms[w->comm].defined ? &d->comms[w->comm] : NULL;
        w->comm_size = c ? c->size : 0;
        if (c && agg_str(d, c->name)[0]) snprintf(w->comm_name, sizeof(w->comm_name), "%s", agg_str(d, c->name));
        else snprintf(w->comm_name, sizeof(w->comm_name), "comm %u%s", w->comm, c && c->inter ? " (inter)" : "");
        w->calls = a->n;
        w->total = a->sum;
        w->bytes = a->bytes;
        w->mean = rep_mean(a);
    }
    REP_SORT(r->coll, r->ncoll, coll_order);
    return 0;
}

static int build_ranks(struct agg_report *r, const struct agg_stats *s) {
    if (!REP_ALLOC(r, r->mr, r->d->nranks)) return -1;
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
        w->share = rep_ratio(w->mpi_ns, w->denom);
    }
    return 0;
}

static int build(struct agg_report *r, const struct agg_stats *s) {
    r->mpi_total = rep_simple_rows(r, s, T_MPI, AGG_NONE, &r->mpi, &r->nmpi);
    if (!r->mpi) return -1;
    rep_shares(r->mpi, r->nmpi, r->mpi_total);
    return build_colls(r, s) || build_ranks(r, s) ? -1 : 0;
}

/* ---------------------------------------------------------------- text */
#define MC(field) REP_OFF(r_simple, field)
#define CC(field) REP_OFF(r_coll, field)

static const struct txt_col fn_cols[] = {
    TXT_LEFT("function", 0, RK_STR, MC(name)), TXT_COL("calls", 9, RK_U64, MC(calls)), TXT_COL("total", 10, RK_NS, MC(total)),
    TXT_COL("share", 6, RK_PCT, MC(share)),    TXT_COL("mean", 10, RK_NSF, MC(mean)),  TXT_COL("max", 10, RK_NS, MC(max)),
    TXT_COL("bytes", 11, RK_BYTES, MC(bytes)),
};

static const struct txt_col coll_cols[] = {
    TXT_LEFT("communicator", 0, RK_STRA, CC(comm_name)), TXT_COL("size", 5, RK_U32, CC(comm_size)),
    TXT_LEFT("function", 22, RK_STR, CC(name)),          TXT_COL("calls", 9, RK_U64, CC(calls)),
    TXT_COL("total", 10, RK_NS, CC(total)),              TXT_COL("bytes", 11, RK_BYTES, CC(bytes)),
};

static void text(const struct agg_report *r, struct agg_text *t) {
    char a[64];
    if (!r->nmpi) return;
    txt_heading(t, "MPI: top %u functions; share = %% of all MPI time (%s)", txt_min(t->top, r->nmpi),
                TXT_NS(a, r->mpi_total));
    TXT_TABLE(t, fn_cols, 100, r->mpi, txt_min(r->nmpi, t->top));
    bool off = false;
    for (uint32_t i = 0; i < r->nmr; i++) off |= r->mr[i].off != 0;
    fprintf(t->f, "per rank: MPI time / rank's wall time%s:", off ? " while recording (wall - measurement off)" : "");
    for (uint32_t i = 0; i < r->nmr && i < 16; i++) fprintf(t->f, " %u: %s", r->mr[i].rank, TXT_PCT(a, r->mr[i].share));
    fprintf(t->f, "%s\n", r->nmr > 16 ? " ... (all in the CSV/JSON)" : "");
    if (r->ncoll) {
        fprintf(t->f, "collectives by communicator (top %u):\n", t->top);
        TXT_TABLE(t, coll_cols, 100, r->coll, txt_min(r->ncoll, t->top));
    }
}

/* ---------------------------------------------------------------- CSV */
static void csv_rank(FILE *f, const struct agg_report *r, const void *row) {
    const struct r_mpirank *x = row;
    fprintf(f, "%u,%llu,%llu,%llu,%llu,%.6f,%llu\n", x->rank, LLU(x->mpi_ns), LLU(x->wall), LLU(x->off), LLU(x->denom),
            x->share, LLU(x->kernel_ns));
}

static void csv_coll(FILE *f, const struct agg_report *r, const void *row) {
    const struct r_coll *x = row;
    csv_str(f, x->comm_name);
    fprintf(f, ",%u,%u,%s,%llu,%llu,%llu\n", x->comm, x->comm_size, x->name, LLU(x->calls), LLU(x->total), LLU(x->bytes));
}

static int csv(const struct agg_report *r, struct agg_csv *c) {
    if (csv_simple(c, "mpi", r->mpi, r->nmpi)) return -1;
    if (CSV_TABLE(c, "mpi_by_rank", "rank,mpi_ns,wall_ns,measurement_off_ns,denominator_ns,share_of_wall,kernel_ns", r, r->mr,
                  r->nmr, csv_rank))
        return -1;
    return CSV_TABLE(c, "collectives", "communicator,comm_id,size,function,calls,total_ns,bytes", r, r->coll, r->ncoll,
                     csv_coll);
}

/* ---------------------------------------------------------------- JSON */
static void json(const struct agg_report *r, FILE *f) {
    fprintf(f, "\"mpi\":{\"share_denominator\":\"total_ns (all MPI time)\",\"total_ns\":%llu,\"functions\":", LLU(r->mpi_total));
    json_simple_rows(f, r->mpi, r->nmpi, true);
    fputs(",\"by_rank_share_denominator\":\"denominator_ns = wall_ns (the rank's first to last event) - measurement_off_ns "
          "(a thread of the rank paused by a recording window while none was in an MPI call): MPI time is only what "
          "was recorded\",\"by_rank\":[", f);
    for (uint32_t i = 0; i < r->nmr; i++)
        fprintf(f, "%s{\"rank\":%u,\"mpi_ns\":%llu,\"wall_ns\":%llu,\"measurement_off_ns\":%llu,\"denominator_ns\":%llu,"
                   "\"share_of_wall\":%.6f,\"kernel_ns\":%llu}",
                i ? ",\n" : "\n", r->mr[i].rank, LLU(r->mr[i].mpi_ns), LLU(r->mr[i].wall), LLU(r->mr[i].off),
                LLU(r->mr[i].denom), r->mr[i].share, LLU(r->mr[i].kernel_ns));
    fputs("],\"collectives\":[", f);
    for (uint32_t i = 0; i < r->ncoll; i++) {
        const struct r_coll *x = &r->coll[i];
        json_row(f, i);
        json_kv(f, "communicator", x->comm_name, true);
        fprintf(f, "\"comm_id\":%u,\"size\":%u,", x->comm, x->comm_size);
        json_kv(f, "function", x->name, true);
        fprintf(f, "\"calls\":%llu,\"total_ns\":%llu,\"mean_ns\":%.1f,\"bytes\":%llu}", LLU(x->calls), LLU(x->total), x->mean,
                LLU(x->bytes));
    }
    fputs("]}", f);
}

/* ---------------------------------------------------------------- HTML */
static const struct html_col fn_html[] = {
    HTML_COL("function", RK_STR, MC(name)),   HTML_COL("calls", RK_U64, MC(calls)), HTML_COL("total", RK_NS, MC(total)),
    HTML_COL("share of MPI", RK_PCT, MC(share)), HTML_COL("mean", RK_NSF, MC(mean)), HTML_COL("max", RK_NS, MC(max)),
    HTML_COL("bytes", RK_BYTES, MC(bytes)),
};

static void html(const struct agg_report *r, FILE *f) {
    if (!r->nmpi) return;
    fputs("<h2>MPI</h2>\n", f);
    HTML_TABLE(f, r, fn_html, r->mpi, txt_min(r->nmpi, 100));
}

const struct agg_section agg_sec_mpi = {"MPI", build, text, csv, json, html};
