/* SPDX-License-Identifier: MIT */
/* The writer: where a location's full buffer goes (zc_loc_sink, installed here), and the two
 * sinks it feeds, the OTF2 archive (zc_otf2.c) and the salvage journal (zc_journal.c).
 *
 * The journal's flusher seals the event files through it (snapshot): what the writer encodes to
 * an event file it need not journal.
 *
 * A full buffer is converted and written to OTF2 by the writer threads (two stages, see "writer
 * threads" below) while the location fills another (allocated when the first one fills: only
 * busy locations have more than one). Converting is about a third of the cost of a recorded
 * call (50 of 150 ns for an MPI call, measured): the application thread only swaps buffers. A
 * location's buffers reach the archive in order; a location that fills a buffer while its others
 * are all in flight waits (shown by its "zecoll buffer flush" region). Without the threads (they
 * could not be started, or after fork) buffers are converted in place. */
#include "zc_writer.h"

#include "zc_journal.h"
#include "zc_otf2.h"
#include "zc_otf2_io.h"

#include "zc_clock.h"
#include "zc_defs.h"
#include "zc_evt.h"
#include "zc_knobs.h"
#include "zc_launcher.h"
#include "zc_loc.h"
#include "zc_log.h"
#include "zc_marks.h"
#include "zc_proc.h"
#include "zc_sig.h"
#include "zc_window.h"

#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---------------------------------------------------------------- measurement markers */
/* MeasurementOnOff records are placed where a buffer is converted (zc_marks.c), from the live
 * log of transitions (core/zc_window.c): nothing on a hot path writes them. */
struct marks_out {
    struct zc_loc *loc;
    uint64_t first; /* stream index of the batch's first record */
};

static void marks_out(void *ud, const struct zc_ev *ev, size_t n, size_t index) {
    struct marks_out *o = ud;
    if (index == SIZE_MAX) zc_otf2_write_marks(o->loc, ev, n);
    else zc_otf2_write(o->loc, ev, n, o->first + index);
}

/* At the end of the run: the measurement transitions not yet placed on the location. */
static void marks_end(struct zc_loc *loc) {
    if (!loc->nevents) return; /* a location without events gets no markers either */
    uint64_t last = loc->last_ts;
    struct marks_out o = {loc, 0};
    zc_marks_end(&loc->marks, &zc_win_marks_log, UINT64_MAX, &last, marks_out, &o);
    loc->last_ts = last;
}

/* ---------------------------------------------------------------- conversion */
/* Records of a thread location from stream index `first` on (n of them, in place) made final by
 * the resolver, those not made final before (a journal's snapshot resolves the buffer's front in
 * place). Callers are serialised per location: the writer of its buffer, or snapshot() under
 * wq_lock after that writer finished. */
static void loc_resolve(struct zc_loc *loc, struct zc_ev *ev, size_t n, uint64_t first) {
    size_t r = loc->resolved > first ? (size_t)(loc->resolved - first) : 0;
    if (r < n) zc_loc_resolver(loc, ev + r, n - r);
    if (loc->resolved < first + n) loc->resolved = first + n;
}

/* Converts a buffer for the writer: thread locations' ticks to ns, then clamps (OTF2 drops an
 * event older than its predecessor; it is clamped instead and counted) and counts the events.
 * One buffer per location at a time (the converter's, or the in-place writer's). */
static void loc_convert(struct zc_loc *loc, struct zc_ev *ev, size_t n, uint64_t first) {
    struct zc_tickconv tc;
    bool ticks = loc->kind == ZC_LOC_THREAD;
    if (ticks && zc_loc_resolver) loc_resolve(loc, ev, n, first);
    if (ticks) { /* two calls, so that each inlines its own conversion (none, or the ticks') */
        zc_tickconv_begin(&tc);
        zc_evt_normalize(ev, n, true, zc_region_flush, zc_tickconv_cb, &tc, &loc->last_ts, &loc->nevents, &loc->nclamped);
    } else {
        zc_evt_normalize(ev, n, false, zc_region_flush, NULL, NULL, &loc->last_ts, &loc->nevents, &loc->nclamped);
    }
}

