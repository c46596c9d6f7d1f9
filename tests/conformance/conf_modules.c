/* SPDX-License-Identifier: MIT */
/*
 * Modules and kernels: SPIR-V (names and argument counts from OpEntryPoint /
 * OpFunctionParameter) and the text format (NATIVE and IL_SPIRV), build failures with a build
 * log, zeModuleGetKernelNames, INVALID_KERNEL_NAME, group size / suggested group size,
 * arguments and group size captured at Append time, zeKernelGetName, properties, indirect
 * access, cache config, built-in kernels (vector_add, scale_f32, fill_u32) over 1D and 3D
 * launches, and the launch kinds plain / cooperative / indirect (group count read at execution
 * time) / multiple-indirect (count read at execution time, one truth line per kernel).
 */
#include "zt.h"
#include "zt_truth.h"

static const zt_spv_kernel spv_kernels[] = {
    {"vector_add", 3, {ZT_SPV_PTR_F32, ZT_SPV_PTR_F32, ZT_SPV_PTR_F32}},
    {"scale_f32", 2, {ZT_SPV_PTR_F32, ZT_SPV_F32}},
    {"fill_u32", 2, {ZT_SPV_PTR_U32, ZT_SPV_U32}},
    {"busy", 0, {ZT_SPV_U32}},
    {"seven_args_kernel_with_a_long_name", 7,
     {ZT_SPV_PTR_F32, ZT_SPV_U32, ZT_SPV_F32, ZT_SPV_PTR_U32, ZT_SPV_U32, ZT_SPV_U32,
      ZT_SPV_F32}},
};
enum { NSPV = sizeof spv_kernels / sizeof spv_kernels[0] };

struct shared {
    uint64_t capt_list, capt_c1, indirect_list, multi_list, launch_list;
    uint32_t capt_gs;
    uint32_t indirect_groups;
    uint64_t multi_ev;
};

static struct shared *sh;

static int name_in(const char *n, const char *const *names, uint32_t count)
{
    for (uint32_t i = 0; i < count; i++)
        if (strcmp(n, names[i]) == 0)
            return 1;
    return 0;
}

