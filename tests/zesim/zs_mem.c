/* SPDX-License-Identifier: MIT */
/* zesim memory: USM allocations (host memory under the hood, with a sorted table so any interior
 * pointer maps back to its allocation and type), images with linear storage, samplers. */
#include "zs_internal.h"

#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- allocation table */
/* Index of the first allocation whose base is > p, minus one: the candidate containing p. */
static ptrdiff_t alloc_find_locked(uintptr_t p) {
    size_t lo = 0, hi = zs.nallocs;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (zs.allocs[mid].base <= p) lo = mid + 1;
        else hi = mid;
    }
    if (lo == 0) return -1;
    const struct zs_alloc *a = &zs.allocs[lo - 1];
    /* a zero-offset pointer one past the end belongs to the next allocation, not this one */
    if (p >= a->base && p < a->base + (a->size ? a->size : 1)) return (ptrdiff_t)(lo - 1);
    return -1;
}

static ze_result_t alloc_insert(void *p, size_t size, ze_memory_type_t type, int device) {
    pthread_rwlock_wrlock(&zs.alloc_lock);
    if (zs.nallocs == zs.cap_allocs) {
        size_t ncap = zs.cap_allocs ? 2 * zs.cap_allocs : 256;
        struct zs_alloc *n = realloc(zs.allocs, ncap * sizeof(*n));
        if (!n) {
            pthread_rwlock_unlock(&zs.alloc_lock);
            return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
        }
        zs.allocs = n;
        zs.cap_allocs = ncap;
    }
    size_t pos = 0, lo = 0, hi = zs.nallocs;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (zs.allocs[mid].base < (uintptr_t)p) lo = mid + 1;
        else hi = mid;
    }
    pos = lo;
    memmove(&zs.allocs[pos + 1], &zs.allocs[pos], (zs.nallocs - pos) * sizeof(zs.allocs[0]));
    zs.allocs[pos] = (struct zs_alloc){(uintptr_t)p, size, type, device, ++zs.next_alloc_id};
    zs.nallocs++;
    pthread_rwlock_unlock(&zs.alloc_lock);
    return ZE_RESULT_SUCCESS;
}

ze_memory_type_t zs_alloc_type(const void *p, int *device) {
    ze_memory_type_t t = ZE_MEMORY_TYPE_UNKNOWN;
    pthread_rwlock_rdlock(&zs.alloc_lock);
    ptrdiff_t i = alloc_find_locked((uintptr_t)p);
    if (i >= 0) {
        t = zs.allocs[i].type;
        if (device) *device = zs.allocs[i].device;
    }
    pthread_rwlock_unlock(&zs.alloc_lock);
    return t;
}

uint64_t zs_alloc_room(const void *p) {
    uint64_t r = UINT64_MAX;
    pthread_rwlock_rdlock(&zs.alloc_lock);
    ptrdiff_t i = alloc_find_locked((uintptr_t)p);
    if (i >= 0) r = zs.allocs[i].base + zs.allocs[i].size - (uintptr_t)p;
    pthread_rwlock_unlock(&zs.alloc_lock);
    return r;
}

