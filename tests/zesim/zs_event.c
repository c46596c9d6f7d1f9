/* SPDX-License-Identifier: MIT */
/* zesim events, event pools and fences. An event's memory (signalled, timestamps) is read without
 * zs.lock, as a host reads an event's memory on hardware; it is written under a per-event sequence
 * number (device completion under zs.lock, host signal and reset). Every signal wakes host waiters
 * and the engine workers, since any of them may be waiting on it. */
#include "zs_internal.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---------------------------------------------------------------- waiting */
/* Waits on zs.host_cv until done(arg) holds. timeout_ns follows L0: 0 = poll, UINT64_MAX = forever. */
ze_result_t zs_wait_locked(bool (*done)(void *), void *arg, uint64_t timeout_ns) {
    struct timespec dl;
    bool have_deadline = false;
    for (;;) {
        if (done(arg)) return ZE_RESULT_SUCCESS;
        if (atomic_load(&zs.lost)) return ZE_RESULT_ERROR_DEVICE_LOST;
        if (timeout_ns == 0) return ZE_RESULT_NOT_READY;
        if (timeout_ns == UINT64_MAX) {
            pthread_cond_wait(&zs.host_cv, &zs.lock);
            continue;
        }
        if (!have_deadline) {
            clock_gettime(CLOCK_MONOTONIC, &dl);
            uint64_t ns = (uint64_t)dl.tv_nsec + timeout_ns % 1000000000u;
            dl.tv_sec += (time_t)(timeout_ns / 1000000000u + ns / 1000000000u);
            dl.tv_nsec = (long)(ns % 1000000000u);
            have_deadline = true;
        }
        if (pthread_cond_timedwait(&zs.host_cv, &zs.lock, &dl) != 0) {
            return done(arg) ? ZE_RESULT_SUCCESS : ZE_RESULT_NOT_READY;
        }
    }
}

/* ---------------------------------------------------------------- event memory */
/* Writers exclude each other through seq (odd = being written); a reader copies the fields and
 * retries if seq was odd or moved meanwhile. Every field is atomic, so that TSan sees no race. */
static uint32_t ev_write_begin(ze_event_handle_t ev) {
    for (;;) {
        uint32_t s = atomic_load_explicit(&ev->seq, memory_order_relaxed);
        if (!(s & 1) && atomic_compare_exchange_weak_explicit(&ev->seq, &s, s + 1, memory_order_acquire,
                                                              memory_order_relaxed))
            return s + 1;
    }
}
static void ev_write_end(ze_event_handle_t ev, uint32_t s) { atomic_store_explicit(&ev->seq, s + 1, memory_order_release); }

void zs_event_read(ze_event_handle_t ev, struct zs_event_state *st) {
    for (;;) {
        uint32_t s0 = atomic_load_explicit(&ev->seq, memory_order_acquire);
        if (s0 & 1) continue;
        st->signaled = atomic_load_explicit(&ev->signaled, memory_order_acquire);
        st->signal_ns = atomic_load_explicit(&ev->signal_ns, memory_order_acquire);
        st->has_ts = atomic_load_explicit(&ev->has_ts, memory_order_acquire);
        st->ts_start = atomic_load_explicit(&ev->ts_start, memory_order_acquire);
        st->ts_end = atomic_load_explicit(&ev->ts_end, memory_order_acquire);
        if (atomic_load_explicit(&ev->seq, memory_order_acquire) == s0) return;
    }
}

void zs_event_reset(ze_event_handle_t ev) {
    uint32_t s = ev_write_begin(ev);
    atomic_store_explicit(&ev->signaled, false, memory_order_relaxed);
    atomic_store_explicit(&ev->has_ts, false, memory_order_relaxed);
    ev_write_end(ev, s);
}

void zs_event_signal_locked(ze_event_handle_t ev, uint64_t host_ns, bool has_ts, uint64_t ts_start, uint64_t ts_end) {
    uint32_t s = ev_write_begin(ev);
    /* release: what the command did before its signal (a copy's bytes) is visible to whoever
     * sees the signal with an acquire load and no lock (event_done, TSan: example.multithread
     * read a copy's destination that only seq's release had ordered, about 1 run in 10) */
    atomic_store_explicit(&ev->signaled, true, memory_order_release);
    atomic_store_explicit(&ev->signal_ns, host_ns, memory_order_relaxed);
    /* re-signalling without a reset: the newest writer's timestamps win */
    if (has_ts) {
        atomic_store_explicit(&ev->has_ts, true, memory_order_relaxed);
        atomic_store_explicit(&ev->ts_start, ts_start, memory_order_relaxed);
        atomic_store_explicit(&ev->ts_end, ts_end, memory_order_relaxed);
    }
    ev_write_end(ev, s);
    pthread_cond_broadcast(&zs.host_cv);
    /* only the engines of commands waiting on this event need a look: a GPU's signal is a memory
     * write that nothing but a command waiting on it polls */
    zs_kick_waiters_locked(ev);
}

