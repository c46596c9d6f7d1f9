/* SPDX-License-Identifier: MIT */
/* zesim's driver, devices and contexts: one driver, ZESIM_DEVICES GPUs with their properties and
 * engine groups, consistent global timestamps; contexts are handles that own nothing. */
#include "zs_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- driver */
static ze_result_t zs_zeDriverGet(uint32_t *pCount, ze_driver_handle_t *phDrivers) {
    ZS_ENTER();
    if (!pCount) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    if (zs.driver.magic != ZS_MAGIC_DRIVER) return ZE_RESULT_ERROR_UNINITIALIZED;
    if (*pCount == 0 || !phDrivers) {
        *pCount = 1;
        return ZE_RESULT_SUCCESS;
    }
    *pCount = 1;
    phDrivers[0] = &zs.driver;
    return ZE_RESULT_SUCCESS;
}

static ze_result_t zs_zeDriverGetApiVersion(ze_driver_handle_t h, ze_api_version_t *version) {
    ZS_ENTER();
    ZS_CHECK(h, ZS_MAGIC_DRIVER);
    if (!version) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    *version = ZE_API_VERSION_1_4;
    return ZE_RESULT_SUCCESS;
}

static ze_result_t zs_zeDriverGetProperties(ze_driver_handle_t h, ze_driver_properties_t *p) {
    ZS_ENTER();
    ZS_CHECK(h, ZS_MAGIC_DRIVER);
    if (!p) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    memset(p->uuid.id, 0, sizeof(p->uuid.id));
    memcpy(p->uuid.id, "zesim-driver", 12);
    /* compute-runtime's numbering: 0x01030000 + the build of a release of that generation's rules
     * (25.48.36300: every fill offloaded; 26.18.38308: fills and local copies up to 8 KiB) */
    p->driverVersion = 0x01030000u + (zs.cfg.driver_gen == 2025 ? 36300u : 38308u);
    zs_later_driver_properties(p);
    return ZE_RESULT_SUCCESS;
}

static ze_result_t zs_zeDriverGetIpcProperties(ze_driver_handle_t h, ze_driver_ipc_properties_t *p) {
    ZS_ENTER();
    ZS_CHECK(h, ZS_MAGIC_DRIVER);
    if (!p) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    p->flags = 0;
    return ZE_RESULT_SUCCESS;
}

static ze_result_t zs_zeDriverGetExtensionProperties(ze_driver_handle_t h, uint32_t *pCount,
                                                     ze_driver_extension_properties_t *p) {
    ZS_ENTER();
    ZS_CHECK(h, ZS_MAGIC_DRIVER);
    if (!pCount) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    *pCount = 0;
    return ZE_RESULT_SUCCESS;
}

static ze_result_t zs_zeDriverGetExtensionFunctionAddress(ze_driver_handle_t h, const char *name, void **ppf) {
    ZS_ENTER();
    ZS_CHECK(h, ZS_MAGIC_DRIVER);
    if (!name || !ppf) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    if ((*ppf = zs_graph_ext_function(name))) return ZE_RESULT_SUCCESS;
    if ((*ppf = zs_later_ext_function(name))) return ZE_RESULT_SUCCESS; /* zs_later.c */
    *ppf = zs_cb_ext_function(name); /* counter-based events (zs_cb.c) */
    return *ppf ? ZE_RESULT_SUCCESS : ZE_RESULT_ERROR_INVALID_ARGUMENT;
}

/* ---------------------------------------------------------------- device */
static ze_result_t zs_zeDeviceGet(ze_driver_handle_t h, uint32_t *pCount, ze_device_handle_t *phDevices) {
    ZS_ENTER();
    ZS_CHECK(h, ZS_MAGIC_DRIVER);
    if (!pCount) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    uint32_t n = (uint32_t)zs.cfg.ndev;
    if (*pCount == 0 || !phDevices) {
        *pCount = n;
        return ZE_RESULT_SUCCESS;
    }
    if (*pCount > n) *pCount = n;
    for (uint32_t i = 0; i < *pCount; i++) phDevices[i] = &zs.devices[i];
    return ZE_RESULT_SUCCESS;
}

