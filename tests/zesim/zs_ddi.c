/* SPDX-License-Identifier: MIT */
/* The loader interface: the ze/zet/zes*GetProcAddrTable getters the loader dlsym()s (the only
 * symbols libzesim.so exports), each filling its table from the file that implements it, and
 * ZESIM_NULL_ENTRIES, which leaves chosen entries NULL as a driver that lacks them does. */
#include "zs_internal.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- ZESIM_NULL_ENTRIES */
/* ZESIM_NULL_ENTRIES="table.pfnName|zeApiName,...": entries the getters leave NULL, as a driver
 * that lacks them does. The member table comes from the installed headers (gen_ddi_members.py). */
static const struct zs_ddi_member {
    const char *table, *member, *api;
    size_t off;
    ze_api_version_t since; /* 0: in the installed headers; else the entry's spec version */
} ddi_members[] = {
#define ZS_DDI(table, member, api) {#table, #member, #api, offsetof(table##_dditable_t, member), 0},
/* entries after the headers: at their index of the newest layout, in a table that has them */
#define ZS_DDI_LATER(table, member, api, index, since) {#table, #member, #api, (index) * sizeof(void (*)(void)), since},
#include "zs_ddi_members.h"
#undef ZS_DDI
#undef ZS_DDI_LATER
};
#define ZS_NDDI (sizeof(ddi_members) / sizeof(ddi_members[0]))
static bool null_entry[ZS_NDDI];

void zs_parse_null_entries(void) {
    const char *v = getenv("ZESIM_NULL_ENTRIES");
    if (!v || !*v) return;
    char *copy = strdup(v);
    if (!copy) return;
    char *save = NULL;
    for (char *tok = strtok_r(copy, ", ", &save); tok; tok = strtok_r(NULL, ", ", &save)) {
        char *dot = strchr(tok, '.');
        bool found = false;
        for (size_t i = 0; i < ZS_NDDI; i++) {
            const struct zs_ddi_member *m = &ddi_members[i];
            bool match = dot ? (strncmp(tok, m->table, (size_t)(dot - tok)) == 0 && m->table[dot - tok] == 0 &&
                                strcmp(dot + 1, m->member) == 0)
                             : strcmp(tok, m->api) == 0;
            if (match) null_entry[i] = found = true;
        }
        if (!found) {
            /* a typo would silently test nothing: refuse to run */
            fprintf(stderr, "zesim: ZESIM_NULL_ENTRIES: no dispatch-table entry '%s' (want table.pfnName, e.g. "
                            "ze_command_list.pfnAppendBarrier, or an API name, e.g. zeCommandListAppendBarrier)\n", tok);
            exit(2);
        }
    }
    free(copy);
}

/* Called by every getter after it filled its table. Only for a table at least as large as ours
 * (the requested version is not older than our headers): an older caller's struct may end
 * before the member. */
static void null_entries(const char *table, void *t, ze_api_version_t v) {
    for (size_t i = 0; i < ZS_NDDI; i++) {
        if (!null_entry[i] || strcmp(ddi_members[i].table, table) != 0) continue;
        if (v < (ddi_members[i].since ? ddi_members[i].since : ZE_API_VERSION_CURRENT)) continue;
        memset((char *)t + ddi_members[i].off, 0, sizeof(void (*)(void)));
    }
}

/* ---------------------------------------------------------------- the getters */
#define ZS_EXPORT __attribute__((visibility("default")))

/* Any 1.x version is accepted; entries introduced after the requested version are left alone,
 * because the caller's table is only as large as that version's struct. */
#define ZS_VERSION_CHECK(v, tbl)                                                                   \
    do {                                                                                           \
        zs_global_init();                                                                          \
        if (!(tbl)) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;                                   \
        if (ZE_MAJOR_VERSION(v) != 1) return ZE_RESULT_ERROR_UNSUPPORTED_VERSION;                  \
    } while (0)

/* The getter fn of the table `table` (ze_fence: ze_fence_dditable_t, named "ze_fence" in
 * ZESIM_NULL_ENTRIES): fill runs on the caller's table t, v is the version the caller asked for. */
