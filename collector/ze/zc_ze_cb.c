/* SPDX-License-Identifier: MIT */
/* The application's counter-based (CB) events: which of its events are CB and with which flags,
 * learnt at every way one is created, so that the Append path moves a CB event's signal only
 * where the driver allows it (zc_ze_cb_may_move) and never host-signals one (zc_ze_cb_is).
 * A CB event is signalled only by an Append on an in-order list whose kind (immediate or not) its
 * flags name, the driver rejects zeEventHostSignal, zeEventHostReset and
 * zeCommandListAppendEventReset on it, and its completion is the list's counter reaching the
 * value of its latest signalling command. Our re-signal barrier sits on the application's own
 * in-order list right after its operation, so the app's counter semantics hold; an event whose
 * completion the application set up itself (external or aggregate counter storage, an IPC
 * import, zexCounterBasedEventCreate's counter memory) keeps its signal where it is: that
 * operation goes untimed.
 * Creation paths: a pool whose zeEventPoolCreate pNext carries
 * ze_event_pool_counter_based_exp_desc_t (spec 1.8), then zeEventCreate; zexCounterBasedEventCreate2
 * and zexCounterBasedEventCreate, compute-runtime's extension functions, which the application
 * reaches only through zeDriverGetExtensionFunctionAddress (our wrappers are handed out by name
 * there; the driver's pointers kept); the core zeEventCounterBasedCreate (1.15) and
 * zeEventCounterBasedOpenIpcHandle; and zeEventGetCounterBasedFlags (1.17), asked at zeEventCreate
 * where the driver has it. Layouts and values are the published spec's and compute-runtime's
 * public extension headers', declared here (Debian's headers are spec 1.4). */
#include "zc_ze_cb.h"

#include <string.h>

/* ---------------------------------------------------------------- the spec's declarations */
#define STYPE_POOL_CB_EXP_DESC 0x00020014u      /* ze_event_pool_counter_based_exp_desc_t */
#define STYPE_EVENT_CB_AGGREGATE_DESC 0x0002003Fu /* ze_event_counter_based_external_aggregate_storage_desc_t */
/* creation flags, the same bits for zex_counter_based_event_desc_t and ze_event_counter_based_desc_t */
#define CB_IMMEDIATE 0x1u
#define CB_NON_IMMEDIATE 0x2u
#define CB_IPC 0x8u
/* ours, beside them */
#define CB_KEEP 0x10000u  /* its signal is never moved */
#define CB_KNOWN 0x20000u /* a non-zero map value for every CB event */

struct cb_chain { /* the head of every descriptor of a pNext chain */
    ze_structure_type_t stype;
    const void *pNext;
};
struct cb_pool_desc {
    ze_structure_type_t stype;
    const void *pNext;
    uint32_t flags;
};
struct cb_desc { /* zex_counter_based_event_desc_t and ze_event_counter_based_desc_t alike */
    ze_structure_type_t stype;
    const void *pNext;
    uint32_t flags;
    ze_event_scope_flags_t signal, wait;
};
typedef ze_result_t (*cb_create2_fn)(ze_context_handle_t, ze_device_handle_t, const struct cb_desc *, ze_event_handle_t *);
typedef ze_result_t (*cb_create1_fn)(ze_context_handle_t, ze_device_handle_t, uint64_t *, uint64_t *, uint64_t,
                                     const ze_event_desc_t *, ze_event_handle_t *);

/* event -> flags | CB_KNOWN; pool -> its events' flags | CB_KNOWN (each map locks itself) */
static struct zc_map cb_events = ZC_MAP_INIT, cb_pools = ZC_MAP_INIT;
static atomic_bool cb_any; /* no lookups at all until the first CB event */

static void learn(ze_event_handle_t ev, uint32_t flags) {
    if (!(flags & (CB_IMMEDIATE | CB_NON_IMMEDIATE))) flags |= CB_IMMEDIATE; /* the default kind */
    int err = 0;
    zc_map_put(&cb_events, ev, (void *)(uintptr_t)(flags | CB_KNOWN), &err);
    if (err) { /* unknown, it would look like a regular event: time nothing from now on */
        ZC_FAIL(ZC_F_DEVICE_TIMING, "out of memory recording a counter-based event");
        return;
    }
    if (!atomic_load_explicit(&cb_any, memory_order_relaxed)) atomic_store(&cb_any, true);
}

/* ---------------------------------------------------------------- what the Append path asks */
static uint32_t flags_of(ze_event_handle_t ev) {
    if (!atomic_load_explicit(&cb_any, memory_order_acquire)) return 0;
    return (uint32_t)(uintptr_t)zc_map_get(&cb_events, ev);
}

bool zc_ze_cb_is(ze_event_handle_t ev) { return ev && flags_of(ev) != 0; }

bool zc_ze_cb_may_move(const struct zc_list *l, ze_event_handle_t ev) {
    uint32_t f = flags_of(ev);
    if (!f) return true;
    /* elsewhere the driver rejects the application's own Append: it gets exactly that */
    if ((f & CB_KEEP) || !l->in_order) return false;
    return (f & (l->immediate ? CB_IMMEDIATE : CB_NON_IMMEDIATE)) != 0;
}

void zc_ze_cb_forget(ze_event_handle_t ev) {
    if (atomic_load_explicit(&cb_any, memory_order_acquire)) zc_map_del(&cb_events, ev);
}

/* A descriptor chain that asks for counter storage of the application's own (or anything we do
 * not know): the signal stays on its operation. */
static uint32_t chain_keep(const void *pNext) {
    return pNext ? CB_KEEP : 0;
}

