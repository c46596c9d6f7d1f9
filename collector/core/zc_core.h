/* SPDX-License-Identifier: MIT */
/* zecoll core internals: knobs, logging and failure policy, host clock, threads, locations and
 * their event buffers, definitions, the OTF2 writer and the lifecycle. Everything here is hidden
 * (-fvisibility=hidden); only interposed symbols and the documented API leave libzecoll.so. */
#ifndef ZC_CORE_H
#define ZC_CORE_H

#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

/* ---------------------------------------------------------------- knobs */
#include "zc_config.h" /* struct zc_knobs, windows, rank sets, kernel patterns (config/) */

/* The effective settings (zc_knobs.c): a copy of zc_cfg->knobs, except that an invalid
 * configuration leaves ENABLE false. zc_cfg is never NULL once zc_knobs_load ran. */
extern struct zc_knobs zc_knobs;
extern const struct zc_config *zc_cfg;

/* Loads the configuration (ZECOLL_CONFIG, then every ZECOLL_* variable). Its messages are printed
 * by the job's launcher rank 0 only (once per job); an invalid configuration turns collection off
 * (ZECOLL_STRICT=1: aborts). Returns 0, or -1 if the collector must stay off. */
int zc_knobs_load(void);
/* Whether this process speaks for the job: the launcher's rank 0, or a process no MPI launcher
 * started. Messages that would repeat on every rank are printed by it only. */
bool zc_job_leader(void);
/* Writes the effective configuration, with origins, to DIR/zecoll-config.yaml (at close; rank 0). */
void zc_config_store(const char *dir);

/* ---------------------------------------------------------------- logging and failures */
enum { ZC_LOG_QUIET = 0, ZC_LOG_WARN = 1, ZC_LOG_INFO = 2, ZC_LOG_DEBUG = 3 };

