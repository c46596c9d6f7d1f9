/* SPDX-License-Identifier: MIT */
/* From the collector's event records (struct zc_ev, zc_ev.h) to OTF2 events. Shared by the
 * collector's writer (writer/zc_writer.c, zc_otf2.c) and zecoll-salvage (salvage/), which must
 * turn the same records into the same events: one definition of the conversion, no second copy. */
#ifndef ZC_EVT_H
#define ZC_EVT_H

#include "zc_ev.h"

#include <stddef.h>

#include <otf2/OTF2_EvtWriter.h>

/* The types zc_evt_normalize passes with a conversion and a clamp alone: the records inside a
 * call (zc_ev_in_call) but its placeholders (ZC_EV_MPI_NOP) and the second half of an NBC
 * completion (ZC_EV_MPI_NBC_REQID). Every type is below 32 (zc_ev.h). */
#define ZC_EVT_PLAIN_TYPES                                                                                           \
    ((((UINT64_C(1) << (ZC_EV_MPI_NOP + 1)) - 1) & ~((UINT64_C(1) << ZC_EV_MPI_SEND) - 1)) &                    \
     ~(UINT64_C(1) << ZC_EV_MPI_NOP) & ~(UINT64_C(1) << ZC_EV_MPI_NBC_REQID))
_Static_assert(ZC_EV_CALL_IRECV < 32, "every record type is below 32");
/* ... and, outside a call's run, the records of no call: regions, parameters, transfers, markers,
 * a Metric's first record (a device stream's records, all of them) */
#define ZC_EVT_SIMPLE_TYPES                                                                                          \
    (ZC_EVT_PLAIN_TYPES | UINT64_C(1) << ZC_EV_ENTER | UINT64_C(1) << ZC_EV_LEAVE | UINT64_C(1) << ZC_EV_PARAM_U64 |  \
     UINT64_C(1) << ZC_EV_RMA_GET | UINT64_C(1) << ZC_EV_RMA_PUT | UINT64_C(1) << ZC_EV_RMA_COMPLETE |                \
     UINT64_C(1) << ZC_EV_MEASUREMENT | UINT64_C(1) << ZC_EV_METRIC)

/* A record's time converted (conv: NULL when it is ns already) and raised to l, the time before
 * it (counted in *clamped); returns the new last time. */
static inline uint64_t zc_evt_stamp(struct zc_ev *e, uint64_t (*conv)(void *, uint64_t), void *cv, uint64_t l,
                                    uint64_t *clamped) {
    uint64_t t = conv ? conv(cv, e->ts) : e->ts;
    if (t < l) {
        t = l;
        ++*clamped;
    }
    return e->ts = t;
}

/* Makes a batch of records writable, in place: converts thread-location ticks to ns (conv, NULL
 * when they are ns already), raises every timestamp that is earlier than the one before it
 * (OTF2 drops such an event; *last carries the location's last time across batches) and counts
 * the application's records as OTF2 events (*nclamped: raised timestamps). `thread`: a thread
 * location, on which calls of flush_region (the collector's own buffer flushes) are not the
 * application's. Inline so that each caller gets its conversion inlined.
 *
 * One pass: the records inside a call of ZC_CALL_RUN are counted where the run ends (at the
 * first record that is not zc_ev_in_call, or the batch's end), not by a search ahead from the
 * call; the common records (ZC_EVT_PLAIN_TYPES) take one test of their type. */
static inline void zc_evt_normalize(struct zc_ev *ev, size_t n, bool thread, uint32_t flush_region,
                                    uint64_t (*conv)(void *, uint64_t), void *cv, uint64_t *last,
                                    uint64_t *nevents, uint64_t *nclamped) {
    uint64_t l = *last, clamped = 0, events = 0; /* one counter for all records: a register fewer */
    size_t leave_at = SIZE_MAX; /* a call of d records: its Leave comes after them (zc_ev.h) */
    struct zc_ev *call = NULL;
    struct zc_ev *run = NULL; /* an open call of ZC_CALL_RUN, from ev[run_at] */
    size_t run_at = 0;
    for (size_t i = 0; i < n;) {
        /* up to the end of the batch or of a call of d records, whose Leave then follows */
        size_t stop = leave_at < n ? leave_at + 1 : n;
        while (i < stop) {
            struct zc_ev *e = &ev[i++];
            uint32_t type = e->type;
            /* one test: a thread's records inside a call (thread: a constant in each caller), and
             * outside a call's run every record of a device stream that needs no more. With a
             * conversion (the writer, the journal's snapshot: the collector's own records in
             * memory, whose types are the enum's) the bit test alone, on type & 63 (what bt does):
             * a type of 32-63 reads 0 (the masks are below 32), and no code writes one above;
             * -2 instructions a record. Without one (device streams, zecoll-salvage reading a
             * journal that may be damaged) the type is bounded first. */
            if (__builtin_expect(
                    (conv || type < 32) && ((thread || run ? ZC_EVT_PLAIN_TYPES : ZC_EVT_SIMPLE_TYPES) >> (type & 63) & 1), 1)) {
                l = zc_evt_stamp(e, conv, cv, l, &clamped);
                events++;
                continue;
            }
            if (run && !zc_ev_in_call(type)) { /* the run ended with the record before */
                run->d = i - run_at - 2;
                if (run->b < l) run->b = l; /* a call's Leave after its Enter: not a clamp of its own */
                l = run->b;
                run = NULL;
            }
            if (type == ZC_EV_MPI_NOP) { /* not written: keeps its place in its call */
                e->ts = l;
                continue;
            }
            l = zc_evt_stamp(e, conv, cv, l, &clamped);
            events++;
            if (type == ZC_EV_CALL) {
                if (conv) e->b = conv(cv, e->b);
                events += e->c ? 2 : 1;
                if (e->a == flush_region && thread) events -= 2; /* ours, not the app's */
                if (e->d == ZC_CALL_RUN) {
                    run = e;
                    run_at = i - 1;
                } else if (e->d && i - 1 + e->d < n) {
                    leave_at = i - 1 + e->d;
                    stop = leave_at + 1;
                    call = e;
                } else {
                    if (e->b < l) e->b = l;
                    l = e->b;
                }
            } else if (type == ZC_EV_CALL_IRECV) { /* Enter, [callsite], MpiIrecvRequest, Leave */
                if (conv) e->b = conv(cv, e->b);
                events += e->c ? 3 : 2;
                if (e->b < l) e->b = l;
                l = e->b;
            } else if (type == ZC_EV_BUFFER_FLUSH && conv) {
                e->b = conv(cv, e->b);
            } else if (type == ZC_EV_MPI_NBC_REQID || type == ZC_EV_METRIC_MORE) {
                events--; /* part of the NonBlockingCollectiveComplete / Metric before it */
            }
        }
        if (i == leave_at + 1) { /* the call's records are all there */
            if (call->b < l) call->b = l;
            l = call->b;
            leave_at = SIZE_MAX;
        }
    }
    if (run) {
        run->d = n - run_at - 1;
        if (run->b < l) run->b = l;
        l = run->b;
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
