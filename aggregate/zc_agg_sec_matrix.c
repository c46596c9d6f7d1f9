/* SPDX-License-Identifier: MIT */
/* The communication section: the matrix of point-to-point messages and bytes per (sender,
 * receiver) world-rank pair, all communicators summed and per communicator (counted where the
 * send was recorded, exact integers: the same for any number of readers), message sizes per
 * function in log2 classes, and in HTML a heatmap of the matrix and MPI time per rank. */
#include "zc_agg_report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- build */
static const struct rep_key msg_order[] = {REP_ASC(r_msg, comm), REP_ASC(r_msg, src), REP_ASC(r_msg, dst)};

static int cmp_msize(const void *x, const void *y) {
    const struct r_msize *a = x, *b = y;
    int c = rep_cmp_named(a->name, a->region, b->name, b->region);
    if (c) return c;
    return (a->cls > b->cls) - (a->cls < b->cls);
}

static int build(struct agg_report *r, const struct agg_stats *s) {
    uint32_t n = rep_count(s, T_MSG);
    if (!REP_ALLOC(r, r->msg, n) || !REP_ALLOC(r, r->msgw, n) || !REP_ALLOC(r, r->msz, rep_count(s, T_MPI_SIZE))) return -1;
    for (uint32_t i = 0; i < s->n; i++) {
        const struct agg_key *k = &s->keys[i];
        const struct agg_acc *a = &s->accs[i];
        if (k->table == T_MSG) {
            r->msg[r->nmsg++] = (struct r_msg){k->a, (uint32_t)k->b, (uint32_t)k->c, a->n, a->bytes};
            r->msg_n += a->n;
            r->msg_bytes += a->bytes;
        } else if (k->table == T_MPI_SIZE) {
            r->msz[r->nmsz++] = (struct r_msize){k->a, (uint32_t)k->b, rep_region_name(r, k->a), a->n, a->bytes};
        }
    }
    REP_SORT(r->msg, r->nmsg, msg_order);
    qsort(r->msz, r->nmsz, sizeof(*r->msz), cmp_msize);
    /* all communicators summed: the pairs sorted, equal pairs added */
    for (uint32_t i = 0; i < r->nmsg; i++) r->msgw[i] = (struct r_msg){AGG_NONE, r->msg[i].src, r->msg[i].dst, r->msg[i].n, r->msg[i].bytes};
    REP_SORT(r->msgw, r->nmsg, msg_order);
    for (uint32_t i = 0; i < r->nmsg; i++) {
        if (r->nmsgw && r->msgw[r->nmsgw - 1].src == r->msgw[i].src && r->msgw[r->nmsgw - 1].dst == r->msgw[i].dst) {
            r->msgw[r->nmsgw - 1].n += r->msgw[i].n;
            r->msgw[r->nmsgw - 1].bytes += r->msgw[i].bytes;
        } else {
            r->msgw[r->nmsgw++] = r->msgw[i];
        }
    }
    return 0;
}

static const char *comm_name(const struct agg_report *r, uint32_t comm, char *buf, size_t n) {
    const struct agg_defs *d = r->d;
    if (comm < d->ncomms && d->comms[comm].defined && agg_str(d, d->comms[comm].name)[0]) return agg_str(d, d->comms[comm].name);
    snprintf(buf, n, "comm %u", comm);
    return buf;
}

/* ---------------------------------------------------------------- text */
static const struct rep_key bytes_order[] = {
    REP_DESC(r_msg, bytes), REP_ASC(r_msg, comm), REP_ASC(r_msg, src), REP_ASC(r_msg, dst),
};

