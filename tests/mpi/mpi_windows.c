/* SPDX-License-Identifier: MIT */
/* Recording windows and rank selection in a 4-rank MPI + Level Zero job (issue 8). Every rank
 * runs the same phases; what it must find in the archive it writes to facts-<rank>.json in its
 * working directory (the format of tests/collector/zc_window_app.c), judged per rank by
 * check_trace.py --rank (run_mpi_test.py --truth). Recording is switched by the program at
 * known points (MPI_Pcontrol, a launch), never by sleeping.
 *
 *   mpi_windows pcontrol  examples/pcontrol.yaml (initially off): phases 1 and 3 recorded; requests
 *                         started in phase 0 (off) complete in phase 1 (on): no completion;
 *                         started in phase 1 complete in phase 2 (off): completion recorded
 *   mpi_windows perrank   ZECOLL_WINDOWS="pcontrol initial=off ranks=0-1; kernel:w_first ranks=2-3":
 *                         ranks 0-1 as above, ranks 2-3 from their w_first launch to the end
 *   mpi_windows ranks     ZECOLL_RANKS=0,2 (or ZECOLL_ENABLE=0 on rank 1: `mpi_windows ranks 1`):
 *                         the selected ranks record everything, the others nothing
 *   mpi_windows time      ZECOLL_WINDOWS=time:100ms-300ms: appends for 450 ms after MPI_Init
 *   mpi_windows preinit   ZECOLL_WINDOWS=kernel:pre_open@1+2: opens before MPI_Init (Level Zero
 *                         work before it is held until the job's archive exists), closes after
 * A persistent send/receive pair is created while recording is off and started in phases 1
 * (recorded) and 2 (not).
 *
 * usage: mpirun -np 4 mpi_windows MODE [unselected ranks, comma-separated (ranks mode)] */
#include "zt.h"

#include <mpi.h>
#include <stdbool.h>

#define CK(x) REQUIRE_ZE(x)
#define now_ns zt_now_ns

static int rank, size;
static ze_command_list_handle_t S;
static ze_module_handle_t M;
static char toggles[4096];
static size_t ntog;

static void note(uint64_t t0, uint64_t t1, const char *m) {
    ntog += (size_t)snprintf(toggles + ntog, sizeof(toggles) - ntog, "%s[%" PRIu64 ", %" PRIu64 ", \"%s\"]",
                             ntog ? ", " : "", t0, t1, m);
}

static void launch(const char *name) {
    ze_kernel_desc_t kd = {ZE_STRUCTURE_TYPE_KERNEL_DESC, NULL, 0, name};
    ze_kernel_handle_t k;
    CK(zeKernelCreate(M, &kd, &k));
    ze_group_count_t g = {1, 1, 1};
    CK(zeCommandListAppendLaunchKernel(S, k, &g, NULL, 0, NULL));
    CK(zeKernelDestroy(k));
}

static void pcontrol(int level) {
    uint64_t t0 = now_ns();
    MPI_Pcontrol(level);
    note(t0, now_ns(), level ? "ON" : "OFF");
}

