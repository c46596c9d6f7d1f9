/* SPDX-License-Identifier: MIT */
/* MPI + Level Zero: a 1-D domain split over the ranks, each rank's part on a GPU, with a halo
 * exchange between neighbours every step, as a stencil code does.
 *
 * Level Zero starts before MPI_Init (as in many applications). Rank r uses device
 * r % <devices> and one synchronous immediate list of its compute group, and owns N values
 * u[0..N) with H ghost cells on each side. Every step:
 *   device:  u <- u + b   (vector_add into a scratch buffer, then a device-to-device copy back)
 *   host:    the H boundary values on each side copied device -> host,
 *            MPI_Irecv/MPI_Isend with both ring neighbours, MPI_Waitall,
 *            the received halos copied host -> device into the ghost cells;
 *   every 4th step an MPI_Allreduce of the ghost cells' sum on a split communicator (even and
 *   odd ranks) and on MPI_COMM_WORLD.
 * Every value is exact in float, so the program checks the halos it receives and, at the end,
 * its whole domain and the job-wide sum (MPI_Reduce to rank 0).
 *
 * usage: mpirun -np 4 ex_mpi_halo [values per rank] [steps]   (default 16384, 24) */
#include "ex_common.h"

#include <mpi.h>
#include <stdint.h>
#include <stdlib.h>

#define H 64 /* halo width */

/* initial value of global index g, and b */
static float u0(uint64_t g) { return (float)(g % 2048u); }
static const float B = 0.5f;

static void mpi_check(int rc, const char *what)
{
    EX_REQUIRE(rc == MPI_SUCCESS, "%s failed (%d)", what, rc);
}

