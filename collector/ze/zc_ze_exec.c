/* SPDX-License-Identifier: MIT */
/* Executions of regular command lists, and the command queues they run on. Every execution of a
 * list we timed is wrapped in helper lists of ours (pre, post; see struct zc_slot) that reset our
 * events before it and harvest their timestamps after it; executions of copy-only lists are
 * harvested by a list of ours on a compute engine (the copy harvests). Each execution's records
 * go to its queue's stream (zc_ze_drain.c). */
#include "zc_ze_objects.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

static void harvest_queue_destroy(struct zc_queue *q);

/* ---------------------------------------------------------------- queues */
void zc_ze_post_zeCommandQueueCreate(ze_command_queue_create_params_t *p, ze_result_t r, struct zc_ze_call *c) {
    if (r != ZE_RESULT_SUCCESS || !*p->pphCommandQueue || !*p->pdesc) return;
    struct zc_queue *q = calloc(1, sizeof(*q));
    if (!q) return;
    q->h = **p->pphCommandQueue;
    q->dev = zc_ze_dev(*p->phDevice);
    q->ctx = zc_ze_ctx(*p->phContext);
    q->ordinal = (*p->pdesc)->ordinal;
    q->index = (*p->pdesc)->index;
    q->flags = (*p->pdesc)->flags;
    q->copy_only = q->dev && q->ordinal < q->dev->ngroups && q->dev->copy_only[q->ordinal];
    q->sync = (*p->pdesc)->mode == ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS;
    q->stream = q->dev ? zc_ze_stream_new(q->dev, q->ctx, "queue") : NULL;
    int err;
    zc_map_put(&zc_ze.queues, q->h, q, &err);
    if (err) free(q);
}

void zc_ze_pre_zeCommandQueueDestroy(ze_command_queue_destroy_params_t *p, struct zc_ze_call *c) {
    struct zc_queue *q = zc_map_del(&zc_ze.queues, *p->phCommandQueue);
    harvest_queue_destroy(q);
    if (q) zc_ze_stream_drain(q->stream); /* the stream lives on: its lanes are locations */
    free(q);
}

/* ---------------------------------------------------------------- helper slots */
/* A slot's helper lists and harvest buffer (a driver without the destroy/free entries releases
 * them with the context). */
static void helpers_free(struct zc_list *l, struct zc_slot *s) {
    if (s->pre && zc_ze_real.ze_command_list.pfnDestroy) zc_ze_real.ze_command_list.pfnDestroy(s->pre);
    if (s->pre0 && zc_ze_real.ze_command_list.pfnDestroy) zc_ze_real.ze_command_list.pfnDestroy(s->pre0);
    if (s->post && zc_ze_real.ze_command_list.pfnDestroy) zc_ze_real.ze_command_list.pfnDestroy(s->post);
    if (s->harvest && zc_ze_real.ze_command_list.pfnDestroy) zc_ze_real.ze_command_list.pfnDestroy(s->harvest);
    if (s->buf && zc_ze_real.ze_mem.pfnFree) zc_ze_real.ze_mem.pfnFree(l->ctx->h, s->buf);
}

void zc_ze_slots_destroy(struct zc_list *l, bool ctx_dying) {
    for (uint32_t i = 0; i < l->nslots; i++) {
        if (__atomic_load_n(&l->slots[i].busy, __ATOMIC_ACQUIRE)) {
            /* an execution still running (the app broke the spec, or the device is lost): its
             * records point at these slots, so they are leaked, not freed under them */
            ZC_DEBUG("list destroyed or reset while executing: %u helper slots leaked", l->nslots);
            l->slots = NULL;
            l->nslots = 0;
            l->gate = NULL;
            return;
        }
    }
    for (uint32_t i = 0; i < l->nslots; i++) {
        struct zc_slot *s = &l->slots[i];
        helpers_free(l, s);
        if (!ctx_dying) {
            if (s->done) zc_ze_event_put(l->ctx, s->done);
            if (s->started) zc_ze_event_put(l->ctx, s->started);
            if (s->copied) zc_ze_event_put(l->ctx, s->copied);
        }
    }
    free(l->slots);
    l->slots = NULL;
    l->nslots = 0;
    if (l->gate && !ctx_dying) zc_ze_event_put(l->ctx, l->gate);
    l->gate = NULL;
}

/* pre = [WaitOnEvents(gate), EventReset(gate), EventReset(inj...), SignalEvent(started)], or
 * pre0 without the resets of our events (resets false: the list's first execution, see struct
 * zc_slot); built when an execution first needs it. NULL: it could not be built. l locked. */
