/* SPDX-License-Identifier: MIT */
/* A UR-v2-like application (what SYCL submits through Unified Runtime's v2 adapter, and PyTorch XPU
 * on Battlemage): in-order immediate lists only, every event counter-based from
 * zexCounterBasedEventCreate2 (reached through zeDriverGetExtensionFunctionAddress), with and
 * without timestamps; launches through zeCommandListAppendLaunchKernelWithArguments, most with a
 * NULL signal event (event-less SYCL submissions); regular lists run through
 * zeCommandListImmediateAppendCommandListsExp; zeCommandListHostSynchronize as queue.wait().
 * Also the other creation paths of CB events (a pool with the CB descriptor, the core
 * zeEventCounterBasedCreate) and one regular event, which the driver may convert implicitly.
 * Copy offload, as UR v2 turns it on: the queue's immediate list carries the copy-offload hint
 * (spec 1.14), and so does the regular list it runs (1.15); their copies and fills run on a copy
 * engine or the list's by the driver's rules, which the driver's generation (ZESIM_DRIVER_GEN:
 * 2025, 2026) and local memory (ZESIM_INTEGRATED=1: none) decide (expect_offload); each
 * iteration copies host<->device, device<->device and shared<->device and fills, above and at
 * most 8 KiB; a second in-order immediate
 * list without the hint copies too; the hinted regular list also runs on a command queue (as UR
 * v1 runs graphs), and a copy captured on the hinted immediate list into a graph (spec 1.17) is
 * replayed. Through Debian's loader (spec 1.4) no list has the hint.
 *
 *   zc_ldr_urv2 17|loader [THREADS]
 *     17      this program is a loader of spec 1.17: it dlopen()s ZE_ENABLE_ALT_DRIVERS (libzecoll_ze.so
 *             when libzecoll.so is preloaded, zesim alone otherwise) and calls through its tables
 *     loader  through Debian's loader (spec 1.4): the entries after 1.4 are missing, so classic
 *             launches and event waits stand in for them; the CB events are the same
 *
 * Checks (TAP) what the application can see itself: every call returns what the driver returns
 * (success, or the driver's rejection of host signal/reset and appended reset of a CB event, and
 * of a CB event signalled on a list kind its flags exclude); its timestamp event's
 * zeEventQueryKernelTimestamp, ...Ext and zeEventQueryTimestampsExp agree. ZC_SCEN_OUT: the facts
 * for check_trace.py / check_cb.py (app events, operations it ran, the timestamps it read, the
 * CB events it created and the rejections it caused). */
#include "zc_ldr_spec.h"

#include <dlfcn.h>
#include <inttypes.h>
#include <level_zero/ze_api.h>
#include <level_zero/ze_ddi.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ITERS 12
#define APPEND_EVERY 4 /* the regular list runs on the immediate list every this many iterations */
#define MAX_THREADS 16

/* ---------------------------------------------------------------- the spec's declarations */
typedef struct {
    ze_structure_type_t stype;
    const void *pNext;
    uint32_t flags;
    ze_event_scope_flags_t signal, wait;
} cb_desc_t; /* zex_counter_based_event_desc_t, ze_event_counter_based_desc_t */
typedef struct {
    ze_structure_type_t stype;
    const void *pNext;
    uint32_t flags;
} pool_cb_desc_t; /* ze_event_pool_counter_based_exp_desc_t */
typedef struct {
    ze_structure_type_t stype;
    void *pNext;
    ze_kernel_timestamp_result_t *kernel, *synchronized;
} kts_ext_t; /* ze_event_query_kernel_timestamps_results_ext_properties_t */
#define STYPE_ZEX_CB_DESC 0x0003001Cu
#define STYPE_EVENT_CB_DESC 0x0002003Au
#define STYPE_POOL_CB_EXP_DESC 0x00020014u
#define STYPE_KTS_EXT_PROPS 0x00020033u
#define CB_IMMEDIATE 1u
#define CB_NON_IMMEDIATE 2u
#define CB_HOST_VISIBLE 4u
#define CB_TIMESTAMP 16u
#define QUEUE_FLAG_IN_ORDER (1u << 1)
#define QUEUE_FLAG_COPY_OFFLOAD (1u << 2)
#define LIST_FLAG_IN_ORDER (1u << 3)
#define LIST_FLAG_COPY_OFFLOAD (1u << 5)
#define COPY_BYTES 65536