static void test_module_formats(const zt_env *e)
{
    /* SPIR-V */
    ze_module_handle_t m = zt_module_spirv(e, 0, spv_kernels, NSPV);
    uint32_t n = 0;
    IS_ZE(zeModuleGetKernelNames(m, &n, NULL), ZE_RESULT_SUCCESS, "zeModuleGetKernelNames count");
    zt_is_int(n, NSPV, "SPIR-V: one kernel per OpEntryPoint");
    const char *names[16] = {0};
    uint32_t n2 = n;
    CHECK_ZE(zeModuleGetKernelNames(m, &n2, names));
    int all = n2 == NSPV;
    for (unsigned i = 0; i < NSPV && all; i++)
        all = name_in(spv_kernels[i].name, names, n2);
    zt_ok(all, "SPIR-V: kernel names from OpEntryPoint");
    for (unsigned i = 0; i < NSPV; i++) {
        ze_kernel_handle_t k = zt_kernel(m, spv_kernels[i].name);
        ze_kernel_properties_t kp = {.stype = ZE_STRUCTURE_TYPE_KERNEL_PROPERTIES};
        IS_ZE(zeKernelGetProperties(k, &kp), ZE_RESULT_SUCCESS, "zeKernelGetProperties");
        zt_is_int(kp.numKernelArgs, spv_kernels[i].nparams,
                  "SPIR-V %s: numKernelArgs = OpFunctionParameter count", spv_kernels[i].name);
        size_t sz = 0;
        IS_ZE(zeKernelGetName(k, &sz, NULL), ZE_RESULT_SUCCESS, "zeKernelGetName size");
        zt_is_int(sz, strlen(spv_kernels[i].name) + 1, "zeKernelGetName size includes NUL");
        char buf[64] = "";
        CHECK_ZE(zeKernelGetName(k, &sz, buf));
        zt_is_str(buf, spv_kernels[i].name, "zeKernelGetName");
        zt_destroy(k);
    }
    ze_kernel_desc_t kd = {.stype = ZE_STRUCTURE_TYPE_KERNEL_DESC, .pKernelName = "no_such_kernel"};
    ze_kernel_handle_t bad = NULL;
    IS_ZE(zeKernelCreate(m, &kd, &bad), ZE_RESULT_ERROR_INVALID_KERNEL_NAME,
          "zeKernelCreate unknown name");
    zt_destroy(m);

    /* text format, both formats */
    static const char text[] = "ZESIM-MODULE\n"
                               "kernel alpha args=2\n"
                               "kernel beta args=0 ns=1000 ns_per_item=0.5\n"
                               "kernel gamma\n";
    const ze_module_format_t fm[2] = {ZE_MODULE_FORMAT_NATIVE, ZE_MODULE_FORMAT_IL_SPIRV};
    for (int f = 0; f < 2; f++) {
        char log[512];
        ze_result_t r = zt_module_bytes(e, 0, fm[f], text, strlen(text), &m, log, sizeof log);
        IS_ZE(r, ZE_RESULT_SUCCESS, "text module with format %s", f ? "IL_SPIRV" : "NATIVE");
        if (r != ZE_RESULT_SUCCESS)
            continue;
        n = 8;
        CHECK_ZE(zeModuleGetKernelNames(m, &n, names));
        zt_ok(n == 3 && name_in("alpha", names, n) && name_in("beta", names, n) &&
                  name_in("gamma", names, n),
              "text module: 3 kernel names");
        const char *kn[3] = {"alpha", "beta", "gamma"};
        const uint32_t ka[3] = {2, 0, 0};
        for (int i = 0; i < 3; i++) {
            ze_kernel_handle_t k = zt_kernel(m, kn[i]);
            ze_kernel_properties_t kp = {.stype = ZE_STRUCTURE_TYPE_KERNEL_PROPERTIES};
            CHECK_ZE(zeKernelGetProperties(k, &kp));
            zt_is_int(kp.numKernelArgs, ka[i], "text %s: args", kn[i]);
            zt_destroy(k);
        }
        zt_destroy(m);
    }

    /* build failures */
    uint32_t words[256];
    size_t nw = zt_spirv_build(spv_kernels, 2, words, 256);
    uint32_t badmagic[8];
    memcpy(badmagic, words, sizeof badmagic);
    badmagic[0] = 0x12345678;
    static const unsigned char junk[] = {0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4, 5, 6, 7, 8};
    struct {
        ze_module_format_t fmt;
        const void *bytes;
        size_t size;
        const char *what;
        int text_error;
    } bad_cases[] = {
        {ZE_MODULE_FORMAT_NATIVE, junk, sizeof junk, "native junk", 0},
        {ZE_MODULE_FORMAT_IL_SPIRV, junk, sizeof junk, "SPIR-V junk", 0},
        {ZE_MODULE_FORMAT_IL_SPIRV, words, 12, "truncated SPIR-V", 0},
        {ZE_MODULE_FORMAT_IL_SPIRV, badmagic, sizeof badmagic, "bad SPIR-V magic", 0},
        {ZE_MODULE_FORMAT_NATIVE, words, nw * 4, "SPIR-V passed as NATIVE", 0},
        {ZE_MODULE_FORMAT_NATIVE, "ZESIM-MODULE\nkernel x args=abc\n", 0, "text: bad args", 1},
        {ZE_MODULE_FORMAT_NATIVE, "ZESIM-MODULE\nfunction y\n", 0, "text: unknown line", 1},
        {ZE_MODULE_FORMAT_IL_SPIRV, "ZESIM-MODULE\nkernel z ns=1x\n", 0, "text: bad ns", 1},
        {ZE_MODULE_FORMAT_NATIVE, "ZESIM-MODULE\nkernel w foo=1\n", 0, "text: unknown key", 1},
    };
    for (size_t i = 0; i < sizeof bad_cases / sizeof bad_cases[0]; i++) {
        char log[512] = "";
        ze_module_handle_t bm = (ze_module_handle_t)(uintptr_t)0;
        size_t size = bad_cases[i].size ? bad_cases[i].size : strlen(bad_cases[i].bytes);
        ze_result_t r = zt_module_bytes(e, 0, bad_cases[i].fmt, bad_cases[i].bytes, size, &bm,
                                        log, sizeof log);
        if (bad_cases[i].text_error)
            IS_ZE(r, ZE_RESULT_ERROR_MODULE_BUILD_FAILURE, "%s: build failure", bad_cases[i].what);
        else
            zt_ok(r != ZE_RESULT_SUCCESS, "%s rejected (0x%x %s)", bad_cases[i].what,
                  (unsigned)r, zt_result_str(r));
        zt_ok(strlen(log) > 0, "%s: build log says why: %s", bad_cases[i].what, log);
        if (r == ZE_RESULT_SUCCESS && bm)
            zeModuleDestroy(bm);
    }
    /* a good build has a (possibly empty) log too */
    ze_module_handle_t gm = NULL;
    char glog[64] = "x";
    IS_ZE(zt_module_bytes(e, 0, ZE_MODULE_FORMAT_IL_SPIRV, words, nw * 4, &gm, glog, sizeof glog),
          ZE_RESULT_SUCCESS, "good module with a build log handle");
    if (gm)
        zt_destroy(gm);
}

