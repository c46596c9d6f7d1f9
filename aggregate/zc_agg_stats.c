/* SPDX-License-Identifier: MIT */
/* Exact, mergeable statistics. Every quantity is an integer (ns, bytes, counts; sums of squares
 * in 128 bits), every distribution a sketch with a fixed bucket layout, and the slowest
 * instances a top-k with a total order. Merging is addition, min, max and a sorted union, so a
 * partial result can be combined with any other in any order and the merged integers are the
 * same for any number of readers: the report, computed from them once, is byte-identical. */
#include "zc_agg.h"

#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- sketch */
uint32_t agg_sketch_index(uint64_t v) {
    if (v < (1u << AGG_SKETCH_SUB)) return (uint32_t)v;
    uint32_t e = 63u - (uint32_t)__builtin_clzll(v); /* >= SUB */
    uint32_t sub = (uint32_t)(v >> (e - AGG_SKETCH_SUB)) & ((1u << AGG_SKETCH_SUB) - 1);
    return ((e - AGG_SKETCH_SUB + 1) << AGG_SKETCH_SUB) + sub;
}

uint64_t agg_sketch_value(uint32_t idx) {
    if (idx < (1u << AGG_SKETCH_SUB)) return idx;
    uint32_t e = (idx >> AGG_SKETCH_SUB) + AGG_SKETCH_SUB - 1, sub = idx & ((1u << AGG_SKETCH_SUB) - 1);
    uint64_t lo = ((uint64_t)(1u << AGG_SKETCH_SUB) + sub) << (e - AGG_SKETCH_SUB);
    uint64_t w = (uint64_t)1 << (e - AGG_SKETCH_SUB);
    return lo + w / 2;
}

static int sketch_cover(struct agg_sketch *s, int32_t lo, int32_t hi) { /* [lo, hi] */
    if (s->n && lo >= s->lo && hi < s->lo + (int32_t)s->n) return 0;
    int32_t nlo = s->n ? (lo < s->lo ? lo : s->lo) : lo;
    int32_t nhi = s->n ? (hi > s->lo + (int32_t)s->n - 1 ? hi : s->lo + (int32_t)s->n - 1) : hi;
    /* some slack on both sides: values drift a little over a run */
    int32_t slack = (nhi - nlo) / 4 + 8;
    nlo = nlo - slack < 0 ? 0 : nlo - slack;
    nhi += slack;
    uint32_t nn = (uint32_t)(nhi - nlo + 1);
    uint64_t *c = calloc(nn, sizeof(uint64_t));
    if (!c) return -1;
    if (s->n) memcpy(c + (s->lo - nlo), s->c, s->n * sizeof(uint64_t));
    free(s->c);
    s->c = c;
    s->lo = nlo;
    s->n = nn;
    return 0;
}

int agg_sketch_add(struct agg_sketch *s, uint64_t v, uint64_t count) {
    int32_t i = (int32_t)agg_sketch_index(v);
    if (!(s->n && i >= s->lo && i < s->lo + (int32_t)s->n) && sketch_cover(s, i, i) != 0) return -1;
    s->c[i - s->lo] += count;
    return 0;
}

int agg_sketch_merge(struct agg_sketch *d, const struct agg_sketch *s) {
    if (!s->n) return 0;
    /* only the occupied range of s */
    uint32_t a = 0, b = s->n;
    while (a < b && !s->c[a]) a++;
    while (b > a && !s->c[b - 1]) b--;
    if (a == b) return 0;
    if (sketch_cover(d, s->lo + (int32_t)a, s->lo + (int32_t)b - 1) != 0) return -1;
    for (uint32_t i = a; i < b; i++) d->c[s->lo + (int32_t)i - d->lo] += s->c[i];
    return 0;
}

uint64_t agg_sketch_quantile(const struct agg_sketch *s, uint64_t total, double p) {
    if (!s || !s->n || total == 0) return 0;
    /* nearest rank: the smallest value with at least ceil(p/100 * n) values at or below it */
    unsigned __int128 num = (unsigned __int128)(uint64_t)(p * 1000.0 + 0.5) * total;
    uint64_t rank = (uint64_t)((num + 99999) / 100000);
    if (rank < 1) rank = 1;
    if (rank > total) rank = total;
    uint64_t c = 0;
    for (uint32_t i = 0; i < s->n; i++) {
        c += s->c[i];
        if (c >= rank) return agg_sketch_value((uint32_t)(s->lo + (int32_t)i));
    }
    return agg_sketch_value((uint32_t)(s->lo + (int32_t)s->n - 1));
}