static ze_command_list_handle_t slot_pre(struct zc_list *l, struct zc_slot *s, bool resets) {
    struct zc_ze_real *R = &zc_ze_real;
    ze_command_list_handle_t *pre = resets ? &s->pre : &s->pre0;
    if (*pre) return *pre;
    ze_command_list_desc_t ld = {ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC, NULL, l->ordinal, 0};
    ze_command_list_handle_t h;
    if (R->ze_command_list.pfnCreate(l->ctx->h, l->dev->h, &ld, &h) != ZE_RESULT_SUCCESS) return NULL;
    /* wait until the previous execution's post list ran (gate), then clear our events */
    bool ok = R->ze_command_list.pfnAppendWaitOnEvents(h, 1, &l->gate) == ZE_RESULT_SUCCESS &&
              R->ze_command_list.pfnAppendEventReset(h, l->gate) == ZE_RESULT_SUCCESS;
    for (uint32_t i = 0; ok && resets && i < l->ntmpl; i++)
        ok = R->ze_command_list.pfnAppendEventReset(h, l->tmpl[i].inj) == ZE_RESULT_SUCCESS;
    /* from here on our events hold this execution's times (see rec_poll) */
    ok = ok && (!s->started || R->ze_command_list.pfnAppendSignalEvent(h, s->started) == ZE_RESULT_SUCCESS) &&
         R->ze_command_list.pfnClose(h) == ZE_RESULT_SUCCESS;
    if (!ok) {
        if (R->ze_command_list.pfnDestroy) R->ze_command_list.pfnDestroy(h);
        return NULL;
    }
    return *pre = h;
}

/* A driver whose table has zeCommandListAppendQueryKernelTimestamps may still answer
 * UNSUPPORTED_FEATURE at run time: that degrades like a NULL entry (exec_slot), not as an internal
 * error that stops device timing in the whole process. */
static atomic_bool qkt_unsupported;
static ze_result_t qkt(ze_result_t r) {
    if (r == ZE_RESULT_ERROR_UNSUPPORTED_FEATURE) atomic_store(&qkt_unsupported, true);
    return r;
}

/* A copy-only list harvested on a compute engine: post = [SignalEvent(copied)], and the harvest
 * list of ours, run on the device's harvest engine once the execution signalled (harvest_submit). */
static bool slot_build_harvest(struct zc_list *l, struct zc_slot *s, ze_event_handle_t *inj, uint32_t n) {
    struct zc_ze_real *R = &zc_ze_real;
    /* copy engines run their commands in order: the signal follows the list */
    ze_command_list_desc_t hd = {ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC, NULL, (uint32_t)l->dev->harvest_ordinal, 0};
    s->copied = zc_ze_event_get(l->ctx);
    if (!s->copied || R->ze_command_list.pfnAppendSignalEvent(s->post, s->copied) != ZE_RESULT_SUCCESS ||
        R->ze_command_list.pfnCreate(l->ctx->h, l->dev->h, &hd, &s->harvest) != ZE_RESULT_SUCCESS)
        return false;
    /* Signals and resets run after the commands before them in a list (Intel's driver
     * encodes them as pipe controls or flushes that wait for the work before; zesim models
     * it), as the compute post list already relies on. copied is reset before done: once
     * done is seen the slot may be taken for another execution, whose harvest (queued
     * behind this one, but nothing says it cannot start before this one ends) must not find
     * copied still signalled by this execution. The copy engine waits for the gate (every
     * execution's round trip, bench/README.md), so without `started` it opens before done:
     * the records then wait for done and never read our events. With `started`, done comes
     * first: a record read from our event before done was seen is this execution's, since
     * the next pre list resets our events only after the gate (rec_poll). */
    ze_event_handle_t first = s->started ? s->done : l->gate, second = s->started ? l->gate : s->done;
    return qkt(R->ze_command_list.pfnAppendQueryKernelTimestamps(s->harvest, n, inj, s->buf, NULL, NULL, 1, &s->copied)) ==
               ZE_RESULT_SUCCESS &&
           R->ze_command_list.pfnAppendEventReset(s->harvest, s->copied) == ZE_RESULT_SUCCESS &&
           R->ze_command_list.pfnAppendSignalEvent(s->harvest, first) == ZE_RESULT_SUCCESS &&
           R->ze_command_list.pfnAppendSignalEvent(s->harvest, second) == ZE_RESULT_SUCCESS &&
           R->ze_command_list.pfnClose(s->harvest) == ZE_RESULT_SUCCESS;
}

