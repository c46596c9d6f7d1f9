/* SPDX-License-Identifier: MIT */
/* Hooks of object lifetimes: initialisation, contexts, command lists, kernels, images and USM
 * allocations (what the collector keeps about each, from creation to destruction). Queues are
 * zc_ze_exec.c's, application events zc_ze_events.c's. */
#include "zc_ze_inbox.h"
#include "zc_ze_objects.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void list_free_resources(struct zc_list *l, bool ctx_dying);

/* ---------------------------------------------------------------- init and contexts */
void zc_ze_post_zeInit(ze_init_params_t *p, ze_result_t r, struct zc_ze_call *c) {
    if (r != ZE_RESULT_SUCCESS) return;
    zc_ze_caps_announce(); /* every table has been fetched by now */
    zc_ze_devices_enumerate();
}

struct ctx_sweep {
    ze_context_handle_t ctx;
    struct zc_list **lists;
    size_t n, cap;
};

static void collect_lists(const void *key, void *val, void *arg) {
    struct ctx_sweep *s = arg;
    struct zc_list *l = val;
    if (!l->ctx || l->ctx->h != s->ctx) return;
    if (s->n == s->cap) {
        size_t ncap = s->cap ? 2 * s->cap : 16;
        struct zc_list **n = realloc(s->lists, ncap * sizeof(*n));
        if (!n) return;
        s->lists = n;
        s->cap = ncap;
    }
    s->lists[s->n++] = l;
}

/* Runtimes destroy contexts before the lists that hold our events (libomptarget does at exit):
 * free everything of ours in the context while it is still valid. */
void zc_ze_pre_zeContextDestroy(ze_context_destroy_params_t *p, struct zc_ze_call *c) {
    struct zc_ctx *x = zc_map_get(&zc_ze.ctxs, *p->phContext);
    if (!x) return;
    zc_ze_drain_all(true, 100000000u);
    zc_ze_drop_context(x);
    struct ctx_sweep s = {*p->phContext, NULL, 0, 0};
    zc_map_each(&zc_ze.lists, collect_lists, &s);
    for (size_t i = 0; i < s.n; i++) list_free_resources(s.lists[i], true);
    free(s.lists);
    pthread_mutex_lock(&x->lock);
    /* a driver without these frees them with the context */
    for (uint32_t i = 0; zc_ze_real.ze_event.pfnDestroy && i < x->nfree; i++)
        zc_ze_real.ze_event.pfnDestroy(x->free_events[i]);
    for (uint32_t i = 0; zc_ze_real.ze_event.pfnDestroy && i < x->nraw; i++)
        zc_ze_real.ze_event.pfnDestroy(x->raw_events[i]);
    for (uint32_t i = 0; zc_ze_real.ze_event.pfnDestroy && i < x->nused; i++)
        zc_ze_real.ze_event.pfnDestroy(x->used_events[i]);
    for (uint32_t i = 0; zc_ze_real.ze_event_pool.pfnDestroy && i < x->npools; i++)
        zc_ze_real.ze_event_pool.pfnDestroy(x->pools[i]);
    x->nfree = x->nraw = x->nused = x->npools = 0;
    x->broken = true; /* lists of this context that survive it go untimed */
    pthread_mutex_unlock(&x->lock);
    zc_map_del(&zc_ze.ctxs, *p->phContext);
    /* x itself stays allocated: records and lists may still point at it */
}

/* ---------------------------------------------------------------- lists */
static struct zc_stream *engine_stream(struct zc_ctx *x, struct zc_dev *d, uint32_t ordinal, uint32_t index) {
    struct key {
        struct zc_ctx *x;
        struct zc_dev *d;
        uint32_t o, i;
    };
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    static struct {
        struct key k;
        struct zc_stream *s;
    } *tab;
    static size_t n, cap;
    pthread_mutex_lock(&lock);
    struct zc_stream *s = NULL;
    for (size_t i = 0; i < n; i++)
        if (tab[i].k.x == x && tab[i].k.d == d && tab[i].k.o == ordinal && tab[i].k.i == index) s = tab[i].s;
    if (!s && (n < cap || (tab = realloc(tab, (cap = cap ? 2 * cap : 16) * sizeof(*tab))))) {
        s = zc_ze_stream_new(d, x, "engine");
        if (s) {
            tab[n].k = (struct key){x, d, ordinal, index};
            tab[n++].s = s;
        }
    }
    pthread_mutex_unlock(&lock);
    return s;
}

