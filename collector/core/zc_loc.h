/* SPDX-License-Identifier: MIT */
/* Locations (one per host thread, one per device stream lane), their event buffers, and the
 * thread slots (zc_loc.c). The hot paths are here, inline: a thread's own put (zc_own_*), a
 * locked put (zc_loc_put), the publish of a record count. */
#ifndef ZC_LOC_H
#define ZC_LOC_H

#include "zc_ev.h"
#include "zc_marks.h" /* struct zc_marks */
#include "zc_proc.h"  /* zc_is_active */

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct zc_loc {
    /* the owner's cache line: what a put touches (nothing here is written by another thread
     * while the owner records, so recording shares no line with the writer thread) */
    struct zc_ev *buf;
    size_t n, lim;         /* events in buf; a put beyond lim takes the slow path (zc_loc_put_slow) */
    _Atomic uint64_t seq;  /* thread locations: odd while the owner records (see zc_loc.c) */
    atomic_flag busy;      /* device locations (and thread locations without membarrier): held while appending or flushing */
    size_t cap;
    uint64_t id;           /* local location id: kind and index (the rank is added by the writer: gid) */
    enum zc_loc_kind kind;
    uint32_t comm_rank;    /* index in the process's L0 communicator (RMA remote) */
    uint32_t group;        /* location-group index, see zc_defs_* */
    /* the writer's side: touched when a buffer is converted and written */
    uint64_t last_ts __attribute__((aligned(64))); /* clamp: OTF2 drops events earlier than the previous one */
    uint64_t nevents, nclamped, ndropped;
    uint64_t otf2_events;  /* as the writer counted them, read before it closes */
    uint64_t rma_match;    /* matching ids of RMA operations on this location (drainers, locked) */
    void *writer;          /* OTF2_EvtWriter */
    uint64_t gid;          /* OTF2 location id: id and the rank, set when the rank is final (writer/zc_otf2.c) */
    /* the writer threads' side (writer/zc_writer.c, under its queue lock): buffers handed to them, at
     * most ZC_LOC_FLIGHT at a time (one per writer stage), and the empty ones they gave back */
#define ZC_LOC_FLIGHT 2
    struct zc_wbatch {
        struct zc_loc *loc;
        struct zc_ev *buf;
        size_t n;
        uint64_t first;          /* stream index of buf[0] */
        struct zc_wbatch *next;  /* in a writer's queue */
        bool busy;
    } wb[ZC_LOC_FLIGHT];
    struct zc_ev *spare[ZC_LOC_FLIGHT];
    uint8_t nspare, nflight, nconv; /* nconv: in flight and not yet converted and journaled */
    /* measurement windows (writer/zc_writer.c, zc_marks.h); mk0: its first entry of the window log (the
     * salvage journal's copy of the location places the markers the same way) */
    struct zc_marks marks;
    uint64_t mk0;
    /* the salvage journal: a location's records are numbered in the order they were put (its
     * stream index); buf[0] is record jbase (changed with buf, under the writer queue's lock) */
    uint64_t jbase;
    uint64_t jdone;        /* records below this stream index are in the journal (its lock) */
    bool jknown;           /* its definition is in the journal (its lock) */
    /* every record it writes is journaled, none left to the flusher's seals of its event file
     * (window markers placed on it, OTF2's encoder): set under the OTF2 writer's lock, read
     * with __atomic by the converting thread (writer/zc_otf2.c) */
    bool jall;
    struct zc_ev *held;    /* events written before the job's archive exists (writer/zc_otf2.c) */
    void *resolve;         /* thread locations: the state of zc_loc_resolver (whoever converts) */
    uint64_t resolved;     /* ... and the stream index below which records are final */
    size_t nheld, cap_held;
    char name[64];
    struct zc_loc *next;
};

/* Creates and registers a location; never freed (the archive needs all of them at the end). */
struct zc_loc *zc_loc_new(enum zc_loc_kind kind, uint32_t group, const char *name);
/* The same with a given buffer size in events (0 = ZECOLL_BUFFER_EVENTS). */
struct zc_loc *zc_loc_new_cap(enum zc_loc_kind kind, uint32_t group, const char *name, size_t cap);
/* Records (a thread's call, a device operation) lost because memory for them or a buffer for
 * their location could not be allocated: counted as dropped in the summary. */