/* post: the harvest into the buffer and the gate, by how the list is timed (see struct zc_slot) */
static bool slot_build_post(struct zc_list *l, struct zc_slot *s, const ze_command_list_desc_t *ld,
                            ze_event_handle_t *inj, uint32_t n) {
    struct zc_ze_real *R = &zc_ze_real;
    if (R->ze_command_list.pfnCreate(l->ctx->h, l->dev->h, ld, &s->post) != ZE_RESULT_SUCCESS) return false;
    if (l->mode == ZC_REG_DEVICE) { /* harvested on the device, into host memory */
        ze_host_mem_alloc_desc_t hd = {ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC, NULL, 0};
        if (R->ze_mem.pfnAllocHost(l->ctx->h, &hd, n * sizeof(*s->buf), 64, (void **)&s->buf) != ZE_RESULT_SUCCESS)
            return false;
    }
    bool ok;
    if (l->mode == ZC_REG_DEVICE && !l->copy_only) {
        ok = qkt(R->ze_command_list.pfnAppendQueryKernelTimestamps(s->post, n, inj, s->buf, NULL, s->done, n, inj)) ==
                 ZE_RESULT_SUCCESS &&
             R->ze_command_list.pfnAppendSignalEvent(s->post, l->gate) == ZE_RESULT_SUCCESS;
    } else if (l->mode == ZC_REG_DEVICE) {
        /* copy engines cannot run QueryKernelTimestamps: a list of ours on a compute engine
         * harvests the copy execution */
        ok = slot_build_harvest(l, s, inj, n);
    } else if (l->copy_only) {
        /* copy engines run their commands in order: a signal follows everything before it */
        ok = R->ze_command_list.pfnAppendSignalEvent(s->post, s->done) == ZE_RESULT_SUCCESS &&
             R->ze_command_list.pfnAppendSignalEvent(s->post, l->gate) == ZE_RESULT_SUCCESS;
    } else {
        /* read from the host on an engine that may run out of order (the driver lacks the
         * device-side query, or which engines are copy-only is unknown): done follows ours */
        ok = R->ze_command_list.pfnAppendWaitOnEvents(s->post, n, inj) == ZE_RESULT_SUCCESS &&
             R->ze_command_list.pfnAppendSignalEvent(s->post, s->done) == ZE_RESULT_SUCCESS &&
             R->ze_command_list.pfnAppendSignalEvent(s->post, l->gate) == ZE_RESULT_SUCCESS;
    }
    return ok && R->ze_command_list.pfnClose(s->post) == ZE_RESULT_SUCCESS;
}

/* A slot's post (and harvest) list and events for the list's current templates (its pre lists
 * come when needed: slot_pre); NULL (nothing held) on failure. */
static struct zc_slot *slot_build(struct zc_list *l, struct zc_slot *s) {
    ze_command_list_desc_t ld = {ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC, NULL, l->ordinal, 0};
    uint32_t n = l->ntmpl;
    ze_event_handle_t *inj = malloc(n * sizeof(*inj));
    if (!inj) return NULL;
    for (uint32_t i = 0; i < n; i++) inj[i] = l->tmpl[i].inj;
    memset(s, 0, sizeof(*s));
    /* A copy-only list harvested on a compute engine needs `started` only where the app may ask
     * its own event for timestamps (zeEventQueryKernelTimestamp reads ours from the host as soon as
     * the app's event is signalled, before the harvest ran); without app events its records
     * wait for the harvest: one command fewer on the copy engine per execution, one host reset
     * fewer, and the harvest may open the gate before it signals done */
    bool want_started = !(l->mode == ZC_REG_DEVICE && l->copy_only);
    for (uint32_t i = 0; i < n && !want_started; i++) want_started = l->tmpl[i].user_event != NULL;
    s->done = zc_ze_event_get(l->ctx);
    if (want_started) s->started = zc_ze_event_get(l->ctx);
    bool ok = s->done && (!want_started || s->started) && slot_build_post(l, s, &ld, inj, n);
    free(inj);
    if (ok) return s;
    helpers_free(l, s);
    if (s->done) zc_ze_event_put(l->ctx, s->done);
    if (s->started) zc_ze_event_put(l->ctx, s->started);
    if (s->copied) zc_ze_event_put(l->ctx, s->copied);
    memset(s, 0, sizeof(*s));
    return NULL;
}

/* How long a resubmission waits for an earlier execution before timing stops on the device:
 * ZECOLL_FINALIZE_TIMEOUT_MS, at least 1 s (0 means "do not wait at exit", not "give up at once"). */
static uint64_t stall_limit_ns(void) {
    uint64_t ms = zc_knobs.FINALIZE_TIMEOUT_MS < 1000 ? 1000 : zc_knobs.FINALIZE_TIMEOUT_MS;
    return ms * 1000000u;
}

/* Finds a free slot for one more execution of l (list locked). May wait for the oldest
 * execution when every slot is in flight; counts that as a stall. */