static ze_result_t zs_zeDeviceGetSubDevices(ze_device_handle_t d, uint32_t *pCount, ze_device_handle_t *ph) {
    ZS_ENTER();
    ZS_CHECK(d, ZS_MAGIC_DEVICE);
    if (!pCount) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    *pCount = 0;
    return ZE_RESULT_SUCCESS;
}

static ze_result_t zs_zeDeviceGetProperties(ze_device_handle_t d, ze_device_properties_t *p) {
    ZS_ENTER();
    ZS_CHECK(d, ZS_MAGIC_DEVICE);
    if (!p) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    /* stype and pNext belong to the caller */
    p->type = ZE_DEVICE_TYPE_GPU;
    p->vendorId = 0x8086;
    p->deviceId = 0x0bd5;
    p->flags = zs.cfg.integrated ? ZE_DEVICE_PROPERTY_FLAG_INTEGRATED : 0;
    p->subdeviceId = 0;
    p->coreClockRate = 1600;
    p->maxMemAllocSize = UINT64_C(4) << 30;
    p->maxHardwareContexts = 64;
    p->maxCommandQueuePriority = 2;
    p->numThreadsPerEU = 8;
    p->physicalEUSimdWidth = 16;
    p->numEUsPerSubslice = 8;
    p->numSubslicesPerSlice = 8;
    p->numSlices = 1;
    /* Units differ by struct version: ns per tick (1.0, truncated like the real driver) or ticks
     * per second (1.2). Collectors that read the 1.0 form lose precision: 52 instead of 52.083. */
    if (p->stype == ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES_1_2) p->timerResolution = zs.cfg.hz;
    else p->timerResolution = 1000000000u / zs.cfg.hz;
    p->timestampValidBits = (uint32_t)zs.cfg.ts_bits;
    p->kernelTimestampValidBits = (uint32_t)zs.cfg.kts_bits;
    memset(p->uuid.id, 0, sizeof(p->uuid.id));
    memcpy(p->uuid.id, "zesimdev", 8);
    p->uuid.id[8] = (uint8_t)d->id;
    snprintf(p->name, sizeof(p->name), "zesim GPU %d", d->id);
    return ZE_RESULT_SUCCESS;
}

static ze_result_t zs_zeDeviceGetComputeProperties(ze_device_handle_t d, ze_device_compute_properties_t *p) {
    ZS_ENTER();
    ZS_CHECK(d, ZS_MAGIC_DEVICE);
    if (!p) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    p->maxTotalGroupSize = 1024;
    p->maxGroupSizeX = p->maxGroupSizeY = p->maxGroupSizeZ = 1024;
    p->maxGroupCountX = p->maxGroupCountY = p->maxGroupCountZ = 0xffffffffu;
    p->maxSharedLocalMemory = 64 * 1024;
    p->numSubGroupSizes = 3;
    memset(p->subGroupSizes, 0, sizeof(p->subGroupSizes));
    p->subGroupSizes[0] = 8;
    p->subGroupSizes[1] = 16;
    p->subGroupSizes[2] = 32;
    return ZE_RESULT_SUCCESS;
}

static ze_result_t zs_zeDeviceGetModuleProperties(ze_device_handle_t d, ze_device_module_properties_t *p) {
    ZS_ENTER();
    ZS_CHECK(d, ZS_MAGIC_DEVICE);
    if (!p) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    p->spirvVersionSupported = ZE_MAKE_VERSION(1, 2);
    p->flags = ZE_DEVICE_MODULE_FLAG_FP16 | ZE_DEVICE_MODULE_FLAG_FP64 | ZE_DEVICE_MODULE_FLAG_INT64_ATOMICS;
    p->fp16flags = p->fp32flags = p->fp64flags = ZE_DEVICE_FP_FLAG_ROUND_TO_NEAREST | ZE_DEVICE_FP_FLAG_FMA;
    p->maxArgumentsSize = 2048;
    p->printfBufferSize = 4 << 20;
    memset(&p->nativeKernelSupported, 0, sizeof(p->nativeKernelSupported));
    return ZE_RESULT_SUCCESS;
}

