/* SPDX-License-Identifier: MIT */
/* zesim execution engine: queues (zs_queue.c) and immediate lists (zs_list.c) turn commands into
 * instances on a stream, and one worker thread per engine starts instances when their ordering
 * rules allow and completes them when real time passes their end.
 *
 * Timing is "ideal": an instance starts at the latest of submission + launch latency, its wait
 * events' signal times, and (when ordered) the end of what precedes it, even if the worker noticed
 * a little later. Completion (bytes moved, event signalled, truth line) happens once real time has
 * passed the end, so host synchronisation and races behave as on hardware. */
#include "zs_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>

/* ---------------------------------------------------------------- command memory */
void zs_kcapture_free(struct zs_kcapture *kc) {
    if (!kc) return;
    for (uint32_t i = 0; i < kc->nargs; i++) free(kc->args[i].big);
    free(kc->args);
    free(kc);
}

void zs_cmd_free(struct zs_cmd *c) {
    zs_kcapture_free(c->kc);
    free(c->region);
    free(c->pattern);
    free(c->img_dst_region);
    free(c->img_src_region);
    free(c->qevents);
    free(c->qoffsets);
    free(c->waits);
    memset(c, 0, sizeof(*c));
}

struct zs_body *zs_body_new(void) {
    struct zs_body *b = calloc(1, sizeof(*b));
    if (b) atomic_init(&b->refs, 1);
    return b;
}

void zs_body_unref(struct zs_body *b) {
    if (!b || atomic_fetch_sub(&b->refs, 1) != 1) return;
    for (uint32_t i = 0; i < b->ncmds; i++) zs_cmd_free(&b->cmds[i]);
    free(b->cmds);
    free(b);
}

/* ---------------------------------------------------------------- engines and streams */
static void *engine_main(void *arg);

static struct zs_engine *engine_get_locked(ze_device_handle_t dev, int ordinal, int index) {
    struct zs_engine *e = dev->engines[ordinal][index];
    if (e) return e;
    e = calloc(1, sizeof(*e));
    if (!e) return NULL;
    e->device = dev;
    e->ordinal = ordinal;
    e->index = index;
    e->copy_only = ordinal == ZS_GROUP_COPY;
    pthread_condattr_t a;
    pthread_condattr_init(&a);
    pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
    pthread_cond_init(&e->cv, &a);
    pthread_condattr_destroy(&a);
    pthread_attr_t ta;
    pthread_attr_init(&ta);
    pthread_attr_setdetachstate(&ta, PTHREAD_CREATE_DETACHED);
    /* Workers never exit: the process may end at any moment and they must not touch freed state. */
    if (pthread_create(&e->thread, &ta, engine_main, e) != 0) {
        pthread_attr_destroy(&ta);
        pthread_cond_destroy(&e->cv);
        free(e);
        return NULL;
    }
    pthread_attr_destroy(&ta);
    e->started = true;
    dev->engines[ordinal][index] = e;
    return e;
}

/* A command streamer polls its ring: submitting work is a memory write and a doorbell, not a
 * system call. With ZESIM_POLL_US an idle worker polls `gen` that long before it sleeps, and a
 * kick signals the condition variable only when the worker sleeps; without it (the default, kind
 * to a loaded 2-core CI machine) every kick of an idle engine wakes a sleeping thread. */
void zs_engine_kick_locked(struct zs_engine *e) {
    e->kick = true;
    atomic_fetch_add_explicit(&e->gen, 1, memory_order_release);
    if (!e->polling) pthread_cond_signal(&e->cv);
}

void zs_kick_all_locked(void) {
    for (int d = 0; d < zs.cfg.ndev; d++)
        for (int g = 0; g < ZS_NGROUPS; g++)
            for (int i = 0; i < ZS_MAX_ENGINES; i++) {
                struct zs_engine *e = zs.devices[d].engines[g][i];
                if (e && (e->streams || e->running)) zs_engine_kick_locked(e);
            }
}

/* The engines whose commands wait on ev (a signal, or its destruction, may let them start). */
void zs_kick_waiters_locked(ze_event_handle_t ev) {
    if (!ev->nwaiters) return;
    if (ev->waiters_many) zs_kick_all_locked();
    else zs_engine_kick_locked(ev->waiter);
}

