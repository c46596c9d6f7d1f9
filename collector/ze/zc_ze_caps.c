/* SPDX-License-Identifier: MIT */
/* What the real driver offers: which of the entries the collector calls exist, and so how device
 * timing works (a driver may leave any entry NULL; the collector never calls one that is). */
#include "zc_ze_internal.h"

#include <stdio.h>
#include <string.h>

struct zc_ze_caps zc_ze_caps;
static char caps_missing[512]; /* the entries behind a reduced capability, by API name */

static void missing(bool *cap, const void *fn, const char *api) {
    if (fn) return;
    *cap = false;
    size_t n = strlen(caps_missing);
    if (!strstr(caps_missing, api) && n + strlen(api) + 3 < sizeof(caps_missing))
        snprintf(caps_missing + n, sizeof(caps_missing) - n, "%s%s", n ? ", " : "", api);
}
#define NEED(cap, tbl, mem, api) missing(&c.cap, (const void *)zc_ze_real.tbl.mem, api)

/* Each capability and the entries it needs (every entry the collector calls is in
 * tests/collector/null_matrix.py's matrix; entries not named here are only used where present:
 * destroy/free calls, kernel names, host synchronisation, driver and device enumeration). */
void zc_ze_caps_update(void) {
    struct zc_ze_caps c = {.timing = true, .host_read = true, .barrier = true, .signal = true, .helpers = true,
                           .harvest = true, .groups = true};
    caps_missing[0] = 0;
    NEED(timing, ze_event_pool, pfnCreate, "zeEventPoolCreate");
    NEED(timing, ze_event, pfnCreate, "zeEventCreate");
    NEED(timing, ze_event, pfnHostReset, "zeEventHostReset");
    NEED(timing, ze_event, pfnQueryStatus, "zeEventQueryStatus");
    NEED(timing, ze_device, pfnGetProperties, "zeDeviceGetProperties");
    if (c.timing) {
        NEED(host_read, ze_event, pfnQueryKernelTimestamp, "zeEventQueryKernelTimestamp");
        /* re-signalling an app event: a barrier waiting on our event; a signal appended after the
         * operation follows it only where commands run in order (in-order lists, copy engines) */
        NEED(barrier, ze_command_list, pfnAppendBarrier, "zeCommandListAppendBarrier");
        NEED(signal, ze_command_list, pfnAppendSignalEvent, "zeCommandListAppendSignalEvent");
        NEED(helpers, ze_command_list, pfnCreate, "zeCommandListCreate");
        NEED(helpers, ze_command_list, pfnClose, "zeCommandListClose");
        NEED(helpers, ze_command_list, pfnAppendWaitOnEvents, "zeCommandListAppendWaitOnEvents");
        NEED(helpers, ze_command_list, pfnAppendEventReset, "zeCommandListAppendEventReset");
        NEED(helpers, ze_command_list, pfnAppendSignalEvent, "zeCommandListAppendSignalEvent");
        NEED(helpers, ze_event, pfnHostSignal, "zeEventHostSignal");
        c.harvest = c.helpers;
        NEED(harvest, ze_command_list, pfnAppendQueryKernelTimestamps, "zeCommandListAppendQueryKernelTimestamps");
        NEED(harvest, ze_mem, pfnAllocHost, "zeMemAllocHost");
        /* without them a copy-only engine is not known, and a device-side timestamp query on one
         * aborts the real driver: every regular list is read back from the host */
        NEED(groups, ze_device, pfnGetCommandQueueGroupProperties, "zeDeviceGetCommandQueueGroupProperties");
        if (!c.groups) c.harvest = false;
        /* a harvest list of copy executions runs on a queue of ours, synchronised before it goes */
        c.copy_harvest = c.harvest;
        NEED(copy_harvest, ze_command_queue, pfnCreate, "zeCommandQueueCreate");
        NEED(copy_harvest, ze_command_queue, pfnExecuteCommandLists, "zeCommandQueueExecuteCommandLists");
        NEED(copy_harvest, ze_command_queue, pfnSynchronize, "zeCommandQueueSynchronize");
        NEED(copy_harvest, ze_command_queue, pfnDestroy, "zeCommandQueueDestroy");
    } else {
        c.host_read = c.barrier = c.signal = c.helpers = c.harvest = c.copy_harvest = false;
    }
    if (!zc_ze_real.ze_device.pfnGetGlobalTimestamps) {
        size_t n = strlen(caps_missing);
        snprintf(caps_missing + n, sizeof(caps_missing) - n, "%szeDeviceGetGlobalTimestamps", n ? ", " : "");
    }
    zc_ze_caps = c;
}

void zc_ze_caps_announce(void) {
    static atomic_bool said;
    if (!caps_missing[0] || atomic_exchange(&said, true)) return;
    const struct zc_ze_caps *c = &zc_ze_caps;
    char what[640];
    size_t n = 0;
#define SAY(...) n += (size_t)snprintf(what + n, n < sizeof(what) ? sizeof(what) - n : 0, __VA_ARGS__)
    if (!c->timing) {
        SAY("GPU operations are not timed (Level Zero calls are still recorded)");
    } else {
        if (!c->host_read) SAY("operations on immediate command lists are not timed; ");
        if (c->helpers && !c->harvest)
            SAY("regular command lists are read back from the host and a resubmission waits for the previous execution; ");
        if (c->harvest && !c->copy_harvest)
            SAY("executions of copy-only command lists are read back from the host (a resubmission waits for the "
                "previous one); ");
        if (c->host_read && !c->helpers)
            SAY("regular command lists are read back from the host between executions (a resubmission waits) and "
                "their operations that signal an application event are not timed; ");
        if (!c->host_read && !c->harvest) SAY("operations on regular command lists are not timed; ");
        if (!c->barrier && !c->signal) SAY("operations that signal an application event are not timed; ");
        else if (!c->barrier)
            SAY("on out-of-order lists, operations that signal an application event are not timed; ");
        if (!zc_ze_real.ze_device.pfnGetGlobalTimestamps)
            SAY("device times are placed from host observations (their error bound is printed at exit); ");
        if (n >= 2 && n < sizeof(what)) what[n -= 2] = 0; /* the last "; " */
    }
#undef SAY
    int level = zc_job_leader() ? ZC_LOG_WARN : ZC_LOG_INFO;
    zc_log(level, __func__, __LINE__, "the Level Zero driver lacks %s: %s (a driver feature, not an error)", caps_missing,
           what);
}
