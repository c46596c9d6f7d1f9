/* SPDX-License-Identifier: MIT */
/* The PAPI tests' program: threads that burn known amounts of their own CPU time and do known
 * amounts of counted work between Level Zero synchronisations, so that each thread's counters
 * can be judged on their own.
 *
 * Each of THREADS threads, on its own asynchronous immediate list: ITERS times { spin SPIN_US
 * microseconds of its own CPU time (own_ns: a task-clock of the thread's own), work(1000 (t + 1)
 * + it + 1), launch vector_add signalling an event, work(t + 1), zeEventHostSynchronize, check c
 * = a + b, zeEventHostReset }; the threads exit together (each its own thread location). Then
 * the main thread runs a regular list on a queue with a fence (zeCommandQueueSynchronize,
 * zeFenceHostSynchronize) and calls zeContextSystemBarrier, with work between them: every host
 * synchronisation the collector samples.
 * Built twice: zc_papi_app (no MPI) and zc_papi_mpi (-DZC_PAPI_MPI: MPI_Init_thread before the
 * threads, an MPI_Allreduce of the checks and an MPI_Barrier after them; threads make no MPI
 * call; and MPI calls that run the program's own callbacks on the calling thread, which work
 * inside the sampled call: an attribute copy callback in MPI_Comm_dup, delete callbacks in
 * MPI_Comm_free, an error handler in MPI_Comm_call_errhandler).
 *
 * work(n) (zt_sde.h, with ZT_HAVE_SDE) adds n to the thread's software defined events
 * sde:::zecoll_test::work and ::work3 and one to ::adds, counters PAPI reads on any CPU. The
 * program keeps its own account of every call the collector samples (the thread's work and adds
 * when the call begins and when it returns: what the Metric at its Enter and at its Leave must
 * hold) and writes it to ledger.RANK.json in the working directory at the end:
 *   {"rank": R, "threads": [{"thread": "main"|"worker T", "calls": [[NAME, W0, W1, A0, A1], ...]}]}
 * Launches are in it too (the collector samples them with papi.around_launches).
 *
 * Prints "libpapi mapped: 0|1" (from /proc/self/maps: PAPI is loaded only when events are
 * configured), "cpu clock excess per ms: NS" (the test's bound on the CPU clock's rate against
 * the trace's clock, measured at the end) and "own cpu clock: task-clock" (or "thread-cputime
 * (why)" where perf_event_open failed: then the spins are not measured on TASK-CLOCK's clock).
 *
 * usage: zc_papi_app [threads] [iters] [spin_us]   (defaults 4, 10, 300) */
#define _GNU_SOURCE /* syscall() */
#include "ex_common.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <unistd.h>
#ifdef ZC_PAPI_MPI
#include <mpi.h>
#endif
#if ZT_HAVE_SDE
#include "zt_sde.h"
#else
static void zt_sde_add(long long n) { (void)n; }
static long long zt_sde_work(void) { return 0; }
static long long zt_sde_adds(void) { return 0; }
#endif

#define N 1024

/* ---- the program's own account of its sampled calls (ledger.RANK.json) */
struct call {
    const char *name;
    long long w0, w1, a0, a1; /* work and adds when the call begins and when it returns */
};
struct ledger {
    char who[32];
    size_t n, cap;
    struct call *c;
};
static _Thread_local struct ledger *ledger; /* the calling thread's */

static size_t ledger_open(const char *name) {
    struct ledger *l = ledger;
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 64;
        l->c = realloc(l->c, l->cap * sizeof(*l->c));
        EX_REQUIRE(l->c != NULL, "out of memory");
    }
    l->c[l->n] = (struct call){name, zt_sde_work(), 0, zt_sde_adds(), 0};
    return l->n++;
}

static void ledger_close(size_t i) {
    ledger->c[i].w1 = zt_sde_work();
    ledger->c[i].a1 = zt_sde_adds();
}

/* A call the collector samples, in the calling thread's ledger. */
#define SAMPLED(name, ...)                                                                                             \
    do {                                                                                                               \
        size_t ledger_i_ = ledger_open(name);                                                                          \
        __VA_ARGS__;                                                                                                   \
        ledger_close(ledger_i_);                                                                                       \
    } while (0)

