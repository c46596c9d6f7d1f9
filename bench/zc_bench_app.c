/* SPDX-License-Identifier: MIT */
/* Workloads for bench/collector_overhead.sh. Prints one JSON line with what it measured.
 *   appends N [event]   (after a warm-up batch) N kernel appends of a 0 ns kernel on an immediate list, a sync every
 *                       8192; the time of the append calls alone is reported per append. With
 *                       "event" each append signals one of 64 app events (reset after the sync)
 *   regular N [event]   the same appends recorded into a regular list that is reset every 8192
 *                       and never executed: host cost only, no simulated GPU work competing
 *   kernels N US        N back-to-back kernels of US microseconds on an in-order immediate list,
 *                       one sync at the end; reports the wall time of the whole run (wall_s) and
 *                       of the appends and the sync alone (run_s)
 *   reglist N           N kernels appended to one regular compute list, which is closed, executed
 *                       once and synchronised (run_s: appends, execution and
 *                       sync): the collector's per-kernel cost of append, execute and harvest
 *   reglist N ctl       its no-collector control: the app makes the collector's driver calls
 *                       (reglist_ctl below), so what remains against it is the collector's own
 *   execs N copy|compute [leave|pingpong|local]  one regular list (a 64 KiB copy and a barrier) executed N
 *                       times back to back on a queue of the copy-only / compute group, one sync
 *                       at the end: the cost of resubmitting a list while it is in flight
 *                       (append_ns: host ns per Execute call; run_s: the Executes and the sync). With
 *                       "leave" the program exits right after the sync, destroying nothing (as
 *                       many applications do; tests of the collector's exit path). With
 *                       "pingpong" each execution is bracketed by lists of the app's own that
 *                       hand over to a compute queue and back, as the collector's harvest of a
 *                       copy-only list does (bench/results/rounds.md: the floor of that design);
 *                       "local" runs the same commands on the copy queue alone (no hand-over)
 * ZC_BENCH_THREAD_CPU=1 (kernels): each thread's CPU time in the timed run ("thread_cpu_ns": tid,
 * name, ns from /proc/self/task/TID/schedstat; the main thread first), and their sum (cpu_ns).
 * maxrss_kb is the process's peak resident size (getrusage). ZC_BENCH_KERNEL_NS sets the duration of
 * the appended kernel (default 0); ZC_BENCH_SPIN_NS makes "appends" busy-wait that long after each
 * Append. ZC_BENCH_CPU: see pin_app_thread. */
#include <dirent.h>
#include <level_zero/ze_api.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#define ZC_BENCH_NAME "zc_bench_app"
#include "zc_bench_common.h"
#include "zc_bench_ctl.h"
#include "zc_bench_tcpu.h"

/* The measured loops live in functions of their own so that callgrind can count exactly them
 * (bench/ir_counts.sh: --toggle-collect=*_measured); *_warm run the same loop first, so pools,
 * caches and buffers are warm as in a running application. */
struct imm_run {
    ze_command_list_handle_t l;
    ze_kernel_handle_t k;
    const ze_group_count_t *g;
    ze_event_handle_t *evs;
    int nev;
    ze_event_handle_t sync;
    int with_event;
    long spin_ns; /* ZC_BENCH_SPIN_NS: busy time after each Append (a collector-sized delay without
                   * the collector: how the simulated device reacts to a slower Append) */
};

static void spin(long ns) {
    struct timespec t0, t;
    clock_gettime(CLOCK_MONOTONIC_RAW, &t0);
    do clock_gettime(CLOCK_MONOTONIC_RAW, &t);
    while ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) < ns);
}

/* Start and end of every timed batch of Appends (CLOCK_MONOTONIC_RAW s), printed with
 * ZC_BENCH_INTERVALS=1: bench/thread_profile.py keeps the samples inside them, so that the
 * synchronisations between batches (where the collector drains) are not counted as Append time. */
enum { MAX_IV = 4096 };
static double iv[MAX_IV][2];
static int niv;
static inline void iv_add(double a, double b) {
    if (niv < MAX_IV) {
        iv[niv][0] = a;
        iv[niv][1] = b;
        niv++;
    }
}

