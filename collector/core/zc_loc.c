/* SPDX-License-Identifier: MIT */
/* Locations (one per host thread, one per device stream lane) and their event buffers. A host
 * thread appends to its own buffer; device streams are appended to by whichever thread drains
 * them. Each location has a busy flag so the finalizer can take a buffer that its owner might
 * still be writing. Buffers are allocated when the location is created, so the hot path never
 * allocates. A full buffer goes to the writer (zc_loc_sink, writer/zc_writer.c), which converts
 * and writes it on its own threads while the location fills another.
 *
 * Recording costs the application thread a copy into its own buffer and nothing else: timestamps
 * stay TSC ticks, clamping and counting wait for the writer, and a thread writes its own location
 * without a lock or atomic instruction. That last part needs the finalizer, which takes every
 * buffer, to know that no owner is still writing: the owner marks itself busy with a plain store
 * (an odd sequence number) before it checks that the collector is active; the finalizer clears
 * `active` and runs membarrier(MEMBARRIER_CMD_GLOBAL) (zc_loc_quiesce), after which every thread
 * has passed a full barrier, so each owner either saw `active` cleared or is seen busy and
 * waited for. Without membarrier (seccomp, nohz_full kernels) owners lock instead. */
#include "zc_loc.h"

#include "zc_clock.h"
#include "zc_defs.h"
#include "zc_knobs.h"
#include "zc_log.h"
#include "zc_window.h"

#include <linux/membarrier.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <errno.h>
#include <pthread.h>
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
static struct zc_thread *free_slots; /* under reg_lock: slots of threads that exited */
static uint32_t next_comm_rank, next_thread, next_stream;

struct zc_loc *zc_loc_list(void) { return atomic_load_explicit(&locs, memory_order_acquire); }

struct zc_loc *zc_loc_new(enum zc_loc_kind kind, uint32_t group, const char *name) {
    return zc_loc_new_cap(kind, group, name, 0);
}

/* Event buffers: ZECOLL_BUFFER_EVENTS each, unless that much memory cannot be had (an address
 * space limit, a cgroup, strict overcommit): then half, and half again, down to ZC_LOC_MIN_CAP,
 * said once with the variable and the size that worked; later locations start from that size.
 * The size found is what the process can still have in one piece: a buffer that took it would
 * leave the application nothing (its next allocation fails: hostile.buffer_alloc saw the app's
 * zeCommandListCreateImmediate fail that way), so after a reduction a buffer takes an eighth
 * of it (ZC_LOC_SHARE), which leaves the application most of what was left and every other
 * location of ours its own eighth of the rest. */
#define ZC_LOC_MIN_CAP 1024
#define ZC_LOC_SHARE 8
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

bool zc_loc_memory_short(void) { return atomic_load_explicit(&cap_ceiling, memory_order_relaxed) != SIZE_MAX; }

static struct zc_ev *alloc_buffer(size_t *cap, const char *name) {
    size_t want = *cap, c = want < atomic_load(&cap_ceiling) ? want : atomic_load(&cap_ceiling);
    for (bool reduced = false;; c /= 2, reduced = true) {
        if (c < ZC_LOC_MIN_CAP) c = ZC_LOC_MIN_CAP;
        struct zc_ev *b = malloc(c * sizeof(*b));
        if (b && reduced && c > ZC_LOC_MIN_CAP) { /* c fits, 2c did not: take a share of it */
            free(b);
            c = c / ZC_LOC_SHARE < ZC_LOC_MIN_CAP ? ZC_LOC_MIN_CAP : c / ZC_LOC_SHARE;
            b = malloc(c * sizeof(*b));
        }
        if (b) {
            size_t before = c < want ? atomic_exchange(&cap_ceiling, c) : c;
            if (before == SIZE_MAX) /* the first reduction is said; later ones are details */
                ZC_WARN("ZECOLL_BUFFER_EVENTS=%zu: cannot allocate an event buffer of %zu MiB (%s): using buffers of %zu "
                        "events (%zu KiB) instead (an eighth of the largest the process could still have, 1024 at "
                        "least), to leave the rest to the application",
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
     * The writer adds the rank (gid) once it is final (it may not be known yet). */
    if (kind == ZC_LOC_THREAD) l->id = (uint64_t)next_thread++ << 32;
    else l->id = (UINT64_C(1) << 63) | ((uint64_t)next_stream++ << 32);
    l->next = atomic_load_explicit(&locs, memory_order_relaxed);
    /* release: a reader that sees the new head sees an initialised location */
    atomic_store_explicit(&locs, l, memory_order_release);
    pthread_mutex_unlock(&reg_lock);
    if (zc_loc_sink.created) zc_loc_sink.created(l);
    return l;
}

static void put_events(struct zc_loc *loc, const struct zc_ev *ev, size_t n) {
    for (size_t i = 0; i < n; i++) loc->buf[loc->n + i] = ev[i];
    zc_loc_publish(loc, loc->n + n);
}

void (*zc_loc_resolver)(struct zc_loc *loc, struct zc_ev *ev, size_t n);

/* ---------------------------------------------------------------- the writer's side */
/* Before the writer installed itself (it starts with the collector, so nothing records before):
 * the buffer's records are dropped and counted, never overrun. */
static void drop_buffer(struct zc_loc *loc) {
    loc->ndropped += loc->n;
    loc->jbase += loc->n;
    zc_loc_publish(loc, 0);
}
struct zc_loc_sink zc_loc_sink = {drop_buffer, NULL};

void zc_loc_write_out(struct zc_loc *loc) {
    if (loc->n) zc_loc_sink.write_out(loc);
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
        /* the collector's own region: not counted as the application's (zc_evt_normalize counts calls) */
        struct zc_ev f = {f0, ZC_EV_CALL, zc_region_flush, f1, 0, 0};
        put_events(loc, &f, 1);
    }
}

void zc_loc_put(struct zc_loc *loc, const struct zc_ev *ev, size_t n) {
    if (loc->n + n <= loc->lim) put_events(loc, ev, n);
    else zc_loc_put_slow(loc, ev, n);
}

/* Could a thread other than the caller be inside zc_own_begin/zc_own_end now? Only an owner of a
 * thread location that has not exited (its slot is not on free_slots). A location created, or a
 * slot taken, after this look is ordered after it by reg_lock: that thread then sees `active`
 * cleared. */
static bool other_owners(void) {
    const struct zc_thread *self = zc_tls_thread;
    bool any = false;
    pthread_mutex_lock(&reg_lock);
    for (struct zc_loc *l = zc_loc_list(); l && !any; l = l->next) {
        if (l->kind != ZC_LOC_THREAD || (self && self->loc == l)) continue;
        any = true;
        for (const struct zc_thread *f = free_slots; f; f = f->next_free)
            if (f->loc == l) any = false;
    }
    pthread_mutex_unlock(&reg_lock);
    return any;
}

void zc_loc_quiesce(void) {
    /* The barrier waits for an RCU grace period: ~15 ms measured in every preloaded process at
     * exit when it was unconditional (issue: 200 runs of `true` 0.13 s -> 2.9 s). Needed only where
     * another thread may be recording without a lock, and once. */
    static atomic_bool done;
    if (!zc_own_locked && other_owners() && !atomic_exchange(&done, true))
        syscall(__NR_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0);
    for (struct zc_loc *l = zc_loc_list(); l; l = l->next) {
        if (l->kind != ZC_LOC_THREAD) continue;
        while (atomic_load_explicit(&l->seq, memory_order_acquire) & 1) sched_yield();
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
    if (zc_proc_ops.thread_exit) zc_proc_ops.thread_exit(t);
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
