/* SPDX-License-Identifier: MIT */
/* The per-call begin/end that records every Level Zero call as a region on the calling thread:
 * the slow paths of zc_ze_call.h (a thread's first call, recording off, buffer full), the API
 * regions, and the PAPI-sampling variant. */
#include "zc_ze_call.h"

#include <string.h>

/* ---------------------------------------------------------------- calls */
uint32_t zc_ze_api_region_cache[ZC_ZE_API_COUNT] = {[0 ... ZC_ZE_API_COUNT - 1] = ZC_ZE_REGION_NONE};
bool zc_ze_tsc_timing;

uint32_t zc_ze_api_region(uint32_t api) {
    uint32_t r = __atomic_load_n(&zc_ze_api_region_cache[api], __ATOMIC_RELAXED);
    if (r != ZC_ZE_REGION_NONE) return r;
    const char *n = zc_ze_api_names[api];
    enum zc_region_role role = ZC_ROLE_FUNCTION;
    if (strstr(n, "MemoryCopy") || strstr(n, "ImageCopy")) role = ZC_ROLE_DATA_TRANSFER;
    else if (strstr(n, "MemAlloc")) role = ZC_ROLE_ALLOCATE;
    else if (strstr(n, "MemFree")) role = ZC_ROLE_DEALLOCATE;
    else if (strstr(n, "Launch")) role = ZC_ROLE_WRAPPER;
    r = zc_def_region(n, role, ZC_PARADIGM_L0);
    __atomic_store_n(&zc_ze_api_region_cache[api], r, __ATOMIC_RELAXED);
    return r;
}

/* The thread's first call while recording: registration. */
bool zc_ze_call_begin_slow(struct zc_ze_call *c, uint32_t api) {
    if (!zc_thread_get()) return false;
    return zc_ze_call_begin_open(c, api);
}

atomic_bool zc_ze_uevents_any;
atomic_uint_fast64_t zc_ze_tmpl_lists;

/* A closed call whose launch opened a kernel window: from here on it is recorded like any. */
bool zc_ze_call_reopen(struct zc_ze_call *c) {
    struct zc_thread *t = zc_thread_get();
    if (!t) return false;
    c->t = t;
    c->t0 = zc_ze_call_t0();
    return true;
}

/* Recording is off (a window closed, an unselected rank) or the collector is not active: the
 * hooks of this API run for bookkeeping only (c->t NULL), or not at all (false). Nothing is
 * injected, no call is recorded, the thread is not registered. */
bool zc_ze_call_closed(struct zc_ze_call *c, uint32_t api) {
    if (!zc_active()) {
        /* after finalize (or in a forked child) lists we timed still carry our events: their
         * executions keep getting the helper lists that keep the app's events correct */
        if (api != ZC_ZE_zeCommandQueueExecuteCommandLists || !zc_ze.ready) return false;
    } else {
        switch (zc_ze_closed_policy[api]) {
        case ZC_ZE_CLOSED_ALWAYS: break;
        case ZC_ZE_CLOSED_UEVENTS:
            if (!atomic_load_explicit(&zc_ze_uevents_any, memory_order_relaxed)) return false;
            break;
        case ZC_ZE_CLOSED_LAUNCH:
            if (!zc_win_kernel_windows) return false;
            break;
        case ZC_ZE_CLOSED_EXECUTE:
            if (!atomic_load_explicit(&zc_ze_tmpl_lists, memory_order_relaxed) || !zc_ze.ready) return false;
            break;
        case ZC_ZE_CLOSED_SYNC:
            if (zc_knobs.DRAIN_INTERVAL_US) return false;
            break;
        default: return false;
        }
    }
    memset(c, 0, sizeof(*c)); /* t = NULL: closed */
    c->api = api;
    return true;
}

/* The region not defined yet, or the buffer full. */
void zc_ze_call_end_slow(struct zc_ze_call *c, uint64_t t1) {
    uint32_t region = zc_ze_api_region(c->api);
    struct zc_ev ev = {c->t0, ZC_EV_CALL, region, t1, c->callsite, 0};
    struct zc_loc *l = c->t->loc;
    if (zc_own_begin(l)) zc_own_put(l, &ev, 1);
    zc_own_end(l);
}

/* ---------------------------------------------------------------- PAPI */
/* Decided when the tables are wrapped (zeInit): events configured and PAPI not found unusable or
 * failed yet; a later failure is seen by zc_papi_read, which then reads nothing. */
bool zc_ze_papi_wraps(bool launch) { return zc_on(ZC_F_PAPI) && (!launch || zc_knobs.PAPI_AROUND_LAUNCHES); }

void zc_ze_papi_enter(struct zc_ze_pcall *p) {
    p->k = 0;
    /* no Enter time: the call is not recorded as a region (API timing off, or not recording) */
    if (!p->c.t || !p->c.t0) return;
    p->k = zc_papi_read(p->c.t, p->m);
}

void zc_ze_papi_leave(struct zc_ze_pcall *p) {
    struct zc_ze_call *c = &p->c;
    if (!p->k || !c->t0 || !zc_on(ZC_F_API_TIMING)) return;
    struct zc_ev ev[2 * ZC_PAPI_MAX_RECS + 1];
    size_t k0 = p->k, k1 = zc_papi_read(c->t, ev + k0 + 1); /* the Leave's counters, inside the region */
    uint64_t t1 = zc_tick();
    memcpy(ev, p->m, k0 * sizeof(*ev));
    zc_papi_stamp(ev, k0, c->t0);
    /* the Leave's Metric is an event inside the call: written between its Enter and its Leave */
    ev[k0] = (struct zc_ev){c->t0, ZC_EV_CALL, zc_ze_api_region(c->api), t1, c->callsite, k1};
    zc_papi_stamp(ev + k0 + 1, k1, t1);
    struct zc_loc *l = c->t->loc;
    if (zc_own_begin(l)) zc_own_put(l, ev, k0 + 1 + k1);
    zc_own_end(l);
    c->t0 = 0; /* written: zc_ze_call_end adds nothing */
}

