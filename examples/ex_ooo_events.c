/* SPDX-License-Identifier: MIT */
/* A small task graph ordered only by events, across two out-of-order immediate lists (a compute
 * engine and, when the device has one, a copy-only engine), with kernel timestamps.
 *
 *                 host signals "start"
 *        +------------------+------------------+
 *   copy a->a_d        copy b->b_d        fill_u32(u_d)        (roots wait on "start")
 *        |                  |                  |
 *   scale_f32(a_d,2)   scale_f32(b_d,4)   copy u_d->u_h
 *        +-------+----------+                  |
 *          vector_add(a_d,b_d,c_d)             |
 *                |                             |
 *          copy c_d->c_h                       |
 *                +--------------+--------------+
 *            AppendWaitOnEvents + AppendSignalEvent("done")
 *
 * Every graph operation signals its own event of a KERNEL_TIMESTAMP | HOST_VISIBLE pool. After
 * each round the program checks the data (c = 2a + 4b, u = fill value), reads
 * zeEventQueryKernelTimestamp for every operation and checks that each operation starts no
 * earlier than its predecessors end. Timestamps are compared modulo 2^kernelTimestampValidBits,
 * so a counter wrap between two operations does not matter. Then the events are recycled with
 * zeCommandListAppendEventReset (device side) and zeEventHostReset (host side) for the next
 * round, which uses new input values.
 *
 * usage: ex_ooo_events [elements] [rounds]   (defaults 4096, 2) */
#include "ex_common.h"

#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

enum op {
    OP_COPY_A, OP_COPY_B, OP_SCALE_A, OP_SCALE_B, OP_ADD, OP_COPY_C, OP_FILL_U, OP_COPY_U,
    OP_COUNT
};
static const char *const op_name[OP_COUNT] = {
    "copy a->a_d", "copy b->b_d", "scale_f32(a_d,2)", "scale_f32(b_d,4)",
    "vector_add",  "copy c_d->c_h", "fill_u32(u_d)",  "copy u_d->u_h",
};
/* Dependency edges {predecessor, successor} given to the device as event wait lists. */
static const int edges[][2] = {
    {OP_COPY_A, OP_SCALE_A}, {OP_COPY_B, OP_SCALE_B}, {OP_SCALE_A, OP_ADD},
    {OP_SCALE_B, OP_ADD},    {OP_ADD, OP_COPY_C},     {OP_FILL_U, OP_COPY_U},
};
#define NUM_EDGES (sizeof edges / sizeof edges[0])

enum { SYNC_START, SYNC_DONE, SYNC_RECYCLED, SYNC_COUNT };

/* a - b for timestamps counting modulo 2^bits, as a signed value (|a - b| < 2^(bits-1)). */
static int64_t ts_diff(uint64_t a, uint64_t b, uint64_t mask)
{
    uint64_t d = (a - b) & mask;
    uint64_t half = mask / 2 + 1;
    return d >= half ? -(int64_t)(mask - d) - 1 : (int64_t)d;
}

static void expect_not_ready(ze_result_t r, const char *api, const char *what)
{
    EX_REQUIRE(r == ZE_RESULT_NOT_READY, "%s(%s) returned 0x%08x (%s), expected ZE_RESULT_NOT_READY",
               api, what, (unsigned)r, ex_result_name(r));
}

