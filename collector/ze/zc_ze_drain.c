/* SPDX-License-Identifier: MIT */
/* Device records: from submission to the archive.
 *
 * Each stream (a command queue, or an engine for immediate lists) keeps its pending records in
 * submission order. A drain asks the driver which of them completed (their injected event, or
 * their execution's harvest buffer), converts their timestamps to host time and moves them to a
 * min-heap by start time. A completed record is written once no pending record could start
 * before it: every pending record starts after its own submission, so everything that starts
 * no later than the oldest pending submission is safe. Records that overlap in time (an
 * out-of-order list) go to extra lanes of the stream so Enter/Leave nest on every location.
 * An in-order immediate list alone on its stream skips all of that (the direct harvest, below):
 * its operations are written from its inbox as they complete, in append order.
 *
 * This is the per-queue ordering PTI-SDK issue #54 asks for: which host thread submitted or
 * drained a record does not matter.
 *
 * A record's end of life is here too, in one place (rec_done): written or dropped, what it held
 * goes back through zc_ze_records.c (its event to its list, its execution and the execution's
 * slot, the record itself). */
#include "zc_ze_inbox.h"
#include "zc_ze_pace.h"

#include "zc_sig.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct zc_stream *zc_ze_stream_new(struct zc_dev *d, struct zc_ctx *c, const char *what) {
    struct zc_stream *s = calloc(1, sizeof(*s));
    if (!s) return NULL;
    pthread_mutex_init(&s->lock, NULL);
    pthread_mutex_init(&s->drain_lock, NULL);
    s->dev = d;
    pthread_mutex_lock(&zc_ze.streams_lock);
    s->index = d->next_stream++;
    s->next_all = zc_ze.streams;
    zc_ze.streams = s;
    pthread_mutex_unlock(&zc_ze.streams_lock);
    s->group = zc_def_accel_group(d->def, c ? c->index : 0);
    snprintf(s->name, sizeof(s->name), "L0[%u:%u]", d->index, s->index);
    (void)what;
    zc_ze_bg_start();
    return s;
}

/* The streams: a list that only grows at its head (zc_ze_stream_new), so a walk from the head
 * taken here sees every stream created before. */
static struct zc_stream *streams_first(void) {
    pthread_mutex_lock(&zc_ze.streams_lock);
    struct zc_stream *first = zc_ze.streams;
    pthread_mutex_unlock(&zc_ze.streams_lock);
    return first;
}

/* ---------------------------------------------------------------- inboxes (immediate lists) */
struct zc_inbox *zc_ze_stream_inbox_open(struct zc_stream *s, struct zc_list *l) {
    struct zc_inbox *ib = zc_ze_inbox_new(l, s);
    if (!ib) return NULL;
    pthread_mutex_lock(&s->drain_lock);
    pthread_mutex_lock(&s->lock);
    ib->next = s->inboxes;
    s->inboxes = ib;
    pthread_mutex_unlock(&s->lock);
    pthread_mutex_unlock(&s->drain_lock);
    return ib;
}

static uint64_t stream_drain(struct zc_stream *s, unsigned give_up_after);
static void inbox_pull_locked(struct zc_stream *s, struct zc_tickconv *tc);

void zc_ze_stream_inbox_close(struct zc_inbox *ib) {
    struct zc_stream *s = ib->stream;
    stream_drain(s, 0);
    pthread_mutex_lock(&s->drain_lock);
    pthread_mutex_lock(&s->lock);
    struct zc_tickconv tc;
    zc_tickconv_begin(&tc);
    inbox_pull_locked(s, &tc); /* whatever came after that drain */
    for (struct zc_inbox **p = &s->inboxes; *p; p = &(*p)->next)
        if (*p == ib) {
            *p = ib->next;
            break;
        }
    pthread_mutex_unlock(&s->lock);
    pthread_mutex_unlock(&s->drain_lock);
    zc_ze_inbox_destroy(ib);
}

/* Pending records and the floor of their starts (stream locked). Written records must keep
 * their lanes in time order, so a completed record waits until no pending one can start before
 * it. A record starts no earlier than its submission; an operation of an in-order list also no
 * earlier than the end of the list's operation before it. So when the only pending records are
 * one in-order list's (an in-order immediate list per engine, as SYCL and PyTorch submit), the
 * floor is the end of its last drained operation, and completed records are written as they
 * come, however far the application runs ahead of the device. */
