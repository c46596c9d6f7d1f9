/* SPDX-License-Identifier: MIT */
/*
 * Fault injection: ZESIM_FAIL (Nth call, N+ from the Nth on, named and numeric results,
 * several entries, counted per process over all threads, a failed call does nothing),
 * ZESIM_DEVICE_LOST_AFTER, ZESIM_EVENT_POOL_OOM, ZESIM_SLOW_SYNC_NS (added latency measured
 * against a run without it), ZESIM_NULL_ENTRIES (entries left NULL, seen through the loader as
 * a driver without them: the loader answers for them, the tables show NULL, the rest works; an
 * unknown name stops the process). Each case sets its variables in a child before zeInit.
 */
#include "zt.h"
#include "zt_truth.h"

#include <fcntl.h>
#include <pthread.h>
#include <sys/wait.h>

#include <level_zero/ze_ddi.h>

struct shared {
    uint64_t copy_list;
    int lost_after;
    double base_ms[8], slow_ms[8];
};

static struct shared *sh;

static ze_result_t pool_create(const zt_env *e, ze_event_pool_handle_t *p)
{
    ze_event_pool_desc_t pd = {.stype = ZE_STRUCTURE_TYPE_EVENT_POOL_DESC,
                               .flags = ZE_EVENT_POOL_FLAG_HOST_VISIBLE,
                               .count = 1};
    *p = NULL;
    ze_result_t r = zeEventPoolCreate(e->ctx, &pd, 0, NULL, p);
    if (r == ZE_RESULT_SUCCESS)
        zt_track(ZT_OBJ_POOL, *p, NULL);
    return r;
}

static void child_nth(void *arg)
{
    setenv("ZESIM_FAIL", "zeEventPoolCreate:2", 1);
    zt_env e;
    zt_setup(&e);
    ze_event_pool_handle_t p[4];
    IS_ZE(pool_create(&e, &p[0]), ZE_RESULT_SUCCESS, "zeEventPoolCreate:2 - call 1 succeeds");
    IS_ZE(pool_create(&e, &p[1]), ZE_RESULT_ERROR_UNKNOWN,
          "call 2 fails with the default ZE_RESULT_ERROR_UNKNOWN");
    zt_ok(p[1] == NULL, "the failed call did nothing (no handle written)");
    IS_ZE(pool_create(&e, &p[2]), ZE_RESULT_SUCCESS, "call 3 succeeds again");
    IS_ZE(pool_create(&e, &p[3]), ZE_RESULT_SUCCESS, "call 4 succeeds");
}

static void child_plus(void *arg)
{
    setenv("ZESIM_FAIL", "zeEventPoolCreate:2+:ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY", 1);
    zt_env e;
    zt_setup(&e);
    ze_event_pool_handle_t p;
    IS_ZE(pool_create(&e, &p), ZE_RESULT_SUCCESS, "zeEventPoolCreate:2+ - call 1 succeeds");
    for (int i = 2; i <= 5; i++)
        IS_ZE(pool_create(&e, &p), ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY,
              "call %d fails with the named result", i);
}

static void child_numeric(void *arg)
{
    /* 2013265924 = 0x78000004 = ZE_RESULT_ERROR_INVALID_ARGUMENT; two entries */
    setenv("ZESIM_FAIL",
           "zeMemAllocHost:1:2013265924,zeCommandListAppendMemoryCopy:2:ZE_RESULT_ERROR_DEVICE_LOST",
           1);
    zt_env e;
    zt_setup(&e);
    ze_host_mem_alloc_desc_t hd = {.stype = ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC};
    void *p = NULL;
    IS_ZE(zeMemAllocHost(e.ctx, &hd, 4096, 64, &p), ZE_RESULT_ERROR_INVALID_ARGUMENT,
          "numeric result 2013265924 returned");
    zt_ok(p == NULL, "no allocation made");
    IS_ZE(zeMemAllocHost(e.ctx, &hd, 4096, 64, &p), ZE_RESULT_SUCCESS, "second call succeeds");
    zt_track(ZT_OBJ_MEM, p, e.ctx);
    uint8_t *src = p, *dst = zt_device_alloc(&e, 0, 4096);
    memset(src, 0x42, 4096);
    memset(dst, 0, 4096);
    ze_command_list_handle_t l = zt_imm_list(&e, 0, zt_compute_ordinal(e.dev[0]), 0,
                                             ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS, 0);
    sh->copy_list = ZT_H64(l);
    IS_ZE(zeCommandListAppendMemoryCopy(l, dst, src, 1024, NULL, 0, NULL), ZE_RESULT_SUCCESS,
          "second entry: copy 1 succeeds");
    IS_ZE(zeCommandListAppendMemoryCopy(l, dst + 2048, src, 1024, NULL, 0, NULL),
          ZE_RESULT_ERROR_DEVICE_LOST, "second entry: copy 2 fails");
    IS_ZE(zeCommandListAppendMemoryCopy(l, dst + 1024, src, 1024, NULL, 0, NULL),
          ZE_RESULT_SUCCESS, "copy 3 succeeds");
    int untouched = 1;
    for (int i = 2048; i < 3072; i++)
        if (dst[i])
            untouched = 0;
    zt_ok(untouched && dst[0] == 0x42 && dst[1024] == 0x42, "the failed copy moved nothing");
}

