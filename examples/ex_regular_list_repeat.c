/* SPDX-License-Identifier: MIT */
/* One regular command list, recorded and closed once, executed many times on a command queue.
 *
 * The list (commands run out of order unless a barrier separates them):
 *   0  scale_f32(acc, -1)          acc lives in shared memory and flips sign every execution
 *   1  copy  in (host) -> x (device)
 *   2  barrier
 *   3  scale_f32(x, 3)
 *   4  barrier
 *   5  copy  x (device) -> out (host)
 * Before each execution the host writes new input values; the list reads them at execution
 * time. Each execution is submitted with a fence, which the host waits for, checks and resets.
 * After execution k (1-based): out = 3 * in_k and acc = (-1)^k * acc_0, which proves that every
 * execution ran exactly once and in order; after the last one acc = (-1)^N * acc_0.
 *
 * usage: ex_regular_list_repeat [executions] [elements]   (defaults 50, 16384) */
#include "ex_common.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    ex_env_t env;
    ex_init(&env, argv[0]);
    const uint32_t execs = (uint32_t)ex_arg_u64(argc, argv, 1, "executions", 50, 1, 1000000);
    const uint32_t n = (uint32_t)ex_arg_u64(argc, argv, 2, "elements", 16384, 1, 1u << 26);
    const size_t bytes = (size_t)n * sizeof(float);
    ze_device_handle_t dev = env.devices[0];
    ex_describe_device(&env, 0);

    const uint32_t ordinal = ex_compute_group(dev, NULL);
    ze_command_queue_desc_t qdesc = {
        .stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC,
        .ordinal = ordinal,
        .index = 0,
        .mode = ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS,
        .priority = ZE_COMMAND_QUEUE_PRIORITY_NORMAL,
    };
    ze_command_queue_handle_t queue = NULL;
    EX_CHECK(zeCommandQueueCreate(env.context, dev, &qdesc, &queue));
    ze_fence_desc_t fdesc = {.stype = ZE_STRUCTURE_TYPE_FENCE_DESC};
    ze_fence_handle_t fence = NULL;
    EX_CHECK(zeFenceCreate(queue, &fdesc, &fence));

    ze_module_handle_t module = ex_module_create(&env, dev);
    ze_kernel_handle_t scale = ex_kernel_create(module, "scale_f32");
    const ze_group_count_t groups = ex_group_count_1d(scale, n);

    float *in_h = ex_alloc_host(&env, bytes);
    float *out_h = ex_alloc_host(&env, bytes);
    float *x_d = ex_alloc_device(&env, dev, bytes);
    float *acc_s = ex_alloc_shared(&env, dev, bytes);
    float *acc0 = malloc(bytes);
    float *want = malloc(bytes);
    EX_REQUIRE(acc0 != NULL && want != NULL, "out of host memory");
    for (uint32_t i = 0; i < n; ++i) {
        acc0[i] = (float)(i % 977u) + 0.5f;
        acc_s[i] = acc0[i];
    }

    /* Record the list once. */
    ze_command_list_desc_t ldesc = {
        .stype = ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC, .commandQueueGroupOrdinal = ordinal};
    ze_command_list_handle_t list = NULL;
    EX_CHECK(zeCommandListCreate(env.context, dev, &ldesc, &list));
    const float minus_one = -1.0f, three = 3.0f;
    EX_ARG(scale, 0, acc_s);
    EX_ARG(scale, 1, minus_one);
    EX_CHECK(zeCommandListAppendLaunchKernel(list, scale, &groups, NULL, 0, NULL));
    EX_CHECK(zeCommandListAppendMemoryCopy(list, x_d, in_h, bytes, NULL, 0, NULL));
    EX_CHECK(zeCommandListAppendBarrier(list, NULL, 0, NULL));
    EX_ARG(scale, 0, x_d);
    EX_ARG(scale, 1, three);
    EX_CHECK(zeCommandListAppendLaunchKernel(list, scale, &groups, NULL, 0, NULL));
    EX_CHECK(zeCommandListAppendBarrier(list, NULL, 0, NULL));
    EX_CHECK(zeCommandListAppendMemoryCopy(list, out_h, x_d, bytes, NULL, 0, NULL));
    EX_CHECK(zeCommandListClose(list));
    const unsigned commands_per_exec = 6;

    for (uint32_t k = 1; k <= execs; ++k) {
        for (uint32_t i = 0; i < n; ++i) {
            in_h[i] = (float)((i + 7u * k) % 2048u);
            out_h[i] = -1.0f;
        }
        EX_CHECK(zeCommandQueueExecuteCommandLists(queue, 1, &list, fence));
        EX_CHECK(zeFenceHostSynchronize(fence, UINT64_MAX));
        EX_CHECK(zeFenceQueryStatus(fence));

        char what[96];
        for (uint32_t i = 0; i < n; ++i)
            want[i] = 3.0f * in_h[i];
        snprintf(what, sizeof what, "out = 3 * in after execution %u", k);
        ex_verify_f32(what, out_h, want, n);
        const float sign = (k % 2u) ? -1.0f : 1.0f;
        for (uint32_t i = 0; i < n; ++i)
            want[i] = sign * acc0[i];
        snprintf(what, sizeof what, "acc = (-1)^%u * acc0 after execution %u", k, k);
        ex_verify_f32(what, acc_s, want, n);

        EX_CHECK(zeFenceReset(fence));
        ze_result_t r = zeFenceQueryStatus(fence);
        EX_REQUIRE(r == ZE_RESULT_NOT_READY,
                   "zeFenceQueryStatus after zeFenceReset returned 0x%08x (%s), expected "
                   "ZE_RESULT_NOT_READY",
                   (unsigned)r, ex_result_name(r));
    }
    EX_CHECK(zeCommandQueueSynchronize(queue, UINT64_MAX));

    /* Final state: acc scaled by (-1)^N. */
    for (uint32_t i = 0; i < n; ++i)
        want[i] = (execs % 2u ? -1.0f : 1.0f) * acc0[i];
    ex_verify_f32("acc after all executions", acc_s, want, n);

    EX_CHECK(zeCommandListDestroy(list));
    free(want);
    free(acc0);
    ex_free(&env, acc_s);
    ex_free(&env, x_d);
    ex_free(&env, out_h);
    ex_free(&env, in_h);
    EX_CHECK(zeKernelDestroy(scale));
    EX_CHECK(zeModuleDestroy(module));
    EX_CHECK(zeFenceDestroy(fence));
    EX_CHECK(zeCommandQueueDestroy(queue));
    ex_fini(&env);

    ex_info("%u executions of one regular list (%u commands: 2 copies, 2 scale_f32, 2 barriers; "
            "%u floats) on one queue with a fence: %u commands executed",
            execs, commands_per_exec, n, execs * commands_per_exec);
    ex_info("PASS: out = 3 * in after every execution, acc = (-1)^%u * acc0 at the end", execs);
    return 0;
}