static void test_kernel_api(const zt_env *e, ze_module_handle_t m)
{
    ze_kernel_handle_t k = zt_kernel(m, "vector_add");
    IS_ZE(zeKernelSetGroupSize(k, 8, 4, 2), ZE_RESULT_SUCCESS, "zeKernelSetGroupSize 8x4x2");
    uint32_t gx = 0, gy = 0, gz = 0;
    IS_ZE(zeKernelSuggestGroupSize(k, 1000, 1, 1, &gx, &gy, &gz), ZE_RESULT_SUCCESS,
          "zeKernelSuggestGroupSize");
    zt_ok(gx > 0 && gy == 1 && gz == 1 && 1000 % gx == 0,
          "suggested group size divides the global size (%u,%u,%u)", gx, gy, gz);
    IS_ZE(zeKernelSuggestGroupSize(k, 64, 32, 4, &gx, &gy, &gz), ZE_RESULT_SUCCESS,
          "zeKernelSuggestGroupSize 3D");
    zt_ok(gx && gy && gz && 64 % gx == 0 && 32 % gy == 0 && 4 % gz == 0,
          "3D suggestion divides (%u,%u,%u)", gx, gy, gz);
    IS_ZE(zeKernelSetIndirectAccess(k, ZE_KERNEL_INDIRECT_ACCESS_FLAG_HOST |
                                           ZE_KERNEL_INDIRECT_ACCESS_FLAG_DEVICE),
          ZE_RESULT_SUCCESS, "zeKernelSetIndirectAccess");
    ze_kernel_indirect_access_flags_t fl = 0;
    IS_ZE(zeKernelGetIndirectAccess(k, &fl), ZE_RESULT_SUCCESS, "zeKernelGetIndirectAccess");
    zt_is_int(fl, ZE_KERNEL_INDIRECT_ACCESS_FLAG_HOST | ZE_KERNEL_INDIRECT_ACCESS_FLAG_DEVICE,
              "indirect access flags round-trip");
    IS_ZE(zeKernelSetCacheConfig(k, ZE_CACHE_CONFIG_FLAG_LARGE_SLM), ZE_RESULT_SUCCESS,
          "zeKernelSetCacheConfig");
    float *p = NULL;
    IS_ZE(zeKernelSetArgumentValue(k, 3, sizeof p, &p), ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_INDEX,
          "argument index beyond numKernelArgs");
    zt_destroy(k);
}

static float *fbuf(const zt_env *e, size_t n, float v)
{
    float *p = zt_shared_alloc(e, 0, n * sizeof *p);
    for (size_t i = 0; i < n; i++)
        p[i] = v;
    return p;
}

