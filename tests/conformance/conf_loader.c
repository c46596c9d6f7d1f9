/* SPDX-License-Identifier: MIT */
/*
 * Loader interface and driver: zeInit any number of times, one driver with API version 1.4,
 * IPC properties, no extensions, NULL zet/zes tables, real work through the loader (also under
 * ZE_ENABLE_LOADER_INTERCEPT / VALIDATION / TRACING, see CMakeLists.txt), caller arrays copied.
 * "conf_loader getters" instead dlopen()s zesim and checks the 46 getters and version gating.
 */
#include "zt.h"

#include <dlfcn.h>

#include <level_zero/layers/zel_tracing_api.h>
#include <level_zero/layers/zel_tracing_register_cb.h>
#include <level_zero/ze_ddi.h>
#include <level_zero/zes_api.h>
#include <level_zero/zet_api.h>

static atomic_int traced_launches;

static void on_launch(ze_command_list_append_launch_kernel_params_t *params, ze_result_t result,
                      void *user, void **instance)
{
    atomic_fetch_add(&traced_launches, 1);
}

static void test_driver(void)
{
    IS_ZE(zeInit(0), ZE_RESULT_SUCCESS, "zeInit(0)");
    IS_ZE(zeInit(0), ZE_RESULT_SUCCESS, "zeInit(0) again");
    IS_ZE(zeInit(ZE_INIT_FLAG_GPU_ONLY), ZE_RESULT_SUCCESS, "zeInit(GPU_ONLY) a third time");

    uint32_t n = 0;
    IS_ZE(zeDriverGet(&n, NULL), ZE_RESULT_SUCCESS, "zeDriverGet count");
    zt_is_int(n, 1, "exactly one driver");
    ze_driver_handle_t drv[4] = {0};
    n = 4;
    IS_ZE(zeDriverGet(&n, drv), ZE_RESULT_SUCCESS, "zeDriverGet handles");
    zt_is_int(n, 1, "count stays 1 with a larger array");
    zt_ok(drv[0] != NULL, "driver handle");

    ze_api_version_t v = 0;
    IS_ZE(zeDriverGetApiVersion(drv[0], &v), ZE_RESULT_SUCCESS, "zeDriverGetApiVersion");
    zt_is_int(v, ZE_API_VERSION_1_4, "driver API version 1.4");

    ze_driver_properties_t dp = {.stype = ZE_STRUCTURE_TYPE_DRIVER_PROPERTIES};
    IS_ZE(zeDriverGetProperties(drv[0], &dp), ZE_RESULT_SUCCESS, "zeDriverGetProperties");
    zt_is_int(dp.stype, ZE_STRUCTURE_TYPE_DRIVER_PROPERTIES, "stype kept");
    zt_ok(dp.pNext == NULL, "pNext kept");

    ze_driver_ipc_properties_t ip = {.stype = ZE_STRUCTURE_TYPE_DRIVER_IPC_PROPERTIES};
    IS_ZE(zeDriverGetIpcProperties(drv[0], &ip), ZE_RESULT_SUCCESS, "zeDriverGetIpcProperties");

    uint32_t next = 77;
    IS_ZE(zeDriverGetExtensionProperties(drv[0], &next, NULL), ZE_RESULT_SUCCESS,
          "zeDriverGetExtensionProperties");
    zt_is_int(next, 0, "no extensions");

    /* zet/zes tables are NULL: the loader answers, never SUCCESS, never a crash. */
    uint32_t nd = 1;
    ze_device_handle_t dev = NULL;
    CHECK_ZE(zeDeviceGet(drv[0], &nd, &dev));
    uint32_t nmg = 0;
    ze_result_t r = zetMetricGroupGet(dev, &nmg, NULL);
    zt_ok(r == ZE_RESULT_ERROR_UNSUPPORTED_FEATURE || r == ZE_RESULT_ERROR_UNINITIALIZED,
          "zetMetricGroupGet unsupported (0x%x)", (unsigned)r);
    zes_device_properties_t sp = {.stype = ZES_STRUCTURE_TYPE_DEVICE_PROPERTIES};
    r = zesDeviceGetProperties((zes_device_handle_t)dev, &sp);
    zt_ok(r != ZE_RESULT_SUCCESS, "zesDeviceGetProperties unsupported (0x%x)", (unsigned)r);
}