static void pend_enter(struct zc_stream *s, struct zc_rec *r) {
    struct zc_list *l = r->list;
    if (l && l->immediate && l->in_order) {
        r->pend = ZC_PEND_INORDER;
        if (l->npend++ == 0) s->nlists++;
    } else {
        r->pend = ZC_PEND_OTHER;
        s->nother++;
    }
}

static void pend_leave(struct zc_stream *s, struct zc_rec *r) {
    if (r->pend == ZC_PEND_INORDER) {
        struct zc_list *l = r->list;
        /* (a device placed from host observations has its records' times placed later: held) */
        if (r->state == ZC_REC_DONE && !s->dev->host_anchored && r->end_ns > l->done_end) l->done_end = r->end_ns;
        if (--l->npend == 0) s->nlists--;
    } else if (r->pend == ZC_PEND_OTHER) {
        s->nother--;
    }
    r->pend = ZC_PEND_NONE;
}

/* The list is going away: its pending records count as anybody's (stream locked). */
static void pend_detach(struct zc_stream *s, struct zc_rec *r) {
    if (r->pend != ZC_PEND_INORDER) return;
    pend_leave(s, r);
    r->pend = ZC_PEND_OTHER;
    s->nother++;
}

static uint64_t pending_floor(const struct zc_stream *s) {
    if (!s->head) return UINT64_MAX;
    uint64_t w = s->head->submit_ns;
    if (s->nother == 0 && s->nlists == 1 && s->head->pend == ZC_PEND_INORDER && s->head->list->done_end > w)
        w = s->head->list->done_end;
    return w;
}

/* Entries become records in the stream's pending list, kept in submission order (one list's
 * entries are; the lists of one engine interleave). drain_lock and lock held. */
static void inbox_pull_locked(struct zc_stream *s, struct zc_tickconv *tc) {
    for (struct zc_inbox *ib = s->inboxes; ib; ib = ib->next) {
        struct zc_inbox_take t;
        zc_ze_inbox_take_begin(ib, &t);
        const struct zc_inbox_entry *e;
        while ((e = zc_ze_inbox_take_next(ib, &t))) {
            struct zc_rec *r = e->rec;
            if (!r) {
                r = zc_ze_rec_new();
                if (!r) { /* out of memory: the operation goes unrecorded, its event stays out */
                    atomic_fetch_add(&zc_ze_records_dropped, 1);
                    zc_loc_lost(1);
                    continue;
                }
                r->op = e->op;
                r->inj = e->inj;
                r->own_inj = true;
                r->ctx = ib->list->ctx;
                r->list = ib->list;
                r->seq = t.head; /* its position: the list's append number */
            }
            r->submit_ns = zc_tickconv(tc, e->submit);
            r->stream = s;
            r->state = ZC_REC_PENDING;
            /* insert after the last record submitted no later */
            struct zc_rec *after = s->tail;
            while (after && after->submit_ns > r->submit_ns) after = after->prev;
            r->prev = after;
            r->next = after ? after->next : s->head;
            if (r->next) r->next->prev = r;
            else s->tail = r;
            if (after) after->next = r;
            else s->head = r;
            s->npending++;
            pend_enter(s, r);
        }
        zc_ze_inbox_take_end(ib, &t);
    }
}

static bool inboxes_empty_locked(struct zc_stream *s) {
    for (struct zc_inbox *ib = s->inboxes; ib; ib = ib->next)
        if (!zc_ze_inbox_empty(ib)) return false;
    return true;
}

/* Entries in the stream's inboxes: operations not yet records (the direct harvest leaves the
 * incomplete ones there). */
static uint64_t inbox_entries_locked(struct zc_stream *s) {
    uint64_t n = 0;
    for (struct zc_inbox *ib = s->inboxes; ib; ib = ib->next)
        n += atomic_load_explicit(&ib->tail, memory_order_acquire) - atomic_load_explicit(&ib->head, memory_order_relaxed);
    return n;
}

/* An app that never synchronises would let records (and our events) pile up: past this many
 * pending records (~10 MB) a stream is drained every ZC_PUSH_DRAIN_EVERY pushes, which keeps
 * memory bounded at an amortised cost. Apps that synchronise never get here: their records are
 * collected at the synchronisation, where the app waits anyway. */
