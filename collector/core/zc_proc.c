/* SPDX-License-Identifier: MIT */
/* The process's state (zc_proc.h), which every floor above reads, and the whole collector's steps
 * that the layers ask for, passed on to the composition root that installed them. */
#include "zc_proc.h"

struct zc_job zc_job = {.size = 1};
atomic_bool zc_is_active; /* read inline by zc_own_begin */
atomic_uint_fast64_t zc_progress;
struct zc_proc_ops zc_proc_ops;
static uint64_t start_ns;

uint32_t zc_rank(void) { return zc_job.rank; }
uint64_t zc_start_time(void) { return start_ns; }
void zc_proc_start(uint64_t ns) { start_ns = ns; }

void zc_finalize(void) {
    if (zc_proc_ops.finalize) zc_proc_ops.finalize();
}
int zc_post_mpi_init(void) { return zc_proc_ops.post_mpi_init ? zc_proc_ops.post_mpi_init() : -1; }
int zc_start_unselected(void) { return zc_proc_ops.start_unselected ? zc_proc_ops.start_unselected() : -1; }
