/* SPDX-License-Identifier: MIT */
/* The lifecycle table: every layer registers init / pre_finalize / finalize / fork_child here, and
 * the constructor, atexit, the SIGTERM/SIGINT handlers and pthread_atfork drive them in order.
 * Nothing else initialises or tears down collector state. */
#include "zc_defs.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const struct zc_subsystem *const subsystems[] = {
    &zc_core_subsystem,
    &zc_otf2_subsystem,
    &zc_jrn_subsystem, /* finalizes before otf2: its flusher stops before the buffers are written */
    &zc_ze_subsystem,
    &zc_mpi_subsystem,
};
#define NSUB (sizeof(subsystems) / sizeof(subsystems[0]))

atomic_bool zc_is_active; /* zc_core.h: read inline by zc_own_begin */
static atomic_bool finalized;
static atomic_flag finalizing = ATOMIC_FLAG_INIT;
static uint64_t start_ns;
struct zc_job zc_job = {.size = 1};
int64_t zc_clock_skew;

uint64_t zc_start_time(void) { return start_ns; }
uint32_t zc_rank(void) { return zc_job.rank; }

/* ZECOLL_CLOCK_SKEW_NS: the launcher's rank picks this process's entry (MPI is not up yet, and
 * every timestamp must carry the same skew). */
static void set_clock_skew(void) {
    const char *list = zc_knobs.CLOCK_SKEW_NS, *r = NULL;
    if (!list || !*list) return;
    const char *vars[] = {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"};
    for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]) && !r; i++) r = getenv(vars[i]);
    long idx = r ? strtol(r, NULL, 10) : 0;
    const char *p = list;
    for (long i = 0; i < idx && p; i++) {
        p = strchr(p, ',');
        if (p) p++;
    }
    if (!p) return; /* fewer entries than ranks: no skew */
    char *end;
    long long v = strtoll(p, &end, 10);
    if (end == p || (*end && *end != ',')) {
        ZC_WARN("ignoring ZECOLL_CLOCK_SKEW_NS=\"%s\": expected comma-separated integers (ns)", list);
        return;
    }
    zc_clock_skew = v;
}
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
    return 0;
}

