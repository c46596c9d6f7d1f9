/* SPDX-License-Identifier: MIT */
/* Writing a device stream's operations: the lanes (locations) an operation's events go to, and
 * the direct harvest of an in-order immediate list alone on its stream, which writes its
 * operations from its inbox as they complete, with no record in between. Below zc_ze_drain.c,
 * which orders records and calls both. */
#include "zc_ze_inbox.h"

#include <stdio.h>

atomic_uint_fast64_t zc_ze_records_dropped;

/* ---------------------------------------------------------------- lanes */
/* The location a record is written to: the first lane of its engine's locations that is free
 * at its start. Offloaded copies (ZC_ENG_COPY) get locations of their own, named after the
 * stream and the copy engine group: the driver picks the engine inside that group and says not
 * which, and a location per stream (not one per copy engine) keeps every location's records in
 * start order, the order this stream writes them in. */
static struct zc_loc *lane_for(struct zc_stream *s, uint8_t eng, uint64_t start, uint64_t end) {
    struct zc_lanes *ln = &s->lanes[eng < ZC_NENG ? eng : ZC_ENG_LIST];
    uint32_t best = UINT32_MAX;
    for (uint32_t i = 0; i < ln->n; i++)
        if (ln->end[i] <= start) {
            best = i;
            break;
        }
    if (best == UINT32_MAX && ln->n < ZC_ZE_MAX_LANES) {
        char base[96], name[112];
        if (ln == &s->lanes[ZC_ENG_COPY])
            snprintf(base, sizeof(base), "%s copy engine (group %d)", s->name, s->dev->copy_ordinal);
        else snprintf(base, sizeof(base), "%s", s->name);
        if (ln->n == 0) snprintf(name, sizeof(name), "%s", base);
        else snprintf(name, sizeof(name), "%s/%u", base, ln->n);
        /* overflow lanes only exist while operations overlap: small buffers */
        struct zc_loc *l = zc_loc_new_cap(ZC_LOC_DEVICE, s->group, name, ln->n ? 4096 : 0);
        if (l) {
            best = ln->n;
            ln->loc[ln->n++] = l;
        }
    }
    if (best == UINT32_MAX) { /* all lanes busy: the one that frees first (its location clamps) */
        if (ln->n == 0) return NULL;
        best = 0;
        for (uint32_t i = 1; i < ln->n; i++)
            if (ln->end[i] < ln->end[best]) best = i;
    }
    ln->end[best] = end > ln->end[best] ? end : ln->end[best];
    return ln->loc[best];
}

/* The lane an operation starting at start goes to: the first lane when it is free (always, for
 * operations that do not overlap: an in-order list's), else lane_for's search. */
static inline struct zc_loc *lane_at(struct zc_stream *s, uint8_t eng, uint64_t start, uint64_t end) {
    struct zc_lanes *ln = &s->lanes[eng < ZC_NENG ? eng : ZC_ENG_LIST];
    if (__builtin_expect(ln->n == 0 || ln->end[0] > start, 0)) return lane_for(s, eng, start, end);
    if (end > ln->end[0]) ln->end[0] = end;
    return ln->loc[0];
}

static inline __attribute__((always_inline)) bool write_op(struct zc_stream *s, const struct zc_opdesc *op, uint64_t start, uint64_t end) {
    struct zc_loc *l = lane_at(s, op->engine, start, end);
    if (!l) { /* no buffer could be allocated for the stream */
        zc_loc_lost(1);
        return false;
    }
    /* written in place where the buffer has room for the most an operation writes (6), else
     * staged and put (the put that fills the buffer hands it to the writer) */
    struct zc_ev ev[6];
    zc_loc_lock(l);
    struct zc_ev *d = __builtin_expect(l->n + 6 <= l->lim, 1) ? &l->buf[l->n] : ev;
    size_t n = 0;
    d[n++] = (struct zc_ev){start, ZC_EV_ENTER, op->region, 0, 0, 0};
    if (op->callsite) d[n++] = (struct zc_ev){start, ZC_EV_PARAM_U64, zc_param_callsite, op->callsite, 0, 0};
    if (op->kind == ZC_OP_COPY && op->dir != ZC_DIR_OTHER && op->dir != ZC_DIR_NONE) {
        /* seen from the device stream: host-to-device data is a get from the host thread,
         * device-to-host a put to it, device-to-device a get from the stream itself */
        uint32_t remote = op->dir == ZC_DIR_D2D ? l->comm_rank : op->remote;
        uint64_t match = ++l->rma_match;
        uint32_t type = op->dir == ZC_DIR_D2H ? ZC_EV_RMA_PUT : ZC_EV_RMA_GET;
        d[n++] = (struct zc_ev){start, type, 0, op->bytes, ((uint64_t)remote << 32) | (match & 0xffffffffu), 0};
        d[n++] = (struct zc_ev){end, ZC_EV_RMA_COMPLETE, 0, 0, match & 0xffffffffu, 0};
    }
    d[n++] = (struct zc_ev){end, ZC_EV_LEAVE, op->region, 0, 0, 0};
    if (d != ev) zc_loc_publish(l, l->n + n);
    else zc_loc_put(l, ev, n);
    zc_loc_unlock(l);
    return true;
}

