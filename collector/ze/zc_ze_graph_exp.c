/* SPDX-License-Identifier: MIT */
/* The experimental graph entries that drivers offered before spec 1.17 made graphs core
 * (ZE_experimental_record_replay_graph: zeCommandListBeginGraphCaptureExp and the rest), reached
 * only through zeDriverGetExtensionFunctionAddress: the address the driver gives is swapped for a
 * wrapper of ours that runs the hooks of the spec-1.17 entry it matches (zc_ze_graph.c), recorded
 * under that entry's name. Their parameters are the spec's own but for two orders: EndGraphCapture
 * and InstantiateGraph take the pNext last. zeGraphCreateExp and the queries need no hook: the
 * address is left as the driver gave it. Layouts written from the driver's published extension. */
#include "zc_ze_call.h"

#include <string.h>

typedef ze_result_t(ZE_APICALL *begin_fn)(ze_command_list_handle_t, void *);
typedef ze_result_t(ZE_APICALL *begin_into_fn)(ze_command_list_handle_t, ze_graph_handle_t, void *);
typedef ze_result_t(ZE_APICALL *end_fn)(ze_command_list_handle_t, ze_graph_handle_t *, void *);
typedef ze_result_t(ZE_APICALL *inst_fn)(ze_graph_handle_t, ze_executable_graph_handle_t *, void *);
typedef ze_result_t(ZE_APICALL *append_fn)(ze_command_list_handle_t, ze_executable_graph_handle_t, void *,
                                           ze_event_handle_t, uint32_t, ze_event_handle_t *);
typedef ze_result_t(ZE_APICALL *gdestroy_fn)(ze_graph_handle_t);
typedef ze_result_t(ZE_APICALL *xdestroy_fn)(ze_executable_graph_handle_t);

/* the driver's addresses (one driver is traced: written once, the same value each time) */
static _Atomic(void *) real_begin, real_begin_into, real_end, real_inst, real_append, real_gdestroy, real_xdestroy;
#define REAL(slot, type) ((type)atomic_load_explicit(&slot, memory_order_relaxed))

/* begin, hooks, the driver, hooks, end: a generated wrapper's steps, for the spec-1.17 entry API */
#define EXP_CALL(API, call, pre, post)                                                                                 \
    struct zc_ze_call c;                                                                                               \
    if (!zc_ze_call_begin(&c, ZC_ZE_##API, zc_rec_word())) return call;                                                \
    pre;                                                                                                               \
    ze_result_t r = call;                                                                                              \
    post;                                                                                                              \
    zc_ze_call_end(&c, r, ZC_ZE_##API);                                                                                \
    return r

static ze_result_t ZE_APICALL zcx_begin(ze_command_list_handle_t l, void *pNext) {
    const void *n = pNext;
    zc_zeCommandListBeginGraphCaptureExt_params_t p = {&l, &n};
    EXP_CALL(zeCommandListBeginGraphCaptureExt, REAL(real_begin, begin_fn)(l, pNext), (void)0,
             zc_ze_post_zeCommandListBeginGraphCaptureExt(&p, r, &c));
}

static ze_result_t ZE_APICALL zcx_begin_into(ze_command_list_handle_t l, ze_graph_handle_t g, void *pNext) {
    const void *n = pNext;
    zc_zeCommandListBeginCaptureIntoGraphExt_params_t p = {&l, &g, &n};
    EXP_CALL(zeCommandListBeginCaptureIntoGraphExt, REAL(real_begin_into, begin_into_fn)(l, g, pNext), (void)0,
             zc_ze_post_zeCommandListBeginCaptureIntoGraphExt(&p, r, &c));
}

static ze_result_t ZE_APICALL zcx_end(ze_command_list_handle_t l, ze_graph_handle_t *pg, void *pNext) {
    const void *n = pNext;
    zc_zeCommandListEndGraphCaptureExt_params_t p = {&l, &n, &pg};
    EXP_CALL(zeCommandListEndGraphCaptureExt, REAL(real_end, end_fn)(l, pg, pNext), (void)0,
             zc_ze_post_zeCommandListEndGraphCaptureExt(&p, r, &c));
}

static ze_result_t ZE_APICALL zcx_inst(ze_graph_handle_t g, ze_executable_graph_handle_t *px, void *pNext) {
    const void *n = pNext;
    zc_zeGraphInstantiateExt_params_t p = {&g, &n, &px};
    EXP_CALL(zeGraphInstantiateExt, REAL(real_inst, inst_fn)(g, px, pNext), (void)0,
             zc_ze_post_zeGraphInstantiateExt(&p, r, &c));
}

static ze_result_t ZE_APICALL zcx_append(ze_command_list_handle_t l, ze_executable_graph_handle_t x, void *pNext,
                                         ze_event_handle_t sig, uint32_t nw, ze_event_handle_t *w) {
    const void *n = pNext;
    zc_zeCommandListAppendGraphExt_params_t p = {&l, &x, &n, &sig, &nw, &w};
    EXP_CALL(zeCommandListAppendGraphExt, REAL(real_append, append_fn)(l, x, pNext, sig, nw, w),
             zc_ze_pre_zeCommandListAppendGraphExt(&p, &c), zc_ze_post_zeCommandListAppendGraphExt(&p, r, &c));
}

static ze_result_t ZE_APICALL zcx_gdestroy(ze_graph_handle_t g) {
    zc_zeGraphDestroyExt_params_t p = {&g};
    EXP_CALL(zeGraphDestroyExt, REAL(real_gdestroy, gdestroy_fn)(g), zc_ze_pre_zeGraphDestroyExt(&p, &c), (void)0);
}

static ze_result_t ZE_APICALL zcx_xdestroy(ze_executable_graph_handle_t x) {
    zc_zeExecutableGraphDestroyExt_params_t p = {&x};
    EXP_CALL(zeExecutableGraphDestroyExt, REAL(real_xdestroy, xdestroy_fn)(x), zc_ze_pre_zeExecutableGraphDestroyExt(&p, &c),
             (void)0);
}

static const struct {
    const char *name;
    _Atomic(void *) *real;
    void *ours;
} exp_entries[] = {
    {"zeCommandListBeginGraphCaptureExp", &real_begin, (void *)zcx_begin},
    {"zeCommandListBeginCaptureIntoGraphExp", &real_begin_into, (void *)zcx_begin_into},
    {"zeCommandListEndGraphCaptureExp", &real_end, (void *)zcx_end},
    {"zeCommandListInstantiateGraphExp", &real_inst, (void *)zcx_inst},
    {"zeCommandListAppendGraphExp", &real_append, (void *)zcx_append},
    {"zeGraphDestroyExp", &real_gdestroy, (void *)zcx_gdestroy},
    {"zeExecutableGraphDestroyExp", &real_xdestroy, (void *)zcx_xdestroy},
};

/* zeDriverGetExtensionFunctionAddress gave *fn for name: ours instead, where we follow it. */
bool zc_ze_graph_exp_address(const char *name, void **fn) {
    for (size_t i = 0; i < sizeof(exp_entries) / sizeof(exp_entries[0]); i++) {
        if (strcmp(name, exp_entries[i].name) != 0) continue;
        if (*fn == exp_entries[i].ours) return true; /* asked through us twice */
        atomic_store(exp_entries[i].real, *fn);
        *fn = exp_entries[i].ours;
        return true;
    }
    return false;
}
