/* SPDX-License-Identifier: MIT */
/* MeasurementOnOff placement (zc_marks.h). Nothing on a hot path writes a marker: they are placed
 * where a buffer is converted, from the log of transitions. The rule (docs/archive.md A18): an
 * OFF never falls inside a region. Recording stops at time T; what had started before T is
 * recorded to its end: a host call in progress, a device operation appended before T (it may run
 * long after). So on each location the OFF goes at T or at the end of the last item that began
 * before it, whichever is later, and the ON of the next window at its start or after that OFF.
 * Items that start after T and before the next window are in flight:
 *  - on a device stream, operations appended before T that had not started yet: the OFF waits
 *    until they ended (the stream was busy with recorded work until then);
 *  - on a thread, the calls that complete MPI requests started while recording (the only calls
 *    recorded while off): each gets ON at its Enter and OFF after its Leave, so a thread's off
 *    time stays off.
 * An OFF and an ON that would fall at the same time are left out (no gap). */
#include "zc_marks.h"

static bool log_get(const struct zc_marks_log *log, uint64_t k, uint64_t limit, uint64_t *ns, bool *on) {
    return log->get(log->ud, k, ns, on) && *ns <= limit;
}

void zc_marks_init(struct zc_marks *m, const struct zc_marks_log *log, uint64_t current, bool thread) {
    *m = (struct zc_marks){.mk = current, .m_on = true, .thread = thread};
    uint64_t ns;
    bool on;
    if (current > 0 && log->get(log->ud, current, &ns, &on) && on) m->mk--;
}

bool zc_marks_due(const struct zc_marks *m, const struct zc_marks_log *log) {
    uint64_t ns;
    bool on;
    return m->m_pend || log->get(log->ud, m->mk, &ns, &on);
}

static void mark(struct zc_ev *out, size_t *n, uint64_t t, bool on, uint64_t *last) {
    out[(*n)++] = (struct zc_ev){t, ZC_EV_MEASUREMENT, on ? 1u : 0u, 0, 0, 0};
    *last = t;
}

/* The markers due before an item that starts at t (UINT64_MAX: the end of the location, with the
 * entries up to limit), into out (room for max >= 2); returns how many. Call again while it
 * returns max - 1 or more. */
static size_t marks_before(struct zc_marks *m, const struct zc_marks_log *log, uint64_t t, uint64_t limit,
                           struct zc_ev *out, size_t max, uint64_t *last) {
    size_t n = 0;
    while (n + 2 <= max) {
        uint64_t ens = 0;
        bool eon = false, have = log_get(log, m->mk, limit, &ens, &eon);
        if (m->m_pend) {
            if (have && eon && t >= ens) { /* the next window opened before this item */
                uint64_t toff = m->m_off > *last ? m->m_off : *last, ton = ens > toff ? ens : toff;
                if (ton > toff) {
                    mark(out, &n, toff, false, last);
                    mark(out, &n, ton, true, last);
                }
                m->m_pend = false;
                m->mk++;
                continue;
            }
            if (t == UINT64_MAX) {
                mark(out, &n, m->m_off > *last ? m->m_off : *last, false, last);
                m->m_pend = false;
                m->m_on = false;
                continue;
            }
            if (m->thread) { /* an in-flight call: on for exactly its duration */
                uint64_t toff = m->m_off > *last ? m->m_off : *last, ton = t > toff ? t : toff;
                if (ton > toff) {
                    mark(out, &n, toff, false, last);
                    mark(out, &n, ton, true, last);
                }
                m->m_off = 0; /* off again right after it */
            }
            break;
        }
        if (!have || (t != UINT64_MAX && ens > t)) break;
        m->mk++;
        if (eon) {
            if (!m->m_on) {
                mark(out, &n, ens > *last ? ens : *last, true, last);
                m->m_on = true;
            }
        } else if (m->m_on) {
            m->m_pend = true;
            m->m_off = ens;
        }
    }
    return n;
}

/* Writes the markers due before t; the caller has written everything before. */
static void marks_write(struct zc_marks *m, const struct zc_marks_log *log, uint64_t t, uint64_t limit,
                        uint64_t *last, zc_marks_out_fn out, void *ud) {
    struct zc_ev mk[32];
    size_t k;
    do {
        k = marks_before(m, log, t, limit, mk, 32, last);
        if (k) out(ud, mk, k, SIZE_MAX);
    } while (k >= 31);
}

bool zc_marks_end(struct zc_marks *m, const struct zc_marks_log *log, uint64_t limit, uint64_t *last,
                  zc_marks_out_fn out, void *ud) {
    if (zc_marks_due(m, log)) marks_write(m, log, UINT64_MAX, limit, last, out, ud);
    return m->m_on;
}

/* The time from which markers may be due before an item: 0 while an OFF waits (any item may
 * place it), the next entry's time, or UINT64_MAX when the log has no entry to place. Read once a
 * batch and again after markers are written, not at every record: an entry the live log gains
 * meanwhile is placed at the next batch, as when it had come a moment later (zc_marks_end places
 * what is left). */
static uint64_t due_from(const struct zc_marks *m, const struct zc_marks_log *log) {
    uint64_t ns;
    bool on;
    if (m->m_pend) return 0;
    return log->get(log->ud, m->mk, &ns, &on) ? ns : UINT64_MAX;
}

void zc_marks_emit(struct zc_marks *m, const struct zc_marks_log *log, const struct zc_ev *ev, size_t n,
                   uint64_t last, zc_marks_out_fn out, void *ud) {
    size_t seg = 0, leave_at = SIZE_MAX;
    const struct zc_ev *call = NULL;
    int depth = 0;
    uint64_t due = due_from(m, log);
    for (size_t i = 0; i < n && due != UINT64_MAX; i++) {
        const struct zc_ev *e = &ev[i];
        bool after_metric = i > 0 && (ev[i - 1].type == ZC_EV_METRIC || ev[i - 1].type == ZC_EV_METRIC_MORE);
        /* an entry still ahead of the item places nothing (marks_before): no cut there */
        if (e->ts >= due && depth == 0 && leave_at == SIZE_MAX && !after_metric) {
            if (i > seg) out(ud, ev + seg, i - seg, seg);
            seg = i;
            marks_write(m, log, e->ts, UINT64_MAX, &last, out, ud);
            due = due_from(m, log);
        }
        if (e->type == ZC_EV_ENTER) depth++;
        else if (e->type == ZC_EV_LEAVE && depth > 0) depth--;
        if (e->ts > last) last = e->ts;
        if (e->type == ZC_EV_CALL_IRECV) {
            if (e->b > last) last = e->b;
        } else if (e->type == ZC_EV_CALL) {
            if (e->d && i + e->d < n) {
                leave_at = i + e->d;
                call = e;
            } else if (e->b > last) {
                last = e->b;
            }
        }
        if (i == leave_at) {
            if (call->b > last) last = call->b;
            leave_at = SIZE_MAX;
        }
    }
    /* nothing more due: the rest in one run */
    if (n > seg) out(ud, ev + seg, n - seg, seg);
}
