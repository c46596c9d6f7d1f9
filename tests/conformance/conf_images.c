/* SPDX-License-Identifier: MIT */
/*
 * Images: zeImageCreate for 1D/2D/3D and several formats (linear storage), copies from and to
 * memory (full and region), image-to-image copies (full and region); bytes round-trip exactly
 * and the truth kinds/bytes/src/dst match.
 */
#include "zt.h"
#include "zt_truth.h"

struct fmt {
    ze_image_format_layout_t layout;
    ze_image_format_type_t type;
    size_t elem;
    const char *name;
};

static const struct fmt fmts[] = {
    {ZE_IMAGE_FORMAT_LAYOUT_8, ZE_IMAGE_FORMAT_TYPE_UINT, 1, "R8"},
    {ZE_IMAGE_FORMAT_LAYOUT_16, ZE_IMAGE_FORMAT_TYPE_UINT, 2, "R16"},
    {ZE_IMAGE_FORMAT_LAYOUT_8_8_8_8, ZE_IMAGE_FORMAT_TYPE_UNORM, 4, "RGBA8"},
    {ZE_IMAGE_FORMAT_LAYOUT_32, ZE_IMAGE_FORMAT_TYPE_FLOAT, 4, "R32F"},
    {ZE_IMAGE_FORMAT_LAYOUT_16_16_16_16, ZE_IMAGE_FORMAT_TYPE_UINT, 8, "RGBA16"},
    {ZE_IMAGE_FORMAT_LAYOUT_32_32_32_32, ZE_IMAGE_FORMAT_TYPE_FLOAT, 16, "RGBA32F"},
};

struct shared {
    uint64_t list;
    int nops;
    struct {
        const char *kind, *src, *dst;
        uint64_t bytes;
    } ops[128];
};

static struct shared *sh;

static void expect(const char *kind, const char *src, const char *dst, uint64_t bytes)
{
    if (sh->nops < 128) {
        sh->ops[sh->nops].kind = kind;
        sh->ops[sh->nops].src = src;
        sh->ops[sh->nops].dst = dst;
        sh->ops[sh->nops].bytes = bytes;
    }
    sh->nops++;
}

static void pattern(uint8_t *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (uint8_t)(i * 7 + seed * 13 + (i >> 8));
}

static void sync_list(ze_command_list_handle_t l, ze_event_handle_t ev)
{
    CHECK_ZE(zeCommandListAppendBarrier(l, ev, 0, NULL));
    CHECK_ZE(zeEventHostSynchronize(ev, ZT_FOREVER));
    CHECK_ZE(zeEventHostReset(ev));
}

