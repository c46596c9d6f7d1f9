/* SPDX-License-Identifier: MIT */
/* One device stream saturated with kernel records (bench/devrate.sh, issue 22's "records a second
 * through the collector"): W warm-up kernels, then N back-to-back kernels of ZC_DEVRATE_KERNEL_NS
 * (default 0) on one in-order immediate list, one sync. After the sync the program waits until the
 * process's other threads stop using CPU (the drainer, the writer's stages and the journal have
 * finished what the N kernels gave them), polling every millisecond; a thread counts as busy in a
 * poll where it used more than 20 us of CPU. Prints one JSON line:
 *   appends_s  the N appends; sync_s  appends and the sync (the simulated device ran them all);
 *   done_s     until the last poll in which another thread than the main one was busy (the stream's
 *              records are through the collector's stages then; 1 ms resolution);
 *   threads    per thread of the process in the measured part (warm-up excluded): tid, what started
 *              it ("main", or the shared object and the offset of its start routine, which
 *              devrate.sh names from the library's symbol table), the order it was created in
 *              (callgrind's thread number - 1, bench/devrate.sh --ir), CPU ns (schedstat).
 * A location's last buffer is written at exit: N a multiple of 65,536 (ZECOLL_BUFFER_EVENTS'
 * default) leaves as many events in each location's buffer after the N kernels as before them,
 * so the measured part writes as many events as the kernels made (devrate.sh's defaults).
 * ZC_DEVRATE_CTL=1 (without the collector): the control of zc_bench_ctl.h, each kernel signalling
 * a timestamp event that a reader thread of this program queries and resets (the drainer's driver
 * calls), named "control reader" in the threads.
 * Threads are told apart by their start routine: this program defines pthread_create (exported,
 * so that libzecoll.so's and libzesim.so's calls reach it), notes the routine and calls libc's.
 *   usage: zc_devrate N [W]   (W defaults to N/4) */
#include <dlfcn.h>
#include <level_zero/ze_api.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define ZC_BENCH_NAME "zc_devrate"
#include "zc_bench_common.h"
#include "zc_bench_ctl.h"
#include "zc_bench_tcpu.h"

/* ---------------------------------------------------------------- who started each thread */
enum { NT = 64 };
static struct {
    _Atomic long tid;
    void *fn;
    int order;
} started[NT];
static atomic_int nstarted, ncreated;
struct start {
    void *(*fn)(void *);
    void *arg;
    int order;
};
static void *trampoline(void *p) {
    struct start s = *(struct start *)p;
    free(p);
    int i = atomic_fetch_add(&nstarted, 1);
    if (i < NT) {
        started[i].fn = (void *)s.fn;
        started[i].order = s.order;
        atomic_store(&started[i].tid, (long)syscall(SYS_gettid));
    }
    return s.fn(s.arg);
}
typedef int (*create_fn)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
__attribute__((visibility("default"))) int pthread_create(pthread_t *t, const pthread_attr_t *a, void *(*fn)(void *),
                                                          void *arg) {
    static create_fn real;
    if (!real) real = (create_fn)dlsym(RTLD_NEXT, "pthread_create");
    if (!real) return 38; /* ENOSYS */
    struct start *s = malloc(sizeof(*s));
    if (!s) return real(t, a, fn, arg);
    *s = (struct start){fn, arg, atomic_fetch_add(&ncreated, 1) + 1};
    int rc = real(t, a, trampoline, s);
    if (rc) free(s);
    return rc;
}

/* ---------------------------------------------------------------- CPU per thread (zc_bench_tcpu.h) */
static unsigned long long cpu_of(const struct tcpu *t, long tid) {
    for (int i = 0; i < t->n; i++)
        if (t->tid[i] == tid) return t->ns[i];
    return 0;
}
/* Whether a thread other than the main one used more than 20 us between a and b. */
static int others_busy(const struct tcpu *a, const struct tcpu *b) {
    for (int i = 0; i < b->n; i++)
        if (b->tid[i] != (long)getpid() && b->ns[i] - cpu_of(a, b->tid[i]) > 20000) return 1;
    return 0;
}
/* Waits until no other thread has been busy for 300 ms (at most 20 s); returns the time of the
 * last busy poll. */
static double settle(double from) {
    struct tcpu a, b;
    thread_cpu(&a);
    double last = from, t;
    while ((t = now()) - last < 0.3 && t - from < 20) {
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
        thread_cpu(&b);
        if (others_busy(&a, &b)) last = now();
        a = b;
    }
    return last;
}

/* Waits until the control's reader has read every event issued; returns the time. */
static double caught_up(struct ctl *c) {
    while (atomic_load(&c->freed) < atomic_load(&c->issued)) {
        struct timespec ts = {0, 100000};
        nanosleep(&ts, NULL);
    }
    return now();
}

/* With a control (c, no collector), each kernel signals the control's event and its reader makes
 * the harvest's driver calls: that thread's CPU per record is the simulated driver's share of the
 * drainer's (zc_bench_ctl.h). */