static void ledger_write(FILE *f, const struct ledger *l, int first) {
    fprintf(f, "%s\n  {\"thread\": \"%s\", \"calls\": [", first ? "" : ",", l->who);
    for (size_t i = 0; i < l->n; i++)
        fprintf(f, "%s[\"%s\", %lld, %lld, %lld, %lld]", i ? ", " : "", l->c[i].name, l->c[i].w0, l->c[i].w1, l->c[i].a0,
                l->c[i].a1);
    fputs("]}", f);
}

struct shared {
    ex_env_t *env;
    ze_device_handle_t dev;
    ze_module_handle_t module;
    uint32_t ordinal, engines, iters;
    uint64_t spin_ns;
    /* the workers wait for each other before they exit: otherwise, under load, one may be gone
     * before another makes its first call, which then takes over its thread slot (core/zc_loc.h),
     * and two threads' counters share a location the checks expect to be one thread's */
    pthread_barrier_t exit_together;
};

struct worker {
    struct shared *sh;
    uint32_t id;
    pthread_t th;
    uint32_t checked;
    struct ledger ledger;
};

/* "Its own CPU time" is measured on the clock perf::TASK-CLOCK counts: a perf task-clock event of
 * the thread's own. Two task-clock events of one thread advance together (both count the time its
 * perf context is scheduled in), so a spin measured here lies inside the collector's TASK-CLOCK
 * delta around it, exactly. CLOCK_THREAD_CPUTIME_ID (the scheduler's runtime) is not that clock:
 * it also counts part of each context switch, while the perf context is out. Measured here, 4
 * threads on 2 cores: 300 us of thread CPU time held as little as 282 us of TASK-CLOCK, and the
 * difference grows by ~1.6 us per sleep. That made papi.launches fail under load. */
static _Thread_local int own_fd = -1;
static int own_errno; /* the first failure to open it, if any (atomic) */

