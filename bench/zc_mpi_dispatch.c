/* SPDX-License-Identifier: MIT */
/* The cost of libzecoll.so's MPI dispatch (bench/dispatch_cost.sh): the exported MPI_* entry is one
 * `jmp *slot(%rip)` to the wrapper of the flavour detected at load (mpi/zc_mpi_dispatch.c). This
 * program, run with libzecoll.so preloaded, calls the same function both ways in the same process:
 *   via_entry   through the exported entry (what an application's call reaches)
 *   via_slot    straight to the flavour's wrapper, the address the entry's slot holds (read by
 *               decoding the entry's jmp: the only way to it, the wrappers being local symbols)
 * in alternating blocks of N calls (which goes first alternates too), R blocks each, and prints the
 * medians of ns per call and of the per-block difference. Under callgrind (--toggle-collect on the
 * two loops) the instruction counts are exact; the loops are identical but for the callee.
 * The function is MPI_Comm_size(MPI_COMM_WORLD) (a plain wrapper: a region when recording is open).
 *   usage: zc_mpi_dispatch [N [R]]     (default 1000 calls a block, 201 blocks each way) */
#include <dlfcn.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef int size_fn(MPI_Comm, int *);

static double now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* the two measured loops: the same code (noipa: never merged), callgrind counts each by name */
static __attribute__((noipa)) void via_entry(size_fn *volatile *f, int n, int *out) {
    for (int i = 0; i < n; i++) (*f)(MPI_COMM_WORLD, out);
}
static __attribute__((noipa)) void via_slot(size_fn *volatile *f, int n, int *out) {
    for (int i = 0; i < n; i++) (*f)(MPI_COMM_WORLD, out);
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}
static double median(double *v, int n) {
    qsort(v, n, sizeof(*v), cmp);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int main(int argc, char **argv) {
    int n = argc > 1 ? atoi(argv[1]) : 1000, reps = argc > 2 ? atoi(argv[2]) : 201;
    MPI_Init(&argc, &argv);
    /* the exported entry: libzecoll.so's when preloaded (first in the lookup order) */
    size_fn *entry = (size_fn *)dlsym(RTLD_DEFAULT, "MPI_Comm_size");
    Dl_info di;
    if (!entry || !dladdr((void *)entry, &di) || !strstr(di.dli_fname, "libzecoll")) {
        fprintf(stderr, "zc_mpi_dispatch: MPI_Comm_size is not libzecoll.so's (run with it preloaded)\n");
        return 2;
    }
    const unsigned char *p = (const unsigned char *)entry;
    if (p[0] != 0xff || p[1] != 0x25) { /* jmp *disp32(%rip) */
        fprintf(stderr, "zc_mpi_dispatch: the entry is not one jmp through a slot\n");
        return 2;
    }
    int32_t disp;
    memcpy(&disp, p + 2, sizeof(disp));
    size_fn *target = *(size_fn *const *)(p + 6 + disp);
    if (!dladdr((void *)target, &di) || !strstr(di.dli_fname, "libzecoll")) {
        fprintf(stderr, "zc_mpi_dispatch: the slot does not hold a flavour's wrapper (no flavour chosen?)\n");
        return 2;
    }
    size_fn *volatile fe = entry, *volatile ft = target;
    int size = 0;
    via_entry(&fe, n, &size); /* warm-up: caches, branch predictors, the lazy parts of MPI */
    via_slot(&ft, n, &size);
    double *te = malloc(sizeof(double) * reps), *ts = malloc(sizeof(double) * reps), *td = malloc(sizeof(double) * reps);
    for (int r = 0; r < reps; r++) {
        double a, b, c;
        if (r & 1) {
            a = now_ns(); via_slot(&ft, n, &size); b = now_ns(); via_entry(&fe, n, &size); c = now_ns();
            ts[r] = (b - a) / n; te[r] = (c - b) / n;
        } else {
            a = now_ns(); via_entry(&fe, n, &size); b = now_ns(); via_slot(&ft, n, &size); c = now_ns();
            te[r] = (b - a) / n; ts[r] = (c - b) / n;
        }
        td[r] = te[r] - ts[r];
    }
    double me = median(te, reps), ms = median(ts, reps), md = median(td, reps);
    /* the spread of the differences: their middle half */
    double q1 = td[reps / 4], q3 = td[(3 * reps) / 4];
    printf("dispatch: MPI_Comm_size, %d blocks of %d calls each way, ns per call (medians)\n", reps, n);
    printf("via_entry_ns %.3f\nvia_slot_ns %.3f\ndelta_ns %.3f\ndelta_iqr_ns %.3f %.3f\nratio %.4f\n", me, ms, md, q1, q3,
           me / ms);
    free(te);
    free(ts);
    free(td);
    MPI_Finalize();
    return size > 0 ? 0 : 1;
}