#define ZC_PUSH_DRAIN_ABOVE 65536
#define ZC_PUSH_DRAIN_EVERY 1024
/* ... and that drain stops after this many consecutive incomplete records: completions cluster
 * at the old end of the queue, and a full scan per drain would cost O(pending) per push */
#define ZC_PUSH_POLL_LIMIT 16

void zc_ze_stream_push(struct zc_stream *s, struct zc_rec *r) {
    r->next = NULL;
    zc_ze_stream_push_chain(s, r, 1);
}

/* One lock for an Execute's records, however many (a drainer polls the stream meanwhile). */
void zc_ze_stream_push_chain(struct zc_stream *s, struct zc_rec *first, uint64_t n) {
    pthread_mutex_lock(&s->lock);
    for (struct zc_rec *r = first, *next; r; r = next) {
        next = r->next;
        r->stream = s;
        r->state = ZC_REC_PENDING;
        r->next = NULL;
        r->prev = s->tail;
        if (s->tail) s->tail->next = r;
        else s->head = r;
        s->tail = r;
        s->npending++;
        pend_enter(s, r);
    }
    bool drain = false;
    if (s->npending > ZC_PUSH_DRAIN_ABOVE && (s->pushes_since_drain += n) >= ZC_PUSH_DRAIN_EVERY) {
        drain = true;
        s->pushes_since_drain = 0;
    }
    pthread_mutex_unlock(&s->lock);
    zc_ze_bg_poke();
    if (drain) stream_drain(s, ZC_PUSH_POLL_LIMIT);
}

/* ---------------------------------------------------------------- completion */
/* Whether a completion query answered (true: r is success or NOT_READY); otherwise the device's
 * timing stops. */
static inline bool answered(struct zc_rec *r, const char *call, ze_result_t q) {
    return q == ZE_RESULT_SUCCESS || q == ZE_RESULT_NOT_READY || !zc_ze_device_off(r->stream->dev, call, q);
}

/* cv: the drain's converter, begun here at the first conversion (*cv_on) and ended by the drain
 * at each chunk's end (it holds the device's clock lock: one lock and one rate per chunk). */
static bool rec_poll(struct zc_rec *r, struct zc_ze_clockconv *cv, bool *cv_on) {
    ze_kernel_timestamp_result_t ts;
    ze_result_t q;
    if (r->exec && r->exec->slot) {
        /* A record of a regular list's execution. Its times are in the harvest buffer once the
         * execution's post list (or harvest list) ran (`done`). Before that, or on copy engines
         * read from the host, our injected event holds them, but only once this execution's pre list has
         * cleared the previous execution's values (`started`): the next pre list clears them
         * again only after this post list signalled the gate, which it does after `done`. */
        struct zc_exec *x = r->exec;
        struct zc_slot *sl = x->slot;
        if (sl->buf && !x->done) {
            if ((q = zc_ze_real.ze_event.pfnQueryStatus(sl->done)) == ZE_RESULT_SUCCESS) x->done = true;
            else if (!answered(r, "zeEventQueryStatus", q)) return false;
        }
        if (sl->buf && x->done) {
            ts = sl->buf[r->slot];
        } else {
            /* a driver that cannot read our events from the host leaves it to the harvest, and
             * so does a copy-only list harvested on a compute engine (no `started`) */
            if (!zc_ze_real.ze_event.pfnQueryKernelTimestamp || !r->inj || !sl->started) return false;
            if (!x->started) {
                if ((q = zc_ze_real.ze_event.pfnQueryStatus(sl->started)) != ZE_RESULT_SUCCESS) {
                    answered(r, "zeEventQueryStatus", q);
                    return false;
                }
                x->started = true;
            }
            if ((q = zc_ze_real.ze_event.pfnQueryKernelTimestamp(r->inj, &ts)) != ZE_RESULT_SUCCESS) {
                answered(r, "zeEventQueryKernelTimestamp", q);
                return false;
            }
            /* if the buffer became complete meanwhile, it is authoritative */
            if (sl->buf && zc_ze_real.ze_event.pfnQueryStatus(sl->done) == ZE_RESULT_SUCCESS) {
                x->done = true;
                ts = sl->buf[r->slot];
            }
        }
    } else if (r->inj && zc_ze_real.ze_event.pfnQueryKernelTimestamp) {
        if ((q = zc_ze_real.ze_event.pfnQueryKernelTimestamp(r->inj, &ts)) != ZE_RESULT_SUCCESS) {
            answered(r, "zeEventQueryKernelTimestamp", q);
            return false;
        }
    } else {
        return false;
    }
    r->ts_start = ts.global.kernelStart;
    r->ts_end = ts.global.kernelEnd;
    struct zc_dev *d = r->stream->dev;
    if (__builtin_expect(d->host_anchored, 0)) {
        /* seen complete now: the bound on its end; placed once the clock settled (stream_drain) */
        uint64_t dur;
        r->seen_ns = zc_now();
        zc_ze_clock_observe(d, r->ts_start, r->ts_end, r->submit_ns, r->seen_ns, &r->s_rel, &dur);
        r->end_ns = dur; /* ticks until placed */
        return true;
    }
    if (!*cv_on) {
        zc_ze_clockconv_begin(cv, d);
        *cv_on = true;
    }
    zc_ze_clockconv(cv, r->ts_start, r->ts_end, r->submit_ns, &r->start_ns, &r->end_ns);
    return true;
}