/* ---------------------------------------------------------------- pools and zeEventCreate */
void zc_ze_post_zeEventPoolCreate(ze_event_pool_create_params_t *p, ze_result_t r, struct zc_ze_call *c) {
    if (r != ZE_RESULT_SUCCESS || !*p->pdesc || !*p->pphEventPool) return;
    unsigned hops = 0; /* a chain of the application's that loops must not hang us */
    for (const struct cb_chain *d = (*p->pdesc)->pNext; d && hops < 64; d = d->pNext, hops++) {
        if ((uint32_t)d->stype != STYPE_POOL_CB_EXP_DESC) continue;
        uint32_t f = ((const struct cb_pool_desc *)d)->flags & (CB_IMMEDIATE | CB_NON_IMMEDIATE);
        if ((*p->pdesc)->flags & ZE_EVENT_POOL_FLAG_IPC) f |= CB_KEEP; /* shared with another process */
        int err = 0;
        zc_map_put(&cb_pools, **p->pphEventPool, (void *)(uintptr_t)((f ? f : CB_IMMEDIATE) | CB_KNOWN), &err);
        if (err) ZC_FAIL(ZC_F_DEVICE_TIMING, "out of memory recording a counter-based event pool");
        return;
    }
}

void zc_ze_pre_zeEventPoolDestroy(ze_event_pool_destroy_params_t *p, struct zc_ze_call *c) {
    zc_map_del(&cb_pools, *p->phEventPool);
}

void zc_ze_post_zeEventCreate(ze_event_create_params_t *p, ze_result_t r, struct zc_ze_call *c) {
    if (r != ZE_RESULT_SUCCESS || !*p->pphEvent) return;
    ze_event_handle_t ev = **p->pphEvent;
    uint32_t f = (uint32_t)(uintptr_t)zc_map_get(&cb_pools, *p->phEventPool);
    /* a driver of spec 1.17 says itself (CB by a way this file does not know) */
    uint32_t asked = 0;
    if (!f && zc_ze_real.ze_event.pfnGetCounterBasedFlags &&
        zc_ze_real.ze_event.pfnGetCounterBasedFlags(ev, &asked) == ZE_RESULT_SUCCESS && asked)
        f = asked | CB_KEEP * ((asked & CB_IPC) != 0);
    if (f) learn(ev, f & ~CB_KNOWN);
    else zc_ze_cb_forget(ev); /* a handle the driver reused */
}

/* ---------------------------------------------------------------- core creation (1.15) */
void zc_ze_post_zeEventCounterBasedCreate(zc_zeEventCounterBasedCreate_params_t *p, ze_result_t r, struct zc_ze_call *c) {
    if (r != ZE_RESULT_SUCCESS || !*p->pphEvent || !*p->pdesc) return;
    const struct cb_desc *d = (const void *)*p->pdesc;
    learn(**p->pphEvent, d->flags | chain_keep(d->pNext));
}

/* an event of another process: it signals it, this one only waits */
void zc_ze_post_zeEventCounterBasedOpenIpcHandle(zc_zeEventCounterBasedOpenIpcHandle_params_t *p, ze_result_t r,
                                                 struct zc_ze_call *c) {
    if (r == ZE_RESULT_SUCCESS && *p->pphEvent) learn(**p->pphEvent, CB_IMMEDIATE | CB_NON_IMMEDIATE | CB_KEEP);
}

/* ---------------------------------------------------------------- extension functions */
/* The driver's own functions behind our wrappers. A second driver answering the same name with
 * another function keeps its own, unwrapped (its events go unrecognised: said once). */
static _Atomic uintptr_t real_create2, real_create1;

static ze_result_t zc_zexCounterBasedEventCreate2(ze_context_handle_t hc, ze_device_handle_t hd, const struct cb_desc *desc,
                                                  ze_event_handle_t *ph) {
    cb_create2_fn f = (cb_create2_fn)atomic_load(&real_create2); /* stored before this wrapper was handed out */
    ze_result_t r = f(hc, hd, desc, ph);
    if (r == ZE_RESULT_SUCCESS && ph && *ph && desc) learn(*ph, desc->flags | chain_keep(desc->pNext));
    return r;
}

/* counters in memory the application gave: its completion is the application's business */
static ze_result_t zc_zexCounterBasedEventCreate(ze_context_handle_t hc, ze_device_handle_t hd, uint64_t *dev_addr,
                                                 uint64_t *host_addr, uint64_t completion, const ze_event_desc_t *desc,
                                                 ze_event_handle_t *ph) {
    cb_create1_fn f = (cb_create1_fn)atomic_load(&real_create1);
    ze_result_t r = f(hc, hd, dev_addr, host_addr, completion, desc, ph);
    if (r == ZE_RESULT_SUCCESS && ph && *ph) learn(*ph, CB_IMMEDIATE | CB_NON_IMMEDIATE | CB_KEEP);
    return r;
}

/* Keeps the driver's pointer and hands out ours; false: the driver's stays (another driver's). */
static bool swap_in(void **slot, _Atomic uintptr_t *real, void *ours) {
    uintptr_t expected = 0;
    if (atomic_compare_exchange_strong(real, &expected, (uintptr_t)*slot) || expected == (uintptr_t)*slot) {
        *slot = ours;
        return true;
    }
    static atomic_bool said;
    if (!atomic_exchange(&said, true))
        ZC_WARN("a second driver's counter-based event creation is not wrapped: its events' operations may go untimed");
    return false;
}

bool zc_ze_cb_address(const char *name, void **slot) {
    if (strcmp(name, "zexCounterBasedEventCreate2") == 0)
        return swap_in(slot, &real_create2, (void *)(uintptr_t)zc_zexCounterBasedEventCreate2);
    if (strcmp(name, "zexCounterBasedEventCreate") == 0)
        return swap_in(slot, &real_create1, (void *)(uintptr_t)zc_zexCounterBasedEventCreate);
    return false;
}
