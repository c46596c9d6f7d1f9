/* SPDX-License-Identifier: MIT */
/* Communicators: identified so that all members of one agree on it at unification, without any
 * communication; their creation, naming and freeing as the generated wrappers report them.
 *
 * Communicator identity. A communicator created collectively on a parent gets the key
 * (parent key, n-th creation on that parent, members as world ranks): every member computes the
 * same key because MPI requires collective calls on a communicator in the same order everywhere.
 * Creations that are not collective over one parent (Comm_create_group, Intercomm_create) use
 * (kind, members, tag, how many such creations with those members and tag this process made).
 * At finalize rank 0 merges equal keys into one global communicator. */
#include "zc_mpi_internal.h"

#include "zc_defs.h"
#include "zc_map.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct comm_info {
    uint32_t id;         /* local communicator definition */
    uint64_t key_hash;   /* identifies it as a parent of later creations */
    uint64_t creations;  /* collective creations made on it so far */
};

static struct zc_map comms = ZC_MAP_INIT;
/* a handle as a map key: a pointer (Open MPI) or an int (MPICH ABI), widened alike everywhere */
#define ZC_HKEY(h) ((void *)(uintptr_t)(h))
atomic_uint_fast64_t zc_mpi_comm_epoch = 1; /* zc_mpi_tls.last_comm */
/* The map changes: every thread's last communicator is stale (the epoch), the calling thread's
 * forgotten at once: the fast paths, which run only where one thread makes the MPI calls (the
 * writer matches requests: MPI_THREAD_SINGLE or FUNNELED), test the handle alone (zc_mpi_req.h). */
static void epoch_bump(void) {
    atomic_fetch_add(&zc_mpi_comm_epoch, 1);
    zc_mpi_tls.last_comm.comm = MPI_COMM_NULL;
}
static pthread_mutex_t comm_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
    uint64_t hash;
    uint64_t count;
} *lonely; /* creations not collective over a parent: count per (kind, members, tag) hash */
static size_t nlonely, cap_lonely;

#define FNV_BASIS 1469598103934665603ull /* FNV-1a, 64 bits */
static uint64_t fnv(const void *p, size_t n, uint64_t h) {
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 1099511628211ull;
    return h;
}

/* world ranks of a group (NULL on failure; caller frees) */
static uint64_t *group_world_ranks(MPI_Group g, uint32_t *n) {
    int size = 0;
    *n = 0;
    if (PMPI_Group_size(g, &size) != MPI_SUCCESS || size <= 0) return NULL;
    int *in = malloc((size_t)size * sizeof(int)), *out = malloc((size_t)size * sizeof(int));
    uint64_t *m = malloc((size_t)size * sizeof(uint64_t));
    MPI_Group world;
    bool ok = in && out && m && PMPI_Comm_group(MPI_COMM_WORLD, &world) == MPI_SUCCESS;
    if (ok) {
        for (int i = 0; i < size; i++) in[i] = i;
        ok = PMPI_Group_translate_ranks(g, size, in, world, out) == MPI_SUCCESS;
        PMPI_Group_free(&world);
    }
    if (ok)
        for (int i = 0; i < size; i++) m[i] = (uint64_t)(out[i] < 0 ? UINT32_MAX : (uint32_t)out[i]);
    free(in);
    free(out);
    if (!ok) {
        free(m);
        return NULL;
    }
    *n = (uint32_t)size;
    return m;
}

static uint64_t *comm_members(MPI_Comm comm, bool remote, uint32_t *n) {
    MPI_Group g;
    *n = 0;
    if ((remote ? PMPI_Comm_remote_group(comm, &g) : PMPI_Comm_group(comm, &g)) != MPI_SUCCESS) return NULL;
    uint64_t *m = group_world_ranks(g, n);
    PMPI_Group_free(&g);
    return m;
}

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Registers comm under the given key; returns its local id. */
static uint32_t comm_register(MPI_Comm comm, const char *name, const char *key, size_t keylen, bool inter,
                              enum zc_comm_kind kind, uint32_t parent) {
    uint32_t n = 0, nr = 0;
    uint64_t *m = kind == ZC_COMM_MPI_SELF ? NULL : comm_members(comm, false, &n);
    uint64_t *rm = inter ? comm_members(comm, true, &nr) : NULL;
    uint32_t id = zc_def_comm(inter ? ZC_COMM_MPI_INTER : kind, name, parent, m, n, rm, nr, key, keylen);
    free(m);
    free(rm);
    struct comm_info *ci = calloc(1, sizeof(*ci));
    if (!ci || id == ZC_NO_ID) {
        free(ci);
        return ZC_NO_ID;
    }
    ci->id = id;
    ci->key_hash = fnv(key, keylen, FNV_BASIS);
    int err;
    epoch_bump();
    free(zc_map_put(&comms, ZC_HKEY(comm), ci, &err));
    if (err) free(ci);
    return id;
}

