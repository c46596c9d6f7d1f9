/* SPDX-License-Identifier: MIT */
/* Locations (one per host thread, one per device stream lane) and their event buffers. A host
 * thread appends to its own buffer; device streams are appended to by whichever thread drains
 * them. Each location has a busy flag so the finalizer can take a buffer that its owner might
 * still be writing. Buffers are allocated when the location is created, so the hot path never
 * allocates.
 *
 * A full buffer is converted and written to OTF2 by the writer threads (two stages, see "writer
 * threads" below) while the location fills another (allocated when the first one fills: only
 * busy locations have more than one). Converting is about a third of the cost of a recorded
 * call (50 of 150 ns for an MPI call, measured): the application thread now only swaps buffers.
 * A location's buffers reach the archive in order; a location that fills a buffer while its
 * others are all in flight waits (shown by its "zecoll buffer flush" region). Without the
 * threads (they could not be started, or after fork) buffers are converted in place as before.
 *
 * Recording costs the application thread a copy into its own buffer and nothing else: timestamps
 * stay TSC ticks, clamping and counting wait for the writer (loc_convert), and a thread writes its
 * own location without a lock or atomic instruction. That last part needs the finalizer, which
 * takes every buffer, to know that no owner is still writing: the owner marks itself busy with
 * a plain store (an odd sequence number) before it checks that the collector is active; the
 * finalizer clears `active` and runs membarrier(MEMBARRIER_CMD_GLOBAL), after which every thread
 * has passed a full barrier, so each owner either saw `active` cleared or is seen busy and
 * waited for. Without membarrier (seccomp, nohz_full kernels) owners lock instead. */
#include "zc_core.h"
#include "zc_papi.h"
#include "zc_evt.h"
#include "zc_marks.h"

#include <linux/membarrier.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The last ZC_LOC_RESERVE slots are kept for the batch that fills the buffer: it is stored
 * first, then the buffer is written out, and only then does a thread location record the flush
 * itself as a region, after the events it wrote (a call's events are stored when it returns, so
 * a flush region placed before them would push their times). */
#define ZC_LOC_RESERVE 16

bool zc_own_locked;
static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static struct zc_loc *_Atomic locs;
static uint32_t next_comm_rank, next_thread, next_stream;

struct zc_loc *zc_loc_list(void) { return atomic_load_explicit(&locs, memory_order_acquire); }

struct zc_loc *zc_loc_new(enum zc_loc_kind kind, uint32_t group, const char *name) {
    return zc_loc_new_cap(kind, group, name, 0);
}

/* Event buffers: ZECOLL_BUFFER_EVENTS each, unless that much memory cannot be had (an address
 * space limit, a cgroup, strict overcommit): then half, and half again, down to ZC_LOC_MIN_CAP,
 * said once with the variable and the size that worked; later locations start from that size. */
#define ZC_LOC_MIN_CAP 1024
static atomic_size_t cap_ceiling = SIZE_MAX;

static void no_memory(const char *name) {
    static atomic_bool once;
    if (!atomic_exchange(&once, true))
        ZC_WARN("ZECOLL_BUFFER_EVENTS=%llu: out of memory: cannot allocate even a %d-event buffer (%zu KiB) for %s: "
                "it, and any later thread or stream that cannot have one, is not recorded (its records are counted "
                "as dropped)",
                (unsigned long long)zc_knobs.BUFFER_EVENTS, ZC_LOC_MIN_CAP, ZC_LOC_MIN_CAP * sizeof(struct zc_ev) >> 10,
                name);
}

/* Records lost because their thread or stream could not have a buffer (summary: dropped). */
static atomic_uint_fast64_t lost_no_buffer;
void zc_loc_lost(uint64_t n) { atomic_fetch_add_explicit(&lost_no_buffer, n, memory_order_relaxed); }
uint64_t zc_loc_lost_count(void) { return atomic_load(&lost_no_buffer); }

