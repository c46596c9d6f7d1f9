/* SPDX-License-Identifier: MIT */
/* GPU idle time by what the rank's host threads did meanwhile. A device's idle gap (between two
 * busy periods, zc_agg_busy.c) is split as the host's state changes: in MPI (a thread inside an
 * MPI call), else in a Level Zero host synchronisation, else outside recording (a thread off,
 * A18), else host compute. The MPI part is also cut into pieces by the call it overlaps (the call
 * of the first thread that entered MPI): rank 0 gives each piece the wait state of its call
 * (zc_agg_waits.c), which needs the other ranks. */
#include "zc_agg_read.h"

static enum agg_idle_cause cause_now(const struct pctx *c) {
    if (c->h_mpi > 0) return AGG_IDLE_MPI;
    if (c->h_sync > 0) return AGG_IDLE_SYNC;
    if (c->h_off > 0) return AGG_IDLE_OFF;
    return AGG_IDLE_COMPUTE;
}

static void dev_to(struct pctx *c, struct dst *v, uint64_t t) {
    if (t > v->g_t) {
        v->g_ns[cause_now(c)] += t - v->g_t;
        v->g_t = t;
    }
}

void agg_idle_host(struct pctx *c, uint64_t t) {
    for (uint32_t k = 0; k < c->ndevs; k++)
        if (c->devs[k].idle) dev_to(c, &c->devs[k], t);
}

void agg_idle_gap_start(struct pctx *c, struct dst *v, uint64_t t) {
    v->g_rec = c->s->nrec;
    v->g_t = t;
    for (int k = 0; k < AGG_IDLE_NCAUSES; k++) v->g_ns[k] = 0;
}

/* the idle time of v during the owning MPI call, up to t */
static void piece(struct pctx *c, struct dst *v, uint64_t t) {
    if (c->own == AGG_NONE) return;
    const struct lst *l = &c->ls[c->own];
    uint64_t a = v->idle_start > c->own_since ? v->idle_start : c->own_since;
    if (t <= a) return;
    size_t i = agg_rec_add(c->s, REC_PIECE);
    if (i == SIZE_MAX) return;
    uint64_t *w = agg_rec(c->s, i);
    w[1] = (uint64_t)c->rank << 32 | v->node;
    w[2] = v->idle_start;
    w[3] = l->li;
    w[4] = c->own_enter;
    w[5] = a;
    w[6] = t;
    w[7] = 0; /* until its gap ends */
}

void agg_idle_gap_end(struct pctx *c, struct dst *v, uint64_t t) {
    dev_to(c, v, t);
    piece(c, v, t);
    /* its pieces count now that it is a gap (idle after the last operation is none) */
    uint64_t key = (uint64_t)c->rank << 32 | v->node;
    for (size_t i = v->g_rec; i < c->s->nrec; i++) {
        uint64_t *w = agg_rec(c->s, i);
        if (w[0] == REC_PIECE && w[1] == key && w[2] == v->idle_start) w[7] = 1;
    }
    uint64_t dur = t - v->idle_start;
    for (int k = 0; k < AGG_IDLE_NCAUSES; k++) {
        struct agg_acc *a = agg_stats_get(c->s, T_IDLE, (uint32_t)k, c->rank, v->node);
        if (a) {
            a->n++;
            a->sum += v->g_ns[k];
        }
    }
    /* the process's longest gaps: ties by start, then device (the same whatever the order) */
    struct gap_top g = {dur, v->node, v->idle_start, t, {v->g_ns[0], v->g_ns[1], v->g_ns[2], v->g_ns[3]}};
    uint32_t n = c->ngtop, k = n;
    while (k > 0 && (c->gtop[k - 1].dur < g.dur ||
                     (c->gtop[k - 1].dur == g.dur && (c->gtop[k - 1].start > g.start ||
                                                      (c->gtop[k - 1].start == g.start && c->gtop[k - 1].node > g.node)))))
        k--;
    if (k >= AGG_GAP_TOP) return;
    if (n == AGG_GAP_TOP) n--;
    for (uint32_t j = n; j > k; j--) c->gtop[j] = c->gtop[j - 1];
    c->gtop[k] = g;
    c->ngtop = n + 1;
}

void agg_idle_mpi(struct pctx *c, struct lst *l, uint64_t t, bool in) {
    uint32_t me = (uint32_t)(l - c->ls);
    if (in) {
        if (c->own == AGG_NONE) {
            c->own = me;
            c->own_since = c->own_enter = t;
        }
        return;
    }
    if (c->own != me) return;
    for (uint32_t k = 0; k < c->ndevs; k++)
        if (c->devs[k].idle) piece(c, &c->devs[k], t);
    c->own = AGG_NONE;
    for (uint32_t i = 0; i < c->nls; i++)
        if (c->ls[i].in_mpi && i != me) {
            const struct lst *o = &c->ls[i];
            c->own = i;
            c->own_since = c->own_enter = t;
            for (uint32_t k = 0; k < o->depth; k++)
                if (c->d->regions[o->fr[k].region].host_class == AGG_H_MPI) {
                    c->own_enter = o->fr[k].t; /* its call, entered before */
                    break;
                }
            break;
        }
}

void agg_idle_flush(struct pctx *c) {
    for (uint32_t i = 0; i < c->ngtop; i++) {
        size_t k = agg_rec_add(c->s, REC_GAP);
        if (k == SIZE_MAX) return;
        uint64_t *w = agg_rec(c->s, k);
        const struct gap_top *g = &c->gtop[i];
        w[1] = (uint64_t)c->rank << 32 | g->node;
        w[2] = g->start;
        w[3] = g->end;
        for (int j = 0; j < AGG_IDLE_NCAUSES; j++) w[4 + j] = g->ns[j];
    }
}