bool zc_ze_write_op(struct zc_stream *s, const struct zc_opdesc *op, uint64_t start, uint64_t end) {
    return write_op(s, op, start, end);
}


/* A long direct harvest gives the stream's lock back this often (Execute pushes onto the stream),
 * and gives this many events back at a time. */
#define ZC_DIRECT_CHUNK 128

/* ---------------------------------------------------------------- direct harvest
 * The common case, an in-order immediate list alone on its engine's stream (SYCL's and
 * PyTorch's queues): with no record pending on the stream, its operations complete and are
 * written in append order, so a pass reads the inbox's entries where they are, oldest first,
 * and writes each completed one at once: no record, no pending list, no heap; one clock lock
 * and one list lock (the events handed back) per chunk instead of per operation. The first
 * incomplete entry and those after it stay in the inbox for the next pass: they are the
 * stream's pending operations (streams_idle and drain_all count them there, and every other
 * drain pulls them into records first). An entry with a prepared record (an app event
 * re-signalled), another inbox or a record pushed meanwhile end the direct part: the rest
 * becomes records as before. */

/* The stream's only inbox, where the direct harvest applies (locks held), else NULL. */
static struct zc_inbox *direct_inbox(const struct zc_stream *s) {
    struct zc_inbox *ib = s->inboxes;
    if (!ib || ib->next || s->head || s->ndone || s->held || s->dev->host_anchored || !zc_ze_dev_on(s->dev) ||
        !zc_ze_real.ze_event.pfnQueryKernelTimestamp)
        return NULL;
    return ib->list && ib->list->immediate && ib->list->in_order ? ib : NULL;
}

/* The entry take_next would return, not taken. */
static inline const struct zc_inbox_entry *inbox_peek(const struct zc_inbox *ib, const struct zc_inbox_take *t) {
    if (t->head == t->tail) return NULL;
    return ib->ci == ZC_INBOX_BLOCK ? &ib->cb->next->e[0] : &ib->cb->e[ib->ci];
}

/* How a chunk of the direct harvest ended. */
enum zc_direct { ZC_DIRECT_WAITS /* the next entry is incomplete, or none is left */, ZC_DIRECT_MORE /* a full chunk */,
                 ZC_DIRECT_RECORDS /* the rest becomes records */ };

/* One chunk of the direct harvest (locks held). */
static enum zc_direct direct_chunk(struct zc_stream *s, struct zc_inbox *ib, struct zc_tickconv *tc) {
    struct zc_list *l = ib->list;
    ze_event_handle_t done[ZC_DIRECT_CHUNK];
    uint32_t n = 0;
    uint64_t end_max = l->done_end;
    enum zc_direct how = ZC_DIRECT_MORE;
    struct zc_inbox_take t;
    zc_ze_inbox_take_begin(ib, &t);
    struct zc_ze_clockconv cv;
    zc_ze_clockconv_begin(&cv, s->dev);
    for (const struct zc_inbox_entry *e; n < ZC_DIRECT_CHUNK;) {
        if (!(e = inbox_peek(ib, &t))) {
            how = ZC_DIRECT_WAITS;
            break;
        }
        if (e->rec) { /* a prepared record: it and what follows go the records' way */
            how = ZC_DIRECT_RECORDS;
            break;
        }
        ze_kernel_timestamp_result_t ts;
        ze_result_t q = zc_ze_real.ze_event.pfnQueryKernelTimestamp(e->inj, &ts);
        if (q != ZE_RESULT_SUCCESS) {
            /* a failed query stops the device's timing: the records' way drops what is pending */
            how = q == ZE_RESULT_NOT_READY || !zc_ze_device_off(s->dev, "zeEventQueryKernelTimestamp", q)
                      ? ZC_DIRECT_WAITS
                      : ZC_DIRECT_RECORDS;
            break;
        }
        uint64_t start, end;
        zc_ze_clockconv(&cv, ts.global.kernelStart, ts.global.kernelEnd, zc_tickconv(tc, e->submit), &start, &end);
        if (!write_op(s, &e->op, start, end)) atomic_fetch_add(&zc_ze_records_dropped, 1);
        if (end > end_max) end_max = end;
        done[n++] = e->inj;
        zc_ze_inbox_take_next(ib, &t);
    }
    zc_ze_clockconv_end(&cv);
    zc_ze_inbox_take_end(ib, &t);
    l->done_end = end_max; /* the floor of what the list runs next (pending_floor) */
    s->harvested += n;
    if (n) zc_ze_list_events_done(l, done, n, t.head);
    return how;
}

bool zc_ze_direct_harvest(struct zc_stream *s, struct zc_tickconv *tc) {
    for (struct zc_inbox *ib; (ib = direct_inbox(s));) {
        enum zc_direct how = direct_chunk(s, ib, tc);
        if (how != ZC_DIRECT_MORE) return how == ZC_DIRECT_WAITS;
        /* Execute pushes onto this stream: give the lock back between chunks */
        pthread_mutex_unlock(&s->lock);
        pthread_mutex_lock(&s->lock);
    }
    return false;
}
