/* SPDX-License-Identifier: MIT */
/* Vector addition on one asynchronous immediate command list.
 *
 * Two paths compute c = a + b from the same shared-memory inputs:
 *   device path: copy a, b (shared) to device buffers -> vector_add on the device buffers ->
 *                copy c back to a host allocation; ordered by events;
 *   shared path: vector_add directly on the shared buffers, independent of the device path.
 * Immediate lists are out-of-order unless told otherwise, so every dependency is an event.
 *
 * usage: ex_vector_add_immediate [elements]   (default 65536) */
#include "ex_common.h"

#include <stdint.h>
#include <stdlib.h>

enum { EV_COPY_A, EV_COPY_B, EV_ADD_DEV, EV_COPY_C, EV_ADD_SHARED, EV_COUNT };

int main(int argc, char **argv)
{
    ex_env_t env;
    ex_init(&env, argv[0]);
    const uint32_t n = (uint32_t)ex_arg_u64(argc, argv, 1, "elements", 65536, 1, 1u << 26);
    const size_t bytes = (size_t)n * sizeof(float);
    ze_device_handle_t dev = env.devices[0];
    ex_describe_device(&env, 0);

    const uint32_t ordinal = ex_compute_group(dev, NULL);
    ze_command_list_handle_t list =
        ex_immediate_list(&env, dev, ordinal, 0, ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS);
    ze_module_handle_t module = ex_module_create(&env, dev);
    ze_kernel_handle_t add = ex_kernel_create(module, "vector_add");
    const ze_group_count_t groups = ex_group_count_1d(add, n);

    float *a_s = ex_alloc_shared(&env, dev, bytes);
    float *b_s = ex_alloc_shared(&env, dev, bytes);
    float *c_s = ex_alloc_shared(&env, dev, bytes);
    float *a_d = ex_alloc_device(&env, dev, bytes);
    float *b_d = ex_alloc_device(&env, dev, bytes);
    float *c_d = ex_alloc_device(&env, dev, bytes);
    float *c_h = ex_alloc_host(&env, bytes);
    float *want = malloc(bytes);
    EX_REQUIRE(want != NULL, "out of host memory");
    ex_expect_mem_type(&env, a_s, ZE_MEMORY_TYPE_SHARED, "a (shared)");
    ex_expect_mem_type(&env, a_d, ZE_MEMORY_TYPE_DEVICE, "a (device)");
    ex_expect_mem_type(&env, c_h, ZE_MEMORY_TYPE_HOST, "c (host)");

    /* Values with few significant bits, so every sum is exact in float. */
    for (uint32_t i = 0; i < n; ++i) {
        a_s[i] = (float)(i % 4096u);
        b_s[i] = 0.25f * (float)(i % 1000u) - 100.0f;
        want[i] = a_s[i] + b_s[i];
        c_s[i] = -1.0f;
        c_h[i] = -1.0f;
    }

    ze_event_pool_handle_t pool = ex_event_pool(&env, ZE_EVENT_POOL_FLAG_HOST_VISIBLE, EV_COUNT);
    ze_event_handle_t ev[EV_COUNT];
    for (uint32_t i = 0; i < EV_COUNT; ++i)
        ev[i] = ex_event(pool, i);

    /* Device path. */
    EX_CHECK(zeCommandListAppendMemoryCopy(list, a_d, a_s, bytes, ev[EV_COPY_A], 0, NULL));
    EX_CHECK(zeCommandListAppendMemoryCopy(list, b_d, b_s, bytes, ev[EV_COPY_B], 0, NULL));
    EX_ARG(add, 0, a_d);
    EX_ARG(add, 1, b_d);
    EX_ARG(add, 2, c_d);
    ze_event_handle_t inputs[2] = {ev[EV_COPY_A], ev[EV_COPY_B]};
    EX_CHECK(zeCommandListAppendLaunchKernel(list, add, &groups, ev[EV_ADD_DEV], 2, inputs));
    EX_CHECK(zeCommandListAppendMemoryCopy(list, c_h, c_d, bytes, ev[EV_COPY_C], 1,
                                           &ev[EV_ADD_DEV]));

    /* Shared path: arguments are captured at append time, so the kernel can be reused. */
    EX_ARG(add, 0, a_s);
    EX_ARG(add, 1, b_s);
    EX_ARG(add, 2, c_s);
    EX_CHECK(zeCommandListAppendLaunchKernel(list, add, &groups, ev[EV_ADD_SHARED], 0, NULL));

    EX_CHECK(zeEventHostSynchronize(ev[EV_COPY_C], UINT64_MAX));
    EX_CHECK(zeEventHostSynchronize(ev[EV_ADD_SHARED], UINT64_MAX));
    for (uint32_t i = 0; i < EV_COUNT; ++i)
        EX_CHECK(zeEventQueryStatus(ev[i]));

    ex_verify_f32("c (device path, copied to host memory)", c_h, want, n);
    ex_verify_f32("c (shared path)", c_s, want, n);

    for (uint32_t i = 0; i < EV_COUNT; ++i)
        EX_CHECK(zeEventDestroy(ev[i]));
    EX_CHECK(zeEventPoolDestroy(pool));
    free(want);
    ex_free(&env, c_h);
    ex_free(&env, c_d);
    ex_free(&env, b_d);
    ex_free(&env, a_d);
    ex_free(&env, c_s);
    ex_free(&env, b_s);
    ex_free(&env, a_s);
    EX_CHECK(zeKernelDestroy(add));
    EX_CHECK(zeModuleDestroy(module));
    EX_CHECK(zeCommandListDestroy(list));
    ex_fini(&env);

    ex_info("%u floats: 3 copies + 2 vector_add launches (%u groups each) on one async immediate "
            "list, each signalling one of %d events (3 used as dependencies)",
            n, groups.groupCountX, EV_COUNT);
    ex_info("PASS: c = a + b on the device path and on the shared path (%u values checked)",
            2 * n);
    return 0;
}