static inline __attribute__((always_inline)) double imm_loop(const struct imm_run *r, long n) {
    double in_appends = 0;
    for (long i = 0; i < n;) {
        long batch = n - i < 8192 ? n - i : 8192;
        double t0 = now();
        for (long b = 0; b < batch; b++) {
            CK(zeCommandListAppendLaunchKernel(r->l, r->k, r->g, r->with_event ? r->evs[b % r->nev] : NULL, 0, NULL));
            if (r->spin_ns) spin(r->spin_ns);
        }
        double t1 = now();
        in_appends += t1 - t0;
        iv_add(t0, t1);
        i += batch;
        /* wait for the batch, as an application synchronising now and then does */
        CK(zeCommandListAppendBarrier(r->l, r->sync, 0, NULL));
        CK(zeEventHostSynchronize(r->sync, UINT64_MAX));
        CK(zeEventHostReset(r->sync));
        for (int e = 0; r->with_event && e < r->nev; e++) CK(zeEventHostReset(r->evs[e]));
    }
    return in_appends;
}
__attribute__((noipa)) static double imm_warm(const struct imm_run *r, long n) { return imm_loop(r, n); }
double imm_measured(const struct imm_run *r, long n);
__attribute__((noipa)) double imm_measured(const struct imm_run *r, long n) { return imm_loop(r, n); }

struct reg_run {
    ze_command_list_handle_t l;
    ze_kernel_handle_t k;
    const ze_group_count_t *g;
    ze_event_handle_t *evs;
    int nev;
    int with_event;
};

static inline __attribute__((always_inline)) double reg_loop(const struct reg_run *r, long n) {
    double in_appends = 0;
    for (long i = 0; i < n;) {
        long batch = n - i < 8192 ? n - i : 8192;
        double t0 = now();
        for (long b = 0; b < batch; b++)
            CK(zeCommandListAppendLaunchKernel(r->l, r->k, r->g, r->with_event ? r->evs[b % r->nev] : NULL, 0, NULL));
        double t1 = now();
        in_appends += t1 - t0;
        iv_add(t0, t1);
        i += batch;
        CK(zeCommandListReset(r->l));
    }
    return in_appends;
}
__attribute__((noipa)) static double reg_warm(const struct reg_run *r, long n) { return reg_loop(r, n); }
double reg_measured(const struct reg_run *r, long n);
__attribute__((noipa)) double reg_measured(const struct reg_run *r, long n) { return reg_loop(r, n); }

/* Context switches (voluntary and not) of the process's threads other than the calling one: the
 * wake-ups of the collector's background threads (and the simulated driver's) while the app idles
 * (ZC_BENCH_IDLE_MS, bench/idle_wakeups.sh). */
static long other_threads_switches(void) {
    DIR *d = opendir("/proc/self/task");
    if (!d) return -1;
    long sum = 0;
    char self[32];
    snprintf(self, sizeof(self), "%ld", (long)gettid());
    for (struct dirent *e; (e = readdir(d));) {
        if (e->d_name[0] == '.' || !strcmp(e->d_name, self)) continue;
        char path[64], line[128];
        snprintf(path, sizeof(path), "/proc/self/task/%.20s/status", e->d_name);
        FILE *f = fopen(path, "r");
        if (!f) continue; /* a thread that ended */
        while (fgets(line, sizeof(line), f)) {
            long v;
            if (sscanf(line, "voluntary_ctxt_switches: %ld", &v) == 1 || sscanf(line, "nonvoluntary_ctxt_switches: %ld", &v) == 1)
                sum += v;
        }
        fclose(f);
    }
    closedir(d);
    return sum;
}

static struct tcpu tcpu0, tcpu1;
static bool tcpu_on;
/* The run's CPU per thread (end minus start; threads that started meanwhile from 0) as JSON. */
static void thread_cpu_print(const struct tcpu *a, const struct tcpu *b) {
    unsigned long long sum = 0;
    printf(",\"thread_cpu_ns\":[");
    for (int pass = 0, k = 0; pass < 2; pass++) /* the main thread first */
        for (int i = 0; i < b->n; i++) {
            if ((b->tid[i] == (long)getpid()) != (pass == 0)) continue;
            unsigned long long s0 = 0;
            for (int j = 0; j < a->n; j++)
                if (a->tid[j] == b->tid[i]) s0 = a->ns[j];
            unsigned long long d = b->ns[i] - s0;
            sum += d;
            printf("%s[%ld,\"%s\",%llu]", k++ ? "," : "", b->tid[i], b->name[i], d);
        }
    printf("],\"cpu_ns\":%llu", sum);
}

