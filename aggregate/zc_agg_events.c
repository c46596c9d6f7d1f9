/* SPDX-License-Identifier: MIT */
/* The event callbacks of one process's time-merged read: regions open and close on each
 * location's stack, and a closed region becomes a kernel, transfer, barrier, MPI call or host API
 * call in the statistics; MPI and RMA records add their bytes to the open region; callsite ids
 * link a host Append to its device record (launch latency); measurement on/off windows (A18). */
#include "zc_agg_read.h"

#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- every event */
static struct lst *loc_of(struct pctx *c, uint64_t id) {
    if (c->last_hit < c->nls && c->d->locs[c->ls[c->last_hit].li].id == id) return &c->ls[c->last_hit];
    size_t m = c->lcap - 1;
    for (size_t j = agg_hash64(id) & m;; j = (j + 1) & m) {
        if (c->lval[j] == AGG_NONE) return NULL;
        if (c->lkey[j] == id) {
            c->last_hit = c->lval[j];
            return &c->ls[c->lval[j]];
        }
    }
}

/* The first reason is kept; the read stops at the end of the batch and names the file. */
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

/* Every record but Enter, Leave and Metric: a Metric waiting before it had no Enter/Leave (A19
 * broken). */
struct lst *agg_ev_record(struct pctx *c, OTF2_LocationRef loc, uint64_t t) {
    struct lst *l = ev(c, loc, t);
    if (l && __builtin_expect(l->met && l->met->pending, 0)) agg_metric_orphan(l);
    return l;
}

/* ---------------------------------------------------------------- Enter */
/* room for one more frame; NULL, or why not */
static const char *frame_room(struct lst *l) {
    if (l->depth < l->cap) return NULL;
    uint32_t nc = l->cap ? 2 * l->cap : 8;
    if (nc > (1u << 20)) return "regions nested more than a million deep";
    struct frame *f = realloc(l->fr, nc * sizeof(*f));
    if (!f) return "out of memory";
    l->fr = f;
    l->cap = nc;
    return NULL;
}

static OTF2_CallbackCode enter(struct pctx *c, struct lst *l, uint64_t t, uint32_t region, uint32_t mclass) {
    if (region >= c->d->nregions) return stop(c, l, "Enter of an undefined region");
    const char *why = frame_room(l);
    if (why) return stop(c, l, why);
    if (mclass != AGG_NONE && agg_metric_push(c, l, mclass) != 0) return stop(c, l, "out of memory");
    l->fr[l->depth++] = (struct frame){region, AGG_NONE, t, 0, 0, mclass};
    if (!l->stream && !l->in_mpi && c->d->regions[region].host_class == AGG_H_MPI) {
        agg_host_advance(c, t);
        l->in_mpi = true;
        c->h_mpi++;
        agg_idle_mpi(c, l, t, true);
    }
    if (!l->stream && c->d->regions[region].l0_sync) {
        agg_host_advance(c, t);
        l->in_sync++;
        c->h_sync++;
    }
    if (l->stream && l->dev != AGG_NONE) {
        uint8_t k = c->d->regions[region].dev_class;
        if (k != AGG_D_BARRIER) agg_dev_change(c, &c->devs[l->dev], t, k != AGG_D_KERNEL, +1);
    }
    return OTF2_CALLBACK_SUCCESS;
}

