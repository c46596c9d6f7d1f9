/* SPDX-License-Identifier: MIT */
/* Where the collector's start and end take their time (ZECOLL_PHASE_TIMES): marks at the ends of
 * the steps of the constructor, MPI_Init's and MPI_Finalize's hooks and the finalize, each with
 * the wall time and the process's CPU time (every thread's: ours, MPI's), printed per rank at
 * exit on stderr. Only at start and end: never on a recording path. */
#ifndef ZC_PHASE_H
#define ZC_PHASE_H

/* The step that ends now is `name` (a string literal or another string that lives as long as the
 * process). Costs a load and a branch while the knob is off. */
void zc_phase(const char *name);
/* The constructor's: the first mark ("start"), and the marks until zc_phase_settle, kept before
 * the knobs are read; zc_phase_settle drops them unless the knob is on. */
void zc_phase_start(void);
void zc_phase_settle(void);

#endif
