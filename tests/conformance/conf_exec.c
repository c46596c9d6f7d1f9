/* SPDX-License-Identifier: MIT */
/*
 * Execution, ordering, lists and queues: asynchronous vs synchronous immediate lists,
 * out-of-order overlap vs IN_ORDER (list bit 3, queue bit 1) serialization, copy engines one
 * command at a time, event dependencies and barriers, executions on one queue in submission
 * order, regular lists executed many times and on two queues at once, reset/destroy, fences,
 * zeCommandQueueSynchronize timeouts, synchronous queues. Every scenario runs in a child; the
 * parent checks the child's ground truth.
 */
#include "zt.h"
#include "zt_truth.h"

static const char kmod_text[] = "ZESIM-MODULE\n"
                                "kernel long args=0 ns=50000000 ns_per_item=0\n"
                                "kernel k10 args=0 ns=10000000 ns_per_item=0\n"
                                "kernel k5 args=0 ns=5000000 ns_per_item=0\n"
                                "kernel k1 args=0 ns=1000000 ns_per_item=0\n";

struct kmod {
    ze_module_handle_t m;
    ze_kernel_handle_t k_long, k10, k5, k1;
};

static void kmod_init(const zt_env *e, struct kmod *k)
{
    k->m = zt_module_text(e, 0, kmod_text);
    k->k_long = zt_kernel(k->m, "long");
    k->k10 = zt_kernel(k->m, "k10");
    k->k5 = zt_kernel(k->m, "k5");
    k->k1 = zt_kernel(k->m, "k1");
    ze_kernel_handle_t all[] = {k->k_long, k->k10, k->k5, k->k1};
    for (int i = 0; i < 4; i++)
        CHECK_ZE(zeKernelSetGroupSize(all[i], 1, 1, 1));
}

/* ---- shared results ---------------------------------------------------------------------- */

struct shared {
    /* async */
    uint64_t async_list, async_t0, async_t1, async_t2;
    uint64_t sync_list, sync_t0, sync_t1;
    /* order */
    uint64_t l_ooo, l_inorder_q, l_inorder_list, q_plain, q_inorder, l_plain_on_inorder;
    uint64_t l_copy, l_copy_compute, l_dep, l_barrier, ev_dep;
    /* queue */
    uint64_t la, lb, q_sub, q_multi, l_multi, l_gate, q1, q2, t_gate, gate_ev, l_reset;
    uint64_t l_imm, imm_tid;
    int imm_cmds;
};

static struct shared *sh;

/* ---- scenario: asynchronous and synchronous immediate lists ----------------------------- */

static void child_async(void *arg)
{
    zt_env e;
    zt_setup(&e);
    struct kmod k;
    kmod_init(&e, &k);
    ze_event_handle_t ev[2];
    ze_event_pool_handle_t pool = zt_ts_events(&e, 2, ev);
    uint32_t ord = zt_compute_ordinal(e.dev[0]);

    ze_command_list_handle_t l = zt_imm_list(&e, 0, ord, 0, ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS, 0);
    sh->async_list = ZT_H64(l);
    sh->async_t0 = zt_now_ns();
    CHECK_ZE(zt_launch(l, k.k_long, 1, ev[0], 0, NULL));
    sh->async_t1 = zt_now_ns();
    zt_ok(sh->async_t1 - sh->async_t0 < 25000000u,
          "asynchronous append of a 50 ms kernel returns at once (%.3f ms)",
          (double)(sh->async_t1 - sh->async_t0) / 1e6);
    IS_ZE(zeEventQueryStatus(ev[0]), ZE_RESULT_NOT_READY, "event NOT_READY right after append");
    IS_ZE(zeEventHostSynchronize(ev[0], ZT_FOREVER), ZE_RESULT_SUCCESS, "event completes");
    sh->async_t2 = zt_now_ns();
    zt_ok(sh->async_t2 - sh->async_t0 >= 50000000u, "completion not before 50 ms (%.3f ms)",
          (double)(sh->async_t2 - sh->async_t0) / 1e6);
    IS_ZE(zeEventQueryStatus(ev[0]), ZE_RESULT_SUCCESS, "event SUCCESS after synchronize");

    ze_command_list_handle_t s = zt_imm_list(&e, 0, ord, 1, ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS, 0);
    sh->sync_list = ZT_H64(s);
    sh->sync_t0 = zt_now_ns();
    CHECK_ZE(zt_launch(s, k.k10, 1, ev[1], 0, NULL));
    sh->sync_t1 = zt_now_ns();
    IS_ZE(zeEventQueryStatus(ev[1]), ZE_RESULT_SUCCESS,
          "synchronous immediate append returns with the command complete");
    zt_ok(sh->sync_t1 - sh->sync_t0 >= 10000000u, "synchronous append blocked >= 10 ms (%.3f)",
          (double)(sh->sync_t1 - sh->sync_t0) / 1e6);
    zt_destroy(l);
    zt_destroy(s);
    zt_destroy(ev[0]);
    zt_destroy(ev[1]);
    zt_destroy(pool);
}