static void child(void *arg)
{
    zt_env e;
    zt_setup(&e);
    /* in-order so consecutive copies see each other's results; barrier + event to sync */
    ze_command_list_handle_t l =
        zt_imm_list(&e, 0, zt_compute_ordinal(e.dev[0]), 0, ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS,
                    ZT_CMDQUEUE_FLAG_IN_ORDER);
    sh->list = ZT_H64(l);
    ze_event_handle_t ev[1];
    zt_ts_events(&e, 1, ev);

    struct {
        ze_image_type_t type;
        uint32_t w, h, d;
        const char *name;
    } shapes[] = {
        {ZE_IMAGE_TYPE_1D, 100, 1, 1, "1D 100"},
        {ZE_IMAGE_TYPE_2D, 37, 19, 1, "2D 37x19"},
        {ZE_IMAGE_TYPE_3D, 9, 7, 5, "3D 9x7x5"},
    };
    for (size_t f = 0; f < sizeof fmts / sizeof fmts[0]; f++) {
        for (int sidx = 0; sidx < 3; sidx++) {
            size_t n = (size_t)shapes[sidx].w * shapes[sidx].h * shapes[sidx].d * fmts[f].elem;
            uint8_t *src = zt_host_alloc(&e, n), *dst = zt_device_alloc(&e, 0, n);
            pattern(src, n, (unsigned)(f * 3 + (size_t)sidx));
            memset(dst, 0, n);
            ze_image_handle_t a = zt_image(&e, 0, shapes[sidx].type, fmts[f].layout, fmts[f].type,
                                           shapes[sidx].w, shapes[sidx].h, shapes[sidx].d);
            ze_image_handle_t b = zt_image(&e, 0, shapes[sidx].type, fmts[f].layout, fmts[f].type,
                                           shapes[sidx].w, shapes[sidx].h, shapes[sidx].d);
            CHECK_ZE(zeCommandListAppendImageCopyFromMemory(l, a, src, NULL, NULL, 0, NULL));
            CHECK_ZE(zeCommandListAppendImageCopy(l, b, a, NULL, 0, NULL));
            CHECK_ZE(zeCommandListAppendImageCopyToMemory(l, dst, b, NULL, NULL, 0, NULL));
            sync_list(l, ev[0]);
            expect("image_copy_from_memory", "host", "image", n);
            expect("image_copy", "image", "image", n);
            expect("image_copy_to_memory", "image", "device", n);
            expect("barrier", NULL, NULL, 0);
            zt_ok(memcmp(src, dst, n) == 0, "%s %s: memory -> image -> image -> memory exact",
                  fmts[f].name, shapes[sidx].name);
            zt_destroy(a);
            zt_destroy(b);
            zt_free(e.ctx, src);
            zt_free(e.ctx, dst);
        }
    }

    /* properties */
    ze_image_desc_t id = {.stype = ZE_STRUCTURE_TYPE_IMAGE_DESC};
    id.type = ZE_IMAGE_TYPE_2D;
    id.format.layout = ZE_IMAGE_FORMAT_LAYOUT_8_8_8_8;
    id.format.type = ZE_IMAGE_FORMAT_TYPE_UINT;
    id.width = 32;
    id.height = 16;
    id.depth = 1;
    ze_image_properties_t ip = {.stype = ZE_STRUCTURE_TYPE_IMAGE_PROPERTIES};
    IS_ZE(zeImageGetProperties(e.dev[0], &id, &ip), ZE_RESULT_SUCCESS, "zeImageGetProperties");

    /* regions on a 2D RGBA8 32x16 (rows of 128 bytes) and a 3D R16 8x6x4 */
    enum { W = 32, H = 16, E = 4 };
    uint8_t *src = zt_host_alloc(&e, W * H * E), *out = zt_shared_alloc(&e, 0, W * H * E);
    uint8_t want[W * H * E];
    pattern(src, W * H * E, 5);
    ze_image_handle_t a = zt_image(&e, 0, ZE_IMAGE_TYPE_2D, ZE_IMAGE_FORMAT_LAYOUT_8_8_8_8,
                                   ZE_IMAGE_FORMAT_TYPE_UINT, W, H, 1);
    ze_image_handle_t b = zt_image(&e, 0, ZE_IMAGE_TYPE_2D, ZE_IMAGE_FORMAT_LAYOUT_8_8_8_8,
                                   ZE_IMAGE_FORMAT_TYPE_UINT, W, H, 1);
    uint8_t *zeros = zt_host_alloc(&e, W * H * E);
    memset(zeros, 0, W * H * E);
    CHECK_ZE(zeCommandListAppendImageCopyFromMemory(l, a, src, NULL, NULL, 0, NULL));
    CHECK_ZE(zeCommandListAppendImageCopyFromMemory(l, b, zeros, NULL, NULL, 0, NULL));
    ze_image_region_t sr = {3, 2, 0, 10, 5, 1}, dr = {20, 9, 0, 10, 5, 1};
    IS_ZE(zeCommandListAppendImageCopyRegion(l, b, a, &dr, &sr, NULL, 0, NULL), ZE_RESULT_SUCCESS,
          "ImageCopyRegion");
    CHECK_ZE(zeCommandListAppendImageCopyToMemory(l, out, b, NULL, NULL, 0, NULL));
    sync_list(l, ev[0]);
    expect("image_copy_from_memory", "host", "image", W * H * E);
    expect("image_copy_from_memory", "host", "image", W * H * E);
    expect("image_copy_region", "image", "image", 10 * 5 * E);
    expect("image_copy_to_memory", "image", "shared", W * H * E);
    expect("barrier", NULL, NULL, 0);
    memset(want, 0, sizeof want);
    for (int y = 0; y < 5; y++)
        memcpy(want + ((9 + y) * W + 20) * E, src + ((2 + y) * W + 3) * E, 10 * E);
    zt_ok(memcmp(out, want, sizeof want) == 0, "2D image region copy: only the region moved");

    /* region to memory: packed output */
    ze_image_region_t tr = {5, 3, 0, 8, 4, 1};
    uint8_t *packed = zt_device_alloc(&e, 0, 8 * 4 * E);
    CHECK_ZE(zeCommandListAppendImageCopyToMemory(l, packed, a, &tr, NULL, 0, NULL));
    sync_list(l, ev[0]);
    expect("image_copy_to_memory", "image", "device", 8 * 4 * E);
    expect("barrier", NULL, NULL, 0);
    int good = 1;
    for (int y = 0; y < 4; y++)
        if (memcmp(packed + y * 8 * E, src + ((3 + y) * W + 5) * E, 8 * E) != 0)
            good = 0;
    zt_ok(good, "image region -> memory writes the region packed");

    /* packed memory into a region */
    ze_image_region_t fr = {0, 12, 0, 8, 4, 1};
    CHECK_ZE(zeCommandListAppendImageCopyFromMemory(l, b, packed, &fr, NULL, 0, NULL));
    CHECK_ZE(zeCommandListAppendImageCopyToMemory(l, out, b, NULL, NULL, 0, NULL));
    sync_list(l, ev[0]);
    expect("image_copy_from_memory", "device", "image", 8 * 4 * E);
    expect("image_copy_to_memory", "image", "shared", W * H * E);
    expect("barrier", NULL, NULL, 0);
    for (int y = 0; y < 4; y++)
        memcpy(want + ((12 + y) * W + 0) * E, packed + y * 8 * E, 8 * E);
    zt_ok(memcmp(out, want, sizeof want) == 0, "memory -> image region lands in the region");

    /* 3D region */
    enum { X3 = 8, Y3 = 6, Z3 = 4, E3 = 2 };
    uint8_t *s3 = zt_host_alloc(&e, X3 * Y3 * Z3 * E3), *o3 = zt_host_alloc(&e, X3 * Y3 * Z3 * E3);
    uint8_t w3[X3 * Y3 * Z3 * E3];
    pattern(s3, sizeof w3, 17);
    ze_image_handle_t c = zt_image(&e, 0, ZE_IMAGE_TYPE_3D, ZE_IMAGE_FORMAT_LAYOUT_16,
                                   ZE_IMAGE_FORMAT_TYPE_UINT, X3, Y3, Z3);
    ze_image_handle_t d = zt_image(&e, 0, ZE_IMAGE_TYPE_3D, ZE_IMAGE_FORMAT_LAYOUT_16,
                                   ZE_IMAGE_FORMAT_TYPE_UINT, X3, Y3, Z3);
    uint8_t *z3 = zt_host_alloc(&e, sizeof w3);
    memset(z3, 0, sizeof w3);
    CHECK_ZE(zeCommandListAppendImageCopyFromMemory(l, c, s3, NULL, NULL, 0, NULL));
    CHECK_ZE(zeCommandListAppendImageCopyFromMemory(l, d, z3, NULL, NULL, 0, NULL));
    ze_image_region_t s3r = {1, 2, 1, 3, 2, 2}, d3r = {4, 0, 2, 3, 2, 2};
    CHECK_ZE(zeCommandListAppendImageCopyRegion(l, d, c, &d3r, &s3r, NULL, 0, NULL));
    CHECK_ZE(zeCommandListAppendImageCopyToMemory(l, o3, d, NULL, NULL, 0, NULL));
    sync_list(l, ev[0]);
    expect("image_copy_from_memory", "host", "image", sizeof w3);
    expect("image_copy_from_memory", "host", "image", sizeof w3);
    expect("image_copy_region", "image", "image", 3 * 2 * 2 * E3);
    expect("image_copy_to_memory", "image", "host", sizeof w3);
    expect("barrier", NULL, NULL, 0);
    memset(w3, 0, sizeof w3);
    for (int z = 0; z < 2; z++)
        for (int y = 0; y < 2; y++)
            memcpy(w3 + (((2 + z) * Y3 + (0 + y)) * X3 + 4) * E3,
                   s3 + (((1 + z) * Y3 + (2 + y)) * X3 + 1) * E3, 3 * E3);
    zt_ok(memcmp(o3, w3, sizeof w3) == 0, "3D image region copy");
    zt_teardown(&e);
}