/* A command waits on its events from its enqueue until it starts (start_locked). */
static void waits_add_locked(struct zs_inst *in, struct zs_engine *e) {
    for (uint32_t i = 0; i < in->cmd.nwaits; i++) {
        ze_event_handle_t ev = in->cmd.waits[i];
        if (!ev || ev->magic != ZS_MAGIC_EVENT) continue;
        if (ev->nwaiters++ == 0) {
            ev->waiter = e;
            ev->waiters_many = false;
        } else if (ev->waiter != e) {
            ev->waiters_many = true;
        }
    }
}

static void waits_drop_locked(struct zs_inst *in) {
    for (uint32_t i = 0; i < in->cmd.nwaits; i++) {
        ze_event_handle_t ev = in->cmd.waits[i];
        /* a destroyed event forgot its waiters (zeEventDestroy) */
        if (ev && ev->magic == ZS_MAGIC_EVENT && ev->nwaiters) ev->nwaiters--;
    }
}

struct zs_stream *zs_stream_new_locked(ze_device_handle_t dev, int ordinal, int index, void *owner, bool serial) {
    struct zs_engine *e = engine_get_locked(dev, ordinal, index);
    if (!e) return NULL;
    struct zs_stream *s = calloc(1, sizeof(*s));
    if (!s) return NULL;
    s->engine = e;
    s->owner = owner;
    s->batch_serial = serial;
    s->refs = 1;
    s->next_in_engine = e->streams;
    e->streams = s;
    return s;
}

void zs_stream_release_locked(struct zs_stream *s) {
    if (--s->refs > 0) return;
    struct zs_stream **pp = &s->engine->streams;
    while (*pp && *pp != s) pp = &(*pp)->next_in_engine;
    if (*pp) *pp = s->next_in_engine;
    free(s);
}

/* Copy offload: a copy or fill appended to an in-order compute list created with the hint runs on
 * a copy engine (zesim: the device's copy engine 0; a real driver picks one), still in its list's
 * order (it stays on the list's stream: it starts after the list's previous command and the next
 * one after it), and after whatever that copy engine ran before (its free_ns). Which ones, by the
 * driver's generation (ZESIM_DRIVER_GEN), as compute-runtime decides:
 * - a copy with a side outside the device's local memory: always;
 * - a copy whose both sides are in local memory (device USM, shared USM, whose GPU pages live
 *   there, images; nothing on an integrated device, ZESIM_INTEGRATED=1): 2025 never, 2026 up to
 *   8 KiB; never an image copy;
 * - a fill: 2025 every one, 2026 up to 8 KiB. */
struct zs_engine *zs_offload_engine_locked(ze_device_handle_t dev) {
    return zs.cfg.ncopy > 0 ? engine_get_locked(dev, ZS_GROUP_COPY, 0) : NULL;
}

#define ZS_OFFLOAD_SMALL 8192u
static size_t cmd_bytes(const struct zs_cmd *c);

static bool local_mem(const void *p) {
    ze_memory_type_t t = zs_alloc_type(p, NULL);
    return !zs.cfg.integrated && (t == ZE_MEMORY_TYPE_DEVICE || t == ZE_MEMORY_TYPE_SHARED);
}

bool zs_cmd_offloaded(const struct zs_cmd *c) {
    bool gen26 = zs.cfg.driver_gen >= 2026, image_local = !zs.cfg.integrated;
    switch (c->kind) {
    case ZS_K_COPY:
    case ZS_K_COPY_REGION:
    case ZS_K_COPY_FROM_CONTEXT:
        if (!local_mem(c->src) || !local_mem(c->dst)) return true;
        return gen26 && cmd_bytes(c) <= ZS_OFFLOAD_SMALL;
    case ZS_K_IMAGE_TO_MEM: return !(image_local && local_mem(c->dst));
    case ZS_K_IMAGE_FROM_MEM: return !(image_local && local_mem(c->src));
    case ZS_K_IMAGE_COPY:
    case ZS_K_IMAGE_COPY_REGION: return !image_local;
    case ZS_K_FILL: return !gen26 || cmd_bytes(c) <= ZS_OFFLOAD_SMALL;
    default: return false; /* kernels, barriers */
    }
}

/* ---------------------------------------------------------------- scheduling */
/* Barriers and waits hold back what follows until they complete. So does an event reset: on
 * hardware it sits in the command stream, so `Reset(E); Kernel(signal=E)` can never lose the
 * kernel's signal to a late reset. */
