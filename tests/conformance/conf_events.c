/* SPDX-License-Identifier: MIT */
/*
 * Events and timestamps: host signal/reset/synchronize(timeout)/query, device signal/wait/
 * reset, wait lists on every Append that has one, kernel timestamps (= truth, masked to
 * kernelTimestampValidBits, duration = model in device ticks, across a counter wrap),
 * INVALID_ARGUMENT / NOT_READY rules, re-signal semantics, AppendQueryKernelTimestamps on a
 * compute list (written at execution time), AppendWriteGlobalTimestamp.
 * Modes: (none) everything above; "qkt_error" (ZESIM_COPY_QKT=error: INVALID_ARGUMENT on a
 * copy-only list); "qkt_abort" (default: the process aborts).
 */
#include "zt.h"
#include "zt_truth.h"

#include <math.h>

static const char kmod_text[] = "ZESIM-MODULE\n"
                                "kernel k20 args=0 ns=20000000 ns_per_item=0\n"
                                "kernel k100 args=0 ns=100000000 ns_per_item=0\n"
                                "kernel k10 args=0 ns=10000000 ns_per_item=0\n"
                                "kernel k5 args=0 ns=5000000 ns_per_item=0\n"
                                "kernel k1 args=0 ns=1000000 ns_per_item=0\n"
                                "kernel fill_u32 args=2\n";

static ze_kernel_handle_t kern(ze_module_handle_t m, const char *name)
{
    ze_kernel_handle_t k = zt_kernel(m, name);
    CHECK_ZE(zeKernelSetGroupSize(k, 1, 1, 1));
    return k;
}

enum { NKINDS = 17 };

struct shared {
    /* host */
    /* device ops */
    uint64_t dev_list, ev_a, ev_b, t_sig_a;
    /* wait lists */
    uint64_t gate, t_gate, wl_list;
    uint64_t wl_signal[NKINDS];
    int wl_count;
    /* kernel timestamps */
    int nts;
    uint64_t ts_ev[8];
    ze_kernel_timestamp_result_t ts[8];
    uint64_t ts_ns[8];
    uint64_t wrap_ev;
    ze_kernel_timestamp_result_t wrap_ts;
    /* re-signal */
    uint64_t rs_ev, rs_k3_list, rs_k3_after, rs_k4_list, rs_t_sig;
    ze_kernel_timestamp_result_t rs_ts;
    /* query / write timestamps */
    ze_kernel_timestamp_result_t qkt[2], qkt_ref[2], qkt_off[2];
    uint64_t wgt_value, wgt_list, wgt_copy_value, wgt_copy_list;
    uint32_t ts_bits, kts_bits;
};

static struct shared *sh;

/* ---- host-side event operations (no truth needed) ----------------------------------------- */

static void test_host(void)
{
    zt_env e;
    zt_setup(&e);
    ze_event_pool_handle_t pool = zt_pool(&e, 4, ZE_EVENT_POOL_FLAG_HOST_VISIBLE);
    ze_event_handle_t ev = zt_event(pool, 0), ev2 = zt_event(pool, 1);
    IS_ZE(zeEventQueryStatus(ev), ZE_RESULT_NOT_READY, "new event NOT_READY");
    uint64_t t0 = zt_now_ns();
    IS_ZE(zeEventHostSynchronize(ev, 20000000), ZE_RESULT_NOT_READY,
          "zeEventHostSynchronize(20 ms) on an unsignalled event: NOT_READY");
    uint64_t dt = zt_now_ns() - t0;
    zt_between(dt, 18000000, 200000000, "returned after about the 20 ms timeout (%.3f ms)",
               (double)dt / 1e6);
    IS_ZE(zeEventHostSynchronize(ev, 0), ZE_RESULT_NOT_READY, "sync(0) unsignalled");
    IS_ZE(zeEventHostSignal(ev), ZE_RESULT_SUCCESS, "zeEventHostSignal");
    IS_ZE(zeEventQueryStatus(ev), ZE_RESULT_SUCCESS, "query after host signal");
    IS_ZE(zeEventHostSynchronize(ev, 0), ZE_RESULT_SUCCESS, "sync(0) signalled");
    IS_ZE(zeEventHostSignal(ev), ZE_RESULT_SUCCESS, "signal again (allowed)");
    IS_ZE(zeEventQueryStatus(ev), ZE_RESULT_SUCCESS, "still signalled");
    IS_ZE(zeEventHostReset(ev), ZE_RESULT_SUCCESS, "zeEventHostReset");
    IS_ZE(zeEventQueryStatus(ev), ZE_RESULT_NOT_READY, "NOT_READY after reset");
    IS_ZE(zeEventQueryStatus(ev2), ZE_RESULT_NOT_READY, "other event of the pool untouched");

    /* a kernel signals a non-timestamp event: no kernel timestamp for it */
    ze_module_handle_t m = zt_module_text(&e, 0, kmod_text);
    ze_kernel_handle_t k1 = kern(m, "k1");
    ze_command_list_handle_t l = zt_imm_compute(&e, 0);
    ze_kernel_timestamp_result_t ts;
    IS_ZE(zeEventQueryKernelTimestamp(ev2, &ts), ZE_RESULT_ERROR_INVALID_ARGUMENT,
          "zeEventQueryKernelTimestamp on a pool without KERNEL_TIMESTAMP (unsignalled)");
    CHECK_ZE(zt_launch(l, k1, 1, ev2, 0, NULL));
    /* a host thread blocks in sync while the device signals */
    IS_ZE(zeEventHostSynchronize(ev2, ZT_FOREVER), ZE_RESULT_SUCCESS, "device signal wakes sync");
    IS_ZE(zeEventQueryKernelTimestamp(ev2, &ts), ZE_RESULT_ERROR_INVALID_ARGUMENT,
          "zeEventQueryKernelTimestamp on a pool without KERNEL_TIMESTAMP (signalled)");

    /* a device-only pool (no HOST_VISIBLE): device signal and device wait between commands */
    ze_event_pool_handle_t dpool = zt_pool(&e, 1, 0);
    ze_event_handle_t dev_ev = zt_event(dpool, 0);
    ze_event_pool_handle_t hpool = zt_pool(&e, 1, ZE_EVENT_POOL_FLAG_HOST_VISIBLE);
    ze_event_handle_t done = zt_event(hpool, 0);
    ze_kernel_handle_t k5 = kern(m, "k5");
    ze_command_list_handle_t l2 = zt_imm_compute(&e, 0);
    CHECK_ZE(zt_launch(l2, k5, 1, dev_ev, 0, NULL));
    uint64_t t_dev = zt_now_ns();
    CHECK_ZE(zt_launch(l, k1, 1, done, 1, &dev_ev));
    IS_ZE(zeEventHostSynchronize(done, ZT_FOREVER), ZE_RESULT_SUCCESS,
          "device-only pool: a device wait on a device signal completes");
    zt_ok(zt_now_ns() - t_dev >= 5000000u, "and the waiter ran after the 5 ms signaller");

    /* IPC is not modelled */
    ze_ipc_event_pool_handle_t ipc;
    IS_ZE(zeEventPoolGetIpcHandle(pool, &ipc), ZE_RESULT_ERROR_UNSUPPORTED_FEATURE,
          "zeEventPoolGetIpcHandle: UNSUPPORTED_FEATURE");
    void *hm = zt_host_alloc(&e, 64);
    ze_ipc_mem_handle_t mipc;
    IS_ZE(zeMemGetIpcHandle(e.ctx, hm, &mipc), ZE_RESULT_ERROR_UNSUPPORTED_FEATURE,
          "zeMemGetIpcHandle: UNSUPPORTED_FEATURE");
    zt_destroy(l);
    zt_destroy(ev);
    zt_destroy(ev2);
    zt_destroy(pool);
    zt_teardown(&e);
}

