/* SPDX-License-Identifier: MIT */
/* The no-collector control of an in-order immediate list's kernels (zc_bench_app "kernels N US
 * ctl", zc_devrate's ZC_DEVRATE_CTL): the driver calls the collector makes per kernel, without its
 * pipeline. Each kernel signals an event of a timestamp pool (the collector's injected event), and
 * a second thread, every 1 ms like the collector's drainer, reads the completed events' kernel
 * timestamps in order and resets them for reuse. Against it the collector's own cost shows,
 * beside the simulated driver's per-event work (a real driver's is a memory read and a write). */
#ifndef ZC_BENCH_CTL_H
#define ZC_BENCH_CTL_H

#include <dlfcn.h>
#include <level_zero/ze_api.h>
#include <level_zero/ze_ddi.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { CTL_EV = 4096 };
struct ctl {
    ze_event_pool_handle_t pool;
    ze_event_handle_t ev[CTL_EV];
    _Atomic long issued, freed;
    atomic_int stop;
    pthread_t reader;
    /* the reader's two calls (ctl_start) */
    ze_result_t (*query)(ze_event_handle_t, ze_kernel_timestamp_result_t *);
    ze_result_t (*reset)(ze_event_handle_t);
};
/* The reader: the harvest's driver calls (a timestamp query and a host reset per event). */
static void *ctl_reader(void *p) {
    struct ctl *c = p;
    for (;;) {
        long f = atomic_load(&c->freed), i = atomic_load(&c->issued);
        int stop = atomic_load(&c->stop);
        while (f < i) {
            ze_kernel_timestamp_result_t ts;
            if (c->query(c->ev[f % CTL_EV], &ts) != ZE_RESULT_SUCCESS) break;
            if (c->reset(c->ev[f % CTL_EV]) != ZE_RESULT_SUCCESS) break;
            f++;
        }
        atomic_store(&c->freed, f);
        if (stop && f == i) return NULL;
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
}
/* The pool, its events and the reader; 0 on success. */
static int ctl_start(struct ctl *c, ze_context_handle_t ctx) {
    /* The reader calls the driver's own entries, as the collector's drainer does (it calls the
     * driver's table): the loader's checks on the way (~800 ns a record here through Debian's
     * 1.8.12) are not the harvest's floor. The driver: ZE_ENABLE_ALT_DRIVERS's one library. */
    const char *path = getenv("ZE_ENABLE_ALT_DRIVERS");
    void *h = path && !strchr(path, ',') ? dlopen(path, RTLD_NOW | RTLD_NOLOAD) : NULL;
    ze_result_t (*get)(ze_api_version_t, ze_event_dditable_t *) =
        h ? (ze_result_t(*)(ze_api_version_t, ze_event_dditable_t *))dlsym(h, "zeGetEventProcAddrTable") : NULL;
    ze_event_dditable_t t;
    if (get && get(ZE_API_VERSION_CURRENT, &t) == ZE_RESULT_SUCCESS && t.pfnQueryKernelTimestamp && t.pfnHostReset) {
        c->query = t.pfnQueryKernelTimestamp;
        c->reset = t.pfnHostReset;
    } else {
        fprintf(stderr, "zc_bench: the control calls the loader's entries (the driver's own table not found)\n");
        c->query = zeEventQueryKernelTimestamp;
        c->reset = zeEventHostReset;
    }
    ze_event_pool_desc_t pd = {ZE_STRUCTURE_TYPE_EVENT_POOL_DESC, NULL,
                               ZE_EVENT_POOL_FLAG_HOST_VISIBLE | ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP, CTL_EV};
    if (zeEventPoolCreate(ctx, &pd, 0, NULL, &c->pool) != ZE_RESULT_SUCCESS) return -1;
    for (uint32_t i = 0; i < CTL_EV; i++) {
        ze_event_desc_t ed = {ZE_STRUCTURE_TYPE_EVENT_DESC, NULL, i, 0, ZE_EVENT_SCOPE_FLAG_HOST};
        if (zeEventCreate(c->pool, &ed, &c->ev[i]) != ZE_RESULT_SUCCESS) return -1;
    }
    return pthread_create(&c->reader, NULL, ctl_reader, c) ? -1 : 0;
}
/* The event kernel i signals, once the reader has freed it (all CTL_EV in flight: wait). */
static inline ze_event_handle_t ctl_event(struct ctl *c, long i) {
    while (i - atomic_load_explicit(&c->freed, memory_order_relaxed) >= CTL_EV) sched_yield();
    return c->ev[i % CTL_EV];
}
/* Kernel i was appended: the reader may read its event once it completes. */
static inline void ctl_issued(struct ctl *c, long i) { atomic_store_explicit(&c->issued, i + 1, memory_order_release); }
/* The reader reads what is left and ends; the events and the pool go. */
static void ctl_stop(struct ctl *c) {
    atomic_store(&c->stop, 1);
    pthread_join(c->reader, NULL);
    for (uint32_t i = 0; i < CTL_EV; i++) zeEventDestroy(c->ev[i]);
    zeEventPoolDestroy(c->pool);
}
#endif