static struct zc_slot *slot_take(struct zc_list *l) {
    uint32_t cap = zc_knobs.HARVEST_BUFFERS ? (uint32_t)zc_knobs.HARVEST_BUFFERS : 1;
    if (l->mode != ZC_REG_DEVICE) cap = 1; /* read from the host before the next execution resets them */
    if (l->slots_build != l->build || !l->slots) {
        zc_ze_slots_destroy(l, false);
        l->slots = calloc(cap, sizeof(*l->slots));
        if (!l->slots) return NULL;
        l->slots_build = l->build;
        l->gate = zc_ze_event_get(l->ctx);
        if (!l->gate) return NULL;
        /* the first execution has no predecessor: open the gate (helper lists need HostSignal) */
        zc_ze_real.ze_event.pfnHostSignal(l->gate);
    }
    bool stalled = false;
    uint64_t deadline = 0;
    unsigned offs = 0, signalled_busy = 0;
    for (;;) {
        for (uint32_t i = 0; i < l->nslots; i++) {
            uint32_t k = (l->next_slot + i) % l->nslots;
            struct zc_slot *s = &l->slots[k];
            if (!__atomic_load_n(&s->busy, __ATOMIC_ACQUIRE)) {
                l->next_slot = (k + 1) % (l->nslots ? l->nslots : 1);
                zc_ze_real.ze_event.pfnHostReset(s->done); /* from its previous execution */
                return s;
            }
        }
        if (l->nslots < cap) {
            struct zc_slot *s = slot_build(l, &l->slots[l->nslots]);
            if (!s) return NULL;
            l->nslots++;
            return s;
        }
        /* Every slot is in flight: wait for the oldest to be collected. Never on its event
         * alone: a drain on another thread may collect it and reset the event first. So wait
         * briefly, collect, and look again. Bounded: a failing query, a device whose queries
         * say done while ours never do, or nothing done for ZECOLL_FINALIZE_TIMEOUT_MS stops
         * timing on the device, which drops its records and frees every slot. */
        struct zc_slot *s = &l->slots[l->next_slot % l->nslots];
        if (!zc_ze_dev_on(l->dev)) {
            if (++offs > 1000) { /* records in flight elsewhere still hold it: reuse it anyway */
                __atomic_store_n(&s->busy, false, __ATOMIC_RELEASE);
                continue;
            }
        } else if (!stalled) {
            atomic_fetch_add(&zc_ze.stalls, 1);
            stalled = true;
            deadline = zc_now() + stall_limit_ns();
        }
        ze_event_handle_t done = s->done;
        pthread_mutex_unlock(&l->lock);
        ze_result_t r = zc_ze_dev_on(l->dev) ? zc_ze_event_wait(done, 1000000u) : ZE_RESULT_NOT_READY;
        zc_ze_drain_completed(); /* the oldest first: no need to poll every pending record */
        pthread_mutex_lock(&l->lock);
        if (!zc_ze_dev_on(l->dev)) continue;
        if (zc_ze_device_off(l->dev, "zeEventHostSynchronize", r)) continue;
        if (r == ZE_RESULT_SUCCESS && __atomic_load_n(&s->busy, __ATOMIC_ACQUIRE) && ++signalled_busy > 100) {
            /* its post list ran 100 times over and our queries still do not see it: they lie */
            zc_ze_device_stuck(l->dev, "zeEventHostSynchronize reports our helper event signalled, zeEventQueryStatus "
                                       "does not");
            continue;
        }
        if (zc_now() > deadline)
            zc_ze_device_stuck(l->dev, "no execution completed within ZECOLL_FINALIZE_TIMEOUT_MS while a resubmission "
                                       "waited for a harvest buffer");
    }
}

/* Last resort when no helper lists can be had: do what the pre list would do, from the host
 * (wait for the previous execution's post list, clear our events). Blocks; counted as a stall. */
static void host_reset(struct zc_list *l) {
    if (l->gate) {
        /* bounded: a lost device never opens the gate, and then nothing runs anyway */
        zc_ze_event_wait(l->gate, zc_knobs.FINALIZE_TIMEOUT_MS * 1000000u);
        atomic_fetch_add(&zc_ze.stalls, 1);
    }
    for (uint32_t i = 0; i < l->ntmpl; i++) zc_ze_real.ze_event.pfnHostReset(l->tmpl[i].inj);
}

/* ZC_REG_SERIAL (no helper lists): our events of the list's previous execution must be read
 * before the host resets them for the next one, so the resubmission waits until they are
 * (counted as a stall). Bounded like slot_take. False: this execution goes untimed. */