static void own_clock_open(void) {
    struct perf_event_attr at;
    memset(&at, 0, sizeof(at));
    at.size = sizeof(at);
    at.type = PERF_TYPE_SOFTWARE;
    at.config = PERF_COUNT_SW_TASK_CLOCK;
    own_fd = (int)syscall(SYS_perf_event_open, &at, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
    int zero = 0;
    if (own_fd < 0) __atomic_compare_exchange_n(&own_errno, &zero, errno ? errno : EINVAL, 0, __ATOMIC_RELAXED,
                                                __ATOMIC_RELAXED);
}

static void own_clock_close(void) {
    if (own_fd >= 0) close(own_fd);
    own_fd = -1;
}

static uint64_t own_ns(void) {
    uint64_t v;
    if (own_fd >= 0 && read(own_fd, &v, sizeof(v)) == (ssize_t)sizeof(v)) return v;
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* burns ns of this thread's own CPU time (however long that takes under load) */
static void spin(uint64_t ns) {
    uint64_t end = own_ns() + ns;
    volatile uint64_t x = 0;
    while (own_ns() < end)
        for (int i = 0; i < 100; i++) x += (uint64_t)i;
}

static void *worker_main(void *arg) {
    struct worker *w = arg;
    struct shared *sh = w->sh;
    ledger = &w->ledger;
    snprintf(w->ledger.who, sizeof(w->ledger.who), "worker %u", w->id);
    own_clock_open();
    ze_command_list_handle_t list =
        ex_immediate_list(sh->env, sh->dev, sh->ordinal, w->id % sh->engines, ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS);
    ze_kernel_handle_t add = ex_kernel_create(sh->module, "vector_add");
    const ze_group_count_t g = ex_group_count_1d(add, N);
    ze_event_pool_handle_t pool = ex_event_pool(sh->env, ZE_EVENT_POOL_FLAG_HOST_VISIBLE, 1);
    ze_event_handle_t done = ex_event(pool, 0);
    float *a = ex_alloc_shared(sh->env, sh->dev, N * sizeof(float));
    float *b = ex_alloc_shared(sh->env, sh->dev, N * sizeof(float));
    float *c = ex_alloc_shared(sh->env, sh->dev, N * sizeof(float));
    float want[N];
    EX_ARG(add, 0, a);
    EX_ARG(add, 1, b);
    EX_ARG(add, 2, c);
    for (uint32_t it = 0; it < sh->iters; it++) {
        for (uint32_t i = 0; i < N; i++) {
            a[i] = (float)(w->id * 100u + it);
            b[i] = (float)(i % 64u);
            want[i] = a[i] + b[i];
        }
        spin(sh->spin_ns);
        zt_sde_add(1000 * (w->id + 1) + it + 1);
        SAMPLED("zeCommandListAppendLaunchKernel", EX_CHECK(zeCommandListAppendLaunchKernel(list, add, &g, done, 0, NULL)));
        zt_sde_add(w->id + 1);
        SAMPLED("zeEventHostSynchronize", EX_CHECK(zeEventHostSynchronize(done, UINT64_MAX)));
        ex_verify_f32("c = a + b on a thread's immediate list", c, want, N);
        EX_CHECK(zeEventHostReset(done));
        w->checked++;
    }
    ex_free(sh->env, c);
    ex_free(sh->env, b);
    ex_free(sh->env, a);
    EX_CHECK(zeEventDestroy(done));
    EX_CHECK(zeEventPoolDestroy(pool));
    EX_CHECK(zeKernelDestroy(add));
    EX_CHECK(zeCommandListDestroy(list));
    own_clock_close();
    pthread_barrier_wait(&sh->exit_together);
    return NULL;
}

/* queue + fence + context barrier on the main thread */
static uint32_t main_syncs(struct shared *sh) {
    ze_command_queue_desc_t qd = {.stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC, .ordinal = sh->ordinal,
                                  .mode = ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS};
    ze_command_queue_handle_t q = NULL;
    EX_CHECK(zeCommandQueueCreate(sh->env->context, sh->dev, &qd, &q));
    ze_fence_desc_t fd = {.stype = ZE_STRUCTURE_TYPE_FENCE_DESC};
    ze_fence_handle_t fence = NULL;
    EX_CHECK(zeFenceCreate(q, &fd, &fence));
    ze_command_list_desc_t ld = {.stype = ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC, .commandQueueGroupOrdinal = sh->ordinal};
    ze_command_list_handle_t list = NULL;
    EX_CHECK(zeCommandListCreate(sh->env->context, sh->dev, &ld, &list));
    ze_kernel_handle_t scale = ex_kernel_create(sh->module, "scale_f32");
    const ze_group_count_t g = ex_group_count_1d(scale, N);
    float *x = ex_alloc_shared(sh->env, sh->dev, N * sizeof(float));
    const float two = 2.0f;
    EX_ARG(scale, 0, x);
    EX_ARG(scale, 1, two);
    zt_sde_add(3);
    SAMPLED("zeCommandListAppendLaunchKernel", EX_CHECK(zeCommandListAppendLaunchKernel(list, scale, &g, NULL, 0, NULL)));
    EX_CHECK(zeCommandListClose(list));
    for (uint32_t i = 0; i < N; i++) x[i] = (float)i;
    EX_CHECK(zeCommandQueueExecuteCommandLists(q, 1, &list, NULL));
    zt_sde_add(7);
    SAMPLED("zeCommandQueueSynchronize", EX_CHECK(zeCommandQueueSynchronize(q, UINT64_MAX)));
    EX_CHECK(zeCommandQueueExecuteCommandLists(q, 1, &list, fence));
    zt_sde_add(11);
    SAMPLED("zeFenceHostSynchronize", EX_CHECK(zeFenceHostSynchronize(fence, UINT64_MAX)));
    zt_sde_add(13);
    SAMPLED("zeContextSystemBarrier", EX_CHECK(zeContextSystemBarrier(sh->env->context, sh->dev)));
    float want[N];
    for (uint32_t i = 0; i < N; i++) want[i] = 4.0f * (float)i;
    ex_verify_f32("x = 4 x0 after two executions", x, want, N);
    ex_free(sh->env, x);
    EX_CHECK(zeKernelDestroy(scale));
    EX_CHECK(zeCommandListDestroy(list));
    EX_CHECK(zeFenceDestroy(fence));
    EX_CHECK(zeCommandQueueDestroy(q));
    return 1;
}

static uint64_t raw_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC_RAW, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* How far this thread's CPU clock (own_ns: perf's task-clock) can run ahead of
 * CLOCK_MONOTONIC_RAW (the trace's clock) over 1 ms: the CPU interval lies inside the RAW one, so
 * any excess is the clocks' rate difference (preemption only lowers it). */
static int64_t cpu_clock_excess_per_ms(void) {
    int64_t worst = 0;
    for (int k = 0; k < 20; k++) {
        uint64_t r0 = raw_ns(), c0 = own_ns();
        spin(1000000);
        uint64_t c1 = own_ns(), r1 = raw_ns();
        int64_t e = (int64_t)(c1 - c0) - (int64_t)(r1 - r0);
        if (e > worst) worst = e;
    }
    return worst;
}

static int libpapi_mapped(void) {
    FILE *f = fopen("/proc/self/maps", "r");
    char line[4096];
    int found = 0;
    while (f && fgets(line, sizeof(line), f))
        if (strstr(line, "/libpapi.")) found = 1;
    if (f) fclose(f);
    return found;
}

#ifdef ZC_PAPI_MPI
/* Work inside sampled MPI calls: MPI runs these callbacks on the calling thread, inside the call. */
enum { COPY_WORK = 17, DELETE_WORK = 23, ERROR_WORK = 19 };
static int copies, deletes, errors;

static int copy_attr(MPI_Comm old, int key, void *extra, void *in, void *out, int *flag) {
    (void)old;
    (void)key;
    (void)extra;
    zt_sde_add(COPY_WORK);
    copies++;
    *(void **)out = in;
    *flag = 1;
    return MPI_SUCCESS;
}

static int delete_attr(MPI_Comm comm, int key, void *val, void *extra) {
    (void)comm;
    (void)key;
    (void)val;
    (void)extra;
    zt_sde_add(DELETE_WORK);
    deletes++;
    return MPI_SUCCESS;
}

static void on_error(MPI_Comm *comm, int *code, ...) {
    (void)comm;
    EX_REQUIRE(*code == MPI_ERR_OTHER, "the error handler got error %d", *code);
    zt_sde_add(ERROR_WORK);
    errors++;
}

/* A communicator with an attribute that is copied (MPI_Comm_dup) and deleted (MPI_Comm_free),
 * and an error handler called on it: 17 units of work inside the second MPI_Comm_dup, 23 inside
 * each MPI_Comm_free, 19 inside MPI_Comm_call_errhandler. */
static void mpi_callbacks(void) {
    static int attr = 42;
    int key = MPI_KEYVAL_INVALID;
    MPI_Comm a = MPI_COMM_NULL, b = MPI_COMM_NULL;
    MPI_Errhandler eh = MPI_ERRHANDLER_NULL;
    SAMPLED("MPI_Comm_create_keyval", MPI_Comm_create_keyval(copy_attr, delete_attr, &key, NULL));
    SAMPLED("MPI_Comm_dup", MPI_Comm_dup(MPI_COMM_WORLD, &a));
    SAMPLED("MPI_Comm_set_attr", MPI_Comm_set_attr(a, key, &attr));
    SAMPLED("MPI_Comm_dup", MPI_Comm_dup(a, &b));
    SAMPLED("MPI_Comm_create_errhandler", MPI_Comm_create_errhandler(on_error, &eh));
    SAMPLED("MPI_Comm_set_errhandler", MPI_Comm_set_errhandler(b, eh));
    SAMPLED("MPI_Comm_call_errhandler", MPI_Comm_call_errhandler(b, MPI_ERR_OTHER));
    SAMPLED("MPI_Errhandler_free", MPI_Errhandler_free(&eh));
    SAMPLED("MPI_Comm_free", MPI_Comm_free(&b));
    SAMPLED("MPI_Comm_free", MPI_Comm_free(&a));
    SAMPLED("MPI_Comm_free_keyval", MPI_Comm_free_keyval(&key));
    EX_REQUIRE(copies == 1 && deletes == 2 && errors == 1, "callbacks: %d copies, %d deletes, %d errors (want 1, 2, 1)",
               copies, deletes, errors);
}
#endif

int main(int argc, char **argv) {
    static struct ledger main_ledger = {.who = "main"};
    ledger = &main_ledger;
    zt_sde_add(5); /* before the first sampled call: its Metric already holds it */
    ex_env_t env;
    ex_init(&env, argv[0]);
    int rank = 0;
#ifdef ZC_PAPI_MPI
    int provided = 0;
    SAMPLED("MPI_Init_thread", MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided));
    SAMPLED("MPI_Comm_rank", MPI_Comm_rank(MPI_COMM_WORLD, &rank));
#endif
    struct shared sh = {.env = &env};
    const uint32_t threads = (uint32_t)ex_arg_u64(argc, argv, 1, "threads", 4, 1, 64);
    sh.iters = (uint32_t)ex_arg_u64(argc, argv, 2, "iterations", 10, 1, 100000);
    sh.spin_ns = 1000u * ex_arg_u64(argc, argv, 3, "spin microseconds", 300, 0, 10000000);
    sh.dev = env.devices[(uint32_t)rank % env.num_devices];
    sh.ordinal = ex_compute_group(sh.dev, &sh.engines);
    sh.module = ex_module_create(&env, sh.dev);
    struct worker *w = calloc(threads, sizeof(*w));
    EX_REQUIRE(w != NULL, "out of memory");
    EX_REQUIRE(pthread_barrier_init(&sh.exit_together, NULL, threads) == 0, "pthread_barrier_init");
    for (uint32_t t = 0; t < threads; t++) {
        w[t] = (struct worker){.sh = &sh, .id = t};
        EX_REQUIRE(pthread_create(&w[t].th, NULL, worker_main, &w[t]) == 0, "pthread_create");
    }
    uint32_t checked = 0;
    for (uint32_t t = 0; t < threads; t++) {
        pthread_join(w[t].th, NULL);
        checked += w[t].checked;
    }
    pthread_barrier_destroy(&sh.exit_together);
    checked += main_syncs(&sh);
    EX_REQUIRE(checked == threads * sh.iters + 1, "every iteration checked");
#ifdef ZC_PAPI_MPI
    int size = 1, mine = (int)checked, total = 0;
    SAMPLED("MPI_Comm_size", MPI_Comm_size(MPI_COMM_WORLD, &size));
    SAMPLED("MPI_Allreduce", MPI_Allreduce(&mine, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    EX_REQUIRE(total == size * mine, "every rank checked the same");
    mpi_callbacks();
    SAMPLED("MPI_Barrier", MPI_Barrier(MPI_COMM_WORLD));
#endif
    int mapped = libpapi_mapped();
    own_clock_open();
    int64_t excess = cpu_clock_excess_per_ms();
    own_clock_close();
    EX_CHECK(zeModuleDestroy(sh.module));
    ex_fini(&env);
    if (rank == 0) ex_info("PASS: %u threads x %u iterations (%llu us of CPU each), syncs checked", threads, sh.iters,
                           (unsigned long long)(sh.spin_ns / 1000));
    printf("libpapi mapped: %d\n", mapped);
    printf("cpu clock excess per ms: %lld\n", (long long)excess);
    int why = __atomic_load_n(&own_errno, __ATOMIC_RELAXED);
    if (why)
        printf("own cpu clock: thread-cputime (perf_event_open: %s)\n", strerror(why));
    else
        printf("own cpu clock: task-clock\n");
#ifdef ZC_PAPI_MPI
    SAMPLED("MPI_Finalize", MPI_Finalize());
#endif
    char path[64];
    snprintf(path, sizeof(path), "ledger.%d.json", rank);
    FILE *f = fopen(path, "w");
    EX_REQUIRE(f != NULL, "cannot write %s", path);
    fprintf(f, "{\"rank\": %d, \"threads\": [", rank);
    ledger_write(f, &main_ledger, 1);
    for (uint32_t t = 0; t < threads; t++) {
        ledger_write(f, &w[t].ledger, 0);
        free(w[t].ledger.c);
    }
    fputs("\n]}\n", f);
    EX_REQUIRE(fclose(f) == 0, "cannot write %s", path);
    free(main_ledger.c);
    free(w);
    return 0;
}