static atomic_int n_failed;
static zt_env thr_env;
static ze_event_handle_t thr_ev;

static void *querier(void *arg)
{
    for (int i = 0; i < 10; i++) {
        ze_result_t r = zeEventQueryStatus(thr_ev);
        if (r == ZE_RESULT_ERROR_UNKNOWN)
            atomic_fetch_add(&n_failed, 1);
        else if (r != ZE_RESULT_SUCCESS)
            zt_fail("unexpected 0x%x", (unsigned)r);
    }
    return NULL;
}

static void child_threads(void *arg)
{
    setenv("ZESIM_FAIL", "zeEventQueryStatus:25", 1);
    zt_setup(&thr_env);
    ze_event_handle_t ev[1];
    zt_ts_events(&thr_env, 1, ev);
    thr_ev = ev[0];
    CHECK_ZE(zeEventHostSignal(thr_ev));
    pthread_t th[4];
    for (int i = 0; i < 4; i++)
        pthread_create(&th[i], NULL, querier, NULL);
    for (int i = 0; i < 4; i++)
        pthread_join(th[i], NULL);
    zt_is_int(atomic_load(&n_failed), 1,
              "zeEventQueryStatus:25 over 4 threads x 10 calls: exactly one call failed");
}

static void child_lost(void *arg)
{
    setenv("ZESIM_DEVICE_LOST_AFTER", "3", 1);
    sh->lost_after = 3;
    zt_env e;
    zt_setup(&e);
    ze_module_handle_t m = zt_module_text(&e, 0, "ZESIM-MODULE\nkernel k args=0 ns=100000\n");
    ze_kernel_handle_t k = zt_kernel(m, "k");
    ze_event_handle_t ev[8];
    zt_ts_events(&e, 8, ev);
    uint32_t ord = zt_compute_ordinal(e.dev[0]);
    ze_command_list_handle_t l = zt_imm_list(&e, 0, ord, 0, ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS, 0);
    for (int i = 0; i < 2; i++) {
        CHECK_ZE(zt_launch(l, k, 1, ev[i], 0, NULL));
        IS_ZE(zeEventHostSynchronize(ev[i], ZT_FOREVER), ZE_RESULT_SUCCESS,
              "operation %d of 3 executes", i + 1);
    }
    /* The third operation's completion loses the device: a host that calls in after it (a
     * loaded machine delays the host past the kernel's 100 us) is told DEVICE_LOST at the
     * entry, as a driver does. That it executed is checked against the truth log below. */
    CHECK_ZE(zt_launch(l, k, 1, ev[2], 0, NULL));
    ze_result_t r3 = zeEventHostSynchronize(ev[2], ZT_FOREVER);
    zt_ok(r3 == ZE_RESULT_SUCCESS || r3 == ZE_RESULT_ERROR_DEVICE_LOST,
          "operation 3 of 3: its synchronisation returns SUCCESS or, once it has lost the device, DEVICE_LOST (0x%x)",
          (unsigned)r3);
    ze_result_t r = zt_launch(l, k, 1, ev[3], 0, NULL);
    zt_ok(r == ZE_RESULT_SUCCESS || r == ZE_RESULT_ERROR_DEVICE_LOST,
          "4th append accepted or DEVICE_LOST (0x%x)", (unsigned)r);
    uint64_t t0 = zt_now_ns();
    IS_ZE(zeEventHostSynchronize(ev[3], 3000000000ull), ZE_RESULT_ERROR_DEVICE_LOST,
          "host synchronisation on the pending command returns DEVICE_LOST");
    zt_ok(zt_now_ns() - t0 < 2000000000ull, "and does not wait for the timeout");
    IS_ZE(zt_launch(l, k, 1, ev[4], 0, NULL), ZE_RESULT_ERROR_DEVICE_LOST,
          "later append: DEVICE_LOST");
    IS_ZE(zeCommandListAppendBarrier(l, NULL, 0, NULL), ZE_RESULT_ERROR_DEVICE_LOST,
          "later barrier: DEVICE_LOST");
    IS_ZE(zeDeviceGetStatus(e.dev[0]), ZE_RESULT_ERROR_DEVICE_LOST, "zeDeviceGetStatus");
    ze_command_list_desc_t ld = {.stype = ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC,
                                 .commandQueueGroupOrdinal = ord};
    ze_command_list_handle_t rl = NULL;
    r = zeCommandListCreate(e.ctx, e.dev[0], &ld, &rl);
    if (r == ZE_RESULT_SUCCESS) {
        zt_track(ZT_OBJ_LIST, rl, NULL);
        ze_command_queue_desc_t qd = {.stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC,
                                      .ordinal = ord,
                                      .mode = ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS};
        ze_command_queue_handle_t q = NULL;
        r = zeCommandQueueCreate(e.ctx, e.dev[0], &qd, &q);
        if (r == ZE_RESULT_SUCCESS) {
            zt_track(ZT_OBJ_QUEUE, q, NULL);
            zeCommandListClose(rl);
            IS_ZE(zeCommandQueueExecuteCommandLists(q, 1, &rl, NULL),
                  ZE_RESULT_ERROR_DEVICE_LOST, "later Execute: DEVICE_LOST");
            IS_ZE(zeCommandQueueSynchronize(q, 1000000), ZE_RESULT_ERROR_DEVICE_LOST,
                  "later queue synchronize: DEVICE_LOST");
        } else {
            IS_ZE(r, ZE_RESULT_ERROR_DEVICE_LOST, "later queue creation: DEVICE_LOST");
        }
    } else {
        IS_ZE(r, ZE_RESULT_ERROR_DEVICE_LOST, "later list creation: DEVICE_LOST");
    }
}

