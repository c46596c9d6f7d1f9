/* SPDX-License-Identifier: MIT */
/* PAPI counters per host thread (papi.events), read where a thread records a sampled call and
 * written as OTF2 Metric records right before its Enter and its Leave (docs/archive.md A19).
 * libpapi is loaded with dlopen on the first sample, so a process without events never loads it
 * and libzecoll.so has no dependency on it. */
#ifndef ZC_PAPI_H
#define ZC_PAPI_H

#include "zc_ev.h"  /* the records, ZC_PAPI_MAX_EVENTS and their layout */
#include "zc_loc.h" /* struct zc_thread */

#include <stddef.h>
#include <stdint.h>

/* Reads the calling thread's counters into records (one ZC_EV_METRIC, then ZC_EV_METRIC_MORE),
 * their ts left for the caller to stamp with zc_papi_stamp. The first call of a thread starts
 * its event set (and the first of the process loads PAPI). Returns the number of records: 0 when
 * nothing was read (PAPI off, or it just failed: an internal failure turns it off).
 *
 * Callers sample only calls they record: whatever decides that a call is recorded (collector
 * active, the layer on, recording windows) also decides that it is sampled. The places that call
 * this: zc_mpi_begin_slow (c->events), zc_mpi_special_begin/end (special_thread: MPI_Init and
 * MPI_Finalize) and zc_ze_papi_enter (c->t0: the call has an Enter time). The counters are
 * read inside the region: after its Enter time was taken and before its Leave time is, so a
 * counter's delta never includes time outside [Enter, Leave]. */
size_t zc_papi_read(struct zc_thread *t, struct zc_ev *rec);
/* On a thread that exits, before its slot goes to the next thread: its set is stopped, and its
 * counts carried on by the slot's next thread (a location's counters never go down). */
void zc_papi_thread_exit(struct zc_thread *t);

static inline void zc_papi_stamp(struct zc_ev *rec, size_t n, uint64_t ts) {
    for (size_t i = 0; i < n; i++) rec[i].ts = ts;
}

/* The writer's side: the value types of the process's metric class (OTF2_Type, one per value of
 * a ZC_EV_METRIC record; NULL before PAPI started). The class is local metric id 0. */
const uint8_t *zc_papi_otf2_types(void);

#endif
