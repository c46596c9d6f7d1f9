/* SPDX-License-Identifier: MIT */
/* What the Level Zero benchmark programs share (zc_bench_app, zc_devrate): a driver call that must
 * succeed (the program ends, naming it, when it does not: a benchmark of a failing call measures
 * nothing), the clock they time with, the driver, device and context they start with, a kernel. ZC_BENCH_NAME names the program in the message. */
#ifndef ZC_BENCH_COMMON_H
#define ZC_BENCH_COMMON_H

#include <level_zero/ze_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CK(call)                                                                                   \
    do {                                                                                           \
        ze_result_t r_ = (call);                                                                   \
        if (r_ != ZE_RESULT_SUCCESS) {                                                             \
            fprintf(stderr, ZC_BENCH_NAME ": %s: 0x%x\n", #call, (unsigned)r_);                    \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

/* CLOCK_MONOTONIC_RAW: the clock the collector converts to, never slewed */
static inline double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC_RAW, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}
/* zeInit, the first driver, its first device and a context on it */
static inline ze_context_handle_t bench_context(ze_driver_handle_t *drv, ze_device_handle_t *dev) {
    CK(zeInit(0));
    uint32_t c = 1;
    CK(zeDriverGet(&c, drv));
    c = 1;
    CK(zeDeviceGet(*drv, &c, dev));
    ze_context_desc_t cd = {ZE_STRUCTURE_TYPE_CONTEXT_DESC, NULL, 0};
    ze_context_handle_t ctx;
    CK(zeContextCreate(*drv, &cd, &ctx));
    return ctx;
}
/* A module from zesim's text format (what a binary would be on a GPU) and its kernel name */
static inline ze_kernel_handle_t bench_kernel(ze_context_handle_t ctx, ze_device_handle_t dev, const char *text,
                                              const char *name, ze_module_handle_t *mod) {
    ze_module_desc_t md = {ZE_STRUCTURE_TYPE_MODULE_DESC, NULL, ZE_MODULE_FORMAT_NATIVE, strlen(text),
                           (const uint8_t *)text, NULL, NULL};
    CK(zeModuleCreate(ctx, dev, &md, mod, NULL));
    ze_kernel_desc_t kd = {ZE_STRUCTURE_TYPE_KERNEL_DESC, NULL, 0, name};
    ze_kernel_handle_t k;
    CK(zeKernelCreate(*mod, &kd, &k));
    return k;
}
#endif
