/* SPDX-License-Identifier: MIT */
/* One process at a time: its thread and stream locations are read with OTF2's global event
 * reader (time-merged, clock offsets and mapping tables applied, docs/archive.md A4), which is
 * what the union of busy intervals, copy/compute overlap, idle gaps and the host-to-device
 * callsite links need. Memory is the process's open regions, its operations in flight (Appends
 * not yet seen on the device) and the statistics' keys, never its events. A corrupt event file
 * stops the process's reading with an error naming the file (found by re-reading each location
 * alone). */
#include "zc_agg.h"

#include <otf2/otf2.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define BATCH 65536

/* ---------------------------------------------------------------- u64 map with deletion */
struct u64map {
    uint64_t *k, *v0, *v1;
    uint8_t *used;
    size_t cap, n;
    bool oom;
};

static uint64_t hmix(uint64_t x) {
    x ^= x >> 31;
    x *= 0x7fb5d329728ea185ull;
    x ^= x >> 27;
    x *= 0x81dadef4bc2dd44dull;
    return x ^ (x >> 33);
}

static bool map_grow(struct u64map *m) {
    if ((m->n + 1) * 2 <= m->cap) return true;
    size_t nc = m->cap ? 2 * m->cap : 64;
    struct u64map x = {calloc(nc, 8), calloc(nc, 8), calloc(nc, 8), calloc(nc, 1), nc, 0, false};
    if (!x.k || !x.v0 || !x.v1 || !x.used) {
        free(x.k), free(x.v0), free(x.v1), free(x.used);
        m->oom = true;
        return false;
    }
    for (size_t i = 0; i < m->cap; i++) {
        if (!m->used[i]) continue;
        size_t j = hmix(m->k[i]) & (nc - 1);
        while (x.used[j]) j = (j + 1) & (nc - 1);
        x.used[j] = 1;
        x.k[j] = m->k[i];
        x.v0[j] = m->v0[i];
        x.v1[j] = m->v1[i];
        x.n++;
    }
    free(m->k), free(m->v0), free(m->v1), free(m->used);
    *m = x;
    return true;
}

static size_t map_find(const struct u64map *m, uint64_t k) {
    if (!m->cap) return SIZE_MAX;
    for (size_t j = hmix(k) & (m->cap - 1);; j = (j + 1) & (m->cap - 1)) {
        if (!m->used[j]) return SIZE_MAX;
        if (m->k[j] == k) return j;
    }
}

static void map_put(struct u64map *m, uint64_t k, uint64_t v0, uint64_t v1) {
    size_t j = map_find(m, k);
    if (j == SIZE_MAX) {
        if (!map_grow(m)) return;
        j = hmix(k) & (m->cap - 1);
        while (m->used[j]) j = (j + 1) & (m->cap - 1);
        m->used[j] = 1;
        m->k[j] = k;
        m->n++;
    }
    m->v0[j] = v0;
    m->v1[j] = v1;
}

/* linear probing: backward-shift deletion keeps every chain intact */
static void map_del(struct u64map *m, size_t j) {
    size_t mask = m->cap - 1;
    m->used[j] = 0;
    m->n--;
    for (size_t i = (j + 1) & mask; m->used[i]; i = (i + 1) & mask) {
        size_t home = hmix(m->k[i]) & mask;
        /* move i into the hole j if its home is not in (j, i] */
        bool between = j <= i ? (home > j && home <= i) : (home > j || home <= i);
        if (between) continue;
        m->used[j] = 1;
        m->k[j] = m->k[i];
        m->v0[j] = m->v0[i];
        m->v1[j] = m->v1[i];
        m->used[i] = 0;
        j = i;
    }
}

static void map_free(struct u64map *m) {
    free(m->k), free(m->v0), free(m->v1), free(m->used);
    memset(m, 0, sizeof(*m));
}

/* ---------------------------------------------------------------- state */
struct frame {
    uint32_t region, comm;
    uint64_t t, cs, bytes;
    uint32_t mclass; /* the metric class of the Metric right before its Enter (A19), AGG_NONE: none */
};

/* A19 on one location: the Metric waiting for its Enter/Leave, the Enter values of the open
 * regions (stride: the largest class), each counter's first and last value (monotonic check and
 * the counted span), and the quality counts. Allocated with the location's first Metric. */
struct lmet {
    bool pending;
    uint32_t pclass;
    uint64_t pt;
    uint64_t *pv;                   /* pending values (mclass_max) */
    uint64_t *stack;                /* Enter values, frame k at k * mclass_max */
    uint32_t stack_cap;             /* frames */
    uint64_t *first, *last;         /* per member */
    uint8_t *seen;
    uint64_t unpaired, decreasing, one_sided;
};

struct lst {
    uint32_t li;       /* location index */
    uint8_t stream;
    uint32_t dev;      /* index into devs */
    struct frame *fr;
    uint32_t depth, cap;
    uint64_t nev, limit, nmetric, badleave, offcount, offns, first, last, off_start;
    uint64_t noffsets; /* clock offsets in its local definitions */
    bool off;
    bool in_mpi;       /* threads: inside an MPI call (an MPI region on its stack) */
    struct lmet *met;  /* NULL until its first Metric */
};

struct dst {
    uint32_t node;
    int32_t act_c, act_x, off;
    uint64_t last_t, busy, busy_c, busy_x, overlap, offns, first, last, idle_start;
    bool any, idle, gap_off;
};

struct pctx {
    const struct agg_defs *d;
    struct agg_stats *s;
    const struct agg_proc *p;
    uint32_t rank;
    struct lst *ls;
    uint32_t nls;
    uint64_t *lkey;  /* location id -> ls index (small open table) */
    uint32_t *lval;
    size_t lcap;
    uint32_t last_hit;
    struct dst *devs;
    uint32_t ndevs;
    struct u64map pend;   /* host callsite -> (Append time, -) */
    struct u64map early;  /* device callsite seen before its Append -> (start, region << 32 | location) */
    struct u64map wmark;  /* thread index -> highest callsite counter seen on the host */
    uint64_t first, last, kernel_ns, mpi_ns, events;
    /* the rank's host measurement-off time: a thread location off while no thread is inside an
     * MPI call (what the MPI share's denominator leaves out; calls recorded while off, A18,
     * stay in it) */
    int32_t h_off, h_mpi;
    uint64_t h_last, host_offns;
    uint64_t cs_repeat, lat_neg, lat_neg_max;
    uint64_t bin_lo, bin_span;
    uint64_t *bins;
    struct agg_timeline *tl;
    bool corrupt;
    uint32_t corrupt_li;
    char why[160];
};

