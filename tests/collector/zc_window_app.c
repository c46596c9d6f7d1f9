/* SPDX-License-Identifier: MIT */
/* Recording windows against zesim's truth (tests/collector/CMakeLists.txt runs each scenario
 * under the configuration it needs; check_trace.py judges the archive). The program says what
 * it expects in ZC_SCEN_OUT (JSON): "record", a regex over "<record name>#<execution>" of the
 * operations that must be recorded (all others must not be); "host_regions", exact counts of
 * host call regions; "toggles", the host-time bounds [before, after] of each action that turns
 * recording on or off, with the marker expected there; "time_window" (time scenario), the
 * append times of every operation, judged against the markers. Each window is opened and
 * closed by the program itself at known points (raise(), launches), never by sleeping.
 *
 *   zc_window_app signal   examples/signal.yaml (SIGUSR1, initially off, rank 0): the edge cases (regular lists built
 *                          while off and executed while on and the reverse, an operation in
 *                          flight when recording stops, one appended while off that runs while on)
 *   zc_window_app kernel   ZECOLL_WINDOWS=kernel:k_*@3+2
 *   zc_window_app filter   ZECOLL_KERNELS_INCLUDE=keep_* ZECOLL_KERNELS_EXCLUDE=*_drop
 *   zc_window_app time     ZECOLL_WINDOWS=time:150ms-350ms (runs 600 ms)
 *   zc_window_app burst    examples/signal.yaml: 8 times { on, 3000 recorded calls, off, 10 calls
 *                          not recorded } on two threads in step (with small buffers and a slowed
 *                          writer: markers due in a buffer while the one before it is still
 *                          being written, or waits behind the other thread's) */
#include "zt.h"

#include <pthread.h>
#include <stdbool.h>

static const char MODULE[] = "ZESIM-MODULE\n"
                             "kernel skip_a args=0 ns=20000 ns_per_item=0\n"
                             "kernel skip_c args=0 ns=20000 ns_per_item=0\n"
                             "kernel skip_e args=0 ns=20000 ns_per_item=0\n"
                             "kernel skip_r1 args=0 ns=20000 ns_per_item=0\n"
                             "kernel rec_b args=0 ns=20000 ns_per_item=0\n"
                             "kernel rec_d args=0 ns=20000 ns_per_item=0\n"
                             "kernel r2 args=0 ns=20000 ns_per_item=0\n"
                             "kernel rec_long args=0 ns=3000000 ns_per_item=0\n"
                             "kernel skip_long args=0 ns=3000000 ns_per_item=0\n"
                             "kernel k_skip args=0 ns=20000 ns_per_item=0\n"
                             "kernel k_rec args=0 ns=20000 ns_per_item=0\n"
                             "kernel o_skip args=0 ns=20000 ns_per_item=0\n"
                             "kernel o_rec args=0 ns=20000 ns_per_item=0\n"
                             "kernel keep_a args=0 ns=20000 ns_per_item=0\n"
                             "kernel keep_b_drop args=0 ns=20000 ns_per_item=0\n"
                             "kernel other args=0 ns=20000 ns_per_item=0\n"
                             "kernel tk args=0 ns=100000 ns_per_item=0\n";

static zt_env E;
static ze_module_handle_t M;
static ze_group_count_t G1 = {1, 1, 1};
static char toggles[4096];
static size_t ntog;

static ze_kernel_handle_t K(const char *name) {
    static struct {
        const char *n;
        ze_kernel_handle_t k;
    } cache[32];
    for (int i = 0; i < 32; i++) {
        if (cache[i].n && !strcmp(cache[i].n, name)) return cache[i].k;
        if (!cache[i].n) {
            cache[i].n = name;
            return cache[i].k = zt_kernel(M, name);
        }
    }
    zt_bail("too many kernels");
}

static void launch(ze_command_list_handle_t l, const char *name, ze_event_handle_t sig) {
    REQUIRE_ZE(zeCommandListAppendLaunchKernel(l, K(name), &G1, sig, 0, NULL));
}