void zc_loc_lost(uint64_t n);
uint64_t zc_loc_lost_count(void);
/* Whether an event buffer had to be made smaller than asked (memory is short): the writer then
 * allocates no spare buffers, so that each location keeps one and the rest is the application's. */
bool zc_loc_memory_short(void);
/* Appends n events (n <= 14); flushes the buffer to the archive first if it is full. The caller
 * owns loc for the duration (zc_loc_lock); a thread records on its own location with
 * zc_own_begin/zc_own_end instead. */
void zc_loc_put(struct zc_loc *loc, const struct zc_ev *ev, size_t n);
/* The part of a put that writes the buffer out (buffer full). */
void zc_loc_put_slow(struct zc_loc *loc, const struct zc_ev *ev, size_t n);
static inline void zc_loc_lock(struct zc_loc *l) {
    while (atomic_flag_test_and_set_explicit(&l->busy, memory_order_acquire)) {
    }
}
static inline void zc_loc_unlock(struct zc_loc *l) { atomic_flag_clear_explicit(&l->busy, memory_order_release); }
/* Set by the MPI layer when it defers request matching: turns a thread location's buffer's
 * ZC_EV_MPI_*_H events into final ones, in order, before they are converted (by whoever converts
 * that location's buffers: one at a time). */
extern void (*zc_loc_resolver)(struct zc_loc *loc, struct zc_ev *ev, size_t n);
/* Publishes a location's record count after the records themselves (release): the journal's
 * flusher reads the records below it from another thread (writer/zc_writer.c). Every store of n
 * goes through here; on x86 it is the plain store it replaces. */
static inline void zc_loc_publish(struct zc_loc *l, size_t n) { __atomic_store_n(&l->n, n, __ATOMIC_RELEASE); }
/* Hands loc's full buffer to the writer (called with loc held): zc_loc_sink.write_out. */
void zc_loc_write_out(struct zc_loc *loc);
/* The writer's side of the locations, installed by the writer when it starts (writer/zc_writer.c),
 * so that this floor names no writer: where a full buffer goes (called only when a buffer is
 * full, never per event) and who hears of a new location (the journal's flusher starts then).
 * Until then a full buffer is dropped (counted). */
struct zc_loc_sink {
    void (*write_out)(struct zc_loc *loc); /* loc held; loc->n > 0 */
    void (*created)(struct zc_loc *loc);
};
extern struct zc_loc_sink zc_loc_sink;
/* Waits until no owner records on its own location any more (finalize, `active` cleared). */
void zc_loc_quiesce(void);
/* Flushes the calling thread's buffer if it is at least half full: called where the app waits
 * anyway (synchronisation), so the conversion to OTF2 stays off the hot path. */
void zc_loc_flush_own_if_half(void);
struct zc_loc *zc_loc_list(void);

/* ---------------------------------------------------------------- threads */
/* A thread slot: the location of one live thread. A thread that exits leaves its slot (and its
 * buffer, with whatever it recorded) to the next thread that registers, so a program that
 * creates thousands of short-lived threads has as many locations as it ever had threads alive
 * at once, and exit costs that, not the number of threads ever seen. Everything that must be
 * unique per location lives here, not in TLS, so the next thread continues it. */
struct zc_thread {
    struct zc_loc *loc;
    uint64_t callsite;  /* the last callsite id given: unique per process, thread index + 1 in bits 40+ */
    /* MPI requests the table gave ids (zc_mpi_req.h): the k-th has id 2k - 1. The writer's
     * resolver (zc_mpi_resolve.c) gives the even ids on the same location: unique per location,
     * and small, so OTF2 and the salvage journal write them in few bytes. */
    uint64_t requests;
    uint32_t index;
    uint32_t comm_rank; /* loc->comm_rank */
    void *papi;         /* the thread's PAPI event set (zc_papi.c), created when it first samples */
    struct zc_thread *next_free;
};
/* The calling thread's record, registering it on first use. NULL while the collector is off or
 * when registration failed. initial-exec: no __tls_get_addr on the hot path; the pointer is
 * (nearly) all the TLS we use, so the static TLS surplus suffices even when libzecoll.so
 * arrives by dlopen. */