static void test_builtins(const zt_env *e, ze_module_handle_t m, const char *what)
{
    enum { N = 1000, PAD = 100 };
    ze_command_list_handle_t l = zt_imm_list(e, 0, zt_compute_ordinal(e->dev[0]), 0,
                                             ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS,
                                             ZT_CMDQUEUE_FLAG_IN_ORDER);
    ze_event_handle_t ev[4];
    zt_ts_events(e, 4, ev);
    float *a = fbuf(e, N + PAD, 0), *b = fbuf(e, N + PAD, 0), *c = fbuf(e, N + PAD, -1);
    for (int i = 0; i < N + PAD; i++) {
        a[i] = (float)i;
        b[i] = (float)(3 * i);
    }
    ze_kernel_handle_t va = zt_kernel(m, "vector_add");
    CHECK_ZE(zeKernelSetGroupSize(va, 100, 1, 1));
    CHECK_ZE(zeKernelSetArgumentValue(va, 0, sizeof a, &a));
    CHECK_ZE(zeKernelSetArgumentValue(va, 1, sizeof b, &b));
    CHECK_ZE(zeKernelSetArgumentValue(va, 2, sizeof c, &c));
    CHECK_ZE(zt_launch(l, va, N / 100, NULL, 0, NULL));
    ze_kernel_handle_t sc = zt_kernel(m, "scale_f32");
    float s = 2.5f;
    CHECK_ZE(zeKernelSetGroupSize(sc, 10, 1, 1));
    CHECK_ZE(zeKernelSetArgumentValue(sc, 0, sizeof c, &c));
    CHECK_ZE(zeKernelSetArgumentValue(sc, 1, sizeof s, &s));
    /* 3D launch: 10 x 5 x 2 groups of 10 = 1000 work items */
    ze_group_count_t g3 = {10, 5, 2};
    CHECK_ZE(zeCommandListAppendLaunchKernel(l, sc, &g3, ev[0], 0, NULL));
    CHECK_ZE(zeEventHostSynchronize(ev[0], ZT_FOREVER));
    int good = 1;
    for (int i = 0; i < N; i++)
        if (c[i] != 2.5f * (float)(4 * i))
            good = 0;
    for (int i = N; i < N + PAD; i++)
        if (c[i] != -1.0f)
            good = 0;
    zt_ok(good, "%s: vector_add then scale_f32 (3D launch) computed exactly N items", what);

    uint32_t *u = zt_device_alloc(e, 0, (N + PAD) * 4);
    memset(u, 0, (N + PAD) * 4);
    ze_kernel_handle_t fk = zt_kernel(m, "fill_u32");
    uint32_t v = 0xA5A5F00Du;
    CHECK_ZE(zeKernelSetGroupSize(fk, 8, 5, 1));
    CHECK_ZE(zeKernelSetArgumentValue(fk, 0, sizeof u, &u));
    CHECK_ZE(zeKernelSetArgumentValue(fk, 1, sizeof v, &v));
    ze_group_count_t g2 = {5, 5, 1}; /* 25 groups x 40 = 1000 */
    CHECK_ZE(zeCommandListAppendLaunchKernel(l, fk, &g2, ev[1], 0, NULL));
    CHECK_ZE(zeEventHostSynchronize(ev[1], ZT_FOREVER));
    good = 1;
    for (int i = 0; i < N + PAD; i++)
        if (u[i] != (i < N ? v : 0u))
            good = 0;
    zt_ok(good, "%s: fill_u32 wrote exactly the 1000 work items", what);
}

static void test_capture(const zt_env *e, ze_module_handle_t m)
{
    enum { N = 256 };
    ze_kernel_handle_t va = zt_kernel(m, "vector_add");
    float *a = fbuf(e, N, 1), *b = fbuf(e, N, 2), *c1 = fbuf(e, N, 0), *c2 = fbuf(e, N, 0);
    CHECK_ZE(zeKernelSetGroupSize(va, 64, 1, 1));
    CHECK_ZE(zeKernelSetArgumentValue(va, 0, sizeof a, &a));
    CHECK_ZE(zeKernelSetArgumentValue(va, 1, sizeof b, &b));
    CHECK_ZE(zeKernelSetArgumentValue(va, 2, sizeof c1, &c1));
    /* regular list: change arguments and group size after the append, before execution */
    ze_command_list_handle_t l = zt_list(e, 0, zt_compute_ordinal(e->dev[0]), 0);
    sh->capt_list = ZT_H64(l);
    sh->capt_gs = 64;
    CHECK_ZE(zt_launch(l, va, N / 64, NULL, 0, NULL));
    CHECK_ZE(zeKernelSetArgumentValue(va, 2, sizeof c2, &c2));
    CHECK_ZE(zeKernelSetGroupSize(va, 32, 1, 1));
    CHECK_ZE(zeCommandListClose(l));
    ze_command_queue_handle_t q = zt_queue(e, 0, zt_compute_ordinal(e->dev[0]), 0,
                                           ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS, 0);
    CHECK_ZE(zeCommandQueueExecuteCommandLists(q, 1, &l, NULL));
    CHECK_ZE(zeCommandQueueSynchronize(q, ZT_FOREVER));
    int c1ok = 1, c2zero = 1;
    for (int i = 0; i < N; i++) {
        if (c1[i] != 3.0f)
            c1ok = 0;
        if (c2[i] != 0.0f)
            c2zero = 0;
    }
    zt_ok(c1ok && c2zero, "regular list: arguments captured at append (old c written, new not)");

    /* immediate list held by a gate: change arguments before it runs */
    ze_event_handle_t ev[2];
    zt_ts_events(e, 2, ev);
    ze_command_list_handle_t il = zt_imm_compute(e, 0);
    float *c3 = fbuf(e, N, 0), *c4 = fbuf(e, N, 0);
    CHECK_ZE(zeKernelSetGroupSize(va, 64, 1, 1));
    CHECK_ZE(zeKernelSetArgumentValue(va, 2, sizeof c3, &c3));
    CHECK_ZE(zt_launch(il, va, N / 64, ev[1], 1, &ev[0]));
    CHECK_ZE(zeKernelSetArgumentValue(va, 2, sizeof c4, &c4));
    float *a2 = fbuf(e, N, 100);
    CHECK_ZE(zeKernelSetArgumentValue(va, 0, sizeof a2, &a2));
    CHECK_ZE(zeEventHostSignal(ev[0]));
    CHECK_ZE(zeEventHostSynchronize(ev[1], ZT_FOREVER));
    c1ok = 1;
    c2zero = 1;
    for (int i = 0; i < N; i++) {
        if (c3[i] != 3.0f)
            c1ok = 0;
        if (c4[i] != 0.0f)
            c2zero = 0;
    }
    zt_ok(c1ok && c2zero, "immediate list: arguments captured at append, not at execution");
    zt_destroy(q);
}

