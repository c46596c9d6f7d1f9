/* SPDX-License-Identifier: MIT */
/* MeasurementOnOff placement (docs/archive.md A18): from a location's records and its rank's log
 * of window transitions to the markers between the records. Shared by the collector's writer
 * (zc_loc.c, with the live log of zc_window.c) and zecoll-salvage (with the log the journal
 * kept), so a salvaged archive has the markers the complete one would have had. */
#ifndef ZC_MARKS_H
#define ZC_MARKS_H

#include "zc_core.h"

/* A log of transitions: entry k is the k-th (entry 0: the state at start-up), with its host
 * time (ns, never decreasing) and whether recording turned on. get returns false for an entry
 * not (yet) there. */
struct zc_marks_log {
    bool (*get)(void *ud, uint64_t k, uint64_t *ns, bool *on);
    void *ud;
};

/* The collector's live log (zc_window.c), for its locations (zc_loc.c). */
extern const struct zc_marks_log zc_win_marks_log;

/* struct zc_marks, one location's state: zc_core.h (a field of struct zc_loc). */

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
