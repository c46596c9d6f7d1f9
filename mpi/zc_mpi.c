/* SPDX-License-Identifier: MIT */
/* MPI events: each call a region on its thread; point-to-point and collective records;
 * requests tracked from creation through every Wait/Test variant; communicators identified so
 * that all members of one communicator agree on it at unification, without any communication.
 *
 * Communicator identity. A communicator created collectively on a parent gets the key
 * (parent key, n-th creation on that parent, members as world ranks): every member computes the
 * same key because MPI requires collective calls on a communicator in the same order everywhere.
 * Creations that are not collective over one parent (Comm_create_group, Intercomm_create) use
 * (kind, members, tag, how many such creations with those members and tag this process made).
 * At finalize rank 0 merges equal keys into one global communicator. */
#include "zc_mpi_internal.h"
#include "zc_mpi_gen.h"

#include "zc_defs.h"
#include "zc_map.h"
#include "zc_papi.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

_Thread_local struct zc_mpi_tls zc_mpi_tls __attribute__((tls_model("initial-exec")));
uint32_t zc_mpi_region_cache[ZC_MPI_FN_COUNT];

/* ---------------------------------------------------------------- calls */
uint32_t zc_mpi_region(uint32_t fn) {
    uint32_t r = __atomic_load_n(&zc_mpi_region_cache[fn], __ATOMIC_RELAXED);
    if (r) return r - 1;
    r = zc_def_region(zc_mpi_fn_names[fn], (enum zc_region_role)zc_mpi_fn_role[fn], ZC_PARADIGM_MPI);
    __atomic_store_n(&zc_mpi_region_cache[fn], r + 1, __ATOMIC_RELAXED);
    return r;
}

/* A call's events go to its thread's location in one batch when it returns: one ZC_EV_CALL
 * record (Enter and Leave) holding the events inside it. Events of what the call starts (MpiSend,
 * MpiIsend, MpiIrecvRequest, a non-blocking collective's request, MpiCollectiveBegin) carry the
 * Enter time, those of what it finishes (receives, completions, tests, MpiCollectiveEnd) the
 * Leave time: two clock reads per call, whatever it records. ts == 0 marks "the Leave time". */

_Atomic size_t zc_mpi_nfollowed;

/* Recording is off: a KEEP call is tracked without events; a DONE call only if requests started
 * while recording are pending (it is then recorded if it takes one of them: zc_mpi_closed_taken). */
bool zc_mpi_begin_closed(struct zc_mpi_call *c, uint32_t fn, int mode) {
    (void)fn;
    if (!zc_mpi_ready() || zc_mpi_nested()) return false;
    if (mode == ZC_MPI_DONE && !zc_mpi_closed_pending()) return false;
    c->tok = zc_mpi_tls.fast;
    zc_mpi_tls.fast = ZC_MPI_INSIDE;
    zc_mpi_tls.err = &errno; /* the thread's first tracked call may be this one */
    c->closed = true;
    c->papi = false;
    c->t = NULL;
    return true;
}

void zc_mpi_closed_taken(struct zc_mpi_call *c, struct zc_req *const *ris, int n) {
    /* the writer's handles carry no record: any of them may be one started while recording */
    bool any = zc_mpi_deferred && zc_mpi_tls.raw_pending;
    for (int i = 0; ris && i < n && !any; i++) any = ris[i] && (zr_is_v(ris[i]) || ris[i]->active);
    if (!any || !zc_on(ZC_F_MPI)) return;
    struct zc_thread *t = zc_thread_get();
    if (!t) return;
    c->t = t;
    c->t0 = zc_tick();
    /* owners that lock take zc_mpi_open's slow path (as zc_mpi_begin_slow arranges) */
    if (zc_own_locked) __atomic_store_n(&zc_mpi_open_slowly, true, __ATOMIC_RELAXED);
}

/* PAPI counters at a sampled call's Enter (read after its Enter time was taken): the Metric
 * records and the Enter are written now, before the MPI call; its events follow it, and its end
 * reads the counters again before the Leave (zc_mpi_close_slow). */
static void papi_enter(struct zc_mpi_call *c, uint32_t fn) {
    struct zc_ev ev[ZC_PAPI_MAX_RECS + 1];
    size_t k = zc_papi_read(c->t, ev);
    if (!k) return; /* no counters (PAPI off, or failed just now): the ordinary path */
    zc_papi_stamp(ev, k, c->t0);
    ev[k] = (struct zc_ev){c->t0, ZC_EV_ENTER, zc_mpi_region(fn), 0, 0, 0};
    struct zc_loc *l = c->t->loc;
    if (zc_own_begin(l)) zc_own_put(l, ev, k + 1);
    zc_own_end(l);
    c->papi = true;
}

bool zc_mpi_open_slowly;

bool zc_mpi_fast_start, zc_mpi_fast_done;
/* The fast paths need: MPI ready, the writer matching requests (zc_mpi_deferred), TSC ticks,
 * owners that need no lock, MPI recording on and PAPI off; completions also an empty request
 * table. All of these are settled by the time MPI is ready, and change afterwards only towards
 * the general path (PAPI failing off is ignored: the general path still records right). */
static void fast_update(void) {
    bool on = zc_mpi_ready() && zc_mpi_deferred && zc_tsc && !zc_own_locked && zc_on(ZC_F_MPI) && !zc_on(ZC_F_PAPI) &&
              !__atomic_load_n(&zc_mpi_open_slowly, __ATOMIC_RELAXED);
    __atomic_store_n(&zc_mpi_fast_start, on, __ATOMIC_RELEASE);
    __atomic_store_n(&zc_mpi_fast_done, on && !zc_mpi_rt_used, __ATOMIC_RELEASE);
}
void zc_mpi_set_ready(bool on) {
    atomic_store_explicit(&zc_mpi_is_ready, on, memory_order_release);
    fast_update();
}

