/* SPDX-License-Identifier: MIT */
/* Hooks of the timed operations: kernel launches, copies, fills, image copies and barriers
 * appended to a command list (ze_hooks.spec). Each is one call of the inline prologue and
 * epilogue (zc_ze_append.h) with what the operation is: its kind, region, bytes and direction.
 * Also the Append path's slow paths. Rules every hook follows:
 * - the application's call is made exactly once, by the generated wrapper, with the
 *   application's arguments except the signal event of a timed Append, which is ours;
 * - when the app passed a signal event, the barrier that re-signals it is appended before any
 *   bookkeeping that could fail, so the app's waits never hang on us;
 * - collector failures turn device timing off (ZC_FAIL) and leave the app's behaviour alone;
 * - our own driver calls go to zc_ze_real, which no hook or layer sees. */
#include "zc_ze_append.h"

#include <stdio.h>
#include <string.h>

/* ---------------------------------------------------------------- slow paths of zc_ze_append.h */
void __attribute__((noinline)) zc_ze_untimed_op(struct zc_list *l) {
    if (l->immediate) atomic_fetch_add(&zc_ze.untimed, 1);
    else l->nuntimed++; /* the appending thread's (one at a time), read by Execute after Close */
}

void __attribute__((noinline)) zc_ze_untimed_signal(struct zc_list *l, ze_event_handle_t ev) {
    if (l) zc_ze_untimed_op(l);
    /* a query of ev must not be answered with an older operation's times of ours */
    if (atomic_load_explicit(&zc_ze_uevents_any, memory_order_relaxed)) zc_ze_uevent_clear(ev, false);
}

/* The re-signal barrier for the app's event, right after its operation (see the rules above). */
void __attribute__((noinline)) zc_ze_resignal(struct zc_ze_call *c, struct zc_list *l, ze_command_list_handle_t hl) {
    ze_result_t rb = ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
    if (zc_ze_real.ze_command_list.pfnAppendBarrier)
        rb = zc_ze_real.ze_command_list.pfnAppendBarrier(hl, c->user_event, 1, &c->inj);
    /* a signal after everything before it is later, never earlier: safe as a fallback */
    if (rb != ZE_RESULT_SUCCESS && zc_ze_real.ze_command_list.pfnAppendSignalEvent)
        rb = zc_ze_real.ze_command_list.pfnAppendSignalEvent(hl, c->user_event);
    if (rb != ZE_RESULT_SUCCESS) {
        ZC_FAIL(ZC_F_DEVICE_TIMING, "cannot re-signal the application's event after %s (0x%x)", zc_ze_api_names[c->api],
                (unsigned)rb);
        /* from the host, so the app's wait still completes; never a counter-based event: the
         * driver rejects it (zc_ze_timed_pre only moves those where a barrier can re-signal) */
        if (l->immediate && zc_ze_real.ze_event.pfnHostSignal && !zc_ze_cb_is(c->user_event)) {
            zc_ze_event_wait(c->inj, UINT64_MAX);
            zc_ze_real.ze_event.pfnHostSignal(c->user_event);
        }
    }
}

/* An immediate Append that re-signals an app event: its record exists at once, so the app's
 * zeEventQueryKernelTimestamp can find it (the rare path: allocates, locks). */
void __attribute__((noinline)) zc_ze_imm_post_uevent(struct zc_ze_call *c, struct zc_list *l,
                                                     const struct zc_opdesc *op, uint64_t seq) {
    struct zc_rec *rec = zc_ze_rec_new();
    if (!rec) {
        ZC_FAIL(ZC_F_DEVICE_TIMING, "out of memory for a device record");
        return;
    }
    rec->op = *op;
    rec->inj = c->inj;
    rec->own_inj = true;
    rec->ctx = l->ctx;
    rec->submit_ns = c->t0; /* ticks until the drainer converts it */
    rec->user_event = c->user_event;
    rec->list = l;
    rec->seq = seq;
    rec->stream = l->stream;
    zc_ze_uevent_set(c->user_event, rec);
    struct zc_inbox_entry e = {c->inj, c->t0, 0, rec, *op};
    bool queued = true;
    if (zc_ze_inbox_fast(l->inbox)) {
        *zc_ze_inbox_slot(l->inbox) = e;
        zc_ze_inbox_publish(l->inbox);
    } else {
        queued = zc_ze_imm_push_slow(l->inbox, &e);
    }
    if (!queued) ZC_FAIL(ZC_F_DEVICE_TIMING, "cannot queue a device record");
}