/* ---------------------------------------------------------------- the entries it calls */
static struct api {
    ze_result_t (*init)(ze_init_flags_t);
    ze_result_t (*init_drivers)(uint32_t *, ze_driver_handle_t *, void *);
    ze_result_t (*driver_get)(uint32_t *, ze_driver_handle_t *);
    ze_result_t (*ext_fn)(ze_driver_handle_t, const char *, void **);
    ze_result_t (*device_get)(ze_driver_handle_t, uint32_t *, ze_device_handle_t *);
    ze_result_t (*ctx_create)(ze_driver_handle_t, const ze_context_desc_t *, ze_context_handle_t *);
    ze_result_t (*ctx_destroy)(ze_context_handle_t);
    ze_result_t (*module_create)(ze_context_handle_t, ze_device_handle_t, const ze_module_desc_t *, ze_module_handle_t *,
                                 ze_module_build_log_handle_t *);
    ze_result_t (*module_destroy)(ze_module_handle_t);
    ze_result_t (*kernel_create)(ze_module_handle_t, const ze_kernel_desc_t *, ze_kernel_handle_t *);
    ze_result_t (*kernel_group)(ze_kernel_handle_t, uint32_t, uint32_t, uint32_t);
    ze_result_t (*kernel_destroy)(ze_kernel_handle_t);
    ze_result_t (*imm_create)(ze_context_handle_t, ze_device_handle_t, const ze_command_queue_desc_t *,
                              ze_command_list_handle_t *);
    ze_result_t (*list_create)(ze_context_handle_t, ze_device_handle_t, const ze_command_list_desc_t *,
                               ze_command_list_handle_t *);
    ze_result_t (*list_close)(ze_command_list_handle_t);
    ze_result_t (*list_destroy)(ze_command_list_handle_t);
    ze_result_t (*launch)(ze_command_list_handle_t, ze_kernel_handle_t, const ze_group_count_t *, ze_event_handle_t,
                          uint32_t, ze_event_handle_t *);
    ze_result_t (*copy)(ze_command_list_handle_t, void *, const void *, size_t, ze_event_handle_t, uint32_t,
                        ze_event_handle_t *);
    ze_result_t (*fill)(ze_command_list_handle_t, void *, const void *, size_t, size_t, ze_event_handle_t, uint32_t,
                        ze_event_handle_t *);
    ze_result_t (*alloc_host)(ze_context_handle_t, const ze_host_mem_alloc_desc_t *, size_t, size_t, void **);
    ze_result_t (*alloc_device)(ze_context_handle_t, const ze_device_mem_alloc_desc_t *, size_t, size_t,
                                ze_device_handle_t, void **);
    ze_result_t (*alloc_shared)(ze_context_handle_t, const ze_device_mem_alloc_desc_t *, const ze_host_mem_alloc_desc_t *,
                                size_t, size_t, ze_device_handle_t, void **);
    ze_result_t (*mem_free)(ze_context_handle_t, void *);
    with_args_t launch_args;
    host_sync_t host_sync;
    ze_result_t (*append_lists)(ze_command_list_handle_t, uint32_t, ze_command_list_handle_t *, ze_event_handle_t,
                                uint32_t, ze_event_handle_t *);
    ze_result_t (*append_reset)(ze_command_list_handle_t, ze_event_handle_t);
    ze_result_t (*pool_create)(ze_context_handle_t, const ze_event_pool_desc_t *, uint32_t, ze_device_handle_t *,
                               ze_event_pool_handle_t *);
    ze_result_t (*pool_destroy)(ze_event_pool_handle_t);
    ze_result_t (*event_create)(ze_event_pool_handle_t, const ze_event_desc_t *, ze_event_handle_t *);
    ze_result_t (*event_destroy)(ze_event_handle_t);
    ze_result_t (*host_signal)(ze_event_handle_t);
    ze_result_t (*host_reset)(ze_event_handle_t);
    ze_result_t (*event_sync)(ze_event_handle_t, uint64_t);
    ze_result_t (*qkt)(ze_event_handle_t, ze_kernel_timestamp_result_t *);
    ze_result_t (*qkt_ext)(ze_event_handle_t, ze_device_handle_t, uint32_t *, kts_ext_t *);
    ze_result_t (*qts_exp)(ze_event_handle_t, ze_device_handle_t, uint32_t *, ze_kernel_timestamp_result_t *);
    ze_result_t (*cb_create)(ze_context_handle_t, ze_device_handle_t, const cb_desc_t *, ze_event_handle_t *);
    ze_result_t (*cb_flags)(ze_event_handle_t, uint32_t *);
    /* the copy-offload paths of a regular list on a queue and of graph replays (harness only) */
    ze_result_t (*queue_create)(ze_context_handle_t, ze_device_handle_t, const ze_command_queue_desc_t *,
                                ze_command_queue_handle_t *);
    ze_result_t (*queue_destroy)(ze_command_queue_handle_t);
    ze_result_t (*queue_exec)(ze_command_queue_handle_t, uint32_t, ze_command_list_handle_t *, ze_fence_handle_t);
    ze_result_t (*queue_sync)(ze_command_queue_handle_t, uint64_t);
    ze_result_t (*begin_capture)(ze_command_list_handle_t, const void *);
    ze_result_t (*end_capture)(ze_command_list_handle_t, const void *, void **);
    ze_result_t (*graph_inst)(void *, const void *, void **);
    ze_result_t (*append_graph)(ze_command_list_handle_t, void *, const void *, ze_event_handle_t, uint32_t,
                                ze_event_handle_t *);
    ze_result_t (*graph_destroy)(void *);
    ze_result_t (*xgraph_destroy)(void *);
} A;
typedef ze_result_t (*zex_create2_t)(ze_context_handle_t, ze_device_handle_t, const cb_desc_t *, ze_event_handle_t *);

static int harness; /* 1: a loader of spec 1.17 of our own; 0: Debian's loader */

/* The tables of a loader of spec 1.17 (entry counts of v1.32.0's ze_ddi.h, with room to spare). */
static void *table(void *drv, const char *getter) {
    void **t = calloc(64, sizeof(void *));
    ze_result_t (*g)(ze_api_version_t, void *) = (ze_result_t(*)(ze_api_version_t, void *))(uintptr_t)dlsym(drv, getter);
    if (t && g && g(ZE_MAKE_VERSION(1, 17), t) != ZE_RESULT_SUCCESS) memset(t, 0, 64 * sizeof(void *));
    return t;
}
#define SET(field, tab, idx) memcpy(&A.field, &(tab)[idx], sizeof(void *))
#define IDX(type, member) (offsetof(type, member) / sizeof(void *))