/* ZC_BENCH_CPU=N (kernels): the application's thread is bound to CPU N for the timed run, once the
 * threads started before it (the collector's, the control's reader) have taken the process's
 * whole set; with ZESIM_ENGINE_CPUS keeping zesim's engine on another CPU, each repetition places
 * the three busy threads alike (bench/fullnode.sh, part kernpin). */
static void pin_app_thread(void) {
    const char *c = getenv("ZC_BENCH_CPU");
    if (!c || !*c) return;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(atoi(c), &set);
    if (sched_setaffinity(0, sizeof(set), &set) != 0) fprintf(stderr, "zc_bench: cannot bind to CPU %s (ZC_BENCH_CPU)\n", c);
}

/* "kernels N US ctl": the no-collector control of the in-order immediate list (zc_bench_ctl.h). */
static void ctl_kernels(ze_context_handle_t ctx, ze_command_list_handle_t l, ze_kernel_handle_t k, const ze_group_count_t *g, long n,
                        ze_event_handle_t done) {
    static struct ctl c;
    if (ctl_start(&c, ctx)) exit(3);
    pin_app_thread();
    for (long i = 0; i < n; i++) {
        CK(zeCommandListAppendLaunchKernel(l, k, g, ctl_event(&c, i), 0, NULL));
        ctl_issued(&c, i);
    }
    CK(zeCommandListAppendBarrier(l, done, 0, NULL));
    CK(zeEventHostSynchronize(done, UINT64_MAX));
    if (tcpu_on) thread_cpu(&tcpu1); /* the reader's CPU too: it ends below */
    ctl_stop(&c);
}

/* "reglist N ctl": the no-collector control of the regular list. The driver calls the collector
 * makes for a list of N timed kernels executed once (collector/ze: zc_ze_exec.c's slot, the
 * context's event pools), made by the app: a timestamp event per kernel from pools of 256 created
 * as the Appends need them, a gate, a done and a started event, the first execution's pre list
 * [WaitOnEvents(gate), EventReset(gate), SignalEvent(started)], the post list
 * [QueryKernelTimestamps of the N events into host memory once they are signalled, signalling
 * done; SignalEvent(gate)], the execution [pre, list, post], and after the
 * synchronisation done's status and the N timestamps read, inside the timed run as the
 * collector's drain at the synchronisation does. The events, lists and memory go outside it. */
