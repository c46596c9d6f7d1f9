/* SPDX-License-Identifier: MIT */
/* A Level Zero loader of the tests' own, for spec versions Debian's loader (1.8.12, spec 1.4)
 * never asks for: it dlopen()s the driver named by ZE_ENABLE_ALT_DRIVERS (libzecoll_ze.so when
 * libzecoll.so is preloaded, which points it there; zesim alone otherwise), fetches every ze table
 * with the requested version and a table of exactly that version's size, as a loader of that
 * version does, and drives an application through the tables.
 *
 *   zc_ldr_harness MINOR [N]  MINOR = 4, 10 or 17: the spec version 1.MINOR asked for; N (1.17):
 *                             calls to zeCommandListUpdateMutableCommandWaitEventsExp, an entry
 *                             zecoll passes through untraced (default 1)
 *   ZC_LDR_BY_NAME_MANY=K     also look up zesim's zexSimCounter00 .. K-1 by name and call each once
 *                             (more distinct functions than zecoll can count: the rest are uncounted)
 *
 * Checks (TAP): each getter succeeds and writes nothing past the loader's table; with zecoll, every
 * entry the real driver (ZECOLL_REAL_DRIVERS) fills for that version is there and wrapped, nothing
 * else is; every application call returns what the driver returns (ZE_RESULT_SUCCESS here); the
 * DDI-handles property never reaches the loader through zecoll; functions handed out by name work
 * through zecoll as without it. The archive is judged against
 * zesim's truth by check_trace.py, which runs this program. */
#include "zc_ldr_spec.h"

#include <dlfcn.h>
#include <level_zero/ze_api.h>
#include <level_zero/ze_ddi.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef void (*fn_t)(void);
typedef ze_result_t (*getter_t)(ze_api_version_t, void *);

/* Each ze table's entry count for the loader of spec 1.4 (v1.8.12's ze_ddi.h), 1.10 (the loader's
 * own per-entry version guards, v1.32.0) and 1.17 (v1.32.0's ze_ddi.h). */
static const struct tbl {
    const char *getter;
    int n[3];
} tables[] = {
    {"zeGetGlobalProcAddrTable", {1, 2, 2}},           {"zeGetDriverProcAddrTable", {6, 7, 9}},
    {"zeGetDriverExpProcAddrTable", {0, 1, 1}},        {"zeGetDeviceProcAddrTable", {18, 19, 28}},
    {"zeGetDeviceExpProcAddrTable", {1, 1, 1}},        {"zeGetContextProcAddrTable", {9, 9, 9}},
    {"zeGetCommandQueueProcAddrTable", {4, 6, 9}},     {"zeGetCommandListProcAddrTable", {28, 34, 52}},
    {"zeGetCommandListExpProcAddrTable", {0, 8, 9}},   {"zeGetImageProcAddrTable", {4, 5, 5}},
    {"zeGetImageExpProcAddrTable", {2, 3, 3}},         {"zeGetMemProcAddrTable", {10, 12, 13}},
    {"zeGetMemExpProcAddrTable", {0, 4, 4}},           {"zeGetFenceProcAddrTable", {5, 5, 5}},
    {"zeGetEventPoolProcAddrTable", {5, 8, 8}},        {"zeGetEventProcAddrTable", {7, 11, 17}},
    {"zeGetEventExpProcAddrTable", {1, 1, 1}},         {"zeGetModuleProcAddrTable", {9, 9, 9}},
    {"zeGetModuleBuildLogProcAddrTable", {2, 2, 2}},   {"zeGetKernelProcAddrTable", {12, 12, 12}},
    {"zeGetKernelExpProcAddrTable", {2, 2, 4}},        {"zeGetSamplerProcAddrTable", {2, 2, 2}},
    {"zeGetPhysicalMemProcAddrTable", {2, 2, 3}},      {"zeGetVirtualMemProcAddrTable", {7, 7, 7}},
    {"zeGetFabricVertexExpProcAddrTable", {4, 4, 4}},  {"zeGetFabricEdgeExpProcAddrTable", {3, 3, 3}},
    {"zeGetRTASBuilderProcAddrTable", {0, 0, 5}},      {"zeGetRTASBuilderExpProcAddrTable", {0, 4, 4}},
    {"zeGetRTASParallelOperationProcAddrTable", {0, 0, 4}}, {"zeGetRTASParallelOperationExpProcAddrTable", {0, 4, 4}},
    {"zeGetGraphProcAddrTable", {0, 0, 7}},            {"zeGetExecutableGraphProcAddrTable", {0, 0, 2}},
};
#define NT (sizeof(tables) / sizeof(tables[0]))
enum { T_GLOBAL, T_DRIVER, T_DRIVER_EXP, T_DEVICE, T_DEVICE_EXP, T_CONTEXT, T_QUEUE, T_LIST, T_LIST_EXP };
#define T_EVENT_POOL 14
#define T_EVENT 15
#define T_MODULE 17
#define T_KERNEL 19
#define CANARY 8 /* words past each table that must stay untouched */
static fn_t *tab[NT];

