/* SPDX-License-Identifier: MIT */
/* The transfers section: copies, fills and image copies by memory pair, by log2 size class and
 * by rank (count, bytes, busy time, bandwidth = bytes / busy time, median bandwidth), and the
 * barriers' device time. Fill and image-copy byte counts are not in the archive (A15): their
 * bytes and bandwidths are "n/a" (null in JSON). */
#include "zc_agg_report.h"

#include <stdlib.h>
#include <string.h>

/* copies carry their bytes; fills and images do not */
static bool has_bytes(const struct r_xfer *x) { return x->xfer >> 16 == 1; }

/* ---------------------------------------------------------------- build */
static const struct rep_key xfer_order[] = {
    REP_DESC(r_xfer, busy), REP_ASC(r_xfer, xfer), REP_ASC(r_xfer, cls), REP_ASC(r_xfer, rank),
};

static const struct rep_key xsize_order[] = {REP_ASC(r_xfer, xfer), REP_ASC(r_xfer, cls)}; /* by transfer kind, then size */

static void xfer_row(struct r_xfer *w, const struct agg_key *key, const struct agg_acc *a) {
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
    w->mean = rep_mean(a);
    w->bw = a->sum ? (double)a->bytes * 1e9 / (double)a->sum : 0.0;
    if (key->table == T_XFER_SIZE) {
        w->cls = (uint32_t)key->b;
        w->lo = w->cls ? (uint64_t)1 << (w->cls - 1) : 0;
        w->hi = w->cls ? (w->cls >= 64 ? UINT64_MAX : (uint64_t)1 << w->cls) : 0;
    }
    if (key->table == T_XFER_RANK) w->rank = (uint32_t)key->b;
}

/* The bandwidth sketch counts only transfers with bytes and time: its total is its own, not the
 * transfers' count. */
static void median_bandwidths(const struct agg_stats *s, uint32_t table, struct r_xfer *v, uint32_t n) {
    for (uint32_t i = 0; i < n; i++) {
        const struct agg_acc *a = agg_stats_find(s, table, v[i].xfer, table == T_XFER_SIZE ? v[i].cls : 0, 0);
        uint64_t tot = 0;
        if (a && a->sk)
            for (uint32_t b = 0; b < a->sk->n; b++) tot += a->sk->c[b];
        v[i].p50_bw = a && a->sk ? agg_sketch_quantile(a->sk, tot, 50) : 0;
    }
}

static int build(struct agg_report *r, const struct agg_stats *s) {
    if (!REP_ALLOC(r, r->x, rep_count(s, T_XFER)) || !REP_ALLOC(r, r->xs, rep_count(s, T_XFER_SIZE)) ||
        !REP_ALLOC(r, r->xr, rep_count(s, T_XFER_RANK)))
        return -1;
    for (uint32_t i = 0; i < s->n; i++) {
        const struct agg_key *key = &s->keys[i];
        if (key->table == T_XFER) xfer_row(&r->x[r->nx++], key, &s->accs[i]);
        else if (key->table == T_XFER_SIZE) xfer_row(&r->xs[r->nxs++], key, &s->accs[i]);
        else if (key->table == T_XFER_RANK) xfer_row(&r->xr[r->nxr++], key, &s->accs[i]);
    }
    median_bandwidths(s, T_XFER, r->x, r->nx);
    median_bandwidths(s, T_XFER_SIZE, r->xs, r->nxs);
    REP_SORT(r->x, r->nx, xfer_order);
    REP_SORT(r->xs, r->nxs, xsize_order);
    REP_SORT(r->xr, r->nxr, xfer_order);
    rep_simple_rows(r, s, T_BARRIER, AGG_NONE, &r->bar, &r->nbar);
    return r->bar ? 0 : -1;
}

/* ---------------------------------------------------------------- text */
#define XC(field) REP_OFF(r_xfer, field)
#define BC(field) REP_OFF(r_simple, field)

/* a copy's bytes (0), bandwidth (1) or median bandwidth (2); "n/a" for fills and images */
static const char *copy_figure(const struct r_xfer *x, int what, char *buf, size_t n) {
    if (!has_bytes(x)) return "n/a";
    if (what == 0) agg_fmt_bytes(buf, n, (double)x->bytes);
    else agg_fmt_rate(buf, n, what == 1 ? x->bw : (double)x->p50_bw);
    return buf;
}

static const char *bytes_or_na(const struct agg_report *r, const void *row, char *buf, size_t n) {
    return copy_figure(row, 0, buf, n);
}

static const char *bw_or_na(const struct agg_report *r, const void *row, char *buf, size_t n) {
    return copy_figure(row, 1, buf, n);
}

static const char *median_or_na(const struct agg_report *r, const void *row, char *buf, size_t n) {
    return copy_figure(row, 2, buf, n);
}