static struct zc_ev *alloc_buffer(size_t *cap, const char *name) {
    size_t want = *cap, c = want < atomic_load(&cap_ceiling) ? want : atomic_load(&cap_ceiling);
    for (;; c /= 2) {
        if (c < ZC_LOC_MIN_CAP) c = ZC_LOC_MIN_CAP;
        struct zc_ev *b = malloc(c * sizeof(*b));
        if (b) {
            size_t before = c < want ? atomic_exchange(&cap_ceiling, c) : c;
            if (before == SIZE_MAX) /* the first reduction is said; later ones are details */
                ZC_WARN("ZECOLL_BUFFER_EVENTS=%zu: cannot allocate an event buffer of %zu MiB (%s): using buffers of %zu "
                        "events (%zu KiB) instead",
                        want, want * sizeof(*b) >> 20, strerror(ENOMEM), c, c * sizeof(*b) >> 10);
            else if (before > c)
                ZC_INFO("event buffers reduced again, to %zu events", c);
            *cap = c;
            return b;
        }
        if (c == ZC_LOC_MIN_CAP) break;
    }
    no_memory(name);
    return NULL;
}

struct zc_loc *zc_loc_new_cap(enum zc_loc_kind kind, uint32_t group, const char *name, size_t cap) {
    struct zc_loc *l = calloc(1, sizeof(*l));
    if (!l) {
        no_memory(name);
        return NULL;
    }
    l->cap = cap ? cap : zc_knobs.BUFFER_EVENTS;
    if (l->cap < ZC_LOC_MIN_CAP) l->cap = ZC_LOC_MIN_CAP;
    l->buf = alloc_buffer(&l->cap, name);
    if (!l->buf) {
        free(l);
        return NULL;
    }
    l->lim = l->cap - ZC_LOC_RESERVE;
    atomic_flag_clear(&l->busy);
    /* the location starts with the latest off period of the windows: the OFF now in force, or,
     * while recording is on, the last OFF and the ON that ended it (a thread that first calls
     * inside a window shows that nothing was measured before it) */
    zc_marks_init(&l->marks, &zc_win_marks_log, zc_win_log_current(), kind == ZC_LOC_THREAD);
    l->mk0 = l->marks.mk;
    l->kind = kind;
    l->group = group;
    snprintf(l->name, sizeof(l->name), "%s", name);
    pthread_mutex_lock(&reg_lock);
    l->comm_rank = next_comm_rank++;
    /* OTF2 location ids need not be dense: rank in the low half, kind and index above it.
     * zc_otf2 adds the rank when it opens the writer (the rank may not be known yet). */
    if (kind == ZC_LOC_THREAD) l->id = (uint64_t)next_thread++ << 32;
    else l->id = (UINT64_C(1) << 63) | ((uint64_t)next_stream++ << 32);
    l->next = atomic_load_explicit(&locs, memory_order_relaxed);
    /* release: a reader that sees the new head sees an initialised location */
    atomic_store_explicit(&locs, l, memory_order_release);
    pthread_mutex_unlock(&reg_lock);
    zc_jrn_start();
    return l;
}

static void put_events(struct zc_loc *loc, const struct zc_ev *ev, size_t n) {
    for (size_t i = 0; i < n; i++) loc->buf[loc->n + i] = ev[i];
    zc_loc_publish(loc, loc->n + n);
}

/* ---------------------------------------------------------------- measurement windows */
/* MeasurementOnOff records are placed where a buffer is converted (zc_marks.c), from the live
 * log of transitions (zc_window.c): nothing on a hot path writes them. */
static bool win_log_get(void *ud, uint64_t k, uint64_t *ns, bool *on) {
    (void)ud;
    return zc_win_log_get(k, ns, on);
}
const struct zc_marks_log zc_win_marks_log = {win_log_get, NULL};

