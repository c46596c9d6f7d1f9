// SPDX-License-Identifier: MIT
// Variant 3 of the interception-cost benchmark: a shim driver that wraps the real driver's tables.
//
// The loader loads this library as its driver (ZE_ENABLE_ALT_DRIVERS=<absolute path of libic_shim.so>).
// It dlopen()s the real driver named by ZC_BENCH_REAL_DRIVER (absolute path) and exports the 46
// getters the 1.8.12 loader requires (17 ze, 12 zet, 17 zes; every non-Exp table plus
// zetGetTracerExpProcAddrTable). Each getter calls the real driver's getter with the same version
// INTO THE CALLER'S TABLE, so entries newer than our headers keep the real driver's values, and the
// command-list getter then saves the real pfnAppendBarrier and installs a forwarding wrapper. The
// loader dispatches every application call through these tables, whatever way the application
// reached the loader (linked symbols, dlopen/dlsym, the loader's own getters).
// At exit it prints "ic-count shim <calls>" to stderr.
//
// Not done here (a production shim would): the optional *Exp getters (exporting them changes which
// of the real driver's Exp tables the loader sees), and a lock around the lazy dlopen (the loader
// calls the getters from one thread, inside its call_once).
#include <dlfcn.h>
#include <level_zero/ze_api.h>
#include <level_zero/ze_ddi.h>
#include <level_zero/zes_ddi.h>
#include <level_zero/zet_ddi.h>
#include <stdio.h>
#include <stdlib.h>

#define REAL_DRIVER_ENV "ZC_BENCH_REAL_DRIVER"

static void *real_driver(void) {
    static void *handle;
    static int tried;
    if (!tried) {
        tried = 1;
        const char *path = getenv(REAL_DRIVER_ENV);
        if (!path || !*path) {
            fprintf(stderr, "ic_shim: set %s to the real driver's absolute path\n", REAL_DRIVER_ENV);
            return NULL;
        }
        handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        if (!handle) fprintf(stderr, "ic_shim: dlopen(%s): %s\n", path, dlerror());
    }
    return handle;
}

// The real driver's own definition: dlsym on its handle searches it before anything else.
static void *real_getter(const char *name) {
    void *h = real_driver();
    return h ? dlsym(h, name) : NULL;
}