/* ---------------------------------------------------------------- Leave */
static void kernel_done(struct pctx *c, struct lst *l, const struct frame *f, uint64_t dur) {
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

/* a transfer's duration and bytes; its bandwidth into the sketches when it has both */
static void xfer_add(struct agg_acc *a, uint64_t dur, uint64_t bytes, uint64_t bw) {
    agg_acc_add(a, dur);
    a->bytes += bytes;
    if (dur && bytes) {
        if (!a->sk) a->sk = calloc(1, sizeof(*a->sk));
        if (a->sk) agg_sketch_add(a->sk, bw, 1);
    }
}

static void xfer_done(struct pctx *c, const struct frame *f, uint64_t dur) {
    uint32_t x = c->d->regions[f->region].xfer;
    uint64_t bw = dur ? (uint64_t)((unsigned __int128)f->bytes * 1000000000u / dur) : 0;
    struct agg_acc *a = agg_stats_get(c->s, T_XFER, x, 0, 0);
    if (a) xfer_add(a, dur, f->bytes, bw);
    if ((a = agg_stats_get(c->s, T_XFER_SIZE, x, agg_size_class(f->bytes), 0))) xfer_add(a, dur, f->bytes, bw);
    if ((a = agg_stats_get(c->s, T_XFER_RANK, x, c->rank, 0))) {
        agg_acc_add(a, dur);
        a->bytes += f->bytes;
    }
}

/* an operation on a stream; its category in the timeline */
static const char *device_done(struct pctx *c, struct lst *l, const struct frame *f, uint64_t t, uint64_t dur) {
    const struct agg_region *R = &c->d->regions[f->region];
    const char *cat;
    struct agg_acc *a;
    switch (R->dev_class) {
    case AGG_D_KERNEL:
        kernel_done(c, l, f, dur);
        cat = "kernel";
        break;
    case AGG_D_COPY:
    case AGG_D_IMAGE:
    case AGG_D_FILL:
        xfer_done(c, f, dur);
        cat = R->dev_class == AGG_D_FILL ? "fill" : "transfer";
        break;
    default:
        if ((a = agg_stats_get(c->s, T_BARRIER, f->region, 0, 0))) agg_acc_add(a, dur);
        cat = "barrier";
        break;
    }
    if (l->dev != AGG_NONE && R->dev_class != AGG_D_BARRIER)
        agg_dev_change(c, &c->devs[l->dev], t, R->dev_class != AGG_D_KERNEL, -1);
    return cat;
}

static void mpi_done(struct pctx *c, struct lst *l, const struct frame *f, uint64_t dur) {
    struct agg_acc *a;
    if ((a = agg_stats_get(c->s, T_MPI, f->region, 0, 0))) {
        agg_acc_add(a, dur);
        a->bytes += f->bytes;
    }
    if ((a = agg_stats_get(c->s, T_MPI_RANK, f->region, c->rank, 0))) {
        agg_acc_add(a, dur);
        a->bytes += f->bytes;
    }
    if (f->comm != AGG_NONE && (a = agg_stats_get(c->s, T_COLL, f->region, f->comm, 0))) {
        agg_acc_add(a, dur);
        a->bytes += f->bytes;
    }
    /* MPI calls do not nest; an outer MPI region would count twice */
    bool outer = true;
    for (uint32_t k = 0; k < l->depth; k++)
        if (c->d->regions[l->fr[k].region].host_class == AGG_H_MPI) outer = false;
    if (outer) c->mpi_ns += dur;
}

/* a region on a thread; its category in the timeline */
static const char *host_done(struct pctx *c, struct lst *l, const struct frame *f, uint64_t dur) {
    uint8_t hc = c->d->regions[f->region].host_class;
    struct agg_acc *a;
    if (hc == AGG_H_MPI) {
        mpi_done(c, l, f, dur);
        return "MPI";
    }
    if ((a = agg_stats_get(c->s, T_API, f->region, 0, 0))) agg_acc_add(a, dur);
    return hc == AGG_H_L0 ? "Level Zero" : hc == AGG_H_MEASUREMENT ? "zecoll" : "host";
}

/* A14 broken (a Leave that is not of the innermost open region): counted, and the region closed
 * if it is open further down (the ones above it are dropped); false when it is not open at all. */
static bool leave_to(struct lst *l, uint32_t region) {
    if (l->depth > 0 && l->fr[l->depth - 1].region == region) return true;
    l->badleave++;
    uint32_t k = l->depth;
    while (k > 0 && l->fr[k - 1].region != region) k--;
    if (k == 0) return false;
    l->depth = k;
    return true;
}

static OTF2_CallbackCode leave(struct pctx *c, struct lst *l, uint64_t t, uint32_t region, uint32_t mclass) {
    if (!leave_to(l, region)) return OTF2_CALLBACK_SUCCESS;
    struct frame f = l->fr[--l->depth];
    if (l->in_mpi) agg_host_mpi_update(c, l, t);
    if (!l->stream && l->in_sync && c->d->regions[f.region].l0_sync) {
        agg_host_advance(c, t);
        l->in_sync--;
        c->h_sync--;
    }
    if (l->npend && !l->in_mpi) agg_comm_leave(c, l, t);
    uint64_t dur = t >= f.t ? t - f.t : 0;
    if (l->met) agg_metric_region(c, l, &f, mclass, dur);
    const char *cat = l->stream ? device_done(c, l, &f, t, dur) : host_done(c, l, &f, dur);
    if (c->tl) agg_timeline_region(c->tl, l->li, f.region, f.t, t, f.bytes, f.cs, cat);
    return OTF2_CALLBACK_SUCCESS;
}

/* Enter and Leave: the Metric right before one at its time belongs to it (A19). Inlined into
 * both callbacks: it runs for most records. */
static inline __attribute__((always_inline)) OTF2_CallbackCode region_event(void *ud, OTF2_LocationRef loc, uint64_t t, OTF2_RegionRef region, bool in) {
    struct pctx *c = ud;
    struct lst *l = ev(c, loc, t);
    if (!l) return OTF2_CALLBACK_INTERRUPT;
    uint32_t mclass = agg_metric_take(l, t);
    return in ? enter(c, l, t, region, mclass) : leave(c, l, t, region, mclass);
}

static OTF2_CallbackCode cb_enter(OTF2_LocationRef loc, OTF2_TimeStamp t, void *ud, OTF2_AttributeList *al,
                                  OTF2_RegionRef region) {
    return region_event(ud, loc, t, region, true);
}

static OTF2_CallbackCode cb_leave(OTF2_LocationRef loc, OTF2_TimeStamp t, void *ud, OTF2_AttributeList *al,
                                  OTF2_RegionRef region) {
    return region_event(ud, loc, t, region, false);
}

/* ---------------------------------------------------------------- callsites (A16) */
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

/* A callsite id: the host thread in its upper 24 bits, a counter that grows with time below. */
#define CS_COUNTER(cs) ((cs) & ((UINT64_C(1) << 40) - 1))

/* A host Append: its device record may have come first (clock conversion error); else it waits.
 * The thread's highest counter tells later device records of an older id apart: re-executions. */
static void append_seen(struct pctx *c, const struct frame *f, uint64_t v) {
    size_t j = agg_map_find(&c->early, v);
    if (j != SIZE_MAX) {
        uint32_t q = (uint32_t)(c->early.v1[j] & 0xffffffffu), r = (uint32_t)(c->early.v1[j] >> 32);
        latency(c, q, r, c->early.v0[j], f->t);
        agg_map_del(&c->early, j);
    } else {
        agg_map_put(&c->pend, v, f->t, 0);
    }
    size_t w = agg_map_find(&c->wmark, v >> 40);
    if (w == SIZE_MAX) agg_map_put(&c->wmark, v >> 40, CS_COUNTER(v), 0);
    else if (CS_COUNTER(v) > c->wmark.v0[w]) c->wmark.v0[w] = CS_COUNTER(v);
}

/* A device record: its Append's wait ends; an id already seen and done is a regular list
 * executed again (A16); else it waits for its Append. */
static void record_seen(struct pctx *c, struct lst *l, const struct frame *f, uint64_t v) {
    size_t j = agg_map_find(&c->pend, v);
    uint32_t queue = c->d->locs[l->li].queue;
    if (j != SIZE_MAX) {
        latency(c, queue, f->region, f->t, c->pend.v0[j]);
        agg_map_del(&c->pend, j);
        return;
    }
    size_t w = agg_map_find(&c->wmark, v >> 40);
    if (w != SIZE_MAX && CS_COUNTER(v) <= c->wmark.v0[w]) c->cs_repeat++;
    else agg_map_put(&c->early, v, f->t, (uint64_t)f->region << 32 | queue);
}

/* A16: the host Append's callsite id inside its region, a device record's right after its Enter */
static OTF2_CallbackCode cb_param(OTF2_LocationRef loc, OTF2_TimeStamp t, void *ud, OTF2_AttributeList *al,
                                  OTF2_ParameterRef p, uint64_t v) {
    struct pctx *c = ud;
    struct lst *l = agg_ev_record(c, loc, t);
    if (!l) return OTF2_CALLBACK_INTERRUPT;
    if (p != c->d->callsite_param || l->depth == 0) return OTF2_CALLBACK_SUCCESS;
    struct frame *f = &l->fr[l->depth - 1];
    f->cs = v;
    if (!l->stream) append_seen(c, f, v);
    else record_seen(c, l, f, v);
    return OTF2_CALLBACK_SUCCESS;
}

/* ---------------------------------------------------------------- bytes of MPI and RMA */
static OTF2_CallbackCode bytes_of(void *ud, OTF2_LocationRef loc, uint64_t t, uint64_t bytes) {
    struct lst *l = agg_ev_record(ud, loc, t);
    if (!l) return OTF2_CALLBACK_INTERRUPT;
    if (l->depth) l->fr[l->depth - 1].bytes += bytes;
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode cb_rma(OTF2_LocationRef loc, OTF2_TimeStamp t, void *ud, OTF2_AttributeList *al,
                                OTF2_RmaWinRef win, uint32_t remote, uint64_t bytes, uint64_t match) {
    return bytes_of(ud, loc, t, bytes);
}

/* ---------------------------------------------------------------- measurement on/off (A18) */
void agg_end_off(struct pctx *c, struct lst *l, uint64_t t) {
    uint64_t dur = t > l->off_start ? t - l->off_start : 0;
    l->off = false;
    l->offns += dur;
    if (c->tl) agg_timeline_region(c->tl, l->li, AGG_NONE, l->off_start, t, 0, 0, "measurement off");
    if (l->stream && l->dev != AGG_NONE) {
        struct dst *v = &c->devs[l->dev];
        agg_dev_advance(c, v, t);
        if (v->off > 0) v->off--;
    }
    if (!l->stream) {
        agg_host_advance(c, t);
        if (c->h_off > 0) c->h_off--;
    }
}

static void start_off(struct pctx *c, struct lst *l, uint64_t t) {
    l->off = true;
    l->off_start = t;
    l->offcount++;
    if (l->stream && l->dev != AGG_NONE) {
        struct dst *v = &c->devs[l->dev];
        agg_dev_advance(c, v, t);
        v->off++;
        v->gap_off = true;
    }
    if (!l->stream) {
        agg_host_advance(c, t);
        c->h_off++;
    }
}

static OTF2_CallbackCode cb_onoff(OTF2_LocationRef loc, OTF2_TimeStamp t, void *ud, OTF2_AttributeList *al,
                                  OTF2_MeasurementMode mode) {
    struct pctx *c = ud;
    struct lst *l = agg_ev_record(c, loc, t);
    if (!l) return OTF2_CALLBACK_INTERRUPT;
    if (mode == OTF2_MEASUREMENT_OFF && !l->off) start_off(c, l, t);
    else if (mode == OTF2_MEASUREMENT_ON && l->off) agg_end_off(c, l, t);
    return OTF2_CALLBACK_SUCCESS;
}

/* ---------------------------------------------------------------- the others */
static OTF2_CallbackCode cb_metric(OTF2_LocationRef loc, OTF2_TimeStamp t, void *ud, OTF2_AttributeList *al,
                                   OTF2_MetricRef mref, uint8_t n, const OTF2_Type *types, const OTF2_MetricValue *vals) {
    struct pctx *c = ud;
    struct lst *l = ev(c, loc, t);
    if (!l) return OTF2_CALLBACK_INTERRUPT;
    return agg_metric_sample(c, l, t, mref, n, types, vals) == 0 ? OTF2_CALLBACK_SUCCESS : stop(c, l, "out of memory");
}

/* records that only count (and end a Metric's wait) */
static OTF2_CallbackCode seen(void *ud, OTF2_LocationRef loc, uint64_t t) {
    return agg_ev_record(ud, loc, t) ? OTF2_CALLBACK_SUCCESS : OTF2_CALLBACK_INTERRUPT;
}

static OTF2_CallbackCode cb_req(OTF2_LocationRef loc, OTF2_TimeStamp t, void *ud, OTF2_AttributeList *al, uint64_t r) {
    return seen(ud, loc, t);
}

static OTF2_CallbackCode cb_plain(OTF2_LocationRef loc, OTF2_TimeStamp t, void *ud, OTF2_AttributeList *al) {
    return seen(ud, loc, t);
}

static OTF2_CallbackCode cb_rma_done(OTF2_LocationRef loc, OTF2_TimeStamp t, void *ud, OTF2_AttributeList *al,
                                     OTF2_RmaWinRef win, uint64_t match) {
    return seen(ud, loc, t);
}

static OTF2_CallbackCode cb_flush(OTF2_LocationRef loc, OTF2_TimeStamp t, void *ud, OTF2_AttributeList *al,
                                  OTF2_TimeStamp stop_t) {
    return seen(ud, loc, t);
}

static OTF2_CallbackCode cb_pint(OTF2_LocationRef loc, OTF2_TimeStamp t, void *ud, OTF2_AttributeList *al,
                                 OTF2_ParameterRef p, int64_t v) {
    return seen(ud, loc, t);
}

static OTF2_CallbackCode cb_pstr(OTF2_LocationRef loc, OTF2_TimeStamp t, void *ud, OTF2_AttributeList *al,
                                 OTF2_ParameterRef p, OTF2_StringRef v) {
    return seen(ud, loc, t);
}

OTF2_GlobalEvtReaderCallbacks *agg_event_callbacks(void) {
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
    OTF2_GlobalEvtReaderCallbacks_SetMpiIsendCompleteCallback(cb, cb_req);
    OTF2_GlobalEvtReaderCallbacks_SetMpiRequestTestCallback(cb, cb_req);
    OTF2_GlobalEvtReaderCallbacks_SetMpiRequestCancelledCallback(cb, cb_req);
    OTF2_GlobalEvtReaderCallbacks_SetMpiCollectiveBeginCallback(cb, cb_plain);
    OTF2_GlobalEvtReaderCallbacks_SetNonBlockingCollectiveRequestCallback(cb, cb_req);
    OTF2_GlobalEvtReaderCallbacks_SetMeasurementOnOffCallback(cb, cb_onoff);
    OTF2_GlobalEvtReaderCallbacks_SetMetricCallback(cb, cb_metric);
    OTF2_GlobalEvtReaderCallbacks_SetBufferFlushCallback(cb, cb_flush);
    OTF2_GlobalEvtReaderCallbacks_SetUnknownCallback(cb, cb_plain);
    agg_comm_callbacks(cb); /* messages and collectives */
    return cb;
}
