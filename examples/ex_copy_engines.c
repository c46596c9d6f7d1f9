/* SPDX-License-Identifier: MIT */
/* Transfers in every direction on the copy-only engines (the queue group whose flags have COPY
 * but not COMPUTE; the compute group is used if a device has none).
 *
 *   list 0 (copy engine 0), one barrier after each step:
 *     host -> device -> device -> host -> host -> shared -> shared -> malloc -> device -> malloc
 *   list 1 (copy engine 1 when there are two), concurrently:
 *     3-D region copy host -> device with different pitches, region copy device -> host,
 *     memory fills with 1-, 4- and 16-byte patterns on device, host and shared memory
 *   with a second device: device 0 -> device 1 on device 0's copy engine, device 1 -> device 0
 *     on device 1's copy engine, read back on device 0's; ordered by events.
 * Every host-visible destination is compared byte by byte with what it must hold; device
 * buffers are checked through the copies that read them back.
 *
 * usage: ex_copy_engines [bytes]   (default 1048576, at least 64) */
#include "ex_common.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* 3-D region copy geometry (bytes; x is in bytes). */
enum {
    R_SRC_PITCH = 80, R_SRC_ROWS = 40, R_SRC_SLICES = 3, /* source host buffer  80 x 40 x 3 */
    R_DEV_PITCH = 48, R_DEV_ROWS = 24, R_DEV_SLICES = 2, /* device buffer       48 x 24 x 2 */
    R_DST_PITCH = 64, R_DST_ROWS = 32, R_DST_SLICES = 3, /* destination host    64 x 32 x 3 */
    R_W = 40, R_H = 20, R_D = 2,                         /* region size */
};

typedef struct counters {
    unsigned copies, region_copies, fills;
    size_t bytes;
} counters_t;

static void fill_pattern(uint8_t *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; ++i)
        p[i] = ex_pattern_byte(i, seed);
}

static void copy_step(ze_command_list_handle_t list, void *dst, const void *src, size_t n,
                      counters_t *c)
{
    EX_CHECK(zeCommandListAppendMemoryCopy(list, dst, src, n, NULL, 0, NULL));
    EX_CHECK(zeCommandListAppendBarrier(list, NULL, 0, NULL));
    c->copies++;
    c->bytes += n;
}

static ze_command_list_handle_t copy_list(const ex_env_t *env, uint32_t dev_index, uint32_t index,
                                          ze_command_queue_group_properties_t *props,
                                          int *is_copy_only)
{
    ze_device_handle_t dev = env->devices[dev_index];
    uint32_t ordinal = ex_find_queue_group(dev, ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COPY,
                                           ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COMPUTE, props);
    *is_copy_only = ordinal != UINT32_MAX;
    if (ordinal == UINT32_MAX) {
        ex_info("device %u has no copy-only queue group; using the compute group", dev_index);
        ordinal = ex_find_queue_group(dev, ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COPY, 0, props);
        EX_REQUIRE(ordinal != UINT32_MAX, "device %u has no queue group that can copy", dev_index);
    }
    if (index >= props->numQueues)
        index = props->numQueues - 1;
    return ex_immediate_list(env, dev, ordinal, index, ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS);
}