/* Real work through whatever layers are enabled, with wait arrays the caller scribbles over
 * after each call (the loader's intercept mode frees its translated copy right after it). */
static void test_work(void)
{
    zt_env e;
    zt_setup(&e);
    int tracing = getenv("ZE_ENABLE_TRACING_LAYER") &&
                  strcmp(getenv("ZE_ENABLE_TRACING_LAYER"), "1") == 0;
    zel_tracer_handle_t tracer = NULL;
    if (tracing) {
        zel_tracer_desc_t td = {ZEL_STRUCTURE_TYPE_TRACER_DESC, NULL, NULL};
        IS_ZE(zelTracerCreate(&td, &tracer), ZE_RESULT_SUCCESS, "zelTracerCreate");
        CHECK_ZE(zelTracerCommandListAppendLaunchKernelRegisterCallback(
            tracer, ZEL_REGISTER_PROLOGUE, on_launch));
        CHECK_ZE(zelTracerSetEnabled(tracer, 1));
    }

    enum { N = 1024 };
    ze_module_handle_t m = zt_module_spirv(&e, 0, zt_spv_builtins, 4);
    ze_kernel_handle_t k = zt_kernel(m, "vector_add");
    CHECK_ZE(zeKernelSetGroupSize(k, 64, 1, 1));
    float *a = zt_shared_alloc(&e, 0, N * 4), *b = zt_host_alloc(&e, N * 4);
    float *c = zt_device_alloc(&e, 0, N * 4);
    for (int i = 0; i < N; i++) {
        a[i] = (float)i;
        b[i] = 0.5f * (float)i;
    }
    memset(c, 0, N * 4);
    CHECK_ZE(zeKernelSetArgumentValue(k, 0, sizeof a, &a));
    CHECK_ZE(zeKernelSetArgumentValue(k, 1, sizeof b, &b));
    CHECK_ZE(zeKernelSetArgumentValue(k, 2, sizeof c, &c));

    ze_event_handle_t ev[4];
    ze_event_pool_handle_t pool = zt_ts_events(&e, 4, ev);
    ze_command_list_handle_t l = zt_list(&e, 0, zt_compute_ordinal(e.dev[0]), 0);
    ze_event_handle_t *waits = malloc(2 * sizeof *waits);
    waits[0] = ev[0];
    waits[1] = ev[1];
    ze_group_count_t gc = {N / 64, 1, 1};
    CHECK_ZE(zeCommandListAppendLaunchKernel(l, k, &gc, ev[2], 2, waits));
    memset(waits, 0xab, 2 * sizeof *waits); /* the driver must have copied the array */
    free(waits);
    CHECK_ZE(zeCommandListClose(l));
    ze_command_queue_handle_t q = zt_queue(&e, 0, zt_compute_ordinal(e.dev[0]), 0,
                                           ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS, 0);
    CHECK_ZE(zeCommandQueueExecuteCommandLists(q, 1, &l, NULL));
    zt_sleep_ms(5);
    IS_ZE(zeEventQueryStatus(ev[2]), ZE_RESULT_NOT_READY, "kernel waits for its two events");
    CHECK_ZE(zeEventHostSignal(ev[0]));
    CHECK_ZE(zeEventHostSignal(ev[1]));
    IS_ZE(zeEventHostSynchronize(ev[2], 5000000000ull), ZE_RESULT_SUCCESS,
          "kernel completes after both waits are signalled");
    int good = 1;
    for (int i = 0; i < N; i++)
        if (c[i] != 1.5f * (float)i)
            good = 0;
    zt_ok(good, "vector_add computed through the loader");

    /* An immediate list too, with a temporary wait array. */
    ze_command_list_handle_t il = zt_imm_compute(&e, 0);
    ze_event_handle_t *w1 = malloc(sizeof *w1);
    w1[0] = ev[2];
    CHECK_ZE(zeCommandListAppendBarrier(il, ev[3], 1, w1));
    free(w1);
    IS_ZE(zeEventHostSynchronize(ev[3], 5000000000ull), ZE_RESULT_SUCCESS,
          "barrier on an immediate list completes");
    ze_kernel_timestamp_result_t ts;
    IS_ZE(zeEventQueryKernelTimestamp(ev[2], &ts), ZE_RESULT_SUCCESS,
          "zeEventQueryKernelTimestamp through the loader");
    uint64_t host = 0, devts = 0;
    IS_ZE(zeDeviceGetGlobalTimestamps(e.dev[0], &host, &devts), ZE_RESULT_SUCCESS,
          "zeDeviceGetGlobalTimestamps (a 1.1 entry) is reachable");
    zt_ok(host != 0, "global timestamp host side set");

    if (tracing) {
        zt_is_int(atomic_load(&traced_launches), 1, "tracing layer saw the launch");
        CHECK_ZE(zelTracerSetEnabled(tracer, 0));
        CHECK_ZE(zelTracerDestroy(tracer));
    }
    zt_destroy(il);
    zt_destroy(l);
    zt_destroy(q);
    for (int i = 0; i < 4; i++)
        zt_destroy(ev[i]);
    zt_destroy(pool);
    zt_destroy(k);
    zt_destroy(m);
    zt_free(e.ctx, a);
    zt_free(e.ctx, b);
    zt_free(e.ctx, c);
    zt_teardown(&e);
}

