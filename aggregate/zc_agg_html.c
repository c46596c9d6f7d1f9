/* SPDX-License-Identifier: MIT */
/* The HTML report: one self-contained file (inline CSS, inline SVG charts, a few lines of inline
 * JS for sortable tables and hover read-outs), no network, no server. The job section writes the
 * title, the cards and the charts; every section then writes its tables in the table's order. */
#include "zc_agg_report.h"

#include <string.h>

void html_esc(FILE *f, const char *s) {
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

void html_card(FILE *f, const char *label, const char *value, const char *note) {
    fputs("<div class=\"card\"><div class=\"v\">", f);
    html_esc(f, value);
    fputs("</div><div class=\"l\">", f);
    html_esc(f, label);
    fputs("</div><div class=\"n\">", f);
    html_esc(f, note);
    fputs("</div></div>\n", f);
}

/* ---------------------------------------------------------------- tables */
/* Cells carry their value in data-s, so the sort (the inline JS) orders numbers, not text. */
void html_td_ns(FILE *f, double ns) {
    char b[64];
    agg_fmt_ns(b, sizeof(b), ns);
    fprintf(f, "<td data-s=\"%.1f\">%s</td>", ns, b);
}

void html_td_u(FILE *f, uint64_t v) { fprintf(f, "<td data-s=\"%llu\">%llu</td>", LLU(v), LLU(v)); }
void html_td_pct(FILE *f, double v) { fprintf(f, "<td data-s=\"%.6f\">%.1f%%</td>", v, 100 * v); }
void html_td_s(FILE *f, const char *s) {
    fputs("<td>", f);
    html_esc(f, s);
    fputs("</td>", f);
}

void html_td_count(FILE *f, const char *unit, double v, bool integer) {
    if (!strcmp(unit, "ns")) html_td_ns(f, v);
    else fprintf(f, integer ? "<td data-s=\"%.1f\">%.0f</td>" : "<td data-s=\"%.1f\">%.1f</td>", v, v);
}

void html_table_head(FILE *f, const struct html_col *c, int n) {
    fputs("<table class=\"sortable\"><thead><tr>", f);
    for (int i = 0; i < n; i++) fprintf(f, "<th>%s</th>", c[i].head);
    fputs("</tr></thead><tbody>\n", f);
}

void html_table_end(FILE *f) { fputs("</tbody></table>\n", f); }

static void td(FILE *f, const struct agg_report *r, const struct html_col *c, const void *row) {
    char b[64];
    uint64_t u;
    switch (c->kind) {
    case RK_STR: html_td_s(f, rep_str_at(row, c->off)); break;
    case RK_STRA: html_td_s(f, (const char *)row + c->off); break;
    case RK_U32: html_td_u(f, rep_u32_at(row, c->off)); break;
    case RK_U64: html_td_u(f, rep_u64_at(row, c->off)); break;
    case RK_NS: html_td_ns(f, (double)rep_u64_at(row, c->off)); break;
    case RK_NSF: html_td_ns(f, rep_f64_at(row, c->off)); break;
    case RK_PCT: html_td_pct(f, rep_f64_at(row, c->off)); break;
    case RK_BYTES:
        u = rep_u64_at(row, c->off);
        agg_fmt_bytes(b, sizeof(b), (double)u);
        fprintf(f, "<td data-s=\"%llu\">%s</td>", LLU(u), b);
        break;
    case RK_COUNT: html_td_count(f, rep_str_at(row, c->aux), (double)rep_u64_at(row, c->off), true); break;
    case RK_MEAN: html_td_count(f, rep_str_at(row, c->aux), rep_f64_at(row, c->off), false); break;
    default: c->fn(f, r, row);
    }
}

void html_table(FILE *f, const struct agg_report *r, const struct html_col *c, int n, const void *rows, size_t stride,
                uint32_t nrows) {
    html_table_head(f, c, n);
    for (uint32_t i = 0; i < nrows; i++) {
        fputs("<tr>", f);
        for (int k = 0; k < n; k++) td(f, r, &c[k], (const char *)rows + i * stride);
        fputs("</tr>\n", f);
    }
    html_table_end(f);
}

/* ---------------------------------------------------------------- the document */
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
    fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>zecoll report: ", f);
    html_esc(f, r->archive);
    fprintf(f, "</title>\n<style>%s</style></head>\n<body>\n", css);
    for (size_t i = 0; i < agg_nsections; i++)
        if (agg_sections[i]->html) agg_sections[i]->html(r, f);
    fputs("<script>", f);
    fputs(js, f);
    fputs("</script>\n</body></html>\n", f);
    return ferror(f) ? -1 : 0;
}