static int load(void) {
    if (harness) {
        const char *path;
        void *drv = zc_ldr_open_driver(&path);
        if (!drv) return -1;
        void **glo = table(drv, "zeGetGlobalProcAddrTable"), **dr = table(drv, "zeGetDriverProcAddrTable");
        void **dev = table(drv, "zeGetDeviceProcAddrTable"), **ctx = table(drv, "zeGetContextProcAddrTable");
        void **mod = table(drv, "zeGetModuleProcAddrTable"), **ker = table(drv, "zeGetKernelProcAddrTable");
        void **cl = table(drv, "zeGetCommandListProcAddrTable"), **cle = table(drv, "zeGetCommandListExpProcAddrTable");
        void **ep = table(drv, "zeGetEventPoolProcAddrTable"), **ev = table(drv, "zeGetEventProcAddrTable");
        void **eve = table(drv, "zeGetEventExpProcAddrTable"), **mem = table(drv, "zeGetMemProcAddrTable");
        /* a loader asks every table, whatever the application calls (the collector's own calls
         * go to the entries the loader fetched) */
        void **cq = table(drv, "zeGetCommandQueueProcAddrTable"), **gr = table(drv, "zeGetGraphProcAddrTable");
        void **xg = table(drv, "zeGetExecutableGraphProcAddrTable");
        static const char *const rest[] = {"zeGetDriverExpProcAddrTable", "zeGetDeviceExpProcAddrTable",
                                           "zeGetImageProcAddrTable",
                                           "zeGetImageExpProcAddrTable",
                                           "zeGetMemExpProcAddrTable", "zeGetFenceProcAddrTable",
                                           "zeGetModuleBuildLogProcAddrTable", "zeGetKernelExpProcAddrTable",
                                           "zeGetSamplerProcAddrTable", "zeGetPhysicalMemProcAddrTable",
                                           "zeGetVirtualMemProcAddrTable"};
        for (size_t i = 0; i < sizeof(rest) / sizeof(rest[0]); i++) (void)table(drv, rest[i]);
        SET(init_drivers, glo, 1);
        SET(ext_fn, dr, IDX(ze_driver_dditable_t, pfnGetExtensionFunctionAddress));
        SET(device_get, dev, IDX(ze_device_dditable_t, pfnGet));
        SET(ctx_create, ctx, IDX(ze_context_dditable_t, pfnCreate));
        SET(ctx_destroy, ctx, IDX(ze_context_dditable_t, pfnDestroy));
        SET(module_create, mod, IDX(ze_module_dditable_t, pfnCreate));
        SET(module_destroy, mod, IDX(ze_module_dditable_t, pfnDestroy));
        SET(kernel_create, ker, IDX(ze_kernel_dditable_t, pfnCreate));
        SET(kernel_group, ker, IDX(ze_kernel_dditable_t, pfnSetGroupSize));
        SET(kernel_destroy, ker, IDX(ze_kernel_dditable_t, pfnDestroy));
        SET(imm_create, cl, IDX(ze_command_list_dditable_t, pfnCreateImmediate));
        SET(list_create, cl, IDX(ze_command_list_dditable_t, pfnCreate));
        SET(list_close, cl, IDX(ze_command_list_dditable_t, pfnClose));
        SET(list_destroy, cl, IDX(ze_command_list_dditable_t, pfnDestroy));
        SET(launch, cl, IDX(ze_command_list_dditable_t, pfnAppendLaunchKernel));
        SET(copy, cl, IDX(ze_command_list_dditable_t, pfnAppendMemoryCopy));
        SET(fill, cl, IDX(ze_command_list_dditable_t, pfnAppendMemoryFill));
        SET(alloc_host, mem, IDX(ze_mem_dditable_t, pfnAllocHost));
        SET(alloc_device, mem, IDX(ze_mem_dditable_t, pfnAllocDevice));
        SET(alloc_shared, mem, IDX(ze_mem_dditable_t, pfnAllocShared));
        SET(mem_free, mem, IDX(ze_mem_dditable_t, pfnFree));
        SET(append_reset, cl, IDX(ze_command_list_dditable_t, pfnAppendEventReset));
        SET(host_sync, cl, 28);
        SET(launch_args, cl, 37);
        SET(append_lists, cle, 1);
        SET(pool_create, ep, IDX(ze_event_pool_dditable_t, pfnCreate));
        SET(pool_destroy, ep, IDX(ze_event_pool_dditable_t, pfnDestroy));
        SET(event_create, ev, IDX(ze_event_dditable_t, pfnCreate));
        SET(event_destroy, ev, IDX(ze_event_dditable_t, pfnDestroy));
        SET(host_signal, ev, IDX(ze_event_dditable_t, pfnHostSignal));
        SET(host_reset, ev, IDX(ze_event_dditable_t, pfnHostReset));
        SET(event_sync, ev, IDX(ze_event_dditable_t, pfnHostSynchronize));
        SET(qkt, ev, IDX(ze_event_dditable_t, pfnQueryKernelTimestamp));
        SET(qkt_ext, ev, 7);
        SET(cb_create, ev, 11);
        SET(cb_flags, ev, 16);
        SET(qts_exp, eve, 0);
        SET(queue_create, cq, IDX(ze_command_queue_dditable_t, pfnCreate));
        SET(queue_destroy, cq, IDX(ze_command_queue_dditable_t, pfnDestroy));
        SET(queue_exec, cq, IDX(ze_command_queue_dditable_t, pfnExecuteCommandLists));
        SET(queue_sync, cq, IDX(ze_command_queue_dditable_t, pfnSynchronize));
        SET(begin_capture, cl, 45);
        SET(end_capture, cl, 48);
        SET(append_graph, cl, 50);
        SET(graph_inst, gr, 3);
        SET(graph_destroy, gr, 6);
        SET(xgraph_destroy, xg, 1);
        return 0; /* the tables stay: their entries are called until exit */
    }
    void *l = dlopen("libze_loader.so.1", RTLD_NOW | RTLD_GLOBAL);
    if (!l) return printf("Bail out! cannot load Debian's libze_loader.so.1: %s\n", dlerror()), -1;
#define SYM(field, name) *(void **)&A.field = dlsym(l, name)
    SYM(init, "zeInit");
    SYM(driver_get, "zeDriverGet");
    SYM(ext_fn, "zeDriverGetExtensionFunctionAddress");
    SYM(device_get, "zeDeviceGet");
    SYM(ctx_create, "zeContextCreate");
    SYM(ctx_destroy, "zeContextDestroy");
    SYM(module_create, "zeModuleCreate");
    SYM(module_destroy, "zeModuleDestroy");
    SYM(kernel_create, "zeKernelCreate");
    SYM(kernel_group, "zeKernelSetGroupSize");
    SYM(kernel_destroy, "zeKernelDestroy");
    SYM(imm_create, "zeCommandListCreateImmediate");
    SYM(list_create, "zeCommandListCreate");
    SYM(list_close, "zeCommandListClose");
    SYM(list_destroy, "zeCommandListDestroy");
    SYM(launch, "zeCommandListAppendLaunchKernel");
    SYM(copy, "zeCommandListAppendMemoryCopy");
    SYM(fill, "zeCommandListAppendMemoryFill");
    SYM(alloc_host, "zeMemAllocHost");
    SYM(alloc_device, "zeMemAllocDevice");
    SYM(alloc_shared, "zeMemAllocShared");
    SYM(mem_free, "zeMemFree");
    SYM(append_reset, "zeCommandListAppendEventReset");
    SYM(pool_create, "zeEventPoolCreate");
    SYM(pool_destroy, "zeEventPoolDestroy");
    SYM(event_create, "zeEventCreate");
    SYM(event_destroy, "zeEventDestroy");
    SYM(host_signal, "zeEventHostSignal");
    SYM(host_reset, "zeEventHostReset");
    SYM(event_sync, "zeEventHostSynchronize");
    SYM(qkt, "zeEventQueryKernelTimestamp");
    SYM(qts_exp, "zeEventQueryTimestampsExp");
#undef SYM
    return 0;
}

