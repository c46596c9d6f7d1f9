/* SPDX-License-Identifier: MIT */
/* MPI wrapper cost: a loop of 0-byte MPI_Irecv + MPI_Isend + MPI_Waitall(2), timed on rank 0.
 *
 *   zc_mpi_bench self  N : every rank messages itself (no other process in the timing: the
 *                          cleanest measure of per-call cost)
 *   zc_mpi_bench pair  N : ranks 0 and 1 exchange (what a halo exchange does)
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

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int pair = argc > 1 && strcmp(argv[1], "pair") == 0;
    long n = argc > 2 ? atol(argv[2]) : 200000;
    int peer = pair ? (rank ^ 1) : rank;
    if (pair && peer >= size) peer = rank; /* odd rank count: the last one talks to itself */
    char sbuf[1], rbuf[1];
    MPI_Request rq[2];
    double t0 = 0;
    for (long i = -n / 10; i < n; i++) { /* the first tenth warms up */
        if (i == 0) {
            MPI_Barrier(MPI_COMM_WORLD);
            t0 = now_ns();
        }
        MPI_Irecv(rbuf, 0, MPI_BYTE, peer, 1, MPI_COMM_WORLD, &rq[0]);
        MPI_Isend(sbuf, 0, MPI_BYTE, peer, 1, MPI_COMM_WORLD, &rq[1]);
        MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
    }
    double dt = now_ns() - t0;
    if (rank == 0) printf("{\"iter_ns\": %.1f, \"call_ns\": %.1f}\n", dt / (double)n, dt / (double)n / 3);
    MPI_Finalize();
    return 0;
}
