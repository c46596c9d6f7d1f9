/* SPDX-License-Identifier: MIT */
/*
 * Device clock: zeDeviceGetGlobalTimestamps pairs follow
 *   full_ticks_d(h) = T0_d + floor((h - H0) * (1 + ppm_d/1e6) * hz / 1e9)   (masked to ts_bits)
 * with H0/T0/ppm from the truth device line (to +-1 tick), each call costs >= ZESIM_GTS_COST_NS
 * and returns the host time of its midpoint, T0 = 2^kbits - round(wrap*hz/1000) +
 * round(offset*hz/1e9), list knobs repeat their last value, the counter wraps, and the drift
 * measured over ~200 ms against CLOCK_MONOTONIC_RAW matches ZESIM_CLOCK_DRIFT_PPM.
 */
#include "zt.h"
#include "zt_truth.h"

#include <math.h>

enum { NPAIRS = 64, NWRAP = 512 };

struct pair {
    uint64_t before, after, host, dev;
};

struct shared {
    uint32_t ndev;
    uint32_t ts_bits[ZT_MAX_DEVICES];
    uint64_t hz[ZT_MAX_DEVICES];
    struct pair quick[ZT_MAX_DEVICES][NPAIRS]; /* back-to-back calls */
    struct pair drift0[ZT_MAX_DEVICES], drift1[ZT_MAX_DEVICES];
    uint32_t nwrap;
    struct pair wrap[NWRAP]; /* device 0, every ~2 ms from zeInit to past the wrap */
    pid_t pid;
    uint64_t t_init0, t_init1; /* around zt_setup (the first zeInit) */
};

static struct pair sample(ze_device_handle_t dev)
{
    struct pair p = {0};
    p.before = zt_now_ns();
    CHECK_ZE(zeDeviceGetGlobalTimestamps(dev, &p.host, &p.dev));
    p.after = zt_now_ns();
    return p;
}

static void child(void *arg)
{
    struct shared *sh = arg;
    sh->pid = getpid();
    zt_env e;
    sh->t_init0 = zt_now_ns();
    zt_setup(&e);
    sh->t_init1 = zt_now_ns();
    sh->ndev = e.ndev;
    for (uint32_t d = 0; d < e.ndev; d++) {
        ze_device_properties_t p;
        memset(&p, 0, sizeof p);
        p.stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES_1_2;
        CHECK_ZE(zeDeviceGetProperties(e.dev[d], &p));
        sh->ts_bits[d] = p.timestampValidBits;
        sh->hz[d] = p.timerResolution;
    }
    for (uint32_t d = 0; d < e.ndev; d++)
        sh->drift0[d] = sample(e.dev[d]);
    for (uint32_t d = 0; d < e.ndev; d++)
        for (int i = 0; i < NPAIRS; i++)
            sh->quick[d][i] = sample(e.dev[d]);
    /* ~2 ms samples of device 0 until well past the wrap point (and >= 200 ms for drift) */
    uint64_t wrap_ms = (uint64_t)zt_env_ll("ZESIM_WRAP_AFTER_MS", 200);
    uint64_t until = sh->drift0[0].after + (wrap_ms + 60) * 1000000u;
    /* every device's drift interval must reach 200 ms, however late (load) its first sample was */
    for (uint32_t d = 0; d < e.ndev; d++)
        if (until < sh->drift0[d].after + 210000000u)
            until = sh->drift0[d].after + 210000000u;
    while (sh->nwrap < NWRAP && zt_now_ns() < until) {
        sh->wrap[sh->nwrap++] = sample(e.dev[0]);
        zt_sleep_ns(2000000);
    }
    for (uint32_t d = 0; d < e.ndev; d++)
        sh->drift1[d] = sample(e.dev[d]);
    zt_teardown(&e);
}

/* |a - b| in the 2^bits ring */
static uint64_t ring_dist(uint64_t a, uint64_t b, unsigned bits)
{
    uint64_t d1 = zt_mask_bits(a - b, bits), d2 = zt_mask_bits(b - a, bits);
    return d1 < d2 ? d1 : d2;
}

