/* SPDX-License-Identifier: MIT */
/* Loading zecoll's configuration (zc_config.h): defaults from the knob table, then the YAML file
 * (libyaml events turned into a small tree that keeps every position), then ZECOLL_* variables;
 * every problem becomes one message with its position or variable. Also renders the effective
 * configuration as YAML that loads back to the same values. */
#include "zc_config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml.h>

/* ---------------------------------------------------------------- the table */
#define ZC_TT_bool ZC_T_BOOL
#define ZC_TT_uint ZC_T_UINT
#define ZC_TT_size ZC_T_SIZE
#define ZC_TT_string ZC_T_STRING
#define ZC_TT_list ZC_T_LIST
#define ZC_TT_globs ZC_T_GLOBS
#define ZC_TT_rankset ZC_T_RANKSET
#define ZC_TT_windows ZC_T_WINDOWS

const struct zc_knob_info zc_knob_table[ZC_K_COUNT] = {
#define ZC_KNOB(name, type, yaml, def, min, max, doc) {#name, ZC_TT_##type, #type, yaml, def, min, max, doc},
#include "zc_knobs.def"
#undef ZC_KNOB
};

static const size_t knob_offset[ZC_K_COUNT] = {
#define ZC_KNOB(name, type, yaml, def, min, max, doc) offsetof(struct zc_knobs, name),
#include "zc_knobs.def"
#undef ZC_KNOB
};

#define ZC_FILE_MAX (1u << 20) /* a configuration file is small; this bounds the parser's work */
#define ZC_YAML_MAX_DEPTH 32
#define ZC_RANK_MAX 2147483647u          /* MPI ranks are ints */
#define ZC_LAUNCH_MAX (UINT64_C(1) << 62) /* kernel windows: start and count */

/* ---------------------------------------------------------------- memory */
/* Everything a configuration owns lives in one arena, freed at once. */
struct blk {
    struct blk *next;
    size_t used, cap;
    max_align_t data[];
};
struct arena {
    struct blk *head;
    bool oom;
};

static void *aalloc(struct arena *a, size_t n) {
    n = (n + sizeof(max_align_t) - 1) / sizeof(max_align_t) * sizeof(max_align_t);
    if (!a->head || a->head->cap - a->head->used < n) {
        size_t cap = n > 16384 ? n : 16384;
        struct blk *b = malloc(sizeof(*b) + cap);
        if (!b) {
            a->oom = true;
            return NULL;
        }
        b->used = 0;
        b->cap = cap;
        b->next = a->head;
        a->head = b;
    }
    void *p = (unsigned char *)a->head->data + a->head->used;
    a->head->used += n;
    return p;
}

static void afree(struct arena *a) {
    for (struct blk *b = a->head, *next; b; b = next) {
        next = b->next;
        free(b);
    }
    a->head = NULL;
}

static char *astrndup(struct arena *a, const char *s, size_t n) {
    char *p = aalloc(a, n + 1);
    if (p) {
        memcpy(p, s, n);
        p[n] = 0;
    }
    return p;
}

struct zc_config_priv {
    struct arena a;
    struct zc_msg msgs[ZC_CONFIG_MAX_MSGS];
};

/* ---------------------------------------------------------------- messages */
/* Messages are one line each: control bytes are written as \xNN. */
static void addmsg(struct zc_config *c, enum zc_msg_kind kind, const char *text) {
    if (kind == ZC_MSG_ERROR) c->nerrors++;
    else if (kind == ZC_MSG_IGNORED) c->nignored++;
    if (c->nmsgs >= ZC_CONFIG_MAX_MSGS) return;
    if (c->nmsgs == ZC_CONFIG_MAX_MSGS - 1) text = "too many problems; the rest are not shown";
    char buf[2048];
    size_t o = 0;
    for (const unsigned char *p = (const unsigned char *)text; *p && o + 5 < sizeof(buf); p++) {
        if (*p < 0x20 || *p == 0x7f) o += (size_t)snprintf(buf + o, sizeof(buf) - o, "\\x%02x", *p);
        else buf[o++] = (char)*p;
    }
    buf[o] = 0;
    char *t = astrndup(&c->priv->a, buf, o);
    if (!t) return;
    c->priv->msgs[c->nmsgs++] = (struct zc_msg){kind, t};
}

/* A user's value inside a message: at most 60 bytes (cut at a character boundary) and "...". */
static const char *shorten(const char *s, char *buf, size_t size) {
    size_t n = strlen(s);
    if (n <= 60 || size < 64) return s;
    n = 57;
    while (n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80) n--;
    snprintf(buf, size, "%.*s...", (int)n, s);
    return buf;
}

/* Where messages about the value being parsed go: a file position, or a variable. */
struct ctx {
    struct zc_config *c;
    const char *fname; /* file messages: "FNAME:LINE:COL: ..." */
    const char *var;   /* variable messages: "VAR: ..." */
    bool failed;       /* something was reported since the caller cleared it */
};

