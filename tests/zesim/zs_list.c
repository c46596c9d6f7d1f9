/* SPDX-License-Identifier: MIT */
/* zesim command lists: a regular list records commands into a body that executions share (and
 * keep alive while they run); an immediate list submits each command to its stream at once. Every
 * Append validates its arguments and copies what it keeps (the loader frees its temporaries). */
#include "zs_internal.h"

#include <stdlib.h>
#include <string.h>

static void *dup_mem(const void *p, size_t n) {
    if (!p || !n) return NULL;
    void *d = malloc(n);
    if (d) memcpy(d, p, n);
    return d;
}

/* ---------------------------------------------------------------- command lists */
static ze_result_t list_new(ze_context_handle_t c, ze_device_handle_t d, uint32_t ordinal, bool immediate,
                            ze_command_list_handle_t *ph) {
    ZS_CHECK(c, ZS_MAGIC_CONTEXT);
    ZS_CHECK(d, ZS_MAGIC_DEVICE);
    if (!ph) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    int ngroups = zs.cfg.ncopy > 0 ? 2 : 1;
    if ((int)ordinal >= ngroups) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    struct _ze_command_list_handle_t *l = calloc(1, sizeof(*l));
    if (!l) return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    l->magic = ZS_MAGIC_LIST;
    l->context = c;
    l->device = d;
    l->ordinal = ordinal;
    l->immediate = immediate;
    l->copy_only = ordinal == ZS_GROUP_COPY;
    *ph = l;
    return ZE_RESULT_SUCCESS;
}

/* The copy-offload hint takes on in-order compute lists of a device with a copy engine (as in
 * compute-runtime); the engine's worker exists from then on. */
static void list_offload(ze_command_list_handle_t l, bool hint) {
    if (!hint || !l->in_order || l->copy_only) return;
    pthread_mutex_lock(&zs.lock);
    l->offload = zs_offload_engine_locked(l->device) != NULL;
    pthread_mutex_unlock(&zs.lock);
}

static ze_result_t zs_zeCommandListCreate(ze_context_handle_t c, ze_device_handle_t d, const ze_command_list_desc_t *desc,
                                          ze_command_list_handle_t *ph) {
    ZS_ENTER_DEV();
    if (!desc) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    if (desc->flags & ~(0xfu | ZS_LIST_FLAG_COPY_OFFLOAD)) return ZE_RESULT_ERROR_INVALID_ENUMERATION;
    ze_command_list_handle_t l;
    ze_result_t r = list_new(c, d, desc->commandQueueGroupOrdinal, false, &l);
    if (r != ZE_RESULT_SUCCESS) return r;
    l->in_order = (desc->flags & ZS_LIST_FLAG_IN_ORDER) != 0;
    list_offload(l, (desc->flags & ZS_LIST_FLAG_COPY_OFFLOAD) != 0);
    l->body = zs_body_new();
    if (!l->body || zs_listx_created(l, desc->pNext) != ZE_RESULT_SUCCESS) {
        zs_body_unref(l->body);
        free(l);
        return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    }
    *ph = l;
    return ZE_RESULT_SUCCESS;
}

static ze_result_t zs_zeCommandListCreateImmediate(ze_context_handle_t c, ze_device_handle_t d,
                                                   const ze_command_queue_desc_t *desc, ze_command_list_handle_t *ph) {
    ZS_ENTER_DEV();
    if (!desc) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    if (desc->mode > ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS || (desc->flags & ~(0x3u | ZS_QUEUE_FLAG_COPY_OFFLOAD)) ||
        desc->priority > 2)
        return ZE_RESULT_ERROR_INVALID_ENUMERATION;
    int nq = desc->ordinal == ZS_GROUP_COPY ? zs.cfg.ncopy : zs.cfg.ncompute;
    if ((int)desc->index >= nq) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    ze_command_list_handle_t l;
    ze_result_t r = list_new(c, d, desc->ordinal, true, &l);
    if (r != ZE_RESULT_SUCCESS) return r;
    l->in_order = (desc->flags & ZS_QUEUE_FLAG_IN_ORDER) != 0;
    list_offload(l, (desc->flags & ZS_QUEUE_FLAG_COPY_OFFLOAD) != 0);
    l->mode = desc->mode;
    pthread_mutex_lock(&zs.lock);
    l->stream = zs_stream_new_locked(d, (int)desc->ordinal, (int)desc->index, l, false);
    pthread_mutex_unlock(&zs.lock);
    if (!l->stream) {
        free(l);
        return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    }
    l->closed = true;
    *ph = l;
    return ZE_RESULT_SUCCESS;
}