static void child_host(void *arg)
{
    test_host();
}

/* ---- device-side signal / wait / reset ---------------------------------------------------- */

static void test_device_ops(const zt_env *e, ze_event_handle_t *ev)
{
    ze_command_list_handle_t l =
        zt_imm_list(e, 0, zt_compute_ordinal(e->dev[0]), 0, ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS,
                    ZT_CMDQUEUE_FLAG_IN_ORDER);
    sh->dev_list = ZT_H64(l);
    sh->ev_a = ZT_H64(ev[0]);
    sh->ev_b = ZT_H64(ev[1]);
    IS_ZE(zeCommandListAppendWaitOnEvents(l, 1, &ev[0]), ZE_RESULT_SUCCESS,
          "AppendWaitOnEvents");
    IS_ZE(zeCommandListAppendSignalEvent(l, ev[1]), ZE_RESULT_SUCCESS, "AppendSignalEvent");
    zt_sleep_ms(10);
    IS_ZE(zeEventQueryStatus(ev[1]), ZE_RESULT_NOT_READY, "device signal held by the device wait");
    sh->t_sig_a = zt_now_ns();
    CHECK_ZE(zeEventHostSignal(ev[0]));
    IS_ZE(zeEventHostSynchronize(ev[1], ZT_FOREVER), ZE_RESULT_SUCCESS,
          "device signal after the host signalled the waited event");
    IS_ZE(zeCommandListAppendEventReset(l, ev[1]), ZE_RESULT_SUCCESS, "AppendEventReset");
    CHECK_ZE(zeCommandListAppendSignalEvent(l, ev[2]));
    CHECK_ZE(zeEventHostSynchronize(ev[2], ZT_FOREVER));
    IS_ZE(zeEventQueryStatus(ev[1]), ZE_RESULT_NOT_READY, "device reset un-signalled the event");
}

static void check_device_ops(const zt_truth *t)
{
    zt_truth_query q = ZT_TRUTH_QUERY_INIT;
    q.list = sh->dev_list;
    zt_truth_sel s;
    zt_truth_select(t, &q, &s);
    zt_truth_sel_sort(&s, ZT_BY_CMD);
    uint64_t sync_ns = (uint64_t)zt_env_ll("ZESIM_SYNC_OP_NS", 200);
    if (zt_ok(s.n == 4, "device ops: wait, signal, reset, signal in truth (%zu)", s.n)) {
        zt_is_str(s.ops[0]->kind, "wait", "kind wait");
        zt_ok(s.ops[0]->nwaits == 1 && s.ops[0]->waits[0] == sh->ev_a, "wait: waits = [A]");
        zt_ok(s.ops[0]->host_start >= sh->t_sig_a, "wait ended only after the host signal");
        zt_is_str(s.ops[1]->kind, "signal", "kind signal");
        zt_is_u64(s.ops[1]->signal, sh->ev_b, "signal: signal = B");
        zt_is_str(s.ops[2]->kind, "reset", "kind reset");
        int dur = 1;
        for (int i = 0; i < 4; i++)
            if (s.ops[i]->host_end - s.ops[i]->host_start != sync_ns)
                dur = 0;
        zt_ok(dur, "signal/wait/reset last ZESIM_SYNC_OP_NS (%" PRIu64 ")", sync_ns);
    }
    zt_truth_sel_free(&s);
}

/* ---- wait lists on every Append kind ------------------------------------------------------ */

