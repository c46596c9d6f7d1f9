/* SPDX-License-Identifier: MIT */
/* The HTML report's charts, inline SVG with a <title> per mark for the hover read-out: top
 * kernels, rank x kernel imbalance, rank x time utilisation, bandwidth by memory and size. Large
 * jobs are shown with ranks grouped into at most HTML_MAXROWS rows (each row: the group's maximum
 * for imbalance, its mean for utilisation); the tables and the JSON keep every rank. */
#include "zc_agg_report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define TOPK 12 /* kernels in the imbalance chart */

static void svg_open(FILE *f, const char *id, int W, int H) {
    fprintf(f, "<svg id=\"%s\" class=\"chart\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" role=\"img\">\n", id, W, H,
            W, H);
}

static const char *const palette[] = {"#3b6fb6", "#e08a2c", "#4a9a5b", "#c8483f", "#8162b3", "#8a6a4f",
                                      "#d16fa7", "#6f7b86", "#a8a83a", "#39a3b5", "#5b4ea0", "#c99a2e"};

/* sequential: utilisation 0..1, white to deep teal */
static void seq_color(char *out, size_t n, double v) {
    if (v < 0) {
        snprintf(out, n, "#eeeeee");
        return;
    }
    if (v > 1) v = 1;
    double t = sqrt(v); /* more contrast among small values */
    int r = (int)(247 - t * (247 - 8)), g = (int)(251 - t * (251 - 88)), b = (int)(255 - t * (255 - 101));
    snprintf(out, n, "#%02x%02x%02x", r, g, b);
}

/* diverging around 1: below blue, above red (ratio to the mean over ranks) */
static void div_color(char *out, size_t n, double ratio) {
    double x = ratio <= 0 ? -1 : log2(ratio) / 0.5; /* +-0.5 octave saturates */
    if (x > 1) x = 1;
    if (x < -1) x = -1;
    int r, g, b;
    if (x >= 0) r = 255, g = (int)(255 - x * (255 - 80)), b = (int)(255 - x * (255 - 60));
    else r = (int)(255 + x * (255 - 70)), g = (int)(255 + x * (255 - 120)), b = 255;
    snprintf(out, n, "#%02x%02x%02x", r, g, b);
}

/* ---------------------------------------------------------------- charts */
void html_chart_kernels(const struct agg_report *r, FILE *f) {
    uint32_t n = r->nk < 15 ? r->nk : 15;
    int W = 960, left = 260, right = 150, bh = 22, top = 10, H = top + (int)n * bh + 30;
    svg_open(f, "chart-kernels", W, H);
    uint64_t mx = 0;
    for (uint32_t i = 0; i < n; i++) mx = r->k[i].total > mx ? r->k[i].total : mx;
    for (uint32_t i = 0; i < n; i++) {
        const struct r_kernel *k = &r->k[i];
        double w = mx ? (double)(W - left - right) * (double)k->total / (double)mx : 0;
        int y = top + (int)i * bh;
        char t[64], mean[64];
        agg_fmt_ns(t, sizeof(t), (double)k->total);
        agg_fmt_ns(mean, sizeof(mean), k->mean);
        fprintf(f, "<text x=\"%d\" y=\"%d\" class=\"lab\" text-anchor=\"end\">", left - 8, y + 15);
        char name[64];
        snprintf(name, sizeof(name), "%.60s", k->name);
        html_esc(f, name);
        fprintf(f, "</text><rect class=\"bar\" x=\"%d\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"%s\"><title>", left, y + 3, w,
                bh - 6, palette[i % 12]);
        html_esc(f, k->name);
        fprintf(f, ": %s total, %llu calls, mean %s, %.1f%% of kernel time</title></rect>", t, LLU(k->calls), mean, 100 * k->share);
        fprintf(f, "<text x=\"%.1f\" y=\"%d\" class=\"val\">%s  %.1f%%</text>\n", left + w + 6, y + 15, t, 100 * k->share);
    }
    if (!n) fprintf(f, "<text x=\"20\" y=\"30\" class=\"lab\">no kernels in this archive</text>\n");
    fputs("</svg>\n", f);
}

