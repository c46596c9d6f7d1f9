/* SPDX-License-Identifier: MIT */
/*
 * Ground truth: every operation kind is logged with all README fields and correct values
 * (device, ordinal, index, queue, list, immediate, exec, cmd, bytes, signal, waits, tid),
 * seq is unique, 0-based and in file (completion) order, one device line per device first,
 * the file is complete at a normal exit - also exit() from a non-main thread - and lacks
 * operations still in flight, it is appended to, and %p / %r are substituted.
 */
#include "zt.h"
#include "zt_truth.h"

#include <pthread.h>

static const char *const all_kinds[] = {
    "kernel", "copy", "copy_region", "copy_from_context", "fill", "image_copy",
    "image_copy_region", "image_copy_to_memory", "image_copy_from_memory", "barrier",
    "ranges_barrier", "signal", "wait", "reset", "query_ts", "write_ts", "prefetch", "mem_advise",
};
enum { NKINDS = sizeof all_kinds / sizeof all_kinds[0] };

struct shared {
    pid_t pid;
    int ndev;
    int nops;            /* operations the child executed */
    uint64_t imm_list, imm_tid, reg_list, reg_queue, exec_tid, d1_list, d1_tid;
    uint32_t imm_ord, imm_idx, reg_ord, reg_idx, d1_ord, d1_idx;
    uint64_t sig_ev, wait_ev;
    int inflight_ops;
    uint64_t inflight_exit_ns;
};

static struct shared *sh;

/* Appends one command of every kind (waiting on `w` when non-NULL): returns ops appended. */
static int append_all(const zt_env *e, uint32_t d, ze_command_list_handle_t l,
                      ze_event_handle_t sig, ze_event_handle_t w, ze_event_handle_t tsev,
                      ze_module_handle_t m)
{
    enum { SZ = 1024 };
    uint8_t *h = zt_host_alloc(e, SZ), *dv = zt_device_alloc(e, d, SZ);
    memset(h, 3, SZ);
    ze_context_handle_t c2 = zt_context(e);
    ze_host_mem_alloc_desc_t hd = {.stype = ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC};
    void *o = NULL;
    CHECK_ZE(zeMemAllocHost(c2, &hd, SZ, 64, &o));
    zt_track(ZT_OBJ_MEM, o, c2);
    ze_image_handle_t ia = zt_image(e, d, ZE_IMAGE_TYPE_2D, ZE_IMAGE_FORMAT_LAYOUT_8_8_8_8,
                                    ZE_IMAGE_FORMAT_TYPE_UINT, 16, 16, 1);
    ze_image_handle_t ib = zt_image(e, d, ZE_IMAGE_TYPE_2D, ZE_IMAGE_FORMAT_LAYOUT_8_8_8_8,
                                    ZE_IMAGE_FORMAT_TYPE_UINT, 16, 16, 1);
    ze_kernel_handle_t k = zt_kernel(m, "busy");
    CHECK_ZE(zeKernelSetGroupSize(k, 4, 1, 1));
    uint32_t nw = w ? 1 : 0;
    ze_event_handle_t *wl = w ? &w : NULL;
    ze_copy_region_t r = {0, 0, 0, 16, 4, 1};
    ze_image_region_t ir = {0, 0, 0, 4, 4, 1};
    uint32_t pat = 7;
    size_t rs = 64;
    const void *rp = dv;
    int n = 0;
    CHECK_ZE(zt_launch(l, k, 2, sig, nw, wl)); n++;
    CHECK_ZE(zeCommandListAppendMemoryCopy(l, dv, h, SZ, NULL, nw, wl)); n++;
    CHECK_ZE(zeCommandListAppendMemoryCopyRegion(l, dv, &r, 16, 0, h, &r, 16, 0, NULL, nw, wl)); n++;
    CHECK_ZE(zeCommandListAppendMemoryCopyFromContext(l, dv, c2, o, SZ, NULL, nw, wl)); n++;
    CHECK_ZE(zeCommandListAppendMemoryFill(l, dv, &pat, 4, SZ, NULL, nw, wl)); n++;
    CHECK_ZE(zeCommandListAppendImageCopyFromMemory(l, ia, h, NULL, NULL, nw, wl)); n++;
    CHECK_ZE(zeCommandListAppendImageCopy(l, ib, ia, NULL, nw, wl)); n++;
    CHECK_ZE(zeCommandListAppendImageCopyRegion(l, ib, ia, &ir, &ir, NULL, nw, wl)); n++;
    CHECK_ZE(zeCommandListAppendImageCopyToMemory(l, dv, ib, NULL, NULL, nw, wl)); n++;
    CHECK_ZE(zeCommandListAppendBarrier(l, NULL, nw, wl)); n++;
    CHECK_ZE(zeCommandListAppendMemoryRangesBarrier(l, 1, &rs, &rp, NULL, nw, wl)); n++;
    CHECK_ZE(zeCommandListAppendSignalEvent(l, tsev)); n++;
    if (w) {
        CHECK_ZE(zeCommandListAppendWaitOnEvents(l, 1, &w)); n++;
    }
    CHECK_ZE(zeCommandListAppendEventReset(l, tsev)); n++;
    CHECK_ZE(zeCommandListAppendQueryKernelTimestamps(l, 1, &sig, dv, NULL, NULL, nw, wl)); n++;
    CHECK_ZE(zeCommandListAppendWriteGlobalTimestamp(l, (uint64_t *)dv, NULL, nw, wl)); n++;
    CHECK_ZE(zeCommandListAppendMemoryPrefetch(l, dv, SZ)); n++;
    CHECK_ZE(zeCommandListAppendMemAdvise(l, e->dev[d], dv, SZ,
                                          ZE_MEMORY_ADVICE_SET_READ_MOSTLY)); n++;
    return n;
}