static void kernels(ze_command_list_handle_t l, ze_kernel_handle_t k, ze_event_handle_t ev, long n, double *appends,
                    struct ctl *c) {
    ze_group_count_t g = {1, 1, 1};
    static long seq; /* the control's kernel number, across the warm-up and the measured part */
    double t0 = now();
    if (c)
        for (long i = 0; i < n; i++, seq++) {
            CK(zeCommandListAppendLaunchKernel(l, k, &g, ctl_event(c, seq), 0, NULL));
            ctl_issued(c, seq);
        }
    else
        for (long i = 0; i < n; i++) CK(zeCommandListAppendLaunchKernel(l, k, &g, NULL, 0, NULL));
    *appends = now() - t0;
    CK(zeCommandListAppendBarrier(l, ev, 0, NULL));
    CK(zeEventHostSynchronize(ev, UINT64_MAX));
    CK(zeEventHostReset(ev));
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: zc_devrate N [W]\n");
        return 2;
    }
    long n = atol(argv[1]), w = argc > 2 ? atol(argv[2]) : n / 4;
    ze_driver_handle_t drv;
    ze_device_handle_t dev;
    ze_context_handle_t ctx = bench_context(&drv, &dev);
    const char *kns = getenv("ZC_DEVRATE_KERNEL_NS");
    char text[128];
    snprintf(text, sizeof(text), "ZESIM-MODULE\nkernel k0 args=0 ns=%ld ns_per_item=0\n", kns ? atol(kns) : 0L);
    ze_module_handle_t mod;
    ze_kernel_handle_t k = bench_kernel(ctx, dev, text, "k0", &mod);
    ze_command_queue_desc_t qd = {ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC, NULL, 0, 0, 1u << 1,
                                  ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS, ZE_COMMAND_QUEUE_PRIORITY_NORMAL};
    ze_command_list_handle_t l;
    CK(zeCommandListCreateImmediate(ctx, dev, &qd, &l));
    ze_event_pool_desc_t pd = {ZE_STRUCTURE_TYPE_EVENT_POOL_DESC, NULL, ZE_EVENT_POOL_FLAG_HOST_VISIBLE, 1};
    ze_event_pool_handle_t pool;
    CK(zeEventPoolCreate(ctx, &pd, 0, NULL, &pool));
    ze_event_desc_t ed = {ZE_STRUCTURE_TYPE_EVENT_DESC, NULL, 0, 0, ZE_EVENT_SCOPE_FLAG_HOST};
    ze_event_handle_t ev;
    CK(zeEventCreate(pool, &ed, &ev));

    static struct ctl ctl;
    struct ctl *cp = NULL;
    if (getenv("ZC_DEVRATE_CTL") && atoi(getenv("ZC_DEVRATE_CTL"))) {
        if (ctl_start(&ctl, ctx)) {
            fprintf(stderr, "zc_devrate: the control's events or reader could not be made\n");
            return 1;
        }
        cp = &ctl;
    }
    double appends;
    if (w > 0) kernels(l, k, ev, w, &appends, cp);
    if (cp) caught_up(cp);
    else settle(now());
    struct tcpu a, b;
    thread_cpu(&a);
    double t0 = now();
    kernels(l, k, ev, n, &appends, cp);
    double sync = now() - t0;
    /* the control's reader polls every 1 ms for ever: its N records are through once it has
     * caught up (settle would count its polls as work) */
    double done = (cp ? caught_up(cp) : settle(t0 + sync)) - t0;
    thread_cpu(&b);

    printf("{\"n\":%ld,\"warm\":%ld,\"appends_s\":%.6f,\"sync_s\":%.6f,\"done_s\":%.6f,\"threads\":[", n, w, appends, sync,
           done < sync ? sync : done);
    for (int i = 0; i < b.n; i++) {
        char who[160] = "main";
        int order = 0;
        if (b.tid[i] != (long)getpid()) {
            snprintf(who, sizeof(who), "?");
            order = -1;
            for (int j = 0; j < NT && j < atomic_load(&nstarted); j++)
                if (atomic_load(&started[j].tid) == b.tid[i]) {
                    Dl_info di;
                    order = started[j].order;
                    if (started[j].fn == (void *)ctl_reader)
                        snprintf(who, sizeof(who), "control reader (the harvest's driver calls)");
                    else if (dladdr(started[j].fn, &di) && di.dli_fname) {
                        const char *base = strrchr(di.dli_fname, '/');
                        snprintf(who, sizeof(who), "%s+0x%lx", base ? base + 1 : di.dli_fname,
                                 (unsigned long)((char *)started[j].fn - (char *)di.dli_fbase));
                    }
                }
        }
        printf("%s[%ld,\"%s\",%d,%llu]", i ? "," : "", b.tid[i], who, order, b.ns[i] - cpu_of(&a, b.tid[i]));
    }
    printf("]}\n");
    fflush(stdout);
    if (cp) ctl_stop(cp);
    CK(zeEventDestroy(ev));
    CK(zeEventPoolDestroy(pool));
    CK(zeCommandListDestroy(l));
    CK(zeKernelDestroy(k));
    CK(zeModuleDestroy(mod));
    CK(zeContextDestroy(ctx));
    return 0;
}
