/* SPDX-License-Identifier: MIT */
/* Rendering the effective configuration as YAML that loads back to the same values, optionally
 * with where each value came from (a comment after it). */
#include "zc_config_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- the text and its values */
void zc_cfg_sb_put(struct zc_cfg_sb *b, const char *s, size_t n) {
    if (b->oom) return;
    if (b->n + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->n + n + 1) cap *= 2;
        char *p = realloc(b->p, cap);
        if (!p) {
            b->oom = true;
            return;
        }
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = 0;
}

void zc_cfg_sb_printf(struct zc_cfg_sb *b, const char *fmt, ...) {
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    if (n < 0) return;
    if ((size_t)n < sizeof(buf)) return zc_cfg_sb_put(b, buf, (size_t)n);
    char *big = malloc((size_t)n + 1);
    if (!big) return (void)(b->oom = true);
    va_start(ap, fmt);
    vsnprintf(big, (size_t)n + 1, fmt, ap);
    va_end(ap);
    zc_cfg_sb_put(b, big, (size_t)n);
    free(big);
}

/* UTF-8 sequence at s (n bytes left): its code point and length, or length 0 if invalid. */
static size_t utf8_next(const unsigned char *s, size_t n, uint32_t *cp) {
    if (s[0] < 0x80) return *cp = s[0], 1;
    size_t len = s[0] >= 0xf0 && s[0] < 0xf5 ? 4 : s[0] >= 0xe0 ? 3 : s[0] >= 0xc2 && s[0] < 0xe0 ? 2 : 0;
    if (!len || len > n) return 0;
    uint32_t c = s[0] & (0x7f >> len);
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80) return 0;
        c = c << 6 | (s[i] & 0x3f);
    }
    if ((len == 3 && c < 0x800) || (len == 4 && (c < 0x10000 || c > 0x10ffff)) || (c >= 0xd800 && c <= 0xdfff))
        return 0;
    *cp = c;
    return len;
}

/* A YAML double-quoted scalar that libyaml reads back to the same bytes: what YAML does not
 * allow raw, or reads as a line break (U+0085, U+2028, U+2029), is escaped. Bytes that are not
 * UTF-8 (possible in a variable only) become \xNN, i.e. U+00NN: the one lossy case. */
static void sb_quote(struct zc_cfg_sb *b, const char *s) {
    zc_cfg_sb_put(b, "\"", 1);
    const unsigned char *p = (const unsigned char *)s;
    size_t n = strlen(s);
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        size_t l = utf8_next(p + i, n - i, &cp);
        if (!l) {
            zc_cfg_sb_printf(b, "\\x%02x", p[i]);
            i++;
            continue;
        }
        if (cp == '"' || cp == '\\') zc_cfg_sb_printf(b, "\\%c", (char)cp);
        else if (cp == 0x09 || (cp >= 0x20 && cp <= 0x7e) ||
                 (cp >= 0xa0 && cp <= 0xd7ff && cp != 0x2028 && cp != 0x2029) ||
                 (cp >= 0xe000 && cp <= 0xfffd && cp != 0xfeff) || cp >= 0x10000)
            zc_cfg_sb_put(b, (const char *)p + i, l);
        else if (cp < 0x100) zc_cfg_sb_printf(b, "\\x%02x", cp);
        else zc_cfg_sb_printf(b, "\\u%04x", cp);
        i += l;
    }
    zc_cfg_sb_put(b, "\"", 1);
}

void zc_cfg_sb_scalar(struct zc_cfg_sb *b, const struct zc_knob_info *ki, const void *p) {
    char buf[32];
    switch (ki->type) {
    case ZC_T_BOOL: zc_cfg_sb_printf(b, "%s", *(const bool *)p ? "true" : "false"); break;
    case ZC_T_UINT: zc_cfg_sb_printf(b, "%llu", (unsigned long long)*(const uint64_t *)p); break;
    case ZC_T_SIZE: zc_cfg_sb_printf(b, "%s", zc_cfg_fmt_size(*(const uint64_t *)p, buf, sizeof(buf))); break;
    case ZC_T_STRING: sb_quote(b, *(const char *const *)p ? *(const char *const *)p : ""); break;
    default: break;
    }
}

/* A rank set as a quoted scalar: "0-3,8". */
static void sb_rankset(struct zc_cfg_sb *b, const struct zc_rankset *s) {
    size_t need = 24 * (size_t)s->n + 8;
    char *rs = malloc(need);
    if (!rs) return (void)(b->oom = true);
    zc_cfg_sb_printf(b, "\"%s\"", zc_cfg_fmt_rankset(s, rs, need));
    free(rs);
}

/* ---------------------------------------------------------------- rendering */
#define ZC_COMMENT_COL 40

static void sb_origin(struct zc_cfg_sb *b, const struct zc_config *c, bool origins, struct zc_origin o,
                      const char *name) {
    if (origins) {
        size_t col = b->n - b->line;
        char pad[ZC_COMMENT_COL + 1];
        size_t np = col < ZC_COMMENT_COL ? ZC_COMMENT_COL - col : 1;
        memset(pad, ' ', np);
        zc_cfg_sb_put(b, pad, np);
        if (o.kind == ZC_ORIGIN_FILE) zc_cfg_sb_printf(b, "# %s:%u", c->file, o.line);
        else if (o.kind == ZC_ORIGIN_ENV) zc_cfg_sb_printf(b, "# env ZECOLL_%s", name);
        else zc_cfg_sb_printf(b, "# default");
    }
    zc_cfg_sb_put(b, "\n", 1);
    b->line = b->n;
}