__attribute__((format(printf, 4, 5))) static void report(struct ctx *x, uint32_t line, uint32_t col, const char *fmt,
                                                         ...) {
    char body[1024], full[1400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(body, sizeof(body), fmt, ap);
    va_end(ap);
    x->failed = true;
    if (x->var) snprintf(full, sizeof(full), "%s: %s", x->var, body);
    else if (line) snprintf(full, sizeof(full), "%s:%u:%u: %s", x->fname, line, col, body);
    else snprintf(full, sizeof(full), "%s: %s", x->fname, body);
    addmsg(x->c, ZC_MSG_ERROR, full);
}

/* ---------------------------------------------------------------- suggestions */
/* Optimal-string-alignment distance (a transposition counts 1), case-insensitive. */
static size_t distance(const char *a, size_t n, const char *b, size_t m) {
    size_t d[3][65];
    if (n > 64 || m > 64) return SIZE_MAX;
    for (size_t j = 0; j <= m; j++) d[0][j] = j;
    for (size_t i = 1; i <= n; i++) {
        size_t *cur = d[i % 3], *prev = d[(i - 1) % 3], *pp = d[(i + 1) % 3];
        cur[0] = i;
        for (size_t j = 1; j <= m; j++) {
            char ca = (char)(a[i - 1] | 0x20), cb = (char)(b[j - 1] | 0x20);
            size_t cost = ca != cb;
            size_t v = prev[j] + 1;
            if (cur[j - 1] + 1 < v) v = cur[j - 1] + 1;
            if (prev[j - 1] + cost < v) v = prev[j - 1] + cost;
            if (i > 1 && j > 1 && ca == (char)(b[j - 2] | 0x20) && (char)(a[i - 2] | 0x20) == cb && pp[j - 2] + 1 < v)
                v = pp[j - 2] + 1;
            cur[j] = v;
        }
    }
    return d[n % 3][m];
}

/* The candidate close enough to key to be what was meant, or -1. */
static int closest(const char *key, const char *const *cand, const size_t *clen, size_t ncand) {
    size_t best = SIZE_MAX, bi = 0, klen = strlen(key);
    for (size_t i = 0; i < ncand; i++) {
        size_t d = distance(key, klen, cand[i], clen[i]);
        if (d < best) best = d, bi = i;
    }
    return ncand && best <= (clen[bi] >= 5 ? 2u : 1u) ? (int)bi : -1;
}

/* "; did you mean 'x'?" for a close candidate, else "; WHAT: a, b, c". */
static void suggest_in(char *out, size_t size, const char *prefix, const char *key, const char *const *cand,
                       const size_t *clen, size_t ncand, const char *what) {
    int bi = closest(key, cand, clen, ncand);
    if (bi >= 0) {
        snprintf(out, size, "; did you mean '%s%s%.*s'?", prefix, *prefix ? "." : "", (int)clen[bi], cand[bi]);
        return;
    }
    size_t o = (size_t)snprintf(out, size, "; %s: ", what);
    for (size_t i = 0; i < ncand && o < size; i++)
        o += (size_t)snprintf(out + o, size - o, "%s%.*s", i ? ", " : "", (int)clen[i], cand[i]);
}

static void suggest(char *out, size_t size, const char *key, const char *const *cand, const size_t *clen, size_t ncand,
                    const char *what) {
    suggest_in(out, size, "", key, cand, clen, ncand, what);
}

/* ---------------------------------------------------------------- scalar values */
static bool ieq(const char *a, const char *b) {
    for (; *a && *b; a++, b++)
        if ((*a | 0x20) != (*b | 0x20)) return false;
    return !*a && !*b;
}

static int parse_bool(const char *v, bool *out) {
    static const char *const t[] = {"1", "true", "yes", "on"}, *const f[] = {"0", "false", "no", "off"};
    for (size_t i = 0; i < 4; i++) {
        if (ieq(v, t[i])) return *out = true, 0;
        if (ieq(v, f[i])) return *out = false, 0;
    }
    return -1;
}

/* Digits only (no sign, no spaces: strtoull would take "-1" as 2^64-1); -1 if not a number,
 * -2 if above UINT64_MAX. */
static int parse_digits(const char *v, const char **end, uint64_t *out) {
    uint64_t x = 0;
    const char *p = v;
    bool big = false;
    for (; *p >= '0' && *p <= '9'; p++) {
        unsigned d = (unsigned)(*p - '0');
        if (x > (UINT64_MAX - d) / 10) big = true;
        else x = x * 10 + d;
    }
    *end = p;
    if (p == v) return -1;
    *out = x;
    return big ? -2 : 0;
}

static const char *fmt_size(uint64_t v, char *buf, size_t n) {
    static const char suffix[] = "KMGT";
    int k = -1;
    while (v && k < 3 && v % 1024 == 0) v /= 1024, k++;
    if (k >= 0) snprintf(buf, n, "%llu%c", (unsigned long long)v, suffix[k]);
    else snprintf(buf, n, "%llu", (unsigned long long)v);
    return buf;
}

static int parse_size(const char *v, uint64_t *out) {
    const char *end;
    uint64_t x;
    if (parse_digits(v, &end, &x) != 0) return -1;
    uint64_t mul = 1;
    if (*end) {
        const char *s = strchr("KMGT", *end & ~0x20);
        if (!s || end[1]) return -1;
        mul = UINT64_C(1) << (10 * (s - "KMGT" + 1));
    }
    if (x > UINT64_MAX / mul) return -1;
    *out = x * mul;
    return 0;
}

/* Parses a bool, uint or size knob; 0 or -1 with the message in err. */
static int parse_number(const struct zc_knob_info *ki, const char *v, void *out, char *err, size_t n) {
    char sb[72], lo[32], hi[32];
    const char *sv = shorten(v, sb, sizeof(sb));
    switch (ki->type) {
    case ZC_T_BOOL:
        if (parse_bool(v, out) == 0) return 0;
        snprintf(err, n, "expected true or false, got '%s'", sv);
        return -1;
    case ZC_T_UINT: {
        const char *end;
        uint64_t x;
        if (parse_digits(v, &end, &x) == 0 && !*end && x >= ki->min && x <= ki->max) {
            *(uint64_t *)out = x;
            return 0;
        }
        snprintf(err, n, "expected an integer from %llu to %llu, got '%s'", (unsigned long long)ki->min,
                 (unsigned long long)ki->max, sv);
        return -1;
    }
    case ZC_T_SIZE: {
        uint64_t x;
        if (parse_size(v, &x) == 0 && x >= ki->min && x <= ki->max) {
            *(uint64_t *)out = x;
            return 0;
        }
        snprintf(err, n, "expected a size from %s to %s (bytes, or with K, M, G or T), got '%s'",
                 fmt_size(ki->min, lo, sizeof(lo)), fmt_size(ki->max, hi, sizeof(hi)), sv);
        return -1;
    }
    default: return -1;
    }
}

/* ---------------------------------------------------------------- lists */
/* Variable syntax: items separated by commas, `\x` = the byte x, spaces around items dropped. */
static int parse_list_text(struct zc_config *c, const char *s, bool globs, struct zc_strlist *out, char *err, size_t n) {
    char sb[72];
    uint32_t count = 0;
    size_t len = strlen(s);
    bool blank = true;
    for (const char *p = s; *p; p++) {
        if (*p != ' ' && *p != '\t') blank = false;
        if (*p == '\\' && p[1]) p++;
        else if (*p == ',') count++;
    }
    if (blank) {
        *out = (struct zc_strlist){0, NULL};
        return 0;
    }
    count++;
    const char **v = aalloc(&c->priv->a, count * sizeof(*v));
    char *buf = aalloc(&c->priv->a, len + 1);
    if (!v || !buf) return snprintf(err, n, "out of memory"), -1;
    uint32_t k = 0;
    const char *p = s;
    while (k < count) {
        char *item = buf, *last = buf; /* last: after the last byte that is not unescaped space */
        while (*p == ' ' || *p == '\t') p++;
        for (; *p && *p != ','; p++) {
            if (*p == '\\' && p[1]) {
                *buf++ = *++p;
                last = buf;
            } else {
                *buf++ = *p;
                if (*p != ' ' && *p != '\t') last = buf;
            }
        }
        buf = last;
        *buf++ = 0;
        if (!*item) {
            snprintf(err, n, "empty %s in '%s'", globs ? "pattern" : "name", shorten(s, sb, sizeof(sb)));
            return -1;
        }
        v[k++] = item;
        if (*p) p++;
    }
    *out = (struct zc_strlist){count, v};
    return 0;
}

/* ---------------------------------------------------------------- rank sets */
struct rsb { /* a rank set being built: ranges in any order, malloc'd */
    struct zc_rank_range *v;
    uint32_t n, cap;
    bool all, oom;
};

static int rsb_push(struct rsb *b, uint32_t lo, uint32_t hi) {
    if (b->n == b->cap) {
        uint32_t cap = b->cap ? b->cap * 2 : 8;
        void *p = realloc(b->v, cap * sizeof(*b->v));
        if (!p) return b->oom = true, -1;
        b->v = p;
        b->cap = cap;
    }
    b->v[b->n++] = (struct zc_rank_range){lo, hi};
    return 0;
}

static int rank_number(const char **p, uint32_t *out, char *err, size_t n) {
    uint64_t x;
    const char *end;
    int r = parse_digits(*p, &end, &x);
    if (r == -1) return -1;
    if (r == -2 || x > ZC_RANK_MAX) {
        snprintf(err, n, "rank %.*s is too large (at most %u)", (int)(end - *p > 24 ? 24 : end - *p), *p, ZC_RANK_MAX);
        return -2;
    }
    *out = (uint32_t)x;
    *p = end;
    return 0;
}

/* "0-3,8", "all" (allow_all: also empty) into b. */
static int rsb_add_text(struct rsb *b, const char *s, bool allow_all, char *err, size_t n) {
    char sb[72];
    const char *p = s, *e = s + strlen(s);
    while (*p == ' ' || *p == '\t') p++;
    while (e > p && (e[-1] == ' ' || e[-1] == '\t')) e--;
    if (p == e) {
        if (allow_all) return b->all = true, 0;
        snprintf(err, n, "empty rank set (write ranks such as 0-3,8, or all)");
        return -1;
    }
    if (e - p == 3 && (p[0] | 0x20) == 'a' && (p[1] | 0x20) == 'l' && (p[2] | 0x20) == 'l') return b->all = true, 0;
    for (;;) {
        uint32_t lo, hi;
        while (*p == ' ' || *p == '\t') p++;
        const char *item = p;
        int r = rank_number(&p, &lo, err, n);
        if (r == -2) return -1;
        if (r == 0) {
            hi = lo;
            while (*p == ' ' || *p == '\t') p++;
            if (*p == '-') {
                p++;
                while (*p == ' ' || *p == '\t') p++;
                r = rank_number(&p, &hi, err, n);
                if (r == -2) return -1;
                if (r == 0 && hi < lo) {
                    snprintf(err, n, "range %u-%u is reversed", lo, hi);
                    return -1;
                }
            }
            while (*p == ' ' || *p == '\t') p++;
        }
        if (r != 0 || (*p && *p != ',')) {
            const char *ie = item;
            while (*ie && *ie != ',') ie++;
            if (ie == item || (*item == ' ' || *item == '\t'))
                snprintf(err, n, "empty item in rank set '%s'", shorten(s, sb, sizeof(sb)));
            else
                snprintf(err, n, "'%.*s' is not a rank or a range of ranks (such as 0-3,8)", (int)(ie - item > 40 ? 40 : ie - item),
                         item);
            return -1;
        }
        if (rsb_push(b, lo, hi) != 0) return snprintf(err, n, "out of memory"), -1;
        if (!*p) return 0;
        p++;
    }
}

static int cmp_range(const void *a, const void *b) {
    const struct zc_rank_range *x = a, *y = b;
    return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* Sorted, merged (overlapping or adjacent ranges joined), into the configuration's memory. */
static int rsb_finish(struct zc_config *c, struct rsb *b, struct zc_rankset *out) {
    int rc = 0;
    if (b->all || b->oom) {
        *out = (struct zc_rankset){.all = true};
        rc = b->oom ? -1 : 0;
    } else {
        qsort(b->v, b->n, sizeof(*b->v), cmp_range);
        uint32_t k = 0;
        for (uint32_t i = 0; i < b->n; i++) {
            if (k && b->v[i].lo <= (uint64_t)b->v[k - 1].hi + 1) {
                if (b->v[i].hi > b->v[k - 1].hi) b->v[k - 1].hi = b->v[i].hi;
            } else {
                b->v[k++] = b->v[i];
            }
        }
        struct zc_rank_range *v = aalloc(&c->priv->a, (k ? k : 1) * sizeof(*v));
        if (!v) {
            rc = -1;
            k = 0;
        } else if (k) {
            memcpy(v, b->v, k * sizeof(*v));
        }
        *out = (struct zc_rankset){.all = false, .n = k, .v = v};
    }
    free(b->v);
    *b = (struct rsb){0};
    return rc;
}

static const char *fmt_rankset(const struct zc_rankset *s, char *buf, size_t size) {
    if (s->all) return snprintf(buf, size, "all"), buf;
    size_t o = 0;
    buf[0] = 0;
    for (uint32_t i = 0; i < s->n && o < size; i++) {
        if (s->v[i].lo == s->v[i].hi) o += (size_t)snprintf(buf + o, size - o, "%s%u", i ? "," : "", s->v[i].lo);
        else o += (size_t)snprintf(buf + o, size - o, "%s%u-%u", i ? "," : "", s->v[i].lo, s->v[i].hi);
    }
    return buf;
}

static const char *fmt_duration(uint64_t ns, char *buf, size_t size) {
    static const struct {
        const char *u;
        uint64_t mul;
    } units[] = {{"m", UINT64_C(60000000000)}, {"s", 1000000000}, {"ms", 1000000}, {"us", 1000}, {"ns", 1}};
    if (ns == 0) return snprintf(buf, size, "0s"), buf;
    for (size_t i = 0;; i++)
        if (ns % units[i].mul == 0) return snprintf(buf, size, "%llu%s", (unsigned long long)(ns / units[i].mul), units[i].u), buf;
}

/* ---------------------------------------------------------------- windows */
static const char *const kind_names[] = {"time", "pcontrol", "kernel", "signal"};
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
        if (strlen(kind_names[i]) == len && !memcmp(s, kind_names[i], len)) return i;
    return -1;
}

static void report_kind(struct ctx *x, uint32_t line, uint32_t col, uint32_t idx, const char *s) {
    char sb[72], sg[256];
    const char *cand[4];
    size_t clen[4];
    for (int i = 0; i < 4; i++) cand[i] = kind_names[i], clen[i] = strlen(kind_names[i]);
    suggest(sg, sizeof(sg), s, cand, clen, 4, "kinds");
    report(x, line, col, "window %u: unknown kind '%s'%s", idx, shorten(s, sb, sizeof(sb)), sg);
}

/* Sets key of window w (of a known kind) from text. */
static void window_set(struct ctx *x, struct zc_window *w, struct wstate *st, uint32_t idx, int key, const char *v,
                       uint32_t line, uint32_t col) {
    char err[512], sb[72];
    const char *sv = shorten(v, sb, sizeof(sb));
    switch (key) {
    case WK_RANKS: {
        struct rsb b = {0};
        if (rsb_add_text(&b, v, false, err, sizeof(err)) != 0) {
            free(b.v);
            report(x, line, col, "window %u: ranks: %s", idx, err);
            return;
        }
        rsb_finish(x->c, &b, &w->ranks);
        return;
    }
    case WK_START:
    case WK_STOP:
        if (w->kind == ZC_WIN_TIME) {
            uint64_t ns;
            if (zc_parse_duration(v, &ns, err, sizeof(err)) != 0) {
                report(x, line, col, "window %u: %s: %s", idx, wkeys[key], err);
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
        if (parse_digits(v, &end, &n) != 0 || *end || n < 1 || n > ZC_LAUNCH_MAX) {
            report(x, line, col, "window %u: %s must be an integer from 1 to %llu (%s), got '%s'", idx, wkeys[key],
                   (unsigned long long)ZC_LAUNCH_MAX,
                   key == WK_START ? "launches are counted from 1" : "omit it to count to the end", sv);
            return;
        }
        if (key == WK_START) w->start = n;
        else w->count = n;
        return;
    }
    case WK_INITIAL: {
        bool b;
        if (parse_bool(v, &b) != 0) {
            report(x, line, col, "window %u: initial must be on or off, got '%s'", idx, sv);
            return;
        }
        w->initial = b;
        return;
    }
    case WK_NAME:
        st->has_name = true;
        if (!*v) {
            report(x, line, col, "window %u: name must not be empty", idx);
            return;
        }
        w->name = astrndup(&x->c->priv->a, v, strlen(v));
        return;
    case WK_SIGNAL:
        st->has_signal = true;
        if (zc_parse_signal(v, &w->signo, err, sizeof(err)) != 0) {
            report(x, line, col, "window %u: %s", idx, err);
            return;
        }
        st->sig_ok = true;
        st->sig_line = line;
        st->sig_col = col;
        return;
    }
}

/* A window's own consistency, once all its keys are in. */
static void window_check(struct ctx *x, const struct zc_window *w, const struct wstate *st, uint32_t idx,
                         uint32_t line, uint32_t col) {
    char a[32], b[32];
    switch (w->kind) {
    case ZC_WIN_TIME:
        if (st->has_stop && w->stop_ns <= w->start_ns)
            report(x, st->stop_line, st->stop_col, "window %u: stop (%s) must be after start (%s)", idx,
                   fmt_duration(w->stop_ns, a, sizeof(a)), fmt_duration(w->start_ns, b, sizeof(b)));
        break;
    case ZC_WIN_KERNEL:
        if (!st->has_name)
            report(x, line, col, "window %u: a kernel window needs 'name' (a kernel-name pattern such as \"gemm*\")", idx);
        break;
    case ZC_WIN_SIGNAL:
        if (!st->has_signal) report(x, line, col, "window %u: a signal window needs 'signal' (such as SIGUSR1)", idx);
        break;
    case ZC_WIN_PCONTROL: break;
    }
}

/* Two windows toggled by one signal would undo each other. */
static void windows_cross_check(struct ctx *x, const struct zc_window *v, const struct wstate *st, const bool *ok,
                                uint32_t n) {
    char name[32];
    for (uint32_t i = 0; i < n; i++) {
        if (!ok[i] || v[i].kind != ZC_WIN_SIGNAL || !st[i].sig_ok) continue;
        for (uint32_t j = 0; j < i; j++)
            if (ok[j] && v[j].kind == ZC_WIN_SIGNAL && st[j].sig_ok && v[j].signo == v[i].signo) {
                report(x, st[i].sig_line, st[i].sig_col, "window %u: %s already toggles window %u", i + 1,
                       zc_signal_name(v[i].signo, name, sizeof(name)), j + 1);
                break;
            }
    }
}

/* ---------------------------------------------------------------- the YAML tree */
enum ntype { N_SCALAR, N_SEQ, N_MAP };
struct node {
    enum ntype t;
    uint32_t line, col; /* 1-based */
    const char *s;      /* scalar, NUL-terminated (len bytes: it may contain a NUL) */
    size_t len;
    bool plain;
    uint32_t n; /* items (sequence) or keys and values (mapping: key, value, key, value...) */
    struct node *first, *last, *next;
};

static bool is_null(const struct node *v) {
    return v->t == N_SCALAR && v->plain &&
           (v->len == 0 || !strcmp(v->s, "~") || !strcmp(v->s, "null") || !strcmp(v->s, "Null") || !strcmp(v->s, "NULL"));
}

static const char *what(const struct node *v, char *buf, size_t size) {
    char sb[72];
    if (v->t == N_MAP) return "a mapping";
    if (v->t == N_SEQ) return "a list";
    if (is_null(v)) return "nothing";
    snprintf(buf, size, "'%s'", shorten(v->s, sb, sizeof(sb)));
    return buf;
}

/* libyaml's positions of a reader error are byte offsets. */
static void offset_pos(const char *data, size_t len, size_t off, uint32_t *line, uint32_t *col) {
    uint32_t l = 1, c = 1;
    for (size_t i = 0; i < off && i < len; i++) {
        if (data[i] == '\n' || (data[i] == '\r' && (i + 1 >= len || data[i + 1] != '\n'))) l++, c = 1;
        else if (data[i] != '\r') c++;
    }
    *line = l;
    *col = c;
}

static struct node *yaml_tree(struct ctx *x, struct arena *tmp, const char *data, size_t len, bool *ok) {
    yaml_parser_t p;
    struct node *stack[ZC_YAML_MAX_DEPTH], *root = NULL;
    int depth = 0, docs = 0;
    *ok = false;
    if (!yaml_parser_initialize(&p)) {
        report(x, 0, 0, "out of memory");
        return NULL;
    }
    yaml_parser_set_input_string(&p, (const unsigned char *)data, len);
    for (bool done = false; !done;) {
        yaml_event_t ev;
        if (!yaml_parser_parse(&p, &ev)) {
            uint32_t line, col;
            if (p.error == YAML_READER_ERROR) {
                offset_pos(data, len, p.problem_offset, &line, &col);
            } else {
                line = (uint32_t)p.problem_mark.line + 1;
                col = (uint32_t)p.problem_mark.column + 1;
            }
            if (p.error == YAML_MEMORY_ERROR || !p.problem)
                report(x, line, col, "malformed YAML: %s", p.error == YAML_MEMORY_ERROR ? "out of memory" : "parse error");
            else if (p.context && p.error != YAML_READER_ERROR)
                report(x, line, col, "malformed YAML: %s (%s at line %u, column %u)", p.problem, p.context,
                       (unsigned)p.context_mark.line + 1, (unsigned)p.context_mark.column + 1);
            else
                report(x, line, col, "malformed YAML: %s", p.problem);
            yaml_parser_delete(&p);
            return NULL;
        }
        uint32_t line = (uint32_t)ev.start_mark.line + 1, col = (uint32_t)ev.start_mark.column + 1;
        struct node *nd = NULL;
        bool bad = false;
        switch (ev.type) {
        case YAML_STREAM_END_EVENT: done = true; break;
        case YAML_DOCUMENT_START_EVENT:
            if (++docs > 1) {
                report(x, line, col, "only one YAML document is allowed (a second one starts here)");
                bad = true;
            }
            break;
        case YAML_ALIAS_EVENT:
            /* most often an unquoted pattern such as *_copy */
            report(x, line, col, "*%s is a YAML alias, which zecoll does not use: quote a value that starts with * (\"*%s\")",
                   (const char *)ev.data.alias.anchor, (const char *)ev.data.alias.anchor);
            bad = true;
            break;
        case YAML_SCALAR_EVENT:
        case YAML_SEQUENCE_START_EVENT:
        case YAML_MAPPING_START_EVENT:
            nd = aalloc(tmp, sizeof(*nd));
            if (!nd) {
                report(x, 0, 0, "out of memory");
                bad = true;
                break;
            }
            *nd = (struct node){.line = line, .col = col};
            if (ev.type == YAML_SCALAR_EVENT) {
                nd->t = N_SCALAR;
                nd->len = ev.data.scalar.length;
                nd->s = astrndup(tmp, (const char *)ev.data.scalar.value, nd->len);
                nd->plain = ev.data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
                if (!nd->s) {
                    report(x, 0, 0, "out of memory");
                    bad = true;
                    break;
                }
            } else {
                nd->t = ev.type == YAML_MAPPING_START_EVENT ? N_MAP : N_SEQ;
            }
            if (depth) {
                struct node *parent = stack[depth - 1];
                if (parent->last) parent->last->next = nd;
                else parent->first = nd;
                parent->last = nd;
                parent->n++;
            } else {
                root = nd;
            }
            if (nd->t != N_SCALAR) {
                if (depth == ZC_YAML_MAX_DEPTH) {
                    report(x, line, col, "nested deeper than %d levels", ZC_YAML_MAX_DEPTH);
                    bad = true;
                    break;
                }
                stack[depth++] = nd;
            }
            break;
        case YAML_SEQUENCE_END_EVENT:
        case YAML_MAPPING_END_EVENT:
            if (depth) depth--;
            break;
        default: break;
        }
        yaml_event_delete(&ev);
        if (bad) {
            yaml_parser_delete(&p);
            return NULL;
        }
    }
    yaml_parser_delete(&p);
    *ok = true;
    return root;
}

/* ---------------------------------------------------------------- the file's keys */
static int knob_by_path(const char *path) {
    for (int i = 0; i < ZC_K_COUNT; i++)
        if (zc_knob_table[i].yaml[0] && !strcmp(zc_knob_table[i].yaml, path)) return i;
    return -1;
}

/* The distinct next components of the knobs' paths under prefix ("" = top level), in table order. */
static size_t children(const char *prefix, const char **cand, size_t *clen) {
    size_t n = 0, pl = strlen(prefix);
    for (int i = 0; i < ZC_K_COUNT; i++) {
        const char *y = zc_knob_table[i].yaml;
        if (!y[0]) continue;
        if (pl) {
            if (strncmp(y, prefix, pl) || y[pl] != '.') continue;
            y += pl + 1;
        }
        size_t l = strcspn(y, ".");
        size_t j = 0;
        while (j < n && !(clen[j] == l && !memcmp(cand[j], y, l))) j++;
        if (j == n) cand[n] = y, clen[n++] = l;
    }
    return n;
}

static const char *type_desc(enum zc_knob_type t) {
    switch (t) {
    case ZC_T_BOOL: return "true or false";
    case ZC_T_UINT: return "an integer";
    case ZC_T_SIZE: return "a size";
    case ZC_T_STRING: return "a string";
    case ZC_T_LIST: return "a list of names";
    case ZC_T_GLOBS: return "a list of patterns";
    case ZC_T_RANKSET: return "a rank set such as \"0-3,8\"";
    case ZC_T_WINDOWS: return "a list of windows";
    }
    return "?";
}

static void set_origin_file(struct zc_config *c, int kid, const struct node *key) {
    c->origin[kid] = (struct zc_origin){ZC_ORIGIN_FILE, key->line, key->col};
}

static void windows_from_yaml(struct ctx *x, const struct node *seq, struct zc_windows *out);

static void list_from_yaml(struct ctx *x, const char *path, bool globs, const struct node *v, struct zc_strlist *out) {
    char err[512], wb[80];
    if (is_null(v)) {
        *out = (struct zc_strlist){0, NULL};
        return;
    }
    if (v->t == N_SCALAR) {
        if (memchr(v->s, 0, v->len)) {
            report(x, v->line, v->col, "%s: contains a NUL character", path);
        } else if (parse_list_text(x->c, v->s, globs, out, err, sizeof(err)) != 0) {
            report(x, v->line, v->col, "%s: %s", path, err);
        }
        return;
    }
    if (v->t != N_SEQ) {
        report(x, v->line, v->col, "%s: expected %s, got %s", path, globs ? "a list of patterns" : "a list of names",
               what(v, wb, sizeof(wb)));
        return;
    }
    const char **items = aalloc(&x->c->priv->a, (v->n ? v->n : 1) * sizeof(*items));
    if (!items) return report(x, 0, 0, "out of memory");
    uint32_t k = 0;
    bool bad = false;
    for (const struct node *it = v->first; it; it = it->next) {
        if (it->t != N_SCALAR || is_null(it)) {
            report(x, it->line, it->col, "%s: item %u: expected a %s, got %s", path, k + 1, globs ? "pattern" : "name",
                   what(it, wb, sizeof(wb)));
            bad = true;
        } else if (!it->len || memchr(it->s, 0, it->len)) {
            report(x, it->line, it->col, "%s: item %u: %s", path, k + 1,
                   it->len ? "contains a NUL character" : globs ? "empty pattern" : "empty name");
            bad = true;
        } else {
            items[k] = astrndup(&x->c->priv->a, it->s, it->len);
        }
        k++;
    }
    if (!bad) *out = (struct zc_strlist){k, items};
}

static void rankset_from_yaml(struct ctx *x, const char *path, const struct node *v, struct zc_rankset *out) {
    char err[512], wb[80];
    struct rsb b = {0};
    if (v->t == N_MAP || is_null(v) || (v->t == N_SEQ && !v->n)) {
        report(x, v->line, v->col, "%s: expected a rank set such as \"0-3,8\", got %s", path,
               v->t == N_SEQ ? "an empty list" : what(v, wb, sizeof(wb)));
        return;
    }
    bool bad = false;
    for (const struct node *it = v->t == N_SCALAR ? v : v->first; it; it = v->t == N_SCALAR ? NULL : it->next) {
        if (it->t != N_SCALAR || is_null(it) || memchr(it->s, 0, it->len)) {
            report(x, it->line, it->col, "%s: expected ranks such as 0-3 or 8, got %s", path, what(it, wb, sizeof(wb)));
            bad = true;
        } else if (rsb_add_text(&b, it->s, false, err, sizeof(err)) != 0) {
            report(x, it->line, it->col, "%s: %s", path, err);
            bad = true;
        }
    }
    if (bad) {
        free(b.v);
        return;
    }
    if (rsb_finish(x->c, &b, out) != 0) report(x, 0, 0, "out of memory");
}

static void set_from_node(struct ctx *x, int kid, const struct node *key, const struct node *v) {
    const struct zc_knob_info *ki = &zc_knob_table[kid];
    void *dst = (char *)&x->c->knobs + knob_offset[kid];
    char err[512], wb[80];
    x->failed = false;
    switch (ki->type) {
    case ZC_T_BOOL:
    case ZC_T_UINT:
    case ZC_T_SIZE:
    case ZC_T_STRING:
        if (v->t != N_SCALAR || is_null(v)) {
            report(x, v->line, v->col, "%s: expected %s, got %s", ki->yaml, type_desc(ki->type), what(v, wb, sizeof(wb)));
        } else if (memchr(v->s, 0, v->len)) {
            report(x, v->line, v->col, "%s: contains a NUL character", ki->yaml);
        } else if (ki->type == ZC_T_STRING) {
            *(const char **)dst = astrndup(&x->c->priv->a, v->s, v->len);
        } else {
            union {
                bool b;
                uint64_t u;
            } val;
            if (parse_number(ki, v->s, ki->type == ZC_T_BOOL ? (void *)&val.b : (void *)&val.u, err, sizeof(err)) != 0)
                report(x, v->line, v->col, "%s: %s", ki->yaml, err);
            else if (ki->type == ZC_T_BOOL) *(bool *)dst = val.b;
            else *(uint64_t *)dst = val.u;
        }
        break;
    case ZC_T_LIST:
    case ZC_T_GLOBS: list_from_yaml(x, ki->yaml, ki->type == ZC_T_GLOBS, v, dst); break;
    case ZC_T_RANKSET: rankset_from_yaml(x, ki->yaml, v, dst); break;
    case ZC_T_WINDOWS:
        if (is_null(v)) *(struct zc_windows *)dst = (struct zc_windows){0, NULL};
        else if (v->t != N_SEQ)
            report(x, v->line, v->col, "%s: expected a list of windows (- kind: time ...), got %s", ki->yaml,
                   what(v, wb, sizeof(wb)));
        else windows_from_yaml(x, v, dst);
        break;
    }
    if (!x->failed) set_origin_file(x->c, kid, key);
}

static void walk_map(struct ctx *x, const struct node *map, const char *prefix) {
    const char *cand[ZC_K_COUNT];
    size_t clen[ZC_K_COUNT];
    const struct node *seen[ZC_K_COUNT] = {0};
    size_t ncand = children(prefix, cand, clen);
    char wb[80], sb[72], sg[512], full[160];
    for (const struct node *k = map->first; k && k->next; k = k->next->next) {
        const struct node *v = k->next;
        if (k->t != N_SCALAR || is_null(k)) {
            report(x, k->line, k->col, "a key must be a name, not %s", what(k, wb, sizeof(wb)));
            continue;
        }
        size_t ci = ncand;
        if (!memchr(k->s, 0, k->len))
            for (ci = 0; ci < ncand; ci++)
                if (clen[ci] == k->len && !memcmp(cand[ci], k->s, k->len)) break;
        if (ci == ncand) {
            suggest_in(sg, sizeof(sg), prefix, k->s, cand, clen, ncand, "valid keys here");
            report(x, k->line, k->col, "unknown key '%s%s%s'%s", prefix, *prefix ? "." : "", shorten(k->s, sb, sizeof(sb)), sg);
            continue;
        }
        snprintf(full, sizeof(full), "%s%s%.*s", prefix, *prefix ? "." : "", (int)clen[ci], cand[ci]);
        if (seen[ci]) {
            report(x, k->line, k->col, "duplicate key '%s' (first at line %u)", full, seen[ci]->line);
            continue;
        }
        seen[ci] = k;
        int kid = knob_by_path(full);
        if (kid >= 0) {
            set_from_node(x, kid, k, v);
        } else if (!is_null(v)) { /* a section */
            if (v->t != N_MAP) {
                const char *sub[ZC_K_COUNT];
                size_t sublen[ZC_K_COUNT], ns = children(full, sub, sublen), o = 0;
                for (size_t i = 0; i < ns && o < sizeof(sg); i++)
                    o += (size_t)snprintf(sg + o, sizeof(sg) - o, "%s%.*s", i ? ", " : "", (int)sublen[i], sub[i]);
                report(x, v->line, v->col, "%s: expected a mapping (keys: %s), got %s", full, sg, what(v, wb, sizeof(wb)));
            } else {
                walk_map(x, v, full);
            }
        }
    }
}

static void windows_from_yaml(struct ctx *x, const struct node *seq, struct zc_windows *out) {
    uint32_t n = seq->n;
    struct zc_window *v = aalloc(&x->c->priv->a, (n ? n : 1) * sizeof(*v));
    struct wstate *st = calloc(n ? n : 1, sizeof(*st));
    bool *known = calloc(n ? n : 1, sizeof(*known));
    char wb[80], sb[72], sg[256], keys[128];
    if (!v || !st || !known) {
        free(st);
        free(known);
        return report(x, 0, 0, "out of memory");
    }
    bool failed_before = x->failed;
    x->failed = false;
    uint32_t i = 0;
    for (const struct node *it = seq->first; it; it = it->next, i++) {
        uint32_t idx = i + 1;
        struct zc_window *w = &v[i];
        window_defaults(w, -1);
        w->line = it->line;
        w->column = it->col;
        if (it->t != N_MAP) {
            report(x, it->line, it->col, "window %u: expected a mapping such as {kind: time, start: 2s, stop: 5s}, got %s",
                   idx, what(it, wb, sizeof(wb)));
            continue;
        }
        int kind = -1;
        const struct node *kind_key = NULL;
        for (const struct node *k = it->first; k && k->next; k = k->next->next)
            if (k->t == N_SCALAR && k->len == 4 && !memcmp(k->s, "kind", 4)) {
                kind_key = k;
                break;
            }
        if (!kind_key) {
            report(x, it->line, it->col, "window %u: missing 'kind' (%s)", idx, kind_desc);
        } else {
            const struct node *kv = kind_key->next;
            if (kv->t != N_SCALAR || is_null(kv)) report(x, kv->line, kv->col, "window %u: kind must be %s, got %s", idx,
                                                         kind_desc, what(kv, wb, sizeof(wb)));
            else if ((kind = find_kind(kv->s, kv->len)) < 0) report_kind(x, kv->line, kv->col, idx, kv->s);
        }
        if (kind >= 0) {
            window_defaults(w, kind);
            w->line = it->line;
            w->column = it->col;
            known[i] = true;
        }
        const struct node *seen[WK_N] = {0};
        for (const struct node *k = it->first; k && k->next; k = k->next->next) {
            const struct node *val = k->next;
            if (k->t != N_SCALAR || is_null(k)) {
                report(x, k->line, k->col, "window %u: a key must be a name, not %s", idx, what(k, wb, sizeof(wb)));
                continue;
            }
            int key = WK_N;
            if (!memchr(k->s, 0, k->len))
                for (key = 0; key < WK_N; key++)
                    if (strlen(wkeys[key]) == k->len && !memcmp(wkeys[key], k->s, k->len)) break;
            if (key == WK_N) {
                const char *cand[WK_N];
                size_t clen[WK_N], nc = 0;
                for (int j = 0; j < WK_N; j++)
                    if (kind < 0 || kind_takes(kind, j)) cand[nc] = wkeys[j], clen[nc++] = strlen(wkeys[j]);
                suggest(sg, sizeof(sg), k->s, cand, clen, nc, kind < 0 ? "window keys" : "keys of this kind");
                report(x, k->line, k->col, "window %u: unknown key '%s'%s", idx, shorten(k->s, sb, sizeof(sb)), sg);
                continue;
            }
            if (seen[key]) {
                report(x, k->line, k->col, "window %u: duplicate key '%s' (first at line %u)", idx, wkeys[key],
                       seen[key]->line);
                continue;
            }
            seen[key] = k;
            if (key == WK_KIND || kind < 0) continue;
            if (!kind_takes(kind, key)) {
                report(x, k->line, k->col, "window %u: '%s' does not apply to a %s window (its keys: %s)", idx, wkeys[key],
                       kind_names[kind], kind_key_list(kind, false, keys, sizeof(keys)));
                continue;
            }
            if (val->t == N_SEQ && key == WK_RANKS) { /* ranks: [0, "2-3"] */
                char path[32];
                snprintf(path, sizeof(path), "window %u: ranks", idx);
                rankset_from_yaml(x, path, val, &w->ranks);
                continue;
            }
            if (val->t != N_SCALAR || is_null(val) || memchr(val->s, 0, val->len)) {
                report(x, val->line, val->col, "window %u: %s: expected a value, got %s", idx, wkeys[key],
                       what(val, wb, sizeof(wb)));
                if (key == WK_NAME) st[i].has_name = true;
                if (key == WK_SIGNAL) st[i].has_signal = true;
                continue;
            }
            window_set(x, w, &st[i], idx, key, val->s, val->line, val->col);
        }
        if (kind >= 0) window_check(x, w, &st[i], idx, it->line, it->col);
    }
    windows_cross_check(x, v, st, known, n);
    free(st);
    free(known);
    if (!x->failed) *out = (struct zc_windows){n, v};
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

static void windows_from_env(struct ctx *x, const char *val, struct zc_windows *out) {
    size_t len = strlen(val);
    uint32_t n = 0;
    for (const char *p = val; *p;) { /* count non-empty entries */
        size_t t = token(p, ";");
        for (size_t i = 0; i < t; i++)
            if (p[i] != ' ' && p[i] != '\t') {
                n++;
                break;
            }
        p += t + (p[t] ? 1 : 0);
    }
    struct zc_window *v = aalloc(&x->c->priv->a, (n ? n : 1) * sizeof(*v));
    struct wstate *st = calloc(n ? n : 1, sizeof(*st));
    bool *known = calloc(n ? n : 1, sizeof(*known));
    char *buf = malloc(len + 1), keys[128], sb[72], sg[256];
    bool *esc = malloc(len + 1);
    if (!v || !st || !known || !buf || !esc) {
        free(st), free(known), free(buf), free(esc);
        return report(x, 0, 0, "out of memory");
    }
    x->failed = false;
    uint32_t i = 0;
    for (const char *p = val; *p && i < n;) {
        size_t t = token(p, ";");
        const char *e = p, *end = p + t;
        p += t + (p[t] ? 1 : 0);
        while (e < end && (*e == ' ' || *e == '\t')) e++;
        if (e == end) continue;
        uint32_t idx = i + 1;
        struct zc_window *w = &v[i];
        struct wstate *ws = &st[i++];
        /* KIND[:ARG] */
        size_t head = token(e, " \t;");
        if (e + head > end) head = (size_t)(end - e);
        size_t kl = token(e, ":; \t");
        if (kl > head) kl = head;
        unescape(e, kl, buf, NULL);
        int kind = find_kind(buf, strlen(buf));
        window_defaults(w, kind);
        if (kind < 0) {
            report_kind(x, 0, 0, idx, buf);
            continue;
        }
        known[i - 1] = true;
        bool has_arg = kl < head; /* e[kl] == ':' */
        size_t alen = has_arg ? unescape(e + kl + 1, head - kl - 1, buf, esc) : 0;
        if (!has_arg) buf[0] = 0;
        switch (kind) {
        case ZC_WIN_TIME: {
            size_t dash = 0;
            while (dash < alen && !(buf[dash] == '-' && !esc[dash])) dash++;
            if (!has_arg || dash == alen) {
                report(x, 0, 0, "window %u: write time:START-STOP, such as time:2s-5s, time:2s- or time:-5s", idx);
                break;
            }
            buf[dash] = 0;
            if (dash) window_set(x, w, ws, idx, WK_START, buf, 0, 0);
            if (dash + 1 < alen) window_set(x, w, ws, idx, WK_STOP, buf + dash + 1, 0, 0);
            break;
        }
        case ZC_WIN_PCONTROL:
            if (has_arg) report(x, 0, 0, "window %u: pcontrol takes no argument, got '%s'", idx, shorten(buf, sb, sizeof(sb)));
            break;
        case ZC_WIN_KERNEL: {
            size_t plus = number_suffix(buf, esc, alen, '+'), at = number_suffix(buf, esc, plus, '@');
            char num[32];
            if (plus < alen) {
                snprintf(num, sizeof(num), "%.*s", (int)(alen - plus - 1 > 30 ? 30 : alen - plus - 1), buf + plus + 1);
                window_set(x, w, ws, idx, WK_COUNT, num, 0, 0);
            }
            if (at < plus) {
                snprintf(num, sizeof(num), "%.*s", (int)(plus - at - 1 > 30 ? 30 : plus - at - 1), buf + at + 1);
                window_set(x, w, ws, idx, WK_START, num, 0, 0);
            }
            buf[at] = 0;
            if (has_arg) window_set(x, w, ws, idx, WK_NAME, buf, 0, 0);
            break;
        }
        case ZC_WIN_SIGNAL:
            if (has_arg) window_set(x, w, ws, idx, WK_SIGNAL, buf, 0, 0);
            break;
        }
        /* options */
        bool seen[WK_N] = {0};
        for (const char *o = e + head; o < end;) {
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
                suggest(sg, sizeof(sg), buf, cand, clen, nc, "options");
                if (key < 0) report(x, 0, 0, "window %u: unknown option '%s'%s", idx, shorten(buf, sb, sizeof(sb)), sg);
                else report(x, 0, 0, "window %u: write %s=VALUE", idx, buf);
            } else if (!kind_takes(kind, key)) {
                report(x, 0, 0, "window %u: option '%s' does not apply to a %s window (its options: %s)", idx, buf,
                       kind_names[kind], kind_key_list(kind, true, keys, sizeof(keys)));
            } else if (seen[key]) {
                report(x, 0, 0, "window %u: option '%s' given twice", idx, buf);
            } else {
                seen[key] = true;
                unescape(o + klen + 1, ol - klen - 1, buf, NULL);
                window_set(x, w, ws, idx, key, buf, 0, 0);
            }
            o += ol;
        }
        window_check(x, w, ws, idx, 0, 0);
    }
    windows_cross_check(x, v, st, known, n);
    free(st), free(known), free(buf), free(esc);
    if (!x->failed) *out = (struct zc_windows){n, v};
}

/* ---------------------------------------------------------------- rendering values */
struct sb {
    char *p;
    size_t n, cap, line; /* line: where the current line starts */
    bool oom;
};

static void sb_put(struct sb *b, const char *s, size_t n) {
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

__attribute__((format(printf, 2, 3))) static void sb_printf(struct sb *b, const char *fmt, ...) {
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    if (n < 0) return;
    if ((size_t)n < sizeof(buf)) return sb_put(b, buf, (size_t)n);
    char *big = malloc((size_t)n + 1);
    if (!big) return (void)(b->oom = true);
    va_start(ap, fmt);
    vsnprintf(big, (size_t)n + 1, fmt, ap);
    va_end(ap);
    sb_put(b, big, (size_t)n);
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
    if ((len == 3 && c < 0x800) || (len == 4 && (c < 0x10000 || c > 0x10ffff)) || (c >= 0xd800 && c <= 0xdfff)) return 0;
    *cp = c;
    return len;
}

/* A YAML double-quoted scalar that libyaml reads back to the same bytes: what YAML does not
 * allow raw, or reads as a line break (U+0085, U+2028, U+2029), is escaped. Bytes that are not
 * UTF-8 (possible in a variable only) become \xNN, i.e. U+00NN: the one lossy case. */
static void sb_quote(struct sb *b, const char *s) {
    sb_put(b, "\"", 1);
    const unsigned char *p = (const unsigned char *)s;
    size_t n = strlen(s);
    for (size_t i = 0; i < n;) {
        uint32_t cp;
        size_t l = utf8_next(p + i, n - i, &cp);
        if (!l) {
            sb_printf(b, "\\x%02x", p[i]);
            i++;
            continue;
        }
        if (cp == '"' || cp == '\\') sb_printf(b, "\\%c", (char)cp);
        else if (cp == 0x09 || (cp >= 0x20 && cp <= 0x7e) || (cp >= 0xa0 && cp <= 0xd7ff && cp != 0x2028 && cp != 0x2029) ||
                 (cp >= 0xe000 && cp <= 0xfffd && cp != 0xfeff) || cp >= 0x10000)
            sb_put(b, (const char *)p + i, l);
        else if (cp < 0x100) sb_printf(b, "\\x%02x", cp);
        else sb_printf(b, "\\u%04x", cp);
        i += l;
    }
    sb_put(b, "\"", 1);
}

/* The value of a bool, uint, size or string knob as the file would spell it. */
static void sb_scalar(struct sb *b, const struct zc_knob_info *ki, const void *p) {
    char buf[32];
    switch (ki->type) {
    case ZC_T_BOOL: sb_printf(b, "%s", *(const bool *)p ? "true" : "false"); break;
    case ZC_T_UINT: sb_printf(b, "%llu", (unsigned long long)*(const uint64_t *)p); break;
    case ZC_T_SIZE: sb_printf(b, "%s", fmt_size(*(const uint64_t *)p, buf, sizeof(buf))); break;
    case ZC_T_STRING: sb_quote(b, *(const char *const *)p ? *(const char *const *)p : ""); break;
    default: break;
    }
}

/* ---------------------------------------------------------------- variables */
static void env_knob(struct zc_config *c, int kid, const char *var, const char *val) {
    const struct zc_knob_info *ki = &zc_knob_table[kid];
    void *dst = (char *)&c->knobs + knob_offset[kid];
    struct ctx x = {.c = c, .var = var};
    char err[512];
    switch (ki->type) {
    case ZC_T_BOOL:
    case ZC_T_UINT:
    case ZC_T_SIZE: {
        union {
            bool b;
            uint64_t u;
        } v;
        if (parse_number(ki, val, ki->type == ZC_T_BOOL ? (void *)&v.b : (void *)&v.u, err, sizeof(err)) == 0) {
            if (ki->type == ZC_T_BOOL) *(bool *)dst = v.b;
            else *(uint64_t *)dst = v.u;
            break;
        }
        /* a tuning value: ignored, the previous one stays */
        struct sb b = {0};
        sb_printf(&b, "%s: %s; ignored, keeping ", var, err);
        sb_scalar(&b, ki, dst);
        if (c->origin[kid].kind == ZC_ORIGIN_FILE) sb_printf(&b, " (%s:%u)", c->file, c->origin[kid].line);
        else sb_printf(&b, " (the default)");
        addmsg(c, ZC_MSG_IGNORED, b.oom ? var : b.p);
        free(b.p);
        return;
    }
    case ZC_T_STRING: *(const char **)dst = astrndup(&c->priv->a, val, strlen(val)); break;
    case ZC_T_LIST:
    case ZC_T_GLOBS:
        if (parse_list_text(c, val, ki->type == ZC_T_GLOBS, dst, err, sizeof(err)) != 0) return report(&x, 0, 0, "%s", err);
        break;
    case ZC_T_RANKSET: {
        struct rsb b = {0};
        if (rsb_add_text(&b, val, true, err, sizeof(err)) != 0) {
            free(b.v);
            return report(&x, 0, 0, "%s", err);
        }
        rsb_finish(c, &b, dst);
        break;
    }
    case ZC_T_WINDOWS:
        windows_from_env(&x, val, dst);
        if (x.failed) return;
        break;
    }
    c->origin[kid] = (struct zc_origin){ZC_ORIGIN_ENV, 0, 0};
}

/* ---------------------------------------------------------------- loading */
static void set_default(struct zc_config *c, int kid) {
    const struct zc_knob_info *ki = &zc_knob_table[kid];
    void *dst = (char *)&c->knobs + knob_offset[kid];
    char err[512];
    struct rsb b = {0};
    switch (ki->type) {
    case ZC_T_BOOL:
    case ZC_T_UINT:
    case ZC_T_SIZE: parse_number(ki, ki->def, dst, err, sizeof(err)); break;
    case ZC_T_STRING: *(const char **)dst = ki->def; break;
    case ZC_T_LIST:
    case ZC_T_GLOBS: parse_list_text(c, ki->def, ki->type == ZC_T_GLOBS, dst, err, sizeof(err)); break;
    case ZC_T_RANKSET:
        rsb_add_text(&b, ki->def, true, err, sizeof(err));
        rsb_finish(c, &b, dst);
        break;
    case ZC_T_WINDOWS: *(struct zc_windows *)dst = (struct zc_windows){0, NULL}; break;
    }
    c->origin[kid] = (struct zc_origin){ZC_ORIGIN_DEFAULT, 0, 0};
}

static char *read_file(struct zc_config *c, const char *path, size_t *len) {
    struct ctx x = {.c = c, .fname = path};
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return report(&x, 0, 0, "cannot read the configuration file: %s", strerror(errno)), NULL;
    char *buf = malloc(ZC_FILE_MAX + 1);
    size_t n = 0;
    if (!buf) {
        close(fd);
        return report(&x, 0, 0, "out of memory"), NULL;
    }
    for (;;) {
        ssize_t r = read(fd, buf + n, ZC_FILE_MAX + 1 - n);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) {
            report(&x, 0, 0, "cannot read the configuration file: %s", strerror(errno));
            close(fd);
            free(buf);
            return NULL;
        }
        if (r == 0) break;
        n += (size_t)r;
        if (n > ZC_FILE_MAX) {
            report(&x, 0, 0, "larger than %u bytes: not a zecoll configuration", ZC_FILE_MAX);
            close(fd);
            free(buf);
            return NULL;
        }
    }
    close(fd);
    *len = n;
    return buf;
}

static void load_file(struct zc_config *c, const char *data, size_t len) {
    struct ctx x = {.c = c, .fname = c->file};
    struct arena tmp = {0};
    bool ok;
    if (len > ZC_FILE_MAX) return report(&x, 0, 0, "larger than %u bytes: not a zecoll configuration", ZC_FILE_MAX);
    struct node *root = yaml_tree(&x, &tmp, data, len, &ok);
    if (ok && root && !is_null(root)) {
        if (root->t != N_MAP) {
            char wb[80];
            report(&x, root->line, root->col, "expected a mapping of settings (output:, record:, windows: ...), got %s",
                   what(root, wb, sizeof(wb)));
        } else {
            walk_map(&x, root, "");
        }
    }
    afree(&tmp);
}

struct zc_config *zc_config_load(const struct zc_config_opts *o) {
    struct zc_config *c = calloc(1, sizeof(*c));
    if (!c) return NULL;
    c->priv = calloc(1, sizeof(*c->priv));
    if (!c->priv) {
        free(c);
        return NULL;
    }
    c->msgs = c->priv->msgs;
    for (int k = 0; k < ZC_K_COUNT; k++) set_default(c, k);
    const char *file = o->file;
    if (!file && o->getenv) {
        file = o->getenv("ZECOLL_CONFIG", o->ud);
        if (file && !*file) file = NULL;
        if (file) c->origin[ZC_K_CONFIG] = (struct zc_origin){ZC_ORIGIN_ENV, 0, 0};
    }
    if (!file && o->data) file = "<input>";
    if (file) {
        c->file = c->knobs.CONFIG = astrndup(&c->priv->a, file, strlen(file));
        size_t len = o->len;
        char *data = o->data ? NULL : read_file(c, file, &len);
        if (o->data || data) load_file(c, o->data ? o->data : data, len);
        free(data);
    }
    if (o->getenv) {
        for (int k = 0; k < ZC_K_COUNT; k++) {
            if (k == ZC_K_CONFIG) continue;
            char var[64];
            snprintf(var, sizeof(var), "ZECOLL_%s", zc_knob_table[k].name);
            const char *v = o->getenv(var, o->ud);
            if (v) env_knob(c, k, var, v);
        }
    }
    for (const char *const *e = o->environ; e && *e; e++) {
        if (strncmp(*e, "ZECOLL_", 7)) continue;
        size_t l = strcspn(*e + 7, "=");
        int k = 0;
        while (k < ZC_K_COUNT && !(strlen(zc_knob_table[k].name) == l && !memcmp(zc_knob_table[k].name, *e + 7, l))) k++;
        if (k < ZC_K_COUNT || (l == 15 && !memcmp(*e + 7, "CONFIG_REPORTED", 15))) continue;
        const char *cand[ZC_K_COUNT];
        size_t clen[ZC_K_COUNT];
        for (k = 0; k < ZC_K_COUNT; k++) cand[k] = zc_knob_table[k].name, clen[k] = strlen(cand[k]);
        char name[72], msg[200];
        snprintf(name, sizeof(name), "%.*s", (int)(l > 64 ? 64 : l), *e + 7);
        int bi = closest(name, cand, clen, ZC_K_COUNT);
        if (bi >= 0) snprintf(msg, sizeof(msg), "ZECOLL_%s is not a zecoll setting; did you mean ZECOLL_%s?", name, cand[bi]);
        else snprintf(msg, sizeof(msg), "ZECOLL_%s is not a zecoll setting (see docs/knobs.md)", name);
        addmsg(c, ZC_MSG_WARNING, msg);
    }
    if (c->priv->a.oom) {
        zc_config_free(c);
        return NULL;
    }
    return c;
}

void zc_config_free(struct zc_config *c) {
    if (!c) return;
    afree(&c->priv->a);
    free(c->priv);
    free(c);
}

/* ---------------------------------------------------------------- rendering */
#define ZC_COMMENT_COL 40

static void sb_origin(struct sb *b, const struct zc_config *c, bool origins, struct zc_origin o, const char *name) {
    if (origins) {
        size_t col = b->n - b->line;
        char pad[ZC_COMMENT_COL + 1];
        size_t np = col < ZC_COMMENT_COL ? ZC_COMMENT_COL - col : 1;
        memset(pad, ' ', np);
        sb_put(b, pad, np);
        if (o.kind == ZC_ORIGIN_FILE) sb_printf(b, "# %s:%u", c->file, o.line);
        else if (o.kind == ZC_ORIGIN_ENV) sb_printf(b, "# env ZECOLL_%s", name);
        else sb_printf(b, "# default");
    }
    sb_put(b, "\n", 1);
    b->line = b->n;
}

static void render_windows(struct sb *b, const struct zc_config *c, bool origins, const struct zc_windows *ws,
                           int indent, struct zc_origin org) {
    char buf[64];
    for (uint32_t i = 0; i < ws->n; i++) {
        const struct zc_window *w = &ws->v[i];
        struct zc_origin wo = org;
        if (org.kind == ZC_ORIGIN_FILE) wo.line = w->line;
        sb_printf(b, "%*s- kind: %s", indent, "", kind_names[w->kind]);
        sb_origin(b, c, origins, wo, "WINDOWS");
        int in = indent + 2;
        switch (w->kind) {
        case ZC_WIN_TIME:
            sb_printf(b, "%*sstart: %s\n", in, "", fmt_duration(w->start_ns, buf, sizeof(buf)));
            if (w->stop_ns != ZC_WIN_NS_END) sb_printf(b, "%*sstop: %s\n", in, "", fmt_duration(w->stop_ns, buf, sizeof(buf)));
            break;
        case ZC_WIN_PCONTROL: sb_printf(b, "%*sinitial: %s\n", in, "", w->initial ? "on" : "off"); break;
        case ZC_WIN_KERNEL:
            sb_printf(b, "%*sname: ", in, "");
            sb_quote(b, w->name ? w->name : "");
            sb_printf(b, "\n%*sstart: %llu\n", in, "", (unsigned long long)w->start);
            if (w->count != ZC_WIN_COUNT_ALL) sb_printf(b, "%*scount: %llu\n", in, "", (unsigned long long)w->count);
            break;
        case ZC_WIN_SIGNAL:
            sb_printf(b, "%*ssignal: %s\n%*sinitial: %s\n", in, "", zc_signal_name(w->signo, buf, sizeof(buf)), in, "",
                      w->initial ? "on" : "off");
            break;
        }
        if (!w->ranks.all) {
            size_t need = 24 * (size_t)w->ranks.n + 8;
            char *rs = malloc(need);
            if (!rs) return (void)(b->oom = true);
            sb_printf(b, "%*sranks: \"%s\"\n", in, "", fmt_rankset(&w->ranks, rs, need));
            free(rs);
        }
        b->line = b->n;
    }
}

static void render_level(struct sb *b, const struct zc_config *c, bool origins, const char *prefix, int indent) {
    const char *cand[ZC_K_COUNT];
    size_t clen[ZC_K_COUNT], n = children(prefix, cand, clen);
    char full[160];
    for (size_t i = 0; i < n; i++) {
        /* knob paths are short (the table's longest is well under 160); a longer one is no knob */
        int fl = snprintf(full, sizeof(full), "%s%s%.*s", prefix, *prefix ? "." : "", (int)clen[i], cand[i]);
        if (fl < 0 || (size_t)fl >= sizeof(full)) continue;
        int kid = knob_by_path(full);
        sb_printf(b, "%*s%.*s:", indent, "", (int)clen[i], cand[i]);
        if (kid < 0) {
            sb_put(b, "\n", 1);
            b->line = b->n;
            render_level(b, c, origins, full, indent + 2);
            continue;
        }
        const struct zc_knob_info *ki = &zc_knob_table[kid];
        const void *p = (const char *)&c->knobs + knob_offset[kid];
        switch (ki->type) {
        case ZC_T_LIST:
        case ZC_T_GLOBS: {
            const struct zc_strlist *l = p;
            sb_put(b, " [", 2);
            for (uint32_t j = 0; j < l->n; j++) {
                if (j) sb_put(b, ", ", 2);
                sb_quote(b, l->v[j]);
            }
            sb_put(b, "]", 1);
            break;
        }
        case ZC_T_RANKSET: {
            const struct zc_rankset *s = p;
            size_t need = 24 * (size_t)s->n + 8;
            char *rs = malloc(need);
            if (!rs) return (void)(b->oom = true);
            sb_printf(b, " \"%s\"", fmt_rankset(s, rs, need));
            free(rs);
            break;
        }
        case ZC_T_WINDOWS: {
            const struct zc_windows *ws = p;
            if (!ws->n) sb_put(b, " []", 3);
            sb_origin(b, c, origins, c->origin[kid], ki->name);
            render_windows(b, c, origins, ws, indent + 2, c->origin[kid]);
            continue;
        }
        default: sb_put(b, " ", 1); sb_scalar(b, ki, p);
        }
        sb_origin(b, c, origins, c->origin[kid], ki->name);
    }
}

char *zc_config_render(const struct zc_config *c, bool origins) {
    struct sb b = {0};
    sb_printf(&b, "# zecoll effective configuration: defaults, then ");
    if (!origins) sb_printf(&b, "a file");
    else if (c->file) sb_quote(&b, c->file);
    else sb_printf(&b, "no file");
    sb_printf(&b, ", then ZECOLL_* variables%s\n", origins ? " (where each value comes from: after #)" : "");
    b.line = b.n;
    render_level(&b, c, origins, "", 0);
    if (b.oom) {
        free(b.p);
        return NULL;
    }
    return b.p;
}
