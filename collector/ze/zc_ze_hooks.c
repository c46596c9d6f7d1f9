/* SPDX-License-Identifier: MIT */
/* Hooks around the Level Zero calls listed in ze_hooks.spec. Rules every hook follows:
 * - the application's call is made exactly once, by the generated wrapper, with the
 *   application's arguments except the signal event of a timed Append, which is ours;
 * - when the app passed a signal event, the barrier that re-signals it is appended before any
 *   bookkeeping that could fail, so the app's waits never hang on us;
 * - collector failures turn device timing off (ZC_FAIL) and leave the app's behaviour alone;
 * - our own driver calls go to zc_ze_real, which no hook or layer sees. */
#include "zc_ze_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>


struct zc_kernel {
    uint32_t region;
    struct zc_kernel_sel sel; /* timed? counted by which kernel windows? (once, at creation) */
    char name[128];
};

struct zc_image {
    size_t bpp, w, h, d;
};

struct zc_fence {
    struct zc_queue *queue;
};

static struct zc_map images = ZC_MAP_INIT;

/* an immediate list's deferred events: injected events an app event's barrier waits on */
struct zc_deferred {
    ze_event_handle_t inj;
    uint64_t seq;
    ze_event_handle_t user_event;
};
struct zc_imm {
    struct zc_deferred *v;
    uint32_t n, cap;
    bool sync;
};

/* Appends look their list and kernel up on every call. A one-entry cache per thread avoids the
 * map's mutex; destroying any list (kernel) bumps a generation that invalidates every cache, so
 * a handle the driver recycles is never mistaken for the old object. */
static atomic_uint_fast64_t list_gen = 1, kernel_gen = 1;
struct tls_cache {
    const void *h;
    void *v;
    uint64_t gen;
};
static _Thread_local struct tls_cache tls_list __attribute__((tls_model("initial-exec")));
static _Thread_local struct tls_cache tls_kernel __attribute__((tls_model("initial-exec")));

static void *cached_get(struct tls_cache *c, atomic_uint_fast64_t *gen, struct zc_map *m, const void *h) {
    uint64_t g = atomic_load_explicit(gen, memory_order_acquire);
    /* no test for h == NULL: the map never holds NULL, so a NULL cached here maps to NULL */
    if (c->h == h && c->gen == g) return c->v;
    void *v = zc_map_get(m, h);
    *c = (struct tls_cache){h, v, g};
    return v;
}

struct zc_list *zc_ze_list(ze_command_list_handle_t h) { return cached_get(&tls_list, &list_gen, &zc_ze.lists, h); }

static inline struct zc_imm *imm_of(struct zc_list *l) { return (struct zc_imm *)(void *)l->slots; }

/* ---------------------------------------------------------------- injected events of a list */
/* An immediate list's event whose operation completed: reset here (a drainer, off the app's
 * path) and handed back to the list; l->lock held. */
static void event_return_locked(struct zc_list *l, ze_event_handle_t e) {
    zc_ze_real.ze_event.pfnHostReset(e);
    if (l->nret == l->cap_ret) {
        uint32_t ncap = l->cap_ret ? 2 * l->cap_ret : 64;
        ze_event_handle_t *n = realloc(l->ret, ncap * sizeof(*n));
        if (!n) { /* the context's pool takes it instead */
            zc_ze_event_put(l->ctx, e);
            return;
        }
        l->ret = n;
        l->cap_ret = ncap;
    }
    l->ret[l->nret++] = e;
}

static bool pool_reserve(struct zc_list *l, uint32_t n) {
    if (l->cap_pool >= n) return true;
    uint32_t ncap = l->cap_pool ? l->cap_pool : 64;
    while (ncap < n) ncap *= 2;
    ze_event_handle_t *p = realloc(l->pool, ncap * sizeof(*p));
    if (!p) return false;
    l->pool = p;
    l->cap_pool = ncap;
    return true;
}

/* The list's pool is empty: take what drainers handed back (one lock for all of them), else a
 * batch from the context's pool (one lock for 64). The appending thread only. */
static ze_event_handle_t __attribute__((noinline)) event_refill(struct zc_list *l) {
    pthread_mutex_lock(&l->lock);
    if (l->nret) { /* swap the arrays: ours is empty */
        ze_event_handle_t *p = l->pool;
        uint32_t cap = l->cap_pool;
        l->pool = l->ret;
        l->cap_pool = l->cap_ret;
        l->npool = l->nret;
        l->ret = p;
        l->cap_ret = cap;
        l->nret = 0;
    }
    pthread_mutex_unlock(&l->lock);
    if (!l->npool && pool_reserve(l, 64)) l->npool = zc_ze_event_get_batch(l->ctx, l->pool, 64);
    return l->npool ? l->pool[--l->npool] : NULL;
}

static inline ze_event_handle_t event_get(struct zc_list *l) {
    if (__builtin_expect(l->npool != 0, 1)) return l->pool[--l->npool];
    return event_refill(l);
}

/* An event the list took but did not use (the Append failed): straight back. */
static void event_unget(struct zc_list *l, ze_event_handle_t e) {
    if (l->npool < l->cap_pool) l->pool[l->npool++] = e;
    else zc_ze_event_put(l->ctx, e);
}

/* ---------------------------------------------------------------- record completion */
/* `done` stays signalled until the slot is taken again (slot_take resets it): an Execute that
 * waits for a slot waits on the oldest one's `done`, which must not be reset under it by a
 * drainer that collected that execution first. */
static void slot_release(struct zc_slot *s) {
    if (s->started) zc_ze_real.ze_event.pfnHostReset(s->started);
    /* release: the next Execute that sees !busy sees the reset event */
    __atomic_store_n(&s->busy, false, __ATOMIC_RELEASE);
}

/* A slot is reusable only after its post list ran (`done`): records may complete earlier, read
 * from our events directly, and reusing the slot then would let the old post list overwrite the
 * next execution's buffer and signal its `done`. */
bool zc_ze_exec_try_finish(struct zc_exec *x) {
    if (!x->done && x->slot) {
        ze_result_t q = zc_ze_real.ze_event.pfnQueryStatus(x->slot->done);
        /* a query that fails will never say done: the device's timing stops, the slot is freed
         * (the gate event still orders the next execution on the device) */
        if (q == ZE_RESULT_SUCCESS || zc_ze_device_off(x->list ? x->list->dev : NULL, "zeEventQueryStatus", q) ||
            !zc_ze_dev_on(x->list ? x->list->dev : NULL))
            x->done = true;
    }
    if (!x->done && x->slot) return false;
    if (x->slot) slot_release(x->slot);
    zc_ze_exec_free(x);
    return true;
}

bool zc_ze_exec_record_done(struct zc_exec *x) {
    if (--x->pending) return false;
    return !zc_ze_exec_try_finish(x);
}

void zc_ze_rec_done(struct zc_rec *r) {
    if (r->exec) { /* dropped before completion: the execution will never be collected */
        struct zc_exec *x = r->exec;
        r->exec = NULL;
        if (--x->pending == 0) {
            if (x->slot) slot_release(x->slot);
            zc_ze_exec_free(x);
        }
    } else if (r->own_inj && r->inj) {
        struct zc_list *l = r->list;
        if (!l) {
            /* list gone: its events were recycled or destroyed with it */
        } else {
            pthread_mutex_lock(&l->lock);
            struct zc_imm *im = imm_of(l);
            /* a later operation of the list completed: any re-signal barrier appended before it
             * has run, so the events those barriers waited on can be reused */
            uint32_t k = 0;
            for (uint32_t i = 0; i < im->n; i++) {
                if (im->v[i].seq < r->seq) {
                    zc_ze_uevent_forget_inj(im->v[i].user_event, im->v[i].inj);
                    event_return_locked(l, im->v[i].inj);
                } else {
                    im->v[k++] = im->v[i];
                }
            }
            im->n = k;
            if (r->user_event) {
                /* our barrier re-signalling the app's event may not have run yet: keep the event
                 * until a later operation of the list completes (or the list goes away). Out of
                 * memory, the event is leaked rather than reset under a waiting barrier. */
                if (im->n == im->cap) {
                    uint32_t ncap = im->cap ? 2 * im->cap : 16;
                    struct zc_deferred *n = realloc(im->v, ncap * sizeof(*n));
                    if (n) {
                        im->v = n;
                        im->cap = ncap;
                    }
                }
                if (im->n < im->cap) im->v[im->n++] = (struct zc_deferred){r->inj, r->seq, r->user_event};
            } else {
                event_return_locked(l, r->inj);
            }
            pthread_mutex_unlock(&l->lock);
        }
    }
    zc_ze_rec_free(r);
}

/* ---------------------------------------------------------------- init and contexts */
void zc_ze_post_zeInit(ze_init_params_t *p, ze_result_t r, struct zc_ze_call *c) {
    if (r != ZE_RESULT_SUCCESS) return;
    zc_ze_caps_announce(); /* every table has been fetched by now */
    zc_ze_devices_enumerate();
}

