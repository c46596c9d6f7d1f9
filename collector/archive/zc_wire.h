/* SPDX-License-Identifier: MIT */
/* Definitions as 64-bit words (zc_wire.c): the one encoding of the unification message
 * (zc_merge_serialize) and of the salvage journal's definition records, and its bounds-checked
 * reader (zc_merge_root, zecoll-salvage). */
#ifndef ZC_WIRE_H
#define ZC_WIRE_H

#include "zc_def_types.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A growing buffer of 64-bit words (the serialised form sent to rank 0). */
struct zc_wbuf {
    uint64_t *w;
    size_t n, cap;
    bool oom; /* a word could not be stored: the buffer is incomplete */
};

void zc_wbuf_put(struct zc_wbuf *b, uint64_t v);
void zc_wbuf_put_n(struct zc_wbuf *b, const uint64_t *v, size_t n);
/* length with the NUL, then the bytes with their NUL, zero-padded to whole words */
void zc_wbuf_put_str(struct zc_wbuf *b, const char *s);

/* Definitions [from, n) of one kind, element by element: the one encoding shared by the
 * unification message (zc_merge_serialize) and the salvage journal (zc_journal.c). */
void zc_wbuf_put_strings(struct zc_wbuf *b, const struct zc_defs *d, uint32_t from);
void zc_wbuf_put_regions(struct zc_wbuf *b, const struct zc_defs *d, uint32_t from);
void zc_wbuf_put_devices(struct zc_wbuf *b, const struct zc_defs *d, uint32_t from);
void zc_wbuf_put_groups(struct zc_wbuf *b, const struct zc_defs *d, uint32_t from);
void zc_wbuf_put_comms(struct zc_wbuf *b, const struct zc_defs *d, uint32_t from);
void zc_wbuf_put_metrics(struct zc_wbuf *b, const struct zc_defs *d, uint32_t from);
typedef void (*zc_wbuf_put_defs_fn)(struct zc_wbuf *b, const struct zc_defs *d, uint32_t from);

/* Reading such words back, bounds-checked: past the end, or a string whose length does not fit or
 * whose NUL is not where its length says, sets bad (and returns 0, "" or NULL). */
struct zc_rbuf {
    const uint64_t *w;
    size_t n, i;
    bool bad;
};
uint64_t zc_rbuf_get(struct zc_rbuf *r);
const char *zc_rbuf_get_str(struct zc_rbuf *r);
const uint64_t *zc_rbuf_get_n(struct zc_rbuf *r, uint64_t n); /* n words, or NULL */

#endif
