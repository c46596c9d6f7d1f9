/* SPDX-License-Identifier: MIT */
/* The process's state (zc_proc.h), which every floor above reads, and the whole collector's steps
 * that the layers ask for, passed on to the composition root that installed them. */
#include "zc_proc.h"

#include <limits.h>
#include <unistd.h>

struct zc_job zc_job = {.size = 1};
atomic_bool zc_is_active; /* read inline by zc_own_begin */
atomic_uint_fast64_t zc_progress;
struct zc_proc_ops zc_proc_ops;
static uint64_t start_ns;
static char start_cwd[PATH_MAX];

uint32_t zc_rank(void) { return zc_job.rank; }
uint64_t zc_start_time(void) { return start_ns; }
/* The working directory too: a relative ZECOLL_OUTPUT is taken from it, not from wherever the
 * application has gone (chdir) when the archive is created. */
void zc_proc_start(uint64_t ns) {
    start_ns = ns;
    if (!getcwd(start_cwd, sizeof(start_cwd))) start_cwd[0] = 0;
}
const char *zc_start_cwd(void) { return start_cwd; }

void zc_finalize(void) {
    if (zc_proc_ops.finalize) zc_proc_ops.finalize();
}
int zc_post_mpi_init(void) { return zc_proc_ops.post_mpi_init ? zc_proc_ops.post_mpi_init() : -1; }
int zc_start_unselected(void) { return zc_proc_ops.start_unselected ? zc_proc_ops.start_unselected() : -1; }
