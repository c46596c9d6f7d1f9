/* SPDX-License-Identifier: MIT */
/*
 * zt_truth.c: JSON-lines reader for the zesim ground truth (see zt_truth.h), a deliberately
 * small parser for flat objects, the typed device/op records and query helpers.
 */
#include "zt_truth.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- errors ------------------------------------------------------------------------------- */

static void set_err(char *err, size_t size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void set_err(char *err, size_t size, const char *fmt, ...)
{
    if (!err || !size)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, size, fmt, ap);
    va_end(ap);
}

/* ---- growable arrays ---------------------------------------------------------------------- */

static int grow(void **p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return 0;
    size_t ncap = *cap ? *cap * 2 : 16;
    while (ncap < need)
        ncap *= 2;
    void *np = realloc(*p, ncap * elem);
    if (!np)
        return -1;
    *p = np;
    *cap = ncap;
    return 0;
}

/* ---- JSON --------------------------------------------------------------------------------- */

typedef struct parser {
    const char *s, *end;
    const char *msg; /* first error */
} parser;

static void skip_ws(parser *p)
{
    while (p->s < p->end && (*p->s == ' ' || *p->s == '\t' || *p->s == '\r' || *p->s == '\n'))
        p->s++;
}

static int fail(parser *p, const char *msg)
{
    if (!p->msg)
        p->msg = msg;
    return -1;
}

static void jvalue_free(zt_jvalue *v)
{
    if (v->type == ZT_JSTR)
        free(v->s);
    if (v->type == ZT_JARR) {
        for (size_t i = 0; i < v->nitems; i++)
            jvalue_free(&v->items[i]);
        free(v->items);
    }
    memset(v, 0, sizeof *v);
}

static void jobject_free(zt_jobject *o)
{
    for (size_t i = 0; i < o->nfields; i++) {
        free(o->fields[i].key);
        jvalue_free(&o->fields[i].v);
    }
    free(o->fields);
    memset(o, 0, sizeof *o);
}

static int hex4(parser *p, unsigned *out)
{
    if (p->end - p->s < 4)
        return fail(p, "truncated \\u escape");
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        char c = *p->s++;
        v <<= 4;
        if (c >= '0' && c <= '9')
            v |= (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f')
            v |= (unsigned)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F')
            v |= (unsigned)(c - 'A' + 10);
        else
            return fail(p, "bad \\u escape");
    }
    *out = v;
    return 0;
}