static struct lst *loc_of(struct pctx *c, uint64_t id) {
    if (c->last_hit < c->nls && c->d->locs[c->ls[c->last_hit].li].id == id) return &c->ls[c->last_hit];
    size_t m = c->lcap - 1;
    for (size_t j = hmix(id) & m;; j = (j + 1) & m) {
        if (c->lval[j] == AGG_NONE) return NULL;
        if (c->lkey[j] == id) {
            c->last_hit = c->lval[j];
            return &c->ls[c->lval[j]];
        }
    }
}

static OTF2_CallbackCode stop(struct pctx *c, struct lst *l, const char *why) {
    if (!c->corrupt) {
        c->corrupt = true;
        c->corrupt_li = l ? l->li : AGG_NONE;
        snprintf(c->why, sizeof(c->why), "%s", why);
    }
    return OTF2_CALLBACK_INTERRUPT;
}

/* Every event: the location, its counters, the corruption guard. NULL = stop reading. */
static struct lst *ev(struct pctx *c, OTF2_LocationRef loc, uint64_t t) {
    struct lst *l = loc_of(c, loc);
    if (!l) {
        stop(c, NULL, "event of a location that was not selected");
        return NULL;
    }
    /* a record takes at least two bytes: more records than that is a decoder running wild on
     * a corrupt file, which must end */
    if (++l->nev > l->limit) {
        stop(c, l, "more records than the file can hold");
        return NULL;
    }
    if (l->nev == 1) l->first = t;
    l->last = t;
    c->events++;
    if (t < c->first) c->first = t;
    if (t > c->last) c->last = t;
    return l;
}

static uint64_t bin_of(const struct pctx *c, uint64_t t) {
    if (t <= c->bin_lo) return 0;
    unsigned __int128 x = (unsigned __int128)(t - c->bin_lo) * c->s->nbins / c->bin_span;
    return x >= c->s->nbins ? c->s->nbins - 1 : (uint64_t)x;
}

static uint64_t bin_start(const struct pctx *c, uint64_t b) {
    return c->bin_lo + (uint64_t)((unsigned __int128)c->bin_span * b / c->s->nbins);
}

/* busy time [a, b) into the rank's time bins */
static void add_bins(struct pctx *c, uint64_t a, uint64_t b) {
    if (!c->bins || b <= a) return;
    uint64_t i = bin_of(c, a), j = bin_of(c, b - 1);
    if (i == j) {
        c->bins[i] += b - a;
        return;
    }
    for (uint64_t k = i; k <= j; k++) {
        uint64_t lo = k == i ? a : bin_start(c, k), hi = k == j ? b : bin_start(c, k + 1);
        if (hi > lo) c->bins[k] += hi - lo;
    }
}

static void dev_advance(struct pctx *c, struct dst *v, uint64_t t) {
    if (v->any && t > v->last_t) {
        uint64_t dt = t - v->last_t;
        bool c_on = v->act_c > 0, x_on = v->act_x > 0;
        if (c_on || x_on) {
            v->busy += dt;
            add_bins(c, v->last_t, t);
        }
        if (c_on) v->busy_c += dt;
        if (x_on) v->busy_x += dt;
        if (c_on && x_on) v->overlap += dt;
        /* off: measurement off on one of its streams and nothing recorded running; operations
         * in flight when recording stopped are recorded (A18), that time is busy, not off */
        if (v->off > 0 && !c_on && !x_on) v->offns += dt;
    }
    if (!v->any || t > v->last_t) v->last_t = t;
    v->any = true;
}

static void host_advance(struct pctx *c, uint64_t t) {
    if (t > c->h_last) {
        if (c->h_off > 0 && c->h_mpi == 0) c->host_offns += t - c->h_last;
        c->h_last = t;
    }
}

/* A thread's MPI state after its stack changed (one MPI region anywhere on it: in MPI). */
static void host_mpi_update(struct pctx *c, struct lst *l, uint64_t t) {
    bool in = false;
    for (uint32_t k = 0; k < l->depth && !in; k++) in = c->d->regions[l->fr[k].region].host_class == AGG_H_MPI;
    if (in == l->in_mpi) return;
    host_advance(c, t);
    l->in_mpi = in;
    c->h_mpi += in ? 1 : -1;
}

static void dev_change(struct pctx *c, struct dst *v, uint64_t t, bool copy, int delta) {
    dev_advance(c, v, t);
    bool was = v->act_c > 0 || v->act_x > 0;
    if (copy) v->act_x += delta;
    else v->act_c += delta;
    if (v->act_c < 0) v->act_c = 0;
    if (v->act_x < 0) v->act_x = 0;
    bool now = v->act_c > 0 || v->act_x > 0;
    if (!was && now) {
        if (v->first == 0 || t < v->first) v->first = t;
        if (v->idle && t > v->idle_start && !v->gap_off) {
            struct agg_acc *g = agg_stats_get(c->s, T_GAP, agg_size_class(t - v->idle_start), 0, 0);
            if (g) agg_acc_add(g, t - v->idle_start);
        }
        v->idle = false;
    } else if (was && !now) {
        v->idle = true;
        v->idle_start = t;
        v->gap_off = false;
        if (t > v->last) v->last = t;
    }
}

/* ---------------------------------------------------------------- callbacks */
/* Enter, Leave and Metric: the Metric right before an Enter or Leave at its time belongs to it */
#define CB_HEAD_METRIC                                                                                                 \
    struct pctx *c = ud;                                                                                               \
    (void)al;                                                                                                          \
    struct lst *l = ev(c, loc, t);                                                                                     \
    if (!l) return OTF2_CALLBACK_INTERRUPT;
/* every other record: a Metric waiting before it had no Enter/Leave (A19 broken) */
#define CB_HEAD                                                                                                        \
    CB_HEAD_METRIC                                                                                                     \
    if (__builtin_expect(l->met && l->met->pending, 0)) metric_orphan(l);

static void metric_orphan(struct lst *l) {
    l->met->pending = false;
    l->met->unpaired++;
}

/* The pending Metric, if it is the one of this Enter/Leave at t: its class (values in met->pv). */
static uint32_t metric_take(struct lst *l, uint64_t t) {
    struct lmet *m = l->met;
    if (!m || !m->pending) return AGG_NONE;
    m->pending = false;
    if (m->pt != t) {
        m->unpaired++;
        return AGG_NONE;
    }
    return m->pclass;
}

