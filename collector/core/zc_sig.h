/* SPDX-License-Identifier: MIT */
/* Signals are the application's (zc_sig.c): the collector's threads start with every signal
 * blocked, and its own handlers are installed with libc's sigaction, behind the one the
 * composition root interposes (zc_main.c). */
#ifndef ZC_SIG_H
#define ZC_SIG_H

#include <pthread.h>
#include <sched.h>
#include <signal.h>

/* ThreadSanitizer intercepts sigaction itself (and calls it while initialising, before any of our
 * code may run): in TSan builds there is no interposition, and an app handler installed later
 * replaces ours. */
#if defined(__SANITIZE_THREAD__)
#define ZC_SIG_INTERPOSE 0
#else
#define ZC_SIG_INTERPOSE 1
#endif

/* Starts one of the collector's threads (pthread_create's result) with every signal blocked, on
 * the CPUs zc_thread_cpus names, named NAME (up to 15 characters, or NULL). */
int zc_thread_spawn(pthread_t *t, const char *name, void *(*fn)(void *), void *arg);

/* The CPUs a thread of the collector started now from the calling thread runs on: the union of
 * those the application's threads may run on (1), or the calling thread's own where that union
 * is the same, cannot be read, or is wider than the rank's share of the node (0); -1 where not
 * even the calling thread's can be read. */
int zc_thread_cpus(cpu_set_t *set);

/* libc's sigaction behind ours (NULL if it cannot be found), looked up once by whichever thread
 * comes first. */
typedef int (*zc_sigaction_fn)(int, const struct sigaction *, struct sigaction *);
zc_sigaction_fn zc_next_sigaction(void);
int zc_real_sigaction(int sig, const struct sigaction *act, struct sigaction *old); /* libc's, not ours */

#endif
