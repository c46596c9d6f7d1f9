/* SPDX-License-Identifier: MIT */
/* Device clock -> host CLOCK_MONOTONIC_RAW. Anchor pairs from zeDeviceGetGlobalTimestamps
 * (~10 us each) are taken when a device is first seen and then at drain time when the newest is
 * older than ZECOLL_ANCHOR_INTERVAL_MS, never per Append. Between anchors the mapping is
 * linear, which follows any constant drift exactly; after the newest anchor it is extrapolated
 * with the same rate. Device values are unrolled to 64 bits: global timestamps
 * against the host time elapsed since the previous anchor, kernel timestamps (often only 32 bits,
 * wrapping every few minutes) against the operation's submission time. Positions are taken from
 * the nearest anchor at or before the value, so anchor error does not accumulate.
 *
 * A driver without global timestamps (the entry NULL, or the first call unsupported, as on older
 * drivers): the device clock's offset is bounded by what the host sees of each record instead. An
 * operation started after it was submitted and ended before the drain that found it complete, so
 * offset = host - tick / rate lies in [submit - (start + 1) / rate, seen - end / rate] for each;
 * the intersection over records, each widened by ZC_DRIFT_ALLOWANCE of the time since it was
 * observed, bounds the offset, and its midpoint places every record: the start is off by at most
 * half the interval's width plus one tick plus the drift allowance between the record and the
 * newest observation, which the collector tracks and prints per device at exit. Records are
 * placed ZC_SETTLE_NS after they were seen (zc_ze_drain.c holds them), so observations that
 * came later narrow their interval too. Durations are the tick count at the
 * nominal rate (off by the clock's true drift). Everything else here is then unused. */
#include "zc_ze_internal.h"

#include <stdio.h>
#include <stdlib.h>

/* The most a device clock drifts against CLOCK_MONOTONIC_RAW between two host observations that
 * anchor it: oscillators are specified to tens of ppm; 100 ppm leaves room. An interval that
 * becomes empty (faster drift) starts again from the newest record. */
#define ZC_DRIFT_ALLOWANCE 100e-6L

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

/* Ticks per ns: the least-squares slope over all anchors. Each anchor is off by up to one tick
 * (the counter is read at a whole tick), so a rate from two close anchors is noisy; the fit over
 * the whole run gets better as the run gets longer, and any constant drift is followed exactly.
 * Nominal frequency until there are two anchors. Updated as anchors arrive; clock_lock held. */
static long double rate(const struct zc_dev *d) {
    return d->nanchors >= 2 && d->rate > 0 ? d->rate : (long double)d->hz / 1e9L;
}

static void fit_add(struct zc_dev *d, const struct zc_anchor *a) {
    const struct zc_anchor *a0 = &d->anchors[0];
    long double x = (long double)(a->host - a0->host), y = (long double)(a->dev - a0->dev);
    d->sx += x;
    d->sy += y;
    d->sxx += x * x;
    d->sxy += x * y;
    long double n = (long double)d->nanchors, den = n * d->sxx - d->sx * d->sx;
    if (d->nanchors >= 2 && den > 0) {
        long double r = (n * d->sxy - d->sx * d->sy) / den;
        if (r > 0) d->rate = r;
    }
}

