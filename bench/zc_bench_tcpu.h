/* SPDX-License-Identifier: MIT */
/* The CPU each thread of the benchmark's process has used so far (ns, /proc/self/task/TID/schedstat)
 * and its name (comm): zc_bench_app (ZC_BENCH_THREAD_CPU) and zc_devrate. */
#ifndef ZC_BENCH_TCPU_H
#define ZC_BENCH_TCPU_H

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { TCPU_MAX = 64 };
struct tcpu {
    int n;
    long tid[TCPU_MAX];
    unsigned long long ns[TCPU_MAX];
    char name[TCPU_MAX][20];
};
static void thread_cpu(struct tcpu *t) {
    t->n = 0;
    DIR *d = opendir("/proc/self/task");
    if (!d) return;
    for (struct dirent *e; (e = readdir(d)) && t->n < TCPU_MAX;) {
        if (e->d_name[0] == '.') continue;
        char path[64];
        snprintf(path, sizeof(path), "/proc/self/task/%.20s/schedstat", e->d_name);
        FILE *f = fopen(path, "r");
        if (!f) continue; /* a thread that ended */
        unsigned long long ns;
        int ok = fscanf(f, "%llu", &ns) == 1;
        fclose(f);
        if (!ok) continue;
        int i = t->n++;
        t->tid[i] = atol(e->d_name);
        t->ns[i] = ns;
        snprintf(path, sizeof(path), "/proc/self/task/%.20s/comm", e->d_name);
        t->name[i][0] = 0;
        if ((f = fopen(path, "r"))) {
            if (fgets(t->name[i], sizeof(t->name[i]), f)) t->name[i][strcspn(t->name[i], "\n\"")] = 0;
            fclose(f);
        }
    }
    closedir(d);
}
#endif