static const char *memory_dir(const struct agg_report *r, const void *row, char *buf, size_t n) {
    const struct r_xfer *x = row;
    snprintf(buf, n, "%s %s", x->mem, x->dir);
    return buf;
}

static const char *size_class(const struct agg_report *r, const void *row, char *buf, size_t n) {
    rep_size_class(buf, n, ((const struct r_xfer *)row)->cls);
    return buf;
}

static const struct txt_col xfer_cols[] = {
    TXT_LEFT("kind", 0, RK_STR, XC(kind)),      TXT_LEFT("memory", 6, RK_STRA, XC(mem)),
    TXT_LEFT("dir", 5, RK_STR, XC(dir)),        TXT_COL("calls", 9, RK_U64, XC(calls)),
    TXT_FN("bytes", 11, false, bytes_or_na),    TXT_COL("busy", 10, RK_NS, XC(busy)),
    TXT_COL("mean", 10, RK_NSF, XC(mean)),      TXT_FN("bandwidth", 11, false, bw_or_na),
    TXT_FN("median bw", 11, false, median_or_na),
};

/* only copies have sizes: the rows of fills and images are left out */
static const struct txt_col size_cols[] = {
    TXT_FN("memory", 0, true, memory_dir),      TXT_FN("size", 22, true, size_class),
    TXT_COL("calls", 9, RK_U64, XC(calls)),     TXT_COL("bytes", 11, RK_BYTES, XC(bytes)),
    TXT_COL("busy", 10, RK_NS, XC(busy)),       TXT_FN("bandwidth", 11, false, bw_or_na),
    TXT_FN("median bw", 11, false, median_or_na),
};

static const struct txt_col barrier_cols[] = {
    TXT_LEFT("barrier", 0, RK_STR, BC(name)), TXT_COL("calls", 9, RK_U64, BC(calls)), TXT_COL("total", 10, RK_NS, BC(total)),
    TXT_COL("mean", 10, RK_NSF, BC(mean)),    TXT_COL("max", 10, RK_NS, BC(max)),
};

static void text(const struct agg_report *r, struct agg_text *t) {
    if (!r->any_l0) return; /* no Level Zero activity: said once, in the findings */
    txt_heading(t, "Transfers and fills by memory (H host, D device, S shared, M other, I image); bandwidth = bytes / busy "
                   "time (sum of durations)");
    TXT_TABLE(t, xfer_cols, 100, r->x, r->nx);
    if (!r->nx) fprintf(t->f, "(none)\n");
    if (r->nxs) {
        txt_heading(t, "Copies by size class (log2): bandwidth = bytes / busy time; median of the per-copy bandwidths");
        txt_table_start(t, size_cols, (int)(sizeof(size_cols) / sizeof(*size_cols)), 100);
        for (uint32_t i = 0; i < r->nxs; i++)
            if (has_bytes(&r->xs[i])) txt_table_row(t, &r->xs[i]);
    }
    if (r->nbar) {
        txt_heading(t, "Barriers (device time, not kernels)");
        TXT_TABLE(t, barrier_cols, 100, r->bar, r->nbar);
    }
}

/* ---------------------------------------------------------------- CSV */
static void csv_xfer(FILE *f, const struct agg_report *r, const void *row) {
    const struct r_xfer *x = row;
    fprintf(f, "%s,%s,%s,%llu,%llu,%llu,%.1f,%llu,%llu,%.1f,%llu\n", x->kind, x->mem, x->dir, LLU(x->calls), LLU(x->bytes),
            LLU(x->busy), x->mean, LLU(x->min), LLU(x->max), x->bw, LLU(x->p50_bw));
}

static void csv_size(FILE *f, const struct agg_report *r, const void *row) {
    const struct r_xfer *x = row;
    fprintf(f, "%s,%s,%s,%llu,%llu,%llu,%llu,%llu,%.1f,%llu\n", x->kind, x->mem, x->dir, LLU(x->lo), LLU(x->hi),
            LLU(x->calls), LLU(x->bytes), LLU(x->busy), x->bw, LLU(x->p50_bw));
}

static void csv_rank(FILE *f, const struct agg_report *r, const void *row) {
    const struct r_xfer *x = row;
    fprintf(f, "%s,%s,%s,%u,%llu,%llu,%llu\n", x->kind, x->mem, x->dir, x->rank, LLU(x->calls), LLU(x->bytes), LLU(x->busy));
}