static void render_windows(struct zc_cfg_sb *b, const struct zc_config *c, bool origins, const struct zc_windows *ws,
                           int indent, struct zc_origin org) {
    char buf[64];
    for (uint32_t i = 0; i < ws->n; i++) {
        const struct zc_window *w = &ws->v[i];
        struct zc_origin wo = org;
        if (org.kind == ZC_ORIGIN_FILE) wo.line = w->line;
        zc_cfg_sb_printf(b, "%*s- kind: %s", indent, "", zc_cfg_kind_names[w->kind]);
        sb_origin(b, c, origins, wo, "WINDOWS");
        int in = indent + 2;
        switch (w->kind) {
        case ZC_WIN_TIME:
            zc_cfg_sb_printf(b, "%*sstart: %s\n", in, "", zc_cfg_fmt_duration(w->start_ns, buf, sizeof(buf)));
            if (w->stop_ns != ZC_WIN_NS_END)
                zc_cfg_sb_printf(b, "%*sstop: %s\n", in, "", zc_cfg_fmt_duration(w->stop_ns, buf, sizeof(buf)));
            break;
        case ZC_WIN_PCONTROL: zc_cfg_sb_printf(b, "%*sinitial: %s\n", in, "", w->initial ? "on" : "off"); break;
        case ZC_WIN_KERNEL:
            zc_cfg_sb_printf(b, "%*sname: ", in, "");
            sb_quote(b, w->name ? w->name : "");
            zc_cfg_sb_printf(b, "\n%*sstart: %llu\n", in, "", (unsigned long long)w->start);
            if (w->count != ZC_WIN_COUNT_ALL)
                zc_cfg_sb_printf(b, "%*scount: %llu\n", in, "", (unsigned long long)w->count);
            break;
        case ZC_WIN_SIGNAL:
            zc_cfg_sb_printf(b, "%*ssignal: %s\n%*sinitial: %s\n", in, "", zc_signal_name(w->signo, buf, sizeof(buf)),
                             in, "", w->initial ? "on" : "off");
            break;
        }
        if (!w->ranks.all) {
            zc_cfg_sb_printf(b, "%*sranks: ", in, "");
            sb_rankset(b, &w->ranks);
            zc_cfg_sb_put(b, "\n", 1);
        }
        b->line = b->n;
    }
}

static void render_level(struct zc_cfg_sb *b, const struct zc_config *c, bool origins, const char *prefix, int indent) {
    const char *cand[ZC_K_COUNT];
    size_t clen[ZC_K_COUNT], n = zc_cfg_children(prefix, cand, clen);
    char full[160];
    for (size_t i = 0; i < n; i++) {
        /* knob paths are short (the table's longest is well under 160); a longer one is no knob */
        int fl = snprintf(full, sizeof(full), "%s%s%.*s", prefix, *prefix ? "." : "", (int)clen[i], cand[i]);
        if (fl < 0 || (size_t)fl >= sizeof(full)) continue;
        int kid = zc_cfg_knob_by_path(full);
        zc_cfg_sb_printf(b, "%*s%.*s:", indent, "", (int)clen[i], cand[i]);
        if (kid < 0) {
            zc_cfg_sb_put(b, "\n", 1);
            b->line = b->n;
            render_level(b, c, origins, full, indent + 2);
            continue;
        }
        const struct zc_knob_info *ki = &zc_knob_table[kid];
        const void *p = (const char *)&c->knobs + zc_cfg_knob_offset[kid];
        switch (ki->type) {
        case ZC_T_LIST:
        case ZC_T_GLOBS: {
            const struct zc_strlist *l = p;
            zc_cfg_sb_put(b, " [", 2);
            for (uint32_t j = 0; j < l->n; j++) {
                if (j) zc_cfg_sb_put(b, ", ", 2);
                sb_quote(b, l->v[j]);
            }
            zc_cfg_sb_put(b, "]", 1);
            break;
        }
        case ZC_T_RANKSET:
            zc_cfg_sb_put(b, " ", 1);
            sb_rankset(b, p);
            break;
        case ZC_T_WINDOWS: {
            const struct zc_windows *ws = p;
            if (!ws->n) zc_cfg_sb_put(b, " []", 3);
            sb_origin(b, c, origins, c->origin[kid], ki->name);
            render_windows(b, c, origins, ws, indent + 2, c->origin[kid]);
            continue;
        }
        default: zc_cfg_sb_put(b, " ", 1); zc_cfg_sb_scalar(b, ki, p);
        }
        sb_origin(b, c, origins, c->origin[kid], ki->name);
    }
}

char *zc_config_render(const struct zc_config *c, bool origins) {
    struct zc_cfg_sb b = {0};
    zc_cfg_sb_printf(&b, "# zecoll effective configuration: defaults, then ");
    if (!origins) zc_cfg_sb_printf(&b, "a file");
    else if (c->file) sb_quote(&b, c->file);
    else zc_cfg_sb_printf(&b, "no file");
    zc_cfg_sb_printf(&b, ", then ZECOLL_* variables%s\n", origins ? " (where each value comes from: after #)" : "");
    b.line = b.n;
    render_level(&b, c, origins, "", 0);
    if (b.oom) {
        free(b.p);
        return NULL;
    }
    return b.p;
}
