/* SPDX-License-Identifier: MIT */
/* Wait states and GPU idle attribution on rank 0, from the records every reader gathered
 * (zc_agg_comm.c, zc_agg_idle.c). The records are sorted with a total order first, so what
 * follows never depends on which reader read which rank. Messages match in order per
 * (communicator, sender, receiver, tag): sends by their time, receives by when they were posted
 * (MPI's non-overtaking rule); blocking collectives by their sequence on each communicator.
 * Times are on rank 0's clock (the reader applied the offsets); each wait carries the two ranks'
 * clock-offset uncertainties summed, and a wait not above it is counted apart (below). */
#include "zc_agg_report.h"

#include <math.h>
#include <otf2/otf2.h>
#include <stdlib.h>
#include <string.h>

const char *const agg_wait_class_names[W_NCLASSES + 1] = {
    "Late Sender", "Late Receiver", "Wait at NxN", "Wait at Barrier", "Late Broadcast", "Late Scatter",
    "Early Reduce", "Early Gather", "MPI, no wait state",
};

struct winst { /* one wait: a call of the waiting rank */
    uint64_t loc, enter, wait, unc;
    uint32_t cls, waiter, blamed, region, comm;
};

enum { WT_CLASS = 1, WT_RANK, WT_FN, WT_COMM, WT_PAIR, IT_WAIT, IT_RANK };

struct wctx {
    struct agg_report *r;
    const struct agg_stats *s;
    uint64_t *unc; /* per rank */
    struct winst *w;
    size_t nw, capw;
    struct agg_stats t; /* the aggregates, keyed */
};

/* ---------------------------------------------------------------- sorting the records */
static const uint64_t *g_rec;
static int cmp_words(const uint64_t *a, const uint64_t *b, const int *order, int n) {
    for (int k = 0; k < n; k++)
        if (a[order[k]] != b[order[k]]) return a[order[k]] < b[order[k]] ? -1 : 1;
    for (int k = 0; k < AGG_REC_W; k++)
        if (a[k] != b[k]) return a[k] < b[k] ? -1 : 1;
    return 0;
}
/* messages: type, comm, pair, tag, the time they are matched in, location, call */
static const int msg_order[] = {0, 1, 2, 3, 4, 8, 5};
/* collectives: type, comm, sequence, rank */
static const int coll_order[] = {0, 1, 2};
static int cmp_rec(const void *x, const void *y) {
    const uint64_t *a = g_rec + *(const size_t *)x * AGG_REC_W, *b = g_rec + *(const size_t *)y * AGG_REC_W;
    if (a[0] != b[0]) return a[0] < b[0] ? -1 : 1;
    if (a[0] == REC_COLL) {
        /* sequence before rank: w[2] = rank << 32 | seq */
        if (a[1] != b[1]) return a[1] < b[1] ? -1 : 1;
        uint32_t sa = (uint32_t)a[2], sb = (uint32_t)b[2];
        if (sa != sb) return sa < sb ? -1 : 1;
        return cmp_words(a, b, coll_order, 3);
    }
    return cmp_words(a, b, msg_order, 7);
}

/* ---------------------------------------------------------------- waits */
static void add_wait(struct wctx *c, uint32_t cls, uint32_t waiter, uint32_t blamed, const uint64_t *call, uint64_t wait) {
    if (wait == 0 || waiter >= c->s->nranks || blamed >= c->s->nranks) return;
    if (c->nw == c->capw) {
        size_t nc = c->capw ? 2 * c->capw : 256;
        struct winst *p = realloc(c->w, nc * sizeof(*p));
        if (!p) {
            c->t.oom = true;
            return;
        }
        c->w = p;
        c->capw = nc;
    }
    c->w[c->nw++] = (struct winst){call[8], call[5], wait, c->unc[waiter] + c->unc[blamed], cls, waiter, blamed,
                                   (uint32_t)(call[7] >> 8), (uint32_t)call[1]};
}

static uint64_t min_u64(uint64_t a, uint64_t b) { return a < b ? a : b; }