static void test_wait_lists(const zt_env *e, ze_event_handle_t *ev, ze_module_handle_t m)
{
    uint32_t ord = zt_compute_ordinal(e->dev[0]);
    ze_command_list_handle_t l = zt_imm_list(e, 0, ord, 2, ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS, 0);
    sh->wl_list = ZT_H64(l);
    ze_event_handle_t gate = ev[0];
    sh->gate = ZT_H64(gate);
    ze_event_handle_t *sig = &ev[1];
    enum { SZ = 4096 };
    uint8_t *src = zt_host_alloc(e, SZ), *dst = zt_device_alloc(e, 0, SZ * 8);
    memset(src, 0x5a, SZ);
    memset(dst, 0, SZ * 8);
    ze_context_desc_t cd = {ZE_STRUCTURE_TYPE_CONTEXT_DESC, NULL, 0};
    ze_context_handle_t ctx2 = NULL;
    CHECK_ZE(zeContextCreate(e->driver, &cd, &ctx2));
    ze_host_mem_alloc_desc_t hd = {ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC, NULL, 0};
    uint8_t *src2 = NULL;
    CHECK_ZE(zeMemAllocHost(ctx2, &hd, SZ, 64, (void **)&src2));
    memset(src2, 0x33, SZ);
    ze_image_handle_t ia = zt_image(e, 0, ZE_IMAGE_TYPE_2D, ZE_IMAGE_FORMAT_LAYOUT_8_8_8_8,
                                    ZE_IMAGE_FORMAT_TYPE_UINT, 16, 16, 1);
    ze_image_handle_t ib = zt_image(e, 0, ZE_IMAGE_TYPE_2D, ZE_IMAGE_FORMAT_LAYOUT_8_8_8_8,
                                    ZE_IMAGE_FORMAT_TYPE_UINT, 16, 16, 1);
    ze_kernel_handle_t fill = zt_kernel(m, "fill_u32");
    CHECK_ZE(zeKernelSetGroupSize(fill, 16, 1, 1));
    uint32_t *fdst = (uint32_t *)(dst + SZ * 7);
    uint32_t val = 0xC0FFEEu;
    CHECK_ZE(zeKernelSetArgumentValue(fill, 0, sizeof fdst, &fdst));
    CHECK_ZE(zeKernelSetArgumentValue(fill, 1, sizeof val, &val));
    ze_kernel_handle_t k1 = kern(m, "k1");
    ze_group_count_t *gc = zt_shared_alloc(e, 0, sizeof *gc * 2);
    gc[0] = (ze_group_count_t){1, 1, 1};
    gc[1] = (ze_group_count_t){1, 1, 1};
    uint32_t *count = zt_shared_alloc(e, 0, sizeof *count);
    *count = 2;
    ze_kernel_handle_t two[2] = {k1, k1};
    ze_copy_region_t reg = {0, 0, 0, 64, 4, 1};
    ze_image_region_t ir = {0, 0, 0, 16, 16, 1};
    ze_image_region_t ir2 = {0, 0, 0, 8, 8, 1};
    void *range = dst;
    size_t range_size = SZ;
    ze_kernel_timestamp_result_t *qdst = zt_device_alloc(e, 0, sizeof *qdst);
    uint64_t *wdst = zt_device_alloc(e, 0, sizeof *wdst);
    uint32_t pattern = 0x01020304u;
    ze_group_count_t one = {1, 1, 1};
    ze_event_handle_t done_k = ev[NKINDS + 1]; /* a completed kernel for QueryKernelTimestamps */
    CHECK_ZE(zt_launch(l, k1, 1, done_k, 0, NULL));
    CHECK_ZE(zeEventHostSynchronize(done_k, ZT_FOREVER));

    int n = 0;
#define WL(call, what)                                                                        \
    do {                                                                                      \
        IS_ZE(call, ZE_RESULT_SUCCESS, "append %s with a wait list", what);                   \
        sh->wl_signal[n] = ZT_H64(sig[n]);                                                    \
        n++;                                                                                  \
    } while (0)
    WL(zeCommandListAppendLaunchKernel(l, fill, &(ze_group_count_t){16, 1, 1}, sig[n], 1, &gate),
       "LaunchKernel");
    WL(zeCommandListAppendLaunchCooperativeKernel(l, k1, &one, sig[n], 1, &gate),
       "LaunchCooperativeKernel");
    WL(zeCommandListAppendLaunchKernelIndirect(l, k1, gc, sig[n], 1, &gate),
       "LaunchKernelIndirect");
    WL(zeCommandListAppendLaunchMultipleKernelsIndirect(l, 2, two, count, gc, sig[n], 1, &gate),
       "LaunchMultipleKernelsIndirect");
    WL(zeCommandListAppendMemoryCopy(l, dst, src, SZ, sig[n], 1, &gate), "MemoryCopy");
    WL(zeCommandListAppendMemoryCopyRegion(l, dst + SZ, &reg, 64, 0, src, &reg, 64, 0, sig[n], 1,
                                           &gate),
       "MemoryCopyRegion");
    WL(zeCommandListAppendMemoryCopyFromContext(l, dst + 2 * SZ, ctx2, src2, SZ, sig[n], 1,
                                                &gate),
       "MemoryCopyFromContext");
    WL(zeCommandListAppendMemoryFill(l, dst + 3 * SZ, &pattern, 4, SZ, sig[n], 1, &gate),
       "MemoryFill");
    WL(zeCommandListAppendImageCopyFromMemory(l, ia, src, &ir, sig[n], 1, &gate),
       "ImageCopyFromMemory");
    WL(zeCommandListAppendImageCopy(l, ib, ia, sig[n], 1, &sig[n - 1]), "ImageCopy");
    ze_event_handle_t gate_and_prev[2] = {gate, sig[n - 1]};
    WL(zeCommandListAppendImageCopyRegion(l, ib, ia, &ir2, &ir2, sig[n], 2, gate_and_prev),
       "ImageCopyRegion");
    WL(zeCommandListAppendImageCopyToMemory(l, dst + 4 * SZ, ib, &ir, sig[n], 1, &sig[n - 1]),
       "ImageCopyToMemory");
    WL(zeCommandListAppendBarrier(l, sig[n], 1, &gate), "Barrier");
    WL(zeCommandListAppendMemoryRangesBarrier(l, 1, &range_size, (const void **)&range, sig[n],
                                              1, &gate),
       "MemoryRangesBarrier");
    WL(zeCommandListAppendQueryKernelTimestamps(l, 1, &done_k, qdst, NULL, sig[n], 1, &gate),
       "QueryKernelTimestamps");
    WL(zeCommandListAppendWriteGlobalTimestamp(l, wdst, sig[n], 1, &gate),
       "WriteGlobalTimestamp");
    IS_ZE(zeCommandListAppendWaitOnEvents(l, 1, &gate), ZE_RESULT_SUCCESS, "AppendWaitOnEvents");
    sh->wl_count = n;
#undef WL
    memset(qdst, 0, sizeof *qdst);
    *wdst = 0;
    zt_sleep_ms(15);
    int none = 1;
    for (int i = 0; i < n; i++)
        if (zeEventQueryStatus(sig[i]) != ZE_RESULT_NOT_READY)
            none = 0;
    zt_ok(none, "no command ran before its wait event was signalled");
    int untouched = 1;
    for (int i = 0; i < 8 * SZ; i++)
        if (dst[i])
            untouched = 0;
    zt_ok(untouched && qdst->global.kernelStart == 0 && *wdst == 0,
          "no bytes moved before the wait event was signalled");
    sh->t_gate = zt_now_ns();
    CHECK_ZE(zeEventHostSignal(gate));
    int all = 1;
    for (int i = 0; i < n; i++)
        if (zeEventHostSynchronize(sig[i], 5000000000ull) != ZE_RESULT_SUCCESS)
            all = 0;
    zt_ok(all, "all %d commands completed after the signal", n);
    zt_ok(memcmp(dst, src, SZ) == 0, "MemoryCopy moved bytes");
    zt_ok(memcmp(dst + SZ, src, 64 * 4) == 0, "MemoryCopyRegion moved bytes");
    zt_ok(memcmp(dst + 2 * SZ, src2, SZ) == 0, "MemoryCopyFromContext moved bytes");
    uint32_t f0;
    memcpy(&f0, dst + 3 * SZ + 100 * 4, 4);
    zt_is_u64(f0, pattern, "MemoryFill wrote the pattern");
    zt_ok(memcmp(dst + 4 * SZ, src, 16 * 16 * 4) == 0, "image round trip moved bytes");
    zt_is_u64(fdst[15], 0xC0FFEEu, "fill_u32 kernel ran");
    ze_kernel_timestamp_result_t ref;
    CHECK_ZE(zeEventQueryKernelTimestamp(done_k, &ref));
    zt_ok(memcmp(qdst, &ref, sizeof ref) == 0, "QueryKernelTimestamps wrote after the gate");
    zt_ok(*wdst != 0, "WriteGlobalTimestamp wrote after the gate");
    zt_destroy(ia);
    zt_destroy(ib);
    zt_free(ctx2, src2);
    zt_destroy(ctx2);
}