/* With windows, the measurement markers due are written between the items (see above). `last`:
 * the location's last time before the batch. */
static void loc_write_marked(struct zc_loc *loc, struct zc_ev *ev, size_t n, uint64_t first, uint64_t last) {
    struct marks_out o = {loc, first};
    zc_marks_emit(&loc->marks, &zc_win_marks_log, ev, n, last, marks_out, &o);
}

/* Converts and writes a buffer in place (no writer threads, finalize). */
static void loc_emit(struct zc_loc *loc, struct zc_ev *ev, size_t n, uint64_t first) {
    uint64_t last = loc->last_ts;
    loc_convert(loc, ev, n, first);
    if (__builtin_expect(zc_marks_due(&loc->marks, &zc_win_marks_log), 0)) loc_write_marked(loc, ev, n, first, last);
    else zc_otf2_write(loc, ev, n, first);
    atomic_fetch_add_explicit(&zc_progress, 1, memory_order_relaxed);
}

/* ---------------------------------------------------------------- writer threads */
/* A full buffer goes through two threads, a pipeline: the converter resolves, converts and
 * journals it (zc_otf2_write_begin), then the emitter hands it to OTF2 (zc_otf2_write_end) while
 * the converter goes on with the next. OTF2's encoding is ~60% of the writing (callgrind): one
 * thread doing all of it could not keep up with a thread making MPI calls back to back, which
 * then waited for it (bench/results/rounds.md). A location has at most ZC_LOC_FLIGHT buffers in flight,
 * each in one stage; both queues are in order, so its buffers reach OTF2 in order. With
 * ZECOLL_WRITER_STAGES=1, or if the emitter cannot be started, the converter writes too and one
 * buffer per location is in flight, as before. */
static pthread_mutex_t wq_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t conv_work = PTHREAD_COND_INITIALIZER, emit_work = PTHREAD_COND_INITIALIZER,
                      wq_done = PTHREAD_COND_INITIALIZER;
struct wqueue {
    struct zc_wbatch *head, *tail;
};
static struct wqueue conv_q, emit_q;
static enum { WQ_NONE, WQ_RUNNING, WQ_FAILED } wq_state;
static bool emitter; /* the emitter thread runs (wq_lock) */

static void wq_push(struct wqueue *q, struct zc_wbatch *b) {
    b->next = NULL;
    if (q->tail) q->tail->next = b;
    else q->head = b;
    q->tail = b;
}

static struct zc_wbatch *wq_pop_wait(struct wqueue *q, pthread_cond_t *cv) {
    while (!q->head) pthread_cond_wait(cv, &wq_lock);
    struct zc_wbatch *b = q->head;
    q->head = b->next;
    if (!q->head) q->tail = NULL;
    return b;
}

/* wq_lock held: the batch's buffer is empty again */
static void batch_done_locked(struct zc_wbatch *b) {
    struct zc_loc *l = b->loc;
    l->spare[l->nspare++] = b->buf;
    b->buf = NULL;
    b->busy = false;
    l->nflight--;
    pthread_cond_broadcast(&wq_done);
}

/* wq_lock held: until none of loc's buffers is in a writer's hands before its conversion (its
 * records are then converted and journaled), or in anyone's (all) */
static void wait_converted_locked(struct zc_loc *loc) {
    while (loc->nconv) pthread_cond_wait(&wq_done, &wq_lock);
}
static void wait_written_locked(struct zc_loc *loc) {
    while (loc->nflight) pthread_cond_wait(&wq_done, &wq_lock);
}

