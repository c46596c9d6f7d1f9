/* SPDX-License-Identifier: MIT */
/*
 * Memory: host/device/shared allocations, zeMemGetAllocProperties (also interior pointers,
 * malloc/stack memory = UNKNOWN, freed memory), zeMemGetAddressRange, copies between every
 * memory type on compute and copy-only engines, 2D/3D region copies with pitches, fills with
 * pattern sizes 1..16, MemoryCopyFromContext, prefetch and mem-advise; bytes verified exactly
 * and the truth src/dst/bytes fields checked.
 */
#include "zt.h"
#include "zt_truth.h"

enum { NCOPY = 8 };

struct shared {
    uint64_t list_compute, list_copy;
    uint64_t copy_bytes;
    const char *copy_src[NCOPY], *copy_dst[NCOPY];
    int ncopy;
    uint64_t region2d_bytes, region3d_bytes, fill_bytes[8], ctx_bytes;
    int nfill;
};

static struct shared *sh;

static void fill_pattern(uint8_t *p, size_t n, unsigned seed)
{
    uint32_t x = seed * 2654435761u + 1;
    for (size_t i = 0; i < n; i++) {
        x = x * 1103515245u + 12345u;
        p[i] = (uint8_t)(x >> 16);
    }
}

static void test_props(const zt_env *e)
{
    enum { SZ = 4096 };
    void *h = zt_host_alloc(e, SZ), *d = zt_device_alloc(e, 0, SZ), *s = zt_shared_alloc(e, 0, SZ);
    void *d1 = e->ndev > 1 ? zt_device_alloc(e, 1, SZ) : NULL;
    struct {
        void *p;
        ze_memory_type_t type;
        ze_device_handle_t dev;
        const char *name;
    } cases[] = {
        {h, ZE_MEMORY_TYPE_HOST, NULL, "host"},
        {d, ZE_MEMORY_TYPE_DEVICE, e->dev[0], "device"},
        {s, ZE_MEMORY_TYPE_SHARED, e->dev[0], "shared"},
        {d1, ZE_MEMORY_TYPE_DEVICE, e->ndev > 1 ? e->dev[1] : NULL, "device 1"},
    };
    for (int i = 0; i < 4; i++) {
        if (!cases[i].p)
            continue;
        for (size_t off = 0; off < SZ; off += SZ / 2 - 1) {
            ze_memory_allocation_properties_t mp = {.stype = ZE_STRUCTURE_TYPE_MEMORY_ALLOCATION_PROPERTIES};
            ze_device_handle_t dev = (ze_device_handle_t)(uintptr_t)0x1;
            IS_ZE(zeMemGetAllocProperties(e->ctx, (char *)cases[i].p + off, &mp, &dev),
                  ZE_RESULT_SUCCESS, "%s +%zu: zeMemGetAllocProperties", cases[i].name, off);
            zt_is_int(mp.type, cases[i].type, "%s +%zu: type", cases[i].name, off);
            if (cases[i].dev)
                zt_ok(dev == cases[i].dev, "%s +%zu: device handle", cases[i].name, off);
            else
                zt_ok(dev == NULL, "%s +%zu: no device for host memory", cases[i].name, off);
        }
        void *base = NULL;
        size_t size = 0;
        IS_ZE(zeMemGetAddressRange(e->ctx, (char *)cases[i].p + 100, &base, &size),
              ZE_RESULT_SUCCESS, "%s: zeMemGetAddressRange", cases[i].name);
        zt_ok(base == cases[i].p && size >= SZ, "%s: range = [base, base + >= %d)",
              cases[i].name, SZ);
    }
    void *m = malloc(256);
    int stack_var = 0;
    void *unknown[] = {m, &stack_var, (char *)m + 10};
    for (int i = 0; i < 3; i++) {
        ze_memory_allocation_properties_t mp = {.stype = ZE_STRUCTURE_TYPE_MEMORY_ALLOCATION_PROPERTIES};
        ze_device_handle_t dev = NULL;
        IS_ZE(zeMemGetAllocProperties(e->ctx, unknown[i], &mp, &dev), ZE_RESULT_SUCCESS,
              "non-USM pointer %d: zeMemGetAllocProperties", i);
        zt_is_int(mp.type, ZE_MEMORY_TYPE_UNKNOWN, "non-USM pointer %d: UNKNOWN", i);
    }
    free(m);
    zt_free(e->ctx, d);
    ze_memory_allocation_properties_t mp = {.stype = ZE_STRUCTURE_TYPE_MEMORY_ALLOCATION_PROPERTIES};
    CHECK_ZE(zeMemGetAllocProperties(e->ctx, d, &mp, NULL));
    zt_is_int(mp.type, ZE_MEMORY_TYPE_UNKNOWN, "freed allocation: UNKNOWN");
    zt_free(e->ctx, h);
    zt_free(e->ctx, s);
    if (d1)
        zt_free(e->ctx, d1);
}

