/* SPDX-License-Identifier: MIT */
/* Recording windows (the `windows` knob): their keys and checks, read from the file's list of
 * mappings and from ZECOLL_WINDOWS's one-line syntax; both give the same windows and messages
 * about the same mistakes. */
#include "zc_config_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ZC_LAUNCH_MAX (UINT64_C(1) << 62) /* kernel windows: start and count */

/* ---------------------------------------------------------------- windows */
const char *const zc_cfg_kind_names[4] = {"time", "pcontrol", "kernel", "signal"};
static const char *const kind_desc = "time, pcontrol, kernel or signal";
enum { WK_KIND, WK_RANKS, WK_START, WK_STOP, WK_INITIAL, WK_NAME, WK_COUNT, WK_SIGNAL, WK_N };
static const char *const wkeys[WK_N] = {"kind", "ranks", "start", "stop", "initial", "name", "count", "signal"};
/* keys each kind takes, in the order they are documented */
static const int kind_keys[4][5] = {
    {WK_KIND, WK_START, WK_STOP, WK_RANKS, -1},
    {WK_KIND, WK_INITIAL, WK_RANKS, -1, -1},
    {WK_KIND, WK_NAME, WK_START, WK_COUNT, WK_RANKS},
    {WK_KIND, WK_SIGNAL, WK_INITIAL, WK_RANKS, -1},
};

static bool kind_takes(int kind, int key) {
    for (int i = 0; i < 5; i++)
        if (kind_keys[kind][i] == key) return true;
    return false;
}

/* "kind, start, stop, ranks" */
static const char *kind_key_list(int kind, bool skip_kind, char *buf, size_t size) {
    size_t o = 0;
    buf[0] = 0;
    for (int i = 0; i < 5 && o < size; i++) {
        int k = kind_keys[kind][i];
        if (k < 0 || (skip_kind && k == WK_KIND)) continue;
        o += (size_t)snprintf(buf + o, size - o, "%s%s", o ? ", " : "", wkeys[k]);
    }
    return buf;
}

static void window_defaults(struct zc_window *w, int kind) {
    *w = (struct zc_window){.kind = (enum zc_window_kind)(kind < 0 ? 0 : kind),
                            .ranks = {.all = true},
                            .initial = kind == ZC_WIN_PCONTROL,
                            .stop_ns = ZC_WIN_NS_END,
                            .start = 1,
                            .count = ZC_WIN_COUNT_ALL};
}

struct wstate { /* what the checks after a window's keys need */
    bool has_stop, has_name, has_signal, sig_ok; /* has_*: the key was given (sig_ok: and is valid) */
    uint32_t stop_line, stop_col, sig_line, sig_col;
};

static int find_kind(const char *s, size_t len) {
    for (int i = 0; i < 4; i++)
        if (strlen(zc_cfg_kind_names[i]) == len && !memcmp(s, zc_cfg_kind_names[i], len)) return i;
    return -1;
}

static void report_kind(struct zc_cfg_ctx *x, uint32_t line, uint32_t col, uint32_t idx, const char *s) {
    char sb[72], sg[256];
    const char *cand[4];
    size_t clen[4];
    for (int i = 0; i < 4; i++) cand[i] = zc_cfg_kind_names[i], clen[i] = strlen(zc_cfg_kind_names[i]);
    zc_cfg_suggest(sg, sizeof(sg), s, cand, clen, 4, "kinds");
    zc_cfg_report(x, line, col, "window %u: unknown kind '%s'%s", idx, zc_cfg_shorten(s, sb, sizeof(sb)), sg);
}

/* The window being read: where its values go, what its checks need, how messages name it. */
struct wnew {
    struct zc_cfg_ctx *x;
    struct zc_window *w;
    struct wstate *st;
    uint32_t idx; /* 1-based: "window 2: ..." */
};