static void check(const zt_truth *t)
{
    zt_truth_query q = ZT_TRUTH_QUERY_INIT;
    q.list = sh->list;
    zt_truth_sel s;
    zt_truth_select(t, &q, &s);
    zt_truth_sel_sort(&s, ZT_BY_CMD);
    if (!zt_is_int(s.n, sh->nops, "every image operation executed"))
        goto out;
    int kinds = 1, bytes = 1, types = 1;
    for (size_t i = 0; i < s.n && i < 128; i++) {
        const zt_truth_op *op = s.ops[i];
        if (strcmp(op->kind, sh->ops[i].kind) != 0) {
            kinds = 0;
            zt_diag("op %zu: kind %s, expected %s", i, op->kind, sh->ops[i].kind);
        }
        if (op->bytes != sh->ops[i].bytes) {
            bytes = 0;
            zt_diag("op %zu (%s): bytes %" PRIu64 ", expected %" PRIu64, i, op->kind, op->bytes,
                    sh->ops[i].bytes);
        }
        if (sh->ops[i].src && (!op->src || strcmp(op->src, sh->ops[i].src) != 0 || !op->dst ||
                               strcmp(op->dst, sh->ops[i].dst) != 0)) {
            types = 0;
            zt_diag("op %zu (%s): %s -> %s, expected %s -> %s", i, op->kind,
                    op->src ? op->src : "null", op->dst ? op->dst : "null", sh->ops[i].src,
                    sh->ops[i].dst);
        }
    }
    zt_ok(kinds, "truth kinds in append order");
    zt_ok(bytes, "truth bytes = region volume x element size");
    zt_ok(types, "truth src/dst memory types (image, host, device, shared)");
out:
    zt_truth_sel_free(&s);
}

int main(int argc, char **argv)
{
    zt_init(argc, argv);
    sh = zt_shm(sizeof *sh);
    zt_fork_check("images", child, NULL, check);
    return zt_done();
}