static bool kind_blocks_following(const struct zs_inst *in) {
    enum zs_kind k = in->cmd.kind;
    return k == ZS_K_BARRIER || k == ZS_K_RANGES_BARRIER || k == ZS_K_WAIT || k == ZS_K_RESET;
}

/* Commands that run only after everything before them in the stream completed. A barrier with
 * wait events waits for those events only, as the spec says; without, for all prior commands. */
static bool needs_all_prior(const struct zs_inst *in) {
    enum zs_kind k = in->cmd.kind;
    if (in->in_order || in->cmd.serial) return true;
    if ((k == ZS_K_BARRIER || k == ZS_K_RANGES_BARRIER) && in->cmd.nwaits == 0) return true;
    return k == ZS_K_SIGNAL || k == ZS_K_RESET || k == ZS_K_QUERY_TS || k == ZS_K_WRITE_TS;
}

static uint64_t cmd_items(const struct zs_kcapture *kc, const ze_group_count_t *g) {
    return (uint64_t)g->groupCountX * g->groupCountY * g->groupCountZ * kc->gx * kc->gy * kc->gz;
}

static size_t cmd_bytes(const struct zs_cmd *c) {
    switch (c->kind) {
    case ZS_K_COPY: case ZS_K_COPY_FROM_CONTEXT: case ZS_K_FILL:
        return c->size;
    case ZS_K_COPY_REGION:
        return (size_t)c->region->dst.width * c->region->dst.height * (c->region->dst.depth ? c->region->dst.depth : 1);
    case ZS_K_IMAGE_COPY:
        return zs_image_size(c->src_img);
    case ZS_K_IMAGE_COPY_REGION: case ZS_K_IMAGE_TO_MEM: {
        const ze_image_region_t *r = c->img_src_region;
        ze_image_handle_t img = c->src_img;
        if (!r) return zs_image_size(img);
        return img->bpp * r->width * (r->height ? r->height : 1) * (r->depth ? r->depth : 1);
    }
    case ZS_K_IMAGE_FROM_MEM: {
        const ze_image_region_t *r = c->img_dst_region;
        ze_image_handle_t img = c->dst_img;
        if (!r) return zs_image_size(img);
        return img->bpp * r->width * (r->height ? r->height : 1) * (r->depth ? r->depth : 1);
    }
    default:
        return 0;
    }
}

static uint64_t inst_duration(struct zs_inst *in, bool *skip) {
    struct zs_cmd *c = &in->cmd;
    *skip = false;
    if (c->kind == ZS_K_KERNEL) {
        struct zs_kcapture *kc = c->kc;
        /* indirect launches read their arguments from memory when they execute */
        if (kc->indirect_count && kc->multi_index >= *kc->indirect_count) {
            *skip = true;
            return 0;
        }
        if (kc->indirect_groups) kc->groups = kc->indirect_groups[kc->multi_index];
        double d = zs_kernel_duration(kc, cmd_items(kc, &kc->groups));
        return d > 0 ? (uint64_t)llround(d) : 0;
    }
    size_t bytes = cmd_bytes(c);
    if (bytes || c->kind == ZS_K_COPY || c->kind == ZS_K_FILL || c->kind == ZS_K_COPY_REGION ||
        c->kind == ZS_K_COPY_FROM_CONTEXT || (c->kind >= ZS_K_IMAGE_COPY && c->kind <= ZS_K_IMAGE_FROM_MEM))
        return (uint64_t)llround(zs.cfg.copy_latency_ns + (double)bytes / zs.cfg.copy_bytes_per_ns);
    return zs.cfg.sync_op_ns;
}