static void test_copies(const zt_env *e, ze_command_list_handle_t l, int slot_base)
{
    enum { SZ = 100000 };
    uint8_t *h = zt_host_alloc(e, SZ), *d = zt_device_alloc(e, 0, SZ);
    uint8_t *s = zt_shared_alloc(e, 0, SZ), *m = malloc(SZ), *h2 = zt_host_alloc(e, SZ);
    fill_pattern(h, SZ, 1 + (unsigned)slot_base);
    memset(d, 0, SZ);
    memset(s, 0, SZ);
    memset(m, 0, SZ);
    memset(h2, 0, SZ);
    ze_event_handle_t ev[4];
    ze_event_pool_handle_t pool = zt_ts_events(e, 4, ev);
    /* a chain host -> device -> shared -> malloc -> host, ordered by events */
    CHECK_ZE(zeCommandListAppendMemoryCopy(l, d, h, SZ, ev[0], 0, NULL));
    CHECK_ZE(zeCommandListAppendMemoryCopy(l, s, d, SZ, ev[1], 1, &ev[0]));
    CHECK_ZE(zeCommandListAppendMemoryCopy(l, m, s, SZ, ev[2], 1, &ev[1]));
    CHECK_ZE(zeCommandListAppendMemoryCopy(l, h2, m, SZ, ev[3], 1, &ev[2]));
    CHECK_ZE(zeEventHostSynchronize(ev[3], ZT_FOREVER));
    zt_ok(memcmp(d, h, SZ) == 0 && memcmp(s, h, SZ) == 0 && memcmp(m, h, SZ) == 0 &&
              memcmp(h2, h, SZ) == 0,
          "copy chain host->device->shared->malloc->host moved %d bytes exactly", SZ);
    static const char *const src[] = {"host", "device", "shared", "unknown"};
    static const char *const dst[] = {"device", "shared", "unknown", "host"};
    for (int i = 0; i < 4; i++) {
        sh->copy_src[slot_base + i] = src[i];
        sh->copy_dst[slot_base + i] = dst[i];
    }
    sh->ncopy = slot_base + 4;
    sh->copy_bytes = SZ;
    for (int i = 0; i < 4; i++)
        zt_destroy(ev[i]);
    zt_destroy(pool);
    free(m);
}

