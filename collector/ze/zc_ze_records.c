/* SPDX-License-Identifier: MIT */
/* What a record holds and gives back, below both the hooks that make records and the drain that
 * completes them: the record and execution free lists, an execution's helper slot, and a list's
 * injected events (its own pool, the events drainers hand back, the events re-signal barriers
 * still wait on). */
#include "zc_ze_internal.h"

#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- records */
static pthread_mutex_t free_lock = PTHREAD_MUTEX_INITIALIZER;
static struct zc_rec *free_recs;

/* Records are allocated and freed by drainers (immediate lists) and by Execute (regular lists):
 * each thread keeps the records it freed and takes more from the shared list 64 at a time, so
 * the lock is taken once per batch, never per record. */
#define ZC_REC_BATCH 64
static _Thread_local struct zc_rec *tls_recs __attribute__((tls_model("initial-exec")));
static _Thread_local unsigned tls_nrecs __attribute__((tls_model("initial-exec")));

struct zc_rec *zc_ze_rec_new(void) {
    struct zc_rec *r = tls_recs;
    if (!r) {
        pthread_mutex_lock(&free_lock);
        struct zc_rec *first = free_recs, *last = NULL;
        unsigned k = 0;
        for (struct zc_rec *x = first; x && k < ZC_REC_BATCH; x = x->next) last = x, k++;
        if (last) {
            free_recs = last->next;
            last->next = NULL;
        }
        pthread_mutex_unlock(&free_lock);
        tls_recs = r = first;
        tls_nrecs = k;
    }
    if (!r) { /* a batch at once (an Execute of 500,000 kernels makes as many records): records
               * are never freed to malloc, only kept in the free lists */
        struct zc_rec *slab = malloc(ZC_REC_BATCH * sizeof(*slab));
        if (!slab) return NULL;
        for (unsigned i = 0; i + 1 < ZC_REC_BATCH; i++) slab[i].next = &slab[i + 1];
        slab[ZC_REC_BATCH - 1].next = NULL;
        tls_recs = r = slab;
        tls_nrecs = ZC_REC_BATCH;
    }
    tls_recs = r->next;
    tls_nrecs--;
    memset(r, 0, sizeof(*r));
    return r;
}

void zc_ze_rec_free(struct zc_rec *r) {
    r->next = tls_recs;
    tls_recs = r;
    tls_nrecs++;
}

/* A thread keeps at most two batches; the rest goes back to the shared list (one lock). */
void zc_ze_rec_release_flush(void) {
    if (tls_nrecs <= 2 * ZC_REC_BATCH) return;
    struct zc_rec *first = tls_recs, *last = first;
    for (unsigned k = 1; k < tls_nrecs - ZC_REC_BATCH; k++) last = last->next;
    tls_recs = last->next;
    tls_nrecs = ZC_REC_BATCH;
    pthread_mutex_lock(&free_lock);
    last->next = free_recs;
    free_recs = first;
    pthread_mutex_unlock(&free_lock);
}

/* A thread that exits hands its cached records back (thousands of short-lived threads would
 * otherwise each keep up to two batches). */
void zc_ze_thread_exit(void) {
    if (!tls_recs) return;
    struct zc_rec *last = tls_recs;
    while (last->next) last = last->next;
    pthread_mutex_lock(&free_lock);
    last->next = free_recs;
    free_recs = tls_recs;
    pthread_mutex_unlock(&free_lock);
    tls_recs = NULL;
    tls_nrecs = 0;
}

/* ---------------------------------------------------------------- executions */
/* Executions are reused (as Execute's per-call arrays are, zc_ze_exec.c): Execute is a hot path in
 * apps that resubmit lists, and allocates only until the largest call has been seen. */
static pthread_mutex_t exec_free_lock = PTHREAD_MUTEX_INITIALIZER;
static struct zc_exec *exec_free;

