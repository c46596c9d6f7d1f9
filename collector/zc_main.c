/* SPDX-License-Identifier: MIT */
/* How a process ends: every way out (return from main, exit() on any thread, MPI_Finalize,
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
#include "zc_defs.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

atomic_uint_fast64_t zc_progress;

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
static _Atomic int sig_first;    /* the signal that started a finalize, 0 = none */
static _Atomic int sig_first_dfl; /* ... and whether its action then was the default one */
enum { PARK_NONE, PARK_WAITING, PARK_HANDED };
static _Atomic int parked; /* the interrupted thread waits in the handler (see above) */

static int slot_of(int sig) {
    for (size_t i = 0; i < NTAKEN; i++)
        if (taken[i] == sig) return (int)i;
    return -1;
}

/* ThreadSanitizer intercepts sigaction itself (and calls it while initialising, before any of our
 * code may run): in TSan builds there is no interposition, and an app handler installed later
 * replaces ours. */
#if defined(__SANITIZE_THREAD__)
#define ZC_SIG_INTERPOSE 0
#else
#define ZC_SIG_INTERPOSE 1
#endif

/* libc's functions behind ours, looked up once (any thread may be first: atomically) */
typedef int (*sigaction_fn)(int, const struct sigaction *, struct sigaction *);
static sigaction_fn next_sigaction(void) {
    static sigaction_fn next;
    sigaction_fn f = __atomic_load_n(&next, __ATOMIC_ACQUIRE);
    if (!f) {
        f = (sigaction_fn)dlsym(RTLD_NEXT, "sigaction");
        __atomic_store_n(&next, f, __ATOMIC_RELEASE);
    }
    return f;
}

int zc_real_sigaction(int sig, const struct sigaction *act, struct sigaction *old) {
    if (!ZC_SIG_INTERPOSE) return sigaction(sig, act, old);
    sigaction_fn next = next_sigaction();
    return next ? next(sig, act, old) : -1;
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
    if (atomic_load(&sig_released) || sig_pipe[1] < 0 || !atomic_compare_exchange_strong(&sig_first, &none, sig)) {
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

static void install_signals(void) {
    if (pipe2(sig_pipe, O_CLOEXEC) != 0) return;
    /* never on 0-2: a process started with stdin closed would read our pipe as its stdin */
    sig_pipe[0] = zc_fd_high(sig_pipe[0]);
    sig_pipe[1] = zc_fd_high(sig_pipe[1]);
    if (sig_pipe[0] < 0 || sig_pipe[1] < 0) {
        if (sig_pipe[0] >= 0) close(sig_pipe[0]);
        if (sig_pipe[1] >= 0) close(sig_pipe[1]);
        sig_pipe[0] = sig_pipe[1] = -1;
        return;
    }
    pthread_t t;
    int rc = zc_thread_spawn(&t, sig_watcher, NULL); /* every signal blocked */
    if (rc != 0) {
        close(sig_pipe[0]);
        close(sig_pipe[1]);
        sig_pipe[0] = sig_pipe[1] = -1;
        return;
    }
    pthread_detach(t);
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
    sigaction_fn next = next_sigaction();
    if (!next) {
        errno = ENOSYS;
        return -1;
    }
    int i = slot_of(sig);
    if (i < 0) { /* a recording window's signal (zc_window.c): ours stays, chaining to theirs */
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
    zc_lifecycle_finalize();
    atomic_store(&fin_state, FIN_DONE);
    futex_wake(&fin_state);
    release_signals();
    pthread_sigmask(SIG_SETMASK, &old, NULL);
}

void zc_finalize(void) {
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
    zc_finalize();
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

static void at_exit(void) { zc_finalize(); }

void zc_exit_init(void) {
    atexit(at_exit);
    install_signals();
}

/* The child after fork: the watcher stayed in the parent, the child's signals go straight to
 * the application's handlers, and nothing is written. */
void zc_exit_fork_child(void) {
    atomic_store(&fin_state, FIN_DONE);
    atomic_store(&sig_first, 0);
    atomic_store(&parked, PARK_NONE);
    atomic_store(&exit_tid, 0);
    pthread_mutex_init(&sig_lock, NULL);
    if (sig_pipe[1] >= 0) {
        close(sig_pipe[0]);
        close(sig_pipe[1]);
        sig_pipe[0] = sig_pipe[1] = -1;
    }
    release_signals();
}