/* Sets key of the window (of a known kind) from text. */
static void window_set(const struct wnew *wn, int key, const char *v, uint32_t line, uint32_t col) {
    struct zc_cfg_ctx *x = wn->x;
    struct zc_window *w = wn->w;
    struct wstate *st = wn->st;
    uint32_t idx = wn->idx;
    char err[512], sb[72];
    const char *sv = zc_cfg_shorten(v, sb, sizeof(sb));
    switch (key) {
    case WK_RANKS: {
        struct zc_cfg_rsb b = {0};
        if (zc_cfg_rsb_add(&b, v, false, err, sizeof(err)) != 0) {
            free(b.v);
            zc_cfg_report(x, line, col, "window %u: ranks: %s", idx, err);
            return;
        }
        zc_cfg_rsb_finish(x->c, &b, &w->ranks);
        return;
    }
    case WK_START:
    case WK_STOP:
        if (w->kind == ZC_WIN_TIME) {
            uint64_t ns;
            if (zc_parse_duration(v, &ns, err, sizeof(err)) != 0) {
                zc_cfg_report(x, line, col, "window %u: %s: %s", idx, wkeys[key], err);
                return;
            }
            if (key == WK_START) {
                w->start_ns = ns;
            } else {
                w->stop_ns = ns;
                st->has_stop = true;
                st->stop_line = line;
                st->stop_col = col;
            }
            return;
        }
        __attribute__((fallthrough)); /* a kernel window's start */
    case WK_COUNT: {
        const char *end;
        uint64_t n;
        if (zc_cfg_parse_digits(v, &end, &n) != 0 || *end || n < 1 || n > ZC_LAUNCH_MAX) {
            zc_cfg_report(x, line, col, "window %u: %s must be an integer from 1 to %llu (%s), got '%s'", idx,
                          wkeys[key], (unsigned long long)ZC_LAUNCH_MAX,
                          key == WK_START ? "launches are counted from 1" : "omit it to count to the end", sv);
            return;
        }
        if (key == WK_START) w->start = n;
        else w->count = n;
        return;
    }
    case WK_INITIAL: {
        bool b;
        if (zc_cfg_parse_bool(v, &b) != 0) {
            zc_cfg_report(x, line, col, "window %u: initial must be on or off, got '%s'", idx, sv);
            return;
        }
        w->initial = b;
        return;
    }
    case WK_NAME:
        st->has_name = true;
        if (!*v) {
            zc_cfg_report(x, line, col, "window %u: name must not be empty", idx);
            return;
        }
        w->name = zc_cfg_strndup(&x->c->priv->a, v, strlen(v));
        return;
    case WK_SIGNAL:
        st->has_signal = true;
        if (zc_parse_signal(v, &w->signo, err, sizeof(err)) != 0) {
            zc_cfg_report(x, line, col, "window %u: %s", idx, err);
            return;
        }
        st->sig_ok = true;
        st->sig_line = line;
        st->sig_col = col;
        return;
    }
}

/* A window's own consistency, once all its keys are in. */
static void window_check(const struct wnew *wn, uint32_t line, uint32_t col) {
    struct zc_cfg_ctx *x = wn->x;
    const struct zc_window *w = wn->w;
    const struct wstate *st = wn->st;
    uint32_t idx = wn->idx;
    char a[32], b[32];
    switch (w->kind) {
    case ZC_WIN_TIME:
        if (st->has_stop && w->stop_ns <= w->start_ns)
            zc_cfg_report(x, st->stop_line, st->stop_col, "window %u: stop (%s) must be after start (%s)", idx,
                          zc_cfg_fmt_duration(w->stop_ns, a, sizeof(a)),
                          zc_cfg_fmt_duration(w->start_ns, b, sizeof(b)));
        break;
    case ZC_WIN_KERNEL:
        if (!st->has_name)
            zc_cfg_report(x, line, col,
                          "window %u: a kernel window needs 'name' (a kernel-name pattern such as \"gemm*\")", idx);
        break;
    case ZC_WIN_SIGNAL:
        if (!st->has_signal)
            zc_cfg_report(x, line, col, "window %u: a signal window needs 'signal' (such as SIGUSR1)", idx);
        break;
    case ZC_WIN_PCONTROL: break;
    }
}

struct wlist { /* the windows being read: v in the configuration's memory, the rest malloc'd */
    struct zc_window *v;
    struct wstate *st;
    bool *known; /* the window's kind is known: only those are checked against each other */
    uint32_t n;
};

