/* SPDX-License-Identifier: MIT */
/* The application of the hostile probe's second round (tests/hostile/probe.py): Level Zero work
 * done the ways an adversarial user's program does it.
 *   chdir DIR N   chdir(DIR) before any Level Zero call, then N kernels + copies on an immediate
 *                 list: a relative ZECOLL_OUTPUT must not follow the application there;
 *   fork N        fork() before any Level Zero call, the work (N kernels) in the child only, the
 *                 parent waits for it (a daemonising program);
 *   fork-sealed DIR   under ZECOLL_WINDOWS="signal:SIGUSR1 initial=on": kernels + copies, recording
 *                 turned off and on at once (two raise()s, nothing missed) after 100, until a
 *                 window marker has sealed an event file of the archive DIR (it appears: without
 *                 flusher passes only a seal writes one before the end); then fork(): the child
 *                 lists its descriptors open on DIR's event files (none: the parent's sealed
 *                 files are not held by it), the parent, which holds them, waits and goes on;
 *   mpi-crash     MPI: rank 1 dies of SIGSEGV right after MPI_Init (before the journal's first
 *                 flush), the other ranks wait for it in MPI_Recv (mpirun then ends them);
 *   work N        N kernels + copies, then exit (the control case, and a "kernel window" that
 *                 names a kernel never launched).
 * Prints "<N> commands executed" (as the examples do) and PASS. */
#include "ex_common.h"

#include <dirent.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#if ZH_MPI
#include <mpi.h>
#endif

/* A synchronous immediate list that adds a vector to itself and copies the sum back, step by
 * step (zh_step): the work each mode records */
struct zh_gpu {
    ex_env_t env;
    ze_command_list_handle_t list;
    ze_kernel_handle_t add;
    ze_group_count_t groups;
    float *c, *host;
    uint32_t elems;
};

static void zh_open(struct zh_gpu *g) {
    ex_init(&g->env, "zh_app");
    ze_device_handle_t dev = g->env.devices[0];
    g->list = ex_immediate_list(&g->env, dev, ex_compute_group(dev, NULL), 0, ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS);
    ze_module_handle_t module = ex_module_create(&g->env, dev);
    g->add = ex_kernel_create(module, "vector_add");
    g->elems = 1024;
    const size_t bytes = g->elems * sizeof(float);
    g->groups = ex_group_count_1d(g->add, g->elems);
    float *a = ex_alloc_device(&g->env, dev, bytes);
    g->c = ex_alloc_device(&g->env, dev, bytes);
    g->host = ex_alloc_host(&g->env, bytes);
    for (uint32_t i = 0; i < g->elems; ++i) g->host[i] = 1.0f;
    EX_CHECK(zeCommandListAppendMemoryCopy(g->list, a, g->host, bytes, NULL, 0, NULL));
    EX_ARG(g->add, 0, a);
    EX_ARG(g->add, 1, a);
    EX_ARG(g->add, 2, g->c);
}

static void zh_step(struct zh_gpu *g) {
    EX_CHECK(zeCommandListAppendLaunchKernel(g->list, g->add, &g->groups, NULL, 0, NULL));
    EX_CHECK(zeCommandListAppendMemoryCopy(g->list, g->host, g->c, g->elems * sizeof(float), NULL, 0, NULL));
}

/* the application's own result checked after `steps` steps */
static void zh_close(struct zh_gpu *g, uint32_t steps) {
    EX_REQUIRE(g->host[0] == 2.0f && g->host[g->elems - 1] == 2.0f, "vector_add: %g, want 2", g->host[0]);
    printf("zh_app: %u commands executed\n", 2 * steps + 1);
    ex_fini(&g->env);
}

static void work(uint32_t n) {
    struct zh_gpu g;
    zh_open(&g);
    for (uint32_t i = 0; i < n; ++i) zh_step(&g);
    zh_close(&g, n);
}