/* Decides whether `in` may start and when; see the file comment for the timing rule. */
static bool inst_ready(struct zs_inst *in, bool blocked, uint64_t *when) {
    struct zs_stream *s = in->stream;
    struct zs_engine *e = s->engine;
    if (blocked) return false;
    if (s->batch_serial && in->batch != s->head->batch) return false;
    uint64_t t = in->submit_ns + zs.cfg.launch_latency_ns;
    if (needs_all_prior(in)) {
        if (in != s->head) return false;
        t = zs_max64(t, s->max_end_done);
    }
    if (s->batch_serial) t = zs_max64(t, s->max_end_done);
    t = zs_max64(t, s->block_end);
    for (uint32_t i = 0; i < in->cmd.nwaits; i++) {
        ze_event_handle_t ev = in->cmd.waits[i];
        if (!ev || ev->magic != ZS_MAGIC_EVENT) continue; /* destroyed: nothing will ever signal it */
        struct zs_event_state st;
        zs_event_read(ev, &st);
        if (!st.signaled) return false;
        t = zs_max64(t, st.signal_ns);
    }
    if (e->copy_only) {
        if (e->nrunning) return false;
        t = zs_max64(t, e->free_ns);
    }
    if (in->cmd.offload) {
        struct zs_engine *ce = zs.devices[in->device].engines[ZS_GROUP_COPY][0];
        if (ce) t = zs_max64(t, ce->free_ns);
    }
    *when = t;
    return true;
}

static void start_locked(struct zs_inst *in, uint64_t t) {
    struct zs_engine *e = in->stream->engine;
    if (in->cmd.nwaits) waits_drop_locked(in);
    bool skip;
    uint64_t dur = inst_duration(in, &skip);
    in->start_ns = t;
    in->end_ns = t + dur;
    in->state = ZS_RUNNING;
    if (in->cmd.kind == ZS_K_KERNEL && in->cmd.launch == ZS_L_MULTI_INDIRECT && in->cmd.kc->multi_index == 0)
        in->stream->multi_start = t; /* the launch's kernels run one after the other */
    if (skip) in->cmd.kind = ZS_K_COUNT; /* multi-indirect slot beyond the count: no work, no truth */
    in->run_next = e->running;
    e->running = in;
    e->nrunning++;
    if (e->copy_only) e->free_ns = in->end_ns;
    struct zs_engine *ce = in->cmd.offload ? zs.devices[in->device].engines[ZS_GROUP_COPY][0] : NULL;
    if (ce) ce->free_ns = zs_max64(ce->free_ns, in->end_ns);
}

static void schedule_locked(struct zs_engine *e) {
    for (struct zs_stream *s = e->streams; s; s = s->next_in_engine) {
        bool blocked = false;
        for (struct zs_inst *in = s->head; in; in = in->next) {
            if (s->batch_serial && in->batch != s->head->batch) break;
            if (in->state == ZS_PENDING) {
                uint64_t t;
                if (inst_ready(in, blocked, &t)) start_locked(in, t);
                /* nothing after an in-order command that cannot start yet can start either */
                else if (in->in_order) break;
            }
            /* a barrier or wait holds back everything after it until it completes */
            if (kind_blocks_following(in)) blocked = true;
            if (blocked) break;
        }
    }
}

/* ---------------------------------------------------------------- effects */
static void copy_box(unsigned char *dst, size_t dpitch, size_t dslice, const unsigned char *src, size_t spitch,
                     size_t sslice, size_t row_bytes, size_t rows, size_t slices) {
    for (size_t z = 0; z < slices; z++)
        for (size_t y = 0; y < rows; y++) memmove(dst + z * dslice + y * dpitch, src + z * sslice + y * spitch, row_bytes);
}

static void image_box(ze_image_handle_t img, const ze_image_region_t *r, size_t *off, size_t *row, size_t *rows,
                      size_t *slices) {
    size_t ox = r ? r->originX : 0, oy = r ? r->originY : 0, oz = r ? r->originZ : 0;
    size_t w = r ? r->width : img->width, h = r ? (r->height ? r->height : 1) : img->height;
    size_t d = r ? (r->depth ? r->depth : 1) : img->depth;
    *off = ((oz * img->height + oy) * img->width + ox) * img->bpp;
    *row = w * img->bpp;
    *rows = h;
    *slices = d;
}