static ze_result_t do_alloc(size_t size, size_t alignment, ze_memory_type_t type, int device, void **pptr) {
    if (!pptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    if (size == 0) return ZE_RESULT_ERROR_UNSUPPORTED_SIZE;
    if (alignment & (alignment - 1)) return ZE_RESULT_ERROR_UNSUPPORTED_ALIGNMENT;
    if (size > (UINT64_C(4) << 30)) return ZE_RESULT_ERROR_UNSUPPORTED_SIZE;
    if (alignment < 64) alignment = 64;
    void *p = NULL;
    if (posix_memalign(&p, alignment, size) != 0) return ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY;
    ze_result_t r = alloc_insert(p, size, type, device);
    if (r != ZE_RESULT_SUCCESS) {
        free(p);
        return r;
    }
    *pptr = p;
    return ZE_RESULT_SUCCESS;
}

static ze_result_t zs_zeMemAllocShared(ze_context_handle_t c, const ze_device_mem_alloc_desc_t *dd,
                                       const ze_host_mem_alloc_desc_t *hd, size_t size, size_t alignment,
                                       ze_device_handle_t dev, void **pptr) {
    ZS_ENTER_DEV();
    ZS_CHECK(c, ZS_MAGIC_CONTEXT);
    if (!dd || !hd) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    if (dev && dev->magic != ZS_MAGIC_DEVICE) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    return do_alloc(size, alignment, ZE_MEMORY_TYPE_SHARED, dev ? dev->id : -1, pptr);
}

static ze_result_t zs_zeMemAllocDevice(ze_context_handle_t c, const ze_device_mem_alloc_desc_t *dd, size_t size,
                                       size_t alignment, ze_device_handle_t dev, void **pptr) {
    ZS_ENTER_DEV();
    ZS_CHECK(c, ZS_MAGIC_CONTEXT);
    ZS_CHECK(dev, ZS_MAGIC_DEVICE);
    if (!dd) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    return do_alloc(size, alignment, ZE_MEMORY_TYPE_DEVICE, dev->id, pptr);
}

static ze_result_t zs_zeMemAllocHost(ze_context_handle_t c, const ze_host_mem_alloc_desc_t *hd, size_t size,
                                     size_t alignment, void **pptr) {
    ZS_ENTER_DEV();
    ZS_CHECK(c, ZS_MAGIC_CONTEXT);
    if (!hd) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    return do_alloc(size, alignment, ZE_MEMORY_TYPE_HOST, -1, pptr);
}

static ze_result_t zs_zeMemFree(ze_context_handle_t c, void *ptr) {
    ZS_ENTER();
    ZS_CHECK(c, ZS_MAGIC_CONTEXT);
    if (!ptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    pthread_rwlock_wrlock(&zs.alloc_lock);
    ptrdiff_t i = alloc_find_locked((uintptr_t)ptr);
    if (i < 0 || zs.allocs[i].base != (uintptr_t)ptr) {
        pthread_rwlock_unlock(&zs.alloc_lock);
        return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    }
    memmove(&zs.allocs[i], &zs.allocs[i + 1], (zs.nallocs - (size_t)i - 1) * sizeof(zs.allocs[0]));
    zs.nallocs--;
    pthread_rwlock_unlock(&zs.alloc_lock);
    free(ptr);
    return ZE_RESULT_SUCCESS;
}

static ze_result_t zs_zeMemGetAllocProperties(ze_context_handle_t c, const void *ptr,
                                              ze_memory_allocation_properties_t *p, ze_device_handle_t *phDevice) {
    ZS_ENTER();
    ZS_CHECK(c, ZS_MAGIC_CONTEXT);
    if (!p) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    p->type = ZE_MEMORY_TYPE_UNKNOWN;
    p->id = 0;
    p->pageSize = 0;
    if (phDevice) *phDevice = NULL;
    pthread_rwlock_rdlock(&zs.alloc_lock);
    ptrdiff_t i = ptr ? alloc_find_locked((uintptr_t)ptr) : -1;
    if (i >= 0) {
        const struct zs_alloc *a = &zs.allocs[i];
        p->type = a->type;
        p->id = a->id;
        p->pageSize = a->size >= (2u << 20) ? (2u << 20) : 4096;
        if (phDevice && a->device >= 0) *phDevice = &zs.devices[a->device];
    }
    pthread_rwlock_unlock(&zs.alloc_lock);
    return ZE_RESULT_SUCCESS;
}

static ze_result_t zs_zeMemGetAddressRange(ze_context_handle_t c, const void *ptr, void **pBase, size_t *pSize) {
    ZS_ENTER();
    ZS_CHECK(c, ZS_MAGIC_CONTEXT);
    if (!ptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    pthread_rwlock_rdlock(&zs.alloc_lock);
    ptrdiff_t i = alloc_find_locked((uintptr_t)ptr);
    if (i >= 0) {
        if (pBase) *pBase = (void *)zs.allocs[i].base;
        if (pSize) *pSize = zs.allocs[i].size;
    }
    pthread_rwlock_unlock(&zs.alloc_lock);
    return i >= 0 ? ZE_RESULT_SUCCESS : ZE_RESULT_ERROR_INVALID_ARGUMENT;
}

void zs_fill_mem_table(ze_mem_dditable_t *t) {
    t->pfnAllocShared = zs_zeMemAllocShared;
    t->pfnAllocDevice = zs_zeMemAllocDevice;
    t->pfnAllocHost = zs_zeMemAllocHost;
    t->pfnFree = zs_zeMemFree;
    t->pfnGetAllocProperties = zs_zeMemGetAllocProperties;
    t->pfnGetAddressRange = zs_zeMemGetAddressRange;
}

/* ---------------------------------------------------------------- images */
static size_t layout_bytes(ze_image_format_layout_t l) {
    switch (l) {
    case ZE_IMAGE_FORMAT_LAYOUT_8: case ZE_IMAGE_FORMAT_LAYOUT_Y8: case ZE_IMAGE_FORMAT_LAYOUT_P8:
        return 1;
    case ZE_IMAGE_FORMAT_LAYOUT_16: case ZE_IMAGE_FORMAT_LAYOUT_8_8: case ZE_IMAGE_FORMAT_LAYOUT_5_6_5:
    case ZE_IMAGE_FORMAT_LAYOUT_5_5_5_1: case ZE_IMAGE_FORMAT_LAYOUT_4_4_4_4: case ZE_IMAGE_FORMAT_LAYOUT_Y16:
        return 2;
    case ZE_IMAGE_FORMAT_LAYOUT_32: case ZE_IMAGE_FORMAT_LAYOUT_8_8_8_8: case ZE_IMAGE_FORMAT_LAYOUT_16_16:
    case ZE_IMAGE_FORMAT_LAYOUT_10_10_10_2: case ZE_IMAGE_FORMAT_LAYOUT_11_11_10:
        return 4;
    case ZE_IMAGE_FORMAT_LAYOUT_16_16_16_16: case ZE_IMAGE_FORMAT_LAYOUT_32_32:
        return 8;
    case ZE_IMAGE_FORMAT_LAYOUT_32_32_32_32:
        return 16;
    default:
        return 4; /* media formats: treated as 32-bit texels in linear storage */
    }
}

size_t zs_image_size(ze_image_handle_t img) { return img->size; }

static ze_result_t zs_zeImageGetProperties(ze_device_handle_t d, const ze_image_desc_t *desc, ze_image_properties_t *p) {
    ZS_ENTER();
    ZS_CHECK(d, ZS_MAGIC_DEVICE);
    if (!desc || !p) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    p->samplerFilterFlags = ZE_IMAGE_SAMPLER_FILTER_FLAG_POINT | ZE_IMAGE_SAMPLER_FILTER_FLAG_LINEAR;
    return ZE_RESULT_SUCCESS;
}

static ze_result_t zs_zeImageCreate(ze_context_handle_t c, ze_device_handle_t d, const ze_image_desc_t *desc,
                                    ze_image_handle_t *ph) {
    ZS_ENTER_DEV();
    ZS_CHECK(c, ZS_MAGIC_CONTEXT);
    ZS_CHECK(d, ZS_MAGIC_DEVICE);
    if (!desc || !ph) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    if (desc->type > ZE_IMAGE_TYPE_BUFFER) return ZE_RESULT_ERROR_INVALID_ENUMERATION;
    if (desc->width == 0) return ZE_RESULT_ERROR_INVALID_SIZE;
    struct _ze_image_handle_t *img = calloc(1, sizeof(*img));
    if (!img) return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    img->magic = ZS_MAGIC_IMAGE;
    img->desc = *desc;
    img->desc.pNext = NULL;
    img->bpp = layout_bytes(desc->format.layout);
    img->width = desc->width;
    img->height = desc->height ? desc->height : 1;
    img->depth = desc->depth ? desc->depth : 1;
    if (desc->type == ZE_IMAGE_TYPE_1D || desc->type == ZE_IMAGE_TYPE_BUFFER) img->height = img->depth = 1;
    if (desc->type == ZE_IMAGE_TYPE_2D) img->depth = 1;
    if (desc->type == ZE_IMAGE_TYPE_1DARRAY) {
        img->height = desc->arraylevels ? desc->arraylevels : 1;
        img->depth = 1;
    }
    if (desc->type == ZE_IMAGE_TYPE_2DARRAY) img->depth = desc->arraylevels ? desc->arraylevels : 1;
    img->size = img->bpp * img->width * img->height * img->depth;
    img->data = calloc(1, img->size);
    if (!img->data) {
        free(img);
        return ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY;
    }
    *ph = img;
    return ZE_RESULT_SUCCESS;
}

static ze_result_t zs_zeImageDestroy(ze_image_handle_t img) {
    ZS_ENTER();
    ZS_CHECK(img, ZS_MAGIC_IMAGE);
    img->magic = ZS_MAGIC_DEAD;
    free(img->data);
    zs_defer_free(img);
    return ZE_RESULT_SUCCESS;
}

void zs_fill_image_table(ze_image_dditable_t *t) {
    t->pfnGetProperties = zs_zeImageGetProperties;
    t->pfnCreate = zs_zeImageCreate;
    t->pfnDestroy = zs_zeImageDestroy;
}

/* ---------------------------------------------------------------- samplers */
static ze_result_t zs_zeSamplerCreate(ze_context_handle_t c, ze_device_handle_t d, const ze_sampler_desc_t *desc,
                                      ze_sampler_handle_t *ph) {
    ZS_ENTER_DEV();
    ZS_CHECK(c, ZS_MAGIC_CONTEXT);
    ZS_CHECK(d, ZS_MAGIC_DEVICE);
    if (!desc || !ph) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    struct _ze_sampler_handle_t *s = calloc(1, sizeof(*s));
    if (!s) return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    s->magic = ZS_MAGIC_SAMPLER;
    s->desc = *desc;
    *ph = s;
    return ZE_RESULT_SUCCESS;
}

static ze_result_t zs_zeSamplerDestroy(ze_sampler_handle_t s) {
    ZS_ENTER();
    ZS_CHECK(s, ZS_MAGIC_SAMPLER);
    s->magic = ZS_MAGIC_DEAD;
    zs_defer_free(s);
    return ZE_RESULT_SUCCESS;
}

void zs_fill_sampler_table(ze_sampler_dditable_t *t) {
    t->pfnCreate = zs_zeSamplerCreate;
    t->pfnDestroy = zs_zeSamplerDestroy;
}