static int wlist_init(struct zc_cfg_ctx *x, struct wlist *l, uint32_t n) {
    l->n = n;
    l->v = zc_cfg_alloc(&x->c->priv->a, (n ? n : 1) * sizeof(*l->v));
    l->st = calloc(n ? n : 1, sizeof(*l->st));
    l->known = calloc(n ? n : 1, sizeof(*l->known));
    if (l->v && l->st && l->known) return 0;
    free(l->st);
    free(l->known);
    zc_cfg_report(x, 0, 0, "out of memory");
    return -1;
}

static struct wnew wlist_at(struct zc_cfg_ctx *x, struct wlist *l, uint32_t i) {
    return (struct wnew){x, &l->v[i], &l->st[i], i + 1};
}

/* Two windows toggled by one signal would undo each other. */
static void windows_cross_check(struct zc_cfg_ctx *x, const struct wlist *l) {
    const struct zc_window *v = l->v;
    const struct wstate *st = l->st;
    const bool *ok = l->known;
    char name[32];
    for (uint32_t i = 0; i < l->n; i++) {
        if (!ok[i] || v[i].kind != ZC_WIN_SIGNAL || !st[i].sig_ok) continue;
        for (uint32_t j = 0; j < i; j++)
            if (ok[j] && v[j].kind == ZC_WIN_SIGNAL && st[j].sig_ok && v[j].signo == v[i].signo) {
                zc_cfg_report(x, st[i].sig_line, st[i].sig_col, "window %u: %s already toggles window %u", i + 1,
                              zc_signal_name(v[i].signo, name, sizeof(name)), j + 1);
                break;
            }
    }
}

/* The cross check; out is set only when nothing was reported since the caller cleared x->failed. */
static void wlist_finish(struct zc_cfg_ctx *x, struct wlist *l, struct zc_windows *out) {
    windows_cross_check(x, l);
    free(l->st);
    free(l->known);
    if (!x->failed) *out = (struct zc_windows){l->n, l->v};
}

/* ---------------------------------------------------------------- the file's list */
/* The kind a window's mapping names, or -1 (reported). */
static int yaml_kind(struct zc_cfg_ctx *x, const struct zc_cfg_node *map, uint32_t idx) {
    char wb[80];
    const struct zc_cfg_node *kind_key = NULL;
    for (const struct zc_cfg_node *k = map->first; k && k->next; k = k->next->next)
        if (k->t == ZC_NODE_SCALAR && k->len == 4 && !memcmp(k->s, "kind", 4)) {
            kind_key = k;
            break;
        }
    if (!kind_key) {
        zc_cfg_report(x, map->line, map->col, "window %u: missing 'kind' (%s)", idx, kind_desc);
        return -1;
    }
    const struct zc_cfg_node *kv = kind_key->next;
    if (kv->t != ZC_NODE_SCALAR || zc_cfg_is_null(kv)) {
        zc_cfg_report(x, kv->line, kv->col, "window %u: kind must be %s, got %s", idx, kind_desc,
                      zc_cfg_what(kv, wb, sizeof(wb)));
        return -1;
    }
    int kind = find_kind(kv->s, kv->len);
    if (kind < 0) report_kind(x, kv->line, kv->col, idx, kv->s);
    return kind;
}

/* The window key k names, or -1 (reported, with the keys of the kind as suggestions). */
static int yaml_key(struct zc_cfg_ctx *x, const struct zc_cfg_node *k, int kind, uint32_t idx) {
    char wb[80], sb[72], sg[256];
    if (k->t != ZC_NODE_SCALAR || zc_cfg_is_null(k)) {
        zc_cfg_report(x, k->line, k->col, "window %u: a key must be a name, not %s", idx,
                      zc_cfg_what(k, wb, sizeof(wb)));
        return -1;
    }
    int key = WK_N;
    if (!memchr(k->s, 0, k->len))
        for (key = 0; key < WK_N; key++)
            if (strlen(wkeys[key]) == k->len && !memcmp(wkeys[key], k->s, k->len)) break;
    if (key < WK_N) return key;
    const char *cand[WK_N];
    size_t clen[WK_N], nc = 0;
    for (int j = 0; j < WK_N; j++)
        if (kind < 0 || kind_takes(kind, j)) cand[nc] = wkeys[j], clen[nc++] = strlen(wkeys[j]);
    zc_cfg_suggest(sg, sizeof(sg), k->s, cand, clen, nc, kind < 0 ? "window keys" : "keys of this kind");
    zc_cfg_report(x, k->line, k->col, "window %u: unknown key '%s'%s", idx, zc_cfg_shorten(k->s, sb, sizeof(sb)), sg);
    return -1;
}