/* a matched message: Late Sender at the receive, Late Receiver at a blocking send */
static void message(struct wctx *c, const uint64_t *snd, const uint64_t *rcv) {
    uint32_t src = (uint32_t)(snd[2] >> 32), dst = (uint32_t)snd[2];
    if (snd[5] > rcv[5] && rcv[6] > rcv[5]) add_wait(c, W_LATE_SENDER, dst, src, rcv, min_u64(snd[5] - rcv[5], rcv[6] - rcv[5]));
    const char *fn = rep_region_name(c->r, (uint32_t)(snd[7] >> 8));
    bool ssend = strcmp(fn, "MPI_Ssend") == 0, send = strcmp(fn, "MPI_Send") == 0;
    /* a plain send waited for the receiver only where it was still blocked when the receive was
     * posted (a rendezvous); a synchronous one always does */
    if ((ssend || (send && snd[6] > rcv[4])) && (snd[7] & 1) && rcv[4] > snd[5])
        add_wait(c, W_LATE_RECEIVER, src, dst, snd, min_u64(rcv[4], snd[6]) - snd[5]);
}

static void messages(struct wctx *c, const size_t *ix, size_t ns, const size_t *jx, size_t nr) {
    size_t i = 0, j = 0;
    const uint64_t *R = c->s->rec;
    while (i < ns && j < nr) {
        const uint64_t *a = R + ix[i] * AGG_REC_W, *b = R + jx[j] * AGG_REC_W;
        int k = a[1] != b[1] ? (a[1] < b[1] ? -1 : 1) : a[2] != b[2] ? (a[2] < b[2] ? -1 : 1) : a[3] != b[3] ? (a[3] < b[3] ? -1 : 1) : 0;
        if (k < 0) i++, c->r->w_unmatched++;
        else if (k > 0) j++, c->r->w_unmatched++;
        else message(c, a, b), i++, j++;
    }
    c->r->w_unmatched += (ns - i) + (nr - j);
}

static bool op_in(uint32_t op, const uint32_t *set, int n) {
    for (int k = 0; k < n; k++)
        if (set[k] == op) return true;
    return false;
}

/* one collective instance: the records of its members, by rank */
static void collective(struct wctx *c, const size_t *ix, size_t n) {
    static const uint32_t nxn[] = {OTF2_COLLECTIVE_OP_ALLGATHER, OTF2_COLLECTIVE_OP_ALLGATHERV, OTF2_COLLECTIVE_OP_ALLTOALL,
                                   OTF2_COLLECTIVE_OP_ALLTOALLV, OTF2_COLLECTIVE_OP_ALLTOALLW, OTF2_COLLECTIVE_OP_ALLREDUCE,
                                   OTF2_COLLECTIVE_OP_REDUCE_SCATTER, OTF2_COLLECTIVE_OP_REDUCE_SCATTER_BLOCK};
    const uint64_t *R = c->s->rec;
#define REC(k) (R + ix[k] * AGG_REC_W)
    uint32_t op = (uint32_t)(REC(0)[3] >> 32), root = (uint32_t)REC(0)[3];
    size_t last = 0, root_i = SIZE_MAX, first_nr = SIZE_MAX;
    for (size_t k = 0; k < n; k++) {
        if (REC(k)[5] > REC(last)[5]) last = k; /* ties: the lowest rank (records by rank) */
        if ((uint32_t)(REC(k)[2] >> 32) == root) root_i = k;
        else if (first_nr == SIZE_MAX || REC(k)[5] < REC(first_nr)[5]) first_nr = k;
    }
    uint32_t last_rank = (uint32_t)(REC(last)[2] >> 32);
    bool barrier = op == OTF2_COLLECTIVE_OP_BARRIER;
    if (barrier || op_in(op, nxn, 8)) {
        for (size_t k = 0; k < n; k++)
            if (k != last)
                add_wait(c, barrier ? W_BARRIER : W_NXN, (uint32_t)(REC(k)[2] >> 32), last_rank, REC(k),
                         min_u64(REC(last)[5] - REC(k)[5], REC(k)[6] - REC(k)[5]));
        return;
    }
    if (root_i == SIZE_MAX) return;
    const uint64_t *rt = REC(root_i);
    if (op == OTF2_COLLECTIVE_OP_BCAST || op == OTF2_COLLECTIVE_OP_SCATTER || op == OTF2_COLLECTIVE_OP_SCATTERV) {
        uint32_t cls = op == OTF2_COLLECTIVE_OP_BCAST ? W_LATE_BCAST : W_LATE_SCATTER;
        for (size_t k = 0; k < n; k++)
            if (k != root_i && rt[5] > REC(k)[5])
                add_wait(c, cls, (uint32_t)(REC(k)[2] >> 32), root, REC(k), min_u64(rt[5] - REC(k)[5], REC(k)[6] - REC(k)[5]));
    } else if ((op == OTF2_COLLECTIVE_OP_REDUCE || op == OTF2_COLLECTIVE_OP_GATHER || op == OTF2_COLLECTIVE_OP_GATHERV) &&
               first_nr != SIZE_MAX && REC(first_nr)[5] > rt[5]) {
        /* the root waits until the first sender enters: before that no data can come */
        add_wait(c, op == OTF2_COLLECTIVE_OP_REDUCE ? W_EARLY_REDUCE : W_EARLY_GATHER, root,
                 (uint32_t)(REC(first_nr)[2] >> 32), rt, min_u64(REC(first_nr)[5] - rt[5], rt[6] - rt[5]));
    }
#undef REC
}

