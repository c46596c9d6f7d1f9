/* SPDX-License-Identifier: MIT */
/* A test library (LD_PRELOAD, before libzecoll.so): OTF2 writes slowly. Every 256th
 * OTF2_EvtWriter_Enter first sleeps ZC_TEST_OTF2_SLEEP_US microseconds, as a writer thread that
 * falls behind (a slow disk under OTF2's buffer flushes, a busy core), so that a thread recording
 * fast has buffers waiting in each of the writer threads' stages (trace.window.burst.stages2). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <otf2/otf2.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

OTF2_ErrorCode OTF2_EvtWriter_Enter(OTF2_EvtWriter *writer, OTF2_AttributeList *attributes, OTF2_TimeStamp time,
                                    OTF2_RegionRef region) {
    typedef OTF2_ErrorCode (*fn)(OTF2_EvtWriter *, OTF2_AttributeList *, OTF2_TimeStamp, OTF2_RegionRef);
    static _Atomic(fn) real;
    static atomic_ulong calls;
    fn f = atomic_load(&real);
    if (!f) {
        f = (fn)dlsym(RTLD_NEXT, "OTF2_EvtWriter_Enter");
        atomic_store(&real, f);
    }
    const char *v = getenv("ZC_TEST_OTF2_SLEEP_US");
    long us = v ? strtol(v, NULL, 10) : 0;
    if (us > 0 && atomic_fetch_add(&calls, 1) % 256 == 0) {
        struct timespec t = {us / 1000000, (us % 1000000) * 1000L};
        while (nanosleep(&t, &t) != 0) {
        }
    }
    return f(writer, attributes, time, region);
}