/* ---------------------------------------------------------------- record completion */
/* A slot is reusable only after its post list ran (`done`): records may complete earlier, read
 * from our events directly, and reusing the slot then would let the old post list overwrite the
 * next execution's buffer and signal its `done`. Polls an execution whose records are complete;
 * frees it once its post list ran. */
static bool exec_try_finish(struct zc_exec *x) {
    if (!x->done && x->slot) {
        ze_result_t q = zc_ze_real.ze_event.pfnQueryStatus(x->slot->done);
        /* a query that fails will never say done: the device's timing stops, the slot is freed
         * (the gate event still orders the next execution on the device) */
        if (q == ZE_RESULT_SUCCESS || zc_ze_device_off(x->list ? x->list->dev : NULL, "zeEventQueryStatus", q) ||
            !zc_ze_dev_on(x->list ? x->list->dev : NULL))
            x->done = true;
    }
    if (!x->done && x->slot) return false;
    zc_ze_exec_release(x);
    return true;
}

/* One record of an execution completed (stream locked); true when the execution still waits for
 * its post list (then it goes to s->await). */
static bool exec_record_done(struct zc_exec *x) {
    if (--x->pending) return false;
    return !exec_try_finish(x);
}

/* A record is written or dropped (its stream locked): what it held goes back. */
static void rec_done(struct zc_rec *r) {
    if (r->exec) { /* dropped before completion: the execution will never be collected */
        struct zc_exec *x = r->exec;
        r->exec = NULL;
        if (--x->pending == 0) zc_ze_exec_release(x);
    } else if (r->own_inj && r->inj && r->list) {
        /* (list gone: its events were recycled or destroyed with it) */
        zc_ze_list_event_done(r->list, r);
    }
    zc_ze_rec_free(r);
}

/* ---------------------------------------------------------------- writing */
/* a completed record joins the stream's records to write in start order (zc_ze_order.c) */
static void done_push(struct zc_stream *s, struct zc_rec *r) {
    if (zc_ze_done_push(s, r)) return;
    atomic_fetch_add(&zc_ze_records_dropped, 1); /* out of memory */
    zc_loc_lost(1);
}

static void write_rec(struct zc_stream *s, struct zc_rec *r) {
    if (!zc_ze_write_op(s, &r->op, r->start_ns, r->end_ns)) atomic_fetch_add(&zc_ze_records_dropped, 1);
}

/* ---------------------------------------------------------------- drain */

/* Held records (a device without global timestamps) are placed once observations ZC_SETTLE_NS
 * newer than theirs narrowed the clock's interval, or all of them (all: the end, or a drop). */
static void held_release(struct zc_stream *s, bool all) {
    if (!s->held) return;
    uint64_t newest = zc_ze_clock_observed(s->dev);
    while (s->held && (all || s->held->seen_ns + ZC_SETTLE_NS <= newest)) {
        struct zc_rec *r = s->held;
        s->held = r->next;
        if (!s->held) s->held_tail = NULL;
        r->next = NULL;
        zc_ze_clock_place(s->dev, r->s_rel, r->end_ns, &r->start_ns, &r->end_ns);
        done_push(s, r);
    }
}