/* The value of a key the window's kind takes. */
static void yaml_value(const struct wnew *wn, int key, const struct zc_cfg_node *val) {
    char wb[80];
    if (val->t == ZC_NODE_SEQ && key == WK_RANKS) { /* ranks: [0, "2-3"] */
        char path[32];
        snprintf(path, sizeof(path), "window %u: ranks", wn->idx);
        zc_cfg_rankset_from_yaml(wn->x, path, val, &wn->w->ranks);
        return;
    }
    if (val->t != ZC_NODE_SCALAR || zc_cfg_is_null(val) || memchr(val->s, 0, val->len)) {
        zc_cfg_report(wn->x, val->line, val->col, "window %u: %s: expected a value, got %s", wn->idx, wkeys[key],
                      zc_cfg_what(val, wb, sizeof(wb)));
        if (key == WK_NAME) wn->st->has_name = true;
        if (key == WK_SIGNAL) wn->st->has_signal = true;
        return;
    }
    window_set(wn, key, val->s, val->line, val->col);
}

/* Window i from its item of the list. */
static void window_from_yaml(struct zc_cfg_ctx *x, struct wlist *l, uint32_t i, const struct zc_cfg_node *it) {
    struct wnew wn = wlist_at(x, l, i);
    char wb[80], keys[128];
    window_defaults(wn.w, -1);
    wn.w->line = it->line;
    wn.w->column = it->col;
    if (it->t != ZC_NODE_MAP) {
        zc_cfg_report(x, it->line, it->col,
                      "window %u: expected a mapping such as {kind: time, start: 2s, stop: 5s}, got %s", wn.idx,
                      zc_cfg_what(it, wb, sizeof(wb)));
        return;
    }
    int kind = yaml_kind(x, it, wn.idx);
    if (kind >= 0) {
        window_defaults(wn.w, kind);
        wn.w->line = it->line;
        wn.w->column = it->col;
        l->known[i] = true;
    }
    const struct zc_cfg_node *seen[WK_N] = {0};
    for (const struct zc_cfg_node *k = it->first; k && k->next; k = k->next->next) {
        int key = yaml_key(x, k, kind, wn.idx);
        if (key < 0) continue;
        if (seen[key]) {
            zc_cfg_report(x, k->line, k->col, "window %u: duplicate key '%s' (first at line %u)", wn.idx, wkeys[key],
                          seen[key]->line);
            continue;
        }
        seen[key] = k;
        if (key == WK_KIND || kind < 0) continue;
        if (!kind_takes(kind, key)) {
            zc_cfg_report(x, k->line, k->col, "window %u: '%s' does not apply to a %s window (its keys: %s)", wn.idx,
                          wkeys[key], zc_cfg_kind_names[kind], kind_key_list(kind, false, keys, sizeof(keys)));
            continue;
        }
        yaml_value(&wn, key, k->next);
    }
    if (kind >= 0) window_check(&wn, it->line, it->col);
}

void zc_cfg_windows_from_yaml(struct zc_cfg_ctx *x, const struct zc_cfg_node *seq, struct zc_windows *out) {
    struct wlist l;
    if (wlist_init(x, &l, seq->n) != 0) return;
    bool failed_before = x->failed;
    x->failed = false;
    uint32_t i = 0;
    for (const struct zc_cfg_node *it = seq->first; it; it = it->next, i++) window_from_yaml(x, &l, i, it);
    wlist_finish(x, &l, out);
    x->failed |= failed_before;
}

