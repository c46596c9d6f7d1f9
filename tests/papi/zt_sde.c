/* SPDX-License-Identifier: MIT */
/* Software Defined Events for the PAPI tests: counters whose every value is known, on any CPU
 * (PAPI's sde component needs no PMU). Linked into the PAPI test programs, LD_PRELOADed into
 * others; the constructor registers, in library "zecoll_test":
 *   sde:::zecoll_test::work    the calling thread's units of work (zt_sde_add)
 *   sde:::zecoll_test::work3   three times that (a member that must not be mistaken for work)
 *   sde:::zecoll_test::adds    the calling thread's zt_sde_add calls
 *   sde:::zecoll_test::reads   how many times PAPI has called this counter on the calling thread
 *                              (libsde 7.0: once per PAPI_start, PAPI_read and PAPI_stop)
 *
 * Why PAPI finds them: PAPI 7.0's sde component, at PAPI_library_init, looks up libsde's
 * sde_ti_* functions with dlsym on dlopen(NULL), the global scope: a process that has libsde
 * there (linked, or preloaded with this library) gets the component, any other is told "libsde
 * API not found. No SDEs exist in this executable."
 *
 * Each counter is a callback returning a thread-local value: PAPI reads a thread's event set on
 * that thread (the collector does), so each thread reads its own counts. They are INSTANT, not
 * DELTA: libsde keeps one start value per counter for the whole process, set by every
 * PAPI_start on any thread, so a DELTA counter read on one thread would be rebased by another
 * thread starting; an INSTANT value is the thread's own total since it began. */
#include "zt_sde.h"

#include <sde_lib.h>
#include <stdio.h>
#include <stdlib.h>

static _Thread_local long long work, adds, reads;

void zt_sde_add(long long n) {
    work += n;
    adds++;
}

long long zt_sde_work(void) { return work; }
long long zt_sde_adds(void) { return adds; }

static long long get_work(void *p) {
    (void)p;
    return work;
}

static long long get_work3(void *p) {
    (void)p;
    return 3 * work;
}

static long long get_adds(void *p) {
    (void)p;
    return adds;
}

static long long get_reads(void *p) {
    (void)p;
    return reads++;
}

__attribute__((constructor)) static void zt_sde_register(void) {
    papi_handle_t h = papi_sde_init("zecoll_test");
    const int mode = PAPI_SDE_RO | PAPI_SDE_INSTANT;
    if (!h || papi_sde_register_counter_cb(h, "work", mode, PAPI_SDE_long_long, get_work, NULL) != 0 ||
        papi_sde_register_counter_cb(h, "work3", mode, PAPI_SDE_long_long, get_work3, NULL) != 0 ||
        papi_sde_register_counter_cb(h, "adds", mode, PAPI_SDE_long_long, get_adds, NULL) != 0 ||
        papi_sde_register_counter_cb(h, "reads", mode, PAPI_SDE_long_long, get_reads, NULL) != 0) {
        fputs("zt_sde: cannot register the test's software defined events\n", stderr);
        abort();
    }
}