static void text(const struct agg_report *r, struct agg_text *t) {
    if (!r->nmsg && !r->nmsz) return;
    char a[64], b[64], c[64];
    agg_fmt_bytes(a, sizeof(a), (double)r->msg_bytes);
    txt_heading(t, "Communication matrix: %llu point-to-point messages, %s, %u (sender, receiver) pairs", LLU(r->msg_n), a,
                r->nmsgw);
    struct r_msg *top = malloc((r->nmsgw + 1) * sizeof(*top));
    if (top && r->nmsgw) {
        memcpy(top, r->msgw, r->nmsgw * sizeof(*top));
        REP_SORT(top, r->nmsgw, bytes_order);
        fprintf(t->f, "%-10s %-10s %12s %12s %7s\n", "sender", "receiver", "messages", "bytes", "share");
        for (uint32_t i = 0; i < r->nmsgw && i < t->top; i++) {
            agg_fmt_bytes(b, sizeof(b), (double)top[i].bytes);
            fprintf(t->f, "%-10u %-10u %12llu %12s %7s\n", top[i].src, top[i].dst, LLU(top[i].n), b,
                    TXT_PCT(c, rep_ratio(top[i].bytes, r->msg_bytes)));
        }
    }
    free(top);
    if (r->nmsz) {
        fprintf(t->f, "message sizes per function (log2 classes; collectives: bytes sent + received per call):\n");
        for (uint32_t i = 0; i < r->nmsz; i++) {
            rep_size_class(a, sizeof(a), r->msz[i].cls);
            agg_fmt_bytes(b, sizeof(b), (double)r->msz[i].bytes);
            fprintf(t->f, "  %-24s %-22s %10llu %12s\n", r->msz[i].name, a, LLU(r->msz[i].n), b);
        }
    }
}

/* ---------------------------------------------------------------- CSV */
static void csv_msg(FILE *f, const struct agg_report *r, const void *row) {
    const struct r_msg *x = row;
    char buf[32];
    if (x->comm != AGG_NONE) {
        csv_str(f, comm_name(r, x->comm, buf, sizeof(buf)));
        fprintf(f, ",%u,", x->comm);
    }
    fprintf(f, "%u,%u,%llu,%llu\n", x->src, x->dst, LLU(x->n), LLU(x->bytes));
}

static void csv_msize(FILE *f, const struct agg_report *r, const void *row) {
    const struct r_msize *x = row;
    fprintf(f, "%s,%u,%llu,%llu,%llu\n", x->name, x->cls, LLU(x->cls ? UINT64_C(1) << (x->cls - 1) : 0), LLU(x->n),
            LLU(x->bytes));
}

static int csv(const struct agg_report *r, struct agg_csv *c) {
    if (CSV_TABLE(c, "comm_matrix", "sender,receiver,messages,bytes", r, r->msgw, r->nmsgw, csv_msg)) return -1;
    if (CSV_TABLE(c, "comm_matrix_by_comm", "communicator,comm_id,sender,receiver,messages,bytes", r, r->msg, r->nmsg, csv_msg))
        return -1;
    return CSV_TABLE(c, "mpi_sizes", "function,size_class,class_from_bytes,count,bytes", r, r->msz, r->nmsz, csv_msize);
}

/* ---------------------------------------------------------------- JSON */
static void json_pairs(FILE *f, const struct r_msg *v, uint32_t n) {
    fputc('[', f);
    for (uint32_t i = 0; i < n; i++)
        fprintf(f, "%s{\"sender\":%u,\"receiver\":%u,\"messages\":%llu,\"bytes\":%llu}", i ? ",\n" : "\n", v[i].src, v[i].dst,
                LLU(v[i].n), LLU(v[i].bytes));
    fputc(']', f);
}

static void json(const struct agg_report *r, FILE *f) {
    fprintf(f, "\"comm_matrix\":{\"messages\":%llu,\"bytes\":%llu,\"pairs\":", LLU(r->msg_n), LLU(r->msg_bytes));
    json_pairs(f, r->msgw, r->nmsgw);
    fputs(",\"by_communicator\":[", f);
    for (uint32_t i = 0, k = 0; i < r->nmsg; k++) {
        uint32_t j = i;
        while (j < r->nmsg && r->msg[j].comm == r->msg[i].comm) j++;
        char buf[32];
        fprintf(f, "%s{\"comm_id\":%u,", k ? ",\n" : "\n", r->msg[i].comm);
        json_kv(f, "communicator", comm_name(r, r->msg[i].comm, buf, sizeof(buf)), true);
        fputs("\"pairs\":", f);
        json_pairs(f, r->msg + i, j - i);
        fputc('}', f);
        i = j;
    }
    fputs("],\"sizes\":[", f);
    for (uint32_t i = 0; i < r->nmsz; i++) {
        json_row(f, i);
        json_kv(f, "function", r->msz[i].name, true);
        fprintf(f, "\"size_class\":%u,\"count\":%llu,\"bytes\":%llu}", r->msz[i].cls, LLU(r->msz[i].n), LLU(r->msz[i].bytes));
    }
    fputs("]}", f);
}