void zc_log(int level, const char *func, int line, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
#define ZC_WARN(...) zc_log(ZC_LOG_WARN, __func__, __LINE__, __VA_ARGS__)
#define ZC_INFO(...) zc_log(ZC_LOG_INFO, __func__, __LINE__, __VA_ARGS__)
#define ZC_DEBUG(...) zc_log(ZC_LOG_DEBUG, __func__, __LINE__, __VA_ARGS__)
/* Writes buf (len bytes formatted into its cap, len as snprintf reported it, so possibly more than
 * fit) to stderr as one line with one write(2): it always ends with a newline, and a line that did
 * not fit ends with a marker saying it was cut. */
void zc_log_write(char *buf, size_t cap, size_t len);

/* Features that an internal failure switches off, each on its own. */
enum zc_feature {
    ZC_F_TRACE,         /* the archive: nothing is written */
    ZC_F_DEVICE_TIMING, /* injection stops; the app runs on untimed */
    ZC_F_API_TIMING,
    ZC_F_MPI,
    ZC_F_PAPI,          /* PAPI counters (zc_papi.h): on only when papi.events is set */
    ZC_F_JOURNAL, /* the salvage journal (zc_journal.c): the archive itself is unaffected */
    ZC_F_COUNT
};
extern atomic_bool zc_feature_on[ZC_F_COUNT];
extern atomic_uint_fast64_t zc_failures;

/* Internal failure: logs the first one per feature, counts all, turns the feature off. With
 * ZECOLL_STRICT=1 it aborts instead, so tests notice. */
void zc_fail(enum zc_feature f, const char *func, int line, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* ZECOLL_STRICT=1: says why and aborts (the first caller; others wait for its abort). */
_Noreturn void zc_strict_vabort(const char *func, int line, const char *fmt, va_list ap);
#define ZC_FAIL(f, ...) zc_fail(f, __func__, __LINE__, __VA_ARGS__)

static inline bool zc_on(enum zc_feature f) {
    return atomic_load_explicit(&zc_feature_on[f], memory_order_relaxed);
}

extern atomic_bool zc_is_active; /* zc_active() */

/* ---------------------------------------------------------------- file descriptors */
/* Descriptors 0-2 are the application's even when closed (zc_fd.c). zc_fd_high moves one of the
 * collector's own descriptors above 2 (close-on-exec; -1 if that failed, the original closed).
 * A guard holds the closed ones among 0-2 while code that opens files on our behalf runs
 * (OTF2's calls), so those files land above 2; release frees exactly what hold took. */
int zc_fd_high(int fd);
struct zc_fd_guard {
    int fd[3];
    unsigned long long ino[3], dev[3];
};
void zc_fd_guard_hold(struct zc_fd_guard *g);
void zc_fd_guard_release(struct zc_fd_guard *g);

/* ---------------------------------------------------------------- host clock */
/* CLOCK_MONOTONIC_RAW is the host side of zeDeviceGetGlobalTimestamps, so device times map onto
 * the same axis; every time in the archive is on it (ns). zc_now() reads it (~30 ns); hot paths
 * read zc_tick() instead (zc_clock.c): the TSC where it is usable, converted to
 * CLOCK_MONOTONIC_RAW when the buffer is written, or the same ns as zc_now() where it is not.
 * Events of THREAD locations carry ticks, events of DEVICE locations ns; anything that needs a
 * time now (deadlines, anchors, clock offsets) uses zc_now(). */
extern int64_t zc_clock_skew; /* ZECOLL_CLOCK_SKEW_NS (tests only), 0 otherwise */
extern bool zc_tsc;           /* ticks are TSC cycles (set once by zc_clock_init) */
static inline uint64_t zc_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec + (uint64_t)zc_clock_skew;
}
static inline uint64_t zc_tick(void) {
#if defined(__x86_64__) || defined(__i386__)
    if (__builtin_expect(zc_tsc, 1)) return __builtin_ia32_rdtsc();
#endif
    return zc_now();
}
/* zc_tick() on a path taken only while zc_tsc is set (the MPI fast paths): one rdtsc */
static inline uint64_t zc_tick_tsc(void) {
#if defined(__x86_64__) || defined(__i386__)
    return __builtin_ia32_rdtsc();
#else
    return zc_now();
#endif
}
void zc_clock_init(void); /* constructor, before anything is recorded */
/* Converts ticks to ns, mostly in increasing order; zc_tickconv_begin first takes an anchor if
 * the newest is stale, so every tick read before it converts between two anchors. */
struct zc_tickconv {
    size_t n;         /* anchors seen (0: ticks are ns) */
    uint64_t lo, hi;  /* the current segment [lo, hi) */
    uint64_t base, base_ns;
    double slope;     /* ns per tick */
};
void zc_tickconv_begin(struct zc_tickconv *c);
void zc_tickconv_seg(struct zc_tickconv *c, uint64_t tick); /* the segment holding tick */
/* Inline: the writer converts one or two ticks per record, and the call was a third of it. */
static inline uint64_t zc_tickconv(struct zc_tickconv *c, uint64_t t) {
    if (!c->n) return t; /* ticks are ns */
    if (__builtin_expect(t < c->lo || t >= c->hi, 0)) zc_tickconv_seg(c, t);
    int64_t d = (int64_t)(t - c->base);
    double off = (double)d * c->slope;
    return c->base_ns + (uint64_t)(int64_t)(off < 0 ? off - 0.5 : off + 0.5);
}
/* zc_tickconv as the conversion callback of zc_evt_normalize (c: its struct zc_tickconv) */
static inline uint64_t zc_tickconv_cb(void *c, uint64_t tick) { return zc_tickconv(c, tick); }
uint64_t zc_tick_to_ns(uint64_t tick); /* one conversion */
double zc_clock_error_bound_ns(void);  /* half the widest anchor read window (tests, docs) */

/* ---------------------------------------------------------------- events and locations */
enum zc_ev_type {
    ZC_EV_ENTER = 1,   /* a = region */
    ZC_EV_LEAVE,       /* a = region */
    ZC_EV_PARAM_U64,   /* a = parameter, b = value */
    ZC_EV_RMA_GET,     /* a = window, b = bytes, c = remote << 32 | matching id (low 32 bits) */
    ZC_EV_RMA_PUT,     /* same fields */
    ZC_EV_RMA_COMPLETE, /* a = window, c = matching id */
    ZC_EV_BUFFER_FLUSH, /* b = stop time */
    /* MPI: a = local communicator, b = bytes, c = peer rank in the communicator << 32 | tag,
     * d = request id. Collectives: b = sent, c = received, d = op << 32 | root. */
    ZC_EV_MPI_SEND,
    ZC_EV_MPI_ISEND,
    ZC_EV_MPI_ISEND_COMPLETE, /* d = request id */
    ZC_EV_MPI_IRECV_REQUEST,  /* d = request id */
    ZC_EV_MPI_RECV,
    ZC_EV_MPI_IRECV,
    ZC_EV_MPI_REQUEST_TEST,      /* d = request id */
    ZC_EV_MPI_REQUEST_CANCELLED, /* d = request id */
    ZC_EV_MPI_COLL_BEGIN,
    ZC_EV_MPI_COLL_END,
    ZC_EV_MPI_NBC_REQUEST,  /* d = request id */
    ZC_EV_MPI_NBC_COMPLETE, /* as COLL_END; always followed by ZC_EV_MPI_NBC_REQID in the same put */
    ZC_EV_MPI_NBC_REQID,    /* d = request id of the NBC_COMPLETE before it */
    /* Requests the MPI layer leaves to the writer to match (mpi/zc_mpi_resolve.c: MPI_THREAD_SINGLE
     * and FUNNELED, where one thread makes every MPI call): d = the MPI_Request handle. The
     * writer turns them into the events above, with request ids, or into ZC_EV_MPI_NOP. */
    ZC_EV_MPI_ISEND_H,  /* as ZC_EV_MPI_ISEND */
    ZC_EV_MPI_IRECV_H,  /* a = communicator */
    ZC_EV_MPI_DONE_H,   /* a = flags (ZC_DONE_STATUS; bits above: cancelled), b = bytes, c = peer << 32 | tag */
    ZC_EV_MPI_TEST_H,   /* tested, not completed */
    ZC_EV_MPI_FREE_H,   /* MPI_Request_free: no completion will be recorded */
    ZC_EV_MPI_NOP,      /* nothing to write (inside a call's run) */
    /* A whole host call in one record (thread locations): ts = Enter, b = Leave time, a = region,
     * c = callsite id (0 = none). Written as Enter, [ParameterUnsignedInt "callsite id"], Leave. */
    ZC_EV_CALL,
    /* MeasurementOnOff, a = 1 on, 0 off: placed by the writer (loc_emit), never recorded */
    ZC_EV_MEASUREMENT,
    /* PAPI counters (zc_papi.h): a = number of values, b, c, d = the first three; the others
     * follow in ZC_EV_METRIC_MORE records (b, c, d each, same ts), always in the same put. One
     * OTF2 Metric of the process's metric class. */
    ZC_EV_METRIC,
    ZC_EV_METRIC_MORE,
};

/* ZC_EV_CALL.d = ZC_CALL_RUN: the call holds the MPI event records that follow it (an MPI call
 * writes its record before it knows how many; the writer counts them, zc_loc.c). */
#define ZC_CALL_RUN UINT64_MAX
static inline bool zc_ev_in_call(uint32_t type) { return type >= ZC_EV_MPI_SEND && type <= ZC_EV_MPI_NOP; }
enum { ZC_DONE_STATUS = 1 }; /* ZC_EV_MPI_DONE_H.a: a status came; a >> 1 != 0: it says cancelled */

struct zc_ev {
    uint64_t ts;
    uint32_t type;
    uint32_t a;
    uint64_t b, c, d;
};

enum zc_loc_kind { ZC_LOC_THREAD, ZC_LOC_DEVICE };

/* One location's MeasurementOnOff placement (zc_marks.h): the next entry of the window log to
 * place, whether the markers written so far leave it on, and an OFF waiting (at m_off or later)
 * for what was in flight when recording stopped. */
struct zc_marks {
    uint64_t mk, m_off;
    bool m_on, m_pend, thread;
};

struct zc_loc {
    /* the owner's cache line: what a put touches (nothing here is written by another thread
     * while the owner records, so recording shares no line with the writer thread) */
    struct zc_ev *buf;
    size_t n, lim;         /* events in buf; a put beyond lim takes the slow path (zc_loc_put_slow) */
    _Atomic uint64_t seq;  /* thread locations: odd while the owner records (see zc_loc.c) */
    atomic_flag busy;      /* device locations (and thread locations without membarrier): held while appending or flushing */
    size_t cap;
    uint64_t id;           /* OTF2 location id */
    enum zc_loc_kind kind;
    uint32_t comm_rank;    /* index in the process's L0 communicator (RMA remote) */
    uint32_t group;        /* location-group index, see zc_defs_* */
    /* the writer's side: touched when a buffer is converted and written */
    uint64_t last_ts __attribute__((aligned(64))); /* clamp: OTF2 drops events earlier than the previous one */
    uint64_t nevents, nclamped, ndropped;
    uint64_t otf2_events;  /* as the writer counted them, read before it closes */
    uint64_t rma_match;    /* matching ids of RMA operations on this location (drainers, locked) */
    void *writer;          /* OTF2_EvtWriter */
    /* the writer threads' side (zc_loc.c, under its queue lock): buffers handed to them, at
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
    /* measurement windows (loc_emit, zc_marks.h); mk0: its first entry of the window log (the
     * salvage journal's copy of the location places the markers the same way) */
    struct zc_marks marks;
    uint64_t mk0;
    /* the salvage journal: a location's records are numbered in the order they were put (its
     * stream index); buf[0] is record jbase (changed with buf, under the writer queue's lock) */
    uint64_t jbase;
    uint64_t jdone;        /* records below this stream index are in the journal (its lock) */
    bool jknown;           /* its definition is in the journal (its lock) */
    struct zc_ev *held;    /* events written before the job's archive exists (zc_otf2.c) */
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
 * flusher reads the records below it from another thread (zc_loc_snapshot). Every store of n
 * goes through here; on x86 it is the plain store it replaces. */
static inline void zc_loc_publish(struct zc_loc *l, size_t n) { __atomic_store_n(&l->n, n, __ATOMIC_RELEASE); }
/* Copies loc's records from stream index `from` on, as far as its current buffer holds them, into
 * out (at most max); *first = the stream index of out[0]. Waits until the writer thread has
 * written loc's previous buffer, so that every record before *first is in the archive's writer
 * (and journal) when it returns. For the journal's flusher. */
size_t zc_loc_snapshot(struct zc_loc *loc, uint64_t from, struct zc_ev *out, size_t max, uint64_t *first);
/* Flushes every location (at finalize), after the writer thread finished what it was given. */
void zc_loc_flush_all(void);
/* Hands loc's full buffer to the writer thread, or writes it out here if that is not possible
 * (called with loc held). */
void zc_loc_write_out(struct zc_loc *loc);
void zc_loc_fork_child(void); /* the child has no writer thread */
/* Flushes the calling thread's buffer if it is at least half full: called where the app waits
 * anyway (synchronisation), so the conversion to OTF2 stays off the hot path. */
void zc_loc_flush_own_if_half(void);
struct zc_loc *zc_loc_list(void);

/* At the end of the run: the measurement transitions not yet placed on each location. */
void zc_loc_marks_end(struct zc_loc *loc);

/* ---------------------------------------------------------------- recording windows */
/* zc_window.c: whether this rank records now. Every interposed call checks zc_rec_open(), one
 * load: bits 0-30 of zc_rec count the open windows, bit 31 is set while the collector is not
 * active (before start-up, after finalize, in a forked child), bits 32-63 count the on/off
 * transitions so far (each has an entry in the log that zc_win_log_get reads). */
extern _Atomic uint64_t zc_rec;
#define ZC_REC_INACTIVE (UINT64_C(1) << 31)
static inline uint64_t zc_rec_word(void) { return atomic_load_explicit(&zc_rec, memory_order_acquire); }
static inline bool zc_rec_open_w(uint64_t w) { return (int32_t)(uint32_t)w > 0; }
static inline bool zc_rec_open(void) { return zc_rec_open_w(zc_rec_word()); }
void zc_win_init(void);               /* constructor: this rank's windows (launcher's rank) */
void zc_win_set_active(bool on);      /* with zc_is_active */
void zc_win_mpi_init(uint32_t rank);  /* MPI_Init: the rank confirmed */
void zc_win_time_base(void);          /* MPI_Init returns: time windows count from now */
void zc_win_unselected(void);         /* this rank takes part in the job's archive, recording nothing */
bool zc_win_rank_selected(void);
void zc_win_pcontrol(int level);      /* MPI_Pcontrol: 0 stops, >= 1 starts, < 0 ignored */
void zc_win_finalize(void);
void zc_win_fork_child(void);
bool zc_win_sigaction(int sig, const struct sigaction *act, struct sigaction *old); /* the app's, for a window's signal */
const char *zc_win_describe(char *buf, size_t size);
/* Transition k: its host time (ns) and whether recording turned on; false if not logged yet. */
bool zc_win_log_get(uint64_t k, uint64_t *ns, bool *on);
uint64_t zc_win_log_current(void);    /* the latest transition's number */
uint64_t zc_win_markers_lost(void);
/* Kernel selection, evaluated once per kernel handle (at zeKernelCreate): whether its launches
 * are timed (kernels.include/exclude) and which kernel windows count them. */
#define ZC_KSEL_MAX 16
struct zc_kernel_sel {
    bool selected;
    uint16_t nwin;
    uint16_t win[ZC_KSEL_MAX];
};
extern bool zc_win_kernels;        /* kernel windows or filters exist: launches look at their kernel */
extern bool zc_win_kernel_windows; /* kernel windows apply here: launches are counted while off too */
void zc_win_kernel_info(const char *name, struct zc_kernel_sel *k);
uint32_t zc_win_kernel_launch(const struct zc_kernel_sel *k); /* before the launch; windows to close after it */
void zc_win_kernel_after(const struct zc_kernel_sel *k, uint32_t close);
/* The launcher's rank (OMPI_COMM_WORLD_RANK, PMIX_RANK, PMI_RANK), -1 if none is set. */
int zc_launcher_rank(void);
bool zc_mpi_linked(void); /* mpi/: the program links libmpi */

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

/* ---------------------------------------------------------------- definitions */
/* Local definitions, unique per process; ids are dense from 0 in creation order. Thread safe. */
enum zc_region_role { ZC_ROLE_FUNCTION, ZC_ROLE_WRAPPER, ZC_ROLE_DATA_TRANSFER, ZC_ROLE_ALLOCATE,
                      ZC_ROLE_DEALLOCATE, ZC_ROLE_BARRIER, ZC_ROLE_ARTIFICIAL, ZC_ROLE_P2P,
                      ZC_ROLE_COLL_ONE2ALL, ZC_ROLE_COLL_ALL2ONE, ZC_ROLE_COLL_ALL2ALL, ZC_ROLE_COLL_OTHER };
enum zc_paradigm { ZC_PARADIGM_L0, ZC_PARADIGM_MPI, ZC_PARADIGM_MEASUREMENT };

uint32_t zc_def_string(const char *s);
uint32_t zc_def_region(const char *name, enum zc_region_role role, enum zc_paradigm paradigm);

/* Well-known definitions made at init. */
extern uint32_t zc_param_callsite; /* UINT64 parameter "callsite id" */
extern uint32_t zc_region_flush;   /* "zecoll buffer flush" */

/* Accelerator topology, reported by the Level Zero layer. */
uint32_t zc_def_device(uint32_t index, const char *name, const char *uuid_hex);
uint32_t zc_def_accel_group(uint32_t device_def, uint32_t context_index);

/* Communicators (zc_defs.h). members/remote are world ranks; key identifies the communicator
 * across ranks (equal keys are one communicator). Returns the local id or ZC_NO_ID. */
enum zc_comm_kind { ZC_COMM_L0, ZC_COMM_MPI, ZC_COMM_MPI_SELF, ZC_COMM_MPI_INTER };
uint32_t zc_def_comm(enum zc_comm_kind kind, const char *name, uint32_t parent, const uint64_t *members, uint32_t n,
                     const uint64_t *remote, uint32_t nremote, const char *key, size_t keylen);
/* The name the application gave communicator id (MPI_Comm_set_name), replacing the one it had. */
void zc_def_comm_name(uint32_t id, const char *name);

/* ---------------------------------------------------------------- OTF2 writer */
int zc_otf2_init(void);
/* Writes a full buffer of loc to its event writer (called with loc held); first = the stream
 * index of ev[0] (for the journal). */
void zc_otf2_write(struct zc_loc *loc, const struct zc_ev *ev, size_t n, uint64_t first);
/* The same in two steps, for the writer threads' pipeline (zc_loc.c): _begin decides what
 * becomes of the batch (held before MPI_Init, dropped, or written) and journals it; if it returns
 * true the batch is to be written, in order, by zc_otf2_write_end, while the next batch is
 * converted. zc_otf2_write is _begin + _end in one. */
bool zc_otf2_write_begin(struct zc_loc *loc, const struct zc_ev *ev, size_t n, uint64_t first);
void zc_otf2_write_end(struct zc_loc *loc, const struct zc_ev *ev, size_t n);
/* Measurement markers (recording windows): written, not journaled. */
void zc_otf2_write_marks(struct zc_loc *loc, const struct zc_ev *ev, size_t n);
/* The journal's flusher found records while no archive is open: a process alone opens its
 * archive now (an MPI job's opens in MPI_Init), so that there is a journal. */
void zc_otf2_open_for_journal(void);
/* Closes the archive: flush everything, write definitions. */
void zc_otf2_finalize(void);
const char *zc_otf2_path(void);
uint64_t zc_otf2_write_errors(void); /* writes of the archive that failed (disk full, I/O errors) */
/* errno of a write that failed because of the file system (full, quota, file-size limit, I/O,
 * read-only), not because of us; such failures are counted as write errors (zc_otf2_io.c) */
bool zc_write_failure(int e);
void zc_write_failure_count(void);

/* ---------------------------------------------------------------- the job */
/* Whom this process's archive is shared with. Serial (the default): a process alone, its own
 * archive. MPI (set by mpi/ in MPI_Init): one archive per job, opened and closed collectively;
 * the writer's collective steps go through these operations, on the collector's private
 * communicator, so collector/ itself needs no MPI. */
struct zc_clock_offset {
    uint64_t local;  /* local time of the measurement */
    int64_t offset;  /* add to local time to get rank 0's */
    double stddev;
};
struct zc_job {
    uint32_t rank, size;
    bool mpi;          /* one archive per job */
    bool closing;      /* inside MPI_Finalize on every rank: the collective close may run */
    uint64_t mpi_loc;  /* location (local id) of the thread that initialised MPI */
    int (*bcast)(void *buf, size_t n); /* from rank 0 */
    /* each rank sends n bytes; rank 0 receives them concatenated (*all, malloc'd) with sizes[] */
    int (*gather)(const void *buf, size_t n, void **all, size_t *sizes);
    /* rank 0 sends sizes[i] bytes of all to rank i; each receives its part (*mine, malloc'd) */
    int (*scatter)(const void *all, const size_t *sizes, void **mine, size_t *n);
    int (*all_true)(bool *v); /* logical AND over ranks */
    int (*otf2_collectives)(void *archive);
    struct zc_clock_offset offsets[2]; /* at init and at finalize */
    int noffsets;
};
extern struct zc_job zc_job;

/* MPI_Init (collective): opens the job's archive and writes the events held until then.
 * 0 = the job's archive is open on every rank. */
int zc_otf2_start_job(void);
/* Whether an MPI job is expected to start (mpi/): events are held instead of opening a
 * per-process archive. */
bool zc_mpi_expected(void);
/* Whether this process was started by an MPI launcher (and links MPI): its archive is the job's,
 * opened in MPI_Init, never one the journal's flusher opens for it alone. */
bool zc_mpi_launched(void);

/* ---------------------------------------------------------------- salvage journal */
/* What `zecoll salvage` needs to rebuild the archive of a run that died (zc_journal.c; format in
 * zc_jrn_format.h, docs/archive.md): definitions and records, appended to
 * <archive>/zecoll-journal/<rank>.zcj as they reach the archive's writer, and by a background
 * flusher every ZECOLL_FLUSH_INTERVAL_MS for what still sits in location buffers. Removed when
 * the archive is complete. */
void zc_jrn_open(const char *dir); /* the archive exists (otf2 lock held) */
/* Records [first, first + n) of loc, in ns (otf2 lock held). Records already journaled (by the
 * flusher) are skipped. */
void zc_jrn_events(struct zc_loc *loc, uint64_t first, const struct zc_ev *ev, size_t n);
void zc_jrn_offsets(void); /* zc_job.offsets grew (MPI thread, clock_sync) */
/* At the end: complete = the archive is whole, the journal goes; otherwise everything recorded is
 * in it and it stays for `zecoll salvage`. Returns whether a journal is left behind. */
bool zc_jrn_close(bool complete);
/* Whether a journal is open, so that zc_jrn_close(false) will leave one behind: a rank that
 * cannot complete the archive says so before that close, whose last flush and fdatasync a busy
 * disk can make take longer than a rank stopped by mpirun (SIGTERM, then SIGKILL) is given. */
bool zc_jrn_exists(void);
void zc_jrn_start(void); /* a location exists: the flusher starts (once) */
/* Writes definitions at close (zc_unify.c): unifies them across the job, writes mapping tables
 * and clock offsets into each location's local definitions, and on rank 0 the global ones.
 * Collective in an MPI job; every rank calls it exactly once. */
void zc_unify_write(void *archive, uint64_t ts_min, uint64_t ts_max);
uint64_t zc_otf2_loc_id(const struct zc_loc *l);

/* ---------------------------------------------------------------- lifecycle */
/* One entry per layer; called in table order (finalize in reverse). */
struct zc_subsystem {
    const char *name;
    int (*init)(void);          /* constructor; non-zero = layer off */
    int (*post_mpi_init)(void); /* after the app's MPI_Init, on every rank (collective) */
    void (*pre_finalize)(void); /* app still intact: drain device work */
    void (*finalize)(void);     /* write out */
    void (*fork_child)(void);   /* in the child after fork() */
    void (*thread_exit)(void);  /* on a recording thread that exits, before its slot is reused */
};
void zc_thread_exit_hooks(void); /* every layer's thread_exit (zc_loc.c's key destructor) */
extern const struct zc_subsystem zc_core_subsystem, zc_ze_subsystem, zc_otf2_subsystem, zc_mpi_subsystem,
    zc_jrn_subsystem;

extern atomic_bool zc_is_active;
/* initialised, enabled and not yet finalized */
static inline bool zc_active(void) { return atomic_load_explicit(&zc_is_active, memory_order_acquire); }
uint64_t zc_start_time(void);
/* Starts one of the collector's threads with every signal blocked: signals are the
 * application's (pthread_create's result). */
int zc_thread_spawn(pthread_t *t, void *(*fn)(void *), void *arg);
uint32_t zc_rank(void);
/* The one finalize (zc_exit.c): the first caller runs it, every other exit path waits for it
 * (bounded by its progress); a thread on its way out while a fatal signal is delivered waits for
 * that. */
void zc_finalize(void);
void zc_lifecycle_finalize(void); /* every layer's pre_finalize and finalize (zc_lifecycle.c) */
void zc_exit_init(void);          /* constructor: atexit handler, signal handlers and their watcher */
void zc_exit_fork_child(void);
/* Bumped as the finalize advances (buffers written, layers done): exit paths waiting for it tell
 * a slow finalizer from a stuck one by it. */
extern atomic_uint_fast64_t zc_progress;
int zc_post_mpi_init(void); /* runs every layer's post_mpi_init; non-zero if one failed */
/* MPI_Init on a rank whose collector is off while others collect: start the core to take part
 * in the job's archive as an unselected rank (no events). 0 = started. */
int zc_start_unselected(void);
int zc_real_sigaction(int sig, const struct sigaction *act, struct sigaction *old); /* libc's, not ours */

#endif
