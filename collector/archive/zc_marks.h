/* SPDX-License-Identifier: MIT */
/* MeasurementOnOff placement (docs/archive.md A18): from a location's records and its rank's log
 * of window transitions to the markers between the records. Shared by the collector's writer
 * (writer/zc_writer.c, with the live log of core/zc_window.c) and zecoll-salvage (with the log
 * the journal kept), so a salvaged archive has the markers the complete one would have had. */
#ifndef ZC_MARKS_H
#define ZC_MARKS_H

#include "zc_ev.h"

#include <stddef.h>

/* A log of transitions: entry k is the k-th (entry 0: the state at start-up), with its host
 * time (ns, never decreasing) and whether recording turned on. get returns false for an entry
 * not (yet) there. */
struct zc_marks_log {
    bool (*get)(void *ud, uint64_t k, uint64_t *ns, bool *on);
    void *ud;
};

/* One location's placement (a field of struct zc_loc; salvage keeps one per location): the next
 * entry of the log to place, whether the markers written so far leave it on, and an OFF waiting
 * (at m_off or later) for what was in flight when recording stopped. */
struct zc_marks {
    uint64_t mk, m_off;
    bool m_on, m_pend, thread;
};

/* A new location: it starts with the latest off period (the OFF now in force, or, while
 * recording is on, the last OFF and the ON that ended it). current: the log's latest entry. */
void zc_marks_init(struct zc_marks *m, const struct zc_marks_log *log, uint64_t current, bool thread);

/* Whether markers may be due (a pending OFF, or an entry not placed yet). */
bool zc_marks_due(const struct zc_marks *m, const struct zc_marks_log *log);

/* Where the output goes: a run of records (index: the position of ev[0] in the batch given to
 * zc_marks_emit) or markers (index SIZE_MAX). */
typedef void (*zc_marks_out_fn)(void *ud, const struct zc_ev *ev, size_t n, size_t index);

/* A normalized batch (zc_evt_normalize) with the markers due between its items: never inside a
 * region, nor between a Metric and its Enter or Leave. last: the location's last time before the
 * batch. */
void zc_marks_emit(struct zc_marks *m, const struct zc_marks_log *log, const struct zc_ev *ev, size_t n,
                   uint64_t last, zc_marks_out_fn out, void *ud);

/* The location's end: the markers of every entry up to `limit` (UINT64_MAX: all), a pending OFF
 * written (after *last). Returns whether recording is on at the end (no OFF in force). */
bool zc_marks_end(struct zc_marks *m, const struct zc_marks_log *log, uint64_t limit, uint64_t *last,
                  zc_marks_out_fn out, void *ud);

#endif
