/* SPDX-License-Identifier: MIT */
/* MPI wrapper cost: a loop of MPI_Irecv + MPI_Isend + MPI_Waitall(2) of D doubles (default 0),
 * timed on rank 0.
 *
 *   zc_mpi_bench self  N [D] : every rank messages itself (no other process in the timing: the
 *                              cleanest measure of per-call cost)
 *   zc_mpi_bench pair  N [D] : ranks 0 and 1 exchange (what a halo exchange does)
 * Prints one JSON line from rank 0: ns per iteration and per MPI call (3 calls an iteration). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* The measured loop is a function of its own so that callgrind counts exactly it
 * (bench/ir_counts.sh: --toggle-collect=mpi_measured). */
static double sbuf[64], rbuf[64];
static inline __attribute__((always_inline)) void mpi_loop(long n, int peer, int d) {
    MPI_Request rq[2];
    for (long i = 0; i < n; i++) {
        MPI_Irecv(rbuf, d, MPI_DOUBLE, peer, 1, MPI_COMM_WORLD, &rq[0]);
        MPI_Isend(sbuf, d, MPI_DOUBLE, peer, 1, MPI_COMM_WORLD, &rq[1]);
        MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
    }
}
__attribute__((noipa)) static void mpi_warm(long n, int peer, int d) { mpi_loop(n, peer, d); }
void mpi_measured(long n, int peer, int d);
__attribute__((noipa)) void mpi_measured(long n, int peer, int d) { mpi_loop(n, peer, d); }

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int pair = argc > 1 && strcmp(argv[1], "pair") == 0;
    long n = argc > 2 ? atol(argv[2]) : 200000;
    int d = argc > 3 ? atoi(argv[3]) : 0;
    if (d < 0 || d > 64) d = 64;
    int peer = pair ? (rank ^ 1) : rank;
    if (pair && peer >= size) peer = rank; /* odd rank count: the last one talks to itself */
    mpi_warm(n / 10 + 1, peer, d); /* the first tenth warms up */
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = now_ns();
    mpi_measured(n, peer, d);
    double dt = now_ns() - t0;
    if (rank == 0) printf("{\"iter_ns\": %.1f, \"call_ns\": %.1f}\n", dt / (double)n, dt / (double)n / 3);
    MPI_Finalize();
    return 0;
}