static void collectives(struct wctx *c, const size_t *ix, size_t n) {
    const uint64_t *R = c->s->rec;
    for (size_t i = 0; i < n;) {
        size_t j = i + 1;
        const uint64_t *a = R + ix[i] * AGG_REC_W;
        while (j < n && R[ix[j] * AGG_REC_W + 1] == a[1] && (uint32_t)R[ix[j] * AGG_REC_W + 2] == (uint32_t)a[2]) j++;
        collective(c, ix + i, j - i);
        i = j;
    }
}

/* ---------------------------------------------------------------- aggregates */
static int cmp_winst(const void *x, const void *y) {
    const struct winst *a = x, *b = y;
    if (a->loc != b->loc) return a->loc < b->loc ? -1 : 1;
    if (a->enter != b->enter) return a->enter < b->enter ? -1 : 1;
    if (a->wait != b->wait) return a->wait > b->wait ? -1 : 1; /* the longest first: the one kept */
    if (a->cls != b->cls) return a->cls < b->cls ? -1 : 1;
    return (a->blamed > b->blamed) - (a->blamed < b->blamed);
}

static void tally(struct wctx *c, uint32_t table, uint32_t a, uint64_t b, uint64_t k, const struct winst *w) {
    struct agg_acc *x = agg_stats_get(&c->t, table, a, b, k);
    if (!x) return;
    if (w->wait > w->unc) {
        x->n++;
        x->sum += w->wait;
    } else {
        x->x[0]++;
        x->x[1] += w->wait;
    }
    if (w->unc > x->x[2]) x->x[2] = w->unc;
}

/* the wait of the call (loc, enter), or NULL */
static const struct winst *wait_of(const struct wctx *c, uint64_t loc, uint64_t enter) {
    size_t lo = 0, hi = c->nw;
    while (lo < hi) {
        size_t m = (lo + hi) / 2;
        const struct winst *w = &c->w[m];
        if (w->loc < loc || (w->loc == loc && w->enter < enter)) lo = m + 1;
        else hi = m;
    }
    return lo < c->nw && c->w[lo].loc == loc && c->w[lo].enter == enter ? &c->w[lo] : NULL;
}

/* a piece of idle time during an MPI call: its wait's part (from the call's Enter) and the rest */
static void piece(struct wctx *c, const uint64_t *p) {
    uint32_t rank = (uint32_t)(p[1] >> 32);
    const struct winst *w = wait_of(c, p[3], p[4]);
    uint64_t in = 0;
    if (w && w->wait > w->unc) {
        uint64_t we = w->enter + w->wait, a = p[5], b = p[6] < we ? p[6] : we;
        in = b > a ? b - a : 0;
        struct agg_acc *x = agg_stats_get(&c->t, IT_WAIT, w->cls, (uint64_t)rank << 32 | w->blamed, w->region);
        if (x && in) {
            x->n++;
            x->sum += in;
        }
    }
    struct agg_acc *x = agg_stats_get(&c->t, IT_WAIT, W_NCLASSES, (uint64_t)rank << 32 | AGG_NONE, AGG_NONE);
    if (x && p[6] - p[5] > in) {
        x->n++;
        x->sum += p[6] - p[5] - in;
    }
}

