/* SPDX-License-Identifier: MIT */
/* The launch with arguments (spec 1.14) against the classic launch, both through a loader of spec
 * 1.17 (Debian's loader asks for 1.4 and never hands out the later entries): like the tests'
 * loader (tests/loader), this program dlopen()s the driver named by ZE_ENABLE_ALT_DRIVERS
 * (libzecoll_ze.so when libzecoll.so is preloaded, zesim alone otherwise), fetches the tables at
 * 1.17 and appends N kernels to an in-order immediate list, as UR v2 does, with no signal event,
 * synchronising every 8192 as bench/zc_bench_app.c's "appends" loop does.
 *
 *   zc_bench_args classic|args N     the measured loop is args_measured (bench/ir_counts.sh)
 */
#include "zc_ldr_spec.h"

#include <level_zero/ze_ddi.h>
#include <string.h>

typedef void (*fn_t)(void);
typedef ze_result_t (*getter_t)(ze_api_version_t, void *);
#define V117 ZE_MAKE_VERSION(1, 17)
#define CK(x)                                                                                                          \
    do {                                                                                                               \
        ze_result_t r_ = (x);                                                                                          \
        if (r_ != ZE_RESULT_SUCCESS) {                                                                                 \
            fprintf(stderr, "%s:%d: %s = 0x%x\n", __FILE__, __LINE__, #x, (unsigned)r_);                              \
            exit(1);                                                                                                   \
        }                                                                                                              \
    } while (0)

/* a table as a loader of 1.17 fetches it (room for every entry of that version) */
static fn_t *table(void *drv, const char *getter) {
    fn_t *t = calloc(64, sizeof(fn_t));
    getter_t g = (getter_t)(uintptr_t)dlsym(drv, getter);
    if (!t || !g || g(V117, t) != ZE_RESULT_SUCCESS) {
        fprintf(stderr, "%s(1.17) failed\n", getter);
        exit(1);
    }
    return t;
}
#define H(t, type, member) ((__typeof__(((type *)0)->member))(t)[offsetof(type, member) / sizeof(fn_t)])

struct run {
    ze_command_list_handle_t l;
    ze_kernel_handle_t k;
    ze_pfnCommandListAppendLaunchKernel_t launch;
    with_args_t with_args;
    ze_pfnCommandListAppendBarrier_t barrier;
    ze_pfnEventHostSynchronize_t sync;
    ze_pfnEventHostReset_t reset;
    ze_event_handle_t ev;
};

static inline __attribute__((always_inline)) void loop(const struct run *r, long n) {
    const ze_group_count_t g = {1, 1, 1};
    const group_size_t gs = {1, 1, 1};
    for (long i = 0; i < n;) {
        long batch = n - i < 8192 ? n - i : 8192;
        for (long b = 0; b < batch; b++) {
            if (r->with_args) CK(r->with_args(r->l, r->k, g, gs, NULL, NULL, NULL, 0, NULL));
            else CK(r->launch(r->l, r->k, &g, NULL, 0, NULL));
        }
        i += batch;
        CK(r->barrier(r->l, r->ev, 0, NULL));
        CK(r->sync(r->ev, UINT64_MAX));
        CK(r->reset(r->ev));
    }
}
__attribute__((noipa)) static void args_warm(const struct run *r, long n) { loop(r, n); }
void args_measured(const struct run *r, long n);
__attribute__((noipa)) void args_measured(const struct run *r, long n) { loop(r, n); }

int main(int argc, char **argv) {
    if (argc < 3 || (strcmp(argv[1], "classic") && strcmp(argv[1], "args"))) {
        fprintf(stderr, "usage: %s classic|args N\n", argv[0]);
        return 2;
    }
    long n = atol(argv[2]);
    const char *path;
    void *drv = zc_ldr_open_driver(&path);
    if (!drv) return 1;
    fn_t *glob = table(drv, "zeGetGlobalProcAddrTable"), *dt = table(drv, "zeGetDriverProcAddrTable"),
         *dv = table(drv, "zeGetDeviceProcAddrTable"), *cx = table(drv, "zeGetContextProcAddrTable"),
         *md = table(drv, "zeGetModuleProcAddrTable"), *kt = table(drv, "zeGetKernelProcAddrTable"),
         *lt = table(drv, "zeGetCommandListProcAddrTable"), *pt = table(drv, "zeGetEventPoolProcAddrTable"),
         *et = table(drv, "zeGetEventProcAddrTable");
    CK(H(glob, ze_global_dditable_t, pfnInit)(ZE_INIT_FLAG_GPU_ONLY));
    uint32_t c = 1;
    ze_driver_handle_t d;
    CK(H(dt, ze_driver_dditable_t, pfnGet)(&c, &d));
    ze_device_handle_t dev;
    CK(H(dv, ze_device_dditable_t, pfnGet)(d, &c, &dev));
    ze_context_desc_t cd = {ZE_STRUCTURE_TYPE_CONTEXT_DESC, NULL, 0};
    ze_context_handle_t ctx;
    CK(H(cx, ze_context_dditable_t, pfnCreate)(d, &cd, &ctx));
    const char *text = "ZESIM-MODULE\nkernel k0 args=0 ns=0 ns_per_item=0\n";
    ze_module_desc_t mdd = {ZE_STRUCTURE_TYPE_MODULE_DESC, NULL, ZE_MODULE_FORMAT_NATIVE, strlen(text),
                            (const uint8_t *)text, NULL, NULL};
    ze_module_handle_t mod;
    CK(H(md, ze_module_dditable_t, pfnCreate)(ctx, dev, &mdd, &mod, NULL));
    ze_kernel_desc_t kd = {ZE_STRUCTURE_TYPE_KERNEL_DESC, NULL, 0, "k0"};
    ze_kernel_handle_t k;
    CK(H(kt, ze_kernel_dditable_t, pfnCreate)(mod, &kd, &k));
    CK(H(kt, ze_kernel_dditable_t, pfnSetGroupSize)(k, 1, 1, 1));
    ze_command_queue_desc_t qd = {ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC, NULL, 0, 0, 1u << 1 /* IN_ORDER */,
                                  ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS, ZE_COMMAND_QUEUE_PRIORITY_NORMAL};
    ze_command_list_handle_t l;
    CK(H(lt, ze_command_list_dditable_t, pfnCreateImmediate)(ctx, dev, &qd, &l));
    ze_event_pool_desc_t pd = {ZE_STRUCTURE_TYPE_EVENT_POOL_DESC, NULL, ZE_EVENT_POOL_FLAG_HOST_VISIBLE, 1};
    ze_event_pool_handle_t pool;
    CK(H(pt, ze_event_pool_dditable_t, pfnCreate)(ctx, &pd, 0, NULL, &pool));
    ze_event_desc_t ed = {ZE_STRUCTURE_TYPE_EVENT_DESC, NULL, 0, 0, ZE_EVENT_SCOPE_FLAG_HOST};
    ze_event_handle_t ev;
    CK(H(et, ze_event_dditable_t, pfnCreate)(pool, &ed, &ev));
    struct run r = {l,
                    k,
                    H(lt, ze_command_list_dditable_t, pfnAppendLaunchKernel),
                    strcmp(argv[1], "args") ? NULL : (with_args_t)lt[37],
                    H(lt, ze_command_list_dditable_t, pfnAppendBarrier),
                    H(et, ze_event_dditable_t, pfnHostSynchronize),
                    H(et, ze_event_dditable_t, pfnHostReset),
                    ev};
    if (n > 0) args_warm(&r, n < 8192 ? n : 8192); /* pools and caches warm, as in a running app */
    args_measured(&r, n);
    CK(H(et, ze_event_dditable_t, pfnDestroy)(ev));
    CK(H(pt, ze_event_pool_dditable_t, pfnDestroy)(pool));
    CK(H(lt, ze_command_list_dditable_t, pfnDestroy)(l));
    CK(H(kt, ze_kernel_dditable_t, pfnDestroy)(k));
    CK(H(md, ze_module_dditable_t, pfnDestroy)(mod));
    CK(H(cx, ze_context_dditable_t, pfnDestroy)(ctx));
    printf("%s: %ld launches through %s\n", argv[1], n, path);
    return 0;
}