static void check_async(const zt_truth *t)
{
    zt_truth_query q = ZT_TRUTH_QUERY_INIT;
    q.list = sh->async_list;
    const zt_truth_op *op = zt_truth_find(t, &q);
    if (!zt_ok(op != NULL, "truth: the 50 ms kernel"))
        return;
    zt_is_u64(op->host_end - op->host_start, 50000000u, "truth: duration exactly 50 ms");
    zt_ok(op->host_start >= sh->async_t0 + 2000, "truth: starts >= submission + launch latency");
    zt_ok(op->host_start <= sh->async_t1 + 2000, "truth: starts at submission + launch latency");
    zt_ok(op->host_end <= sh->async_t2, "truth: completion observed after host_end");
    q.list = sh->sync_list;
    op = zt_truth_find(t, &q);
    if (zt_ok(op != NULL, "truth: the synchronous kernel"))
        zt_ok(op->host_end <= sh->sync_t1, "truth: synchronous append returned after host_end");
}

/* ---- scenario: ordering ----------------------------------------------------------------- */

static void two_kernels(ze_command_list_handle_t l, const struct kmod *k, ze_event_handle_t *ev)
{
    CHECK_ZE(zt_launch(l, k->k10, 1, ev ? ev[0] : NULL, 0, NULL));
    CHECK_ZE(zt_launch(l, k->k10, 1, ev ? ev[1] : NULL, 0, NULL));
}

