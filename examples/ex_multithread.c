/* SPDX-License-Identifier: MIT */
/* Several host threads submitting work at the same time.
 *
 * Phase 1: every thread has its own asynchronous immediate list (threads are spread over the
 *   compute engines), its own kernels, buffers and event, and repeatedly runs
 *   vector_add(a, b, c) -> barrier -> scale_f32(c, 2) -> barrier -> copy c -> host (signals the
 *   event), waits for the event, checks c = 2 (a + b) and resets the event.
 * Phase 2: every thread records its own regular list
 *   fill_u32(tag, thread id), copy in -> x, barrier, scale_f32(x, 3), barrier,
 *   copy x -> out, copy tag -> host
 *   and, released together by a barrier, all threads execute their lists repeatedly on ONE
 *   shared command queue, each with its own fence; after each execution the thread checks its
 *   own output (out = 3 * in for the input it wrote, tag = its id).
 * Command lists are used by one thread at a time, as the spec requires; queues, fences, modules
 * and the context are shared.
 *
 * usage: ex_multithread [threads] [iterations] [elements]   (defaults 8, 20, 4096) */
#include "ex_common.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

typedef struct shared_state {
    const ex_env_t *env;
    ze_device_handle_t dev;
    ze_module_handle_t module;
    ze_command_queue_handle_t queue; /* phase 2: one queue for all threads */
    uint32_t ordinal, num_engines, iters, n;
    pthread_barrier_t start_phase2;
} shared_state_t;

typedef struct worker {
    shared_state_t *sh;
    uint32_t id;
    pthread_t thread;
    unsigned imm_checked, queue_checked; /* verified iterations of each phase */
} worker_t;

static void phase_immediate(worker_t *w)
{
    shared_state_t *sh = w->sh;
    const ex_env_t *env = sh->env;
    const uint32_t n = sh->n;
    const size_t bytes = (size_t)n * sizeof(float);

    ze_command_list_handle_t list = ex_immediate_list(env, sh->dev, sh->ordinal,
                                                      w->id % sh->num_engines,
                                                      ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS);
    ze_kernel_handle_t add = ex_kernel_create(sh->module, "vector_add");
    ze_kernel_handle_t scale = ex_kernel_create(sh->module, "scale_f32");
    const ze_group_count_t g_add = ex_group_count_1d(add, n);
    const ze_group_count_t g_scale = ex_group_count_1d(scale, n);
    ze_event_pool_handle_t pool = ex_event_pool(env, ZE_EVENT_POOL_FLAG_HOST_VISIBLE, 1);
    ze_event_handle_t done = ex_event(pool, 0);

    float *a = ex_alloc_shared(env, sh->dev, bytes);
    float *b = ex_alloc_shared(env, sh->dev, bytes);
    float *c_d = ex_alloc_device(env, sh->dev, bytes);
    float *c_h = ex_alloc_host(env, bytes);
    float *want = malloc(bytes);
    EX_REQUIRE(want != NULL, "out of host memory");
    const float two = 2.0f;
    EX_ARG(add, 0, a);
    EX_ARG(add, 1, b);
    EX_ARG(add, 2, c_d);
    EX_ARG(scale, 0, c_d);
    EX_ARG(scale, 1, two);

    for (uint32_t it = 0; it < sh->iters; ++it) {
        for (uint32_t i = 0; i < n; ++i) {
            a[i] = (float)(w->id * 1000u + it + i % 256u);
            b[i] = (float)(i % 100u);
            want[i] = 2.0f * (a[i] + b[i]);
            c_h[i] = -1.0f;
        }
        EX_CHECK(zeCommandListAppendLaunchKernel(list, add, &g_add, NULL, 0, NULL));
        EX_CHECK(zeCommandListAppendBarrier(list, NULL, 0, NULL));
        EX_CHECK(zeCommandListAppendLaunchKernel(list, scale, &g_scale, NULL, 0, NULL));
        EX_CHECK(zeCommandListAppendBarrier(list, NULL, 0, NULL));
        EX_CHECK(zeCommandListAppendMemoryCopy(list, c_h, c_d, bytes, done, 0, NULL));
        EX_CHECK(zeEventHostSynchronize(done, UINT64_MAX));
        ex_verify_f32("phase 1: c = 2 (a + b) on a thread's immediate list", c_h, want, n);
        EX_CHECK(zeEventHostReset(done));
        w->imm_checked++;
    }

    free(want);
    ex_free(env, c_h);
    ex_free(env, c_d);
    ex_free(env, b);
    ex_free(env, a);
    EX_CHECK(zeEventDestroy(done));
    EX_CHECK(zeEventPoolDestroy(pool));
    EX_CHECK(zeKernelDestroy(scale));
    EX_CHECK(zeKernelDestroy(add));
    EX_CHECK(zeCommandListDestroy(list));
}