static int csv(const struct agg_report *r, struct agg_csv *c) {
    if (CSV_TABLE(c, "transfers",
                  "kind,memory,direction,calls,bytes,busy_ns,mean_ns,min_ns,max_ns,bandwidth_Bps,median_bandwidth_Bps", r,
                  r->x, r->nx, csv_xfer))
        return -1;
    if (CSV_TABLE(c, "transfers_by_size",
                  "kind,memory,direction,size_from,size_to,calls,bytes,busy_ns,bandwidth_Bps,median_bandwidth_Bps", r, r->xs,
                  r->nxs, csv_size))
        return -1;
    if (CSV_TABLE(c, "transfers_by_rank", "kind,memory,direction,rank,calls,bytes,busy_ns", r, r->xr, r->nxr, csv_rank))
        return -1;
    return csv_simple(c, "barriers", r->bar, r->nbar);
}

/* ---------------------------------------------------------------- JSON */
static void xfer_obj(FILE *f, const struct r_xfer *x) {
    json_kv(f, "kind", x->kind, true);
    json_kv(f, "memory", x->mem, true);
    json_kv(f, "direction", x->dir, true);
    fprintf(f, "\"calls\":%llu,", LLU(x->calls));
    if (has_bytes(x)) fprintf(f, "\"bytes\":%llu,", LLU(x->bytes));
    else fputs("\"bytes\":null,", f);
    fprintf(f, "\"busy_ns\":%llu", LLU(x->busy));
}

static void json(const struct agg_report *r, FILE *f) {
    fputs("\"transfers\":{\"bandwidth\":\"bytes / busy_ns (summed durations)\",\"rows\":[", f);
    for (uint32_t i = 0; i < r->nx; i++) {
        const struct r_xfer *x = &r->x[i];
        json_row(f, i);
        xfer_obj(f, x);
        fprintf(f, ",\"mean_ns\":%.1f,\"min_ns\":%llu,\"max_ns\":%llu,", x->mean, LLU(x->min), LLU(x->max));
        if (has_bytes(x)) fprintf(f, "\"bandwidth_Bps\":%.1f,\"median_bandwidth_Bps\":%llu}", x->bw, LLU(x->p50_bw));
        else fputs("\"bandwidth_Bps\":null,\"median_bandwidth_Bps\":null}", f);
    }
    fputs("]},\n\"transfers_by_size\":[", f);
    for (uint32_t i = 0, n = 0; i < r->nxs; i++) {
        const struct r_xfer *x = &r->xs[i];
        if (!has_bytes(x)) continue;
        json_row(f, n++);
        xfer_obj(f, x);
        fprintf(f, ",\"size_from\":%llu,\"size_to\":%llu,\"bandwidth_Bps\":%.1f,\"median_bandwidth_Bps\":%llu}", LLU(x->lo),
                LLU(x->hi), x->bw, LLU(x->p50_bw));
    }
    fputs("],\n\"transfers_by_rank\":[", f);
    for (uint32_t i = 0; i < r->nxr; i++) {
        json_row(f, i);
        xfer_obj(f, &r->xr[i]);
        fprintf(f, ",\"rank\":%u}", r->xr[i].rank);
    }
    fputs("],\n\"barriers\":", f);
    json_simple_rows(f, r->bar, r->nbar, false);
}

/* ---------------------------------------------------------------- HTML */
static void td_bytes(FILE *f, const struct agg_report *r, const void *row) {
    const struct r_xfer *x = row;
    char b[64];
    agg_fmt_bytes(b, sizeof(b), (double)x->bytes);
    fprintf(f, "<td data-s=\"%llu\">%s</td>", LLU(x->bytes), has_bytes(x) ? b : "n/a");
}

static void td_bw(FILE *f, const struct agg_report *r, const void *row) {
    const struct r_xfer *x = row;
    char b[64];
    agg_fmt_rate(b, sizeof(b), x->bw);
    fprintf(f, "<td data-s=\"%.1f\">%s</td>", x->bw, has_bytes(x) ? b : "n/a");
}

static void td_median(FILE *f, const struct agg_report *r, const void *row) {
    const struct r_xfer *x = row;
    char b[64];
    agg_fmt_rate(b, sizeof(b), (double)x->p50_bw);
    fprintf(f, "<td data-s=\"%llu\">%s</td>", LLU(x->p50_bw), has_bytes(x) ? b : "n/a");
}

static const struct html_col xfer_html[] = {
    HTML_COL("kind", RK_STR, XC(kind)),   HTML_COL("memory", RK_STRA, XC(mem)), HTML_COL("direction", RK_STR, XC(dir)),
    HTML_COL("calls", RK_U64, XC(calls)), HTML_FN("bytes", td_bytes),           HTML_COL("busy", RK_NS, XC(busy)),
    HTML_FN("bandwidth", td_bw),          HTML_FN("median bandwidth", td_median),
};

static void html(const struct agg_report *r, FILE *f) {
    if (!r->any_l0) return; /* no Level Zero activity: said once, in the findings */
    fputs("<h2>Transfers and fills</h2>\n", f);
    HTML_TABLE(f, r, xfer_html, r->x, r->nx);
}

const struct agg_section agg_sec_transfers = {"transfers", build, text, csv, json, html};
