/* SPDX-License-Identifier: MIT */
/* A stream's completed records, waiting to be written in start order (zc_ze_drain.c writes them
 * once nothing pending can start earlier). Records that complete in start order, the common case
 * (an execution's kernels, one after the other; an in-order list's operations), join a FIFO run
 * in constant time; the others go to a min-heap; the earliest is the earlier of the two heads.
 * A heap alone paid its depth per record: ~60 instructions per kernel of a list of 40,000
 * (bench/pipeline_ir.sh --case reglist). Stream locked throughout. */
#include "zc_ze_internal.h"

#include <stdlib.h>

static bool heap_push(struct zc_stream *s, struct zc_rec *r) {
    if (s->nheap == s->cap_done) {
        size_t ncap = s->cap_done ? 2 * s->cap_done : 64;
        struct zc_rec **n = realloc(s->done, ncap * sizeof(*n));
        if (!n) return false;
        s->done = n;
        s->cap_done = ncap;
    }
    size_t i = s->nheap++;
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (s->done[p]->start_ns <= r->start_ns) break;
        s->done[i] = s->done[p];
        i = p;
    }
    s->done[i] = r;
    return true;
}

static struct zc_rec *heap_pop(struct zc_stream *s) {
    struct zc_rec *top = s->done[0], *last = s->done[--s->nheap];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= s->nheap) break;
        if (c + 1 < s->nheap && s->done[c + 1]->start_ns < s->done[c]->start_ns) c++;
        if (last->start_ns <= s->done[c]->start_ns) break;
        s->done[i] = s->done[c];
        i = c;
    }
    if (s->nheap) s->done[i] = last;
    return top;
}

/* false: out of memory (the record is not kept: the caller drops it). r->next is free here: the
 * record left the pending list (or the held one) before. */
bool zc_ze_done_push(struct zc_stream *s, struct zc_rec *r) {
    if (!s->run_tail || s->run_tail->start_ns <= r->start_ns) {
        r->next = NULL;
        if (s->run_tail) s->run_tail->next = r;
        else s->run_head = r;
        s->run_tail = r;
    } else if (!heap_push(s, r)) {
        return false;
    }
    s->ndone++;
    return true;
}

/* The earliest completed record, NULL if none. */
struct zc_rec *zc_ze_done_first(const struct zc_stream *s) {
    struct zc_rec *h = s->nheap ? s->done[0] : NULL, *f = s->run_head;
    if (!h) return f;
    return f && f->start_ns <= h->start_ns ? f : h;
}

/* Takes r, the earliest completed record (zc_ze_done_first's: a caller that looked at it first
 * does not look twice). */
struct zc_rec *zc_ze_done_take(struct zc_stream *s, struct zc_rec *r) {
    s->ndone--;
    if (r != s->run_head) return heap_pop(s);
    s->run_head = r->next;
    if (!s->run_head) s->run_tail = NULL;
    r->next = NULL;
    return r;
}

/* Takes the earliest completed record (there is one). */
struct zc_rec *zc_ze_done_pop(struct zc_stream *s) { return zc_ze_done_take(s, zc_ze_done_first(s)); }

/* A list goes away: completed records of it stop pointing at it. */
void zc_ze_done_forget_list(struct zc_stream *s, const struct zc_list *l) {
    for (size_t i = 0; i < s->nheap; i++)
        if (s->done[i]->list == l) s->done[i]->list = NULL;
    for (struct zc_rec *r = s->run_head; r; r = r->next)
        if (r->list == l) r->list = NULL;
}