enum { RC_POOL = 256 };
static void reglist_ctl(ze_context_handle_t ctx, ze_device_handle_t dev, ze_command_queue_handle_t q,
                        ze_command_list_handle_t rl, ze_kernel_handle_t k, const ze_group_count_t *g, long n,
                        double *in_run) {
    if (n <= 0) { /* QueryKernelTimestamps of no event: nothing to control */
        fprintf(stderr, "zc_bench_app: reglist N ctl needs N > 0\n");
        exit(2);
    }
    ze_event_handle_t *ev = calloc((size_t)n + 3, sizeof(*ev));
    long npools = (n + 3 + RC_POOL - 1) / RC_POOL;
    ze_event_pool_handle_t *pools = calloc((size_t)npools, sizeof(*pools));
    if (!ev || !pools) exit(3);
    ze_event_pool_desc_t pd = {ZE_STRUCTURE_TYPE_EVENT_POOL_DESC, NULL,
                               ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP | ZE_EVENT_POOL_FLAG_HOST_VISIBLE, RC_POOL};
    long made = 0;
#define RC_EVENT(i)                                                                                \
    do {                                                                                           \
        if ((i) == made) {                                                                         \
            if (made % RC_POOL == 0) CK(zeEventPoolCreate(ctx, &pd, 0, NULL, &pools[made / RC_POOL])); \
            ze_event_desc_t ed = {ZE_STRUCTURE_TYPE_EVENT_DESC, NULL, (uint32_t)(made % RC_POOL),     \
                                  ZE_EVENT_SCOPE_FLAG_HOST, ZE_EVENT_SCOPE_FLAG_HOST};              \
            CK(zeEventCreate(pools[made / RC_POOL], &ed, &ev[made]));                              \
            made++;                                                                                \
        }                                                                                          \
    } while (0)
    double t0 = now();
    for (long i = 0; i < n; i++) {
        RC_EVENT(i);
        CK(zeCommandListAppendLaunchKernel(rl, k, g, ev[i], 0, NULL));
    }
    CK(zeCommandListClose(rl));
    RC_EVENT(n);
    RC_EVENT(n + 1);
    RC_EVENT(n + 2);
    ze_event_handle_t gate = ev[n], done = ev[n + 1], started = ev[n + 2];
    ze_command_list_desc_t ld = {ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC, NULL, 0, 0};
    ze_command_list_handle_t pre, post;
    ze_host_mem_alloc_desc_t hd = {ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC, NULL, 0};
    ze_kernel_timestamp_result_t *buf;
    CK(zeCommandListCreate(ctx, dev, &ld, &post));
    CK(zeMemAllocHost(ctx, &hd, (size_t)n * sizeof(*buf), 64, (void **)&buf));
    CK(zeCommandListAppendQueryKernelTimestamps(post, (uint32_t)n, ev, buf, NULL, done, (uint32_t)n, ev));
    CK(zeCommandListAppendSignalEvent(post, gate));
    CK(zeCommandListClose(post));
    CK(zeEventHostSignal(gate)); /* the first execution has no predecessor */
    CK(zeEventHostReset(done));
    CK(zeCommandListCreate(ctx, dev, &ld, &pre));
    CK(zeCommandListAppendWaitOnEvents(pre, 1, &gate));
    CK(zeCommandListAppendEventReset(pre, gate));
    CK(zeCommandListAppendSignalEvent(pre, started));
    CK(zeCommandListClose(pre));
    ze_command_list_handle_t three[3] = {pre, rl, post};
    CK(zeCommandQueueExecuteCommandLists(q, 3, three, NULL));
    CK(zeCommandQueueSynchronize(q, UINT64_MAX));
    CK(zeEventQueryStatus(done));
    uint64_t sum = 0;
    for (long i = 0; i < n; i++) sum += buf[i].global.kernelEnd - buf[i].global.kernelStart;
    *in_run = now() - t0;
    if (sum == UINT64_MAX) fprintf(stderr, "zc_bench_app: %llu\n", (unsigned long long)sum); /* keeps the reads */
    CK(zeCommandListDestroy(pre));
    CK(zeCommandListDestroy(post));
    CK(zeMemFree(ctx, buf));
    for (long i = 0; i < made; i++) CK(zeEventDestroy(ev[i]));
    for (long i = 0; i < npools; i++) CK(zeEventPoolDestroy(pools[i]));
    free(ev);
    free(pools);
#undef RC_EVENT
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: zc_bench_app appends|regular N [event] | kernels N US [ctl] | reglist N [ctl] | execs N copy|compute [leave|pingpong|local]\n");
        return 2;
    }
    double t_start = now();
    const char *mode = argv[1];
    long n = atol(argv[2]);
    ze_driver_handle_t drv;
    ze_device_handle_t dev;
    ze_context_handle_t ctx = bench_context(&drv, &dev);
    long us = argc > 3 ? atol(argv[3]) : 20;
    char text[256];
    /* ZC_BENCH_KERNEL_NS: the appended kernel's duration. Longer than an Append keeps zesim's worker
     * busy, so an Append never has to wake it (a futex call that dominates the time of an Append
     * to an idle simulated device, bench/results/rounds.md) */
    const char *kns = getenv("ZC_BENCH_KERNEL_NS");
    snprintf(text, sizeof(text), "ZESIM-MODULE\nkernel k0 args=0 ns=%ld ns_per_item=0\nkernel kus args=0 ns=%ld ns_per_item=0\n",
             kns ? atol(kns) : 0L, us * 1000);
    ze_module_handle_t mod;
    ze_kernel_handle_t k = bench_kernel(ctx, dev, text, strcmp(mode, "kernels") ? "k0" : "kus", &mod);
    /* in-order: the kernels run back to back, as a real stream of dependent kernels would */
    ze_command_queue_desc_t qd = {ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC, NULL, 0, 0, 1u << 1,
                                  ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS, ZE_COMMAND_QUEUE_PRIORITY_NORMAL};
    ze_command_list_handle_t l;
    CK(zeCommandListCreateImmediate(ctx, dev, &qd, &l));
    enum { NEV = 64 };
    ze_event_pool_desc_t pd = {ZE_STRUCTURE_TYPE_EVENT_POOL_DESC, NULL, ZE_EVENT_POOL_FLAG_HOST_VISIBLE, NEV + 1};
    ze_event_pool_handle_t pool;
    CK(zeEventPoolCreate(ctx, &pd, 0, NULL, &pool));
    ze_event_handle_t evs[NEV], ev;
    for (uint32_t i = 0; i <= NEV; i++) {
        ze_event_desc_t ed = {ZE_STRUCTURE_TYPE_EVENT_DESC, NULL, i, 0, ZE_EVENT_SCOPE_FLAG_HOST};
        CK(zeEventCreate(pool, &ed, i < NEV ? &evs[i] : &ev));
    }
    ze_group_count_t g = {1, 1, 1};
    double in_appends = 0, in_run = 0, meas0 = 0, meas1 = 0; /* the measured loop (bench/thread_profile.py) */
    tcpu_on = getenv("ZC_BENCH_THREAD_CPU") && atoi(getenv("ZC_BENCH_THREAD_CPU"));
    int with_event = argc > 3 && !strcmp(argv[3], "event");
    if (!strcmp(mode, "appends")) {
        struct imm_run ir = {l, k, &g, evs, NEV, ev, with_event, getenv("ZC_BENCH_SPIN_NS") ? atol(getenv("ZC_BENCH_SPIN_NS")) : 0};
        if (n > 0) imm_warm(&ir, n < 8192 ? n : 8192); /* pools and caches warm, as in a running app */
        niv = 0;
        meas0 = now();
        in_appends = imm_measured(&ir, n);
        meas1 = now();
    } else if (!strcmp(mode, "execs")) {
        uint32_t ord = argc > 3 && !strcmp(argv[3], "copy") ? 1 : 0; /* zesim: group 1 is copy-only */
        ze_command_queue_desc_t rq = {ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC, NULL, ord, 0, 0,
                                      ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS, ZE_COMMAND_QUEUE_PRIORITY_NORMAL};
        ze_command_queue_handle_t q;
        CK(zeCommandQueueCreate(ctx, dev, &rq, &q));
        ze_command_list_desc_t ld = {ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC, NULL, ord, 0};
        ze_command_list_handle_t rl;
        CK(zeCommandListCreate(ctx, dev, &ld, &rl));
        ze_device_mem_alloc_desc_t dd = {ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC, NULL, 0, 0};
        void *a, *b;
        CK(zeMemAllocDevice(ctx, &dd, 65536, 64, dev, &a));
        CK(zeMemAllocDevice(ctx, &dd, 65536, 64, dev, &b));
        CK(zeCommandListAppendMemoryCopy(rl, b, a, 65536, NULL, 0, NULL));
        CK(zeCommandListAppendBarrier(rl, NULL, 0, NULL));
        CK(zeCommandListClose(rl));
        /* "pingpong" (no collector): each execution is bracketed as the collector brackets a
         * copy-only list's (collector/ze: copy_harvest), with lists of the app's own: [wait gate,
         * reset gate] before it, [signal copied] after it on the copy queue, and [wait copied,
         * reset copied, signal gate] on a compute queue: the round trip between two engines that
         * any harvest by another engine costs per execution, without a collector */
        int pp = argc > 4 && !strcmp(argv[4], "pingpong");
        /* "local": the same six commands around each execution, all on the copy queue (post =
         * [signal copied, wait copied, reset copied, signal gate]): what the commands cost
         * without the hand-over to another engine */
        int local = argc > 4 && !strcmp(argv[4], "local");
        ze_command_queue_handle_t hq = NULL;
        ze_command_list_handle_t pre = NULL, post = NULL, hv = NULL;
        if (pp || local) {
            ze_event_handle_t gate = evs[0], copied = evs[1];
            CK(zeEventHostSignal(gate)); /* the first execution has no predecessor */
            CK(zeCommandListCreate(ctx, dev, &ld, &pre));
            CK(zeCommandListAppendWaitOnEvents(pre, 1, &gate));
            CK(zeCommandListAppendEventReset(pre, gate));
            CK(zeCommandListClose(pre));
            CK(zeCommandListCreate(ctx, dev, &ld, &post));
            CK(zeCommandListAppendSignalEvent(post, copied));
            if (local) {
                CK(zeCommandListAppendWaitOnEvents(post, 1, &copied));
                CK(zeCommandListAppendEventReset(post, copied));
                CK(zeCommandListAppendSignalEvent(post, gate));
            }
            CK(zeCommandListClose(post));
        }
        if (pp) {
            /* the engine the collector harvests on: the last of the first group (zesim: compute) */
            uint32_t ng = 0;
            CK(zeDeviceGetCommandQueueGroupProperties(dev, &ng, NULL));
            ze_command_queue_group_properties_t gp[8];
            for (uint32_t i = 0; i < 8; i++) gp[i] = (ze_command_queue_group_properties_t){ZE_STRUCTURE_TYPE_COMMAND_QUEUE_GROUP_PROPERTIES, NULL, 0, 0, 0};
            ng = ng < 8 ? ng : 8;
            CK(zeDeviceGetCommandQueueGroupProperties(dev, &ng, gp));
            ze_command_queue_desc_t hqd = {ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC, NULL, 0, gp[0].numQueues ? gp[0].numQueues - 1 : 0, 0,
                                           ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS, ZE_COMMAND_QUEUE_PRIORITY_PRIORITY_LOW};
            CK(zeCommandQueueCreate(ctx, dev, &hqd, &hq));
            ze_command_list_desc_t hld = {ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC, NULL, 0, 0};
            CK(zeCommandListCreate(ctx, dev, &hld, &hv));
            CK(zeCommandListAppendWaitOnEvents(hv, 1, &evs[1]));
            CK(zeCommandListAppendEventReset(hv, evs[1]));
            CK(zeCommandListAppendSignalEvent(hv, evs[0]));
            CK(zeCommandListClose(hv));
        }
        ze_command_list_handle_t three[3] = {pre, rl, post};
        double t0 = now();
        for (long i = 0; i < n; i++) {
            if (!pp && !local) {
                CK(zeCommandQueueExecuteCommandLists(q, 1, &rl, NULL));
                continue;
            }
            CK(zeCommandQueueExecuteCommandLists(q, 3, three, NULL));
            if (pp) CK(zeCommandQueueExecuteCommandLists(hq, 1, &hv, NULL));
        }
        in_appends = now() - t0; /* append_ns: host time per Execute call */
        if (pp) CK(zeCommandQueueSynchronize(hq, UINT64_MAX));
        CK(zeCommandQueueSynchronize(q, UINT64_MAX));
        in_run = now() - t0;
        if (argc > 4 && !strcmp(argv[4], "leave")) exit(0);
        CK(zeCommandListDestroy(rl));
        if (pp) {
            CK(zeCommandListDestroy(hv));
            CK(zeCommandQueueDestroy(hq));
        }
        if (pp || local) {
            CK(zeCommandListDestroy(pre));
            CK(zeCommandListDestroy(post));
            for (int e = 0; e < 2; e++) CK(zeEventHostReset(evs[e]));
        }
        CK(zeCommandQueueDestroy(q));
        CK(zeMemFree(ctx, a));
        CK(zeMemFree(ctx, b));
    } else if (!strcmp(mode, "reglist")) {
        ze_command_queue_desc_t rq = {ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC, NULL, 0, 0, 0,
                                      ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS, ZE_COMMAND_QUEUE_PRIORITY_NORMAL};
        ze_command_queue_handle_t q;
        CK(zeCommandQueueCreate(ctx, dev, &rq, &q));
        ze_command_list_desc_t ld = {ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC, NULL, 0, 0};
        ze_command_list_handle_t rl;
        CK(zeCommandListCreate(ctx, dev, &ld, &rl));
        if (argc > 3 && !strcmp(argv[3], "ctl")) {
            reglist_ctl(ctx, dev, q, rl, k, &g, n, &in_run);
        } else {
            double t0 = now();
            for (long i = 0; i < n; i++) CK(zeCommandListAppendLaunchKernel(rl, k, &g, NULL, 0, NULL));
            CK(zeCommandListClose(rl));
            CK(zeCommandQueueExecuteCommandLists(q, 1, &rl, NULL));
            CK(zeCommandQueueSynchronize(q, UINT64_MAX));
            in_run = now() - t0;
        }
        CK(zeCommandListDestroy(rl));
        CK(zeCommandQueueDestroy(q));
    } else if (!strcmp(mode, "regular")) {
        ze_command_list_desc_t ld = {ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC, NULL, 0, 0};
        ze_command_list_handle_t rl;
        CK(zeCommandListCreate(ctx, dev, &ld, &rl));
        struct reg_run rr = {rl, k, &g, evs, NEV, with_event};
        if (n > 0) reg_warm(&rr, n < 8192 ? n : 8192);
        niv = 0;
        meas0 = now();
        in_appends = reg_measured(&rr, n);
        meas1 = now();
        CK(zeCommandListDestroy(rl));
    } else if (argc > 4 && !strcmp(argv[4], "ctl")) {
        if (tcpu_on) thread_cpu(&tcpu0);
        double t0 = now();
        ctl_kernels(ctx, l, k, &g, n, ev);
        in_run = now() - t0;
    } else {
        pin_app_thread();
        if (tcpu_on) thread_cpu(&tcpu0);
        double t0 = now();
        for (long i = 0; i < n; i++) CK(zeCommandListAppendLaunchKernel(l, k, &g, NULL, 0, NULL));
        CK(zeCommandListAppendBarrier(l, ev, 0, NULL));
        CK(zeEventHostSynchronize(ev, UINT64_MAX));
        in_run = now() - t0;
        if (tcpu_on) thread_cpu(&tcpu1);
    }
    /* ZC_BENCH_IDLE_MS: the app idles this long with its list (and the collector's stream) still
     * there; the other threads' wake-ups per second in that window are printed */
    const char *idle = getenv("ZC_BENCH_IDLE_MS");
    double idle_wps = -1;
    if (idle && atol(idle) > 0) {
        struct timespec settle = {0, 50 * 1000000L}; /* the last records collected first */
        nanosleep(&settle, NULL);
        long ms = atol(idle), s0 = other_threads_switches();
        double t0 = now();
        struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
        while (nanosleep(&ts, &ts)) {
        }
        long s1 = other_threads_switches();
        idle_wps = s0 < 0 || s1 < 0 ? -1 : (double)(s1 - s0) / (now() - t0);
    }
    CK(zeEventDestroy(ev));
    for (int e = 0; e < NEV; e++) CK(zeEventDestroy(evs[e]));
    CK(zeEventPoolDestroy(pool));
    CK(zeCommandListDestroy(l));
    CK(zeKernelDestroy(k));
    CK(zeModuleDestroy(mod));
    CK(zeContextDestroy(ctx));
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("{\"mode\":\"%s\",\"n\":%ld,\"wall_s\":%.6f,\"run_s\":%.6f,\"append_ns\":%.1f,\"maxrss_kb\":%ld,"
           "\"measured_from\":%.9f,\"measured_to\":%.9f",
           mode, n, now() - t_start, in_run, n ? 1e9 * in_appends / (double)n : 0.0, ru.ru_maxrss, meas0, meas1);
    if (idle_wps >= 0) printf(",\"idle_wakeups_per_s\":%.1f", idle_wps);
    if (tcpu_on) thread_cpu_print(&tcpu0, &tcpu1);
    const char *ivs = getenv("ZC_BENCH_INTERVALS");
    if (ivs && *ivs == '1') {
        printf(",\"intervals\":[");
        for (int i = 0; i < niv; i++) printf("%s[%.9f,%.9f]", i ? "," : "", iv[i][0], iv[i][1]);
        printf("]");
    }
    printf("}\n");
    return 0;
}
