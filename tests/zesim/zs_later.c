/* SPDX-License-Identifier: MIT */
/* zesim's entries after spec 1.4 (Debian's headers): declared here from the published spec, each
 * filled only when the caller asks for a version that has it, as the real driver does; a caller's
 * table for an older version ends before them. Table indices and versions are those of
 * collector/ze/ze_ddi_later.spec. */
#include "zs_internal.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef void (*zs_fn)(void);
#define ZS_V(minor) ZE_MAKE_VERSION(1, minor)
/* entry `idx` of a table the caller sized for version v, when v has it */
#define ZS_SET(t, v, since, idx, fn)                                                               \
    do {                                                                                           \
        if ((v) >= ZS_V(since)) ((zs_fn *)(t))[idx] = (zs_fn)(fn);                                 \
    } while (0)

/* ---------------------------------------------------------------- types of the later spec */
typedef struct {
    uint32_t groupSizeX, groupSizeY, groupSizeZ;
} zs_group_size_t;
typedef struct {
    ze_structure_type_t stype;
    const void *pNext;
    uint32_t flags; /* ze_init_driver_type_flags_t: GPU = 1, NPU = 2 */
} zs_init_driver_type_desc_t;
#define ZS_INIT_DRIVER_TYPE_GPU 1u
#define ZS_STYPE_DRIVER_DDI_HANDLES_EXT_PROPERTIES 0x00020027u
typedef struct {
    ze_structure_type_t stype;
    void *pNext;
    uint32_t flags; /* DDI_HANDLE_EXT_SUPPORTED = 1 */
} zs_ddi_handles_props_t;

/* ---------------------------------------------------------------- Global */
/* zeInitDrivers (1.10): initialises like zeInit, then answers like zeDriverGet; a request that
 * names no GPU finds no driver here. */
static ze_result_t zs_zeInitDrivers(uint32_t *pCount, ze_driver_handle_t *phDrivers, zs_init_driver_type_desc_t *desc) {
    ZS_ENTER();
    if (!pCount || !desc) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    if (!(desc->flags & ZS_INIT_DRIVER_TYPE_GPU)) {
        *pCount = 0;
        return ZE_RESULT_SUCCESS;
    }
    ze_result_t r = zs_init_gpu();
    return r == ZE_RESULT_SUCCESS ? zs_driver_get(pCount, phDrivers) : r;
}

void zs_later_global(void *t, ze_api_version_t v) { ZS_SET(t, v, 10, 1, zs_zeInitDrivers); }

/* ---------------------------------------------------------------- Driver */
/* ZESIM_DDI_HANDLES=1: the driver advertises the DDI-handles extension (1.13), as compute-runtime
 * does by default, in zeDriverGetProperties' pNext chain. */
void zs_later_driver_properties(ze_driver_properties_t *p) {
    const char *e = getenv("ZESIM_DDI_HANDLES");
    bool on = e && strcmp(e, "1") == 0;
    unsigned hops = 0;
    for (ze_base_properties_t *b = p->pNext; b && hops < 64; b = b->pNext, hops++)
        if ((uint32_t)b->stype == ZS_STYPE_DRIVER_DDI_HANDLES_EXT_PROPERTIES)
            ((zs_ddi_handles_props_t *)b)->flags = on ? 1u : 0u;
}

/* ---------------------------------------------------------------- host synchronisation */
static bool stream_idle(void *arg) { return ((struct zs_stream *)arg)->npending == 0; }

/* zeCommandListHostSynchronize (1.6): an immediate list's commands so far have completed. */
static ze_result_t zs_zeCommandListHostSynchronize(ze_command_list_handle_t l, uint64_t timeout) {
    ZS_ENTER_DEV();
    ZS_CHECK(l, ZS_MAGIC_LIST);
    if (!l->immediate) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    zs_slow_sync();
    pthread_mutex_lock(&zs.lock);
    ze_result_t r = zs_wait_locked(stream_idle, l->stream, timeout);
    pthread_mutex_unlock(&zs.lock);
    return r;
}

static bool device_idle(void *arg) {
    ze_device_handle_t d = arg;
    for (int g = 0; g < ZS_NGROUPS; g++)
        for (int i = 0; i < ZS_MAX_ENGINES; i++) {
            struct zs_engine *e = d->engines[g][i];
            for (struct zs_stream *s = e ? e->streams : NULL; s; s = s->next_in_engine)
                if (s->npending) return false;
        }
    return true;
}

