/* SPDX-License-Identifier: MIT */
/* A deliberate data race for the TSan build (test mpi.tsan.sentinel): the MPI tests run under
 * TSAN_OPTIONS that ignore what the uninstrumented Open MPI does (ignore_noninstrumented_modules,
 * tests/mpi/tsan_openmpi.supp). This program proves that those options still report a race
 * between two instrumented threads whose only "synchronisation" is MPI calls on their own
 * communicators, with the collector preloaded.
 *
 * Two threads per rank (MPI_THREAD_MULTIPLE, each then on its own duplicate of MPI_COMM_WORLD):
 * racy_writer stores to a global, racy_reader loads it, each first thing in its thread, with the
 * collector recording and MPI initialised; MPI calls follow. Nothing orders the two accesses:
 * neither thread synchronises with anything between its creation and its access (an MPI call
 * there could: TSan does see the locks Open MPI takes, and a lock both threads took in between
 * would be a real happens-before that hides the race in some runs). So every run must report the
 * race in racy_writer/racy_reader (the test matches TSan's SUMMARY line). Without TSan the
 * program just runs and exits 0.
 *
 * usage: mpirun -np 2 mpi_tsan_sentinel */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>

static int shared; /* written and read without synchronisation: the race */
static MPI_Comm comms[2];

__attribute__((noinline)) static void racy_writer(void) { shared = 42; }
__attribute__((noinline)) static int racy_reader(void) { return shared; }

static void *thread_main(void *arg) {
    int t = (int)(long)arg, v = 0;
    if (t == 0) racy_writer();
    else v = racy_reader();
    MPI_Barrier(comms[t]);
    MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_INT, MPI_MAX, comms[t]);
    return (void *)(long)v;
}

int main(int argc, char **argv) {
    int provided = 0;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    if (provided < MPI_THREAD_MULTIPLE) {
        printf("SKIP: no MPI_THREAD_MULTIPLE\n");
        MPI_Finalize();
        return 77;
    }
    for (int t = 0; t < 2; t++) MPI_Comm_dup(MPI_COMM_WORLD, &comms[t]);
    pthread_t th[2];
    for (int t = 0; t < 2; t++) pthread_create(&th[t], NULL, thread_main, (void *)(long)t);
    for (int t = 0; t < 2; t++) pthread_join(th[t], NULL);
    for (int t = 0; t < 2; t++) MPI_Comm_free(&comms[t]);
    MPI_Finalize();
    return 0;
}