static struct zc_list *list_new(ze_command_list_handle_t h, ze_context_handle_t ctx, ze_device_handle_t dev, uint32_t ordinal) {
    /* aligned: what drainers write has cache lines of its own (struct zc_list) */
    struct zc_list *l = aligned_alloc(_Alignof(struct zc_list), sizeof(*l));
    if (!l) return NULL;
    memset(l, 0, sizeof(*l));
    l->h = h;
    l->ctx = zc_ze_ctx(ctx);
    l->dev = zc_ze_dev(dev);
    l->ordinal = ordinal;
    l->copy_only = l->dev && ordinal < l->dev->ngroups && l->dev->copy_only[ordinal];
    pthread_mutex_init(&l->lock, NULL);
    /* regular lists: the strongest way to time their executions that the driver supports */
    const struct zc_ze_caps *cp = &zc_ze_caps;
    if (!cp->timing || !l->dev || !l->ctx) l->mode = ZC_REG_NONE;
    else if (cp->harvest && !l->copy_only) l->mode = ZC_REG_DEVICE;
    /* copy engines: harvested by a list of ours on a compute engine of the device, if it has one */
    else if (cp->harvest && cp->copy_harvest && l->dev->harvest_ordinal >= 0) l->mode = ZC_REG_DEVICE;
    else if (cp->helpers && cp->host_read) l->mode = ZC_REG_HOST;
    else if (cp->host_read) l->mode = ZC_REG_SERIAL;
    else l->mode = ZC_REG_NONE;
    l->timed = l->mode != ZC_REG_NONE; /* immediate lists: set once they have a stream */
    l->fresh = true;
    return l;
}

/* Copy offload, as compute-runtime does it (CommandListCoreFamily::isCopyOffloadAllowed and its
 * callers): only on in-order lists of a compute engine, only where the device has a copy engine;
 * copies with a side that is never in local memory always; copies whose both sides may be
 * (device or shared USM, images) only on a device without local memory, or (26.18 and newer) up to
 * 8 KiB, never image copies; fills every one, or (26.09 and newer) up to 8 KiB. Shared USM is
 * local on a device with local memory: its GPU storage is allocated in the local pool. The
 * driver picks the copy engine; which one it is cannot be asked. */
static void list_offload(struct zc_list *l, bool hint) {
    l->offload = 0;
    if (!hint || !l->in_order || l->copy_only || !l->dev || l->dev->copy_ordinal < 0) return;
    uint8_t rules = __atomic_load_n(&l->dev->offload_rules, __ATOMIC_RELAXED);
    uint8_t on = (uint8_t)(1u << ZC_OFC_COPY | 1u << ZC_OFC_FILL_SMALL);
    if (!(rules & ZC_OFFLOAD_FILL_SMALL_ONLY)) on |= 1u << ZC_OFC_FILL_LARGE;
    if (l->dev->integrated) on |= 1u << ZC_OFC_LL_SMALL | 1u << ZC_OFC_LL_LARGE | 1u << ZC_OFC_LL_IMAGE;
    else if (rules & ZC_OFFLOAD_LL_SMALL) on |= 1u << ZC_OFC_LL_SMALL;
    l->offload = on;
}