static void check_wait_lists(const zt_truth *t)
{
    zt_truth_query q = ZT_TRUTH_QUERY_INIT;
    q.list = sh->wl_list;
    zt_truth_sel s;
    zt_truth_select(t, &q, &s);
    /* 1 setup kernel + 16 commands (multi-indirect: 2 lines) + the wait = 19 lines */
    zt_is_int(s.n, 1 + sh->wl_count + 1 + 1, "wait-list list: every command executed");
    int waited = 0, late = 0, sig = 0, multi = 0;
    uint64_t multi_cmd[2] = {0, 0};
    for (size_t i = 0; i < s.n; i++) {
        const zt_truth_op *op = s.ops[i];
        if (op->cmd == 0)
            continue;
        if (op->launch && strcmp(op->launch, "multi_indirect") == 0) {
            /* one command, one line per kernel: the waits may sit on the first line only */
            if (multi < 2)
                multi_cmd[multi] = op->cmd;
            if (multi++ && op->nwaits == 0) {
                waited++; /* covered by the first line */
                if (op->host_start < sh->t_gate)
                    late++;
                for (int k = 0; k < sh->wl_count; k++)
                    if (op->signal == sh->wl_signal[k])
                        sig++;
                continue;
            }
        }
        int has_gate = 0;
        for (size_t w = 0; w < op->nwaits; w++)
            if (op->waits[w] == sh->gate)
                has_gate = 1;
        int chained = op->nwaits >= 1 && !has_gate; /* image copies chained on earlier ones */
        if (has_gate || chained)
            waited++;
        if (op->host_start < sh->t_gate)
            late++;
        for (int k = 0; k < sh->wl_count; k++)
            if (op->signal == sh->wl_signal[k])
                sig++;
    }
    zt_is_int(waited, (long long)s.n - 1, "every command lists its wait event in truth waits");
    zt_is_int(multi, 2, "multi-indirect launch of 2 kernels: 2 lines");
    zt_is_u64(multi_cmd[1], multi_cmd[0], "both lines of one multi-indirect append share cmd");
    zt_truth_sel_sort(&s, ZT_BY_CMD);
    uint64_t maxcmd = s.n ? s.ops[s.n - 1]->cmd : 0;
    zt_is_u64(maxcmd, (uint64_t)sh->wl_count + 1,
              "cmd is the append counter (1 setup + %d appends + 1 wait -> last cmd %d)",
              sh->wl_count, sh->wl_count + 1);
    zt_is_int(late, 0, "no command started before the gate was signalled");
    zt_ok(sig >= sh->wl_count, "truth signal fields name the signal events (%d)", sig);
    const char *kinds[] = {"kernel", "copy", "copy_region", "copy_from_context", "fill",
                           "image_copy", "image_copy_region", "image_copy_to_memory",
                           "image_copy_from_memory", "barrier", "ranges_barrier", "query_ts",
                           "write_ts", "wait"};
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
        zt_truth_query qk = ZT_TRUTH_QUERY_INIT;
        qk.list = sh->wl_list;
        qk.kind = kinds[k];
        zt_ok(zt_truth_count(t, &qk) >= 1, "truth has a '%s' line with a wait list", kinds[k]);
    }
    zt_truth_query ql = ZT_TRUTH_QUERY_INIT;
    ql.list = sh->wl_list;
    ql.launch = "cooperative";
    zt_is_int(zt_truth_count(t, &ql), 1, "launch cooperative");
    ql.launch = "indirect";
    zt_is_int(zt_truth_count(t, &ql), 1, "launch indirect");
    ql.launch = "multi_indirect";
    zt_is_int(zt_truth_count(t, &ql), 2, "launch multi_indirect: one line per kernel");
    zt_truth_sel_free(&s);
}

