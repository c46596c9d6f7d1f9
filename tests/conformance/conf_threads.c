/* SPDX-License-Identifier: MIT */
/*
 * Thread safety (run it under TSan too): 8 threads each with their own immediate list doing
 * kernels, copies and event waits; 8 threads sharing one queue, each executing its own regular
 * list with its own fence while others synchronise the queue; events signalled on one thread
 * and waited on by the device for another. Results are verified and the truth is complete
 * (one line per operation, tid = the appending / executing thread).
 */
#include "zt.h"
#include "zt_truth.h"

#include <pthread.h>

enum { NT = 8, ITER = 20, N = 512 };

struct shared {
    int ops;
    uint64_t imm_list[NT], imm_tid[NT], reg_list[NT], reg_tid[NT];
};

static struct shared *sh;
static zt_env env;
static ze_module_handle_t mod;
static ze_command_queue_handle_t shared_q;
static atomic_int nops;
static ze_command_list_handle_t own_lists[NT], reg_lists[NT], wait_lists[NT];

static void *own_list(void *arg)
{
    int id = (int)(intptr_t)arg;
    sh->imm_tid[id] = (uint64_t)zt_gettid();
    ze_command_list_handle_t l = zt_imm_list(&env, 0, zt_compute_ordinal(env.dev[0]),
                                             (uint32_t)id % 4, ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS,
                                             ZT_CMDQUEUE_FLAG_IN_ORDER);
    sh->imm_list[id] = ZT_H64(l);
    ze_kernel_handle_t k = zt_kernel(mod, "fill_u32"); /* kernels are per thread */
    CHECK_ZE(zeKernelSetGroupSize(k, 32, 1, 1));
    uint32_t *buf = zt_device_alloc(&env, 0, N * 4), *host = zt_host_alloc(&env, N * 4);
    ze_event_handle_t ev[2];
    ze_event_pool_handle_t pool = zt_ts_events(&env, 2, ev);
    int good = 1;
    for (int it = 0; it < ITER; it++) {
        uint32_t v = (uint32_t)(id * 1000 + it);
        CHECK_ZE(zeKernelSetArgumentValue(k, 0, sizeof buf, &buf));
        CHECK_ZE(zeKernelSetArgumentValue(k, 1, sizeof v, &v));
        CHECK_ZE(zt_launch(l, k, N / 32, NULL, 0, NULL));
        CHECK_ZE(zeCommandListAppendMemoryCopy(l, host, buf, N * 4, ev[0], 0, NULL));
        CHECK_ZE(zeEventHostSynchronize(ev[0], ZT_FOREVER));
        CHECK_ZE(zeEventHostReset(ev[0]));
        for (int i = 0; i < N; i++)
            if (host[i] != v)
                good = 0;
        atomic_fetch_add(&nops, 2);
    }
    zt_ok(good, "thread %d: %d iterations on its own immediate list computed right", id, ITER);
    zt_destroy(ev[0]);
    zt_destroy(ev[1]);
    zt_destroy(pool);
    zt_destroy(k);
    own_lists[id] = l; /* destroyed after all threads: no handle reuse in the truth */
    zt_free(env.ctx, buf);
    zt_free(env.ctx, host);
    return NULL;
}

static void *shared_queue(void *arg)
{
    int id = (int)(intptr_t)arg;
    sh->reg_tid[id] = (uint64_t)zt_gettid();
    ze_kernel_handle_t k = zt_kernel(mod, "vector_add");
    CHECK_ZE(zeKernelSetGroupSize(k, 64, 1, 1));
    float *a = zt_shared_alloc(&env, 0, N * 4), *b = zt_shared_alloc(&env, 0, N * 4);
    float *c = zt_shared_alloc(&env, 0, N * 4);
    for (int i = 0; i < N; i++) {
        a[i] = (float)id;
        b[i] = (float)i;
        c[i] = 0;
    }
    CHECK_ZE(zeKernelSetArgumentValue(k, 0, sizeof a, &a));
    CHECK_ZE(zeKernelSetArgumentValue(k, 1, sizeof b, &b));
    CHECK_ZE(zeKernelSetArgumentValue(k, 2, sizeof c, &c));
    ze_command_list_handle_t l = zt_list(&env, 0, zt_compute_ordinal(env.dev[0]), 0);
    sh->reg_list[id] = ZT_H64(l);
    CHECK_ZE(zt_launch(l, k, N / 64, NULL, 0, NULL));
    CHECK_ZE(zeCommandListClose(l));
    ze_fence_desc_t fd = {.stype = ZE_STRUCTURE_TYPE_FENCE_DESC};
    ze_fence_handle_t f = NULL;
    CHECK_ZE(zeFenceCreate(shared_q, &fd, &f));
    int good = 1;
    for (int it = 0; it < ITER; it++) {
        CHECK_ZE(zeCommandQueueExecuteCommandLists(shared_q, 1, &l, f));
        if (it % 2)
            CHECK_ZE(zeFenceHostSynchronize(f, ZT_FOREVER));
        else
            CHECK_ZE(zeCommandQueueSynchronize(shared_q, ZT_FOREVER));
        CHECK_ZE(zeFenceHostSynchronize(f, ZT_FOREVER));
        CHECK_ZE(zeFenceReset(f));
        for (int i = 0; i < N; i++)
            if (c[i] != (float)(id + i))
                good = 0;
        atomic_fetch_add(&nops, 1);
    }
    zt_ok(good, "thread %d: %d executions on the shared queue computed right", id, ITER);
    zt_destroy(f);
    reg_lists[id] = l;
    zt_destroy(k);
    return NULL;
}