static void test_regions_fills(const zt_env *e, ze_command_list_handle_t l)
{
    ze_event_handle_t ev[16];
    ze_event_pool_handle_t pool = zt_ts_events(e, 16, ev);
    /* 2D: src pitch 64 (rows of 64 bytes), region (3,2) 40x5 -> dst pitch 96 at (7,1) */
    enum { SP = 64, DP = 96, SROWS = 10, DROWS = 8 };
    uint8_t *src = zt_device_alloc(e, 0, SP * SROWS), *dst = zt_host_alloc(e, DP * DROWS);
    uint8_t want[DP * DROWS];
    fill_pattern(src, SP * SROWS, 7);
    memset(dst, 0xEE, DP * DROWS);
    memset(want, 0xEE, sizeof want);
    for (int y = 0; y < 5; y++)
        memcpy(want + (1 + y) * DP + 7, src + (2 + y) * SP + 3, 40);
    ze_copy_region_t sr = {3, 2, 0, 40, 5, 1}, dr = {7, 1, 0, 40, 5, 1};
    IS_ZE(zeCommandListAppendMemoryCopyRegion(l, dst, &dr, DP, 0, src, &sr, SP, 0, ev[0], 0, NULL),
          ZE_RESULT_SUCCESS, "2D MemoryCopyRegion");
    CHECK_ZE(zeEventHostSynchronize(ev[0], ZT_FOREVER));
    zt_ok(memcmp(dst, want, sizeof want) == 0,
          "2D region copy: exactly the 40x5 bytes moved, pitches honoured");
    sh->region2d_bytes = 40 * 5;

    /* 3D: 16x8 rows per slice, slices of 4; region (2,1,1) 5x3x2 -> (0,4,0) in a 12x6x3 box */
    enum { SW = 16, SH = 8, SD = 4, DW = 12, DH = 6, DD = 3 };
    uint8_t *s3 = zt_shared_alloc(e, 0, SW * SH * SD), *d3 = zt_device_alloc(e, 0, DW * DH * DD);
    uint8_t want3[DW * DH * DD];
    fill_pattern(s3, SW * SH * SD, 9);
    memset(d3, 0x11, DW * DH * DD);
    memset(want3, 0x11, sizeof want3);
    for (int z = 0; z < 2; z++)
        for (int y = 0; y < 3; y++)
            memcpy(want3 + z * DW * DH + (3 + y) * DW,
                   s3 + (1 + z) * SW * SH + (1 + y) * SW + 2, 5);
    ze_copy_region_t sr3 = {2, 1, 1, 5, 3, 2}, dr3 = {0, 3, 0, 5, 3, 2};
    IS_ZE(zeCommandListAppendMemoryCopyRegion(l, d3, &dr3, DW, DW * DH, s3, &sr3, SW, SW * SH,
                                              ev[1], 0, NULL),
          ZE_RESULT_SUCCESS, "3D MemoryCopyRegion");
    CHECK_ZE(zeEventHostSynchronize(ev[1], ZT_FOREVER));
    zt_ok(memcmp(d3, want3, sizeof want3) == 0, "3D region copy: slice pitches honoured");
    sh->region3d_bytes = 5 * 3 * 2;

    /* fills with pattern sizes 1, 2, 4, 8, 16 in the middle of a guarded buffer */
    enum { FS = 4096, GUARD = 64 };
    uint8_t *f = zt_device_alloc(e, 0, FS + 2 * GUARD);
    const size_t psz[] = {1, 2, 4, 8, 16};
    sh->nfill = 0;
    for (int i = 0; i < 5; i++) {
        uint8_t pat[16];
        for (int j = 0; j < 16; j++)
            pat[j] = (uint8_t)(0x10 * (i + 1) + j);
        memset(f, 0xAB, FS + 2 * GUARD);
        IS_ZE(zeCommandListAppendMemoryFill(l, f + GUARD, pat, psz[i], FS, ev[2 + i], 0, NULL),
              ZE_RESULT_SUCCESS, "MemoryFill pattern size %zu", psz[i]);
        CHECK_ZE(zeEventHostSynchronize(ev[2 + i], ZT_FOREVER));
        int good = 1;
        for (size_t k = 0; k < FS; k++)
            if (f[GUARD + k] != pat[k % psz[i]])
                good = 0;
        for (size_t k = 0; k < GUARD; k++)
            if (f[k] != 0xAB || f[GUARD + FS + k] != 0xAB)
                good = 0;
        zt_ok(good, "fill with a %zu-byte pattern: exact, guards untouched", psz[i]);
        sh->fill_bytes[sh->nfill++] = FS;
    }

    /* MemoryCopyFromContext */
    ze_context_desc_t cd = {.stype = ZE_STRUCTURE_TYPE_CONTEXT_DESC};
    ze_context_handle_t ctx2 = NULL;
    CHECK_ZE(zeContextCreate(e->driver, &cd, &ctx2));
    ze_host_mem_alloc_desc_t hd = {.stype = ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC};
    uint8_t *other = NULL;
    CHECK_ZE(zeMemAllocHost(ctx2, &hd, 5000, 64, (void **)&other));
    fill_pattern(other, 5000, 11);
    uint8_t *mine = zt_device_alloc(e, 0, 5000);
    memset(mine, 0, 5000);
    IS_ZE(zeCommandListAppendMemoryCopyFromContext(l, mine, ctx2, other, 5000, ev[8], 0, NULL),
          ZE_RESULT_SUCCESS, "MemoryCopyFromContext");
    CHECK_ZE(zeEventHostSynchronize(ev[8], ZT_FOREVER));
    zt_ok(memcmp(mine, other, 5000) == 0, "MemoryCopyFromContext moved the bytes");
    sh->ctx_bytes = 5000;

    /* prefetch and advise execute as operations */
    uint8_t *shm = zt_shared_alloc(e, 0, 8192);
    IS_ZE(zeCommandListAppendMemoryPrefetch(l, shm, 8192), ZE_RESULT_SUCCESS,
          "AppendMemoryPrefetch");
    IS_ZE(zeCommandListAppendMemAdvise(l, e->dev[0], shm, 8192,
                                       ZE_MEMORY_ADVICE_SET_PREFERRED_LOCATION),
          ZE_RESULT_SUCCESS, "AppendMemAdvise");
    CHECK_ZE(zeCommandListAppendBarrier(l, ev[9], 0, NULL));
    CHECK_ZE(zeEventHostSynchronize(ev[9], ZT_FOREVER));
    zt_free(ctx2, other);
    zt_destroy(ctx2);
    (void)pool;
}