static void phase_shared_queue(worker_t *w)
{
    shared_state_t *sh = w->sh;
    const ex_env_t *env = sh->env;
    const uint32_t n = sh->n;
    const size_t bytes = (size_t)n * sizeof(float);

    ze_kernel_handle_t scale = ex_kernel_create(sh->module, "scale_f32");
    ze_kernel_handle_t fill = ex_kernel_create(sh->module, "fill_u32");
    const ze_group_count_t g_scale = ex_group_count_1d(scale, n);
    const ze_group_count_t g_fill = ex_group_count_1d(fill, 1);
    ze_fence_desc_t fdesc = {.stype = ZE_STRUCTURE_TYPE_FENCE_DESC};
    ze_fence_handle_t fence = NULL;
    EX_CHECK(zeFenceCreate(sh->queue, &fdesc, &fence));

    float *in = ex_alloc_host(env, bytes);
    float *out = ex_alloc_host(env, bytes);
    float *x = ex_alloc_device(env, sh->dev, bytes);
    uint32_t *tag_d = ex_alloc_device(env, sh->dev, sizeof(uint32_t));
    uint32_t *tag_h = ex_alloc_host(env, sizeof(uint32_t));
    float *want = malloc(bytes);
    EX_REQUIRE(want != NULL, "out of host memory");

    ze_command_list_desc_t ldesc = {
        .stype = ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC, .commandQueueGroupOrdinal = sh->ordinal};
    ze_command_list_handle_t list = NULL;
    EX_CHECK(zeCommandListCreate(env->context, sh->dev, &ldesc, &list));
    const float three = 3.0f;
    const uint32_t tag = 0xA0000000u | w->id;
    EX_ARG(fill, 0, tag_d);
    EX_ARG(fill, 1, tag);
    EX_CHECK(zeCommandListAppendLaunchKernel(list, fill, &g_fill, NULL, 0, NULL));
    EX_CHECK(zeCommandListAppendMemoryCopy(list, x, in, bytes, NULL, 0, NULL));
    EX_CHECK(zeCommandListAppendBarrier(list, NULL, 0, NULL));
    EX_ARG(scale, 0, x);
    EX_ARG(scale, 1, three);
    EX_CHECK(zeCommandListAppendLaunchKernel(list, scale, &g_scale, NULL, 0, NULL));
    EX_CHECK(zeCommandListAppendBarrier(list, NULL, 0, NULL));
    EX_CHECK(zeCommandListAppendMemoryCopy(list, out, x, bytes, NULL, 0, NULL));
    EX_CHECK(zeCommandListAppendMemoryCopy(list, tag_h, tag_d, sizeof(uint32_t), NULL, 0, NULL));
    EX_CHECK(zeCommandListClose(list));

    int rc = pthread_barrier_wait(&sh->start_phase2);
    EX_REQUIRE(rc == 0 || rc == PTHREAD_BARRIER_SERIAL_THREAD, "pthread_barrier_wait failed");

    for (uint32_t it = 0; it < sh->iters; ++it) {
        for (uint32_t i = 0; i < n; ++i) {
            in[i] = (float)(w->id * 4096u + (i + it) % 4096u);
            want[i] = 3.0f * in[i];
            out[i] = -1.0f;
        }
        *tag_h = 0;
        EX_CHECK(zeCommandQueueExecuteCommandLists(sh->queue, 1, &list, fence));
        EX_CHECK(zeFenceHostSynchronize(fence, UINT64_MAX));
        ex_verify_f32("phase 2: out = 3 * in on the shared queue", out, want, n);
        ex_verify_u32("phase 2: tag written by this thread's list", tag_h, &tag, 1);
        EX_CHECK(zeFenceReset(fence));
        w->queue_checked++;
    }

    EX_CHECK(zeCommandListDestroy(list));
    free(want);
    ex_free(env, tag_h);
    ex_free(env, tag_d);
    ex_free(env, x);
    ex_free(env, out);
    ex_free(env, in);
    EX_CHECK(zeFenceDestroy(fence));
    EX_CHECK(zeKernelDestroy(fill));
    EX_CHECK(zeKernelDestroy(scale));
}

