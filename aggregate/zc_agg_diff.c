/* SPDX-License-Identifier: MIT */
/* --diff A.json B.json: compares two reports of possibly different rank counts. Kernels per call
 * (mean) and per rank (total / ranks), copy bandwidth per memory pair, MPI time per rank and
 * device utilisation. A change is flagged when it exceeds its noise: the larger cross-rank
 * coefficient of variation of the two runs (per-rank totals) or, at least, the sketch's relative
 * error; a flagged slowdown beyond --threshold (default 10%) is a regression and makes the exit
 * status 1, so a CI job can gate on it. Kernels below --min-share (default 1%) of kernel time in
 * both runs are listed but not judged. Includes a small JSON reader for the report schema. */
#include "zc_agg.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- JSON */
enum jt { J_NULL, J_BOOL, J_NUM, J_STR, J_ARR, J_OBJ };
struct jv {
    enum jt t;
    double num;
    char *str;           /* strings; object member names in key */
    char *key;
    struct jv *kids;     /* arrays and objects */
    size_t n, cap;
};

struct jp {
    const char *s, *end;
    int depth;
    bool bad;
};

static void jfree(struct jv *v) {
    if (!v) return;
    for (size_t i = 0; i < v->n; i++) jfree(&v->kids[i]);
    free(v->kids);
    free(v->str);
    free(v->key);
}

static void ws(struct jp *p) {
    while (p->s < p->end && (*p->s == ' ' || *p->s == '\n' || *p->s == '\r' || *p->s == '\t')) p->s++;
}

static char *jstring(struct jp *p) {
    if (p->s >= p->end || *p->s != '"') {
        p->bad = true;
        return NULL;
    }
    p->s++;
    size_t cap = 32, n = 0;
    char *o = malloc(cap);
    while (o && p->s < p->end && *p->s != '"') {
        char c = *p->s++;
        if (c == '\\') {
            if (p->s >= p->end) break;
            char e = *p->s++;
            switch (e) {
            case 'n': c = '\n'; break;
            case 't': c = '\t'; break;
            case 'r': c = '\r'; break;
            case 'b': c = '\b'; break;
            case 'f': c = '\f'; break;
            case 'u': /* kept as '?': names in the report are ASCII or raw UTF-8 */
                for (int k = 0; k < 4 && p->s < p->end; k++) p->s++;
                c = '?';
                break;
            default: c = e;
            }
        }
        if (n + 2 > cap) {
            char *x = realloc(o, cap *= 2);
            if (!x) {
                free(o);
                o = NULL;
                break;
            }
            o = x;
        }
        o[n++] = c;
    }
    if (!o || p->s >= p->end) {
        free(o);
        p->bad = true;
        return NULL;
    }
    p->s++;
    o[n] = 0;
    return o;
}

static bool jvalue(struct jp *p, struct jv *v);

static bool push(struct jv *v, struct jv *k) {
    if (v->n == v->cap) {
        size_t nc = v->cap ? 2 * v->cap : 8;
        struct jv *x = realloc(v->kids, nc * sizeof(*x));
        if (!x) return false;
        v->kids = x;
        v->cap = nc;
    }
    v->kids[v->n++] = *k;
    return true;
}