int main(int argc, char **argv)
{
    ex_env_t env;
    ex_init(&env, argv[0]);
    const size_t n = (size_t)ex_arg_u64(argc, argv, 1, "bytes", 1u << 20, 64, (uint64_t)1 << 30);
    ze_device_handle_t dev = env.devices[0];
    ex_describe_device(&env, 0);
    counters_t cnt = {0};

    ze_command_queue_group_properties_t gprops;
    int copy_only = 0;
    ze_command_list_handle_t l0 = copy_list(&env, 0, 0, &gprops, &copy_only);
    ze_command_list_handle_t l1 = copy_list(&env, 0, 1, &gprops, &copy_only);
    ex_info("copy group: %u engine(s), %s, max fill pattern %zu bytes", gprops.numQueues,
            copy_only ? "copy-only" : "compute+copy", gprops.maxMemoryFillPatternSize);

    ze_event_pool_handle_t pool = ex_event_pool(&env, ZE_EVENT_POOL_FLAG_HOST_VISIBLE, 5);
    ze_event_handle_t ev_chain = ex_event(pool, 0), ev_misc = ex_event(pool, 1);

    /* ---- list 0: the chain through every kind of memory ------------------------------------ */
    uint8_t *h0 = ex_alloc_host(&env, n), *h1 = ex_alloc_host(&env, n), *h2 = ex_alloc_host(&env, n);
    uint8_t *d0 = ex_alloc_device(&env, dev, n), *d1 = ex_alloc_device(&env, dev, n);
    uint8_t *d2 = ex_alloc_device(&env, dev, n);
    uint8_t *s0 = ex_alloc_shared(&env, dev, n), *s1 = ex_alloc_shared(&env, dev, n);
    uint8_t *m0 = malloc(n), *m1 = malloc(n);
    EX_REQUIRE(m0 != NULL && m1 != NULL, "out of host memory");
    ex_expect_mem_type(&env, h0, ZE_MEMORY_TYPE_HOST, "zeMemAllocHost buffer");
    ex_expect_mem_type(&env, d0, ZE_MEMORY_TYPE_DEVICE, "zeMemAllocDevice buffer");
    ex_expect_mem_type(&env, s0, ZE_MEMORY_TYPE_SHARED, "zeMemAllocShared buffer");
    ex_expect_mem_type(&env, m0, ZE_MEMORY_TYPE_UNKNOWN, "malloc buffer");
    ex_expect_mem_type(&env, d0 + n / 2, ZE_MEMORY_TYPE_DEVICE, "interior pointer");

    fill_pattern(h0, n, 1);
    uint8_t *host_bufs[] = {h1, h2, s0, s1, m0, m1};
    for (size_t i = 0; i < sizeof host_bufs / sizeof host_bufs[0]; ++i)
        memset(host_bufs[i], 0xEE, n);

    copy_step(l0, d0, h0, n, &cnt); /* host -> device */
    copy_step(l0, d1, d0, n, &cnt); /* device -> device */
    copy_step(l0, h1, d1, n, &cnt); /* device -> host */
    copy_step(l0, h2, h1, n, &cnt); /* host -> host */
    copy_step(l0, s0, h2, n, &cnt); /* host -> shared */
    copy_step(l0, s1, s0, n, &cnt); /* shared -> shared */
    copy_step(l0, m0, s1, n, &cnt); /* shared -> malloc */
    copy_step(l0, d2, m0, n, &cnt); /* malloc -> device */
    copy_step(l0, m1, d2, n, &cnt); /* device -> malloc */
    EX_CHECK(zeCommandListAppendBarrier(l0, ev_chain, 0, NULL));

    /* ---- list 1: region copies and fills ---------------------------------------------------- */
    const size_t rsrc_size = (size_t)R_SRC_PITCH * R_SRC_ROWS * R_SRC_SLICES;
    const size_t rdev_size = (size_t)R_DEV_PITCH * R_DEV_ROWS * R_DEV_SLICES;
    const size_t rdst_size = (size_t)R_DST_PITCH * R_DST_ROWS * R_DST_SLICES;
    uint8_t *rsrc = ex_alloc_host(&env, rsrc_size), *rdst = ex_alloc_host(&env, rdst_size);
    uint8_t *rdev = ex_alloc_device(&env, dev, rdev_size);
    fill_pattern(rsrc, rsrc_size, 2);
    memset(rdst, 0xEE, rdst_size);
    const ze_copy_region_t src_region = {5, 3, 1, R_W, R_H, R_D};  /* in rsrc */
    const ze_copy_region_t dev_region = {0, 0, 0, R_W, R_H, R_D};  /* in rdev */
    const ze_copy_region_t dst_region = {8, 4, 1, R_W, R_H, R_D};  /* in rdst */
    EX_CHECK(zeCommandListAppendMemoryCopyRegion(
        l1, rdev, &dev_region, R_DEV_PITCH, R_DEV_PITCH * R_DEV_ROWS, rsrc, &src_region,
        R_SRC_PITCH, R_SRC_PITCH * R_SRC_ROWS, NULL, 0, NULL));
    EX_CHECK(zeCommandListAppendBarrier(l1, NULL, 0, NULL));
    EX_CHECK(zeCommandListAppendMemoryCopyRegion(
        l1, rdst, &dst_region, R_DST_PITCH, R_DST_PITCH * R_DST_ROWS, rdev, &dev_region,
        R_DEV_PITCH, R_DEV_PITCH * R_DEV_ROWS, NULL, 0, NULL));
    cnt.region_copies += 2;
    cnt.bytes += 2 * (size_t)R_W * R_H * R_D;

    /* Fills: 4-byte pattern on device memory (read back), 1-byte pattern straight into host
     * memory with an odd size, 16-byte pattern into shared memory if the engine allows it. */
    const size_t n4 = n & ~(size_t)3, n16 = n & ~(size_t)15, n1 = n - 3;
    const uint32_t pat4 = 0xDEADBEEFu;
    const uint8_t pat1 = 0x5A;
    uint8_t pat16[16];
    for (unsigned i = 0; i < 16; ++i)
        pat16[i] = (uint8_t)(0x10 * i + 1);
    const int do16 = gprops.maxMemoryFillPatternSize >= 16;
    uint8_t *f_d = ex_alloc_device(&env, dev, n), *f_h = ex_alloc_host(&env, n);
    uint8_t *f_h1 = ex_alloc_host(&env, n), *f_s = ex_alloc_shared(&env, dev, n);
    memset(f_h, 0xEE, n);
    memset(f_h1, 0xEE, n);
    memset(f_s, 0xEE, n);
    EX_CHECK(zeCommandListAppendMemoryFill(l1, f_d, &pat4, sizeof pat4, n4, NULL, 0, NULL));
    EX_CHECK(zeCommandListAppendMemoryFill(l1, f_h1, &pat1, sizeof pat1, n1, NULL, 0, NULL));
    cnt.fills += 2;
    cnt.bytes += n4 + n1;
    if (do16) {
        EX_CHECK(zeCommandListAppendMemoryFill(l1, f_s, pat16, sizeof pat16, n16, NULL, 0, NULL));
        cnt.fills++;
        cnt.bytes += n16;
    }
    EX_CHECK(zeCommandListAppendBarrier(l1, NULL, 0, NULL));
    EX_CHECK(zeCommandListAppendMemoryCopy(l1, f_h, f_d, n4, NULL, 0, NULL));
    cnt.copies++;
    cnt.bytes += n4;
    EX_CHECK(zeCommandListAppendBarrier(l1, ev_misc, 0, NULL));

    EX_CHECK(zeEventHostSynchronize(ev_chain, UINT64_MAX));
    EX_CHECK(zeEventHostSynchronize(ev_misc, UINT64_MAX));

    /* ---- verify ------------------------------------------------------------------------------ */
    static const char *const chain_names[] = {
        "device->host copy (h1)",   "host->host copy (h2)",   "host->shared copy (s0)",
        "shared->shared copy (s1)", "shared->malloc copy (m0)", "device->malloc copy (m1)"};
    for (size_t i = 0; i < sizeof host_bufs / sizeof host_bufs[0]; ++i)
        ex_verify_bytes(chain_names[i], host_bufs[i], h0, n);

    uint8_t *want = malloc(n > rdst_size ? n : rdst_size);
    EX_REQUIRE(want != NULL, "out of host memory");
    memset(want, 0xEE, rdst_size);
    for (size_t z = 0; z < R_D; ++z)
        for (size_t y = 0; y < R_H; ++y)
            for (size_t x = 0; x < R_W; ++x) {
                size_t s = (src_region.originZ + z) * R_SRC_PITCH * R_SRC_ROWS +
                           (src_region.originY + y) * R_SRC_PITCH + src_region.originX + x;
                size_t d = (dst_region.originZ + z) * R_DST_PITCH * R_DST_ROWS +
                           (dst_region.originY + y) * R_DST_PITCH + dst_region.originX + x;
                want[d] = rsrc[s];
            }
    ex_verify_bytes("3-D region copy host->device->host (with untouched surroundings)", rdst, want,
                    rdst_size);

    memset(want, 0xEE, n);
    for (size_t i = 0; i < n4; i += 4)
        memcpy(want + i, &pat4, 4);
    ex_verify_bytes("4-byte fill of device memory, read back", f_h, want, n);
    memset(want, 0xEE, n);
    memset(want, pat1, n1);
    ex_verify_bytes("1-byte fill of host memory (odd size)", f_h1, want, n);
    if (do16) {
        memset(want, 0xEE, n);
        for (size_t i = 0; i < n16; i += 16)
            memcpy(want + i, pat16, 16);
        ex_verify_bytes("16-byte fill of shared memory", f_s, want, n);
    }

    /* ---- two devices ------------------------------------------------------------------------- */
    unsigned p2p_copies = 0;
    if (env.num_devices >= 2) {
        ze_device_handle_t dev1 = env.devices[1];
        ze_bool_t peer01 = 0, peer10 = 0;
        EX_CHECK(zeDeviceCanAccessPeer(dev, dev1, &peer01));
        EX_CHECK(zeDeviceCanAccessPeer(dev1, dev, &peer10));
        if (peer01 && peer10) {
            ze_command_queue_group_properties_t g1;
            int copy_only1 = 0;
            ze_command_list_handle_t k1 = copy_list(&env, 1, 0, &g1, &copy_only1);
            ze_event_handle_t e_to1 = ex_event(pool, 2), e_back = ex_event(pool, 3);
            ze_event_handle_t e_done = ex_event(pool, 4);
            uint8_t *x1 = ex_alloc_device(&env, dev1, n);
            uint8_t *y0 = ex_alloc_device(&env, dev, n);
            memset(h1, 0xEE, n);
            /* d0 still holds the pattern of h0. */
            EX_CHECK(zeCommandListAppendMemoryCopy(l0, x1, d0, n, e_to1, 0, NULL));
            EX_CHECK(zeCommandListAppendMemoryCopy(k1, y0, x1, n, e_back, 1, &e_to1));
            EX_CHECK(zeCommandListAppendMemoryCopy(l0, h1, y0, n, e_done, 1, &e_back));
            EX_CHECK(zeEventHostSynchronize(e_done, UINT64_MAX));
            ex_verify_bytes("device 0 -> device 1 -> device 0 -> host", h1, h0, n);
            p2p_copies = 3;
            cnt.copies += 3;
            cnt.bytes += 3 * n;
            ex_free(&env, y0);
            ex_free(&env, x1);
            EX_CHECK(zeEventDestroy(e_done));
            EX_CHECK(zeEventDestroy(e_back));
            EX_CHECK(zeEventDestroy(e_to1));
            EX_CHECK(zeCommandListDestroy(k1));
        } else {
            ex_info("devices 0 and 1 cannot access each other; skipping peer copies");
        }
    }

    free(want);
    void *usm[] = {h0, h1, h2, d0, d1, d2, s0, s1, rsrc, rdst, rdev, f_d, f_h, f_h1, f_s};
    for (size_t i = 0; i < sizeof usm / sizeof usm[0]; ++i)
        ex_free(&env, usm[i]);
    free(m1);
    free(m0);
    EX_CHECK(zeEventDestroy(ev_misc));
    EX_CHECK(zeEventDestroy(ev_chain));
    EX_CHECK(zeEventPoolDestroy(pool));
    EX_CHECK(zeCommandListDestroy(l1));
    EX_CHECK(zeCommandListDestroy(l0));
    ex_fini(&env);

    ex_info("%u copies (%u between devices), %u region copies, %u fills; %zu bytes per buffer, "
            "%zu bytes moved in total",
            cnt.copies, p2p_copies, cnt.region_copies, cnt.fills, n, cnt.bytes);
    ex_info("PASS: H2D, D2D, D2H, host->host, shared, malloc, region, fill%s verified byte by byte",
            p2p_copies ? ", peer" : "");
    return 0;
}