/* ---------------------------------------------------------------- event pools */
static ze_result_t zs_zeEventPoolCreate(ze_context_handle_t c, const ze_event_pool_desc_t *desc, uint32_t ndev,
                                        ze_device_handle_t *phDevices, ze_event_pool_handle_t *ph) {
    ZS_ENTER_DEV();
    ZS_CHECK(c, ZS_MAGIC_CONTEXT);
    if (!desc || !ph) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    if (ndev && !phDevices) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    if (desc->flags > 0x7) return ZE_RESULT_ERROR_INVALID_ENUMERATION;
    if (desc->count == 0) return ZE_RESULT_ERROR_INVALID_SIZE;
    if ((desc->flags & ZE_EVENT_POOL_FLAG_IPC) && (desc->flags & ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP))
        return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    if (zs.cfg.event_pool_oom >= 0 && atomic_load(&zs.npools) >= zs.cfg.event_pool_oom)
        return ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY;
    struct _ze_event_pool_handle_t *p = calloc(1, sizeof(*p));
    if (!p) return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    p->magic = ZS_MAGIC_EVENT_POOL;
    p->flags = desc->flags;
    p->count = desc->count;
    p->cb_flags = zs_cb_pool_flags(desc->pNext);
    atomic_fetch_add(&zs.npools, 1);
    *ph = p;
    return ZE_RESULT_SUCCESS;
}

static ze_result_t zs_zeEventPoolDestroy(ze_event_pool_handle_t p) {
    ZS_ENTER();
    ZS_CHECK(p, ZS_MAGIC_EVENT_POOL);
    p->magic = ZS_MAGIC_DEAD;
    atomic_fetch_sub(&zs.npools, 1);
    zs_defer_free(p);
    return ZE_RESULT_SUCCESS;
}

void zs_fill_event_pool_table(ze_event_pool_dditable_t *t) {
    t->pfnCreate = zs_zeEventPoolCreate;
    t->pfnDestroy = zs_zeEventPoolDestroy;
}

/* ---------------------------------------------------------------- events */
static ze_result_t zs_zeEventCreate(ze_event_pool_handle_t p, const ze_event_desc_t *desc, ze_event_handle_t *ph) {
    ZS_ENTER_DEV();
    ZS_CHECK(p, ZS_MAGIC_EVENT_POOL);
    if (!desc || !ph) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    if (desc->index >= p->count) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    struct _ze_event_handle_t *e = calloc(1, sizeof(*e));
    if (!e) return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    e->magic = ZS_MAGIC_EVENT;
    e->pool = p;
    e->index = desc->index;
    e->cb = p->cb_flags;
    *ph = e;
    return ZE_RESULT_SUCCESS;
}

static ze_result_t zs_zeEventDestroy(ze_event_handle_t e) {
    ZS_ENTER();
    ZS_CHECK(e, ZS_MAGIC_EVENT);
    pthread_mutex_lock(&zs.lock);
    e->magic = ZS_MAGIC_DEAD;
    /* a command waiting on it no longer does (inst_ready skips destroyed events): look again */
    zs_kick_waiters_locked(e);
    e->nwaiters = 0;
    pthread_mutex_unlock(&zs.lock);
    if (e->own_pool) zs_defer_free(e->pool);
    zs_defer_free(e);
    return ZE_RESULT_SUCCESS;
}

static ze_result_t zs_zeEventHostSignal(ze_event_handle_t e) {
    ZS_ENTER_DEV();
    ZS_CHECK(e, ZS_MAGIC_EVENT);
    ze_result_t cr = zs_cb_host_signal(e);
    if (cr != ZE_RESULT_SUCCESS) return cr;
    pthread_mutex_lock(&zs.lock);
    uint64_t now = zs_now();
    /* a host signal has no device duration; timestamp pools report a zero-length interval */
    ze_device_handle_t d = &zs.devices[0];
    uint64_t t = zs_mask(zs_ticks_full(d, now), zs.cfg.kts_bits);
    zs_event_signal_locked(e, now, (e->pool->flags & ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP) != 0, t, t);
    pthread_mutex_unlock(&zs.lock);
    return ZE_RESULT_SUCCESS;
}

static bool event_done(void *arg) {
    return atomic_load_explicit(&((ze_event_handle_t)arg)->signaled, memory_order_acquire);
}

static ze_result_t zs_zeEventHostSynchronize(ze_event_handle_t e, uint64_t timeout) {
    ZS_ENTER_DEV();
    ZS_CHECK(e, ZS_MAGIC_EVENT);
    zs_slow_sync();
    if (event_done(e)) return ZE_RESULT_SUCCESS; /* a read of the event's memory */
    pthread_mutex_lock(&zs.lock);
    ze_result_t r = zs_wait_locked(event_done, e, timeout);
    pthread_mutex_unlock(&zs.lock);
    return r;
}