static size_t put_utf8(char *o, unsigned cp)
{
    if (cp < 0x80) {
        o[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        o[0] = (char)(0xC0 | (cp >> 6));
        o[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        o[0] = (char)(0xE0 | (cp >> 12));
        o[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        o[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    o[0] = (char)(0xF0 | (cp >> 18));
    o[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    o[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    o[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

/* p->s at the opening quote. The decoded string is never longer than the escaped one. */
static int parse_string(parser *p, char **out)
{
    p->s++;
    const char *start = p->s;
    const char *q = start;
    while (q < p->end && *q != '"') {
        if (*q == '\\')
            q++;
        q++;
    }
    if (q >= p->end)
        return fail(p, "unterminated string");
    char *buf = malloc((size_t)(q - start) + 1);
    if (!buf)
        return fail(p, "out of memory");
    size_t n = 0;
    while (p->s < p->end && *p->s != '"') {
        unsigned char c = (unsigned char)*p->s++;
        if (c < 0x20) {
            free(buf);
            return fail(p, "control character in string");
        }
        if (c != '\\') {
            buf[n++] = (char)c;
            continue;
        }
        char e = *p->s++;
        unsigned cp;
        switch (e) {
        case '"': buf[n++] = '"'; break;
        case '\\': buf[n++] = '\\'; break;
        case '/': buf[n++] = '/'; break;
        case 'b': buf[n++] = '\b'; break;
        case 'f': buf[n++] = '\f'; break;
        case 'n': buf[n++] = '\n'; break;
        case 'r': buf[n++] = '\r'; break;
        case 't': buf[n++] = '\t'; break;
        case 'u':
            if (hex4(p, &cp) < 0) {
                free(buf);
                return -1;
            }
            if (cp >= 0xD800 && cp < 0xDC00) { /* surrogate pair */
                unsigned lo;
                if (p->end - p->s < 6 || p->s[0] != '\\' || p->s[1] != 'u') {
                    free(buf);
                    return fail(p, "lone high surrogate");
                }
                p->s += 2;
                if (hex4(p, &lo) < 0 || lo < 0xDC00 || lo > 0xDFFF) {
                    free(buf);
                    return fail(p, "bad low surrogate");
                }
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
                free(buf);
                return fail(p, "lone low surrogate");
            }
            /* \uXXXX is 6 input bytes and at most 3 output bytes; a pair is 12 -> 4. */
            n += put_utf8(buf + n, cp);
            break;
        default:
            free(buf);
            return fail(p, "bad escape");
        }
    }
    buf[n] = 0;
    p->s++; /* closing quote */
    *out = buf;
    return 0;
}

/* JSON number grammar; integers without fraction/exponent keep their exact 64-bit value. */
static int parse_number(parser *p, zt_jvalue *v)
{
    const char *b = p->s;
    int neg = 0;
    if (p->s < p->end && *p->s == '-') {
        neg = 1;
        p->s++;
    }
    if (p->s >= p->end || *p->s < '0' || *p->s > '9')
        return fail(p, "bad number");
    if (*p->s == '0' && p->s + 1 < p->end && p->s[1] >= '0' && p->s[1] <= '9')
        return fail(p, "leading zero in number");
    uint64_t mag = 0;
    int overflow = 0;
    while (p->s < p->end && *p->s >= '0' && *p->s <= '9') {
        unsigned dgt = (unsigned)(*p->s - '0');
        if (mag > (UINT64_MAX - dgt) / 10)
            overflow = 1;
        else
            mag = mag * 10 + dgt;
        p->s++;
    }
    int is_int = 1;
    if (p->s < p->end && *p->s == '.') {
        is_int = 0;
        p->s++;
        if (p->s >= p->end || *p->s < '0' || *p->s > '9')
            return fail(p, "bad fraction");
        while (p->s < p->end && *p->s >= '0' && *p->s <= '9')
            p->s++;
    }
    if (p->s < p->end && (*p->s == 'e' || *p->s == 'E')) {
        is_int = 0;
        p->s++;
        if (p->s < p->end && (*p->s == '+' || *p->s == '-'))
            p->s++;
        if (p->s >= p->end || *p->s < '0' || *p->s > '9')
            return fail(p, "bad exponent");
        while (p->s < p->end && *p->s >= '0' && *p->s <= '9')
            p->s++;
    }
    char tmp[64];
    size_t len = (size_t)(p->s - b);
    if (len >= sizeof tmp) {
        /* very long literal: only its double value matters */
        char *heap = malloc(len + 1);
        if (!heap)
            return fail(p, "out of memory");
        memcpy(heap, b, len);
        heap[len] = 0;
        v->d = strtod(heap, NULL);
        free(heap);
    } else {
        memcpy(tmp, b, len);
        tmp[len] = 0;
        v->d = strtod(tmp, NULL);
    }
    v->type = ZT_JNUM;
    v->neg = neg;
    if (is_int && !overflow) {
        if (!neg) {
            v->is_int = 1;
            v->u = mag;
            v->i = mag <= (uint64_t)INT64_MAX ? (int64_t)mag : 0;
        } else if (mag <= (uint64_t)INT64_MAX + 1) {
            v->is_int = 1;
            v->i = mag == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)mag;
        }
    }
    return 0;
}

static int match_word(parser *p, const char *w)
{
    size_t n = strlen(w);
    if ((size_t)(p->end - p->s) < n || memcmp(p->s, w, n) != 0)
        return 0;
    p->s += n;
    return 1;
}

static int parse_value(parser *p, zt_jvalue *v, int allow_array);

static int parse_array(parser *p, zt_jvalue *v)
{
    p->s++;
    v->type = ZT_JARR;
    size_t cap = 0;
    skip_ws(p);
    if (p->s < p->end && *p->s == ']') {
        p->s++;
        return 0;
    }
    for (;;) {
        if (grow((void **)&v->items, &cap, v->nitems + 1, sizeof *v->items) < 0)
            return fail(p, "out of memory");
        zt_jvalue *it = &v->items[v->nitems];
        memset(it, 0, sizeof *it);
        skip_ws(p);
        if (parse_value(p, it, 0) < 0)
            return -1;
        v->nitems++;
        skip_ws(p);
        if (p->s < p->end && *p->s == ',') {
            p->s++;
            continue;
        }
        if (p->s < p->end && *p->s == ']') {
            p->s++;
            return 0;
        }
        return fail(p, "expected ',' or ']' in array");
    }
}

static int parse_value(parser *p, zt_jvalue *v, int allow_array)
{
    memset(v, 0, sizeof *v);
    if (p->s >= p->end)
        return fail(p, "missing value");
    char c = *p->s;
    if (c == '"') {
        v->type = ZT_JSTR;
        return parse_string(p, &v->s);
    }
    if (c == '-' || (c >= '0' && c <= '9'))
        return parse_number(p, v);
    if (c == '[') {
        if (!allow_array)
            return fail(p, "nested arrays are not part of the format");
        return parse_array(p, v);
    }
    if (c == '{')
        return fail(p, "nested objects are not part of the format");
    if (match_word(p, "null")) {
        v->type = ZT_JNULL;
        return 0;
    }
    if (match_word(p, "true")) {
        v->type = ZT_JBOOL;
        v->b = 1;
        return 0;
    }
    if (match_word(p, "false")) {
        v->type = ZT_JBOOL;
        return 0;
    }
    return fail(p, "unexpected character");
}

/* One line = one object (and nothing else but whitespace). */
static int parse_object(parser *p, zt_jobject *o)
{
    memset(o, 0, sizeof *o);
    size_t cap = 0;
    skip_ws(p);
    if (p->s >= p->end || *p->s != '{')
        return fail(p, "line does not start with '{'");
    p->s++;
    skip_ws(p);
    if (p->s < p->end && *p->s == '}') {
        p->s++;
    } else {
        for (;;) {
            skip_ws(p);
            if (p->s >= p->end || *p->s != '"')
                return fail(p, "expected a key string");
            if (grow((void **)&o->fields, &cap, o->nfields + 1, sizeof *o->fields) < 0)
                return fail(p, "out of memory");
            zt_jfield *f = &o->fields[o->nfields];
            memset(f, 0, sizeof *f);
            if (parse_string(p, &f->key) < 0)
                return -1;
            o->nfields++; /* owned from here, freed on error by the caller */
            for (size_t i = 0; i + 1 < o->nfields; i++)
                if (strcmp(o->fields[i].key, f->key) == 0)
                    return fail(p, "duplicate key");
            skip_ws(p);
            if (p->s >= p->end || *p->s != ':')
                return fail(p, "expected ':'");
            p->s++;
            skip_ws(p);
            if (parse_value(p, &f->v, 1) < 0)
                return -1;
            skip_ws(p);
            if (p->s < p->end && *p->s == ',') {
                p->s++;
                continue;
            }
            if (p->s < p->end && *p->s == '}') {
                p->s++;
                break;
            }
            return fail(p, "expected ',' or '}'");
        }
    }
    skip_ws(p);
    if (p->s != p->end)
        return fail(p, "trailing characters after the object");
    return 0;
}

const zt_jvalue *zt_jobject_get(const zt_jobject *o, const char *key)
{
    for (size_t i = 0; o && i < o->nfields; i++)
        if (strcmp(o->fields[i].key, key) == 0)
            return &o->fields[i].v;
    return NULL;
}

/* ---- typed mapping ------------------------------------------------------------------------ */

uint64_t zt_truth_handle(const char *s)
{
    if (!s)
        return 0;
    return strtoull(s, NULL, 0);
}

static int get_u64(const zt_jobject *o, const char *k, uint64_t *out)
{
    const zt_jvalue *v = zt_jobject_get(o, k);
    if (!v || v->type != ZT_JNUM || !v->is_int || v->neg)
        return 0;
    *out = v->u;
    return 1;
}

static int get_u32(const zt_jobject *o, const char *k, uint32_t *out)
{
    uint64_t u;
    if (!get_u64(o, k, &u) || u > UINT32_MAX)
        return 0;
    *out = (uint32_t)u;
    return 1;
}

static int get_i64(const zt_jobject *o, const char *k, int64_t *out)
{
    const zt_jvalue *v = zt_jobject_get(o, k);
    if (!v || v->type != ZT_JNUM || !v->is_int || (!v->neg && v->u > (uint64_t)INT64_MAX))
        return 0;
    *out = v->i;
    return 1;
}

static int get_dbl(const zt_jobject *o, const char *k, double *out)
{
    const zt_jvalue *v = zt_jobject_get(o, k);
    if (!v || v->type != ZT_JNUM)
        return 0;
    *out = v->d;
    return 1;
}

/* String or null (borrowed). Returns 1 when present with one of these types. */
static int get_str_or_null(const zt_jobject *o, const char *k, const char **out)
{
    const zt_jvalue *v = zt_jobject_get(o, k);
    if (!v)
        return 0;
    if (v->type == ZT_JNULL) {
        *out = NULL;
        return 1;
    }
    if (v->type != ZT_JSTR)
        return 0;
    *out = v->s;
    return 1;
}

static int get_bool(const zt_jobject *o, const char *k, int *out)
{
    const zt_jvalue *v = zt_jobject_get(o, k);
    if (!v || v->type != ZT_JBOOL)
        return 0;
    *out = v->b;
    return 1;
}

static int get_triple(const zt_jobject *o, const char *k, uint32_t out[3])
{
    const zt_jvalue *v = zt_jobject_get(o, k);
    if (!v || v->type != ZT_JARR || v->nitems != 3)
        return 0;
    for (int i = 0; i < 3; i++) {
        const zt_jvalue *it = &v->items[i];
        if (it->type != ZT_JNUM || !it->is_int || it->neg || it->u > UINT32_MAX)
            return 0;
        out[i] = (uint32_t)it->u;
    }
    return 1;
}

/* Strings in typed records are borrowed from the jobject (which the zt_truth owns). */
static void map_device(const zt_jobject *o, zt_truth_device *d)
{
    memset(d, 0, sizeof *d);
    d->raw = o;
    const char *name = NULL;
    if (get_u32(o, "device", &d->device)) d->present |= ZT_TD_DEVICE;
    if (get_str_or_null(o, "name", &name) && name) d->present |= ZT_TD_NAME;
    d->name = (char *)name;
    if (get_u64(o, "hz", &d->hz)) d->present |= ZT_TD_HZ;
    if (get_u32(o, "ts_bits", &d->ts_bits)) d->present |= ZT_TD_TS_BITS;
    if (get_u32(o, "kernel_ts_bits", &d->kernel_ts_bits)) d->present |= ZT_TD_KERNEL_TS_BITS;
    if (get_dbl(o, "drift_ppm", &d->drift_ppm)) d->present |= ZT_TD_DRIFT_PPM;
    if (get_i64(o, "offset_ns", &d->offset_ns)) d->present |= ZT_TD_OFFSET_NS;
    if (get_dbl(o, "wrap_after_ms", &d->wrap_after_ms)) d->present |= ZT_TD_WRAP_AFTER_MS;
    if (get_u64(o, "h0", &d->h0)) d->present |= ZT_TD_H0;
    if (get_u64(o, "t0", &d->t0)) d->present |= ZT_TD_T0;
    if (get_i64(o, "pid", &d->pid)) d->present |= ZT_TD_PID;
}

static int map_op(const zt_jobject *o, zt_truth_op *op)
{
    memset(op, 0, sizeof *op);
    op->raw = o;
    const char *s = NULL;
    if (get_u64(o, "seq", &op->seq)) op->present |= ZT_TO_SEQ;
    if (get_str_or_null(o, "kind", &s) && s) op->present |= ZT_TO_KIND;
    op->kind = (char *)s;
    s = NULL;
    if (get_str_or_null(o, "launch", &s)) op->present |= ZT_TO_LAUNCH;
    op->launch = (char *)s;
    s = NULL;
    if (get_str_or_null(o, "name", &s)) op->present |= ZT_TO_NAME;
    op->name = (char *)s;
    if (get_u32(o, "device", &op->device)) op->present |= ZT_TO_DEVICE;
    if (get_u32(o, "ordinal", &op->ordinal)) op->present |= ZT_TO_ORDINAL;
    if (get_u32(o, "index", &op->index)) op->present |= ZT_TO_INDEX;
    s = NULL;
    if (get_str_or_null(o, "queue", &s) && s) op->present |= ZT_TO_QUEUE;
    op->queue = zt_truth_handle(s);
    s = NULL;
    if (get_str_or_null(o, "list", &s) && s) op->present |= ZT_TO_LIST;
    op->list = zt_truth_handle(s);
    if (get_bool(o, "immediate", &op->immediate)) op->present |= ZT_TO_IMMEDIATE;
    if (get_u64(o, "exec", &op->exec)) op->present |= ZT_TO_EXEC;
    if (get_u64(o, "cmd", &op->cmd)) op->present |= ZT_TO_CMD;
    if (get_u64(o, "ts_start", &op->ts_start)) op->present |= ZT_TO_TS_START;
    if (get_u64(o, "ts_end", &op->ts_end)) op->present |= ZT_TO_TS_END;
    if (get_u64(o, "host_start", &op->host_start)) op->present |= ZT_TO_HOST_START;
    if (get_u64(o, "host_end", &op->host_end)) op->present |= ZT_TO_HOST_END;
    if (get_u64(o, "bytes", &op->bytes)) op->present |= ZT_TO_BYTES;
    s = NULL;
    if (get_str_or_null(o, "src", &s)) op->present |= ZT_TO_SRC;
    op->src = (char *)s;
    s = NULL;
    if (get_str_or_null(o, "dst", &s)) op->present |= ZT_TO_DST;
    op->dst = (char *)s;
    if (get_triple(o, "groups", op->groups)) op->present |= ZT_TO_GROUPS;
    if (get_triple(o, "group_size", op->group_size)) op->present |= ZT_TO_GROUP_SIZE;
    s = NULL;
    if (get_str_or_null(o, "signal", &s)) op->present |= ZT_TO_SIGNAL;
    op->signal = zt_truth_handle(s);
    const zt_jvalue *w = zt_jobject_get(o, "waits");
    if (w && w->type == ZT_JARR) {
        int ok = 1;
        for (size_t i = 0; i < w->nitems; i++)
            if (w->items[i].type != ZT_JSTR)
                ok = 0;
        if (w->nitems) {
            op->waits = calloc(w->nitems, sizeof *op->waits);
            if (!op->waits)
                return -1;
            for (size_t i = 0; i < w->nitems; i++)
                op->waits[i] = w->items[i].type == ZT_JSTR ? zt_truth_handle(w->items[i].s) : 0;
        }
        op->nwaits = w->nitems;
        if (ok)
            op->present |= ZT_TO_WAITS;
    }
    if (get_i64(o, "tid", &op->tid)) op->present |= ZT_TO_TID;
    return 0;
}

void zt_truth_free(zt_truth *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->nops; i++)
        free(t->ops[i].waits);
    free(t->ops);
    free(t->devices);
    for (size_t i = 0; i < t->nobjects; i++)
        jobject_free(&t->objects[i]);
    free(t->objects);
    memset(t, 0, sizeof *t);
}

int zt_truth_parse(const char *text, size_t len, unsigned flags, zt_truth *t, char *err,
                   size_t errsize)
{
    memset(t, 0, sizeof *t);
    size_t ocap = 0, line = 0;
    size_t *lines = NULL, lcap = 0;
    const char *s = text, *end = text + len;
    while (s < end) {
        const char *nl = memchr(s, '\n', (size_t)(end - s));
        const char *le = nl ? nl : end;
        line++;
        parser p = {s, le, NULL};
        skip_ws(&p);
        if (p.s == le) { /* blank line */
            s = nl ? nl + 1 : end;
            continue;
        }
        if (grow((void **)&t->objects, &ocap, t->nobjects + 1, sizeof *t->objects) < 0 ||
            grow((void **)&lines, &lcap, t->nobjects + 1, sizeof *lines) < 0) {
            set_err(err, errsize, "out of memory");
            goto fail;
        }
        zt_jobject *o = &t->objects[t->nobjects];
        if (parse_object(&p, o) < 0) {
            if (flags & ZT_TRUTH_LENIENT) {
                jobject_free(o);
                t->nbad++;
                s = nl ? nl + 1 : end;
                continue;
            }
            set_err(err, errsize, "line %zu, column %zu: %s", line, (size_t)(p.s - s) + 1,
                    p.msg ? p.msg : "parse error");
            jobject_free(o);
            goto fail;
        }
        const zt_jvalue *kind = zt_jobject_get(o, "kind");
        if (!kind || kind->type != ZT_JSTR) {
            if (flags & ZT_TRUTH_LENIENT) {
                jobject_free(o);
                t->nbad++;
                s = nl ? nl + 1 : end;
                continue;
            }
            set_err(err, errsize, "line %zu: no \"kind\" string", line);
            jobject_free(o);
            goto fail;
        }
        lines[t->nobjects] = line;
        t->nobjects++;
        s = nl ? nl + 1 : end;
    }
    /* Typed records point into t->objects, so build them once that array stops moving. */
    for (size_t i = 0; i < t->nobjects; i++) {
        const zt_jvalue *kind = zt_jobject_get(&t->objects[i], "kind");
        if (strcmp(kind->s, "device") == 0)
            t->ndevices++;
        else
            t->nops++;
    }
    t->devices = calloc(t->ndevices ? t->ndevices : 1, sizeof *t->devices);
    t->ops = calloc(t->nops ? t->nops : 1, sizeof *t->ops);
    if (!t->devices || !t->ops) {
        set_err(err, errsize, "out of memory");
        t->nops = 0;
        goto fail;
    }
    size_t nd = 0, no = 0;
    for (size_t i = 0; i < t->nobjects; i++) {
        const zt_jobject *o = &t->objects[i];
        if (strcmp(zt_jobject_get(o, "kind")->s, "device") == 0) {
            map_device(o, &t->devices[nd]);
            t->devices[nd++].line = lines[i];
        } else {
            if (map_op(o, &t->ops[no]) < 0) {
                set_err(err, errsize, "out of memory");
                t->nops = no + 1;
                goto fail;
            }
            t->ops[no++].line = lines[i];
        }
    }
    free(lines);
    return 0;
fail:
    free(lines);
    zt_truth_free(t);
    return -1;
}

int zt_truth_load(const char *path, unsigned flags, zt_truth *t, char *err, size_t errsize)
{
    memset(t, 0, sizeof *t);
    FILE *f = fopen(path, "rb");
    if (!f) {
        set_err(err, errsize, "%s: %s", path, strerror(errno));
        return -1;
    }
    char *buf = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        if (grow((void **)&buf, &cap, len + 65536, 1) < 0) {
            fclose(f);
            free(buf);
            set_err(err, errsize, "out of memory");
            return -1;
        }
        size_t n = fread(buf + len, 1, cap - len, f);
        len += n;
        if (n == 0)
            break;
    }
    int rd_err = ferror(f);
    fclose(f);
    if (rd_err) {
        free(buf);
        set_err(err, errsize, "%s: read error", path);
        return -1;
    }
    int r = zt_truth_parse(buf, len, flags, t, err, errsize);
    free(buf);
    return r;
}

const zt_truth_device *zt_truth_device_find(const zt_truth *t, uint32_t device)
{
    for (size_t i = 0; i < t->ndevices; i++)
        if ((t->devices[i].present & ZT_TD_DEVICE) && t->devices[i].device == device)
            return &t->devices[i];
    return NULL;
}

/* ---- checks ------------------------------------------------------------------------------- */

static const struct { unsigned bit; const char *name; } op_fields[] = {
    {ZT_TO_SEQ, "seq (uint)"}, {ZT_TO_KIND, "kind (string)"},
    {ZT_TO_LAUNCH, "launch (string)"}, {ZT_TO_NAME, "name (string|null)"},
    {ZT_TO_DEVICE, "device (uint)"}, {ZT_TO_ORDINAL, "ordinal (uint)"},
    {ZT_TO_INDEX, "index (uint)"}, {ZT_TO_QUEUE, "queue (\"0x..\")"},
    {ZT_TO_LIST, "list (\"0x..\")"}, {ZT_TO_IMMEDIATE, "immediate (bool)"},
    {ZT_TO_EXEC, "exec (uint)"}, {ZT_TO_CMD, "cmd (uint)"},
    {ZT_TO_TS_START, "ts_start (uint)"}, {ZT_TO_TS_END, "ts_end (uint)"},
    {ZT_TO_HOST_START, "host_start (uint)"}, {ZT_TO_HOST_END, "host_end (uint)"},
    {ZT_TO_BYTES, "bytes (uint)"}, {ZT_TO_SRC, "src (string)"}, {ZT_TO_DST, "dst (string)"},
    {ZT_TO_GROUPS, "groups ([x,y,z])"}, {ZT_TO_GROUP_SIZE, "group_size ([x,y,z])"},
    {ZT_TO_SIGNAL, "signal (\"0x..\"|null)"}, {ZT_TO_WAITS, "waits ([\"0x..\"])"},
    {ZT_TO_TID, "tid (int)"},
};

static int is_copy_kind(const char *k)
{
    static const char *const kinds[] = {"copy", "copy_region", "copy_from_context",
                                        "image_copy", "image_copy_region",
                                        "image_copy_to_memory", "image_copy_from_memory"};
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (strcmp(k, kinds[i]) == 0)
            return 1;
    return 0;
}

int zt_truth_op_check(const zt_truth_op *op, char *why, size_t whysize)
{
    unsigned need = ZT_TO_COMMON;
    int kernel = op->kind && strcmp(op->kind, "kernel") == 0;
    if (kernel)
        need |= ZT_TO_LAUNCH | ZT_TO_GROUPS | ZT_TO_GROUP_SIZE;
    if (op->kind && is_copy_kind(op->kind))
        need |= ZT_TO_SRC | ZT_TO_DST;
    unsigned missing = need & ~op->present;
    if (missing) {
        for (size_t i = 0; i < sizeof op_fields / sizeof op_fields[0]; i++)
            if (missing & op_fields[i].bit) {
                set_err(why, whysize, "line %zu (%s): missing or mistyped %s", op->line,
                        op->kind ? op->kind : "?", op_fields[i].name);
                return 0;
            }
    }
    if (kernel && (!op->launch || !op->name)) {
        set_err(why, whysize, "line %zu: kernel without launch or name", op->line);
        return 0;
    }
    if (!kernel && op->name) {
        set_err(why, whysize, "line %zu: %s with a non-null name", op->line, op->kind);
        return 0;
    }
    if (op->host_end < op->host_start) {
        set_err(why, whysize, "line %zu: host_end < host_start", op->line);
        return 0;
    }
    if (op->immediate && op->queue != op->list) {
        set_err(why, whysize, "line %zu: immediate op whose queue is not its list", op->line);
        return 0;
    }
    return 1;
}

int zt_truth_device_check(const zt_truth_device *d, char *why, size_t whysize)
{
    static const char *const names[] = {"device", "name", "hz", "ts_bits", "kernel_ts_bits",
                                        "drift_ppm", "offset_ns", "wrap_after_ms", "h0", "t0",
                                        "pid"};
    unsigned missing = ZT_TD_ALL & ~d->present;
    for (unsigned i = 0; i < 11; i++)
        if (missing & (1u << i)) {
            set_err(why, whysize, "device line %zu: missing or mistyped %s", d->line, names[i]);
            return 0;
        }
    return 1;
}

/* ---- clock model -------------------------------------------------------------------------- */

uint64_t zt_mask_bits(uint64_t x, unsigned bits)
{
    return bits >= 64 ? x : (x & ((UINT64_C(1) << bits) - 1));
}

uint64_t zt_truth_full_ticks(const zt_truth_device *d, uint64_t host_ns)
{
    long double dh = (long double)host_ns - (long double)d->h0;
    long double x = dh * (1.0L + (long double)d->drift_ppm / 1e6L) * (long double)d->hz / 1e9L;
    int64_t ticks = (int64_t)x; /* truncates toward zero; make it floor (no libm needed) */
    if ((long double)ticks > x)
        ticks--;
    return d->t0 + (uint64_t)ticks;
}

double zt_truth_ticks_for_ns(const zt_truth_device *d, double ns)
{
    return ns * (double)d->hz * (1.0 + d->drift_ppm / 1e6) / 1e9;
}

/* ---- queries ------------------------------------------------------------------------------ */

static int streq_opt(const char *want, const char *got)
{
    return !want || (got && strcmp(want, got) == 0);
}

int zt_truth_match(const zt_truth_op *op, const zt_truth_query *q)
{
    if (!q)
        return 1;
    if (!streq_opt(q->kind, op->kind) || !streq_opt(q->name, op->name) ||
        !streq_opt(q->launch, op->launch))
        return 0;
    if ((q->list && q->list != op->list) || (q->queue && q->queue != op->queue) ||
        (q->signal && q->signal != op->signal))
        return 0;
    if (q->waits_on) {
        int found = 0;
        for (size_t i = 0; i < op->nwaits; i++)
            if (op->waits[i] == q->waits_on)
                found = 1;
        if (!found)
            return 0;
    }
    if ((q->device != ZT_ANY && (uint32_t)q->device != op->device) ||
        (q->ordinal != ZT_ANY && (uint32_t)q->ordinal != op->ordinal) ||
        (q->index != ZT_ANY && (uint32_t)q->index != op->index) ||
        (q->immediate != ZT_ANY && !q->immediate != !op->immediate) ||
        (q->exec != ZT_ANY && (uint64_t)q->exec != op->exec))
        return 0;
    return 1;
}

int zt_truth_select_fn(const zt_truth *t, int (*pred)(const zt_truth_op *, void *), void *user,
                       zt_truth_sel *out)
{
    out->n = 0;
    out->ops = calloc(t->nops ? t->nops : 1, sizeof *out->ops);
    if (!out->ops)
        return -1;
    for (size_t i = 0; i < t->nops; i++)
        if (!pred || pred(&t->ops[i], user))
            out->ops[out->n++] = &t->ops[i];
    return 0;
}

static int pred_query(const zt_truth_op *op, void *q)
{
    return zt_truth_match(op, q);
}

int zt_truth_select(const zt_truth *t, const zt_truth_query *q, zt_truth_sel *out)
{
    return zt_truth_select_fn(t, pred_query, (void *)q, out);
}

size_t zt_truth_count(const zt_truth *t, const zt_truth_query *q)
{
    size_t n = 0;
    for (size_t i = 0; i < t->nops; i++)
        n += (size_t)zt_truth_match(&t->ops[i], q);
    return n;
}

const zt_truth_op *zt_truth_find(const zt_truth *t, const zt_truth_query *q)
{
    for (size_t i = 0; i < t->nops; i++)
        if (zt_truth_match(&t->ops[i], q))
            return &t->ops[i];
    return NULL;
}

static int cmp_u64(uint64_t a, uint64_t b)
{
    return a < b ? -1 : a > b;
}

static int by_host_start(const zt_truth_op *a, const zt_truth_op *b)
{
    int c = cmp_u64(a->host_start, b->host_start);
    return c ? c : cmp_u64(a->seq, b->seq);
}

static int by_seq(const zt_truth_op *a, const zt_truth_op *b)
{
    return cmp_u64(a->seq, b->seq);
}

static int by_cmd(const zt_truth_op *a, const zt_truth_op *b)
{
    int c = cmp_u64(a->exec, b->exec);
    if (!c)
        c = cmp_u64(a->cmd, b->cmd);
    return c ? c : cmp_u64(a->seq, b->seq);
}

void zt_truth_sel_sort(zt_truth_sel *s, zt_truth_order order)
{
    int (*cmp)(const zt_truth_op *, const zt_truth_op *) =
        order == ZT_BY_SEQ ? by_seq : order == ZT_BY_CMD ? by_cmd : by_host_start;
    /* insertion sort: stable, and selections are small */
    for (size_t i = 1; i < s->n; i++) {
        const zt_truth_op *x = s->ops[i];
        size_t j = i;
        while (j > 0 && cmp(s->ops[j - 1], x) > 0) {
            s->ops[j] = s->ops[j - 1];
            j--;
        }
        s->ops[j] = x;
    }
}

void zt_truth_sel_free(zt_truth_sel *s)
{
    if (!s)
        return;
    free(s->ops);
    s->ops = NULL;
    s->n = 0;
}

int zt_truth_expand_path(const char *pattern, long pid, long rank, char *out, size_t size)
{
    size_t n = 0;
    for (const char *c = pattern; *c; c++) {
        char tmp[32];
        const char *ins = NULL;
        if (c[0] == '%' && c[1] == 'p') {
            snprintf(tmp, sizeof tmp, "%ld", pid);
            ins = tmp;
            c++;
        } else if (c[0] == '%' && c[1] == 'r') {
            snprintf(tmp, sizeof tmp, "%ld", rank);
            ins = tmp;
            c++;
        } else if (c[0] == '%' && c[1] == '%') {
            ins = "%";
            c++;
        }
        if (ins) {
            size_t l = strlen(ins);
            if (n + l >= size)
                return -1;
            memcpy(out + n, ins, l);
            n += l;
        } else {
            if (n + 1 >= size)
                return -1;
            out[n++] = *c;
        }
    }
    if (n >= size)
        return -1;
    out[n] = 0;
    return 0;
}