static void list_free_resources(struct zc_list *l, bool ctx_dying);

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
    for (uint32_t i = 0; zc_ze_real.ze_event_pool.pfnDestroy && i < x->npools; i++)
        zc_ze_real.ze_event_pool.pfnDestroy(x->pools[i]);
    x->nfree = x->npools = 0;
    x->broken = true; /* lists of this context that survive it go untimed */
    pthread_mutex_unlock(&x->lock);
    zc_map_del(&zc_ze.ctxs, *p->phContext);
    /* x itself stays allocated: records and lists may still point at it */
}

/* ---------------------------------------------------------------- queues */
void zc_ze_post_zeCommandQueueCreate(ze_command_queue_create_params_t *p, ze_result_t r, struct zc_ze_call *c) {
    if (r != ZE_RESULT_SUCCESS || !*p->pphCommandQueue || !*p->pdesc) return;
    struct zc_queue *q = calloc(1, sizeof(*q));
    if (!q) return;
    q->h = **p->pphCommandQueue;
    q->dev = zc_ze_dev(*p->phDevice);
    q->ctx = zc_ze_ctx(*p->phContext);
    q->ordinal = (*p->pdesc)->ordinal;
    q->index = (*p->pdesc)->index;
    q->flags = (*p->pdesc)->flags;
    q->copy_only = q->dev && q->ordinal < q->dev->ngroups && q->dev->copy_only[q->ordinal];
    q->sync = (*p->pdesc)->mode == ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS;
    q->stream = q->dev ? zc_ze_stream_new(q->dev, q->ctx, "queue") : NULL;
    int err;
    zc_map_put(&zc_ze.queues, q->h, q, &err);
    if (err) free(q);
}

static void harvest_queue_destroy(struct zc_queue *q);
void zc_ze_pre_zeCommandQueueDestroy(ze_command_queue_destroy_params_t *p, struct zc_ze_call *c) {
    struct zc_queue *q = zc_map_del(&zc_ze.queues, *p->phCommandQueue);
    harvest_queue_destroy(q);
    if (q) zc_ze_stream_drain(q->stream); /* the stream lives on: its lanes are locations */
    free(q);
}

/* Completion became known somewhere: collect every stream (a sync on one queue also completes
 * work it waited for on others). */
static void sync_point(ze_result_t r, struct zc_ze_call *c) {
    if (r != ZE_RESULT_SUCCESS) return;
    if (zc_on(ZC_F_DEVICE_TIMING)) zc_ze_drain_all(false, 0);
    if (c->t) zc_loc_flush_own_if_half(); /* (a closed call has no thread location) */
}

void zc_ze_post_zeCommandQueueSynchronize(ze_command_queue_synchronize_params_t *p, ze_result_t r, struct zc_ze_call *c) { sync_point(r, c); }
void zc_ze_post_zeEventHostSynchronize(ze_event_host_synchronize_params_t *p, ze_result_t r, struct zc_ze_call *c) { sync_point(r, c); }
void zc_ze_post_zeEventQueryStatus(ze_event_query_status_params_t *p, ze_result_t r, struct zc_ze_call *c) { sync_point(r, c); }
void zc_ze_post_zeFenceHostSynchronize(ze_fence_host_synchronize_params_t *p, ze_result_t r, struct zc_ze_call *c) { sync_point(r, c); }
void zc_ze_post_zeFenceQueryStatus(ze_fence_query_status_params_t *p, ze_result_t r, struct zc_ze_call *c) { sync_point(r, c); }

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
    struct zc_list *l = calloc(1, sizeof(*l));
    if (!l) return NULL;
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
    return l;
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
    list_register(l);
}

void zc_ze_post_zeCommandListCreateImmediate(ze_command_list_create_immediate_params_t *p, ze_result_t r,
                                             struct zc_ze_call *c) {
    if (r != ZE_RESULT_SUCCESS || !*p->pphCommandList || !*p->paltdesc) return;
    const ze_command_queue_desc_t *d = *p->paltdesc;
    struct zc_list *l = list_new(**p->pphCommandList, *p->phContext, *p->phDevice, d->ordinal);
    if (!l) return;
    struct zc_imm *im = calloc(1, sizeof(*im));
    if (!im) {
        free(l);
        return;
    }
    im->sync = d->mode == ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS;
    l->slots = (struct zc_slot *)(void *)im; /* immediate lists have no slots: reuse the pointer */
    l->immediate = true;
    l->index = d->index;
    l->in_order = (d->flags & ZC_ZE_QUEUE_FLAG_IN_ORDER) != 0;
    /* immediate lists are read from our events on the host */
    if (l->dev && zc_ze_caps.timing && zc_ze_caps.host_read) l->stream = engine_stream(l->ctx, l->dev, d->ordinal, d->index);
    if (l->stream && !(l->inbox = zc_ze_inbox_new(l, l->stream))) l->stream = NULL; /* untimed */
    l->timed = l->stream && l->ctx;
    list_register(l);
}

/* A slot's helper lists and harvest buffer (a driver without the destroy/free entries releases
 * them with the context). */
static void helpers_free(struct zc_list *l, struct zc_slot *s) {
    if (s->pre && zc_ze_real.ze_command_list.pfnDestroy) zc_ze_real.ze_command_list.pfnDestroy(s->pre);
    if (s->post && zc_ze_real.ze_command_list.pfnDestroy) zc_ze_real.ze_command_list.pfnDestroy(s->post);
    if (s->harvest && zc_ze_real.ze_command_list.pfnDestroy) zc_ze_real.ze_command_list.pfnDestroy(s->harvest);
    if (s->buf && zc_ze_real.ze_mem.pfnFree) zc_ze_real.ze_mem.pfnFree(l->ctx->h, s->buf);
}

static void slots_destroy(struct zc_list *l, bool ctx_dying) {
    for (uint32_t i = 0; i < l->nslots; i++) {
        if (__atomic_load_n(&l->slots[i].busy, __ATOMIC_ACQUIRE)) {
            /* an execution still running (the app broke the spec, or the device is lost): its
             * records point at these slots, so they are leaked, not freed under them */
            ZC_DEBUG("list destroyed or reset while executing: %u helper slots leaked", l->nslots);
            l->slots = NULL;
            l->nslots = 0;
            l->gate = NULL;
            return;
        }
    }
    for (uint32_t i = 0; i < l->nslots; i++) {
        struct zc_slot *s = &l->slots[i];
        helpers_free(l, s);
        if (!ctx_dying) {
            if (s->done) zc_ze_event_put(l->ctx, s->done);
            if (s->started) zc_ze_event_put(l->ctx, s->started);
            if (s->copied) zc_ze_event_put(l->ctx, s->copied);
        }
    }
    free(l->slots);
    l->slots = NULL;
    l->nslots = 0;
    if (l->gate && !ctx_dying) zc_ze_event_put(l->ctx, l->gate);
    l->gate = NULL;
}

/* The list's content is gone (reset/destroy) or its context is dying: our events and helper
 * lists for it go back or away. The app guarantees the list is not executing. */
static void list_free_resources(struct zc_list *l, bool ctx_dying) {
    pthread_mutex_lock(&l->lock);
    if (l->immediate) {
        struct zc_imm *im = imm_of(l);
        for (uint32_t i = 0; im && i < im->n; i++) {
            zc_ze_uevent_forget_inj(im->v[i].user_event, im->v[i].inj);
            if (!ctx_dying) zc_ze_event_put(l->ctx, im->v[i].inj);
        }
        if (im) im->n = 0;
    } else {
        slots_destroy(l, ctx_dying);
        /* back to the list's own pool, not reset: the pre list of the next execution that
         * uses them resets them on the device before the list runs (see struct zc_slot) */
        if (!ctx_dying && !pool_reserve(l, l->npool + l->ntmpl)) {
            for (uint32_t i = 0; i < l->ntmpl; i++)
                if (l->tmpl[i].inj) zc_ze_event_put(l->ctx, l->tmpl[i].inj), l->tmpl[i].inj = NULL;
        }
        for (uint32_t i = 0; i < l->ntmpl; i++) {
            if (l->tmpl[i].user_event) zc_ze_uevent_forget_inj(l->tmpl[i].user_event, l->tmpl[i].inj);
            if (!ctx_dying && l->tmpl[i].inj) l->pool[l->npool++] = l->tmpl[i].inj;
        }
        l->ntmpl = 0;
        l->nuntimed = 0;
        l->build++;
    }
    pthread_mutex_unlock(&l->lock);
}

/* Records of this list still queued must not outlive it. */
static void detach_records(struct zc_list *l) {
    pthread_mutex_lock(&zc_ze.streams_lock);
    struct zc_stream *first = zc_ze.streams;
    pthread_mutex_unlock(&zc_ze.streams_lock);
    for (struct zc_stream *s = first; s; s = s->next_all) {
        pthread_mutex_lock(&s->lock);
        for (struct zc_rec *r = s->head; r; r = r->next)
            if (r->list == l) {
                zc_ze_pend_detach(s, r);
                r->list = NULL;
            }
        /* completed records waiting to be written in order too */
        for (size_t i = 0; i < s->ndone; i++)
            if (s->done[i]->list == l) s->done[i]->list = NULL;
        for (struct zc_rec *r = s->held; r; r = r->next)
            if (r->list == l) r->list = NULL;
        pthread_mutex_unlock(&s->lock);
    }
}