struct zc_exec *zc_ze_exec_new(void) {
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

/* The last record of the execution is done (written or dropped): nothing will read its slot. */
void zc_ze_exec_release(struct zc_exec *x) {
    if (x->slot) zc_ze_slot_release(x->slot);
    zc_ze_exec_free(x);
}

/* `done` stays signalled until the slot is taken again (slot_take resets it): an Execute that
 * waits for a slot waits on the oldest one's `done`, which must not be reset under it by a
 * drainer that collected that execution first. */
void zc_ze_slot_release(struct zc_slot *s) {
    if (s->started) zc_ze_real.ze_event.pfnHostReset(s->started);
    /* release: the next Execute that sees !busy sees the reset event */
    __atomic_store_n(&s->busy, false, __ATOMIC_RELEASE);
}

/* ---------------------------------------------------------------- injected events of a list */
/* Room for n more events handed back to the list (doubling); false if memory for them could not
 * be had (the room there is stays). l->lock held. */
static bool ret_room_locked(struct zc_list *l, uint32_t n) {
    if (l->cap_ret - l->nret >= n) return true;
    uint32_t ncap = l->cap_ret ? l->cap_ret : 64;
    while (ncap - l->nret < n) ncap *= 2;
    ze_event_handle_t *p = realloc(l->ret, ncap * sizeof(*p));
    if (!p) return false;
    l->ret = p;
    l->cap_ret = ncap;
    return true;
}

/* An immediate list's event whose operation completed: reset here (a drainer, off the app's
 * path) and handed back to the list; l->lock held. */
static void event_return_locked(struct zc_list *l, ze_event_handle_t e) {
    zc_ze_real.ze_event.pfnHostReset(e);
    if (!ret_room_locked(l, 1)) { /* the context's pool takes it instead */
        zc_ze_event_put(l->ctx, e);
        return;
    }
    l->ret[l->nret++] = e;
}

bool zc_ze_list_pool_reserve(struct zc_list *l, uint32_t n) {
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
 * batch from the context's pool (one lock for 64). The appending thread only. Every event in a
 * list's pool is unsignalled (drainers reset what they hand back, the context's pool resets what
 * it hands out), except a regular list's earlier builds' events (pool_used): a regular list's
 * first execution relies on it (struct zc_slot's pre0). */
ze_event_handle_t __attribute__((noinline)) zc_ze_event_refill(struct zc_list *l) {
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
        /* a regular list's: its earlier builds' events, maybe signalled (zc_ze_lifetime.c) */
        if (!l->immediate) l->pool_used = true, l->fresh = false;
    }
    pthread_mutex_unlock(&l->lock);
    if (!l->npool && zc_ze_list_pool_reserve(l, 64)) {
        l->npool = zc_ze_event_get_batch(l->ctx, l->pool, 64, l->raw_ok);
        l->pool_used = false;
    }
    return l->npool ? l->pool[--l->npool] : NULL;
}

void zc_ze_event_unget(struct zc_list *l, ze_event_handle_t e) {
    if (l->npool < l->cap_pool) l->pool[l->npool++] = e;
    else if (l->raw_ok) zc_ze_event_put_n(l->ctx, &e, 1, ZC_EV_USED); /* (cannot happen: it was just taken) */
    else zc_ze_event_put(l->ctx, e);
}

/* A later operation of the list completed: any re-signal barrier appended before it has run, so
 * the events those barriers waited on can be reused. l->lock held. */
static void deferred_release_before(struct zc_list *l, struct zc_imm *im, uint64_t seq) {
    if (!im->n) return; /* (no store: the appending thread reads im->sync on this line) */
    uint32_t k = 0;
    for (uint32_t i = 0; i < im->n; i++) {
        if (im->v[i].seq < seq) {
            zc_ze_uevent_forget_inj(im->v[i].user_event, im->v[i].inj);
            event_return_locked(l, im->v[i].inj);
        } else {
            im->v[k++] = im->v[i];
        }
    }
    im->n = k;
}

/* Our barrier re-signalling the app's event may not have run yet: keep the event until a later
 * operation of the list completes (or the list goes away). Out of memory, the event is leaked
 * rather than reset under a waiting barrier. l->lock held. */
static void deferred_add(struct zc_imm *im, const struct zc_rec *r) {
    if (im->n == im->cap) {
        uint32_t ncap = im->cap ? 2 * im->cap : 16;
        struct zc_deferred *n = realloc(im->v, ncap * sizeof(*n));
        if (n) {
            im->v = n;
            im->cap = ncap;
        }
    }
    if (im->n < im->cap) im->v[im->n++] = (struct zc_deferred){r->inj, r->seq, r->user_event};
}

void zc_ze_list_event_done(struct zc_list *l, const struct zc_rec *r) {
    pthread_mutex_lock(&l->lock);
    struct zc_imm *im = zc_ze_imm(l);
    deferred_release_before(l, im, r->seq);
    if (r->user_event) deferred_add(im, r);
    else event_return_locked(l, r->inj);
    pthread_mutex_unlock(&l->lock);
}

/* Immediate operations of l completed, up to append number last, none of them re-signalling an
 * app event (a drainer's direct pass): their n events are reset and handed back, and so are
 * the events of re-signal barriers appended before the last: one lock for them all. */
void zc_ze_list_events_done(struct zc_list *l, const ze_event_handle_t *ev, uint32_t n, uint64_t last) {
    for (uint32_t i = 0; i < n; i++) zc_ze_real.ze_event.pfnHostReset(ev[i]);
    pthread_mutex_lock(&l->lock);
    deferred_release_before(l, zc_ze_imm(l), last);
    ret_room_locked(l, n); /* what does not fit goes to the context's pool below */
    uint32_t k = l->cap_ret - l->nret < n ? l->cap_ret - l->nret : n;
    memcpy(l->ret + l->nret, ev, k * sizeof(*ev));
    l->nret += k;
    for (uint32_t i = k; i < n; i++) zc_ze_event_put(l->ctx, ev[i]); /* out of memory: the context's pool */
    pthread_mutex_unlock(&l->lock);
}