/* ---------------------------------------------------------------- TAP and facts */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int ntest, nfail;
static void ok(int cond, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    pthread_mutex_lock(&lock);
    printf("%s %d - ", cond ? "ok" : "not ok", ++ntest);
    vprintf(fmt, ap);
    printf("\n");
    nfail += !cond;
    pthread_mutex_unlock(&lock);
    va_end(ap);
}
#define CALL(what, expr)                                                                           \
    do {                                                                                           \
        ze_result_t r_ = (expr);                                                                   \
        if (r_ != ZE_RESULT_SUCCESS) {                                                             \
            ok(0, "%s returns 0x%x", what, (unsigned)r_);                                          \
            return;                                                                                \
        }                                                                                          \
    } while (0)
#define EXPECT(what, want, expr)                                                                   \
    do {                                                                                           \
        ze_result_t r_ = (expr);                                                                   \
        ok(r_ == (want), "%s returns 0x%x (the driver's 0x%x)", what, (unsigned)r_, (unsigned)(want)); \
    } while (0)

static struct facts {
    void *events[8 * MAX_THREADS];
    int nevents;
    struct {
        void *ev;
        uint64_t start, end;
    } kts[ITERS * MAX_THREADS];
    int nkts;
    uint64_t kernels, copies, fills, offloaded; /* offloaded: what the driver's rules run on a copy engine */
    int rejects, zex2, core, pool;
    void *regular[MAX_THREADS]; /* regular events signalled on an in-order immediate list */
    int nregular;
} F;

/* The driver's copy-offload rules, as the application expects them of a list with the hint
 * (compute-runtime's, written here from its description, not zesim's code): a copy with a host
 * side always; a copy between device-local memory (device USM, shared USM on a device with local
 * memory) never (2025) or up to 8 KiB (2026), always without local memory; a fill always (2025)
 * or up to 8 KiB (2026). */
static int driver_gen(void) {
    const char *g = getenv("ZESIM_DRIVER_GEN");
    return g && strcmp(g, "2025") == 0 ? 2025 : 2026;
}
static bool expect_offload(bool fill, bool both_local, size_t bytes) {
    const char *i = getenv("ZESIM_INTEGRATED");
    bool integrated = i && strcmp(i, "1") == 0, small = bytes <= 8192;
    if (fill) return driver_gen() == 2025 || small;
    if (!both_local || integrated) return true;
    return driver_gen() == 2026 && small;
}

static void fact_event(void *ev) {
    pthread_mutex_lock(&lock);
    F.events[F.nevents++] = ev;
    pthread_mutex_unlock(&lock);
}

static void write_facts(void) {
    const char *path = getenv("ZC_SCEN_OUT");
    FILE *f = path ? fopen(path, "w") : NULL;
    if (!f) return;
    fprintf(f, "{\"scenario\": \"urv2\", \"events\": [");
    for (int i = 0; i < F.nevents; i++) fprintf(f, "%s\"%p\"", i ? ", " : "", F.events[i]);
    fprintf(f, "],\n \"expected\": {\"kernel\": %" PRIu64 ", \"copy\": %" PRIu64 ", \"fill\": %" PRIu64 "},\n",
            F.kernels, F.copies, F.fills);
    fprintf(f, " \"offloaded\": %" PRIu64 ",\n \"driver_gen\": %d,\n \"kts\": [", F.offloaded, driver_gen());
    for (int i = 0; i < F.nkts; i++)
        fprintf(f, "%s{\"event\": \"%p\", \"start\": %" PRIu64 ", \"end\": %" PRIu64 "}", i ? ", " : "", F.kts[i].ev,
                F.kts[i].start, F.kts[i].end);
    fprintf(f, "],\n \"cb\": {\"rejects\": %d, \"created\": {\"zex2\": %d, \"core\": %d, \"pool\": %d}, \"regular\": [",
            F.rejects, F.zex2, F.core, F.pool);
    for (int i = 0; i < F.nregular; i++) fprintf(f, "%s\"%p\"", i ? ", " : "", F.regular[i]);
    fprintf(f, "]}}\n");
    fclose(f);
}

/* ---------------------------------------------------------------- the application */
static ze_driver_handle_t drv;
static ze_device_handle_t dev;
static ze_context_handle_t ctx;
static ze_module_handle_t mod;
static zex_create2_t create2;