/* zeDeviceSynchronize (1.14): everything submitted to the device has completed. */
static ze_result_t zs_zeDeviceSynchronize(ze_device_handle_t d) {
    ZS_ENTER_DEV();
    ZS_CHECK(d, ZS_MAGIC_DEVICE);
    zs_slow_sync();
    pthread_mutex_lock(&zs.lock);
    ze_result_t r = zs_wait_locked(device_idle, d, UINT64_MAX);
    pthread_mutex_unlock(&zs.lock);
    return r;
}

void zs_later_device(void *t, ze_api_version_t v) { ZS_SET(t, v, 14, 22, zs_zeDeviceSynchronize); }

/* ---------------------------------------------------------------- launches with arguments */
/* zeCommandListAppendLaunchKernelWithArguments (1.14): group counts and sizes by value, the
 * arguments as an array of pointers to values. zesim keeps no argument sizes of its own, so each
 * value is read with the size its last zeKernelSetArgumentValue gave (arguments never set keep
 * their state). Group size and values apply to this launch only, in its capture: the kernel
 * object is not changed, so threads may launch one kernel at once (a TSan run with 8 threads
 * caught zesim changing it for the call). */
static ze_result_t zs_zeCommandListAppendLaunchKernelWithArguments(ze_command_list_handle_t l, ze_kernel_handle_t k,
                                                                   const ze_group_count_t groups, const zs_group_size_t gs,
                                                                   void **args, const void *pNext, ze_event_handle_t sig,
                                                                   uint32_t nw, ze_event_handle_t *w) {
    ZS_ENTER_DEV();
    (void)pNext;
    ZS_CHECK(k, ZS_MAGIC_KERNEL);
    if (gs.groupSizeX == 0 || gs.groupSizeY == 0 || gs.groupSizeZ == 0) return ZE_RESULT_ERROR_INVALID_GROUP_SIZE_DIMENSION;
    const struct zs_launch_with with = {gs.groupSizeX, gs.groupSizeY, gs.groupSizeZ, args};
    return zs_list_launch(l, k, &groups, &with, sig, nw, w);
}

/* zeCommandListAppendLaunchKernelWithParameters (1.14): a plain launch; its pNext forms
 * (cooperative, indirect) are not modelled and run as plain launches. */
static ze_result_t zs_zeCommandListAppendLaunchKernelWithParameters(ze_command_list_handle_t l, ze_kernel_handle_t k,
                                                                    const ze_group_count_t *g, const void *pNext,
                                                                    ze_event_handle_t sig, uint32_t nw, ze_event_handle_t *w) {
    ZS_ENTER_DEV();
    (void)pNext;
    if (!g) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    return zs_list_launch(l, k, g, NULL, sig, nw, w);
}

static ze_result_t zs_zeCommandListAppendHostFunction(ze_command_list_handle_t l, void *fn, void *user, const void *pNext,
                                                      ze_event_handle_t sig, uint32_t nw, ze_event_handle_t *w);
void zs_later_list(void *t, ze_api_version_t v) {
    ZS_SET(t, v, 6, 28, zs_zeCommandListHostSynchronize);
    ZS_SET(t, v, 17, 51, zs_zeCommandListAppendHostFunction);
    ZS_SET(t, v, 14, 36, zs_zeCommandListAppendLaunchKernelWithParameters);
    ZS_SET(t, v, 14, 37, zs_zeCommandListAppendLaunchKernelWithArguments);
    zs_graph_fill_list(t, v);
}

/* ---------------------------------------------------------------- appended command lists */
/* zeCommandListImmediateAppendCommandListsExp (1.8): regular lists executed on an immediate list's
 * timeline, in order after what the immediate list has; the wait events gate them, the signal
 * event follows them. In the truth each command is its regular list's (list, exec, cmd) on the
 * immediate list's queue, "immediate":true: it ran on an immediate list's timeline. */
