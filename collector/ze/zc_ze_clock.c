/* SPDX-License-Identifier: MIT */
/* Device clock -> host CLOCK_MONOTONIC_RAW. Anchor pairs from zeDeviceGetGlobalTimestamps
 * (~10 us each) are taken when a device is first seen and then at drain time when the newest is
 * older than ZECOLL_ANCHOR_INTERVAL_MS, never per Append. Between anchors the mapping is
 * linear, which follows any constant drift exactly; after the newest anchor it is extrapolated
 * with the newest segment's rate. Device values are unrolled to 64 bits: global timestamps
 * against the host time elapsed since the previous anchor, kernel timestamps (often only 32 bits,
 * wrapping every few minutes) against the operation's submission time. */
#include "zc_ze_internal.h"

#include <stdlib.h>

static uint64_t mask_bits(uint32_t bits) { return bits >= 64 ? UINT64_MAX : ((UINT64_C(1) << bits) - 1); }

/* The value congruent to v (mod 2^bits) nearest to ref. */
static uint64_t unroll_near(uint64_t v, uint32_t bits, uint64_t ref) {
    if (bits >= 64) return v;
    uint64_t period = UINT64_C(1) << bits, m = period - 1;
    uint64_t cand = (ref & ~m) | (v & m);
    if (cand > ref && cand - ref > period / 2 && cand >= period) cand -= period;
    else if (cand < ref && ref - cand > period / 2) cand += period;
    return cand;
}

/* rate in ticks per ns between anchors a and b (nominal when there is only one) */
static long double rate(const struct zc_dev *d, size_t i) {
    if (d->nanchors >= 2 && i + 1 < d->nanchors) {
        const struct zc_anchor *a = &d->anchors[i], *b = &d->anchors[i + 1];
        if (b->host > a->host && b->dev > a->dev) return (long double)(b->dev - a->dev) / (long double)(b->host - a->host);
    }
    if (d->nanchors >= 2) {
        const struct zc_anchor *a = &d->anchors[d->nanchors - 2], *b = &d->anchors[d->nanchors - 1];
        if (b->host > a->host && b->dev > a->dev) return (long double)(b->dev - a->dev) / (long double)(b->host - a->host);
    }
    return (long double)d->hz / 1e9L;
}

void zc_ze_clock_anchor(struct zc_dev *d, bool force) {
    pthread_mutex_lock(&d->clock_lock);
    uint64_t now = zc_now();
    if (!force && d->nanchors && now - d->anchors[d->nanchors - 1].host < zc_knobs.ANCHOR_INTERVAL_MS * 1000000u) {
        pthread_mutex_unlock(&d->clock_lock);
        return;
    }
    uint64_t host, dev;
    if (!zc_ze_real.ze_device.pfnGetGlobalTimestamps ||
        zc_ze_real.ze_device.pfnGetGlobalTimestamps(d->h, &host, &dev) != ZE_RESULT_SUCCESS) {
        pthread_mutex_unlock(&d->clock_lock);
        return; /* keep converting with the anchors we have */
    }
    uint64_t full = dev & mask_bits(d->gbits);
    if (d->nanchors) {
        const struct zc_anchor *p = &d->anchors[d->nanchors - 1];
        if (host <= p->host) {
            pthread_mutex_unlock(&d->clock_lock);
            return;
        }
        uint64_t expect = p->dev + (uint64_t)((long double)(host - p->host) * rate(d, d->nanchors - 1));
        full = unroll_near(dev, d->gbits, expect);
    } else if (d->gbits < 64) {
        /* start far from zero so unrolling backwards never underflows */
        full += UINT64_C(1) << 62;
        full -= full & mask_bits(d->gbits);
        full |= dev & mask_bits(d->gbits);
    }
    if (d->nanchors == d->cap_anchors) {
        size_t ncap = d->cap_anchors ? 2 * d->cap_anchors : 64;
        struct zc_anchor *n = realloc(d->anchors, ncap * sizeof(*n));
        if (!n) {
            pthread_mutex_unlock(&d->clock_lock);
            return;
        }
        d->anchors = n;
        d->cap_anchors = ncap;
    }
    d->anchors[d->nanchors++] = (struct zc_anchor){host, full};
    pthread_mutex_unlock(&d->clock_lock);
}

/* index of the last anchor with key <= x (by host or by device), 0 if none */
static size_t seg(const struct zc_dev *d, uint64_t x, bool by_dev) {
    size_t lo = 0, hi = d->nanchors;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if ((by_dev ? d->anchors[mid].dev : d->anchors[mid].host) <= x) lo = mid + 1;
        else hi = mid;
    }
    return lo ? lo - 1 : 0;
}

uint64_t zc_ze_clock_to_host(struct zc_dev *d, uint64_t dev) {
    pthread_mutex_lock(&d->clock_lock);
    uint64_t h = 0;
    if (d->nanchors) {
        size_t i = seg(d, dev, true);
        const struct zc_anchor *a = &d->anchors[i];
        long double r = rate(d, i);
        long double dt = ((long double)(int64_t)(dev - a->dev)) / r;
        h = a->host + (uint64_t)(int64_t)(dt < 0 ? dt - 0.5L : dt + 0.5L);
    }
    pthread_mutex_unlock(&d->clock_lock);
    return h;
}

uint64_t zc_ze_clock_dev_at(struct zc_dev *d, uint64_t host) {
    pthread_mutex_lock(&d->clock_lock);
    uint64_t v = 0;
    if (d->nanchors) {
        size_t i = seg(d, host, false);
        const struct zc_anchor *a = &d->anchors[i];
        long double dt = (long double)(int64_t)(host - a->host) * rate(d, i);
        v = a->dev + (uint64_t)(int64_t)dt;
    }
    pthread_mutex_unlock(&d->clock_lock);
    return v;
}

void zc_ze_clock_convert(struct zc_dev *d, uint64_t ts_start, uint64_t ts_end, uint64_t not_before, uint64_t *start,
                         uint64_t *end) {
    uint64_t m = mask_bits(d->kbits);
    /* an operation starts after it was submitted; allow 1 ms of conversion slack */
    uint64_t slack = d->hz / 1000;
    uint64_t lo = zc_ze_clock_dev_at(d, not_before) - slack;
    uint64_t s = lo + (((ts_start & m) - lo) & m);
    uint64_t e = s + (((ts_end & m) - (ts_start & m)) & m);
    *start = zc_ze_clock_to_host(d, s);
    *end = zc_ze_clock_to_host(d, e);
    if (*end < *start) *end = *start;
}
