/* SPDX-License-Identifier: MIT */
/* The host clock. Hot paths stamp events with zc_tick(): the TSC where it is usable (one rdtsc,
 * ~16 ns on the 16-core host against ~30 ns for clock_gettime), CLOCK_MONOTONIC_RAW ns
 * otherwise. Ticks are converted to CLOCK_MONOTONIC_RAW ns when a buffer is written (on the
 * writer thread), as device clocks are: with anchor pairs (TSC, CLOCK_MONOTONIC_RAW) taken at
 * start and whenever a conversion finds the newest one stale, interpolated between the two
 * anchors around a tick and extrapolated past the newest with the least-squares rate over all.
 *
 * Error: an anchor reads the TSC just before and just after clock_gettime and keeps the
 * narrowest of a few tries; the clock's own TSC read lies inside that window, so the anchor is
 * off by at most half of it (bench/README.md "Host clock" has the measured figures). A tick
 * between two anchors is off by at most the larger of their errors plus any departure of the
 * clock from a straight line between them (none where the kernel's clocksource is the TSC; a few
 * ns over seconds measured under kvm-clock).
 *
 * The TSC is used when cpuid reports an invariant TSC, or Linux reports constant_tsc and
 * nonstop_tsc (VMs often hide the cpuid bit), unless the kernel itself dropped the TSC as a
 * clocksource on bare metal (a paravirtual clock in a VM reads the TSC anyway). ZECOLL_HOST_CLOCK
 * =clock_gettime forces the fallback, =tsc the TSC (tests). */
#include "zc_clock.h"

#include "zc_knobs.h"
#include "zc_launcher.h"
#include "zc_log.h"

#include <pthread.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#include <x86intrin.h>
#endif

bool zc_tsc;
int64_t zc_clock_skew;

struct anchor {
    uint64_t tick, ns, window; /* window: the read window in ticks (error bound = half of it) */
};

/* Anchors live in chunks that never move, so readers need no lock: a reader sees the count
 * published after the anchor itself. */
#define ZC_ACHUNK 1024
#define ZC_NCHUNKS 4096
static struct anchor *chunks[ZC_NCHUNKS];
static _Atomic size_t nanchors;
static pthread_mutex_t anchor_lock = PTHREAD_MUTEX_INITIALIZER;
static long double sx, sy, sxx, sxy; /* least squares, relative to anchor 0; anchor_lock */
static _Atomic uint64_t rate_bits;   /* ns per tick (double), the fitted rate */
static uint64_t max_window;          /* widest anchor window so far, ticks */

static inline const struct anchor *anchor_at(size_t i) { return &chunks[i / ZC_ACHUNK][i % ZC_ACHUNK]; }

static double rate(void) {
    uint64_t b = atomic_load_explicit(&rate_bits, memory_order_relaxed);
    double r;
    memcpy(&r, &b, sizeof(r));
    return r;
}

static void set_rate(double r) {
    uint64_t b;
    memcpy(&b, &r, sizeof(b));
    atomic_store_explicit(&rate_bits, b, memory_order_relaxed);
}

#if defined(__x86_64__) || defined(__i386__)
static bool cpu_flag(const char *flag) {
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f) return false;
    char line[4096];
    bool found = false;
    size_t n = strlen(flag);
    while (!found && fgets(line, sizeof(line), f)) {
        if (strncmp(line, "flags", 5) != 0) continue;
        for (char *p = strstr(line, flag); p && !found; p = strstr(p + 1, flag))
            found = (p == line || p[-1] == ' ' || p[-1] == '\t') && (p[n] == ' ' || p[n] == '\n' || p[n] == 0);
        break; /* the first CPU's flags */
    }
    fclose(f);
    return found;
}

static bool read_line(const char *path, char *buf, size_t size) {
    FILE *f = fopen(path, "r");
    if (!f) return false;
    bool ok = fgets(buf, (int)size, f) != NULL;
    fclose(f);
    return ok;
}

/* Whether the TSC runs at a constant rate through frequency and power-state changes. */
static bool tsc_usable(const char **why) {
    unsigned a = 0, b = 0, c = 0, d = 0;
    bool inv = __get_cpuid(0x80000000u, &a, &b, &c, &d) && a >= 0x80000007u &&
               __get_cpuid(0x80000007u, &a, &b, &c, &d) && (d >> 8) & 1;
    if (!inv && !(cpu_flag("constant_tsc") && cpu_flag("nonstop_tsc"))) {
        *why = "no invariant TSC (cpuid) and no constant_tsc + nonstop_tsc (/proc/cpuinfo)";
        return false;
    }
    /* Linux removes the TSC from its clocksources when its watchdog finds it unreliable (or its
     * CPUs out of sync). In a VM the paravirtual clock is itself derived from the TSC. */
    char avail[512], cur[128];
    if (read_line("/sys/devices/system/clocksource/clocksource0/available_clocksource", avail, sizeof(avail)) &&
        read_line("/sys/devices/system/clocksource/clocksource0/current_clocksource", cur, sizeof(cur)) &&
        !strstr(avail, "tsc") && !strstr(cur, "kvm") && !strstr(cur, "hyperv") && !strstr(cur, "xen") &&
        !strstr(cur, "vmware")) {
        *why = "the kernel does not offer the TSC as a clocksource";
        return false;
    }
    return true;
}

