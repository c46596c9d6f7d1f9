/* SPDX-License-Identifier: MIT */
/* Recording windows (docs/config.md "Windows"): which ranks record, and when. Recording is on
 * while at least one window that applies on this rank is open; every interposed call checks
 * that with one load of zc_rec (zc_window.h), nothing else. What opens and closes the windows:
 * a timer thread (time), MPI_Pcontrol (pcontrol), the launch hooks counting matching kernels
 * (kernel), an async-signal-safe handler (signal).
 *
 * zc_rec counts the open windows (bits 0-30), flags an inactive collector (bit 31) and counts
 * the on/off transitions (bits 32-63). Windows change it by compare-and-swap only (no lock, so
 * the signal handler may too): a change that turns recording on or off also bumps the count of
 * transitions, and the transition's number picks its slot in an append-only log of (time,
 * on/off). The log is all the writer needs to place MeasurementOnOff records on every location
 * (writer/zc_writer.c), so no hot path ever writes a marker. */
#include "zc_window.h"

#include "zc_clock.h"
#include "zc_knobs.h"
#include "zc_launcher.h"
#include "zc_log.h"
#include "zc_proc.h"
#include "zc_sig.h"

#include <pthread.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

_Atomic uint64_t zc_rec = ZC_REC_INACTIVE;

#define REC_COUNT UINT64_C(0x7fffffff)
#define REC_SEQ1 (UINT64_C(1) << 32)

/* ---------------------------------------------------------------- the transition log */
/* Entry k is the k-th transition (entry 0: the state at start-up). Chunks are mapped with mmap,
 * which a signal handler may call, and never move. */
struct wlog_ent {
    _Atomic uint64_t tick; /* zc_tick() of the transition */
    _Atomic uint64_t ns;   /* its host ns, converted once (0: not yet) */
    _Atomic uint32_t state;/* 0: not written yet, 1: off, 2: on */
};
#define WLOG_CHUNK 4096u
#define WLOG_CHUNKS 4096u
static struct wlog_ent *_Atomic wlog[WLOG_CHUNKS];
static atomic_uint_fast64_t wlog_lost;

static struct wlog_ent *wlog_slot(uint64_t k, bool create) {
    uint64_t c = k / WLOG_CHUNK;
    if (c >= WLOG_CHUNKS) return NULL;
    struct wlog_ent *p = atomic_load_explicit(&wlog[c], memory_order_acquire);
    if (!p && create) {
        void *m = mmap(NULL, WLOG_CHUNK * sizeof(struct wlog_ent), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED) return NULL;
        struct wlog_ent *exp = NULL;
        if (atomic_compare_exchange_strong_explicit(&wlog[c], &exp, (struct wlog_ent *)m, memory_order_acq_rel,
                                                    memory_order_acquire)) {
            p = m;
        } else {
            munmap(m, WLOG_CHUNK * sizeof(struct wlog_ent));
            p = exp;
        }
    }
    return p ? &p[k % WLOG_CHUNK] : NULL;
}

static void wlog_write(uint64_t k, uint64_t tick, bool on) {
    struct wlog_ent *e = wlog_slot(k, true);
    if (!e) { /* out of memory or 16M transitions: later markers are missing (counted) */
        atomic_fetch_add_explicit(&wlog_lost, 1, memory_order_relaxed);
        return;
    }
    atomic_store_explicit(&e->tick, tick, memory_order_relaxed);
    atomic_store_explicit(&e->state, on ? 2u : 1u, memory_order_release);
}

bool zc_win_log_get(uint64_t k, uint64_t *ns, bool *on) {
    struct wlog_ent *e = wlog_slot(k, false);
    if (!e) return false;
    uint32_t st = atomic_load_explicit(&e->state, memory_order_acquire);
    if (!st) return false;
    uint64_t t = atomic_load_explicit(&e->ns, memory_order_relaxed);
    if (!t) {
        t = zc_tick_to_ns(atomic_load_explicit(&e->tick, memory_order_relaxed));
        /* two transitions racing may have read their clocks in the other order */
        uint64_t prev_ns;
        bool prev_on;
        if (k > 0 && zc_win_log_get(k - 1, &prev_ns, &prev_on) && prev_ns > t) t = prev_ns;
        if (!t) t = 1;
        atomic_store_explicit(&e->ns, t, memory_order_relaxed);
    }
    *ns = t;
    *on = st == 2;
    return true;
}

