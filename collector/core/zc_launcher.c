/* SPDX-License-Identifier: MIT */
/* The launcher's environment variables (zc_launcher.h): the only place that reads them. Each is
 * read when asked, as the environment is then (an MPI library may set some in MPI_Init). */
#include "zc_launcher.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#define ZC_NVARS(v) (sizeof(v) / sizeof((v)[0]))

/* Before MPI_Init the rank is known only from the launcher's variables (the first one set). */
int zc_launcher_rank(void) {
    static const char *const vars[] = {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"};
    for (size_t i = 0; i < ZC_NVARS(vars); i++) {
        const char *r = getenv(vars[i]);
        if (!r) continue;
        char *end;
        long v = strtol(r, &end, 10);
        return end != r && !*end && v >= 0 && v <= INT32_MAX ? (int)v : -1;
    }
    return -1;
}

/* Once per job: only the launcher's rank 0 speaks (or a process no MPI launcher started). */
bool zc_job_leader(void) { return zc_launcher_rank() <= 0; }

unsigned zc_launcher_local_ranks(void) {
    static const char *const vars[] = {"OMPI_COMM_WORLD_LOCAL_SIZE", "PMIX_LOCAL_SIZE", "MPI_LOCALNRANKS",
                                       "SLURM_STEP_TASKS_PER_NODE", "SLURM_TASKS_PER_NODE"};
    for (size_t i = 0; i < ZC_NVARS(vars); i++) {
        const char *v = getenv(vars[i]);
        if (!v || *v < '0' || *v > '9') continue;
        unsigned long n = strtoul(v, NULL, 10);
        if (n > 0 && n < (1ul << 20)) return (unsigned)n;
    }
    return 1;
}

long zc_launcher_cpu_share(void) {
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    return online > 0 ? online / (long)zc_launcher_local_ranks() : -1;
}

bool zc_launcher_started(void) {
    static const char *const vars[] = {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID"};
    for (size_t i = 0; i < ZC_NVARS(vars); i++)
        if (getenv(vars[i])) return true;
    return false;
}
