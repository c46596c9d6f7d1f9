/* SPDX-License-Identifier: MIT */
/* The host clock (zc_clock.c): the time of every host event, and the conversion of ticks to ns. */
#ifndef ZC_CLOCK_H
#define ZC_CLOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

/* CLOCK_MONOTONIC_RAW is the host side of zeDeviceGetGlobalTimestamps, so device times map onto
 * the same axis; every time in the archive is on it (ns). zc_now() reads it (~30 ns); hot paths
 * read zc_tick() instead (zc_clock.c): the TSC where it is usable, converted to
 * CLOCK_MONOTONIC_RAW when the buffer is written, or the same ns as zc_now() where it is not.
 * Events of THREAD locations carry ticks, events of DEVICE locations ns; anything that needs a
 * time now (deadlines, anchors, clock offsets) uses zc_now(). */
extern int64_t zc_clock_skew; /* ZECOLL_CLOCK_SKEW_NS (tests only), 0 otherwise (zc_clock_init) */
extern bool zc_tsc;           /* ticks are TSC cycles (set once by zc_clock_init) */
static inline uint64_t zc_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec + (uint64_t)zc_clock_skew;
}
static inline uint64_t zc_tick(void) {
#if defined(__x86_64__) || defined(__i386__)
    if (__builtin_expect(zc_tsc, 1)) return __builtin_ia32_rdtsc();
#endif
    return zc_now();
}
/* zc_tick() on a path taken only while zc_tsc is set (the MPI fast paths): one rdtsc */
static inline uint64_t zc_tick_tsc(void) {
#if defined(__x86_64__) || defined(__i386__)
    return __builtin_ia32_rdtsc();
#else
    return zc_now();
#endif
}
/* Constructor, before anything is recorded: the skew this process's rank gets (the launcher's:
 * MPI is not up yet) and the source of ticks (ZECOLL_HOST_CLOCK). */
void zc_clock_init(void);
/* Converts ticks to ns, mostly in increasing order; zc_tickconv_begin first takes an anchor if
 * the newest is stale, so every tick read before it converts between two anchors. */
struct zc_tickconv {
    size_t n;         /* anchors seen (0: ticks are ns) */
    uint64_t lo, hi;  /* the current segment [lo, hi) */
    uint64_t base, base_ns;
    double slope;     /* ns per tick */
};
void zc_tickconv_begin(struct zc_tickconv *c);
void zc_tickconv_seg(struct zc_tickconv *c, uint64_t tick); /* the segment holding tick */
/* Inline: the writer converts one or two ticks per record, and the call was a third of it. */
static inline uint64_t zc_tickconv(struct zc_tickconv *c, uint64_t t) {
    if (!c->n) return t; /* ticks are ns */
    if (__builtin_expect(t < c->lo || t >= c->hi, 0)) zc_tickconv_seg(c, t);
    int64_t d = (int64_t)(t - c->base);
    double off = (double)d * c->slope;
    return c->base_ns + (uint64_t)(int64_t)(off < 0 ? off - 0.5 : off + 0.5);
}
/* zc_tickconv as the conversion callback of zc_evt_normalize (c: its struct zc_tickconv) */
static inline uint64_t zc_tickconv_cb(void *c, uint64_t tick) { return zc_tickconv(c, tick); }
uint64_t zc_tick_to_ns(uint64_t tick); /* one conversion */
double zc_clock_error_bound_ns(void);  /* half the widest anchor read window (tests, docs) */

#endif