static void child(void *arg)
{
    zt_env e;
    zt_setup(&e);
    test_props(&e);
    ze_command_list_handle_t lc = zt_imm_list(&e, 0, zt_compute_ordinal(e.dev[0]), 0,
                                              ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS, 0);
    ze_command_list_handle_t lk = zt_imm_list(&e, 0, zt_copy_ordinal(e.dev[0]), 1,
                                              ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS, 0);
    sh->list_compute = ZT_H64(lc);
    sh->list_copy = ZT_H64(lk);
    test_copies(&e, lc, 0);
    test_copies(&e, lk, 4);
    test_regions_fills(&e, lc);
    zt_teardown(&e);
}

static void check(const zt_truth *t)
{
    const uint64_t lists[2] = {sh->list_compute, sh->list_copy};
    for (int li = 0; li < 2; li++) {
        zt_truth_query q = ZT_TRUTH_QUERY_INIT;
        q.list = lists[li];
        q.kind = "copy";
        zt_truth_sel s;
        zt_truth_select(t, &q, &s);
        zt_truth_sel_sort(&s, ZT_BY_CMD);
        if (zt_ok(s.n == 4, "%s list: 4 copies in truth", li ? "copy" : "compute")) {
            for (int i = 0; i < 4; i++) {
                zt_is_u64(s.ops[i]->bytes, sh->copy_bytes, "copy %d bytes", i);
                zt_is_str(s.ops[i]->src, sh->copy_src[li * 4 + i], "copy %d src", i);
                zt_is_str(s.ops[i]->dst, sh->copy_dst[li * 4 + i], "copy %d dst", i);
            }
            zt_is_int(s.ops[0]->ordinal, li ? 1 : 0, "ran on the requested group");
        }
        zt_truth_sel_free(&s);
    }
    zt_truth_query q = ZT_TRUTH_QUERY_INIT;
    q.list = sh->list_compute;
    q.kind = "copy_region";
    zt_truth_sel s;
    zt_truth_select(t, &q, &s);
    zt_truth_sel_sort(&s, ZT_BY_CMD);
    if (zt_ok(s.n == 2, "two region copies in truth")) {
        zt_is_u64(s.ops[0]->bytes, sh->region2d_bytes, "2D region bytes = w*h");
        zt_is_u64(s.ops[1]->bytes, sh->region3d_bytes, "3D region bytes = w*h*d");
        zt_is_str(s.ops[0]->src, "device", "2D region src");
        zt_is_str(s.ops[0]->dst, "host", "2D region dst");
        zt_is_str(s.ops[1]->src, "shared", "3D region src");
        zt_is_str(s.ops[1]->dst, "device", "3D region dst");
    }
    zt_truth_sel_free(&s);
    q.kind = "fill";
    zt_truth_select(t, &q, &s);
    zt_is_int(s.n, sh->nfill, "fills in truth");
    int ok = 1;
    for (size_t i = 0; i < s.n; i++)
        if (s.ops[i]->bytes != sh->fill_bytes[0])
            ok = 0;
    zt_ok(ok, "fill bytes = size");
    zt_truth_sel_free(&s);
    q.kind = "copy_from_context";
    const zt_truth_op *op = zt_truth_find(t, &q);
    if (zt_ok(op != NULL, "copy_from_context in truth")) {
        zt_is_u64(op->bytes, sh->ctx_bytes, "copy_from_context bytes");
        zt_is_str(op->src, "host", "copy_from_context src (host memory of the other context)");
        zt_is_str(op->dst, "device", "copy_from_context dst");
    }
    const char *kinds[] = {"prefetch", "mem_advise"};
    for (int i = 0; i < 2; i++) {
        q.kind = kinds[i];
        op = zt_truth_find(t, &q);
        if (zt_ok(op != NULL, "%s in truth", kinds[i]))
            zt_is_u64(op->bytes, 0, "%s moves no bytes", kinds[i]);
    }
}

int main(int argc, char **argv)
{
    zt_init(argc, argv);
    sh = zt_shm(sizeof *sh);
    zt_fork_check("memory", child, NULL, check);
    return zt_done();
}