static bool jvalue(struct jp *p, struct jv *v) {
    memset(v, 0, sizeof(*v));
    ws(p);
    if (p->s >= p->end || ++p->depth > 64) return !(p->bad = true);
    bool ok = true;
    char c = *p->s;
    if (c == '{' || c == '[') {
        v->t = c == '{' ? J_OBJ : J_ARR;
        p->s++;
        ws(p);
        if (p->s < p->end && *p->s == (c == '{' ? '}' : ']')) {
            p->s++;
        } else {
            for (;;) {
                struct jv k;
                char *key = NULL;
                if (v->t == J_OBJ) {
                    ws(p);
                    key = jstring(p);
                    ws(p);
                    if (!key || p->s >= p->end || *p->s != ':') {
                        free(key);
                        p->bad = true;
                        break;
                    }
                    p->s++;
                }
                if (!jvalue(p, &k)) {
                    free(key);
                    jfree(&k);
                    break;
                }
                k.key = key;
                if (!push(v, &k)) {
                    jfree(&k);
                    p->bad = true;
                    break;
                }
                ws(p);
                if (p->s < p->end && *p->s == ',') {
                    p->s++;
                    continue;
                }
                if (p->s < p->end && *p->s == (c == '{' ? '}' : ']')) {
                    p->s++;
                    break;
                }
                p->bad = true;
                break;
            }
        }
        ok = !p->bad;
    } else if (c == '"') {
        v->t = J_STR;
        v->str = jstring(p);
        ok = v->str != NULL;
    } else if (p->end - p->s >= 4 && !strncmp(p->s, "null", 4)) {
        v->t = J_NULL;
        p->s += 4;
    } else if (p->end - p->s >= 4 && !strncmp(p->s, "true", 4)) {
        v->t = J_BOOL;
        v->num = 1;
        p->s += 4;
    } else if (p->end - p->s >= 5 && !strncmp(p->s, "false", 5)) {
        v->t = J_BOOL;
        p->s += 5;
    } else {
        char buf[64];
        size_t n = 0;
        while (p->s + n < p->end && n < sizeof(buf) - 1 && strchr("+-0123456789.eE", p->s[n])) n++;
        memcpy(buf, p->s, n);
        buf[n] = 0;
        char *e;
        v->num = strtod(buf, &e);
        if (n == 0 || *e) ok = !(p->bad = true);
        v->t = J_NUM;
        p->s += n;
    }
    p->depth--;
    return ok && !p->bad;
}

static const struct jv *get(const struct jv *o, const char *k) {
    if (!o || o->t != J_OBJ) return NULL;
    for (size_t i = 0; i < o->n; i++)
        if (o->kids[i].key && !strcmp(o->kids[i].key, k)) return &o->kids[i];
    return NULL;
}

static double num(const struct jv *o, const char *k, double dflt) {
    const struct jv *v = get(o, k);
    return v && v->t == J_NUM ? v->num : dflt;
}

static const char *str(const struct jv *o, const char *k) {
    const struct jv *v = get(o, k);
    return v && v->t == J_STR ? v->str : "";
}

/* the whole file; NULL on failure (errno set) */
static char *slurp(FILE *f, size_t *len) {
    size_t cap = 1 << 20, n = 0;
    char *buf = malloc(cap);
    while (buf) {
        size_t k = fread(buf + n, 1, cap - n, f);
        n += k;
        if (n < cap) break;
        char *x = realloc(buf, cap * 2);
        if (!x) break;
        buf = x;
        cap *= 2;
    }
    if (buf && n == cap) { /* realloc failed */
        free(buf);
        buf = NULL;
    }
    *len = n;
    return buf;
}

static int load(const char *path, struct jv *root, FILE *err) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(err, "zecoll-aggregate: %s: %s\n", path, strerror(errno));
        return -1;
    }
    size_t n = 0;
    char *buf = slurp(f, &n);
    fclose(f);
    if (!buf) {
        fprintf(err, "zecoll-aggregate: %s: out of memory\n", path);
        return -1;
    }
    struct jp p = {buf, buf + n, 0, false};
    bool ok = jvalue(&p, root);
    ws(&p);
    if (!ok || p.s != p.end || root->t != J_OBJ) {
        fprintf(err, "zecoll-aggregate: %s: not a JSON report (malformed at byte %ld)\n", path, (long)(p.s - buf));
        free(buf);
        jfree(root);
        return -1;
    }
    free(buf);
    const struct jv *sv = get(root, "schema_version");
    /* the fields compared are the same in every version from AGG_SCHEMA_VERSION_MIN on */
    if (!sv || sv->t != J_NUM || sv->num < AGG_SCHEMA_VERSION_MIN || sv->num > AGG_SCHEMA_VERSION || sv->num != (int)sv->num ||
        !get(root, "kernels") || !get(root, "job")) {
        fprintf(err, "zecoll-aggregate: %s: not a zecoll-aggregate report of schema_version %d to %d\n", path,
                AGG_SCHEMA_VERSION_MIN, AGG_SCHEMA_VERSION);
        jfree(root);
        return -1;
    }
    return 0;
}

