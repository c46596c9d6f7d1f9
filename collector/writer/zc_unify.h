/* SPDX-License-Identifier: MIT */
/* Definitions at close (zc_unify.c). */
#ifndef ZC_UNIFY_H
#define ZC_UNIFY_H

#include <stdint.h>

/* Unifies the definitions across the job, writes mapping tables and clock offsets into each
 * location's local definitions, and on rank 0 the global ones. Collective in an MPI job; every
 * rank calls it exactly once, with every location's gid set. */
void zc_unify_write(void *archive, uint64_t ts_min, uint64_t ts_max);

#endif
