/* SPDX-License-Identifier: MIT */
/* The composition root of libzecoll.so: the one file that knows every floor and both layers.
 * The subsystem table (each layer's init / post_mpi_init / pre_finalize / finalize / fork_child /
 * thread_exit), the constructor, fork handling and every exit path drive them in order; nothing
 * else initialises or tears down collector state. The layers reach these steps through core/'s
 * zc_finalize, zc_post_mpi_init and zc_start_unselected, which the constructor installs first.
 *
 * How a process ends: every way out (return from main, exit() on any thread, MPI_Finalize,
 * SIGTERM/SIGINT/SIGHUP/SIGQUIT/SIGXCPU) goes through one finalizer; every other exit path
 * waits for it, bounded by its progress; and the process ends as it would have without the
 * collector (a signal death stays a signal death, the status of exit() stays the status).
 *
 * Signals: the archive must be written, but not from a handler: the interrupted thread may hold
 * the very locks (ours, the driver's, malloc's) that writing needs. The handler writes the
 * signal number to a pipe (async-signal-safe) and a watcher thread, with every signal blocked,
 * finalizes. Meanwhile the interrupted thread waits inside the handler, so the application sees
 * what it would have seen without us: no EINTR from the sleep, poll or read it was in (a default
 * action would have ended the process there), and its own handler, if it has one, runs on that
 * thread, with the siginfo and context of the delivery, once the archive is written. A thread
 * interrupted while it recorded an event (its location marked busy: the finalizer waits for it)
 * does not wait; the watcher then delivers the signal to the process itself. Another signal
 * while the archive is written is passed on at once, so a stuck finalize never makes a process
 * unkillable. Fatal signals that report a crash (SIGSEGV, SIGBUS, SIGABRT, ...) are left alone:
 * nothing can be written safely from there, and the archive directory then lacks its anchor
 * file (traces.otf2), so it never looks complete. */
#include "zc_journal.h"
#include "zc_otf2.h"
#include "zc_otf2_io.h"
#include "zc_writer.h"

#include "zc_core.h"
#include "zc_papi.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* The layers: named here and nowhere else below them. */
extern const struct zc_subsystem zc_ze_subsystem, zc_mpi_subsystem;

/* ---------------------------------------------------------------- core subsystem */
static int core_init(void) {
    for (int f = 0; f < ZC_F_COUNT; f++) atomic_store(&zc_feature_on[f], true);
    if (!zc_knobs.API_TIMING) atomic_store(&zc_feature_on[ZC_F_API_TIMING], false);
    if (!zc_knobs.DEVICE_TIMING) atomic_store(&zc_feature_on[ZC_F_DEVICE_TIMING], false);
    if (!zc_knobs.RECORD_MPI) atomic_store(&zc_feature_on[ZC_F_MPI], false);
    /* no events: PAPI is never loaded and nothing samples (zc_papi.c) */
    if (!zc_knobs.PAPI_EVENTS.n) atomic_store(&zc_feature_on[ZC_F_PAPI], false);
    zc_param_callsite = 0; /* the one parameter, defined by the writer */
    zc_region_flush = zc_def_region("zecoll buffer flush", ZC_ROLE_ARTIFICIAL, ZC_PARADIGM_MEASUREMENT);
    /* local communicator 0: the process's Level Zero communicator (RMA window 0 lives on it) */
    if (zc_def_comm(ZC_COMM_L0, "L0", ZC_NO_ID, NULL, 0, NULL, 0, "l0", 2) != 0) return -1;
    zc_win_init();
    return 0;
}

static int layer_summaries(char *line, size_t cap, int n);
static bool late_started; /* started in MPI_Init to take part in the job's archive (ZECOLL_ENABLE=0 here) */

