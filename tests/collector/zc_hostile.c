/* SPDX-License-Identifier: MIT */
/* An application in a hostile process environment (issue 10): thread churn, closed standard
 * descriptors, signals while it sleeps, concurrent exit() calls. Each mode checks what the
 * application itself can see and prints one line of facts; the tests judge the archive.
 *
 *   zc_hostile churn THREADS CONCURRENT LAUNCHES   short-lived threads, each with its own
 *       immediate list and kernel, LAUNCHES launches each, CONCURRENT alive at a time (a batch
 *       of CONCURRENT threads exits together)
 *   zc_hostile fds REPORT LAUNCHES      some of fds 0-2 closed by the caller: they must stay closed
 *       (the collector may not hand them out) while the archive is written; REPORT gets the facts
 *   zc_hostile sleep nanosleep|poll|read|pause   GPU work (a kernel of 1 s left running), then
 *       "ready" on stdout and waits for a signal in that call; prints what the call returned (without the collector a default
 *       SIGTERM ends the process inside it)
 *   zc_hostile exits THREADS           GPU work, then THREADS threads call exit(7) at once
 *   zc_hostile fatal SIGNAL            GPU work, then raise(SIGNAL) (e.g. SEGV, ABRT)
 *   zc_hostile handled restart|norestart   its own SIGTERM handler, then a read of stdin that the
 *       signal interrupts; prints what read returned and whether the handler ran; exits 5
 *   zc_hostile journal-limit M THREADS LAUNCHES   M launches on the main thread (a full buffer:
 *       the archive and its journal open), then THREADS threads at once, each with LAUNCHES
 *       launches (fewer records than a buffer holds: nothing reaches the writer), then exits 0
 *       with them alive: the finalize's pass, on the exiting thread, journals their records
 */
#include "ex_common.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static ex_env_t env;
static ze_device_handle_t dev;
static ze_module_handle_t module;
static uint32_t ordinal;
static uint32_t *out; /* shared: one word per thread */

/* One thread's work: its own synchronous immediate list and kernel, `launches` launches of
 * fill_u32 writing its tag, checked. */
static void gpu_work(uint32_t id, uint32_t launches) {
    ze_command_list_handle_t list = ex_immediate_list(&env, dev, ordinal, 0, ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS);
    ze_kernel_handle_t k = ex_kernel_create(module, "fill_u32");
    ze_group_count_t g = ex_group_count_1d(k, 1);
    uint32_t *p = out + id;
    for (uint32_t i = 0; i < launches; i++) {
        uint32_t v = id * 1000u + i;
        EX_ARG(k, 0, p);
        EX_ARG(k, 1, v);
        EX_CHECK(zeCommandListAppendLaunchKernel(list, k, &g, NULL, 0, NULL));
        if (*p != v) ex_die("thread %u launch %u: got %u, want %u", id, i, *p, v);
    }
    EX_CHECK(zeKernelDestroy(k));
    EX_CHECK(zeCommandListDestroy(list));
}

static void setup(uint32_t words) {
    ex_init(&env, "zc_hostile");
    dev = env.devices[0];
    ordinal = ex_compute_group(dev, NULL);
    module = ex_module_create(&env, dev);
    out = ex_alloc_shared(&env, dev, (size_t)words * sizeof(uint32_t));
}

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ---------------------------------------------------------------- churn */
struct churn_arg {
    uint32_t id, launches;
    pthread_barrier_t *batch;
};

/* A batch's threads wait for each other before they exit, so that CONCURRENT of them really are
 * alive at once: otherwise a fast thread may be gone before the next one makes its first call,
 * which then takes over its slot, and the archive has fewer thread locations than the test
 * expects (seen on a loaded 2-core machine). */
static void *churn_thread(void *p) {
    struct churn_arg *a = p;
    gpu_work(a->id, a->launches);
    pthread_barrier_wait(a->batch);
    return NULL;
}

static int churn(uint32_t n, uint32_t conc, uint32_t launches) {
    setup(n);
    pthread_t *t = calloc(conc, sizeof(*t));
    struct churn_arg *args = calloc(n, sizeof(*args));
    EX_REQUIRE(t && args, "out of memory");
    for (uint32_t base = 0; base < n; base += conc) {
        uint32_t m = n - base < conc ? n - base : conc;
        pthread_barrier_t batch;
        if (pthread_barrier_init(&batch, NULL, m) != 0) ex_die("pthread_barrier_init failed");
        for (uint32_t i = 0; i < m; i++) {
            args[base + i] = (struct churn_arg){base + i, launches, &batch};
            if (pthread_create(&t[i], NULL, churn_thread, &args[base + i]) != 0) ex_die("pthread_create failed");
        }
        for (uint32_t i = 0; i < m; i++) pthread_join(t[i], NULL);
        pthread_barrier_destroy(&batch);
    }
    /* the facts the test compares the archive with, and when main ended (exit time = the
     * process's end minus this, CLOCK_MONOTONIC) */
    printf("zc_hostile churn: threads=%u concurrent=%u launches=%u kernels=%u main_end_ns=%llu\n", n, conc, launches,
           n * launches, (unsigned long long)now_ns());
    fflush(stdout);
    free(args);
    free(t);
    return 0;
}