static void child_pool_oom(void *arg)
{
    setenv("ZESIM_EVENT_POOL_OOM", (const char *)arg, 1);
    int n = atoi((const char *)arg);
    zt_env e;
    zt_setup(&e);
    ze_event_pool_handle_t p[4] = {0};
    for (int i = 0; i < n; i++)
        IS_ZE(pool_create(&e, &p[i]), ZE_RESULT_SUCCESS, "OOM=%d: pool %d created", n, i + 1);
    ze_event_pool_handle_t x = NULL;
    IS_ZE(pool_create(&e, &x), ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY,
          "OOM=%d: pool %d fails with OUT_OF_DEVICE_MEMORY", n, n + 1);
    if (n > 0) {
        zt_destroy(p[0]);
        IS_ZE(pool_create(&e, &p[0]), ZE_RESULT_SUCCESS,
              "OOM=%d: after destroying one, creation works again", n);
        IS_ZE(pool_create(&e, &x), ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY,
              "OOM=%d: and fails again at the limit", n);
    }
}

static double ms_of(uint64_t t0)
{
    return (double)(zt_now_ns() - t0) / 1e6;
}

static void child_slow(void *arg)
{
    double *out = arg ? sh->slow_ms : sh->base_ms;
    if (arg)
        setenv("ZESIM_SLOW_SYNC_NS", "30000000", 1);
    zt_env e;
    zt_setup(&e);
    ze_event_handle_t ev[2];
    zt_ts_events(&e, 2, ev);
    CHECK_ZE(zeEventHostSignal(ev[0]));
    uint32_t ord = zt_compute_ordinal(e.dev[0]);
    ze_command_queue_handle_t q = zt_queue(&e, 0, ord, 0, ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS, 0);
    ze_command_list_handle_t l = zt_list(&e, 0, ord, 0);
    CHECK_ZE(zeCommandListAppendBarrier(l, NULL, 0, NULL));
    CHECK_ZE(zeCommandListClose(l));
    ze_fence_desc_t fd = {.stype = ZE_STRUCTURE_TYPE_FENCE_DESC};
    ze_fence_handle_t f = NULL;
    CHECK_ZE(zeFenceCreate(q, &fd, &f));
    zt_track(ZT_OBJ_FENCE, f, NULL);
    CHECK_ZE(zeCommandQueueExecuteCommandLists(q, 1, &l, f));
    CHECK_ZE(zeCommandQueueSynchronize(q, ZT_FOREVER));
    uint64_t t;
    t = zt_now_ns();
    CHECK_ZE(zeEventQueryStatus(ev[0]));
    out[0] = ms_of(t);
    t = zt_now_ns();
    CHECK_ZE(zeEventHostSynchronize(ev[0], ZT_FOREVER));
    out[1] = ms_of(t);
    t = zt_now_ns();
    CHECK_ZE(zeFenceQueryStatus(f));
    out[2] = ms_of(t);
    t = zt_now_ns();
    CHECK_ZE(zeFenceHostSynchronize(f, ZT_FOREVER));
    out[3] = ms_of(t);
    t = zt_now_ns();
    CHECK_ZE(zeCommandQueueSynchronize(q, ZT_FOREVER));
    out[4] = ms_of(t);
    t = zt_now_ns();
    zeEventQueryStatus(ev[1]); /* NOT_READY, still a status query */
    out[5] = ms_of(t);
}