static void *converter_main(void *arg) {
    (void)arg;
    pthread_mutex_lock(&wq_lock);
    for (;;) {
        struct zc_wbatch *b = wq_pop_wait(&conv_q, &conv_work);
        struct zc_loc *l = b->loc;
        bool two = emitter;
        pthread_mutex_unlock(&wq_lock);
        uint64_t last = l->last_ts;
        loc_convert(l, b->buf, b->n, b->first);
        bool emit = false;
        if (__builtin_expect(zc_marks_due(&l->marks, &zc_win_marks_log), 0)) {
            /* markers go between the records: written here, once the location's earlier buffer
             * is written (the emitter has none of its buffers: the others in flight, this one
             * and a later one, are unconverted) */
            pthread_mutex_lock(&wq_lock);
            while (l->nflight != l->nconv) pthread_cond_wait(&wq_done, &wq_lock);
            pthread_mutex_unlock(&wq_lock);
            loc_write_marked(l, b->buf, b->n, b->first, last);
        } else if (two) {
            emit = zc_otf2_write_begin(l, b->buf, b->n, b->first);
        } else {
            zc_otf2_write(l, b->buf, b->n, b->first); /* the OTF2 writer has its own lock */
        }
        atomic_fetch_add_explicit(&zc_progress, 1, memory_order_relaxed);
        pthread_mutex_lock(&wq_lock);
        l->nconv--;
        if (emit) {
            wq_push(&emit_q, b);
            pthread_cond_signal(&emit_work);
            pthread_cond_broadcast(&wq_done); /* converted: a snapshot may go on */
        } else {
            batch_done_locked(b);
        }
    }
    return NULL;
}

static void *emitter_main(void *arg) {
    (void)arg;
    pthread_mutex_lock(&wq_lock);
    for (;;) {
        struct zc_wbatch *b = wq_pop_wait(&emit_q, &emit_work);
        pthread_mutex_unlock(&wq_lock);
        zc_otf2_write_end(b->loc, b->buf, b->n, b->first);
        atomic_fetch_add_explicit(&zc_progress, 1, memory_order_relaxed);
        pthread_mutex_lock(&wq_lock);
        batch_done_locked(b);
    }
    return NULL;
}

static int spawn_detached(const char *name, void *(*fn)(void *)) {
    pthread_t t;
    int rc = zc_thread_spawn(&t, name, fn, NULL); /* signals are the application's */
    if (rc == 0) pthread_detach(t);
    return rc;
}

/* ZECOLL_WRITER_STAGES, 0 (auto): two stages only where they can run beside the application's
 * thread. Measured on the 16-core host (bench/results/rounds.md): with the process on 3 or 4 CPUs the
 * MPI loop's waits for the writer vanish (15 ns per call before) and it runs 15-19 ns faster;
 * on 2 CPUs, three busy threads share them and it runs 8-27 ns slower. The CPUs a process has
 * to itself: those the writer threads run on (zc_thread_cpus: an MPI launcher's binding applies
 * to every thread), but no more than its share of the node's CPUs
 * among the job's ranks there, whose masks may overlap (Open MPI binds to a socket for more than
 * two ranks: every rank's mask is then the whole socket). */
static unsigned writer_stages(int *cpus, unsigned *ranks) {
    *cpus = 0;
    *ranks = 0;
    if (zc_knobs.WRITER_STAGES) return (unsigned)zc_knobs.WRITER_STAGES;
    cpu_set_t set;
    if (zc_thread_cpus(&set) < 0) return 1;
    *cpus = CPU_COUNT(&set);
    *ranks = zc_launcher_local_ranks();
    long share = zc_launcher_cpu_share();
    if (share < 0) share = *cpus;
    return (*cpus < share ? *cpus : share) >= 3 ? 2 : 1;
}

/* wq_lock held */
static bool writer_start_locked(void) {
    if (wq_state != WQ_NONE) return wq_state == WQ_RUNNING;
    wq_state = spawn_detached("zc-convert", converter_main) == 0 ? WQ_RUNNING : WQ_FAILED;
    int cpus;
    unsigned ranks, stages = writer_stages(&cpus, &ranks);
    if (wq_state == WQ_RUNNING && stages > 1) emitter = spawn_detached("zc-emit", emitter_main) == 0;
    if (wq_state == WQ_RUNNING) {
        if (cpus)
            ZC_INFO("writer threads: %u (ZECOLL_WRITER_STAGES=0: %u, this process may run on %d of %ld CPUs, %u rank(s) "
                    "of the job on this node)",
                    emitter ? 2u : 1u, stages, cpus, sysconf(_SC_NPROCESSORS_ONLN), ranks);
        else ZC_INFO("writer threads: %u (ZECOLL_WRITER_STAGES=%u)", emitter ? 2u : 1u, stages);
    }
    return wq_state == WQ_RUNNING;
}

