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
 * the newest is stale, so every tick read before it converts between two anchors. A segment
 * (between two anchors, or past the newest) is a straight line, precomputed once when a tick
 * first falls in it: ns = base_ns + round(d * mul / 2^ZC_TICKCONV_SHIFT), d = tick - lo, one
 * 64x64 multiply, a 128-bit add and a shift per tick instead of two conversions to and from double (the
 * writer converts one or two ticks per record). mul holds ns per tick with 58 fraction bits, so
 * its rounding moves a tick by at most d / 2^59 ns: under 0.002 ns across a 100 ms segment of a
 * 5 GHz TSC. Ticks that are ns already (no TSC) go through the same line: mul = 1.0, exact. */
#define ZC_TICKCONV_SHIFT 58
struct zc_tickconv {
    unsigned __int128 base; /* the time at lo, ZC_TICKCONV_SHIFT fraction bits, + 0.5 (rounds) */
    uint64_t lo, span;      /* the current segment [lo, lo + span) (span 0: none yet) */
    uint64_t mul;           /* ns per tick, ZC_TICKCONV_SHIFT fraction bits */
    size_t n;               /* anchors seen (0: ticks are ns) */
};
void zc_tickconv_begin(struct zc_tickconv *c);
uint64_t zc_tickconv_slow(struct zc_tickconv *c, uint64_t tick); /* a tick outside the segment */
static inline uint64_t zc_tickconv(struct zc_tickconv *c, uint64_t t) {
    uint64_t d = t - c->lo;
    if (__builtin_expect(d >= c->span, 0)) return zc_tickconv_slow(c, t);
    return (uint64_t)((c->base + (unsigned __int128)d * c->mul) >> ZC_TICKCONV_SHIFT);
}
/* zc_tickconv as the conversion callback of zc_evt_normalize (c: its struct zc_tickconv) */
static inline uint64_t zc_tickconv_cb(void *c, uint64_t tick) { return zc_tickconv(c, tick); }
uint64_t zc_tick_to_ns(uint64_t tick); /* one conversion */
double zc_clock_error_bound_ns(void);  /* half the widest anchor read window (tests, docs) */

#endif