/* raise() runs the handler on this thread before it returns: recording has changed by then */
static void toggle(const char *expect) {
    uint64_t t0 = zt_now_ns();
    raise(SIGUSR1);
    uint64_t t1 = zt_now_ns();
    ntog += (size_t)snprintf(toggles + ntog, sizeof(toggles) - ntog, "%s[%" PRIu64 ", %" PRIu64 ", \"%s\"]",
                             ntog ? ", " : "", t0, t1, expect);
}

static void note_toggle(uint64_t t0, uint64_t t1, const char *expect) {
    ntog += (size_t)snprintf(toggles + ntog, sizeof(toggles) - ntog, "%s[%" PRIu64 ", %" PRIu64 ", \"%s\"]",
                             ntog ? ", " : "", t0, t1, expect);
}

static void facts(const char *record, const char *host_regions, const char *extra) {
    const char *path = getenv("ZC_SCEN_OUT");
    if (!path) return;
    FILE *f = fopen(path, "w");
    if (!f) zt_bail("cannot write %s", path);
    fprintf(f, "{\"record\": \"%s\",\n \"host_regions\": {%s},\n \"toggles\": [%s]%s%s}\n", record, host_regions, toggles,
            extra ? ",\n " : "", extra ? extra : "");
    fclose(f);
}

static ze_command_list_handle_t sync_list(uint32_t index) {
    return zt_imm_list(&E, 0, zt_compute_ordinal(E.dev[0]), index, ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS,
                       ZT_CMDQUEUE_FLAG_IN_ORDER);
}

static void exec_sync(ze_command_queue_handle_t q, ze_command_list_handle_t l) {
    REQUIRE_ZE(zeCommandQueueExecuteCommandLists(q, 1, &l, NULL));
    REQUIRE_ZE(zeCommandQueueSynchronize(q, UINT64_MAX));
}

static ze_command_list_handle_t regular(const char *kernel) {
    ze_command_list_handle_t l = zt_list(&E, 0, zt_compute_ordinal(E.dev[0]), 0);
    launch(l, kernel, NULL);
    REQUIRE_ZE(zeCommandListClose(l));
    return l;
}

/* ---------------------------------------------------------------- scenarios */
static void scen_signal(void) {
    ze_command_list_handle_t S = sync_list(0);
    ze_command_list_handle_t A = zt_imm_list(&E, 0, zt_compute_ordinal(E.dev[0]), 1, ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS, 0);
    ze_command_queue_handle_t Q = zt_queue(&E, 0, zt_compute_ordinal(E.dev[0]), 2, ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS, 0);
    ze_event_pool_handle_t pool = zt_pool(&E, 1, ZE_EVENT_POOL_FLAG_HOST_VISIBLE);
    ze_event_handle_t ev = zt_event(pool, 0);
    size_t n = 4096;
    void *h = zt_host_alloc(&E, n), *d = zt_device_alloc(&E, 0, n);
    memset(h, 1, n);

    /* off: nothing of this is recorded; R1 is built while off */
    launch(S, "skip_a", NULL);
    launch(S, "skip_a", NULL);
    REQUIRE_ZE(zeCommandListAppendMemoryCopy(S, h, d, n, NULL, 0, NULL)); /* D2H */
    ze_command_list_handle_t R1 = regular("skip_r1");

    toggle("ON");
    launch(S, "rec_b", NULL);
    launch(S, "rec_b", NULL);
    REQUIRE_ZE(zeCommandListAppendMemoryCopy(S, d, h, n, NULL, 0, NULL)); /* H2D */
    exec_sync(Q, R1);                       /* built while off: executed while on, not timed */
    ze_command_list_handle_t R2 = regular("r2"); /* built while on */
    exec_sync(Q, R2);                       /* execution 0: recorded */
    launch(A, "rec_long", ev);              /* still running when recording stops: recorded */

    toggle("OFF");
    REQUIRE_ZE(zeEventHostSynchronize(ev, UINT64_MAX));
    REQUIRE_ZE(zeEventHostReset(ev));
    launch(S, "skip_c", NULL);
    launch(S, "skip_c", NULL);
    exec_sync(Q, R2);                       /* execution 1, while off: not recorded */
    launch(A, "skip_long", ev);             /* appended while off, still running when it turns on */

    toggle("ON");
    exec_sync(Q, R2);                       /* execution 2: recorded */
    launch(S, "rec_d", NULL);
    REQUIRE_ZE(zeEventHostSynchronize(ev, UINT64_MAX));
    REQUIRE_ZE(zeEventHostReset(ev));
    exec_sync(Q, R1);                       /* still not timed */

    toggle("OFF");
    launch(S, "skip_e", NULL);
    facts("(rec_.*|r2)#0|r2#2|zeCommandListAppendMemoryCopy\\\\(H2D\\\\)#0",
          "\"zeCommandListAppendLaunchKernel\": 5, \"zeCommandListAppendMemoryCopy\": 1, "
          "\"zeCommandQueueExecuteCommandLists\": 4, \"zeCommandListCreate\": 1",
          NULL);
}

