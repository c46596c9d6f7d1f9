/* SPDX-License-Identifier: MIT */
/* The HTML report: one self-contained file (inline CSS, inline SVG charts, a few lines of inline
 * JS for sortable tables and hover read-outs), no network, no server. Charts: top kernels, rank x
 * kernel imbalance, rank x time utilisation, bandwidth by memory and size. Large jobs are shown
 * with ranks grouped into at most 96 rows (each row: the group's maximum for imbalance, its mean
 * for utilisation); the tables and the JSON keep every rank. */
#include "zc_agg_report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define LLU(x) ((unsigned long long)(x))
#define MAXROWS 96
#define TOPK 12

static void esc(FILE *f, const char *s) {
    for (; *s; s++) {
        switch (*s) {
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '&': fputs("&amp;", f); break;
        case '"': fputs("&quot;", f); break;
        default: fputc(*s, f);
        }
    }
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

static void card(FILE *f, const char *label, const char *value, const char *note) {
    fputs("<div class=\"card\"><div class=\"v\">", f);
    esc(f, value);
    fputs("</div><div class=\"l\">", f);
    esc(f, label);
    fputs("</div><div class=\"n\">", f);
    esc(f, note);
    fputs("</div></div>\n", f);
}

/* ---------------------------------------------------------------- charts */
static void chart_kernels(const struct agg_report *r, FILE *f) {
    uint32_t n = r->nk < 15 ? r->nk : 15;
    int W = 960, left = 260, right = 150, bh = 22, top = 10, H = top + (int)n * bh + 30;
    fprintf(f, "<svg id=\"chart-kernels\" class=\"chart\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" role=\"img\">\n", W, H, W, H);
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
        esc(f, name);
        fprintf(f, "</text><rect class=\"bar\" x=\"%d\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"%s\"><title>", left, y + 3, w,
                bh - 6, palette[i % 12]);
        esc(f, k->name);
        fprintf(f, ": %s total, %llu calls, mean %s, %.1f%% of kernel time</title></rect>", t, LLU(k->calls), mean, 100 * k->share);
        fprintf(f, "<text x=\"%.1f\" y=\"%d\" class=\"val\">%s  %.1f%%</text>\n", left + w + 6, y + 15, t, 100 * k->share);
    }
    if (!n) fprintf(f, "<text x=\"20\" y=\"30\" class=\"lab\">no kernels in this archive</text>\n");
    fputs("</svg>\n", f);
}

static uint32_t rows_for(uint32_t nranks) { return nranks < MAXROWS ? nranks : MAXROWS; }
/* ranks of display row i: [lo, hi) */
static void row_ranks(uint32_t nranks, uint32_t rows, uint32_t i, uint32_t *lo, uint32_t *hi) {
    *lo = (uint32_t)((uint64_t)nranks * i / rows);
    *hi = (uint32_t)((uint64_t)nranks * (i + 1) / rows);
}