static void child_order(void *arg)
{
    zt_env e;
    zt_setup(&e);
    struct kmod k;
    kmod_init(&e, &k);
    ze_event_handle_t ev[16];
    ze_event_pool_handle_t pool = zt_ts_events(&e, 16, ev);
    uint32_t ord = zt_compute_ordinal(e.dev[0]);
    ze_command_queue_mode_t async = ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS;

    /* immediate, default (out of order) */
    ze_command_list_handle_t ooo = zt_imm_list(&e, 0, ord, 0, async, 0);
    sh->l_ooo = ZT_H64(ooo);
    two_kernels(ooo, &k, &ev[0]);
    /* immediate with the queue IN_ORDER flag (bit 1) */
    ze_command_list_handle_t ino = zt_imm_list(&e, 0, ord, 1, async, ZT_CMDQUEUE_FLAG_IN_ORDER);
    sh->l_inorder_q = ZT_H64(ino);
    two_kernels(ino, &k, &ev[2]);
    /* regular list with the list IN_ORDER flag (bit 3) on a plain queue */
    ze_command_queue_handle_t qp = zt_queue(&e, 0, ord, 2, async, 0);
    sh->q_plain = ZT_H64(qp);
    ze_command_list_handle_t rl = zt_list(&e, 0, ord, ZT_CMDLIST_FLAG_IN_ORDER);
    sh->l_inorder_list = ZT_H64(rl);
    two_kernels(rl, &k, NULL);
    CHECK_ZE(zeCommandListClose(rl));
    /* plain regular list on a queue with the IN_ORDER flag */
    ze_command_queue_handle_t qi = zt_queue(&e, 0, ord, 3, async, ZT_CMDQUEUE_FLAG_IN_ORDER);
    sh->q_inorder = ZT_H64(qi);
    ze_command_list_handle_t pl = zt_list(&e, 0, ord, 0);
    sh->l_plain_on_inorder = ZT_H64(pl);
    two_kernels(pl, &k, NULL);
    CHECK_ZE(zeCommandListClose(pl));
    CHECK_ZE(zeCommandQueueExecuteCommandLists(qp, 1, &rl, NULL));
    CHECK_ZE(zeCommandQueueExecuteCommandLists(qi, 1, &pl, NULL));

    /* event dependency and barrier on out-of-order immediate lists */
    ze_command_list_handle_t dep = zt_imm_list(&e, 0, ord, 0, async, 0);
    sh->l_dep = ZT_H64(dep);
    sh->ev_dep = ZT_H64(ev[4]);
    CHECK_ZE(zt_launch(dep, k.k10, 1, ev[4], 0, NULL));
    CHECK_ZE(zt_launch(dep, k.k1, 1, ev[5], 1, &ev[4]));
    ze_command_list_handle_t bar = zt_imm_list(&e, 0, ord, 1, async, 0);
    sh->l_barrier = ZT_H64(bar);
    CHECK_ZE(zt_launch(bar, k.k10, 1, NULL, 0, NULL));
    CHECK_ZE(zeCommandListAppendBarrier(bar, NULL, 0, NULL));
    CHECK_ZE(zt_launch(bar, k.k1, 1, ev[6], 0, NULL));

    for (int i = 0; i < 7; i++)
        if (i != 4)
            IS_ZE(zeEventHostSynchronize(ev[i], ZT_FOREVER), ZE_RESULT_SUCCESS, "event %d", i);
    CHECK_ZE(zeCommandQueueSynchronize(qp, ZT_FOREVER));
    CHECK_ZE(zeCommandQueueSynchronize(qi, ZT_FOREVER));
    zt_teardown(&e);
    (void)pool;
}

/* Copy engines: a separate child with a slow copy model so copies last ~6.5 ms. */
static void child_copy(void *arg)
{
    setenv("ZESIM_COPY_MODEL", "1000:0.01", 1);
    zt_env e;
    zt_setup(&e);
    enum { SZ = 65536 };
    char *src = zt_host_alloc(&e, SZ), *d1 = zt_device_alloc(&e, 0, SZ);
    char *d2 = zt_device_alloc(&e, 0, SZ);
    memset(src, 7, SZ);
    ze_event_handle_t ev[4];
    ze_event_pool_handle_t pool = zt_ts_events(&e, 4, ev);
    ze_command_list_handle_t cl = zt_imm_list(&e, 0, zt_copy_ordinal(e.dev[0]), 0,
                                              ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS, 0);
    sh->l_copy = ZT_H64(cl);
    CHECK_ZE(zeCommandListAppendMemoryCopy(cl, d1, src, SZ, ev[0], 0, NULL));
    CHECK_ZE(zeCommandListAppendMemoryCopy(cl, d2, src, SZ, ev[1], 0, NULL));
    ze_command_list_handle_t cc = zt_imm_list(&e, 0, zt_compute_ordinal(e.dev[0]), 0,
                                              ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS, 0);
    sh->l_copy_compute = ZT_H64(cc);
    char *d3 = zt_device_alloc(&e, 0, SZ), *d4 = zt_device_alloc(&e, 0, SZ);
    CHECK_ZE(zeCommandListAppendMemoryCopy(cc, d3, src, SZ, ev[2], 0, NULL));
    CHECK_ZE(zeCommandListAppendMemoryCopy(cc, d4, src, SZ, ev[3], 0, NULL));
    for (int i = 0; i < 4; i++)
        CHECK_ZE(zeEventHostSynchronize(ev[i], ZT_FOREVER));
    zt_ok(memcmp(d1, src, SZ) == 0 && memcmp(d2, src, SZ) == 0 && memcmp(d3, src, SZ) == 0 &&
              memcmp(d4, src, SZ) == 0,
          "copies moved the bytes");
    zt_teardown(&e);
    (void)pool;
}