void zc_mpi_comms_init(int rank, int size) {
    comm_register(MPI_COMM_WORLD, "MPI_COMM_WORLD", "world", 5, false, ZC_COMM_MPI, ZC_NO_ID);
    comm_register(MPI_COMM_SELF, "MPI_COMM_SELF", "self", 4, false, ZC_COMM_MPI_SELF, ZC_NO_ID);
}

/* The n-th creation (from 0) with key hash h that this process made, among those not collective
 * over a parent (0 when out of memory). */
static uint64_t lonely_next(uint64_t h) {
    pthread_mutex_lock(&comm_lock);
    size_t i;
    for (i = 0; i < nlonely && lonely[i].hash != h; i++) {
    }
    if (i == nlonely && nlonely == cap_lonely) {
        size_t cap = cap_lonely ? 2 * cap_lonely : 16;
        void *grown = realloc(lonely, cap * sizeof(*lonely));
        if (grown) lonely = grown, cap_lonely = cap;
    }
    if (i == nlonely && nlonely < cap_lonely) {
        lonely[nlonely].hash = h;
        lonely[nlonely++].count = 0;
    }
    uint64_t k = i < nlonely ? lonely[i].count++ : 0;
    pthread_mutex_unlock(&comm_lock);
    return k;
}

/* A communicator we did not see created (made inside MPI, or by a call the spec does not list):
 * its key is its members and how many such ones this process saw, which ranks agree on as long
 * as they meet them in the same order. */
uint32_t zc_mpi_comm_id_slow(MPI_Comm comm) {
    uint64_t ep = atomic_load_explicit(&zc_mpi_comm_epoch, memory_order_acquire);
    struct comm_info *ci = zc_map_get(&comms, ZC_HKEY(comm));
    if (ci) {
        zc_mpi_tls.last_comm.comm = comm;
        zc_mpi_tls.last_comm.id = ci->id;
        zc_mpi_tls.last_comm.epoch = ep;
        return ci->id;
    }
    uint32_t n = 0;
    int inter = 0;
    PMPI_Comm_test_inter(comm, &inter);
    uint64_t *m = comm_members(comm, false, &n);
    uint64_t h = fnv(m, n * sizeof(uint64_t), fnv("unseen", 6, FNV_BASIS));
    uint64_t k = lonely_next(h);
    char key[64];
    int kl = snprintf(key, sizeof(key), "unseen:%016llx:%llu", (unsigned long long)h, (unsigned long long)k);
    free(m);
    return comm_register(comm, "", key, (size_t)kl, inter != 0, ZC_COMM_MPI, ZC_NO_ID);
}

/* A creation collective over parent: the parent's id (registered first if unseen), its key hash
 * and how many creations it had before this one, which is counted now. */
static uint32_t parent_creation(MPI_Comm parent, uint64_t *hash, uint64_t *seq) {
    uint32_t id = zc_mpi_comm_id(parent); /* make sure the parent is known */
    pthread_mutex_lock(&comm_lock);
    struct comm_info *pi = zc_map_get(&comms, ZC_HKEY(parent));
    *hash = pi ? pi->key_hash : 0;
    *seq = pi ? pi->creations++ : 0;
    pthread_mutex_unlock(&comm_lock);
    return id;
}

/* Both sides of an intercommunicator see the same union of groups: its hash, sorted (mh, the
 * local group's hash, when out of memory). */