static uint32_t rows_for(uint32_t nranks) { return nranks < HTML_MAXROWS ? nranks : HTML_MAXROWS; }
/* Display row i of a rank grid: its ranks [lo, hi), and its label, right-aligned at x and ending
 * at y (thin rows, more than 48, only every 8th). */
static void grid_row(FILE *f, uint32_t nranks, uint32_t rows, uint32_t i, int x, int y, uint32_t *lo, uint32_t *hi) {
    *lo = (uint32_t)((uint64_t)nranks * i / rows);
    *hi = (uint32_t)((uint64_t)nranks * (i + 1) / rows);
    if (rows > 48 && i % 8 != 0) return;
    if (*hi - *lo == 1) fprintf(f, "<text class=\"lab\" x=\"%d\" y=\"%d\" text-anchor=\"end\">rank %u</text>", x, y - 3, *lo);
    else fprintf(f, "<text class=\"lab\" x=\"%d\" y=\"%d\" text-anchor=\"end\">%u-%u</text>", x, y - 1, *lo, *hi - 1);
}

void html_chart_imbalance(const struct agg_report *r, FILE *f) {
    const struct agg_defs *d = r->d;
    uint32_t nk = r->nk < TOPK ? r->nk : TOPK, nranks = d->nranks, rows = rows_for(nranks);
    int cw = 62, ch = rows > 48 ? 6 : 18, left = 110, top = 96, W = left + (int)nk * cw + 200, H = top + (int)rows * ch + 40;
    if (H < top + 150) H = top + 150; /* the legend */
    if (W < 600) W = 600;
    /* per-rank totals of the top kernels */
    double *m = calloc((size_t)nk * nranks + 1, sizeof(double));
    if (!m) return;
    for (uint32_t i = 0; i < r->nkr; i++) {
        const struct r_rowk *w = &r->kr[i];
        for (uint32_t k = 0; k < nk; k++)
            if (r->k[k].region == w->region && w->rank < nranks) m[(size_t)k * nranks + w->rank] = (double)w->total;
    }
    svg_open(f, "chart-imbalance", W, H);
    for (uint32_t k = 0; k < nk; k++) {
        char name[40];
        snprintf(name, sizeof(name), "%.28s", r->k[k].name);
        fprintf(f, "<text class=\"lab\" transform=\"translate(%d,%d) rotate(-35)\">", left + (int)k * cw + 8, top - 6);
        html_esc(f, name);
        fputs("</text>\n", f);
    }
    for (uint32_t i = 0; i < rows; i++) {
        uint32_t lo, hi;
        int y = top + (int)i * ch;
        grid_row(f, nranks, rows, i, left - 6, y + ch, &lo, &hi);
        for (uint32_t k = 0; k < nk; k++) {
            double mean = r->k[k].rank_mean, v = 0;
            uint32_t at = lo;
            for (uint32_t q = lo; q < hi; q++)
                if (m[(size_t)k * nranks + q] >= v) v = m[(size_t)k * nranks + q], at = q;
            char col[16], t[64];
            div_color(col, sizeof(col), mean > 0 ? v / mean : 0);
            agg_fmt_ns(t, sizeof(t), v);
            fprintf(f, "<rect class=\"cell hm\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"%s\" data-v=\"%.3f\"><title>rank %u, ",
                    left + (int)k * cw, y, cw - 1, ch - 1, col, mean > 0 ? v / mean : 0, at);
            html_esc(f, r->k[k].name);
            fprintf(f, ": %s = %.2f x the mean over ranks</title></rect>", t, mean > 0 ? v / mean : 0);
        }
        fputc('\n', f);
    }
    /* legend */
    int lx = left + (int)nk * cw + 30;
    for (int s = 0; s <= 10; s++) {
        double ratio = pow(2.0, (s - 5) * 0.1);
        char col[16];
        div_color(col, sizeof(col), ratio);
        fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"18\" height=\"12\" fill=\"%s\"/>", lx, top + (10 - s) * 12, col);
        if (s % 5 == 0) fprintf(f, "<text class=\"lab\" x=\"%d\" y=\"%d\">%.2f x mean</text>", lx + 24, top + (10 - s) * 12 + 10, ratio);
    }
    fprintf(f, "<text class=\"lab\" x=\"%d\" y=\"%d\">per-rank total / mean over ranks</text>\n", lx, top - 12);
    fputs("</svg>\n", f);
    free(m);
}