int main(int argc, char **argv)
{
    ex_env_t env;
    ex_init(&env, argv[0]);
    const uint32_t n = (uint32_t)ex_arg_u64(argc, argv, 1, "elements", 4096, 1, 1u << 24);
    const uint32_t rounds = (uint32_t)ex_arg_u64(argc, argv, 2, "rounds", 2, 1, 100000);
    const size_t bytes = (size_t)n * sizeof(float);
    ze_device_handle_t dev = env.devices[0];
    ex_describe_device(&env, 0);

    const uint32_t bits = env.props[0].kernelTimestampValidBits;
    const uint64_t hz = env.props[0].timerResolution; /* ticks per second (_1_2 properties) */
    EX_REQUIRE(bits >= 2 && bits <= 64 && hz > 0,
               "implausible timer properties: kernelTimestampValidBits=%u timerResolution=%" PRIu64,
               bits, hz);
    const uint64_t mask = bits == 64 ? UINT64_MAX : (UINT64_C(1) << bits) - 1;

    /* Kernels on a compute engine, copies on a copy-only engine when there is one. */
    uint32_t num_compute = 0;
    const uint32_t compute = ex_compute_group(dev, &num_compute);
    const uint32_t copy_only = ex_find_queue_group(dev, ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COPY,
                                                   ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COMPUTE,
                                                   NULL);
    ze_command_list_handle_t lc =
        ex_immediate_list(&env, dev, compute, 0, ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS);
    ze_command_list_handle_t lk =
        copy_only != UINT32_MAX
            ? ex_immediate_list(&env, dev, copy_only, 0, ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS)
            : ex_immediate_list(&env, dev, compute, num_compute > 1 ? 1 : 0,
                                ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS);
    const char *copy_engine = copy_only != UINT32_MAX ? "copy" : "compute";
    const char *op_engine[OP_COUNT] = {copy_engine, copy_engine, "compute", "compute",
                                       "compute",   copy_engine, "compute", copy_engine};

    ze_module_handle_t module = ex_module_create(&env, dev);
    ze_kernel_handle_t scale = ex_kernel_create(module, "scale_f32");
    ze_kernel_handle_t add = ex_kernel_create(module, "vector_add");
    ze_kernel_handle_t fill = ex_kernel_create(module, "fill_u32");
    const ze_group_count_t g_scale = ex_group_count_1d(scale, n);
    const ze_group_count_t g_add = ex_group_count_1d(add, n);
    const ze_group_count_t g_fill = ex_group_count_1d(fill, n);

    float *a_h = ex_alloc_host(&env, bytes);
    float *b_h = ex_alloc_host(&env, bytes);
    float *c_h = ex_alloc_host(&env, bytes);
    uint32_t *u_h = ex_alloc_host(&env, bytes);
    float *a_d = ex_alloc_device(&env, dev, bytes);
    float *b_d = ex_alloc_device(&env, dev, bytes);
    float *c_d = ex_alloc_device(&env, dev, bytes);
    uint32_t *u_d = ex_alloc_device(&env, dev, bytes);
    float *want_c = malloc(bytes);
    uint32_t *want_u = malloc(bytes);
    EX_REQUIRE(want_c != NULL && want_u != NULL, "out of host memory");

    ze_event_pool_handle_t tpool = ex_event_pool(
        &env, ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP | ZE_EVENT_POOL_FLAG_HOST_VISIBLE, OP_COUNT);
    ze_event_pool_handle_t spool = ex_event_pool(&env, ZE_EVENT_POOL_FLAG_HOST_VISIBLE, SYNC_COUNT);
    ze_event_handle_t ev[OP_COUNT], sync[SYNC_COUNT];
    for (uint32_t i = 0; i < OP_COUNT; ++i)
        ev[i] = ex_event(tpool, i);
    for (uint32_t i = 0; i < SYNC_COUNT; ++i)
        sync[i] = ex_event(spool, i);

    const float two = 2.0f, four = 4.0f;
    int64_t min_gap = INT64_MAX;
    for (uint32_t r = 0; r < rounds; ++r) {
        const uint32_t fill_value = 0xC0DE0000u + r;
        for (uint32_t i = 0; i < n; ++i) {
            a_h[i] = (float)(i % 1024u + r);
            b_h[i] = 0.5f * (float)(i % 512u) - (float)r;
            want_c[i] = 2.0f * a_h[i] + 4.0f * b_h[i];
            want_u[i] = fill_value;
            c_h[i] = -1.0f;
            u_h[i] = 0;
        }

        /* The graph; nothing may start before the host signals "start". */
        ze_event_handle_t start = sync[SYNC_START];
        EX_CHECK(zeCommandListAppendMemoryCopy(lk, a_d, a_h, bytes, ev[OP_COPY_A], 1, &start));
        EX_CHECK(zeCommandListAppendMemoryCopy(lk, b_d, b_h, bytes, ev[OP_COPY_B], 1, &start));
        EX_ARG(scale, 0, a_d);
        EX_ARG(scale, 1, two);
        EX_CHECK(zeCommandListAppendLaunchKernel(lc, scale, &g_scale, ev[OP_SCALE_A], 1,
                                                 &ev[OP_COPY_A]));
        EX_ARG(scale, 0, b_d);
        EX_ARG(scale, 1, four);
        EX_CHECK(zeCommandListAppendLaunchKernel(lc, scale, &g_scale, ev[OP_SCALE_B], 1,
                                                 &ev[OP_COPY_B]));
        EX_ARG(add, 0, a_d);
        EX_ARG(add, 1, b_d);
        EX_ARG(add, 2, c_d);
        ze_event_handle_t scaled[2] = {ev[OP_SCALE_A], ev[OP_SCALE_B]};
        EX_CHECK(zeCommandListAppendLaunchKernel(lc, add, &g_add, ev[OP_ADD], 2, scaled));
        EX_ARG(fill, 0, u_d);
        EX_ARG(fill, 1, fill_value);
        EX_CHECK(zeCommandListAppendLaunchKernel(lc, fill, &g_fill, ev[OP_FILL_U], 1, &start));
        EX_CHECK(zeCommandListAppendMemoryCopy(lk, c_h, c_d, bytes, ev[OP_COPY_C], 1, &ev[OP_ADD]));
        EX_CHECK(zeCommandListAppendMemoryCopy(lk, u_h, u_d, bytes, ev[OP_COPY_U], 1,
                                               &ev[OP_FILL_U]));
        ze_event_handle_t leaves[2] = {ev[OP_COPY_C], ev[OP_COPY_U]};
        EX_CHECK(zeCommandListAppendWaitOnEvents(lc, 2, leaves));
        EX_CHECK(zeCommandListAppendSignalEvent(lc, sync[SYNC_DONE]));

        /* Give the device time to (wrongly) run ahead, then check that the gate held. */
        struct timespec pause = {0, 2 * 1000 * 1000};
        nanosleep(&pause, NULL);
        expect_not_ready(zeEventQueryStatus(ev[OP_COPY_A]), "zeEventQueryStatus", "copy a->a_d");
        expect_not_ready(zeEventQueryStatus(ev[OP_FILL_U]), "zeEventQueryStatus", "fill_u32");
        expect_not_ready(zeEventQueryStatus(sync[SYNC_DONE]), "zeEventQueryStatus", "done");
        ze_kernel_timestamp_result_t early;
        expect_not_ready(zeEventQueryKernelTimestamp(ev[OP_ADD], &early),
                         "zeEventQueryKernelTimestamp", "vector_add");

        EX_CHECK(zeEventHostSignal(start));
        EX_CHECK(zeEventHostSynchronize(sync[SYNC_DONE], UINT64_MAX));

        ex_verify_f32("c = 2a + 4b", c_h, want_c, n);
        ex_verify_u32("u = fill value", u_h, want_u, n);

        /* Timestamps: every operation completed, so every query must succeed. */
        ze_kernel_timestamp_result_t ts[OP_COUNT];
        for (uint32_t i = 0; i < OP_COUNT; ++i) {
            EX_CHECK(zeEventQueryStatus(ev[i]));
            EX_CHECK(zeEventQueryKernelTimestamp(ev[i], &ts[i]));
            int64_t dur = ts_diff(ts[i].global.kernelEnd, ts[i].global.kernelStart, mask);
            EX_REQUIRE(dur >= 0,
                       "round %u: %s ends before it starts (start %" PRIu64 ", end %" PRIu64 ")", r,
                       op_name[i], ts[i].global.kernelStart, ts[i].global.kernelEnd);
        }
        for (size_t e = 0; e < NUM_EDGES; ++e) {
            const int p = edges[e][0], s = edges[e][1];
            int64_t gap = ts_diff(ts[s].global.kernelStart, ts[p].global.kernelEnd, mask);
            EX_REQUIRE(gap >= 0,
                       "round %u: %s started %" PRId64 " ticks before its predecessor %s ended "
                       "(start %" PRIu64 ", predecessor end %" PRIu64 ", %u valid bits)",
                       r, op_name[s], -gap, op_name[p], ts[s].global.kernelStart,
                       ts[p].global.kernelEnd, bits);
            if (gap < min_gap)
                min_gap = gap;
        }

        if (r == 0) {
            /* Show the first round relative to the earliest start. */
            int64_t t0 = 0;
            for (uint32_t i = 1; i < OP_COUNT; ++i) {
                int64_t d = ts_diff(ts[i].global.kernelStart, ts[0].global.kernelStart, mask);
                if (d < t0)
                    t0 = d;
            }
            ex_info("round 0 timeline (device ticks -> us, relative to the first start):");
            for (uint32_t i = 0; i < OP_COUNT; ++i) {
                int64_t s = ts_diff(ts[i].global.kernelStart, ts[0].global.kernelStart, mask) - t0;
                int64_t d = ts_diff(ts[i].global.kernelEnd, ts[i].global.kernelStart, mask);
                ex_info("  %-17s %-7s start %9.2f us  duration %8.2f us", op_name[i], op_engine[i],
                        (double)s * 1e6 / (double)hz, (double)d * 1e6 / (double)hz);
            }
        }

        /* Recycle: reset the operation events on the device, wait for that, reset the rest on
         * the host. */
        for (uint32_t i = 0; i < OP_COUNT; ++i)
            EX_CHECK(zeCommandListAppendEventReset(lc, ev[i]));
        EX_CHECK(zeCommandListAppendBarrier(lc, sync[SYNC_RECYCLED], 0, NULL));
        EX_CHECK(zeEventHostSynchronize(sync[SYNC_RECYCLED], UINT64_MAX));
        for (uint32_t i = 0; i < OP_COUNT; ++i)
            expect_not_ready(zeEventQueryStatus(ev[i]), "zeEventQueryStatus after device reset",
                             op_name[i]);
        for (uint32_t i = 0; i < SYNC_COUNT; ++i)
            EX_CHECK(zeEventHostReset(sync[i]));
    }

    for (uint32_t i = 0; i < SYNC_COUNT; ++i)
        EX_CHECK(zeEventDestroy(sync[i]));
    for (uint32_t i = 0; i < OP_COUNT; ++i)
        EX_CHECK(zeEventDestroy(ev[i]));
    EX_CHECK(zeEventPoolDestroy(spool));
    EX_CHECK(zeEventPoolDestroy(tpool));
    free(want_u);
    free(want_c);
    void *bufs[] = {a_h, b_h, c_h, u_h, a_d, b_d, c_d, u_d};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; ++i)
        ex_free(&env, bufs[i]);
    EX_CHECK(zeKernelDestroy(fill));
    EX_CHECK(zeKernelDestroy(add));
    EX_CHECK(zeKernelDestroy(scale));
    EX_CHECK(zeModuleDestroy(module));
    EX_CHECK(zeCommandListDestroy(lk));
    EX_CHECK(zeCommandListDestroy(lc));
    ex_fini(&env);

    ex_info("%u rounds x %d timed operations (%u elements) on a compute and a %s engine, "
            "plus wait/signal/%d resets/barrier per round",
            rounds, OP_COUNT, n, copy_engine, OP_COUNT);
    ex_info("PASS: data correct; %zu dependency edges x %u rounds ordered by kernel timestamps "
            "(smallest gap %" PRId64 " ticks, %u-bit counter, %" PRIu64 " Hz)",
            NUM_EDGES, rounds, min_gap, bits, hz);
    return 0;
}