/* ---------------------------------------------------------------- fds */
static int fds(const char *report, uint32_t launches) {
    bool closed[3];
    for (int fd = 0; fd < 3; fd++) closed[fd] = fcntl(fd, F_GETFD) == -1 && errno == EBADF;
    setup(4);
    for (uint32_t i = 0; i < 4; i++) gpu_work(i, launches);
    /* what the application sees of its standard descriptors after the collector wrote buffers */
    char line[1024];
    int n = 0;
    for (int fd = 0; fd < 3; fd++) {
        bool now = fcntl(fd, F_GETFD) == -1 && errno == EBADF;
        char what[128] = "";
        if (closed[fd] && !now) { /* who took it */
            char link[32];
            snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
            ssize_t k = readlink(link, what + 1, sizeof(what) - 2);
            what[0] = ':';
            what[k > 0 ? k + 1 : 1] = 0;
        }
        n += snprintf(line + n, sizeof(line) - (size_t)n, "fd%d=%s%s%s ", fd, closed[fd] ? "closed" : "open",
                      closed[fd] && !now ? "-but-taken" : "", what);
    }
    char c;
    ssize_t r = read(0, &c, 1);
    n += snprintf(line + n, sizeof(line) - (size_t)n, "read0=%s\n", r < 0 ? strerror(errno) : r == 0 ? "eof" : "data");
    /* the report file is opened last, so it cannot take a descriptor the collector left free */
    int f = open(report, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (f < 0) return 2;
    if (write(f, line, (size_t)n) != n) return 2;
    close(f);
    return 0;
}

/* ---------------------------------------------------------------- sleep */
/* One kernel of `ms` milliseconds left running on an asynchronous list: the collector's exit
 * then waits for it (up to ZECOLL_FINALIZE_TIMEOUT_MS) before it writes the archive, so the
 * application has all that time to run ahead if it is let. */
static void leave_long_kernel(uint32_t ms) {
    char text[128];
    int n = snprintf(text, sizeof(text), "ZESIM-MODULE\nkernel long args=0 ns=%u ns_per_item=0\n", ms * 1000000u);
    ze_module_desc_t md = {ZE_STRUCTURE_TYPE_MODULE_DESC, NULL, ZE_MODULE_FORMAT_NATIVE, (size_t)n,
                           (const uint8_t *)text, NULL, NULL};
    ze_module_handle_t mod;
    EX_CHECK(zeModuleCreate(env.context, dev, &md, &mod, NULL));
    ze_kernel_desc_t kd = {ZE_STRUCTURE_TYPE_KERNEL_DESC, NULL, 0, "long"};
    ze_kernel_handle_t k;
    EX_CHECK(zeKernelCreate(mod, &kd, &k));
    ze_command_list_handle_t l = ex_immediate_list(&env, dev, ordinal, 0, ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS);
    ze_group_count_t g = {1, 1, 1};
    EX_CHECK(zeCommandListAppendLaunchKernel(l, k, &g, NULL, 0, NULL));
}

static int sleeper(const char *how) {
    setup(4);
    gpu_work(0, 20);
    leave_long_kernel(1000);
    printf("ready\n");
    fflush(stdout);
    int r = 0, err = 0;
    if (!strcmp(how, "nanosleep")) {
        struct timespec ts = {30, 0};
        r = nanosleep(&ts, NULL);
    } else if (!strcmp(how, "poll")) {
        r = poll(NULL, 0, 30000);
    } else if (!strcmp(how, "read")) {
        char c;
        r = (int)read(0, &c, 1); /* a pipe the test keeps open */
    } else {
        r = pause();
    }
    err = errno;
    /* without the collector a default SIGTERM never lets the process get here */
    printf("zc_hostile sleep: %s returned %d (%s); exiting 0\n", how, r, r < 0 ? strerror(err) : "-");
    fflush(stdout);
    return 0;
}

/* ---------------------------------------------------------------- handled */
static volatile sig_atomic_t handled, handled_elsewhere;
static pid_t main_tid;

static void on_term(int sig) {
    (void)sig;
    handled++;
    if (gettid() != main_tid) handled_elsewhere++;
}

/* Its own SIGTERM handler (with or without SA_RESTART), then a read of stdin (a pipe) that the
 * signal interrupts: what read returned and whether the handler ran first are what the
 * application sees, to be the same with and without the collector. */
static int handled_read(const char *flags) {
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_term;
    sa.sa_flags = !strcmp(flags, "restart") ? SA_RESTART : 0;
    main_tid = gettid();
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGTERM, &sa, NULL) != 0) return 2;
    setup(4);
    gpu_work(0, 20);
    printf("ready\n");
    fflush(stdout);
    char c;
    ssize_t r = read(0, &c, 1);
    int err = errno;
    printf("zc_hostile handled: read returned %d (%s), handler ran %d time(s) before, %d on another thread\n",
           (int)r, r < 0 ? strerror(err) : "-", (int)handled, (int)handled_elsewhere);
    fflush(stdout);
    gpu_work(1, 5); /* the application goes on: not recorded any more, but unharmed */
    return 5;
}