static void held_push(struct zc_stream *s, struct zc_rec *r) {
    r->next = NULL;
    if (s->held_tail) s->held_tail->next = r;
    else s->held = r;
    s->held_tail = r;
}

static void emit_locked(struct zc_stream *s) {
    uint64_t watermark = pending_floor(s);
    /* a held record starts after its submission, like a pending one */
    for (struct zc_rec *r = s->held; r; r = r->next)
        if (r->submit_ns < watermark) watermark = r->submit_ns;
    for (struct zc_rec *f; (f = zc_ze_done_first(s)) && f->start_ns <= watermark;) {
        struct zc_rec *r = zc_ze_done_take(s, f);
        write_rec(s, r);
        rec_done(r);
    }
}

static void await_push(struct zc_stream *s, struct zc_exec *x) {
    if (s->nawait == s->cap_await) {
        size_t ncap = s->cap_await ? 2 * s->cap_await : 16;
        struct zc_exec **n = realloc(s->await, ncap * sizeof(*n));
        if (!n) { /* keep the slot busy forever rather than reuse it too early */
            ZC_FAIL(ZC_F_DEVICE_TIMING, "out of memory tracking executions");
            return;
        }
        s->await = n;
        s->cap_await = ncap;
    }
    s->await[s->nawait++] = x;
}

/* The stream's device stopped timing (zc_ze_device_off): what is pending will not be read. Each
 * record is dropped and counted; its execution's slot is freed (the gate event keeps ordering
 * the next execution on the device, so the app's events stay correct). Locks held. */
static void drop_pending_locked(struct zc_stream *s) {
    for (struct zc_rec *r = s->head, *next; r; r = next) {
        next = r->next;
        s->head = next;
        if (next) next->prev = NULL;
        else s->tail = NULL;
        s->npending--;
        atomic_fetch_add(&zc_ze_records_dropped, 1);
        zc_ze_uevent_drop(r);
        rec_done(r);
    }
    for (size_t i = 0; i < s->nawait; i++) {
        struct zc_exec *x = s->await[i];
        x->done = true;
        exec_try_finish(x);
    }
    s->nawait = 0;
}

void zc_ze_stream_await(struct zc_stream *s, struct zc_exec *x) {
    pthread_mutex_lock(&s->lock);
    await_push(s, x);
    pthread_mutex_unlock(&s->lock);
    zc_ze_bg_poke();
}

static void await_poll(struct zc_stream *s) {
    size_t k = 0;
    for (size_t i = 0; i < s->nawait; i++)
        if (!exec_try_finish(s->await[i])) s->await[k++] = s->await[i];
    s->nawait = k;
}

/* Appends push onto the same stream: a long drain gives the lock back this often. The walk
 * position stays valid meanwhile because only drainers (serialised by drain_lock) unlink. */
#define ZC_DRAIN_CHUNK 128

/* give_up_after: stop after that many consecutive incomplete records (0 = scan everything).
 * Returns how many operations it collected. */