static inline uint64_t rdtsc(void) { return __rdtsc(); }
#else
static bool tsc_usable(const char **why) {
    *why = "not an x86 processor";
    return false;
}
static inline uint64_t rdtsc(void) { return 0; }
#endif

/* One anchor: the narrowest read window of a few tries. anchor_lock held. */
static void anchor_take_locked(void) {
    uint64_t best = UINT64_MAX, tick = 0, ns = 0;
    for (int k = 0; k < 4; k++) {
        uint64_t t1 = rdtsc(), n = zc_now(), t2 = rdtsc();
        if (t2 >= t1 && t2 - t1 < best) {
            best = t2 - t1;
            tick = t1 + (t2 - t1) / 2;
            ns = n;
        }
    }
    size_t n = atomic_load_explicit(&nanchors, memory_order_relaxed);
    if (best == UINT64_MAX || n == (size_t)ZC_ACHUNK * ZC_NCHUNKS) return;
    if (n) {
        const struct anchor *p = anchor_at(n - 1);
        if (tick <= p->tick || ns <= p->ns) return; /* never out of order: the map stays monotonic */
    }
    if (!chunks[n / ZC_ACHUNK] && !(chunks[n / ZC_ACHUNK] = malloc(ZC_ACHUNK * sizeof(struct anchor)))) return;
    struct anchor *a = &chunks[n / ZC_ACHUNK][n % ZC_ACHUNK];
    *a = (struct anchor){tick, ns, best};
    if (best > max_window) max_window = best;
    const struct anchor *a0 = anchor_at(0);
    long double x = (long double)(tick - a0->tick), y = (long double)(ns - a0->ns);
    sx += x;
    sy += y;
    sxx += x * x;
    sxy += x * y;
    long double m = (long double)(n + 1), den = m * sxx - sx * sx;
    if (n >= 1 && den > 0) {
        long double r = (m * sxy - sx * sy) / den;
        if (r > 0) set_rate((double)r);
    }
    atomic_store_explicit(&nanchors, n + 1, memory_order_release);
}

/* A new anchor when the newest is older than min(100 ms, max(1 ms, an eighth of the run)):
 * often while the fitted rate is young, then ten a second (36k an hour, 16 bytes each). */
static void anchor_if_due(void) {
    if (!zc_tsc) return;
    size_t n = atomic_load_explicit(&nanchors, memory_order_acquire);
    uint64_t now = rdtsc();
    double r = rate();
    if (n && r > 0) {
        const struct anchor *last = anchor_at(n - 1), *first = anchor_at(0);
        double age = (double)(now - first->tick) * r / 8, interval = age < 1e6 ? 1e6 : age > 1e8 ? 1e8 : age;
        if ((double)(now - last->tick) * r < interval) return;
    }
    pthread_mutex_lock(&anchor_lock);
    anchor_take_locked();
    pthread_mutex_unlock(&anchor_lock);
}

/* ZECOLL_CLOCK_SKEW_NS: the launcher's rank picks this process's entry (MPI is not up yet, and
 * every timestamp must carry the same skew). */
static void set_clock_skew(void) {
    const char *list = zc_knobs.CLOCK_SKEW_NS;
    if (!list || !*list) return;
    int rank = zc_launcher_rank();
    long idx = rank < 0 ? 0 : rank;
    const char *p = list;
    for (long i = 0; i < idx && p; i++) {
        p = strchr(p, ',');
        if (p) p++;
    }
    if (!p) return; /* fewer entries than ranks: no skew */
    char *end;
    long long v = strtoll(p, &end, 10);
    if (end == p || (*end && *end != ',')) {
        ZC_WARN("ignoring ZECOLL_CLOCK_SKEW_NS=\"%s\": expected comma-separated integers (ns)", list);
        return;
    }
    zc_clock_skew = v;
}

