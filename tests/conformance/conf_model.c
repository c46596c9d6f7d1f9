/* SPDX-License-Identifier: MIT */
/*
 * Duration model: truth host_end - host_start is exactly
 *   kernel: ns + ns_per_item * work_items (ZESIM_KERNEL_MODEL per name, '*' default 5000:0.25;
 *           a text module's ns/ns_per_item override the model for its kernel),
 *   copy / fill / image copy: latency + bytes / rate (ZESIM_COPY_MODEL, default 1500:10),
 *   barrier, signal, wait, reset, timestamp writes/queries: ZESIM_SYNC_OP_NS (default 200),
 * and a command starts at submission + ZESIM_LAUNCH_LATENCY_NS (default 2000) at the earliest.
 * Expected values are computed from the same environment the ctest entry sets.
 */
#include "zt.h"
#include "zt_truth.h"

struct expect {
    uint64_t signal; /* the op is found by its signal event */
    uint64_t ns;
    const char *what;
};

struct shared {
    int n;
    struct expect x[32];
    uint64_t lat_list, lat_t0, lat_t1, half_ev;
};

static struct shared *sh;

/* model value for a kernel name from ZESIM_KERNEL_MODEL, README defaults otherwise; returns
 * whether an entry names the kernel (such an entry wins over a text module's ns/ns_per_item) */
static int kernel_model(const char *name, double *ns, double *per)
{
    *ns = 5000;
    *per = 0.25;
    const char *v = getenv("ZESIM_KERNEL_MODEL");
    if (!v)
        return 0;
    char buf[512];
    snprintf(buf, sizeof buf, "%s", v);
    double star_ns = 5000, star_per = 0.25;
    int found = 0;
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save)) {
        char *c1 = strchr(tok, ':');
        char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        if (!c2)
            continue;
        *c1 = 0;
        double a = strtod(c1 + 1, NULL), b = strtod(c2 + 1, NULL);
        if (strcmp(tok, "*") == 0) {
            star_ns = a;
            star_per = b;
        } else if (strcmp(tok, name) == 0) {
            *ns = a;
            *per = b;
            found = 1;
        }
    }
    if (!found) {
        *ns = star_ns;
        *per = star_per;
    }
    return found;
}

static void copy_model(double *lat, double *rate)
{
    *lat = 1500;
    *rate = 10;
    const char *v = getenv("ZESIM_COPY_MODEL");
    if (v && strchr(v, ':')) {
        *lat = strtod(v, NULL);
        *rate = strtod(strchr(v, ':') + 1, NULL);
    }
}

static void expect(ze_event_handle_t ev, double ns, const char *what)
{
    sh->x[sh->n].signal = ZT_H64(ev);
    sh->x[sh->n].ns = (uint64_t)(ns + 0.5);
    sh->x[sh->n].what = what;
    sh->n++;
}