static void core_finalize(void) {
    if (!zc_knobs.SUMMARY || zc_knobs.LOG_LEVEL == 0) return;
    if (!zc_otf2_path()[0]) return; /* nothing recorded, nothing to say */
    uint64_t events = 0, clamped = 0, dropped = 0, threads = 0, streams = 0;
    for (struct zc_loc *l = zc_loc_list(); l; l = l->next) {
        events += l->nevents;
        clamped += l->nclamped;
        dropped += l->ndropped;
        if (l->kind == ZC_LOC_THREAD) threads++;
        else streams++;
    }
    char line[1024];
    int n = snprintf(line, sizeof(line),
                     "zecoll: rank %u: %llu events on %llu thread(s) and %llu device stream(s) -> %s "
                     "(%llu clamped, %llu dropped, %llu internal errors)\n",
                     zc_job.rank, (unsigned long long)events, (unsigned long long)threads, (unsigned long long)streams,
                     zc_on(ZC_F_TRACE) ? zc_otf2_path() : "(no archive)", (unsigned long long)clamped,
                     (unsigned long long)dropped, (unsigned long long)atomic_load(&zc_failures));
    if (n > 0) {
        ssize_t w = write(2, line, (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1);
        (void)w;
    }
}

const struct zc_subsystem zc_core_subsystem = {.name = "core", .init = core_init, .finalize = core_finalize};

static int otf2_sub_init(void) { return zc_otf2_init(); }
static void otf2_sub_finalize(void) { zc_otf2_finalize(); }
const struct zc_subsystem zc_otf2_subsystem = {.name = "otf2", .init = otf2_sub_init, .post_mpi_init = zc_otf2_start_job, .finalize = otf2_sub_finalize};

int zc_post_mpi_init(void) {
    int rc = 0;
    for (size_t i = 0; i < NSUB; i++)
        if (subsystems[i]->post_mpi_init && subsystems[i]->post_mpi_init() != 0) rc = -1;
    return rc;
}

/* ---------------------------------------------------------------- finalize */
void zc_finalize(void) {
    if (atomic_flag_test_and_set(&finalizing)) return;
    if (!zc_active()) return;
    for (size_t i = 0; i < NSUB; i++)
        if (subsystems[i]->pre_finalize) subsystems[i]->pre_finalize();
    /* events after this point (other threads still running) are not recorded */
    atomic_store_explicit(&zc_is_active, false, memory_order_release);
    for (size_t i = NSUB; i-- > 0;)
        if (subsystems[i]->finalize) subsystems[i]->finalize();
    atomic_store(&finalized, true);
}

/* ---------------------------------------------------------------- signals */
/* SIGTERM/SIGINT: the archive must be written, but not from the handler: the interrupted thread
 * may hold the very locks (ours, the driver's, malloc's) that writing needs. The handler only
 * writes the signal number to a pipe (async-signal-safe); a watcher thread, with every signal
 * blocked, finalizes, restores the previous disposition and raises the signal again, so the
 * app's own handler (or the default action) then runs as if we had not been there. The same
 * signal arriving again before that is passed on at once, so a stuck finalize never makes a
 * process unkillable. */
static struct sigaction old_term, old_int;
static int sig_pipe[2] = {-1, -1};
/* ThreadSanitizer intercepts sigaction itself (and calls it while initialising, before any of our
 * code may run): in TSan builds there is no interposition, and an app handler installed later
 * replaces ours. */
#if defined(__SANITIZE_THREAD__)
#define ZC_SIG_INTERPOSE 0
#else
#define ZC_SIG_INTERPOSE 1
#endif
static volatile sig_atomic_t sig_pending;

static int real_sigaction(int sig, const struct sigaction *act, struct sigaction *old) {
    if (!ZC_SIG_INTERPOSE) return sigaction(sig, act, old);
    static int (*next)(int, const struct sigaction *, struct sigaction *);
    if (!next) next = (int (*)(int, const struct sigaction *, struct sigaction *))dlsym(RTLD_NEXT, "sigaction");
    return next ? next(sig, act, old) : -1;
}

/* Process-directed, not raise(): the watcher blocks every signal, and a thread-directed signal
 * would stay pending on it forever. From here on the app's disposition is the real one. */
static void forward(int sig) {
    struct sigaction *old = sig == SIGTERM ? &old_term : &old_int;
    real_sigaction(sig, old, NULL);
    kill(getpid(), sig);
}

static void on_signal(int sig) {
    int saved = errno;
    struct sigaction *chained = sig == SIGTERM ? &old_term : &old_int;
    if (!(chained->sa_flags & SA_SIGINFO) && chained->sa_handler == SIG_IGN) {
        errno = saved; /* the app ignores it: so do we */
        return;
    }
    if (sig_pending == sig || sig_pipe[1] < 0) {
        forward(sig);
    } else {
        sig_pending = sig;
        unsigned char b = (unsigned char)sig;
        if (write(sig_pipe[1], &b, 1) != 1) forward(sig);
    }
    errno = saved;
}

static void *sig_watcher(void *arg) {
    (void)arg;
    unsigned char b;
    while (read(sig_pipe[0], &b, 1) != 1) {
        if (errno != EINTR) return NULL;
    }
    zc_finalize();
    /* the previous handler runs in the app's context: hand it to a thread that can take it */
    forward(b);
    return NULL;
}

static void install_signals(void) {
    if (pipe2(sig_pipe, O_CLOEXEC) != 0) return;
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pthread_t t;
    int rc = pthread_create(&t, NULL, sig_watcher, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0) {
        close(sig_pipe[0]);
        close(sig_pipe[1]);
        sig_pipe[0] = sig_pipe[1] = -1;
        return;
    }
    pthread_detach(t);
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    struct sigaction cur;
    /* an ignored signal stays ignored: the app (or nohup) chose that */
    if (real_sigaction(SIGTERM, NULL, &cur) == 0 && cur.sa_handler != SIG_IGN) real_sigaction(SIGTERM, &sa, &old_term);
    else old_term = cur;
    if (real_sigaction(SIGINT, NULL, &cur) == 0 && cur.sa_handler != SIG_IGN) real_sigaction(SIGINT, &sa, &old_int);
    else old_int = cur;
}

/* The app installs its own handlers after our constructor ran (in main, or MPI's runtime in
 * MPI_Init). sigaction() and signal() are interposed for SIGTERM and SIGINT so that ours stays
 * first: the app's handler becomes the one we chain to, and the app reads back what it set. */
#if ZC_SIG_INTERPOSE
static pthread_mutex_t sig_lock = PTHREAD_MUTEX_INITIALIZER;

static bool sig_ours(int sig) { return (sig == SIGTERM || sig == SIGINT) && sig_pipe[1] >= 0; }

__attribute__((visibility("default"))) int sigaction(int sig, const struct sigaction *act, struct sigaction *old) {
    static int (*next)(int, const struct sigaction *, struct sigaction *);
    if (!next) next = (int (*)(int, const struct sigaction *, struct sigaction *))dlsym(RTLD_NEXT, "sigaction");
    if (!next) {
        errno = ENOSYS;
        return -1;
    }
    if (!sig_ours(sig)) return next(sig, act, old);
    pthread_mutex_lock(&sig_lock);
    struct sigaction *chained = sig == SIGTERM ? &old_term : &old_int;
    if (old) *old = *chained;
    if (act) *chained = *act;
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

/* ---------------------------------------------------------------- fork */
/* The child holds a copy of the parent's buffers; writing them would duplicate the parent's
 * events, so the child runs untraced (an exec'd program starts its own collector). */
static void atfork_child(void) {
    atomic_store(&zc_is_active, false);
    /* the watcher stayed in the parent: the child's signals go straight to the app's handlers */
    if (sig_pipe[1] >= 0) {
        real_sigaction(SIGTERM, &old_term, NULL);
        real_sigaction(SIGINT, &old_int, NULL);
        close(sig_pipe[0]);
        close(sig_pipe[1]);
        sig_pipe[0] = sig_pipe[1] = -1;
    }
    atomic_flag_test_and_set(&finalizing);
    zc_loc_fork_child();
    for (size_t i = 0; i < NSUB; i++)
        if (subsystems[i]->fork_child) subsystems[i]->fork_child();
}

/* ---------------------------------------------------------------- constructor */
static void at_exit(void) { zc_finalize(); }

__attribute__((constructor)) static void zc_constructor(void) {
    static atomic_bool done;
    if (atomic_exchange(&done, true)) return;
    start_ns = zc_now();
    zc_knobs_load();
    if (!zc_knobs.ENABLE) return;
    set_clock_skew();
    zc_clock_init();
    for (size_t i = 0; i < NSUB; i++) {
        if (subsystems[i]->init && subsystems[i]->init() != 0) {
            ZC_WARN("layer %s did not initialise; collection is off", subsystems[i]->name);
            return;
        }
    }
    atomic_store_explicit(&zc_is_active, true, memory_order_release);
    atexit(at_exit);
    install_signals();
    pthread_atfork(NULL, NULL, atfork_child);
}
