/* SPDX-License-Identifier: MIT */
/* From the collector's event records (struct zc_ev, zc_ev.h) to OTF2 events. Shared by the
 * collector's writer (writer/zc_writer.c, zc_otf2.c) and zecoll-salvage (salvage/), which must
 * turn the same records into the same events: one definition of the conversion, no second copy. */
#ifndef ZC_EVT_H
#define ZC_EVT_H

#include "zc_ev.h"

#include <stddef.h>

#include <otf2/OTF2_EvtWriter.h>

/* Makes a batch of records writable, in place: converts thread-location ticks to ns (conv, NULL
 * when they are ns already), raises every timestamp that is earlier than the one before it
 * (OTF2 drops such an event; *last carries the location's last time across batches) and counts
 * the application's records as OTF2 events (*nclamped: raised timestamps). `thread`: a thread
 * location, on which calls of flush_region (the collector's own buffer flushes) are not the
 * application's. Inline so that each caller gets its conversion inlined. */
static inline void zc_evt_normalize(struct zc_ev *ev, size_t n, bool thread, uint32_t flush_region,
                                    uint64_t (*conv)(void *, uint64_t), void *cv, uint64_t *last,
                                    uint64_t *nevents, uint64_t *nclamped) {
    uint64_t l = *last, clamped = 0, events = 0;
    size_t leave_at = SIZE_MAX; /* a call's Leave comes after the records inside it (zc_ev.h) */
    struct zc_ev *call = NULL;
    for (size_t i = 0; i < n; i++) {
        struct zc_ev *e = &ev[i];
        if (e->type == ZC_EV_MPI_NOP) { /* not written: keeps its place in its call */
            e->ts = l;
            if (i == leave_at) {
                if (call->b < l) call->b = l;
                l = call->b;
                leave_at = SIZE_MAX;
            }
            continue;
        }
        uint64_t t = conv ? conv(cv, e->ts) : e->ts;
        if (t < l) {
            t = l;
            clamped++;
        }
        e->ts = l = t;
        events++;
        if (e->type == ZC_EV_CALL) {
            if (e->d == ZC_CALL_RUN) { /* count the records inside it */
                size_t k = 0;
                while (i + 1 + k < n && zc_ev_in_call(ev[i + 1 + k].type)) k++;
                e->d = k;
            }
            if (conv) e->b = conv(cv, e->b);
            events += e->c ? 2 : 1;
            if (e->a == flush_region && thread) events -= 2; /* ours, not the app's */
            if (e->d && i + e->d < n) {
                leave_at = i + e->d;
                call = e;
            } else {
                if (e->b < l) e->b = l; /* a call's Leave after its Enter: not a clamp of its own */
                l = e->b;
            }
        } else if (e->type == ZC_EV_BUFFER_FLUSH && conv) {
            e->b = conv(cv, e->b);
        } else if (e->type == ZC_EV_MPI_NBC_REQID || e->type == ZC_EV_METRIC_MORE) {
            events--; /* part of the NonBlockingCollectiveComplete / Metric before it */
        }
        if (i == leave_at) {
            if (call->b < l) call->b = l;
            l = call->b;
            leave_at = SIZE_MAX;
        }
    }
    *last = l;
    *nclamped += clamped;
    *nevents += events;
}

/* Writes a normalized batch (whole puts) to w with local definition ids; param_callsite is the
 * "callsite id" parameter, metric_types the OTF2_Type of each value of the process's metric class
 * (local metric 0; NULL: none, Metric records are skipped). Widens [*ts_min, *ts_max] to the
 * batch's times. Returns OTF2_SUCCESS or the first error (the events after it are not written). */
OTF2_ErrorCode zc_evt_write(OTF2_EvtWriter *w, const struct zc_ev *ev, size_t n, uint32_t param_callsite,
                            const uint8_t *metric_types, uint64_t *ts_min, uint64_t *ts_max);

#endif
