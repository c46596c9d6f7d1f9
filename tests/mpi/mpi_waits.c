/* SPDX-License-Identifier: MIT */
/* MPI + Level Zero with planted wait states: ranks that are late by a known delay D, and GPUs
 * that idle while their rank waits. tests/aggregate/check_planted.py recovers each planted wait
 * and the GPU idle time attributed to it from the aggregator's report, within a bound it derives
 * from the archive (docs in that file).
 *
 * Every delay starts only after the late rank has *received* a message that the waiting rank
 * sent right before it entered the waiting call, so the wait is at least D minus what the
 * waiting rank itself spent between that send and the call (measured in the archive on its own
 * clock), whatever the scheduler does: a descheduled late rank only makes the wait longer. The
 * delay is slept on CLOCK_MONOTONIC and completed on CLOCK_MONOTONIC_RAW (the collector's clock)
 * so that it lasts at least D there.
 *
 * Phases (N ranks, N >= 2), each opened by a kernel on every rank (vector_add on a synchronous
 * immediate list of the rank's device, checked), so each rank's device idles through the MPI of
 * the phase:
 *   1. Late Sender: rank 0 sends "go" to every rank r >= 1, then receives one message from each
 *      in rank order; rank r sleeps r x D after "go" before it sends (waits of rank 0 blamed on r).
 *   2. Late Receiver: rank 0 sends a token to rank 1, then MPI_Ssend to rank 1, which sleeps D
 *      after the token before it posts the receive (rank 0 waits, blamed on 1).
 *   3. Wait at NxN: every rank but N-1 sends a token to N-1 and enters MPI_Allreduce; rank N-1
 *      receives the tokens, sleeps D, enters (waits of every other rank blamed on N-1).
 *   4. Late Broadcast: the same with the root of an MPI_Bcast (rank 1) late.
 *   5. Wait at Barrier: the same with rank B = N-2 (N >= 3; else 1) late at MPI_Barrier.
 * Rank 0 writes what it planted to waits-planted.json in its working directory.
 *
 * usage: mpirun -np N -x ZE_ENABLE_ALT_DRIVERS=/abs/libzesim.so mpi_waits [D in ms, default 30] */
#include "ex_common.h"
#include "mt_common.h"

#include <stdint.h>
#include <time.h>

enum { TAG_GO = 10, TAG_LS = 11, TAG_LR_GO = 20, TAG_LR = 21, TAG_NXN = 30, TAG_BCAST = 40,
       TAG_BARRIER = 50 };
#define ITEMS 1024u

struct gpu {
    ze_command_list_handle_t list;
    ze_kernel_handle_t add;
    ze_group_count_t groups;
    float *a_h, *b_h, *c_h, *a_d, *b_d, *c_d;
    int runs;
};

static uint64_t raw_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* At least ns on CLOCK_MONOTONIC_RAW: nanosleep counts CLOCK_MONOTONIC, which NTP may run faster */
static void delay(uint64_t ns)
{
    const uint64_t t0 = raw_ns();
    struct timespec ts = {.tv_sec = (time_t)(ns / 1000000000u), .tv_nsec = (long)(ns % 1000000000u)};
    while (nanosleep(&ts, &ts) != 0) {
    }
    while (raw_ns() - t0 < ns) {
    }
}

/* One kernel on this rank's device, completed when the Append returns (synchronous list) */
static void kernel(struct gpu *g)
{
    const float k = (float)++g->runs;
    for (uint32_t i = 0; i < ITEMS; ++i) {
        g->a_h[i] = (float)i;
        g->b_h[i] = k;
        g->c_h[i] = -1.0f;
    }
    EX_CHECK(zeCommandListAppendMemoryCopy(g->list, g->a_d, g->a_h, ITEMS * sizeof(float), NULL, 0, NULL));
    EX_CHECK(zeCommandListAppendMemoryCopy(g->list, g->b_d, g->b_h, ITEMS * sizeof(float), NULL, 0, NULL));
    EX_CHECK(zeCommandListAppendLaunchKernel(g->list, g->add, &g->groups, NULL, 0, NULL));
    EX_CHECK(zeCommandListAppendMemoryCopy(g->list, g->c_h, g->c_d, ITEMS * sizeof(float), NULL, 0, NULL));
    for (uint32_t i = 0; i < ITEMS; ++i)
        MT_REQUIRE(g->c_h[i] == (float)i + k, "kernel %d: c[%u] = %g, expected %g", g->runs, i,
                   g->c_h[i], (float)i + k);
}

static void send_int(int v, int to, int tag) { MT_MPI(MPI_Send(&v, 1, MPI_INT, to, tag, MPI_COMM_WORLD)); }

