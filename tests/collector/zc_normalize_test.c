/* SPDX-License-Identifier: MIT */
/* zc_evt_normalize (collector/archive/zc_evt.h) against a plain reference of what it must do, on
 * random batches shaped as the collector writes them: calls of ZC_CALL_RUN followed by the MPI
 * records inside them (placeholders and NBC pairs among them, runs cut by the batch's end),
 * calls of d records (PAPI's), MPI_Irecv calls with their request (ZC_EV_CALL_IRECV), the
 * collector's own flush calls, plain records, timestamps that
 * go back now and then (clamped). The reference finds a call's run by a search ahead from the
 * call, as the writer once did; the normalizer counts it in one pass. Every field of every
 * record, the last time, the event and clamp counts must be equal, with and without a
 * conversion, for whole batches and for the same records cut into several.
 *   zc_normalize_test [ROUNDS]   (default 20000) */
#include "zc_evt.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t conv_test(void *cv, uint64_t t) { return t + t / 3 + (uintptr_t)cv; } /* monotonic */

/* The reference: a search ahead for a call's run, one record at a time. */
static void reference(struct zc_ev *ev, size_t n, bool thread, uint32_t flush_region, bool conv, uint64_t *last,
                      uint64_t *nevents, uint64_t *nclamped) {
    uint64_t l = *last, clamped = 0, events = 0;
    size_t leave_at = SIZE_MAX;
    struct zc_ev *call = NULL;
    for (size_t i = 0; i < n; i++) {
        struct zc_ev *e = &ev[i];
        if (e->type == ZC_EV_MPI_NOP) {
            e->ts = l;
        } else {
            uint64_t t = conv ? conv_test((void *)7, e->ts) : e->ts;
            if (t < l) t = l, clamped++;
            e->ts = l = t;
            events++;
            if (e->type == ZC_EV_CALL) {
                if (e->d == ZC_CALL_RUN) {
                    size_t k = 0;
                    while (i + 1 + k < n && zc_ev_in_call(ev[i + 1 + k].type)) k++;
                    e->d = k;
                }
                if (conv) e->b = conv_test((void *)7, e->b);
                events += e->c ? 2 : 1;
                if (e->a == flush_region && thread) events -= 2;
                if (e->d && i + e->d < n) {
                    leave_at = i + e->d;
                    call = e;
                } else {
                    if (e->b < l) e->b = l;
                    l = e->b;
                }
            } else if (e->type == ZC_EV_CALL_IRECV) { /* Enter, [callsite], MpiIrecvRequest, Leave */
                if (conv) e->b = conv_test((void *)7, e->b);
                events += e->c ? 3 : 2;
                if (e->b < l) e->b = l;
                l = e->b;
            } else if (e->type == ZC_EV_BUFFER_FLUSH && conv) {
                e->b = conv_test((void *)7, e->b);
            } else if (e->type == ZC_EV_MPI_NBC_REQID || e->type == ZC_EV_METRIC_MORE) {
                events--;
            }
        }
        if (i == leave_at) {
            if (call->b < l) call->b = l;
            l = call->b;
            leave_at = SIZE_MAX;
        }
    }
    *last = l;
    *nclamped += clamped;
    *nevents += events;
}

static uint64_t rnd_state = 88172645463325252ull;
static uint64_t rnd(uint64_t m) {
    rnd_state ^= rnd_state << 13, rnd_state ^= rnd_state >> 7, rnd_state ^= rnd_state << 17;
    return rnd_state % m;
}

#define MAXN 64
static const uint32_t in_call_types[] = {ZC_EV_MPI_SEND,         ZC_EV_MPI_ISEND,     ZC_EV_MPI_ISEND_COMPLETE,
                                         ZC_EV_MPI_IRECV_REQUEST, ZC_EV_MPI_RECV,      ZC_EV_MPI_IRECV,
                                         ZC_EV_MPI_REQUEST_TEST,  ZC_EV_MPI_COLL_END,  ZC_EV_MPI_NBC_REQUEST,
                                         ZC_EV_MPI_NOP,           ZC_EV_MPI_DONE_H,    ZC_EV_MPI_ISEND_H};
static const uint32_t plain_types[] = {ZC_EV_ENTER, ZC_EV_LEAVE, ZC_EV_PARAM_U64, ZC_EV_RMA_GET, ZC_EV_BUFFER_FLUSH,
                                       ZC_EV_MEASUREMENT, ZC_EV_MPI_COLL_BEGIN, 40 /* unknown */};