/* The rules of a driver's release. compute-runtime's driverVersion is 0x01030000 plus its build
 * number (release 26.09.37435.x: 37435), which grows from release to release: fills up to 8 KiB
 * only from 26.09.37435 on (OverrideFillCopyOffloadThresholdKb's default), local-to-local copies
 * up to 8 KiB (BlitterConstants::maxD2DBcsCopySize) from 26.18.38308 on. Another numbering (not
 * compute-runtime, or a driver that does not say): the newest rules. ZECOLL_OFFLOAD_RULES forces
 * the rules of 2025 (neither) or 2026 (both). */
#define ZC_CR_VERSION_BASE 0x01030000u
#define ZC_CR_BUILD_FILL_SMALL 37435u
#define ZC_CR_BUILD_LL_SMALL 38308u
uint8_t zc_ze_offload_rules(ze_driver_handle_t drv) {
    const uint8_t newest = ZC_OFFLOAD_FILL_SMALL_ONLY | ZC_OFFLOAD_LL_SMALL;
    const char *k = zc_knobs.OFFLOAD_RULES ? zc_knobs.OFFLOAD_RULES : "";
    if (strcmp(k, "2025") == 0) return 0;
    if (strcmp(k, "2026") == 0) return newest;
    static atomic_int warned;
    if (*k && strcmp(k, "auto") != 0 && !atomic_exchange(&warned, 1))
        ZC_WARN("ignoring ZECOLL_OFFLOAD_RULES=\"%s\": expected auto, 2025 or 2026; using auto", k);
    ze_driver_properties_t p;
    memset(&p, 0, sizeof(p));
    p.stype = ZE_STRUCTURE_TYPE_DRIVER_PROPERTIES;
    if (!drv || !zc_ze_real.ze_driver.pfnGetProperties || zc_ze_real.ze_driver.pfnGetProperties(drv, &p) != ZE_RESULT_SUCCESS)
        return newest;
    if (p.driverVersion < ZC_CR_VERSION_BASE || p.driverVersion - ZC_CR_VERSION_BASE > 0xffffu) return newest;
    uint32_t build = p.driverVersion - ZC_CR_VERSION_BASE;
    uint8_t rules = (uint8_t)((build >= ZC_CR_BUILD_FILL_SMALL ? ZC_OFFLOAD_FILL_SMALL_ONLY : 0) |
                              (build >= ZC_CR_BUILD_LL_SMALL ? ZC_OFFLOAD_LL_SMALL : 0));
    ZC_DEBUG("driver version 0x%x (build %u): copy-offload rules 0x%x", (unsigned)p.driverVersion, (unsigned)build,
             (unsigned)rules);
    return rules;
}

static void list_register(struct zc_list *l) {
    l->resignal = zc_ze_caps.barrier || (zc_ze_caps.signal && (l->in_order || l->copy_only));
    int err;
    struct zc_list *old = zc_map_put(&zc_ze.lists, l->h, l, &err);
    if (err) {
        free(l);
        return;
    }
    /* a recycled handle whose destroy we did not see */
    if (old) free(old);
}

void zc_ze_post_zeCommandListCreate(ze_command_list_create_params_t *p, ze_result_t r, struct zc_ze_call *c) {
    if (r != ZE_RESULT_SUCCESS || !*p->pphCommandList || !*p->pdesc) return;
    struct zc_list *l = list_new(**p->pphCommandList, *p->phContext, *p->phDevice, (*p->pdesc)->commandQueueGroupOrdinal);
    if (!l) return;
    l->in_order = ((*p->pdesc)->flags & ZC_ZE_LIST_FLAG_IN_ORDER) != 0;
    l->raw_ok = true;
    list_offload(l, ((*p->pdesc)->flags & ZC_ZE_LIST_FLAG_COPY_OFFLOAD) != 0);
    list_register(l);
}