static ze_result_t zs_zeCommandListDestroy(ze_command_list_handle_t l) {
    ZS_ENTER();
    ZS_CHECK(l, ZS_MAGIC_LIST);
    pthread_mutex_lock(&zs.lock);
    l->magic = ZS_MAGIC_DEAD;
    if (l->stream) {
        l->stream->dead = true;
        zs_stream_release_locked(l->stream);
    }
    pthread_mutex_unlock(&zs.lock);
    zs_body_unref(l->body);
    zs_listx_free(l);
    zs_defer_free(l);
    return ZE_RESULT_SUCCESS;
}

static ze_result_t zs_zeCommandListClose(ze_command_list_handle_t l) {
    ZS_ENTER();
    ZS_CHECK(l, ZS_MAGIC_LIST);
    l->closed = true;
    return ZE_RESULT_SUCCESS;
}

static ze_result_t zs_zeCommandListReset(ze_command_list_handle_t l) {
    ZS_ENTER();
    ZS_CHECK(l, ZS_MAGIC_LIST);
    if (l->immediate) return ZE_RESULT_SUCCESS;
    /* executions still in flight keep the old body alive through their references */
    struct zs_body *nb = zs_body_new();
    if (!nb) return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    zs_body_unref(l->body);
    l->body = nb;
    l->closed = false;
    zs_listx_reset(l);
    return ZE_RESULT_SUCCESS;
}

/* Takes ownership of everything *c points to, on success and on failure. */
static ze_result_t list_append(ze_command_list_handle_t l, struct zs_cmd *c) {
    /* a mutable list's command ids, an immediate list capturing into a graph (zs_graph.c) */
    ze_result_t xr = ZE_RESULT_SUCCESS;
    struct zs_body *target = !l->x ? (l->immediate ? NULL : l->body) : zs_listx_target(l, c, &xr);
    if (xr != ZE_RESULT_SUCCESS) {
        zs_cmd_free(c);
        return xr;
    }
    c->offload = l->offload && zs_cmd_offloaded(c);
    if (!target) {
        struct zs_inst *in = calloc(1, sizeof(*in));
        struct zs_batch *b = NULL;
        bool sync = l->mode == ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS;
        if (sync) b = calloc(1, sizeof(*b));
        if (!in || (sync && !b)) {
            free(in);
            free(b);
            zs_cmd_free(c);
            return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
        }
        pthread_mutex_lock(&zs.lock);
        ze_result_t r = zs_ring_wait_locked(l->stream);
        if (r != ZE_RESULT_SUCCESS) {
            pthread_mutex_unlock(&zs.lock);
            free(in);
            free(b);
            zs_cmd_free(c);
            return r;
        }
        /* the append counter: one per API call, also for a multi-indirect launch's kernels */
        c->index = (uint32_t)(c->same_append && l->appended ? l->appended - 1 : l->appended++);
        in->cmd = *c;
        in->in_order = l->in_order || l->copy_only;
        /* the kernels of one multiple-indirect Append were submitted together */
        in->submit_ns = c->same_append && l->last_submit_ns ? l->last_submit_ns : zs_now();
        l->last_submit_ns = in->submit_ns;
        in->device = l->device->id;
        in->ordinal = (int)l->ordinal;
        in->engine_index = l->stream->engine->index;
        in->list = l;
        in->context = l->context;
        in->immediate = true;
        in->tid = zs_gettid();
        if (b) {
            b->stream = l->stream;
            b->pending = 1;
            b->waited = true;
            in->batch = b;
            l->stream->submitted_batches++;
        }
        zs_enqueue_locked(l->stream, in);
        if (b) {
            r = zs_wait_locked(zs_batch_done, b, UINT64_MAX);
            free(b);
        }
        pthread_mutex_unlock(&zs.lock);
        return r;
    }
    if (target == l->body && l->closed) {
        zs_cmd_free(c);
        return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    }
    struct zs_body *b = target;
    if (b->ncmds == b->cap) {
        uint32_t ncap = b->cap ? 2 * b->cap : 16;
        struct zs_cmd *n = realloc(b->cmds, ncap * sizeof(*n));
        if (!n) {
            zs_cmd_free(c);
            return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
        }
        b->cmds = n;
        b->cap = ncap;
    }
    c->index = b->ncmds;
    b->cmds[b->ncmds++] = *c;
    return ZE_RESULT_SUCCESS;
}

