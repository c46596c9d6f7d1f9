/* SPDX-License-Identifier: MIT */
/* An immediate list's inbox (zc_ze_inbox.h): its blocks, the producer's slow path and the
 * consumer's hand-back of emptied blocks. Streams and records are zc_ze_drain.c's. */
#include "zc_ze_inbox.h"

#include <stdlib.h>
#include <string.h>

static struct zc_inbox_block *block_new(void) {
    struct zc_inbox_block *b = aligned_alloc(64, sizeof(*b));
    if (b) b->next = NULL;
    return b;
}

struct zc_inbox *zc_ze_inbox_new(struct zc_list *l, struct zc_stream *s) {
    struct zc_inbox *ib = aligned_alloc(64, sizeof(*ib));
    if (!ib) return NULL;
    memset(ib, 0, sizeof(*ib));
    if (!(ib->pb = ib->cb = block_new())) {
        free(ib);
        return NULL;
    }
    pthread_mutex_init(&ib->lock, NULL);
    ib->plim = ZC_INBOX_BLOCK;
    ib->list = l;
    ib->stream = s;
    return ib;
}

void zc_ze_inbox_destroy(struct zc_inbox *ib) {
    for (struct zc_inbox_block *b = ib->returned, *n; b; b = n) n = b->next, free(b);
    for (struct zc_inbox_block *b = ib->pfree, *n; b; b = n) n = b->next, free(b);
    free(ib->cb); /* == pb: everything was taken */
    pthread_mutex_destroy(&ib->lock);
    free(ib);
}

bool zc_ze_inbox_backlog(struct zc_inbox *ib) {
    uint64_t tail = atomic_load_explicit(&ib->tail, memory_order_relaxed);
    if (ib->pi != ZC_INBOX_BLOCK || tail - ib->head_seen <= ZC_INBOX_HURRY_ABOVE) return false;
    ib->head_seen = atomic_load_explicit(&ib->head, memory_order_acquire);
    uint64_t backlog = tail - ib->head_seen;
    /* the drainer's interval stretched over a burst: it passes now (its events come back) */
    if (backlog > ZC_INBOX_HURRY_ABOVE) zc_ze_bg_hurry();
    /* keep memory bounded at an amortised cost; the app synchronising never gets here */
    return backlog > ZC_INBOX_DRAIN_ABOVE;
}

bool zc_ze_inbox_push_slow(struct zc_inbox *ib, const struct zc_inbox_entry *e) {
    uint64_t tail = atomic_load_explicit(&ib->tail, memory_order_relaxed);
    if (ib->pi == ZC_INBOX_BLOCK) {
        struct zc_inbox_block *b = ib->pfree;
        if (!b) { /* the blocks the drainer emptied, all at once */
            pthread_mutex_lock(&ib->lock);
            b = ib->returned;
            ib->returned = NULL;
            pthread_mutex_unlock(&ib->lock);
        }
        if (!b && !(b = block_new())) return false;
        ib->pfree = b->next;
        b->next = NULL;
        ib->pb->next = b; /* published with the first entry of b (release below) */
        ib->pb = b;
        ib->pi = 0;
    }
    ib->pb->e[ib->pi++] = *e;
    atomic_store_explicit(&ib->tail, tail + 1, memory_order_release);
    zc_ze_bg_poke();
    return true;
}

void zc_ze_inbox_take_end(struct zc_inbox *ib, struct zc_inbox_take *t) {
    atomic_store_explicit(&ib->head, t->head, memory_order_release);
    if (!t->emptied) return;
    pthread_mutex_lock(&ib->lock);
    t->last_emptied->next = ib->returned;
    ib->returned = t->emptied;
    pthread_mutex_unlock(&ib->lock);
}