/* ---------------------------------------------------------------- comparison */
struct cmp {
    FILE *out;
    double thr;
    int regressions, flagged;
};

/* one metric; higher_is_worse: times (true) or bandwidths (false) */
static void judge(struct cmp *c, const char *what, const char *name, double a, double b, double noise, bool higher_is_worse,
                  const char *unit, bool judged) {
    if (a <= 0 && b <= 0) return;
    double ch = a > 0 ? (b - a) / a : INFINITY;
    bool flag = judged && fabs(ch) > noise;
    bool worse = higher_is_worse ? ch > 0 : ch < 0;
    bool reg = flag && worse && fabs(ch) > c->thr;
    c->flagged += flag;
    c->regressions += reg;
    const char *mark = reg ? "REGRESSION" : flag ? (worse ? "slower" : "faster") : judged ? "within noise" : "not judged";
    if (!higher_is_worse && flag) mark = reg ? "REGRESSION" : worse ? "lower" : "higher";
    fprintf(c->out, "%-12s %-44.44s %14.6g %14.6g %s %+8.2f%%  noise %5.2f%%  %s\n", what, name, a, b, unit, 100 * ch, 100 * noise,
            mark);
}

/* cross-rank coefficient of variation of the copy bandwidth of one memory pair */
static double bw_cv(const struct jv *R, const char *mem) {
    const struct jv *v = get(R, "transfers_by_rank");
    double s = 0, q = 0, n = 0;
    for (size_t i = 0; v && v->t == J_ARR && i < v->n; i++) {
        const struct jv *x = &v->kids[i];
        double busy = num(x, "busy_ns", 0);
        if (strcmp(str(x, "kind"), "copy") || strcmp(str(x, "memory"), mem) || busy <= 0) continue;
        double bw = num(x, "bytes", 0) / busy;
        s += bw, q += bw * bw, n += 1;
    }
    if (n < 2 || s <= 0) return 0;
    double m = s / n;
    return sqrt(fmax(0, q / n - m * m)) / m;
}

/* Kernels by name: per call, per rank (total over the rank count: runs of different sizes
 * compare), p50; kernels of one run only are listed. */
static void diff_kernels(struct cmp *c, const struct jv *A, const struct jv *B, double ra, double rb,
                         const struct agg_diff_opts *o) {
    FILE *out = c->out;
    const struct jv *ka = get(get(A, "kernels"), "rows"), *kb = get(get(B, "kernels"), "rows");
    for (size_t i = 0; ka && ka->t == J_ARR && i < ka->n; i++) {
        const struct jv *x = &ka->kids[i], *y = NULL;
        const char *name = str(x, "name");
        for (size_t j = 0; kb && kb->t == J_ARR && j < kb->n; j++)
            if (!strcmp(str(&kb->kids[j], "name"), name)) y = &kb->kids[j];
        if (!y) {
            fprintf(out, "%-12s %-44.44s only in A (%.0f calls)\n", "kernel", name, num(x, "calls", 0));
            continue;
        }
        double cva = num(get(x, "imbalance"), "cv", 0), cvb = num(get(y, "imbalance"), "cv", 0);
        double noise = fmax(AGG_SKETCH_REL_ERROR, fmax(cva, cvb));
        bool judged = num(x, "share", 0) >= o->min_share || num(y, "share", 0) >= o->min_share;
        judge(c, "per call", name, num(x, "mean_ns", 0), num(y, "mean_ns", 0), noise, true, "ns", judged);
        judge(c, "per rank", name, num(x, "total_ns", 0) / ra, num(y, "total_ns", 0) / rb, noise, true, "ns", judged);
        judge(c, "p50", name, num(x, "p50_ns", 0), num(y, "p50_ns", 0), fmax(2 * AGG_SKETCH_REL_ERROR, noise), true, "ns", judged);
    }
    for (size_t j = 0; kb && kb->t == J_ARR && j < kb->n; j++) {
        const char *name = str(&kb->kids[j], "name");
        bool found = false;
        for (size_t i = 0; ka && ka->t == J_ARR && i < ka->n; i++) found |= !strcmp(str(&ka->kids[i], "name"), name);
        if (!found) fprintf(out, "%-12s %-44.44s only in B (%.0f calls)\n", "kernel", name, num(&kb->kids[j], "calls", 0));
    }
}