/* ---- direct getter checks (no loader) ----------------------------------------------------- */

static const char *const getters[] = {
    "zeGetGlobalProcAddrTable", "zeGetDriverProcAddrTable", "zeGetDeviceProcAddrTable",
    "zeGetContextProcAddrTable", "zeGetCommandQueueProcAddrTable",
    "zeGetCommandListProcAddrTable", "zeGetEventProcAddrTable", "zeGetEventPoolProcAddrTable",
    "zeGetFenceProcAddrTable", "zeGetImageProcAddrTable", "zeGetKernelProcAddrTable",
    "zeGetMemProcAddrTable", "zeGetModuleProcAddrTable", "zeGetModuleBuildLogProcAddrTable",
    "zeGetPhysicalMemProcAddrTable", "zeGetSamplerProcAddrTable", "zeGetVirtualMemProcAddrTable",
    "zetGetDeviceProcAddrTable", "zetGetContextProcAddrTable", "zetGetCommandListProcAddrTable",
    "zetGetKernelProcAddrTable", "zetGetModuleProcAddrTable", "zetGetDebugProcAddrTable",
    "zetGetMetricProcAddrTable", "zetGetMetricGroupProcAddrTable",
    "zetGetMetricQueryProcAddrTable", "zetGetMetricQueryPoolProcAddrTable",
    "zetGetMetricStreamerProcAddrTable", "zetGetTracerExpProcAddrTable",
    "zesGetDeviceProcAddrTable", "zesGetDriverProcAddrTable", "zesGetDiagnosticsProcAddrTable",
    "zesGetEngineProcAddrTable", "zesGetFabricPortProcAddrTable", "zesGetFanProcAddrTable",
    "zesGetFirmwareProcAddrTable", "zesGetFrequencyProcAddrTable", "zesGetLedProcAddrTable",
    "zesGetMemoryProcAddrTable", "zesGetPerformanceFactorProcAddrTable",
    "zesGetPowerProcAddrTable", "zesGetPsuProcAddrTable", "zesGetRasProcAddrTable",
    "zesGetSchedulerProcAddrTable", "zesGetStandbyProcAddrTable",
    "zesGetTemperatureProcAddrTable",
};

typedef ze_result_t (*getter_fn)(ze_api_version_t, void *);