/* ---- kernel timestamps -------------------------------------------------------------------- */

static void test_kernel_ts(const zt_env *e, ze_event_handle_t *ev, ze_module_handle_t m)
{
    ze_command_list_handle_t l = zt_imm_compute(e, 0);
    ze_kernel_handle_t k20 = kern(m, "k20"), k5 = kern(m, "k5"), k1 = kern(m, "k1");
    ze_kernel_timestamp_result_t ts;
    IS_ZE(zeEventQueryKernelTimestamp(ev[0], &ts), ZE_RESULT_NOT_READY,
          "kernel timestamp NOT_READY before any signal");
    CHECK_ZE(zt_launch(l, k20, 1, ev[0], 0, NULL));
    IS_ZE(zeEventQueryKernelTimestamp(ev[0], &ts), ZE_RESULT_NOT_READY,
          "kernel timestamp NOT_READY while the kernel runs");
    CHECK_ZE(zt_launch(l, k5, 1, ev[1], 0, NULL));
    CHECK_ZE(zt_launch(l, k1, 4, ev[2], 0, NULL));
    sh->ts_ns[0] = 20000000;
    sh->ts_ns[1] = 5000000;
    sh->ts_ns[2] = 1000000;
    sh->nts = 3;
    for (int i = 0; i < 3; i++) {
        CHECK_ZE(zeEventHostSynchronize(ev[i], ZT_FOREVER));
        IS_ZE(zeEventQueryKernelTimestamp(ev[i], &sh->ts[i]), ZE_RESULT_SUCCESS,
              "zeEventQueryKernelTimestamp %d", i);
        sh->ts_ev[i] = ZT_H64(ev[i]);
    }
}

static void check_kernel_ts(const zt_truth *t)
{
    const zt_truth_device *d = zt_truth_device_find(t, 0);
    if (!zt_ok(d != NULL, "device 0 truth"))
        return;
    unsigned kb = d->kernel_ts_bits;
    zt_is_int(kb, sh->kts_bits, "truth kernel_ts_bits = kernelTimestampValidBits");
    for (int i = 0; i < sh->nts; i++) {
        zt_truth_query q = ZT_TRUTH_QUERY_INIT;
        q.signal = sh->ts_ev[i];
        q.kind = "kernel";
        const zt_truth_op *op = zt_truth_find(t, &q);
        if (!zt_ok(op != NULL, "ts %d: truth line", i))
            continue;
        const ze_kernel_timestamp_result_t *r = &sh->ts[i];
        zt_is_u64(r->global.kernelStart, op->ts_start, "ts %d: global start = truth ts_start", i);
        zt_is_u64(r->global.kernelEnd, op->ts_end, "ts %d: global end = truth ts_end", i);
        zt_ok(r->context.kernelStart == r->global.kernelStart &&
                  r->context.kernelEnd == r->global.kernelEnd,
              "ts %d: context data = global data", i);
        zt_ok(r->global.kernelStart == zt_mask_bits(r->global.kernelStart, kb) &&
                  r->global.kernelEnd == zt_mask_bits(r->global.kernelEnd, kb),
              "ts %d: values masked to %u bits", i, kb);
        uint64_t want_s = zt_mask_bits(zt_truth_full_ticks(d, op->host_start), kb);
        uint64_t want_e = zt_mask_bits(zt_truth_full_ticks(d, op->host_end), kb);
        zt_ok(zt_mask_bits(op->ts_start - want_s + 1, kb) <= 2 &&
                  zt_mask_bits(op->ts_end - want_e + 1, kb) <= 2,
              "ts %d: ts = full_ticks(host) mod 2^%u (+-1)", i, kb);
        zt_is_u64(op->host_end - op->host_start, sh->ts_ns[i], "ts %d: host duration = model", i);
        double want = zt_truth_ticks_for_ns(d, (double)sh->ts_ns[i]);
        double got = (double)zt_mask_bits(r->global.kernelEnd - r->global.kernelStart, kb);
        zt_near(got, want, 1.0, "ts %d: duration in ticks = ns*hz*(1+ppm/1e6)/1e9", i);
    }
    /* the kernel that straddles the counter wrap */
    zt_truth_query q = ZT_TRUTH_QUERY_INIT;
    q.signal = sh->wrap_ev;
    const zt_truth_op *op = zt_truth_find(t, &q);
    if (!zt_ok(op != NULL, "wrap kernel in truth"))
        return;
    uint64_t fs = zt_truth_full_ticks(d, op->host_start), fe = zt_truth_full_ticks(d, op->host_end);
    int straddles = kb < 64 && (fs >> kb) != (fe >> kb);
    zt_ok(straddles, "the 100 ms kernel straddles a 2^%u wrap", kb);
    if (straddles)
        zt_ok(sh->wrap_ts.global.kernelEnd < sh->wrap_ts.global.kernelStart,
              "end < start across the wrap");
    zt_is_u64(sh->wrap_ts.global.kernelStart, op->ts_start, "wrap: start = truth");
    zt_is_u64(sh->wrap_ts.global.kernelEnd, op->ts_end, "wrap: end = truth");
    double got = (double)zt_mask_bits(sh->wrap_ts.global.kernelEnd - sh->wrap_ts.global.kernelStart,
                                      kb);
    zt_near(got, zt_truth_ticks_for_ns(d, 100e6), 1.0, "wrap: duration mod 2^%u = model", kb);
}

