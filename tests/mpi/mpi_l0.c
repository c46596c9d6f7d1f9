/* SPDX-License-Identifier: MIT */
/* MPI + Level Zero: every rank computes its slice of c = a + b on a GPU.
 *
 * Level Zero is initialised before MPI_Init (as many applications do). Rank r uses device
 * r % <number of devices> and, on a synchronous immediate list of its compute group:
 *   - copies its slices of a and b host -> device, runs vector_add, copies c device -> host;
 *     checks c locally, then MPI_Allreduce of the slice sums and MPI_Gather of all slices to
 *     rank 0, which checks the whole vector;
 *   - one more H2D + D2H round trip of a 1 MiB byte pattern, checked;
 * and on a command queue of the same group a regular list (scale_f32(x, 2)) recorded once and
 * executed EXECS times, checked (x = 2^EXECS * x0).
 *
 * usage: mpirun -np N -x ZE_ENABLE_ALT_DRIVERS=/abs/libzesim.so mpi_l0 [elements per rank] */
#include "ex_common.h"
#include "mt_common.h"

#include <stdint.h>

#define EXECS 3
#define PATTERN_BYTES (1u << 20)

static float a_of(uint64_t g) { return (float)(g % 4096u); }
static float b_of(uint64_t g) { return 0.5f * (float)(g % 1000u); }