static void slots_quiesce(struct zc_list *l);
void zc_ze_pre_zeCommandListReset(ze_command_list_reset_params_t *p, struct zc_ze_call *c) {
    struct zc_list *l = zc_ze_list(*p->phCommandList);
    if (!l) return;
    slots_quiesce(l);
    zc_ze_drain_all(false, 0);
    list_free_resources(l, false);
}

void zc_ze_pre_zeCommandListDestroy(ze_command_list_destroy_params_t *p, struct zc_ze_call *c) {
    struct zc_list *l = zc_map_del(&zc_ze.lists, *p->phCommandList);
    if (!l) return;
    /* release: a cache that sees the new generation no longer hands out l */
    atomic_fetch_add_explicit(&list_gen, 1, memory_order_release);
    slots_quiesce(l);
    zc_ze_drain_all(false, 0);
    if (l->inbox) zc_ze_inbox_free(l->inbox); /* drains what is still in it */
    l->inbox = NULL;
    detach_records(l);
    list_free_resources(l, false);
    if (l->immediate) {
        struct zc_imm *im = imm_of(l);
        if (im) free(im->v);
        free(im);
        l->slots = NULL;
    }
    /* events the list held go back to the context, reset (a regular list's may be signalled) */
    pthread_mutex_lock(&l->lock);
    for (uint32_t i = 0; i < l->npool; i++) zc_ze_event_put(l->ctx, l->pool[i]);
    for (uint32_t i = 0; i < l->nret; i++) zc_ze_event_put(l->ctx, l->ret[i]);
    l->npool = l->nret = 0;
    pthread_mutex_unlock(&l->lock);
    free(l->pool);
    free(l->ret);
    free(l->tmpl);
    /* executions of this list still pending keep pointers to it; the app must not destroy an
     * executing list, so by now there are none worth keeping the memory for */
    free(l);
}

/* ---------------------------------------------------------------- timed appends */
static const char *const dir_names[] = {"", "H2D", "D2H", "D2D", "H2H", "other"};

static uint8_t classify(char s, char d) {
    bool sd = s == 'D', dd = d == 'D';
    if (sd && dd) return ZC_DIR_D2D;
    if (dd) return ZC_DIR_H2D;
    if (sd) return ZC_DIR_D2H;
    return ZC_DIR_H2H;
}

/* Prologue of every timed Append: swap in our event (from the list's own pool: no lock). */
/* An operation that goes untimed: counted per executed operation (a regular list's at each
 * execution, see the Execute prologue). */
static void __attribute__((noinline)) untimed_op(struct zc_list *l) {
    if (l->immediate) atomic_fetch_add(&zc_ze.untimed, 1);
    else l->nuntimed++; /* the appending thread's (one at a time), read by Execute after Close */
}

static inline void timed_pre(struct zc_ze_call *c, ze_command_list_handle_t hl, ze_event_handle_t *sig) {
    if (!zc_on(ZC_F_DEVICE_TIMING)) return;
    /* never a closed call here: launches come only through launch_select then, which stops them */
    struct zc_list *l = zc_ze_list(hl);
    if (!l || !l->timed || !zc_ze_dev_on_fast(l->dev)) return;
    /* an application event is re-signalled after our event: the driver must be able to, and our
     * events of a list read back between executions are reset from the host, under no barrier */
    if (__builtin_expect(*sig != NULL, 0) && (!l->resignal || (!l->immediate && l->mode == ZC_REG_SERIAL))) {
        untimed_op(l);
        return;
    }
    ze_event_handle_t inj = event_get(l);
    if (!inj) {
        untimed_op(l);
        return;
    }
    c->ptr = l;
    c->inj = inj;
    c->user_event = *sig;
    *sig = inj;
    /* the op cannot start before this moment: the lower bound for unrolling its timestamps */
    if (!c->t0) c->t0 = zc_tick();
}

/* The re-signal barrier for the app's event, right after its operation (see the rules above). */
static void __attribute__((noinline)) resignal(struct zc_ze_call *c, struct zc_list *l, ze_command_list_handle_t hl) {
    ze_result_t rb = ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
    if (zc_ze_real.ze_command_list.pfnAppendBarrier)
        rb = zc_ze_real.ze_command_list.pfnAppendBarrier(hl, c->user_event, 1, &c->inj);
    /* a signal after everything before it is later, never earlier: safe as a fallback */
    if (rb != ZE_RESULT_SUCCESS && zc_ze_real.ze_command_list.pfnAppendSignalEvent)
        rb = zc_ze_real.ze_command_list.pfnAppendSignalEvent(hl, c->user_event);
    if (rb != ZE_RESULT_SUCCESS) {
        ZC_FAIL(ZC_F_DEVICE_TIMING, "cannot re-signal the application's event after %s (0x%x)", zc_ze_api_names[c->api],
                (unsigned)rb);
        if (l->immediate && zc_ze_real.ze_event.pfnHostSignal) { /* from the host, so the app's wait still completes */
            zc_ze_event_wait(c->inj, UINT64_MAX);
            zc_ze_real.ze_event.pfnHostSignal(c->user_event);
        }
    }
}

/* An immediate Append that re-signals an app event: its record exists at once, so the app's
 * zeEventQueryKernelTimestamp can find it (the rare path: allocates, locks). */
static void __attribute__((noinline)) imm_post_uevent(struct zc_ze_call *c, struct zc_list *l, const struct zc_opdesc *op,
                                                      uint64_t seq) {
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
    if (!zc_ze_inbox_push(l->inbox, &e)) ZC_FAIL(ZC_F_DEVICE_TIMING, "cannot queue a device record");
}

static void __attribute__((noinline)) tmpl_grow_failed(void) {
    /* the event stays in the list (the op signals it); it is never reused */
    ZC_FAIL(ZC_F_DEVICE_TIMING, "out of memory recording a timed operation");
}

/* Epilogue of every timed Append: one 64-byte entry into the immediate list's inbox, or one
 * template into the regular list; no lock, no allocation once warm. */
static inline void timed_post(struct zc_ze_call *c, ze_command_list_handle_t hl, ze_event_handle_t *sig, ze_result_t r,
                              enum zc_op_kind kind, uint32_t region, uint64_t bytes, uint8_t dir) {
    if (!c->inj) return;
    struct zc_list *l = c->ptr;
    *sig = c->user_event;
    if (__builtin_expect(r != ZE_RESULT_SUCCESS, 0)) {
        event_unget(l, c->inj);
        return;
    }
    if (c->user_event) resignal(c, l, hl);
    struct zc_thread *t = c->t;
    /* callsite ids are unique per process: thread index in the high bits (zc_thread) */
    uint64_t callsite = ++t->callsite;
    c->callsite = callsite;
    if (l->immediate) {
        struct zc_imm *im = imm_of(l);
        if (__builtin_expect(!c->user_event && zc_ze_inbox_fast(l->inbox), 1)) { /* written in place: one cache line */
            struct zc_inbox_entry *e = zc_ze_inbox_slot(l->inbox);
            e->inj = c->inj;
            e->submit = c->t0;
            e->rec = NULL;
            e->op = (struct zc_opdesc){(uint8_t)kind, dir, region, t->comm_rank, bytes, callsite};
            zc_ze_inbox_publish(l->inbox);
        } else {
            struct zc_opdesc op = {(uint8_t)kind, dir, region, t->comm_rank, bytes, callsite};
            if (c->user_event) {
                /* only the thread using the list appends to it (spec): the next position is its */
                imm_post_uevent(c, l, &op, zc_ze_inbox_next_seq(l->inbox));
            } else {
                struct zc_inbox_entry en = {c->inj, c->t0, 0, NULL, op};
                if (!zc_ze_inbox_push_slow(l->inbox, &en)) tmpl_grow_failed();
            }
        }
        if (__builtin_expect(im->sync, 0)) zc_ze_stream_drain(l->stream); /* a synchronous append returns completed */
        return;
    }
    if (__builtin_expect(l->ntmpl == l->cap_tmpl, 0)) {
        /* the first template of a list comes here: from now on executions while recording is
         * off look for lists that carry our events (they keep their helper lists) */
        if (!atomic_load_explicit(&zc_ze_tmpl_lists, memory_order_relaxed)) atomic_store(&zc_ze_tmpl_lists, 1);
        uint32_t ncap = l->cap_tmpl ? 2 * l->cap_tmpl : 64;
        struct zc_tmpl *n = realloc(l->tmpl, ncap * sizeof(*n));
        if (!n) {
            tmpl_grow_failed();
            return;
        }
        l->tmpl = n;
        l->cap_tmpl = ncap;
    }
    struct zc_tmpl *tp = &l->tmpl[l->ntmpl++];
    tp->op = (struct zc_opdesc){(uint8_t)kind, dir, region, t->comm_rank, bytes, callsite};
    tp->inj = c->inj;
    tp->user_event = c->user_event;
    if (c->user_event) zc_ze_uevent_set_inj(c->user_event, c->inj);
}

