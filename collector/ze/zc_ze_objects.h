/* SPDX-License-Identifier: MIT */
/* The lookups every Append and Execute makes, inline: a list or kernel by its handle through a
 * one-entry cache per thread, and whether device timing still runs. Their state (the maps, the
 * caches, the generations) is zc_ze_objects.c's. */
#ifndef ZC_ZE_OBJECTS_H
#define ZC_ZE_OBJECTS_H

#include "zc_ze_internal.h"

/* Appends look their list and kernel up on every call. A one-entry cache per thread avoids the
 * map's mutex; destroying any list (kernel) bumps a generation that invalidates every cache, so
 * a handle the driver recycles is never mistaken for the old object. */
struct zc_ze_tls_cache {
    const void *h;
    void *v;
    uint64_t gen;
};
extern _Thread_local struct zc_ze_tls_cache zc_ze_tls_list __attribute__((tls_model("initial-exec")));
extern _Thread_local struct zc_ze_tls_cache zc_ze_tls_kernel __attribute__((tls_model("initial-exec")));
extern atomic_uint_fast64_t zc_ze_list_gen, zc_ze_kernel_gen;

/* A miss: the map's answer, cached with the generation read before the lookup (zc_ze_objects.c;
 * out of line, so the hit keeps no generation across it). */
void *zc_ze_cached_miss(struct zc_ze_tls_cache *c, atomic_uint_fast64_t *gen, struct zc_map *m, const void *h);
static inline void *zc_ze_cached_get(struct zc_ze_tls_cache *c, atomic_uint_fast64_t *gen, struct zc_map *m,
                                     const void *h) {
    uint64_t g = atomic_load_explicit(gen, memory_order_acquire);
    /* no test for h == NULL: the map never holds NULL, so a NULL cached here maps to NULL */
    if (__builtin_expect(c->h == h && c->gen == g, 1)) return c->v;
    return zc_ze_cached_miss(c, gen, m, h);
}

static inline struct zc_list *zc_ze_list(ze_command_list_handle_t h) {
    return zc_ze_cached_get(&zc_ze_tls_list, &zc_ze_list_gen, &zc_ze.lists, h);
}
static inline struct zc_kernel *zc_ze_kernel(ze_kernel_handle_t h) {
    return zc_ze_cached_get(&zc_ze_tls_kernel, &zc_ze_kernel_gen, &zc_ze.kernels, h);
}
/* A list or kernel goes away (release: a cache that sees the new generation no longer hands it out). */
static inline void zc_ze_list_gone(void) { atomic_fetch_add_explicit(&zc_ze_list_gen, 1, memory_order_release); }
static inline void zc_ze_kernel_gone(void) { atomic_fetch_add_explicit(&zc_ze_kernel_gen, 1, memory_order_release); }

/* The Append path's test: one load while no device stopped timing. */
static inline bool zc_ze_dev_on_fast(const struct zc_dev *d) {
    return __builtin_expect(!atomic_load_explicit(&zc_ze.devs_off, memory_order_relaxed), 1) || zc_ze_dev_on(d);
}

#endif
