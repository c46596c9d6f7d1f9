/* SPDX-License-Identifier: MIT */
/* One vector add, reached through the different ways applications and runtimes call Level Zero:
 *   direct    the loader's exported functions (linked)
 *   dlopen    dlopen("libze_loader.so.1") + dlsym, as SYCL/Unified Runtime do
 *   dispatch  the loader's zeGet*ProcAddrTable tables, as runtimes with their own dispatch do
 * The program checks its result; the collector must time the kernel in every mode. */
#include <dlfcn.h>
#include <level_zero/ze_api.h>
#include <level_zero/ze_ddi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct api {
    ze_pfnInit_t init;
    ze_pfnDriverGet_t driver_get;
    ze_pfnDeviceGet_t device_get;
    ze_pfnContextCreate_t context_create;
    ze_pfnModuleCreate_t module_create;
    ze_pfnKernelCreate_t kernel_create;
    ze_pfnKernelSetArgumentValue_t set_arg;
    ze_pfnKernelSetGroupSize_t set_group;
    ze_pfnMemAllocShared_t alloc_shared;
    ze_pfnMemFree_t mem_free;
    ze_pfnCommandListCreateImmediate_t list_create;
    ze_pfnEventPoolCreate_t pool_create;
    ze_pfnEventCreate_t event_create;
    ze_pfnCommandListAppendLaunchKernel_t launch;
    ze_pfnEventHostSynchronize_t event_sync;
};