/* The two ops of a list, in append order. */
static int pair_of(const zt_truth *t, uint64_t list, const zt_truth_op **a,
                   const zt_truth_op **b, const char *what)
{
    zt_truth_query q = ZT_TRUTH_QUERY_INIT;
    q.list = list;
    zt_truth_sel s;
    zt_truth_select(t, &q, &s);
    zt_truth_sel_sort(&s, ZT_BY_CMD);
    int ok = zt_ok(s.n == 2, "%s: two ops in truth (%zu)", what, s.n);
    if (ok) {
        *a = s.ops[0];
        *b = s.ops[1];
    }
    zt_truth_sel_free(&s);
    return ok;
}

static void expect_overlap(const zt_truth *t, uint64_t list, const char *what)
{
    const zt_truth_op *a, *b;
    if (!pair_of(t, list, &a, &b, what))
        return;
    zt_ok(b->host_start < a->host_end && a->host_start < b->host_end,
          "%s: the two commands overlap ([%" PRIu64 ",%" PRIu64 "] vs [%" PRIu64 ",%" PRIu64
          "])",
          what, a->host_start, a->host_end, b->host_start, b->host_end);
}

static void expect_serial(const zt_truth *t, uint64_t list, const char *what)
{
    const zt_truth_op *a, *b;
    if (!pair_of(t, list, &a, &b, what))
        return;
    zt_ok(b->host_start >= a->host_end,
          "%s: second starts after the first ended (%" PRIu64 " >= %" PRIu64 ")", what,
          b->host_start, a->host_end);
}

static void check_order(const zt_truth *t)
{
    expect_overlap(t, sh->l_ooo, "default immediate list");
    expect_serial(t, sh->l_inorder_q, "immediate list, queue flag IN_ORDER (bit 1)");
    expect_serial(t, sh->l_inorder_list, "regular list flag IN_ORDER (bit 3)");
    expect_serial(t, sh->l_plain_on_inorder, "plain list on an IN_ORDER queue");
    const zt_truth_op *a, *b;
    if (pair_of(t, sh->l_dep, &a, &b, "event dependency")) {
        zt_ok(b->host_start >= a->host_end, "waiting kernel starts after the signalling one");
        zt_is_u64(a->signal, sh->ev_dep, "truth signal = the event");
        zt_ok(b->nwaits == 1 && b->waits[0] == sh->ev_dep, "truth waits = [the event]");
    }
    zt_truth_query q = ZT_TRUTH_QUERY_INIT;
    q.list = sh->l_barrier;
    zt_truth_sel s;
    zt_truth_select(t, &q, &s);
    zt_truth_sel_sort(&s, ZT_BY_CMD);
    if (zt_ok(s.n == 3, "barrier list: three ops")) {
        zt_is_str(s.ops[1]->kind, "barrier", "truth kind barrier");
        zt_ok(s.ops[1]->host_start >= s.ops[0]->host_end, "barrier waits for the kernel before");
        zt_ok(s.ops[2]->host_start >= s.ops[1]->host_end, "kernel after waits for the barrier");
        zt_is_u64(s.ops[1]->host_end - s.ops[1]->host_start,
                  (uint64_t)zt_env_ll("ZESIM_SYNC_OP_NS", 200), "barrier lasts ZESIM_SYNC_OP_NS");
    }
    zt_truth_sel_free(&s);
}

static void check_copy(const zt_truth *t)
{
    expect_serial(t, sh->l_copy, "copy-only engine, default list");
    expect_overlap(t, sh->l_copy_compute, "copies on a compute engine");
    const zt_truth_op *a, *b;
    if (pair_of(t, sh->l_copy, &a, &b, "copy engine")) {
        zt_is_u64(a->host_end - a->host_start, 1000 + 6553600, "copy duration 1000 + 65536/0.01");
        zt_is_u64(a->bytes, 65536, "copy bytes");
    }
}

/* ---- scenario: queues, regular lists, fences ---------------------------------------------- */