static void run_effect(struct zs_inst *in) {
    struct zs_cmd *c = &in->cmd;
    switch (c->kind) {
    case ZS_K_KERNEL:
        zs_kernel_run_builtin(c->kc, cmd_items(c->kc, &c->kc->groups));
        break;
    case ZS_K_COPY:
    case ZS_K_COPY_FROM_CONTEXT:
        memmove(c->dst, c->src, c->size);
        break;
    case ZS_K_COPY_REGION: {
        const struct zs_region *r = c->region;
        size_t dz = r->dst.depth ? r->dst.depth : 1;
        copy_box((unsigned char *)c->dst + r->dst.originZ * (size_t)r->dst_slice_pitch + r->dst.originY * (size_t)r->dst_pitch + r->dst.originX,
                 r->dst_pitch, r->dst_slice_pitch,
                 (const unsigned char *)c->src + r->src.originZ * (size_t)r->src_slice_pitch + r->src.originY * (size_t)r->src_pitch + r->src.originX,
                 r->src_pitch, r->src_slice_pitch, r->dst.width, r->dst.height, dz);
        break;
    }
    case ZS_K_FILL:
        for (size_t o = 0; o < c->size; o += c->pattern_size) {
            size_t n = c->size - o < c->pattern_size ? c->size - o : c->pattern_size;
            memcpy((unsigned char *)c->dst + o, c->pattern, n);
        }
        break;
    case ZS_K_IMAGE_COPY:
        memcpy(c->dst_img->data, c->src_img->data,
               zs_image_size(c->dst_img) < zs_image_size(c->src_img) ? zs_image_size(c->dst_img) : zs_image_size(c->src_img));
        break;
    case ZS_K_IMAGE_COPY_REGION: {
        size_t so, sr, srows, ss, doff, dr, drows, ds;
        image_box(c->src_img, c->img_src_region, &so, &sr, &srows, &ss);
        image_box(c->dst_img, c->img_dst_region, &doff, &dr, &drows, &ds);
        copy_box(c->dst_img->data + doff, c->dst_img->width * c->dst_img->bpp,
                 c->dst_img->width * c->dst_img->height * c->dst_img->bpp, c->src_img->data + so,
                 c->src_img->width * c->src_img->bpp, c->src_img->width * c->src_img->height * c->src_img->bpp,
                 sr < dr ? sr : dr, srows < drows ? srows : drows, ss < ds ? ss : ds);
        break;
    }
    case ZS_K_IMAGE_TO_MEM: {
        size_t so, row, rows, slices;
        image_box(c->src_img, c->img_src_region, &so, &row, &rows, &slices);
        copy_box(c->dst, row, row * rows, c->src_img->data + so, c->src_img->width * c->src_img->bpp,
                 c->src_img->width * c->src_img->height * c->src_img->bpp, row, rows, slices);
        break;
    }
    case ZS_K_IMAGE_FROM_MEM: {
        size_t doff, row, rows, slices;
        image_box(c->dst_img, c->img_dst_region, &doff, &row, &rows, &slices);
        copy_box(c->dst_img->data + doff, c->dst_img->width * c->dst_img->bpp,
                 c->dst_img->width * c->dst_img->height * c->dst_img->bpp, c->src, row, row * rows, row, rows, slices);
        break;
    }
    case ZS_K_WRITE_TS: {
        uint64_t v = zs_mask(zs_ticks_full(&zs.devices[in->device], in->start_ns), zs.cfg.ts_bits);
        memcpy(c->dst, &v, sizeof(v));
        break;
    }
    default:
        break;
    }
}

static const char *kind_name(enum zs_kind k) {
    static const char *const names[ZS_K_COUNT] = {
        "kernel", "copy", "copy_region", "copy_from_context", "fill", "image_copy", "image_copy_region",
        "image_copy_to_memory", "image_copy_from_memory", "barrier", "ranges_barrier", "signal", "wait",
        "reset", "query_ts", "write_ts", "prefetch", "mem_advise"};
    return k < ZS_K_COUNT ? names[k] : "none";
}

static const char *memtype_name(const void *p) {
    switch (zs_alloc_type(p, NULL)) {
    case ZE_MEMORY_TYPE_HOST: return "host";
    case ZE_MEMORY_TYPE_DEVICE: return "device";
    case ZE_MEMORY_TYPE_SHARED: return "shared";
    default: return "unknown";
    }
}