/* ---------------------------------------------------------------- HTML */
/* ranks beyond HTML_MAXROWS are grouped: each cell sums its group's pairs */
static void heatmap(const struct agg_report *r, FILE *f) {
    uint32_t n = r->d->nranks, g = n > HTML_MAXROWS ? (n + HTML_MAXROWS - 1) / HTML_MAXROWS : 1, m = (n + g - 1) / g;
    double *cell = calloc((size_t)m * m + 1, sizeof(double));
    if (!cell) return;
    double mx = 0;
    for (uint32_t i = 0; i < r->nmsgw; i++) {
        uint32_t a = r->msgw[i].src / g, b = r->msgw[i].dst / g;
        if (a >= m || b >= m) continue;
        cell[(size_t)a * m + b] += (double)r->msgw[i].bytes;
        if (cell[(size_t)a * m + b] > mx) mx = cell[(size_t)a * m + b];
    }
    int cs = m <= 16 ? 24 : m <= 48 ? 10 : 6, left = 60, top = 20, W = left + (int)m * cs + 20, H = top + (int)m * cs + 40;
    fprintf(f, "<svg id=\"chart-matrix\" class=\"chart\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" role=\"img\">\n", W, H,
            W, H);
    fprintf(f, "<text x=\"%d\" y=\"14\" class=\"lab\">bytes sent, sender (row) to receiver (column)%s</text>\n", left,
            g > 1 ? ", ranks grouped" : "");
    for (uint32_t a = 0; a < m; a++)
        for (uint32_t b = 0; b < m; b++) {
            double v = cell[(size_t)a * m + b];
            if (v <= 0) continue;
            double x = mx > 1 ? log(v) / log(mx) : 1; /* log scale: small pairs stay visible */
            int c = (int)(235 - 200 * (x < 0 ? 0 : x));
            char by[32];
            agg_fmt_bytes(by, sizeof(by), v);
            fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"rgb(%d,%d,255)\"><title>%u &#8594; %u: %s</title></rect>\n",
                    left + (int)b * cs, top + (int)a * cs, cs, cs, c, c, a * g, b * g, by);
        }
    fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#999\"/>\n", left, top, (int)m * cs,
            (int)m * cs);
    fprintf(f, "<text x=\"%d\" y=\"%d\" class=\"lab\" text-anchor=\"end\">rank 0</text>\n", left - 4, top + cs / 2 + 4);
    fputs("</svg>\n", f);
    free(cell);
}

/* MPI time per rank: bars of its share of the rank's recorded time */
static void mpi_chart(const struct agg_report *r, FILE *f) {
    uint32_t n = r->nmr < HTML_MAXROWS ? r->nmr : HTML_MAXROWS;
    int bh = 14, left = 70, W = 760, H = 20 + (int)n * bh;
    fprintf(f, "<svg id=\"chart-mpi-ranks\" class=\"chart\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" role=\"img\">\n", W, H,
            W, H);
    for (uint32_t i = 0; i < n; i++) {
        const struct r_mpirank *x = &r->mr[i];
        char t[64];
        agg_fmt_ns(t, sizeof(t), (double)x->mpi_ns);
        int y = 10 + (int)i * bh, w = (int)((W - left - 80) * (x->share > 1 ? 1 : x->share));
        fprintf(f, "<text x=\"%d\" y=\"%d\" class=\"lab\" text-anchor=\"end\">rank %u</text>", left - 6, y + 11, x->rank);
        fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"#e08a2c\"><title>rank %u: %s in MPI, %.1f%%</title></rect>"
                   "<text x=\"%d\" y=\"%d\" class=\"lab\">%.1f%%</text>\n",
                left, y + 1, w, bh - 3, x->rank, t, 100 * x->share, left + w + 4, y + 11, 100 * x->share);
    }
    fputs("</svg>\n", f);
}

static void html(const struct agg_report *r, FILE *f) {
    if (!r->nmr && !r->nmsg) return;
    fputs("<h2 id=\"communication\">Communication</h2>\n", f);
    if (r->nmsgw) {
        char b[64];
        agg_fmt_bytes(b, sizeof(b), (double)r->msg_bytes);
        fprintf(f, "<p>%llu point-to-point messages, %s (all in <code>csv/comm_matrix*.csv</code>).</p>\n", LLU(r->msg_n), b);
        heatmap(r, f);
    }
    if (r->nmr) {
        fputs("<h3>MPI time per rank (share of its recorded time)</h3>\n", f);
        mpi_chart(r, f);
    }
}

const struct agg_section agg_sec_matrix = {"communication", build, text, csv, json, html};