static void scen_kernel(void) {
    ze_command_list_handle_t S = sync_list(0);
    static const char *const seq[] = {"k_skip", "o_skip", "k_skip", "o_skip", "k_rec", "o_rec",
                                      "k_rec",  "o_skip", "k_skip", "o_skip"};
    for (size_t i = 0; i < sizeof(seq) / sizeof(seq[0]); i++) {
        uint64_t t0 = zt_now_ns();
        launch(S, seq[i], NULL);
        uint64_t t1 = zt_now_ns();
        if (i == 4) note_toggle(t0, t1, "ON");  /* the 3rd k_* launch opens the window */
        if (i == 6) note_toggle(t0, t1, "OFF"); /* the 4th is its last */
    }
    facts("(k_rec|o_rec)#0", "\"zeCommandListAppendLaunchKernel\": 3", NULL);
}

static void scen_filter(void) {
    ze_command_list_handle_t S = sync_list(0);
    size_t n = 4096;
    void *h = zt_host_alloc(&E, n), *d = zt_device_alloc(&E, 0, n);
    memset(h, 1, n);
    launch(S, "keep_a", NULL);
    launch(S, "keep_b_drop", NULL);
    launch(S, "other", NULL);
    REQUIRE_ZE(zeCommandListAppendMemoryCopy(S, d, h, n, NULL, 0, NULL));
    uint32_t pattern = 7;
    REQUIRE_ZE(zeCommandListAppendMemoryFill(S, d, &pattern, sizeof(pattern), n, NULL, 0, NULL));
    launch(S, "keep_a", NULL);
    launch(S, "keep_b_drop", NULL);
    launch(S, "other", NULL);
    /* a regular list too: the filter applies where the launch is appended */
    ze_command_queue_handle_t Q = zt_queue(&E, 0, zt_compute_ordinal(E.dev[0]), 1, ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS, 0);
    ze_command_list_handle_t R = zt_list(&E, 0, zt_compute_ordinal(E.dev[0]), 0);
    launch(R, "keep_a", NULL);
    launch(R, "other", NULL);
    REQUIRE_ZE(zeCommandListClose(R));
    exec_sync(Q, R);
    exec_sync(Q, R);
    /* every launch keeps its call region (API timing); only keep_a is timed; copies and fills
     * are not kernels: the patterns leave them alone */
    facts("keep_a#[01]|zeCommandListAppendMemoryCopy\\\\(H2D\\\\)#0|zeCommandListAppendMemoryFill\\\\(D\\\\)#0",
          "\"zeCommandListAppendLaunchKernel\": 8, \"zeCommandListAppendMemoryCopy\": 1, \"zeCommandListAppendMemoryFill\": 1",
          NULL);
}