/* List knob value for device d: comma list, missing entries repeat the last. */
static double env_list(const char *name, uint32_t d, double def)
{
    const char *v = getenv(name);
    if (!v || !*v)
        return def;
    double last = def;
    const char *s = v;
    for (uint32_t i = 0; i <= d; i++) {
        if (!*s)
            break;
        char *end;
        last = strtod(s, &end);
        s = end;
        if (*s == ',')
            s++;
        else
            s = "";
    }
    return last;
}

int main(int argc, char **argv)
{
    zt_init(argc, argv);
    struct shared *sh = zt_shm(sizeof *sh);
    char truth[1024];
    zt_fork_run("clocks", child, sh, truth, sizeof truth);

    zt_truth t;
    char err[256] = "";
    if (!zt_ok(zt_truth_load(truth, 0, &t, err, sizeof err) == 0, "truth loads (%s)", err))
        return zt_done();
    long long cost = zt_env_ll("ZESIM_GTS_COST_NS", 10000);

    for (uint32_t d = 0; d < sh->ndev; d++) {
        const zt_truth_device *td = zt_truth_device_find(&t, d);
        if (!zt_ok(td != NULL, "truth line for device %u", d))
            continue;
        unsigned bits = sh->ts_bits[d];
        zt_is_int(td->ts_bits, bits, "dev %u: truth ts_bits = timestampValidBits", d);
        zt_is_int(td->pid, sh->pid, "dev %u: truth pid", d);

        /* configuration reflected in the device line */
        double ppm = env_list("ZESIM_CLOCK_DRIFT_PPM", d, td->drift_ppm);
        double off = env_list("ZESIM_CLOCK_OFFSET_NS", d, (double)td->offset_ns);
        double wrap = (double)zt_env_ll("ZESIM_WRAP_AFTER_MS", 200);
        zt_near(td->drift_ppm, ppm, 1e-9, "dev %u: drift_ppm from ZESIM_CLOCK_DRIFT_PPM", d);
        zt_near((double)td->offset_ns, off, 0, "dev %u: offset_ns from ZESIM_CLOCK_OFFSET_NS", d);
        zt_near(td->wrap_after_ms, wrap, 0, "dev %u: wrap_after_ms", d);
        zt_is_u64(td->hz, (uint64_t)zt_env_ll("ZESIM_TIMER_HZ", 19200000), "dev %u: hz", d);
        uint64_t kpow = td->kernel_ts_bits >= 64 ? 0 : (UINT64_C(1) << td->kernel_ts_bits);
        int64_t t0 = (int64_t)kpow - llround(wrap * (double)td->hz / 1000.0) +
                     llround(off * (double)td->hz / 1e9);
        zt_is_u64(td->t0, (uint64_t)t0,
                  "dev %u: T0 = 2^kbits - round(wrap*hz/1000) + round(offset*hz/1e9)", d);
        zt_between(td->h0, sh->t_init0, sh->t_init1, "dev %u: H0 = host time of the first zeInit",
                   d);

        /* every pair: exact formula (+-1 tick), host time inside the call, cost */
        uint64_t worst = 0, min_cost = UINT64_MAX;
        int inside = 1;
        for (int i = 0; i < NPAIRS; i++) {
            const struct pair *p = &sh->quick[d][i];
            uint64_t want = zt_mask_bits(zt_truth_full_ticks(td, p->host), bits);
            uint64_t dist = ring_dist(p->dev, want, bits);
            if (dist > worst)
                worst = dist;
            if (p->host < p->before || p->host > p->after)
                inside = 0;
            if (p->after - p->before < min_cost)
                min_cost = p->after - p->before;
        }
        zt_ok(worst <= 1, "dev %u: %d pairs follow the clock formula (worst %" PRIu64 " ticks)",
              d, NPAIRS, worst);
        zt_ok(inside, "dev %u: host time lies inside the call", d);
        zt_ok(min_cost >= (uint64_t)cost, "dev %u: each call costs >= %lld ns (min %" PRIu64 ")",
              d, cost, min_cost);
        /* midpoint: the host time is about cost/2 after the call started */
        const struct pair *p0 = &sh->quick[d][NPAIRS / 2];
        zt_ok(p0->host >= p0->before + (uint64_t)cost / 2 - 1 &&
                  p0->host + (uint64_t)cost / 2 <= p0->after + 1,
              "dev %u: returned host time is the midpoint of the %lld ns spent", d, cost);

        /* drift over >= 200 ms against host time */
        const struct pair *a = &sh->drift0[d], *b = &sh->drift1[d];
        double dh = (double)(b->host - a->host);
        double dt = (double)zt_mask_bits(b->dev - a->dev, bits);
        double measured = (dt / (dh * (double)td->hz / 1e9) - 1.0) * 1e6;
        double tol = 2.5 / (dh * (double)td->hz / 1e9) * 1e6;
        zt_ok(dh >= 2e8, "dev %u: drift interval %.0f ms", d, dh / 1e6);
        zt_near(measured, ppm, tol, "dev %u: measured drift %.3f ppm = configured %.3f ppm", d,
                measured, ppm);
        if (ppm != 0)
            zt_ok((measured > 0) == (ppm > 0), "dev %u: drift sign", d);
        uint64_t want = zt_mask_bits(zt_truth_full_ticks(td, b->host), bits);
        zt_ok(ring_dist(b->dev, want, bits) <= 1, "dev %u: formula still exact after %.0f ms", d,
              dh / 1e6);
    }

    /* wrap of device 0's global counter: only when ts_bits == kernel_ts_bits (T0 near 2^bits) */
    const zt_truth_device *td0 = zt_truth_device_find(&t, 0);
    if (td0 && td0->ts_bits == td0->kernel_ts_bits && td0->ts_bits < 64) {
        unsigned bits = td0->ts_bits;
        int wraps = 0, exact = 1;
        uint64_t wrap_host = 0, before_wrap = 0;
        for (uint32_t i = 0; i < sh->nwrap; i++) {
            const struct pair *p = &sh->wrap[i];
            if (ring_dist(p->dev, zt_mask_bits(zt_truth_full_ticks(td0, p->host), bits), bits) > 1)
                exact = 0;
            if (i && p->dev < sh->wrap[i - 1].dev) {
                wraps++;
                wrap_host = p->host;
                before_wrap = sh->wrap[i - 1].host;
            }
        }
        /* the wrap point: full ticks reach 2^bits */
        double ticks_to_wrap = (double)((UINT64_C(1) << bits) - td0->t0);
        double ns_to_wrap =
            ticks_to_wrap * 1e9 / ((double)td0->hz * (1.0 + td0->drift_ppm / 1e6));
        uint64_t wrap_at = td0->h0 + (uint64_t)ns_to_wrap;
        /* On a loaded machine the sampling may only begin after the wrap point (it is a fixed time
         * after the driver's start): then there is no wrap to see, and the samples must all be
         * past it. Either way the bracket is exact, not a timing tolerance. */
        int expect = sh->nwrap && sh->wrap[0].host < wrap_at && sh->wrap[sh->nwrap - 1].host > wrap_at;
        zt_is_int(wraps, expect, "global counter wrapped %d time(s) in %u samples from %+.3f ms to %+.3f ms of it",
                  expect, sh->nwrap, sh->nwrap ? ((double)sh->wrap[0].host - (double)wrap_at) / 1e6 : 0.0,
                  sh->nwrap ? ((double)sh->wrap[sh->nwrap - 1].host - (double)wrap_at) / 1e6 : 0.0);
        zt_ok(exact, "samples around the wrap follow the formula");
        /* samples follow the formula to one tick: the wrap lies between them, give or take that */
        uint64_t tick2 = (uint64_t)(2e9 / (double)td0->hz) + 1;
        if (expect)
            zt_ok(before_wrap < wrap_at + tick2 && wrap_host + tick2 >= wrap_at,
                  "wrap observed between the samples around H0 + %.3f ms", ns_to_wrap / 1e6);
    } else if (td0) {
        int monotonic = 1;
        for (uint32_t i = 1; i < sh->nwrap; i++)
            if (sh->wrap[i].dev < sh->wrap[i - 1].dev)
                monotonic = 0;
        zt_ok(monotonic, "%u-bit global counter does not wrap", td0->ts_bits);
        zt_ok(sh->nwrap > 0 && sh->wrap[sh->nwrap - 1].dev > (UINT64_C(1) << td0->kernel_ts_bits),
              "global counter passes 2^kernel_ts_bits unmasked");
    }
    zt_truth_free(&t);
    return zt_done();
}