static int compute(struct wctx *c) {
    const struct agg_stats *s = c->s;
    size_t *ix = malloc((s->nrec + 1) * sizeof(size_t));
    if (!ix) return -1;
    for (size_t i = 0; i < s->nrec; i++) ix[i] = i;
    g_rec = s->rec;
    qsort(ix, s->nrec, sizeof(*ix), cmp_rec);
    size_t at[REC_GAP + 2] = {0};
    for (size_t i = 0; i < s->nrec; i++) {
        uint64_t t = s->rec[ix[i] * AGG_REC_W];
        if (t <= REC_GAP) at[t + 1] = i + 1;
    }
    for (int t = 1; t <= REC_GAP + 1; t++)
        if (at[t] < at[t - 1]) at[t] = at[t - 1];
    messages(c, ix + at[REC_SEND], at[REC_SEND + 1] - at[REC_SEND], ix + at[REC_RECV], at[REC_RECV + 1] - at[REC_RECV]);
    collectives(c, ix + at[REC_COLL], at[REC_COLL + 1] - at[REC_COLL]);
    /* one wait per call (a Waitall completing several late messages: the longest) */
    if (c->nw) qsort(c->w, c->nw, sizeof(*c->w), cmp_winst);
    size_t k = 0;
    for (size_t i = 0; i < c->nw; i++)
        if (k == 0 || c->w[k - 1].loc != c->w[i].loc || c->w[k - 1].enter != c->w[i].enter) c->w[k++] = c->w[i];
    c->nw = k;
    for (size_t i = 0; i < c->nw; i++) {
        const struct winst *w = &c->w[i];
        tally(c, WT_CLASS, w->cls, 0, 0, w);
        tally(c, WT_RANK, w->cls, w->waiter, 0, w);
        tally(c, WT_FN, w->cls, w->region, 0, w);
        tally(c, WT_COMM, w->cls, w->comm, 0, w);
        tally(c, WT_PAIR, w->cls, w->waiter, w->blamed, w);
    }
    for (size_t i = at[REC_PIECE]; i < at[REC_PIECE + 1]; i++)
        if (s->rec[ix[i] * AGG_REC_W + 7]) piece(c, s->rec + ix[i] * AGG_REC_W); /* of a gap that ended */
    free(ix);
    return c->t.oom ? -1 : 0;
}

/* ---------------------------------------------------------------- report rows */
static const struct rep_key wait_order[] = {
    REP_DESC(r_wait, ns), REP_DESC(r_wait, ns_below), REP_ASC(r_wait, cls), REP_ASC(r_wait, a), REP_ASC(r_wait, b),
};

/* r->mr is in rank order (zc_agg_sec_mpi.c) */
static uint64_t rank_mpi(const struct agg_report *r, uint32_t rank) {
    uint32_t lo = 0, hi = r->nmr;
    while (lo < hi) {
        uint32_t m = (lo + hi) / 2;
        if (r->mr[m].rank < rank) lo = m + 1;
        else hi = m;
    }
    return lo < r->nmr && r->mr[lo].rank == rank ? r->mr[lo].mpi_ns : 0;
}

static int rows(struct wctx *c, uint32_t table, struct r_wait **out, uint32_t *n) {
    struct agg_report *r = c->r;
    if (!REP_ALLOC(r, *out, rep_count(&c->t, table))) return -1;
    *n = 0;
    for (uint32_t i = 0; i < c->t.n; i++) {
        const struct agg_key *k = &c->t.keys[i];
        if (k->table != table) continue;
        const struct agg_acc *a = &c->t.accs[i];
        struct r_wait *w = &(*out)[(*n)++];
        w->cls = k->a;
        w->cls_name = agg_wait_class_names[k->a];
        w->a = (uint32_t)k->b;
        w->b = (uint32_t)k->c;
        w->n = a->n;
        w->ns = a->sum;
        w->n_below = a->x[0];
        w->ns_below = a->x[1];
        w->unc_max = a->x[2];
        w->mpi_ns = table == WT_RANK || table == WT_PAIR ? rank_mpi(r, w->a) : r->mpi_total;
        w->share = rep_ratio(w->ns, w->mpi_ns);
        if (table == WT_FN) snprintf(w->label, sizeof(w->label), "%s", rep_region_name(r, w->a));
        if (table == WT_COMM) {
            const struct agg_defs *d = r->d;
            const struct agg_comm *cm = w->a < d->ncomms && d->comms[w->a].defined ? &d->comms[w->a] : NULL;
            if (cm && agg_str(d, cm->name)[0]) snprintf(w->label, sizeof(w->label), "%s", agg_str(d, cm->name));
            else snprintf(w->label, sizeof(w->label), "comm %u", w->a);
        }
    }
    REP_SORT(*out, *n, wait_order);
    return 0;
}