void __attribute__((noinline)) zc_ze_tmpl_grow_failed(void) {
    /* the event stays in the list (the op signals it); it is never reused */
    ZC_FAIL(ZC_F_DEVICE_TIMING, "out of memory recording a timed operation");
}

bool __attribute__((noinline)) zc_ze_tmpl_grow(struct zc_list *l) {
    /* the first template of a list comes here: from now on executions while recording is off
     * look for lists that carry our events (they keep their helper lists) */
    if (!atomic_load_explicit(&zc_ze_tmpl_lists, memory_order_relaxed)) atomic_store(&zc_ze_tmpl_lists, 1);
    uint32_t ncap = l->cap_tmpl ? 2 * l->cap_tmpl : 64;
    struct zc_tmpl *n = realloc(l->tmpl, ncap * sizeof(*n));
    if (!n) {
        zc_ze_tmpl_grow_failed();
        return false;
    }
    l->tmpl = n;
    l->cap_tmpl = ncap;
    return true;
}

void __attribute__((noinline)) zc_ze_imm_post_slow(struct zc_list *l, const struct zc_inbox_entry *e) {
    if (!zc_ze_imm_push_slow(l->inbox, e)) zc_ze_tmpl_grow_failed();
    if (zc_ze_imm(l)->sync) zc_ze_stream_drain(l->stream); /* a synchronous append returns completed */
}

/* The epilogue of zc_ze_timed_post for a failed call (our event back to the pool) and for an
 * operation whose app event is re-signalled after ours (the barrier first, see the rules above). */
void __attribute__((noinline)) zc_ze_timed_post_rare(struct zc_ze_call *c, ze_command_list_handle_t hl, ze_result_t r,
                                                     uint32_t kd, uint32_t region, uint64_t bytes) {
    struct zc_list *l = c->ptr;
    if (r != ZE_RESULT_SUCCESS) {
        zc_ze_event_unget(l, c->inj);
        return;
    }
    zc_ze_resignal(c, l, hl);
    struct zc_thread *t = c->t;
    uint64_t callsite = ++t->callsite;
    c->callsite = callsite;
    uint8_t kind = (uint8_t)kd, xf = (uint8_t)(kd >> 8);
    struct zc_opdesc op = {kind, ZC_XF_DIR(xf), zc_ze_op_engine(l, kind, ZC_XF_CLS(xf)), 0, region, t->comm_rank,
                           bytes, callsite};
    if (l->immediate) {
        /* only the thread using the list appends to it (spec): the next position is its */
        zc_ze_imm_post_uevent(c, l, &op, zc_ze_inbox_next_seq(l->inbox));
        if (zc_ze_imm(l)->sync) zc_ze_stream_drain(l->stream);
        return;
    }
    if (zc_ze_tmpl_add(l, &op, c->inj, c->user_event)) zc_ze_uevent_set_inj(c->user_event, c->inj);
}

/* nobody collects the list (zc_ze_inbox_backlog): stop at this many consecutive incomplete records */
#define ZC_PUSH_POLL_LIMIT_INBOX 16

bool __attribute__((noinline)) zc_ze_imm_push_slow(struct zc_inbox *ib, const struct zc_inbox_entry *e) {
    if (zc_ze_inbox_backlog(ib)) zc_ze_stream_drain_some(ib->stream, ZC_PUSH_POLL_LIMIT_INBOX);
    return zc_ze_inbox_push_slow(ib, e);
}

/* Kernel windows and filters (zc_win_kernels): counts this launch for the kernel windows its
 * kernel matches and says whether it is timed (kernels.include/exclude, decided once per kernel
 * at zeKernelCreate). The launch that opens a window is recorded; the one that ends it too: its
 * window closes here, while this call, begun inside the window, is recorded to its end like any
 * call in progress when recording stops (docs/archive.md A18). Closed calls come here only when
 * kernel windows apply (closed=launch). */