static void chart_imbalance(const struct agg_report *r, FILE *f) {
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
    fprintf(f, "<svg id=\"chart-imbalance\" class=\"chart\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" role=\"img\">\n", W, H, W, H);
    for (uint32_t k = 0; k < nk; k++) {
        char name[40];
        snprintf(name, sizeof(name), "%.28s", r->k[k].name);
        fprintf(f, "<text class=\"lab\" transform=\"translate(%d,%d) rotate(-35)\">", left + (int)k * cw + 8, top - 6);
        esc(f, name);
        fputs("</text>\n", f);
    }
    for (uint32_t i = 0; i < rows; i++) {
        uint32_t lo, hi;
        row_ranks(nranks, rows, i, &lo, &hi);
        int y = top + (int)i * ch;
        if (rows <= 48 || i % 8 == 0) {
            if (hi - lo == 1) fprintf(f, "<text class=\"lab\" x=\"%d\" y=\"%d\" text-anchor=\"end\">rank %u</text>", left - 6, y + ch - 3, lo);
            else fprintf(f, "<text class=\"lab\" x=\"%d\" y=\"%d\" text-anchor=\"end\">%u-%u</text>", left - 6, y + ch - 1, lo, hi - 1);
        }
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
            esc(f, r->k[k].name);
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

static void chart_util(const struct agg_report *r, FILE *f) {
    const struct agg_defs *d = r->d;
    uint32_t nranks = d->nranks, rows = rows_for(nranks), nb = r->nbins;
    if (!nb || !r->umat) return;
    int cw = nb <= 100 ? 8 : 800 / (int)nb, ch = rows > 48 ? 6 : 16, left = 110, top = 20;
    if (cw < 1) cw = 1;
    int W = left + (int)nb * cw + 170, H = top + (int)rows * ch + 50;
    if (H < top + 170) H = top + 170; /* the legend */
    fprintf(f, "<svg id=\"chart-utilisation\" class=\"chart\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" role=\"img\">\n", W, H, W, H);
    for (uint32_t i = 0; i < rows; i++) {
        uint32_t lo, hi;
        row_ranks(nranks, rows, i, &lo, &hi);
        int y = top + (int)i * ch;
        if (rows <= 48 || i % 8 == 0) {
            if (hi - lo == 1) fprintf(f, "<text class=\"lab\" x=\"%d\" y=\"%d\" text-anchor=\"end\">rank %u</text>", left - 6, y + ch - 3, lo);
            else fprintf(f, "<text class=\"lab\" x=\"%d\" y=\"%d\" text-anchor=\"end\">%u-%u</text>", left - 6, y + ch - 1, lo, hi - 1);
        }
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

static void chart_bandwidth(const struct agg_report *r, FILE *f) {
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
    fprintf(f, "<svg id=\"chart-bandwidth\" class=\"chart\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" role=\"img\">\n", W, H, W, H);
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
        agg_fmt_bytes(sz, sizeof(sz), c ? (double)((uint64_t)1 << (c - 1)) : 0);
        char *p = strstr(sz, ".00");
        if (p) memmove(p, p + 3, strlen(p + 3) + 1);
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

/* ---------------------------------------------------------------- tables */
static void th(FILE *f, const char *const *cols, int n) {
    fputs("<table class=\"sortable\"><thead><tr>", f);
    for (int i = 0; i < n; i++) fprintf(f, "<th>%s</th>", cols[i]);
    fputs("</tr></thead><tbody>\n", f);
}

static void td_ns(FILE *f, double ns) {
    char b[64];
    agg_fmt_ns(b, sizeof(b), ns);
    fprintf(f, "<td data-s=\"%.1f\">%s</td>", ns, b);
}

static void td_u(FILE *f, uint64_t v) { fprintf(f, "<td data-s=\"%llu\">%llu</td>", LLU(v), LLU(v)); }
static void td_pct(FILE *f, double v) { fprintf(f, "<td data-s=\"%.6f\">%.1f%%</td>", v, 100 * v); }
static void td_s(FILE *f, const char *s) {
    fputs("<td>", f);
    esc(f, s);
    fputs("</td>", f);
}

/* a counter's value: a time for ns counters, else the count (means with one decimal) */
static void td_count(FILE *f, const char *unit, double v, bool integer) {
    if (!strcmp(unit, "ns")) td_ns(f, v);
    else fprintf(f, integer ? "<td data-s=\"%.1f\">%.0f</td>" : "<td data-s=\"%.1f\">%.1f</td>", v, v);
}

/* PAPI counters (A19): per region, then per rank */
static void html_papi(const struct agg_report *r, FILE *f) {
    fputs("<h2>PAPI counters</h2><div class=\"note\">Per counter and region: its value at the Leave minus at the Enter, "
          "summed over the instances (exact); <i>of time</i> = a counter in ns / the regions' duration. Counters:",
          f);
    for (uint32_t i = 0; i < r->npc; i++) {
        fputs(i ? "; " : " ", f);
        esc(f, r->pc[i].name);
        fputs(" [", f);
        esc(f, r->pc[i].unit);
        fputs("] ", f);
        esc(f, r->pc[i].descr);
    }
    fputs("</div>\n", f);
    static const char *const mc[] = {"counter", "region", "kind", "calls", "total", "mean", "min", "max", "of time"};
    th(f, mc, 9);
    for (uint32_t i = 0; i < r->npm && i < 500; i++) {
        const struct r_mregion *x = &r->pm[i];
        fputs("<tr>", f);
        td_s(f, x->counter);
        td_s(f, x->name);
        td_s(f, x->kind);
        td_u(f, x->calls);
        td_count(f, x->unit, (double)x->total, true);
        td_count(f, x->unit, x->mean, false);
        td_count(f, x->unit, (double)x->min, true);
        td_count(f, x->unit, (double)x->max, true);
        if (x->of_time >= 0) td_pct(f, x->of_time);
        else fputs("<td data-s=\"-1\">-</td>", f);
        fputs("</tr>\n", f);
    }
    fputs("</tbody></table>\n<div class=\"note\">Per rank: <i>counted</i> = from each thread's first sample to its last, "
          "summed over the rank's threads; in MPI / in Level Zero = the region deltas.</div>\n",
          f);
    static const char *const rc[] = {"rank", "counter", "threads", "counted", "in MPI", "MPI regions", "in Level Zero",
                                     "Level Zero regions"};
    th(f, rc, 8);
    for (uint32_t i = 0; i < r->npr && i < 2000; i++) {
        const struct r_mrank *x = &r->pr[i];
        fputs("<tr>", f);
        td_u(f, x->rank);
        td_s(f, x->counter);
        td_u(f, x->threads);
        td_count(f, x->unit, (double)x->counted, true);
        td_count(f, x->unit, (double)x->in_mpi, true);
        td_u(f, x->mpi_regions);
        td_count(f, x->unit, (double)x->in_l0, true);
        td_u(f, x->l0_regions);
        fputs("</tr>\n", f);
    }
    fputs("</tbody></table>\n", f);
}

static const char css[] =
    "body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;margin:24px 32px;color:#1d2733;background:#fbfcfd}"
    "h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 6px;border-bottom:1px solid #dde3ea;padding-bottom:4px}"
    ".sub{color:#5a6877;font-size:13px}.cards{display:flex;flex-wrap:wrap;gap:12px;margin:16px 0}"
    ".card{background:#fff;border:1px solid #dde3ea;border-radius:8px;padding:10px 14px;min-width:150px}"
    ".card .v{font-size:20px;font-weight:600}.card .l{font-size:12px;color:#5a6877}.card .n{font-size:11px;color:#8a96a3}"
    ".chart{background:#fff;border:1px solid #dde3ea;border-radius:8px;display:block;margin:6px 0}"
    ".lab{font-size:11px;fill:#3a4654}.val{font-size:11px;fill:#3a4654}.grid{stroke:#e6ebf0}"
    ".hm{stroke:#d5dce4;stroke-width:0.5}.cell:hover,.bar:hover{stroke:#111;stroke-width:1}"
    "table{border-collapse:collapse;font-size:12px;margin:6px 0;background:#fff}th,td{padding:3px 8px;border-bottom:1px solid #eef1f4;"
    "text-align:right}th{cursor:pointer;background:#f2f5f8;position:sticky;top:0}td:first-child,th:first-child{text-align:left}"
    ".note{font-size:12px;color:#5a6877;max-width:960px}#readout{font-size:12px;color:#3a4654;min-height:16px}";

static const char js[] =
    "(function(){'use strict';"
    "function key(td){var s=td.getAttribute('data-s');return s===null?td.textContent:parseFloat(s);}"
    "document.querySelectorAll('table.sortable').forEach(function(t){t.querySelectorAll('th').forEach(function(h,i){"
    "h.addEventListener('click',function(){var b=t.tBodies[0],rows=Array.prototype.slice.call(b.rows),"
    "d=h.getAttribute('data-d')==='1'?-1:1;h.setAttribute('data-d',d===1?'1':'0');rows.sort(function(x,y){"
    "var a=key(x.cells[i]),c=key(y.cells[i]);return (a>c?1:a<c?-1:0)*-d;});rows.forEach(function(r){b.appendChild(r);});});});});"
    "var out=document.getElementById('readout');document.querySelectorAll('svg.chart rect').forEach(function(r){"
    "var t=r.querySelector('title');if(!t)return;r.addEventListener('mouseenter',function(){out.textContent=t.textContent;});});"
    "var n=document.querySelectorAll('svg.chart').length;document.body.setAttribute('data-charts',String(n));"
    "console.log('zecoll-report: '+n+' charts ready');})();";

int agg_report_html(const struct agg_report *r, FILE *f) {
    const struct agg_defs *d = r->d;
    char a[64], b[64], c[64];
    fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>zecoll report: ", f);
    esc(f, r->archive);
    fprintf(f, "</title>\n<style>%s</style></head>\n<body>\n<h1>zecoll report</h1>\n<div class=\"sub\">", css);
    esc(f, r->archive);
    agg_fmt_ns(a, sizeof(a), (double)r->wall);
    fprintf(f, " &middot; %u rank%s on %u host%s, %u device%s &middot; wall %s &middot; %llu events &middot; percentiles from a "
               "log-linear sketch, relative error &le; %.2f%%</div>\n",
            d->nranks, d->nranks == 1 ? "" : "s", d->nhosts, d->nhosts == 1 ? "" : "s", d->ndevices, d->ndevices == 1 ? "" : "s", a,
            LLU(r->events), 100 * AGG_SKETCH_REL_ERROR);
    fputs("<div class=\"cards\">\n", f);
    agg_fmt_ns(a, sizeof(a), (double)r->k_total);
    snprintf(b, sizeof(b), "%u kernels", r->nk);
    card(f, "kernel time (sum over ranks)", a, b);
    snprintf(a, sizeof(a), "%.1f%%", 100 * r->job.util);
    card(f, "device utilisation", a, "union of busy intervals / ranks' wall time while recording");
    snprintf(a, sizeof(a), "%.1f%%", 100 * r->job.overlap_share);
    card(f, "copy/compute overlap", a, "of device busy time");
    uint64_t bytes = 0;
    for (uint32_t i = 0; i < r->nx; i++) bytes += r->x[i].bytes;
    agg_fmt_bytes(a, sizeof(a), (double)bytes);
    card(f, "bytes copied", a, "all memory copies");
    uint64_t denom_sum = 0, mpi_sum = 0, off_sum = 0;
    for (uint32_t i = 0; i < r->nmr; i++) denom_sum += r->mr[i].denom, mpi_sum += r->mr[i].mpi_ns, off_sum += r->mr[i].off;
    snprintf(a, sizeof(a), "%.1f%%", denom_sum ? 100.0 * (double)mpi_sum / (double)denom_sum : 0.0);
    card(f, "time in MPI", a, off_sum ? "of the ranks' wall time while recording (wall - measurement off)" : "of the ranks' wall time");
    if (r->lat_all.n) {
        agg_fmt_ns(a, sizeof(a), (double)r->lat_all.p50);
        card(f, "launch latency (p50)", a, "host Append to device start");
    }
    fputs("</div>\n<div id=\"readout\"></div>\n", f);

    fputs("<h2>Top kernels</h2><div class=\"note\">Total device time per kernel name over all ranks; share = % of all kernel "
          "time. Barriers and signal-only commands are not kernels.</div>\n",
          f);
    chart_kernels(r, f);
    fputs("<h2>Imbalance: rank &times; kernel</h2><div class=\"note\">Each cell is a rank's total time in a kernel divided by the "
          "mean over all ranks (ranks that did not run it count as 0); red = slower than the mean.",
          f);
    if (d->nranks > MAXROWS) fprintf(f, " %u ranks are grouped into %d rows; each row shows its slowest rank.", d->nranks, MAXROWS);
    fputs("</div>\n", f);
    chart_imbalance(r, f);
    fputs("<h2>Device utilisation: rank &times; time</h2><div class=\"note\">Share of each time bin in which the rank's devices were "
          "busy (union of kernels, transfers and fills; averaged over the rank's devices).",
          f);
    if (d->nranks > MAXROWS) fprintf(f, " Ranks are grouped into %d rows (mean).", MAXROWS);
    fputs("</div>\n", f);
    chart_util(r, f);
    fputs("<h2>Bandwidth by memory and size</h2><div class=\"note\">Bytes / busy time of the memory copies of each size class "
          "(H host, D device, S shared, M other memory); logarithmic scale.</div>\n",
          f);
    chart_bandwidth(r, f);

    fputs("<h2>Kernels</h2>\n", f);
    static const char *const kc[] = {"kernel", "calls", "total", "share", "mean", "min", "max", "stddev", "p50", "p90", "p99",
                                     "max/mean rank", "slowest rank"};
    th(f, kc, 13);
    for (uint32_t i = 0; i < r->nk && i < 200; i++) {
        const struct r_kernel *k = &r->k[i];
        fputs("<tr>", f);
        td_s(f, k->name);
        td_u(f, k->calls);
        td_ns(f, (double)k->total);
        td_pct(f, k->share);
        td_ns(f, k->mean);
        td_ns(f, (double)k->min);
        td_ns(f, (double)k->max);
        td_ns(f, k->sd);
        td_ns(f, (double)k->p50);
        td_ns(f, (double)k->p90);
        td_ns(f, (double)k->p99);
        fprintf(f, "<td data-s=\"%.4f\">%.2f</td>", k->max_over_mean, k->max_over_mean);
        fprintf(f, "<td data-s=\"%u\">%u (", k->max_rank, k->max_rank);
        esc(f, k->max_host);
        fputs(")</td></tr>\n", f);
    }
    fputs("</tbody></table>\n<h2>Transfers and fills</h2>\n", f);
    static const char *const xc[] = {"kind", "memory", "direction", "calls", "bytes", "busy", "bandwidth", "median bandwidth"};
    th(f, xc, 8);
    for (uint32_t i = 0; i < r->nx; i++) {
        const struct r_xfer *x = &r->x[i];
        bool bytes_known = x->xfer >> 16 == 1;
        fputs("<tr>", f);
        td_s(f, x->kind);
        td_s(f, x->mem);
        td_s(f, x->dir);
        td_u(f, x->calls);
        agg_fmt_bytes(a, sizeof(a), (double)x->bytes);
        fprintf(f, "<td data-s=\"%llu\">%s</td>", LLU(x->bytes), bytes_known ? a : "n/a");
        td_ns(f, (double)x->busy);
        agg_fmt_rate(b, sizeof(b), x->bw);
        agg_fmt_rate(c, sizeof(c), (double)x->p50_bw);
        fprintf(f, "<td data-s=\"%.1f\">%s</td><td data-s=\"%llu\">%s</td></tr>\n", x->bw, bytes_known ? b : "n/a", LLU(x->p50_bw),
                bytes_known ? c : "n/a");
    }
    fputs("</tbody></table>\n<h2>Devices</h2>\n", f);
    static const char *const uc[] = {"device", "ranks", "busy", "utilisation", "compute", "copy", "overlap of busy"};
    th(f, uc, 7);
    for (uint32_t i = 0; i < r->nud; i++) {
        const struct r_util *u = &r->ud[i];
        fputs("<tr>", f);
        td_s(f, rep_node_name(r, u->node));
        td_u(f, u->rank);
        td_ns(f, (double)u->busy);
        td_pct(f, u->util);
        td_pct(f, u->util_compute);
        td_pct(f, u->util_copy);
        td_pct(f, u->overlap_share);
        fputs("</tr>\n", f);
    }
    fputs("</tbody></table>\n", f);
    if (r->nmpi) {
        fputs("<h2>MPI</h2>\n", f);
        static const char *const mc[] = {"function", "calls", "total", "share of MPI", "mean", "max", "bytes"};
        th(f, mc, 7);
        for (uint32_t i = 0; i < r->nmpi && i < 100; i++) {
            const struct r_simple *m = &r->mpi[i];
            fputs("<tr>", f);
            td_s(f, m->name);
            td_u(f, m->calls);
            td_ns(f, (double)m->total);
            td_pct(f, m->share);
            td_ns(f, m->mean);
            td_ns(f, (double)m->max);
            agg_fmt_bytes(a, sizeof(a), (double)m->bytes);
            fprintf(f, "<td data-s=\"%llu\">%s</td></tr>\n", LLU(m->bytes), a);
        }
        fputs("</tbody></table>\n", f);
    }
    if (r->npc) html_papi(r, f);
    fputs("<h2>Data quality</h2><div class=\"note\"><ul>", f);
    fprintf(f, "<li>ranks: %u defined, %u read, %llu missing; locations: %u, %llu missing event files, %llu shorter than "
               "defined</li>",
            d->nranks, r->ranks_read, LLU(r->dq_missing_ranks), d->nlocs, LLU(r->dq_missing_locs), LLU(r->dq_short));
    if (d->salvaged[0]) {
        fputs("<li>salvaged: rebuilt by zecoll salvage from the journal of a run that died (", f);
        esc(f, d->salvaged);
        fputs("); data ends at (after the start):", f);
        for (uint32_t i = 0; i < r->nrq; i++)
            if (r->rq[i].data_end) {
                agg_fmt_ns(a, sizeof(a), (double)(r->rq[i].data_end > r->first ? r->rq[i].data_end - r->first : 0));
                fprintf(f, " rank %u %s;", r->rq[i].rank, a);
            }
        fputs("</li>", f);
    }
    if (r->dq_props) fprintf(f, "<li>collector: %llu records clamped, %llu dropped</li>", LLU(r->dq_clamped), LLU(r->dq_dropped));
    else fputs("<li>collector counts unknown (no zecoll:: location properties)</li>", f);
    fprintf(f, "<li>unmatched: %llu regions never left, %llu Leaves without Enter, %llu Appends without a device record, %llu "
               "device records without an Append</li>",
            LLU(r->dq_unclosed), LLU(r->dq_badleave), LLU(r->dq_cs_host_only), LLU(r->dq_cs_dev_only));
    agg_fmt_ns(a, sizeof(a), (double)r->dq_off_ns);
    fprintf(f, "<li>measurement off: %llu windows, %s over all locations</li>", LLU(r->dq_off_count), a);
    fprintf(f, "<li>PAPI metric records: %llu read, %llu without their Enter/Leave, %llu decreasing values, %llu regions "
               "with counters at one end only</li>",
            LLU(r->dq_metrics), LLU(r->dq_m_unpaired), LLU(r->dq_m_decreasing), LLU(r->dq_m_one_sided));
    fputs("</ul></div>\n<script>", f);
    fputs(js, f);
    fputs("</script>\n</body></html>\n", f);
    return ferror(f) ? -1 : 0;
}