static double sd_of(uint64_t bits) {
    double v;
    memcpy(&v, &bits, sizeof(v));
    return isfinite(v) && v > 0 ? v : 0;
}

/* ---------------------------------------------------------------- GPU idle rows */
static const struct rep_key idlewait_order[] = {
    REP_DESC(r_idlewait, ns), REP_ASC(r_idlewait, rank), REP_ASC(r_idlewait, cls), REP_ASC(r_idlewait, blamed),
    REP_ASC(r_idlewait, region),
};

static const struct rep_key idlegap_order[] = {
    REP_DESC(r_idlegap, dur), REP_ASC(r_idlegap, rank), REP_ASC(r_idlegap, node), REP_ASC(r_idlegap, start),
};

static const char *const cause_names[AGG_IDLE_NCAUSES] = {"in MPI", "in a Level Zero host synchronisation",
                                                          "outside recording", "host compute"};

/* a top gap's cause: its largest part; for MPI, the wait (class, blamed rank, function) of most of it */
static void gap_cause(struct wctx *c, struct r_idlegap *g) {
    int best = 0;
    for (int k = 1; k < AGG_IDLE_NCAUSES; k++)
        if (g->ns[k] > g->ns[best]) best = k;
    snprintf(g->cause, sizeof(g->cause), "%s", cause_names[best]);
    if (best != AGG_IDLE_MPI) return;
    const struct winst *top = NULL;
    uint64_t top_ns = 0;
    for (size_t i = 0; i < c->s->nrec; i++) {
        const uint64_t *p = agg_rec(c->s, i);
        if (p[0] != REC_PIECE || p[1] != ((uint64_t)g->rank << 32 | g->node) || p[2] != g->start) continue;
        const struct winst *w = wait_of(c, p[3], p[4]);
        if (!w || w->wait <= w->unc) continue;
        uint64_t we = w->enter + w->wait, b = p[6] < we ? p[6] : we, in = b > p[5] ? b - p[5] : 0;
        if (in > top_ns || (in == top_ns && top && cmp_winst(w, top) < 0)) top = w, top_ns = in;
    }
    if (top && top_ns)
        snprintf(g->cause, sizeof(g->cause), "in MPI: %s in %s for rank %u", agg_wait_class_names[top->cls],
                 rep_region_name(c->r, top->region), top->blamed);
}