struct exec_arg {
    ze_command_queue_handle_t q;
    ze_command_list_handle_t l;
    uint64_t tid;
};

static void *executor(void *p)
{
    struct exec_arg *a = p;
    a->tid = (uint64_t)zt_gettid();
    CHECK_ZE(zeCommandQueueExecuteCommandLists(a->q, 1, &a->l, NULL));
    CHECK_ZE(zeCommandQueueSynchronize(a->q, ZT_FOREVER));
    return NULL;
}

static void child_all(void *arg)
{
    sh->pid = getpid();
    zt_env e;
    zt_setup(&e);
    sh->ndev = (int)e.ndev;
    static const char text[] = "ZESIM-MODULE\nkernel busy args=0 ns=3000 ns_per_item=0\n";
    ze_event_handle_t ev[8];
    zt_ts_events(&e, 8, ev);
    sh->sig_ev = ZT_H64(ev[0]);
    sh->wait_ev = ZT_H64(ev[1]);
    CHECK_ZE(zeEventHostSignal(ev[1]));
    ze_module_handle_t m0 = zt_module_text(&e, 0, text);

    /* immediate list, in order, compute engine 2 */
    uint32_t ord = zt_compute_ordinal(e.dev[0]);
    ze_command_list_handle_t il = zt_imm_list(&e, 0, ord, 2, ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS,
                                              ZT_CMDQUEUE_FLAG_IN_ORDER);
    sh->imm_list = ZT_H64(il);
    sh->imm_tid = (uint64_t)zt_gettid();
    sh->imm_ord = ord;
    sh->imm_idx = 2;
    int n = append_all(&e, 0, il, ev[0], ev[1], ev[2], m0);
    CHECK_ZE(zeCommandListAppendBarrier(il, ev[3], 0, NULL));
    n++;
    CHECK_ZE(zeEventHostSynchronize(ev[3], ZT_FOREVER));

    /* regular in-order list executed twice from another thread on compute engine 1 */
    ze_command_list_handle_t rl = zt_list(&e, 0, ord, ZT_CMDLIST_FLAG_IN_ORDER);
    int nr = append_all(&e, 0, rl, ev[4], NULL, ev[5], m0);
    CHECK_ZE(zeCommandListClose(rl));
    ze_command_queue_handle_t q = zt_queue(&e, 0, ord, 1, ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS, 0);
    sh->reg_list = ZT_H64(rl);
    sh->reg_queue = ZT_H64(q);
    sh->reg_ord = ord;
    sh->reg_idx = 1;
    for (int i = 0; i < 2; i++) {
        struct exec_arg a = {q, rl, 0};
        pthread_t th;
        pthread_create(&th, NULL, executor, &a);
        pthread_join(th, NULL);
        sh->exec_tid = a.tid;
        n += nr;
    }

    /* device 1, copy-only engine 1: copies */
    if (e.ndev > 1) {
        uint32_t co = zt_copy_ordinal(e.dev[1]);
        ze_command_list_handle_t dl = zt_imm_list(&e, 1, co, 1,
                                                  ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS, 0);
        sh->d1_list = ZT_H64(dl);
        sh->d1_tid = (uint64_t)zt_gettid();
        sh->d1_ord = co;
        sh->d1_idx = 1;
        void *a = zt_device_alloc(&e, 1, 4096), *b = zt_host_alloc(&e, 4096);
        CHECK_ZE(zeCommandListAppendMemoryCopy(dl, a, b, 4096, NULL, 0, NULL));
        CHECK_ZE(zeCommandListAppendMemoryFill(dl, a, &n, 4, 4096, ev[6], 0, NULL));
        n += 2;
        CHECK_ZE(zeEventHostSynchronize(ev[6], ZT_FOREVER));
    }
    sh->nops = n;
    zt_teardown(&e);
}