struct marks_out {
    struct zc_loc *loc;
    uint64_t first; /* stream index of the batch's first record */
};

static void marks_out(void *ud, const struct zc_ev *ev, size_t n, size_t index) {
    struct marks_out *o = ud;
    if (index == SIZE_MAX) zc_otf2_write_marks(o->loc, ev, n);
    else zc_otf2_write(o->loc, ev, n, o->first + index);
}

void zc_loc_marks_end(struct zc_loc *loc) {
    if (!loc->nevents) return; /* a location without events gets no markers either */
    uint64_t last = loc->last_ts;
    struct marks_out o = {loc, 0};
    zc_marks_end(&loc->marks, &zc_win_marks_log, UINT64_MAX, &last, marks_out, &o);
    loc->last_ts = last;
}

void (*zc_loc_resolver)(struct zc_loc *loc, struct zc_ev *ev, size_t n);

/* Records of a thread location from stream index `first` on (n of them, in place) made final by
 * the resolver, those not made final before (a journal's snapshot resolves the buffer's front in
 * place). Callers are serialised per location: the writer of its buffer, or zc_loc_snapshot under
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
 * then waited for it (bench/README.md). A location has at most ZC_LOC_FLIGHT buffers in flight,
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
        zc_otf2_write_end(b->loc, b->buf, b->n);
        atomic_fetch_add_explicit(&zc_progress, 1, memory_order_relaxed);
        pthread_mutex_lock(&wq_lock);
        batch_done_locked(b);
    }
    return NULL;
}

static int spawn_detached(void *(*fn)(void *)) {
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old); /* signals are the application's */
    pthread_t t;
    int rc = pthread_create(&t, NULL, fn, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc == 0) pthread_detach(t);
    return rc;
}

/* The job's ranks on this node, as the launcher says (Open MPI, PMIx, MPICH's Hydra, Slurm: the
 * first node's count of "2(x3),1"); 1 where none does. */
static unsigned local_ranks(void) {
    static const char *const vars[] = {"OMPI_COMM_WORLD_LOCAL_SIZE", "PMIX_LOCAL_SIZE", "MPI_LOCALNRANKS",
                                       "SLURM_STEP_TASKS_PER_NODE", "SLURM_TASKS_PER_NODE"};
    for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
        const char *v = getenv(vars[i]);
        if (!v || *v < '0' || *v > '9') continue;
        unsigned long n = strtoul(v, NULL, 10);
        if (n > 0 && n < (1ul << 20)) return (unsigned)n;
    }
    return 1;
}

/* ZECOLL_WRITER_STAGES, 0 (auto): two stages only where they can run beside the application's
 * thread. Measured on the 16-core host (bench/README.md): with the process on 3 or 4 CPUs the
 * MPI loop's waits for the writer vanish (15 ns per call before) and it runs 15-19 ns faster;
 * on 2 CPUs, three busy threads share them and it runs 8-27 ns slower. The CPUs a process has
 * to itself: its affinity mask (the calling thread's, the first to fill a buffer: an MPI
 * launcher's binding applies to every thread), but no more than its share of the node's CPUs
 * among the job's ranks there, whose masks may overlap (Open MPI binds to a socket for more than
 * two ranks: every rank's mask is then the whole socket). */
static unsigned writer_stages(int *cpus, unsigned *ranks) {
    *cpus = 0;
    *ranks = 0;
    if (zc_knobs.WRITER_STAGES) return (unsigned)zc_knobs.WRITER_STAGES;
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof(set), &set) != 0) return 1;
    *cpus = CPU_COUNT(&set);
    *ranks = local_ranks();
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    long share = online > 0 ? online / (long)*ranks : *cpus;
    return (*cpus < share ? *cpus : share) >= 3 ? 2 : 1;
}