void zc_clock_init(void) {
    set_clock_skew();
    const char *force = zc_knobs.HOST_CLOCK;
    const char *why = NULL;
    if (force && strcmp(force, "auto") && strcmp(force, "tsc") && strcmp(force, "clock_gettime")) {
        ZC_WARN("ignoring ZECOLL_HOST_CLOCK=\"%s\": expected auto, tsc or clock_gettime; using auto", force);
        force = NULL;
    }
    bool want = tsc_usable(&why);
    if (force && !strcmp(force, "clock_gettime")) want = false, why = "ZECOLL_HOST_CLOCK=clock_gettime";
#if defined(__x86_64__) || defined(__i386__)
    else if (force && !strcmp(force, "tsc")) want = true;
#endif
    if (want) {
        /* calibrate: two anchors 50 us apart give a first rate; later anchors refine it */
        pthread_mutex_lock(&anchor_lock);
        anchor_take_locked();
        uint64_t t0 = zc_now();
        while (zc_now() - t0 < 50000) {
        }
        anchor_take_locked();
        pthread_mutex_unlock(&anchor_lock);
        double r = rate();
        /* 50 MHz .. 20 GHz, or the TSC is not what we take it for */
        if (atomic_load(&nanchors) < 2 || !(r > 0.05 && r < 20)) {
            want = false;
            why = "its rate against CLOCK_MONOTONIC_RAW is implausible";
        }
    }
    zc_tsc = want;
    if (!want) ZC_INFO("host timestamps from clock_gettime, not the TSC: %s", why ? why : "");
}

/* ---------------------------------------------------------------- conversion */
/* Index of the last anchor with tick <= t, or SIZE_MAX if t is before the first. */
static size_t find(size_t n, uint64_t t) {
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (anchor_at(mid)->tick <= t) lo = mid + 1;
        else hi = mid;
    }
    return lo ? lo - 1 : SIZE_MAX;
}

/* The old way, a double per tick: ticks before the first anchor (never recorded in practice:
 * the first anchor is taken before anything records) and segments too steep for mul's range. */
static uint64_t conv_double(uint64_t t, const struct anchor *a, double slope) {
    double off = (double)(int64_t)(t - a->tick) * slope;
    return a->ns + (uint64_t)(int64_t)(off < 0 ? off - 0.5 : off + 0.5);
}

/* Makes the segment holding t the current one (its line computed once, in integers where both
 * ends are anchors) and converts t. */
uint64_t zc_tickconv_slow(struct zc_tickconv *c, uint64_t t) {
    if (!c->n) { /* ticks are ns: the identity, exact (round(d * 2^S / 2^S) = d) */
        *c = (struct zc_tickconv){(unsigned __int128)1 << (ZC_TICKCONV_SHIFT - 1), 0, UINT64_MAX,
                                  UINT64_C(1) << ZC_TICKCONV_SHIFT, 0};
        return t;
    }
    size_t i = find(c->n, t);
    double r = rate();
    if (i == SIZE_MAX) return conv_double(t, anchor_at(0), r); /* before the first anchor */
    const struct anchor *a = anchor_at(i);
    unsigned __int128 mul;
    uint64_t span;
    double slope = r;
    if (i + 1 < c->n) { /* between a and the next anchor: ns per tick as the exact ratio, rounded */
        const struct anchor *b = anchor_at(i + 1);
        uint64_t dns = b->ns - a->ns, dt = b->tick - a->tick;
        mul = (((unsigned __int128)dns << ZC_TICKCONV_SHIFT) + dt / 2) / dt;
        span = dt;
        slope = (double)dns / (double)dt;
    } else { /* past the newest: the fitted rate */
        if (!(r > 0 && r < 32)) return conv_double(t, a, r);
        mul = (unsigned __int128)(r * (double)(UINT64_C(1) << ZC_TICKCONV_SHIFT) + 0.5);
        span = UINT64_MAX - a->tick;
    }
    if (mul >> 64) return conv_double(t, a, slope); /* 64 ns per tick or more: no TSC is that slow */
    unsigned __int128 base = ((unsigned __int128)a->ns << ZC_TICKCONV_SHIFT) + ((unsigned __int128)1 << (ZC_TICKCONV_SHIFT - 1));
    *c = (struct zc_tickconv){base, a->tick, span, (uint64_t)mul, c->n};
    return zc_tickconv(c, t);
}

void zc_tickconv_begin(struct zc_tickconv *c) {
    anchor_if_due();
    c->n = zc_tsc ? atomic_load_explicit(&nanchors, memory_order_acquire) : 0;
    c->lo = 0;
    c->span = 0; /* empty: the first conversion finds its segment */
}

uint64_t zc_tick_to_ns(uint64_t t) {
    if (!zc_tsc) return t;
    struct zc_tickconv c;
    zc_tickconv_begin(&c);
    return zc_tickconv(&c, t);
}

double zc_clock_error_bound_ns(void) {
    if (!zc_tsc) return 0;
    pthread_mutex_lock(&anchor_lock);
    double b = (double)max_window * rate() / 2 + 1;
    pthread_mutex_unlock(&anchor_lock);
    return b;
}