static void check_all(const zt_truth *t)
{
    zt_is_int(t->ndevices, sh->ndev, "one device line per device");
    int devs_first = 1, pid_ok = 1;
    for (size_t i = 0; i < t->ndevices; i++) {
        if (t->devices[i].line != i + 1)
            devs_first = 0;
        if (t->devices[i].pid != sh->pid)
            pid_ok = 0;
        char why[256] = "";
        zt_ok(zt_truth_device_check(&t->devices[i], why, sizeof why), "device line %zu (%s)", i,
              why);
        zt_is_int(t->devices[i].device, i, "device lines in device order");
    }
    zt_ok(devs_first, "device lines come first");
    zt_ok(pid_ok, "device lines carry the pid");
    zt_is_int(t->nops, sh->nops, "every executed operation has a line (complete at exit)");

    int fields_ok = 1, seq_ok = 1, ts_ok = 1;
    for (size_t i = 0; i < t->nops; i++) {
        const zt_truth_op *op = &t->ops[i];
        char why[256];
        if (!zt_truth_op_check(op, why, sizeof why)) {
            if (fields_ok)
                zt_diag("%s", why);
            fields_ok = 0;
        }
        if (op->seq != i)
            seq_ok = 0;
        const zt_truth_device *d = zt_truth_device_find(t, op->device);
        if (d) {
            unsigned kb = d->kernel_ts_bits;
            uint64_t ws = zt_mask_bits(zt_truth_full_ticks(d, op->host_start), kb);
            uint64_t we = zt_mask_bits(zt_truth_full_ticks(d, op->host_end), kb);
            if (zt_mask_bits(op->ts_start - ws + 1, kb) > 2 ||
                zt_mask_bits(op->ts_end - we + 1, kb) > 2)
                ts_ok = 0;
        }
    }
    zt_ok(fields_ok, "every line has every README field with the right type");
    zt_ok(seq_ok, "seq is 0..n-1, unique, in file (completion) order");
    zt_ok(ts_ok, "ts_start/ts_end = device clock at host_start/host_end, masked");
    for (int k = 0; k < (int)NKINDS; k++) {
        zt_truth_query q = ZT_TRUTH_QUERY_INIT;
        q.kind = all_kinds[k];
        zt_ok(zt_truth_count(t, &q) >= 1, "kind '%s' logged", all_kinds[k]);
    }

    /* immediate list */
    zt_truth_query q = ZT_TRUTH_QUERY_INIT;
    q.list = sh->imm_list;
    zt_truth_sel s;
    zt_truth_select(t, &q, &s);
    zt_truth_sel_sort(&s, ZT_BY_CMD);
    int ok = s.n > 0;
    for (size_t i = 0; i < s.n; i++) {
        const zt_truth_op *op = s.ops[i];
        if (op->device != 0 || op->ordinal != sh->imm_ord || op->index != sh->imm_idx ||
            op->queue != sh->imm_list || !op->immediate || op->exec != 0 || op->cmd != i ||
            (uint64_t)op->tid != sh->imm_tid)
            ok = 0;
    }
    zt_ok(ok, "immediate: device/ordinal/index/queue=list/immediate/exec 0/cmd/tid of appender");
    if (s.n) {
        zt_is_str(s.ops[0]->kind, "kernel", "cmd 0 is the kernel");
        zt_is_u64(s.ops[0]->signal, sh->sig_ev, "kernel signal field");
        zt_ok(s.ops[0]->nwaits == 1 && s.ops[0]->waits[0] == sh->wait_ev, "kernel waits field");
        zt_ok(s.ops[0]->groups[0] == 2 && s.ops[0]->group_size[0] == 4, "groups / group_size");
        zt_is_str(s.ops[0]->name, "busy", "kernel name");
        zt_is_str(s.ops[0]->launch, "plain", "launch plain");
        zt_is_u64(s.ops[1]->bytes, 1024, "copy bytes");
        zt_is_str(s.ops[1]->src, "host", "copy src");
        zt_is_str(s.ops[1]->dst, "device", "copy dst");
        int nulls = 1;
        for (size_t i = 1; i < s.n; i++)
            if (s.ops[i]->name != NULL)
                nulls = 0;
        zt_ok(nulls, "non-kernel ops have name null");
    }
    zt_truth_sel_free(&s);

    /* regular list executed twice from another thread */
    zt_truth_query qr = ZT_TRUTH_QUERY_INIT;
    qr.list = sh->reg_list;
    zt_truth_select(t, &qr, &s);
    zt_truth_sel_sort(&s, ZT_BY_CMD);
    ok = s.n > 0 && s.n % 2 == 0;
    size_t half = s.n / 2;
    for (size_t i = 0; i < s.n; i++) {
        const zt_truth_op *op = s.ops[i];
        if (op->queue != sh->reg_queue || op->immediate || op->exec != i / half ||
            op->cmd != i % half || op->ordinal != sh->reg_ord || op->index != sh->reg_idx ||
            op->tid == (int64_t)sh->imm_tid)
            ok = 0;
    }
    zt_ok(ok, "regular: queue handle, immediate false, exec 0/1, cmd per execution, engine");
    zt_ok(s.n && (uint64_t)s.ops[s.n - 1]->tid == sh->exec_tid,
          "regular: tid = the thread that executed the list");
    zt_truth_sel_free(&s);

    if (sh->ndev > 1) {
        zt_truth_query qd = ZT_TRUTH_QUERY_INIT;
        qd.list = sh->d1_list;
        zt_truth_select(t, &qd, &s);
        ok = s.n == 2;
        for (size_t i = 0; i < s.n; i++)
            if (s.ops[i]->device != 1 || s.ops[i]->ordinal != sh->d1_ord ||
                s.ops[i]->index != sh->d1_idx)
                ok = 0;
        zt_ok(ok, "device 1 copy engine: device/ordinal/index fields");
        zt_truth_sel_free(&s);
    }
}