#define ZS_GETTER(fn, table, fill)                                                                 \
    ZS_EXPORT ze_result_t fn(ze_api_version_t v, table##_dditable_t *t) {                          \
        ZS_VERSION_CHECK(v, t);                                                                    \
        fill;                                                                                      \
        null_entries(#table, t, v);                                                                \
        return ZE_RESULT_SUCCESS;                                                                  \
    }

ZS_GETTER(zeGetGlobalProcAddrTable, ze_global, (zs_fill_global_table(t), zs_later_global(t, v)))
ZS_GETTER(zeGetDriverProcAddrTable, ze_driver, zs_fill_driver_table(t))
ZS_GETTER(zeGetDeviceProcAddrTable, ze_device, (zs_fill_device_table(t, ZE_MINOR_VERSION(v)), zs_later_device(t, v)))
ZS_GETTER(zeGetContextProcAddrTable, ze_context, zs_fill_context_table(t, ZE_MINOR_VERSION(v)))
ZS_GETTER(zeGetCommandQueueProcAddrTable, ze_command_queue, zs_fill_queue_table(t))
ZS_GETTER(zeGetCommandListProcAddrTable, ze_command_list, (zs_fill_list_table(t, ZE_MINOR_VERSION(v)), zs_later_list(t, v)))
ZS_GETTER(zeGetEventProcAddrTable, ze_event, (zs_fill_event_table(t), zs_cb_event_table(t, v)))
ZS_GETTER(zeGetEventPoolProcAddrTable, ze_event_pool, zs_fill_event_pool_table(t))
ZS_GETTER(zeGetFenceProcAddrTable, ze_fence, zs_fill_fence_table(t))
ZS_GETTER(zeGetImageProcAddrTable, ze_image, zs_fill_image_table(t))
ZS_GETTER(zeGetKernelProcAddrTable, ze_kernel, zs_fill_kernel_table(t))
ZS_GETTER(zeGetMemProcAddrTable, ze_mem, zs_fill_mem_table(t))
ZS_GETTER(zeGetModuleProcAddrTable, ze_module, zs_fill_module_table(t))
ZS_GETTER(zeGetModuleBuildLogProcAddrTable, ze_module_build_log, zs_fill_build_log_table(t))
ZS_GETTER(zeGetSamplerProcAddrTable, ze_sampler, zs_fill_sampler_table(t))

/* Tables zesim does not implement: the loader needs the getter to succeed; NULL entries make the
 * loader answer ZE_RESULT_ERROR_UNSUPPORTED_FEATURE. */
#define ZS_EMPTY_GETTER(fn, type)                                                                  \
    ZS_EXPORT ze_result_t fn(ze_api_version_t v, type *t) {                                       \
        ZS_VERSION_CHECK(v, t);                                                                    \
        return ZE_RESULT_SUCCESS;                                                                  \
    }

/* A table after zesim's headers (named `table` in ZESIM_NULL_ENTRIES): its entries, by the
 * requested version. */
#define ZS_LATER_GETTER(fn, table, fill)                                                           \
    ZS_EXPORT ze_result_t fn(ze_api_version_t v, void *t);                                         \
    ze_result_t fn(ze_api_version_t v, void *t) {                                                  \
        ZS_VERSION_CHECK(v, t);                                                                    \
        fill(t, v);                                                                                \
        null_entries(#table, t, v);                                                                \
        return ZE_RESULT_SUCCESS;                                                                  \
    }
ZS_LATER_GETTER(zeGetCommandListExpProcAddrTable, ze_command_list_exp, zs_later_list_exp) /* spec 1.8 */
ZS_LATER_GETTER(zeGetGraphProcAddrTable, ze_graph, zs_graph_fill_graph)                    /* spec 1.17 */
ZS_LATER_GETTER(zeGetExecutableGraphProcAddrTable, ze_executable_graph, zs_graph_fill_executable_graph)

ZS_EMPTY_GETTER(zeGetPhysicalMemProcAddrTable, ze_physical_mem_dditable_t)
ZS_EMPTY_GETTER(zeGetVirtualMemProcAddrTable, ze_virtual_mem_dditable_t)
ZS_EMPTY_GETTER(zetGetDeviceProcAddrTable, zet_device_dditable_t)
ZS_EMPTY_GETTER(zetGetContextProcAddrTable, zet_context_dditable_t)
ZS_EMPTY_GETTER(zetGetCommandListProcAddrTable, zet_command_list_dditable_t)
ZS_EMPTY_GETTER(zetGetKernelProcAddrTable, zet_kernel_dditable_t)
ZS_EMPTY_GETTER(zetGetModuleProcAddrTable, zet_module_dditable_t)
ZS_EMPTY_GETTER(zetGetDebugProcAddrTable, zet_debug_dditable_t)
ZS_EMPTY_GETTER(zetGetMetricProcAddrTable, zet_metric_dditable_t)
ZS_EMPTY_GETTER(zetGetMetricGroupProcAddrTable, zet_metric_group_dditable_t)
ZS_EMPTY_GETTER(zetGetMetricQueryProcAddrTable, zet_metric_query_dditable_t)
ZS_EMPTY_GETTER(zetGetMetricQueryPoolProcAddrTable, zet_metric_query_pool_dditable_t)
ZS_EMPTY_GETTER(zetGetMetricStreamerProcAddrTable, zet_metric_streamer_dditable_t)
ZS_EMPTY_GETTER(zetGetTracerExpProcAddrTable, zet_tracer_exp_dditable_t)
ZS_EMPTY_GETTER(zesGetDeviceProcAddrTable, zes_device_dditable_t)
ZS_EMPTY_GETTER(zesGetDriverProcAddrTable, zes_driver_dditable_t)
ZS_EMPTY_GETTER(zesGetDiagnosticsProcAddrTable, zes_diagnostics_dditable_t)
ZS_EMPTY_GETTER(zesGetEngineProcAddrTable, zes_engine_dditable_t)
ZS_EMPTY_GETTER(zesGetFabricPortProcAddrTable, zes_fabric_port_dditable_t)
ZS_EMPTY_GETTER(zesGetFanProcAddrTable, zes_fan_dditable_t)
ZS_EMPTY_GETTER(zesGetFirmwareProcAddrTable, zes_firmware_dditable_t)
ZS_EMPTY_GETTER(zesGetFrequencyProcAddrTable, zes_frequency_dditable_t)
ZS_EMPTY_GETTER(zesGetLedProcAddrTable, zes_led_dditable_t)
ZS_EMPTY_GETTER(zesGetMemoryProcAddrTable, zes_memory_dditable_t)
ZS_EMPTY_GETTER(zesGetPerformanceFactorProcAddrTable, zes_performance_factor_dditable_t)
ZS_EMPTY_GETTER(zesGetPowerProcAddrTable, zes_power_dditable_t)
ZS_EMPTY_GETTER(zesGetPsuProcAddrTable, zes_psu_dditable_t)
ZS_EMPTY_GETTER(zesGetRasProcAddrTable, zes_ras_dditable_t)
ZS_EMPTY_GETTER(zesGetSchedulerProcAddrTable, zes_scheduler_dditable_t)
ZS_EMPTY_GETTER(zesGetStandbyProcAddrTable, zes_standby_dditable_t)
ZS_EMPTY_GETTER(zesGetTemperatureProcAddrTable, zes_temperature_dditable_t)