/* ---------------------------------------------------------------- exits */
static pthread_barrier_t exit_barrier;

static void *exit_thread(void *p) {
    (void)p;
    pthread_barrier_wait(&exit_barrier);
    exit(7);
}

static int exits(uint32_t n) {
    setup(4);
    gpu_work(0, 20);
    pthread_barrier_init(&exit_barrier, NULL, n);
    for (uint32_t i = 0; i < n; i++) {
        pthread_t t;
        if (pthread_create(&t, NULL, exit_thread, NULL) != 0) ex_die("pthread_create failed");
    }
    for (;;) pause();
}

/* ---------------------------------------------------------------- fatal */
static int fatal(const char *name) {
    int sig = !strcmp(name, "SEGV") ? SIGSEGV : !strcmp(name, "ABRT") ? SIGABRT : !strcmp(name, "BUS") ? SIGBUS : 0;
    if (!sig) return 2;
    setup(4);
    gpu_work(0, 20);
    printf("ready\n");
    fflush(stdout);
    raise(sig);
    return 0;
}

/* ---------------------------------------------------------------- journal-limit */
static uint32_t limit_launches;
static pthread_barrier_t limit_barrier;
/* alive together, each its own thread location, and still alive at the exit: a thread that
 * ends hands its buffer to the writer */
static void *limit_worker(void *p) {
    gpu_work((uint32_t)(uintptr_t)p, limit_launches);
    pthread_barrier_wait(&limit_barrier);
    for (;;) pause();
    return NULL;
}

static int journal_limit(uint32_t main_launches, uint32_t threads, uint32_t launches) {
    setup(threads + 1);
    gpu_work(threads, main_launches);
    limit_launches = launches;
    pthread_barrier_init(&limit_barrier, NULL, threads + 1);
    for (uint32_t i = 0; i < threads; i++) {
        pthread_t t;
        if (pthread_create(&t, NULL, limit_worker, (void *)(uintptr_t)i) != 0) ex_die("pthread_create failed");
    }
    pthread_barrier_wait(&limit_barrier);
    printf("journal-limit: %u launches, then %u threads x %u launches, checked\n", main_launches, threads, launches);
    return 0;
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "";
    if (!strcmp(mode, "churn") && argc == 5)
        return churn((uint32_t)ex_arg_u64(argc, argv, 2, "threads", 0, 1, 1000000),
                     (uint32_t)ex_arg_u64(argc, argv, 3, "concurrent", 0, 1, 4096),
                     (uint32_t)ex_arg_u64(argc, argv, 4, "launches", 0, 1, 1000000));
    if (!strcmp(mode, "fds") && argc == 4) return fds(argv[2], (uint32_t)ex_arg_u64(argc, argv, 3, "launches", 0, 1, 10000000));
    if (!strcmp(mode, "sleep") && argc == 3) return sleeper(argv[2]);
    if (!strcmp(mode, "exits") && argc == 3) return exits((uint32_t)ex_arg_u64(argc, argv, 2, "threads", 0, 2, 64));
    if (!strcmp(mode, "fatal") && argc == 3) return fatal(argv[2]);
    if (!strcmp(mode, "handled") && argc == 3) return handled_read(argv[2]);
    if (!strcmp(mode, "journal-limit") && argc == 5)
        return journal_limit((uint32_t)ex_arg_u64(argc, argv, 2, "main launches", 0, 1, 1000000),
                             (uint32_t)ex_arg_u64(argc, argv, 3, "threads", 0, 1, 64),
                             (uint32_t)ex_arg_u64(argc, argv, 4, "launches", 0, 1, 1000000));
    fprintf(stderr, "usage: zc_hostile churn N W L | fds REPORT L | sleep nanosleep|poll|read|pause | exits N | fatal SEGV|ABRT|BUS | handled restart|norestart | journal-limit M T L\n");
    return 2;
}