/* ---- re-signal ---------------------------------------------------------------------------- */

static void test_resignal(const zt_env *e, ze_event_handle_t *ev, ze_module_handle_t m)
{
    ze_command_list_handle_t l =
        zt_imm_list(e, 0, zt_compute_ordinal(e->dev[0]), 3, ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS,
                    ZT_CMDQUEUE_FLAG_IN_ORDER);
    ze_kernel_handle_t k5 = kern(m, "k5"), k10 = kern(m, "k10"), k1 = kern(m, "k1");
    ze_event_handle_t E = ev[0];
    sh->rs_ev = ZT_H64(E);
    CHECK_ZE(zt_launch(l, k5, 1, E, 0, NULL));
    CHECK_ZE(zeEventHostSynchronize(E, ZT_FOREVER));
    ze_kernel_timestamp_result_t first;
    CHECK_ZE(zeEventQueryKernelTimestamp(E, &first));
    CHECK_ZE(zt_launch(l, k10, 1, E, 0, NULL)); /* re-signal without reset */
    IS_ZE(zeEventQueryStatus(E), ZE_RESULT_SUCCESS, "signalled event stays signalled");
    CHECK_ZE(zeCommandListAppendSignalEvent(l, ev[1]));
    CHECK_ZE(zeEventHostSynchronize(ev[1], ZT_FOREVER));
    IS_ZE(zeEventQueryStatus(E), ZE_RESULT_SUCCESS, "still signalled after the second signal");
    CHECK_ZE(zeEventQueryKernelTimestamp(E, &sh->rs_ts));
    zt_ok(sh->rs_ts.global.kernelStart != first.global.kernelStart,
          "newest operation's timestamps replaced the old ones");

    /* a waiter on a still-signalled event does not wait */
    ze_command_list_handle_t l3 = zt_imm_compute(e, 0);
    sh->rs_k3_list = ZT_H64(l3);
    CHECK_ZE(zt_launch(l3, k1, 1, ev[2], 1, &E));
    sh->rs_k3_after = zt_now_ns();
    IS_ZE(zeEventHostSynchronize(ev[2], 2000000000ull), ZE_RESULT_SUCCESS,
          "waiter on a still-signalled event runs");
    /* after a reset it waits again */
    CHECK_ZE(zeEventHostReset(E));
    ze_command_list_handle_t l4 = zt_imm_compute(e, 0);
    sh->rs_k4_list = ZT_H64(l4);
    CHECK_ZE(zt_launch(l4, k1, 1, ev[3], 1, &E));
    zt_sleep_ms(10);
    IS_ZE(zeEventQueryStatus(ev[3]), ZE_RESULT_NOT_READY, "waiter on a reset event waits");
    sh->rs_t_sig = zt_now_ns();
    CHECK_ZE(zeEventHostSignal(E));
    IS_ZE(zeEventHostSynchronize(ev[3], ZT_FOREVER), ZE_RESULT_SUCCESS, "then runs");
}

static void check_resignal(const zt_truth *t)
{
    zt_truth_query q = ZT_TRUTH_QUERY_INIT;
    q.signal = sh->rs_ev;
    q.name = "k10";
    const zt_truth_op *op = zt_truth_find(t, &q);
    if (zt_ok(op != NULL, "re-signal: second kernel in truth")) {
        zt_is_u64(sh->rs_ts.global.kernelStart, op->ts_start, "re-signal: timestamps = newest");
        zt_is_u64(sh->rs_ts.global.kernelEnd, op->ts_end, "re-signal: end = newest");
    }
    zt_truth_query q3 = ZT_TRUTH_QUERY_INIT;
    q3.list = sh->rs_k3_list;
    op = zt_truth_find(t, &q3);
    uint64_t lat = (uint64_t)zt_env_ll("ZESIM_LAUNCH_LATENCY_NS", 2000);
    if (zt_ok(op != NULL, "still-signalled waiter in truth"))
        zt_ok(op->host_start <= sh->rs_k3_after + lat,
              "still-signalled waiter started at submission + launch latency");
    zt_truth_query q4 = ZT_TRUTH_QUERY_INIT;
    q4.list = sh->rs_k4_list;
    op = zt_truth_find(t, &q4);
    if (zt_ok(op != NULL, "reset waiter in truth"))
        zt_ok(op->host_start >= sh->rs_t_sig, "reset waiter started after the new signal");
}

/* ---- QueryKernelTimestamps / WriteGlobalTimestamp ---------------------------------------- */