/* Validates the list and the events and copies the wait list: the loader frees its temporary. */
static ze_result_t cmd_init(ze_command_list_handle_t l, struct zs_cmd *c, enum zs_kind kind, ze_event_handle_t signal,
                            uint32_t nw, ze_event_handle_t *waits) {
    memset(c, 0, sizeof(*c));
    ZS_CHECK(l, ZS_MAGIC_LIST);
    if (nw && !waits) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    if (signal && signal->magic != ZS_MAGIC_EVENT) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    if (signal) {
        ze_result_t cr = zs_cb_append_check(l, signal);
        if (cr != ZE_RESULT_SUCCESS) return cr;
    }
    for (uint32_t i = 0; i < nw; i++) {
        if (!waits[i]) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
        if (waits[i]->magic != ZS_MAGIC_EVENT) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    }
    c->kind = kind;
    c->signal = signal;
    c->nwaits = nw;
    if (nw) {
        c->waits = dup_mem(waits, nw * sizeof(*waits));
        if (!c->waits) return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    }
    return ZE_RESULT_SUCCESS;
}

#define CMD_INIT(l, c, kind, sig, nw, w)                                                           \
    do {                                                                                           \
        ze_result_t ci_r_ = cmd_init(l, c, kind, sig, nw, w);                                      \
        if (ci_r_ != ZE_RESULT_SUCCESS) {                                                          \
            zs_cmd_free(c);                                                                           \
            return ci_r_;                                                                          \
        }                                                                                          \
    } while (0)

static ze_result_t fail(struct zs_cmd *c, ze_result_t r) {
    zs_cmd_free(c);
    return r;
}

static ze_result_t zs_zeCommandListAppendBarrier(ze_command_list_handle_t l, ze_event_handle_t sig, uint32_t nw,
                                                 ze_event_handle_t *w) {
    ZS_ENTER_DEV();
    struct zs_cmd c;
    CMD_INIT(l, &c, ZS_K_BARRIER, sig, nw, w);
    return list_append(l, &c);
}

static ze_result_t zs_zeCommandListAppendMemoryRangesBarrier(ze_command_list_handle_t l, uint32_t nr, const size_t *sizes,
                                                             const void **ranges, ze_event_handle_t sig, uint32_t nw,
                                                             ze_event_handle_t *w) {
    ZS_ENTER_DEV();
    if (nr && (!sizes || !ranges)) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    struct zs_cmd c;
    CMD_INIT(l, &c, ZS_K_RANGES_BARRIER, sig, nw, w);
    return list_append(l, &c);
}