/* wq_lock held */
static bool writer_start_locked(void) {
    if (wq_state != WQ_NONE) return wq_state == WQ_RUNNING;
    wq_state = spawn_detached(converter_main) == 0 ? WQ_RUNNING : WQ_FAILED;
    int cpus;
    unsigned ranks, stages = writer_stages(&cpus, &ranks);
    if (wq_state == WQ_RUNNING && stages > 1) emitter = spawn_detached(emitter_main) == 0;
    if (wq_state == WQ_RUNNING) {
        if (cpus)
            ZC_INFO("writer threads: %u (ZECOLL_WRITER_STAGES=0: %u, this process may run on %d of %ld CPUs, %u rank(s) "
                    "of the job on this node)",
                    emitter ? 2u : 1u, stages, cpus, sysconf(_SC_NPROCESSORS_ONLN), ranks);
        else ZC_INFO("writer threads: %u (ZECOLL_WRITER_STAGES=%u)", emitter ? 2u : 1u, stages);
    }
    return wq_state == WQ_RUNNING;
}

/* The buffer changes (and its count restarts) under wq_lock, so that the journal's flusher,
 * which copies from it under that lock, never sees a buffer that the converter converts in place
 * (zc_loc_snapshot); written in place, it stays under the lock for the same reason. */