void agg_sketch_free(struct agg_sketch *s) {
    if (!s) return;
    free(s->c);
    free(s);
}

/* ---------------------------------------------------------------- top-k */
static bool top_before(const struct agg_top_ent *a, const struct agg_top_ent *b) {
    if (a->dur != b->dur) return a->dur > b->dur;
    if (a->rank != b->rank) return a->rank < b->rank;
    if (a->loc != b->loc) return a->loc < b->loc;
    return a->start < b->start;
}

void agg_top_add(struct agg_top *t, uint32_t k, const struct agg_top_ent *e) {
    if (k > AGG_TOPK_MAX) k = AGG_TOPK_MAX;
    if (k == 0) return;
    if (t->n == k && !top_before(e, &t->e[k - 1])) return;
    uint32_t i = t->n < k ? t->n++ : k - 1;
    while (i > 0 && top_before(e, &t->e[i - 1])) {
        t->e[i] = t->e[i - 1];
        i--;
    }
    t->e[i] = *e;
}

/* ---------------------------------------------------------------- table */
/* The keyed table: entries in insertion order (never removed, so an index stays valid), found
 * through an open-addressing slot array. Insertion order differs with the number of readers: the
 * report sorts every table with a total order (only a kernel's slowest device, between two
 * queues of equal time, is the first in key order). */
static uint64_t key_hash(const struct agg_key *k) {
    uint64_t h = ((uint64_t)k->table << 32 | k->a) * 0x9e3779b97f4a7c15ull;
    h ^= k->b + 0x632be59bd9b4e019ull + (h << 6) + (h >> 2);
    h *= 0xff51afd7ed558ccdull;
    h ^= k->c + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    h ^= h >> 29;
    h *= 0xc4ceb9fe1a85ec53ull;
    return h ^ (h >> 32);
}

static bool key_eq(const struct agg_key *x, const struct agg_key *y) {
    return x->table == y->table && x->a == y->a && x->b == y->b && x->c == y->c;
}

int agg_stats_init(struct agg_stats *s, uint32_t nranks, uint32_t nbins, uint32_t topk) {
    memset(s, 0, sizeof(*s));
    memset(s->memo, 0xff, sizeof(s->memo));
    s->nranks = nranks;
    s->nbins = nbins;
    s->topk = topk > AGG_TOPK_MAX ? AGG_TOPK_MAX : topk;
    s->ranks = calloc(nranks + 1, sizeof(struct agg_rank));
    if (!s->ranks) return -1;
    return 0;
}

uint64_t *agg_stats_rank_bins(struct agg_stats *s, uint32_t r) {
    struct agg_rank *x = &s->ranks[r];
    if (!x->bins && s->nbins) {
        x->bins = calloc(s->nbins, sizeof(uint64_t));
        if (!x->bins) s->oom = true;
    }
    return x->bins;
}

void agg_stats_free(struct agg_stats *s) {
    for (uint32_t i = 0; i < s->n; i++) {
        agg_sketch_free(s->accs[i].sk);
        free(s->accs[i].top);
    }
    free(s->keys);
    free(s->accs);
    free(s->slot);
    for (uint32_t r = 0; s->ranks && r < s->nranks; r++) free(s->ranks[r].bins);
    free(s->ranks);
    free(s->rec);
    memset(s, 0, sizeof(*s));
}

/* The array *p resized to n elements of elem bytes; false (*p as it was) when out of memory. */
static bool resize(void **p, size_t n, size_t elem) {
    void *q = realloc(*p, n * elem);
    if (!q) return false;
    *p = q;
    return true;
}

size_t agg_rec_add(struct agg_stats *s, uint64_t t) {
    if (s->nrec == s->caprec) {
        size_t nc = s->caprec ? 2 * s->caprec : 256;
        if (!resize((void **)&s->rec, nc, AGG_REC_W * sizeof(uint64_t))) {
            s->oom = true;
            return SIZE_MAX;
        }
        s->caprec = nc;
    }
    uint64_t *w = agg_rec(s, s->nrec);
    memset(w, 0, AGG_REC_W * sizeof(uint64_t));
    w[0] = t;
    return s->nrec++;
}