static ze_result_t zs_zeDeviceGetCommandQueueGroupProperties(ze_device_handle_t d, uint32_t *pCount,
                                                             ze_command_queue_group_properties_t *p) {
    ZS_ENTER();
    ZS_CHECK(d, ZS_MAGIC_DEVICE);
    if (!pCount) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    uint32_t n = zs.cfg.ncopy > 0 ? 2 : 1;
    if (*pCount == 0 || !p) {
        *pCount = n;
        return ZE_RESULT_SUCCESS;
    }
    if (*pCount > n) *pCount = n;
    for (uint32_t i = 0; i < *pCount; i++) {
        if (i == ZS_GROUP_COMPUTE) {
            p[i].flags = ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COMPUTE | ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COPY |
                         ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_METRICS |
                         ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COOPERATIVE_KERNELS;
            p[i].maxMemoryFillPatternSize = 128;
            p[i].numQueues = (uint32_t)zs.cfg.ncompute;
        } else {
            p[i].flags = ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COPY;
            p[i].maxMemoryFillPatternSize = 4;
            p[i].numQueues = (uint32_t)zs.cfg.ncopy;
        }
    }
    return ZE_RESULT_SUCCESS;
}

static ze_result_t zs_zeDeviceGetMemoryProperties(ze_device_handle_t d, uint32_t *pCount,
                                                  ze_device_memory_properties_t *p) {
    ZS_ENTER();
    ZS_CHECK(d, ZS_MAGIC_DEVICE);
    if (!pCount) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    if (*pCount == 0 || !p) {
        *pCount = 1;
        return ZE_RESULT_SUCCESS;
    }
    *pCount = 1;
    p->flags = 0;
    p->maxClockRate = 3200;
    p->maxBusWidth = 256;
    p->totalSize = UINT64_C(16) << 30;
    snprintf(p->name, sizeof(p->name), "HBM");
    return ZE_RESULT_SUCCESS;
}

static ze_result_t zs_zeDeviceGetMemoryAccessProperties(ze_device_handle_t d,
                                                        ze_device_memory_access_properties_t *p) {
    ZS_ENTER();
    ZS_CHECK(d, ZS_MAGIC_DEVICE);
    if (!p) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    ze_memory_access_cap_flags_t all = ZE_MEMORY_ACCESS_CAP_FLAG_RW | ZE_MEMORY_ACCESS_CAP_FLAG_ATOMIC |
                                       ZE_MEMORY_ACCESS_CAP_FLAG_CONCURRENT |
                                       ZE_MEMORY_ACCESS_CAP_FLAG_CONCURRENT_ATOMIC;
    p->hostAllocCapabilities = all;
    p->deviceAllocCapabilities = all;
    p->sharedSingleDeviceAllocCapabilities = all;
    p->sharedCrossDeviceAllocCapabilities = ZE_MEMORY_ACCESS_CAP_FLAG_RW;
    p->sharedSystemAllocCapabilities = 0;
    return ZE_RESULT_SUCCESS;
}

static ze_result_t zs_zeDeviceGetCacheProperties(ze_device_handle_t d, uint32_t *pCount,
                                                 ze_device_cache_properties_t *p) {
    ZS_ENTER();
    ZS_CHECK(d, ZS_MAGIC_DEVICE);
    if (!pCount) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    if (*pCount == 0 || !p) {
        *pCount = 1;
        return ZE_RESULT_SUCCESS;
    }
    *pCount = 1;
    p->flags = ZE_DEVICE_CACHE_PROPERTY_FLAG_USER_CONTROL;
    p->cacheSize = 16u << 20;
    return ZE_RESULT_SUCCESS;
}

static ze_result_t zs_zeDeviceGetImageProperties(ze_device_handle_t d, ze_device_image_properties_t *p) {
    ZS_ENTER();
    ZS_CHECK(d, ZS_MAGIC_DEVICE);
    if (!p) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    p->maxImageDims1D = 16384;
    p->maxImageDims2D = 16384;
    p->maxImageDims3D = 2048;
    p->maxImageBufferSize = UINT64_C(1) << 32;
    p->maxImageArraySlices = 2048;
    p->maxSamplers = 16;
    p->maxReadImageArgs = 128;
    p->maxWriteImageArgs = 128;
    return ZE_RESULT_SUCCESS;
}