/* MeasurementOnOff records are placed where a buffer is converted (zc_marks.c), from this live
 * log: nothing on a hot path writes them. */
static bool win_log_get(void *ud, uint64_t k, uint64_t *ns, bool *on) {
    (void)ud;
    return zc_win_log_get(k, ns, on);
}
const struct zc_marks_log zc_win_marks_log = {win_log_get, NULL};

uint64_t zc_win_log_current(void) { return atomic_load_explicit(&zc_rec, memory_order_acquire) >> 32; }
uint64_t zc_win_markers_lost(void) { return atomic_load(&wlog_lost); }

/* One more (+1) or one fewer (-1) open window. Lock-free and async-signal-safe. */
static void rec_add(int delta) {
    uint64_t tick = zc_tick();
    uint64_t old = atomic_load_explicit(&zc_rec, memory_order_relaxed), nw;
    bool flip;
    do {
        uint64_t cnt = old & REC_COUNT, ncnt = (cnt + (uint64_t)(int64_t)delta) & REC_COUNT;
        /* transitions are only logged while active: before, the start-up state is entry 0 */
        flip = (cnt == 0) != (ncnt == 0) && !(old & ZC_REC_INACTIVE);
        nw = (old & ~REC_COUNT) | ncnt;
        if (flip) nw += REC_SEQ1;
    } while (!atomic_compare_exchange_weak_explicit(&zc_rec, &old, nw, memory_order_acq_rel, memory_order_relaxed));
    if (flip) wlog_write(nw >> 32, tick, (nw & REC_COUNT) != 0);
}

void zc_win_set_active(bool on) {
    if (on) atomic_fetch_and(&zc_rec, ~ZC_REC_INACTIVE);
    else atomic_fetch_or(&zc_rec, ZC_REC_INACTIVE);
}

/* ---------------------------------------------------------------- windows of this rank */
struct win {
    const struct zc_window *w;
    bool applies;              /* on this rank (and the rank is selected) */
    _Atomic int open;
    atomic_uint_fast64_t launches; /* kernel windows: matching launches so far */
};
static struct win *wins;
static uint32_t nwins;
static struct win whole_run;   /* no windows configured: one that is always open */
static bool selected;          /* this rank is in `ranks` */
static uint32_t my_rank;
static bool late_unselected;   /* ZECOLL_ENABLE=0 (or a failed start) on this rank of a traced job */
bool zc_win_kernels;           /* kernel windows or kernel filters exist: launches look at their kernel */
bool zc_win_kernel_windows;    /* kernel windows apply on this rank: launches are counted while off too */
#define kernel_windows zc_win_kernel_windows

static void win_open(struct win *w) {
    if (!w->applies) return;
    if (atomic_exchange(&w->open, 1) == 0) rec_add(+1);
}
static void win_close(struct win *w) {
    if (atomic_exchange(&w->open, 0) == 1) rec_add(-1);
}

/* ---------------------------------------------------------------- time windows */
static pthread_mutex_t timer_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t timer_cv;
static pthread_t timer_thread;
static bool timer_running, timer_stop;
static uint64_t time_base;      /* ns (zc_now) that time windows count from; 0: not yet */

/* Opens and closes time windows for the time now; returns the next boundary (ns after the
 * base), UINT64_MAX if none is left. */