static ze_result_t zs_zeCommandListImmediateAppendCommandListsExp(ze_command_list_handle_t imm, uint32_t n,
                                                                  ze_command_list_handle_t *lists, ze_event_handle_t sig,
                                                                  uint32_t nw, ze_event_handle_t *w) {
    ZS_ENTER_DEV();
    ZS_CHECK(imm, ZS_MAGIC_LIST);
    if (!imm->immediate) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    if (n == 0) return ZE_RESULT_ERROR_INVALID_SIZE;
    if (!lists) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    for (uint32_t i = 0; i < n; i++) {
        ze_command_list_handle_t l = lists[i];
        if (!l) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
        if (l->magic != ZS_MAGIC_LIST || l->immediate || !l->closed) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
        if (l->device != imm->device || l->ordinal != imm->ordinal) return ZE_RESULT_ERROR_INVALID_COMMAND_LIST_TYPE;
    }
    ze_result_t r = ZE_RESULT_SUCCESS;
    if (nw) r = zs_list_barrier(imm, NULL, nw, w); /* the lists start after the waits */
    if (r != ZE_RESULT_SUCCESS) return r;
    pthread_mutex_lock(&zs.lock);
    for (uint32_t i = 0; i < n && r == ZE_RESULT_SUCCESS; i++)
        r = zs_enqueue_body_locked(imm, lists[i]->body, lists[i], lists[i]->executions++, lists[i]->in_order);
    pthread_mutex_unlock(&zs.lock);
    if (r != ZE_RESULT_SUCCESS) return r;
    if (sig || imm->mode == ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS) r = zs_list_barrier(imm, sig, 0, NULL);
    return r;
}

void zs_later_list_exp(void *t, ze_api_version_t v) {
    ZS_SET(t, v, 8, 1, zs_zeCommandListImmediateAppendCommandListsExp);
    zs_graph_fill_list_exp(t, v);
}

/* ---------------------------------------------------------------- functions handed out by name */
/* zeIntelGetDriverVersionString (compute-runtime's, by name only): the version text; a NULL
 * buffer asks for its size. Each call is in the truth: zecoll does not follow this function. */
static ze_result_t zs_zeIntelGetDriverVersionString(ze_driver_handle_t h, char *buf, size_t *size) {
    ZS_ENTER();
    ZS_CHECK(h, ZS_MAGIC_DRIVER);
    static const char version[] = "zesim 1.17";
    if (!size) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    zs_truthf("{\"kind\":\"by_name\",\"what\":\"zeIntelGetDriverVersionString\"}");
    if (!buf) {
        *size = sizeof(version);
        return ZE_RESULT_SUCCESS;
    }
    snprintf(buf, *size, "%s", version);
    return ZE_RESULT_SUCCESS;
}

/* zeCommandListAppendHostFunction (1.17, and by name as compute-runtime hands it out): the host
 * function runs once the list's earlier commands are done. zesim models it on immediate lists
 * without events: it waits for the list there and calls the function; each call is in the truth. */
typedef void (*zs_host_function_t)(void *);
static ze_result_t zs_zeCommandListAppendHostFunction(ze_command_list_handle_t l, void *fn, void *user, const void *pNext,
                                                      ze_event_handle_t sig, uint32_t nw, ze_event_handle_t *w) {
    ZS_ENTER_DEV();
    (void)pNext, (void)w;
    ZS_CHECK(l, ZS_MAGIC_LIST);
    if (!fn) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    if (!l->immediate || sig || nw) return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE; /* not modelled */
    pthread_mutex_lock(&zs.lock);
    ze_result_t r = zs_wait_locked(stream_idle, l->stream, UINT64_MAX);
    pthread_mutex_unlock(&zs.lock);
    if (r != ZE_RESULT_SUCCESS) return r;
    zs_truthf("{\"kind\":\"by_name\",\"what\":\"zeCommandListAppendHostFunction\",\"list\":\"%p\"}", (void *)l);
    ((zs_host_function_t)(uintptr_t)fn)(user);
    return ZE_RESULT_SUCCESS;
}

/* zexSimCounter00 .. zexSimCounter39: functions of no table that zesim hands out by name, as
 * compute-runtime hands out dozens (zex..., zeIntel...): enough distinct ones for a test to go
 * past the number of functions a collector can count. Each takes the driver; each call is in the
 * truth. */
static ze_result_t sim_counter(int i, ze_driver_handle_t h) {
    ZS_ENTER();
    ZS_CHECK(h, ZS_MAGIC_DRIVER);
    zs_truthf("{\"kind\":\"by_name\",\"what\":\"zexSimCounter%02d\"}", i);
    return ZE_RESULT_SUCCESS;
}
#define ZS_SIM_COUNTER(i) \
    static ze_result_t zs_sim_counter_##i(ze_driver_handle_t h) { return sim_counter(i, h); }
