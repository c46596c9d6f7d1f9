/* SPDX-License-Identifier: MIT */
/* What the test loaders of tests/loader share: the spec's declarations after Debian's headers
 * (spec 1.4) that they call with, and opening the driver a loader of theirs loads. */
#ifndef ZC_LDR_SPEC_H
#define ZC_LDR_SPEC_H

#include <dlfcn.h>
#include <level_zero/ze_api.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* ze_group_size_t (1.14), passed by value to the launches with arguments */
typedef struct {
    uint32_t x, y, z;
} group_size_t;
/* every descriptor that is a type, a chain and flags: init driver type (1.10), mutable list,
 * command id and commands descriptors (1.8) */
typedef struct {
    ze_structure_type_t stype;
    const void *pNext;
    uint32_t flags;
} flags_desc_t;
/* zeCommandListAppendLaunchKernelWithArguments (1.14), index 37 of the command list table */
typedef ze_result_t (*with_args_t)(ze_command_list_handle_t, ze_kernel_handle_t, const ze_group_count_t,
                                   const group_size_t, void **, const void *, ze_event_handle_t, uint32_t,
                                   ze_event_handle_t *);
/* zeCommandListHostSynchronize (1.9), index 28 of the command list table */
typedef ze_result_t (*host_sync_t)(ze_command_list_handle_t, uint64_t);

/* The driver named by ZE_ENABLE_ALT_DRIVERS (libzecoll_ze.so when traced, zesim alone otherwise),
 * opened as a loader opens one; NULL after a "Bail out!" line. *path gets the name. */
static inline void *zc_ldr_open_driver(const char **path) {
    *path = getenv("ZE_ENABLE_ALT_DRIVERS");
    void *drv = *path ? dlopen(*path, RTLD_NOW | RTLD_LOCAL) : NULL;
    if (!drv) printf("Bail out! cannot load ZE_ENABLE_ALT_DRIVERS=%s: %s\n", *path ? *path : "(unset)",
                     *path ? dlerror() : "not set");
    return drv;
}

#endif