static bool serial_take(struct zc_list *l) {
    uint64_t deadline = 0, nap = 20000;
    while (atomic_load(&l->inflight)) {
        zc_ze_drain_all(false, 0);
        if (!atomic_load(&l->inflight)) break;
        if (!deadline) {
            atomic_fetch_add(&zc_ze.stalls, 1);
            deadline = zc_now() + stall_limit_ns();
        } else if (zc_now() > deadline) {
            zc_ze_device_stuck(l->dev, "no execution completed within ZECOLL_FINALIZE_TIMEOUT_MS while a resubmission "
                                       "waited for the previous one");
            zc_ze_drain_all(false, 0);
            return false;
        }
        if (!zc_ze_dev_on(l->dev)) return false;
        struct timespec ts = {0, (long)nap};
        nanosleep(&ts, NULL);
        if (nap < 1000000) nap *= 2;
    }
    if (!zc_ze_dev_on(l->dev)) return false;
    for (uint32_t i = 0; i < l->ntmpl; i++) zc_ze_real.ze_event.pfnHostReset(l->tmpl[i].inj);
    return true;
}

struct exec_plan {
    struct zc_list *list;
    struct zc_exec *exec;
    struct zc_slot *slot; /* its harvest list runs once the Execute succeeded */
};

/* The per-call arrays are reused (as executions are, zc_ze_records.c): Execute allocates only until
 * the largest call has been seen. */
struct exec_scratch {
    ze_command_list_handle_t *out;
    struct exec_plan *plan;
    uint32_t cap;
};
static _Thread_local struct exec_scratch tls_scratch __attribute__((tls_model("initial-exec")));

static bool scratch_reserve(uint32_t n) {
    struct exec_scratch *sc = &tls_scratch;
    if (n <= sc->cap) return true;
    uint32_t cap = n < 16 ? 16 : n;
    ze_command_list_handle_t *o = realloc(sc->out, 3 * (size_t)cap * sizeof(*o));
    if (!o) return false;
    sc->out = o;
    struct exec_plan *p = realloc(sc->plan, cap * sizeof(*p));
    if (!p) return false;
    sc->plan = p;
    sc->cap = cap;
    return true;
}

/* ---------------------------------------------------------------- harvests of copy executions */
static pthread_mutex_t harvest_lock = PTHREAD_MUTEX_INITIALIZER;

/* The app queue's harvest queue (created at its first copy execution), or NULL. */
static ze_command_queue_handle_t harvest_queue(struct zc_queue *q) {
    if (!q || !q->dev || q->dev->harvest_ordinal < 0 || !q->ctx) return NULL;
    pthread_mutex_lock(&harvest_lock);
    if (!q->harvest) {
        /* low priority: it only copies a few timestamps and opens the next execution */
        ze_command_queue_desc_t d = {ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC, NULL, (uint32_t)q->dev->harvest_ordinal,
                                     q->dev->harvest_index, 0, ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS,
                                     ZE_COMMAND_QUEUE_PRIORITY_PRIORITY_LOW};
        if (zc_ze_real.ze_command_queue.pfnCreate(q->ctx->h, q->dev->h, &d, &q->harvest) != ZE_RESULT_SUCCESS)
            q->harvest = NULL;
    }
    ze_command_queue_handle_t h = q->harvest;
    pthread_mutex_unlock(&harvest_lock);
    return h;
}

/* What the harvest list does, done by the host instead (no harvest queue, or it refused the
 * harvest): blocks until the copy execution ran. Never leaves the gate closed. */
static void harvest_on_host(struct zc_list *l, struct zc_slot *s) {
    struct zc_ze_real *R = &zc_ze_real;
    atomic_fetch_add(&zc_ze.stalls, 1);
    /* bounded: a lost device never signals it */
    if (zc_ze_dev_on(l->dev) && zc_ze_event_wait(s->copied, zc_knobs.FINALIZE_TIMEOUT_MS * 1000000u) == ZE_RESULT_SUCCESS)
        for (uint32_t i = 0; i < l->ntmpl; i++) {
            ze_kernel_timestamp_result_t ts = {{0, 0}, {0, 0}};
            if (l->tmpl[i].inj) R->ze_event.pfnQueryKernelTimestamp(l->tmpl[i].inj, &ts);
            s->buf[i] = ts;
        }
    R->ze_event.pfnHostReset(s->copied);
    R->ze_event.pfnHostSignal(s->done);
    R->ze_event.pfnHostSignal(l->gate); /* last: it lets the next execution reset our events */
}

static void harvest_flush(ze_command_queue_handle_t hq, const struct exec_plan *plan, ze_command_list_handle_t *lists,
                          const uint32_t *idx, uint32_t k) {
    if (zc_ze_real.ze_command_queue.pfnExecuteCommandLists(hq, k, lists, NULL) == ZE_RESULT_SUCCESS) return;
    static atomic_flag warned = ATOMIC_FLAG_INIT;
    if (!atomic_flag_test_and_set(&warned))
        ZC_WARN("the harvest queue refused a submission: copy executions are harvested by the host (blocking)");
    for (uint32_t j = 0; j < k; j++) harvest_on_host(plan[idx[j]].list, plan[idx[j]].slot);
}