bool __attribute__((noinline)) zc_ze_launch_select(struct zc_ze_call *c, ze_kernel_handle_t k) {
    struct zc_kernel *kk = k ? zc_ze_kernel(k) : NULL;
    if (kk && kk->sel.nwin) {
        uint32_t close = zc_win_kernel_launch(&kk->sel);
        if (!c->t && zc_rec_open() && !zc_ze_call_reopen(c)) close = 0;
        if (close) zc_win_kernel_after(&kk->sel, close);
    }
    if (!c->t) return false;
    if (kk) return kk->sel.selected;
    static int unknown = -1; /* a kernel created before we saw it: by its placeholder name */
    if (unknown < 0) unknown = zc_kernel_selected(&zc_knobs, "unknown kernel");
    return unknown != 0;
}

/* ---------------------------------------------------------------- what an operation is */
/* A transfer's direction (host or device side, for the RMA records: shared USM counts as the
 * host's there) and its offload class (zc_offload_class: whether both sides may be the device's
 * local memory, which a driver with copy offload keeps on the compute engine above a size), as
 * ZC_XF. An image is device memory. Only copies come here: launches never pay for it. */
static bool local_capable(char t) { return t == 'D' || t == 'I' || t == 'S'; }
static uint8_t classify(char s, char d, uint64_t bytes, bool image) {
    bool sd = s == 'D' || s == 'I', dd = d == 'D' || d == 'I';
    uint8_t dir = sd && dd ? ZC_DIR_D2D : dd ? ZC_DIR_H2D : sd ? ZC_DIR_D2H : ZC_DIR_H2H;
    uint8_t cls = !(local_capable(s) && local_capable(d)) ? ZC_OFC_COPY
                  : image                                 ? ZC_OFC_LL_IMAGE
                  : bytes <= ZC_OFFLOAD_SMALL             ? ZC_OFC_LL_SMALL
                                                          : ZC_OFC_LL_LARGE;
    return ZC_XF(dir, cls);
}

static uint32_t kernel_region(ze_kernel_handle_t k) {
    struct zc_kernel *kk = zc_ze_kernel(k);
    if (kk) return kk->region;
    static uint32_t unknown = UINT32_MAX;
    if (unknown == UINT32_MAX) unknown = zc_def_region("unknown kernel", ZC_ROLE_FUNCTION, ZC_PARADIGM_L0);
    return unknown;
}

/* Region ids of transfers, cached per (API, source, destination): the definition lookup takes
 * a lock and scans, which the Append hot path must not pay each time. */
static const char memtypes[] = "HDSMI";
static uint32_t region_cache[ZC_ZE_API_COUNT][6][6];

static int memtype_index(char t) {
    const char *p = strchr(memtypes, t);
    return p && t ? (int)(p - memtypes) : 5;
}

static uint32_t transfer_region_slow(uint32_t api, const char *suffix, enum zc_region_role role) {
    char name[160];
    if (suffix) snprintf(name, sizeof(name), "%s(%s)", zc_ze_api_names[api], suffix);
    else snprintf(name, sizeof(name), "%s", zc_ze_api_names[api]);
    return zc_def_region(name, role, ZC_PARADIGM_L0);
}

/* s or d may be 0 (no such side): "API(d)", "API(s2d)" or plain "API" */
static uint32_t cached_region(uint32_t api, char s, char d, enum zc_region_role role) {
    uint32_t *slot = &region_cache[api][memtype_index(s)][memtype_index(d)];
    uint32_t r = __atomic_load_n(slot, __ATOMIC_RELAXED);
    if (r) return r - 1;
    char suf[4] = {s, '2', d, 0};
    if (!s && d) {
        suf[0] = d;
        suf[1] = 0;
    }
    r = transfer_region_slow(api, s || d ? suf : NULL, role);
    __atomic_store_n(slot, r + 1, __ATOMIC_RELAXED);
    return r;
}