/* ---- exit() from a non-main thread, in-flight operations ---------------------------------- */

static zt_env thr_env;

static void *exiter(void *p)
{
    ze_command_list_handle_t l = zt_imm_compute(&thr_env, 0);
    ze_module_handle_t m =
        zt_module_text(&thr_env, 0, "ZESIM-MODULE\nkernel k args=0 ns=100000 ns_per_item=0\n");
    ze_kernel_handle_t k = zt_kernel(m, "k");
    ze_event_handle_t ev[1];
    zt_ts_events(&thr_env, 1, ev);
    for (int i = 0; i < 20; i++)
        CHECK_ZE(zt_launch(l, k, 1, NULL, 0, NULL));
    CHECK_ZE(zeCommandListAppendBarrier(l, ev[0], 0, NULL));
    CHECK_ZE(zeEventHostSynchronize(ev[0], ZT_FOREVER));
    sh->nops = 21;
    zt_cleanup();
    fflush(stdout);
    exit(0); /* from this thread while main waits in pthread_join */
}

static void child_exit_thread(void *arg)
{
    zt_setup(&thr_env);
    pthread_t th;
    pthread_create(&th, NULL, exiter, NULL);
    pthread_join(th, NULL);
    zt_fail("exit() in the thread did not end the process");
}

static void child_inflight(void *arg)
{
    zt_env e;
    zt_setup(&e);
    ze_command_list_handle_t l = zt_imm_compute(&e, 0);
    ze_module_handle_t m = zt_module_text(&e, 0,
                                          "ZESIM-MODULE\nkernel quick args=0 ns=1000\n"
                                          "kernel forever args=0 ns=5000000000\n");
    ze_event_handle_t ev[1];
    zt_ts_events(&e, 1, ev);
    CHECK_ZE(zt_launch(l, zt_kernel(m, "quick"), 1, ev[0], 0, NULL));
    CHECK_ZE(zeEventHostSynchronize(ev[0], ZT_FOREVER));
    CHECK_ZE(zt_launch(l, zt_kernel(m, "forever"), 1, NULL, 0, NULL));
    sh->inflight_ops = 1;
    sh->inflight_exit_ns = zt_now_ns();
    /* exit without waiting for the 5 s kernel: everything but the busy list and its context
     * is destroyed (those stay reachable through the engine running the kernel) */
    zt_untrack(l);
    zt_untrack(e.ctx);
    zt_cleanup();
    fflush(stdout);
    exit(0);
}

/* ---- file name patterns and append mode --------------------------------------------------- */

static void child_pattern(void *arg)
{
    setenv("ZESIM_TRUTH", (const char *)arg, 1);
    sh->pid = getpid();
    zt_env e;
    zt_setup(&e);
    ze_command_list_handle_t l = zt_imm_compute(&e, 0);
    ze_event_handle_t ev[1];
    zt_ts_events(&e, 1, ev);
    CHECK_ZE(zeCommandListAppendBarrier(l, ev[0], 0, NULL));
    CHECK_ZE(zeEventHostSynchronize(ev[0], ZT_FOREVER));
    zt_teardown(&e);
}

