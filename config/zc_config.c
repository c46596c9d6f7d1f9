/* SPDX-License-Identifier: MIT */
/* Loading zecoll's configuration (zc_config.h): defaults from the knob table, then the YAML file
 * (zc_config_yaml.c), then ZECOLL_* variables; every problem becomes one message with its
 * position or variable. Here: the table, the arena, messages, the value parsers, the variables. */
#include "zc_config_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

const size_t zc_cfg_knob_offset[ZC_K_COUNT] = {
#define ZC_KNOB(name, type, yaml, def, min, max, doc) offsetof(struct zc_knobs, name),
#include "zc_knobs.def"
#undef ZC_KNOB
};

int zc_cfg_knob_by_path(const char *path) {
    for (int i = 0; i < ZC_K_COUNT; i++)
        if (zc_knob_table[i].yaml[0] && !strcmp(zc_knob_table[i].yaml, path)) return i;
    return -1;
}

size_t zc_cfg_children(const char *prefix, const char **cand, size_t *clen) {
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

/* ---------------------------------------------------------------- memory */
void *zc_cfg_alloc(struct zc_cfg_arena *a, size_t n) {
    n = (n + sizeof(max_align_t) - 1) / sizeof(max_align_t) * sizeof(max_align_t);
    if (!a->head || a->head->cap - a->head->used < n) {
        size_t cap = n > 16384 ? n : 16384;
        struct zc_cfg_blk *b = malloc(sizeof(*b) + cap);
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

void zc_cfg_arena_free(struct zc_cfg_arena *a) {
    for (struct zc_cfg_blk *b = a->head, *next; b; b = next) {
        next = b->next;
        free(b);
    }
    a->head = NULL;
}

char *zc_cfg_strndup(struct zc_cfg_arena *a, const char *s, size_t n) {
    char *p = zc_cfg_alloc(a, n + 1);
    if (p) {
        memcpy(p, s, n);
        p[n] = 0;
    }
    return p;
}

/* ---------------------------------------------------------------- messages */
/* Messages are one line each: control bytes are written as \xNN. */
void zc_cfg_msg(struct zc_config *c, enum zc_msg_kind kind, const char *text) {
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
    char *t = zc_cfg_strndup(&c->priv->a, buf, o);
    if (!t) return;
    c->priv->msgs[c->nmsgs++] = (struct zc_msg){kind, t};
}

const char *zc_cfg_shorten(const char *s, char *buf, size_t size) {
    size_t n = strlen(s);
    if (n <= 60 || size < 64) return s;
    n = 57;
    while (n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80) n--;
    snprintf(buf, size, "%.*s...", (int)n, s);
    return buf;
}

void zc_cfg_report(struct zc_cfg_ctx *x, uint32_t line, uint32_t col, const char *fmt, ...) {
    char body[1024], full[1400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(body, sizeof(body), fmt, ap);
    va_end(ap);
    x->failed = true;
    if (x->var) snprintf(full, sizeof(full), "%s: %s", x->var, body);
    else if (line) snprintf(full, sizeof(full), "%s:%u:%u: %s", x->fname, line, col, body);
    else snprintf(full, sizeof(full), "%s: %s", x->fname, body);
    zc_cfg_msg(x->c, ZC_MSG_ERROR, full);
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

int zc_cfg_closest(const char *key, const char *const *cand, const size_t *clen, size_t ncand) {
    size_t best = SIZE_MAX, bi = 0, klen = strlen(key);
    for (size_t i = 0; i < ncand; i++) {
        size_t d = distance(key, klen, cand[i], clen[i]);
        if (d < best) best = d, bi = i;
    }
    return ncand && best <= (clen[bi] >= 5 ? 2u : 1u) ? (int)bi : -1;
}

void zc_cfg_suggest_in(char *out, size_t size, const char *prefix, const char *key, const char *const *cand,
                       const size_t *clen, size_t ncand, const char *what) {
    int bi = zc_cfg_closest(key, cand, clen, ncand);
    if (bi >= 0) {
        snprintf(out, size, "; did you mean '%s%s%.*s'?", prefix, *prefix ? "." : "", (int)clen[bi], cand[bi]);
        return;
    }
    size_t o = (size_t)snprintf(out, size, "; %s: ", what);
    for (size_t i = 0; i < ncand && o < size; i++)
        o += (size_t)snprintf(out + o, size - o, "%s%.*s", i ? ", " : "", (int)clen[i], cand[i]);
}

void zc_cfg_suggest(char *out, size_t size, const char *key, const char *const *cand, const size_t *clen, size_t ncand,
                    const char *what) {
    zc_cfg_suggest_in(out, size, "", key, cand, clen, ncand, what);
}

/* ---------------------------------------------------------------- scalar values */
static bool ieq(const char *a, const char *b) {
    for (; *a && *b; a++, b++)
        if ((*a | 0x20) != (*b | 0x20)) return false;
    return !*a && !*b;
}

int zc_cfg_parse_bool(const char *v, bool *out) {
    static const char *const t[] = {"1", "true", "yes", "on"}, *const f[] = {"0", "false", "no", "off"};
    for (size_t i = 0; i < 4; i++) {
        if (ieq(v, t[i])) return *out = true, 0;
        if (ieq(v, f[i])) return *out = false, 0;
    }
    return -1;
}

/* strtoull would take "-1" as 2^64-1 */
int zc_cfg_parse_digits(const char *v, const char **end, uint64_t *out) {
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

const char *zc_cfg_fmt_size(uint64_t v, char *buf, size_t n) {
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
    if (zc_cfg_parse_digits(v, &end, &x) != 0) return -1;
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

int zc_cfg_parse_number(const struct zc_knob_info *ki, const char *v, void *out, char *err, size_t n) {
    char sb[72], lo[32], hi[32];
    const char *sv = zc_cfg_shorten(v, sb, sizeof(sb));
    switch (ki->type) {
    case ZC_T_BOOL:
        if (zc_cfg_parse_bool(v, out) == 0) return 0;
        snprintf(err, n, "expected true or false, got '%s'", sv);
        return -1;
    case ZC_T_UINT: {
        const char *end;
        uint64_t x;
        if (zc_cfg_parse_digits(v, &end, &x) == 0 && !*end && x >= ki->min && x <= ki->max) {
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
                 zc_cfg_fmt_size(ki->min, lo, sizeof(lo)), zc_cfg_fmt_size(ki->max, hi, sizeof(hi)), sv);
        return -1;
    }
    default: return -1;
    }
}

/* ---------------------------------------------------------------- lists */
int zc_cfg_parse_list(struct zc_config *c, const char *s, bool globs, struct zc_strlist *out, char *err, size_t n) {
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
    const char **v = zc_cfg_alloc(&c->priv->a, count * sizeof(*v));
    char *buf = zc_cfg_alloc(&c->priv->a, len + 1);
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
            snprintf(err, n, "empty %s in '%s'", globs ? "pattern" : "name", zc_cfg_shorten(s, sb, sizeof(sb)));
            return -1;
        }
        v[k++] = item;
        if (*p) p++;
    }
    *out = (struct zc_strlist){count, v};
    return 0;
}

/* ---------------------------------------------------------------- rank sets */
#define ZC_RANK_MAX 2147483647u /* MPI ranks are ints */

static int rsb_push(struct zc_cfg_rsb *b, uint32_t lo, uint32_t hi) {
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
    int r = zc_cfg_parse_digits(*p, &end, &x);
    if (r == -1) return -1;
    if (r == -2 || x > ZC_RANK_MAX) {
        snprintf(err, n, "rank %.*s is too large (at most %u)", (int)(end - *p > 24 ? 24 : end - *p), *p, ZC_RANK_MAX);
        return -2;
    }
    *out = (uint32_t)x;
    *p = end;
    return 0;
}

int zc_cfg_rsb_add(struct zc_cfg_rsb *b, const char *s, bool allow_all, char *err, size_t n) {
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
                snprintf(err, n, "empty item in rank set '%s'", zc_cfg_shorten(s, sb, sizeof(sb)));
            else
                snprintf(err, n, "'%.*s' is not a rank or a range of ranks (such as 0-3,8)",
                         (int)(ie - item > 40 ? 40 : ie - item), item);
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

int zc_cfg_rsb_finish(struct zc_config *c, struct zc_cfg_rsb *b, struct zc_rankset *out) {
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
        struct zc_rank_range *v = zc_cfg_alloc(&c->priv->a, (k ? k : 1) * sizeof(*v));
        if (!v) {
            rc = -1;
            k = 0;
        } else if (k) {
            memcpy(v, b->v, k * sizeof(*v));
        }
        *out = (struct zc_rankset){.all = false, .n = k, .v = v};
    }
    free(b->v);
    *b = (struct zc_cfg_rsb){0};
    return rc;
}

const char *zc_cfg_fmt_rankset(const struct zc_rankset *s, char *buf, size_t size) {
    if (s->all) return snprintf(buf, size, "all"), buf;
    size_t o = 0;
    buf[0] = 0;
    for (uint32_t i = 0; i < s->n && o < size; i++) {
        if (s->v[i].lo == s->v[i].hi) o += (size_t)snprintf(buf + o, size - o, "%s%u", i ? "," : "", s->v[i].lo);
        else o += (size_t)snprintf(buf + o, size - o, "%s%u-%u", i ? "," : "", s->v[i].lo, s->v[i].hi);
    }
    return buf;
}

const char *zc_cfg_fmt_duration(uint64_t ns, char *buf, size_t size) {
    static const struct {
        const char *u;
        uint64_t mul;
    } units[] = {{"m", UINT64_C(60000000000)}, {"s", 1000000000}, {"ms", 1000000}, {"us", 1000}, {"ns", 1}};
    if (ns == 0) return snprintf(buf, size, "0s"), buf;
    for (size_t i = 0;; i++)
        if (ns % units[i].mul == 0)
            return snprintf(buf, size, "%llu%s", (unsigned long long)(ns / units[i].mul), units[i].u), buf;
}

/* ---------------------------------------------------------------- variables */
static void env_knob(struct zc_config *c, int kid, const char *var, const char *val) {
    const struct zc_knob_info *ki = &zc_knob_table[kid];
    void *dst = zc_cfg_knob_ptr(c, kid);
    struct zc_cfg_ctx x = {.c = c, .var = var};
    char err[512];
    switch (ki->type) {
    case ZC_T_BOOL:
    case ZC_T_UINT:
    case ZC_T_SIZE: {
        if (zc_cfg_parse_number(ki, val, dst, err, sizeof(err)) == 0) break; /* dst is left alone on failure */
        /* a tuning value: ignored, the previous one stays */
        struct zc_cfg_sb b = {0};
        zc_cfg_sb_printf(&b, "%s: %s; ignored, keeping ", var, err);
        zc_cfg_sb_scalar(&b, ki, dst);
        if (c->origin[kid].kind == ZC_ORIGIN_FILE) zc_cfg_sb_printf(&b, " (%s:%u)", c->file, c->origin[kid].line);
        else zc_cfg_sb_printf(&b, " (the default)");
        zc_cfg_msg(c, ZC_MSG_IGNORED, b.oom ? var : b.p);
        free(b.p);
        return;
    }
    case ZC_T_STRING:
        if (zc_cfg_check_string(kid, val, err, sizeof(err)) != 0) { /* a testing value: ignored as a number is */
            struct zc_cfg_sb b = {0};
            zc_cfg_sb_printf(&b, "%s: %s; ignored, keeping '%s'%s", var, err, *(const char **)dst ? *(const char **)dst : "",
                             c->origin[kid].kind == ZC_ORIGIN_FILE ? "" : " (the default)");
            zc_cfg_msg(c, ZC_MSG_IGNORED, b.oom ? var : b.p);
            free(b.p);
            return;
        }
        *(const char **)dst = zc_cfg_strndup(&c->priv->a, val, strlen(val));
        break;
    case ZC_T_LIST:
    case ZC_T_GLOBS:
        if (zc_cfg_parse_list(c, val, ki->type == ZC_T_GLOBS, dst, err, sizeof(err)) != 0)
            return zc_cfg_report(&x, 0, 0, "%s", err);
        break;
    case ZC_T_RANKSET: {
        struct zc_cfg_rsb b = {0};
        if (zc_cfg_rsb_add(&b, val, true, err, sizeof(err)) != 0) {
            free(b.v);
            return zc_cfg_report(&x, 0, 0, "%s", err);
        }
        zc_cfg_rsb_finish(c, &b, dst);
        break;
    }
    case ZC_T_WINDOWS:
        zc_cfg_windows_from_env(&x, val, dst);
        if (x.failed) return;
        break;
    }
    c->origin[kid] = (struct zc_origin){ZC_ORIGIN_ENV, 0, 0};
}

/* ---------------------------------------------------------------- loading */
static void set_default(struct zc_config *c, int kid) {
    const struct zc_knob_info *ki = &zc_knob_table[kid];
    void *dst = zc_cfg_knob_ptr(c, kid);
    char err[512];
    struct zc_cfg_rsb b = {0};
    switch (ki->type) {
    case ZC_T_BOOL:
    case ZC_T_UINT:
    case ZC_T_SIZE: zc_cfg_parse_number(ki, ki->def, dst, err, sizeof(err)); break;
    case ZC_T_STRING: *(const char **)dst = ki->def; break;
    case ZC_T_LIST:
    case ZC_T_GLOBS: zc_cfg_parse_list(c, ki->def, ki->type == ZC_T_GLOBS, dst, err, sizeof(err)); break;
    case ZC_T_RANKSET:
        zc_cfg_rsb_add(&b, ki->def, true, err, sizeof(err));
        zc_cfg_rsb_finish(c, &b, dst);
        break;
    case ZC_T_WINDOWS: *(struct zc_windows *)dst = (struct zc_windows){0, NULL}; break;
    }
    c->origin[kid] = (struct zc_origin){ZC_ORIGIN_DEFAULT, 0, 0};
}

static char *read_file(struct zc_config *c, const char *path, size_t *len) {
    struct zc_cfg_ctx x = {.c = c, .fname = path};
    /* O_NONBLOCK and fstat: a FIFO without a writer would block the open (every preloaded
     * process's constructor) for ever; a device or directory is no configuration either */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return zc_cfg_report(&x, 0, 0, "cannot read the configuration file: %s", strerror(errno)), NULL;
    struct stat st = {0};
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        int e = errno;
        close(fd);
        return zc_cfg_report(&x, 0, 0, "not a regular file (%s): not a zecoll configuration",
                             S_ISDIR(st.st_mode)    ? "a directory"
                             : S_ISFIFO(st.st_mode) ? "a FIFO"
                             : S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) ? "a device"
                             : S_ISSOCK(st.st_mode) ? "a socket"
                                                    : strerror(e)),
               NULL;
    }
    char *buf = malloc(ZC_FILE_MAX + 1);
    size_t n = 0;
    if (!buf) {
        close(fd);
        return zc_cfg_report(&x, 0, 0, "out of memory"), NULL;
    }
    for (;;) {
        ssize_t r = read(fd, buf + n, ZC_FILE_MAX + 1 - n);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) {
            zc_cfg_report(&x, 0, 0, "cannot read the configuration file: %s", strerror(errno));
            close(fd);
            free(buf);
            return NULL;
        }
        if (r == 0) break;
        n += (size_t)r;
        if (n > ZC_FILE_MAX) {
            zc_cfg_report(&x, 0, 0, "larger than %u bytes: not a zecoll configuration", ZC_FILE_MAX);
            close(fd);
            free(buf);
            return NULL;
        }
    }
    close(fd);
    *len = n;
    return buf;
}

/* Every knob's variable (but ZECOLL_CONFIG, read first), over the file's values. */
static void load_variables(struct zc_config *c, const struct zc_config_opts *o) {
    for (int k = 0; k < ZC_K_COUNT; k++) {
        if (k == ZC_K_CONFIG) continue;
        char var[64];
        snprintf(var, sizeof(var), "ZECOLL_%s", zc_knob_table[k].name);
        const char *v = o->getenv(var, o->ud);
        if (v) env_knob(c, k, var, v);
    }
}

/* A ZECOLL_ variable that names no knob is most often a typo: a warning, with a suggestion. */
static void warn_unknown_variables(struct zc_config *c, const char *const *env) {
    for (const char *const *e = env; e && *e; e++) {
        if (strncmp(*e, "ZECOLL_", 7)) continue;
        size_t l = strcspn(*e + 7, "=");
        int k = 0;
        while (k < ZC_K_COUNT && !(strlen(zc_knob_table[k].name) == l && !memcmp(zc_knob_table[k].name, *e + 7, l)))
            k++;
        if (k < ZC_K_COUNT || (l == 15 && !memcmp(*e + 7, "CONFIG_REPORTED", 15))) continue;
        const char *cand[ZC_K_COUNT];
        size_t clen[ZC_K_COUNT];
        for (k = 0; k < ZC_K_COUNT; k++) cand[k] = zc_knob_table[k].name, clen[k] = strlen(cand[k]);
        char name[72], msg[200];
        snprintf(name, sizeof(name), "%.*s", (int)(l > 64 ? 64 : l), *e + 7);
        int bi = zc_cfg_closest(name, cand, clen, ZC_K_COUNT);
        if (bi >= 0)
            snprintf(msg, sizeof(msg), "ZECOLL_%s is not a zecoll setting; did you mean ZECOLL_%s?", name, cand[bi]);
        else snprintf(msg, sizeof(msg), "ZECOLL_%s is not a zecoll setting (see docs/knobs.md)", name);
        zc_cfg_msg(c, ZC_MSG_WARNING, msg);
    }
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
        c->file = c->knobs.CONFIG = zc_cfg_strndup(&c->priv->a, file, strlen(file));
        size_t len = o->len;
        char *data = o->data ? NULL : read_file(c, file, &len);
        if (o->data || data) zc_cfg_load_yaml(c, o->data ? o->data : data, len);
        free(data);
    }
    if (o->getenv) load_variables(c, o);
    warn_unknown_variables(c, o->environ);
    if (c->priv->a.oom) {
        zc_config_free(c);
        return NULL;
    }
    return c;
}

void zc_config_free(struct zc_config *c) {
    if (!c) return;
    zc_cfg_arena_free(&c->priv->a);
    free(c->priv);
    free(c);
}