static void core_finalize(void) {
    zc_win_finalize();
    if (!zc_knobs.SUMMARY || zc_knobs.LOG_LEVEL == 0 || late_started) return;
    uint64_t events = 0, clamped = 0, dropped = zc_loc_lost_count(), threads = 0, streams = 0;
    for (struct zc_loc *l = zc_loc_list(); l; l = l->next) {
        events += l->nevents;
        clamped += l->nclamped;
        dropped += l->ndropped;
        if (l->kind == ZC_LOC_THREAD) threads++;
        else streams++;
    }
    char line[PATH_MAX + 512], win[256];
    if (zc_win_never_opened(win, sizeof(win))) { /* else indistinguishable from a collector not loaded */
        int k = snprintf(line, sizeof(line), "zecoll: rank %u: recording window(s) %s never opened: %s", zc_job.rank,
                         win, zc_otf2_path()[0] ? "the archive holds no events" : "no archive");
        if (k > 0) zc_log_write(line, sizeof(line), (size_t)k);
        return;
    }
    if (!zc_otf2_path()[0] && !events && !dropped) return; /* nothing recorded, nothing to say */
    zc_win_describe(win, sizeof(win));
    int n = snprintf(line, sizeof(line),
                     "zecoll: rank %u: %llu events on %llu thread(s) and %llu device stream(s) -> %s "
                     "(%llu clamped, %llu dropped, %llu internal errors, %llu write errors%s%s%s)",
                     zc_job.rank, (unsigned long long)events, (unsigned long long)threads, (unsigned long long)streams,
                     zc_on(ZC_F_TRACE) && zc_otf2_path()[0] ? zc_otf2_path() : "(no archive)", (unsigned long long)clamped,
                     (unsigned long long)dropped, (unsigned long long)atomic_load(&zc_failures),
                     (unsigned long long)zc_otf2_write_errors(),
                     zc_otf2_io_damaged() ? ": the archive ends where writing failed" : "", win[0] ? "; " : "", win);
    if (n > 0 && (size_t)n < sizeof(line)) n = layer_summaries(line, sizeof(line), n);
    if (n > 0) zc_log_write(line, sizeof(line), (size_t)n);
}

static const struct zc_subsystem zc_core_subsystem = {.name = "core", .init = core_init, .finalize = core_finalize};

static const struct zc_subsystem *const subsystems[] = {
    &zc_core_subsystem,
    &zc_writer_subsystem,
    &zc_jrn_subsystem, /* finalizes before the writer: its flusher stops before the buffers are written */
    &zc_ze_subsystem,
    &zc_mpi_subsystem,
};
#define NSUB (sizeof(subsystems) / sizeof(subsystems[0]))

/* The layers' parts of the summary line (Level Zero: the spec versions, calls passed through
 * untraced) after its first n characters; the new length. */
static int layer_summaries(char *line, size_t cap, int n) {
    for (size_t i = 0; i < NSUB && (size_t)n + 3 < cap; i++) {
        char part[512];
        if (!subsystems[i]->summary || !subsystems[i]->summary(part, sizeof(part))) continue;
        int k = snprintf(line + n, cap - (size_t)n, "; %s", part);
        if (k > 0) n = (size_t)n + (size_t)k < cap ? n + k : (int)cap - 1;
    }
    return n;
}

static int post_mpi_init(void) {
    int rc = 0;
    for (size_t i = 0; i < NSUB; i++)
        if (subsystems[i]->post_mpi_init && subsystems[i]->post_mpi_init() != 0) rc = -1;
    zc_phase("init.archive");
    return rc;
}

/* A recording thread exits: its PAPI set stops (its counts go on with the slot's next thread),
 * and while the collector is active every layer lets go of what it kept for the thread. */
static void thread_exit_hooks(struct zc_thread *t) {
    zc_papi_thread_exit(t);
    if (!zc_active()) return;
    for (size_t i = 0; i < NSUB; i++)
        if (subsystems[i]->thread_exit) subsystems[i]->thread_exit();
}

