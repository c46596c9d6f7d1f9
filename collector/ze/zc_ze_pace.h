/* SPDX-License-Identifier: MIT */
/* The background drainer's pace while streams are busy (zc_ze_drain.c's bg_main), apart so that
 * a unit test drives it (tests/collector/zc_pace_test.c). Pure arithmetic: no state, no calls.
 *
 * Each pass over a busy stream reads lines the appending thread and the driver have just written
 * and hands back events the next Appends reuse: every pass costs the appending thread misses,
 * whatever it collects. So while operations keep completing, passes are spaced so that each
 * collects about ZC_BG_BATCH of them: a pass that collected fewer than half that doubles the
 * interval, one that collected more than twice that halves it, between the shortest interval
 * (DRAIN_INTERVAL_US) and the ceiling. A producer whose inbox piles up anyway (a burst after a
 * quiet time) hurries the drainer back to the shortest interval. */
#ifndef ZC_ZE_PACE_H
#define ZC_ZE_PACE_H

#include <stdbool.h>
#include <stdint.h>

#define ZC_BG_BATCH 2048u
/* The ceiling: this many shortest intervals, and never more than a 16th of the salvage
 * journal's flush interval, so that what completed reaches the journal as it did
 * (docs/salvage.md: a crash loses one flush interval of records, plus the drainer's delay). */
#define ZC_BG_STRETCH 16u

static inline uint64_t zc_ze_bg_ceiling_ns(uint64_t base_ns, uint64_t flush_ms) {
    uint64_t c = base_ns * ZC_BG_STRETCH;
    if (flush_ms && c > flush_ms * UINT64_C(1000000) / 16) c = flush_ms * UINT64_C(1000000) / 16;
    return c > base_ns ? c : base_ns;
}

/* The next interval after a pass that collected that many operations (hurried: an inbox piled up
 * since the last pass). */
static inline uint64_t zc_ze_bg_pace(uint64_t cur_ns, uint64_t collected, bool hurried, uint64_t base_ns,
                                     uint64_t ceiling_ns) {
    if (hurried) return base_ns;
    if (collected > 2 * ZC_BG_BATCH) cur_ns /= 2;
    else if (collected < ZC_BG_BATCH / 2) cur_ns *= 2;
    if (cur_ns > ceiling_ns) cur_ns = ceiling_ns;
    return cur_ns < base_ns ? base_ns : cur_ns;
}

#endif