/* ZESIM_LOG=1 prints the driver calls to stderr */
static void child_log(void *arg)
{
    setenv("ZESIM_LOG", "1", 1);
    int fd = open((const char *)arg, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    dup2(fd, 2);
    close(fd);
    zt_env e;
    zt_setup(&e);
    void *p = zt_host_alloc(&e, 64);
    zt_free(e.ctx, p);
}

static void test_log(void)
{
    char path[1100];
    zt_truth_path_for("log", path, sizeof path);
    strcat(path, ".stderr");
    zt_fork_run("log", child_log, path, NULL, 0);
    FILE *f = fopen(path, "r");
    char buf[65536];
    size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    buf[n] = 0;
    if (f)
        fclose(f);
    zt_ok(strstr(buf, "zeMemAllocHost") && strstr(buf, "zeMemFree") && strstr(buf, "zeInit"),
          "ZESIM_LOG=1 prints the driver calls to stderr (%zu bytes)", n);
    unlink(path);
}

static void check_lost(void)
{
    char truth[1024];
    zt_fork_run("lost", child_lost, NULL, truth, sizeof truth);
    zt_truth t;
    char err[256] = "";
    if (zt_ok(zt_truth_load(truth, 0, &t, err, sizeof err) == 0, "lost: truth (%s)", err)) {
        zt_is_int(t.nops, sh->lost_after, "exactly ZESIM_DEVICE_LOST_AFTER operations executed");
        zt_truth_free(&t);
    }
}


/* What the loader (1.8.12) answers for an entry the driver left NULL: with one driver it hands
 * the application the driver's own table and its API functions answer UNSUPPORTED_FEATURE; its
 * intercept layer (ZE_ENABLE_LOADER_INTERCEPT=1) answers UNINITIALIZED. */
static ze_result_t loader_null_result(void)
{
    const char *ic = getenv("ZE_ENABLE_LOADER_INTERCEPT");
    return ic && *ic && strcmp(ic, "0") != 0 ? ZE_RESULT_ERROR_UNINITIALIZED : ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
}

static void child_null_entries(void *arg)
{
    /* both spellings: table.member and the API name */
    setenv("ZESIM_NULL_ENTRIES", "zeEventPoolCreate,ze_device.pfnGetGlobalTimestamps,"
                                 "ze_command_list.pfnAppendSignalEvent", 1);
    zt_env e;
    zt_setup(&e);
    ze_event_pool_handle_t p = NULL;
    IS_ZE(pool_create(&e, &p), loader_null_result(),
          "ZESIM_NULL_ENTRIES=zeEventPoolCreate: the loader answers for the missing entry");
    zt_ok(p == NULL, "no pool was created");
    uint64_t h = 0, d = 0;
    IS_ZE(zeDeviceGetGlobalTimestamps(e.dev[0], &h, &d), loader_null_result(),
          "ze_device.pfnGetGlobalTimestamps left NULL");
    ze_event_pool_dditable_t pt;
    memset(&pt, 0, sizeof pt);
    if (!getenv("ZE_ENABLE_LOADER_INTERCEPT")) {
        IS_ZE(zeGetEventPoolProcAddrTable(ZE_API_VERSION_CURRENT, &pt), ZE_RESULT_SUCCESS,
              "the loader's event pool table");
        zt_ok(pt.pfnCreate == NULL && pt.pfnDestroy != NULL,
              "the application's table has pfnCreate NULL, pfnDestroy set");
    }
    /* the rest of the driver works: a list with an append, executed */
    ze_command_list_handle_t l = zt_list(&e, 0, zt_compute_ordinal(e.dev[0]), 0);
    IS_ZE(zeCommandListAppendBarrier(l, NULL, 0, NULL), ZE_RESULT_SUCCESS, "other entries still work");
    IS_ZE(zeCommandListAppendSignalEvent(l, NULL), loader_null_result(), "AppendSignalEvent left NULL");
}

/* A name zesim does not know would silently test nothing: the process stops with status 2. */
static void check_null_entries_typo(void)
{
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        int fd = open("/dev/null", O_WRONLY);
        if (fd >= 0)
            dup2(fd, 2);
        setenv("ZESIM_NULL_ENTRIES", "zeNoSuchApi", 1);
        zeInit(0);
        _exit(0);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    zt_ok(WIFEXITED(st) && WEXITSTATUS(st) == 2, "ZESIM_NULL_ENTRIES=zeNoSuchApi: exit status 2 (got 0x%x)", st);
}

int main(int argc, char **argv)
{
    zt_init(argc, argv);
    sh = zt_shm(sizeof *sh);
    char truth[1024];
    zt_fork_run("nth", child_nth, NULL, truth, sizeof truth);
    zt_fork_run("plus", child_plus, NULL, truth, sizeof truth);
    zt_fork_run("numeric", child_numeric, NULL, truth, sizeof truth);
    zt_truth t;
    char err[256] = "";
    if (zt_ok(zt_truth_load(truth, 0, &t, err, sizeof err) == 0, "numeric: truth (%s)", err)) {
        zt_truth_query q = ZT_TRUTH_QUERY_INIT;
        q.list = sh->copy_list;
        zt_is_int(zt_truth_count(&t, &q), 2, "the failed copy has no truth line");
        zt_truth_free(&t);
    }
    zt_fork_run("threads", child_threads, NULL, truth, sizeof truth);
    zt_fork_run("null_entries", child_null_entries, NULL, truth, sizeof truth);
    check_null_entries_typo();
    check_lost();
    test_log();
    zt_fork_run("oom2", child_pool_oom, "2", truth, sizeof truth);
    zt_fork_run("oom0", child_pool_oom, "0", truth, sizeof truth);
    zt_fork_run("base", child_slow, NULL, truth, sizeof truth);
    zt_fork_run("slow", child_slow, "slow", truth, sizeof truth);
    static const char *const what[] = {"zeEventQueryStatus", "zeEventHostSynchronize",
                                       "zeFenceQueryStatus", "zeFenceHostSynchronize",
                                       "zeCommandQueueSynchronize",
                                       "zeEventQueryStatus (NOT_READY)"};
    for (int i = 0; i < 6; i++) {
        zt_ok(sh->slow_ms[i] >= 30.0, "ZESIM_SLOW_SYNC_NS=30 ms: %s takes %.3f ms", what[i],
              sh->slow_ms[i]);
        zt_ok(sh->base_ms[i] < 25.0 && sh->slow_ms[i] - sh->base_ms[i] >= 29.0,
              "%s: added latency %.3f ms (without the knob %.3f ms)", what[i],
              sh->slow_ms[i] - sh->base_ms[i], sh->base_ms[i]);
    }
    return zt_done();
}