static void launch(ze_command_list_handle_t l, ze_kernel_handle_t k, ze_event_handle_t sig) {
    ze_group_count_t g = {1, 1, 1};
    ze_result_t r;
    if (A.launch_args) {
        group_size_t gs = {1, 1, 1};
        r = A.launch_args(l, k, g, gs, NULL, NULL, sig, 0, NULL);
    } else {
        r = A.launch(l, k, &g, sig, 0, NULL);
    }
    ok(r == ZE_RESULT_SUCCESS, "%s returns 0x%x", A.launch_args ? "WithArguments" : "LaunchKernel", (unsigned)r);
    pthread_mutex_lock(&lock);
    F.kernels++;
    pthread_mutex_unlock(&lock);
}

/* The copies of an iteration, as SYCL's memcpy/fill submit them: host to device (event-less),
 * device to host (signalling ev, NULL for none), device to device and shared to and from device,
 * above and at most 8 KiB, fills above and at most 8 KiB (the last signalling last).
 * offload: the list carries the copy-offload hint. */
#define SMALL_BYTES 4096
static void copies(ze_command_list_handle_t l, bool offload, void *host, void *d0, void *d1, void *sh,
                   ze_event_handle_t ev, ze_event_handle_t last) {
    static const uint32_t pattern = 0x5a5a5a5a;
    struct {
        void *dst;
        const void *src;
        size_t bytes;
        ze_event_handle_t ev;
    } ops[] = {
        {d0, host, COPY_BYTES, NULL},      {host, d1, COPY_BYTES / 2, ev}, {d1, d0, COPY_BYTES, NULL},
        {d1, d0, SMALL_BYTES, NULL},       {d0, sh, SMALL_BYTES, NULL},    {sh, d1, COPY_BYTES / 4, NULL},
        {d0, NULL, COPY_BYTES / 4, NULL},  {d1, NULL, SMALL_BYTES, last}, /* fills */
    };
    uint64_t nc = 0, nf = 0, off = 0;
    for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
        bool fill = ops[i].src == NULL;
        ze_result_t r = fill ? A.fill(l, ops[i].dst, &pattern, sizeof(pattern), ops[i].bytes, ops[i].ev, 0, NULL)
                             : A.copy(l, ops[i].dst, ops[i].src, ops[i].bytes, ops[i].ev, 0, NULL);
        ok(r == ZE_RESULT_SUCCESS, "%s of %zu bytes on a list %s the copy-offload hint (0x%x)", fill ? "fill" : "copy",
           ops[i].bytes, offload ? "with" : "without", (unsigned)r);
        nc += !fill;
        nf += fill;
        off += offload && expect_offload(fill, ops[i].src != host && ops[i].dst != host, ops[i].bytes);
    }
    pthread_mutex_lock(&lock);
    F.copies += nc;
    F.fills += nf;
    F.offloaded += off;
    pthread_mutex_unlock(&lock);
}

/* The hinted in-order regular list (a kernel, a host-to-device copy, a kernel) run by a command
 * queue, as UR v1 runs SYCL graphs: its copy runs on a copy engine there too. */
#define QUEUE_RUNS 2
static void run_on_queue(ze_command_list_handle_t reg) {
    ze_command_queue_desc_t qd = {ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC, NULL, 0, 0, QUEUE_FLAG_IN_ORDER,
                                  ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS, ZE_COMMAND_QUEUE_PRIORITY_NORMAL};
    ze_command_queue_handle_t q;
    CALL("zeCommandQueueCreate", A.queue_create(ctx, dev, &qd, &q));
    for (int i = 0; i < QUEUE_RUNS; i++) CALL("zeCommandQueueExecuteCommandLists(hinted list)", A.queue_exec(q, 1, &reg, NULL));
    CALL("zeCommandQueueSynchronize", A.queue_sync(q, UINT64_MAX));
    CALL("zeCommandQueueDestroy", A.queue_destroy(q));
    pthread_mutex_lock(&lock);
    F.kernels += 2 * QUEUE_RUNS;
    F.copies += QUEUE_RUNS;
    F.offloaded += QUEUE_RUNS;
    pthread_mutex_unlock(&lock);
}

/* Native graph capture (spec 1.17) on the hinted immediate list: a host-to-device copy and a
 * kernel captured, the graph replayed; each replay's copy runs on a copy engine. */
#define REPLAYS 3
static void capture_replay(ze_command_list_handle_t imm, ze_kernel_handle_t k, void *host, void *d0) {
    void *graph = NULL, *x = NULL;
    ze_group_count_t g = {1, 1, 1};
    CALL("zeCommandListBeginGraphCaptureExt", A.begin_capture(imm, NULL));
    CALL("zeCommandListAppendMemoryCopy(capture)", A.copy(imm, d0, host, COPY_BYTES, NULL, 0, NULL));
    CALL("zeCommandListAppendLaunchKernel(capture)", A.launch(imm, k, &g, NULL, 0, NULL));
    CALL("zeCommandListEndGraphCaptureExt", A.end_capture(imm, NULL, &graph));
    CALL("zeGraphInstantiateExt", A.graph_inst(graph, NULL, &x));
    for (int i = 0; i < REPLAYS; i++) CALL("zeCommandListAppendGraphExt", A.append_graph(imm, x, NULL, NULL, 0, NULL));
    CALL("zeCommandListHostSynchronize(replays)", A.host_sync(imm, UINT64_MAX));
    CALL("zeExecutableGraphDestroyExt", A.xgraph_destroy(x));
    CALL("zeGraphDestroyExt", A.graph_destroy(graph));
    pthread_mutex_lock(&lock);
    F.kernels += REPLAYS;
    F.copies += REPLAYS;
    F.offloaded += REPLAYS;
    pthread_mutex_unlock(&lock);
}

/* queue.wait(): HostSynchronize, or (spec 1.4) the last operation's event */
static void wait_all(ze_command_list_handle_t imm, ze_event_handle_t last) {
    ze_result_t r = A.host_sync ? A.host_sync(imm, UINT64_MAX) : A.event_sync(last, UINT64_MAX);
    ok(r == ZE_RESULT_SUCCESS, "queue wait returns 0x%x", (unsigned)r);
}