/* ---------------------------------------------------------------- ZECOLL_WINDOWS */
/* One line: windows separated by ';', each KIND[:ARG] followed by options (ranks=R, initial=on)
 * separated by spaces. `\x` stands for the byte x anywhere (a ';', space, '@', '+' or '-' in a
 * kernel-name pattern). docs/config.md has the grammar. */

/* Copies s[0..n) without its escapes into out (NUL-terminated); esc[i] says whether out[i] was
 * escaped. */
static size_t unescape(const char *s, size_t n, char *out, bool *esc) {
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        bool e = s[i] == '\\' && i + 1 < n;
        if (e) i++;
        if (esc) esc[o] = e;
        out[o++] = s[i];
    }
    out[o] = 0;
    return o;
}

/* Next token of s (ends at an unescaped byte of seps, or the end); returns its length. */
static size_t token(const char *s, const char *seps) {
    size_t i = 0;
    while (s[i] && !strchr(seps, s[i])) i += s[i] == '\\' && s[i + 1] ? 2 : 1;
    return i;
}

/* "@N" / "+N" at the end of a kernel argument (unescaped): returns where it starts, or len. */
static size_t number_suffix(const char *a, const bool *esc, size_t len, char mark) {
    size_t j = len;
    while (j > 0 && a[j - 1] >= '0' && a[j - 1] <= '9' && !esc[j - 1]) j--;
    if (j == len || j == 0 || a[j - 1] != mark || esc[j - 1]) return len;
    return j - 1;
}

/* The entries of val that are not blank. */
static uint32_t env_count(const char *val) {
    uint32_t n = 0;
    for (const char *p = val; *p;) {
        size_t t = token(p, ";");
        for (size_t i = 0; i < t; i++)
            if (p[i] != ' ' && p[i] != '\t') {
                n++;
                break;
            }
        p += t + (p[t] ? 1 : 0);
    }
    return n;
}

/* The argument after KIND: (has_arg), unescaped in buf (alen bytes; esc[i]: buf[i] was escaped). */
static void env_arg(const struct wnew *wn, bool has_arg, char *buf, const bool *esc, size_t alen) {
    char sb[72];
    switch (wn->w->kind) {
    case ZC_WIN_TIME: {
        size_t dash = 0;
        while (dash < alen && !(buf[dash] == '-' && !esc[dash])) dash++;
        if (!has_arg || dash == alen) {
            zc_cfg_report(wn->x, 0, 0, "window %u: write time:START-STOP, such as time:2s-5s, time:2s- or time:-5s",
                          wn->idx);
            break;
        }
        buf[dash] = 0;
        if (dash) window_set(wn, WK_START, buf, 0, 0);
        if (dash + 1 < alen) window_set(wn, WK_STOP, buf + dash + 1, 0, 0);
        break;
    }
    case ZC_WIN_PCONTROL:
        if (has_arg)
            zc_cfg_report(wn->x, 0, 0, "window %u: pcontrol takes no argument, got '%s'", wn->idx,
                          zc_cfg_shorten(buf, sb, sizeof(sb)));
        break;
    case ZC_WIN_KERNEL: {
        size_t plus = number_suffix(buf, esc, alen, '+'), at = number_suffix(buf, esc, plus, '@');
        char num[32];
        if (plus < alen) {
            snprintf(num, sizeof(num), "%.*s", (int)(alen - plus - 1 > 30 ? 30 : alen - plus - 1), buf + plus + 1);
            window_set(wn, WK_COUNT, num, 0, 0);
        }
        if (at < plus) {
            snprintf(num, sizeof(num), "%.*s", (int)(plus - at - 1 > 30 ? 30 : plus - at - 1), buf + at + 1);
            window_set(wn, WK_START, num, 0, 0);
        }
        buf[at] = 0;
        if (has_arg) window_set(wn, WK_NAME, buf, 0, 0);
        break;
    }
    case ZC_WIN_SIGNAL:
        if (has_arg) window_set(wn, WK_SIGNAL, buf, 0, 0);
        break;
    }
}

