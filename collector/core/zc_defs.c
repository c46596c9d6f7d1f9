/* SPDX-License-Identifier: MIT */
/* Local definitions (strings, regions, devices, accelerator location groups). Ids are dense and
 * ascending per type in creation order, as OTF2 requires. Lookups happen on cold paths (first
 * use of an API, kernel creation), so one mutex and a linear-probing hash for strings suffice. */
#include "zc_defs.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static pthread_mutex_t defs_lock = PTHREAD_MUTEX_INITIALIZER;
struct zc_defs zc_defs;

uint32_t zc_param_callsite, zc_region_flush;

static uint64_t hash_str(const char *s) {
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static int grow(void **arr, uint32_t *cap, size_t elem) {
    uint32_t ncap = *cap ? *cap * 2 : 64;
    void *n = realloc(*arr, ncap * elem);
    if (!n) return -1;
    *arr = n;
    *cap = ncap;
    return 0;
}

static uint32_t string_locked(const char *s) {
    struct zc_defs *d = &zc_defs;
    if (d->nstrings * 2 >= d->hash_cap) {
        uint32_t ncap = d->hash_cap ? d->hash_cap * 2 : 256;
        uint32_t *nh = malloc(ncap * sizeof(*nh));
        if (!nh) return ZC_NO_ID;
        memset(nh, 0xff, ncap * sizeof(*nh));
        for (uint32_t i = 0; i < d->nstrings; i++) {
            uint64_t h = hash_str(d->strings[i]) & (ncap - 1);
            while (nh[h] != ZC_NO_ID) h = (h + 1) & (ncap - 1);
            nh[h] = i;
        }
        free(d->hash);
        d->hash = nh;
        d->hash_cap = ncap;
    }
    uint64_t h = hash_str(s) & (d->hash_cap - 1);
    while (d->hash[h] != ZC_NO_ID) {
        if (strcmp(d->strings[d->hash[h]], s) == 0) return d->hash[h];
        h = (h + 1) & (d->hash_cap - 1);
    }
    if (d->nstrings == d->cap_strings && grow((void **)&d->strings, &d->cap_strings, sizeof(char *))) return ZC_NO_ID;
    char *copy = strdup(s);
    if (!copy) return ZC_NO_ID;
    d->strings[d->nstrings] = copy;
    d->hash[h] = d->nstrings;
    return d->nstrings++;
}

uint32_t zc_def_string(const char *s) {
    pthread_mutex_lock(&defs_lock);
    uint32_t id = string_locked(s);
    pthread_mutex_unlock(&defs_lock);
    return id;
}

uint32_t zc_def_region(const char *name, enum zc_region_role role, enum zc_paradigm paradigm) {
    pthread_mutex_lock(&defs_lock);
    struct zc_defs *d = &zc_defs;
    uint32_t s = string_locked(name), id = ZC_NO_ID;
    if (s == ZC_NO_ID) goto out;
    /* regions are unique by (name, role, paradigm); few enough that a scan is fine (cold path) */
    for (uint32_t i = 0; i < d->nregions; i++)
        if (d->regions[i].name == s && d->regions[i].role == role && d->regions[i].paradigm == paradigm) {
            id = i;
            goto out;
        }
    if (d->nregions == d->cap_regions && grow((void **)&d->regions, &d->cap_regions, sizeof(*d->regions))) goto out;
    d->regions[d->nregions] = (struct zc_def_region){s, role, paradigm};
    id = d->nregions++;
out:
    pthread_mutex_unlock(&defs_lock);
    return id;
}

uint32_t zc_def_device(uint32_t index, const char *name, const char *uuid_hex) {
    pthread_mutex_lock(&defs_lock);
    struct zc_defs *d = &zc_defs;
    uint32_t id = ZC_NO_ID;
    for (uint32_t i = 0; i < d->ndevices; i++)
        if (d->devices[i].index == index) {
            id = i;
            goto out;
        }
    if (d->ndevices == d->cap_devices && grow((void **)&d->devices, &d->cap_devices, sizeof(*d->devices))) goto out;
    d->devices[d->ndevices] = (struct zc_def_device){index, string_locked(name), string_locked(uuid_hex)};
    id = d->ndevices++;
out:
    pthread_mutex_unlock(&defs_lock);
    return id;
}

uint32_t zc_def_accel_group(uint32_t device_def, uint32_t context_index) {
    pthread_mutex_lock(&defs_lock);
    struct zc_defs *d = &zc_defs;
    uint32_t id = ZC_NO_ID;
    for (uint32_t i = 0; i < d->ngroups; i++)
        if (d->groups[i].device == device_def && d->groups[i].context == context_index) {
            id = i + 1;
            goto out;
        }
    if (d->ngroups == d->cap_groups && grow((void **)&d->groups, &d->cap_groups, sizeof(*d->groups))) goto out;
    d->groups[d->ngroups] = (struct zc_def_group){device_def, context_index};
    id = ++d->ngroups; /* location group 0 is the process */
out:
    pthread_mutex_unlock(&defs_lock);
    return id;
}

uint32_t zc_def_comm(enum zc_comm_kind kind, const char *name, uint32_t parent, const uint64_t *members, uint32_t n,
                     const uint64_t *remote, uint32_t nremote, const char *key, size_t keylen) {
    uint64_t *m = malloc(((size_t)n + nremote + 1) * sizeof(uint64_t));
    char *k = malloc(keylen + 1);
    if (!m || !k) {
        free(m);
        free(k);
        return ZC_NO_ID;
    }
    if (n) memcpy(m, members, n * sizeof(uint64_t));
    if (nremote) memcpy(m + n, remote, nremote * sizeof(uint64_t));
    memcpy(k, key, keylen);
    k[keylen] = 0;
    pthread_mutex_lock(&defs_lock);
    struct zc_defs *d = &zc_defs;
    uint32_t id = ZC_NO_ID, s = string_locked(name ? name : "");
    if (s != ZC_NO_ID && (d->ncomms < d->cap_comms || !grow((void **)&d->comms, &d->cap_comms, sizeof(*d->comms)))) {
        d->comms[d->ncomms] = (struct zc_def_comm){kind, s, parent, n, nremote, m, k, (uint32_t)keylen, 0};
        id = d->ncomms++;
    }
    pthread_mutex_unlock(&defs_lock);
    if (id == ZC_NO_ID) {
        free(m);
        free(k);
    }
    return id;
}

void zc_def_comm_name(uint32_t id, const char *name) {
    pthread_mutex_lock(&defs_lock);
    struct zc_defs *d = &zc_defs;
    uint32_t s = id < d->ncomms ? string_locked(name ? name : "") : ZC_NO_ID;
    if (s != ZC_NO_ID && s != d->comms[id].name) {
        d->comms[id].name = s;
        d->comms[id].renamed = ++d->comm_renames;
    }
    pthread_mutex_unlock(&defs_lock);
}

int zc_def_metric_class(const struct zc_def_metric *m, uint32_t n) {
    struct zc_def_metric *c = malloc((n ? n : 1) * sizeof(*c));
    if (!c) return -1;
    memcpy(c, m, n * sizeof(*c));
    pthread_mutex_lock(&defs_lock);
    free(zc_defs.metrics);
    zc_defs.metrics = c;
    zc_defs.nmetrics = n;
    pthread_mutex_unlock(&defs_lock);
    return 0;
}

void zc_defs_lock(void) { pthread_mutex_lock(&defs_lock); }
void zc_defs_unlock(void) { pthread_mutex_unlock(&defs_lock); }
uint32_t zc_def_string_locked(const char *s) { return string_locked(s); }
