/* SPDX-License-Identifier: MIT */
/* PAPI counters in the events (docs/archive.md A19): a Metric right before an Enter or Leave at
 * its time belongs to it. For a region with one at both ends (same class), each summed counter
 * adds Leave - Enter to the region's and the rank's sums; each thread's first and last value
 * give what it counted while recording. Values lower than the thread's previous one (a counter
 * that wrapped or was reset) are counted and left out. */
#include "zc_agg_read.h"

#include <stdlib.h>
#include <string.h>

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

void agg_metric_free(struct lst *l) {
    struct lmet *m = l->met;
    if (!m) return;
    free(m->pv), free(m->stack), free(m->first), free(m->last), free(m->seen), free(m);
    l->met = NULL;
}

/* whether b is below a, for a value of this type */
static bool decreases(uint8_t type, uint64_t a, uint64_t b) {
    return type == OTF2_TYPE_INT64 ? (int64_t)b < (int64_t)a : b < a;
}

/* the Metric's class is known and its values match it */
static bool metric_valid(const struct agg_defs *d, const struct agg_mclass *k, uint8_t n, const OTF2_Type *types) {
    bool ok = k && k->defined && k->n == n;
    for (uint32_t j = 0; ok && j < n; j++)
        ok = k->m[j] < d->nmmembers && d->mmembers[k->m[j]].defined && types[j] == d->mmembers[k->m[j]].type;
    return ok;
}

int agg_metric_sample(struct pctx *c, struct lst *l, uint64_t t, OTF2_MetricRef mref, uint8_t n, const OTF2_Type *types,
                      const OTF2_MetricValue *vals) {
    l->nmetric++;
    const struct agg_defs *d = c->d;
    struct lmet *m = metric_state(d, l);
    if (!m) return -1;
    if (m->pending) agg_metric_orphan(l);
    const struct agg_mclass *k = mref < d->nmclasses ? &d->mclasses[mref] : NULL;
    if (!metric_valid(d, k, n, types)) { /* not interpreted */
        m->unpaired++;
        return 0;
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
    return 0;
}

/* The stack of Enter values grows with the frames (l->cap is already the new frame count). */
int agg_metric_push(struct pctx *c, struct lst *l, uint32_t mclass) {
    struct lmet *m = l->met;
    size_t stride = c->d->mclass_max;
    if (m->stack_cap <= l->depth) {
        uint32_t nc = l->cap; /* as many as frames */
        uint64_t *p = realloc(m->stack, (size_t)nc * stride * sizeof(uint64_t));
        if (!p) return -1;
        m->stack = p;
        m->stack_cap = nc;
    }
    memcpy(m->stack + (size_t)l->depth * stride, m->pv, c->d->mclasses[mclass].n * sizeof(uint64_t));
    return 0;
}

void agg_metric_region(struct pctx *c, struct lst *l, const struct frame *f, uint32_t mclass, uint64_t dur) {
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

void agg_metric_flush(struct pctx *c, struct lst *l) {
    const struct agg_defs *d = c->d;
    struct lmet *m = l->met;
    if (!m) return;
    if (m->pending) agg_metric_orphan(l);
    struct agg_acc *q = agg_stats_get(c->s, T_MQ, 0, l->li, 0);
    if (q) {
        q->x[0] += m->unpaired;
        q->x[1] += m->decreasing;
        q->x[2] += m->one_sided;
    }
    /* what each counter counted on this thread, from its first sample to its last */
    for (uint32_t gm = 0; gm < d->nmmembers; gm++) {
        if (!m->seen[gm] || decreases(d->mmembers[gm].type, m->first[gm], m->last[gm])) continue;
        struct agg_acc *a = agg_stats_get(c->s, T_METRIC_RANK, gm, c->rank, AGG_MK_SPAN);
        if (a) {
            a->n++;
            a->sum += m->last[gm] - m->first[gm];
        }
    }
}