static uint64_t time_apply(void) {
    uint64_t now = zc_now() - time_base, next = UINT64_MAX;
    for (uint32_t i = 0; i < nwins; i++) {
        struct win *w = &wins[i];
        if (w->w->kind != ZC_WIN_TIME || !w->applies) continue;
        uint64_t a = w->w->start_ns, b = w->w->stop_ns;
        if (now >= a && (b == ZC_WIN_NS_END || now < b)) win_open(w);
        else win_close(w);
        uint64_t edge = now < a ? a : b; /* its next boundary, unless that has passed */
        if (edge > now && edge != ZC_WIN_NS_END && edge < next) next = edge;
    }
    return next;
}

/* Sleeps on CLOCK_MONOTONIC (condition variables cannot wait on CLOCK_MONOTONIC_RAW) and checks
 * the raw clock when it wakes: a window never opens or closes early. */
static void *timer_main(void *arg) {
    (void)arg;
    pthread_mutex_lock(&timer_lock);
    while (!timer_stop) {
        uint64_t next = time_apply();
        if (next == UINT64_MAX) break;
        uint64_t now = zc_now() - time_base;
        if (now >= next) continue;
        uint64_t wait = next - now;
        struct timespec dl;
        clock_gettime(CLOCK_MONOTONIC, &dl);
        uint64_t ns = (uint64_t)dl.tv_nsec + wait;
        dl.tv_sec += (time_t)(ns / 1000000000u);
        dl.tv_nsec = (long)(ns % 1000000000u);
        pthread_cond_timedwait(&timer_cv, &timer_lock, &dl);
    }
    pthread_mutex_unlock(&timer_lock);
    return NULL;
}

static void time_start(uint64_t base) {
    bool any = false;
    for (uint32_t i = 0; i < nwins; i++) any |= wins[i].w->kind == ZC_WIN_TIME && wins[i].applies;
    pthread_mutex_lock(&timer_lock);
    if (time_base || !any) {
        pthread_mutex_unlock(&timer_lock);
        return;
    }
    time_base = base;
    /* windows that start at 0 are open when the program continues, not when the thread runs */
    uint64_t next = time_apply();
    if (next != UINT64_MAX && !timer_running) {
        pthread_condattr_t ca;
        pthread_condattr_init(&ca);
        pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
        pthread_cond_init(&timer_cv, &ca);
        pthread_condattr_destroy(&ca);
        timer_running = zc_thread_spawn(&timer_thread, "zc-window", timer_main, NULL) == 0; /* the app's signals are not ours */
        if (!timer_running) ZC_FAIL(ZC_F_TRACE, "cannot start the thread of the time windows");
    }
    pthread_mutex_unlock(&timer_lock);
}

/* ---------------------------------------------------------------- signal windows */
static struct sigaction sig_chained[NSIG]; /* the application's own action for a window's signal */
static bool sig_ours[NSIG];

static void on_window_signal(int sig, siginfo_t *si, void *uc) {
    int saved = errno;
    for (uint32_t i = 0; i < nwins; i++) {
        struct win *w = &wins[i];
        if (w->w->kind != ZC_WIN_SIGNAL || w->w->signo != sig || !w->applies) continue;
        if (atomic_fetch_xor(&w->open, 1) == 0) rec_add(+1);
        else rec_add(-1);
    }
    /* an application handler for the same signal still runs; the default action (which ends
     * most processes) does not: the user chose this signal for the collector */
    struct sigaction *ch = &sig_chained[sig];
    if (ch->sa_flags & SA_SIGINFO) {
        if (ch->sa_sigaction) ch->sa_sigaction(sig, si, uc);
    } else if (ch->sa_handler != SIG_DFL && ch->sa_handler != SIG_IGN) {
        ch->sa_handler(sig);
    }
    errno = saved;
}

static void signals_install(void) {
    for (uint32_t i = 0; i < nwins; i++) {
        int sig = wins[i].w->signo;
        if (wins[i].w->kind != ZC_WIN_SIGNAL || sig <= 0 || sig >= NSIG || sig_ours[sig]) continue;
        /* installed on every rank, also where the window does not apply: a signal sent to the
         * whole job must not kill the ranks that ignore it */
        struct sigaction sa;
        memset(&sa, 0, sizeof(sa));
        sa.sa_sigaction = on_window_signal;
        sa.sa_flags = SA_RESTART | SA_SIGINFO;
        sigemptyset(&sa.sa_mask);
        if (zc_real_sigaction(sig, &sa, &sig_chained[sig]) == 0) sig_ours[sig] = true;
        else ZC_WARN("cannot install the handler of %s: its window never opens", strsignal(sig));
    }
}