/* zc_loc_sink.write_out: hands loc's full buffer to the writer threads, or writes it out here if
 * that is not possible (called with loc held). The buffer changes (and its count restarts) under
 * wq_lock, so that the journal's flusher, which copies from it under that lock, never sees a
 * buffer that the converter converts in place (snapshot); written in place, it stays under the
 * lock for the same reason. */
static void write_out(struct zc_loc *loc) {
    pthread_mutex_lock(&wq_lock);
    while (loc->nflight >= (emitter ? ZC_LOC_FLIGHT : 1)) pthread_cond_wait(&wq_done, &wq_lock);
    /* memory short (a buffer had to be made smaller): no more buffers of ours, this one is
     * written in place by the thread that filled it */
    if (!loc->nspare && wq_state != WQ_FAILED && !zc_loc_memory_short()) {
        struct zc_ev *b = malloc(loc->cap * sizeof(*b));
        if (b) loc->spare[loc->nspare++] = b;
    }
    size_t n = loc->n;
    if (loc->nspare && zc_active() && writer_start_locked()) {
        struct zc_wbatch *b = loc->wb; /* a free one: fewer than ZC_LOC_FLIGHT are in flight */
        while (b->busy) b++;
        *b = (struct zc_wbatch){loc, loc->buf, n, loc->jbase, NULL, true};
        loc->nflight++;
        loc->nconv++;
        loc->buf = loc->spare[--loc->nspare];
        wq_push(&conv_q, b);
        pthread_cond_signal(&conv_work);
    } else {
        wait_written_locked(loc); /* in order: after the buffers in flight */
        loc_emit(loc, loc->buf, n, loc->jbase);
    }
    loc->jbase += n;
    zc_loc_publish(loc, 0);
    pthread_mutex_unlock(&wq_lock);
}

static int batch_cmp(const void *a, const void *b) {
    const struct zc_wbatch *x = *(const struct zc_wbatch *const *)a, *y = *(const struct zc_wbatch *const *)b;
    return x->first < y->first ? -1 : x->first > y->first;
}

/* The journal's feed (zc_journal.h): waits until the writer threads have converted loc's
 * buffers, seals its event file (zc_otf2_seal: records below K are in it), then copies its
 * records from max(from, K) on: those of its buffers in flight (converted, not encoded yet:
 * the writer journals none of them while it leaves them to the seals), then its current
 * buffer's. All under wq_lock, so that no buffer in flight is given back and refilled before
 * it is copied (a batch the emitter encodes after the seal is copied too: beyond the seal).
 * The seal's pwrite (up to a chunk, 1 MiB) runs under wq_lock too, so an application thread
 * handing over a buffer may wait for it. Taking it out needs the seal split in two: its point
 * (K and the chunk's used part, under wq_lock) and, after wq_lock, the pwrite and SEAL record
 * under the OTF2 lock alone. That is safe for the bytes (the encoder, the only writer of the
 * chunk, under the OTF2 lock, only appends within a chunk; its header's last event number is set
 * when the chunk ends, and then own_sink writes the whole chunk from `written`, which the split
 * must leave unchanged until its pwrite), but not yet for the journal: a marker's seal between
 * the two steps makes the later SEAL record a smaller one (salvage rejects seals that shrink:
 * drop it), and a pwrite that fails after the copy began at K loses the records below K that
 * the old seal does not hold (today the copy then starts at the old seal). Not done (issue 22,
 * round 10): both need handling and the TSan tests. */