void html_chart_util(const struct agg_report *r, FILE *f) {
    const struct agg_defs *d = r->d;
    uint32_t nranks = d->nranks, rows = rows_for(nranks), nb = r->nbins;
    if (!nb || !r->umat) return;
    int cw = nb <= 100 ? 8 : 800 / (int)nb, ch = rows > 48 ? 6 : 16, left = 110, top = 20;
    if (cw < 1) cw = 1;
    int W = left + (int)nb * cw + 170, H = top + (int)rows * ch + 50;
    if (H < top + 170) H = top + 170; /* the legend */
    svg_open(f, "chart-utilisation", W, H);
    for (uint32_t i = 0; i < rows; i++) {
        uint32_t lo, hi;
        int y = top + (int)i * ch;
        grid_row(f, nranks, rows, i, left - 6, y + ch, &lo, &hi);
        for (uint32_t b = 0; b < nb; b++) {
            double s = 0;
            uint32_t cnt = 0;
            for (uint32_t q = lo; q < hi; q++) {
                double v = r->umat[(size_t)q * nb + b];
                if (v >= 0) s += v, cnt++;
            }
            double v = cnt ? s / cnt : -1;
            char col[16];
            seq_color(col, sizeof(col), v);
            fprintf(f, "<rect class=\"cell\" x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"%s\"><title>ranks %u-%u, bin %u: %.1f%% busy</title></rect>",
                    left + (int)b * cw, y, cw, ch - 1, col, lo, hi - 1, b, v < 0 ? 0 : 100 * v);
        }
        fputc('\n', f);
    }
    /* time axis */
    int ay = top + (int)rows * ch + 14;
    for (int t = 0; t <= 4; t++) {
        char lab[32];
        agg_fmt_ns(lab, sizeof(lab), (double)d->span * t / 4);
        fprintf(f, "<text class=\"lab\" x=\"%d\" y=\"%d\" text-anchor=\"middle\">%s</text>", left + (int)nb * cw * t / 4, ay, lab);
    }
    fprintf(f, "<text class=\"lab\" x=\"%d\" y=\"%d\" text-anchor=\"middle\">time since the job's first event</text>\n",
            left + (int)nb * cw / 2, ay + 16);
    int lx = left + (int)nb * cw + 24;
    for (int s = 0; s <= 10; s++) {
        char col[16];
        seq_color(col, sizeof(col), s / 10.0);
        fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"18\" height=\"12\" fill=\"%s\"/>", lx, top + (10 - s) * 12, col);
        if (s % 5 == 0) fprintf(f, "<text class=\"lab\" x=\"%d\" y=\"%d\">%d%%</text>", lx + 24, top + (10 - s) * 12 + 10, s * 10);
    }
    fprintf(f, "<text class=\"lab\" x=\"%d\" y=\"%d\">device busy</text>\n", lx, top + 150);
    fputs("</svg>\n", f);
}