/* The thread's first tracked call (registration), and every call while PAPI counts. */
bool zc_mpi_begin_slow(struct zc_mpi_call *c, uint32_t fn) {
    zc_mpi_tls.err = &errno;
    c->papi = false;
    struct zc_thread *t = zc_tls_thread;
    bool rec = zc_active() && zc_on(ZC_F_MPI);
    if (!t && rec) t = zc_thread_get();
    c->t = rec ? t : NULL;
    if (!c->t) return true;
    c->t0 = zc_tick();
    /* owners that lock, or calls that begin with an Enter: zc_mpi_open's slow path */
    if (zc_own_locked || zc_on(ZC_F_PAPI)) __atomic_store_n(&zc_mpi_open_slowly, true, __ATOMIC_RELAXED);
    /* sampled only when recorded: whatever turns recording off turns sampling off with it */
    if (zc_on(ZC_F_PAPI)) papi_enter(c, fn);
    else /* PAPI off (for good): the inline and fast paths from the next call on; never freed (zc_loc.c) */
        zc_mpi_tls.t = c->tok = t;
    return true;
}

/* ---------------------------------------------------------------- fast paths' tails */
/* What the fast path does not finish (zc_mpi_req.h): the general path's open, request and close,
 * from the ticks the fast path read, errno kept as MPI left it. The fast path set
 * zc_mpi_tls.fast to ZC_MPI_INSIDE: calls made in here are nested. */
static void fast_call(struct zc_mpi_call *c, struct zc_thread *t, uint32_t fn, uint64_t t0, uint64_t t1) {
    c->t = t;
    c->t0 = t0;
    c->papi = false;
    c->closed = false;
    c->has_pre = false;
    c->tok = t;
    zc_mpi_open_at(c, fn, t1);
}

void zc_mpi_fast_req_slow(struct zc_thread *t, uint32_t fn, uint64_t t0, uint64_t t1, int rc, bool send, uint64_t bytes,
                          uint64_t peer_tag, MPI_Comm comm, const MPI_Request *request) {
    int e = errno;
    struct zc_mpi_call c;
    fast_call(&c, t, fn, t0, t1);
    /* zc_mpi_req_new of a request the writer matches (the fast paths run only then) */
    MPI_Request h = rc == MPI_SUCCESS ? *request : MPI_REQUEST_NULL;
    if (c.t && h != MPI_REQUEST_NULL) {
        uint32_t comm_id = zc_mpi_comm_id(comm);
        zc_mpi_tls.raw_pending++;
        *zc_mpi_slots(&c, 1) = zc_mpi_start_h(t0, send, comm_id, bytes, peer_tag, h);
    }
    zc_mpi_close(&c);
    errno = e;
}

void zc_mpi_fast_all_slow(struct zc_thread *t, uint32_t fn, uint64_t t0, uint64_t t1, int rc, int n,
                          const MPI_Request *before, const MPI_Request *after, const MPI_Status *sts) {
    int e = errno;
    struct zc_mpi_call c;
    fast_call(&c, t, fn, t0, t1);
    zc_mpi_settle_all(&c, before, NULL, n, after, rc, 1, false, sts);
    zc_mpi_close(&c);
    errno = e;
}

uint64_t zc_mpi_type_bytes_slow(int count, MPI_Datatype t, struct zc_mpi_tsz *e) {
    int err = errno;
    int sz = 0;
    uint64_t b = 0;
    if (PMPI_Type_size(t, &sz) == MPI_SUCCESS && sz >= 0) {
        b = (uint64_t)count * (uint64_t)sz;
        if (e->h != (uintptr_t)t || e->sz1 == 0) { /* not known to be derived: is it predefined? */
            int ni, na, nd, comb = -1;
            bool named = PMPI_Type_get_envelope && PMPI_Type_get_envelope(t, &ni, &na, &nd, &comb) == MPI_SUCCESS &&
                         comb == MPI_COMBINER_NAMED;
            e->h = (uintptr_t)t;
            e->sz1 = named ? (int64_t)sz + 1 : -1;
        }
    }
    errno = err;
    return b;
}

/* The buffer is full: out it goes (the caller owns the location); the flush is recorded as the
 * collector's region after the call's events, whose times it follows. */
static void call_flush(struct zc_mpi_call *c, struct zc_loc *l) {
    uint64_t f0 = zc_tick();
    zc_loc_write_out(l);
    if (!c->f1) c->f0 = f0;
    c->f1 = zc_tick();
}

/* The region not defined yet, no room for the call's record, or owners lock. */
void zc_mpi_open_slow(struct zc_mpi_call *c, uint32_t fn) {
    c->region = zc_mpi_region(fn);
    c->split = false;
    c->f1 = 0;
    struct zc_loc *l = c->t->loc;
    if (!zc_own_begin(l)) {
        zc_own_end(l);
        c->t = NULL;
        c->mode = ZC_MPI_SHUT;
        return;
    }
    c->mode = ZC_MPI_OPEN_SLOW;
    c->l = l;
    if (l->n + 2 > l->lim) call_flush(c, l);
    c->at = l->n;
    if (c->papi) c->split = true; /* its Enter is out (papi_enter): events, then counters and Leave */
    else l->buf[c->at++] = (struct zc_ev){c->t0, ZC_EV_CALL, c->region, c->t1, 0, ZC_CALL_RUN};
}

/* The call's events fill the buffer: Enter and the events so far go out with it, a Leave after
 * the rest ends the call. */