static int ntest, nfail;
static void ok(int cond, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    printf("%s %d - ", cond ? "ok" : "not ok", ++ntest);
    vprintf(fmt, ap);
    printf("\n");
    va_end(ap);
    if (!cond) nfail++;
}

/* calls an entry of the loader's table: a NULL one would be the collector's fault */
#define E(t, idx, type) ((type)tab[t][idx])
/* an entry of the installed (1.4) headers, by its member */
#define H(t, type, member) ((__typeof__(((type *)0)->member))tab[t][offsetof(type, member) / sizeof(fn_t)])
#define CALL(what, expr)                                                                           \
    do {                                                                                           \
        ze_result_t r_ = (expr);                                                                   \
        ok(r_ == ZE_RESULT_SUCCESS, "%s returns 0x%x", what, (unsigned)r_);                        \
        if (r_ != ZE_RESULT_SUCCESS) return;                                                       \
    } while (0)

/* ---------------------------------------------------------------- later types (spec) */
typedef struct {
    ze_structure_type_t stype;
    void *pNext;
    uint32_t flags;
} ddi_handles_props_t;

static int vi; /* 0: 1.4, 1: 1.10, 2: 1.17 */

/* The loader's own version, as zelLoaderGetVersions reports it (the collector asks, to tell the
 * loaders that ordered CommandListExp differently): ZC_LDR_VERSION=major.minor.patch, default
 * 1.19.2 (the last loader of spec 1.11). Exported from this program, where zecoll looks. */
typedef struct {
    char name[64];
    ze_api_version_t spec;
    int major, minor, patch;
} comp_version_t;
__attribute__((visibility("default"))) ze_result_t zelLoaderGetVersions(size_t *n, comp_version_t *v);
ze_result_t zelLoaderGetVersions(size_t *n, comp_version_t *v) {
    if (!n) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    if (!v) {
        *n = 1;
        return ZE_RESULT_SUCCESS;
    }
    if (*n < 1) return ZE_RESULT_SUCCESS;
    memset(v, 0, sizeof(*v));
    snprintf(v->name, sizeof(v->name), "loader");
    const char *e = getenv("ZC_LDR_VERSION");
    v->major = 1, v->minor = 19, v->patch = 2;
    if (e && sscanf(e, "%d.%d.%d", &v->major, &v->minor, &v->patch) != 3) v->major = v->minor = v->patch = 0;
    *n = 1;
    return ZE_RESULT_SUCCESS;
}
static unsigned minor;
static int wait_updates = 1; /* calls to an untraced entry (1.17) */

static void fetch(void *drv, const char *who, fn_t **out, int check_canary) {
    for (size_t i = 0; i < NT; i++) {
        int n = tables[i].n[vi];
        fn_t *t = calloc((size_t)n + CANARY, sizeof(fn_t));
        for (int k = n; k < n + CANARY; k++) t[k] = (fn_t)(uintptr_t)0x5a5a5a5a;
        getter_t g = (getter_t)(uintptr_t)dlsym(drv, tables[i].getter);
        out[i] = t;
        if (!g || n == 0) continue; /* a loader of this version has no such table */
        ze_result_t r = g(ZE_MAKE_VERSION(1, minor), t);
        if (r != ZE_RESULT_SUCCESS) ok(0, "%s %s(1.%u) returns 0x%x", who, tables[i].getter, minor, (unsigned)r);
        if (!check_canary) continue;
        int intact = 1;
        for (int k = n; k < n + CANARY; k++) intact &= t[k] == (fn_t)(uintptr_t)0x5a5a5a5a;
        if (!intact) ok(0, "%s(1.%u) wrote past the loader's %d entries", tables[i].getter, minor, n);
    }
}