/* Kernel windows and filters (zc_win_kernels): counts this launch for the kernel windows its
 * kernel matches and says whether it is timed (kernels.include/exclude, decided once per kernel
 * at zeKernelCreate). The launch that opens a window is recorded; the one that ends it too: its
 * window closes here, while this call, begun inside the window, is recorded to its end like any
 * call in progress when recording stops (docs/archive.md A18). Closed calls come here only when
 * kernel windows apply (closed=launch). */
static bool __attribute__((noinline)) launch_select(struct zc_ze_call *c, ze_kernel_handle_t k) {
    struct zc_kernel *kk = k ? cached_get(&tls_kernel, &kernel_gen, &zc_ze.kernels, k) : NULL;
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

static inline void launch_pre(struct zc_ze_call *c, ze_command_list_handle_t hl, ze_event_handle_t *sig,
                              ze_kernel_handle_t k) {
    if (__builtin_expect(zc_win_kernels, 0) && !launch_select(c, k)) return; /* not timed: its call region stays */
    timed_pre(c, hl, sig);
}

static uint32_t kernel_region(ze_kernel_handle_t k) {
    struct zc_kernel *kk = cached_get(&tls_kernel, &kernel_gen, &zc_ze.kernels, k);
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

void zc_ze_pre_zeCommandListAppendLaunchKernel(ze_command_list_append_launch_kernel_params_t *p, struct zc_ze_call *c) {
    launch_pre(c, *p->phCommandList, p->phSignalEvent, *p->phKernel);
}
void zc_ze_post_zeCommandListAppendLaunchKernel(ze_command_list_append_launch_kernel_params_t *p, ze_result_t r,
                                                struct zc_ze_call *c) {
    timed_post(c, *p->phCommandList, p->phSignalEvent, r, ZC_OP_KERNEL, kernel_region(*p->phKernel), 0, ZC_DIR_NONE);
}

void zc_ze_pre_zeCommandListAppendLaunchCooperativeKernel(ze_command_list_append_launch_cooperative_kernel_params_t *p,
                                                          struct zc_ze_call *c) {
    launch_pre(c, *p->phCommandList, p->phSignalEvent, *p->phKernel);
}
void zc_ze_post_zeCommandListAppendLaunchCooperativeKernel(ze_command_list_append_launch_cooperative_kernel_params_t *p,
                                                           ze_result_t r, struct zc_ze_call *c) {
    timed_post(c, *p->phCommandList, p->phSignalEvent, r, ZC_OP_KERNEL, kernel_region(*p->phKernel), 0, ZC_DIR_NONE);
}

void zc_ze_pre_zeCommandListAppendLaunchKernelIndirect(ze_command_list_append_launch_kernel_indirect_params_t *p,
                                                       struct zc_ze_call *c) {
    launch_pre(c, *p->phCommandList, p->phSignalEvent, *p->phKernel);
}
void zc_ze_post_zeCommandListAppendLaunchKernelIndirect(ze_command_list_append_launch_kernel_indirect_params_t *p,
                                                        ze_result_t r, struct zc_ze_call *c) {
    timed_post(c, *p->phCommandList, p->phSignalEvent, r, ZC_OP_KERNEL, kernel_region(*p->phKernel), 0, ZC_DIR_NONE);
}

/* One signal event covers all kernels of the launch, so it is one record, named after them. */
/* For windows it counts as a launch of its first kernel; it is timed if any of its kernels is. */
void zc_ze_pre_zeCommandListAppendLaunchMultipleKernelsIndirect(
    ze_command_list_append_launch_multiple_kernels_indirect_params_t *p, struct zc_ze_call *c) {
    ze_kernel_handle_t *ks = *p->pphKernels;
    uint32_t nk = ks ? *p->pnumKernels : 0;
    if (__builtin_expect(zc_win_kernels, 0)) {
        bool timed = nk && launch_select(c, ks[0]);
        for (uint32_t i = 1; i < nk && !timed && c->t; i++) {
            struct zc_kernel *k = zc_map_get(&zc_ze.kernels, ks[i]);
            timed = k ? k->sel.selected : zc_kernel_selected(&zc_knobs, "unknown kernel");
        }
        if (!timed) return;
    }
    timed_pre(c, *p->phCommandList, p->phSignalEvent);
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
    timed_post(c, *p->phCommandList, p->phSignalEvent, r, ZC_OP_KERNEL, zc_def_region(name, ZC_ROLE_FUNCTION, ZC_PARADIGM_L0),
               0, ZC_DIR_NONE);
}

void zc_ze_pre_zeCommandListAppendMemoryCopy(ze_command_list_append_memory_copy_params_t *p, struct zc_ze_call *c) {
    timed_pre(c, *p->phCommandList, p->phSignalEvent);
}
void zc_ze_post_zeCommandListAppendMemoryCopy(ze_command_list_append_memory_copy_params_t *p, ze_result_t r,
                                              struct zc_ze_call *c) {
    if (!c->inj) return;
    char s = zc_ze_memtype(*p->psrcptr), d = zc_ze_memtype(*p->pdstptr);
    timed_post(c, *p->phCommandList, p->phSignalEvent, r, ZC_OP_COPY, copy_region(c->api, s, d), *p->psize, classify(s, d));
}

void zc_ze_pre_zeCommandListAppendMemoryCopyFromContext(ze_command_list_append_memory_copy_from_context_params_t *p,
                                                        struct zc_ze_call *c) {
    timed_pre(c, *p->phCommandList, p->phSignalEvent);
}
void zc_ze_post_zeCommandListAppendMemoryCopyFromContext(ze_command_list_append_memory_copy_from_context_params_t *p,
                                                         ze_result_t r, struct zc_ze_call *c) {
    if (!c->inj) return;
    char s = zc_ze_memtype(*p->psrcptr), d = zc_ze_memtype(*p->pdstptr);
    timed_post(c, *p->phCommandList, p->phSignalEvent, r, ZC_OP_COPY, copy_region(c->api, s, d), *p->psize, classify(s, d));
}

void zc_ze_pre_zeCommandListAppendMemoryCopyRegion(ze_command_list_append_memory_copy_region_params_t *p,
                                                   struct zc_ze_call *c) {
    timed_pre(c, *p->phCommandList, p->phSignalEvent);
}
void zc_ze_post_zeCommandListAppendMemoryCopyRegion(ze_command_list_append_memory_copy_region_params_t *p, ze_result_t r,
                                                    struct zc_ze_call *c) {
    if (!c->inj) return;
    const ze_copy_region_t *g = *p->pdstRegion;
    uint64_t bytes = g ? (uint64_t)g->width * (g->height ? g->height : 1) * (g->depth ? g->depth : 1) : 0;
    char s = zc_ze_memtype(*p->psrcptr), d = zc_ze_memtype(*p->pdstptr);
    timed_post(c, *p->phCommandList, p->phSignalEvent, r, ZC_OP_COPY, copy_region(c->api, s, d), bytes, classify(s, d));
}

void zc_ze_pre_zeCommandListAppendMemoryFill(ze_command_list_append_memory_fill_params_t *p, struct zc_ze_call *c) {
    timed_pre(c, *p->phCommandList, p->phSignalEvent);
}
void zc_ze_post_zeCommandListAppendMemoryFill(ze_command_list_append_memory_fill_params_t *p, ze_result_t r,
                                              struct zc_ze_call *c) {
    if (!c->inj) return;
    timed_post(c, *p->phCommandList, p->phSignalEvent, r, ZC_OP_FILL, cached_region(c->api, 0, zc_ze_memtype(*p->pptr), ZC_ROLE_DATA_TRANSFER),
               *p->psize, ZC_DIR_NONE);
}

static uint64_t image_bytes(ze_image_handle_t img, const ze_image_region_t *reg) {
    struct zc_image *i = img ? zc_map_get(&images, img) : NULL;
    if (!i) return 0;
    if (!reg) return i->bpp * i->w * i->h * i->d;
    return i->bpp * reg->width * (reg->height ? reg->height : 1) * (reg->depth ? reg->depth : 1);
}

void zc_ze_pre_zeCommandListAppendImageCopy(ze_command_list_append_image_copy_params_t *p, struct zc_ze_call *c) {
    timed_pre(c, *p->phCommandList, p->phSignalEvent);
}
void zc_ze_post_zeCommandListAppendImageCopy(ze_command_list_append_image_copy_params_t *p, ze_result_t r,
                                             struct zc_ze_call *c) {
    if (!c->inj) return;
    timed_post(c, *p->phCommandList, p->phSignalEvent, r, ZC_OP_IMAGE, copy_region(c->api, 'I', 'I'),
               image_bytes(*p->phSrcImage, NULL), ZC_DIR_NONE);
}

void zc_ze_pre_zeCommandListAppendImageCopyRegion(ze_command_list_append_image_copy_region_params_t *p,
                                                  struct zc_ze_call *c) {
    timed_pre(c, *p->phCommandList, p->phSignalEvent);
}
void zc_ze_post_zeCommandListAppendImageCopyRegion(ze_command_list_append_image_copy_region_params_t *p, ze_result_t r,
                                                   struct zc_ze_call *c) {
    if (!c->inj) return;
    timed_post(c, *p->phCommandList, p->phSignalEvent, r, ZC_OP_IMAGE, copy_region(c->api, 'I', 'I'),
               image_bytes(*p->phSrcImage, *p->ppSrcRegion), ZC_DIR_NONE);
}

void zc_ze_pre_zeCommandListAppendImageCopyToMemory(ze_command_list_append_image_copy_to_memory_params_t *p,
                                                    struct zc_ze_call *c) {
    timed_pre(c, *p->phCommandList, p->phSignalEvent);
}
void zc_ze_post_zeCommandListAppendImageCopyToMemory(ze_command_list_append_image_copy_to_memory_params_t *p,
                                                     ze_result_t r, struct zc_ze_call *c) {
    if (!c->inj) return;
    timed_post(c, *p->phCommandList, p->phSignalEvent, r, ZC_OP_IMAGE, copy_region(c->api, 'I', zc_ze_memtype(*p->pdstptr)),
               image_bytes(*p->phSrcImage, *p->ppSrcRegion), ZC_DIR_NONE);
}

void zc_ze_pre_zeCommandListAppendImageCopyFromMemory(ze_command_list_append_image_copy_from_memory_params_t *p,
                                                      struct zc_ze_call *c) {
    timed_pre(c, *p->phCommandList, p->phSignalEvent);
}
void zc_ze_post_zeCommandListAppendImageCopyFromMemory(ze_command_list_append_image_copy_from_memory_params_t *p,
                                                       ze_result_t r, struct zc_ze_call *c) {
    if (!c->inj) return;
    timed_post(c, *p->phCommandList, p->phSignalEvent, r, ZC_OP_IMAGE, copy_region(c->api, zc_ze_memtype(*p->psrcptr), 'I'),
               image_bytes(*p->phDstImage, *p->ppDstRegion), ZC_DIR_NONE);
}

void zc_ze_pre_zeCommandListAppendBarrier(ze_command_list_append_barrier_params_t *p, struct zc_ze_call *c) {
    timed_pre(c, *p->phCommandList, p->phSignalEvent);
}
void zc_ze_post_zeCommandListAppendBarrier(ze_command_list_append_barrier_params_t *p, ze_result_t r, struct zc_ze_call *c) {
    if (!c->inj) return;
    timed_post(c, *p->phCommandList, p->phSignalEvent, r, ZC_OP_BARRIER, cached_region(c->api, 0, 0, ZC_ROLE_BARRIER), 0,
               ZC_DIR_NONE);
}

void zc_ze_pre_zeCommandListAppendMemoryRangesBarrier(ze_command_list_append_memory_ranges_barrier_params_t *p,
                                                      struct zc_ze_call *c) {
    timed_pre(c, *p->phCommandList, p->phSignalEvent);
}
void zc_ze_post_zeCommandListAppendMemoryRangesBarrier(ze_command_list_append_memory_ranges_barrier_params_t *p,
                                                       ze_result_t r, struct zc_ze_call *c) {
    if (!c->inj) return;
    timed_post(c, *p->phCommandList, p->phSignalEvent, r, ZC_OP_BARRIER, cached_region(c->api, 0, 0, ZC_ROLE_BARRIER), 0,
               ZC_DIR_NONE);
}

/* A signal or reset appended by the app: its event no longer belongs to a timed operation. */
void zc_ze_post_zeCommandListAppendSignalEvent(ze_command_list_append_signal_event_params_t *p, ze_result_t r,
                                               struct zc_ze_call *c) {
    if (r == ZE_RESULT_SUCCESS && *p->phEvent) zc_ze_uevent_clear(*p->phEvent, false);
}
void zc_ze_post_zeCommandListAppendEventReset(ze_command_list_append_event_reset_params_t *p, ze_result_t r,
                                              struct zc_ze_call *c) {
    if (r == ZE_RESULT_SUCCESS && *p->phEvent) zc_ze_uevent_clear(*p->phEvent, false);
}

/* The app asks the device for its own events' timestamps: point the query at the events of ours
 * that hold its operations' times (ours are kept while its event refers to them). */
void zc_ze_pre_zeCommandListAppendQueryKernelTimestamps(ze_command_list_append_query_kernel_timestamps_params_t *p,
                                                        struct zc_ze_call *c) {
    uint32_t n = *p->pnumEvents;
    ze_event_handle_t *in = *p->pphEvents;
    if (!n || !in) return;
    ze_event_handle_t *out = NULL;
    for (uint32_t i = 0; i < n; i++) {
        ze_event_handle_t inj = in[i] ? zc_ze_uevent_inj(in[i]) : NULL;
        if (!inj) continue;
        if (!out) {
            if (!(out = malloc(n * sizeof(*out)))) return;
            memcpy(out, in, n * sizeof(*out));
        }
        out[i] = inj;
    }
    if (!out) return;
    c->ptr = out;
    *p->pphEvents = out;
}
void zc_ze_post_zeCommandListAppendQueryKernelTimestamps(ze_command_list_append_query_kernel_timestamps_params_t *p,
                                                         ze_result_t r, struct zc_ze_call *c) {
    free(c->ptr);
    c->ptr = NULL;
}

/* ---------------------------------------------------------------- executions of regular lists */
static struct zc_slot *slot_build(struct zc_list *l, struct zc_slot *s) {
    ze_context_handle_t ctx = l->ctx->h;
    ze_device_handle_t dev = l->dev->h;
    ze_command_list_desc_t ld = {ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC, NULL, l->ordinal, 0};
    struct zc_ze_real *R = &zc_ze_real;
    uint32_t n = l->ntmpl;
    ze_event_handle_t *inj = malloc(n * sizeof(*inj));
    if (!inj) return NULL;
    for (uint32_t i = 0; i < n; i++) inj[i] = l->tmpl[i].inj;
    memset(s, 0, sizeof(*s));
    /* A copy-only list harvested on a compute engine needs `started` only where the app may ask
     * its own event for timestamps (zc_ze_uevent_timestamps reads ours from the host as soon as
     * the app's event is signalled, before the harvest ran); without app events its records
     * wait for the harvest: one command fewer on the copy engine per execution, one host reset
     * fewer, and the harvest may open the gate before it signals done */
    bool want_started = !(l->mode == ZC_REG_DEVICE && l->copy_only);
    for (uint32_t i = 0; i < n && !want_started; i++) want_started = l->tmpl[i].user_event != NULL;
    s->done = zc_ze_event_get(l->ctx);
    if (want_started) s->started = zc_ze_event_get(l->ctx);
    if (!s->done || (want_started && !s->started)) goto fail;
    if (R->ze_command_list.pfnCreate(ctx, dev, &ld, &s->pre) != ZE_RESULT_SUCCESS) goto fail;
    /* wait until the previous execution's post list ran (gate), then clear our events */
    if (R->ze_command_list.pfnAppendWaitOnEvents(s->pre, 1, &l->gate) != ZE_RESULT_SUCCESS ||
        R->ze_command_list.pfnAppendEventReset(s->pre, l->gate) != ZE_RESULT_SUCCESS)
        goto fail;
    for (uint32_t i = 0; i < n; i++)
        if (R->ze_command_list.pfnAppendEventReset(s->pre, inj[i]) != ZE_RESULT_SUCCESS) goto fail;
    /* from here on our events hold this execution's times (see rec_poll) */
    if ((s->started && R->ze_command_list.pfnAppendSignalEvent(s->pre, s->started) != ZE_RESULT_SUCCESS) ||
        R->ze_command_list.pfnClose(s->pre) != ZE_RESULT_SUCCESS)
        goto fail;
    if (R->ze_command_list.pfnCreate(ctx, dev, &ld, &s->post) != ZE_RESULT_SUCCESS) goto fail;
    if (l->mode == ZC_REG_DEVICE) { /* harvested on the device, into host memory */
        ze_host_mem_alloc_desc_t hd = {ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC, NULL, 0};
        if (R->ze_mem.pfnAllocHost(ctx, &hd, n * sizeof(*s->buf), 64, (void **)&s->buf) != ZE_RESULT_SUCCESS) goto fail;
    }
    if (l->mode == ZC_REG_DEVICE && !l->copy_only) {
        if (R->ze_command_list.pfnAppendQueryKernelTimestamps(s->post, n, inj, s->buf, NULL, s->done, n, inj) !=
                ZE_RESULT_SUCCESS ||
            R->ze_command_list.pfnAppendSignalEvent(s->post, l->gate) != ZE_RESULT_SUCCESS)
            goto fail;
    } else if (l->mode == ZC_REG_DEVICE) {
        /* copy engines cannot run QueryKernelTimestamps: a list of ours on a compute engine
         * harvests the copy execution (zc_ze_execute_harvest) */
        /* copy engines run their commands in order: the signal follows the list */
        ze_command_list_desc_t hd = {ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC, NULL, (uint32_t)l->dev->harvest_ordinal, 0};
        s->copied = zc_ze_event_get(l->ctx);
        if (!s->copied || R->ze_command_list.pfnAppendSignalEvent(s->post, s->copied) != ZE_RESULT_SUCCESS ||
            R->ze_command_list.pfnCreate(ctx, dev, &hd, &s->harvest) != ZE_RESULT_SUCCESS)
            goto fail;
        /* Signals and resets run after the commands before them in a list (Intel's driver
         * encodes them as pipe controls or flushes that wait for the work before; zesim models
         * it), as the compute post list already relies on. copied is reset before done: once
         * done is seen the slot may be taken for another execution, whose harvest (queued
         * behind this one, but nothing says it cannot start before this one ends) must not find
         * copied still signalled by this execution. The copy engine waits for the gate (every
         * execution's round trip, bench/README.md), so without `started` it opens before done:
         * the records then wait for done and never read our events. With `started`, done comes
         * first: a record read from our event before done was seen is this execution's, since
         * the next pre list resets our events only after the gate (rec_poll). */
        ze_event_handle_t first = s->started ? s->done : l->gate, second = s->started ? l->gate : s->done;
        if (R->ze_command_list.pfnAppendQueryKernelTimestamps(s->harvest, n, inj, s->buf, NULL, NULL, 1, &s->copied) !=
                ZE_RESULT_SUCCESS ||
            R->ze_command_list.pfnAppendEventReset(s->harvest, s->copied) != ZE_RESULT_SUCCESS ||
            R->ze_command_list.pfnAppendSignalEvent(s->harvest, first) != ZE_RESULT_SUCCESS ||
            R->ze_command_list.pfnAppendSignalEvent(s->harvest, second) != ZE_RESULT_SUCCESS ||
            R->ze_command_list.pfnClose(s->harvest) != ZE_RESULT_SUCCESS)
            goto fail;
    } else if (l->copy_only) {
        /* copy engines run their commands in order: a signal follows everything before it */
        if (R->ze_command_list.pfnAppendSignalEvent(s->post, s->done) != ZE_RESULT_SUCCESS ||
            R->ze_command_list.pfnAppendSignalEvent(s->post, l->gate) != ZE_RESULT_SUCCESS)
            goto fail;
    } else {
        /* read from the host on an engine that may run out of order (the driver lacks the
         * device-side query, or which engines are copy-only is unknown): done follows ours */
        if (R->ze_command_list.pfnAppendWaitOnEvents(s->post, n, inj) != ZE_RESULT_SUCCESS ||
            R->ze_command_list.pfnAppendSignalEvent(s->post, s->done) != ZE_RESULT_SUCCESS ||
            R->ze_command_list.pfnAppendSignalEvent(s->post, l->gate) != ZE_RESULT_SUCCESS)
            goto fail;
    }
    if (R->ze_command_list.pfnClose(s->post) != ZE_RESULT_SUCCESS) goto fail;
    free(inj);
    return s;
fail:
    free(inj);
    helpers_free(l, s);
    if (s->done) zc_ze_event_put(l->ctx, s->done);
    if (s->started) zc_ze_event_put(l->ctx, s->started);
    if (s->copied) zc_ze_event_put(l->ctx, s->copied);
    memset(s, 0, sizeof(*s));
    return NULL;
}

/* How long a resubmission waits for an earlier execution before timing stops on the device:
 * ZECOLL_FINALIZE_TIMEOUT_MS, at least 1 s (0 means "do not wait at exit", not "give up at once"). */
static uint64_t stall_limit_ns(void) {
    uint64_t ms = zc_knobs.FINALIZE_TIMEOUT_MS < 1000 ? 1000 : zc_knobs.FINALIZE_TIMEOUT_MS;
    return ms * 1000000u;
}

/* Finds a free slot for one more execution of l (list locked). May wait for the oldest
 * execution when every slot is in flight; counts that as a stall. */
static struct zc_slot *slot_take(struct zc_list *l) {
    uint32_t cap = zc_knobs.HARVEST_BUFFERS ? (uint32_t)zc_knobs.HARVEST_BUFFERS : 1;
    if (l->mode != ZC_REG_DEVICE) cap = 1; /* read from the host before the next execution resets them */
    if (l->slots_build != l->build || !l->slots) {
        slots_destroy(l, false);
        l->slots = calloc(cap, sizeof(*l->slots));
        if (!l->slots) return NULL;
        l->slots_build = l->build;
        l->gate = zc_ze_event_get(l->ctx);
        if (!l->gate) return NULL;
        /* the first execution has no predecessor: open the gate (helper lists need HostSignal) */
        zc_ze_real.ze_event.pfnHostSignal(l->gate);
    }
    bool stalled = false;
    uint64_t deadline = 0;
    unsigned offs = 0, signalled_busy = 0;
    for (;;) {
        for (uint32_t i = 0; i < l->nslots; i++) {
            uint32_t k = (l->next_slot + i) % l->nslots;
            struct zc_slot *s = &l->slots[k];
            if (!__atomic_load_n(&s->busy, __ATOMIC_ACQUIRE)) {
                l->next_slot = (k + 1) % (l->nslots ? l->nslots : 1);
                zc_ze_real.ze_event.pfnHostReset(s->done); /* from its previous execution */
                return s;
            }
        }
        if (l->nslots < cap) {
            struct zc_slot *s = slot_build(l, &l->slots[l->nslots]);
            if (!s) return NULL;
            l->nslots++;
            return s;
        }
        /* Every slot is in flight: wait for the oldest to be collected. Never on its event
         * alone: a drain on another thread may collect it and reset the event first. So wait
         * briefly, collect, and look again. Bounded: a failing query, a device whose queries
         * say done while ours never do, or nothing done for ZECOLL_FINALIZE_TIMEOUT_MS stops
         * timing on the device, which drops its records and frees every slot. */
        struct zc_slot *s = &l->slots[l->next_slot % l->nslots];
        if (!zc_ze_dev_on(l->dev)) {
            if (++offs > 1000) { /* records in flight elsewhere still hold it: reuse it anyway */
                __atomic_store_n(&s->busy, false, __ATOMIC_RELEASE);
                continue;
            }
        } else if (!stalled) {
            atomic_fetch_add(&zc_ze.stalls, 1);
            stalled = true;
            deadline = zc_now() + stall_limit_ns();
        }
        ze_event_handle_t done = s->done;
        pthread_mutex_unlock(&l->lock);
        ze_result_t r = zc_ze_dev_on(l->dev) ? zc_ze_event_wait(done, 1000000u) : ZE_RESULT_NOT_READY;
        zc_ze_drain_completed(); /* the oldest first: no need to poll every pending record */
        pthread_mutex_lock(&l->lock);
        if (!zc_ze_dev_on(l->dev)) continue;
        if (zc_ze_device_off(l->dev, "zeEventHostSynchronize", r)) continue;
        if (r == ZE_RESULT_SUCCESS && __atomic_load_n(&s->busy, __ATOMIC_ACQUIRE) && ++signalled_busy > 100) {
            /* its post list ran 100 times over and our queries still do not see it: they lie */
            zc_ze_device_stuck(l->dev, "zeEventHostSynchronize reports our helper event signalled, zeEventQueryStatus "
                                       "does not");
            continue;
        }
        if (zc_now() > deadline)
            zc_ze_device_stuck(l->dev, "no execution completed within ZECOLL_FINALIZE_TIMEOUT_MS while a resubmission "
                                       "waited for a harvest buffer");
    }
}

/* Last resort when no helper lists can be had: do what the pre list would do, from the host
 * (wait for the previous execution's post list, clear our events). Blocks; counted as a stall. */
static void host_reset(struct zc_list *l) {
    if (l->gate) {
        /* bounded: a lost device never opens the gate, and then nothing runs anyway */
        zc_ze_event_wait(l->gate, zc_knobs.FINALIZE_TIMEOUT_MS * 1000000u);
        atomic_fetch_add(&zc_ze.stalls, 1);
    }
    for (uint32_t i = 0; i < l->ntmpl; i++) zc_ze_real.ze_event.pfnHostReset(l->tmpl[i].inj);
}

/* ZC_REG_SERIAL (no helper lists): our events of the list's previous execution must be read
 * before the host resets them for the next one, so the resubmission waits until they are
 * (counted as a stall). Bounded like slot_take. False: this execution goes untimed. */
static bool serial_take(struct zc_list *l) {
    uint64_t deadline = 0, nap = 20000;
    while (atomic_load(&l->inflight)) {
        zc_ze_drain_all(false, 0);
        if (!atomic_load(&l->inflight)) break;
        if (!deadline) {
            atomic_fetch_add(&zc_ze.stalls, 1);
            deadline = zc_now() + stall_limit_ns();
        } else if (zc_now() > deadline) {
            zc_ze_device_stuck(l->dev, "no execution completed within ZECOLL_FINALIZE_TIMEOUT_MS while a resubmission "
                                       "waited for the previous one");
            zc_ze_drain_all(false, 0);
            return false;
        }
        if (!zc_ze_dev_on(l->dev)) return false;
        struct timespec ts = {0, (long)nap};
        nanosleep(&ts, NULL);
        if (nap < 1000000) nap *= 2;
    }
    if (!zc_ze_dev_on(l->dev)) return false;
    for (uint32_t i = 0; i < l->ntmpl; i++) zc_ze_real.ze_event.pfnHostReset(l->tmpl[i].inj);
    return true;
}

struct exec_plan {
    struct zc_list *list;
    struct zc_exec *exec;
    struct zc_slot *slot; /* its harvest list runs once the Execute succeeded */
};

/* Executions and the per-call arrays are reused: Execute is a hot path in apps that resubmit
 * lists, and allocates only until the largest call has been seen. */
static pthread_mutex_t exec_free_lock = PTHREAD_MUTEX_INITIALIZER;
static struct zc_exec *exec_free;

static struct zc_exec *exec_new(void) {
    pthread_mutex_lock(&exec_free_lock);
    struct zc_exec *x = exec_free;
    if (x) exec_free = (struct zc_exec *)x->list;
    pthread_mutex_unlock(&exec_free_lock);
    if (!x) x = malloc(sizeof(*x));
    if (x) memset(x, 0, sizeof(*x));
    return x;
}

void zc_ze_exec_free(struct zc_exec *x) {
    if (!x->slot && x->list && x->list->mode == ZC_REG_SERIAL) atomic_fetch_sub(&x->list->inflight, 1);
    pthread_mutex_lock(&exec_free_lock);
    x->list = (struct zc_list *)exec_free; /* the free list reuses the list pointer */
    exec_free = x;
    pthread_mutex_unlock(&exec_free_lock);
}

struct exec_scratch {
    ze_command_list_handle_t *out;
    struct exec_plan *plan;
    uint32_t cap;
};
static _Thread_local struct exec_scratch tls_scratch __attribute__((tls_model("initial-exec")));

static bool scratch_reserve(uint32_t n) {
    struct exec_scratch *sc = &tls_scratch;
    if (n <= sc->cap) return true;
    uint32_t cap = n < 16 ? 16 : n;
    ze_command_list_handle_t *o = realloc(sc->out, 3 * (size_t)cap * sizeof(*o));
    if (!o) return false;
    sc->out = o;
    struct exec_plan *p = realloc(sc->plan, cap * sizeof(*p));
    if (!p) return false;
    sc->plan = p;
    sc->cap = cap;
    return true;
}

/* ---------------------------------------------------------------- harvests of copy executions */
static pthread_mutex_t harvest_lock = PTHREAD_MUTEX_INITIALIZER;

/* The app queue's harvest queue (created at its first copy execution), or NULL. */
static ze_command_queue_handle_t harvest_queue(struct zc_queue *q) {
    if (!q || !q->dev || q->dev->harvest_ordinal < 0 || !q->ctx) return NULL;
    pthread_mutex_lock(&harvest_lock);
    if (!q->harvest) {
        /* low priority: it only copies a few timestamps and opens the next execution */
        ze_command_queue_desc_t d = {ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC, NULL, (uint32_t)q->dev->harvest_ordinal,
                                     q->dev->harvest_index, 0, ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS,
                                     ZE_COMMAND_QUEUE_PRIORITY_PRIORITY_LOW};
        if (zc_ze_real.ze_command_queue.pfnCreate(q->ctx->h, q->dev->h, &d, &q->harvest) != ZE_RESULT_SUCCESS)
            q->harvest = NULL;
    }
    ze_command_queue_handle_t h = q->harvest;
    pthread_mutex_unlock(&harvest_lock);
    return h;
}

/* What the harvest list does, done by the host instead (no harvest queue, or it refused the
 * harvest): blocks until the copy execution ran. Never leaves the gate closed. */
static void harvest_on_host(struct zc_list *l, struct zc_slot *s) {
    struct zc_ze_real *R = &zc_ze_real;
    atomic_fetch_add(&zc_ze.stalls, 1);
    /* bounded: a lost device never signals it */
    if (zc_ze_dev_on(l->dev) && zc_ze_event_wait(s->copied, zc_knobs.FINALIZE_TIMEOUT_MS * 1000000u) == ZE_RESULT_SUCCESS)
        for (uint32_t i = 0; i < l->ntmpl; i++) {
            ze_kernel_timestamp_result_t ts = {{0, 0}, {0, 0}};
            if (l->tmpl[i].inj) R->ze_event.pfnQueryKernelTimestamp(l->tmpl[i].inj, &ts);
            s->buf[i] = ts;
        }
    R->ze_event.pfnHostReset(s->copied);
    R->ze_event.pfnHostSignal(s->done);
    R->ze_event.pfnHostSignal(l->gate); /* last: it lets the next execution reset our events */
}

static void harvest_flush(ze_command_queue_handle_t hq, const struct exec_plan *plan, ze_command_list_handle_t *lists,
                          const uint32_t *idx, uint32_t k) {
    if (zc_ze_real.ze_command_queue.pfnExecuteCommandLists(hq, k, lists, NULL) == ZE_RESULT_SUCCESS) return;
    static atomic_flag warned = ATOMIC_FLAG_INIT;
    if (!atomic_flag_test_and_set(&warned))
        ZC_WARN("the harvest queue refused a submission: copy executions are harvested by the host (blocking)");
    for (uint32_t j = 0; j < k; j++) harvest_on_host(plan[idx[j]].list, plan[idx[j]].slot);
}

static void harvest_submit(struct zc_queue *q, const struct exec_plan *plan, uint32_t n) {
    ze_command_queue_handle_t hq = NULL;
    bool asked = false;
    ze_command_list_handle_t lists[16];
    uint32_t idx[16], k = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (!plan[i].slot || !plan[i].slot->harvest) continue;
        if (!asked) {
            hq = harvest_queue(q);
            asked = true;
        }
        if (!hq) {
            harvest_on_host(plan[i].list, plan[i].slot);
            continue;
        }
        idx[k] = i;
        lists[k++] = plan[i].slot->harvest;
        if (k == 16) {
            harvest_flush(hq, plan, lists, idx, k);
            k = 0;
        }
    }
    if (k) harvest_flush(hq, plan, lists, idx, k);
}

/* The app destroys its queue: ours goes with it, once idle. */
static void harvest_queue_destroy(struct zc_queue *q) {
    if (!q || !q->harvest) return;
    zc_ze_real.ze_command_queue.pfnSynchronize(q->harvest, zc_knobs.FINALIZE_TIMEOUT_MS * 1000000u);
    zc_ze_real.ze_command_queue.pfnDestroy(q->harvest);
    q->harvest = NULL;
}

/* A list about to be reset or destroyed: the harvests of its executions still run a little
 * after the app saw them complete; wait for them (bounded) and collect. */
static void slots_quiesce(struct zc_list *l) {
    bool waited = false;
    pthread_mutex_lock(&l->lock);
    for (uint32_t i = 0; i < l->nslots; i++) {
        struct zc_slot *s = &l->slots[i];
        if (!s->harvest || !__atomic_load_n(&s->busy, __ATOMIC_ACQUIRE)) continue;
        ze_event_handle_t done = s->done;
        pthread_mutex_unlock(&l->lock);
        if (zc_ze_dev_on(l->dev)) zc_ze_event_wait(done, zc_knobs.FINALIZE_TIMEOUT_MS * 1000000u);
        waited = true;
        pthread_mutex_lock(&l->lock);
    }
    pthread_mutex_unlock(&l->lock);
    if (waited) zc_ze_drain_all(false, 0);
}

/* Every execution of a list we timed is wrapped as [pre, list, post] (see struct zc_slot).
 * This runs even when timing is off or the collector has finalized: the list still signals
 * our events, and without pre the app's re-signal barriers would find them signalled from the
 * previous execution and fire early. */
void zc_ze_pre_zeCommandQueueExecuteCommandLists(ze_command_queue_execute_command_lists_params_t *p, struct zc_ze_call *c) {
    struct zc_queue *q = zc_map_get(&zc_ze.queues, *p->phCommandQueue);
    uint32_t n = *p->pnumCommandLists;
    ze_command_list_handle_t *in = *p->pphCommandLists;
    if (n == 0 || !in) return;
    ze_command_list_handle_t *out = NULL;
    struct exec_plan *plan = NULL;
    uint32_t o = 0;
    uint64_t now = !c->t ? 0 : zc_tick_to_ns(c->t0 ? c->t0 : zc_tick()); /* no clock read while off */
    for (uint32_t i = 0; i < n; i++) {
        struct zc_list *l = zc_ze_list(in[i]);
        struct zc_slot *s = NULL;
        struct zc_exec *x = NULL;
        bool recording = c->t && zc_on(ZC_F_DEVICE_TIMING);
        if (l && l->nuntimed && recording) atomic_fetch_add(&zc_ze.untimed, l->nuntimed);
        /* The same list more than once in this call: its events are signalled once per occurrence
         * without a reset in between (their timestamps are undefined then). With one execution
         * in flight (read back from the host) it is not timed in this call: helper lists around
         * all occurrences keep the app's events right, and hold the slot until the last ran. */
        uint32_t first = i, last = i;
        if (l && !l->immediate && l->ntmpl && l->mode != ZC_REG_DEVICE)
            for (uint32_t k = 0; k < n; k++)
                if (in[k] == in[i]) {
                    if (k < first) first = k;
                    last = k;
                }
        bool dup = first != last;
        if (dup && recording) atomic_fetch_add(&zc_ze.untimed, l->ntmpl);
        if (dup && l->mode == ZC_REG_SERIAL) l->serial_off = true; /* nothing says when it ends */
        /* a list read back between executions needs nothing once nobody records it: no barrier
         * of the app waits on its events (timed_pre) */
        if (l && !l->immediate && l->ntmpl && l->mode == ZC_REG_SERIAL &&
            (!recording || !zc_ze_dev_on(l->dev) || l->serial_off))
            l = NULL;
        if (l && !l->immediate && l->ntmpl && dup && i != first) {
            /* a later occurrence: the list alone, then the post list of the first's slot */
            struct zc_exec *fx = plan ? plan[first].exec : NULL;
            out[o++] = in[i];
            if (i == last && fx) out[o++] = fx->slot->post;
            continue;
        }
        if (l && !l->immediate && l->ntmpl) {
            if (!out) { /* first timed list: switch to our own array */
                if (!scratch_reserve(n)) {
                    ZC_FAIL(ZC_F_DEVICE_TIMING, "out of memory preparing an execution");
                    for (uint32_t k = i; k < n; k++) {
                        struct zc_list *lk = zc_ze_list(in[k]);
                        if (lk && !lk->immediate && lk->ntmpl && lk->mode != ZC_REG_SERIAL) host_reset(lk);
                    }
                    return;
                }
                out = tls_scratch.out;
                plan = tls_scratch.plan;
                memset(plan, 0, n * sizeof(*plan));
                for (uint32_t k = 0; k < i; k++) out[o++] = in[k];
            }
            pthread_mutex_lock(&l->lock);
            if (l->mode == ZC_REG_SERIAL) {
                pthread_mutex_unlock(&l->lock);
                if (serial_take(l) && (x = exec_new())) {
                    x->list = l;
                    x->submit_ns = now;
                    atomic_fetch_add(&l->inflight, 1);
                }
                out[o++] = in[i];
                plan[i] = (struct exec_plan){x ? l : NULL, x, NULL};
                continue;
            }
            s = slot_take(l);
            if (!s) {
                ZC_FAIL(ZC_F_DEVICE_TIMING, "cannot prepare helper command lists for an execution");
                host_reset(l);
            } else {
                s->busy = true;
                x = exec_new();
                if (x) {
                    x->list = l;
                    x->slot = s;
                    x->submit_ns = now;
                    x->dup = dup;
                }
            }
            pthread_mutex_unlock(&l->lock);
        }
        if (!out) continue;
        if (s) out[o++] = s->pre;
        out[o++] = in[i];
        if (s && !(dup && x)) out[o++] = s->post; /* a repeated list's comes after its last occurrence */
        plan[i] = (struct exec_plan){s ? l : NULL, x, s};
        if (s && !x) __atomic_store_n(&s->busy, false, __ATOMIC_RELEASE);
    }
    if (!out) return;
    c->lists = out;
    c->nlists = n;
    c->ptr = plan;
    c->inj = (ze_event_handle_t)q; /* the queue (may be NULL) travels to the epilogue */
    *p->pnumCommandLists = o;
    *p->pphCommandLists = out;
}

void zc_ze_post_zeCommandQueueExecuteCommandLists(ze_command_queue_execute_command_lists_params_t *p, ze_result_t r,
                                                  struct zc_ze_call *c) {
    struct exec_plan *plan = c->ptr;
    struct zc_queue *q = (struct zc_queue *)(void *)c->inj;
    /* the harvests of copy executions: whatever else happens, they open the gates */
    if (r == ZE_RESULT_SUCCESS && plan) harvest_submit(q, plan, c->nlists);
    /* an execution while recording is off (or after finalize) runs its helper lists, nothing more */
    bool record = r == ZE_RESULT_SUCCESS && q && q->stream && c->t && zc_active() && zc_on(ZC_F_DEVICE_TIMING);
    for (uint32_t i = 0; plan && i < c->nlists; i++) {
        struct zc_exec *x = plan[i].exec;
        struct zc_list *l = plan[i].list;
        if (!x) continue;
        if (!record || !zc_ze_dev_on(l->dev)) {
            if (!record && r == ZE_RESULT_SUCCESS && q && q->stream && zc_active() && x->slot && zc_ze_dev_on(l->dev)) {
                /* not recorded (recording is off): the slot is reused only once this execution's
                 * post list ran and its events are reset (the drainer sees to it), or a later
                 * recorded execution of the list would read this one's times */
                x->pending = 0;
                zc_ze_stream_await(q->stream, x);
                continue;
            }
            /* nothing will collect this execution (it failed, the device stopped timing, or the
             * collector has finalized); its slot may be reused at once (at worst a later read
             * sees a stale buffer, never a hang: pre/post still gate the events) */
            if (x->slot) __atomic_store_n(&x->slot->busy, false, __ATOMIC_RELEASE);
            zc_ze_exec_free(x);
            continue;
        }
        if (x->dup) { /* untimed: the slot is free once its post list ran */
            zc_ze_stream_await(q->stream, x);
            continue;
        }
        /* build every record first: once the first is pushed, a drain on another thread may
         * complete the whole execution and free x, so x is not touched after pushing */
        pthread_mutex_lock(&l->lock);
        struct zc_rec *recs = NULL, **tail = &recs;
        uint32_t count = 0;
        for (uint32_t k = 0; k < l->ntmpl; k++) {
            struct zc_rec *rec = zc_ze_rec_new();
            if (!rec) continue;
            rec->op = l->tmpl[k].op;
            rec->exec = x;
            rec->slot = k;
            /* copy engines cannot harvest into a buffer: their records read our events; compute
             * records read them too before their execution's harvest is complete */
            rec->inj = l->tmpl[k].inj;
            rec->submit_ns = x->submit_ns;
            rec->user_event = l->tmpl[k].user_event;
            *tail = rec;
            tail = &rec->next;
            count++;
        }
        l->executions++;
        pthread_mutex_unlock(&l->lock);
        x->pending = count;
        if (count == 0) {
            if (x->slot) __atomic_store_n(&x->slot->busy, false, __ATOMIC_RELEASE);
            zc_ze_exec_free(x);
            continue;
        }
        while (recs) {
            struct zc_rec *rec = recs;
            recs = rec->next;
            if (rec->user_event) zc_ze_uevent_set(rec->user_event, rec);
            zc_ze_stream_push(q->stream, rec);
        }
    }
    c->lists = NULL; /* per-thread scratch, kept for the next call */
    c->ptr = NULL;
    if (record && q->sync) zc_ze_drain_all(false, 0);
}

/* ---------------------------------------------------------------- events */
void zc_ze_pre_zeEventHostReset(ze_event_host_reset_params_t *p, struct zc_ze_call *c) {
    zc_ze_uevent_clear(*p->phEvent, false);
}

void zc_ze_pre_zeEventDestroy(ze_event_destroy_params_t *p, struct zc_ze_call *c) {
    zc_ze_uevent_clear(*p->phEvent, true);
}

/* The app's timestamp event was signalled by our barrier: give it its operation's times. */
void zc_ze_post_zeEventQueryKernelTimestamp(ze_event_query_kernel_timestamp_params_t *p, ze_result_t r,
                                            struct zc_ze_call *c) {
    if (r == ZE_RESULT_SUCCESS && *p->pdstptr) zc_ze_uevent_timestamps(*p->phEvent, *p->pdstptr);
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
    atomic_fetch_add_explicit(&kernel_gen, 1, memory_order_release);
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
    free(zc_map_put(&images, **p->pphImage, i, &err));
    if (err) free(i);
}

void zc_ze_pre_zeImageDestroy(ze_image_destroy_params_t *p, struct zc_ze_call *c) { free(zc_map_del(&images, *p->phImage)); }

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

/* ---------------------------------------------------------------- finalize */
void zc_ze_finalize(void) {
    zc_ze_bg_stop();
    zc_ze_drain_all(true, zc_knobs.FINALIZE_TIMEOUT_MS * 1000000u);
    zc_ze_streams_flush();
    zc_ze_clock_report();
    uint64_t stalls = atomic_load(&zc_ze.stalls), untimed = atomic_load(&zc_ze.untimed);
    if (stalls || untimed || zc_ze_dropped_records())
        ZC_INFO("device timing: %llu resubmission stall(s), %llu untimed operation(s), %llu dropped record(s)",
                (unsigned long long)stalls, (unsigned long long)untimed, (unsigned long long)zc_ze_dropped_records());
    (void)dir_names;
}