static void harvest_submit(struct zc_queue *q, const struct exec_plan *plan, uint32_t n) {
    ze_command_queue_handle_t hq = NULL;
    bool asked = false;
    ze_command_list_handle_t lists[16];
    uint32_t idx[16], k = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (!plan[i].slot || !plan[i].slot->harvest) continue;
        if (!asked) {
            hq = harvest_queue(q);
            asked = true;
        }
        if (!hq) {
            harvest_on_host(plan[i].list, plan[i].slot);
            continue;
        }
        idx[k] = i;
        lists[k++] = plan[i].slot->harvest;
        if (k == 16) {
            harvest_flush(hq, plan, lists, idx, k);
            k = 0;
        }
    }
    if (k) harvest_flush(hq, plan, lists, idx, k);
}

/* The app destroys its queue: ours goes with it, once idle. */
static void harvest_queue_destroy(struct zc_queue *q) {
    if (!q || !q->harvest) return;
    zc_ze_real.ze_command_queue.pfnSynchronize(q->harvest, zc_knobs.FINALIZE_TIMEOUT_MS * 1000000u);
    zc_ze_real.ze_command_queue.pfnDestroy(q->harvest);
    q->harvest = NULL;
}

/* A list about to be reset or destroyed: the harvests of its executions still run a little
 * after the app saw them complete; wait for them (bounded) and collect. */
void zc_ze_slots_quiesce(struct zc_list *l) {
    bool waited = false;
    pthread_mutex_lock(&l->lock);
    for (uint32_t i = 0; i < l->nslots; i++) {
        struct zc_slot *s = &l->slots[i];
        if (!s->harvest || !__atomic_load_n(&s->busy, __ATOMIC_ACQUIRE)) continue;
        ze_event_handle_t done = s->done;
        pthread_mutex_unlock(&l->lock);
        if (zc_ze_dev_on(l->dev)) zc_ze_event_wait(done, zc_knobs.FINALIZE_TIMEOUT_MS * 1000000u);
        waited = true;
        pthread_mutex_lock(&l->lock);
    }
    pthread_mutex_unlock(&l->lock);
    if (waited) zc_ze_drain_all(false, 0);
}

/* Where list in[i] occurs in the call: its first and last position. */
static void occurrences(ze_command_list_handle_t *in, uint32_t n, uint32_t i, uint32_t *first, uint32_t *last) {
    for (uint32_t k = 0; k < n; k++)
        if (in[k] == in[i]) {
            if (k < *first) *first = k;
            *last = k;
        }
}

/* Out of memory for the call's arrays: the lists from in[i] on run as the app passed them, their
 * events reset from the host (as their pre lists would). */
static void plan_failed(ze_command_list_handle_t *in, uint32_t i, uint32_t n) {
    ZC_FAIL(ZC_F_DEVICE_TIMING, "out of memory preparing an execution");
    for (uint32_t k = i; k < n; k++) {
        struct zc_list *lk = zc_ze_list(in[k]);
        if (lk && !lk->immediate && lk->ntmpl && lk->mode != ZC_REG_SERIAL) {
            pthread_mutex_lock(&lk->lock);
            lk->fresh = false; /* it runs now, its events signalled */
            pthread_mutex_unlock(&lk->lock);
            host_reset(lk);
        }
    }
}

/* ZC_REG_SERIAL: an execution once the previous one was read (NULL: untimed). */
static struct zc_exec *exec_serial(struct zc_list *l, uint64_t now) {
    struct zc_exec *x = NULL;
    if (serial_take(l) && (x = zc_ze_exec_new())) {
        x->list = l;
        x->submit_ns = now;
        atomic_fetch_add(&l->inflight, 1);
    }
    return x;
}

/* A slot (helper lists) for this execution of l and its exec in *xp (list locked); NULL: its
 * events were reset from the host instead. */