static void snapshot(struct zc_loc *loc, uint64_t from, struct zc_ev *out, size_t max, struct zc_jrn_snap *sn) {
    pthread_mutex_lock(&wq_lock);
    wait_converted_locked(loc);
    uint64_t k = zc_otf2_seal(loc, &sn->sync_fd);
    if (k > from) from = k;
    const struct zc_wbatch *fl[ZC_LOC_FLIGHT];
    size_t nf = 0, o = 0;
    for (int i = 0; i < ZC_LOC_FLIGHT; i++)
        if (loc->wb[i].busy) fl[nf++] = &loc->wb[i];
    if (nf > 1) qsort(fl, nf, sizeof(*fl), batch_cmp);
    for (size_t i = 0; i < nf; i++) {
        const struct zc_wbatch *b = fl[i];
        if (b->first + b->n <= from || (o && b->first != sn->first_conv + o)) continue;
        size_t s = from > b->first ? (size_t)(from - b->first) : 0, c = b->n - s;
        if (c > max - o) c = max - o;
        if (!o) sn->first_conv = b->first + s;
        memcpy(out + o, b->buf + s, c * sizeof(*out));
        o += c;
    }
    sn->nconv = o;
    if (o) from = sn->first_conv + o;
    out += o;
    max -= o;
    /* the owner only appends beyond n (acquire: the records below it are complete); it cannot
     * change buf, n's restart or jbase while we hold wq_lock */
    size_t n = __atomic_load_n(&loc->n, __ATOMIC_ACQUIRE);
    size_t i = from > loc->jbase ? (size_t)(from - loc->jbase) : 0, cnt = 0;
    /* records the writer makes final (MPI requests matched by it): made final here, in place and
     * in order, so that the journal holds what the archive will (the owner only appends) */
    if (loc->kind == ZC_LOC_THREAD && zc_loc_resolver && i < n) loc_resolve(loc, loc->buf, n, loc->jbase);
    if (i < n) {
        cnt = n - i < max ? n - i : max;
        memcpy(out, loc->buf + i, cnt * sizeof(*out));
    }
    sn->first_cur = loc->jbase + i;
    sn->ncur = cnt;
    pthread_mutex_unlock(&wq_lock);
}

/* After fork the child has no writer thread (and runs untraced): never wait for it. */
static void writer_fork_child(void) {
    pthread_mutex_init(&wq_lock, NULL);
    pthread_cond_init(&conv_work, NULL);
    pthread_cond_init(&emit_work, NULL);
    pthread_cond_init(&wq_done, NULL);
    conv_q = emit_q = (struct wqueue){NULL, NULL};
    wq_state = WQ_FAILED;
    emitter = false;
    for (struct zc_loc *l = zc_loc_list(); l; l = l->next) {
        l->nflight = l->nconv = 0;
        for (int i = 0; i < ZC_LOC_FLIGHT; i++) l->wb[i].busy = false;
    }
}

/* Flushes every location (at finalize), after the writer threads finished what they were given. */
static void flush_all(void) {
    zc_loc_quiesce();
    for (struct zc_loc *l = zc_loc_list(); l; l = l->next) {
        zc_loc_lock(l);
        pthread_mutex_lock(&wq_lock);
        wait_written_locked(l);
        pthread_mutex_unlock(&wq_lock);
        if (l->n) loc_emit(l, l->buf, l->n, l->jbase);
        l->jbase += l->n;
        zc_loc_publish(l, 0);
        marks_end(l);
        zc_loc_unlock(l);
    }
}

/* ---------------------------------------------------------------- the writer's lifecycle */
static void loc_created(struct zc_loc *loc) {
    (void)loc;
    zc_jrn_start(); /* the journal's flusher, once */
}

static const struct zc_jrn_feed feed = {snapshot, zc_otf2_open_for_journal};

/* Installs the writer's side of the locations and of the journal: before any location exists. */
static int writer_init(void) {
    zc_jrn_feed(&feed);
    zc_loc_sink = (struct zc_loc_sink){write_out, loc_created};
    return zc_otf2_init();
}

/* The archive closes after every buffer reached it: what was held for an MPI job that never came
 * goes to a per-process archive first. */
static void writer_finalize(void) {
    if (!zc_otf2_close_begin()) return;
    flush_all();
    zc_otf2_close();
}

static void writer_sub_fork_child(void) {
    writer_fork_child();
    zc_otf2_io_fork_child();
}

const struct zc_subsystem zc_writer_subsystem = {.name = "writer",
                                                 .init = writer_init,
                                                 .post_mpi_init = zc_otf2_start_job,
                                                 .finalize = writer_finalize,
                                                 .fork_child = writer_sub_fork_child};