static size_t format_truth(char *line, size_t cap, uint64_t seq, void *arg) {
    struct zs_inst *in = arg;
    const struct zs_cmd *c = &in->cmd;
    ze_device_handle_t dev = &zs.devices[in->device];
    size_t n = 0;
#define OUT(...) do { int w_ = snprintf(line + n, cap - n, __VA_ARGS__); if (w_ > 0) n = n + (size_t)w_ < cap ? n + (size_t)w_ : cap - 1; } while (0)
    OUT("{\"seq\":%" PRIu64 ",\"kind\":\"%s\"", seq, kind_name(c->kind));
    if (c->kind == ZS_K_KERNEL) {
        static const char *const launches[] = {"plain", "cooperative", "indirect", "multi_indirect"};
        OUT(",\"launch\":\"%s\",\"name\":\"%s\"", launches[c->launch], c->kc->name);
    } else {
        OUT(",\"name\":null");
    }
    OUT(",\"device\":%d,\"ordinal\":%d,\"index\":%d,\"context\":\"%p\",\"queue\":\"%p\",\"list\":\"%p\",\"immediate\":%s",
        in->device, in->ordinal, in->engine_index, in->context, in->stream->owner, in->list, in->immediate ? "true" : "false");
    OUT(",\"exec\":%" PRIu64 ",\"cmd\":%u", in->exec, c->index);
    OUT(",\"ts_start\":%" PRIu64 ",\"ts_end\":%" PRIu64,
        zs_mask(zs_ticks_full(dev, in->start_ns), zs.cfg.kts_bits), zs_mask(zs_ticks_full(dev, in->end_ns), zs.cfg.kts_bits));
    OUT(",\"host_start\":%" PRIu64 ",\"host_end\":%" PRIu64 ",\"bytes\":%zu", in->start_ns, in->end_ns, cmd_bytes(c));
    if (c->kind == ZS_K_COPY || c->kind == ZS_K_COPY_REGION || c->kind == ZS_K_COPY_FROM_CONTEXT)
        OUT(",\"src\":\"%s\",\"dst\":\"%s\"", memtype_name(c->src), memtype_name(c->dst));
    else if (c->kind == ZS_K_FILL)
        OUT(",\"src\":null,\"dst\":\"%s\"", memtype_name(c->dst));
    else if (c->kind == ZS_K_IMAGE_COPY || c->kind == ZS_K_IMAGE_COPY_REGION)
        OUT(",\"src\":\"image\",\"dst\":\"image\"");
    else if (c->kind == ZS_K_IMAGE_TO_MEM)
        OUT(",\"src\":\"image\",\"dst\":\"%s\"", memtype_name(c->dst));
    else if (c->kind == ZS_K_IMAGE_FROM_MEM)
        OUT(",\"src\":\"%s\",\"dst\":\"image\"", memtype_name(c->src));
    if (c->kind == ZS_K_KERNEL) {
        const struct zs_kcapture *kc = c->kc;
        OUT(",\"groups\":[%u,%u,%u],\"group_size\":[%u,%u,%u]", kc->groups.groupCountX, kc->groups.groupCountY,
            kc->groups.groupCountZ, kc->gx, kc->gy, kc->gz);
    }
    /* which engine ran it, where that is not its list's (an offloaded copy): ordinal, index */
    if (c->offload) OUT(",\"offload\":[%d,0]", ZS_GROUP_COPY);
    if (c->signal) OUT(",\"signal\":\"%p\"", (void *)c->signal);
    else OUT(",\"signal\":null");
    OUT(",\"waits\":[");
    for (uint32_t i = 0; i < c->nwaits; i++) OUT("%s\"%p\"", i ? "," : "", (void *)c->waits[i]);
    OUT("],\"tid\":%d}\n", (int)in->tid);
#undef OUT
    return n;
}

static void write_truth(struct zs_inst *in) {
    if (!zs_truth_enabled() || in->cmd.kind == ZS_K_COUNT) return;
    zs_truth_write_seq(format_truth, in);
}

/* ---------------------------------------------------------------- completion */
void zs_batch_complete_locked(struct zs_batch *b) {
    struct zs_stream *s = b->stream;
    b->done = true;
    s->completed_batches++;
    if (b->fence && b->fence->magic == ZS_MAGIC_FENCE) b->fence->signaled = true;
    if (!b->waited) free(b);
}

static void inst_free_locked(struct zs_inst *in) {
    if (in->body) zs_body_unref(in->body);
    else zs_cmd_free(&in->cmd);
    zs_stream_release_locked(in->stream);
    free(in);
}