void zc_ze_post_zeCommandListCreateImmediate(ze_command_list_create_immediate_params_t *p, ze_result_t r,
                                             struct zc_ze_call *c) {
    if (r != ZE_RESULT_SUCCESS || !*p->pphCommandList || !*p->paltdesc) return;
    const ze_command_queue_desc_t *d = *p->paltdesc;
    struct zc_list *l = list_new(**p->pphCommandList, *p->phContext, *p->phDevice, d->ordinal);
    if (!l) return;
    /* a cache line of its own: every Append reads im->sync, and nothing else there changes
     * unless an app event is re-signalled */
    _Static_assert(sizeof(struct zc_imm) <= 64, "an immediate list's state fits its line");
    struct zc_imm *im = aligned_alloc(64, 64);
    if (im) memset(im, 0, sizeof(*im));
    if (!im) {
        free(l);
        return;
    }
    im->sync = d->mode == ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS;
    l->slots = (struct zc_slot *)(void *)im; /* immediate lists have no slots: reuse the pointer (zc_ze_imm) */
    l->immediate = true;
    l->index = d->index;
    l->in_order = (d->flags & ZC_ZE_QUEUE_FLAG_IN_ORDER) != 0;
    list_offload(l, (d->flags & ZC_ZE_QUEUE_FLAG_COPY_OFFLOAD) != 0);
    /* immediate lists are read from our events on the host */
    if (l->dev && zc_ze_caps.timing && zc_ze_caps.host_read) l->stream = engine_stream(l->ctx, l->dev, d->ordinal, d->index);
    if (l->stream && !(l->inbox = zc_ze_stream_inbox_open(l->stream, l))) l->stream = NULL; /* untimed */
    /* a synchronous append returns completed: its entry takes the slow path, which drains */
    if (l->inbox && im->sync) zc_ze_inbox_slow_only(l->inbox);
    l->timed = l->stream && l->ctx;
    list_register(l);
}

/* The list's content is gone (reset/destroy) or its context is dying: our events and helper
 * lists for it go back or away. The app guarantees the list is not executing. */
static void list_free_resources(struct zc_list *l, bool ctx_dying) {
    pthread_mutex_lock(&l->lock);
    if (l->immediate) {
        struct zc_imm *im = zc_ze_imm(l);
        for (uint32_t i = 0; im && i < im->n; i++) {
            zc_ze_uevent_forget_inj(im->v[i].user_event, im->v[i].inj);
            if (!ctx_dying) zc_ze_event_put(l->ctx, im->v[i].inj);
        }
        if (im) im->n = 0;
    } else {
        zc_ze_slots_destroy(l, ctx_dying);
        /* events another list's commands still signal (a clone, or the original of one) are
         * never handed out again: they stay with the context, unused */
        if (l->shared_inj)
            for (uint32_t i = 0; i < l->ntmpl; i++) {
                if (l->tmpl[i].user_event) zc_ze_uevent_forget_inj(l->tmpl[i].user_event, l->tmpl[i].inj);
                l->tmpl[i].inj = NULL;
                l->tmpl[i].user_event = NULL;
            }
        l->shared_inj = false;
        /* a regular list the app appends to keeps them, not reset (l->ret: taken once its pool
         * is empty, and then its next execution resets them, pool_used); another list's go back
         * to the context, reset */
        bool keep = l->raw_ok && !ctx_dying;
        if (keep && l->cap_ret - l->nret < l->ntmpl) {
            ze_event_handle_t *p = realloc(l->ret, (l->nret + l->ntmpl) * sizeof(*p));
            if (p) l->ret = p, l->cap_ret = l->nret + l->ntmpl;
            else keep = false; /* out of memory: reset and back to the context */
        }
        for (uint32_t i = 0; i < l->ntmpl; i++) {
            if (l->tmpl[i].user_event) zc_ze_uevent_forget_inj(l->tmpl[i].user_event, l->tmpl[i].inj);
            if (ctx_dying || !l->tmpl[i].inj) continue;
            if (keep) l->ret[l->nret++] = l->tmpl[i].inj;
            else zc_ze_event_put(l->ctx, l->tmpl[i].inj);
        }
        l->ntmpl = 0;
        l->nuntimed = 0;
        l->build++;
        l->fresh = !(l->pool_used && l->npool); /* its next Appends take unsignalled events */
    }
    pthread_mutex_unlock(&l->lock);
}

