/* SPDX-License-Identifier: MIT */
/* The text report: fixed-width tables that fit the terminal (columns that do not fit are left
 * out from the right, long names keep their start and end), and the writer that prints every
 * section's text in the table's order. */
#include "zc_agg_report.h"

#include <stdarg.h>
#include <string.h>

uint32_t txt_min(uint32_t a, uint32_t b) { return a < b ? a : b; }

const char *txt_ns(char *buf, size_t n, double ns) {
    agg_fmt_ns(buf, n, ns);
    return buf;
}

const char *txt_pct(char *buf, size_t n, double fraction) {
    snprintf(buf, n, "%.1f%%", 100.0 * fraction);
    return buf;
}

const char *txt_count(char *buf, size_t n, const char *unit, double v, bool integer) {
    if (!strcmp(unit, "ns")) agg_fmt_ns(buf, n, v);
    else if (integer) snprintf(buf, n, "%.0f", v);
    else snprintf(buf, n, "%.1f", v);
    return buf;
}

void txt_heading(struct agg_text *t, const char *fmt, ...) {
    va_list va;
    va_start(va, fmt);
    fputs("\n== ", t->f);
    vfprintf(t->f, fmt, va);
    fputc('\n', t->f);
    va_end(va);
}

void txt_table_start(struct agg_text *t, const struct txt_col *c, int n, uint32_t maxw) {
    uint32_t width = txt_min(t->width, maxw);
    if (n > (int)(sizeof(t->hide) / sizeof(*t->hide))) n = (int)(sizeof(t->hide) / sizeof(*t->hide)); /* the first 16 */
    t->c = c;
    t->n = n;
    memset(t->hide, 0, sizeof(t->hide));
    int fixed = 0;
    for (int i = 0; i < n; i++) fixed += c[i].width ? c[i].width + 1 : 0;
    for (int i = n - 1; i > 2 && fixed + 16 + 1 > (int)width; i--)
        if (c[i].width) {
            t->hide[i] = true;
            fixed -= c[i].width + 1;
        }
    t->namew = (int)width - fixed - 1;
    if (t->namew < 16) t->namew = 16;
    if (t->namew > 60) t->namew = 60;
    bool first = true;
    for (int i = 0; i < n; i++) {
        if (t->hide[i]) continue;
        int w = c[i].width ? c[i].width : t->namew;
        fprintf(t->f, "%s%*s", first ? "" : " ", c[i].left ? -w : w, c[i].head);
        first = false;
    }
    fputc('\n', t->f);
}

/* what column c shows of a row, in buf or a string of the row */
static const char *cell(const struct agg_report *r, const struct txt_col *c, const void *row, char *buf, size_t n) {
    switch (c->kind) {
    case RK_STR: return rep_str_at(row, c->off);
    case RK_STRA: return (const char *)row + c->off;
    case RK_U32: snprintf(buf, n, "%u", rep_u32_at(row, c->off)); return buf;
    case RK_U64: snprintf(buf, n, "%llu", (unsigned long long)rep_u64_at(row, c->off)); return buf;
    case RK_NS: return txt_ns(buf, n, (double)rep_u64_at(row, c->off));
    case RK_NSF: return txt_ns(buf, n, rep_f64_at(row, c->off));
    case RK_PCT: return txt_pct(buf, n, rep_f64_at(row, c->off));
    case RK_F: snprintf(buf, n, "%.*f", c->prec, rep_f64_at(row, c->off)); return buf;
    case RK_BYTES: agg_fmt_bytes(buf, n, (double)rep_u64_at(row, c->off)); return buf;
    case RK_COUNT: return txt_count(buf, n, rep_str_at(row, c->aux), (double)rep_u64_at(row, c->off), true);
    case RK_MEAN: return txt_count(buf, n, rep_str_at(row, c->aux), rep_f64_at(row, c->off), false);
    default: return c->fn(r, row, buf, n);
    }
}

void txt_table_row(struct agg_text *t, const void *row) {
    bool first = true;
    for (int i = 0; i < t->n; i++) {
        if (t->hide[i]) continue;
        const struct txt_col *c = &t->c[i];
        int w = c->width ? c->width : t->namew;
        char val[64], buf[256];
        const char *s = cell(t->r, c, row, val, sizeof(val));
        if ((int)strlen(s) > w) { /* long names: keep the start and the end */
            int keep = w - 3, head = keep - keep / 3;
            snprintf(buf, sizeof(buf), "%.*s...%s", head, s, s + strlen(s) - (keep - head));
            s = buf;
        }
        fprintf(t->f, "%s%*s", first ? "" : " ", c->left ? -w : w, s);
        first = false;
    }
    fputc('\n', t->f);
}

void txt_table(struct agg_text *t, const struct txt_col *c, int n, uint32_t maxw, const void *rows, size_t stride,
               uint32_t nrows) {
    txt_table_start(t, c, n, maxw);
    for (uint32_t i = 0; i < nrows; i++) txt_table_row(t, (const char *)rows + i * stride);
}

int agg_report_text(const struct agg_report *r, FILE *f) {
    struct agg_text t = {.f = f, .r = r, .width = r->o.width ? r->o.width : 120, .top = r->o.top};
    for (size_t i = 0; i < agg_nsections; i++)
        if (agg_sections[i]->text) agg_sections[i]->text(r, &t);
    return ferror(f) ? -1 : 0;
}