#define CK(call)                                                                                   \
    do {                                                                                           \
        ze_result_t r_ = (call);                                                                   \
        if (r_ != ZE_RESULT_SUCCESS) {                                                             \
            fprintf(stderr, "zc_access: %s failed: 0x%x\n", #call, (unsigned)r_);                  \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

static void from_exports(struct api *a) {
    a->init = zeInit;
    a->driver_get = zeDriverGet;
    a->device_get = zeDeviceGet;
    a->context_create = zeContextCreate;
    a->module_create = zeModuleCreate;
    a->kernel_create = zeKernelCreate;
    a->set_arg = zeKernelSetArgumentValue;
    a->set_group = zeKernelSetGroupSize;
    a->alloc_shared = zeMemAllocShared;
    a->mem_free = zeMemFree;
    a->list_create = zeCommandListCreateImmediate;
    a->pool_create = zeEventPoolCreate;
    a->event_create = zeEventCreate;
    a->launch = zeCommandListAppendLaunchKernel;
    a->event_sync = zeEventHostSynchronize;
}

static void *sym(void *h, const char *n) {
    void *p = dlsym(h, n);
    if (!p) {
        fprintf(stderr, "zc_access: dlsym(%s) failed\n", n);
        exit(1);
    }
    return p;
}

static void from_dlopen(struct api *a) {
    void *h = dlopen("libze_loader.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        fprintf(stderr, "zc_access: %s\n", dlerror());
        exit(1);
    }
    a->init = (ze_pfnInit_t)sym(h, "zeInit");
    a->driver_get = (ze_pfnDriverGet_t)sym(h, "zeDriverGet");
    a->device_get = (ze_pfnDeviceGet_t)sym(h, "zeDeviceGet");
    a->context_create = (ze_pfnContextCreate_t)sym(h, "zeContextCreate");
    a->module_create = (ze_pfnModuleCreate_t)sym(h, "zeModuleCreate");
    a->kernel_create = (ze_pfnKernelCreate_t)sym(h, "zeKernelCreate");
    a->set_arg = (ze_pfnKernelSetArgumentValue_t)sym(h, "zeKernelSetArgumentValue");
    a->set_group = (ze_pfnKernelSetGroupSize_t)sym(h, "zeKernelSetGroupSize");
    a->alloc_shared = (ze_pfnMemAllocShared_t)sym(h, "zeMemAllocShared");
    a->mem_free = (ze_pfnMemFree_t)sym(h, "zeMemFree");
    a->list_create = (ze_pfnCommandListCreateImmediate_t)sym(h, "zeCommandListCreateImmediate");
    a->pool_create = (ze_pfnEventPoolCreate_t)sym(h, "zeEventPoolCreate");
    a->event_create = (ze_pfnEventCreate_t)sym(h, "zeEventCreate");
    a->launch = (ze_pfnCommandListAppendLaunchKernel_t)sym(h, "zeCommandListAppendLaunchKernel");
    a->event_sync = (ze_pfnEventHostSynchronize_t)sym(h, "zeEventHostSynchronize");
}

/* The loader hands out its tables only once initialised (1.8.12 answers UNINITIALIZED before),
 * so zeInit is called first, as runtimes with their own dispatch do. */
static void from_tables(struct api *a) {
    static ze_global_dditable_t g;
    static ze_driver_dditable_t drv;
    static ze_device_dditable_t dev;
    static ze_context_dditable_t ctx;
    static ze_module_dditable_t mod;
    static ze_kernel_dditable_t krn;
    static ze_mem_dditable_t mem;
    static ze_command_list_dditable_t cl;
    static ze_event_pool_dditable_t pool;
    static ze_event_dditable_t ev;
    CK(zeInit(0));
    CK(zeGetGlobalProcAddrTable(ZE_API_VERSION_CURRENT, &g));
    CK(zeGetDriverProcAddrTable(ZE_API_VERSION_CURRENT, &drv));
    CK(zeGetDeviceProcAddrTable(ZE_API_VERSION_CURRENT, &dev));
    CK(zeGetContextProcAddrTable(ZE_API_VERSION_CURRENT, &ctx));
    CK(zeGetModuleProcAddrTable(ZE_API_VERSION_CURRENT, &mod));
    CK(zeGetKernelProcAddrTable(ZE_API_VERSION_CURRENT, &krn));
    CK(zeGetMemProcAddrTable(ZE_API_VERSION_CURRENT, &mem));
    CK(zeGetCommandListProcAddrTable(ZE_API_VERSION_CURRENT, &cl));
    CK(zeGetEventPoolProcAddrTable(ZE_API_VERSION_CURRENT, &pool));
    CK(zeGetEventProcAddrTable(ZE_API_VERSION_CURRENT, &ev));
    a->init = g.pfnInit;
    a->driver_get = drv.pfnGet;
    a->device_get = dev.pfnGet;
    a->context_create = ctx.pfnCreate;
    a->module_create = mod.pfnCreate;
    a->kernel_create = krn.pfnCreate;
    a->set_arg = krn.pfnSetArgumentValue;
    a->set_group = krn.pfnSetGroupSize;
    a->alloc_shared = mem.pfnAllocShared;
    a->mem_free = mem.pfnFree;
    a->list_create = cl.pfnCreateImmediate;
    a->pool_create = pool.pfnCreate;
    a->event_create = ev.pfnCreate;
    a->launch = cl.pfnAppendLaunchKernel;
    a->event_sync = ev.pfnHostSynchronize;
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "direct";
    struct api a;
    if (!strcmp(mode, "direct")) from_exports(&a);
    else if (!strcmp(mode, "dlopen")) from_dlopen(&a);
    else if (!strcmp(mode, "dispatch")) from_tables(&a);
    else {
        fprintf(stderr, "usage: zc_access direct|dlopen|dispatch\n");
        return 2;
    }
    CK(a.init(0));
    uint32_t n = 1;
    ze_driver_handle_t drv;
    CK(a.driver_get(&n, &drv));
    n = 1;
    ze_device_handle_t dev;
    CK(a.device_get(drv, &n, &dev));
    ze_context_desc_t cd = {ZE_STRUCTURE_TYPE_CONTEXT_DESC, NULL, 0};
    ze_context_handle_t ctx;
    CK(a.context_create(drv, &cd, &ctx));
    static const char text[] = "ZESIM-MODULE\nkernel vector_add args=3\n";
    ze_module_desc_t md = {ZE_STRUCTURE_TYPE_MODULE_DESC, NULL, ZE_MODULE_FORMAT_NATIVE, sizeof(text) - 1,
                           (const uint8_t *)text, NULL, NULL};
    ze_module_handle_t mod;
    CK(a.module_create(ctx, dev, &md, &mod, NULL));
    ze_kernel_desc_t kd = {ZE_STRUCTURE_TYPE_KERNEL_DESC, NULL, 0, "vector_add"};
    ze_kernel_handle_t k;
    CK(a.kernel_create(mod, &kd, &k));
    enum { N = 4096 };
    float *x, *y, *z;
    ze_device_mem_alloc_desc_t dd = {ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC, NULL, 0, 0};
    ze_host_mem_alloc_desc_t hd = {ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC, NULL, 0};
    CK(a.alloc_shared(ctx, &dd, &hd, N * sizeof(float), 64, dev, (void **)&x));
    CK(a.alloc_shared(ctx, &dd, &hd, N * sizeof(float), 64, dev, (void **)&y));
    CK(a.alloc_shared(ctx, &dd, &hd, N * sizeof(float), 64, dev, (void **)&z));
    for (int i = 0; i < N; i++) {
        x[i] = (float)i;
        y[i] = 2.0f * (float)i;
        z[i] = -1;
    }
    CK(a.set_arg(k, 0, sizeof(x), &x));
    CK(a.set_arg(k, 1, sizeof(y), &y));
    CK(a.set_arg(k, 2, sizeof(z), &z));
    CK(a.set_group(k, 64, 1, 1));
    ze_command_queue_desc_t qd = {ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC, NULL, 0, 0, 0, ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS,
                                  ZE_COMMAND_QUEUE_PRIORITY_NORMAL};
    ze_command_list_handle_t l;
    CK(a.list_create(ctx, dev, &qd, &l));
    ze_event_pool_desc_t pd = {ZE_STRUCTURE_TYPE_EVENT_POOL_DESC, NULL, ZE_EVENT_POOL_FLAG_HOST_VISIBLE, 1};
    ze_event_pool_handle_t pool;
    CK(a.pool_create(ctx, &pd, 0, NULL, &pool));
    ze_event_desc_t ed = {ZE_STRUCTURE_TYPE_EVENT_DESC, NULL, 0, 0, ZE_EVENT_SCOPE_FLAG_HOST};
    ze_event_handle_t ev;
    CK(a.event_create(pool, &ed, &ev));
    ze_group_count_t g = {N / 64, 1, 1};
    CK(a.launch(l, k, &g, ev, 0, NULL));
    CK(a.event_sync(ev, 10ull * 1000000000ull));
    for (int i = 0; i < N; i++)
        if (z[i] != 3.0f * (float)i) {
            fprintf(stderr, "zc_access: z[%d] = %g, want %g\n", i, z[i], 3.0 * i);
            return 1;
        }
    printf("zc_access %s: vector_add of %d floats correct\n", mode, N);
    CK(a.mem_free(ctx, x));
    CK(a.mem_free(ctx, y));
    CK(a.mem_free(ctx, z));
    return 0;
}