static int idle_rows(struct wctx *c) {
    struct agg_report *r = c->r;
    const struct agg_stats *s = c->s;
    uint32_t *row = rep_alloc(r, s->nranks, sizeof(uint32_t)); /* rank -> its row */
    if (!row || !REP_ALLOC(r, r->idl, s->nranks)) return -1;
    for (uint32_t q = 0; q < s->nranks; q++) {
        const struct agg_rank *x = &s->ranks[q];
        row[q] = AGG_NONE;
        if (!x->present || !x->ndev) continue;
        row[q] = r->nidl;
        struct r_idle *w = &r->idl[r->nidl++];
        w->rank = q;
        w->denom = (x->last > x->first ? x->last - x->first : 0) * x->ndev;
    }
    for (uint32_t i = 0; i < s->n; i++) {
        const struct agg_key *k = &s->keys[i];
        if (k->table != T_IDLE || k->a >= AGG_IDLE_NCAUSES || k->b >= s->nranks || row[k->b] == AGG_NONE) continue;
        struct r_idle *w = &r->idl[row[k->b]];
        w->ns[k->a] += s->accs[i].sum;
        w->total += s->accs[i].sum;
        if (k->a == 0) w->gaps += s->accs[i].n;
    }
    for (uint32_t j = 0; j < r->nidl; j++) {
        struct r_idle *w = &r->idl[j];
        w->share = rep_ratio(w->total, w->denom);
        r->idle_job.gaps += w->gaps;
        r->idle_job.total += w->total;
        r->idle_job.denom += w->denom;
        for (int k = 0; k < AGG_IDLE_NCAUSES; k++) r->idle_job.ns[k] += w->ns[k];
    }
    r->idle_job.share = rep_ratio(r->idle_job.total, r->idle_job.denom);
    r->idle_job.rank = AGG_NONE;
    /* idle while waiting: by rank, class, blamed rank and function */
    if (!REP_ALLOC(r, r->iw, rep_count(&c->t, IT_WAIT))) return -1;
    for (uint32_t i = 0; i < c->t.n; i++) {
        const struct agg_key *k = &c->t.keys[i];
        if (k->table != IT_WAIT) continue;
        struct r_idlewait *w = &r->iw[r->niw++];
        w->rank = (uint32_t)(k->b >> 32);
        w->cls = k->a;
        w->cls_name = agg_wait_class_names[k->a];
        w->blamed = (uint32_t)k->b;
        w->region = (uint32_t)k->c;
        w->fn = w->region == AGG_NONE ? "" : rep_region_name(r, w->region);
        w->ns = c->t.accs[i].sum;
        if (w->rank < s->nranks && row[w->rank] != AGG_NONE) w->share = rep_ratio(w->ns, r->idl[row[w->rank]].total);
    }
    REP_SORT(r->iw, r->niw, idlewait_order);
    /* the 10 longest gaps of the job: each reader kept its processes' 10 longest */
    uint32_t ngap = 0;
    for (size_t i = 0; i < s->nrec; i++) ngap += agg_rec(s, i)[0] == REC_GAP;
    struct r_idlegap *all = calloc(ngap + 1, sizeof(*all));
    if (!all) return -1;
    ngap = 0;
    for (size_t i = 0; i < s->nrec; i++) {
        const uint64_t *p = agg_rec(s, i);
        if (p[0] != REC_GAP) continue;
        struct r_idlegap *g = &all[ngap++];
        g->rank = (uint32_t)(p[1] >> 32);
        g->node = (uint32_t)p[1];
        g->start = p[2];
        g->end = p[3];
        g->dur = p[3] - p[2];
        for (int k = 0; k < AGG_IDLE_NCAUSES; k++) g->ns[k] = p[4 + k];
    }
    REP_SORT(all, ngap, idlegap_order);
    r->nig = ngap < 10 ? ngap : 10;
    if (!REP_ALLOC(r, r->ig, r->nig)) {
        free(all);
        return -1;
    }
    for (uint32_t i = 0; i < r->nig; i++) {
        r->ig[i] = all[i];
        gap_cause(c, &r->ig[i]);
    }
    free(all);
    return 0;
}

int agg_waits_build(struct agg_report *r, const struct agg_stats *s) {
    struct wctx c = {.r = r, .s = s};
    int ret = -1;
    if (agg_stats_init(&c.t, 1, 0, 0) != 0) return -1;
    c.unc = calloc(s->nranks + 1, sizeof(uint64_t));
    if (!c.unc) goto out;
    for (uint32_t q = 0; q < s->nranks; q++) {
        const struct agg_rank *x = &s->ranks[q];
        double u = x->noffsets ? fmax(sd_of(x->off_sd0), sd_of(x->off_sd1)) : 0;
        c.unc[q] = (uint64_t)ceil(u);
    }
    if (compute(&c) != 0) goto out;
    if (rows(&c, WT_CLASS, &r->wc, &r->nwc) || rows(&c, WT_RANK, &r->wr, &r->nwr) || rows(&c, WT_FN, &r->wf, &r->nwf) ||
        rows(&c, WT_COMM, &r->wm, &r->nwm) || rows(&c, WT_PAIR, &r->wp, &r->nwp))
        goto out;
    for (uint32_t i = 0; i < r->nwc; i++) {
        r->w_total += r->wc[i].ns;
        r->w_below += r->wc[i].ns_below;
        r->w_nbelow += r->wc[i].n_below;
    }
    ret = idle_rows(&c);
    if (!ret) agg_findings_build(r, s);
out:
    free(c.unc);
    free(c.w);
    agg_stats_free(&c.t);
    return ret;
}