static struct agg_acc *agg_stats_get_slow(struct agg_stats *s, uint32_t table, uint32_t a, uint64_t b, uint64_t c);

static bool rehash(struct agg_stats *s) {
    size_t ns = s->nslot ? 2 * s->nslot : 1024;
    uint32_t *slot = malloc(ns * sizeof(uint32_t));
    if (!slot) return false;
    memset(slot, 0xff, ns * sizeof(uint32_t));
    for (uint32_t i = 0; i < s->n; i++) {
        size_t j = key_hash(&s->keys[i]) & (ns - 1);
        while (slot[j] != AGG_NONE) j = (j + 1) & (ns - 1);
        slot[j] = i;
    }
    free(s->slot);
    s->slot = slot;
    s->nslot = ns;
    return true;
}

struct agg_acc *agg_stats_find(const struct agg_stats *s, uint32_t table, uint32_t a, uint64_t b, uint64_t c) {
    if (!s->nslot) return NULL;
    struct agg_key k = {table, a, b, c};
    for (size_t j = key_hash(&k) & (s->nslot - 1);; j = (j + 1) & (s->nslot - 1)) {
        uint32_t i = s->slot[j];
        if (i == AGG_NONE) return NULL;
        if (key_eq(&s->keys[i], &k)) return &s->accs[i];
    }
}

static inline uint32_t memo_slot(uint32_t table, uint32_t a, uint64_t b, uint64_t c) {
    return (uint32_t)((table * 0x9e3779b1u) ^ (a * 0x85ebca6bu) ^ (uint32_t)(b * 0xc2b2ae35u) ^ (uint32_t)(c * 0x27d4eb2fu) ^
                      (uint32_t)(b >> 32)) >> 22;
}

struct agg_acc *agg_stats_get(struct agg_stats *s, uint32_t table, uint32_t a, uint64_t b, uint64_t c) {
    /* the hot path: the same few keys, over and over, while one process is read */
    uint32_t ms = memo_slot(table, a, b, c), mi = s->memo[ms];
    if (mi < s->n) {
        const struct agg_key *mk = &s->keys[mi];
        if (mk->table == table && mk->a == a && mk->b == b && mk->c == c) return &s->accs[mi];
    }
    struct agg_acc *r = agg_stats_get_slow(s, table, a, b, c);
    if (r) s->memo[ms] = (uint32_t)(r - s->accs);
    return r;
}

static struct agg_acc *agg_stats_get_slow(struct agg_stats *s, uint32_t table, uint32_t a, uint64_t b, uint64_t c) {
    struct agg_key k = {table, a, b, c};
    if ((size_t)(s->n + 1) * 2 > s->nslot && !rehash(s)) goto oom;
    size_t j = key_hash(&k) & (s->nslot - 1);
    for (;; j = (j + 1) & (s->nslot - 1)) {
        uint32_t i = s->slot[j];
        if (i == AGG_NONE) break;
        if (key_eq(&s->keys[i], &k)) return &s->accs[i];
    }
    if (s->n == s->cap) {
        uint32_t ncap = s->cap ? 2 * s->cap : 256;
        if (!resize((void **)&s->keys, ncap, sizeof(*s->keys)) || !resize((void **)&s->accs, ncap, sizeof(*s->accs))) goto oom;
        s->cap = ncap;
    }
    uint32_t i = s->n++;
    s->keys[i] = k;
    memset(&s->accs[i], 0, sizeof(s->accs[i]));
    s->slot[j] = i;
    return &s->accs[i];
oom:
    s->oom = true;
    return NULL;
}

/* ---------------------------------------------------------------- pack / merge */
/* The partial statistics travel as 64-bit words: a header (magic, ranks, bins, entries), each
 * entry's key, integers and optional sketch (its occupied range) and top-k, then each rank read.
 * A write that cannot grow the buffer fails the whole pack, never sends a short one; a partial
 * that does not parse, or would read past its end, fails the merge. */
struct wb {
    uint64_t *w;
    size_t n, cap;
    bool oom;
};

static void put(struct wb *b, uint64_t v) {
    if (b->n == b->cap) {
        size_t nc = b->cap ? 2 * b->cap : 4096;
        if (b->oom || !resize((void **)&b->w, nc, sizeof(uint64_t))) {
            b->oom = true;
            return;
        }
        b->cap = nc;
    }
    b->w[b->n++] = v;
}

