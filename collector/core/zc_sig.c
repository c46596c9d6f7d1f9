/* SPDX-License-Identifier: MIT */
/* The application's signals and CPUs (zc_sig.h): the collector's own threads start with every
 * signal blocked, on the CPUs of the application's threads, and the collector's handlers go in
 * through libc's sigaction, not the interposed one. */
#include "zc_sig.h"

#include "zc_launcher.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <unistd.h>

/* The collector's running threads (their tids), left out of the application's CPUs. A slot is
 * taken as a thread starts and given back as it ends; a thread that finds none is counted as the
 * application's, which only widens the set by CPUs the application's threads gave it. */
enum { OWN_MAX = 16 };
static _Atomic pid_t own_tids[OWN_MAX];

static bool is_own(pid_t tid) {
    for (int i = 0; i < OWN_MAX; i++)
        if (atomic_load_explicit(&own_tids[i], memory_order_relaxed) == tid) return true;
    return false;
}

static int app_cpus(cpu_set_t *set) {
    CPU_ZERO(set);
    DIR *d = opendir("/proc/self/task");
    if (!d) return -1;
    int n = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        pid_t tid = (pid_t)atoi(e->d_name);
        cpu_set_t one;
        if (tid <= 0 || is_own(tid) || sched_getaffinity(tid, sizeof(one), &one) != 0) continue;
        CPU_OR(set, set, &one);
        n++;
    }
    closedir(d);
    return n && CPU_COUNT(set) ? 0 : -1;
}

/* What a new thread of ours needs, handed over in a slot of a static pool, not in malloc'd
 * memory: a thread's first free() (or malloc()) makes glibc give it an arena of its own, 64 MiB
 * of address space (128 MiB while it is aligned), so freeing the hand-over in the thread cost
 * that much for threads that never allocate (zc-signal, zc-window), and under an address-space
 * limit the application's own allocations failed (hostile.buffer_alloc). */
struct spawn {
    void *(*fn)(void *);
    void *arg;
    const char *name;
    atomic_bool used;
};
static struct spawn spawn_pool[OWN_MAX];

static struct spawn *spawn_take(void *(*fn)(void *), void *arg, const char *name) {
    for (int i = 0; i < OWN_MAX; i++) {
        if (atomic_exchange(&spawn_pool[i].used, true)) continue;
        spawn_pool[i].fn = fn;
        spawn_pool[i].arg = arg;
        spawn_pool[i].name = name;
        return &spawn_pool[i];
    }
    return NULL;
}

static void *spawned(void *p) {
    struct spawn *h = p;
    void *(*fn)(void *) = h->fn;
    void *arg = h->arg;
    const char *name = h->name;
    atomic_store(&h->used, false); /* release: the slot is read */
    pid_t tid = gettid();
    int slot = -1;
    for (int i = 0; i < OWN_MAX && slot < 0; i++) {
        pid_t none = 0;
        if (atomic_compare_exchange_strong(&own_tids[i], &none, tid)) slot = i;
    }
    if (name) pthread_setname_np(pthread_self(), name); /* top -H, perf, /proc/PID/task/TID/comm */
    void *r = fn(arg);
    if (slot >= 0) atomic_store(&own_tids[slot], 0);
    return r;
}

/* Placement: a thread inherits the CPUs of the thread that creates it, and the collector's are
 * created by whichever application thread gets there first (the first to fill a buffer starts
 * the writer, the first to create a command list the drainer). Where an application binds its
 * threads one per CPU inside its process's set (OpenMP places, a runtime's workers), that would
 * put our thread on that one thread's CPU for the whole run, taking its time while the others'
 * CPUs are free. So ours get the union of the application's threads' CPUs: for a rank bound to
 * one core (every thread there) that is the core, for a process bound to a set the set. Unless
 * that union is wider than the rank's share of the node (the node's CPUs over the job's ranks
 * on it): then some thread kept a wider set than the rank's binding (an MPI that binds in
 * MPI_Init, after helper threads started), and ours inherit the creating thread's CPUs, as
 * before, rather than run on other ranks' cores. */
int zc_thread_cpus(cpu_set_t *set) {
    if (sched_getaffinity(0, sizeof(*set), set) != 0) return -1; /* the calling thread's */
    cpu_set_t app;
    long share = zc_launcher_cpu_share();
    if (app_cpus(&app) != 0 || CPU_EQUAL(&app, set) || (share >= 0 && CPU_COUNT(&app) > share)) return 0;
    *set = app;
    return 1;
}

int zc_thread_spawn(pthread_t *t, const char *name, void *(*fn)(void *), void *arg) {
    sigset_t all, old;
    sigfillset(&all);
    struct spawn *s = spawn_take(fn, arg, name); /* none free (16 starting at once): as before, unnamed */
    cpu_set_t where;
    pthread_attr_t attr;
    bool place = s && zc_thread_cpus(&where) == 1 && pthread_attr_init(&attr) == 0;
    if (place && pthread_attr_setaffinity_np(&attr, sizeof(where), &where) != 0) {
        pthread_attr_destroy(&attr);
        place = false;
    }
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int rc = pthread_create(t, place ? &attr : NULL, s ? spawned : fn, s ? (void *)s : arg);
    if (rc == EINVAL && place) /* a set the kernel refuses now (a cpuset changed): inherit, as before */
        rc = pthread_create(t, NULL, spawned, s);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (place) pthread_attr_destroy(&attr);
    if (rc != 0 && s) atomic_store(&s->used, false);
    return rc;
}

/* any thread may be first: atomically */
zc_sigaction_fn zc_next_sigaction(void) {
    static zc_sigaction_fn next;
    zc_sigaction_fn f = __atomic_load_n(&next, __ATOMIC_ACQUIRE);
    if (!f) {
        f = (zc_sigaction_fn)dlsym(RTLD_NEXT, "sigaction");
        __atomic_store_n(&next, f, __ATOMIC_RELEASE);
    }
    return f;
}

int zc_real_sigaction(int sig, const struct sigaction *act, struct sigaction *old) {
    if (!ZC_SIG_INTERPOSE) return sigaction(sig, act, old);
    zc_sigaction_fn next = zc_next_sigaction();
    return next ? next(sig, act, old) : -1;
}
