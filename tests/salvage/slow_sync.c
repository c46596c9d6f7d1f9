/* SPDX-License-Identifier: MIT */
/* A test library (LD_PRELOAD, before libzecoll.so): a busy disk, and where syncs happen.
 *   ZC_TEST_SYNC_MS=N       each fdatasync and fsync takes N milliseconds more, as on a busy disk,
 *                           where one can take seconds (salvage.mpi.abort_slow_sync: the aborting
 *                           rank's finalize must still put its records into the journal within
 *                           MPI_Abort's time limit);
 *   ZC_TEST_SYNC_LOG=FILE   each fdatasync and fsync appends "pid call path" to FILE, in the order
 *                           they happen (salvage.mpi.final_syncs: the event files a rank's final
 *                           pass sealed are made durable before the journal that names their seals);
 *   ZC_TEST_NO_SYNC_IN_INIT=1   a sync on the thread inside MPI_Init or MPI_Init_thread is a
 *                           defect: it says so and aborts the process. MPI_Init runs on every rank at once; the
 *                           journal's syncs belong on the flusher's thread (docs/salvage.md).
 * Its MPI_Init and MPI_Init_thread are the ones the program calls (first in LD_PRELOAD); they
 * call the next ones (libzecoll.so's wrappers) with the same arguments and return their result. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

/* per thread: a sync on the thread that is inside MPI_Init is the defect; the flusher's own syncs
 * on its thread may fall in that time (a flusher started before MPI_Init: the test once failed
 * so on a quiet machine, where MPI_Init overlapped the flusher's first pass) */
static _Thread_local int in_init;

static long env_long(const char *name) {
    const char *v = getenv(name);
    return v ? strtol(v, NULL, 10) : 0;
}

static void before_sync(const char *fn) {
    if (in_init && env_long("ZC_TEST_NO_SYNC_IN_INIT")) {
        fprintf(stderr, "slow_sync: %s inside MPI_Init (pid %ld)\n", fn, (long)getpid());
        abort();
    }
    long ms = env_long("ZC_TEST_SYNC_MS");
    if (ms > 0) {
        struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
        while (nanosleep(&t, &t) != 0) {
        }
    }
}

/* One write(2) of one line to a file opened O_APPEND: the ranks' lines do not interleave. */
static void log_sync(const char *fn, int fd) {
    const char *log = getenv("ZC_TEST_SYNC_LOG");
    if (!log || !*log) return;
    char link[64], path[PATH_MAX] = "?", line[PATH_MAX + 96];
    snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, path, sizeof(path) - 1);
    if (n > 0) path[n] = 0;
    int k = snprintf(line, sizeof(line), "%ld %s %s\n", (long)getpid(), fn, path);
    int lf = open(log, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (lf < 0) return;
    if (k > 0) (void)!write(lf, line, (size_t)k < sizeof(line) ? (size_t)k : sizeof(line) - 1);
    close(lf);
}

int fdatasync(int fd) {
    static int (*real)(int);
    if (!real) real = (int (*)(int))dlsym(RTLD_NEXT, "fdatasync");
    before_sync("fdatasync");
    log_sync("fdatasync", fd);
    return real ? real(fd) : 0;
}

int fsync(int fd) {
    static int (*real)(int);
    if (!real) real = (int (*)(int))dlsym(RTLD_NEXT, "fsync");
    before_sync("fsync");
    log_sync("fsync", fd);
    return real ? real(fd) : 0;
}

/* (MPI's prototypes without mpi.h: this library does not link MPI) */
int MPI_Init(int *argc, char ***argv);
int MPI_Init_thread(int *argc, char ***argv, int required, int *provided);

int MPI_Init(int *argc, char ***argv) {
    int (*next)(int *, char ***) = (int (*)(int *, char ***))dlsym(RTLD_NEXT, "MPI_Init");
    in_init++;
    int rc = next(argc, argv);
    in_init--;
    return rc;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided) {
    int (*next)(int *, char ***, int, int *) = (int (*)(int *, char ***, int, int *))dlsym(RTLD_NEXT, "MPI_Init_thread");
    in_init++;
    int rc = next(argc, argv, required, provided);
    in_init--;
    return rc;
}