static void scen_time(void) {
    ze_command_list_handle_t S = sync_list(0);
    uint64_t start = zt_now_ns();
    static char times[1 << 20];
    size_t o = 0;
    uint32_t cmd = 0;
    /* appends for 600 ms (a window of 150 ms to 350 ms after process start): their own times
     * decide which must be recorded, whenever the window actually opened */
    while (zt_now_ns() - start < 600000000u && o + 64 < sizeof(times)) {
        uint64_t t0 = zt_now_ns();
        launch(S, "tk", NULL);
        uint64_t t1 = zt_now_ns();
        o += (size_t)snprintf(times + o, sizeof(times) - o, "%s[%u, %" PRIu64 ", %" PRIu64 "]", cmd ? ", " : "", cmd,
                              t0, t1);
        cmd++;
    }
    char *extra = malloc(o + 64);
    if (!extra) zt_bail("out of memory");
    snprintf(extra, o + 64, "\"time_window\": [%s]", times);
    facts("", "", extra);
    free(extra);
}

/* Two threads record in step (so that the writer threads' queues hold both locations' buffers,
 * and one location's buffer may wait behind the other's); the main thread toggles between the
 * phases, while the other waits. */
#define BURST_PHASES 8u
#define BURST_ON 3000u
#define BURST_OFF 10u
static pthread_barrier_t burst_step;

static void burst_calls(ze_event_handle_t ev, unsigned n) {
    for (unsigned i = 0; i < n; i++) REQUIRE_ZE(zeEventQueryStatus(ev));
}

static void *burst_other(void *arg) {
    ze_event_handle_t ev = arg;
    for (unsigned p = 0; p < BURST_PHASES; p++) {
        pthread_barrier_wait(&burst_step); /* on */
        burst_calls(ev, BURST_ON);
        pthread_barrier_wait(&burst_step);
        pthread_barrier_wait(&burst_step); /* off */
        burst_calls(ev, BURST_OFF);
        pthread_barrier_wait(&burst_step);
    }
    return NULL;
}

static void scen_burst(void) {
    ze_event_pool_handle_t pool = zt_pool(&E, 1, ZE_EVENT_POOL_FLAG_HOST_VISIBLE);
    ze_event_handle_t ev = zt_event(pool, 0);
    REQUIRE_ZE(zeEventHostSignal(ev));
    if (pthread_barrier_init(&burst_step, NULL, 2) != 0) zt_bail("pthread_barrier_init");
    pthread_t other;
    if (pthread_create(&other, NULL, burst_other, ev) != 0) zt_bail("pthread_create");
    for (unsigned p = 0; p < BURST_PHASES; p++) {
        toggle("ON");
        pthread_barrier_wait(&burst_step);
        burst_calls(ev, BURST_ON);
        pthread_barrier_wait(&burst_step);
        toggle("OFF");
        pthread_barrier_wait(&burst_step);
        burst_calls(ev, BURST_OFF);
        pthread_barrier_wait(&burst_step);
    }
    pthread_join(other, NULL);
    pthread_barrier_destroy(&burst_step);
    char regions[64];
    snprintf(regions, sizeof(regions), "\"zeEventQueryStatus\": %u", 2 * BURST_PHASES * BURST_ON);
    facts("", regions, NULL);
}

int main(int argc, char **argv) {
    const char *s = argc > 1 ? argv[1] : "";
    zt_setup(&E);
    M = zt_module_text(&E, 0, MODULE);
    if (!strcmp(s, "signal")) scen_signal();
    else if (!strcmp(s, "kernel")) scen_kernel();
    else if (!strcmp(s, "filter")) scen_filter();
    else if (!strcmp(s, "time")) scen_time();
    else if (!strcmp(s, "burst")) scen_burst();
    else zt_bail("usage: zc_window_app signal|kernel|filter|time|burst");
    zt_teardown(&E);
    return zt_failures() ? 1 : 0;
}
