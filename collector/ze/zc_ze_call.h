/* SPDX-License-Identifier: MIT */
/* The begin and end of every generated wrapper, inline (zc_ze_gen.c includes this); their slow
 * paths are in zc_ze_call.c. */
#ifndef ZC_ZE_CALL_H
#define ZC_ZE_CALL_H

#include "zc_ze_internal.h"

/* Every generated wrapper: begin before the real call (false: call through untouched), end after
 * it. Inline: a wrapper that records nothing but the call costs a TLS load, two TSC reads and one
 * record in the thread's own buffer (ZC_EV_CALL), no lock and no atomic instruction. While
 * recording is off (or the collector inactive) it costs one load: an API without hooks (hooked
 * 0, a constant) passes straight through, one with hooks asks zc_ze_call_closed. */
bool zc_ze_call_begin_slow(struct zc_ze_call *c, uint32_t api);
bool zc_ze_call_closed(struct zc_ze_call *c, uint32_t api);
void zc_ze_call_end_slow(struct zc_ze_call *c, uint64_t t1);
/* Whether an API's hooks have work while recording is off (policy: a constant per wrapper). */
#define ZC_ZE_CLOSED_WANTS(pol)                                                                                \
    ((pol) == ZC_ZE_CLOSED_ALWAYS || ((pol) == ZC_ZE_CLOSED_UEVENTS && atomic_load_explicit(&zc_ze_uevents_any, memory_order_relaxed)) || \
     ((pol) == ZC_ZE_CLOSED_LAUNCH && zc_win_kernel_windows) ||                                              \
     ((pol) == ZC_ZE_CLOSED_EXECUTE && atomic_load_explicit(&zc_ze_tmpl_lists, memory_order_relaxed)) ||     \
     ((pol) == ZC_ZE_CLOSED_SYNC && !zc_knobs.DRAIN_INTERVAL_US))
/* API timing on and host ticks from the TSC, both settled before anything is recorded (core_init
 * and zc_clock_init run before ze_init, which sets this; never changed after): a recorded call's
 * begin and end then test this one flag, not the feature and the clock source each. False
 * otherwise, and until ze_init: zc_on and zc_tick decide as before. */
extern bool zc_ze_tsc_timing;
/* A call's Enter time: 0 while API timing is off. */
static inline uint64_t zc_ze_call_t0(void) {
    if (__builtin_expect(zc_ze_tsc_timing, 1)) return zc_tick_tsc();
    return zc_on(ZC_F_API_TIMING) ? zc_tick() : 0;
}
/* Recording on (the entry checked it): an API without closed-mode hooks. */
static inline __attribute__((always_inline)) bool zc_ze_call_begin_open(struct zc_ze_call *c, uint32_t api) {
    struct zc_thread *t = zc_tls_thread;
    if (__builtin_expect(!t, 0)) return zc_ze_call_begin_slow(c, api);
    c->t = t;
    c->api = api;
    c->callsite = 0;
    c->user_event = NULL;
    c->inj = NULL;
    c->ptr = NULL; /* lists, nlists: set by the ExecuteCommandLists prologue, read only where ptr is */
    c->t0 = zc_ze_call_t0();
    return true;
}
/* w: zc_rec now. Closed: the entry let through only APIs whose hooks want to run then
 * (ZC_ZE_CLOSED_WANTS); zc_ze_call_closed decides again (and for the inactive collector). */
static inline __attribute__((always_inline)) bool zc_ze_call_begin(struct zc_ze_call *c, uint32_t api, uint64_t w) {
    if (__builtin_expect(!zc_rec_open_w(w), 0)) return zc_ze_call_closed(c, api);
    return zc_ze_call_begin_open(c, api);
}
/* The PAPI-sampling wrappers (zcp_*, ze_hooks.spec: papi, papi-launch), installed instead of the
 * plain ones only when PAPI events are configured: the counters are read after the call's Enter
 * time (zc_ze_call_begin) and before its Leave time, and the whole call is written at its end
 * (Metric, Enter, [callsite], Metric, Leave), so zc_ze_call_end then writes nothing. */
struct zc_ze_pcall {
    struct zc_ze_call c;
    size_t k; /* Metric records of the Enter in m (0: the call is not sampled) */
    struct zc_ev m[ZC_PAPI_MAX_RECS];
};
void zc_ze_papi_enter(struct zc_ze_pcall *p);
void zc_ze_papi_leave(struct zc_ze_pcall *p);
extern uint32_t zc_ze_api_region_cache[]; /* region per API, ZC_ZE_REGION_NONE = not defined yet */
#define ZC_ZE_REGION_NONE UINT32_MAX
static inline __attribute__((always_inline)) void zc_ze_call_end(struct zc_ze_call *c, ze_result_t r, uint32_t api) {
    (void)r;
    /* t0 is never set without t: zc_ze_call_closed clears both, and the hooks that take t0 as an
     * operation's submit time (timed_pre) run for open calls only */
    if (!c->t0) return;
    uint64_t t1;
    if (__builtin_expect(zc_ze_tsc_timing, 1)) {
        t1 = zc_tick_tsc();
    } else {
        /* off: t0 is then an Append's submit time (zc_ze_timed_pre), not an Enter */
        if (!zc_on(ZC_F_API_TIMING)) return;
        t1 = zc_tick();
    }
    uint32_t region = __atomic_load_n(&zc_ze_api_region_cache[api], __ATOMIC_RELAXED); /* api: a constant */
    struct zc_loc *l = c->t->loc;
    /* n read once: only this thread changes it while the collector is active (zc_own_begin) */
    size_t n = l->n;
    if (__builtin_expect(region != ZC_ZE_REGION_NONE && n < l->lim && !zc_own_locked, 1)) {
        uint64_t s;
        if (zc_own_begin_seq(l, &s)) {
            l->buf[n] = (struct zc_ev){c->t0, ZC_EV_CALL, region, t1, c->callsite, 0};
            zc_loc_publish(l, n + 1);
        }
        zc_own_end_seq(l, s);
        return;
    }
    zc_ze_call_end_slow(c, t1); /* buffer full, region not defined yet, or owners lock */
}


#endif