/* copy bandwidth per memory pair; its noise is the spread of the bandwidths by rank */
static void diff_copies(struct cmp *c, const struct jv *A, const struct jv *B) {
    const struct jv *ta = get(get(A, "transfers"), "rows"), *tb = get(get(B, "transfers"), "rows");
    for (size_t i = 0; ta && ta->t == J_ARR && i < ta->n; i++) {
        const struct jv *x = &ta->kids[i];
        if (strcmp(str(x, "kind"), "copy")) continue;
        for (size_t j = 0; tb && tb->t == J_ARR && j < tb->n; j++) {
            const struct jv *y = &tb->kids[j];
            if (strcmp(str(y, "kind"), "copy") || strcmp(str(x, "memory"), str(y, "memory"))) continue;
            char name[64];
            snprintf(name, sizeof(name), "copy %s", str(x, "memory"));
            double noise = fmax(AGG_SKETCH_REL_ERROR, fmax(bw_cv(A, str(x, "memory")), bw_cv(B, str(x, "memory"))));
            judge(c, "bandwidth", name, num(x, "bandwidth_Bps", 0), num(y, "bandwidth_Bps", 0), noise, false, "B/s", true);
        }
    }
}

/* MPI time per rank, with its own cross-rank spread */
static void diff_mpi(struct cmp *c, const struct jv *A, const struct jv *B) {
    double s[2] = {0, 0}, q[2] = {0, 0}, n[2] = {0, 0};
    const struct jv *m[2] = {get(get(A, "mpi"), "by_rank"), get(get(B, "mpi"), "by_rank")};
    for (int k = 0; k < 2; k++)
        for (size_t i = 0; m[k] && m[k]->t == J_ARR && i < m[k]->n; i++) {
            double v = num(&m[k]->kids[i], "mpi_ns", 0);
            s[k] += v, q[k] += v * v, n[k] += 1;
        }
    if (!n[0] || !n[1]) return;
    double ma = s[0] / n[0], mb = s[1] / n[1];
    double cva = ma > 0 ? sqrt(fmax(0, q[0] / n[0] - ma * ma)) / ma : 0, cvb = mb > 0 ? sqrt(fmax(0, q[1] / n[1] - mb * mb)) / mb : 0;
    judge(c, "MPI", "time per rank", ma, mb, fmax(AGG_SKETCH_REL_ERROR, fmax(cva, cvb)), true, "ns", true);
}

/* Wait states per class (time per rank) and GPU idle, shown not judged: they depend on the
 * ranks' timing more than on the code; then both reports' findings. */