#define PACK_MAGIC 0x7a63616767310001ull /* "zcagg1" + version */
#define RANK_WORDS 21

uint64_t *agg_stats_pack(const struct agg_stats *s, size_t *nwords) {
    struct wb b = {0};
    put(&b, PACK_MAGIC);
    put(&b, s->nranks);
    put(&b, s->nbins);
    put(&b, s->n);
    for (uint32_t i = 0; i < s->n; i++) {
        const struct agg_key *k = &s->keys[i];
        const struct agg_acc *a = &s->accs[i];
        put(&b, (uint64_t)k->table << 32 | k->a);
        put(&b, k->b);
        put(&b, k->c);
        put(&b, a->n);
        put(&b, a->sum);
        put(&b, a->min);
        put(&b, a->max);
        put(&b, (uint64_t)a->sq);
        put(&b, (uint64_t)(a->sq >> 64));
        put(&b, a->bytes);
        for (int x = 0; x < 4; x++) put(&b, a->x[x]);
        /* sketch: occupied range only */
        uint32_t lo = 0, hi = 0;
        if (a->sk && a->sk->n) {
            lo = 0;
            hi = a->sk->n;
            while (lo < hi && !a->sk->c[lo]) lo++;
            while (hi > lo && !a->sk->c[hi - 1]) hi--;
        }
        put(&b, (uint64_t)(a->sk ? 1 : 0) << 63 | (hi - lo));
        if (a->sk) {
            put(&b, (uint64_t)(uint32_t)(a->sk->lo + (int32_t)lo));
            for (uint32_t x = lo; x < hi; x++) put(&b, a->sk->c[x]);
        }
        put(&b, a->top ? (uint64_t)1 << 63 | a->top->n : 0);
        if (a->top)
            for (uint32_t x = 0; x < a->top->n; x++) {
                put(&b, a->top->e[x].dur);
                put(&b, a->top->e[x].rank);
                put(&b, a->top->e[x].loc);
                put(&b, a->top->e[x].start);
            }
    }
    uint64_t present = 0;
    for (uint32_t r = 0; r < s->nranks; r++) present += s->ranks[r].present != 0;
    put(&b, present);
    for (uint32_t r = 0; r < s->nranks; r++) {
        const struct agg_rank *x = &s->ranks[r];
        if (!x->present) continue;
        put(&b, r);
        const uint64_t f[RANK_WORDS] = {x->present, x->first, x->last, x->ndev, x->mpi_ns, x->kernel_ns, x->events,
                                        x->cs_host_only, x->cs_dev_only, x->cs_repeat, x->lat_negative,
                                        x->lat_negative_max, x->off_count, x->off_ns, x->noffsets, x->off_t0,
                                        x->off_t1, (uint64_t)x->off_v0, (uint64_t)x->off_v1, x->off_sd0,
                                        x->host_off_ns};
        for (int i = 0; i < RANK_WORDS; i++) put(&b, f[i]);
        put(&b, x->off_sd1);
        for (uint32_t i = 0; i < s->nbins; i++) put(&b, x->bins ? x->bins[i] : 0);
    }
    put(&b, s->nrec);
    for (size_t i = 0; i < s->nrec * AGG_REC_W; i++) put(&b, s->rec[i]);
    if (b.oom) {
        free(b.w);
        return NULL;
    }
    *nwords = b.n;
    return b.w;
}

struct rb {
    const uint64_t *w;
    size_t n, i;
    bool bad;
};

static uint64_t get(struct rb *r) {
    if (r->i >= r->n) {
        r->bad = true;
        return 0;
    }
    return r->w[r->i++];
}

static void acc_merge(struct agg_acc *d, const struct agg_acc *s) {
    if (s->n) {
        if (d->n == 0 || s->min < d->min) d->min = s->min;
        if (s->max > d->max) d->max = s->max;
    }
    d->n += s->n;
    d->sum += s->sum;
    d->sq += s->sq;
    d->bytes += s->bytes;
    for (int x = 0; x < 4; x++) d->x[x] += s->x[x];
}