/* The application's sigaction() for a window's signal: it becomes the action we chain to. */
bool zc_win_sigaction(int sig, const struct sigaction *act, struct sigaction *old) {
    if (sig <= 0 || sig >= NSIG || !sig_ours[sig]) return false;
    if (old) *old = sig_chained[sig];
    if (act) sig_chained[sig] = *act;
    return true;
}

/* ---------------------------------------------------------------- set-up */
static void apply_rank(uint32_t rank) {
    my_rank = rank;
    selected = !late_unselected && zc_rankset_contains(&zc_knobs.RANKS, rank);
    for (uint32_t i = 0; i < nwins; i++) {
        struct win *w = &wins[i];
        bool a = selected && zc_window_on_rank(w->w, rank);
        if (a == w->applies) continue;
        if (!a) {
            win_close(w);
            w->applies = false;
            continue;
        }
        w->applies = true;
        switch (w->w->kind) {
        case ZC_WIN_PCONTROL:
        case ZC_WIN_SIGNAL:
            if (w->w->initial) win_open(w);
            break;
        case ZC_WIN_KERNEL: {
            uint64_t n = atomic_load(&w->launches);
            if (n >= w->w->start && (w->w->count == ZC_WIN_COUNT_ALL || n - w->w->start < w->w->count)) win_open(w);
            break;
        }
        case ZC_WIN_TIME: break; /* time_start / the timer thread */
        }
    }
    bool kw = false;
    for (uint32_t i = 0; i < nwins; i++) kw |= wins[i].w->kind == ZC_WIN_KERNEL && wins[i].applies;
    bool any = kw || zc_knobs.KERNELS_INCLUDE.n || zc_knobs.KERNELS_EXCLUDE.n;
    /* read on every launch by other threads: written only when they change (the rank MPI_Init
     * confirms rarely differs from the launcher's) */
    if (kernel_windows != kw) kernel_windows = kw;
    if (zc_win_kernels != any) zc_win_kernels = any;
    if (!nwins) {
        whole_run.applies = selected;
        if (selected) win_open(&whole_run);
        else win_close(&whole_run);
    }
}

/* The rank is known from the launcher's variables before MPI_Init; MPI_Init confirms it. */
void zc_win_init(void) {
    nwins = zc_knobs.WINDOWS.n;
    wins = nwins ? calloc(nwins, sizeof(*wins)) : NULL;
    if (nwins && !wins) nwins = 0; /* cannot happen in practice; then the whole run is recorded */
    for (uint32_t i = 0; i < nwins; i++) wins[i].w = &zc_knobs.WINDOWS.v[i];
    int r = zc_launcher_rank();
    /* still inactive: the start-up state is entry 0, not a transition */
    apply_rank(r < 0 ? 0 : (uint32_t)r);
    wlog_write(0, zc_tick(), (atomic_load(&zc_rec) & REC_COUNT) != 0);
    signals_install();
    /* a process without MPI counts time from its start; an MPI program from MPI_Init */
    if (!zc_job.mpi_linked) time_start(zc_start_time());
}

/* Before zc_win_init (zc_start_unselected): the start-up state is then "off". */
void zc_win_unselected(void) { late_unselected = true; }

void zc_win_mpi_init(uint32_t rank) {
    if (rank != my_rank) apply_rank(rank);
}

void zc_win_time_base(void) { time_start(zc_now()); }

bool zc_win_rank_selected(void) { return selected; }