static void child_queue(void *arg)
{
    zt_env e;
    zt_setup(&e);
    struct kmod k;
    kmod_init(&e, &k);
    uint32_t ord = zt_compute_ordinal(e.dev[0]);
    ze_command_queue_mode_t async = ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS;
    ze_event_handle_t ev[8];
    ze_event_pool_handle_t pool = zt_ts_events(&e, 8, ev);

    /* submission order on one queue: LA (10 ms) then LB (1 ms) */
    ze_command_queue_handle_t q = zt_queue(&e, 0, ord, 0, async, 0);
    sh->q_sub = ZT_H64(q);
    ze_command_list_handle_t la = zt_list(&e, 0, ord, 0), lb = zt_list(&e, 0, ord, 0);
    sh->la = ZT_H64(la);
    sh->lb = ZT_H64(lb);
    CHECK_ZE(zt_launch(la, k.k10, 1, NULL, 0, NULL));
    CHECK_ZE(zt_launch(lb, k.k1, 1, NULL, 0, NULL));
    CHECK_ZE(zeCommandListClose(la));
    CHECK_ZE(zeCommandListClose(lb));
    CHECK_ZE(zeCommandQueueExecuteCommandLists(q, 1, &la, NULL));
    CHECK_ZE(zeCommandQueueExecuteCommandLists(q, 1, &lb, NULL));
    ze_command_list_handle_t both[2] = {la, lb};
    CHECK_ZE(zeCommandQueueExecuteCommandLists(q, 2, both, NULL));
    CHECK_ZE(zeCommandQueueSynchronize(q, ZT_FOREVER));

    /* a regular list executed 3 times */
    ze_command_queue_handle_t qm = zt_queue(&e, 0, ord, 1, async, 0);
    sh->q_multi = ZT_H64(qm);
    ze_command_list_handle_t lm = zt_list(&e, 0, ord, 0);
    sh->l_multi = ZT_H64(lm);
    CHECK_ZE(zt_launch(lm, k.k1, 1, NULL, 0, NULL));
    CHECK_ZE(zeCommandListAppendBarrier(lm, NULL, 0, NULL));
    CHECK_ZE(zt_launch(lm, k.k1, 1, NULL, 0, NULL));
    CHECK_ZE(zeCommandListClose(lm));
    for (int i = 0; i < 3; i++)
        CHECK_ZE(zeCommandQueueExecuteCommandLists(qm, 1, &lm, NULL));
    CHECK_ZE(zeCommandQueueSynchronize(qm, ZT_FOREVER));

    /* one list executed on two queues at once, both executions held back by a gate event */
    ze_command_queue_handle_t q1 = zt_queue(&e, 0, ord, 2, async, 0);
    ze_command_queue_handle_t q2 = zt_queue(&e, 0, ord, 3, async, 0);
    sh->q1 = ZT_H64(q1);
    sh->q2 = ZT_H64(q2);
    ze_command_list_handle_t lg = zt_list(&e, 0, ord, 0);
    sh->l_gate = ZT_H64(lg);
    sh->gate_ev = ZT_H64(ev[0]);
    CHECK_ZE(zt_launch(lg, k.k5, 1, NULL, 1, &ev[0]));
    CHECK_ZE(zeCommandListClose(lg));
    CHECK_ZE(zeCommandQueueExecuteCommandLists(q1, 1, &lg, NULL));
    CHECK_ZE(zeCommandQueueExecuteCommandLists(q2, 1, &lg, NULL));
    zt_sleep_ms(10);
    IS_ZE(zeCommandQueueSynchronize(q1, 0), ZE_RESULT_NOT_READY, "gated execution in flight");
    sh->t_gate = zt_now_ns();
    CHECK_ZE(zeEventHostSignal(ev[0]));
    IS_ZE(zeCommandQueueSynchronize(q1, ZT_FOREVER), ZE_RESULT_SUCCESS, "queue 1 done");
    IS_ZE(zeCommandQueueSynchronize(q2, ZT_FOREVER), ZE_RESULT_SUCCESS, "queue 2 done");
    CHECK_ZE(zeCommandQueueExecuteCommandLists(q1, 1, &lg, NULL)); /* exec 2, gate signalled */
    IS_ZE(zeCommandQueueSynchronize(q1, 2000000000ull), ZE_RESULT_SUCCESS,
          "third execution runs (gate still signalled)");

    /* reset and destroy */
    ze_command_list_handle_t lr = zt_list(&e, 0, ord, 0);
    sh->l_reset = ZT_H64(lr);
    CHECK_ZE(zt_launch(lr, k.k5, 1, NULL, 0, NULL));
    CHECK_ZE(zeCommandListClose(lr));
    CHECK_ZE(zeCommandQueueExecuteCommandLists(q, 1, &lr, NULL));
    CHECK_ZE(zeCommandQueueSynchronize(q, ZT_FOREVER));
    IS_ZE(zeCommandListReset(lr), ZE_RESULT_SUCCESS, "zeCommandListReset");
    CHECK_ZE(zt_launch(lr, k.k1, 1, NULL, 0, NULL));
    CHECK_ZE(zeCommandListClose(lr));
    CHECK_ZE(zeCommandQueueExecuteCommandLists(q, 1, &lr, NULL));
    CHECK_ZE(zeCommandQueueSynchronize(q, ZT_FOREVER));

    /* fences */
    ze_fence_desc_t fd = {ZE_STRUCTURE_TYPE_FENCE_DESC, NULL, 0};
    ze_fence_handle_t f = NULL;
    IS_ZE(zeFenceCreate(q, &fd, &f), ZE_RESULT_SUCCESS, "zeFenceCreate");
    IS_ZE(zeFenceQueryStatus(f), ZE_RESULT_NOT_READY, "new fence NOT_READY");
    ze_command_list_handle_t ll = zt_list(&e, 0, ord, 0);
    CHECK_ZE(zt_launch(ll, k.k_long, 1, NULL, 0, NULL));
    CHECK_ZE(zeCommandListClose(ll));
    CHECK_ZE(zeCommandQueueExecuteCommandLists(q, 1, &ll, f));
    IS_ZE(zeFenceQueryStatus(f), ZE_RESULT_NOT_READY, "fence NOT_READY while the kernel runs");
    uint64_t t0 = zt_now_ns();
    IS_ZE(zeFenceHostSynchronize(f, 5000000), ZE_RESULT_NOT_READY, "fence sync 5 ms times out");
    uint64_t dt = zt_now_ns() - t0;
    zt_between(dt, 4000000, 45000000, "fence timeout took about 5 ms");
    IS_ZE(zeFenceHostSynchronize(f, ZT_FOREVER), ZE_RESULT_SUCCESS, "fence sync");
    IS_ZE(zeFenceQueryStatus(f), ZE_RESULT_SUCCESS, "fence SUCCESS after sync");
    IS_ZE(zeFenceHostSynchronize(f, 0), ZE_RESULT_SUCCESS, "signalled fence sync(0)");
    IS_ZE(zeFenceReset(f), ZE_RESULT_SUCCESS, "zeFenceReset");
    IS_ZE(zeFenceQueryStatus(f), ZE_RESULT_NOT_READY, "reset fence NOT_READY");
    IS_ZE(zeFenceHostSynchronize(f, 2000000), ZE_RESULT_NOT_READY, "reset fence sync times out");
    CHECK_ZE(zeCommandQueueExecuteCommandLists(q, 1, &la, f));
    IS_ZE(zeFenceHostSynchronize(f, ZT_FOREVER), ZE_RESULT_SUCCESS, "fence reused");
    zt_destroy(f);

    /* zeCommandQueueSynchronize with a timeout */
    CHECK_ZE(zeCommandQueueExecuteCommandLists(q, 1, &ll, NULL));
    t0 = zt_now_ns();
    IS_ZE(zeCommandQueueSynchronize(q, 5000000), ZE_RESULT_NOT_READY,
          "zeCommandQueueSynchronize(5 ms) on a 50 ms kernel: NOT_READY");
    dt = zt_now_ns() - t0;
    zt_between(dt, 4000000, 45000000, "queue sync timeout took about 5 ms");
    IS_ZE(zeCommandQueueSynchronize(q, ZT_FOREVER), ZE_RESULT_SUCCESS, "then SUCCESS");

    /* synchronous queue */
    ze_command_queue_handle_t qs = zt_queue(&e, 0, ord, 0, ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS, 0);
    ze_command_list_handle_t l10 = zt_list(&e, 0, ord, 0);
    CHECK_ZE(zt_launch(l10, k.k10, 1, ev[1], 0, NULL));
    CHECK_ZE(zeCommandListClose(l10));
    t0 = zt_now_ns();
    CHECK_ZE(zeCommandQueueExecuteCommandLists(qs, 1, &l10, NULL));
    dt = zt_now_ns() - t0;
    IS_ZE(zeEventQueryStatus(ev[1]), ZE_RESULT_SUCCESS,
          "synchronous queue: complete when Execute returns");
    zt_ok(dt >= 10000000u, "synchronous Execute blocked >= 10 ms (%.3f)", (double)dt / 1e6);

    /* immediate list bookkeeping: cmd = append counter, exec 0, queue = list, tid = appender */
    ze_command_list_handle_t li = zt_imm_list(&e, 0, ord, 0, async, ZT_CMDQUEUE_FLAG_IN_ORDER);
    sh->l_imm = ZT_H64(li);
    sh->imm_tid = (uint64_t)zt_gettid();
    sh->imm_cmds = 3;
    CHECK_ZE(zt_launch(li, k.k1, 1, NULL, 0, NULL));
    CHECK_ZE(zeCommandListAppendBarrier(li, NULL, 0, NULL));
    CHECK_ZE(zt_launch(li, k.k1, 1, ev[2], 0, NULL));
    CHECK_ZE(zeEventHostSynchronize(ev[2], ZT_FOREVER));

    /* destroyed only now: a destroyed list's address may be reused by a later list, and the
     * truth identifies lists by handle */
    zt_untrack(lr);
    IS_ZE(zeCommandListDestroy(lr), ZE_RESULT_SUCCESS, "zeCommandListDestroy");
    zt_destroy(qs);
    zt_destroy(q);
    zt_teardown(&e);
    (void)pool;
}

