/* SPDX-License-Identifier: MIT */
/* A stream's completed records in start order (collector/ze/zc_ze_order.c): records pushed in
 * start order (the FIFO run), out of it (the heap), interleaved, with equal starts, and popped
 * while more arrive, as a drain writes them, must come out in non-decreasing start order, each
 * exactly once; a list forgotten there is forgotten in both (TAP, tests/common/zt.h). */
#include "zc_ze_internal.h"
#include "zt.h"

#include <stdlib.h>
#include <string.h>

/* failed checks of the current case (one TAP result per case); the first few are described */
static int bad;
#define CHECK(c, ...) do { if (!(c) && bad++ < 5) zt_diag(__VA_ARGS__); } while (0)

enum { N = 20000 };
static struct zc_rec recs[N];

/* Pushes n records with starts from gen(i), popping (as a drain that writes up to a watermark
 * does) whenever pop_every of them went in; checks the order and that each comes out once. */
static void run(const char *what, uint64_t (*gen)(int), int n, int pop_every) {
    bad = 0;
    struct zc_stream s;
    memset(&s, 0, sizeof(s));
    static unsigned char seen[N];
    memset(seen, 0, sizeof(seen));
    uint64_t last = 0, out = 0;
    for (int i = 0; i < n; i++) {
        memset(&recs[i], 0, sizeof(recs[i]));
        recs[i].start_ns = gen(i);
        CHECK(zc_ze_done_push(&s, &recs[i]), "%s: push %d", what, i);
        if (pop_every && i % pop_every == pop_every - 1) {
            /* a drain writes what starts no later than the watermark: here the half pushed so far */
            uint64_t w = gen(i / 2);
            for (struct zc_rec *f; (f = zc_ze_done_first(&s)) && f->start_ns <= w;) {
                struct zc_rec *r = zc_ze_done_pop(&s);
                CHECK(r == f, "%s: pop is not the first", what);
                /* (a later push may start earlier than what a pass wrote: the drain's watermark
                 * prevents that; here the order within a pass counts) */
                CHECK(r->start_ns >= last, "%s: %llu after %llu", what, (unsigned long long)r->start_ns,
                      (unsigned long long)last);
                last = r->start_ns;
                seen[r - recs]++;
                out++;
            }
            last = 0;
        }
    }
    CHECK(s.ndone == (size_t)n - out, "%s: ndone %zu, expected %llu", what, s.ndone, (unsigned long long)(n - out));
    uint64_t prev = 0;
    while (s.ndone) {
        struct zc_rec *r = zc_ze_done_pop(&s);
        CHECK(r->start_ns >= prev, "%s: %llu after %llu", what, (unsigned long long)r->start_ns,
              (unsigned long long)prev);
        prev = r->start_ns;
        seen[r - recs]++;
        out++;
    }
    CHECK(zc_ze_done_first(&s) == NULL && !s.run_head && !s.run_tail && s.nheap == 0, "%s: not empty", what);
    CHECK(out == (uint64_t)n, "%s: %llu out of %d", what, (unsigned long long)out, n);
    for (int i = 0; i < n; i++) CHECK(seen[i] == 1, "%s: record %d out %d times", what, i, seen[i]);
    free(s.done);
    zt_ok(bad == 0, "%s starts%s: each record once, in start order", what, pop_every ? ", drained as they come" : "");
}

static uint64_t rising(int i) { return 1000 + 10 * (uint64_t)i; }
static uint64_t falling(int i) { return 1000000 - 10 * (uint64_t)i; }
static uint64_t equal(int i) { return 5000 + (uint64_t)(i / 100); }
static uint64_t zigzag(int i) { return 1000 + 10 * (uint64_t)i + (i % 7 == 3 ? 0 : 35) - (i % 2 ? 30 : 0); }
static uint64_t lcg_state;
static uint64_t random_start(int i) {
    (void)i;
    lcg_state = lcg_state * 6364136223846793005ull + 1442695040888963407ull;
    return (lcg_state >> 20) % 1000000;
}
/* two interleaved in-order lists whose operations overlap: each rising, together not */
static uint64_t two_lists(int i) { return (i % 2 ? 500 : 0) + 10 * (uint64_t)(i / 2); }

int main(void) {
    uint64_t (*gens[])(int) = {rising, falling, equal, zigzag, random_start, two_lists};
    const char *names[] = {"rising", "falling", "equal", "zigzag", "random", "two lists"};
    for (size_t g = 0; g < sizeof(gens) / sizeof(*gens); g++) {
        lcg_state = 42;
        run(names[g], gens[g], N, 0);
        lcg_state = 42;
        run(names[g], gens[g], N, 333);
    }
    /* a list going away: its records in the run and in the heap stop pointing at it */
    struct zc_stream s;
    memset(&s, 0, sizeof(s));
    bad = 0;
    struct zc_list *l = (struct zc_list *)(uintptr_t)0x1000, *other = (struct zc_list *)(uintptr_t)0x2000;
    for (int i = 0; i < 100; i++) {
        memset(&recs[i], 0, sizeof(recs[i]));
        recs[i].start_ns = (uint64_t)(i % 10 == 9 ? 5 : 100 + i); /* every tenth to the heap */
        recs[i].list = i % 3 ? l : other;
        zc_ze_done_push(&s, &recs[i]);
    }
    CHECK(s.nheap > 0 && s.run_head, "forget: both the run and the heap hold records");
    zc_ze_done_forget_list(&s, l);
    for (int i = 0; i < 100; i++)
        CHECK(recs[i].list == (i % 3 ? NULL : other), "forget: record %d points at %p", i, (void *)recs[i].list);
    free(s.done);
    zt_ok(bad == 0, "a list going away is forgotten in the run and in the heap");
    return zt_done();
}
