/* SPDX-License-Identifier: MIT */
/* The background drainer's pace (collector/ze/zc_ze_pace.h) against a model of a busy stream:
 * operations completing at a steady rate, each pass collecting what completed since the last.
 * From 1,000 to 50 million operations a second, the interval must settle within a few passes
 * between the shortest interval and the ceiling, with each pass collecting about ZC_BG_BATCH
 * (within the factor of 2 either side that the rule allows) wherever the bounds permit it; a
 * hurry must bring the shortest interval back at once; the ceiling must stay below a 16th of
 * the journal's flush interval. Exit status 0 when every check holds. */
#include "zc_ze_pace.h"

#include <stdio.h>

static int fails;
#define CHECK(c, ...)                                                                                                  \
    do {                                                                                                               \
        if (!(c)) {                                                                                                    \
            fails++;                                                                                                   \
            fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                                                      \
            fprintf(stderr, __VA_ARGS__);                                                                              \
            fputc('\n', stderr);                                                                                       \
        }                                                                                                              \
    } while (0)

static void settle(double rate, uint64_t base, uint64_t ceiling) {
    uint64_t iv = base;
    for (int pass = 0; pass < 64; pass++) {
        uint64_t got = (uint64_t)(rate * (double)iv / 1e9);
        uint64_t next = zc_ze_bg_pace(iv, got, false, base, ceiling);
        CHECK(next >= base && next <= ceiling, "rate %.0f: interval %llu outside [%llu, %llu]", rate,
              (unsigned long long)next, (unsigned long long)base, (unsigned long long)ceiling);
        if (pass >= 8) { /* settled: only the bounds may keep a pass from collecting about a batch */
            CHECK(got <= 2 * ZC_BG_BATCH || iv == base, "rate %.0f: %llu per pass at %llu ns, above the shortest",
                  rate, (unsigned long long)got, (unsigned long long)iv);
            CHECK(got >= ZC_BG_BATCH / 2 || iv == ceiling, "rate %.0f: %llu per pass at %llu ns, below the ceiling",
                  rate, (unsigned long long)got, (unsigned long long)iv);
            CHECK(next == iv, "rate %.0f: still moving after %d passes (%llu -> %llu)", rate, pass,
                  (unsigned long long)iv, (unsigned long long)next);
        }
        iv = next;
    }
    /* a pile: back to the shortest at once, from wherever it settled */
    CHECK(zc_ze_bg_pace(iv, 0, true, base, ceiling) == base, "rate %.0f: a hurry did not restore the shortest", rate);
}

int main(void) {
    const uint64_t ms = 1000000;
    /* the ceiling: 16 shortest intervals, at most a 16th of the flush interval, never below the shortest */
    CHECK(zc_ze_bg_ceiling_ns(ms, 0) == 16 * ms, "no journal: ceiling %llu", (unsigned long long)zc_ze_bg_ceiling_ns(ms, 0));
    CHECK(zc_ze_bg_ceiling_ns(ms, 1000) == 16 * ms, "default journal: ceiling");
    CHECK(zc_ze_bg_ceiling_ns(ms, 100) == 100 * ms / 16, "100 ms journal: ceiling %llu",
          (unsigned long long)zc_ze_bg_ceiling_ns(ms, 100));
    CHECK(zc_ze_bg_ceiling_ns(ms, 2) == ms, "2 ms journal: the shortest interval stays");
    CHECK(zc_ze_bg_ceiling_ns(500 * ms, 1000) == 500 * ms, "a long shortest interval stays");
    const double rates[] = {1e3, 1e4, 1e5, 3e5, 1e6, 2e6, 5e6, 1e7, 5e7};
    const uint64_t bases[] = {100000, ms, 5 * ms};
    const uint64_t flushes[] = {0, 100, 1000};
    for (unsigned b = 0; b < sizeof(bases) / sizeof(*bases); b++)
        for (unsigned f = 0; f < sizeof(flushes) / sizeof(*flushes); f++)
            for (unsigned r = 0; r < sizeof(rates) / sizeof(*rates); r++)
                settle(rates[r], bases[b], zc_ze_bg_ceiling_ns(bases[b], flushes[f]));
    /* nothing completing (a long kernel): the interval stretches to the ceiling, no further */
    uint64_t iv = ms;
    for (int i = 0; i < 10; i++) iv = zc_ze_bg_pace(iv, 0, false, ms, 16 * ms);
    CHECK(iv == 16 * ms, "idle passes: %llu", (unsigned long long)iv);
    if (fails) return 1;
    printf("drainer pace: all checks hold\n");
    return 0;
}