/* With zecoll: the loader's tables hold exactly the entries the real driver fills for this
 * version, each one a wrapper (not the driver's own function). */
static void compare_with_real(void) {
    const char *real = getenv("ZECOLL_REAL_DRIVERS");
    void *h = real && *real ? dlopen(real, RTLD_NOW | RTLD_LOCAL) : NULL;
    ok(h != NULL, "the real driver %s loads", real ? real : "(ZECOLL_REAL_DRIVERS unset)");
    if (!h) return;
    fn_t *rt[NT];
    fetch(h, "real", rt, 0);
    int filled = 0, same = 0, lost = 0, extra = 0, exp_raw = 0;
    const char *lv = getenv("ZC_LDR_VERSION");
    int other_order = lv && strncmp(lv, "1.18.", 5) == 0 && lv[5] >= '0' && lv[5] <= '3' && !lv[6];
    for (size_t i = 0; i < NT; i++) {
        for (int k = 0; k < tables[i].n[vi]; k++) {
            if (rt[i][k] && !tab[i][k]) lost++;
            if (!rt[i][k] && tab[i][k]) extra++;
            if (other_order && i == T_LIST_EXP) {
                exp_raw += rt[i][k] && tab[i][k] == rt[i][k];
                continue;
            }
            if (rt[i][k] && tab[i][k] == rt[i][k]) same++;
            filled += rt[i][k] != NULL;
        }
        free(rt[i]);
    }
    ok(lost == 0 && extra == 0, "the loader's tables have the real driver's %d entries for 1.%u (%d lost, %d extra)",
       filled, minor, lost, extra);
    ok(same == 0, "every entry is wrapped at 1.%u (%d left as the driver's)", minor, same);
    if (other_order)
        ok(exp_raw > 0, "loader %s: CommandListExp is the driver's own, untouched (%d entries)", lv, exp_raw);
}

/* Functions handed out by name (zeDriverGetExtensionFunctionAddress, in the spec-1.4 Driver
 * table): one zecoll does not follow (zeIntelGetDriverVersionString: named and counted), and
 * zeCommandListAppendHostFunction, an entry of the spec-1.17 CommandList table that zesim also
 * hands out by name, as compute-runtime does (traced through its wrapper where the driver's table
 * has it, from 1.17; counted by name below). zesim's truth has each call. */
static int host_function_runs;
static void host_function(void *user) { host_function_runs += *(int *)user; }
static void by_name(ze_driver_handle_t drv, ze_command_list_handle_t imm) {
    ze_pfnDriverGetExtensionFunctionAddress_t addr = H(T_DRIVER, ze_driver_dditable_t, pfnGetExtensionFunctionAddress);
    typedef ze_result_t (*version_t)(ze_driver_handle_t, char *, size_t *);
    typedef ze_result_t (*host_fn_t)(ze_command_list_handle_t, void (*)(void *), void *, const void *, ze_event_handle_t,
                                     uint32_t, ze_event_handle_t *);
    version_t version = NULL;
    host_fn_t host_fn = NULL;
    for (int i = 0; i < 2; i++) /* asked twice: one name, one count */
        CALL("zeDriverGetExtensionFunctionAddress(zeIntelGetDriverVersionString)",
             addr(drv, "zeIntelGetDriverVersionString", (void **)&version));
    CALL("zeDriverGetExtensionFunctionAddress(zeCommandListAppendHostFunction)",
         addr(drv, "zeCommandListAppendHostFunction", (void **)&host_fn));
    char text[64];
    size_t size = 0;
    CALL("zeIntelGetDriverVersionString(size)", version(drv, NULL, &size));
    ok(size > 1 && size <= sizeof(text), "the driver version's size is %zu", size);
    for (int i = 0; i < 2; i++) CALL("zeIntelGetDriverVersionString", version(drv, text, &size));
    ok(strncmp(text, "zesim", 5) == 0, "the driver version is '%s'", text);
    int one = 1;
    for (int i = 0; i < 2; i++) CALL("zeCommandListAppendHostFunction", host_fn(imm, host_function, &one, NULL, NULL, 0, NULL));
    ok(host_function_runs == 2, "the host function ran %d time(s), as appended", host_function_runs);
}

