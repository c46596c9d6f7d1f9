/* SPDX-License-Identifier: MIT */
/* What the host clock costs and how the TSC relates to CLOCK_MONOTONIC_RAW on this machine
 * (bench/README.md, "Host clock"): cpuid's invariant-TSC bit, the cost of clock_gettime and of
 * rdtsc, and over SECONDS seconds (default 1) the residuals of CLOCK_MONOTONIC_RAW against a
 * straight line in the TSC (each sample's read window, rdtsc before and after, bounds its own
 * error). Prints one JSON line. */
#include <cpuid.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <x86intrin.h>

static uint64_t raw_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC_RAW, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

int main(int argc, char **argv) {
    double seconds = argc > 1 ? atof(argv[1]) : 1.0;
    unsigned a = 0, b = 0, c = 0, d = 0;
    int inv = 0;
    if (__get_cpuid(0x80000000u, &a, &b, &c, &d) && a >= 0x80000007u && __get_cpuid(0x80000007u, &a, &b, &c, &d))
        inv = (d >> 8) & 1;
    enum { N = 1000000 };
    uint64_t t0 = raw_ns(), s = 0;
    for (int i = 0; i < N; i++) s += raw_ns();
    double cg_ns = (double)(raw_ns() - t0) / N;
    t0 = raw_ns();
    for (int i = 0; i < N; i++) s += __rdtsc();
    double tsc_ns = (double)(raw_ns() - t0) / N;
    /* samples: (tsc midpoint, raw, window) */
    enum { M = 2000 };
    static double x[M], y[M], w[M];
    struct timespec pause = {0, (long)(seconds * 1e9 / M)};
    uint64_t x0 = 0, y0 = 0;
    for (int i = 0; i < M; i++) {
        uint64_t best_w = UINT64_MAX, bx = 0, by = 0;
        for (int k = 0; k < 5; k++) { /* the narrowest of 5 read windows */
            uint64_t t1 = __rdtsc(), r = raw_ns(), t2 = __rdtsc();
            if (t2 - t1 < best_w) best_w = t2 - t1, bx = t1 + (t2 - t1) / 2, by = r;
        }
        if (i == 0) x0 = bx, y0 = by;
        x[i] = (double)(bx - x0);
        y[i] = (double)(by - y0);
        w[i] = (double)best_w;
        nanosleep(&pause, NULL);
    }
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    for (int i = 0; i < M; i++) sx += x[i], sy += y[i], sxx += x[i] * x[i], sxy += x[i] * y[i];
    double slope = (M * sxy - sx * sy) / (M * sxx - sx * sx), icpt = (sy - slope * sx) / M;
    double maxres = 0, sumsq = 0, maxw = 0;
    for (int i = 0; i < M; i++) {
        double r = y[i] - (icpt + slope * x[i]);
        if (fabs(r) > maxres) maxres = fabs(r);
        sumsq += r * r;
        if (w[i] * slope > maxw) maxw = w[i] * slope;
    }
    printf("{\"invariant_tsc\": %d, \"clock_gettime_ns\": %.1f, \"rdtsc_ns\": %.1f, \"tsc_ghz\": %.6f, "
           "\"fit_max_residual_ns\": %.1f, \"fit_rms_ns\": %.1f, \"max_read_window_ns\": %.1f, \"span_s\": %.3f, \"x\": %llu}\n",
           inv, cg_ns, tsc_ns, 1.0 / slope, maxres, sqrt(sumsq / M), maxw, y[M - 1] / 1e9, (unsigned long long)(s & 1));
    return 0;
}
