/* SPDX-License-Identifier: MIT */
/* zesim's counter-based (CB) events, with the rules compute-runtime applies to them (read in its
 * sources; the collector must live with each):
 * - created three ways: zexCounterBasedEventCreate2 / zexCounterBasedEventCreate, reached only
 *   through zeDriverGetExtensionFunctionAddress; zeEventCreate from a pool whose pNext carries
 *   ze_event_pool_counter_based_exp_desc_t; the core zeEventCounterBasedCreate (spec 1.15);
 *   zeEventGetCounterBasedFlags (1.17) answers the creation flags (0 for regular events);
 * - signalled only by an Append on an in-order list whose kind its flags allow (IMMEDIATE,
 *   NON_IMMEDIATE), else ZE_RESULT_ERROR_INVALID_ARGUMENT; zeEventHostSignal is rejected with
 *   ZE_RESULT_ERROR_UNSUPPORTED_FEATURE (implicit ones too), zeEventHostReset likewise on explicit
 *   ones, zeCommandListAppendEventReset with ZE_RESULT_ERROR_INVALID_ARGUMENT;
 * - in-order counters: each signalling command re-arms the event (not ready from its submission)
 *   and only the latest one signals it, with its own timestamps;
 * - ZESIM_IMPLICIT_CB=1: a regular event signalled by an Append on an in-order immediate list
 *   becomes CB (as on PVC and BMG); an event used on any other list, or reset by an Append,
 *   never converts again; a host reset returns it to regular.
 * Each creation, conversion and rejection is a truth line: {"kind":"cb_event"|"cb_implicit"|
 * "cb_reject", ...}. Also the timestamp queries after spec 1.4 (QueryKernelTimestampsExt and
 * zeEventQueryTimestampsExp), which CB profiling reads. */
#include "zs_internal.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef void (*zs_fn)(void);
#define ZS_EXPORT __attribute__((visibility("default")))

/* ---------------------------------------------------------------- the spec's declarations */
#define STYPE_POOL_CB_EXP_DESC 0x00020014u /* ze_event_pool_counter_based_exp_desc_t (1.8) */
#define STYPE_EVENT_CB_DESC 0x0002003Au    /* ze_event_counter_based_desc_t (1.15) */
#define STYPE_ZEX_CB_DESC 0x0003001Cu      /* zex_counter_based_event_desc_t (compute-runtime) */
/* creation flags, the same bits in zex_counter_based_event_exp_flags_t and
 * ze_event_counter_based_flags_t: IMMEDIATE 1, NON_IMMEDIATE 2, HOST_VISIBLE 4, IPC 8, device
 * (kernel) timestamps 16, host (mapped) timestamps 32, graph external 64 */
#define CB_IPC 8u
#define CB_DEV_TS 16u
#define CB_HOST_TS 32u
#define CB_KIND (ZS_CB_IMMEDIATE | ZS_CB_NON_IMMEDIATE)
#define CB_IS(ev) (((ev)->cb & (ZS_CB_EXPLICIT | ZS_CB_IMPLICIT)) != 0)

typedef struct {
    ze_structure_type_t stype;
    const void *pNext;
    uint32_t flags;
} zs_pool_cb_desc_t;
typedef struct {
    ze_structure_type_t stype;
    const void *pNext;
    uint32_t flags;
    ze_event_scope_flags_t signal, wait;
} zs_cb_desc_t;
typedef struct {
    ze_structure_type_t stype;
    void *pNext;
    ze_kernel_timestamp_result_t *pKernelTimestampsBuffer;
    ze_kernel_timestamp_result_t *pSynchronizedTimestampsBuffer; /* two {start, end} pairs as well */
} zs_kts_ext_results_t;

static _Atomic int implicit_on = -1;
static bool implicit_knob(void) {
    int v = atomic_load(&implicit_on);
    if (v < 0) {
        const char *e = getenv("ZESIM_IMPLICIT_CB");
        v = e && strcmp(e, "1") == 0;
        atomic_store(&implicit_on, v);
    }
    return v != 0;
}

static ze_result_t reject(const char *api, ze_event_handle_t ev, const void *list, ze_result_t r) {
    zs_truthf("{\"kind\":\"cb_reject\",\"api\":\"%s\",\"event\":\"%p\",\"list\":\"%p\",\"result\":%u}", api, (void *)ev,
          list, (unsigned)r);
    return r;
}