static struct zc_slot *exec_slot(struct zc_list *l, uint64_t now, bool dup, struct zc_exec **xp) {
    struct zc_slot *s = slot_take(l);
    if (!s && l->mode == ZC_REG_DEVICE && atomic_load(&qkt_unsupported)) {
        static atomic_bool said;
        if (!atomic_exchange(&said, true))
            ZC_WARN("zeCommandListAppendQueryKernelTimestamps returns ZE_RESULT_ERROR_UNSUPPORTED_FEATURE: regular "
                    "command lists are read back from the host instead (as where the driver lacks the entry)");
        zc_ze_caps.harvest = zc_ze_caps.copy_harvest = false; /* lists made from now on */
        const struct zc_ze_caps *cp = &zc_ze_caps;
        zc_ze_slots_destroy(l, false);
        l->mode = cp->helpers && cp->host_read ? ZC_REG_HOST : cp->host_read ? ZC_REG_SERIAL : ZC_REG_NONE;
        if (l->mode != ZC_REG_HOST) { /* this execution untimed; the next ones the list's new way */
            host_reset(l);
            return NULL;
        }
        s = slot_take(l);
    }
    /* The list's first execution since its events were taken skips their resets: every event in
     * a list's pool is unsignalled (zc_ze_event_refill), and no execution of the list (or of a
     * clone sharing them) signalled them since. Only while every execution comes through here:
     * after finalize the entries that run regular lists on immediate ones are no longer hooked. */
    bool first = l->fresh && zc_active();
    l->fresh = false;
    if (s && !(s->run = slot_pre(l, s, !first))) s = NULL;
    if (!s) {
        ZC_FAIL(ZC_F_DEVICE_TIMING, "cannot prepare helper command lists for an execution");
        host_reset(l);
        return NULL;
    }
    s->busy = true;
    struct zc_exec *x = zc_ze_exec_new();
    if (x) {
        x->list = l;
        x->slot = s;
        x->submit_ns = now;
        x->dup = dup;
    }
    *xp = x;
    return s;
}

/* Every execution of a list we timed is wrapped as [pre, list, post] (see struct zc_slot).
 * This runs even when timing is off or the collector has finalized: the list still signals
 * our events, and without pre the app's re-signal barriers would find them signalled from the
 * previous execution and fire early. */
void zc_ze_exec_pre(struct zc_ze_call *c, struct zc_queue *q, uint32_t *pn, ze_command_list_handle_t **plists) {
    uint32_t n = *pn;
    ze_command_list_handle_t *in = *plists;
    if (n == 0 || !in) return;
    ze_command_list_handle_t *out = NULL;
    struct exec_plan *plan = NULL;
    uint32_t o = 0;
    uint64_t now = !c->t ? 0 : zc_tick_to_ns(c->t0 ? c->t0 : zc_tick()); /* no clock read while off */
    for (uint32_t i = 0; i < n; i++) {
        struct zc_list *l = zc_ze_list(in[i]);
        struct zc_slot *s = NULL;
        struct zc_exec *x = NULL;
        bool recording = c->t && zc_on(ZC_F_DEVICE_TIMING);
        if (l && l->nuntimed && recording) atomic_fetch_add(&zc_ze.untimed, l->nuntimed);
        /* The same list more than once in this call: its events are signalled once per occurrence
         * without a reset in between (their timestamps are undefined then). With one execution
         * in flight (read back from the host) it is not timed in this call: helper lists around
         * all occurrences keep the app's events right, and hold the slot until the last ran. */
        uint32_t first = i, last = i;
        if (l && !l->immediate && l->ntmpl && l->mode != ZC_REG_DEVICE) occurrences(in, n, i, &first, &last);
        bool dup = first != last;
        if (dup && recording) atomic_fetch_add(&zc_ze.untimed, l->ntmpl);
        if (dup && l->mode == ZC_REG_SERIAL) l->serial_off = true; /* nothing says when it ends */
        /* a list read back between executions needs nothing once nobody records it: no barrier
         * of the app waits on its events (timed_pre) */
        if (l && !l->immediate && l->ntmpl && l->mode == ZC_REG_SERIAL &&
            (!recording || !zc_ze_dev_on(l->dev) || l->serial_off))
            l = NULL;
        if (l && !l->immediate && l->ntmpl && dup && i != first) {
            /* a later occurrence: the list alone, then the post list of the first's slot */
            struct zc_exec *fx = plan ? plan[first].exec : NULL;
            out[o++] = in[i];
            if (i == last && fx) out[o++] = fx->slot->post;
            continue;
        }
        if (l && !l->immediate && l->ntmpl) {
            if (!out) { /* first timed list: switch to our own array */
                if (!scratch_reserve(n)) {
                    plan_failed(in, i, n);
                    return;
                }
                out = tls_scratch.out;
                plan = tls_scratch.plan;
                memset(plan, 0, n * sizeof(*plan));
                for (uint32_t k = 0; k < i; k++) out[o++] = in[k];
            }
            pthread_mutex_lock(&l->lock);
            if (l->mode == ZC_REG_SERIAL) {
                pthread_mutex_unlock(&l->lock);
                x = exec_serial(l, now);
                out[o++] = in[i];
                plan[i] = (struct exec_plan){x ? l : NULL, x, NULL};
                continue;
            }
            s = exec_slot(l, now, dup, &x);
            pthread_mutex_unlock(&l->lock);
        }
        if (!out) continue;
        if (s) out[o++] = s->run;
        out[o++] = in[i];
        if (s && !(dup && x)) out[o++] = s->post; /* a repeated list's comes after its last occurrence */
        plan[i] = (struct exec_plan){s ? l : NULL, x, s};
        if (s && !x) __atomic_store_n(&s->busy, false, __ATOMIC_RELEASE);
    }
    if (!out) return;
    c->lists = out;
    c->nlists = n;
    c->ptr = plan;
    c->inj = (ze_event_handle_t)q; /* the queue (may be NULL) travels to the epilogue */
    *pn = o;
    *plists = out;
}