static OTF2_CallbackCode cb_enter(OTF2_LocationRef loc, OTF2_TimeStamp t, void *ud, OTF2_AttributeList *al,
                                  OTF2_RegionRef region) {
    CB_HEAD_METRIC
    uint32_t mclass = metric_take(l, t);
    if (region >= c->d->nregions) return stop(c, l, "Enter of an undefined region");
    if (l->depth == l->cap) {
        uint32_t nc = l->cap ? 2 * l->cap : 8;
        if (nc > (1u << 20)) return stop(c, l, "regions nested more than a million deep");
        struct frame *f = realloc(l->fr, nc * sizeof(*f));
        if (!f) return stop(c, l, "out of memory");
        l->fr = f;
        l->cap = nc;
    }
    if (mclass != AGG_NONE) {
        struct lmet *m = l->met;
        size_t stride = c->d->mclass_max;
        if (m->stack_cap <= l->depth) {
            uint32_t nc = l->cap; /* as many as frames */
            uint64_t *p = realloc(m->stack, (size_t)nc * stride * sizeof(uint64_t));
            if (!p) return stop(c, l, "out of memory");
            m->stack = p;
            m->stack_cap = nc;
        }
        memcpy(m->stack + (size_t)l->depth * stride, m->pv, c->d->mclasses[mclass].n * sizeof(uint64_t));
    }
    l->fr[l->depth++] = (struct frame){(uint32_t)region, AGG_NONE, t, 0, 0, mclass};
    if (!l->stream && !l->in_mpi && c->d->regions[region].host_class == AGG_H_MPI) {
        host_advance(c, t);
        l->in_mpi = true;
        c->h_mpi++;
    }
    if (l->stream && l->dev != AGG_NONE) {
        uint8_t k = c->d->regions[region].dev_class;
        if (k != AGG_D_BARRIER) dev_change(c, &c->devs[l->dev], t, k != AGG_D_KERNEL, +1);
    }
    return OTF2_CALLBACK_SUCCESS;
}

static void latency(struct pctx *c, uint32_t queue, uint32_t region, uint64_t start, uint64_t t_append) {
    uint64_t lat = 0;
    if (start >= t_append) lat = start - t_append;
    else {
        c->lat_neg++;
        if (t_append - start > c->lat_neg_max) c->lat_neg_max = t_append - start;
    }
    struct agg_acc *a = agg_stats_get(c->s, T_LAT_ALL, 0, 0, 0);
    if (a) {
        agg_acc_add(a, lat);
        if (!a->sk) a->sk = calloc(1, sizeof(*a->sk));
        if (a->sk) agg_sketch_add(a->sk, lat, 1);
    }
    a = agg_stats_get(c->s, T_LAT_QUEUE, 0, queue, 0);
    if (a) agg_acc_add(a, lat);
    a = agg_stats_get(c->s, T_LAT_REGION, region, 0, 0);
    if (a) {
        agg_acc_add(a, lat);
        if (!a->sk) a->sk = calloc(1, sizeof(*a->sk));
        if (a->sk) agg_sketch_add(a->sk, lat, 1);
    }
}

#define CS_COUNTER(cs) ((cs) & ((UINT64_C(1) << 40) - 1))