void zc_mpi_more(struct zc_mpi_call *c) {
    struct zc_loc *l = c->l;
    if (c->mode == ZC_MPI_OPEN) { /* from here on the slow close */
        c->mode = ZC_MPI_OPEN_SLOW;
        c->split = false;
        c->f1 = 0;
    }
    if (!c->split) { /* the call's record: the last ZC_EV_CALL, before the events inside it */
        size_t at = c->at;
        while (at > 0 && l->buf[at - 1].type != ZC_EV_CALL) at--;
        struct zc_ev *e = &l->buf[at - 1];
        c->region = e->a;
        *e = (struct zc_ev){c->t0, ZC_EV_ENTER, c->region, 0, 0, 0};
        c->split = true;
    }
    zc_loc_publish(l, c->at); /* the Enter and the events so far go out with the buffer */
    call_flush(c, l);
    c->at = l->n;
}

/* A call whose events went out in two buffers, or after a flush: the buffer's reserve (beyond
 * lim) holds the Leave and the flush region. */
void zc_mpi_close_slow(struct zc_mpi_call *c) {
    struct zc_loc *l = c->l;
    if (c->papi) { /* counters read inside the region: its Leave after them */
        struct zc_ev m[ZC_PAPI_MAX_RECS];
        size_t k = zc_papi_read(c->t, m);
        uint64_t t1 = zc_tick();
        zc_papi_stamp(m, k, t1);
        for (size_t i = 0; i < k; i++) l->buf[c->at++] = m[i]; /* the reserve beyond lim holds them */
        l->buf[c->at++] = (struct zc_ev){t1, ZC_EV_LEAVE, c->region, 0, 0, 0};
    } else if (c->split) {
        l->buf[c->at++] = (struct zc_ev){c->t1, ZC_EV_LEAVE, c->region, 0, 0, 0};
    }
    /* the collector's own region: not counted as the application's (zc_loc.c) */
    if (c->f1) l->buf[c->at++] = (struct zc_ev){c->f0, ZC_EV_CALL, zc_region_flush, c->f1, 0, 0};
    zc_loc_publish(l, c->at);
    zc_own_end(l);
}

/* ---------------------------------------------------------------- helpers */
MPI_Status *zc_mpi_statuses(MPI_Status *stack, int n_stack, int n) {
    if (n <= n_stack) return stack;
    MPI_Status *s = malloc((size_t)n * sizeof(*s));
    return s ? s : MPI_STATUSES_IGNORE; /* out of memory: completions then carry no status */
}

/* NULL when out of memory: the call then goes untracked */

/* ---------------------------------------------------------------- communicators */
struct comm_info {
    uint32_t id;         /* local communicator definition */
    uint64_t key_hash;   /* identifies it as a parent of later creations */
    uint64_t creations;  /* collective creations made on it so far */
};

static struct zc_map comms = ZC_MAP_INIT;
atomic_uint_fast64_t zc_mpi_comm_epoch = 1; /* zc_mpi_tls.last_comm */
static pthread_mutex_t comm_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
    uint64_t hash;
    uint64_t count;
} *lonely; /* creations not collective over a parent: count per (kind, members, tag) hash */
static size_t nlonely, cap_lonely;

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
    ci->key_hash = fnv(key, keylen, 1469598103934665603ull);
    int err;
    atomic_fetch_add(&zc_mpi_comm_epoch, 1);
    free(zc_map_put(&comms, comm, ci, &err));
    if (err) free(ci);
    return id;
}

void zc_mpi_comms_init(int rank, int size) {
    comm_register(MPI_COMM_WORLD, "MPI_COMM_WORLD", "world", 5, false, ZC_COMM_MPI, ZC_NO_ID);
    comm_register(MPI_COMM_SELF, "MPI_COMM_SELF", "self", 4, false, ZC_COMM_MPI_SELF, ZC_NO_ID);
}

/* A communicator we did not see created (made inside MPI, or by a call the spec does not list):
 * its key is its members and how many such ones this process saw, which ranks agree on as long
 * as they meet them in the same order. */
uint32_t zc_mpi_comm_id_slow(MPI_Comm comm) {
    uint64_t ep = atomic_load_explicit(&zc_mpi_comm_epoch, memory_order_acquire);
    struct comm_info *ci = zc_map_get(&comms, comm);
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
    pthread_mutex_lock(&comm_lock);
    uint64_t h = fnv(m, n * sizeof(uint64_t), fnv("unseen", 6, 1469598103934665603ull)), k = 0;
    size_t i;
    for (i = 0; i < nlonely && lonely[i].hash != h; i++) {
    }
    if (i == nlonely && (nlonely < cap_lonely || (lonely = realloc(lonely, (cap_lonely = cap_lonely ? 2 * cap_lonely : 16) * sizeof(*lonely))))) {
        lonely[nlonely].hash = h;
        lonely[nlonely++].count = 0;
    }
    if (i < nlonely) k = lonely[i].count++;
    pthread_mutex_unlock(&comm_lock);
    char key[64];
    int kl = snprintf(key, sizeof(key), "unseen:%016llx:%llu", (unsigned long long)h, (unsigned long long)k);
    free(m);
    return comm_register(comm, "", key, (size_t)kl, inter != 0, ZC_COMM_MPI, ZC_NO_ID);
}