static uint64_t stream_drain(struct zc_stream *s, unsigned give_up_after) {
    if (!s) return 0;
    pthread_mutex_lock(&s->drain_lock);
    pthread_mutex_lock(&s->lock);
    bool work = s->head != NULL || !inboxes_empty_locked(s);
    pthread_mutex_unlock(&s->lock);
    /* a fresh anchor (when due) before converting: records between anchors interpolate */
    if (work) zc_ze_clock_anchor(s->dev, false);
    pthread_mutex_lock(&s->lock);
    uint64_t harvested = s->harvested;
    if (s->inboxes) {
        struct zc_tickconv tc;
        zc_tickconv_begin(&tc);
        if (!zc_ze_direct_harvest(s, &tc)) inbox_pull_locked(s, &tc);
    }
    if (!zc_ze_dev_on(s->dev)) drop_pending_locked(s);
    await_poll(s);
    struct zc_rec *r = s->head;
    unsigned misses = 0, polled = 0;
    struct zc_ze_clockconv cv;
    bool cv_on = false;
    while (r) {
        if (++polled % ZC_DRAIN_CHUNK == 0) {
            if (cv_on) zc_ze_clockconv_end(&cv);
            cv_on = false;
            pthread_mutex_unlock(&s->lock);
            pthread_mutex_lock(&s->lock);
        }
        struct zc_rec *next = r->next;
        if (!rec_poll(r, &cv, &cv_on)) {
            if (!zc_ze_dev_on(s->dev)) { /* a query failed: nothing more will be read here */
                drop_pending_locked(s);
                break;
            }
            if (give_up_after && ++misses >= give_up_after) break;
        } else {
            misses = 0;
            s->harvested++;
            if (r->prev) r->prev->next = r->next;
            else s->head = r->next;
            if (r->next) r->next->prev = r->prev;
            else s->tail = r->prev;
            s->npending--;
            r->state = ZC_REC_DONE;
            pend_leave(s, r);
            zc_ze_uevent_complete(r);
            /* the execution's helper slot is free once its records completed, even if they wait
             * here for earlier submissions before being written */
            if (r->exec) {
                struct zc_exec *x = r->exec;
                r->exec = NULL;
                if (exec_record_done(x)) await_push(s, x);
            }
            if (__builtin_expect(s->dev->host_anchored, 0)) held_push(s, r);
            else done_push(s, r);
        }
        r = next;
    }
    if (cv_on) zc_ze_clockconv_end(&cv);
    held_release(s, false);
    emit_locked(s);
    harvested = s->harvested - harvested;
    pthread_mutex_unlock(&s->lock);
    pthread_mutex_unlock(&s->drain_lock);
    zc_ze_rec_release_flush();
    return harvested;
}

void zc_ze_stream_drain(struct zc_stream *s) { stream_drain(s, 0); }
void zc_ze_stream_drain_some(struct zc_stream *s, unsigned give_up_after) { stream_drain(s, give_up_after); }

/* What has completed on every stream, stopping at each stream's first incomplete record (an
 * Execute waiting for a helper slot: a queue's executions complete in order, the oldest first,
 * and polling records that have not completed costs driver calls). */
void zc_ze_drain_completed(void) {
    struct zc_stream *first = streams_first();
    for (struct zc_stream *s = first; s; s = s->next_all) stream_drain(s, 1);
}

/* ---------------------------------------------------------------- background drainer */
static pthread_once_t bg_once = PTHREAD_ONCE_INIT;
static pthread_t bg_thread;
static bool bg_running;
static atomic_bool bg_stop;
static pthread_mutex_t bg_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t bg_cv = PTHREAD_COND_INITIALIZER;

/* Parked, the drainer still looks once in this long (an idle process: one wake-up a second). */
#define ZC_BG_PARK_MS 1000u
_Alignas(64) atomic_uint zc_ze_bg_parked;
/* Raised by a producer whose inbox piles up (zc_ze_bg_hurry), lowered by the drainer's next pass;
 * a line of its own (the Append path reads zc_ze_bg_parked's). */
static _Alignas(64) atomic_uint bg_hurried;

/* While busy, the interval stretches (zc_ze_pace.h); an inbox that piles up past
 * ZC_INBOX_HURRY_ABOVE entries hurries the drainer back to its shortest. Synchronisation points
 * never wait for the drainer: they collect what completed themselves (zc_ze_sync.c), as does
 * finalize. */

static bool streams_idle(void) {
    for (struct zc_stream *s = streams_first(); s; s = s->next_all) {
        pthread_mutex_lock(&s->lock);
        bool work = s->head || s->nawait || s->held || !inboxes_empty_locked(s);
        pthread_mutex_unlock(&s->lock);
        if (work) return false;
    }
    return true;
}

static void bg_wait_locked(uint64_t ns) {
    struct timespec dl;
    clock_gettime(CLOCK_REALTIME, &dl);
    ns += (uint64_t)dl.tv_nsec;
    dl.tv_sec += (time_t)(ns / 1000000000u);
    dl.tv_nsec = (long)(ns % 1000000000u);
    pthread_cond_timedwait(&bg_cv, &bg_lock, &dl);
}