static uint64_t union_hash(const uint64_t *m, uint32_t n, const uint64_t *rm, uint32_t nr, uint64_t mh) {
    uint64_t *u = malloc((size_t)(n + nr) * sizeof(uint64_t));
    if (!u) return mh;
    memcpy(u, m, n * sizeof(uint64_t));
    memcpy(u + n, rm, nr * sizeof(uint64_t));
    qsort(u, n + nr, sizeof(*u), cmp_u64);
    uint64_t h = fnv(u, (n + nr) * sizeof(uint64_t), FNV_BASIS);
    free(u);
    return h;
}

void zc_mpi_comm_new(struct zc_mpi_call *c, enum zc_mpi_how how, MPI_Comm parent, MPI_Comm newcomm, int tag) {
    bool collective_on_parent = parent != MPI_COMM_NULL_ZC && how != ZC_MPI_HOW_CREATE_GROUP &&
                                how != ZC_MPI_HOW_INTERCOMM && how != ZC_MPI_HOW_DYNAMIC;
    uint64_t ph, seq;
    if (newcomm == MPI_COMM_NULL) {
        /* a split with MPI_UNDEFINED: the parent's creation count must still move, or this rank
         * and the others would disagree on the next communicator made from it */
        if (collective_on_parent) (void)parent_creation(parent, &ph, &seq);
        return;
    }
    int inter = 0;
    PMPI_Comm_test_inter(newcomm, &inter);
    uint32_t n = 0, nr = 0;
    uint64_t *m = comm_members(newcomm, false, &n);
    uint64_t *rm = inter ? comm_members(newcomm, true, &nr) : NULL;
    if (m) qsort(m, n, sizeof(*m), cmp_u64);
    uint64_t mh = fnv(m, n * sizeof(uint64_t), FNV_BASIS);
    char key[128];
    int kl;
    uint32_t parent_id = ZC_NO_ID;
    if (collective_on_parent) {
        parent_id = parent_creation(parent, &ph, &seq);
        kl = snprintf(key, sizeof(key), "c:%016llx:%llu:%016llx", (unsigned long long)ph, (unsigned long long)seq,
                      (unsigned long long)mh);
    } else {
        uint64_t h = rm ? union_hash(m, n, rm, nr, mh) : mh;
        h = fnv(&tag, sizeof(tag), fnv(&how, sizeof(how), h));
        uint64_t k = lonely_next(h);
        kl = snprintf(key, sizeof(key), "g:%016llx:%llu", (unsigned long long)h, (unsigned long long)k);
    }
    free(m);
    free(rm);
    comm_register(newcomm, "", key, (size_t)kl, inter != 0, ZC_COMM_MPI, parent_id);
}

/* MPI_Comm_free/MPI_Comm_disconnect: the entry is taken out before the call, since once the
 * handle is freed another thread may be given it for a new communicator; if the call fails the
 * communicator lives on (an attribute's delete callback can refuse, MPI 4.1 §7.7.4) and gets its
 * entry back, so its later events keep its definition instead of turning into an "unseen" one. */
void *zc_mpi_comm_forget(MPI_Comm comm) {
    if (comm == MPI_COMM_WORLD || comm == MPI_COMM_SELF || comm == MPI_COMM_NULL) return NULL;
    epoch_bump();
    return zc_map_del(&comms, ZC_HKEY(comm));
}

void zc_mpi_comm_freed(MPI_Comm comm, void *entry, int rc) {
    if (!entry) return;
    if (rc != MPI_SUCCESS) {
        int err = 0;
        epoch_bump();
        void *old = zc_map_put(&comms, ZC_HKEY(comm), entry, &err);
        if (!err) entry = old; /* no memory: forgotten after all, found again as "unseen" (comm_register too) */
    }
    free(entry);
}

/* The name as MPI now reports it (MPI_Comm_get_name: at most MPI_MAX_OBJECT_NAME characters, a
 * Fortran name without its trailing blanks), so that C and Fortran callers give the same one. */
void zc_mpi_comm_named(MPI_Comm comm) {
    char name[MPI_MAX_OBJECT_NAME + 1];
    int len = 0;
    if (comm == MPI_COMM_NULL || PMPI_Comm_get_name(comm, name, &len) != MPI_SUCCESS) return;
    name[len < 0 ? 0 : len > MPI_MAX_OBJECT_NAME ? MPI_MAX_OBJECT_NAME : len] = 0;
    uint32_t id = zc_mpi_comm_id(comm);
    if (id != ZC_NO_ID) zc_def_comm_name(id, name);
}