void zc_loc_write_out(struct zc_loc *loc) {
    if (!loc->n) return;
    pthread_mutex_lock(&wq_lock);
    while (loc->nflight >= (emitter ? ZC_LOC_FLIGHT : 1)) pthread_cond_wait(&wq_done, &wq_lock);
    if (!loc->nspare && wq_state != WQ_FAILED) {
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

size_t zc_loc_snapshot(struct zc_loc *loc, uint64_t from, struct zc_ev *out, size_t max, uint64_t *first) {
    pthread_mutex_lock(&wq_lock);
    wait_converted_locked(loc);
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
    *first = loc->jbase + i;
    pthread_mutex_unlock(&wq_lock);
    return cnt;
}

/* After fork the child has no writer thread (and runs untraced): never wait for it. */
void zc_loc_fork_child(void) {
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

void zc_loc_put_slow(struct zc_loc *loc, const struct zc_ev *ev, size_t n) {
    if (n + 2 > ZC_LOC_RESERVE || loc->cap <= 2 * ZC_LOC_RESERVE) { /* cannot happen: batches are small */
        loc->ndropped += n;
        return;
    }
    if (loc->n + n <= loc->lim) {
        put_events(loc, ev, n);
        return;
    }
    put_events(loc, ev, n);
    uint64_t f0 = zc_tick();
    zc_loc_write_out(loc);
    if (loc->kind == ZC_LOC_THREAD) {
        uint64_t f1 = zc_tick();
        /* the collector's own region: not counted as the application's (loc_convert counts calls) */
        struct zc_ev f = {f0, ZC_EV_CALL, zc_region_flush, f1, 0, 0};
        put_events(loc, &f, 1);
    }
}

void zc_loc_put(struct zc_loc *loc, const struct zc_ev *ev, size_t n) {
    if (loc->n + n <= loc->lim) put_events(loc, ev, n);
    else zc_loc_put_slow(loc, ev, n);
}

/* Waits until no owner records on its own location any more (finalize, `active` cleared). */
static void owners_quiesce(void) {
    if (!zc_own_locked) syscall(__NR_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0);
    for (struct zc_loc *l = zc_loc_list(); l; l = l->next) {
        if (l->kind != ZC_LOC_THREAD) continue;
        while (atomic_load_explicit(&l->seq, memory_order_acquire) & 1) sched_yield();
    }
}

void zc_loc_flush_all(void) {
    owners_quiesce();
    for (struct zc_loc *l = zc_loc_list(); l; l = l->next) {
        zc_loc_lock(l);
        pthread_mutex_lock(&wq_lock);
        wait_written_locked(l);
        pthread_mutex_unlock(&wq_lock);
        if (l->n) loc_emit(l, l->buf, l->n, l->jbase);
        l->jbase += l->n;
        zc_loc_publish(l, 0);
        zc_loc_marks_end(l);
        zc_loc_unlock(l);
    }
}

void zc_loc_flush_own_if_half(void) {
    struct zc_thread *t = zc_thread_get();
    if (!t || t->loc->n < t->loc->cap / 2) return;
    if (zc_own_begin(t->loc) && t->loc->n >= t->loc->cap / 2) zc_loc_write_out(t->loc);
    zc_own_end(t->loc);
}

/* ---------------------------------------------------------------- threads */
_Thread_local struct zc_thread *zc_tls_thread __attribute__((tls_model("initial-exec")));
static _Thread_local bool tls_registering __attribute__((tls_model("initial-exec")));
static pthread_key_t thread_key;
static pthread_once_t key_once = PTHREAD_ONCE_INIT;

static struct zc_thread *free_slots; /* under reg_lock: slots of threads that exited */

/* The key's destructor, on a thread that exits. Its events stay in the slot's buffer: the next
 * thread appends after them (it starts later), and the buffer is written when full or at the
 * end. The thread's TLS stays valid through every destructor: if another key's destructor makes
 * a call we record after this one ran, the thread takes a slot again (and setspecific makes
 * glibc call this once more). A thread that exits while the collector finalizes leaves its slot
 * to no one: registering needs the collector active. */
static void thread_exit(void *arg) {
    struct zc_thread *t = arg;
    if (!t || zc_tls_thread != t) return;
    zc_tls_thread = NULL;
    zc_papi_thread_exit(t);
    if (zc_active()) zc_thread_exit_hooks();
    pthread_mutex_lock(&reg_lock);
    t->next_free = free_slots;
    free_slots = t;
    pthread_mutex_unlock(&reg_lock);
}

static void make_key(void) {
    pthread_key_create(&thread_key, thread_exit);
    /* owners record without locks if the finalizer can put a barrier on them (see above) */
    /* MEMBARRIER_CMD_GLOBAL needs no registration: PRIVATE_EXPEDITED does, and a registered
     * process was measured 5% slower on the 16-core host in a workload of frequent thread
     * wake-ups (20k kernels of 20 us, the collector recording nothing; bench/README.md). GLOBAL
     * waits for an RCU grace period (milliseconds), once, at finalize. */
    long q = syscall(__NR_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
    zc_own_locked = q < 0 || !(q & MEMBARRIER_CMD_GLOBAL);
}

struct zc_thread *zc_thread_register(void) {
    struct zc_thread *t = zc_tls_thread;
    if (t) return t;
    if (!zc_active() || tls_registering) return NULL;
    tls_registering = true;
    pthread_once(&key_once, make_key);
    pthread_mutex_lock(&reg_lock);
    t = free_slots;
    if (t) free_slots = t->next_free;
    pthread_mutex_unlock(&reg_lock);
    if (!t && (t = calloc(1, sizeof(*t))) != NULL) {
        t->loc = zc_loc_new(ZC_LOC_THREAD, 0, "Thread");
        if (!t->loc) {
            free(t);
            t = NULL;
        } else {
            /* named after the index the registry gave it, so names are unique like ids */
            t->index = (uint32_t)(t->loc->id >> 32);
            t->comm_rank = t->loc->comm_rank;
            t->callsite = (uint64_t)(t->index + 1) << 40;
            if (t->index == 0) snprintf(t->loc->name, sizeof(t->loc->name), "Master thread");
            else snprintf(t->loc->name, sizeof(t->loc->name), "Thread %u", t->index);
        }
    }
    /* the slot returns to the free list when this thread exits; without one (no memory) the call
     * that wanted it is not recorded, and the next one tries again */
    if (t) pthread_setspecific(thread_key, t);
    else zc_loc_lost(1);
    zc_tls_thread = t;
    tls_registering = false;
    return t;
}