static ze_result_t zs_zeDeviceGetExternalMemoryProperties(ze_device_handle_t d,
                                                          ze_device_external_memory_properties_t *p) {
    ZS_ENTER();
    ZS_CHECK(d, ZS_MAGIC_DEVICE);
    if (!p) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    p->memoryAllocationImportTypes = p->memoryAllocationExportTypes = 0;
    p->imageImportTypes = p->imageExportTypes = 0;
    return ZE_RESULT_SUCCESS;
}

static ze_result_t zs_zeDeviceGetP2PProperties(ze_device_handle_t d, ze_device_handle_t peer,
                                               ze_device_p2p_properties_t *p) {
    ZS_ENTER();
    ZS_CHECK(d, ZS_MAGIC_DEVICE);
    ZS_CHECK(peer, ZS_MAGIC_DEVICE);
    if (!p) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    p->flags = ZE_DEVICE_P2P_PROPERTY_FLAG_ACCESS;
    return ZE_RESULT_SUCCESS;
}

static ze_result_t zs_zeDeviceCanAccessPeer(ze_device_handle_t d, ze_device_handle_t peer, ze_bool_t *v) {
    ZS_ENTER();
    ZS_CHECK(d, ZS_MAGIC_DEVICE);
    ZS_CHECK(peer, ZS_MAGIC_DEVICE);
    if (!v) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    *v = 1;
    return ZE_RESULT_SUCCESS;
}

static ze_result_t zs_zeDeviceGetStatus(ze_device_handle_t d) {
    ZS_ENTER();
    ZS_CHECK(d, ZS_MAGIC_DEVICE);
    return atomic_load(&zs.lost) ? ZE_RESULT_ERROR_DEVICE_LOST : ZE_RESULT_SUCCESS;
}

/* Real drivers read the CPU clock and the GPU counter over MMIO; it costs ~11 us. The pair is
 * consistent: the device value is the counter at exactly the returned host time. */
static ze_result_t zs_zeDeviceGetGlobalTimestamps(ze_device_handle_t d, uint64_t *host, uint64_t *dev) {
    ZS_ENTER_DEV();
    ZS_CHECK(d, ZS_MAGIC_DEVICE);
    if (!host || !dev) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    uint64_t t0 = zs_now(), cost = zs.cfg.gts_cost_ns;
    uint64_t mid = t0 + cost / 2;
    while (zs_now() < t0 + cost) {
    }
    *host = mid;
    *dev = zs_mask(zs_ticks_full(d, mid), zs.cfg.ts_bits);
    return ZE_RESULT_SUCCESS;
}

/* ---------------------------------------------------------------- context */
static ze_result_t zs_zeContextCreate(ze_driver_handle_t h, const ze_context_desc_t *desc, ze_context_handle_t *ph) {
    ZS_ENTER_DEV();
    ZS_CHECK(h, ZS_MAGIC_DRIVER);
    if (!desc || !ph) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    struct _ze_context_handle_t *c = calloc(1, sizeof(*c));
    if (!c) return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    c->magic = ZS_MAGIC_CONTEXT;
    *ph = c;
    return ZE_RESULT_SUCCESS;
}

static ze_result_t zs_zeContextCreateEx(ze_driver_handle_t h, const ze_context_desc_t *desc, uint32_t n,
                                        ze_device_handle_t *phDevices, ze_context_handle_t *ph) {
    return zs_zeContextCreate(h, desc, ph);
}

static ze_result_t zs_zeContextDestroy(ze_context_handle_t c) {
    ZS_ENTER();
    ZS_CHECK(c, ZS_MAGIC_CONTEXT);
    /* Objects created in the context stay usable for whoever still holds them (the spec makes that
     * undefined); the poisoned magic, kept readable for a while by zs_defer_free, makes later use
     * of this context handle fail cleanly. */
    c->magic = ZS_MAGIC_DEAD;
    zs_defer_free(c);
    return ZE_RESULT_SUCCESS;
}

static ze_result_t zs_zeContextGetStatus(ze_context_handle_t c) {
    ZS_ENTER();
    ZS_CHECK(c, ZS_MAGIC_CONTEXT);
    return atomic_load(&zs.lost) ? ZE_RESULT_ERROR_DEVICE_LOST : ZE_RESULT_SUCCESS;
}