void zc_ze_clock_anchor(struct zc_dev *d, bool force) {
    pthread_mutex_lock(&d->clock_lock);
    uint64_t now = zc_now();
    /* early in the run the rate estimate is young: anchor more often (every eighth of the run's
     * age, at least 1 ms apart), then every ZECOLL_ANCHOR_INTERVAL_MS */
    uint64_t interval = zc_knobs.ANCHOR_INTERVAL_MS * 1000000u;
    if (d->nanchors) {
        uint64_t age = (now - d->anchors[0].host) / 8;
        if (age < 1000000u) age = 1000000u;
        if (age < interval) interval = age;
    }
    if (!force && d->nanchors && now - d->anchors[d->nanchors - 1].host < interval) {
        pthread_mutex_unlock(&d->clock_lock);
        return;
    }
    if (d->host_anchored) {
        pthread_mutex_unlock(&d->clock_lock);
        return;
    }
    uint64_t host, dev;
    ze_result_t r = ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
    if (zc_ze_real.ze_device.pfnGetGlobalTimestamps) r = zc_ze_real.ze_device.pfnGetGlobalTimestamps(d->h, &host, &dev);
    if (r != ZE_RESULT_SUCCESS) {
        if (!d->nanchors) {
            /* never anchored: place records from host observations (a NULL entry is announced
             * with the driver's other missing entries) */
            d->host_anchored = true;
            if (zc_ze_real.ze_device.pfnGetGlobalTimestamps)
                ZC_WARN("device %u: zeDeviceGetGlobalTimestamps returned 0x%x: device times are placed from host "
                        "observations (their error bound is printed at exit)", d->index, (unsigned)r);
        }
        pthread_mutex_unlock(&d->clock_lock);
        return; /* keep converting with the anchors we have */
    }
    host += (uint64_t)zc_clock_skew; /* the driver reads the same clock as zc_now() (tests: skewed) */
    uint64_t full = dev & mask_bits(d->gbits);
    if (d->nanchors) {
        const struct zc_anchor *p = &d->anchors[d->nanchors - 1];
        if (host <= p->host) {
            pthread_mutex_unlock(&d->clock_lock);
            return;
        }
        uint64_t expect = p->dev + (uint64_t)((long double)(host - p->host) * rate(d));
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
    fit_add(d, &d->anchors[d->nanchors - 1]);
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

/* The device has no anchors (see the top of the file): a completed record narrows the offset's
 * interval; its raw position (ticks since the first record's start) and duration are kept to be
 * placed later, once observations ZC_SETTLE_NS newer have narrowed the interval further. */
void zc_ze_clock_observe(struct zc_dev *d, uint64_t ts_start, uint64_t ts_end, uint64_t not_before, uint64_t seen,
                         int64_t *s_rel, uint64_t *dur) {
    uint64_t m = mask_bits(d->kbits);
    long double r = (long double)d->hz / 1e9L; /* ticks per ns, nominal */
    pthread_mutex_lock(&d->clock_lock);
    uint64_t du = ((ts_end & m) - (ts_start & m)) & m, s;
    if (!d->off_valid) {
        s = d->dev_base = ts_start & m;
    } else {
        /* unroll to the first tick at or after the earliest the device clock can have shown at
         * submission (the interval's upper end, widened by the drift since), less 1 ms of slack */
        long double gap = (long double)(not_before > d->off_t ? not_before - d->off_t : d->off_t - not_before);
        long double hi = d->off_hi + gap * ZC_DRIFT_ALLOWANCE;
        uint64_t lo = d->dev_base + (uint64_t)(int64_t)(((long double)not_before - hi) * r) - d->hz / 1000;
        s = lo + (((ts_start & m) - lo) & m);
    }
    if (seen < not_before) seen = not_before;
    int64_t rel = (int64_t)(s - d->dev_base);
    long double srel = (long double)rel;
    long double age = (long double)(seen - not_before) * ZC_DRIFT_ALLOWANCE;
    long double rec_lo = (long double)not_before - (srel + 1) / r - age;
    long double rec_hi = (long double)seen - (srel + (long double)du) / r + age;
    if (!d->off_valid) {
        d->off_lo = rec_lo;
        d->off_hi = rec_hi > rec_lo ? rec_hi : rec_lo;
        d->off_t = seen;
        d->off_valid = true;
    } else if (rec_lo <= rec_hi) {
        long double since = seen > d->off_t ? (long double)(seen - d->off_t) * ZC_DRIFT_ALLOWANCE : 0;
        long double lo = d->off_lo - since, hi = d->off_hi + since;
        if (rec_lo > lo) lo = rec_lo;
        if (rec_hi < hi) hi = rec_hi;
        if (lo <= hi) {
            d->off_lo = lo;
            d->off_hi = hi;
            if (seen > d->off_t) d->off_t = seen;
            d->inconsistent_run = 0;
        } else if (++d->inconsistent_run >= 16) {
            /* observation after observation outside the interval: the clock drifts faster than
             * allowed. Start again from this one (the bound printed at exit says it happened) */
            d->off_lo = rec_lo;
            d->off_hi = rec_hi;
            d->off_t = seen;
            d->inconsistent_run = 0;
            d->restarts++;
        } /* else one observation that contradicts the others: it is placed by them */
    }
    pthread_mutex_unlock(&d->clock_lock);
    *s_rel = rel;
    *dur = du;
}

uint64_t zc_ze_clock_observed(struct zc_dev *d) {
    pthread_mutex_lock(&d->clock_lock);
    uint64_t t = d->off_t;
    pthread_mutex_unlock(&d->clock_lock);
    return t;
}

/* Places an observed record with the interval as it is now; the interval holds at its own time,
 * off_t, and widens by the drift allowance towards the record's. */
void zc_ze_clock_place(struct zc_dev *d, int64_t s_rel, uint64_t dur, uint64_t *start, uint64_t *end) {
    long double r = (long double)d->hz / 1e9L;
    pthread_mutex_lock(&d->clock_lock);
    long double mid = (d->off_lo + d->off_hi) / 2;
    *start = (uint64_t)(int64_t)(mid + (long double)s_rel / r + 0.5L);
    *end = *start + (uint64_t)((long double)dur / r + 0.5L);
    /* its start is off by at most: half the interval, one tick, the drift between the two */
    uint64_t dt = d->off_t > *start ? d->off_t - *start : *start - d->off_t;
    long double err = (d->off_hi - d->off_lo) / 2 + 1 / r + (long double)dt * ZC_DRIFT_ALLOWANCE;
    uint64_t e = (uint64_t)(err + 1);
    if (e > d->max_err_ns) d->max_err_ns = e;
    d->nanchored++;
    pthread_mutex_unlock(&d->clock_lock);
}

void zc_ze_clock_report(struct zc_dev *d) {
    pthread_mutex_lock(&d->clock_lock);
    uint64_t n = d->nanchored, e = d->max_err_ns, k = d->restarts;
    pthread_mutex_unlock(&d->clock_lock);
    if (n && !k)
        ZC_WARN("device %u: %llu device record(s) placed from host observations (no global timestamps): starts "
                "within +-%llu ns, durations from the device's ticks at its nominal rate",
                d->index, (unsigned long long)n, (unsigned long long)e);
    else if (n)
        ZC_WARN("device %u: %llu device record(s) placed from host observations (no global timestamps): the device "
                "clock drifted more than %.0Lf ppm against the host's (%llu restart(s)): starts are not bounded",
                d->index, (unsigned long long)n, ZC_DRIFT_ALLOWANCE * 1e6L, (unsigned long long)k);
}

/* Records are converted against the anchor nearest before them, found once per segment: a pass
 * converts records in time order, mostly between the same two anchors. The keys for which anchor
 * a is the one seg() finds: [lo, hi). */
const struct zc_anchor *zc_ze_clockconv_seg(const struct zc_dev *d, uint64_t x, bool by_dev, uint64_t *lo, uint64_t *hi) {
    size_t i = seg(d, x, by_dev), n = d->nanchors;
    const struct zc_anchor *a = d->anchors;
    *lo = i == 0 ? 0 : by_dev ? a[i].dev : a[i].host;
    *hi = i + 1 == n ? UINT64_MAX : by_dev ? a[i + 1].dev : a[i + 1].host;
    return &a[i];
}

/* Many records converted under one lock (a drainer's pass): the rate read once, the anchors
 * of the record before tried first. Double precision: the offsets from an anchor (ms to hours)
 * and the rate are exact to far below a nanosecond. */
void zc_ze_clockconv_begin(struct zc_ze_clockconv *cv, struct zc_dev *d) {
    pthread_mutex_lock(&d->clock_lock);
    cv->d = d;
    cv->m = mask_bits(d->kbits);
    cv->slack = d->hz / 1000; /* an operation starts after it was submitted; 1 ms of conversion slack */
    cv->rate = (double)rate(d);
    cv->inv = (double)(1.0L / rate(d));
    cv->h_lo = cv->d_lo = 1;
    cv->h_hi = cv->d_hi = 0; /* nothing found yet */
}

void zc_ze_clockconv_end(struct zc_ze_clockconv *cv) { pthread_mutex_unlock(&cv->d->clock_lock); }

/* One record: a pass of one. */
void zc_ze_clock_convert(struct zc_dev *d, uint64_t ts_start, uint64_t ts_end, uint64_t not_before, uint64_t *start,
                         uint64_t *end) {
    struct zc_ze_clockconv cv;
    zc_ze_clockconv_begin(&cv, d);
    zc_ze_clockconv(&cv, ts_start, ts_end, not_before, start, end);
    zc_ze_clockconv_end(&cv);
}