static void *worker_main(void *arg)
{
    worker_t *w = arg;
    phase_immediate(w);
    phase_shared_queue(w);
    return NULL;
}

int main(int argc, char **argv)
{
    ex_env_t env;
    ex_init(&env, argv[0]);
    const uint32_t threads = (uint32_t)ex_arg_u64(argc, argv, 1, "threads", 8, 1, 256);
    const uint32_t iters = (uint32_t)ex_arg_u64(argc, argv, 2, "iterations", 20, 1, 1000000);
    const uint32_t n = (uint32_t)ex_arg_u64(argc, argv, 3, "elements", 4096, 1, 1u << 24);
    ex_describe_device(&env, 0);

    shared_state_t sh = {.env = &env, .dev = env.devices[0], .iters = iters, .n = n};
    sh.ordinal = ex_compute_group(sh.dev, &sh.num_engines);
    sh.module = ex_module_create(&env, sh.dev);
    ze_command_queue_desc_t qdesc = {
        .stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC,
        .ordinal = sh.ordinal,
        .index = 0,
        .mode = ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS,
        .priority = ZE_COMMAND_QUEUE_PRIORITY_NORMAL,
    };
    EX_CHECK(zeCommandQueueCreate(env.context, sh.dev, &qdesc, &sh.queue));
    EX_REQUIRE(pthread_barrier_init(&sh.start_phase2, NULL, threads) == 0,
               "pthread_barrier_init failed");

    worker_t *workers = calloc(threads, sizeof *workers);
    EX_REQUIRE(workers != NULL, "out of host memory");
    for (uint32_t t = 0; t < threads; ++t) {
        workers[t].sh = &sh;
        workers[t].id = t;
        EX_REQUIRE(pthread_create(&workers[t].thread, NULL, worker_main, &workers[t]) == 0,
                   "pthread_create failed for thread %u", t);
    }
    unsigned imm = 0, queued = 0;
    for (uint32_t t = 0; t < threads; ++t) {
        EX_REQUIRE(pthread_join(workers[t].thread, NULL) == 0, "pthread_join failed");
        EX_REQUIRE(workers[t].imm_checked == iters && workers[t].queue_checked == iters,
                   "thread %u verified %u + %u iterations, expected %u + %u", t,
                   workers[t].imm_checked, workers[t].queue_checked, iters, iters);
        imm += workers[t].imm_checked;
        queued += workers[t].queue_checked;
    }
    EX_CHECK(zeCommandQueueSynchronize(sh.queue, UINT64_MAX));

    free(workers);
    pthread_barrier_destroy(&sh.start_phase2);
    EX_CHECK(zeCommandQueueDestroy(sh.queue));
    EX_CHECK(zeModuleDestroy(sh.module));
    ex_fini(&env);

    ex_info("%u threads x %u iterations, %u floats: phase 1 %u immediate-list rounds on %u compute "
            "engine(s) (5 commands each); phase 2 %u executions of per-thread regular lists "
            "(7 commands each) on one shared queue",
            threads, iters, n, imm, sh.num_engines < threads ? sh.num_engines : threads, queued);
    ex_info("PASS: every thread's results verified after every iteration of both phases");
    return 0;
}