static void test_query_write(const zt_env *e, ze_event_handle_t *ev, ze_module_handle_t m)
{
    ze_command_list_handle_t l = zt_imm_compute(e, 0);
    ze_kernel_handle_t k1 = kern(m, "k1");
    CHECK_ZE(zt_launch(l, k1, 1, ev[0], 0, NULL));
    CHECK_ZE(zt_launch(l, k1, 2, ev[1], 0, NULL));
    CHECK_ZE(zeEventHostSynchronize(ev[0], ZT_FOREVER));
    CHECK_ZE(zeEventHostSynchronize(ev[1], ZT_FOREVER));
    for (int i = 0; i < 2; i++)
        CHECK_ZE(zeEventQueryKernelTimestamp(ev[i], &sh->qkt_ref[i]));
    ze_kernel_timestamp_result_t *dst = zt_device_alloc(e, 0, 4 * sizeof *dst);
    memset(dst, 0, 4 * sizeof *dst);
    IS_ZE(zeCommandListAppendQueryKernelTimestamps(l, 2, ev, dst, NULL, ev[2], 0, NULL),
          ZE_RESULT_SUCCESS, "AppendQueryKernelTimestamps on a compute list");
    CHECK_ZE(zeEventHostSynchronize(ev[2], ZT_FOREVER));
    memcpy(sh->qkt, dst, 2 * sizeof *dst);
    size_t offs[2] = {3 * sizeof *dst, 1 * sizeof *dst};
    ze_kernel_timestamp_result_t *dst2 = zt_host_alloc(e, 4 * sizeof *dst);
    memset(dst2, 0, 4 * sizeof *dst);
    IS_ZE(zeCommandListAppendQueryKernelTimestamps(l, 2, ev, dst2, offs, ev[3], 0, NULL),
          ZE_RESULT_SUCCESS, "AppendQueryKernelTimestamps with offsets");
    CHECK_ZE(zeEventHostSynchronize(ev[3], ZT_FOREVER));
    sh->qkt_off[0] = dst2[3];
    sh->qkt_off[1] = dst2[1];
    static const ze_kernel_timestamp_result_t zero;
    zt_ok(memcmp(&dst2[0], &zero, sizeof zero) == 0 && memcmp(&dst2[2], &zero, sizeof zero) == 0,
          "offsets: other slots untouched");

    uint64_t *w = zt_device_alloc(e, 0, 2 * sizeof *w);
    w[0] = w[1] = 0;
    sh->wgt_list = ZT_H64(l);
    IS_ZE(zeCommandListAppendWriteGlobalTimestamp(l, w, ev[4], 0, NULL), ZE_RESULT_SUCCESS,
          "AppendWriteGlobalTimestamp on a compute list");
    CHECK_ZE(zeEventHostSynchronize(ev[4], ZT_FOREVER));
    sh->wgt_value = w[0];
    zt_is_u64(w[1], 0, "WriteGlobalTimestamp writes 8 bytes only");
    ze_command_list_handle_t cl = zt_imm_list(e, 0, zt_copy_ordinal(e->dev[0]), 0,
                                              ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS, 0);
    sh->wgt_copy_list = ZT_H64(cl);
    IS_ZE(zeCommandListAppendWriteGlobalTimestamp(cl, &w[1], ev[5], 0, NULL), ZE_RESULT_SUCCESS,
          "AppendWriteGlobalTimestamp on a copy-only list");
    CHECK_ZE(zeEventHostSynchronize(ev[5], ZT_FOREVER));
    sh->wgt_copy_value = w[1];
}

static void check_query_write(const zt_truth *t)
{
    for (int i = 0; i < 2; i++) {
        zt_ok(memcmp(&sh->qkt[i], &sh->qkt_ref[i], sizeof sh->qkt[i]) == 0,
              "QueryKernelTimestamps slot %d = zeEventQueryKernelTimestamp", i);
        zt_ok(memcmp(&sh->qkt_off[i], &sh->qkt_ref[i], sizeof sh->qkt[i]) == 0,
              "QueryKernelTimestamps offset slot %d", i);
    }
    const zt_truth_device *d = zt_truth_device_find(t, 0);
    if (!d)
        return;
    const uint64_t lists[2] = {sh->wgt_list, sh->wgt_copy_list};
    const uint64_t vals[2] = {sh->wgt_value, sh->wgt_copy_value};
    for (int i = 0; i < 2; i++) {
        zt_truth_query q = ZT_TRUTH_QUERY_INIT;
        q.list = lists[i];
        q.kind = "write_ts";
        const zt_truth_op *op = zt_truth_find(t, &q);
        if (!zt_ok(op != NULL, "write_ts %d in truth", i))
            continue;
        uint64_t lo = zt_mask_bits(zt_truth_full_ticks(d, op->host_start), d->ts_bits);
        uint64_t span = zt_truth_full_ticks(d, op->host_end) - zt_truth_full_ticks(d, op->host_start);
        uint64_t off = zt_mask_bits(vals[i] - lo + 1, d->ts_bits);
        zt_ok(off <= span + 2,
              "write_ts %d: value = device counter during the op (masked to %u bits)", i,
              d->ts_bits);
        zt_ok(vals[i] == zt_mask_bits(vals[i], d->ts_bits), "write_ts %d: masked", i);
    }
    zt_truth_query q = ZT_TRUTH_QUERY_INIT;
    q.kind = "query_ts";
    zt_is_int(zt_truth_count(t, &q), 2 + 1, "query_ts lines (2 here + 1 with wait list)");
}

/* ---- the main child ----------------------------------------------------------------------- */