/* ---------------------------------------------------------------- creation */
uint32_t zs_cb_pool_flags(const void *pNext) {
    unsigned hops = 0;
    for (const zs_pool_cb_desc_t *d = pNext; d && hops < 64; d = d->pNext, hops++)
        if ((uint32_t)d->stype == STYPE_POOL_CB_EXP_DESC) /* no kind named: immediate (the default) */
            return ((d->flags & CB_KIND) ? d->flags & CB_KIND : ZS_CB_IMMEDIATE) | ZS_CB_EXPLICIT;
    return 0;
}

static ze_result_t cb_create(ze_context_handle_t c, ze_device_handle_t d, uint32_t flags, const char *via,
                             ze_event_handle_t *ph) {
    ZS_CHECK(c, ZS_MAGIC_CONTEXT);
    ZS_CHECK(d, ZS_MAGIC_DEVICE);
    if (!ph) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    if (flags > 0x7f) return ZE_RESULT_ERROR_INVALID_ENUMERATION;
    bool ts = (flags & (CB_DEV_TS | CB_HOST_TS)) != 0;
    if (((flags & CB_DEV_TS) && (flags & CB_HOST_TS)) || ((flags & CB_IPC) && ts)) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    if (!(flags & CB_KIND)) flags |= ZS_CB_IMMEDIATE;
    /* its own storage: a pool of one that nobody else sees */
    struct _ze_event_pool_handle_t *p = calloc(1, sizeof(*p));
    struct _ze_event_handle_t *e = calloc(1, sizeof(*e));
    if (!p || !e) {
        free(p);
        free(e);
        return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    }
    p->magic = ZS_MAGIC_EVENT_POOL;
    p->flags = ZE_EVENT_POOL_FLAG_HOST_VISIBLE | (ts ? ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP : 0);
    p->count = 1;
    p->cb_flags = flags | ZS_CB_EXPLICIT;
    e->magic = ZS_MAGIC_EVENT;
    e->pool = p;
    e->cb = p->cb_flags;
    e->own_pool = true;
    zs_truthf("{\"kind\":\"cb_event\",\"event\":\"%p\",\"via\":\"%s\",\"flags\":%u}", (void *)e, via, flags);
    *ph = e;
    return ZE_RESULT_SUCCESS;
}

/* zexCounterBasedEventCreate2(hContext, hDevice, desc, phEvent): what UR v2 creates every event with */
static ze_result_t zs_zexCounterBasedEventCreate2(ze_context_handle_t c, ze_device_handle_t d, const zs_cb_desc_t *desc,
                                                  ze_event_handle_t *ph) {
    ZS_ENTER_DEV();
    if (!desc) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    if ((uint32_t)desc->stype != STYPE_ZEX_CB_DESC) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    return cb_create(c, d, desc->flags, "zex2", ph);
}

/* zexCounterBasedEventCreate(hContext, hDevice, deviceAddress, hostAddress, completionValue, desc,
 * phEvent): the first form, over counter memory of the caller's; both list kinds, no timestamps.
 * zesim does not watch that memory: the event is signalled by Appends like the others. */
static ze_result_t zs_zexCounterBasedEventCreate(ze_context_handle_t c, ze_device_handle_t d, uint64_t *devAddr,
                                                 uint64_t *hostAddr, uint64_t completion, const ze_event_desc_t *desc,
                                                 ze_event_handle_t *ph) {
    ZS_ENTER_DEV();
    (void)devAddr, (void)hostAddr, (void)completion;
    if (!desc) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    return cb_create(c, d, CB_KIND, "zex1", ph);
}

/* zeEventCounterBasedCreate (1.15) */
static ze_result_t zs_zeEventCounterBasedCreate(ze_context_handle_t c, ze_device_handle_t d, const zs_cb_desc_t *desc,
                                                ze_event_handle_t *ph) {
    ZS_ENTER_DEV();
    if (!desc) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    if ((uint32_t)desc->stype != STYPE_EVENT_CB_DESC) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    return cb_create(c, d, desc->flags, "core", ph);
}