static uint32_t copy_region(uint32_t api, char s, char d) { return cached_region(api, s, d, ZC_ROLE_DATA_TRANSFER); }

/* For the Append entries after spec 1.4 (zc_ze_submit.c): the same names as their older forms. */
uint32_t zc_ze_kernel_region(ze_kernel_handle_t k) { return kernel_region(k); }
uint32_t zc_ze_copy_region(uint32_t api, const void *src, const void *dst, uint64_t bytes, uint8_t *xf) {
    char s = zc_ze_memtype(src), d = zc_ze_memtype(dst);
    *xf = classify(s, d, bytes, false);
    return copy_region(api, s, d);
}
uint32_t zc_ze_fill_region(uint32_t api, const void *dst) {
    return cached_region(api, 0, zc_ze_memtype(dst), ZC_ROLE_DATA_TRANSFER);
}

/* The launches whose record is their one kernel, named after it: one pair of hooks each, the
 * same code (a macro, so each stays a direct, inlined path). */
#define ZC_ZE_KERNEL_HOOKS(NAME, PARAMS)                                                                         \
    void zc_ze_pre_##NAME(PARAMS *p, struct zc_ze_call *c) {                                                     \
        zc_ze_launch_pre(c, *p->phCommandList, p->phSignalEvent, *p->phKernel);                                  \
    }                                                                                                            \
    void zc_ze_post_##NAME(PARAMS *p, ze_result_t r, struct zc_ze_call *c) {                                     \
        zc_ze_timed_post(c, *p->phCommandList, p->phSignalEvent, r, ZC_OP_KERNEL, kernel_region(*p->phKernel), 0, \
                         ZC_DIR_NONE);                                                                           \
    }
ZC_ZE_KERNEL_HOOKS(zeCommandListAppendLaunchKernel, ze_command_list_append_launch_kernel_params_t)
ZC_ZE_KERNEL_HOOKS(zeCommandListAppendLaunchCooperativeKernel,
                   ze_command_list_append_launch_cooperative_kernel_params_t)
ZC_ZE_KERNEL_HOOKS(zeCommandListAppendLaunchKernelIndirect, ze_command_list_append_launch_kernel_indirect_params_t)

/* One signal event covers all kernels of the launch, so it is one record, named after them. */
/* For windows it counts as a launch of its first kernel; it is timed if any of its kernels is. */
void zc_ze_pre_zeCommandListAppendLaunchMultipleKernelsIndirect(
    ze_command_list_append_launch_multiple_kernels_indirect_params_t *p, struct zc_ze_call *c) {
    ze_kernel_handle_t *ks = *p->pphKernels;
    uint32_t nk = ks ? *p->pnumKernels : 0;
    if (__builtin_expect(zc_win_kernels, 0)) {
        bool timed = nk && zc_ze_launch_select(c, ks[0]);
        for (uint32_t i = 1; i < nk && !timed && c->t; i++) {
            struct zc_kernel *k = zc_map_get(&zc_ze.kernels, ks[i]);
            timed = k ? k->sel.selected : zc_kernel_selected(&zc_knobs, "unknown kernel");
        }
        if (!timed) return;
    }
    zc_ze_timed_pre(c, *p->phCommandList, p->phSignalEvent);
}
void zc_ze_post_zeCommandListAppendLaunchMultipleKernelsIndirect(
    ze_command_list_append_launch_multiple_kernels_indirect_params_t *p, ze_result_t r, struct zc_ze_call *c) {
    if (!c->inj) return;
    char name[512];
    size_t o = (size_t)snprintf(name, sizeof(name), "multiple indirect:");
    for (uint32_t i = 0; i < *p->pnumKernels && o < sizeof(name) - 2; i++) {
        struct zc_kernel *k = *p->pphKernels ? zc_map_get(&zc_ze.kernels, (*p->pphKernels)[i]) : NULL;
        o += (size_t)snprintf(name + o, sizeof(name) - o, "%s%s", i ? "," : " ", k ? k->name : "?");
    }
    zc_ze_timed_post(c, *p->phCommandList, p->phSignalEvent, r, ZC_OP_KERNEL,
                     zc_def_region(name, ZC_ROLE_FUNCTION, ZC_PARADIGM_L0), 0, ZC_DIR_NONE);
}