static ze_event_handle_t cb_event(uint32_t flags) {
    cb_desc_t d = {(ze_structure_type_t)STYPE_ZEX_CB_DESC, NULL, flags, ZE_EVENT_SCOPE_FLAG_HOST, 0};
    ze_event_handle_t e = NULL;
    ze_result_t r = create2(ctx, dev, &d, &e);
    ok(r == ZE_RESULT_SUCCESS && e, "zexCounterBasedEventCreate2(flags 0x%x) returns 0x%x", flags, (unsigned)r);
    if (e) {
        fact_event(e);
        pthread_mutex_lock(&lock);
        F.zex2++;
        pthread_mutex_unlock(&lock);
    }
    return e;
}

/* The application's own reads of its timestamp event agree, and are noted for the checker. */
static void read_ts(ze_event_handle_t ev) {
    ze_kernel_timestamp_result_t t;
    ze_result_t r = A.qkt(ev, &t);
    ok(r == ZE_RESULT_SUCCESS, "zeEventQueryKernelTimestamp returns 0x%x", (unsigned)r);
    if (r != ZE_RESULT_SUCCESS) return;
    pthread_mutex_lock(&lock);
    F.kts[F.nkts].ev = ev, F.kts[F.nkts].start = t.global.kernelStart, F.kts[F.nkts].end = t.global.kernelEnd;
    F.nkts++;
    pthread_mutex_unlock(&lock);
    if (A.qkt_ext) {
        uint32_t n = 1;
        ze_kernel_timestamp_result_t k = {{0, 0}, {0, 0}}, s;
        kts_ext_t res = {(ze_structure_type_t)STYPE_KTS_EXT_PROPS, NULL, &k, &s};
        r = A.qkt_ext(ev, dev, &n, &res);
        ok(r == ZE_RESULT_SUCCESS && k.global.kernelStart == t.global.kernelStart && k.global.kernelEnd == t.global.kernelEnd,
           "zeEventQueryKernelTimestampsExt (0x%x) agrees: %" PRIu64 "..%" PRIu64, (unsigned)r, k.global.kernelStart,
           k.global.kernelEnd);
    }
    if (A.qts_exp) {
        uint32_t n = 1;
        ze_kernel_timestamp_result_t k = {{0, 0}, {0, 0}};
        r = A.qts_exp(ev, dev, &n, &k);
        ok(r == ZE_RESULT_SUCCESS && k.global.kernelStart == t.global.kernelStart && k.global.kernelEnd == t.global.kernelEnd,
           "zeEventQueryTimestampsExp (0x%x) agrees: %" PRIu64 "..%" PRIu64, (unsigned)r, k.global.kernelStart,
           k.global.kernelEnd);
    }
}

/* What the driver rejects on a CB event, asked once (thread 0): the same with and without zecoll. */
static void rejections(ze_command_list_handle_t imm, ze_event_handle_t ev, ze_kernel_handle_t k) {
    EXPECT("zeEventHostSignal(CB)", ZE_RESULT_ERROR_UNSUPPORTED_FEATURE, A.host_signal(ev));
    EXPECT("zeEventHostReset(CB)", ZE_RESULT_ERROR_UNSUPPORTED_FEATURE, A.host_reset(ev));
    EXPECT("zeCommandListAppendEventReset(CB)", ZE_RESULT_ERROR_INVALID_ARGUMENT, A.append_reset(imm, ev));
    /* an immediate-only CB event signalled on a regular list */
    ze_command_list_desc_t ld = {ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC, NULL, 0, LIST_FLAG_IN_ORDER};
    ze_command_list_handle_t reg;
    CALL("zeCommandListCreate", A.list_create(ctx, dev, &ld, &reg));
    ze_event_handle_t only_imm = cb_event(CB_IMMEDIATE | CB_HOST_VISIBLE);
    ze_group_count_t g = {1, 1, 1};
    EXPECT("zeCommandListAppendLaunchKernel(regular list, immediate-only CB event)", ZE_RESULT_ERROR_INVALID_ARGUMENT,
           A.launch(reg, k, &g, only_imm, 0, NULL));
    CALL("zeCommandListDestroy", A.list_destroy(reg));
    CALL("zeEventDestroy", A.event_destroy(only_imm));
    pthread_mutex_lock(&lock);
    F.rejects += 4;
    pthread_mutex_unlock(&lock);
}

/* An event of a pool of its own (a CB one when cb is its descriptor), timestamped. */
static ze_event_handle_t pool_event(const pool_cb_desc_t *cb, ze_event_pool_handle_t *pool) {
    ze_event_pool_desc_t pd = {ZE_STRUCTURE_TYPE_EVENT_POOL_DESC, cb,
                               ZE_EVENT_POOL_FLAG_HOST_VISIBLE | ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP, 1};
    ze_event_desc_t ed = {ZE_STRUCTURE_TYPE_EVENT_DESC, NULL, 0, ZE_EVENT_SCOPE_FLAG_HOST, ZE_EVENT_SCOPE_FLAG_HOST};
    ze_event_handle_t ev = NULL;
    ze_result_t r = A.pool_create(ctx, &pd, 1, &dev, pool);
    if (r == ZE_RESULT_SUCCESS) r = A.event_create(*pool, &ed, &ev);
    ok(r == ZE_RESULT_SUCCESS, "%s pool and event (0x%x)", cb ? "CB" : "regular", (unsigned)r);
    if (ev) fact_event(ev);
    return ev;
}

/* One profiled launch that signals ev, waited for, its timestamps read. */
static void use_event(ze_command_list_handle_t imm, ze_kernel_handle_t k, ze_event_handle_t ev) {
    launch(imm, k, ev);
    wait_all(imm, ev);
    read_ts(ev);
}

