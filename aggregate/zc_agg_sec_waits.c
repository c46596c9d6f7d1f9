/* SPDX-License-Identifier: MIT */
/* The wait-state section: time ranks lost waiting for other ranks in MPI (Late Sender, Late
 * Receiver, Wait at NxN, Wait at Barrier, Late Broadcast/Scatter, Early Reduce/Gather), by class,
 * waiting rank, function, communicator and (waiting, blamed) pair; shares of MPI time. Each wait
 * carries the clock-offset uncertainty of its two ranks: waits not above it are counted apart.
 * The rows come from zc_agg_waits.c. */
#include "zc_agg_report.h"

static int build(struct agg_report *r, const struct agg_stats *s) { return agg_waits_build(r, s); }

/* ---------------------------------------------------------------- text */
#define WC(field) REP_OFF(r_wait, field)

static const char *cell_rank(const struct agg_report *r, const void *row, char *buf, size_t n) {
    snprintf(buf, n, "%u", ((const struct r_wait *)row)->a);
    return buf;
}

static const char *cell_pair(const struct agg_report *r, const void *row, char *buf, size_t n) {
    const struct r_wait *w = row;
    snprintf(buf, n, "%u waits for %u", w->a, w->b);
    return buf;
}

/* the columns every table has: the waits above their uncertainty, their time, and its share of
 * the MPI time (the job's or the waiting rank's) headed `of` */
#define WAIT_COLS(of, w)                                                                                               \
    TXT_COL("waits", 9, RK_U64, WC(n)), TXT_COL("time", 10, RK_NS, WC(ns)), TXT_COL(of, w, RK_PCT, WC(share))

static const struct txt_col cls_cols[] = {
    TXT_LEFT("wait state", 0, RK_STR, WC(cls_name)), WAIT_COLS("of MPI", 7),
    TXT_COL("below unc.", 10, RK_U64, WC(n_below)), TXT_COL("their time", 10, RK_NS, WC(ns_below)),
    TXT_COL("max unc.", 9, RK_NS, WC(unc_max)),
};
static const struct txt_col rank_cols[] = {
    TXT_FN("rank", 6, true, cell_rank), TXT_LEFT("wait state", 0, RK_STR, WC(cls_name)), WAIT_COLS("of its MPI", 10),
};
static const struct txt_col pair_cols[] = {
    TXT_FN("pair", 22, true, cell_pair), TXT_LEFT("wait state", 0, RK_STR, WC(cls_name)), WAIT_COLS("of its MPI", 10),
};
static const struct txt_col key_cols[] = {
    TXT_LEFT("name", 0, RK_STRA, WC(label)), TXT_LEFT("wait state", 16, RK_STR, WC(cls_name)), WAIT_COLS("of MPI", 7),
};

static void text(const struct agg_report *r, struct agg_text *t) {
    if (!r->nwc && !r->w_unmatched) return;
    char a[64], b[64], c[64];
    txt_heading(t, "Wait states: %s lost waiting for other ranks = %s of all MPI time (%s)", TXT_NS(a, r->w_total),
                TXT_PCT(b, rep_ratio(r->w_total, r->mpi_total)), TXT_NS(c, r->mpi_total));
    fprintf(t->f, "(%llu waits not above their ranks' clock-offset uncertainty, %s, are counted apart)\n", LLU(r->w_nbelow),
            TXT_NS(a, r->w_below));
    TXT_TABLE(t, cls_cols, 110, r->wc, r->nwc);
    if (r->nwr) {
        fprintf(t->f, "by waiting rank (top %u):\n", txt_min(t->top, r->nwr));
        TXT_TABLE(t, rank_cols, 100, r->wr, txt_min(r->nwr, t->top));
    }
    if (r->nwp) {
        fprintf(t->f, "by (waiting, blamed) pair (top %u):\n", txt_min(t->top, r->nwp));
        TXT_TABLE(t, pair_cols, 100, r->wp, txt_min(r->nwp, t->top));
    }
    if (r->nwf) {
        fprintf(t->f, "by function:\n");
        TXT_TABLE(t, key_cols, 100, r->wf, txt_min(r->nwf, t->top));
    }
    if (r->nwm) {
        fprintf(t->f, "by communicator:\n");
        TXT_TABLE(t, key_cols, 100, r->wm, txt_min(r->nwm, t->top));
    }
    if (r->w_unmatched) fprintf(t->f, "%llu message ends without their other end (not recorded) have no wait state\n",
                                LLU(r->w_unmatched));
}

/* ---------------------------------------------------------------- CSV */
static void csv_w(FILE *f, const struct agg_report *r, const void *row) {
    const struct r_wait *w = row;
    fprintf(f, "%s,%u,%u,", w->cls_name, w->a, w->b);
    csv_str(f, w->label);
    fprintf(f, ",%llu,%llu,%llu,%llu,%llu,%llu,%.6f\n", LLU(w->n), LLU(w->ns), LLU(w->n_below), LLU(w->ns_below),
            LLU(w->unc_max), LLU(w->mpi_ns), w->share);
}