ZS_SIM_COUNTER(0) ZS_SIM_COUNTER(1) ZS_SIM_COUNTER(2) ZS_SIM_COUNTER(3) ZS_SIM_COUNTER(4) ZS_SIM_COUNTER(5)
ZS_SIM_COUNTER(6) ZS_SIM_COUNTER(7) ZS_SIM_COUNTER(8) ZS_SIM_COUNTER(9) ZS_SIM_COUNTER(10) ZS_SIM_COUNTER(11)
ZS_SIM_COUNTER(12) ZS_SIM_COUNTER(13) ZS_SIM_COUNTER(14) ZS_SIM_COUNTER(15) ZS_SIM_COUNTER(16) ZS_SIM_COUNTER(17)
ZS_SIM_COUNTER(18) ZS_SIM_COUNTER(19) ZS_SIM_COUNTER(20) ZS_SIM_COUNTER(21) ZS_SIM_COUNTER(22) ZS_SIM_COUNTER(23)
ZS_SIM_COUNTER(24) ZS_SIM_COUNTER(25) ZS_SIM_COUNTER(26) ZS_SIM_COUNTER(27) ZS_SIM_COUNTER(28) ZS_SIM_COUNTER(29)
ZS_SIM_COUNTER(30) ZS_SIM_COUNTER(31) ZS_SIM_COUNTER(32) ZS_SIM_COUNTER(33) ZS_SIM_COUNTER(34) ZS_SIM_COUNTER(35)
ZS_SIM_COUNTER(36) ZS_SIM_COUNTER(37) ZS_SIM_COUNTER(38) ZS_SIM_COUNTER(39)
typedef ze_result_t (*zs_sim_counter_t)(ze_driver_handle_t);
static const zs_sim_counter_t sim_counters[] = {
    zs_sim_counter_0, zs_sim_counter_1, zs_sim_counter_2, zs_sim_counter_3, zs_sim_counter_4, zs_sim_counter_5,
    zs_sim_counter_6, zs_sim_counter_7, zs_sim_counter_8, zs_sim_counter_9, zs_sim_counter_10, zs_sim_counter_11,
    zs_sim_counter_12, zs_sim_counter_13, zs_sim_counter_14, zs_sim_counter_15, zs_sim_counter_16, zs_sim_counter_17,
    zs_sim_counter_18, zs_sim_counter_19, zs_sim_counter_20, zs_sim_counter_21, zs_sim_counter_22, zs_sim_counter_23,
    zs_sim_counter_24, zs_sim_counter_25, zs_sim_counter_26, zs_sim_counter_27, zs_sim_counter_28, zs_sim_counter_29,
    zs_sim_counter_30, zs_sim_counter_31, zs_sim_counter_32, zs_sim_counter_33, zs_sim_counter_34, zs_sim_counter_35,
    zs_sim_counter_36, zs_sim_counter_37, zs_sim_counter_38, zs_sim_counter_39};

static void *ext_function(const char *name) {
    if (strcmp(name, "zeIntelGetDriverVersionString") == 0) return (void *)(uintptr_t)zs_zeIntelGetDriverVersionString;
    if (strcmp(name, "zeCommandListAppendHostFunction") == 0) return (void *)(uintptr_t)zs_zeCommandListAppendHostFunction;
    if (strncmp(name, "zexSimCounter", 13) != 0 || !isdigit((unsigned char)name[13]) ||
        !isdigit((unsigned char)name[14]) || name[15])
        return NULL;
    unsigned i = (unsigned)(name[13] - '0') * 10u + (unsigned)(name[14] - '0');
    return i < sizeof(sim_counters) / sizeof(sim_counters[0]) ? (void *)(uintptr_t)sim_counters[i] : NULL;
}

/* Each lookup that finds one of these is in the truth too ("lookup": true), in order: which names a
 * collector met first. */
void *zs_later_ext_function(const char *name) {
    void *f = ext_function(name);
    if (f) zs_truthf("{\"kind\":\"by_name\",\"what\":\"%s\",\"lookup\":true}", name);
    return f;
}