void zc_ze_pre_zeCommandListReset(ze_command_list_reset_params_t *p, struct zc_ze_call *c) {
    struct zc_list *l = zc_ze_list(*p->phCommandList);
    if (!l) return;
    zc_ze_slots_quiesce(l);
    zc_ze_drain_all(false, 0);
    list_free_resources(l, false);
}

void zc_ze_pre_zeCommandListDestroy(ze_command_list_destroy_params_t *p, struct zc_ze_call *c) {
    struct zc_list *l = zc_map_del(&zc_ze.lists, *p->phCommandList);
    if (!l) return;
    zc_ze_list_gone(); /* no cache hands out l from here on */
    zc_ze_list_release(l);
}

/* A list of ours for a handle the driver made from another list (a clone, a graph being
 * captured): src's context, device, engine and order; regular; not registered. */
struct zc_list *zc_ze_list_like(ze_command_list_handle_t h, const struct zc_list *src) {
    struct zc_list *l = list_new(h, src->ctx ? src->ctx->h : NULL, src->dev ? src->dev->h : NULL, src->ordinal);
    if (!l) return NULL;
    l->in_order = src->in_order;
    l->offload = src->offload; /* a clone's or a captured graph's copies run where src's did */
    l->resignal = zc_ze_caps.barrier || (zc_ze_caps.signal && (l->in_order || l->copy_only));
    return l;
}

void zc_ze_list_register(struct zc_list *l) { list_register(l); }

/* Everything of a list no longer in the lists map (no cache hands it out) goes. */
void zc_ze_list_release(struct zc_list *l) {
    zc_ze_slots_quiesce(l);
    zc_ze_drain_all(false, 0);
    if (l->inbox) zc_ze_stream_inbox_close(l->inbox); /* drains what is still in it */
    l->inbox = NULL;
    zc_ze_streams_forget_list(l);
    list_free_resources(l, false);
    if (l->immediate) {
        struct zc_imm *im = zc_ze_imm(l);
        if (im) free(im->v);
        free(im);
        l->slots = NULL;
    }
    /* events the list held go back to the context: a regular list's pool as they are
     * (unsignalled, maybe never reset by an Append), the others reset */
    pthread_mutex_lock(&l->lock);
    if (l->raw_ok) zc_ze_event_put_n(l->ctx, l->pool, l->npool, l->pool_used ? ZC_EV_USED : ZC_EV_RAW);
    if (l->raw_ok) zc_ze_event_put_n(l->ctx, l->ret, l->nret, ZC_EV_USED);
    for (uint32_t i = 0; !l->raw_ok && i < l->npool; i++) zc_ze_event_put(l->ctx, l->pool[i]);
    for (uint32_t i = 0; !l->raw_ok && i < l->nret; i++) zc_ze_event_put(l->ctx, l->ret[i]);
    l->npool = l->nret = 0;
    pthread_mutex_unlock(&l->lock);
    free(l->pool);
    free(l->ret);
    free(l->tmpl);
    /* executions of this list still pending keep pointers to it; the app must not destroy an
     * executing list, so by now there are none worth keeping the memory for */
    free(l);
}

/* ---------------------------------------------------------------- kernels, images, memory */
void zc_ze_post_zeKernelCreate(ze_kernel_create_params_t *p, ze_result_t r, struct zc_ze_call *c) {
    if (r != ZE_RESULT_SUCCESS || !*p->pphKernel) return;
    struct zc_kernel *k = calloc(1, sizeof(*k));
    if (!k) return;
    size_t sz = sizeof(k->name);
    if (zc_ze_real.ze_kernel.pfnGetName && zc_ze_real.ze_kernel.pfnGetName(**p->pphKernel, &sz, k->name) == ZE_RESULT_SUCCESS)
        k->name[sizeof(k->name) - 1] = 0;
    else if (*p->pdesc && (*p->pdesc)->pKernelName)
        snprintf(k->name, sizeof(k->name), "%s", (*p->pdesc)->pKernelName);
    else
        snprintf(k->name, sizeof(k->name), "unknown kernel");
    k->region = zc_def_region(k->name, ZC_ROLE_FUNCTION, ZC_PARADIGM_L0);
    zc_win_kernel_info(k->name, &k->sel);
    int err;
    free(zc_map_put(&zc_ze.kernels, **p->pphKernel, k, &err));
    if (err) free(k);
}