extern _Thread_local struct zc_thread *zc_tls_thread __attribute__((tls_model("initial-exec")));
struct zc_thread *zc_thread_register(void);
static inline struct zc_thread *zc_thread_get(void) {
    struct zc_thread *t = zc_tls_thread;
    return __builtin_expect(t != NULL, 1) ? t : zc_thread_register();
}

/* Recording on the calling thread's own location, without a lock or any atomic instruction:
 *   if (zc_own_begin(l)) { ...zc_own_put / zc_own_slot...; } zc_own_end(l);
 * zc_own_begin marks the location busy (its sequence odd) and then checks that the collector is
 * still active; the finalizer clears `active`, runs membarrier() (a barrier on every thread) and
 * waits for odd sequences, so it never takes a buffer its owner is writing (zc_loc.c). Where
 * membarrier is not available the owner takes the location's lock instead. */
extern bool zc_own_locked;
static inline bool zc_own_begin(struct zc_loc *l) {
    if (__builtin_expect(zc_own_locked, 0)) zc_loc_lock(l);
    uint64_t s = atomic_load_explicit(&l->seq, memory_order_relaxed);
    atomic_store_explicit(&l->seq, s + 1, memory_order_relaxed);
    atomic_signal_fence(memory_order_seq_cst); /* the finalizer's membarrier orders the rest */
    return atomic_load_explicit(&zc_is_active, memory_order_relaxed);
}
static inline void zc_own_end(struct zc_loc *l) {
    uint64_t s = atomic_load_explicit(&l->seq, memory_order_relaxed);
    atomic_store_explicit(&l->seq, s + 1, memory_order_release);
    if (__builtin_expect(zc_own_locked, 0)) zc_loc_unlock(l);
}
/* The same where the caller saw zc_own_locked false (a hot path that takes its slow path when the
 * lock is needed). */
static inline bool zc_own_begin_unlocked(struct zc_loc *l) {
    uint64_t s = atomic_load_explicit(&l->seq, memory_order_relaxed);
    atomic_store_explicit(&l->seq, s + 1, memory_order_relaxed);
    atomic_signal_fence(memory_order_seq_cst);
    return atomic_load_explicit(&zc_is_active, memory_order_relaxed);
}
static inline void zc_own_end_unlocked(struct zc_loc *l) {
    uint64_t s = atomic_load_explicit(&l->seq, memory_order_relaxed);
    atomic_store_explicit(&l->seq, s + 1, memory_order_release);
}
/* The same, the sequence number kept by the caller (one load fewer on the hottest paths):
 * uint64_t s; if (zc_own_begin_seq(l, &s)) ...; zc_own_end_seq(l, s); */
static inline bool zc_own_begin_seq(struct zc_loc *l, uint64_t *s) {
    *s = atomic_load_explicit(&l->seq, memory_order_relaxed) + 1;
    atomic_store_explicit(&l->seq, *s, memory_order_relaxed);
    atomic_signal_fence(memory_order_seq_cst);
    return atomic_load_explicit(&zc_is_active, memory_order_relaxed);
}
static inline void zc_own_end_seq(struct zc_loc *l, uint64_t s) {
    atomic_store_explicit(&l->seq, s + 1, memory_order_release);
}
/* n events into the own location (between zc_own_begin and zc_own_end) */
static inline void zc_own_put(struct zc_loc *l, const struct zc_ev *ev, size_t n) {
    if (__builtin_expect(l->n + n <= l->lim, 1)) {
        struct zc_ev *d = &l->buf[l->n];
        for (size_t i = 0; i < n; i++) d[i] = ev[i];
        zc_loc_publish(l, l->n + n);
    } else {
        zc_loc_put_slow(l, ev, n);
    }
}

#endif