static void test_launch_kinds(const zt_env *e, ze_module_handle_t m)
{
    ze_event_handle_t ev[4];
    zt_ts_events(e, 4, ev);
    ze_command_list_handle_t l = zt_imm_compute(e, 0);
    sh->launch_list = ZT_H64(l);
    ze_kernel_handle_t fk = zt_kernel(m, "fill_u32");
    enum { N = 4096 };
    uint32_t *u = zt_shared_alloc(e, 0, N * 4);
    memset(u, 0, N * 4);
    uint32_t v = 7;
    CHECK_ZE(zeKernelSetGroupSize(fk, 16, 1, 1));
    CHECK_ZE(zeKernelSetArgumentValue(fk, 0, sizeof u, &u));
    CHECK_ZE(zeKernelSetArgumentValue(fk, 1, sizeof v, &v));
    ze_group_count_t one = {2, 1, 1};
    IS_ZE(zeCommandListAppendLaunchCooperativeKernel(l, fk, &one, ev[2], 0, NULL),
          ZE_RESULT_SUCCESS, "AppendLaunchCooperativeKernel");
    CHECK_ZE(zeEventHostSynchronize(ev[2], ZT_FOREVER));
    zt_ok(u[31] == 7 && u[32] == 0, "cooperative launch computed 2 groups of 16");

    /* indirect: the group count is read when the command executes */
    ze_group_count_t *gc = zt_shared_alloc(e, 0, sizeof *gc);
    *gc = (ze_group_count_t){1, 1, 1};
    v = 9;
    CHECK_ZE(zeKernelSetArgumentValue(fk, 1, sizeof v, &v));
    IS_ZE(zeCommandListAppendLaunchKernelIndirect(l, fk, gc, ev[1], 1, &ev[0]), ZE_RESULT_SUCCESS,
          "AppendLaunchKernelIndirect");
    *gc = (ze_group_count_t){5, 1, 1};
    sh->indirect_groups = 5;
    CHECK_ZE(zeEventHostSignal(ev[0]));
    CHECK_ZE(zeEventHostSynchronize(ev[1], ZT_FOREVER));
    zt_ok(u[79] == 9 && u[80] == 0, "indirect launch used the group count at execution (5x16)");

    /* multiple indirect: count read at execution time, one group count per kernel */
    ze_kernel_handle_t k2 = zt_kernel(m, "fill_u32");
    uint32_t *u2 = zt_shared_alloc(e, 0, N * 4);
    memset(u2, 0, N * 4);
    uint32_t v2 = 11;
    CHECK_ZE(zeKernelSetGroupSize(k2, 4, 1, 1));
    CHECK_ZE(zeKernelSetArgumentValue(k2, 0, sizeof u2, &u2));
    CHECK_ZE(zeKernelSetArgumentValue(k2, 1, sizeof v2, &v2));
    ze_kernel_handle_t ks[3] = {fk, k2, fk};
    ze_group_count_t *args = zt_shared_alloc(e, 0, 3 * sizeof *args);
    args[0] = (ze_group_count_t){3, 1, 1};
    args[1] = (ze_group_count_t){6, 1, 1};
    args[2] = (ze_group_count_t){9, 1, 1};
    uint32_t *count = zt_shared_alloc(e, 0, sizeof *count);
    *count = 1;
    CHECK_ZE(zeEventHostReset(ev[0]));
    CHECK_ZE(zeEventHostReset(ev[1]));
    sh->multi_ev = ZT_H64(ev[3]);
    IS_ZE(zeCommandListAppendLaunchMultipleKernelsIndirect(l, 3, ks, count, args, ev[3], 1,
                                                           &ev[0]),
          ZE_RESULT_SUCCESS, "AppendLaunchMultipleKernelsIndirect");
    *count = 2;
    memset(u, 0, N * 4);
    CHECK_ZE(zeEventHostSignal(ev[0]));
    CHECK_ZE(zeEventHostSynchronize(ev[3], ZT_FOREVER));
    zt_ok(u[47] == 9 && u[48] == 0, "multi-indirect kernel 0: 3 groups of 16");
    zt_ok(u2[23] == 11 && u2[24] == 0, "multi-indirect kernel 1: 6 groups of 4");
}

