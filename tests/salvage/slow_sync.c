/* SPDX-License-Identifier: MIT */
/* A test library (LD_PRELOAD): fdatasync takes ZC_TEST_SYNC_MS milliseconds more, as on a busy
 * disk, where one can take seconds; the first ZC_TEST_SYNC_SKIP calls (the journal's creation in
 * MPI_Init) are not slowed. salvage.mpi.abort_slow_sync: the aborting rank's finalize must still
 * put its records into the journal within MPI_Abort's time limit. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static long env_long(const char *name) {
    const char *v = getenv(name);
    return v ? strtol(v, NULL, 10) : 0;
}

int fdatasync(int fd) {
    static atomic_long calls;
    static int (*real)(int);
    if (!real) real = (int (*)(int))dlsym(RTLD_NEXT, "fdatasync");
    long ms = env_long("ZC_TEST_SYNC_MS");
    if (ms > 0 && atomic_fetch_add(&calls, 1) >= env_long("ZC_TEST_SYNC_SKIP")) {
        struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
        while (nanosleep(&t, &t) != 0) {
        }
    }
    return real ? real(fd) : 0;
}