/* A16: the host Append's callsite id inside its region, a device record's right after its Enter */
static OTF2_CallbackCode cb_param(OTF2_LocationRef loc, OTF2_TimeStamp t, void *ud, OTF2_AttributeList *al,
                                  OTF2_ParameterRef p, uint64_t v) {
    CB_HEAD
    if (p != c->d->callsite_param || l->depth == 0) return OTF2_CALLBACK_SUCCESS;
    struct frame *f = &l->fr[l->depth - 1];
    f->cs = v;
    if (!l->stream) {
        size_t j = map_find(&c->early, v);
        if (j != SIZE_MAX) { /* the device record came first (clock conversion error) */
            uint32_t q = (uint32_t)(c->early.v1[j] & 0xffffffffu), r = (uint32_t)(c->early.v1[j] >> 32);
            latency(c, q, r, c->early.v0[j], f->t);
            map_del(&c->early, j);
        } else {
            map_put(&c->pend, v, f->t, 0);
        }
        size_t w = map_find(&c->wmark, v >> 40);
        if (w == SIZE_MAX) map_put(&c->wmark, v >> 40, CS_COUNTER(v), 0);
        else if (CS_COUNTER(v) > c->wmark.v0[w]) c->wmark.v0[w] = CS_COUNTER(v);
        return OTF2_CALLBACK_SUCCESS;
    }
    size_t j = map_find(&c->pend, v);
    uint32_t queue = c->d->locs[l->li].queue;
    if (j != SIZE_MAX) {
        latency(c, queue, f->region, f->t, c->pend.v0[j]);
        map_del(&c->pend, j);
        return OTF2_CALLBACK_SUCCESS;
    }
    size_t w = map_find(&c->wmark, v >> 40);
    if (w != SIZE_MAX && CS_COUNTER(v) <= c->wmark.v0[w]) c->cs_repeat++; /* a regular list executed again */
    else map_put(&c->early, v, f->t, (uint64_t)f->region << 32 | queue);
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode cb_rma(OTF2_LocationRef loc, OTF2_TimeStamp t, void *ud, OTF2_AttributeList *al,
                                OTF2_RmaWinRef win, uint32_t remote, uint64_t bytes, uint64_t match) {
    CB_HEAD
    if (l->depth) l->fr[l->depth - 1].bytes += bytes;
    return OTF2_CALLBACK_SUCCESS;
}

static void mpi_bytes(struct lst *l, uint64_t b) {
    if (l->depth) l->fr[l->depth - 1].bytes += b;
}

static OTF2_CallbackCode cb_send(OTF2_LocationRef loc, OTF2_TimeStamp t, void *ud, OTF2_AttributeList *al, uint32_t peer,
                                 OTF2_CommRef comm, uint32_t tag, uint64_t len) {
    CB_HEAD
    mpi_bytes(l, len);
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode cb_isend(OTF2_LocationRef loc, OTF2_TimeStamp t, void *ud, OTF2_AttributeList *al, uint32_t peer,
                                  OTF2_CommRef comm, uint32_t tag, uint64_t len, uint64_t req) {
    CB_HEAD
    mpi_bytes(l, len);
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode cb_coll_end(OTF2_LocationRef loc, OTF2_TimeStamp t, void *ud, OTF2_AttributeList *al,
                                     OTF2_CollectiveOp op, OTF2_CommRef comm, uint32_t root, uint64_t sent, uint64_t recvd) {
    CB_HEAD
    mpi_bytes(l, sent + recvd);
    if (l->depth) l->fr[l->depth - 1].comm = comm;
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode cb_nbc_end(OTF2_LocationRef loc, OTF2_TimeStamp t, void *ud, OTF2_AttributeList *al,
                                    OTF2_CollectiveOp op, OTF2_CommRef comm, uint32_t root, uint64_t sent, uint64_t recvd,
                                    uint64_t req) {
    return cb_coll_end(loc, t, ud, al, op, comm, root, sent, recvd);
}

static OTF2_CallbackCode cb_req(OTF2_LocationRef loc, OTF2_TimeStamp t, void *ud, OTF2_AttributeList *al, uint64_t r) {
    CB_HEAD
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode cb_plain(OTF2_LocationRef loc, OTF2_TimeStamp t, void *ud, OTF2_AttributeList *al) {
    CB_HEAD
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode cb_rma_done(OTF2_LocationRef loc, OTF2_TimeStamp t, void *ud, OTF2_AttributeList *al,
                                     OTF2_RmaWinRef win, uint64_t match) {
    CB_HEAD
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode cb_flush(OTF2_LocationRef loc, OTF2_TimeStamp t, void *ud, OTF2_AttributeList *al,
                                  OTF2_TimeStamp stop_t) {
    CB_HEAD
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode cb_pint(OTF2_LocationRef loc, OTF2_TimeStamp t, void *ud, OTF2_AttributeList *al,
                                 OTF2_ParameterRef p, int64_t v) {
    CB_HEAD
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode cb_pstr(OTF2_LocationRef loc, OTF2_TimeStamp t, void *ud, OTF2_AttributeList *al,
                                 OTF2_ParameterRef p, OTF2_StringRef v) {
    CB_HEAD
    return OTF2_CALLBACK_SUCCESS;
}

static struct lmet *metric_state(const struct agg_defs *d, struct lst *l) {
    if (l->met) return l->met;
    struct lmet *m = calloc(1, sizeof(*m));
    if (!m) return NULL;
    m->pv = calloc(d->mclass_max + 1, sizeof(uint64_t));
    m->first = calloc(d->nmmembers + 1, sizeof(uint64_t));
    m->last = calloc(d->nmmembers + 1, sizeof(uint64_t));
    m->seen = calloc(d->nmmembers + 1, 1);
    if (!m->pv || !m->first || !m->last || !m->seen) {
        free(m->pv), free(m->first), free(m->last), free(m->seen), free(m);
        return NULL;
    }
    l->met = m;
    return m;
}

static void metric_free(struct lst *l) {
    struct lmet *m = l->met;
    if (!m) return;
    free(m->pv), free(m->stack), free(m->first), free(m->last), free(m->seen), free(m);
    l->met = NULL;
}

/* whether b is below a, for a value of this type */
static bool decreases(uint8_t type, uint64_t a, uint64_t b) {
    return type == OTF2_TYPE_INT64 ? (int64_t)b < (int64_t)a : b < a;
}

/* A19: counters, kept until the Enter or Leave they belong to */
static OTF2_CallbackCode cb_metric(OTF2_LocationRef loc, OTF2_TimeStamp t, void *ud, OTF2_AttributeList *al,
                                   OTF2_MetricRef mref, uint8_t n, const OTF2_Type *types, const OTF2_MetricValue *vals) {
    CB_HEAD_METRIC
    l->nmetric++;
    const struct agg_defs *d = c->d;
    struct lmet *m = metric_state(d, l);
    if (!m) return stop(c, l, "out of memory");
    if (m->pending) metric_orphan(l);
    const struct agg_mclass *k = mref < d->nmclasses ? &d->mclasses[mref] : NULL;
    bool ok = k && k->defined && k->n == n;
    for (uint32_t j = 0; ok && j < n; j++)
        ok = k->m[j] < d->nmmembers && d->mmembers[k->m[j]].defined && types[j] == d->mmembers[k->m[j]].type;
    if (!ok) { /* a class we do not know, or values that do not match it: not interpreted */
        m->unpaired++;
        return OTF2_CALLBACK_SUCCESS;
    }
    for (uint32_t j = 0; j < n; j++) {
        uint32_t gm = k->m[j];
        uint64_t v = vals[j].unsigned_int; /* the bits; the member's type says how to read them */
        if (agg_member_summed(&d->mmembers[gm])) {
            if (!m->seen[gm]) {
                m->seen[gm] = 1;
                m->first[gm] = v;
            } else if (decreases(types[j], m->last[gm], v)) {
                m->decreasing++;
            }
            m->last[gm] = v;
        }
        m->pv[j] = v;
    }
    m->pending = true;
    m->pt = t;
    m->pclass = (uint32_t)mref;
    return OTF2_CALLBACK_SUCCESS;
}

/* A region with its counters at both ends: Leave - Enter per summed counter. */
static void metric_region(struct pctx *c, struct lst *l, const struct frame *f, uint32_t mclass, uint64_t dur) {
    struct lmet *m = l->met;
    const struct agg_defs *d = c->d;
    if (f->mclass == AGG_NONE && mclass == AGG_NONE) return;
    if (f->mclass != mclass) { /* at one end only (PAPI stopped in between), or two different classes */
        m->one_sided++;
        return;
    }
    const struct agg_mclass *k = &d->mclasses[mclass];
    const uint64_t *v0 = m->stack + (size_t)l->depth * d->mclass_max; /* the frame just popped */
    uint8_t hc = d->regions[f->region].host_class;
    uint32_t kind = hc == AGG_H_MPI ? AGG_MK_MPI : hc == AGG_H_L0 ? AGG_MK_L0 : AGG_MK_OTHER;
    for (uint32_t j = 0; j < k->n; j++) {
        const struct agg_mmember *mm = &d->mmembers[k->m[j]];
        if (!agg_member_summed(mm) || decreases(mm->type, v0[j], m->pv[j])) continue; /* counted as decreasing */
        uint64_t delta = m->pv[j] - v0[j];
        struct agg_acc *a = agg_stats_get(c->s, T_METRIC, f->region, k->m[j], 0);
        if (a) {
            agg_acc_add(a, delta);
            a->x[0] += dur;
        }
        if ((a = agg_stats_get(c->s, T_METRIC_RANK, k->m[j], c->rank, kind))) {
            a->n++;
            a->sum += delta;
        }
    }
}

static void end_off(struct pctx *c, struct lst *l, uint64_t t) {
    uint64_t dur = t > l->off_start ? t - l->off_start : 0;
    l->off = false;
    l->offns += dur;
    if (c->tl) agg_timeline_region(c->tl, l->li, AGG_NONE, l->off_start, t, 0, 0, "measurement off");
    if (l->stream && l->dev != AGG_NONE) {
        struct dst *v = &c->devs[l->dev];
        dev_advance(c, v, t);
        if (v->off > 0) v->off--;
    }
    if (!l->stream) {
        host_advance(c, t);
        if (c->h_off > 0) c->h_off--;
    }
}

/* A18: OFF..ON spans */
static OTF2_CallbackCode cb_onoff(OTF2_LocationRef loc, OTF2_TimeStamp t, void *ud, OTF2_AttributeList *al,
                                  OTF2_MeasurementMode mode) {
    CB_HEAD
    if (mode == OTF2_MEASUREMENT_OFF && !l->off) {
        l->off = true;
        l->off_start = t;
        l->offcount++;
        if (l->stream && l->dev != AGG_NONE) {
            struct dst *v = &c->devs[l->dev];
            dev_advance(c, v, t);
            v->off++;
            v->gap_off = true;
        }
        if (!l->stream) {
            host_advance(c, t);
            c->h_off++;
        }
    } else if (mode == OTF2_MEASUREMENT_ON && l->off) {
        end_off(c, l, t);
    }
    return OTF2_CALLBACK_SUCCESS;
}

static void kernel_done(struct pctx *c, struct lst *l, const struct frame *f, uint64_t t, uint64_t dur) {
    const struct agg_loc *L = &c->d->locs[l->li];
    struct agg_acc *a = agg_stats_get(c->s, T_KERNEL, f->region, 0, 0);
    if (a) {
        agg_acc_add(a, dur);
        if (!a->sk) a->sk = calloc(1, sizeof(*a->sk));
        if (a->sk) agg_sketch_add(a->sk, dur, 1);
        if (!a->top) a->top = calloc(1, sizeof(*a->top));
        if (a->top) {
            struct agg_top_ent e = {dur, c->rank, L->id, f->t};
            agg_top_add(a->top, c->s->topk, &e);
        }
    }
    if ((a = agg_stats_get(c->s, T_KERNEL_RANK, f->region, c->rank, 0))) agg_acc_add(a, dur);
    if ((a = agg_stats_get(c->s, T_KERNEL_DEV, f->region, L->device, 0))) agg_acc_add(a, dur);
    if ((a = agg_stats_get(c->s, T_KERNEL_QUEUE, f->region, L->queue, 0))) agg_acc_add(a, dur);
    c->kernel_ns += dur;
}

static void xfer_done(struct pctx *c, const struct frame *f, uint64_t dur) {
    uint32_t x = c->d->regions[f->region].xfer;
    uint64_t bw = dur ? (uint64_t)((unsigned __int128)f->bytes * 1000000000u / dur) : 0;
    struct agg_acc *a = agg_stats_get(c->s, T_XFER, x, 0, 0);
    if (a) {
        agg_acc_add(a, dur);
        a->bytes += f->bytes;
        if (dur && f->bytes) {
            if (!a->sk) a->sk = calloc(1, sizeof(*a->sk));
            if (a->sk) agg_sketch_add(a->sk, bw, 1);
        }
    }
    if ((a = agg_stats_get(c->s, T_XFER_SIZE, x, agg_size_class(f->bytes), 0))) {
        agg_acc_add(a, dur);
        a->bytes += f->bytes;
        if (dur && f->bytes) {
            if (!a->sk) a->sk = calloc(1, sizeof(*a->sk));
            if (a->sk) agg_sketch_add(a->sk, bw, 1);
        }
    }
    if ((a = agg_stats_get(c->s, T_XFER_RANK, x, c->rank, 0))) {
        agg_acc_add(a, dur);
        a->bytes += f->bytes;
    }
}

static OTF2_CallbackCode cb_leave(OTF2_LocationRef loc, OTF2_TimeStamp t, void *ud, OTF2_AttributeList *al,
                                  OTF2_RegionRef region) {
    CB_HEAD_METRIC
    uint32_t mclass = metric_take(l, t);
    if (l->depth == 0 || l->fr[l->depth - 1].region != region) {
        /* A14 broken: count it; close the region if it is open further down */
        l->badleave++;
        uint32_t k = l->depth;
        while (k > 0 && l->fr[k - 1].region != region) k--;
        if (k == 0) return OTF2_CALLBACK_SUCCESS;
        l->depth = k;
    }
    struct frame f = l->fr[--l->depth];
    if (l->in_mpi) host_mpi_update(c, l, t);
    uint64_t dur = t >= f.t ? t - f.t : 0;
    if (l->met) metric_region(c, l, &f, mclass, dur);
    const struct agg_region *R = &c->d->regions[f.region];
    const char *cat = "";
    struct agg_acc *a;
    if (l->stream) {
        switch (R->dev_class) {
        case AGG_D_KERNEL:
            kernel_done(c, l, &f, t, dur);
            cat = "kernel";
            break;
        case AGG_D_COPY:
        case AGG_D_IMAGE:
        case AGG_D_FILL:
            xfer_done(c, &f, dur);
            cat = R->dev_class == AGG_D_FILL ? "fill" : "transfer";
            break;
        default:
            if ((a = agg_stats_get(c->s, T_BARRIER, f.region, 0, 0))) agg_acc_add(a, dur);
            cat = "barrier";
            break;
        }
        if (l->dev != AGG_NONE && R->dev_class != AGG_D_BARRIER)
            dev_change(c, &c->devs[l->dev], t, R->dev_class != AGG_D_KERNEL, -1);
    } else if (R->host_class == AGG_H_MPI) {
        if ((a = agg_stats_get(c->s, T_MPI, f.region, 0, 0))) {
            agg_acc_add(a, dur);
            a->bytes += f.bytes;
        }
        if ((a = agg_stats_get(c->s, T_MPI_RANK, f.region, c->rank, 0))) {
            agg_acc_add(a, dur);
            a->bytes += f.bytes;
        }
        if (f.comm != AGG_NONE && (a = agg_stats_get(c->s, T_COLL, f.region, f.comm, 0))) {
            agg_acc_add(a, dur);
            a->bytes += f.bytes;
        }
        /* MPI calls do not nest; an outer MPI region would count twice */
        bool outer = true;
        for (uint32_t k = 0; k < l->depth; k++)
            if (c->d->regions[l->fr[k].region].host_class == AGG_H_MPI) outer = false;
        if (outer) c->mpi_ns += dur;
        cat = "MPI";
    } else {
        if ((a = agg_stats_get(c->s, T_API, f.region, 0, 0))) agg_acc_add(a, dur);
        cat = R->host_class == AGG_H_L0 ? "Level Zero" : R->host_class == AGG_H_MEASUREMENT ? "zecoll" : "host";
    }
    if (c->tl) agg_timeline_region(c->tl, l->li, f.region, f.t, t, f.bytes, f.cs, cat);
    return OTF2_CALLBACK_SUCCESS;
}

/* ---------------------------------------------------------------- clock offsets */
struct offs {
    uint64_t n, t0, t1, sd0, sd1;
    int64_t v0, v1;
};

static OTF2_CallbackCode cb_offset(void *ud, OTF2_TimeStamp t, int64_t off, double sd) {
    struct offs *o = ud;
    uint64_t bits;
    memcpy(&bits, &sd, sizeof(bits));
    if (o->n == 0) {
        o->t0 = t;
        o->v0 = off;
        o->sd0 = bits;
    }
    o->t1 = t;
    o->v1 = off;
    o->sd1 = bits;
    o->n++;
    return OTF2_CALLBACK_SUCCESS;
}

/* ---------------------------------------------------------------- one process */
static OTF2_GlobalEvtReaderCallbacks *callbacks(void) {
    OTF2_GlobalEvtReaderCallbacks *cb = OTF2_GlobalEvtReaderCallbacks_New();
    if (!cb) return NULL;
    OTF2_GlobalEvtReaderCallbacks_SetEnterCallback(cb, cb_enter);
    OTF2_GlobalEvtReaderCallbacks_SetLeaveCallback(cb, cb_leave);
    OTF2_GlobalEvtReaderCallbacks_SetParameterUnsignedIntCallback(cb, cb_param);
    OTF2_GlobalEvtReaderCallbacks_SetParameterIntCallback(cb, cb_pint);
    OTF2_GlobalEvtReaderCallbacks_SetParameterStringCallback(cb, cb_pstr);
    OTF2_GlobalEvtReaderCallbacks_SetRmaGetCallback(cb, cb_rma);
    OTF2_GlobalEvtReaderCallbacks_SetRmaPutCallback(cb, cb_rma);
    OTF2_GlobalEvtReaderCallbacks_SetRmaOpCompleteBlockingCallback(cb, cb_rma_done);
    OTF2_GlobalEvtReaderCallbacks_SetMpiSendCallback(cb, cb_send);
    OTF2_GlobalEvtReaderCallbacks_SetMpiRecvCallback(cb, cb_send);
    OTF2_GlobalEvtReaderCallbacks_SetMpiIsendCallback(cb, cb_isend);
    OTF2_GlobalEvtReaderCallbacks_SetMpiIrecvCallback(cb, cb_isend);
    OTF2_GlobalEvtReaderCallbacks_SetMpiIsendCompleteCallback(cb, cb_req);
    OTF2_GlobalEvtReaderCallbacks_SetMpiIrecvRequestCallback(cb, cb_req);
    OTF2_GlobalEvtReaderCallbacks_SetMpiRequestTestCallback(cb, cb_req);
    OTF2_GlobalEvtReaderCallbacks_SetMpiRequestCancelledCallback(cb, cb_req);
    OTF2_GlobalEvtReaderCallbacks_SetMpiCollectiveBeginCallback(cb, cb_plain);
    OTF2_GlobalEvtReaderCallbacks_SetMpiCollectiveEndCallback(cb, cb_coll_end);
    OTF2_GlobalEvtReaderCallbacks_SetNonBlockingCollectiveRequestCallback(cb, cb_req);
    OTF2_GlobalEvtReaderCallbacks_SetNonBlockingCollectiveCompleteCallback(cb, cb_nbc_end);
    OTF2_GlobalEvtReaderCallbacks_SetMeasurementOnOffCallback(cb, cb_onoff);
    OTF2_GlobalEvtReaderCallbacks_SetMetricCallback(cb, cb_metric);
    OTF2_GlobalEvtReaderCallbacks_SetBufferFlushCallback(cb, cb_flush);
    OTF2_GlobalEvtReaderCallbacks_SetUnknownCallback(cb, cb_plain);
    return cb;
}

static void evt_path(const char *dir, uint64_t id, char *out, size_t n) {
    snprintf(out, n, "%s/traces/%llu.evt", dir, (unsigned long long)id);
}

/* Which event file of the process is at fault: each read alone with a local reader. */
static void blame(const struct agg_defs *d, const char *anchor, const char *dir, const struct agg_proc *p,
                  struct agg_err *e, const char *fallback) {
    for (uint32_t i = 0; i < p->nlocs; i++) {
        const struct agg_loc *L = &d->locs[p->locs[i]];
        if (!L->file_size) continue;
        OTF2_Reader *rd = OTF2_Reader_Open(anchor);
        if (!rd) break;
        bool bad = true;
        char msg[200] = "";
        if (OTF2_Reader_SetSerialCollectiveCallbacks(rd) == OTF2_SUCCESS &&
            OTF2_Reader_SelectLocation(rd, L->id) == OTF2_SUCCESS && OTF2_Reader_OpenEvtFiles(rd) == OTF2_SUCCESS) {
            OTF2_EvtReader *er = OTF2_Reader_GetEvtReader(rd, L->id);
            uint64_t n = 0;
            if (er) {
                /* no callbacks: decoding alone; bounded like the real read */
                uint64_t limit = L->file_size / 2 + 16, got = 0;
                OTF2_ErrorCode rc = OTF2_SUCCESS;
                while (got <= limit) {
                    rc = OTF2_Reader_ReadLocalEvents(rd, er, BATCH, &n);
                    got += n;
                    if (rc != OTF2_SUCCESS || n < BATCH) break;
                }
                if (rc != OTF2_SUCCESS) snprintf(msg, sizeof(msg), "%s", agg_otf2_last_error());
                else if (got > limit) snprintf(msg, sizeof(msg), "more records than the file can hold");
                else bad = false;
            }
            OTF2_Reader_CloseEvtFiles(rd);
        }
        OTF2_Reader_Close(rd);
        if (bad) {
            char path[PATH_MAX + 64];
            evt_path(dir, L->id, path, sizeof(path));
            agg_err_set(e, path, "corrupt or truncated event file (%s)", msg[0] ? msg : "cannot be decoded");
            return;
        }
    }
    char path[PATH_MAX + 64];
    snprintf(path, sizeof(path), "%s/traces", dir);
    agg_err_set(e, path, "events of rank %u cannot be read (%s)", p->rank, fallback);
}

int agg_read_process(const struct agg_defs *d, const char *archive, uint32_t proc, struct agg_stats *s,
                     const struct agg_read_opts *o, struct agg_err *e) {
    const struct agg_proc *p = &d->procs[proc];
    char anchor[PATH_MAX], dir[PATH_MAX];
    agg_anchor_path(archive, anchor, sizeof(anchor));
    snprintf(dir, sizeof(dir), "%s", anchor);
    char *sl = strrchr(dir, '/');
    if (sl) *sl = 0;
    else snprintf(dir, sizeof(dir), ".");

    struct pctx c;
    memset(&c, 0, sizeof(c));
    c.d = d;
    c.s = s;
    c.p = p;
    c.rank = p->rank;
    c.first = UINT64_MAX;
    c.bin_lo = d->t0;
    c.bin_span = d->span ? d->span : 1;
    c.tl = o && o->timeline && agg_timeline_wants(o->timeline, p->rank) ? o->timeline : NULL;
    c.ls = calloc(p->nlocs + 1, sizeof(*c.ls));
    c.devs = calloc(p->nlocs + 1, sizeof(*c.devs));
    c.lcap = 16;
    while (c.lcap < 2 * (size_t)p->nlocs + 2) c.lcap *= 2;
    c.lkey = calloc(c.lcap, sizeof(uint64_t));
    c.lval = malloc(c.lcap * sizeof(uint32_t));
    c.bins = agg_stats_rank_bins(s, p->rank);
    int ret = -1;
    OTF2_Reader *rd = NULL;
    OTF2_GlobalEvtReader *gr = NULL;
    bool evt_open = false;
    if (!c.ls || !c.devs || !c.lkey || !c.lval || (s->nbins && !c.bins)) {
        agg_err_set(e, anchor, "out of memory");
        goto out;
    }
    memset(c.lval, 0xff, c.lcap * sizeof(uint32_t));
    for (uint32_t i = 0; i < p->nlocs; i++) {
        const struct agg_loc *L = &d->locs[p->locs[i]];
        struct lst *l = &c.ls[c.nls];
        l->li = p->locs[i];
        l->stream = L->type == AGG_LOC_STREAM;
        l->dev = AGG_NONE;
        l->limit = L->file_size / 2 + 16;
        if (l->stream && L->device != AGG_NONE) {
            uint32_t k;
            for (k = 0; k < c.ndevs && c.devs[k].node != L->device; k++) {
            }
            if (k == c.ndevs) c.devs[c.ndevs++].node = L->device;
            l->dev = k;
        }
        size_t j = hmix(L->id) & (c.lcap - 1);
        while (c.lval[j] != AGG_NONE) j = (j + 1) & (c.lcap - 1);
        c.lkey[j] = L->id;
        c.lval[j] = c.nls++;
    }
    if (c.tl) agg_timeline_begin_proc(c.tl, proc);

    rd = OTF2_Reader_Open(anchor);
    if (!rd || OTF2_Reader_SetSerialCollectiveCallbacks(rd) != OTF2_SUCCESS) {
        agg_err_set(e, anchor, "cannot open the archive (%s)", agg_otf2_last_error());
        goto out;
    }
    uint32_t nsel = 0;
    for (uint32_t i = 0; i < c.nls; i++) {
        const struct agg_loc *L = &d->locs[c.ls[i].li];
        if (L->empty) {
            char path[PATH_MAX + 64];
            evt_path(dir, L->id, path, sizeof(path));
            agg_err_set(e, path, "empty event file, its definition says %llu events (truncated)",
                        (unsigned long long)L->def_events);
            goto out;
        }
        if (!L->file_size) continue;
        if (OTF2_Reader_SelectLocation(rd, L->id) != OTF2_SUCCESS) {
            agg_err_set(e, anchor, "cannot select location %llu (%s)", (unsigned long long)L->id, agg_otf2_last_error());
            goto out;
        }
        nsel++;
    }
    /* local definitions: mapping tables and clock offsets, which the event reader then applies */
    struct offs offs = {0};
    if (nsel && OTF2_Reader_OpenDefFiles(rd) == OTF2_SUCCESS) {
        OTF2_DefReaderCallbacks *dcb = OTF2_DefReaderCallbacks_New();
        for (uint32_t i = 0; dcb && i < c.nls; i++) {
            const struct agg_loc *L = &d->locs[c.ls[i].li];
            if (!L->file_size) continue;
            char path[PATH_MAX + 64];
            snprintf(path, sizeof(path), "%s/traces/%llu.def", dir, (unsigned long long)L->id);
            struct stat st;
            if (stat(path, &st) != 0) continue; /* no local definitions: ids are global, no offsets (reported) */
            OTF2_DefReader *dr = OTF2_Reader_GetDefReader(rd, L->id);
            if (!dr) {
                OTF2_DefReaderCallbacks_Delete(dcb);
                agg_err_set(e, path, "corrupt local definitions (%s)", agg_otf2_last_error());
                goto out;
            }
            struct offs lo = {0};
            OTF2_DefReaderCallbacks_SetClockOffsetCallback(dcb, cb_offset);
            OTF2_Reader_RegisterDefCallbacks(rd, dr, dcb, &lo);
            uint64_t n = 0;
            OTF2_ErrorCode rc = OTF2_Reader_ReadAllLocalDefinitions(rd, dr, &n);
            OTF2_Reader_CloseDefReader(rd, dr);
            if (rc != OTF2_SUCCESS) {
                OTF2_DefReaderCallbacks_Delete(dcb);
                agg_err_set(e, path, "corrupt local definitions (%s)", agg_otf2_last_error());
                goto out;
            }
            if (lo.n > offs.n) offs = lo;
            c.ls[i].noffsets = lo.n;
        }
        OTF2_DefReaderCallbacks_Delete(dcb);
        OTF2_Reader_CloseDefFiles(rd);
    }
    if (nsel) {
        if (OTF2_Reader_OpenEvtFiles(rd) != OTF2_SUCCESS) {
            agg_err_set(e, anchor, "cannot open the event files (%s)", agg_otf2_last_error());
            goto out;
        }
        evt_open = true;
        for (uint32_t i = 0; i < c.nls; i++) {
            const struct agg_loc *L = &d->locs[c.ls[i].li];
            if (L->file_size && !OTF2_Reader_GetEvtReader(rd, L->id)) {
                char path[PATH_MAX + 64];
                evt_path(dir, L->id, path, sizeof(path));
                agg_err_set(e, path, "cannot open the event file (%s)", agg_otf2_last_error());
                goto out;
            }
        }
        gr = OTF2_Reader_GetGlobalEvtReader(rd);
        OTF2_GlobalEvtReaderCallbacks *cb = gr ? callbacks() : NULL;
        if (!gr || !cb) {
            agg_err_set(e, anchor, "cannot read events (%s)", agg_otf2_last_error());
            goto out;
        }
        OTF2_Reader_RegisterGlobalEvtCallbacks(rd, gr, cb, &c);
        OTF2_GlobalEvtReaderCallbacks_Delete(cb);
        uint64_t total_def = 0;
        for (uint32_t i = 0; i < c.nls; i++) total_def += d->locs[c.ls[i].li].def_events;
        for (;;) {
            uint64_t n = 0;
            OTF2_ErrorCode rc = OTF2_Reader_ReadGlobalEvents(rd, gr, BATCH, &n);
            if (c.corrupt) {
                char path[PATH_MAX + 64];
                if (c.corrupt_li != AGG_NONE) {
                    evt_path(dir, d->locs[c.corrupt_li].id, path, sizeof(path));
                    agg_err_set(e, path, "corrupt event file (%s)", c.why);
                } else {
                    blame(d, anchor, dir, p, e, c.why);
                }
                goto out;
            }
            if (rc != OTF2_SUCCESS) {
                char why[200];
                snprintf(why, sizeof(why), "%s", agg_otf2_last_error());
                blame(d, anchor, dir, p, e, why);
                goto out;
            }
            if (o && o->progress && total_def)
                o->progress(o->progress_ud, (uint64_t)((unsigned __int128)p->bytes * (c.events < total_def ? c.events : total_def) / total_def));
            if (n < BATCH) break;
        }
    }

    /* ends of the locations: open regions, measurement still off */
    for (uint32_t i = 0; i < c.nls; i++) {
        struct lst *l = &c.ls[i];
        if (l->off) end_off(&c, l, l->last);
        if (l->met) {
            struct lmet *m = l->met;
            if (m->pending) metric_orphan(l);
            struct agg_acc *q = agg_stats_get(s, T_MQ, 0, l->li, 0);
            if (q) {
                q->x[0] += m->unpaired;
                q->x[1] += m->decreasing;
                q->x[2] += m->one_sided;
            }
            /* what each counter counted on this thread, from its first sample to its last */
            for (uint32_t gm = 0; gm < d->nmmembers; gm++) {
                if (!m->seen[gm] || decreases(d->mmembers[gm].type, m->first[gm], m->last[gm])) continue;
                struct agg_acc *a = agg_stats_get(s, T_METRIC_RANK, gm, p->rank, AGG_MK_SPAN);
                if (a) {
                    a->n++;
                    a->sum += m->last[gm] - m->first[gm];
                }
            }
        }
        struct agg_acc *a = agg_stats_get(s, T_LOC, 0, l->li, 0);
        if (a) {
            if (l->nev) {
                a->min = l->first;
                a->max = l->last;
            }
            a->n += l->nev;
            a->sum += l->nmetric;
            a->x[0] += l->depth;
            a->x[1] += l->badleave;
            a->x[2] += l->offcount;
            a->x[3] += l->offns;
            a->bytes = l->noffsets;
        }
    }
    for (uint32_t k = 0; k < c.ndevs; k++) {
        struct dst *v = &c.devs[k];
        struct agg_acc *a = agg_stats_get(s, T_DEVUTIL, 0, p->rank, v->node);
        if (!a) continue;
        a->n = 1;
        a->sum = v->busy;
        a->x[0] = v->busy_c;
        a->x[1] = v->busy_x;
        a->x[2] = v->overlap;
        a->x[3] = v->offns;
        a->min = v->first;
        a->max = v->last;
        a->bytes = c.first <= c.last ? c.last - c.first : 0;
    }
    struct agg_rank *R = &s->ranks[p->rank];
    R->present = 1;
    R->first = c.first == UINT64_MAX ? 0 : c.first;
    R->last = c.last;
    R->ndev = c.ndevs;
    R->mpi_ns = c.mpi_ns;
    R->host_off_ns = c.host_offns;
    R->kernel_ns = c.kernel_ns;
    R->events = c.events;
    R->cs_host_only = c.pend.n;
    R->cs_dev_only = c.early.n;
    R->cs_repeat = c.cs_repeat;
    R->lat_negative = c.lat_neg;
    R->lat_negative_max = c.lat_neg_max;
    for (uint32_t i = 0; i < c.nls; i++) {
        R->off_count += c.ls[i].offcount;
        R->off_ns += c.ls[i].offns;
    }
    R->noffsets = offs.n;
    R->off_t0 = offs.t0;
    R->off_t1 = offs.t1;
    R->off_v0 = offs.v0;
    R->off_v1 = offs.v1;
    R->off_sd0 = offs.sd0;
    R->off_sd1 = offs.sd1;
    if (c.pend.oom || c.early.oom || c.wmark.oom || s->oom) {
        agg_err_set(e, anchor, "out of memory");
        goto out;
    }
    ret = 0;
out:
    if (gr) OTF2_Reader_CloseGlobalEvtReader(rd, gr);
    if (evt_open) OTF2_Reader_CloseEvtFiles(rd);
    if (rd) OTF2_Reader_Close(rd);
    if (c.tl) {
        uint64_t off = 0, len = 0;
        agg_timeline_end_proc(c.tl, &off, &len);
    }
    for (uint32_t i = 0; c.ls && i < c.nls; i++) {
        free(c.ls[i].fr);
        metric_free(&c.ls[i]);
    }
    free(c.ls);
    free(c.devs);
    free(c.lkey);
    free(c.lval);
    map_free(&c.pend);
    map_free(&c.early);
    map_free(&c.wmark);
    return ret;
}