static void test_getters(void)
{
    const char *path = getenv("ZE_ENABLE_ALT_DRIVERS");
    if (!path)
        zt_bail("ZE_ENABLE_ALT_DRIVERS is not set");
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h)
        zt_bail("dlopen(%s): %s", path, dlerror());
    zt_is_int(sizeof getters / sizeof getters[0], 46, "46 mandatory getters listed");
    for (size_t i = 0; i < sizeof getters / sizeof getters[0]; i++) {
        getter_fn f = (getter_fn)(uintptr_t)dlsym(h, getters[i]);
        if (!zt_ok(f != NULL, "%s exported", getters[i]))
            continue;
        /* Generous buffer, sentinel-filled beyond a zeroed table-sized prefix. */
        unsigned char buf[8192];
        memset(buf, 0, sizeof buf);
        ze_result_t r = f(ZE_API_VERSION_1_4, buf);
        IS_ZE(r, ZE_RESULT_SUCCESS, "%s(1.4)", getters[i]);
        int ze_core = strncmp(getters[i], "zeGet", 5) == 0;
        int optional = strstr(getters[i], "PhysicalMem") || strstr(getters[i], "VirtualMem") ||
                       strstr(getters[i], "Sampler"); /* may be all-NULL (not modelled) */
        if (ze_core && optional) {
            continue;
        } else if (ze_core) {
            int any = 0;
            for (size_t j = 0; j < sizeof buf; j++)
                any |= buf[j];
            zt_ok(any, "%s fills entries", getters[i]);
        } else {
            int any = 0;
            for (size_t j = 0; j < sizeof buf; j++)
                any |= buf[j];
            zt_ok(!any, "%s leaves the table all-NULL", getters[i]);
        }
    }
    getter_fn dev = (getter_fn)(uintptr_t)dlsym(h, "zeGetDeviceProcAddrTable");
    getter_fn ctx = (getter_fn)(uintptr_t)dlsym(h, "zeGetContextProcAddrTable");
    if (dev && ctx) {
        ze_device_dditable_t t10, t11;
        /* a caller asking for a newer version hands a table of that version's size: the 1.4
         * headers' struct plus room for the entries added since (zeDeviceSynchronize is [22]) */
        struct {
            ze_device_dditable_t t;
            void *later[64];
        } t199;
        memset(&t10, 0, sizeof t10);
        memset(&t11, 0, sizeof t11);
        memset(&t199, 0, sizeof t199);
        IS_ZE(dev(ZE_API_VERSION_1_0, &t10), ZE_RESULT_SUCCESS, "Device table at 1.0 accepted");
        zt_ok(t10.pfnGet != NULL && t10.pfnGetProperties != NULL, "1.0 entries filled at 1.0");
        zt_ok(t10.pfnGetGlobalTimestamps == NULL,
              "zeDeviceGetGlobalTimestamps (1.1) not filled at 1.0");
        IS_ZE(dev(ZE_API_VERSION_1_1, &t11), ZE_RESULT_SUCCESS, "Device table at 1.1 accepted");
        zt_ok(t11.pfnGetGlobalTimestamps != NULL, "zeDeviceGetGlobalTimestamps filled at 1.1");
        IS_ZE(dev(ZE_MAKE_VERSION(1, 99), &t199), ZE_RESULT_SUCCESS,
              "Device table at 1.99 accepted (any 1.x)");
        zt_ok(t199.t.pfnGetGlobalTimestamps != NULL, "and filled");
        ze_context_dditable_t c10;
        memset(&c10, 0, sizeof c10);
        IS_ZE(ctx(ZE_API_VERSION_1_0, &c10), ZE_RESULT_SUCCESS, "Context table at 1.0");
        zt_ok(c10.pfnCreate != NULL, "zeContextCreate filled at 1.0");
        zt_ok(c10.pfnCreateEx == NULL, "zeContextCreateEx (1.1) not filled at 1.0");
        ze_result_t r2 = dev(ZE_MAKE_VERSION(2, 0), &t199);
        zt_diag("Device table at 2.0 -> 0x%x (%s)", (unsigned)r2, zt_result_str(r2));
    }
    /* no dlclose: zesim keeps its process-wide state (LeakSanitizer would see it unloaded) */
}

int main(int argc, char **argv)
{
    zt_init(argc, argv);
    if (argc > 1 && strcmp(argv[1], "getters") == 0) {
        test_getters();
    } else {
        test_driver();
        test_work();
    }
    return zt_done();
}
