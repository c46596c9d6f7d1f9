// SPDX-License-Identifier: MIT
// ic_app: the application side of the interception-cost benchmark (bench/intercept_cost.sh).
//
//   ic_app <direct|dlopen|dispatch-table> <N> [--tracer]
//
// Appends N barriers (zeCommandListAppendBarrier(list, NULL, 0, NULL)) to one regular command list
// that is never executed and is reset every 10,000 appends, so memory stays bounded and the cost of
// N appends is linear in N. The three modes are the three ways applications reach Level Zero:
//   direct          linked against libze_loader.so.1, calls the exported ze* symbols (PLT);
//   dlopen          dlopen("libze_loader.so.1") and dlsym(handle, ...) for every function, like SYCL
//                   or Unified Runtime adapters; symbol interposition cannot see these calls;
//   dispatch-table  zeInit as usual, then the loader's own zeGetCommandListProcAddrTable and calls
//                   through the returned table.
// --tracer plays the collector of variant 1: after the application's zeInit it creates a tracing-
// layer tracer with a no-op prologue and epilogue for zeCommandListAppendBarrier and enables it (the
// process must run with ZE_ENABLE_TRACING_LAYER=1). The prologue counts calls, like the hooks of
// the other variants, so every variant reports how many appends it actually saw.
#include <dlfcn.h>
#include <level_zero/layers/zel_tracing_api.h>
#include <level_zero/layers/zel_tracing_register_cb.h>
#include <level_zero/ze_api.h>
#include <level_zero/ze_ddi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RESET_EVERY 10000ul

// The subset of the API the application uses, resolved according to the mode.
struct api {
    ze_pfnInit_t init;
    ze_pfnDriverGet_t driver_get;
    ze_pfnDeviceGet_t device_get;
    ze_pfnContextCreate_t context_create;
    ze_pfnContextDestroy_t context_destroy;
    ze_pfnCommandListCreate_t list_create;
    ze_pfnCommandListReset_t list_reset;
    ze_pfnCommandListDestroy_t list_destroy;
    ze_pfnCommandListAppendBarrier_t append_barrier;
};

static void check(ze_result_t r, const char *what) {
    if (r != ZE_RESULT_SUCCESS) {
        fprintf(stderr, "ic_app: %s failed: 0x%x\n", what, (unsigned)r);
        exit(1);
    }
}

static void *must_dlsym(void *h, const char *name) {
    void *p = dlsym(h, name);
    if (!p) {
        fprintf(stderr, "ic_app: dlsym(%s): %s\n", name, dlerror());
        exit(1);
    }
    return p;
}

static void api_from_link(struct api *a) {
    a->init = zeInit;
    a->driver_get = zeDriverGet;
    a->device_get = zeDeviceGet;
    a->context_create = zeContextCreate;
    a->context_destroy = zeContextDestroy;
    a->list_create = zeCommandListCreate;
    a->list_reset = zeCommandListReset;
    a->list_destroy = zeCommandListDestroy;
    a->append_barrier = zeCommandListAppendBarrier;
}

// Like a SYCL/UR adapter: every entry point from dlsym(handle), never from the global scope.
static void api_from_dlopen(struct api *a) {
    void *h = dlopen("libze_loader.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        fprintf(stderr, "ic_app: dlopen(libze_loader.so.1): %s\n", dlerror());
        exit(1);
    }
    a->init = (ze_pfnInit_t)must_dlsym(h, "zeInit");
    a->driver_get = (ze_pfnDriverGet_t)must_dlsym(h, "zeDriverGet");
    a->device_get = (ze_pfnDeviceGet_t)must_dlsym(h, "zeDeviceGet");
    a->context_create = (ze_pfnContextCreate_t)must_dlsym(h, "zeContextCreate");
    a->context_destroy = (ze_pfnContextDestroy_t)must_dlsym(h, "zeContextDestroy");
    a->list_create = (ze_pfnCommandListCreate_t)must_dlsym(h, "zeCommandListCreate");
    a->list_reset = (ze_pfnCommandListReset_t)must_dlsym(h, "zeCommandListReset");
    a->list_destroy = (ze_pfnCommandListDestroy_t)must_dlsym(h, "zeCommandListDestroy");
    a->append_barrier = (ze_pfnCommandListAppendBarrier_t)must_dlsym(h, "zeCommandListAppendBarrier");
}

// After zeInit: the loader's exported getter returns the table the loader itself dispatches through
// (driver entries, wrapped by the validation and tracing layers when they are enabled).
static void api_from_dispatch_table(struct api *a) {
    static ze_command_list_dditable_t t; // zero-filled: entries newer than our headers stay NULL
    check(zeGetCommandListProcAddrTable(ZE_API_VERSION_CURRENT, &t), "zeGetCommandListProcAddrTable");
    if (!t.pfnCreate || !t.pfnReset || !t.pfnDestroy || !t.pfnAppendBarrier) {
        fprintf(stderr, "ic_app: command-list table has NULL entries\n");
        exit(1);
    }
    a->list_create = t.pfnCreate;
    a->list_reset = t.pfnReset;
    a->list_destroy = t.pfnDestroy;
    a->append_barrier = t.pfnAppendBarrier;
}

// ---- variant 1: the collector's tracer (no-op callbacks; the prologue counts) ----------------------

static unsigned long tracer_prologues;

static void ZE_APICALL on_barrier_prologue(ze_command_list_append_barrier_params_t *params, ze_result_t result,
                                           void *user, void **instance) {
    (void)params, (void)result, (void)user, (void)instance;
    ++tracer_prologues;
}