static void run_thread(int id) {
    ze_kernel_handle_t k[3];
    for (int i = 0; i < 3; i++) {
        char name[8];
        snprintf(name, sizeof(name), "k%d", i + 1);
        ze_kernel_desc_t kd = {ZE_STRUCTURE_TYPE_KERNEL_DESC, NULL, 0, name};
        ze_result_t r = A.kernel_create(mod, &kd, &k[i]);
        if (r == ZE_RESULT_SUCCESS) r = A.kernel_group(k[i], 1, 1, 1);
        if (r != ZE_RESULT_SUCCESS) {
            ok(0, "kernel %s: 0x%x", name, (unsigned)r);
            return;
        }
    }
    /* UR v2 turns copy offload on where the driver has it (spec 1.14); a spec-1.4 application never */
    bool offload = harness;
    ze_command_queue_desc_t qd = {ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC, NULL, 0, 0,
                                  QUEUE_FLAG_IN_ORDER | (offload ? QUEUE_FLAG_COPY_OFFLOAD : 0),
                                  ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS, ZE_COMMAND_QUEUE_PRIORITY_NORMAL};
    ze_command_list_handle_t imm, reg = NULL, imm2;
    if (A.imm_create(ctx, dev, &qd, &imm) != ZE_RESULT_SUCCESS) {
        ok(0, "immediate list");
        return;
    }
    qd.flags = QUEUE_FLAG_IN_ORDER; /* a queue without copy offload (UR_L0_V2_FORCE_DISABLE_COPY_OFFLOAD) */
    if (A.imm_create(ctx, dev, &qd, &imm2) != ZE_RESULT_SUCCESS) {
        ok(0, "immediate list without the hint");
        return;
    }
    ze_host_mem_alloc_desc_t hd = {ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC, NULL, 0};
    ze_device_mem_alloc_desc_t dd = {ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC, NULL, 0, 0};
    void *host = NULL, *d0 = NULL, *d1 = NULL, *sh = NULL;
    ze_result_t ar = A.alloc_host(ctx, &hd, COPY_BYTES, 64, &host);
    if (ar == ZE_RESULT_SUCCESS) ar = A.alloc_device(ctx, &dd, COPY_BYTES, 64, dev, &d0);
    if (ar == ZE_RESULT_SUCCESS) ar = A.alloc_device(ctx, &dd, COPY_BYTES, 64, dev, &d1);
    if (ar == ZE_RESULT_SUCCESS) ar = A.alloc_shared(ctx, &dd, &hd, COPY_BYTES, 64, dev, &sh);
    if (ar != ZE_RESULT_SUCCESS) {
        ok(0, "USM allocations: 0x%x", (unsigned)ar);
        return;
    }
    /* UR v2's events: with timestamps when the queue profiles, always both list kinds */
    ze_event_handle_t ts = cb_event(CB_IMMEDIATE | CB_NON_IMMEDIATE | CB_HOST_VISIBLE | CB_TIMESTAMP);
    ze_event_handle_t plain = cb_event(CB_IMMEDIATE | CB_NON_IMMEDIATE | CB_HOST_VISIBLE);
    ze_event_handle_t done2 = cb_event(CB_IMMEDIATE | CB_NON_IMMEDIATE | CB_HOST_VISIBLE);
    if (!ts || !plain || !done2) return;
    if (id == 0) rejections(imm, ts, k[0]);
    if (A.append_lists) { /* a SYCL graph: an in-order regular list run on the queue's immediate list */
        ze_command_list_desc_t ld = {ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC, NULL, 0,
                                     LIST_FLAG_IN_ORDER | (offload ? LIST_FLAG_COPY_OFFLOAD : 0)};
        ze_group_count_t g = {1, 1, 1};
        ze_result_t r = A.list_create(ctx, dev, &ld, &reg);
        if (r == ZE_RESULT_SUCCESS) r = A.launch(reg, k[0], &g, NULL, 0, NULL);
        if (r == ZE_RESULT_SUCCESS) r = A.copy(reg, d1, host, COPY_BYTES, NULL, 0, NULL); /* offloaded */
        if (r == ZE_RESULT_SUCCESS) r = A.launch(reg, k[2], &g, NULL, 0, NULL);
        if (r == ZE_RESULT_SUCCESS) r = A.list_close(reg);
        ok(r == ZE_RESULT_SUCCESS, "the regular list is built (0x%x)", (unsigned)r);
    }
    for (int it = 0; it < ITERS; it++) {
        launch(imm, k[0], NULL); /* event-less submissions */
        launch(imm, k[1], NULL);
        launch(imm, k[2], ts);   /* the one SYCL profiles */
        if (reg && it % APPEND_EVERY == 0) {
            ze_result_t r = A.append_lists(imm, 1, &reg, NULL, 0, NULL);
            ok(r == ZE_RESULT_SUCCESS, "zeCommandListImmediateAppendCommandListsExp returns 0x%x", (unsigned)r);
            pthread_mutex_lock(&lock);
            F.kernels += 2;
            F.copies++;
            F.offloaded += offload;
            pthread_mutex_unlock(&lock);
        }
        copies(imm, offload, host, d0, d1, sh, it % 2 ? plain : NULL, NULL);
        copies(imm2, false, host, d1, d0, sh, NULL, done2);
        launch(imm, k[0], plain); /* its event without timestamps */
        wait_all(imm, plain);
        CALL("zeEventHostSynchronize(the second queue's event)", A.event_sync(done2, UINT64_MAX));
        read_ts(ts);
    }
    if (reg && A.queue_exec) run_on_queue(reg);
    if (A.begin_capture && A.append_graph) capture_replay(imm, k[1], host, d0);
    /* the other creation paths, once each: a pool with the CB descriptor, the core entry (1.15) */
    pool_cb_desc_t pcb = {(ze_structure_type_t)STYPE_POOL_CB_EXP_DESC, NULL, CB_IMMEDIATE};
    ze_event_pool_handle_t pool, rpool;
    ze_event_handle_t pev = pool_event(&pcb, &pool), rev, cev = NULL;
    if (!pev) return;
    use_event(imm, k[1], pev);
    EXPECT("zeEventHostSignal(CB from a pool)", ZE_RESULT_ERROR_UNSUPPORTED_FEATURE, A.host_signal(pev));
    pthread_mutex_lock(&lock);
    F.rejects++;
    pthread_mutex_unlock(&lock);
    /* a regular event of a plain pool: the driver may convert it on this in-order immediate list */
    if (!(rev = pool_event(NULL, &rpool))) return;
    use_event(imm, k[2], rev);
    if (A.cb_create) {
        cb_desc_t cd = {(ze_structure_type_t)STYPE_EVENT_CB_DESC, NULL, CB_IMMEDIATE | CB_HOST_VISIBLE | CB_TIMESTAMP,
                        ZE_EVENT_SCOPE_FLAG_HOST, 0};
        ze_result_t r = A.cb_create(ctx, dev, &cd, &cev);
        ok(r == ZE_RESULT_SUCCESS, "zeEventCounterBasedCreate returns 0x%x", (unsigned)r);
        if (cev) use_event(imm, k[0], cev);
    }
    if (A.cb_flags) {
        uint32_t f1 = 99, f2 = 99;
        ze_result_t r1 = A.cb_flags(ts, &f1), r2 = A.cb_flags(rev, &f2);
        ok(r1 == ZE_RESULT_SUCCESS && r2 == ZE_RESULT_SUCCESS && f1 == (CB_IMMEDIATE | CB_NON_IMMEDIATE | CB_HOST_VISIBLE | CB_TIMESTAMP) && f2 == 0,
           "zeEventGetCounterBasedFlags: 0x%x for a zex event, 0x%x for a regular one", f1, f2);
    }
    pthread_mutex_lock(&lock);
    F.pool++;
    F.core += cev != NULL;
    F.regular[F.nregular++] = rev;
    pthread_mutex_unlock(&lock);
    ze_event_handle_t evs[] = {ts, plain, done2, pev, rev, cev};
    for (size_t i = 0; i < sizeof(evs) / sizeof(evs[0]); i++)
        if (evs[i]) CALL("zeEventDestroy", A.event_destroy(evs[i]));
    CALL("zeEventPoolDestroy", A.pool_destroy(pool));
    CALL("zeEventPoolDestroy", A.pool_destroy(rpool));
    if (reg) CALL("zeCommandListDestroy", A.list_destroy(reg));
    CALL("zeCommandListDestroy", A.list_destroy(imm));
    CALL("zeCommandListDestroy", A.list_destroy(imm2));
    void *mems[] = {host, d0, d1, sh};
    for (int i = 0; i < 4; i++) CALL("zeMemFree", A.mem_free(ctx, mems[i]));
    for (int i = 0; i < 3; i++) CALL("zeKernelDestroy", A.kernel_destroy(k[i]));
}