static int load_ok(const char *path, zt_truth *t, const char *what)
{
    char err[256] = "";
    return zt_ok(zt_truth_load(path, 0, t, err, sizeof err) == 0, "%s: truth loads (%s)", what,
                 err);
}

static void test_patterns(void)
{
    char base[1024];
    zt_truth_path_for("pat", base, sizeof base); /* <dir>/<test>-pat.jsonl */
    char *dot = strrchr(base, '.');
    if (dot)
        *dot = 0;
    struct {
        const char *vars[3];
        const char *rank;
    } cases[] = {
        {{NULL}, "0"},
        {{"OMPI_COMM_WORLD_RANK=3"}, "3"},
        {{"PMIX_RANK=5"}, "5"},
        {{"PMI_RANK=7"}, "7"},
        {{"OMPI_COMM_WORLD_RANK=4", "PMIX_RANK=8", "PMI_RANK=9"}, "4"},
        {{"PMIX_RANK=6", "PMI_RANK=9"}, "6"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        char pattern[1100], tag[32];
        snprintf(pattern, sizeof pattern, "%s-%zu-p%%p-r%%r.jsonl", base, c);
        unsetenv("OMPI_COMM_WORLD_RANK");
        unsetenv("PMIX_RANK");
        unsetenv("PMI_RANK");
        for (int v = 0; v < 3 && cases[c].vars[v]; v++)
            putenv((char *)cases[c].vars[v]);
        snprintf(tag, sizeof tag, "pat%zu", c);
        zt_fork_run(tag, child_pattern, pattern, NULL, 0);
        char want[1200];
        snprintf(want, sizeof want, "%s-%zu-p%d-r%s.jsonl", base, c, (int)sh->pid, cases[c].rank);
        zt_truth t;
        if (load_ok(want, &t, want)) {
            zt_ok(t.ndevices > 0 && t.devices[0].pid == sh->pid, "%%p = pid, %%r = rank %s",
                  cases[c].rank);
            zt_truth_free(&t);
            unlink(want);
        }
    }
    unsetenv("OMPI_COMM_WORLD_RANK");
    unsetenv("PMIX_RANK");
    unsetenv("PMI_RANK");

    /* append mode: an existing file keeps its content */
    char path[1100];
    snprintf(path, sizeof path, "%s-append.jsonl", base);
    FILE *f = fopen(path, "w");
    static const char first[] = "{\"kind\":\"marker\",\"seq\":0}\n";
    fputs(first, f);
    fclose(f);
    zt_fork_run("append", child_pattern, path, NULL, 0);
    zt_truth t;
    if (load_ok(path, &t, "append")) {
        zt_ok(t.nops >= 2 && strcmp(t.ops[0].kind, "marker") == 0,
              "existing content kept, new lines appended");
        zt_truth_free(&t);
    }
    unlink(path);
}

int main(int argc, char **argv)
{
    zt_init(argc, argv);
    sh = zt_shm(sizeof *sh);
    char truth[1024];
    zt_truth t;

    zt_fork_run("all", child_all, NULL, truth, sizeof truth);
    if (load_ok(truth, &t, "all")) {
        check_all(&t);
        zt_truth_free(&t);
    }

    sh->nops = 0;
    zt_fork_run("exit_thread", child_exit_thread, NULL, truth, sizeof truth);
    if (load_ok(truth, &t, "exit from a thread")) {
        zt_is_int(t.nops, sh->nops, "exit() from a non-main thread: all %d lines flushed",
                  sh->nops);
        zt_truth_free(&t);
    }

    uint64_t t0 = zt_now_ns();
    zt_fork_run("inflight", child_inflight, NULL, truth, sizeof truth);
    uint64_t dt = zt_now_ns() - t0;
    zt_ok(dt < 4000000000ull, "exit does not wait for a 5 s kernel (%.3f s)", (double)dt / 1e9);
    if (load_ok(truth, &t, "in flight")) {
        zt_is_int(t.nops, sh->inflight_ops, "the in-flight kernel has no line, the done one has");
        zt_truth_query q = ZT_TRUTH_QUERY_INIT;
        q.name = "forever";
        zt_is_int(zt_truth_count(&t, &q), 0, "no line for the kernel still in flight");
        zt_truth_free(&t);
    }
    test_patterns();
    return zt_done();
}