/* Drivers recycle kernel handles: forget the name before the handle can come back. */
void zc_ze_pre_zeKernelDestroy(ze_kernel_destroy_params_t *p, struct zc_ze_call *c) {
    struct zc_kernel *k = zc_map_del(&zc_ze.kernels, *p->phKernel);
    zc_ze_kernel_gone();
    free(k);
}

static size_t layout_bytes(ze_image_format_layout_t l) {
    switch (l) {
    case ZE_IMAGE_FORMAT_LAYOUT_8: return 1;
    case ZE_IMAGE_FORMAT_LAYOUT_16: case ZE_IMAGE_FORMAT_LAYOUT_8_8: case ZE_IMAGE_FORMAT_LAYOUT_5_6_5:
    case ZE_IMAGE_FORMAT_LAYOUT_5_5_5_1: case ZE_IMAGE_FORMAT_LAYOUT_4_4_4_4: return 2;
    case ZE_IMAGE_FORMAT_LAYOUT_16_16_16_16: case ZE_IMAGE_FORMAT_LAYOUT_32_32: return 8;
    case ZE_IMAGE_FORMAT_LAYOUT_32_32_32_32: return 16;
    default: return 4;
    }
}

void zc_ze_post_zeImageCreate(ze_image_create_params_t *p, ze_result_t r, struct zc_ze_call *c) {
    if (r != ZE_RESULT_SUCCESS || !*p->pphImage || !*p->pdesc) return;
    const ze_image_desc_t *d = *p->pdesc;
    struct zc_image *i = calloc(1, sizeof(*i));
    if (!i) return;
    i->bpp = layout_bytes(d->format.layout);
    i->w = d->width;
    i->h = d->type == ZE_IMAGE_TYPE_1D || d->type == ZE_IMAGE_TYPE_BUFFER ? 1 : (d->height ? d->height : 1);
    i->d = d->type == ZE_IMAGE_TYPE_3D ? (d->depth ? d->depth : 1) : 1;
    int err;
    free(zc_map_put(&zc_ze.images, **p->pphImage, i, &err));
    if (err) free(i);
}

void zc_ze_pre_zeImageDestroy(ze_image_destroy_params_t *p, struct zc_ze_call *c) { free(zc_map_del(&zc_ze.images, *p->phImage)); }

void zc_ze_post_zeMemAllocHost(ze_mem_alloc_host_params_t *p, ze_result_t r, struct zc_ze_call *c) {
    if (r == ZE_RESULT_SUCCESS && *p->ppptr && **p->ppptr) zc_ze_mem_add(**p->ppptr, *p->psize, 'H');
}
void zc_ze_post_zeMemAllocDevice(ze_mem_alloc_device_params_t *p, ze_result_t r, struct zc_ze_call *c) {
    if (r == ZE_RESULT_SUCCESS && *p->ppptr && **p->ppptr) zc_ze_mem_add(**p->ppptr, *p->psize, 'D');
}
void zc_ze_post_zeMemAllocShared(ze_mem_alloc_shared_params_t *p, ze_result_t r, struct zc_ze_call *c) {
    if (r == ZE_RESULT_SUCCESS && *p->ppptr && **p->ppptr) zc_ze_mem_add(**p->ppptr, *p->psize, 'S');
}
void zc_ze_pre_zeMemFree(ze_mem_free_params_t *p, struct zc_ze_call *c) {
    if (*p->pptr) zc_ze_mem_del(*p->pptr);
}