/* A plain copy (kind: ZS_K_COPY or ZS_K_COPY_FROM_CONTEXT), once the entry point checked its own arguments. */
static ze_result_t copy_cmd(ze_command_list_handle_t l, enum zs_kind kind, void *dst, const void *src, size_t size,
                            ze_event_handle_t sig, uint32_t nw, ze_event_handle_t *w) {
    if (!dst || !src) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    struct zs_cmd c;
    CMD_INIT(l, &c, kind, sig, nw, w);
    c.dst = dst;
    c.src = src;
    c.size = size;
    return list_append(l, &c);
}

static ze_result_t zs_zeCommandListAppendMemoryCopy(ze_command_list_handle_t l, void *dst, const void *src, size_t size,
                                                    ze_event_handle_t sig, uint32_t nw, ze_event_handle_t *w) {
    ZS_ENTER_DEV();
    return copy_cmd(l, ZS_K_COPY, dst, src, size, sig, nw, w);
}

static ze_result_t zs_zeCommandListAppendMemoryCopyFromContext(ze_command_list_handle_t l, void *dst, ze_context_handle_t sc,
                                                               const void *src, size_t size, ze_event_handle_t sig,
                                                               uint32_t nw, ze_event_handle_t *w) {
    ZS_ENTER_DEV();
    ZS_CHECK(sc, ZS_MAGIC_CONTEXT);
    return copy_cmd(l, ZS_K_COPY_FROM_CONTEXT, dst, src, size, sig, nw, w);
}