/* Copies between two pointers, by memory kind: the same pair of hooks for each form. */
#define ZC_ZE_COPY_HOOKS(NAME, PARAMS)                                                                           \
    void zc_ze_pre_##NAME(PARAMS *p, struct zc_ze_call *c) {                                                     \
        zc_ze_timed_pre(c, *p->phCommandList, p->phSignalEvent);                                                 \
    }                                                                                                            \
    void zc_ze_post_##NAME(PARAMS *p, ze_result_t r, struct zc_ze_call *c) {                                     \
        if (!c->inj) return;                                                                                     \
        char s = zc_ze_memtype(*p->psrcptr), d = zc_ze_memtype(*p->pdstptr);                                     \
        zc_ze_timed_post(c, *p->phCommandList, p->phSignalEvent, r, ZC_OP_COPY, copy_region(c->api, s, d),       \
                         *p->psize, classify(s, d, *p->psize, false));                                           \
    }
ZC_ZE_COPY_HOOKS(zeCommandListAppendMemoryCopy, ze_command_list_append_memory_copy_params_t)
ZC_ZE_COPY_HOOKS(zeCommandListAppendMemoryCopyFromContext, ze_command_list_append_memory_copy_from_context_params_t)

void zc_ze_pre_zeCommandListAppendMemoryCopyRegion(ze_command_list_append_memory_copy_region_params_t *p,
                                                   struct zc_ze_call *c) {
    zc_ze_timed_pre(c, *p->phCommandList, p->phSignalEvent);
}
void zc_ze_post_zeCommandListAppendMemoryCopyRegion(ze_command_list_append_memory_copy_region_params_t *p,
                                                    ze_result_t r, struct zc_ze_call *c) {
    if (!c->inj) return;
    const ze_copy_region_t *g = *p->pdstRegion;
    uint64_t bytes = g ? (uint64_t)g->width * (g->height ? g->height : 1) * (g->depth ? g->depth : 1) : 0;
    char s = zc_ze_memtype(*p->psrcptr), d = zc_ze_memtype(*p->pdstptr);
    zc_ze_timed_post(c, *p->phCommandList, p->phSignalEvent, r, ZC_OP_COPY, copy_region(c->api, s, d), bytes,
                     classify(s, d, bytes, false));
}

void zc_ze_pre_zeCommandListAppendMemoryFill(ze_command_list_append_memory_fill_params_t *p, struct zc_ze_call *c) {
    zc_ze_timed_pre(c, *p->phCommandList, p->phSignalEvent);
}
void zc_ze_post_zeCommandListAppendMemoryFill(ze_command_list_append_memory_fill_params_t *p, ze_result_t r,
                                              struct zc_ze_call *c) {
    if (!c->inj) return;
    zc_ze_timed_post(c, *p->phCommandList, p->phSignalEvent, r, ZC_OP_FILL,
                     cached_region(c->api, 0, zc_ze_memtype(*p->pptr), ZC_ROLE_DATA_TRANSFER), *p->psize,
                     zc_ze_fill_xf(*p->psize));
}

static uint64_t image_bytes(ze_image_handle_t img, const ze_image_region_t *reg) {
    struct zc_image *i = img ? zc_map_get(&zc_ze.images, img) : NULL;
    if (!i) return 0;
    if (!reg) return i->bpp * i->w * i->h * i->d;
    return i->bpp * reg->width * (reg->height ? reg->height : 1) * (reg->depth ? reg->depth : 1);
}

void zc_ze_pre_zeCommandListAppendImageCopy(ze_command_list_append_image_copy_params_t *p, struct zc_ze_call *c) {
    zc_ze_timed_pre(c, *p->phCommandList, p->phSignalEvent);
}
void zc_ze_post_zeCommandListAppendImageCopy(ze_command_list_append_image_copy_params_t *p, ze_result_t r,
                                             struct zc_ze_call *c) {
    if (!c->inj) return;
    zc_ze_timed_post(c, *p->phCommandList, p->phSignalEvent, r, ZC_OP_IMAGE, copy_region(c->api, 'I', 'I'),
               image_bytes(*p->phSrcImage, NULL), classify('I', 'I', 0, true));
}