static void finish_locked(struct zs_inst *in) {
    struct zs_cmd *c = &in->cmd;
    struct zs_stream *s = in->stream;
    ze_device_handle_t dev = &zs.devices[in->device];
    if (c->kind == ZS_K_RESET && c->target && c->target->magic == ZS_MAGIC_EVENT) {
        zs_event_reset(c->target);
    }
    if (c->kind == ZS_K_QUERY_TS) {
        for (uint32_t i = 0; i < c->nq; i++) {
            ze_kernel_timestamp_result_t r = {{0, 0}, {0, 0}};
            ze_event_handle_t ev = c->qevents[i];
            struct zs_event_state st = {0};
            if (ev && ev->magic == ZS_MAGIC_EVENT) zs_event_read(ev, &st);
            if (st.signaled && st.has_ts) {
                r.global.kernelStart = r.context.kernelStart = st.ts_start;
                r.global.kernelEnd = r.context.kernelEnd = st.ts_end;
            }
            size_t off = c->qoffsets ? c->qoffsets[i] : i * sizeof(r);
            memcpy((unsigned char *)c->dst + off, &r, sizeof(r));
        }
    }
    if (c->signal && c->signal->magic == ZS_MAGIC_EVENT && zs_cb_signal_current_locked(in)) {
        bool ts = (c->signal->pool->flags & ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP) != 0;
        /* a multiple-indirect launch signals once, for all its kernels: its timestamps span them */
        uint64_t start = c->launch == ZS_L_MULTI_INDIRECT ? s->multi_start : in->start_ns;
        zs_event_signal_locked(c->signal, in->end_ns, ts, zs_mask(zs_ticks_full(dev, start), zs.cfg.kts_bits),
                               zs_mask(zs_ticks_full(dev, in->end_ns), zs.cfg.kts_bits));
    }
    /* unlink from the stream FIFO */
    if (in->prev) in->prev->next = in->next;
    else s->head = in->next;
    if (in->next) in->next->prev = in->prev;
    else s->tail = in->prev;
    s->npending--;
    s->max_end_done = zs_max64(s->max_end_done, in->end_ns);
    if (kind_blocks_following(in)) s->block_end = zs_max64(s->block_end, in->end_ns);
    if (in->batch && --in->batch->pending == 0) zs_batch_complete_locked(in->batch);
    in->state = ZS_DONE;
    if (c->kind != ZS_K_COUNT) {
        uint64_t n = atomic_fetch_add(&zs.ops_executed, 1) + 1;
        if (zs.cfg.device_lost_after >= 0 && (int64_t)n >= zs.cfg.device_lost_after) atomic_store(&zs.lost, true);
    }
    inst_free_locked(in);
}

static void timed_wait(struct zs_engine *e, uint64_t until_raw) {
    uint64_t now = zs_now();
    if (until_raw <= now) return;
    /* condvars run on CLOCK_MONOTONIC; convert the remaining CLOCK_MONOTONIC_RAW interval */
    uint64_t left = until_raw - now;
    struct timespec dl;
    clock_gettime(CLOCK_MONOTONIC, &dl);
    uint64_t ns = (uint64_t)dl.tv_nsec + left % 1000000000u;
    dl.tv_sec += (time_t)(left / 1000000000u + ns / 1000000000u);
    dl.tv_nsec = (long)(ns % 1000000000u);
    pthread_cond_timedwait(&e->cv, &zs.lock, &dl);
}

/* Nothing to do until until_raw (UINT64_MAX: until kicked); zs.lock held. */
static void engine_idle(struct zs_engine *e, uint64_t until_raw) {
    if (zs.cfg.poll_ns) {
        uint64_t gen = atomic_load_explicit(&e->gen, memory_order_acquire);
        uint64_t now = zs_now(), stop = now + zs.cfg.poll_ns;
        if (until_raw < stop) stop = until_raw;
        e->polling = true;
        pthread_mutex_unlock(&zs.lock);
        while (atomic_load_explicit(&e->gen, memory_order_acquire) == gen && (now = zs_now()) < stop) {
#if defined(__x86_64__) || defined(__i386__)
            __builtin_ia32_pause();
#endif
        }
        pthread_mutex_lock(&zs.lock);
        e->polling = false;
        /* kicked, or a command ends now: back to work; else sleep as below */
        if (e->kick || atomic_load_explicit(&e->gen, memory_order_acquire) != gen || now >= until_raw) return;
    }
    if (until_raw == UINT64_MAX) pthread_cond_wait(&e->cv, &zs.lock);
    else timed_wait(e, until_raw);
}