static void diff_waits(struct cmp *c, const struct jv *A, const struct jv *B, double ra, double rb) {
    const struct jv *wa = get(get(A, "wait_states"), "by_class"), *wb = get(get(B, "wait_states"), "by_class");
    for (int k = 0; k < 2; k++) {
        const struct jv *v = k ? wb : wa, *o = k ? wa : wb;
        for (size_t i = 0; v && v->t == J_ARR && i < v->n; i++) {
            const char *cls = str(&v->kids[i], "wait_state");
            const struct jv *other = NULL;
            for (size_t j = 0; o && o->t == J_ARR && j < o->n; j++)
                if (!strcmp(str(&o->kids[j], "wait_state"), cls)) other = &o->kids[j];
            if (k && other) continue; /* shown from A's side */
            double a = num(k ? other : &v->kids[i], "ns", 0) / ra, b = num(k ? &v->kids[i] : other, "ns", 0) / rb;
            judge(c, "wait state", cls, a, b, 0, true, "ns", false);
        }
    }
    const struct jv *ia = get(A, "gpu_idle"), *ib = get(B, "gpu_idle");
    if (ia || ib)
        fprintf(c->out, "%-12s %-44s %13.2f%% %13.2f%%    %+8.2f points (information)\n", "GPU idle", "share of devices' time",
                100 * num(ia, "share", 0), 100 * num(ib, "share", 0), 100 * (num(ib, "share", 0) - num(ia, "share", 0)));
    for (int k = 0; k < 2; k++) {
        const struct jv *f = get(get(k ? B : A, "findings"), "items");
        for (size_t i = 0; f && f->t == J_ARR && i < f->n; i++)
            fprintf(c->out, "%s finding %zu: %s\n", k ? "B" : "A", i + 1, str(&f->kids[i], "text"));
    }
}

int agg_diff(const char *pa, const char *pb, const struct agg_diff_opts *o, FILE *out) {
    struct jv A, B;
    if (load(pa, &A, stderr) != 0) return 2;
    if (load(pb, &B, stderr) != 0) {
        jfree(&A);
        return 2;
    }
    struct cmp c = {out, o->threshold, 0, 0};
    double ra = num(get(&A, "job"), "ranks", 1), rb = num(get(&B, "job"), "ranks", 1);
    if (ra < 1) ra = 1;
    if (rb < 1) rb = 1;
    fprintf(out, "zecoll-aggregate --diff: A = %s (%.0f ranks), B = %s (%.0f ranks)\n", pa, ra, pb, rb);
    fprintf(out, "a change is flagged beyond its noise (the larger cross-rank CV of A and B, at least the sketch error "
                 "%.2f%%); a flagged slowdown beyond %.1f%% is a regression\n\n",
            100 * AGG_SKETCH_REL_ERROR, 100 * o->threshold);
    fprintf(out, "%-12s %-44s %14s %14s %s %9s  %s\n", "metric", "name", "A", "B", "  ", "change", "noise, verdict");
    diff_kernels(&c, &A, &B, ra, rb, o);
    diff_copies(&c, &A, &B);
    diff_mpi(&c, &A, &B);
    diff_waits(&c, &A, &B, ra, rb);
    /* utilisation and wall time are shown, not judged: they move with the job's size */
    const struct jv *ua = get(get(&A, "utilisation"), "job"), *ub = get(get(&B, "utilisation"), "job");
    fprintf(out, "%-12s %-44s %13.2f%% %13.2f%%    %+8.2f points (information)\n", "utilisation", "job", 100 * num(ua, "utilisation", 0),
            100 * num(ub, "utilisation", 0), 100 * (num(ub, "utilisation", 0) - num(ua, "utilisation", 0)));
    fprintf(out, "%-12s %-44s %14.6g %14.6g ns (information)\n", "wall", "job", num(get(&A, "job"), "wall_ns", 0),
            num(get(&B, "job"), "wall_ns", 0));
    fprintf(out, "\n%d change(s) beyond noise, %d regression(s) beyond %.1f%%\n", c.flagged, c.regressions, 100 * o->threshold);
    jfree(&A);
    jfree(&B);
    return c.regressions ? 1 : 0;
}