static void exchange(int tag) {
    int out = rank * 100 + tag, in = -1, right = (rank + 1) % size, left = (rank + size - 1) % size;
    MPI_Sendrecv(&out, 1, MPI_INT, right, tag, &in, 1, MPI_INT, left, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (in != left * 100 + tag) {
        fprintf(stderr, "mpi_windows: rank %d got %d from %d\n", rank, in, left);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

struct pair {
    int out, in;
    MPI_Request r[2];
};
static void post(struct pair *p, int tag) {
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    p->out = rank * 1000 + tag;
    MPI_Irecv(&p->in, 1, MPI_INT, left, tag, MPI_COMM_WORLD, &p->r[0]);
    MPI_Isend(&p->out, 1, MPI_INT, right, tag, MPI_COMM_WORLD, &p->r[1]);
}
static void complete(struct pair *p, int tag) {
    MPI_Waitall(2, p->r, MPI_STATUSES_IGNORE);
    int left = (rank + size - 1) % size;
    if (p->in != left * 1000 + tag) MPI_Abort(MPI_COMM_WORLD, 1);
}

static void facts(const char *record, int launches, const char *extra) {
    char path[64];
    snprintf(path, sizeof(path), "facts-%d.json", rank);
    FILE *f = fopen(path, "w");
    if (!f) MPI_Abort(MPI_COMM_WORLD, 1);
    char hr[96] = "";
    if (launches >= 0) snprintf(hr, sizeof(hr), "\"zeCommandListAppendLaunchKernel\": %d", launches);
    fprintf(f, "{\"record\": \"%s\",\n \"host_regions\": {%s},\n \"toggles\": [%s]%s%s}\n", record, hr, toggles,
            extra ? ",\n " : "", extra ? extra : "");
    fclose(f);
}

static void time_mode(uint64_t before_init) {
    static char times[1 << 20];
    size_t o = 0;
    uint32_t cmd = 0;
    uint64_t start = now_ns();
    while (now_ns() - start < 450000000u && o + 64 < sizeof(times)) {
        uint64_t t0 = now_ns();
        launch("tk");
        uint64_t t1 = now_ns();
        o += (size_t)snprintf(times + o, sizeof(times) - o, "%s[%u, %" PRIu64 ", %" PRIu64 "]", cmd ? ", " : "", cmd, t0, t1);
        cmd++;
    }
    char *extra = malloc(o + 256);
    if (!extra) MPI_Abort(MPI_COMM_WORLD, 1);
    /* the window counts from MPI_Init's return, which came after before_init */
    snprintf(extra, o + 256, "\"time_window\": [%s],\n \"time_base_lo\": %" PRIu64 ", \"time_start_ns\": 100000000, "
             "\"time_stop_ns\": 300000000", times, before_init);
    facts("", -1, extra);
    free(extra);
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "";
    zt_env E;
    zt_setup(&E); /* Level Zero first, as many applications do */
    static const char text[] = "ZESIM-MODULE\n"
                               "kernel p0 args=0 ns=20000 ns_per_item=0\nkernel p1 args=0 ns=20000 ns_per_item=0\n"
                               "kernel p2 args=0 ns=20000 ns_per_item=0\nkernel p3 args=0 ns=20000 ns_per_item=0\n"
                               "kernel p4 args=0 ns=20000 ns_per_item=0\nkernel w_first args=0 ns=20000 ns_per_item=0\n"
                               "kernel tk args=0 ns=100000 ns_per_item=0\nkernel pre_open args=0 ns=20000 ns_per_item=0\n";
    M = zt_module_text(&E, 0, text);
    S = zt_imm_list(&E, 0, zt_compute_ordinal(E.dev[0]), 0, ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS, ZT_CMDQUEUE_FLAG_IN_ORDER);

    bool pre = !strcmp(mode, "preinit");
    uint64_t t_pre[2] = {0, 0};
    if (pre) { /* the first launch opens the window, before MPI_Init */
        t_pre[0] = now_ns();
        launch("pre_open");
        t_pre[1] = now_ns();
        launch("p0");
    }
    uint64_t before_init = now_ns();
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (!strcmp(mode, "time")) {
        time_mode(before_init);
        MPI_Finalize();
        return 0;
    }
    if (pre) { /* the second launch is the window's last */
        note(t_pre[0], t_pre[1], "ON");
        uint64_t t0 = now_ns();
        launch("pre_open");
        note(t0, now_ns(), "OFF");
        launch("p1");
        facts("(pre_open|p0)#0", 3, NULL);
        MPI_Finalize();
        return 0;
    }
    bool pc = !strcmp(mode, "pcontrol") || (!strcmp(mode, "perrank") && rank <= 1);
    bool kw = !strcmp(mode, "perrank") && rank >= 2;
    bool sel = true;
    if (!strcmp(mode, "ranks")) {
        const char *uns = argc > 2 ? argv[2] : "1,3";
        for (const char *p = uns; *p; p++)
            if (*p - '0' == rank && (p[1] == ',' || !p[1]) && (p == uns || p[-1] == ',')) sel = false;
    } else if (!pc && !kw) {
        fprintf(stderr, "usage: mpi_windows pcontrol|perrank|ranks [unselected]|time\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    struct pair A, B;
    /* persistent requests, created while off */
    int pout = rank, pin = -1;
    MPI_Request preq[2];
    MPI_Recv_init(&pin, 1, MPI_INT, (rank + size - 1) % size, 30, MPI_COMM_WORLD, &preq[0]);
    MPI_Send_init(&pout, 1, MPI_INT, (rank + 1) % size, 30, MPI_COMM_WORLD, &preq[1]);

    launch("p0");
    exchange(0);
    post(&A, 10);
    if (pc) pcontrol(1);
    if (kw) { /* its kernel window opens at this launch and stays open */
        uint64_t t0 = now_ns();
        launch("w_first");
        note(t0, now_ns(), "ON");
    }
    launch("p1");
    launch("p1");
    exchange(1);
    complete(&A, 10); /* started while off: its completion is not recorded */
    MPI_Startall(2, preq); /* recorded: created while off, started while on */
    MPI_Waitall(2, preq, MPI_STATUSES_IGNORE);
    int v = rank, sum = 0;
    MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (sum != size * (size - 1) / 2) MPI_Abort(MPI_COMM_WORLD, 1);
    post(&B, 20);
    if (pc) pcontrol(0);
    /* started while on, completed while off: the completing call is recorded (on for its span) */
    uint64_t w0 = now_ns();
    complete(&B, 20);
    if (pc) note(w0, now_ns(), "ON"), note(w0, now_ns(), "OFF");
    launch("p2");
    MPI_Startall(2, preq); /* started while off: not recorded, nor its completion */
    MPI_Waitall(2, preq, MPI_STATUSES_IGNORE);
    MPI_Request_free(&preq[0]);
    MPI_Request_free(&preq[1]);
    MPI_Barrier(MPI_COMM_WORLD);
    if (pc) pcontrol(1);
    launch("p3");
    int root_val = rank == 0 ? 42 : 0;
    MPI_Bcast(&root_val, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (root_val != 42) MPI_Abort(MPI_COMM_WORLD, 1);
    if (pc) pcontrol(0);
    launch("p4");
    exchange(4);

    if (pc) facts("p1#0|p3#0", 3, NULL);
    else if (kw) facts("(w_first|p1|p2|p3|p4)#0", 6, NULL);
    else if (sel) facts("(p0|p1|p2|p3|p4)#0", 6, NULL);
    else facts("(?!)", 0, NULL);
    MPI_Finalize();
    zt_teardown(&E);
    return 0;
}