/* Many functions of no table handed out by name (zesim's zexSimCounterNN), each called once. */
static void by_name_many(ze_driver_handle_t drv) {
    const char *e = getenv("ZC_LDR_BY_NAME_MANY");
    int k = e ? atoi(e) : 0;
    ze_pfnDriverGetExtensionFunctionAddress_t addr = H(T_DRIVER, ze_driver_dditable_t, pfnGetExtensionFunctionAddress);
    for (int i = 0; i < k && i < 40; i++) {
        char name[32];
        snprintf(name, sizeof(name), "zexSimCounter%02d", i);
        ze_result_t (*fn)(ze_driver_handle_t) = NULL;
        ze_result_t r = addr(drv, name, (void **)&fn);
        ok(r == ZE_RESULT_SUCCESS && fn, "zeDriverGetExtensionFunctionAddress(%s) returns 0x%x", name, (unsigned)r);
        if (fn) CALL(name, fn(drv));
    }
}

static void app(int traced) {
    ze_driver_handle_t drv;
    uint32_t n = 1;
    if (minor >= 10) {
        /* an application of spec 1.10 or newer may call only zeInitDrivers */
        flags_desc_t d = {(ze_structure_type_t)0x00020021, NULL, 1};
        CALL("zeInitDrivers(count)", E(T_GLOBAL, 1, ze_result_t(*)(uint32_t *, ze_driver_handle_t *, void *))(&n, NULL, &d));
        n = 1;
        CALL("zeInitDrivers", E(T_GLOBAL, 1, ze_result_t(*)(uint32_t *, ze_driver_handle_t *, void *))(&n, &drv, &d));
    } else {
        CALL("zeInit", H(T_GLOBAL, ze_global_dditable_t, pfnInit)(ZE_INIT_FLAG_GPU_ONLY));
        CALL("zeDriverGet", H(T_DRIVER, ze_driver_dditable_t, pfnGet)(&n, &drv));
    }
    /* the DDI-handles property (1.13), which would let a loader call past our tables */
    ddi_handles_props_t dh = {(ze_structure_type_t)0x00020027, NULL, 0};
    ze_driver_properties_t dp = {.stype = ZE_STRUCTURE_TYPE_DRIVER_PROPERTIES, .pNext = &dh};
    CALL("zeDriverGetProperties", H(T_DRIVER, ze_driver_dditable_t, pfnGetProperties)(drv, &dp));
    ok(dh.flags == (traced ? 0u : 1u), "the DDI-handles property is %s (flags %u)", traced ? "hidden" : "the driver's",
       dh.flags);
    ze_device_handle_t dev;
    n = 1;
    CALL("zeDeviceGet", H(T_DEVICE, ze_device_dditable_t, pfnGet)(drv, &n, &dev));
    ze_context_desc_t cd = {ZE_STRUCTURE_TYPE_CONTEXT_DESC, NULL, 0};
    ze_context_handle_t ctx;
    CALL("zeContextCreate", H(T_CONTEXT, ze_context_dditable_t, pfnCreate)(drv, &cd, &ctx));
    const char *text = "ZESIM-MODULE\nkernel k1 args=0 ns=30000 ns_per_item=0\nkernel k2 args=0 ns=50000 ns_per_item=0\n"
                       "kernel k3 args=0 ns=70000 ns_per_item=0\n";
    ze_module_desc_t md = {ZE_STRUCTURE_TYPE_MODULE_DESC, NULL, ZE_MODULE_FORMAT_NATIVE, strlen(text),
                           (const uint8_t *)text, NULL, NULL};
    ze_module_handle_t mod;
    CALL("zeModuleCreate", H(T_MODULE, ze_module_dditable_t, pfnCreate)(ctx, dev, &md, &mod, NULL));
    ze_kernel_handle_t k[3];
    for (int i = 0; i < 3; i++) {
        char name[8];
        snprintf(name, sizeof(name), "k%d", i + 1);
        ze_kernel_desc_t kd = {ZE_STRUCTURE_TYPE_KERNEL_DESC, NULL, 0, name};
        CALL("zeKernelCreate", H(T_KERNEL, ze_kernel_dditable_t, pfnCreate)(mod, &kd, &k[i]));
        CALL("zeKernelSetGroupSize", H(T_KERNEL, ze_kernel_dditable_t, pfnSetGroupSize)(k[i], 1, 1, 1));
    }
    /* an in-order immediate list, as SYCL's in-order queues use */
    ze_command_queue_desc_t qd = {ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC, NULL, 0, 0, 1u << 1 /* IN_ORDER, 1.7 */,
                                  ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS, ZE_COMMAND_QUEUE_PRIORITY_NORMAL};
    if (minor < 7) qd.flags = 0;
    ze_command_list_handle_t imm;
    CALL("zeCommandListCreateImmediate", H(T_LIST, ze_command_list_dditable_t, pfnCreateImmediate)(ctx, dev, &qd, &imm));
    ze_group_count_t g = {1, 1, 1};
    ze_pfnCommandListAppendLaunchKernel_t launch = H(T_LIST, ze_command_list_dditable_t, pfnAppendLaunchKernel);
    CALL("zeCommandListAppendLaunchKernel", launch(imm, k[0], &g, NULL, 0, NULL));
    by_name(drv, imm);
    by_name_many(drv);
    if (minor >= 14) {
        group_size_t gs = {1, 1, 1};
        CALL("zeCommandListAppendLaunchKernelWithArguments",
             E(T_LIST, 37, with_args_t)(imm, k[1], g, gs, NULL, NULL, NULL, 0, NULL));
    }
    host_sync_t hsync = NULL;
    if (minor >= 6) {
        hsync = (host_sync_t)tab[T_LIST][28];
        CALL("zeCommandListHostSynchronize", hsync(imm, UINT64_MAX));
    }
    if (minor >= 8) {
        /* a regular list run on the immediate list's timeline, twice */
        /* at 1.17 a mutable list (ze_mutable_command_list_exp_desc_t), as updatable SYCL graphs make */
        struct {
            ze_structure_type_t stype;
            const void *pNext;
            uint32_t flags;
        } mld = {(ze_structure_type_t)0x00020016 /* MUTABLE_COMMAND_LIST_EXP_DESC */, NULL, 0};
        ze_command_list_desc_t ld = {ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC, minor >= 17 ? &mld : NULL, 0, 1u << 3 /* IN_ORDER */};
        ze_command_list_handle_t reg;
        CALL("zeCommandListCreate", H(T_LIST, ze_command_list_dditable_t, pfnCreate)(ctx, dev, &ld, &reg));
        uint64_t id = 99;
        if (minor >= 17) {
            /* a mutable command (its wait events may change) */
            struct {
                ze_structure_type_t stype;
                const void *pNext;
                uint32_t flags;
            } idd = {(ze_structure_type_t)0x00020017 /* MUTABLE_COMMAND_ID_EXP_DESC */, NULL, 1u << 5 /* WAIT_EVENTS */};
            typedef ze_result_t (*next_id_t)(ze_command_list_handle_t, const void *, uint64_t *);
            CALL("zeCommandListGetNextCommandIdExp", E(T_LIST_EXP, 2, next_id_t)(reg, &idd, &id));
            ok(id == 0, "the next command id is 0 (%llu)", (unsigned long long)id);
        }
        CALL("zeCommandListAppendLaunchKernel(regular)", launch(reg, k[2], &g, NULL, 0, NULL));
        CALL("zeCommandListClose", H(T_LIST, ze_command_list_dditable_t, pfnClose)(reg));
        if (minor >= 17) {
            /* an entry zecoll passes through untraced: named once, counted */
            typedef ze_result_t (*wait_upd_t)(ze_command_list_handle_t, uint64_t, uint32_t, ze_event_handle_t *);
            for (int i = 0; i < wait_updates; i++)
                CALL("zeCommandListUpdateMutableCommandWaitEventsExp", E(T_LIST_EXP, 5, wait_upd_t)(reg, id, 0, NULL));
        }
        typedef ze_result_t (*append_lists_t)(ze_command_list_handle_t, uint32_t, ze_command_list_handle_t *,
                                              ze_event_handle_t, uint32_t, ze_event_handle_t *);
        for (int i = 0; i < 2; i++)
            CALL("zeCommandListImmediateAppendCommandListsExp", E(T_LIST_EXP, 1, append_lists_t)(imm, 1, &reg, NULL, 0, NULL));
        CALL("zeCommandListHostSynchronize", hsync(imm, UINT64_MAX));
        if (minor >= 14)
            CALL("zeDeviceSynchronize", E(T_DEVICE, 22, ze_result_t(*)(ze_device_handle_t))(dev));
        CALL("zeCommandListDestroy(regular)", H(T_LIST, ze_command_list_dditable_t, pfnDestroy)(reg));
    } else {
        /* a 1.4 application synchronises through an event */
        ze_event_pool_desc_t pd = {ZE_STRUCTURE_TYPE_EVENT_POOL_DESC, NULL, ZE_EVENT_POOL_FLAG_HOST_VISIBLE, 1};
        ze_event_pool_handle_t pool;
        CALL("zeEventPoolCreate", H(T_EVENT_POOL, ze_event_pool_dditable_t, pfnCreate)(ctx, &pd, 1, &dev, &pool));
        ze_event_desc_t ed = {ZE_STRUCTURE_TYPE_EVENT_DESC, NULL, 0, 0, ZE_EVENT_SCOPE_FLAG_HOST};
        ze_event_handle_t ev;
        CALL("zeEventCreate", H(T_EVENT, ze_event_dditable_t, pfnCreate)(pool, &ed, &ev));
        CALL("zeCommandListAppendLaunchKernel(signal)", launch(imm, k[2], &g, ev, 0, NULL));
        CALL("zeEventHostSynchronize", H(T_EVENT, ze_event_dditable_t, pfnHostSynchronize)(ev, UINT64_MAX));
        CALL("zeEventDestroy", H(T_EVENT, ze_event_dditable_t, pfnDestroy)(ev));
        CALL("zeEventPoolDestroy", H(T_EVENT_POOL, ze_event_pool_dditable_t, pfnDestroy)(pool));
    }
    CALL("zeCommandListDestroy", H(T_LIST, ze_command_list_dditable_t, pfnDestroy)(imm));
    for (int i = 0; i < 3; i++) CALL("zeKernelDestroy", H(T_KERNEL, ze_kernel_dditable_t, pfnDestroy)(k[i]));
    CALL("zeModuleDestroy", H(T_MODULE, ze_module_dditable_t, pfnDestroy)(mod));
    CALL("zeContextDestroy", H(T_CONTEXT, ze_context_dditable_t, pfnDestroy)(ctx));
}

int main(int argc, char **argv) {
    minor = argc > 1 ? (unsigned)atoi(argv[1]) : 0;
    vi = minor == 4 ? 0 : minor == 10 ? 1 : minor == 17 ? 2 : -1;
    if (argc > 2) wait_updates = atoi(argv[2]);
    if (vi < 0 || wait_updates < 0) {
        fprintf(stderr, "usage: %s 4|10|17 [N] (the spec version 1.MINOR the loader asks for; N untraced calls)\n", argv[0]);
        return 2;
    }
    const char *path;
    void *drv = zc_ldr_open_driver(&path);
    if (!drv) return 1;
    int traced = strstr(path, "libzecoll_ze") != NULL;
    printf("# loader of spec 1.%u over %s\n", minor, path);
    fetch(drv, "", tab, 1);
    ok(1, "the getters at 1.%u wrote only inside the loader's tables (else failures above)", minor);
    if (traced) compare_with_real();
    app(traced);
    for (size_t i = 0; i < NT; i++) free(tab[i]);
    printf("1..%d\n", ntest);
    return nfail ? 1 : 0;
}