static void ZE_APICALL on_barrier_epilogue(ze_command_list_append_barrier_params_t *params, ze_result_t result,
                                           void *user, void **instance) {
    (void)params, (void)result, (void)user, (void)instance;
}

static zel_tracer_handle_t tracer_start(void) {
    zel_tracer_desc_t desc = {ZEL_STRUCTURE_TYPE_TRACER_DESC, NULL, NULL};
    zel_tracer_handle_t t = NULL;
    check(zelTracerCreate(&desc, &t), "zelTracerCreate (is ZE_ENABLE_TRACING_LAYER=1 set?)");
    check(zelTracerCommandListAppendBarrierRegisterCallback(t, ZEL_REGISTER_PROLOGUE, on_barrier_prologue),
          "zelTracerCommandListAppendBarrierRegisterCallback(prologue)");
    check(zelTracerCommandListAppendBarrierRegisterCallback(t, ZEL_REGISTER_EPILOGUE, on_barrier_epilogue),
          "zelTracerCommandListAppendBarrierRegisterCallback(epilogue)");
    check(zelTracerSetEnabled(t, 1), "zelTracerSetEnabled");
    return t;
}

// ---- the measured loop ------------------------------------------------------------------------------

// noinline keeps the loop one function in callgrind profiles (callgrind_annotate shows its share).
__attribute__((noinline)) static void append_loop_direct(ze_command_list_handle_t list, unsigned long n,
                                                         const struct api *a) {
    for (unsigned long i = 1; i <= n; ++i) {
        ze_result_t r = zeCommandListAppendBarrier(list, NULL, 0, NULL); // PLT call, interposable
        if (r != ZE_RESULT_SUCCESS) check(r, "zeCommandListAppendBarrier");
        if (i % RESET_EVERY == 0) check(a->list_reset(list), "zeCommandListReset");
    }
}

__attribute__((noinline)) static void append_loop_pointer(ze_command_list_handle_t list, unsigned long n,
                                                          const struct api *a) {
    for (unsigned long i = 1; i <= n; ++i) {
        ze_result_t r = a->append_barrier(list, NULL, 0, NULL);
        if (r != ZE_RESULT_SUCCESS) check(r, "zeCommandListAppendBarrier");
        if (i % RESET_EVERY == 0) check(a->list_reset(list), "zeCommandListReset");
    }
}

// Which loader layers are mapped (RTLD_NOLOAD only looks), so the script can prove a layer was on.
static const char *layers_loaded(void) {
    static char buf[64];
    buf[0] = 0;
    const char *names[2][2] = {{"libze_validation_layer.so.1", "validation"}, {"libze_tracing_layer.so.1", "tracing"}};
    for (int i = 0; i < 2; ++i) {
        void *h = dlopen(names[i][0], RTLD_NOW | RTLD_NOLOAD);
        if (!h) continue;
        dlclose(h);
        if (buf[0]) strcat(buf, ",");
        strcat(buf, names[i][1]);
    }
    return buf[0] ? buf : "none";
}

static void usage(void) {
    fprintf(stderr, "usage: ic_app <direct|dlopen|dispatch-table> <N> [--tracer]\n");
    exit(2);
}

int main(int argc, char **argv) {
    if (argc < 3 || argc > 4) usage();
    const char *mode = argv[1];
    char *end = NULL;
    unsigned long n = strtoul(argv[2], &end, 10);
    if (!end || *end) usage();
    int use_tracer = 0;
    if (argc == 4) {
        if (strcmp(argv[3], "--tracer") != 0) usage();
        use_tracer = 1;
    }
    int direct = strcmp(mode, "direct") == 0, via_dlopen = strcmp(mode, "dlopen") == 0,
        via_table = strcmp(mode, "dispatch-table") == 0;
    if (!direct && !via_dlopen && !via_table) usage();

    struct api a;
    if (via_dlopen)
        api_from_dlopen(&a);
    else
        api_from_link(&a);

    check(a.init(0), "zeInit");
    zel_tracer_handle_t tracer = use_tracer ? tracer_start() : NULL;
    if (via_table) api_from_dispatch_table(&a);

    uint32_t count = 1;
    ze_driver_handle_t driver = NULL;
    check(a.driver_get(&count, &driver), "zeDriverGet");
    count = 1;
    ze_device_handle_t device = NULL;
    check(a.device_get(driver, &count, &device), "zeDeviceGet");
    ze_context_desc_t cdesc = {ZE_STRUCTURE_TYPE_CONTEXT_DESC, NULL, 0};
    ze_context_handle_t context = NULL;
    check(a.context_create(driver, &cdesc, &context), "zeContextCreate");
    ze_command_list_desc_t ldesc = {ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC, NULL, 0, 0};
    ze_command_list_handle_t list = NULL;
    check(a.list_create(context, device, &ldesc, &list), "zeCommandListCreate");

    if (direct)
        append_loop_direct(list, n, &a);
    else
        append_loop_pointer(list, n, &a);

    check(a.list_destroy(list), "zeCommandListDestroy");
    check(a.context_destroy(context), "zeContextDestroy");
    if (tracer) {
        check(zelTracerSetEnabled(tracer, 0), "zelTracerSetEnabled(0)");
        check(zelTracerDestroy(tracer), "zelTracerDestroy");
    }
    printf("ic_app mode=%s n=%lu tracer=%d tracer_prologues=%lu layers=%s zelEnableTracingLayer=%s\n", mode, n,
           use_tracer, tracer_prologues, layers_loaded(),
           dlsym(RTLD_DEFAULT, "zelEnableTracingLayer") ? "present" : "absent");
    fflush(stdout); // before the hooks' exit-time counts on stderr
    return 0;
}