static void *engine_main(void *arg) {
    struct zs_engine *e = arg;
    /* A command completes when real time passes its end: with Linux's default 50 us timer slack
     * an 8 us copy would be seen complete 50 us late, and anything waiting for it in real time
     * (a host waiting for a slot, a chain of executions on two engines) would run that much
     * slower than on a device, which signals at the end. */
    prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
    if (zs.cfg.nengine_cpus) {
        int i = atomic_fetch_add(&zs.cfg.engine_cpu_next, 1) % zs.cfg.nengine_cpus;
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(zs.cfg.engine_cpus[i], &set);
        if (sched_setaffinity(0, sizeof(set), &set) != 0)
            fprintf(stderr, "zesim: cannot bind an engine to CPU %d (ZESIM_ENGINE_CPUS)\n", zs.cfg.engine_cpus[i]);
    }
    pthread_mutex_lock(&zs.lock);
    for (;;) {
        e->kick = false;
        if (atomic_load(&zs.lost)) {
            /* a lost device never completes anything again */
            pthread_cond_wait(&e->cv, &zs.lock);
            continue;
        }
        uint64_t now = zs_now();
        struct zs_inst *done = NULL, **pp = &e->running;
        while (*pp) {
            struct zs_inst *in = *pp;
            if (in->end_ns <= now) {
                *pp = in->run_next;
                e->nrunning--;
                in->state = ZS_COMPLETING;
                in->run_next = done;
                done = in;
            } else {
                pp = &in->run_next;
            }
        }
        if (done) {
            /* Effects touch application memory, possibly megabytes: do them unlocked. Nothing
             * else touches a COMPLETING instance. Oldest first, so the truth log reads in order. */
            struct zs_inst *rev = NULL;
            while (done) {
                struct zs_inst *n = done->run_next;
                done->run_next = rev;
                rev = done;
                done = n;
            }
            pthread_mutex_unlock(&zs.lock);
            for (struct zs_inst *in = rev; in; in = in->run_next) run_effect(in);
            pthread_mutex_lock(&zs.lock);
            while (rev) {
                struct zs_inst *n = rev->run_next;
                if (atomic_load(&zs.lost)) {
                    /* lost while completing: the rest never completes */
                    rev = n;
                    continue;
                }
                /* truth is written before the signal so a host that saw the event finds the line */
                write_truth(rev);
                finish_locked(rev);
                rev = n;
            }
            pthread_cond_broadcast(&zs.host_cv);
            /* other engines depend on this one's completions only through events, whose
             * signals kicked the engines of their waiters (zs_event_signal_locked) */
            continue;
        }
        schedule_locked(e);
        if (e->kick) continue;
        uint64_t next = UINT64_MAX;
        for (struct zs_inst *in = e->running; in; in = in->run_next) next = in->end_ns < next ? in->end_ns : next;
        engine_idle(e, next);
    }
    return NULL;
}

/* ---------------------------------------------------------------- submission */
void zs_enqueue_locked(struct zs_stream *s, struct zs_inst *in) {
    /* A command that must wait for every earlier one (an in-order stream) behind one not yet
     * complete cannot start before that one completes, and a completion makes the engine
     * schedule: the doorbell need not wake it. A GPU's command streamer is not interrupted by a
     * submission behind the running command; a woken worker here costs the submitting thread a
     * futex wake and the engine a pass under zs.lock for each kernel appended. */
    bool behind = s->head != NULL && needs_all_prior(in);
    if (in->cmd.nwaits) waits_add_locked(in, s->engine); /* until it starts (start_locked) */
    zs_cb_enqueue_locked(in);
    in->stream = s;
    s->refs++;
    in->prev = s->tail;
    in->next = NULL;
    if (s->tail) s->tail->next = in;
    else s->head = in;
    s->tail = in;
    s->npending++;
    if (!behind) zs_engine_kick_locked(s->engine);
}

struct ring_arg {
    struct zs_stream *s;
};
static bool ring_has_room(void *arg) { return ((struct ring_arg *)arg)->s->npending < zs.cfg.ring_cmds; }

/* A full ring buffer stalls the submitting thread, as on hardware. */
ze_result_t zs_ring_wait_locked(struct zs_stream *s) {
    struct ring_arg a = {s};
    return zs_wait_locked(ring_has_room, &a, UINT64_MAX);
}

bool zs_batch_done(void *arg) { return ((struct zs_batch *)arg)->done; }