static ze_result_t zs_zeCommandListAppendMemoryCopyRegion(ze_command_list_handle_t l, void *dst, const ze_copy_region_t *dr,
                                                          uint32_t dpitch, uint32_t dslice, const void *src,
                                                          const ze_copy_region_t *sr, uint32_t spitch, uint32_t sslice,
                                                          ze_event_handle_t sig, uint32_t nw, ze_event_handle_t *w) {
    ZS_ENTER_DEV();
    if (!dst || !src || !dr || !sr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    if (dr->width != sr->width || dr->height != sr->height || dr->depth != sr->depth) return ZE_RESULT_ERROR_INVALID_SIZE;
    struct zs_cmd c;
    CMD_INIT(l, &c, ZS_K_COPY_REGION, sig, nw, w);
    c.region = calloc(1, sizeof(*c.region));
    if (!c.region) return fail(&c, ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY);
    *c.region = (struct zs_region){*dr, *sr, dpitch, dslice, spitch, sslice};
    c.dst = dst;
    c.src = src;
    return list_append(l, &c);
}

static ze_result_t zs_zeCommandListAppendMemoryFill(ze_command_list_handle_t l, void *ptr, const void *pattern,
                                                    size_t psize, size_t size, ze_event_handle_t sig, uint32_t nw,
                                                    ze_event_handle_t *w) {
    ZS_ENTER_DEV();
    if (!ptr || !pattern) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    ZS_CHECK(l, ZS_MAGIC_LIST);
    if (psize == 0 || psize > (l->copy_only ? 4u : 128u) || (psize & (psize - 1))) return ZE_RESULT_ERROR_INVALID_SIZE;
    struct zs_cmd c;
    CMD_INIT(l, &c, ZS_K_FILL, sig, nw, w);
    c.pattern = dup_mem(pattern, psize);
    if (!c.pattern) return fail(&c, ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY);
    c.pattern_size = psize;
    c.dst = ptr;
    c.size = size;
    return list_append(l, &c);
}

static ze_result_t image_cmd(ze_command_list_handle_t l, enum zs_kind kind, ze_image_handle_t dimg, ze_image_handle_t simg,
                             void *dst, const void *src, const ze_image_region_t *dr, const ze_image_region_t *sr,
                             ze_event_handle_t sig, uint32_t nw, ze_event_handle_t *w) {
    if (dimg && dimg->magic != ZS_MAGIC_IMAGE) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    if (simg && simg->magic != ZS_MAGIC_IMAGE) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    struct zs_cmd c;
    CMD_INIT(l, &c, kind, sig, nw, w);
    c.dst_img = dimg;
    c.src_img = simg;
    c.dst = dst;
    c.src = src;
    if (dr && !(c.img_dst_region = dup_mem(dr, sizeof(*dr)))) return fail(&c, ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY);
    if (sr && !(c.img_src_region = dup_mem(sr, sizeof(*sr)))) return fail(&c, ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY);
    return list_append(l, &c);
}

static ze_result_t zs_zeCommandListAppendImageCopy(ze_command_list_handle_t l, ze_image_handle_t d, ze_image_handle_t s,
                                                   ze_event_handle_t sig, uint32_t nw, ze_event_handle_t *w) {
    ZS_ENTER_DEV();
    if (!d || !s) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    return image_cmd(l, ZS_K_IMAGE_COPY, d, s, NULL, NULL, NULL, NULL, sig, nw, w);
}

static ze_result_t zs_zeCommandListAppendImageCopyRegion(ze_command_list_handle_t l, ze_image_handle_t d, ze_image_handle_t s,
                                                         const ze_image_region_t *dr, const ze_image_region_t *sr,
                                                         ze_event_handle_t sig, uint32_t nw, ze_event_handle_t *w) {
    ZS_ENTER_DEV();
    if (!d || !s) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    return image_cmd(l, ZS_K_IMAGE_COPY_REGION, d, s, NULL, NULL, dr, sr, sig, nw, w);
}

static ze_result_t zs_zeCommandListAppendImageCopyToMemory(ze_command_list_handle_t l, void *dst, ze_image_handle_t s,
                                                           const ze_image_region_t *sr, ze_event_handle_t sig,
                                                           uint32_t nw, ze_event_handle_t *w) {
    ZS_ENTER_DEV();
    if (!s) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    if (!dst) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    return image_cmd(l, ZS_K_IMAGE_TO_MEM, NULL, s, dst, NULL, NULL, sr, sig, nw, w);
}

static ze_result_t zs_zeCommandListAppendImageCopyFromMemory(ze_command_list_handle_t l, ze_image_handle_t d, const void *src,
                                                             const ze_image_region_t *dr, ze_event_handle_t sig,
                                                             uint32_t nw, ze_event_handle_t *w) {
    ZS_ENTER_DEV();
    if (!d) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    if (!src) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    return image_cmd(l, ZS_K_IMAGE_FROM_MEM, d, NULL, NULL, src, dr, NULL, sig, nw, w);
}

static ze_result_t zs_zeCommandListAppendMemoryPrefetch(ze_command_list_handle_t l, const void *ptr, size_t size) {
    ZS_ENTER_DEV();
    if (!ptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    struct zs_cmd c;
    CMD_INIT(l, &c, ZS_K_PREFETCH, NULL, 0, NULL);
    return list_append(l, &c);
}

static ze_result_t zs_zeCommandListAppendMemAdvise(ze_command_list_handle_t l, ze_device_handle_t d, const void *ptr,
                                                   size_t size, ze_memory_advice_t advice) {
    ZS_ENTER_DEV();
    ZS_CHECK(d, ZS_MAGIC_DEVICE);
    if (!ptr) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    struct zs_cmd c;
    CMD_INIT(l, &c, ZS_K_ADVISE, NULL, 0, NULL);
    return list_append(l, &c);
}

static ze_result_t zs_zeCommandListAppendSignalEvent(ze_command_list_handle_t l, ze_event_handle_t ev) {
    ZS_ENTER_DEV();
    if (!ev) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    struct zs_cmd c;
    CMD_INIT(l, &c, ZS_K_SIGNAL, ev, 0, NULL);
    return list_append(l, &c);
}

static ze_result_t zs_zeCommandListAppendWaitOnEvents(ze_command_list_handle_t l, uint32_t n, ze_event_handle_t *evs) {
    ZS_ENTER_DEV();
    if (!evs) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    struct zs_cmd c;
    CMD_INIT(l, &c, ZS_K_WAIT, NULL, n, evs);
    return list_append(l, &c);
}

static ze_result_t zs_zeCommandListAppendEventReset(ze_command_list_handle_t l, ze_event_handle_t ev) {
    ZS_ENTER_DEV();
    if (!ev) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;
    if (ev->magic != ZS_MAGIC_EVENT) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    ze_result_t cr = zs_cb_append_reset(ev);
    if (cr != ZE_RESULT_SUCCESS) return cr;
    struct zs_cmd c;
    CMD_INIT(l, &c, ZS_K_RESET, NULL, 0, NULL);
    c.target = ev;
    return list_append(l, &c);
}

static ze_result_t zs_zeCommandListAppendQueryKernelTimestamps(ze_command_list_handle_t l, uint32_t n, ze_event_handle_t *evs,
                                                               void *dst, const size_t *offsets, ze_event_handle_t sig,
                                                               uint32_t nw, ze_event_handle_t *w) {
    ZS_ENTER_DEV();
    ZS_CHECK(l, ZS_MAGIC_LIST);
    if (!evs || !dst) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    if (l->copy_only) {
        /* compute-runtime implements this with a compute kernel, which a copy engine cannot run */
        if (zs.cfg.copy_qkt_abort) {
            fprintf(stderr, "zesim: zeCommandListAppendQueryKernelTimestamps is not supported on a copy-only "
                            "command list (aborting like the hardware driver; ZESIM_COPY_QKT=error returns an error)\n");
            abort();
        }
        return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    }
    for (uint32_t i = 0; i < n; i++)
        if (!evs[i] || evs[i]->magic != ZS_MAGIC_EVENT) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    struct zs_cmd c;
    CMD_INIT(l, &c, ZS_K_QUERY_TS, sig, nw, w);
    c.nq = n;
    c.qevents = dup_mem(evs, n * sizeof(*evs));
    if (n && !c.qevents) return fail(&c, ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY);
    if (offsets) {
        c.qoffsets = dup_mem(offsets, n * sizeof(*offsets));
        if (n && !c.qoffsets) return fail(&c, ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY);
    }
    c.dst = dst;
    return list_append(l, &c);
}

static ze_result_t zs_zeCommandListAppendWriteGlobalTimestamp(ze_command_list_handle_t l, uint64_t *dst, ze_event_handle_t sig,
                                                              uint32_t nw, ze_event_handle_t *w) {
    ZS_ENTER_DEV();
    if (!dst) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    struct zs_cmd c;
    CMD_INIT(l, &c, ZS_K_WRITE_TS, sig, nw, w);
    c.dst = dst;
    return list_append(l, &c);
}

/* Arguments and group size are captured now: the app may change them before the list runs. */
static struct zs_kcapture *capture_kernel(ze_kernel_handle_t k) {
    struct zs_kcapture *kc = calloc(1, sizeof(*kc));
    if (!kc) return NULL;
    kc->name = k->name;
    kc->builtin = k->builtin;
    kc->ns = k->ns;
    kc->ns_per_item = k->ns_per_item;
    kc->gx = k->gx;
    kc->gy = k->gy;
    kc->gz = k->gz;
    kc->nargs = k->nargs;
    if (k->nargs) {
        kc->args = calloc(k->nargs, sizeof(*kc->args));
        if (!kc->args) {
            free(kc);
            return NULL;
        }
        for (uint32_t i = 0; i < k->nargs; i++) {
            kc->args[i] = k->args[i];
            kc->args[i].big = NULL;
            if (k->args[i].big) {
                kc->args[i].big = dup_mem(k->args[i].big, k->args[i].size);
                if (!kc->args[i].big) {
                    zs_kcapture_free(kc);
                    return NULL;
                }
            }
        }
    }
    return kc;
}

static ze_result_t launch(ze_command_list_handle_t l, ze_kernel_handle_t k, enum zs_launch how,
                          const ze_group_count_t *groups, const ze_group_count_t *indirect, ze_event_handle_t sig,
                          uint32_t nw, ze_event_handle_t *w, const struct zs_launch_with *with) {
    ZS_CHECK(l, ZS_MAGIC_LIST);
    ZS_CHECK(k, ZS_MAGIC_KERNEL);
    if (!groups && !indirect) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    if (l->copy_only) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    struct zs_cmd c;
    CMD_INIT(l, &c, ZS_K_KERNEL, sig, nw, w);
    c.launch = how;
    c.kc = capture_kernel(k);
    if (!c.kc) return fail(&c, ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY);
    if (groups) c.kc->groups = *groups;
    c.kc->indirect_groups = indirect;
    if (with) { /* its own group size and argument values (each with the size its last set gave) */
        c.kc->gx = with->gx, c.kc->gy = with->gy, c.kc->gz = with->gz;
        for (uint32_t i = 0; with->args && i < c.kc->nargs; i++) {
            struct zs_arg *a = &c.kc->args[i];
            if (with->args[i] && a->set) memcpy(a->big ? a->big : a->val, with->args[i], a->size);
        }
    }
    return list_append(l, &c);
}

static ze_result_t zs_zeCommandListAppendLaunchKernel(ze_command_list_handle_t l, ze_kernel_handle_t k,
                                                      const ze_group_count_t *g, ze_event_handle_t sig, uint32_t nw,
                                                      ze_event_handle_t *w) {
    ZS_ENTER_DEV();
    return launch(l, k, ZS_L_PLAIN, g, NULL, sig, nw, w, NULL);
}

static ze_result_t zs_zeCommandListAppendLaunchCooperativeKernel(ze_command_list_handle_t l, ze_kernel_handle_t k,
                                                                 const ze_group_count_t *g, ze_event_handle_t sig,
                                                                 uint32_t nw, ze_event_handle_t *w) {
    ZS_ENTER_DEV();
    return launch(l, k, ZS_L_COOPERATIVE, g, NULL, sig, nw, w, NULL);
}

static ze_result_t zs_zeCommandListAppendLaunchKernelIndirect(ze_command_list_handle_t l, ze_kernel_handle_t k,
                                                              const ze_group_count_t *g, ze_event_handle_t sig,
                                                              uint32_t nw, ze_event_handle_t *w) {
    ZS_ENTER_DEV();
    if (!g) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    return launch(l, k, ZS_L_INDIRECT, NULL, g, sig, nw, w, NULL);
}

/* Expands into one command per kernel, chained in order; the first waits, the last signals. */
static ze_result_t zs_zeCommandListAppendLaunchMultipleKernelsIndirect(ze_command_list_handle_t l, uint32_t n,
                                                                       ze_kernel_handle_t *ks, const uint32_t *count,
                                                                       const ze_group_count_t *args, ze_event_handle_t sig,
                                                                       uint32_t nw, ze_event_handle_t *w) {
    ZS_ENTER_DEV();
    ZS_CHECK(l, ZS_MAGIC_LIST);
    if (!ks || !count || !args) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    if (n == 0) return ZE_RESULT_ERROR_INVALID_SIZE;
    if (l->copy_only) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    for (uint32_t i = 0; i < n; i++) ZS_CHECK(ks[i], ZS_MAGIC_KERNEL);
    if (sig && sig->magic != ZS_MAGIC_EVENT) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    for (uint32_t i = 0; i < n; i++) {
        struct zs_cmd c;
        CMD_INIT(l, &c, ZS_K_KERNEL, i == n - 1 ? sig : NULL, i == 0 ? nw : 0, i == 0 ? w : NULL);
        c.launch = ZS_L_MULTI_INDIRECT;
        c.serial = i > 0;
        c.same_append = i > 0;
        c.kc = capture_kernel(ks[i]);
        if (!c.kc) return fail(&c, ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY);
        c.kc->indirect_groups = args;
        c.kc->indirect_count = count;
        c.kc->multi_index = i;
        ze_result_t r = list_append(l, &c);
        if (r != ZE_RESULT_SUCCESS) return r;
    }
    return ZE_RESULT_SUCCESS;
}

void zs_fill_list_table(ze_command_list_dditable_t *t, unsigned minor) {
    t->pfnCreate = zs_zeCommandListCreate;
    t->pfnCreateImmediate = zs_zeCommandListCreateImmediate;
    t->pfnDestroy = zs_zeCommandListDestroy;
    t->pfnClose = zs_zeCommandListClose;
    t->pfnReset = zs_zeCommandListReset;
    t->pfnAppendWriteGlobalTimestamp = zs_zeCommandListAppendWriteGlobalTimestamp;
    t->pfnAppendBarrier = zs_zeCommandListAppendBarrier;
    t->pfnAppendMemoryRangesBarrier = zs_zeCommandListAppendMemoryRangesBarrier;
    t->pfnAppendMemoryCopy = zs_zeCommandListAppendMemoryCopy;
    t->pfnAppendMemoryFill = zs_zeCommandListAppendMemoryFill;
    t->pfnAppendMemoryCopyRegion = zs_zeCommandListAppendMemoryCopyRegion;
    t->pfnAppendMemoryCopyFromContext = zs_zeCommandListAppendMemoryCopyFromContext;
    t->pfnAppendImageCopy = zs_zeCommandListAppendImageCopy;
    t->pfnAppendImageCopyRegion = zs_zeCommandListAppendImageCopyRegion;
    t->pfnAppendImageCopyToMemory = zs_zeCommandListAppendImageCopyToMemory;
    t->pfnAppendImageCopyFromMemory = zs_zeCommandListAppendImageCopyFromMemory;
    t->pfnAppendMemoryPrefetch = zs_zeCommandListAppendMemoryPrefetch;
    t->pfnAppendMemAdvise = zs_zeCommandListAppendMemAdvise;
    t->pfnAppendSignalEvent = zs_zeCommandListAppendSignalEvent;
    t->pfnAppendWaitOnEvents = zs_zeCommandListAppendWaitOnEvents;
    t->pfnAppendEventReset = zs_zeCommandListAppendEventReset;
    t->pfnAppendQueryKernelTimestamps = zs_zeCommandListAppendQueryKernelTimestamps;
    t->pfnAppendLaunchKernel = zs_zeCommandListAppendLaunchKernel;
    t->pfnAppendLaunchCooperativeKernel = zs_zeCommandListAppendLaunchCooperativeKernel;
    t->pfnAppendLaunchKernelIndirect = zs_zeCommandListAppendLaunchKernelIndirect;
    t->pfnAppendLaunchMultipleKernelsIndirect = zs_zeCommandListAppendLaunchMultipleKernelsIndirect;
    (void)minor; /* the ImageCopy*Ext entries (1.3) stay NULL: zesim does not implement them */
}

/* ---------------------------------------------------------------- for zs_later.c */
ze_result_t zs_list_launch(ze_command_list_handle_t l, ze_kernel_handle_t k, const ze_group_count_t *g,
                           const struct zs_launch_with *with, ze_event_handle_t sig, uint32_t nw,
                           ze_event_handle_t *w) {
    return launch(l, k, ZS_L_PLAIN, g, NULL, sig, nw, w, with);
}
struct zs_kcapture *zs_kernel_capture(ze_kernel_handle_t k) { return capture_kernel(k); }
ze_result_t zs_list_barrier(ze_command_list_handle_t l, ze_event_handle_t sig, uint32_t nw, ze_event_handle_t *w) {
    return zs_zeCommandListAppendBarrier(l, sig, nw, w);
}
