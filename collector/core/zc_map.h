/* SPDX-License-Identifier: MIT */
/* A pointer-keyed hash map (open addressing, tombstones) guarded by its own mutex. Used to find
 * collector state for driver handles; handles are recycled by drivers, so entries are removed in
 * the destroy prologues. */
#ifndef ZC_MAP_H
#define ZC_MAP_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

struct zc_map_slot {
    const void *key; /* NULL = empty, ZC_MAP_TOMB = deleted */
    void *val;
};

struct zc_map {
    pthread_mutex_t lock;
    struct zc_map_slot *slots;
    size_t cap, used, live;
};

#define ZC_MAP_INIT {PTHREAD_MUTEX_INITIALIZER, NULL, 0, 0, 0}

void *zc_map_get(struct zc_map *m, const void *key);
/* Inserts or replaces; returns the previous value (NULL if none) or sets *err on allocation failure. */
void *zc_map_put(struct zc_map *m, const void *key, void *val, int *err);
void *zc_map_del(struct zc_map *m, const void *key);
/* Calls fn for every entry, with the map locked (fn must not touch the map). */
void zc_map_each(struct zc_map *m, void (*fn)(const void *key, void *val, void *arg), void *arg);

#endif
