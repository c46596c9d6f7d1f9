/* SPDX-License-Identifier: MIT */
/* Hooks of the entries after spec 1.4 that submit work (declared in ze_ddi_later.spec): launches
 * with arguments or parameters (SYCL's launch path through Unified Runtime v2), copies and fills
 * with parameters, timed as their older forms through the Append path; and regular lists appended
 * to an immediate list (every SYCL graph under UR v2), timed as executions on the immediate list's
 * timeline through zc_ze_exec.c. Their synchronisations are zc_ze_sync.c's. */
#include "zc_ze_append.h"

/* ---------------------------------------------------------------- launches */
/* Group counts and sizes come by value and the arguments in an array (WithArguments), cooperative
 * and indirect forms in pNext (WithParameters): nothing to learn from them for the record, which is
 * a kernel named after its kernel as the classic launch's is, by the same code (zc_ze_timed_post
 * tests whether the launch was timed: no test of our own on the Append path). */
#define ZC_ZE_LATER_KERNEL_HOOKS(NAME)                                                                            \
    void zc_ze_pre_##NAME(zc_##NAME##_params_t *p, struct zc_ze_call *c) {                                        \
        zc_ze_launch_pre(c, *p->phCommandList, p->phSignalEvent, *p->phKernel);                                   \
    }                                                                                                             \
    void zc_ze_post_##NAME(zc_##NAME##_params_t *p, ze_result_t r, struct zc_ze_call *c) {                        \
        zc_ze_timed_post(c, *p->phCommandList, p->phSignalEvent, r, ZC_OP_KERNEL, zc_ze_kernel_region(*p->phKernel), \
                         0, ZC_DIR_NONE);                                                                         \
    }
ZC_ZE_LATER_KERNEL_HOOKS(zeCommandListAppendLaunchKernelWithArguments)
ZC_ZE_LATER_KERNEL_HOOKS(zeCommandListAppendLaunchKernelWithParameters)

/* ---------------------------------------------------------------- copies and fills */
void zc_ze_pre_zeCommandListAppendMemoryCopyWithParameters(zc_zeCommandListAppendMemoryCopyWithParameters_params_t *p,
                                                           struct zc_ze_call *c) {
    zc_ze_timed_pre(c, *p->phCommandList, p->phSignalEvent);
}
void zc_ze_post_zeCommandListAppendMemoryCopyWithParameters(zc_zeCommandListAppendMemoryCopyWithParameters_params_t *p,
                                                            ze_result_t r, struct zc_ze_call *c) {
    if (!c->inj) return;
    uint8_t xf;
    uint32_t region = zc_ze_copy_region(c->api, *p->psrcptr, *p->pdstptr, *p->psize, &xf);
    zc_ze_timed_post(c, *p->phCommandList, p->phSignalEvent, r, ZC_OP_COPY, region, *p->psize, xf);
}

void zc_ze_pre_zeCommandListAppendMemoryFillWithParameters(zc_zeCommandListAppendMemoryFillWithParameters_params_t *p,
                                                           struct zc_ze_call *c) {
    zc_ze_timed_pre(c, *p->phCommandList, p->phSignalEvent);
}
void zc_ze_post_zeCommandListAppendMemoryFillWithParameters(zc_zeCommandListAppendMemoryFillWithParameters_params_t *p,
                                                            ze_result_t r, struct zc_ze_call *c) {
    if (!c->inj) return;
    zc_ze_timed_post(c, *p->phCommandList, p->phSignalEvent, r, ZC_OP_FILL, zc_ze_fill_region(c->api, *p->pptr),
                     *p->psize, zc_ze_fill_xf(*p->psize));
}

/* ---------------------------------------------------------------- appended command lists */
/* The immediate list as the queue its appended executions run on: its stream, its synchronous
 * mode. Per thread (a call's prologue and epilogue run on one thread, and calls do not nest);
 * nothing keeps it past the call. A copy-only immediate list has none: copy executions need a
 * harvest queue of their own per application queue, so they go unrecorded there (their helper
 * lists still keep the application's events right, harvested by the host). */
static _Thread_local struct zc_queue imm_queue;

struct zc_queue *zc_ze_imm_queue(ze_command_list_handle_t h) {
    struct zc_list *l = zc_ze_list(h);
    if (!l || !l->immediate || !l->stream || l->copy_only) return NULL;
    imm_queue = (struct zc_queue){.dev = l->dev, .ctx = l->ctx, .ordinal = l->ordinal, .index = l->index,
                                  .sync = zc_ze_imm(l)->sync, .stream = l->stream};
    return &imm_queue;
}

void zc_ze_pre_zeCommandListImmediateAppendCommandListsExp(zc_zeCommandListImmediateAppendCommandListsExp_params_t *p,
                                                           struct zc_ze_call *c) {
    zc_ze_exec_pre(c, zc_ze_imm_queue(*p->phCommandListImmediate), p->pnumCommandLists, p->pphCommandLists);
}
void zc_ze_post_zeCommandListImmediateAppendCommandListsExp(zc_zeCommandListImmediateAppendCommandListsExp_params_t *p,
                                                            ze_result_t r, struct zc_ze_call *c) {
    zc_ze_exec_post(c, r);
}

void zc_ze_pre_zeCommandListImmediateAppendCommandListsWithParameters(
    zc_zeCommandListImmediateAppendCommandListsWithParameters_params_t *p, struct zc_ze_call *c) {
    zc_ze_exec_pre(c, zc_ze_imm_queue(*p->phCommandListImmediate), p->pnumCommandLists, p->pphCommandLists);
}
void zc_ze_post_zeCommandListImmediateAppendCommandListsWithParameters(
    zc_zeCommandListImmediateAppendCommandListsWithParameters_params_t *p, ze_result_t r, struct zc_ze_call *c) {
    zc_ze_exec_post(c, r);
}
