/* SPDX-License-Identifier: MIT */
/* What the Level Zero benchmark programs share (zc_bench_app, zc_devrate): a driver call that must
 * succeed (the program ends, naming it, when it does not: a benchmark of a failing call measures
 * nothing) and the clock they time with. ZC_BENCH_NAME names the program in the message. */
#ifndef ZC_BENCH_COMMON_H
#define ZC_BENCH_COMMON_H

#include <level_zero/ze_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define CK(call)                                                                                   \
    do {                                                                                           \
        ze_result_t r_ = (call);                                                                   \
        if (r_ != ZE_RESULT_SUCCESS) {                                                             \
            fprintf(stderr, ZC_BENCH_NAME ": %s: 0x%x\n", #call, (unsigned)r_);                    \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

/* CLOCK_MONOTONIC_RAW: the clock the collector converts to, never slewed */
static inline double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC_RAW, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}
#endif