static int recv_int(int from, int tag)
{
    int v = -1;
    MT_MPI(MPI_Recv(&v, 1, MPI_INT, from, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    return v;
}

/* The late rank receives a token from every other rank (each sent right before that rank
 * entered the collective), then sleeps: the others' waits are at least D from their tokens. */
static void late_at_collective(int late, int tag, uint64_t d)
{
    if (mt_rank == late) {
        for (int i = 0; i < mt_size; ++i)
            if (i != late)
                MT_REQUIRE(recv_int(i, tag) == i, "token from rank %d", i);
        delay(d);
    } else {
        send_int(mt_rank, late, tag);
    }
}

int main(int argc, char **argv)
{
    ex_env_t env;
    ex_init(&env, argv[0]);
    MPI_Init(&argc, &argv);
    mt_init(argv[0], 2);
    const uint64_t d = ex_arg_u64(argc, argv, 1, "delay D in ms", 30, 1, 1000) * 1000000u;
    const int n = mt_size, nxn_late = n - 1, bcast_root = 1, barrier_late = n >= 3 ? n - 2 : 1;

    ze_device_handle_t dev = env.devices[(uint32_t)mt_rank % env.num_devices];
    struct gpu g = {.runs = 0};
    g.list = ex_immediate_list(&env, dev, ex_compute_group(dev, NULL), 0, ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS);
    ze_module_handle_t module = ex_module_create(&env, dev);
    g.add = ex_kernel_create(module, "vector_add");
    g.groups = ex_group_count_1d(g.add, ITEMS);
    g.a_h = ex_alloc_host(&env, ITEMS * sizeof(float));
    g.b_h = ex_alloc_host(&env, ITEMS * sizeof(float));
    g.c_h = ex_alloc_host(&env, ITEMS * sizeof(float));
    g.a_d = ex_alloc_device(&env, dev, ITEMS * sizeof(float));
    g.b_d = ex_alloc_device(&env, dev, ITEMS * sizeof(float));
    g.c_d = ex_alloc_device(&env, dev, ITEMS * sizeof(float));
    EX_ARG(g.add, 0, g.a_d);
    EX_ARG(g.add, 1, g.b_d);
    EX_ARG(g.add, 2, g.c_d);

    if (mt_rank == 0) {
        FILE *f = fopen("waits-planted.json", "w");
        MT_REQUIRE(f != NULL, "cannot write waits-planted.json");
        fprintf(f,
                "{\"ranks\": %d, \"delay_ns\": %llu, \"tags\": {\"go\": %d, \"late_sender\": %d, "
                "\"late_receiver_go\": %d, \"late_receiver\": %d, \"nxn\": %d, \"bcast\": %d, "
                "\"barrier\": %d},\n \"nxn_late\": %d, \"bcast_root\": %d, \"barrier_late\": %d}\n",
                n, (unsigned long long)d, TAG_GO, TAG_LS, TAG_LR_GO, TAG_LR, TAG_NXN, TAG_BCAST,
                TAG_BARRIER, nxn_late, bcast_root, barrier_late);
        MT_REQUIRE(fclose(f) == 0, "cannot write waits-planted.json");
    }

    /* 1. Late Sender: rank r sends r x D after rank 0's go */
    kernel(&g);
    if (mt_rank == 0) {
        for (int r = 1; r < n; ++r)
            send_int(r, r, TAG_GO);
        for (int r = 1; r < n; ++r)
            MT_REQUIRE(recv_int(r, TAG_LS) == 100 + r, "late sender's message from rank %d", r);
    } else {
        MT_REQUIRE(recv_int(0, TAG_GO) == mt_rank, "go");
        delay((uint64_t)mt_rank * d);
        send_int(100 + mt_rank, 0, TAG_LS);
    }

    /* 2. Late Receiver: rank 1 posts its receive D after rank 0's token; rank 0 is in MPI_Ssend */
    kernel(&g);
    if (mt_rank == 0) {
        int v = 7;
        send_int(1, 1, TAG_LR_GO);
        MT_MPI(MPI_Ssend(&v, 1, MPI_INT, 1, TAG_LR, MPI_COMM_WORLD));
    } else if (mt_rank == 1) {
        MT_REQUIRE(recv_int(0, TAG_LR_GO) == 1, "late receiver's token");
        delay(d);
        MT_REQUIRE(recv_int(0, TAG_LR) == 7, "synchronous send's message");
    }

    /* 3. Wait at NxN: rank N-1 enters MPI_Allreduce D after every other rank's token */
    kernel(&g);
    late_at_collective(nxn_late, TAG_NXN, d);
    int one = 1, sum = 0;
    MT_MPI(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    MT_REQUIRE(sum == n, "Allreduce: %d, expected %d", sum, n);

    /* 4. Late Broadcast: the root (rank 1) enters D after every other rank's token */
    kernel(&g);
    late_at_collective(bcast_root, TAG_BCAST, d);
    int word = mt_rank == bcast_root ? 4242 : 0;
    MT_MPI(MPI_Bcast(&word, 1, MPI_INT, bcast_root, MPI_COMM_WORLD));
    MT_REQUIRE(word == 4242, "Bcast: %d", word);

    /* 5. Wait at Barrier: rank B enters D after every other rank's token */
    kernel(&g);
    late_at_collective(barrier_late, TAG_BARRIER, d);
    MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    kernel(&g);

    ex_free(&env, g.c_d);
    ex_free(&env, g.b_d);
    ex_free(&env, g.a_d);
    ex_free(&env, g.c_h);
    ex_free(&env, g.b_h);
    ex_free(&env, g.a_h);
    EX_CHECK(zeKernelDestroy(g.add));
    EX_CHECK(zeModuleDestroy(module));
    EX_CHECK(zeCommandListDestroy(g.list));
    ex_fini(&env);
    char summary[160];
    snprintf(summary, sizeof summary, "late sender, late receiver, late ranks at Allreduce, Bcast, Barrier "
             "planted with D = %llu ms; %d kernels per rank", (unsigned long long)(d / 1000000u), g.runs);
    mt_pass(summary);
    MPI_Finalize();
    return 0;
}