static void check_queue(const zt_truth *t)
{
    zt_truth_query q = ZT_TRUTH_QUERY_INIT;
    q.queue = sh->q_sub;
    zt_truth_sel s;
    zt_truth_select(t, &q, &s);
    zt_truth_sel_sort(&s, ZT_BY_HOST_START);
    /* Execute(LA), Execute(LB), Execute([LA, LB]) (then later executions on this queue) */
    if (zt_ok(s.n >= 4, "submission-order queue: >= 4 ops")) {
        zt_ok(s.ops[0]->list == sh->la && s.ops[0]->exec == 0, "first: LA exec 0");
        zt_ok(s.ops[1]->list == sh->lb && s.ops[1]->exec == 0, "second: LB exec 0");
        zt_ok(s.ops[1]->host_start >= s.ops[0]->host_end,
              "separate Execute calls: LB (1 ms) starts after LA (10 ms) ended");
        const zt_truth_op *la1 = NULL, *lb1 = NULL;
        for (int i = 2; i < 4; i++) {
            if (s.ops[i]->list == sh->la)
                la1 = s.ops[i];
            if (s.ops[i]->list == sh->lb)
                lb1 = s.ops[i];
        }
        if (zt_ok(la1 && lb1, "Execute([LA, LB]) ran both lists")) {
            zt_is_int(la1->exec, 1, "LA exec 1");
            zt_is_int(lb1->exec, 1, "LB exec 1");
            zt_ok(la1->host_start >= s.ops[1]->host_end && lb1->host_start >= s.ops[1]->host_end,
                  "the third Execute starts after the second ended");
            zt_ok(lb1->host_start >= la1->host_start, "lists of one Execute start in order");
            if (lb1->host_start < la1->host_end)
                zt_diag("note: lists of one Execute call overlap (LB starts before LA ends)");
        }
        zt_ok(!s.ops[0]->immediate && s.ops[0]->queue == sh->q_sub, "regular: queue handle");
    }
    zt_truth_sel_free(&s);

    zt_truth_query qm = ZT_TRUTH_QUERY_INIT;
    qm.list = sh->l_multi;
    zt_truth_select(t, &qm, &s);
    zt_truth_sel_sort(&s, ZT_BY_CMD);
    if (zt_ok(s.n == 9, "list executed 3 times: 9 ops (%zu)", s.n)) {
        int ok = 1;
        for (size_t i = 0; i < 9; i++)
            if (s.ops[i]->exec != i / 3 || s.ops[i]->cmd != i % 3)
                ok = 0;
        zt_ok(ok, "exec 0..2 and cmd 0..2 per execution");
        zt_is_str(s.ops[1]->kind, "barrier", "cmd 1 is the barrier");
        zt_ok(s.ops[3]->host_start >= s.ops[2]->host_end, "executions do not overlap");
    }
    zt_truth_sel_free(&s);

    zt_truth_query qg = ZT_TRUTH_QUERY_INIT;
    qg.list = sh->l_gate;
    zt_truth_select(t, &qg, &s);
    zt_truth_sel_sort(&s, ZT_BY_CMD);
    if (zt_ok(s.n == 3, "gated list executed 3 times (%zu)", s.n)) {
        zt_ok(s.ops[0]->exec == 0 && s.ops[0]->queue == sh->q1, "exec 0 on queue 1");
        zt_ok(s.ops[1]->exec == 1 && s.ops[1]->queue == sh->q2, "exec 1 on queue 2 (concurrent)");
        zt_ok(s.ops[2]->exec == 2 && s.ops[2]->queue == sh->q1, "exec 2 on queue 1");
        zt_ok(s.ops[0]->host_start >= sh->t_gate && s.ops[1]->host_start >= sh->t_gate,
              "both gated executions waited for the host signal");
        zt_ok(s.ops[0]->nwaits == 1 && s.ops[0]->waits[0] == sh->gate_ev, "waits recorded");
        zt_ok(s.ops[1]->host_start < s.ops[0]->host_end,
              "executions on two queues run at the same time");
    }
    zt_truth_sel_free(&s);

    zt_truth_query qr = ZT_TRUTH_QUERY_INIT;
    qr.list = sh->l_reset;
    zt_truth_select(t, &qr, &s);
    zt_truth_sel_sort(&s, ZT_BY_HOST_START);
    if (zt_ok(s.n == 2, "reset list: 2 ops (old content not re-run)")) {
        zt_is_str(s.ops[0]->name, "k5", "before reset: k5");
        zt_is_str(s.ops[1]->name, "k1", "after reset: k1");
        zt_is_int(s.ops[1]->cmd, 0, "cmd restarts at 0 after reset");
    }
    zt_truth_sel_free(&s);

    zt_truth_query qi = ZT_TRUTH_QUERY_INIT;
    qi.list = sh->l_imm;
    zt_truth_select(t, &qi, &s);
    zt_truth_sel_sort(&s, ZT_BY_CMD);
    if (zt_ok(s.n == 3, "immediate list: 3 ops")) {
        int ok = 1;
        for (size_t i = 0; i < 3; i++)
            if (!s.ops[i]->immediate || s.ops[i]->exec != 0 || s.ops[i]->cmd != i ||
                s.ops[i]->queue != sh->l_imm || (uint64_t)s.ops[i]->tid != sh->imm_tid)
                ok = 0;
        zt_ok(ok, "immediate: immediate=true, exec 0, cmd = append counter, queue = list, tid");
    }
    zt_truth_sel_free(&s);
}

/* ---- main --------------------------------------------------------------------------------- */

int main(int argc, char **argv)
{
    zt_init(argc, argv);
    sh = zt_shm(sizeof *sh);
    zt_fork_check("async", child_async, NULL, check_async);
    zt_fork_check("order", child_order, NULL, check_order);
    zt_fork_check("copy", child_copy, NULL, check_copy);
    zt_fork_check("queue", child_queue, NULL, check_queue);
    return zt_done();
}
