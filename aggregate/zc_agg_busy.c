/* SPDX-License-Identifier: MIT */
/* Busy time from the time-ordered events of one process. Each device keeps a count of the
 * operations running on it now, by class (compute, copy): between two events its state is
 * constant, so the time since the last one is busy (the union of the operations, never counted
 * twice), compute, copy, both (overlap) or idle, and goes into the rank's time bins. The host
 * keeps how many of its threads are off (A18) and how many are inside an MPI call, for the MPI
 * share's denominator. */
#include "zc_agg_read.h"

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

void agg_dev_advance(struct pctx *c, struct dst *v, uint64_t t) {
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

void agg_host_advance(struct pctx *c, uint64_t t) {
    agg_idle_host(c, t);
    if (t > c->h_last) {
        if (c->h_off > 0 && c->h_mpi == 0) c->host_offns += t - c->h_last;
        c->h_last = t;
    }
}

void agg_host_mpi_update(struct pctx *c, struct lst *l, uint64_t t) {
    bool in = false;
    for (uint32_t k = 0; k < l->depth && !in; k++) in = c->d->regions[l->fr[k].region].host_class == AGG_H_MPI;
    if (in == l->in_mpi) return;
    agg_host_advance(c, t);
    l->in_mpi = in;
    c->h_mpi += in ? 1 : -1;
    agg_idle_mpi(c, l, t, in);
}

/* An idle gap (between two busy periods) counts in the gap histogram unless measurement was off
 * during it: its length would then be the window's, not the device's. */
void agg_dev_change(struct pctx *c, struct dst *v, uint64_t t, bool copy, int delta) {
    agg_dev_advance(c, v, t);
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
        if (v->idle) agg_idle_gap_end(c, v, t);
        v->idle = false;
    } else if (was && !now) {
        v->idle = true;
        v->idle_start = t;
        v->gap_off = false;
        agg_idle_gap_start(c, v, t);
        if (t > v->last) v->last = t;
    }
}