void zc_mpi_comm_new(struct zc_mpi_call *c, enum zc_mpi_how how, MPI_Comm parent, MPI_Comm newcomm, int tag) {
    bool collective_on_parent = parent != MPI_COMM_NULL_ZC && how != ZC_MPI_HOW_CREATE_GROUP &&
                                how != ZC_MPI_HOW_INTERCOMM && how != ZC_MPI_HOW_DYNAMIC;
    if (newcomm == MPI_COMM_NULL) {
        /* a split with MPI_UNDEFINED: the parent's creation count must still move, or this rank
         * and the others would disagree on the next communicator made from it */
        if (collective_on_parent) {
            (void)zc_mpi_comm_id(parent);
            pthread_mutex_lock(&comm_lock);
            struct comm_info *pi = zc_map_get(&comms, parent);
            if (pi) pi->creations++;
            pthread_mutex_unlock(&comm_lock);
        }
        return;
    }
    int inter = 0;
    PMPI_Comm_test_inter(newcomm, &inter);
    uint32_t n = 0, nr = 0;
    uint64_t *m = comm_members(newcomm, false, &n);
    uint64_t *rm = inter ? comm_members(newcomm, true, &nr) : NULL;
    if (m) qsort(m, n, sizeof(*m), cmp_u64);
    uint64_t mh = fnv(m, n * sizeof(uint64_t), 1469598103934665603ull);
    char key[128];
    int kl;
    uint32_t parent_id = ZC_NO_ID;
    if (collective_on_parent) {
        parent_id = zc_mpi_comm_id(parent); /* make sure the parent is known */
        pthread_mutex_lock(&comm_lock);
        struct comm_info *pi = zc_map_get(&comms, parent);
        uint64_t ph = pi ? pi->key_hash : 0, seq = pi ? pi->creations++ : 0;
        pthread_mutex_unlock(&comm_lock);
        kl = snprintf(key, sizeof(key), "c:%016llx:%llu:%016llx", (unsigned long long)ph, (unsigned long long)seq,
                      (unsigned long long)mh);
    } else {
        /* both sides of an intercommunicator see the same union of groups */
        uint64_t h = mh;
        if (rm) {
            uint64_t *u = malloc((size_t)(n + nr) * sizeof(uint64_t));
            if (u) {
                memcpy(u, m, n * sizeof(uint64_t));
                memcpy(u + n, rm, nr * sizeof(uint64_t));
                qsort(u, n + nr, sizeof(*u), cmp_u64);
                h = fnv(u, (n + nr) * sizeof(uint64_t), 1469598103934665603ull);
                free(u);
            }
        }
        h = fnv(&tag, sizeof(tag), fnv(&how, sizeof(how), h));
        pthread_mutex_lock(&comm_lock);
        size_t i;
        for (i = 0; i < nlonely && lonely[i].hash != h; i++) {
        }
        if (i == nlonely && (nlonely < cap_lonely || (lonely = realloc(lonely, (cap_lonely = cap_lonely ? 2 * cap_lonely : 16) * sizeof(*lonely))))) {
            lonely[nlonely].hash = h;
            lonely[nlonely++].count = 0;
        }
        uint64_t k = i < nlonely ? lonely[i].count++ : 0;
        pthread_mutex_unlock(&comm_lock);
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
    atomic_fetch_add(&zc_mpi_comm_epoch, 1);
    return zc_map_del(&comms, comm);
}

void zc_mpi_comm_freed(MPI_Comm comm, void *entry, int rc) {
    if (!entry) return;
    if (rc != MPI_SUCCESS) {
        int err = 0;
        atomic_fetch_add(&zc_mpi_comm_epoch, 1);
        void *old = zc_map_put(&comms, comm, entry, &err);
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

/* ---------------------------------------------------------------- point to point */

/* before the MPI call: held until zc_mpi_open */
void zc_mpi_ev_send(struct zc_mpi_call *c, int count, MPI_Datatype t, int peer, int tag, MPI_Comm comm) {
    c->has_pre = false;
    if (!c->t || peer == MPI_PROC_NULL) return;
    c->pre = (struct zc_ev){c->t0, ZC_EV_MPI_SEND, zc_mpi_comm_id(comm), zc_mpi_bytes_of(count, t), zc_mpi_peer_tag(peer, tag), 0};
    c->has_pre = true;
}

void zc_mpi_ev_recv(struct zc_mpi_call *c, MPI_Datatype t, MPI_Comm comm, const MPI_Status *st) {
    if (!c->t || !st || st->MPI_SOURCE == MPI_PROC_NULL) return;
    int count = 0;
    if (PMPI_Get_count(st, t, &count) != MPI_SUCCESS || count == MPI_UNDEFINED) count = 0;
    uint64_t bytes = zc_mpi_bytes_of(count, t);
    uint32_t comm_id = zc_mpi_comm_id(comm);
    *zc_mpi_slots(c, 1) = (struct zc_ev){c->t1, ZC_EV_MPI_RECV, comm_id, bytes, zc_mpi_peer_tag(st->MPI_SOURCE, st->MPI_TAG), 0};
}

/* ---------------------------------------------------------------- requests */
/* The hot parts are in zc_mpi_req.h, inlined into the generated wrappers. */
static struct zc_rt_slot zr_empty[1]; /* the table before the first request: one free slot */
struct zc_mpi_rt zc_mpi_rt = {zr_empty, 0, 0};
pthread_mutex_t zc_mpi_reqs_lock = PTHREAD_MUTEX_INITIALIZER;
bool zc_mpi_reqs_mt, zc_mpi_deferred, zc_mpi_rt_used;

void zc_mpi_set_thread_level(int level) {
    zc_mpi_reqs_mt = level == MPI_THREAD_MULTIPLE;
#ifdef OMPI_MAJOR_VERSION /* the writer reads cancellation and size from Open MPI's status */
    /* only the thread that initialised MPI makes MPI calls: its location sees every request */
    zc_mpi_deferred = level <= MPI_THREAD_FUNNELED && zc_knobs.MPI_WRITER_MATCHING;
    if (zc_mpi_deferred) zc_mpi_resolver_install();
#endif
}

/* Out of line: rare, and they keep the wrappers short. */
struct zc_req *zc_mpi_req_alloc_slow(void) { return calloc(1, sizeof(struct zc_req)); }
void zc_mpi_req_free_slow(struct zc_req *r) { free(r); }

struct zc_rt_slot *zc_mpi_rt_add(MPI_Request k) {
    if (!zc_mpi_rt_used) {
        zc_mpi_rt_used = true;
        __atomic_store_n(&zc_mpi_fast_done, false, __ATOMIC_RELAXED); /* completions look at the table now */
    }
    if ((zc_mpi_rt.n + 1) * 2 > zc_mpi_rt.mask + 1 && !zc_mpi_rt_grow()) return NULL;
    size_t i = zr_hash(k, zc_mpi_rt.mask);
    while (zc_mpi_rt.s[i].key) i = (i + 1) & zc_mpi_rt.mask;
    zc_mpi_rt.s[i] = (struct zc_rt_slot){k, 0, NULL, 0};
    zc_mpi_rt.n++;
    return &zc_mpi_rt.s[i];
}

/* Rehash at the same or a larger size, keeping only handles with requests. */
bool zc_mpi_rt_grow(void) {
    size_t live = 0, cap = zc_mpi_rt.mask + 1;
    for (size_t j = 0; j < cap; j++) live += zc_mpi_rt.s[j].key && (zc_mpi_rt.s[j].head || zc_mpi_rt.s[j].v);
    size_t ncap = 256;
    while ((live + 1) * 4 > ncap) ncap *= 2;
    struct zc_rt_slot *ns = calloc(ncap, sizeof(*ns));
    if (!ns) return false;
    for (size_t j = 0; j < cap; j++) {
        if (!zc_mpi_rt.s[j].key || (!zc_mpi_rt.s[j].head && !zc_mpi_rt.s[j].v)) continue;
        size_t i = zr_hash(zc_mpi_rt.s[j].key, ncap - 1);
        while (ns[i].key) i = (i + 1) & (ncap - 1);
        ns[i] = zc_mpi_rt.s[j];
    }
    if (zc_mpi_rt.s != zr_empty) free(zc_mpi_rt.s);
    zc_mpi_rt.s = ns;
    zc_mpi_rt.mask = ncap - 1;
    zc_mpi_rt.n = live;
    return true;
}

void zc_mpi_req_new_rec(struct zc_mpi_call *c, enum zc_mpi_req_kind kind, int count, MPI_Datatype t, int peer, int tag,
                        uint32_t comm, MPI_Request req) {
    struct zc_req *ri = zr_alloc();
    if (!ri) return;
    ri->owner = c->t;
    ri->bytes = kind == ZC_MPI_REQ_ISEND || kind == ZC_MPI_REQ_PSEND ? zc_mpi_bytes_of(count, t) : 0;
    ri->recvd = 0;
    ri->type = t;
    ri->comm = comm;
    ri->peer = peer;
    ri->tag = tag;
    ri->kind = (uint8_t)kind;
    ri->op = 0;
    ri->root = 0;
    /* persistent requests are inactive until MPI_Start */
    if (!zr_persistent(ri)) zr_activate(c, ri);
    else ri->active = ri->cancelled = false, ri->id = 0;
    zr_insert(req, ri);
}

/* An inline word as a record (to go on a chain, or through the general settling code). */
static struct zc_req *zr_unpack(uint64_t v, const void *owner) {
    struct zc_req *r = zr_alloc();
    if (!r) return NULL;
    unsigned k = zr_v_kind(v);
    *r = (struct zc_req){.owner = owner, .id = zr_v_id(v), .comm = zr_v_comm(v),
                         .peer = k == ZR_V_ISEND_NULL ? MPI_PROC_NULL : 0,
                         .kind = k == ZR_V_IRECV ? ZC_MPI_REQ_IRECV : ZC_MPI_REQ_ISEND, .active = true,
                         .cancelled = (v & ZR_V_CANCELLED) != 0};
    return r;
}

/* A handle with records on its chain: the calling thread's first (the ids of a location must
 * pair up), then the inline word (whose thread is not known), then any. */
struct zc_req *zc_mpi_take_slow(struct zc_rt_slot *f, const void *me) {
    struct zc_req **link = NULL;
    for (struct zc_req **l = &f->head; *l; l = &(*l)->next)
        if ((*l)->owner == me) {
            link = l;
            break;
        }
    if (!link && f->v) {
        struct zc_req *ri = (struct zc_req *)(uintptr_t)f->v;
        f->v = 0;
        zr_followed(-1); /* an inline word is active */
        return ri;
    }
    if (!link) link = &f->head;
    struct zc_req *ri = *link;
    *link = ri->next;
    ri->next = NULL;
    zr_followed_if(ri, -1);
    return ri;
}

/* Back into the table (not completed, or persistent): an inline word goes back inline if its
 * place is free, else as a record. */
static void zr_put_back(MPI_Request req, struct zc_req *ri) {
    if (zr_is_v(ri)) {
        zr_lock();
        struct zc_rt_slot *f = zr_slot_of(req);
        bool done = f && !f->v;
        if (done) {
            f->v = zr_v(ri);
            zr_followed(1);
        }
        zr_unlock();
        if (done) return;
        ri = zr_unpack(zr_v(ri), zc_mpi_tls.t);
        if (!ri) return;
    }
    zr_insert(req, ri);
}

void zc_mpi_completed_rec(struct zc_mpi_call *c, MPI_Request before, struct zc_req *ri, const MPI_Status *st) {
    if (c->t && ri->active) {
        int cancelled = 0;
        if (__builtin_expect(ri->cancelled, 0) && st && st != MPI_STATUS_IGNORE) PMPI_Test_cancelled(st, &cancelled);
        if (cancelled) {
            *zc_mpi_slots(c, 1) = (struct zc_ev){c->t1, ZC_EV_MPI_REQUEST_CANCELLED, ri->comm, 0, 0, ri->id};
        } else if (ri->kind == ZC_MPI_REQ_ISEND || ri->kind == ZC_MPI_REQ_PSEND) {
            if (ri->peer != MPI_PROC_NULL) *zc_mpi_slots(c, 1) = (struct zc_ev){c->t1, ZC_EV_MPI_ISEND_COMPLETE, ri->comm, 0, 0, ri->id};
        } else if (ri->kind == ZC_MPI_REQ_NBC) {
            struct zc_ev *e = zc_mpi_slots(c, 2);
            e[0] = (struct zc_ev){c->t1, ZC_EV_MPI_NBC_COMPLETE, ri->comm, ri->bytes, ri->recvd, ((uint64_t)ri->op << 32) | ri->root};
            e[1] = (struct zc_ev){c->t1, ZC_EV_MPI_NBC_REQID, 0, 0, 0, ri->id};
        } else if (st && st != MPI_STATUS_IGNORE && st->MPI_SOURCE != MPI_PROC_NULL) {
            *zc_mpi_slots(c, 1) = (struct zc_ev){c->t1, ZC_EV_MPI_IRECV, ri->comm, zr_status_bytes(st, ri->type),
                                                 zc_mpi_peer_tag(st->MPI_SOURCE, st->MPI_TAG), ri->id};
        }
        /* else a receive from MPI_PROC_NULL: nothing was received */
    }
    ri->active = false;
    if (zr_persistent(ri)) zr_insert(before, ri); /* inactive until the next MPI_Start */
    else zr_free(ri);
}

void zc_mpi_start(struct zc_mpi_call *c, MPI_Request req) {
    /* persistent requests have handles of their own; one started untraced stays inactive */
    if (!c->t) return;
    zr_lock();
    struct zc_rt_slot *f = zr_find(req);
    if (f && f->head) {
        if (!f->head->active) zr_followed(1);
        zr_activate(c, f->head);
    }
    zr_unlock();
}

struct zc_req *zc_mpi_take(MPI_Request req) { return zr_take(req, zc_thread_get()); }

void *zc_mpi_reqs_alloc(int n) { return malloc((size_t)n * (sizeof(MPI_Request) + sizeof(struct zc_req *))); }

bool zc_mpi_need_status(struct zc_req *const *ris, int n) {
    if (zc_mpi_deferred) return n > 0; /* whatever the writer matches may be a receive */
    for (int i = 0; ris && i < n; i++) {
        const struct zc_req *r = ris[i];
        if (!r) continue;
        if (zr_is_v(r)) {
            if (zr_v_kind(zr_v(r)) == ZR_V_IRECV || (zr_v(r) & ZR_V_CANCELLED)) return true;
        } else if (r->kind == ZC_MPI_REQ_IRECV || r->kind == ZC_MPI_REQ_PRECV || r->cancelled) {
            return true;
        }
    }
    return false;
}

static void not_completed(struct zc_mpi_call *c, MPI_Request before, struct zc_req *ri, bool tested) {
    if (tested && c->t) {
        if (zr_is_v(ri)) *zc_mpi_slots(c, 1) = (struct zc_ev){c->t1, ZC_EV_MPI_REQUEST_TEST, 0, 0, 0, zr_v_id(zr_v(ri))};
        else if (ri->active) *zc_mpi_slots(c, 1) = (struct zc_ev){c->t1, ZC_EV_MPI_REQUEST_TEST, 0, 0, 0, ri->id};
    }
    zr_put_back(before, ri);
}

/* After a call that failed: a request whose handle MPI reset to MPI_REQUEST_NULL completed (its
 * status is not reliable, so no receive details), the others are put back. */
static void settle_failed(struct zc_mpi_call *c, MPI_Request before, struct zc_req *ri, MPI_Request after) {
    if (after == MPI_REQUEST_NULL && (zr_is_v(ri) || !zr_persistent(ri))) zr_completed(c, before, ri, MPI_STATUS_IGNORE);
    else zr_put_back(before, ri);
}

/* Anything but every request completing (a test that found some pending, a failure). */
/* A handle the writer matches: what the call did to it (as settle_failed, zr_completed and
 * not_completed do to a record). */
static void raw_settle(struct zc_mpi_call *c, MPI_Request before, MPI_Request after, int rc, bool completed, bool tested,
                       const MPI_Status *st) {
    if (rc != MPI_SUCCESS) {
        if (after == MPI_REQUEST_NULL) zr_raw_done(c, before, MPI_STATUS_IGNORE);
    } else if (completed) {
        zr_raw_done(c, before, st);
    } else if (tested) {
        zr_raw_test(c, before);
    }
}

/* Anything but every request completing (a test that found some pending, a failure). */
void zc_mpi_settle_all_slow(struct zc_mpi_call *c, const MPI_Request *before, struct zc_req **ris, int n,
                            const MPI_Request *after, int rc, int flag, bool test, const MPI_Status *sts) {
    for (int i = 0; i < n; i++) {
        if (!ris[i]) {
            if (zr_raw(NULL, before[i]))
                raw_settle(c, before[i], after ? after[i] : before[i], rc, flag, test, sts ? &sts[i] : NULL);
            continue;
        }
        if (rc != MPI_SUCCESS) settle_failed(c, before[i], ris[i], after ? after[i] : before[i]);
        else if (flag) zr_completed(c, before[i], ris[i], sts ? &sts[i] : NULL);
        else not_completed(c, before[i], ris[i], test);
    }
}

void zc_mpi_settle_one(struct zc_mpi_call *c, MPI_Request before, struct zc_req *ri, MPI_Request after, int rc, int flag,
                       bool test, const MPI_Status *st) {
    if (!ri) {
        if (zr_raw(NULL, before)) raw_settle(c, before, after, rc, flag, test, st);
        return;
    }
    if (rc != MPI_SUCCESS) settle_failed(c, before, ri, after);
    else if (flag) zr_completed(c, before, ri, st);
    else not_completed(c, before, ri, test);
}

void zc_mpi_settle_any(struct zc_mpi_call *c, const MPI_Request *before, struct zc_req **ris, int n,
                       const MPI_Request *after, int rc, int flag, bool test, int index, const MPI_Status *st) {
    if (!ris && !before) return; /* not followed; ris NULL with before: all the writer's */
    for (int i = 0; i < n; i++) {
        /* one test record per call */
        if (!ris || !ris[i]) {
            if (zr_raw(NULL, before[i]))
                raw_settle(c, before[i], after ? after[i] : before[i], rc, flag && i == index, test && i == 0, st);
            continue;
        }
        if (rc != MPI_SUCCESS) settle_failed(c, before[i], ris[i], after ? after[i] : before[i]);
        else if (flag && i == index) zr_completed(c, before[i], ris[i], st);
        else not_completed(c, before[i], ris[i], test && i == 0);
    }
}

/* zc_mpi_settle_all's other cases when every handle is the writer's */
void zc_mpi_settle_raw_slow(struct zc_mpi_call *c, const MPI_Request *before, int n, const MPI_Request *after, int rc,
                            int flag, bool test, const MPI_Status *sts) {
    for (int i = 0; i < n; i++)
        if (before[i] != MPI_REQUEST_NULL)
            raw_settle(c, before[i], after ? after[i] : before[i], rc, flag, test, sts ? &sts[i] : NULL);
}

#define ZR_SETTLED ((struct zc_req *)(uintptr_t)2) /* settle_some: completed already */
void zc_mpi_settle_some(struct zc_mpi_call *c, const MPI_Request *before, struct zc_req **ris, int n,
                        const MPI_Request *after, int rc, bool test, int outcount, const int *indices,
                        const MPI_Status *sts) {
    struct zc_req *own[64], **scratch = NULL;
    if (!ris) { /* all the writer's (or not followed): a scratch array to mark the completed */
        if (!before || n <= 0) return;
        ris = scratch = n <= 64 ? own : calloc((size_t)n, sizeof(*ris));
        if (!ris) return;
        if (ris == own) memset(own, 0, (size_t)n * sizeof(*own));
    }
    if (rc == MPI_SUCCESS && outcount != MPI_UNDEFINED)
        for (int k = 0; k < outcount; k++) {
            int i = indices[k];
            if (i < 0 || i >= n || ris[i] == ZR_SETTLED) continue;
            if (ris[i]) zr_completed(c, before[i], ris[i], sts ? &sts[k] : NULL);
            else if (zr_raw(NULL, before[i])) zr_raw_done(c, before[i], sts ? &sts[k] : NULL);
            ris[i] = ZR_SETTLED;
        }
    for (int i = 0; i < n; i++) {
        if (ris[i] == ZR_SETTLED) continue;
        if (!ris[i]) {
            if (zr_raw(NULL, before[i])) raw_settle(c, before[i], after ? after[i] : before[i], rc, false, test, NULL);
            continue;
        }
        if (rc != MPI_SUCCESS) settle_failed(c, before[i], ris[i], after ? after[i] : before[i]);
        else not_completed(c, before[i], ris[i], test);
    }
    if (scratch && scratch != own) free(scratch);
}

/* before MPI_Request_free: a request of the table goes; the writer forgets one it matches */
void zc_mpi_req_forget(struct zc_mpi_call *c, MPI_Request req) {
    c->has_pre = false;
    struct zc_req *r = zc_mpi_take(req);
    if (r) zr_free(r);
    else if (zr_raw(NULL, req) && c->t) {
        c->pre = (struct zc_ev){c->t0, ZC_EV_MPI_FREE_H, 0, 0, 0, (uint64_t)(uintptr_t)req};
        zr_raw_gone(1);
        c->has_pre = true;
    }
}

void zc_mpi_req_cancelled(MPI_Request req) {
    zr_lock();
    struct zc_rt_slot *f = zr_find(req);
    if (f && f->v) f->v |= ZR_V_CANCELLED;
    else if (f && f->head) f->head->cancelled = true;
    zr_unlock();
}

/* ---------------------------------------------------------------- collectives */
static uint64_t sum_bytes(const int *counts, int n, MPI_Datatype t, const MPI_Datatype *types) {
    uint64_t s = 0;
    for (int i = 0; counts && i < n; i++) s += zc_mpi_bytes_of(counts[i], types ? types[i] : t);
    return s;
}

/* Entries of a collective's per-peer arrays on comm: the (remote) group size, or for neighbourhood
 * collectives the neighbours it receives from (in) and sends to (out). */
void zc_mpi_coll_peers(MPI_Comm comm, int neighbor, int *in, int *out) {
    int size = 1, inter = 0;
    PMPI_Comm_test_inter(comm, &inter);
    if (inter) PMPI_Comm_remote_size(comm, &size);
    else PMPI_Comm_size(comm, &size);
    *in = *out = size;
    if (!neighbor) return;
    int topo = MPI_UNDEFINED, rank = 0;
    *in = *out = 0;
    PMPI_Topo_test(comm, &topo);
    PMPI_Comm_rank(comm, &rank);
    if (topo == MPI_CART) {
        int nd = 0;
        PMPI_Cartdim_get(comm, &nd);
        *in = *out = 2 * nd;
    } else if (topo == MPI_GRAPH) {
        PMPI_Graph_neighbors_count(comm, rank, in);
        *out = *in;
    } else if (topo == MPI_DIST_GRAPH) {
        int w = 0;
        PMPI_Dist_graph_neighbors_count(comm, in, out, &w);
    }
}

/* Bytes this rank contributes (sent) and obtains (received): the payload of its send and receive
 * buffers as the operation uses them on this rank (mpi/README.md). */
static void coll_bytes(OTF2_CollectiveOp op, int neighbor, MPI_Comm comm, int scount, MPI_Datatype stype, int rcount,
                       MPI_Datatype rtype, const int *scounts, const int *rcounts, const MPI_Datatype *stypes,
                       const MPI_Datatype *rtypes, int root, uint64_t *sent, uint64_t *recvd) {
    int size = 1, rank = 0, inter = 0, nin, nout;
    PMPI_Comm_test_inter(comm, &inter);
    if (inter) PMPI_Comm_remote_size(comm, &size);
    else PMPI_Comm_size(comm, &size);
    PMPI_Comm_rank(comm, &rank);
    zc_mpi_coll_peers(comm, neighbor, &nin, &nout);
    bool is_root = inter ? root == MPI_ROOT : root == rank;
    uint64_t sb = zc_mpi_bytes_of(scount, stype), rb = zc_mpi_bytes_of(rcount, rtype);
    *sent = *recvd = 0;
    switch (op) {
    case OTF2_COLLECTIVE_OP_BARRIER: break;
    case OTF2_COLLECTIVE_OP_BCAST:
        if (is_root) *sent = sb;
        else *recvd = rb;
        break;
    case OTF2_COLLECTIVE_OP_GATHER:
        if (!inter || !is_root) *sent = sb;
        if (is_root) *recvd = (uint64_t)size * rb;
        break;
    case OTF2_COLLECTIVE_OP_GATHERV:
        if (!inter || !is_root) *sent = sb;
        if (is_root) *recvd = sum_bytes(rcounts, size, rtype, NULL);
        break;
    case OTF2_COLLECTIVE_OP_SCATTER:
        if (is_root) *sent = (uint64_t)size * sb;
        if (!inter || !is_root) *recvd = rb;
        break;
    case OTF2_COLLECTIVE_OP_SCATTERV:
        if (is_root) *sent = sum_bytes(scounts, size, stype, NULL);
        if (!inter || !is_root) *recvd = rb;
        break;
    case OTF2_COLLECTIVE_OP_ALLGATHER:
        *sent = neighbor ? (uint64_t)nout * sb : sb;
        *recvd = (uint64_t)nin * rb;
        break;
    case OTF2_COLLECTIVE_OP_ALLGATHERV:
        *sent = neighbor ? (uint64_t)nout * sb : sb;
        *recvd = sum_bytes(rcounts, nin, rtype, NULL);
        break;
    case OTF2_COLLECTIVE_OP_ALLTOALL:
        *sent = (uint64_t)nout * sb;
        *recvd = (uint64_t)nin * rb;
        break;
    case OTF2_COLLECTIVE_OP_ALLTOALLV:
        *sent = sum_bytes(scounts, nout, stype, NULL);
        *recvd = sum_bytes(rcounts, nin, rtype, NULL);
        break;
    case OTF2_COLLECTIVE_OP_ALLTOALLW:
        *sent = sum_bytes(scounts, nout, stype, stypes);
        *recvd = sum_bytes(rcounts, nin, rtype, rtypes);
        break;
    case OTF2_COLLECTIVE_OP_REDUCE:
        *sent = sb;
        if (is_root) *recvd = rb;
        break;
    case OTF2_COLLECTIVE_OP_REDUCE_SCATTER:
        *sent = sum_bytes(rcounts, size, stype != MPI_DATATYPE_NULL_ZC ? stype : rtype, NULL);
        *recvd = rcounts ? zc_mpi_bytes_of(rcounts[rank < size ? rank : 0], rtype) : 0;
        break;
    case OTF2_COLLECTIVE_OP_REDUCE_SCATTER_BLOCK:
        *sent = (uint64_t)size * rb;
        *recvd = rb;
        break;
    default: /* ALLREDUCE, SCAN, EXSCAN */
        *sent = sb;
        *recvd = rb;
        break;
    }
}

static uint32_t otf2_root(OTF2_CollectiveOp op, int root) {
    return root == ZC_MPI_NO_ROOT || root < 0 ? OTF2_COLLECTIVE_ROOT_NONE : (uint32_t)root;
}

/* before the MPI call: held until zc_mpi_open */
void zc_mpi_coll_begin(struct zc_mpi_call *c) {
    c->has_pre = false;
    if (!c->t) return;
    c->pre = (struct zc_ev){c->t0, ZC_EV_MPI_COLL_BEGIN, 0, 0, 0, 0};
    c->has_pre = true;
}

void zc_mpi_coll_end(struct zc_mpi_call *c, OTF2_CollectiveOp op, int neighbor, MPI_Comm comm, int scount,
                     MPI_Datatype stype, int rcount, MPI_Datatype rtype, const int *scounts, const int *rcounts,
                     const MPI_Datatype *stypes, const MPI_Datatype *rtypes, int root) {
    if (!c->t) return;
    uint64_t sent, recvd;
    coll_bytes(op, neighbor, comm, scount, stype, rcount, rtype, scounts, rcounts, stypes, rtypes, root, &sent, &recvd);
    uint32_t comm_id = zc_mpi_comm_id(comm);
    *zc_mpi_slots(c, 1) = (struct zc_ev){c->t1, ZC_EV_MPI_COLL_END, comm_id, sent, recvd, ((uint64_t)op << 32) | otf2_root(op, root)};
}

void zc_mpi_icoll(struct zc_mpi_call *c, OTF2_CollectiveOp op, int neighbor, MPI_Comm comm, int scount,
                  MPI_Datatype stype, int rcount, MPI_Datatype rtype, const int *scounts, const int *rcounts,
                  const MPI_Datatype *stypes, const MPI_Datatype *rtypes, int root, MPI_Request req) {
    if (!c->t || req == MPI_REQUEST_NULL) return;
    struct zc_req *ri = zr_alloc();
    if (!ri) return;
    memset(ri, 0, sizeof(*ri));
    ri->kind = ZC_MPI_REQ_NBC;
    ri->owner = c->t;
    ri->comm = zc_mpi_comm_id(comm);
    ri->op = op;
    ri->root = otf2_root(op, root);
    /* the counts are read now: the app may reuse its arrays before completion */
    coll_bytes(op, neighbor, comm, scount, stype, rcount, rtype, scounts, rcounts, stypes, rtypes, root, &ri->bytes,
               &ri->recvd);
    zr_activate(c, ri);
    zr_insert(req, ri);
}