void zc_ze_pre_zeCommandQueueExecuteCommandLists(ze_command_queue_execute_command_lists_params_t *p, struct zc_ze_call *c) {
    zc_ze_exec_pre(c, zc_map_get(&zc_ze.queues, *p->phCommandQueue), p->pnumCommandLists, p->pphCommandLists);
}

/* An execution nobody records. ran_off: it ran while recording is off. */
static void exec_unrecorded(struct zc_queue *q, struct zc_list *l, struct zc_exec *x, bool ran_off) {
    if (ran_off && q && q->stream && zc_active() && x->slot && zc_ze_dev_on(l->dev)) {
        /* not recorded (recording is off): the slot is reused only once this execution's
         * post list ran and its events are reset (the drainer sees to it), or a later
         * recorded execution of the list would read this one's times */
        x->pending = 0;
        zc_ze_stream_await(q->stream, x);
        return;
    }
    /* nothing will collect this execution (it failed, the device stopped timing, or the
     * collector has finalized); its slot may be reused at once (at worst a later read
     * sees a stale buffer, never a hang: pre/post still gate the events) */
    if (x->slot) __atomic_store_n(&x->slot->busy, false, __ATOMIC_RELEASE);
    zc_ze_exec_free(x);
}

/* One record per template of the executed list, onto the queue's stream. */
static void exec_records(struct zc_queue *q, struct zc_list *l, struct zc_exec *x) {
    /* build every record first: once the first is pushed, a drain on another thread may
     * complete the whole execution and free x, so x is not touched after pushing */
    pthread_mutex_lock(&l->lock);
    struct zc_rec *recs = NULL, **tail = &recs;
    uint32_t count = 0;
    bool uevents = false;
    for (uint32_t k = 0; k < l->ntmpl; k++) {
        struct zc_rec *rec = zc_ze_rec_new();
        if (!rec) continue;
        rec->op = l->tmpl[k].op;
        rec->exec = x;
        rec->slot = k;
        /* copy engines cannot harvest into a buffer: their records read our events; compute
         * records read them too before their execution's harvest is complete */
        rec->inj = l->tmpl[k].inj;
        rec->submit_ns = x->submit_ns;
        rec->user_event = l->tmpl[k].user_event;
        uevents |= rec->user_event != NULL;
        *tail = rec;
        tail = &rec->next;
        count++;
    }
    l->executions++;
    pthread_mutex_unlock(&l->lock);
    x->pending = count;
    if (count == 0) {
        if (x->slot) __atomic_store_n(&x->slot->busy, false, __ATOMIC_RELEASE);
        zc_ze_exec_free(x);
        return;
    }
    /* a second walk over the records (a list of 500,000 kernels: 96 MB) only where app events are */
    for (struct zc_rec *rec = uevents ? recs : NULL; rec; rec = rec->next)
        if (rec->user_event) zc_ze_uevent_set(rec->user_event, rec);
    zc_ze_stream_push_chain(q->stream, recs, count);
}

void zc_ze_post_zeCommandQueueExecuteCommandLists(ze_command_queue_execute_command_lists_params_t *p, ze_result_t r,
                                                  struct zc_ze_call *c) {
    zc_ze_exec_post(c, r);
}

void zc_ze_exec_post(struct zc_ze_call *c, ze_result_t r) {
    struct exec_plan *plan = c->ptr;
    struct zc_queue *q = (struct zc_queue *)(void *)c->inj;
    /* the harvests of copy executions: whatever else happens, they open the gates */
    if (r == ZE_RESULT_SUCCESS && plan) harvest_submit(q, plan, c->nlists);
    /* an execution while recording is off (or after finalize) runs its helper lists, nothing more */
    bool record = r == ZE_RESULT_SUCCESS && q && q->stream && c->t && zc_active() && zc_on(ZC_F_DEVICE_TIMING);
    for (uint32_t i = 0; plan && i < c->nlists; i++) {
        struct zc_exec *x = plan[i].exec;
        struct zc_list *l = plan[i].list;
        if (!x) continue;
        if (!record || !zc_ze_dev_on(l->dev)) exec_unrecorded(q, l, x, !record && r == ZE_RESULT_SUCCESS);
        else if (x->dup) zc_ze_stream_await(q->stream, x); /* untimed: the slot is free once its post list ran */
        else exec_records(q, l, x);
    }
    c->lists = NULL; /* per-thread scratch, kept for the next call */
    c->ptr = NULL;
    if (record && q->sync) zc_ze_drain_all(false, 0);
}