static int csv(const struct agg_report *r, struct agg_csv *c) {
    static const char *const names[] = {"waits", "waits_by_rank", "waits_by_function", "waits_by_comm", "waits_by_pair"};
    const struct r_wait *v[] = {r->wc, r->wr, r->wf, r->wm, r->wp};
    const uint32_t n[] = {r->nwc, r->nwr, r->nwf, r->nwm, r->nwp};
    for (int k = 0; k < 5; k++)
        if (CSV_TABLE(c, names[k], "wait_state,key,blamed,name,waits,ns,waits_below_uncertainty,ns_below_uncertainty,"
                                   "max_uncertainty_ns,mpi_ns,share_of_mpi", r, v[k], n[k], csv_w))
            return -1;
    return 0;
}

/* ---------------------------------------------------------------- JSON */
static void json_w(FILE *f, const char *name, const char *key, const struct r_wait *v, uint32_t n) {
    fprintf(f, ",\"%s\":[", name);
    for (uint32_t i = 0; i < n; i++) {
        const struct r_wait *w = &v[i];
        json_row(f, i);
        json_kv(f, "wait_state", w->cls_name, true);
        if (key && w->label[0]) json_kv(f, key, w->label, true);
        if (key) fprintf(f, "\"%s_id\":%u,", key, w->a);
        else if (strcmp(name, "by_pair") == 0) fprintf(f, "\"waiting\":%u,\"blamed\":%u,", w->a, w->b);
        else if (strcmp(name, "by_rank") == 0) fprintf(f, "\"rank\":%u,", w->a);
        fprintf(f, "\"waits\":%llu,\"ns\":%llu,\"waits_below_uncertainty\":%llu,\"ns_below_uncertainty\":%llu,"
                   "\"max_uncertainty_ns\":%llu,\"mpi_ns\":%llu,\"share_of_mpi\":%.6f}",
                LLU(w->n), LLU(w->ns), LLU(w->n_below), LLU(w->ns_below), LLU(w->unc_max), LLU(w->mpi_ns), w->share);
    }
    fputc(']', f);
}

static void json(const struct agg_report *r, FILE *f) {
    fprintf(f, "\"wait_states\":{\"ns\":%llu,\"mpi_ns\":%llu,\"share_of_mpi\":%.6f,\"waits_below_uncertainty\":%llu,"
               "\"ns_below_uncertainty\":%llu,\"unmatched_message_ends\":%llu",
            LLU(r->w_total), LLU(r->mpi_total), rep_ratio(r->w_total, r->mpi_total), LLU(r->w_nbelow), LLU(r->w_below),
            LLU(r->w_unmatched));
    json_w(f, "by_class", NULL, r->wc, r->nwc);
    json_w(f, "by_rank", NULL, r->wr, r->nwr);
    json_w(f, "by_function", "function", r->wf, r->nwf);
    json_w(f, "by_communicator", "communicator", r->wm, r->nwm);
    json_w(f, "by_pair", NULL, r->wp, r->nwp);
    fputc('}', f);
}

/* ---------------------------------------------------------------- HTML */
static void html_rank(FILE *f, const struct agg_report *r, const void *row) {
    html_td_u(f, ((const struct r_wait *)row)->a);
}

static void html_blamed(FILE *f, const struct agg_report *r, const void *row) {
    html_td_u(f, ((const struct r_wait *)row)->b);
}

/* WAIT_COLS in HTML */
#define WAIT_HTML(of) HTML_COL("waits", RK_U64, WC(n)), HTML_COL("time", RK_NS, WC(ns)), HTML_COL(of, RK_PCT, WC(share))

static const struct html_col cls_html[] = {
    HTML_COL("wait state", RK_STR, WC(cls_name)), WAIT_HTML("share of MPI"),
    HTML_COL("waits below uncertainty", RK_U64, WC(n_below)), HTML_COL("their time", RK_NS, WC(ns_below)),
    HTML_COL("max uncertainty", RK_NS, WC(unc_max)),
};
static const struct html_col pair_html[] = {
    HTML_FN("waiting rank", html_rank), HTML_FN("blamed rank", html_blamed), HTML_COL("wait state", RK_STR, WC(cls_name)),
    WAIT_HTML("share of its MPI"),
};
static const struct html_col key_html[] = {
    HTML_COL("name", RK_STRA, WC(label)), HTML_COL("wait state", RK_STR, WC(cls_name)), WAIT_HTML("share of MPI"),
};

static void html(const struct agg_report *r, FILE *f) {
    if (!r->nwc) return;
    char a[64];
    agg_fmt_ns(a, sizeof(a), (double)r->w_total);
    fprintf(f, "<h2 id=\"waits\">Wait states</h2>\n<p>%s lost waiting for other ranks, %.1f%% of all MPI time.</p>\n", a,
            100 * rep_ratio(r->w_total, r->mpi_total));
    HTML_TABLE(f, r, cls_html, r->wc, r->nwc);
    fputs("<h3>By (waiting, blamed) pair</h3>\n", f);
    HTML_TABLE(f, r, pair_html, r->wp, txt_min(r->nwp, 100));
    fputs("<h3>By function</h3>\n", f);
    HTML_TABLE(f, r, key_html, r->wf, txt_min(r->nwf, 100));
    fputs("<h3>By communicator</h3>\n", f);
    HTML_TABLE(f, r, key_html, r->wm, txt_min(r->nwm, 100));
}

const struct agg_section agg_sec_waits = {"wait states", build, text, csv, json, html};
