/* SPDX-License-Identifier: MIT */
/* ZECOLL_PHASE_TIMES (zc_phase.h): the marks, kept in a fixed table and printed by a destructor,
 * after every exit path's finalize, so that the line covers the whole of the collector's end. */
#include "zc_phase.h"

#include "zc_knobs.h"
#include "zc_log.h"
#include "zc_proc.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#define ZC_PHASE_MAX 96
static struct {
    const char *name;
    uint64_t wall, cpu; /* ns: CLOCK_MONOTONIC, CLOCK_PROCESS_CPUTIME_ID */
} marks[ZC_PHASE_MAX];
static unsigned nmarks;
static bool early; /* the constructor, before the knobs are read */

static uint64_t ns_of(clockid_t c) {
    struct timespec t;
    clock_gettime(c, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

void zc_phase(const char *name) {
    if (!zc_knobs.PHASE_TIMES && !early) return;
    unsigned i = __atomic_fetch_add(&nmarks, 1, __ATOMIC_RELAXED);
    if (i >= ZC_PHASE_MAX) return;
    marks[i].wall = ns_of(CLOCK_MONOTONIC);
    marks[i].cpu = ns_of(CLOCK_PROCESS_CPUTIME_ID);
    marks[i].name = name;
}

void zc_phase_start(void) {
    early = true;
    zc_phase("start");
}

void zc_phase_settle(void) {
    early = false;
    if (!zc_knobs.PHASE_TIMES) nmarks = 0;
}

/* One line: "zecoll phases rank R pid P: name wall_us/cpu_us ...", each step's share since the
 * mark before it, then the total from the first mark. */
__attribute__((destructor)) static void phase_print(void) {
    /* (a launcher process stops after the knobs: nothing of ours ran there) */
    if (!zc_knobs.PHASE_TIMES || __atomic_load_n(&nmarks, __ATOMIC_RELAXED) < 4) return;
    zc_phase("exit");
    unsigned n = __atomic_load_n(&nmarks, __ATOMIC_RELAXED);
    if (n > ZC_PHASE_MAX) n = ZC_PHASE_MAX;
    char line[ZC_PHASE_MAX * 48 + 128];
    size_t o = (size_t)snprintf(line, sizeof(line), "zecoll phases rank %u pid %ld:", zc_job.rank, (long)getpid());
    for (unsigned i = 1; i < n && o < sizeof(line) - 64; i++)
        o += (size_t)snprintf(line + o, sizeof(line) - o, " %s %.0f/%.0f", marks[i].name,
                              (double)(marks[i].wall - marks[i - 1].wall) / 1e3, (double)(marks[i].cpu - marks[i - 1].cpu) / 1e3);
    if (n > 1)
        o += (size_t)snprintf(line + o, sizeof(line) - o, " total %.0f/%.0f", (double)(marks[n - 1].wall - marks[0].wall) / 1e3,
                              (double)(marks[n - 1].cpu - marks[0].cpu) / 1e3);
    if (o >= sizeof(line)) o = sizeof(line) - 1;
    zc_log_write(line, sizeof(line), o);
}