static ze_result_t zs_zeEventQueryStatus(ze_event_handle_t e) {
    ZS_ENTER_DEV();
    ZS_CHECK(e, ZS_MAGIC_EVENT);
    zs_slow_sync();
    return event_done(e) ? ZE_RESULT_SUCCESS : ZE_RESULT_NOT_READY;
}

/* A write of the event's memory: nothing becomes runnable, so nobody is woken. */
static ze_result_t zs_zeEventHostReset(ze_event_handle_t e) {
    ZS_ENTER_DEV();
    ZS_CHECK(e, ZS_MAGIC_EVENT);
    ze_result_t cr = zs_cb_host_reset(e);
    if (cr != ZE_RESULT_SUCCESS) return cr;
    zs_event_reset(e);
    return ZE_RESULT_SUCCESS;
}

static ze_result_t zs_zeEventQueryKernelTimestamp(ze_event_handle_t e, ze_kernel_timestamp_result_t *dst) {
    ZS_ENTER_DEV();
    ZS_CHECK(e, ZS_MAGIC_EVENT);
    if (!dst) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    if (!(e->pool->flags & ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP)) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    struct zs_event_state st;
    zs_event_read(e, &st); /* a read of the event's memory, no driver lock */
    if (!st.signaled) return ZE_RESULT_NOT_READY;
    dst->global.kernelStart = dst->context.kernelStart = st.has_ts ? st.ts_start : 0;
    dst->global.kernelEnd = dst->context.kernelEnd = st.has_ts ? st.ts_end : 0;
    return ZE_RESULT_SUCCESS;
}

void zs_fill_event_table(ze_event_dditable_t *t) {
    t->pfnCreate = zs_zeEventCreate;
    t->pfnDestroy = zs_zeEventDestroy;
    t->pfnHostSignal = zs_zeEventHostSignal;
    t->pfnHostSynchronize = zs_zeEventHostSynchronize;
    t->pfnQueryStatus = zs_zeEventQueryStatus;
    t->pfnHostReset = zs_zeEventHostReset;
    t->pfnQueryKernelTimestamp = zs_zeEventQueryKernelTimestamp;
}

/* ---------------------------------------------------------------- fences */
static ze_result_t zs_zeFenceCreate(ze_command_queue_handle_t q, const ze_fence_desc_t *desc, ze_fence_handle_t *ph) {
    ZS_ENTER_DEV();
    ZS_CHECK(q, ZS_MAGIC_QUEUE);
    if (!desc || !ph) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    if (desc->flags > 0x1) return ZE_RESULT_ERROR_INVALID_ENUMERATION;
    struct _ze_fence_handle_t *f = calloc(1, sizeof(*f));
    if (!f) return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    f->magic = ZS_MAGIC_FENCE;
    f->queue = q;
    f->signaled = (desc->flags & ZE_FENCE_FLAG_SIGNALED) != 0;
    *ph = f;
    return ZE_RESULT_SUCCESS;
}

static ze_result_t zs_zeFenceDestroy(ze_fence_handle_t f) {
    ZS_ENTER();
    ZS_CHECK(f, ZS_MAGIC_FENCE);
    pthread_mutex_lock(&zs.lock);
    f->magic = ZS_MAGIC_DEAD;
    pthread_mutex_unlock(&zs.lock);
    zs_defer_free(f);
    return ZE_RESULT_SUCCESS;
}

static bool fence_done(void *arg) { return ((ze_fence_handle_t)arg)->signaled; }

static ze_result_t zs_zeFenceHostSynchronize(ze_fence_handle_t f, uint64_t timeout) {
    ZS_ENTER_DEV();
    ZS_CHECK(f, ZS_MAGIC_FENCE);
    zs_slow_sync();
    pthread_mutex_lock(&zs.lock);
    ze_result_t r = zs_wait_locked(fence_done, f, timeout);
    pthread_mutex_unlock(&zs.lock);
    return r;
}

static ze_result_t zs_zeFenceQueryStatus(ze_fence_handle_t f) {
    ZS_ENTER_DEV();
    ZS_CHECK(f, ZS_MAGIC_FENCE);
    zs_slow_sync();
    pthread_mutex_lock(&zs.lock);
    bool s = f->signaled;
    pthread_mutex_unlock(&zs.lock);
    return s ? ZE_RESULT_SUCCESS : ZE_RESULT_NOT_READY;
}

static ze_result_t zs_zeFenceReset(ze_fence_handle_t f) {
    ZS_ENTER_DEV();
    ZS_CHECK(f, ZS_MAGIC_FENCE);
    pthread_mutex_lock(&zs.lock);
    f->signaled = false;
    pthread_mutex_unlock(&zs.lock);
    return ZE_RESULT_SUCCESS;
}

void zs_fill_fence_table(ze_fence_dditable_t *t) {
    t->pfnCreate = zs_zeFenceCreate;
    t->pfnDestroy = zs_zeFenceDestroy;
    t->pfnHostSynchronize = zs_zeFenceHostSynchronize;
    t->pfnQueryStatus = zs_zeFenceQueryStatus;
    t->pfnReset = zs_zeFenceReset;
}