static ze_result_t zs_zeContextSystemBarrier(ze_context_handle_t c, ze_device_handle_t d) {
    ZS_ENTER_DEV();
    ZS_CHECK(c, ZS_MAGIC_CONTEXT);
    return ZE_RESULT_SUCCESS;
}

static ze_result_t zs_zeContextMakeMemoryResident(ze_context_handle_t c, ze_device_handle_t d, void *p, size_t s) {
    ZS_ENTER_DEV();
    ZS_CHECK(c, ZS_MAGIC_CONTEXT);
    return ZE_RESULT_SUCCESS;
}

static ze_result_t zs_zeContextEvictMemory(ze_context_handle_t c, ze_device_handle_t d, void *p, size_t s) {
    ZS_ENTER_DEV();
    ZS_CHECK(c, ZS_MAGIC_CONTEXT);
    return ZE_RESULT_SUCCESS;
}

static ze_result_t zs_zeContextMakeImageResident(ze_context_handle_t c, ze_device_handle_t d, ze_image_handle_t i) {
    ZS_ENTER_DEV();
    ZS_CHECK(c, ZS_MAGIC_CONTEXT);
    return ZE_RESULT_SUCCESS;
}

static ze_result_t zs_zeContextEvictImage(ze_context_handle_t c, ze_device_handle_t d, ze_image_handle_t i) {
    ZS_ENTER_DEV();
    ZS_CHECK(c, ZS_MAGIC_CONTEXT);
    return ZE_RESULT_SUCCESS;
}

void zs_fill_driver_table(ze_driver_dditable_t *t) {
    t->pfnGet = zs_zeDriverGet;
    t->pfnGetApiVersion = zs_zeDriverGetApiVersion;
    t->pfnGetProperties = zs_zeDriverGetProperties;
    t->pfnGetIpcProperties = zs_zeDriverGetIpcProperties;
    t->pfnGetExtensionProperties = zs_zeDriverGetExtensionProperties;
    t->pfnGetExtensionFunctionAddress = zs_zeDriverGetExtensionFunctionAddress;
}

void zs_fill_device_table(ze_device_dditable_t *t, unsigned minor) {
    t->pfnGet = zs_zeDeviceGet;
    t->pfnGetSubDevices = zs_zeDeviceGetSubDevices;
    t->pfnGetProperties = zs_zeDeviceGetProperties;
    t->pfnGetComputeProperties = zs_zeDeviceGetComputeProperties;
    t->pfnGetModuleProperties = zs_zeDeviceGetModuleProperties;
    t->pfnGetCommandQueueGroupProperties = zs_zeDeviceGetCommandQueueGroupProperties;
    t->pfnGetMemoryProperties = zs_zeDeviceGetMemoryProperties;
    t->pfnGetMemoryAccessProperties = zs_zeDeviceGetMemoryAccessProperties;
    t->pfnGetCacheProperties = zs_zeDeviceGetCacheProperties;
    t->pfnGetImageProperties = zs_zeDeviceGetImageProperties;
    t->pfnGetExternalMemoryProperties = zs_zeDeviceGetExternalMemoryProperties;
    t->pfnGetP2PProperties = zs_zeDeviceGetP2PProperties;
    t->pfnCanAccessPeer = zs_zeDeviceCanAccessPeer;
    t->pfnGetStatus = zs_zeDeviceGetStatus;
    if (minor >= 1) t->pfnGetGlobalTimestamps = zs_zeDeviceGetGlobalTimestamps;
}

void zs_fill_context_table(ze_context_dditable_t *t, unsigned minor) {
    t->pfnCreate = zs_zeContextCreate;
    t->pfnDestroy = zs_zeContextDestroy;
    t->pfnGetStatus = zs_zeContextGetStatus;
    t->pfnSystemBarrier = zs_zeContextSystemBarrier;
    t->pfnMakeMemoryResident = zs_zeContextMakeMemoryResident;
    t->pfnEvictMemory = zs_zeContextEvictMemory;
    t->pfnMakeImageResident = zs_zeContextMakeImageResident;
    t->pfnEvictImage = zs_zeContextEvictImage;
    if (minor >= 1) t->pfnCreateEx = zs_zeContextCreateEx;
}

ze_result_t zs_driver_get(uint32_t *pCount, ze_driver_handle_t *phDrivers) { return zs_zeDriverGet(pCount, phDrivers); }