static void child(void *arg)
{
    zt_env e;
    zt_setup(&e);
    ze_event_handle_t ev[32];
    zt_ts_events(&e, 32, ev);
    int ne = 0;

    /* launch latency: the first command on an idle engine */
    ze_command_list_handle_t lat = zt_imm_list(&e, 0, zt_compute_ordinal(e.dev[0]), 1,
                                               ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS, 0);
    sh->lat_list = ZT_H64(lat);
    sh->lat_t0 = zt_now_ns();
    CHECK_ZE(zeCommandListAppendBarrier(lat, NULL, 0, NULL));
    sh->lat_t1 = zt_now_ns();

    /* in order: each command's duration alone matters, the queue wait does not */
    ze_command_list_handle_t l =
        zt_imm_list(&e, 0, zt_compute_ordinal(e.dev[0]), 0, ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS,
                    ZT_CMDQUEUE_FLAG_IN_ORDER);
    ze_module_handle_t ms = zt_module_spirv(&e, 0, zt_spv_builtins, 4);
    static const zt_spv_kernel other = {"other", 0, {ZT_SPV_U32}};
    ze_module_handle_t mo = zt_module_spirv(&e, 0, &other, 1);
    ze_module_handle_t mt = zt_module_text(&e, 0,
                                           "ZESIM-MODULE\n"
                                           "kernel tm args=0 ns=30000 ns_per_item=2\n"
                                           "kernel vector_add args=3 ns=7000 ns_per_item=1\n"
                                           "kernel half args=0 ns_per_item=0.5\n");
    float *buf = zt_shared_alloc(&e, 0, 65536 * sizeof(float));
    memset(buf, 0, 65536 * sizeof(float));
    struct {
        ze_module_handle_t m;
        const char *name;
        uint32_t gs[3];
        ze_group_count_t gc;
        int text_ns; /* <0: from the environment model; else text module ns */
        double text_per;
    } ks[] = {
        {ms, "vector_add", {64, 1, 1}, {64, 1, 1}, -1, 0},   /* 4096 items */
        {ms, "busy", {8, 1, 1}, {1, 1, 1}, -1, 0},           /* 8 items */
        {mo, "other", {4, 4, 1}, {2, 2, 1}, -1, 0},          /* 64 items (2D) */
        {ms, "fill_u32", {16, 2, 2}, {4, 2, 2}, -1, 0},      /* 1024 items (3D) */
        {mt, "tm", {10, 1, 1}, {10, 1, 1}, 30000, 2},        /* 100 items */
        {mt, "vector_add", {32, 1, 1}, {2, 1, 1}, 7000, 1},  /* text, unless the env names it */
    };
    for (size_t i = 0; i < sizeof ks / sizeof ks[0]; i++) {
        ze_kernel_handle_t k = zt_kernel(ks[i].m, ks[i].name);
        CHECK_ZE(zeKernelSetGroupSize(k, ks[i].gs[0], ks[i].gs[1], ks[i].gs[2]));
        ze_kernel_properties_t kp = {.stype = ZE_STRUCTURE_TYPE_KERNEL_PROPERTIES};
        CHECK_ZE(zeKernelGetProperties(k, &kp));
        for (uint32_t a = 0; a < kp.numKernelArgs; a++) {
            void *p = buf;
            CHECK_ZE(zeKernelSetArgumentValue(k, a, sizeof p, &p));
        }
        double items = (double)ks[i].gs[0] * ks[i].gs[1] * ks[i].gs[2] * ks[i].gc.groupCountX *
                       ks[i].gc.groupCountY * ks[i].gc.groupCountZ;
        double ns, per;
        if (ks[i].text_ns >= 0) {
            /* README precedence: an env entry naming the kernel, then the module's values */
            double en, ep;
            if (kernel_model(ks[i].name, &en, &ep)) {
                ns = en;
                per = ep;
            } else {
                ns = ks[i].text_ns;
                per = ks[i].text_per;
            }
        } else {
            kernel_model(ks[i].name, &ns, &per);
        }
        CHECK_ZE(zeCommandListAppendLaunchKernel(l, k, &ks[i].gc, ev[ne], 0, NULL));
        expect(ev[ne++], ns + per * items, ks[i].name);
    }
    /* A text kernel with only ns_per_item: the README says the missing ns is 0. */
    {
        ze_kernel_handle_t k = zt_kernel(mt, "half");
        CHECK_ZE(zeKernelSetGroupSize(k, 8, 1, 1));
        CHECK_ZE(zt_launch(l, k, 1, ev[ne], 0, NULL));
        sh->half_ev = ZT_H64(ev[ne++]);
    }

    double clat, rate;
    copy_model(&clat, &rate);
    uint8_t *h = zt_host_alloc(&e, 200000), *d = zt_device_alloc(&e, 0, 200000);
    memset(h, 1, 200000);
    CHECK_ZE(zeCommandListAppendMemoryCopy(l, d, h, 100000, ev[ne], 0, NULL));
    expect(ev[ne++], clat + 100000 / rate, "copy 100000 B");
    uint32_t pat = 5;
    CHECK_ZE(zeCommandListAppendMemoryFill(l, d, &pat, 4, 40000, ev[ne], 0, NULL));
    expect(ev[ne++], clat + 40000 / rate, "fill 40000 B");
    ze_copy_region_t r = {0, 0, 0, 100, 20, 1};
    CHECK_ZE(zeCommandListAppendMemoryCopyRegion(l, d, &r, 200, 0, h, &r, 100, 0, ev[ne], 0, NULL));
    expect(ev[ne++], clat + 2000 / rate, "region copy 2000 B");
    ze_image_handle_t img = zt_image(&e, 0, ZE_IMAGE_TYPE_2D, ZE_IMAGE_FORMAT_LAYOUT_8_8_8_8,
                                     ZE_IMAGE_FORMAT_TYPE_UINT, 100, 10, 1);
    CHECK_ZE(zeCommandListAppendImageCopyFromMemory(l, img, h, NULL, ev[ne], 0, NULL));
    expect(ev[ne++], clat + 4000 / rate, "image copy 4000 B");
    /* copy-only engine: same model */
    ze_command_list_handle_t cl = zt_imm_list(&e, 0, zt_copy_ordinal(e.dev[0]), 0,
                                              ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS, 0);
    uint8_t *h2 = zt_host_alloc(&e, 80000), *d2 = zt_device_alloc(&e, 0, 80000);
    memset(d2, 2, 80000);
    CHECK_ZE(zeCommandListAppendMemoryCopy(cl, h2, d2, 80000, ev[ne], 0, NULL));
    expect(ev[ne++], clat + 80000 / rate, "copy engine 80000 B");

    double sync = (double)zt_env_ll("ZESIM_SYNC_OP_NS", 200);
    CHECK_ZE(zeCommandListAppendBarrier(l, ev[ne], 0, NULL));
    expect(ev[ne++], sync, "barrier");
    void *range = d;
    size_t rsz = 64;
    CHECK_ZE(zeCommandListAppendMemoryRangesBarrier(l, 1, &rsz, (const void **)&range, ev[ne], 0,
                                                    NULL));
    expect(ev[ne++], sync, "ranges barrier");
    CHECK_ZE(zeCommandListAppendSignalEvent(l, ev[ne]));
    expect(ev[ne++], sync, "signal");
    CHECK_ZE(zeCommandListAppendWriteGlobalTimestamp(l, (uint64_t *)d, ev[ne], 0, NULL));
    expect(ev[ne++], sync, "write_ts");
    CHECK_ZE(zeCommandListAppendQueryKernelTimestamps(l, 1, &ev[0], d + 64, NULL, ev[ne], 0,
                                                      NULL));
    expect(ev[ne++], sync, "query_ts");
    CHECK_ZE(zeCommandListAppendBarrier(l, ev[ne], 0, NULL));
    CHECK_ZE(zeEventHostSynchronize(ev[ne], ZT_FOREVER));
    CHECK_ZE(zeEventHostSynchronize(ev[ne - 2], ZT_FOREVER));
    for (int i = 0; i < ne; i++)
        CHECK_ZE(zeEventHostSynchronize(ev[i], ZT_FOREVER));
    /* the latency probe must have executed before exit, or it is (rightly) not in the truth */
    CHECK_ZE(zeEventHostReset(ev[ne]));
    CHECK_ZE(zeCommandListAppendBarrier(lat, ev[ne], 0, NULL));
    CHECK_ZE(zeEventHostSynchronize(ev[ne], ZT_FOREVER));
    zt_teardown(&e);
}