/* While some stream holds records (completed or not): a pass every interval, DRAIN_INTERVAL_US
 * stretched while busy (zc_ze_bg_pace); parked while none does, until a record is queued
 * (zc_ze_bg_wake): an idle process pays no wake-ups.
 * Parking raises zc_ze_bg_parked and makes one more pass an interval later before the long
 * sleep: a record queued as the flag went up may have missed it (the Append path loads the flag
 * with no fence after its store), and that pass collects it; once the flag has been up for a
 * pass, every queued record sees it. So a record waits no longer than it did without parking. */
static void *bg_main(void *arg) {
    (void)arg;
    const uint64_t base = zc_knobs.DRAIN_INTERVAL_US * UINT64_C(1000);
    const uint64_t ceiling = zc_ze_bg_ceiling_ns(base, zc_knobs.FLUSH_INTERVAL_MS);
    uint64_t interval = base;
    bool idle = false;
    pthread_mutex_lock(&bg_lock);
    while (!atomic_load(&bg_stop)) {
        uint64_t wait_ns = interval;
        if (idle) {
            wait_ns = base;
            if (atomic_load(&zc_ze_bg_parked)) wait_ns = ZC_BG_PARK_MS * UINT64_C(1000000); /* up a whole pass */
            else atomic_store(&zc_ze_bg_parked, 1u); /* (bg_lock held: a waker signals only once we wait) */
        }
        /* (bg_lock held: a producer raises the flag, then signals under the lock) */
        if (!atomic_load(&bg_hurried)) bg_wait_locked(wait_ns);
        if (atomic_load(&bg_stop)) break;
        pthread_mutex_unlock(&bg_lock);
        bool hurried = atomic_exchange(&bg_hurried, 0u) != 0;
        idle = true;
        uint64_t collected = 0;
        struct zc_stream *first = streams_first();
        for (struct zc_stream *s = first; s && !atomic_load(&bg_stop); s = s->next_all) {
            pthread_mutex_lock(&s->lock);
            bool work = s->head || s->nawait || s->held || !inboxes_empty_locked(s);
            pthread_mutex_unlock(&s->lock);
            /* only what has completed: stop at the first run of incomplete records */
            if (work) collected += stream_drain(s, ZC_PUSH_POLL_LIMIT);
            idle &= !work;
        }
        /* what that pass left (incomplete records) keeps the interval */
        if (!idle) idle = streams_idle();
        interval = idle ? base : zc_ze_bg_pace(interval, collected, hurried, base, ceiling);
        /* busy: producers need not wake us (stored only on a change: the Append path reads the line) */
        if (!idle && atomic_load_explicit(&zc_ze_bg_parked, memory_order_relaxed)) atomic_store(&zc_ze_bg_parked, 0u);
        pthread_mutex_lock(&bg_lock);
    }
    pthread_mutex_unlock(&bg_lock);
    return NULL;
}

/* A record was queued while the drainer was parked: the first to see the flag wakes it. */
void zc_ze_bg_wake(void) {
    if (!atomic_exchange(&zc_ze_bg_parked, 0u)) return;
    pthread_mutex_lock(&bg_lock);
    pthread_cond_signal(&bg_cv);
    pthread_mutex_unlock(&bg_lock);
}

/* The first producer to see the flag down raises it and wakes the drainer; the rest pay a load.
 * Without a drainer (DRAIN_INTERVAL_US=0) the flag stays up and nobody waits on the signal. */
void zc_ze_bg_hurry(void) {
    if (atomic_load_explicit(&bg_hurried, memory_order_relaxed) || atomic_exchange(&bg_hurried, 1u)) return;
    pthread_mutex_lock(&bg_lock);
    pthread_cond_signal(&bg_cv);
    pthread_mutex_unlock(&bg_lock);
}

static void bg_launch(void) {
    if (!zc_knobs.DRAIN_INTERVAL_US) return;
    /* the drainer must not receive the application's signals; it runs where the app's threads may */
    bg_running = zc_thread_spawn(&bg_thread, "zc-drain", bg_main, NULL) == 0;
}

void zc_ze_bg_start(void) { pthread_once(&bg_once, bg_launch); }