int agg_stats_merge_packed(struct agg_stats *s, const uint64_t *w, size_t nwords) {
    struct rb r = {w, nwords, 0, false};
    if (get(&r) != PACK_MAGIC) return -1;
    if (get(&r) != s->nranks || get(&r) != s->nbins) return -1;
    uint64_t n = get(&r);
    for (uint64_t e = 0; e < n && !r.bad; e++) {
        uint64_t ka = get(&r), kb = get(&r), kc = get(&r);
        struct agg_acc a;
        memset(&a, 0, sizeof(a));
        a.n = get(&r);
        a.sum = get(&r);
        a.min = get(&r);
        a.max = get(&r);
        uint64_t lo = get(&r), hi = get(&r);
        a.sq = (unsigned __int128)hi << 64 | lo;
        a.bytes = get(&r);
        for (int x = 0; x < 4; x++) a.x[x] = get(&r);
        if (r.bad) return -1;
        struct agg_acc *d = agg_stats_get(s, (uint32_t)(ka >> 32), (uint32_t)ka, kb, kc);
        if (!d) return -1;
        acc_merge(d, &a);
        uint64_t skw = get(&r);
        if (skw >> 63) {
            uint64_t cnt = skw & 0xffffffffu, first = get(&r);
            if (cnt > r.n - r.i) return -1;
            if (!d->sk && !(d->sk = calloc(1, sizeof(*d->sk)))) return -1;
            struct agg_sketch tmp = {(int32_t)(uint32_t)first, (uint32_t)cnt, (uint64_t *)(r.w + r.i)};
            if (tmp.lo < 0 || agg_sketch_merge(d->sk, &tmp) != 0) return -1;
            r.i += cnt;
        }
        uint64_t tw = get(&r);
        if (tw >> 63) {
            uint64_t cnt = tw & 0xffffffffu;
            if (cnt > AGG_TOPK_MAX || cnt * 4 > r.n - r.i) return -1;
            if (!d->top && !(d->top = calloc(1, sizeof(*d->top)))) return -1;
            for (uint64_t x = 0; x < cnt; x++) {
                struct agg_top_ent t = {r.w[r.i], r.w[r.i + 1], r.w[r.i + 2], r.w[r.i + 3]};
                r.i += 4;
                agg_top_add(d->top, s->topk, &t);
            }
        }
    }
    uint64_t present = get(&r);
    for (uint64_t p = 0; p < present && !r.bad; p++) {
        uint64_t rk = get(&r);
        if (rk >= s->nranks) return -1;
        struct agg_rank *x = &s->ranks[rk];
        uint64_t f[RANK_WORDS + 1];
        for (int i = 0; i < RANK_WORDS + 1; i++) f[i] = get(&r);
        if (r.bad) return -1;
        if (x->present) return -1; /* a rank is read by exactly one reader */
        x->present = f[0];
        x->first = f[1];
        x->last = f[2];
        x->ndev = f[3];
        x->mpi_ns = f[4];
        x->kernel_ns = f[5];
        x->events = f[6];
        x->cs_host_only = f[7];
        x->cs_dev_only = f[8];
        x->cs_repeat = f[9];
        x->lat_negative = f[10];
        x->lat_negative_max = f[11];
        x->off_count = f[12];
        x->off_ns = f[13];
        x->noffsets = f[14];
        x->off_t0 = f[15];
        x->off_t1 = f[16];
        x->off_v0 = (int64_t)f[17];
        x->off_v1 = (int64_t)f[18];
        x->off_sd0 = f[19];
        x->host_off_ns = f[20];
        x->off_sd1 = f[21];
        uint64_t *bins = agg_stats_rank_bins(s, (uint32_t)rk);
        if (s->nbins && !bins) return -1;
        for (uint32_t i = 0; i < s->nbins; i++) bins[i] += get(&r);
    }
    uint64_t nrec = get(&r);
    if (r.bad || nrec > (r.n - r.i) / AGG_REC_W) return -1;
    for (uint64_t i = 0; i < nrec; i++) {
        size_t k = agg_rec_add(s, 0);
        if (k == SIZE_MAX) return -1;
        memcpy(agg_rec(s, k), r.w + r.i, AGG_REC_W * sizeof(uint64_t));
        r.i += AGG_REC_W;
    }
    return r.bad || s->oom ? -1 : 0;
}

uint32_t agg_size_class(uint64_t bytes) { return bytes ? 64u - (uint32_t)__builtin_clzll(bytes) : 0; }