/* zeEventGetCounterBasedFlags (1.17): the creation flags; 0 for a regular event (converted or not) */
static ze_result_t zs_zeEventGetCounterBasedFlags(ze_event_handle_t e, uint32_t *flags) {
    ZS_ENTER_DEV();
    ZS_CHECK(e, ZS_MAGIC_EVENT);
    if (!flags) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    pthread_mutex_lock(&zs.lock);
    *flags = (e->cb & ZS_CB_EXPLICIT) ? e->cb & 0x7fu : 0;
    pthread_mutex_unlock(&zs.lock);
    return ZE_RESULT_SUCCESS;
}

void *zs_cb_ext_function(const char *name) {
    if (strcmp(name, "zexCounterBasedEventCreate2") == 0) return (void *)(uintptr_t)zs_zexCounterBasedEventCreate2;
    if (strcmp(name, "zexCounterBasedEventCreate") == 0) return (void *)(uintptr_t)zs_zexCounterBasedEventCreate;
    return NULL;
}

/* ---------------------------------------------------------------- the driver's rules */
ze_result_t zs_cb_append_check(ze_command_list_handle_t l, ze_event_handle_t ev) {
    ze_result_t r = ZE_RESULT_SUCCESS;
    bool converted = false;
    /* a regular event where nothing converts: nothing to check or change (the creation's
     * flags never change, so this needs no lock) */
    if (!(ev->cb & ZS_CB_EXPLICIT) && !implicit_knob()) return ZE_RESULT_SUCCESS;
    pthread_mutex_lock(&zs.lock);
    if (ev->cb & ZS_CB_EXPLICIT) {
        uint32_t need = l->immediate ? ZS_CB_IMMEDIATE : ZS_CB_NON_IMMEDIATE;
        if (!l->in_order || !(ev->cb & need)) r = ZE_RESULT_ERROR_INVALID_ARGUMENT;
    } else if (implicit_knob() && !(ev->cb & ZS_CB_IMPLICIT_OFF) && !(ev->pool->flags & ZE_EVENT_POOL_FLAG_IPC)) {
        if (l->immediate && l->in_order) {
            converted = !(ev->cb & ZS_CB_IMPLICIT);
            ev->cb |= ZS_CB_IMPLICIT;
        } else {
            ev->cb = (ev->cb & ~ZS_CB_IMPLICIT) | ZS_CB_IMPLICIT_OFF; /* for good */
        }
    }
    pthread_mutex_unlock(&zs.lock);
    if (converted) zs_truthf("{\"kind\":\"cb_implicit\",\"event\":\"%p\",\"list\":\"%p\"}", (void *)ev, (void *)l);
    return r == ZE_RESULT_SUCCESS ? r : reject("append", ev, l, r);
}

ze_result_t zs_cb_host_signal(ze_event_handle_t ev) {
    bool cb = CB_IS(ev);
    return cb ? reject("zeEventHostSignal", ev, NULL, ZE_RESULT_ERROR_UNSUPPORTED_FEATURE) : ZE_RESULT_SUCCESS;
}

ze_result_t zs_cb_host_reset(ze_event_handle_t ev) {
    uint32_t cb = ev->cb;
    bool explicit = (cb & ZS_CB_EXPLICIT) != 0;
    if (cb & ZS_CB_IMPLICIT) {
        pthread_mutex_lock(&zs.lock);
        ev->cb &= ~ZS_CB_IMPLICIT; /* a converted event is regular again until its next signal */
        pthread_mutex_unlock(&zs.lock);
    }
    return explicit ? reject("zeEventHostReset", ev, NULL, ZE_RESULT_ERROR_UNSUPPORTED_FEATURE) : ZE_RESULT_SUCCESS;
}

ze_result_t zs_cb_append_reset(ze_event_handle_t ev) {
    pthread_mutex_lock(&zs.lock);
    bool explicit = (ev->cb & ZS_CB_EXPLICIT) != 0;
    if (!explicit) ev->cb = (ev->cb & ~ZS_CB_IMPLICIT) | ZS_CB_IMPLICIT_OFF;
    pthread_mutex_unlock(&zs.lock);
    return explicit ? reject("zeCommandListAppendEventReset", ev, NULL, ZE_RESULT_ERROR_INVALID_ARGUMENT)
                    : ZE_RESULT_SUCCESS;
}

/* A signalling command enters its stream (an immediate Append, or each execution of a regular
 * list's command): the event's counter target moves to it, so the event is not ready until it
 * completes, and an older command that completes later no longer signals it. */
