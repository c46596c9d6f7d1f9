/* SPDX-License-Identifier: MIT */
/* An immediate list's inbox: the single-producer queue between the thread appending to the list
 * and the drainers of its engine's stream. The producer's push is inline (the Append path); its
 * slow path and the blocks' lifetime are in zc_ze_inbox.c. It knows nothing of streams or records:
 * zc_ze_drain.c takes the entries and turns them into records. */
#ifndef ZC_ZE_INBOX_H
#define ZC_ZE_INBOX_H

#include "zc_ze_internal.h"

/* An immediate list's timed operations on their way to its engine's stream: a queue of 4 KiB
 * blocks written by the one thread appending to the list and read by drainers (one at a time:
 * the stream's drain_lock). An Append writes one 64-byte entry and publishes it with a plain
 * release store; the drainer turns entries into records and hands emptied blocks back. The
 * appending thread never waits: it takes a lock once per 63 entries (a block back from the
 * drainer), and drains only when a list nobody synchronises holds ZC_INBOX_DRAIN_ABOVE entries. */
#define ZC_INBOX_BLOCK 63u
#define ZC_INBOX_DRAIN_ABOVE 65536u
/* Past this many entries not yet taken, the producer hurries the drainer (zc_ze_bg_hurry): one
 * check per block, so each list holds at most about this many of our events in flight. */
#define ZC_INBOX_HURRY_ABOVE 8192u
struct zc_inbox_entry {
    ze_event_handle_t inj;
    uint64_t submit;     /* zc_tick() of the Append */
    uint64_t unused;     /* (64 bytes: an entry is one cache line; its append number is its position) */
    struct zc_rec *rec;  /* a prepared record (operations that re-signal an app event), or NULL */
    struct zc_opdesc op;
};
struct zc_inbox_block {
    struct zc_inbox_entry e[ZC_INBOX_BLOCK];
    struct zc_inbox_block *next;
} __attribute__((aligned(64))); /* 4 KiB: aligned_alloc wants a size that is a multiple of 64 */
struct zc_inbox { /* a multiple of 64 bytes (its aligned member) */
    /* the appending thread's */
    struct zc_inbox_block *pb;   /* block being filled */
    uint32_t pi;                 /* entries in it */
    uint32_t plim;               /* entries written in place per block: ZC_INBOX_BLOCK, or 0 where
                                  * every push takes the slow path (zc_ze_inbox_slow_only) */
    struct zc_inbox_block *pfree;/* empty blocks ready for use */
    uint64_t head_seen;          /* the consumer's head as last read */
    _Atomic uint64_t tail;       /* entries published */
    /* the drainer's */
    _Atomic uint64_t head __attribute__((aligned(64))); /* entries taken */
    struct zc_inbox_block *cb;   /* block being read */
    uint32_t ci;
    /* emptied blocks on their way back (lock) */
    pthread_mutex_t lock;
    struct zc_inbox_block *returned;
    struct zc_list *list;
    struct zc_stream *stream;
    struct zc_inbox *next;       /* the stream's inboxes (changed under drain_lock and lock) */
};
/* The slow part of a push: a new block (false: out of memory, the entry is not queued). */
bool zc_ze_inbox_push_slow(struct zc_inbox *ib, const struct zc_inbox_entry *e);
/* Whether the next entry can be written in place (else a push takes the slow path: a new block,
 * before which the producer checks the backlog); then fill zc_ze_inbox_slot and publish. */
static inline bool zc_ze_inbox_fast(const struct zc_inbox *ib) { return __builtin_expect(ib->pi < ib->plim, 1); }
/* From now on every push of ib takes its slow path (which writes in place while the block has
 * room): the producer wants each one to pass there (a synchronous list drains after each). */
static inline void zc_ze_inbox_slow_only(struct zc_inbox *ib) { ib->plim = 0; }
static inline struct zc_inbox_entry *zc_ze_inbox_slot(struct zc_inbox *ib) { return &ib->pb->e[ib->pi]; }
/* The append number the next entry gets (1, 2, ...: its position in the inbox; the publisher's
 * own count). */
static inline uint64_t zc_ze_inbox_next_seq(const struct zc_inbox *ib) {
    return atomic_load_explicit(&ib->tail, memory_order_relaxed) + 1;
}
static inline void zc_ze_inbox_publish(struct zc_inbox *ib) {
    ib->pi++;
    atomic_store_explicit(&ib->tail, atomic_load_explicit(&ib->tail, memory_order_relaxed) + 1, memory_order_release);
    zc_ze_bg_poke();
}
/* The producer's block is full and more than ZC_INBOX_DRAIN_ABOVE entries wait: nobody collects
 * this list (an app that never synchronises, no drainer thread), the stream should be drained
 * before the push (called just before zc_ze_inbox_push_slow). */
bool zc_ze_inbox_backlog(struct zc_inbox *ib);
/* A new inbox of list l on stream s (not yet on the stream's list of inboxes), NULL without memory;
 * and its end, once everything was taken and it is off its stream. */
struct zc_inbox *zc_ze_inbox_new(struct zc_list *l, struct zc_stream *s);
void zc_ze_inbox_destroy(struct zc_inbox *ib);

/* The consumer (one at a time: the stream's drain_lock): the entries published since the last
 * take, in order; take_end hands the blocks it emptied back to the producer. */
struct zc_inbox_take {
    uint64_t head, tail;
    struct zc_inbox_block *emptied, *last_emptied;
};
static inline void zc_ze_inbox_take_begin(struct zc_inbox *ib, struct zc_inbox_take *t) {
    t->head = atomic_load_explicit(&ib->head, memory_order_relaxed);
    t->tail = atomic_load_explicit(&ib->tail, memory_order_acquire);
    t->emptied = t->last_emptied = NULL;
}
/* The next entry, or NULL; its append number (its position in the inbox) is then t->head. */
static inline const struct zc_inbox_entry *zc_ze_inbox_take_next(struct zc_inbox *ib, struct zc_inbox_take *t) {
    if (t->head == t->tail) return NULL;
    if (ib->ci == ZC_INBOX_BLOCK) { /* the producer linked the next block before publishing into it */
        struct zc_inbox_block *b = ib->cb;
        ib->cb = b->next;
        ib->ci = 0;
        b->next = t->emptied;
        t->emptied = b;
        if (!t->last_emptied) t->last_emptied = b;
    }
    t->head++;
    return &ib->cb->e[ib->ci++];
}
void zc_ze_inbox_take_end(struct zc_inbox *ib, struct zc_inbox_take *t);
static inline bool zc_ze_inbox_empty(const struct zc_inbox *ib) {
    return atomic_load_explicit(&ib->tail, memory_order_acquire) ==
           atomic_load_explicit(&ib->head, memory_order_relaxed);
}

#endif