static void *thread(void *arg) {
    run_thread((int)(intptr_t)arg);
    return NULL;
}

static void setup(void) {
    uint32_t n = 1;
    if (A.init_drivers) {
        struct {
            ze_structure_type_t stype;
            const void *pNext;
            uint32_t flags;
        } d = {(ze_structure_type_t)0x00020021, NULL, 1 /* GPU */};
        CALL("zeInitDrivers", A.init_drivers(&n, &drv, &d));
    } else {
        CALL("zeInit", A.init(ZE_INIT_FLAG_GPU_ONLY));
        CALL("zeDriverGet", A.driver_get(&n, &drv));
    }
    n = 1;
    CALL("zeDeviceGet", A.device_get(drv, &n, &dev));
    ze_context_desc_t cd = {ZE_STRUCTURE_TYPE_CONTEXT_DESC, NULL, 0};
    CALL("zeContextCreate", A.ctx_create(drv, &cd, &ctx));
    const char *text = "ZESIM-MODULE\nkernel k1 args=0 ns=20000 ns_per_item=0\nkernel k2 args=0 ns=35000 ns_per_item=0\n"
                       "kernel k3 args=0 ns=50000 ns_per_item=0\n";
    ze_module_desc_t md = {ZE_STRUCTURE_TYPE_MODULE_DESC, NULL, ZE_MODULE_FORMAT_NATIVE, strlen(text),
                           (const uint8_t *)text, NULL, NULL};
    CALL("zeModuleCreate", A.module_create(ctx, dev, &md, &mod, NULL));
    void *f = NULL;
    CALL("zeDriverGetExtensionFunctionAddress(zexCounterBasedEventCreate2)",
         A.ext_fn(drv, "zexCounterBasedEventCreate2", &f));
    create2 = (zex_create2_t)(uintptr_t)f;
    void *none = (void *)&f;
    ze_result_t r = A.ext_fn(drv, "zexNoSuchFunction", &none);
    ok(r != ZE_RESULT_SUCCESS && !none, "an unknown extension function stays unknown (0x%x, %p)", (unsigned)r, none);
}

int main(int argc, char **argv) {
    harness = argc > 1 && strcmp(argv[1], "17") == 0;
    if (argc < 2 || (!harness && strcmp(argv[1], "loader") != 0)) {
        fprintf(stderr, "usage: %s 17|loader [THREADS]\n", argv[0]);
        return 2;
    }
    int nt = argc > 2 ? atoi(argv[2]) : 1;
    if (nt < 1 || nt > MAX_THREADS) nt = 1;
    alarm(60); /* a hang is a failure, not a stuck CI job */
    if (load() != 0) return 1;
    printf("# UR-v2-like application, %s, %d thread(s)\n", harness ? "a loader of spec 1.17" : "Debian's loader", nt);
    setup();
    if (!create2) {
        printf("Bail out! no zexCounterBasedEventCreate2\n");
        return 1;
    }
    pthread_t th[MAX_THREADS];
    for (int i = 0; i < nt; i++) pthread_create(&th[i], NULL, thread, (void *)(intptr_t)i);
    for (int i = 0; i < nt; i++) pthread_join(th[i], NULL);
    A.module_destroy(mod);
    A.ctx_destroy(ctx);
    write_facts();
    printf("1..%d\n", ntest);
    return nfail ? 1 : 0;
}