/* A batch as the collector writes one: returns its length. */
static size_t make_batch(struct zc_ev *ev, uint64_t *t) {
    size_t n = 0;
    while (n < MAXN - 8) {
        uint64_t r = rnd(10);
        *t += rnd(2000);
        if (rnd(20) == 0) *t -= rnd(3000) < *t ? rnd(3000) : 0; /* the clock went back */
        if (r < 5) { /* an MPI call and its run */
            size_t at = n;
            ev[n++] = (struct zc_ev){*t, ZC_EV_CALL, (uint32_t)rnd(4), *t + rnd(5000), rnd(3) == 0 ? 9 : 0, ZC_CALL_RUN};
            for (uint64_t k = rnd(4); k > 0; k--) {
                if (rnd(6) == 0) {
                    ev[n++] = (struct zc_ev){*t + rnd(900), ZC_EV_MPI_NBC_COMPLETE, 1, 2, 3, 4};
                    ev[n++] = (struct zc_ev){*t + rnd(900), ZC_EV_MPI_NBC_REQID, 0, 0, 0, 5};
                } else {
                    uint32_t ty = in_call_types[rnd(sizeof(in_call_types) / sizeof(*in_call_types))];
                    ev[n++] = (struct zc_ev){*t + rnd(6000), ty, 1, rnd(100), rnd(100), rnd(100)};
                }
            }
            *t = ev[at].b > *t ? ev[at].b : *t;
        } else if (r < 6) { /* a call of d records (PAPI's Metric inside it) */
            uint64_t d = rnd(3);
            ev[n++] = (struct zc_ev){*t, ZC_EV_CALL, 2, *t + rnd(5000), 0, d};
            for (uint64_t k = 0; k < d; k++)
                ev[n++] = (struct zc_ev){*t + rnd(4000), k ? ZC_EV_METRIC_MORE : ZC_EV_METRIC, 4, 1, 2, 3};
        } else if (r < 7 && rnd(2)) { /* an MPI_Irecv with its request (zc_ev.h) */
            ev[n++] = (struct zc_ev){*t, ZC_EV_CALL_IRECV, 1, *t + rnd(5000), rnd(3) == 0 ? 9 : 0, rnd(100)};
            *t = ev[n - 1].b;
        } else if (r < 7) { /* the collector's own flush */
            ev[n++] = (struct zc_ev){*t, ZC_EV_CALL, 3, *t + rnd(800), 0, 0};
        } else {
            uint32_t ty = plain_types[rnd(sizeof(plain_types) / sizeof(*plain_types))];
            ev[n++] = (struct zc_ev){*t, ty, (uint32_t)rnd(3), *t + rnd(700), rnd(2), rnd(2)};
        }
    }
    return n;
}

int main(int argc, char **argv) {
    long rounds = argc > 1 ? atol(argv[1]) : 20000;
    struct zc_ev src[MAXN], a[MAXN], b[MAXN];
    uint64_t t = 1000000;
    long bad = 0, runs_cut = 0;
    for (long round = 0; round < rounds; round++) {
        size_t n = make_batch(src, &t);
        bool conv = round & 1, thread = round & 2;
        uint64_t la = 500000 + rnd(2000000), lb = la, ea = 0, eb = 0, ca = 0, cb = 0;
        memcpy(a, src, sizeof(*src) * n);
        memcpy(b, src, sizeof(*src) * n);
        /* the same records in one batch or cut in pieces (runs cut at a piece's end) */
        size_t cut = (round & 4) ? rnd(n + 1) : n;
        if (cut > 0 && cut < n && src[cut - 1].type != ZC_EV_CALL && zc_ev_in_call(src[cut].type)) runs_cut++;
        reference(a, cut, thread, 3, conv, &la, &ea, &ca);
        reference(a + cut, n - cut, thread, 3, conv, &la, &ea, &ca);
        if (conv) {
            zc_evt_normalize(b, cut, thread, 3, conv_test, (void *)7, &lb, &eb, &cb);
            zc_evt_normalize(b + cut, n - cut, thread, 3, conv_test, (void *)7, &lb, &eb, &cb);
        } else {
            zc_evt_normalize(b, cut, thread, 3, NULL, NULL, &lb, &eb, &cb);
            zc_evt_normalize(b + cut, n - cut, thread, 3, NULL, NULL, &lb, &eb, &cb);
        }
        bool same = la == lb && ea == eb && ca == cb;
        for (size_t i = 0; i < n && same; i++)
            same = a[i].ts == b[i].ts && a[i].type == b[i].type && a[i].a == b[i].a && a[i].b == b[i].b &&
                   a[i].c == b[i].c && a[i].d == b[i].d;
        if (!same && bad++ < 3) {
            fprintf(stderr, "FAIL: round %ld (n %zu, cut %zu, conv %d, thread %d): last %llu/%llu events %llu/%llu clamped %llu/%llu\n",
                    round, n, cut, conv, thread, (unsigned long long)la, (unsigned long long)lb, (unsigned long long)ea,
                    (unsigned long long)eb, (unsigned long long)ca, (unsigned long long)cb);
            for (size_t i = 0; i < n; i++)
                if (memcmp(&a[i], &b[i], sizeof(a[i])))
                    fprintf(stderr, "  [%zu] type %u: ts %llu/%llu b %llu/%llu d %llu/%llu\n", i, a[i].type,
                            (unsigned long long)a[i].ts, (unsigned long long)b[i].ts, (unsigned long long)a[i].b,
                            (unsigned long long)b[i].b, (unsigned long long)a[i].d, (unsigned long long)b[i].d);
        }
    }
    printf("{\"rounds\": %ld, \"runs_cut\": %ld, \"differing\": %ld}\n", rounds, runs_cut, bad);
    if (runs_cut == 0) fprintf(stderr, "FAIL: no run was cut by a batch's end\n");
    return bad || runs_cut == 0;
}
