/* SPDX-License-Identifier: MIT */
#include "zc_map.h"

#include <stdlib.h>

#define TOMB ((const void *)1)

static size_t hash_ptr(const void *p, size_t cap) {
    uint64_t x = (uint64_t)(uintptr_t)p;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    return (size_t)x & (cap - 1);
}

static struct zc_map_slot *find(struct zc_map *m, const void *key) {
    if (!m->cap) return NULL;
    for (size_t i = hash_ptr(key, m->cap), n = 0; n < m->cap; i = (i + 1) & (m->cap - 1), n++) {
        if (m->slots[i].key == NULL) return NULL;
        if (m->slots[i].key == key) return &m->slots[i];
    }
    return NULL;
}

static int rehash(struct zc_map *m, size_t ncap) {
    struct zc_map_slot *ns = calloc(ncap, sizeof(*ns));
    if (!ns) return -1;
    for (size_t i = 0; i < m->cap; i++) {
        const void *k = m->slots[i].key;
        if (k == NULL || k == TOMB) continue;
        size_t j = hash_ptr(k, ncap);
        while (ns[j].key) j = (j + 1) & (ncap - 1);
        ns[j] = m->slots[i];
    }
    free(m->slots);
    m->slots = ns;
    m->cap = ncap;
    m->used = m->live;
    return 0;
}

void *zc_map_get(struct zc_map *m, const void *key) {
    pthread_mutex_lock(&m->lock);
    struct zc_map_slot *s = find(m, key);
    void *v = s ? s->val : NULL;
    pthread_mutex_unlock(&m->lock);
    return v;
}

void *zc_map_put(struct zc_map *m, const void *key, void *val, int *err) {
    pthread_mutex_lock(&m->lock);
    *err = 0;
    void *old = NULL;
    struct zc_map_slot *s = find(m, key);
    if (s) {
        old = s->val;
        s->val = val;
        goto out;
    }
    if ((m->used + 1) * 2 > m->cap && rehash(m, m->cap ? (m->live + 1) * 4 > m->cap ? m->cap * 2 : m->cap : 64) != 0) {
        *err = -1;
        goto out;
    }
    size_t i = hash_ptr(key, m->cap);
    while (m->slots[i].key && m->slots[i].key != TOMB) i = (i + 1) & (m->cap - 1);
    if (m->slots[i].key == NULL) m->used++;
    m->slots[i].key = key;
    m->slots[i].val = val;
    m->live++;
out:
    pthread_mutex_unlock(&m->lock);
    return old;
}

void *zc_map_del(struct zc_map *m, const void *key) {
    pthread_mutex_lock(&m->lock);
    struct zc_map_slot *s = find(m, key);
    void *v = NULL;
    if (s) {
        v = s->val;
        s->key = TOMB;
        s->val = NULL;
        m->live--;
    }
    pthread_mutex_unlock(&m->lock);
    return v;
}

void zc_map_each(struct zc_map *m, void (*fn)(const void *key, void *val, void *arg), void *arg) {
    pthread_mutex_lock(&m->lock);
    for (size_t i = 0; i < m->cap; i++)
        if (m->slots[i].key && m->slots[i].key != TOMB) fn(m->slots[i].key, m->slots[i].val, arg);
    pthread_mutex_unlock(&m->lock);
}