static void check(const zt_truth *t)
{
    for (int i = 0; i < sh->n; i++) {
        zt_truth_query q = ZT_TRUTH_QUERY_INIT;
        q.signal = sh->x[i].signal;
        const zt_truth_op *op = zt_truth_find(t, &q);
        if (!zt_ok(op != NULL, "%s: in truth", sh->x[i].what))
            continue;
        zt_is_u64(op->host_end - op->host_start, sh->x[i].ns, "%s: host_end - host_start",
                  sh->x[i].what);
    }
    zt_truth_query qh = ZT_TRUTH_QUERY_INIT;
    qh.signal = sh->half_ev;
    const zt_truth_op *half = zt_truth_find(t, &qh);
    if (zt_ok(half != NULL, "text kernel with only ns_per_item in truth"))
        zt_is_u64(half->host_end - half->host_start, 4, "ns_per_item=0.5 alone, 8 items: 0 + 0.5 * 8 ns");
    uint64_t sync = (uint64_t)zt_env_ll("ZESIM_SYNC_OP_NS", 200);
    zt_truth_query q = ZT_TRUTH_QUERY_INIT;
    q.list = sh->lat_list;
    const zt_truth_op *op = zt_truth_find(t, &q);
    uint64_t lat = (uint64_t)zt_env_ll("ZESIM_LAUNCH_LATENCY_NS", 2000);
    if (zt_ok(op != NULL, "latency probe in truth")) {
        zt_between(op->host_start, sh->lat_t0 + lat, sh->lat_t1 + lat,
                   "first command starts at submission + %" PRIu64 " ns", lat);
        zt_is_u64(op->host_end - op->host_start, sync, "barrier lasts ZESIM_SYNC_OP_NS");
    }
}

static void child_wait_reset(void *arg)
{
    zt_env e;
    zt_setup(&e);
    ze_event_handle_t ev[4];
    zt_ts_events(&e, 4, ev);
    ze_command_list_handle_t l =
        zt_imm_list(&e, 0, zt_compute_ordinal(e.dev[0]), 0, ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS,
                    ZT_CMDQUEUE_FLAG_IN_ORDER);
    CHECK_ZE(zeEventHostSignal(ev[0]));
    CHECK_ZE(zeCommandListAppendWaitOnEvents(l, 1, &ev[0]));
    CHECK_ZE(zeCommandListAppendEventReset(l, ev[0]));
    CHECK_ZE(zeCommandListAppendSignalEvent(l, ev[1]));
    CHECK_ZE(zeEventHostSynchronize(ev[1], ZT_FOREVER));
    zt_teardown(&e);
}

static void check_wait_reset(const zt_truth *t)
{
    uint64_t sync = (uint64_t)zt_env_ll("ZESIM_SYNC_OP_NS", 200);
    const char *kinds[] = {"wait", "reset", "signal"};
    for (int i = 0; i < 3; i++) {
        zt_truth_query q = ZT_TRUTH_QUERY_INIT;
        q.kind = kinds[i];
        const zt_truth_op *op = zt_truth_find(t, &q);
        if (zt_ok(op != NULL, "%s in truth", kinds[i]))
            zt_is_u64(op->host_end - op->host_start, sync, "%s lasts ZESIM_SYNC_OP_NS", kinds[i]);
    }
}

int main(int argc, char **argv)
{
    zt_init(argc, argv);
    sh = zt_shm(sizeof *sh);
    zt_fork_check("model", child, NULL, check);
    zt_fork_check("wait_reset", child_wait_reset, NULL, check_wait_reset);
    return zt_done();
}