void html_chart_bandwidth(const struct agg_report *r, FILE *f) {
    /* memory pairs of copies, size classes present */
    char mems[16][4];
    uint32_t nm = 0, cmin = 64, cmax = 0;
    double bmax = 0;
    for (uint32_t i = 0; i < r->nxs; i++) {
        const struct r_xfer *x = &r->xs[i];
        if (x->xfer >> 16 != 1 || !x->bytes) continue;
        uint32_t k;
        for (k = 0; k < nm && strcmp(mems[k], x->mem); k++) {
        }
        if (k == nm && nm < 16) snprintf(mems[nm++], 4, "%s", x->mem);
        cmin = x->cls < cmin ? x->cls : cmin;
        cmax = x->cls > cmax ? x->cls : cmax;
        bmax = x->bw > bmax ? x->bw : bmax;
    }
    int W = 960, H = 320, left = 70, top = 20, bottom = 60, plotw = W - left - 160, ploth = H - top - bottom;
    svg_open(f, "chart-bandwidth", W, H);
    if (!nm) {
        fputs("<text x=\"20\" y=\"30\" class=\"lab\">no memory copies with byte counts in this archive</text></svg>\n", f);
        return;
    }
    uint32_t ncls = cmax - cmin + 1;
    double gw = (double)plotw / ncls, bw = gw * 0.8 / nm;
    /* y axis: bandwidths span decades (small copies are latency-bound): log scale, one line per decade */
    double bmin = bmax;
    for (uint32_t i = 0; i < r->nxs; i++)
        if (r->xs[i].xfer >> 16 == 1 && r->xs[i].bytes && r->xs[i].bw > 0 && r->xs[i].bw < bmin) bmin = r->xs[i].bw;
    double lo = floor(log10(bmin > 1 ? bmin : 1)), hi = ceil(log10(bmax > 10 ? bmax : 10));
    if (hi <= lo) hi = lo + 1;
    for (double e = lo; e <= hi + 1e-9; e += 1) {
        int y = top + ploth - (int)(ploth * (e - lo) / (hi - lo));
        char lab[32];
        agg_fmt_rate(lab, sizeof(lab), pow(10, e));
        fprintf(f, "<line x1=\"%d\" x2=\"%d\" y1=\"%d\" y2=\"%d\" class=\"grid\"/><text class=\"lab\" x=\"%d\" y=\"%d\" text-anchor=\"end\">%s</text>\n",
                left, left + plotw, y, y, left - 4, y + 4, lab);
    }
    for (uint32_t i = 0; i < r->nxs; i++) {
        const struct r_xfer *x = &r->xs[i];
        if (x->xfer >> 16 != 1 || !x->bytes) continue;
        uint32_t k;
        for (k = 0; k < nm && strcmp(mems[k], x->mem); k++) {
        }
        double h = x->bw > 0 ? ploth * (log10(x->bw) - lo) / (hi - lo) : 0;
        if (h < 1) h = 1;
        double xx = left + gw * (x->cls - cmin) + gw * 0.1 + bw * k;
        char b1[32], b2[32], sz[32];
        agg_fmt_rate(b1, sizeof(b1), x->bw);
        agg_fmt_rate(b2, sizeof(b2), (double)x->p50_bw);
        agg_fmt_bytes(sz, sizeof(sz), (double)x->lo);
        fprintf(f, "<rect class=\"bar\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"><title>%s copies of %s and more: %llu calls, %s (median %s)</title></rect>\n",
                xx, top + ploth - h, bw > 1 ? bw - 1 : bw, h, palette[k % 12], x->mem, sz, LLU(x->calls), b1, b2);
    }
    for (uint32_t c = cmin; c <= cmax; c++) {
        char sz[32];
        rep_pow2_bytes(sz, sizeof(sz), c ? (double)((uint64_t)1 << (c - 1)) : 0);
        fprintf(f, "<text class=\"lab\" x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s</text>", left + gw * (c - cmin) + gw / 2,
                top + ploth + 16, sz);
    }
    fprintf(f, "<text class=\"lab\" x=\"%d\" y=\"%d\" text-anchor=\"middle\">copy size (from; log2 classes)</text>\n", left + plotw / 2,
            top + ploth + 36);
    for (uint32_t k = 0; k < nm; k++)
        fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"14\" height=\"12\" fill=\"%s\"/><text class=\"lab\" x=\"%d\" y=\"%d\">%s (%s)</text>\n",
                left + plotw + 20, top + (int)k * 18, palette[k % 12], left + plotw + 40, top + (int)k * 18 + 10, mems[k],
                agg_xfer_direction(1u << 16 | (uint32_t)(uint8_t)mems[k][0] << 8 | (uint8_t)mems[k][2]));
    fputs("</svg>\n", f);
}