static void child_main(void *arg)
{
    uint64_t t_init = zt_now_ns();
    zt_env e;
    zt_setup(&e);
    ze_device_properties_t p;
    memset(&p, 0, sizeof p);
    p.stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES_1_2;
    CHECK_ZE(zeDeviceGetProperties(e.dev[0], &p));
    sh->ts_bits = p.timestampValidBits;
    sh->kts_bits = p.kernelTimestampValidBits;
    ze_module_handle_t m = zt_module_text(&e, 0, kmod_text);

    /* the wrap kernel first: it must start ~20 ms before the wrap point (H0 >= t_init) */
    ze_event_handle_t wev[1];
    ze_event_pool_handle_t wpool = zt_ts_events(&e, 1, wev);
    ze_kernel_handle_t k100 = kern(m, "k100");
    ze_command_list_handle_t wl = zt_imm_compute(&e, 0);
    uint64_t wrap_ms = (uint64_t)zt_env_ll("ZESIM_WRAP_AFTER_MS", 200);
    uint64_t at = t_init + (wrap_ms > 20 ? wrap_ms - 20 : 0) * 1000000u;
    while (zt_now_ns() < at)
        zt_sleep_ns(500000);
    sh->wrap_ev = ZT_H64(wev[0]);
    CHECK_ZE(zt_launch(wl, k100, 1, wev[0], 0, NULL));

    ze_event_handle_t ev[32];
    ze_event_pool_handle_t pool = zt_ts_events(&e, 32, ev);
    test_device_ops(&e, ev);
    ze_event_handle_t ev2[32];
    ze_event_pool_handle_t pool2 = zt_ts_events(&e, 32, ev2);
    test_wait_lists(&e, ev2, m);
    ze_event_handle_t ev3[8];
    ze_event_pool_handle_t pool3 = zt_ts_events(&e, 8, ev3);
    test_kernel_ts(&e, ev3, m);
    ze_event_handle_t ev4[8];
    ze_event_pool_handle_t pool4 = zt_ts_events(&e, 8, ev4);
    test_resignal(&e, ev4, m);
    ze_event_handle_t ev5[8];
    ze_event_pool_handle_t pool5 = zt_ts_events(&e, 8, ev5);
    test_query_write(&e, ev5, m);

    CHECK_ZE(zeEventHostSynchronize(wev[0], ZT_FOREVER));
    CHECK_ZE(zeEventQueryKernelTimestamp(wev[0], &sh->wrap_ts));
    (void)pool;
    (void)pool2;
    (void)pool3;
    (void)pool4;
    (void)pool5;
    (void)wpool;
    zt_teardown(&e);
}

/* ---- AppendQueryKernelTimestamps on a copy-only list ------------------------------------- */

static void copy_qkt(ze_result_t *out)
{
    zt_env e;
    zt_setup(&e);
    ze_event_handle_t ev[2];
    zt_ts_events(&e, 2, ev);
    CHECK_ZE(zeEventHostSignal(ev[0]));
    ze_command_list_handle_t cl = zt_imm_list(&e, 0, zt_copy_ordinal(e.dev[0]), 0,
                                              ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS, 0);
    ze_kernel_timestamp_result_t *dst = zt_device_alloc(&e, 0, sizeof *dst);
    *out = zeCommandListAppendQueryKernelTimestamps(cl, 1, ev, dst, NULL, ev[1], 0, NULL);
    zt_sleep_ms(5);
}

static void child_qkt_error(void *arg)
{
    ze_result_t r = ZE_RESULT_SUCCESS;
    copy_qkt(&r);
    IS_ZE(r, ZE_RESULT_ERROR_INVALID_ARGUMENT,
          "ZESIM_COPY_QKT=error: AppendQueryKernelTimestamps on a copy-only list");
}

static int test_qkt_abort(void)
{
    int fds[2];
    if (pipe(fds) != 0)
        zt_bail("pipe");
    (void)zt_tap();
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fds[1], 2);
        close(fds[0]);
        struct rlimit nocore = {0, 0};
        setrlimit(RLIMIT_CORE, &nocore);
        unsetenv("ZESIM_COPY_QKT");
        ze_result_t r;
        copy_qkt(&r);
        zt_fail("AppendQueryKernelTimestamps on a copy-only list returned 0x%x instead of "
                "aborting", (unsigned)r);
        _exit(0);
    }
    close(fds[1]);
    char msg[4096];
    size_t n = 0;
    ssize_t k;
    while (n < sizeof msg - 1 && (k = read(fds[0], msg + n, sizeof msg - 1 - n)) > 0)
        n += (size_t)k;
    msg[n] = 0;
    close(fds[0]);
    int st = 0;
    waitpid(pid, &st, 0);
    zt_ok(WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT,
          "default ZESIM_COPY_QKT: the process aborts (status 0x%x)", st);
    zt_ok(n > 0, "and prints a message first: %s", msg);
    return 0;
}

int main(int argc, char **argv)
{
    zt_init(argc, argv);
    sh = zt_shm(sizeof *sh);
    const char *mode = argc > 1 ? argv[1] : "";
    if (strcmp(mode, "qkt_error") == 0) {
        char truth[1024];
        zt_fork_run("qkt_error", child_qkt_error, NULL, truth, sizeof truth);
        zt_truth t;
        char err[256] = "";
        if (zt_ok(zt_truth_load(truth, 0, &t, err, sizeof err) == 0, "truth (%s)", err)) {
            zt_truth_query q = ZT_TRUTH_QUERY_INIT;
            q.kind = "query_ts";
            zt_is_int(zt_truth_count(&t, &q), 0, "rejected query did not execute");
            zt_truth_free(&t);
        }
        return zt_done();
    }
    if (strcmp(mode, "qkt_abort") == 0) {
        test_qkt_abort();
        return zt_done();
    }

    char truth[1024];
    zt_fork_run("host", child_host, NULL, truth, sizeof truth);
    zt_fork_run("events", child_main, NULL, truth, sizeof truth);
    zt_truth t;
    char err[256] = "";
    if (!zt_ok(zt_truth_load(truth, 0, &t, err, sizeof err) == 0, "truth loads (%s)", err))
        return zt_done();
    check_device_ops(&t);
    check_wait_lists(&t);
    check_kernel_ts(&t);
    check_resignal(&t);
    check_query_write(&t);
    zt_truth_free(&t);
    return zt_done();
}