/* Host signals on one thread release device waits appended by another. */
static ze_event_handle_t ping[NT];
static ze_event_handle_t pong[NT];

static void *signaller(void *arg)
{
    for (int i = 0; i < NT; i++) {
        zt_sleep_ns(200000);
        CHECK_ZE(zeEventHostSignal(ping[i]));
    }
    return NULL;
}

static void *waiter(void *arg)
{
    int id = (int)(intptr_t)arg;
    ze_command_list_handle_t l = zt_imm_compute(&env, 0);
    CHECK_ZE(zeCommandListAppendBarrier(l, pong[id], 1, &ping[id]));
    atomic_fetch_add(&nops, 1);
    IS_ZE(zeEventHostSynchronize(pong[id], 5000000000ull), ZE_RESULT_SUCCESS,
          "waiter %d released by another thread's signal", id);
    wait_lists[id] = l;
    return NULL;
}

static void child(void *arg)
{
    zt_setup(&env);
    mod = zt_module_spirv(&env, 0, zt_spv_builtins, 4);
    shared_q = zt_queue(&env, 0, zt_compute_ordinal(env.dev[0]), 0,
                        ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS, 0);
    pthread_t th[2 * NT + 1];
    for (int i = 0; i < NT; i++) {
        pthread_create(&th[i], NULL, own_list, (void *)(intptr_t)i);
        pthread_create(&th[NT + i], NULL, shared_queue, (void *)(intptr_t)i);
    }
    for (int i = 0; i < 2 * NT; i++)
        pthread_join(th[i], NULL);

    ze_event_pool_handle_t pool = zt_pool(&env, 2 * NT, ZE_EVENT_POOL_FLAG_HOST_VISIBLE);
    for (int i = 0; i < NT; i++) {
        ping[i] = zt_event(pool, (uint32_t)i);
        pong[i] = zt_event(pool, (uint32_t)(NT + i));
    }
    pthread_t w[NT];
    for (int i = 0; i < NT; i++)
        pthread_create(&w[i], NULL, waiter, (void *)(intptr_t)i);
    pthread_create(&th[2 * NT], NULL, signaller, NULL);
    for (int i = 0; i < NT; i++)
        pthread_join(w[i], NULL);
    pthread_join(th[2 * NT], NULL);
    sh->ops = atomic_load(&nops);
    for (int i = 0; i < NT; i++) {
        zt_destroy(own_lists[i]);
        zt_destroy(reg_lists[i]);
        zt_destroy(wait_lists[i]);
    }
    zt_destroy(shared_q);
    zt_teardown(&env);
}

int main(int argc, char **argv)
{
    zt_init(argc, argv);
    sh = zt_shm(sizeof *sh);
    char truth[1024];
    zt_fork_run("threads", child, NULL, truth, sizeof truth);
    zt_truth t;
    char err[256] = "";
    if (!zt_ok(zt_truth_load(truth, 0, &t, err, sizeof err) == 0, "truth loads (%s)", err))
        return zt_done();
    zt_is_int(t.nops, sh->ops, "one truth line per operation of all threads");
    int seq_ok = 1;
    for (size_t i = 0; i < t.nops; i++)
        if (t.ops[i].seq != i)
            seq_ok = 0;
    zt_ok(seq_ok, "seq unique and ordered under concurrency");
    for (int id = 0; id < NT; id++) {
        zt_truth_query q = ZT_TRUTH_QUERY_INIT;
        q.list = sh->imm_list[id];
        zt_truth_sel s;
        zt_truth_select(&t, &q, &s);
        int ok = s.n == 2 * ITER;
        for (size_t i = 0; i < s.n; i++)
            if ((uint64_t)s.ops[i]->tid != sh->imm_tid[id])
                ok = 0;
        if (!zt_ok(ok, "thread %d immediate list: %d lines with its tid", id, 2 * ITER))
            zt_diag("%zu lines", s.n);
        zt_truth_sel_free(&s);
        q.list = sh->reg_list[id];
        zt_truth_select(&t, &q, &s);
        ok = s.n == ITER;
        for (size_t i = 0; i < s.n; i++)
            if ((uint64_t)s.ops[i]->tid != sh->reg_tid[id])
                ok = 0;
        zt_truth_sel_sort(&s, ZT_BY_HOST_START);
        for (size_t i = 0; i < s.n; i++)
            if (s.ops[i]->exec != i)
                ok = 0;
        zt_ok(ok, "thread %d regular list: %d executions, exec 0..%d, executor tid", id, ITER,
              ITER - 1);
        zt_truth_sel_free(&s);
    }
    zt_truth_free(&t);
    return zt_done();
}