/* descriptors of this process open on the event files in DIR/traces (each named on stdout, as `who`) */
static int evt_fds(const char *dir, const char *who) {
    char traces[PATH_MAX], want[PATH_MAX + 16];
    EX_REQUIRE(realpath(dir, traces), "realpath %s", dir);
    snprintf(want, sizeof(want), "%s/traces/", traces);
    DIR *d = opendir("/proc/self/fd");
    EX_REQUIRE(d, "/proc/self/fd");
    int n = 0;
    for (struct dirent *e; (e = readdir(d));) {
        char link[300], path[PATH_MAX];
        snprintf(link, sizeof(link), "/proc/self/fd/%s", e->d_name);
        ssize_t k = readlink(link, path, sizeof(path) - 1);
        if (k <= 0) continue;
        path[k] = 0;
        if (!strncmp(path, want, strlen(want)) && k > 4 && !strcmp(path + k - 4, ".evt")) {
            printf("zh_app: %s: descriptor %s on %s\n", who, e->d_name, path);
            n++;
        }
    }
    closedir(d);
    return n;
}

static bool sealed_file(const char *dir) {
    char traces[PATH_MAX + 16];
    snprintf(traces, sizeof(traces), "%s/traces", dir);
    DIR *d = opendir(traces);
    if (!d) return false;
    bool any = false;
    for (struct dirent *e; !any && (e = readdir(d));) {
        size_t k = strlen(e->d_name);
        char path[2 * PATH_MAX];
        struct stat st;
        snprintf(path, sizeof(path), "%s/%s", traces, e->d_name);
        any = k > 4 && !strcmp(e->d_name + k - 4, ".evt") && stat(path, &st) == 0 && st.st_size > 0;
    }
    closedir(d);
    return any;
}

static void fork_sealed(const char *dir) {
    struct zh_gpu g;
    zh_open(&g);
    uint32_t i = 0;
    for (; i < 200000 && (i < 200 || i % 50 || !sealed_file(dir)); ++i) {
        if (i == 100) {
            raise(SIGUSR1);
            raise(SIGUSR1);
        }
        zh_step(&g);
    }
    EX_REQUIRE(sealed_file(dir), "no event file sealed after %u kernels", i);
    int mine = evt_fds(dir, "parent");
    printf("zh_app: the parent holds %d sealed event file(s)\n", mine);
    fflush(stdout);
    pid_t p = fork();
    EX_REQUIRE(p >= 0, "fork");
    if (p == 0) {
        int n = evt_fds(dir, "child");
        printf("zh_app: the child holds %d\n", n);
        exit(n ? 3 : 0);
    }
    int st = 0;
    waitpid(p, &st, 0);
    EX_REQUIRE(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child status %d", st);
    zh_close(&g, i);
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "work";
    if (!strcmp(mode, "chdir") && argc > 3) {
        EX_REQUIRE(chdir(argv[2]) == 0, "chdir %s", argv[2]);
        work((uint32_t)atoi(argv[3]));
    } else if (!strcmp(mode, "fork") && argc > 2) {
        fflush(stdout);
        pid_t p = fork();
        EX_REQUIRE(p >= 0, "fork");
        if (p == 0) {
            work((uint32_t)atoi(argv[2]));
            printf("zh_app: PASS (child)\n");
            exit(0);
        }
        int st = 0;
        waitpid(p, &st, 0);
        EX_REQUIRE(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child status %d", st);
    } else if (!strcmp(mode, "fork-sealed") && argc > 2) {
        fork_sealed(argv[2]);
    } else if (!strcmp(mode, "work") && argc > 2) {
        work((uint32_t)atoi(argv[2]));
#if ZH_MPI
    } else if (!strcmp(mode, "mpi-crash")) {
        MPI_Init(&argc, &argv);
        int rank;
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 1) raise(SIGSEGV);
        int x;
        MPI_Recv(&x, 1, MPI_INT, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* never completes */
        return 1;
#endif
    } else {
        fprintf(stderr, "usage: zh_app chdir DIR N | fork N | fork-sealed DIR | work N | mpi-crash\n");
        return 2;
    }
    printf("zh_app: PASS\n");
    return 0;
}