/* ---------------------------------------------------------------- finalize */
/* Every layer's pre_finalize and finalize, once; finalize_once (below) decides who runs it. */
static void lifecycle_finalize(void) {
    if (!zc_active()) return;
    zc_phase("fin.begin");
    for (size_t i = 0; i < NSUB; i++)
        if (subsystems[i]->pre_finalize) subsystems[i]->pre_finalize();
    zc_phase("fin.pre");
    atomic_fetch_add(&zc_progress, 1);
    /* events after this point (other threads still running) are not recorded */
    zc_win_set_active(false);
    atomic_store_explicit(&zc_is_active, false, memory_order_release);
    for (size_t i = NSUB; i-- > 0;) {
        if (subsystems[i]->finalize) subsystems[i]->finalize();
        zc_phase(subsystems[i]->name);
        atomic_fetch_add(&zc_progress, 1);
    }
}

/* ---------------------------------------------------------------- waiting */
static void futex_wait(_Atomic int *addr, int val, long ns) {
    struct timespec ts = {ns / 1000000000L, ns % 1000000000L};
    syscall(SYS_futex, (int *)addr, FUTEX_WAIT_PRIVATE, val, &ts, NULL, 0);
}
static void futex_wake(_Atomic int *addr) { syscall(SYS_futex, (int *)addr, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0); }

/* Waits while *addr == val, as long as the finalizer makes progress: a finalizer that shows none
 * for the device timeout plus 10 s is taken to be stuck. False if it gave up. Async-signal-safe
 * (a futex and clock_gettime). */
static bool wait_while(_Atomic int *addr, int val) {
    uint64_t limit = (zc_knobs.FINALIZE_TIMEOUT_MS + 10000) * UINT64_C(1000000);
    uint64_t seen = atomic_load(&zc_progress), since = zc_now();
    while (atomic_load(addr) == val) {
        futex_wait(addr, val, 100 * 1000000L);
        uint64_t p = atomic_load(&zc_progress), now = zc_now();
        if (p != seen) {
            seen = p;
            since = now;
        } else if (now - since > limit) {
            return false;
        }
    }
    return true;
}

/* ---------------------------------------------------------------- the signals we take */
static const int taken[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGXCPU};
#define NTAKEN (sizeof(taken) / sizeof(taken[0]))
static struct sigaction app_act[NTAKEN]; /* what the application set (or found), under sig_lock */
static pthread_mutex_t sig_lock = PTHREAD_MUTEX_INITIALIZER;
static int sig_pipe[2] = {-1, -1};
static atomic_bool sig_installed, sig_released;
static atomic_bool watcher_up; /* the watcher thread runs (start_watcher) */
static _Atomic int sig_first;    /* the signal that started a finalize, 0 = none */
static _Atomic int sig_first_dfl; /* ... and whether its action then was the default one */
enum { PARK_NONE, PARK_WAITING, PARK_HANDED };
static _Atomic int parked; /* the interrupted thread waits in the handler (see above) */

static int slot_of(int sig) {
    for (size_t i = 0; i < NTAKEN; i++)
        if (taken[i] == sig) return (int)i;
    return -1;
}

static bool is_ign(const struct sigaction *a) { return !(a->sa_flags & SA_SIGINFO) && a->sa_handler == SIG_IGN; }
static bool is_dfl(const struct sigaction *a) { return !(a->sa_flags & SA_SIGINFO) && a->sa_handler == SIG_DFL; }

static void on_signal(int sig, siginfo_t *si, void *uc);
static void finalize_once(void);

/* Puts our handler in front of the application's disposition app_act[i] (sig_lock held, or
 * single-threaded). An ignored signal stays ignored in the kernel (so exec'd programs inherit
 * it, as nohup means). Ours interrupts system calls as the application's handler would
 * (SA_RESTART as it chose), and as if restarted where the default action would have ended the
 * process anyway; the application's mask applies while it runs. */
