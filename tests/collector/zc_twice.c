/* SPDX-License-Identifier: MIT */
/* One regular list named twice in each zeCommandQueueExecuteCommandLists call (a kernel that
 * signals an application event, a barrier, a copy): the results and the app's event must be as
 * without the collector, whatever way it times executions. Exit 0 and a PASS line, else FAILED. */
#include "ex_common.h"

#include <stdlib.h>
#include <string.h>

#define N 4096
#define CALLS 3

int main(int argc, char **argv) {
    ex_env_t env;
    ex_init(&env, argv[0]);
    (void)argc;
    ze_device_handle_t dev = env.devices[0];
    uint32_t nq = 0, ord = ex_compute_group(dev, &nq);
    ze_module_handle_t mod = ex_module_create(&env, dev);
    ze_kernel_handle_t scale = ex_kernel_create(mod, "scale_f32");
    float *x = ex_alloc_shared(&env, dev, N * sizeof(float)), *y = ex_alloc_host(&env, N * sizeof(float));
    for (int i = 0; i < N; i++) x[i] = (float)i, y[i] = 0;
    float s = 2.0f;
    EX_CHECK(zeKernelSetArgumentValue(scale, 0, sizeof(x), &x));
    EX_CHECK(zeKernelSetArgumentValue(scale, 1, sizeof(s), &s));
    ze_group_count_t g = ex_group_count_1d(scale, N);
    ze_event_pool_handle_t pool = ex_event_pool(&env, ZE_EVENT_POOL_FLAG_HOST_VISIBLE, 1);
    ze_event_handle_t ev = ex_event(pool, 0);
    ze_command_list_desc_t ld = {ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC, NULL, ord, 0};
    ze_command_list_handle_t l;
    EX_CHECK(zeCommandListCreate(env.context, dev, &ld, &l));
    EX_CHECK(zeCommandListAppendLaunchKernel(l, scale, &g, ev, 0, NULL));
    EX_CHECK(zeCommandListAppendBarrier(l, NULL, 0, NULL));
    EX_CHECK(zeCommandListAppendMemoryCopy(l, y, x, N * sizeof(float), NULL, 0, NULL));
    EX_CHECK(zeCommandListClose(l));
    ze_command_queue_desc_t qd = {ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC, NULL, ord, 0, 0,
                                  ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS, ZE_COMMAND_QUEUE_PRIORITY_NORMAL};
    ze_command_queue_handle_t q;
    EX_CHECK(zeCommandQueueCreate(env.context, dev, &qd, &q));
    ze_command_list_handle_t twice[2] = {l, l};
    for (int c = 0; c < CALLS; c++) {
        EX_CHECK(zeCommandQueueExecuteCommandLists(q, 2, twice, NULL));
        EX_CHECK(zeCommandQueueSynchronize(q, UINT64_MAX));
        EX_CHECK(zeEventHostSynchronize(ev, UINT64_MAX));
        EX_CHECK(zeEventHostReset(ev));
    }
    float want[N];
    for (int i = 0; i < N; i++) want[i] = (float)i * 64.0f; /* (2 * 2)^3 */
    ex_verify_f32("x", x, want, N);
    ex_verify_f32("y", y, want, N);
    ex_info("PASS: one list named twice in each of %d executions: x and y = 64 * x0", CALLS);
    EX_CHECK(zeCommandQueueDestroy(q));
    EX_CHECK(zeCommandListDestroy(l));
    EX_CHECK(zeEventDestroy(ev));
    EX_CHECK(zeEventPoolDestroy(pool));
    EX_CHECK(zeKernelDestroy(scale));
    EX_CHECK(zeModuleDestroy(mod));
    ex_free(&env, x);
    ex_free(&env, y);
    ex_fini(&env);
    return 0;
}