int main(int argc, char **argv)
{
    ex_env_t env;
    ex_init(&env, argv[0]); /* zeInit, devices, context before MPI_Init */
    mpi_check(MPI_Init(&argc, &argv), "MPI_Init");
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    uint64_t params[2] = {ex_arg_u64(argc, argv, 1, "values per rank", 16384, 2 * H, 1u << 24),
                          ex_arg_u64(argc, argv, 2, "steps", 24, 1, 100000)};
    mpi_check(MPI_Bcast(params, 2, MPI_UINT64_T, 0, MPI_COMM_WORLD), "MPI_Bcast");
    const uint32_t n = (uint32_t)params[0], steps = (uint32_t)params[1];
    const uint32_t total = n + 2 * H; /* [ghost left | owned | ghost right] */
    const size_t bytes = (size_t)total * sizeof(float);
    const int left = (rank + size - 1) % size, right = (rank + 1) % size;

    MPI_Comm parity;
    mpi_check(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &parity), "MPI_Comm_split");

    const uint32_t dev_index = (uint32_t)rank % env.num_devices;
    ze_device_handle_t dev = env.devices[dev_index];
    const uint32_t ordinal = ex_compute_group(dev, NULL);
    ze_command_list_handle_t list = ex_immediate_list(&env, dev, ordinal, 0, ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS);
    ze_module_handle_t module = ex_module_create(&env, dev);
    ze_kernel_handle_t add = ex_kernel_create(module, "vector_add");
    const ze_group_count_t groups = ex_group_count_1d(add, total);

    float *u_d = ex_alloc_device(&env, dev, bytes);
    float *b_d = ex_alloc_device(&env, dev, bytes);
    float *t_d = ex_alloc_device(&env, dev, bytes);
    float *host = ex_alloc_host(&env, bytes);
    float *halo = ex_alloc_host(&env, 4 * H * sizeof(float)); /* send l, send r, recv l, recv r */
    float *want = malloc(bytes);
    EX_REQUIRE(want != NULL, "out of host memory");
    const uint64_t first = (uint64_t)rank * n; /* global index of u[H] */
    for (uint32_t i = 0; i < total; ++i) {
        host[i] = i < H || i >= H + n ? 0.0f : u0(first + i - H);
        want[i] = B;
    }
    EX_CHECK(zeCommandListAppendMemoryCopy(list, u_d, host, bytes, NULL, 0, NULL));
    EX_CHECK(zeCommandListAppendMemoryCopy(list, b_d, want, bytes, NULL, 0, NULL));
    EX_ARG(add, 0, u_d);
    EX_ARG(add, 1, b_d);
    EX_ARG(add, 2, t_d);

    /* what a neighbour's boundary holds after s updates */
    const uint64_t nglobal = (uint64_t)size * n;
    uint32_t halos_checked = 0;
    for (uint32_t s = 1; s <= steps; ++s) {
        EX_CHECK(zeCommandListAppendLaunchKernel(list, add, &groups, NULL, 0, NULL));
        EX_CHECK(zeCommandListAppendMemoryCopy(list, u_d, t_d, bytes, NULL, 0, NULL));
        EX_CHECK(zeCommandListAppendMemoryCopy(list, halo, u_d + H, H * sizeof(float), NULL, 0, NULL));
        EX_CHECK(zeCommandListAppendMemoryCopy(list, halo + H, u_d + n, H * sizeof(float), NULL, 0, NULL));
        MPI_Request rq[4];
        mpi_check(MPI_Irecv(halo + 2 * H, H, MPI_FLOAT, left, 10, MPI_COMM_WORLD, &rq[0]), "MPI_Irecv");
        mpi_check(MPI_Irecv(halo + 3 * H, H, MPI_FLOAT, right, 11, MPI_COMM_WORLD, &rq[1]), "MPI_Irecv");
        mpi_check(MPI_Isend(halo + H, H, MPI_FLOAT, right, 10, MPI_COMM_WORLD, &rq[2]), "MPI_Isend");
        mpi_check(MPI_Isend(halo, H, MPI_FLOAT, left, 11, MPI_COMM_WORLD, &rq[3]), "MPI_Isend");
        mpi_check(MPI_Waitall(4, rq, MPI_STATUSES_IGNORE), "MPI_Waitall");
        for (uint32_t i = 0; i < H; ++i) {
            /* left ghost i = global index first - H + i; right ghost i = first + n + i (ring) */
            float l = u0((first + nglobal - H + i) % nglobal) + (float)s * B;
            float r = u0((first + n + i) % nglobal) + (float)s * B;
            EX_REQUIRE(halo[2 * H + i] == l && halo[3 * H + i] == r,
                       "step %u: halo %u from the neighbours is %g/%g, expected %g/%g", s, i,
                       (double)halo[2 * H + i], (double)halo[3 * H + i], (double)l, (double)r);
        }
        halos_checked += 2 * H;
        EX_CHECK(zeCommandListAppendMemoryCopy(list, u_d, halo + 2 * H, H * sizeof(float), NULL, 0, NULL));
        EX_CHECK(zeCommandListAppendMemoryCopy(list, u_d + H + n, halo + 3 * H, H * sizeof(float), NULL, 0, NULL));
        if (s % 4 == 0) {
            double mine = 0, sub = 0, all = 0, want_all = 0;
            for (uint32_t i = 0; i < H; ++i) mine += halo[2 * H + i] + halo[3 * H + i];
            mpi_check(MPI_Allreduce(&mine, &sub, 1, MPI_DOUBLE, MPI_SUM, parity), "MPI_Allreduce");
            mpi_check(MPI_Allreduce(&mine, &all, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD), "MPI_Allreduce");
            for (int r = 0; r < size; ++r)
                for (uint32_t i = 0; i < H; ++i) {
                    uint64_t f = (uint64_t)r * n;
                    want_all += u0((f + nglobal - H + i) % nglobal) + u0((f + n + i) % nglobal) + 2.0 * s * B;
                }
            EX_REQUIRE(all == want_all, "step %u: ghost sum %g, expected %g", s, all, want_all);
            EX_REQUIRE(sub <= all, "step %u: sub-communicator sum %g exceeds the total %g", s, sub, all);
        }
    }

    /* the whole domain: owned values advanced by steps * B, ghosts from the last exchange */
    EX_CHECK(zeCommandListAppendMemoryCopy(list, host, u_d, bytes, NULL, 0, NULL));
    double mine = 0, job = 0;
    for (uint32_t i = 0; i < n; ++i) {
        const float w = u0(first + i) + (float)steps * B;
        EX_REQUIRE(host[H + i] == w, "value %u is %g, expected %g", i, (double)host[H + i], (double)w);
        mine += host[H + i];
    }
    mpi_check(MPI_Reduce(&mine, &job, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD), "MPI_Reduce");
    if (rank == 0) {
        double w = 0;
        for (uint64_t g = 0; g < nglobal; ++g) w += u0(g) + (double)steps * B;
        EX_REQUIRE(job == w, "job-wide sum %g, expected %g", job, w);
    }
    MPI_Comm_free(&parity);
    mpi_check(MPI_Finalize(), "MPI_Finalize");

    /* Level Zero teardown after MPI_Finalize, as applications often do */
    free(want);
    ex_free(&env, halo);
    ex_free(&env, host);
    ex_free(&env, t_d);
    ex_free(&env, b_d);
    ex_free(&env, u_d);
    EX_CHECK(zeKernelDestroy(add));
    EX_CHECK(zeModuleDestroy(module));
    EX_CHECK(zeCommandListDestroy(list));
    ex_fini(&env);
    if (rank == 0)
        ex_info("PASS: %d ranks x %u values, %u steps on devices 0..%u: every halo (%u values per rank) "
                "and the final domain checked", size, n, steps, env.num_devices - 1, halos_checked);
    return 0;
}