void zc_win_pcontrol(int level) {
    if (level < 0) return; /* MPI leaves other levels to the tool: negative ones are ignored */
    for (uint32_t i = 0; i < nwins; i++) {
        if (wins[i].w->kind != ZC_WIN_PCONTROL) continue;
        if (level == 0) win_close(&wins[i]);
        else win_open(&wins[i]);
    }
}

void zc_win_finalize(void) {
    pthread_mutex_lock(&timer_lock);
    bool running = timer_running;
    timer_stop = true;
    if (running) pthread_cond_signal(&timer_cv);
    pthread_mutex_unlock(&timer_lock);
    if (running && !pthread_equal(pthread_self(), timer_thread)) pthread_join(timer_thread, NULL);
    timer_running = false;
}

void zc_win_fork_child(void) {
    /* the timer thread stayed in the parent; the child records nothing anyway */
    timer_running = false;
}

/* ---------------------------------------------------------------- kernels */
void zc_win_kernel_info(const char *name, struct zc_kernel_sel *k) {
    memset(k, 0, sizeof(*k));
    k->selected = zc_kernel_selected(&zc_knobs, name);
    if (!kernel_windows) return;
    for (uint32_t i = 0; i < nwins; i++) {
        if (wins[i].w->kind != ZC_WIN_KERNEL || !wins[i].applies || !zc_glob_match(wins[i].w->name, name)) continue;
        if (k->nwin < ZC_KSEL_MAX) k->win[k->nwin++] = (uint16_t)i;
    }
}

/* Counts one launch of a kernel (or a multiple-indirect launch holding it) for the windows it
 * matches: the start-th opens its window before the launch is looked at, the last one closes it
 * after the launch was appended (zc_win_kernel_after). Returns the windows to close then. */
uint32_t zc_win_kernel_launch(const struct zc_kernel_sel *k) {
    uint32_t close = 0;
    for (uint32_t j = 0; j < k->nwin; j++) {
        struct win *w = &wins[k->win[j]];
        uint64_t n = atomic_fetch_add(&w->launches, 1) + 1, a = w->w->start, c = w->w->count;
        if (n == a) win_open(w);
        if (c != ZC_WIN_COUNT_ALL && n == a + c - 1) close |= 1u << j;
    }
    return close;
}

void zc_win_kernel_after(const struct zc_kernel_sel *k, uint32_t close) {
    for (uint32_t j = 0; j < k->nwin; j++)
        if (close & (1u << j)) win_close(&wins[k->win[j]]);
}

/* ---------------------------------------------------------------- describing this rank */
const char *zc_win_describe(char *buf, size_t size) {
    if (late_unselected) snprintf(buf, size, "not recorded (ZECOLL_ENABLE=0 on this rank)");
    else if (!selected) snprintf(buf, size, "not recorded (not in ranks)");
    else if (nwins) snprintf(buf, size, "%llu on/off transition(s)", (unsigned long long)zc_win_log_current());
    else buf[0] = 0;
    return buf;
}

/* No window of this rank ever opened (recording was never on): what the windows were, for the
 * one line said at exit instead of the summary, or false. */
bool zc_win_never_opened(char *buf, size_t size) {
    if (!nwins || !selected || late_unselected) return false;
    uint64_t ns;
    bool on;
    for (uint64_t k = 0; k <= zc_win_log_current(); k++)
        if (zc_win_log_get(k, &ns, &on) && on) return false;
    static const char *const kinds[] = {"time", "pcontrol", "kernel", "signal"};
    size_t o = 0;
    buf[0] = 0;
    for (uint32_t i = 0; i < nwins && o + 1 < size; i++) {
        const struct zc_window *w = wins[i].w;
        if (!wins[i].applies) continue;
        int n = w->kind == ZC_WIN_KERNEL ? snprintf(buf + o, size - o, "%skernel:%s", o ? ", " : "", w->name)
                                         : snprintf(buf + o, size - o, "%s%s", o ? ", " : "", kinds[w->kind]);
        if (n < 0) break;
        o += (size_t)n < size - o ? (size_t)n : size - o - 1;
    }
    return true;
}