void zc_ze_pre_zeCommandListAppendImageCopyRegion(ze_command_list_append_image_copy_region_params_t *p,
                                                  struct zc_ze_call *c) {
    zc_ze_timed_pre(c, *p->phCommandList, p->phSignalEvent);
}
void zc_ze_post_zeCommandListAppendImageCopyRegion(ze_command_list_append_image_copy_region_params_t *p, ze_result_t r,
                                                   struct zc_ze_call *c) {
    if (!c->inj) return;
    zc_ze_timed_post(c, *p->phCommandList, p->phSignalEvent, r, ZC_OP_IMAGE, copy_region(c->api, 'I', 'I'),
               image_bytes(*p->phSrcImage, *p->ppSrcRegion), classify('I', 'I', 0, true));
}

void zc_ze_pre_zeCommandListAppendImageCopyToMemory(ze_command_list_append_image_copy_to_memory_params_t *p,
                                                    struct zc_ze_call *c) {
    zc_ze_timed_pre(c, *p->phCommandList, p->phSignalEvent);
}
void zc_ze_post_zeCommandListAppendImageCopyToMemory(ze_command_list_append_image_copy_to_memory_params_t *p,
                                                     ze_result_t r, struct zc_ze_call *c) {
    if (!c->inj) return;
    char d = zc_ze_memtype(*p->pdstptr);
    zc_ze_timed_post(c, *p->phCommandList, p->phSignalEvent, r, ZC_OP_IMAGE, copy_region(c->api, 'I', d),
                     image_bytes(*p->phSrcImage, *p->ppSrcRegion), classify('I', d, 0, true));
}

void zc_ze_pre_zeCommandListAppendImageCopyFromMemory(ze_command_list_append_image_copy_from_memory_params_t *p,
                                                      struct zc_ze_call *c) {
    zc_ze_timed_pre(c, *p->phCommandList, p->phSignalEvent);
}
void zc_ze_post_zeCommandListAppendImageCopyFromMemory(ze_command_list_append_image_copy_from_memory_params_t *p,
                                                       ze_result_t r, struct zc_ze_call *c) {
    if (!c->inj) return;
    char s = zc_ze_memtype(*p->psrcptr);
    zc_ze_timed_post(c, *p->phCommandList, p->phSignalEvent, r, ZC_OP_IMAGE, copy_region(c->api, s, 'I'),
                     image_bytes(*p->phDstImage, *p->ppDstRegion), classify(s, 'I', 0, true));
}

void zc_ze_pre_zeCommandListAppendBarrier(ze_command_list_append_barrier_params_t *p, struct zc_ze_call *c) {
    zc_ze_timed_pre(c, *p->phCommandList, p->phSignalEvent);
}
void zc_ze_post_zeCommandListAppendBarrier(ze_command_list_append_barrier_params_t *p, ze_result_t r,
                                           struct zc_ze_call *c) {
    if (!c->inj) return;
    zc_ze_timed_post(c, *p->phCommandList, p->phSignalEvent, r, ZC_OP_BARRIER,
                     cached_region(c->api, 0, 0, ZC_ROLE_BARRIER), 0, ZC_DIR_NONE);
}

void zc_ze_pre_zeCommandListAppendMemoryRangesBarrier(ze_command_list_append_memory_ranges_barrier_params_t *p,
                                                      struct zc_ze_call *c) {
    zc_ze_timed_pre(c, *p->phCommandList, p->phSignalEvent);
}
void zc_ze_post_zeCommandListAppendMemoryRangesBarrier(ze_command_list_append_memory_ranges_barrier_params_t *p,
                                                       ze_result_t r, struct zc_ze_call *c) {
    if (!c->inj) return;
    zc_ze_timed_post(c, *p->phCommandList, p->phSignalEvent, r, ZC_OP_BARRIER,
                     cached_region(c->api, 0, 0, ZC_ROLE_BARRIER), 0, ZC_DIR_NONE);
}