int main(int argc, char **argv)
{
    ex_env_t env;
    ex_init(&env, argv[0]); /* zeInit etc. before MPI_Init */
    MPI_Init(&argc, &argv);
    mt_init(argv[0], 1);
    const uint32_t n = (uint32_t)ex_arg_u64(argc, argv, 1, "elements per rank", 8192, 1, 1u << 22);
    const size_t bytes = (size_t)n * sizeof(float);
    const uint32_t dev_index = (uint32_t)mt_rank % env.num_devices;
    ze_device_handle_t dev = env.devices[dev_index];

    const uint32_t ordinal = ex_compute_group(dev, NULL);
    ze_command_list_handle_t list =
        ex_immediate_list(&env, dev, ordinal, 0, ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS);
    ze_module_handle_t module = ex_module_create(&env, dev);
    ze_kernel_handle_t add = ex_kernel_create(module, "vector_add");
    ze_kernel_handle_t scale = ex_kernel_create(module, "scale_f32");
    const ze_group_count_t add_groups = ex_group_count_1d(add, n);

    /* ---- vector_add on this rank's slice ---- */
    float *a_h = ex_alloc_host(&env, bytes), *b_h = ex_alloc_host(&env, bytes);
    float *c_h = ex_alloc_host(&env, bytes);
    float *a_d = ex_alloc_device(&env, dev, bytes), *b_d = ex_alloc_device(&env, dev, bytes);
    float *c_d = ex_alloc_device(&env, dev, bytes);
    float *want = malloc(bytes);
    MT_REQUIRE(want != NULL, "out of memory");
    double local_sum_want = 0.0;
    for (uint32_t i = 0; i < n; ++i) {
        const uint64_t g = (uint64_t)mt_rank * n + i;
        a_h[i] = a_of(g);
        b_h[i] = b_of(g);
        want[i] = a_h[i] + b_h[i];
        c_h[i] = -1.0f;
        local_sum_want += want[i];
    }
    EX_CHECK(zeCommandListAppendMemoryCopy(list, a_d, a_h, bytes, NULL, 0, NULL));
    EX_CHECK(zeCommandListAppendMemoryCopy(list, b_d, b_h, bytes, NULL, 0, NULL));
    EX_ARG(add, 0, a_d);
    EX_ARG(add, 1, b_d);
    EX_ARG(add, 2, c_d);
    EX_CHECK(zeCommandListAppendLaunchKernel(list, add, &add_groups, NULL, 0, NULL));
    EX_CHECK(zeCommandListAppendMemoryCopy(list, c_h, c_d, bytes, NULL, 0, NULL));
    ex_verify_f32("c = a + b (this rank's slice)", c_h, want, n);

    /* ---- combine over MPI ---- */
    double local_sum = 0.0, total = -1.0, total_want = 0.0;
    for (uint32_t i = 0; i < n; ++i)
        local_sum += c_h[i];
    MT_REQUIRE(local_sum == local_sum_want, "local sum %.1f, expected %.1f", local_sum, local_sum_want);
    MT_MPI(MPI_Allreduce(&local_sum, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
    for (uint64_t g = 0; g < (uint64_t)mt_size * n; ++g)
        total_want += (double)(a_of(g) + b_of(g));
    MT_REQUIRE(total == total_want, "Allreduce of slice sums: %.1f, expected %.1f", total, total_want);

    float *all = NULL;
    if (mt_rank == 0) {
        all = malloc(bytes * (size_t)mt_size);
        MT_REQUIRE(all != NULL, "out of memory");
    }
    MT_MPI(MPI_Gather(c_h, (int)n, MPI_FLOAT, all, (int)n, MPI_FLOAT, 0, MPI_COMM_WORLD));
    if (mt_rank == 0) {
        for (uint64_t g = 0; g < (uint64_t)mt_size * n; ++g)
            MT_REQUIRE(all[g] == a_of(g) + b_of(g), "gathered c[%llu] = %g, expected %g",
                       (unsigned long long)g, all[g], a_of(g) + b_of(g));
        free(all);
    }

    /* ---- H2D + D2H round trip of a byte pattern ---- */
    uint8_t *p_h = ex_alloc_host(&env, PATTERN_BYTES), *q_h = ex_alloc_host(&env, PATTERN_BYTES);
    uint8_t *p_d = ex_alloc_device(&env, dev, PATTERN_BYTES);
    for (size_t i = 0; i < PATTERN_BYTES; ++i) {
        p_h[i] = ex_pattern_byte(i, (unsigned)mt_rank + 1);
        q_h[i] = 0;
    }
    EX_CHECK(zeCommandListAppendMemoryCopy(list, p_d, p_h, PATTERN_BYTES, NULL, 0, NULL));
    EX_CHECK(zeCommandListAppendMemoryCopy(list, q_h, p_d, PATTERN_BYTES, NULL, 0, NULL));
    ex_verify_bytes("H2D + D2H round trip", q_h, p_h, PATTERN_BYTES);

    /* ---- a regular list executed EXECS times: x *= 2 ---- */
    ze_command_queue_desc_t qdesc = {
        .stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC,
        .ordinal = ordinal,
        .index = 0,
        .mode = ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS,
        .priority = ZE_COMMAND_QUEUE_PRIORITY_NORMAL,
    };
    ze_command_queue_handle_t queue = NULL;
    EX_CHECK(zeCommandQueueCreate(env.context, dev, &qdesc, &queue));
    ze_command_list_desc_t ldesc = {.stype = ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC,
                                    .commandQueueGroupOrdinal = ordinal};
    ze_command_list_handle_t reg = NULL;
    EX_CHECK(zeCommandListCreate(env.context, dev, &ldesc, &reg));
    const ze_group_count_t scale_groups = ex_group_count_1d(scale, n);
    const float two = 2.0f;
    EX_ARG(scale, 0, a_d); /* a_d still holds this rank's a */
    EX_ARG(scale, 1, two);
    EX_CHECK(zeCommandListAppendLaunchKernel(reg, scale, &scale_groups, NULL, 0, NULL));
    EX_CHECK(zeCommandListClose(reg));
    for (int k = 0; k < EXECS; ++k) {
        EX_CHECK(zeCommandQueueExecuteCommandLists(queue, 1, &reg, NULL));
        EX_CHECK(zeCommandQueueSynchronize(queue, UINT64_MAX));
    }
    EX_CHECK(zeCommandListAppendMemoryCopy(list, c_h, a_d, bytes, NULL, 0, NULL));
    for (uint32_t i = 0; i < n; ++i)
        want[i] = a_h[i] * (float)(1u << EXECS);
    ex_verify_f32("a * 2^EXECS after the regular list's executions", c_h, want, n);

    /* every rank finished its device work */
    MT_MPI(MPI_Barrier(MPI_COMM_WORLD));

    EX_CHECK(zeCommandListDestroy(reg));
    EX_CHECK(zeCommandQueueDestroy(queue));
    ex_free(&env, p_d);
    ex_free(&env, q_h);
    ex_free(&env, p_h);
    free(want);
    ex_free(&env, c_d);
    ex_free(&env, b_d);
    ex_free(&env, a_d);
    ex_free(&env, c_h);
    ex_free(&env, b_h);
    ex_free(&env, a_h);
    EX_CHECK(zeKernelDestroy(scale));
    EX_CHECK(zeKernelDestroy(add));
    EX_CHECK(zeModuleDestroy(module));
    EX_CHECK(zeCommandListDestroy(list));
    ex_fini(&env);

    char summary[200];
    snprintf(summary, sizeof summary,
             "vector_add on %u elements per rank over %u device(s), Allreduce + Gather checked, "
             "1 MiB H2D/D2H round trip, regular list executed %d times",
             n, env.num_devices, EXECS);
    mt_pass(summary);
    MPI_Finalize();
    return 0;
}
