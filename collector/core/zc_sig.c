/* SPDX-License-Identifier: MIT */
/* The application's signals (zc_sig.h): the collector's own threads start with every signal
 * blocked, and the collector's handlers go in through libc's sigaction, not the interposed one. */
#include "zc_sig.h"

#include <dlfcn.h>

int zc_thread_spawn(pthread_t *t, void *(*fn)(void *), void *arg) {
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int rc = pthread_create(t, NULL, fn, arg);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
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
