/* SPDX-License-Identifier: MIT */
/* The collector's own threads start with every signal blocked: signals are the application's
 * (zc_core.h, zc_thread_spawn). */
#include "zc_core.h"

#include <signal.h>

int zc_thread_spawn(pthread_t *t, void *(*fn)(void *), void *arg) {
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int rc = pthread_create(t, NULL, fn, arg);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return rc;
}