/* The options after KIND[:ARG], o..end: KEY=VALUE separated by spaces; buf is scratch. */
static void env_options(const struct wnew *wn, const char *o, const char *end, char *buf) {
    int kind = (int)wn->w->kind;
    char keys[128], sb[72], sg[256];
    bool seen[WK_N] = {0};
    while (o < end) {
        while (o < end && (*o == ' ' || *o == '\t')) o++;
        if (o >= end) break;
        size_t ol = token(o, " \t;");
        if (o + ol > end) ol = (size_t)(end - o);
        size_t klen = token(o, "= \t;");
        if (klen > ol) klen = ol;
        unescape(o, klen, buf, NULL);
        int key = -1;
        if (!strcmp(buf, "ranks")) key = WK_RANKS;
        else if (!strcmp(buf, "initial")) key = WK_INITIAL;
        if (key < 0 || klen == ol) {
            const char *cand[2] = {"ranks", "initial"};
            size_t clen[2] = {5, 7}, nc = kind_takes(kind, WK_INITIAL) ? 2 : 1;
            zc_cfg_suggest(sg, sizeof(sg), buf, cand, clen, nc, "options");
            if (key < 0)
                zc_cfg_report(wn->x, 0, 0, "window %u: unknown option '%s'%s", wn->idx,
                              zc_cfg_shorten(buf, sb, sizeof(sb)), sg);
            else zc_cfg_report(wn->x, 0, 0, "window %u: write %s=VALUE", wn->idx, buf);
        } else if (!kind_takes(kind, key)) {
            zc_cfg_report(wn->x, 0, 0, "window %u: option '%s' does not apply to a %s window (its options: %s)",
                          wn->idx, buf, zc_cfg_kind_names[kind], kind_key_list(kind, true, keys, sizeof(keys)));
        } else if (seen[key]) {
            zc_cfg_report(wn->x, 0, 0, "window %u: option '%s' given twice", wn->idx, buf);
        } else {
            seen[key] = true;
            unescape(o + klen + 1, ol - klen - 1, buf, NULL);
            window_set(wn, key, buf, 0, 0);
        }
        o += ol;
    }
}

/* Window i from its entry e..end (not blank): KIND[:ARG], then options. buf and esc have room for
 * the entry. */
static void window_from_env(struct zc_cfg_ctx *x, struct wlist *l, uint32_t i, const char *e, const char *end,
                            char *buf, bool *esc) {
    struct wnew wn = wlist_at(x, l, i);
    size_t head = token(e, " \t;");
    if (e + head > end) head = (size_t)(end - e);
    size_t kl = token(e, ":; \t");
    if (kl > head) kl = head;
    unescape(e, kl, buf, NULL);
    int kind = find_kind(buf, strlen(buf));
    window_defaults(wn.w, kind);
    if (kind < 0) {
        report_kind(x, 0, 0, wn.idx, buf);
        return;
    }
    l->known[i] = true;
    bool has_arg = kl < head; /* e[kl] == ':' */
    size_t alen = has_arg ? unescape(e + kl + 1, head - kl - 1, buf, esc) : 0;
    if (!has_arg) buf[0] = 0;
    env_arg(&wn, has_arg, buf, esc, alen);
    env_options(&wn, e + head, end, buf);
    window_check(&wn, 0, 0);
}

void zc_cfg_windows_from_env(struct zc_cfg_ctx *x, const char *val, struct zc_windows *out) {
    size_t len = strlen(val);
    struct wlist l;
    if (wlist_init(x, &l, env_count(val)) != 0) return;
    char *buf = malloc(len + 1);
    bool *esc = malloc(len + 1);
    if (!buf || !esc) {
        free(l.st), free(l.known), free(buf), free(esc);
        return zc_cfg_report(x, 0, 0, "out of memory");
    }
    x->failed = false;
    uint32_t i = 0;
    for (const char *p = val; *p && i < l.n;) {
        size_t t = token(p, ";");
        const char *e = p, *end = p + t;
        p += t + (p[t] ? 1 : 0);
        while (e < end && (*e == ' ' || *e == '\t')) e++;
        if (e == end) continue;
        window_from_env(x, &l, i++, e, end, buf, esc);
    }
    wlist_finish(x, &l, out);
    free(buf), free(esc);
}
