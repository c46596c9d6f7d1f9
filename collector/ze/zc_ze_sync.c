/* SPDX-License-Identifier: MIT */
/* Hooks of synchronisation and read-back: the calls where the host learns that device work
 * completed (every stream is collected there), and the application reading its own events'
 * timestamps, which get the times of the operation they belong to rather than our barrier's. */
#include "zc_ze_internal.h"

#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- synchronisation */
/* Completion became known somewhere: collect every stream (a sync on one queue also completes
 * work it waited for on others). */
static void sync_point(ze_result_t r, struct zc_ze_call *c) {
    if (r != ZE_RESULT_SUCCESS) return;
    if (zc_on(ZC_F_DEVICE_TIMING)) zc_ze_drain_all(false, 0);
    if (c->t) zc_loc_flush_own_if_half(); /* (a closed call has no thread location) */
}

void zc_ze_post_zeCommandQueueSynchronize(ze_command_queue_synchronize_params_t *p, ze_result_t r, struct zc_ze_call *c) { sync_point(r, c); }
void zc_ze_post_zeEventHostSynchronize(ze_event_host_synchronize_params_t *p, ze_result_t r, struct zc_ze_call *c) { sync_point(r, c); }
void zc_ze_post_zeEventQueryStatus(ze_event_query_status_params_t *p, ze_result_t r, struct zc_ze_call *c) { sync_point(r, c); }
void zc_ze_post_zeFenceHostSynchronize(ze_fence_host_synchronize_params_t *p, ze_result_t r, struct zc_ze_call *c) { sync_point(r, c); }
void zc_ze_post_zeFenceQueryStatus(ze_fence_query_status_params_t *p, ze_result_t r, struct zc_ze_call *c) { sync_point(r, c); }
/* spec 1.6 and 1.14: SYCL's queue.wait() on an immediate list, and a whole device */
void zc_ze_post_zeCommandListHostSynchronize(zc_zeCommandListHostSynchronize_params_t *p, ze_result_t r,
                                             struct zc_ze_call *c) {
    sync_point(r, c);
}
void zc_ze_post_zeDeviceSynchronize(zc_zeDeviceSynchronize_params_t *p, ze_result_t r, struct zc_ze_call *c) {
    sync_point(r, c);
}

/* ---------------------------------------------------------------- read-back */
/* The app's timestamp event was signalled by our barrier: give it its operation's times. */
void zc_ze_post_zeEventQueryKernelTimestamp(ze_event_query_kernel_timestamp_params_t *p, ze_result_t r,
                                            struct zc_ze_call *c) {
    if (r != ZE_RESULT_SUCCESS || !*p->pdstptr) return;
    struct zc_stream *s = zc_ze_uevent_pending(*p->phEvent);
    if (s) zc_ze_stream_drain(s); /* its op is complete: the app saw its event signalled */
    zc_ze_uevent_read(*p->phEvent, *p->pdstptr);
}

/* The same for the queries after spec 1.4: every packet (engine, sub-device) the driver reports
 * gets the operation's times; the host-domain buffer of ...Ext is the driver's (ours are device
 * ticks). ze_event_query_kernel_timestamps_results_ext_properties_t: stype, pNext, the kernel
 * buffer, the synchronised buffer. */
struct zc_kts_ext_results {
    ze_structure_type_t stype;
    void *pNext;
    ze_kernel_timestamp_result_t *kernel;
    void *synchronized;
};

static void patch_packets(ze_event_handle_t ev, uint32_t n, ze_kernel_timestamp_result_t *dst) {
    if (!n || !dst) return;
    struct zc_stream *s = zc_ze_uevent_pending(ev);
    if (s) zc_ze_stream_drain(s);
    ze_kernel_timestamp_result_t t;
    if (!zc_ze_uevent_read(ev, &t)) return;
    for (uint32_t i = 0; i < n; i++) dst[i] = t;
}

void zc_ze_post_zeEventQueryKernelTimestampsExt(zc_zeEventQueryKernelTimestampsExt_params_t *p, ze_result_t r,
                                                struct zc_ze_call *c) {
    if (r != ZE_RESULT_SUCCESS || !*p->ppCount || !*p->ppResults) return; /* (a count query has no results) */
    struct zc_kts_ext_results *res = (struct zc_kts_ext_results *)*p->ppResults;
    patch_packets(*p->phEvent, **p->ppCount, res->kernel);
}

void zc_ze_post_zeEventQueryTimestampsExp(ze_event_query_timestamps_exp_params_t *p, ze_result_t r,
                                          struct zc_ze_call *c) {
    if (r != ZE_RESULT_SUCCESS || !*p->ppCount) return;
    patch_packets(*p->phEvent, **p->ppCount, *p->ppTimestamps);
}

/* The app asks the device for its own events' timestamps: point the query at the events of ours
 * that hold its operations' times (ours are kept while its event refers to them). */
void zc_ze_pre_zeCommandListAppendQueryKernelTimestamps(ze_command_list_append_query_kernel_timestamps_params_t *p,
                                                        struct zc_ze_call *c) {
    uint32_t n = *p->pnumEvents;
    ze_event_handle_t *in = *p->pphEvents;
    if (!n || !in) return;
    ze_event_handle_t *out = NULL;
    for (uint32_t i = 0; i < n; i++) {
        ze_event_handle_t inj = in[i] ? zc_ze_uevent_inj(in[i]) : NULL;
        if (!inj) continue;
        if (!out) {
            if (!(out = malloc(n * sizeof(*out)))) return;
            memcpy(out, in, n * sizeof(*out));
        }
        out[i] = inj;
    }
    if (!out) return;
    c->ptr = out;
    *p->pphEvents = out;
}
void zc_ze_post_zeCommandListAppendQueryKernelTimestamps(ze_command_list_append_query_kernel_timestamps_params_t *p,
                                                         ze_result_t r, struct zc_ze_call *c) {
    free(c->ptr);
    c->ptr = NULL;
}