void zs_cb_enqueue_locked(struct zs_inst *in) {
    ze_event_handle_t ev = in->cmd.signal;
    if (!ev || ev->magic != ZS_MAGIC_EVENT || !CB_IS(ev)) return;
    in->cmd.cb_gen = ++ev->cb_gen;
    zs_event_reset(ev);
}

bool zs_cb_signal_current_locked(const struct zs_inst *in) {
    ze_event_handle_t ev = in->cmd.signal;
    return !in->cmd.cb_gen || !CB_IS(ev) || in->cmd.cb_gen == ev->cb_gen;
}

/* ---------------------------------------------------------------- timestamp queries after 1.4 */
static ze_result_t read_ts(ze_event_handle_t e, ze_kernel_timestamp_result_t *r) {
    if (!(e->pool->flags & ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP)) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    struct zs_event_state st;
    zs_event_read(e, &st);
    if (!st.signaled) return ZE_RESULT_NOT_READY;
    r->global.kernelStart = r->context.kernelStart = st.has_ts ? st.ts_start : 0;
    r->global.kernelEnd = r->context.kernelEnd = st.has_ts ? st.ts_end : 0;
    return ZE_RESULT_SUCCESS;
}

/* what both queries check before they read */
static ze_result_t query(ze_event_handle_t e, ze_device_handle_t d, const uint32_t *pCount,
                         ze_kernel_timestamp_result_t *r) {
    ZS_CHECK(e, ZS_MAGIC_EVENT);
    ZS_CHECK(d, ZS_MAGIC_DEVICE);
    if (!pCount) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    return read_ts(e, r);
}

/* zeEventQueryKernelTimestampsExt (1.6): one packet here (one engine, no sub-devices); the
 * synchronised (host-domain) buffer gets the same device ticks */
static ze_result_t zs_zeEventQueryKernelTimestampsExt(ze_event_handle_t e, ze_device_handle_t d, uint32_t *pCount,
                                                      zs_kts_ext_results_t *res) {
    ZS_ENTER_DEV();
    ze_kernel_timestamp_result_t r;
    ze_result_t rc = query(e, d, pCount, &r);
    if (rc != ZE_RESULT_SUCCESS) return rc;
    if (*pCount == 0) {
        *pCount = 1;
        return ZE_RESULT_SUCCESS;
    }
    *pCount = 1;
    if (res && res->pKernelTimestampsBuffer) res->pKernelTimestampsBuffer[0] = r;
    if (res && res->pSynchronizedTimestampsBuffer) res->pSynchronizedTimestampsBuffer[0] = r;
    return ZE_RESULT_SUCCESS;
}

/* zeEventQueryTimestampsExp (1.2, the event_exp table): per sub-device, one here */
static ze_result_t zs_zeEventQueryTimestampsExp(ze_event_handle_t e, ze_device_handle_t d, uint32_t *pCount,
                                                ze_kernel_timestamp_result_t *out) {
    ZS_ENTER_DEV();
    ze_kernel_timestamp_result_t r;
    ze_result_t rc = query(e, d, pCount, &r);
    if (rc != ZE_RESULT_SUCCESS) return rc;
    if (*pCount && out) out[0] = r;
    *pCount = 1;
    return ZE_RESULT_SUCCESS;
}

#define ZS_V(minor) ZE_MAKE_VERSION(1, minor)
void zs_cb_event_table(void *t, ze_api_version_t v) {
    if (v >= ZS_V(6)) ((zs_fn *)t)[7] = (zs_fn)zs_zeEventQueryKernelTimestampsExt;
    if (v >= ZS_V(15)) ((zs_fn *)t)[11] = (zs_fn)zs_zeEventCounterBasedCreate;
    if (v >= ZS_V(17)) ((zs_fn *)t)[16] = (zs_fn)zs_zeEventGetCounterBasedFlags;
}

ZS_EXPORT ze_result_t zeGetEventExpProcAddrTable(ze_api_version_t v, ze_event_exp_dditable_t *t);
ze_result_t zeGetEventExpProcAddrTable(ze_api_version_t v, ze_event_exp_dditable_t *t) {
    zs_global_init();
    if (!t) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    if (ZE_MAJOR_VERSION(v) != 1) return ZE_RESULT_ERROR_UNSUPPORTED_VERSION;
    t->pfnQueryTimestampsExp = zs_zeEventQueryTimestampsExp;
    return ZE_RESULT_SUCCESS;
}