// A getter that only forwards. A real driver lacking a mandatory getter would poison itself in the
// loader; so does the shim, with the same result the loader uses for a missing getter.
#define IC_FORWARD_GETTER(fn, table_t)                                                            \
    ze_result_t ZE_APICALL fn(ze_api_version_t version, table_t *table) {                         \
        ze_result_t (*real)(ze_api_version_t, table_t *) =                                        \
            (ze_result_t(*)(ze_api_version_t, table_t *))real_getter(#fn);                        \
        return real ? real(version, table) : ZE_RESULT_ERROR_UNINITIALIZED;                       \
    }

// ---- the one wrapped entry ------------------------------------------------------------------------

static ze_pfnCommandListAppendBarrier_t real_append_barrier;
static unsigned long calls;

__attribute__((destructor)) static void ic_shim_fini(void) { fprintf(stderr, "ic-count shim %lu\n", calls); }

static ze_result_t ZE_APICALL shim_append_barrier(ze_command_list_handle_t hCommandList, ze_event_handle_t hSignalEvent,
                                                  uint32_t numWaitEvents, ze_event_handle_t *phWaitEvents) {
    ++calls;
    return real_append_barrier(hCommandList, hSignalEvent, numWaitEvents, phWaitEvents);
}

ze_result_t ZE_APICALL zeGetCommandListProcAddrTable(ze_api_version_t version, ze_command_list_dditable_t *table) {
    ze_pfnGetCommandListProcAddrTable_t real =
        (ze_pfnGetCommandListProcAddrTable_t)real_getter("zeGetCommandListProcAddrTable");
    if (!real) return ZE_RESULT_ERROR_UNINITIALIZED;
    ze_result_t r = real(version, table); // the caller's table: newer entries stay the driver's
    if (r != ZE_RESULT_SUCCESS || !table) return r;
    // The loader fills tables more than once; never save our own wrapper as the "real" entry.
    if (table->pfnAppendBarrier && table->pfnAppendBarrier != shim_append_barrier) {
        real_append_barrier = table->pfnAppendBarrier;
        table->pfnAppendBarrier = shim_append_barrier;
    }
    return r;
}

// ---- the other 45 mandatory getters: forward unchanged --------------------------------------------

IC_FORWARD_GETTER(zeGetGlobalProcAddrTable, ze_global_dditable_t)
IC_FORWARD_GETTER(zeGetDriverProcAddrTable, ze_driver_dditable_t)
IC_FORWARD_GETTER(zeGetDeviceProcAddrTable, ze_device_dditable_t)
IC_FORWARD_GETTER(zeGetContextProcAddrTable, ze_context_dditable_t)
IC_FORWARD_GETTER(zeGetCommandQueueProcAddrTable, ze_command_queue_dditable_t)
IC_FORWARD_GETTER(zeGetEventProcAddrTable, ze_event_dditable_t)
IC_FORWARD_GETTER(zeGetEventPoolProcAddrTable, ze_event_pool_dditable_t)
IC_FORWARD_GETTER(zeGetFenceProcAddrTable, ze_fence_dditable_t)
IC_FORWARD_GETTER(zeGetImageProcAddrTable, ze_image_dditable_t)
IC_FORWARD_GETTER(zeGetKernelProcAddrTable, ze_kernel_dditable_t)
IC_FORWARD_GETTER(zeGetMemProcAddrTable, ze_mem_dditable_t)
IC_FORWARD_GETTER(zeGetModuleProcAddrTable, ze_module_dditable_t)
IC_FORWARD_GETTER(zeGetModuleBuildLogProcAddrTable, ze_module_build_log_dditable_t)
IC_FORWARD_GETTER(zeGetPhysicalMemProcAddrTable, ze_physical_mem_dditable_t)
IC_FORWARD_GETTER(zeGetSamplerProcAddrTable, ze_sampler_dditable_t)
IC_FORWARD_GETTER(zeGetVirtualMemProcAddrTable, ze_virtual_mem_dditable_t)

IC_FORWARD_GETTER(zetGetDeviceProcAddrTable, zet_device_dditable_t)
IC_FORWARD_GETTER(zetGetContextProcAddrTable, zet_context_dditable_t)
IC_FORWARD_GETTER(zetGetCommandListProcAddrTable, zet_command_list_dditable_t)
IC_FORWARD_GETTER(zetGetKernelProcAddrTable, zet_kernel_dditable_t)
IC_FORWARD_GETTER(zetGetModuleProcAddrTable, zet_module_dditable_t)
IC_FORWARD_GETTER(zetGetDebugProcAddrTable, zet_debug_dditable_t)
IC_FORWARD_GETTER(zetGetMetricProcAddrTable, zet_metric_dditable_t)
IC_FORWARD_GETTER(zetGetMetricGroupProcAddrTable, zet_metric_group_dditable_t)
IC_FORWARD_GETTER(zetGetMetricQueryProcAddrTable, zet_metric_query_dditable_t)
IC_FORWARD_GETTER(zetGetMetricQueryPoolProcAddrTable, zet_metric_query_pool_dditable_t)
IC_FORWARD_GETTER(zetGetMetricStreamerProcAddrTable, zet_metric_streamer_dditable_t)
IC_FORWARD_GETTER(zetGetTracerExpProcAddrTable, zet_tracer_exp_dditable_t)

IC_FORWARD_GETTER(zesGetDeviceProcAddrTable, zes_device_dditable_t)
IC_FORWARD_GETTER(zesGetDriverProcAddrTable, zes_driver_dditable_t)
IC_FORWARD_GETTER(zesGetDiagnosticsProcAddrTable, zes_diagnostics_dditable_t)
IC_FORWARD_GETTER(zesGetEngineProcAddrTable, zes_engine_dditable_t)
IC_FORWARD_GETTER(zesGetFabricPortProcAddrTable, zes_fabric_port_dditable_t)
IC_FORWARD_GETTER(zesGetFanProcAddrTable, zes_fan_dditable_t)
IC_FORWARD_GETTER(zesGetFirmwareProcAddrTable, zes_firmware_dditable_t)
IC_FORWARD_GETTER(zesGetFrequencyProcAddrTable, zes_frequency_dditable_t)
IC_FORWARD_GETTER(zesGetLedProcAddrTable, zes_led_dditable_t)
IC_FORWARD_GETTER(zesGetMemoryProcAddrTable, zes_memory_dditable_t)
IC_FORWARD_GETTER(zesGetPerformanceFactorProcAddrTable, zes_performance_factor_dditable_t)
IC_FORWARD_GETTER(zesGetPowerProcAddrTable, zes_power_dditable_t)
IC_FORWARD_GETTER(zesGetPsuProcAddrTable, zes_psu_dditable_t)
IC_FORWARD_GETTER(zesGetRasProcAddrTable, zes_ras_dditable_t)
IC_FORWARD_GETTER(zesGetSchedulerProcAddrTable, zes_scheduler_dditable_t)
IC_FORWARD_GETTER(zesGetStandbyProcAddrTable, zes_standby_dditable_t)
IC_FORWARD_GETTER(zesGetTemperatureProcAddrTable, zes_temperature_dditable_t)
