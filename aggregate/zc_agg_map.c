/* SPDX-License-Identifier: MIT */
/* A u64 -> (u64, u64) map with deletion, for the callsite links of one process: Appends wait in
 * it for their device record (or records for their Append) and leave it when matched, so it
 * holds only what is in flight. Open addressing with linear probing, at most half full. */
#include "zc_agg_read.h"

#include <stdlib.h>
#include <string.h>

static bool map_grow(struct u64map *m) {
    if ((m->n + 1) * 2 <= m->cap) return true;
    size_t nc = m->cap ? 2 * m->cap : 64;
    struct u64map x = {calloc(nc, 8), calloc(nc, 8), calloc(nc, 8), calloc(nc, 1), nc, 0, false};
    if (!x.k || !x.v0 || !x.v1 || !x.used) {
        free(x.k), free(x.v0), free(x.v1), free(x.used);
        m->oom = true;
        return false;
    }
    for (size_t i = 0; i < m->cap; i++) {
        if (!m->used[i]) continue;
        size_t j = agg_hash64(m->k[i]) & (nc - 1);
        while (x.used[j]) j = (j + 1) & (nc - 1);
        x.used[j] = 1;
        x.k[j] = m->k[i];
        x.v0[j] = m->v0[i];
        x.v1[j] = m->v1[i];
        x.n++;
    }
    free(m->k), free(m->v0), free(m->v1), free(m->used);
    *m = x;
    return true;
}

size_t agg_map_find(const struct u64map *m, uint64_t k) {
    if (!m->cap) return SIZE_MAX;
    for (size_t j = agg_hash64(k) & (m->cap - 1);; j = (j + 1) & (m->cap - 1)) {
        if (!m->used[j]) return SIZE_MAX;
        if (m->k[j] == k) return j;
    }
}

void agg_map_put(struct u64map *m, uint64_t k, uint64_t v0, uint64_t v1) {
    size_t j = agg_map_find(m, k);
    if (j == SIZE_MAX) {
        if (!map_grow(m)) return;
        j = agg_hash64(k) & (m->cap - 1);
        while (m->used[j]) j = (j + 1) & (m->cap - 1);
        m->used[j] = 1;
        m->k[j] = k;
        m->n++;
    }
    m->v0[j] = v0;
    m->v1[j] = v1;
}

/* Backward-shift deletion (no tombstones): every entry after the hole that may move into it
 * does, so each chain stays unbroken and lookups stop at the first empty slot. */
void agg_map_del(struct u64map *m, size_t j) {
    size_t mask = m->cap - 1;
    m->used[j] = 0;
    m->n--;
    for (size_t i = (j + 1) & mask; m->used[i]; i = (i + 1) & mask) {
        size_t home = agg_hash64(m->k[i]) & mask;
        /* move i into the hole j if its home is not in (j, i] */
        bool between = j <= i ? (home > j && home <= i) : (home > j || home <= i);
        if (between) continue;
        m->used[j] = 1;
        m->k[j] = m->k[i];
        m->v0[j] = m->v0[i];
        m->v1[j] = m->v1[i];
        m->used[i] = 0;
        j = i;
    }
}

void agg_map_free(struct u64map *m) {
    free(m->k), free(m->v0), free(m->v1), free(m->used);
    memset(m, 0, sizeof(*m));
}
