/* SPDX-License-Identifier: MIT */
/* An MPI + Level Zero job that does not end with MPI_Finalize, for the salvage tests. Every rank
 * runs STEPS steps (vector_add and a copy back on its GPU, then an MPI_Allreduce of a checksum);
 * then, by MODE:
 *   abort       rank 1 (rank 0 in a job of one) calls MPI_Abort(MPI_COMM_WORLD, 3) while the
 *               others wait in the next MPI_Allreduce (mpirun then stops them);
 *   nofinalize  every rank returns from main without MPI_Finalize (exit status 0);
 *   finalize    a normal end (the control case).
 * With SALV_PAUSE_AT=N set, step N begins with MPI_Pcontrol(0) and MPI_Pcontrol(1) back to back:
 * under ZECOLL_WINDOWS="pcontrol initial=on" a pair of window markers and no operation missed
 * (salvage.mpi.marker_syncs: a location's first marker seals its event file).
 * usage: mpirun -np 4 salv_mpi_end MODE [STEPS=200] [elements=4096] */
#include "ex_common.h"

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    ex_env_t env;
    ex_init(&env, argv[0]);
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    /* the steps' reductions run on a dup of world */
    MPI_Comm steps_comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &steps_comm);
    const char *mode = argc > 1 ? argv[1] : "finalize";
    EX_REQUIRE(!strcmp(mode, "abort") || !strcmp(mode, "nofinalize") || !strcmp(mode, "finalize"),
               "unknown mode %s (abort, nofinalize, finalize)", mode);
    const uint32_t steps = (uint32_t)ex_arg_u64(argc, argv, 2, "steps", 200, 1, 10000000);
    const uint32_t n = (uint32_t)ex_arg_u64(argc, argv, 3, "elements", 4096, 1, 1u << 22);
    const size_t bytes = (size_t)n * sizeof(float);

    ze_device_handle_t dev = env.devices[(uint32_t)rank % env.num_devices];
    ze_command_list_handle_t list =
        ex_immediate_list(&env, dev, ex_compute_group(dev, NULL), 0, ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS);
    ze_module_handle_t module = ex_module_create(&env, dev);
    ze_kernel_handle_t add = ex_kernel_create(module, "vector_add");
    const ze_group_count_t groups = ex_group_count_1d(add, n);
    float *a = ex_alloc_device(&env, dev, bytes), *b = ex_alloc_device(&env, dev, bytes);
    float *c = ex_alloc_device(&env, dev, bytes), *host = ex_alloc_host(&env, bytes);
    for (uint32_t i = 0; i < n; ++i) host[i] = 1.0f;
    EX_CHECK(zeCommandListAppendMemoryCopy(list, a, host, bytes, NULL, 0, NULL));
    EX_CHECK(zeCommandListAppendMemoryCopy(list, b, host, bytes, NULL, 0, NULL));
    EX_ARG(add, 0, a);
    EX_ARG(add, 1, b);
    EX_ARG(add, 2, c);
    const char *pause = getenv("SALV_PAUSE_AT");
    const uint32_t pause_at = pause ? (uint32_t)strtoul(pause, NULL, 10) : 0;
    for (uint32_t s = 1; s <= steps; ++s) {
        if (s == pause_at) {
            MPI_Pcontrol(0);
            MPI_Pcontrol(1);
        }
        EX_CHECK(zeCommandListAppendLaunchKernel(list, add, &groups, NULL, 0, NULL));
        EX_CHECK(zeCommandListAppendMemoryCopy(list, host, c, bytes, NULL, 0, NULL));
        double mine = host[0] + host[n - 1], all = 0;
        MPI_Allreduce(&mine, &all, 1, MPI_DOUBLE, MPI_SUM, steps_comm);
        EX_REQUIRE(all == 4.0 * size, "step %u: checksum %g, expected %g", s, all, 4.0 * size);
    }
    /* every rank but 0 names it now, each differently: its definition was journaled during the
     * steps, the name comes after it (ZC_JRN_COMM_NAMES); the salvaged archive names it as a
     * finished one would, after the lowest naming rank ("steps_rank_1", the rank that aborts) */
    if (rank > 0) {
        char name[32];
        snprintf(name, sizeof(name), "steps_rank_%d", rank);
        MPI_Comm_set_name(steps_comm, name);
    }
    if (!strcmp(mode, "abort")) {
        if (rank == (size > 1 ? 1 : 0)) MPI_Abort(MPI_COMM_WORLD, 3);
        double x = 0, y = 0;
        MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD); /* never completes */
        return 1;
    }
    if (!strcmp(mode, "nofinalize")) {
        ex_info("rank %d: %u steps, ending without MPI_Finalize", rank, steps);
        return 0;
    }
    MPI_Comm_free(&steps_comm);
    MPI_Finalize();
    ex_info("PASS: rank %d: %u steps", rank, steps);
    return 0;
}