void zc_ze_bg_stop(void) {
    if (!bg_running) return;
    pthread_mutex_lock(&bg_lock);
    atomic_store(&bg_stop, true);
    pthread_cond_signal(&bg_cv);
    pthread_mutex_unlock(&bg_lock);
    /* signals are blocked on the drainer, so finalize never runs on it; never join ourselves */
    if (!pthread_equal(pthread_self(), bg_thread)) pthread_join(bg_thread, NULL);
    bg_running = false;
}

void zc_ze_drain_all(bool wait, uint64_t timeout_ns) {
    uint64_t deadline = zc_now() + timeout_ns;
    for (;;) {
        struct zc_stream *first = streams_first();
        uint64_t pending = 0;
        for (struct zc_stream *s = first; s; s = s->next_all) {
            zc_ze_stream_drain(s);
            pthread_mutex_lock(&s->lock);
            pending += s->npending + s->nawait + inbox_entries_locked(s);
            pthread_mutex_unlock(&s->lock);
        }
        if (!wait || pending == 0) return;
        if (zc_now() > deadline) {
            ZC_WARN("%llu GPU operation(s) did not complete within ZECOLL_FINALIZE_TIMEOUT_MS; their records are dropped",
                    (unsigned long long)pending);
            atomic_fetch_add(&zc_ze_records_dropped, pending);
            zc_loc_lost(pending); /* in the summary's "dropped" too */
            return;
        }
        struct timespec ts = {0, 200000};
        nanosleep(&ts, NULL);
    }
}

/* At the end, whatever is still pending will never be written: flush what completed. */
void zc_ze_streams_flush(void) {
    struct zc_stream *first = streams_first();
    for (struct zc_stream *s = first; s; s = s->next_all) {
        pthread_mutex_lock(&s->lock);
        held_release(s, true);
        while (s->ndone) {
            struct zc_rec *r = zc_ze_done_pop(s);
            write_rec(s, r);
            rec_done(r);
        }
        pthread_mutex_unlock(&s->lock);
    }
    zc_ze_rec_release_flush();
}

uint64_t zc_ze_dropped_records(void) { return atomic_load(&zc_ze_records_dropped); }

/* The context is about to be destroyed with operations of it still pending (the app did not
 * wait for them): their events are going away, so their records are dropped and counted. */
void zc_ze_drop_context(struct zc_ctx *x) {
    struct zc_stream *first = streams_first();
    for (struct zc_stream *s = first; s; s = s->next_all) {
        pthread_mutex_lock(&s->drain_lock);
        pthread_mutex_lock(&s->lock);
        if (s->inboxes) { /* operations the direct harvest left in the inboxes: records, to be dropped */
            struct zc_tickconv tc;
            zc_tickconv_begin(&tc);
            inbox_pull_locked(s, &tc);
        }
        struct zc_rec *r = s->head;
        while (r) {
            struct zc_rec *next = r->next;
            struct zc_ctx *rc = r->exec ? r->exec->list->ctx : r->ctx;
            if (rc == x) {
                if (r->prev) r->prev->next = r->next;
                else s->head = r->next;
                if (r->next) r->next->prev = r->prev;
                else s->tail = r->prev;
                s->npending--;
                pend_leave(s, r);
                atomic_fetch_add(&zc_ze_records_dropped, 1);
                zc_ze_uevent_drop(r);
                r->own_inj = false; /* its event dies with the context */
                rec_done(r);
            }
            r = next;
        }
        held_release(s, true); /* complete: their times are known, whatever happens to the context */
        emit_locked(s);
        pthread_mutex_unlock(&s->lock);
        pthread_mutex_unlock(&s->drain_lock);
    }
    zc_ze_rec_release_flush();
}

/* Records of a list that goes away must not outlive it: pending ones count as anybody's, and
 * completed ones waiting to be written in order stop pointing at it. */
void zc_ze_streams_forget_list(struct zc_list *l) {
    struct zc_stream *first = streams_first();
    for (struct zc_stream *s = first; s; s = s->next_all) {
        pthread_mutex_lock(&s->lock);
        for (struct zc_rec *r = s->head; r; r = r->next)
            if (r->list == l) {
                pend_detach(s, r);
                r->list = NULL;
            }
        /* completed records waiting to be written in order too */
        zc_ze_done_forget_list(s, l);
        for (struct zc_rec *r = s->held; r; r = r->next)
            if (r->list == l) r->list = NULL;
        pthread_mutex_unlock(&s->lock);
    }
}