static void install_one(size_t i) {
    const struct sigaction *a = &app_act[i];
    if (is_ign(a)) {
        zc_real_sigaction(taken[i], a, NULL);
        return;
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_sigaction = on_signal;
    sa.sa_flags = SA_SIGINFO | (is_dfl(a) ? SA_RESTART : (a->sa_flags & SA_RESTART)) | (a->sa_flags & SA_ONSTACK);
    sa.sa_mask = a->sa_mask;
    zc_real_sigaction(taken[i], &sa, NULL);
}

/* After the finalize: the application's dispositions are the real ones again (it may run on for
 * a long time after MPI_Finalize). */
static void release_signals(void) {
    if (!atomic_load(&sig_installed) || atomic_exchange(&sig_released, true)) return;
    pthread_mutex_lock(&sig_lock);
    for (size_t i = 0; i < NTAKEN; i++) zc_real_sigaction(taken[i], &app_act[i], NULL);
    pthread_mutex_unlock(&sig_lock);
}

/* Runs what the application's disposition says for sig, here, in a handler of ours: its handler
 * with the delivery's siginfo and context, or the default action (raised on this thread, where
 * the signal is blocked until our handler returns: then it ends the process). */
static void chain(int sig, siginfo_t *si, void *uc) {
    int i = slot_of(sig);
    struct sigaction a = app_act[i];
    if (is_ign(&a)) return;
    if (is_dfl(&a)) {
        struct sigaction dfl;
        memset(&dfl, 0, sizeof(dfl));
        dfl.sa_handler = SIG_DFL;
        zc_real_sigaction(sig, &dfl, NULL);
        raise(sig);
        return;
    }
    if (a.sa_flags & SA_RESETHAND) { /* the kernel would have reset it on delivery */
        memset(&app_act[i], 0, sizeof(app_act[i]));
        app_act[i].sa_handler = SIG_DFL;
        zc_real_sigaction(sig, &app_act[i], NULL);
    }
    if (a.sa_flags & SA_SIGINFO) a.sa_sigaction(sig, si, uc);
    else a.sa_handler(sig);
}

/* The signal, delivered to the process by the watcher when no thread waits to take it (its
 * disposition is the application's again by then). */
static void deliver(int sig) { kill(getpid(), sig); }

static void on_signal(int sig, siginfo_t *si, void *uc) {
    int saved = errno;
    int i = slot_of(sig);
    if (i < 0 || is_ign(&app_act[i])) goto out;
    int none = 0;
    if (atomic_load(&sig_released) || sig_pipe[1] < 0 || !atomic_load(&watcher_up) ||
        !atomic_compare_exchange_strong(&sig_first, &none, sig)) {
        chain(sig, si, uc); /* after the finalize, or a second signal during it: passed on at once */
        goto out;
    }
    atomic_store(&sig_first_dfl, is_dfl(&app_act[i]));
    /* wait here only if the finalizer never waits for this thread (a busy location) */
    struct zc_thread *t = zc_tls_thread;
    bool park = !(t && t->loc && (atomic_load_explicit(&t->loc->seq, memory_order_relaxed) & 1));
    if (park) atomic_store(&parked, PARK_WAITING);
    unsigned char b = (unsigned char)sig;
    if (write(sig_pipe[1], &b, 1) != 1) { /* no watcher: the application's action now */
        atomic_store(&parked, PARK_NONE);
        chain(sig, si, uc);
        goto out;
    }
    if (!park) goto out;
    /* until the watcher hands the signal back; if the finalizer stalls, give up waiting (the
     * watcher then delivers it to the process when it is done) */
    int waiting = PARK_WAITING;
    if (wait_while(&parked, PARK_WAITING) || !atomic_compare_exchange_strong(&parked, &waiting, PARK_NONE)) {
        atomic_store(&parked, PARK_NONE);
        chain(sig, si, uc);
    }
out:
    errno = saved;
}

static void *sig_watcher(void *arg) {
    (void)arg;
    unsigned char b;
    while (read(sig_pipe[0], &b, 1) != 1) {
        if (errno != EINTR) return NULL;
    }
    finalize_once(); /* writes the archive, or waits for the exit path that does */
    int waiting = PARK_WAITING;
    if (atomic_compare_exchange_strong(&parked, &waiting, PARK_HANDED)) futex_wake(&parked);
    else deliver(b);
    return NULL;
}

/* The watcher starts with the first location (before its first record): a process that records
 * nothing has nothing to write on a signal, and a thread more costs every process at exit (the
 * kernel ends it before the parent's wait returns: 2-5 ms on a loaded machine, measured with
 * bench/exit_cost.sh). Until it runs, a signal goes straight to the application's action. */
static pthread_mutex_t watcher_lock = PTHREAD_MUTEX_INITIALIZER;
static void (*writer_created)(struct zc_loc *);

static void start_watcher(void) {
    if (atomic_load(&watcher_up)) return;
    pthread_mutex_lock(&watcher_lock);
    pthread_t t;
    if (!atomic_load(&watcher_up) && sig_pipe[0] >= 0 && zc_thread_spawn(&t, "zc-signal", sig_watcher, NULL) == 0) {
        pthread_detach(t); /* every signal blocked there */
        atomic_store(&watcher_up, true);
    }
    pthread_mutex_unlock(&watcher_lock);
}

static void loc_created(struct zc_loc *loc) {
    if (writer_created) writer_created(loc);
    start_watcher();
}

/* The signal pipe, closed (where open) and marked absent: signals then pass at once. */
static void sig_pipe_close(void) {
    if (sig_pipe[0] >= 0) close(sig_pipe[0]);
    if (sig_pipe[1] >= 0) close(sig_pipe[1]);
    sig_pipe[0] = sig_pipe[1] = -1;
}

/* A new signal pipe, never on 0-2 (a process started with stdin closed would read our pipe as its
 * stdin); false, with none, when it cannot be made. */
static bool sig_pipe_open(void) {
    if (pipe2(sig_pipe, O_CLOEXEC) != 0) {
        sig_pipe[0] = sig_pipe[1] = -1;
        return false;
    }
    sig_pipe[0] = zc_fd_high(sig_pipe[0]);
    sig_pipe[1] = zc_fd_high(sig_pipe[1]);
    if (sig_pipe[0] >= 0 && sig_pipe[1] >= 0) return true;
    sig_pipe_close();
    return false;
}

static void install_signals(void) {
    if (!sig_pipe_open()) return;
    if (zc_loc_sink.created != loc_created) {
        writer_created = zc_loc_sink.created;
        zc_loc_sink.created = loc_created;
    }
    if (zc_loc_list()) start_watcher(); /* locations made before (the constructor's) */
    pthread_mutex_lock(&sig_lock);
    for (size_t i = 0; i < NTAKEN; i++) {
        if (zc_real_sigaction(taken[i], NULL, &app_act[i]) != 0) {
            memset(&app_act[i], 0, sizeof(app_act[i]));
            app_act[i].sa_handler = SIG_DFL;
        }
        install_one(i);
    }
    atomic_store(&sig_installed, true);
    pthread_mutex_unlock(&sig_lock);
}

/* The application installs its own handlers after our constructor ran (in main, or MPI's
 * runtime in MPI_Init). sigaction() and signal() are interposed for the signals we take so that
 * ours stays first: the application's disposition becomes the one we chain to, and it reads
 * back what it set. */
#if ZC_SIG_INTERPOSE
__attribute__((visibility("default"))) int sigaction(int sig, const struct sigaction *act, struct sigaction *old) {
    zc_sigaction_fn next = zc_next_sigaction();
    if (!next) {
        errno = ENOSYS;
        return -1;
    }
    int i = slot_of(sig);
    if (i < 0) { /* a recording window's signal (core/zc_window.c): ours stays, chaining to theirs */
        pthread_mutex_lock(&sig_lock);
        bool win = zc_win_sigaction(sig, act, old);
        pthread_mutex_unlock(&sig_lock);
        return win ? 0 : next(sig, act, old);
    }
    if (!atomic_load(&sig_installed) || atomic_load(&sig_released)) return next(sig, act, old);
    pthread_mutex_lock(&sig_lock);
    if (atomic_load(&sig_released)) { /* released meanwhile */
        pthread_mutex_unlock(&sig_lock);
        return next(sig, act, old);
    }
    if (old) *old = app_act[i];
    if (act) {
        app_act[i] = *act;
        install_one((size_t)i);
    }
    pthread_mutex_unlock(&sig_lock);
    return 0;
}

__attribute__((visibility("default"))) sighandler_t signal(int sig, sighandler_t handler) {
    struct sigaction sa, old;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = handler;
    sa.sa_flags = SA_RESTART; /* BSD semantics, as glibc's signal() */
    sigemptyset(&sa.sa_mask);
    if (sigaction(sig, &sa, &old) != 0) return SIG_ERR;
    return old.sa_handler;
}
#endif

/* ---------------------------------------------------------------- the one finalizer */
enum { FIN_NONE, FIN_RUNNING, FIN_DONE };
static _Atomic int fin_state;

/* A thread on its way out after the finalize, while a signal whose default action ends the
 * process is being delivered: it must not exit with a status of its own first. */
static void wait_for_signal_death(void) {
    if (!atomic_load(&sig_first) || !atomic_load(&sig_first_dfl)) return;
    _Atomic int never = 0;
    wait_while(&never, 0); /* until the signal ends the process, or the finalizer's stall limit */
}

/* Runs the finalize, or waits for the one running (bounded by its progress). */
static void finalize_once(void) {
    int none = FIN_NONE;
    if (!atomic_compare_exchange_strong(&fin_state, &none, FIN_RUNNING)) {
        if (!wait_while(&fin_state, FIN_RUNNING))
            ZC_WARN("the archive is still being written by another thread, without progress for %llu s: going on "
                    "without waiting longer; the archive is incomplete",
                    (unsigned long long)(zc_knobs.FINALIZE_TIMEOUT_MS / 1000 + 10));
        return;
    }
    /* the signals we take wait until this is done (their handler would wait for it anyway) */
    sigset_t ours, old;
    sigemptyset(&ours);
    for (size_t i = 0; i < NTAKEN; i++) sigaddset(&ours, taken[i]);
    pthread_sigmask(SIG_BLOCK, &ours, &old);
    lifecycle_finalize();
    atomic_store(&fin_state, FIN_DONE);
    futex_wake(&fin_state);
    release_signals();
    pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/* zc_finalize (core/zc_proc.h): MPI_Finalize, exit(), the atexit handler */
static void finalize(void) {
    finalize_once();
    wait_for_signal_death();
}

/* ---------------------------------------------------------------- exit */
/* glibc runs each atexit handler on one thread only: a second thread calling exit() while the
 * first runs ours (the finalize) would skip it and end the process with the archive half
 * written. So exit() finalizes first, before the application's atexit handlers; a return from
 * main, which calls exit() inside glibc, reaches the finalize through our atexit handler. */
static _Atomic pid_t exit_tid; /* the thread in libc's exit(), 0 before */

__attribute__((visibility("default"), noreturn)) void exit(int status) {
    static void (*next)(int);
    void (*f)(int) = __atomic_load_n(&next, __ATOMIC_ACQUIRE);
    if (!f) {
        f = (void (*)(int))dlsym(RTLD_NEXT, "exit");
        __atomic_store_n(&next, f, __ATOMIC_RELEASE);
    }
    finalize();
    /* One thread runs libc's exit: glibc's exit handler list is not safe against concurrent
     * exit() calls (hostile.concurrent_exits, ASan: two threads freed the same block of atexit
     * entries in __run_exit_handlers, about 1 run in 20). A later caller waits for the process
     * to end (the first one ends it, with its status); the same thread calling exit() again
     * from a handler goes on into libc as before. */
    pid_t me = (pid_t)syscall(SYS_gettid), none = 0;
    if (!atomic_compare_exchange_strong(&exit_tid, &none, me) && none != me)
        for (;;) pause();
    if (f) f(status);
    _exit(status); /* cannot happen: libc's exit is always there */
}

static void at_exit(void) { finalize(); }

static void exit_init(void) {
    atexit(at_exit);
    install_signals();
}

/* The child after fork: the watcher stayed in the parent, the child's signals go straight to
 * the application's handlers, and nothing is written. */
static void exit_fork_child(void) {
    atomic_store(&fin_state, FIN_DONE);
    atomic_store(&sig_first, 0);
    atomic_store(&parked, PARK_NONE);
    atomic_store(&exit_tid, 0);
    pthread_mutex_init(&sig_lock, NULL);
    pthread_mutex_init(&watcher_lock, NULL);
    atomic_store(&watcher_up, false);
    sig_pipe_close();
    release_signals();
}

/* ---------------------------------------------------------------- fork */
/* The child holds a copy of the parent's buffers; writing them would duplicate the parent's
 * events, so the child runs untraced (an exec'd program starts its own collector), unless the
 * parent had recorded nothing yet (fresh_child). */
/* A process that forks before anything was recorded (a daemon's first step: the work is the
 * child's): no location, archive, journal or thread of ours exists yet, so the child records
 * afresh, as if it had started; it shares only the signal pipe with the parent, replaced here.
 * Not with windows (their timer thread stayed in the parent) or MPI. */
static bool fresh_child(void) {
    if (!zc_active() || zc_loc_list() || zc_otf2_path()[0] || zc_job.mpi || zc_job.mpi_linked || zc_knobs.WINDOWS.n)
        return false;
    pthread_mutex_init(&sig_lock, NULL);
    pthread_mutex_init(&watcher_lock, NULL);
    if (sig_pipe[0] >= 0) {
        sig_pipe_close();
        sig_pipe_open();
    }
    return true;
}

static void atfork_child(void) {
    if (fresh_child()) return;
    zc_win_set_active(false);
    zc_win_fork_child();
    atomic_store(&zc_is_active, false);
    exit_fork_child();
    for (size_t i = 0; i < NSUB; i++) /* the writer's first: it has no writer threads any more */
        if (subsystems[i]->fork_child) subsystems[i]->fork_child();
}

/* ---------------------------------------------------------------- constructor */
static int start_unselected(void);

__attribute__((constructor)) static void zc_constructor(void) {
    static atomic_bool done;
    if (atomic_exchange(&done, true)) return;
    zc_phase_start();
    zc_proc_ops = (struct zc_proc_ops){finalize, post_mpi_init, start_unselected, thread_exit_hooks};
    zc_proc_start(zc_now());
    /* whatever ZECOLL_ENABLE says: every rank takes part in MPI_Init's collective steps */
    for (size_t i = 0; i < NSUB; i++)
        if (subsystems[i]->detect) subsystems[i]->detect();
    zc_phase("ctor.detect");
    zc_knobs_load();
    zc_phase("ctor.knobs");
    zc_phase_settle();
    if (!zc_knobs.ENABLE) return;
    zc_clock_init();
    zc_phase("ctor.clock");
    for (size_t i = 0; i < NSUB; i++) {
        if (subsystems[i]->init && subsystems[i]->init() != 0) {
            ZC_WARN("layer %s did not initialise; collection is off", subsystems[i]->name);
            return;
        }
        zc_phase(subsystems[i]->name);
    }
    atomic_store_explicit(&zc_is_active, true, memory_order_release);
    zc_win_set_active(true);
    exit_init(); /* atexit, signals (above) */
    pthread_atfork(NULL, NULL, atfork_child);
    zc_phase("ctor.signals");
}

/* An MPI job in which some ranks collect and this one does not (ZECOLL_ENABLE=0 here, or its
 * start failed): the job's archive is written collectively, so this rank takes part in it as an
 * unselected rank (docs/config.md): the core and the writer start here, in MPI_Init, and record
 * nothing. Level Zero stays untouched (its driver was never redirected). 0 = started. */
static int start_unselected(void) {
    if (zc_active()) return 0;
    zc_knobs.SUMMARY = false;
    late_started = true;
    zc_clock_init();
    zc_win_unselected();
    if (core_init() != 0 || zc_writer_subsystem.init() != 0) return -1;
    atomic_store_explicit(&zc_is_active, true, memory_order_release);
    zc_win_set_active(true);
    exit_init(); /* atexit, signals (above) */
    pthread_atfork(NULL, NULL, atfork_child);
    return 0;
}