static void child(void *arg)
{
    zt_env e;
    zt_setup(&e);
    test_module_formats(&e);
    ze_module_handle_t ms = zt_module_spirv(&e, 0, spv_kernels, NSPV);
    ze_module_handle_t mt = zt_module_text(&e, 0,
                                           "ZESIM-MODULE\nkernel vector_add args=3\n"
                                           "kernel scale_f32 args=2\nkernel fill_u32 args=2\n");
    test_kernel_api(&e, ms);
    test_builtins(&e, ms, "SPIR-V module");
    test_builtins(&e, mt, "text module");
    test_capture(&e, ms);
    test_launch_kinds(&e, ms);
    zt_teardown(&e);
}

static void check(const zt_truth *t)
{
    zt_truth_query q = ZT_TRUTH_QUERY_INIT;
    q.list = sh->capt_list;
    const zt_truth_op *op = zt_truth_find(t, &q);
    if (zt_ok(op != NULL, "captured launch in truth"))
        zt_ok(op->group_size[0] == sh->capt_gs && op->groups[0] == 4,
              "truth group_size is the one at append time ([%u] x [%u])", op->group_size[0],
              op->groups[0]);
    zt_truth_query ql = ZT_TRUTH_QUERY_INIT;
    ql.list = sh->launch_list;
    zt_truth_sel s;
    zt_truth_select(t, &ql, &s);
    zt_truth_sel_sort(&s, ZT_BY_SEQ);
    if (zt_ok(s.n == 4, "launch kinds: 4 truth lines (%zu)", s.n)) {
        zt_is_str(s.ops[0]->launch, "cooperative", "launch cooperative");
        zt_ok(s.ops[0]->groups[0] == 2 && s.ops[0]->group_size[0] == 16, "cooperative groups");
        zt_is_str(s.ops[1]->launch, "indirect", "launch indirect");
        zt_ok(s.ops[1]->groups[0] == sh->indirect_groups && s.ops[1]->groups[1] == 1,
              "indirect: truth groups read at execution ([%u,%u,%u])", s.ops[1]->groups[0],
              s.ops[1]->groups[1], s.ops[1]->groups[2]);
        zt_is_str(s.ops[2]->launch, "multi_indirect", "launch multi_indirect (kernel 0)");
        zt_is_str(s.ops[3]->launch, "multi_indirect", "launch multi_indirect (kernel 1)");
        zt_truth_sel_sort(&s, ZT_BY_HOST_START);
        const zt_truth_op *k0 = s.ops[2], *k1 = s.ops[3];
        if (k0->groups[0] != 3) {
            const zt_truth_op *tmp = k0;
            k0 = k1;
            k1 = tmp;
        }
        zt_ok(k0->groups[0] == 3 && k1->groups[0] == 6 && k1->group_size[0] == 4,
              "multi-indirect: per-kernel groups from the argument buffer");
        zt_is_str(k0->name, "fill_u32", "kernel name in truth");
    }
    zt_truth_sel_free(&s);
    zt_truth_query qk = ZT_TRUTH_QUERY_INIT;
    qk.kind = "kernel";
    qk.launch = "plain";
    zt_ok(zt_truth_count(t, &qk) >= 7, "plain launches in truth");
}

int main(int argc, char **argv)
{
    zt_init(argc, argv);
    sh = zt_shm(sizeof *sh);
    zt_fork_check("modules", child, NULL, check);
    return zt_done();
}
