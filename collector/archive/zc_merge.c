/* SPDX-License-Identifier: MIT */
/* Merging per-rank definitions into an archive's global definitions (zc_merge.h): what rank 0
 * does at the collective close (zc_unify.c) and what zecoll-salvage does with the definitions
 * journals of a dead run, so that both write the same layout.
 *
 * Global layout (ids dense and ascending per type, as OTF2 readers require):
 *   system tree: 0 machine, then one node per host, then one per (host, device UUID);
 *   location groups: rank r's process is r (OTF2: process group id = MPI rank), then the
 *     accelerator groups of rank 0, rank 1, ...;
 *   groups: 0 = every rank's locations (Level Zero COMM_LOCATIONS), 1+r = rank r's Level Zero
 *     communicator; then, if MPI was traced, the MPI COMM_LOCATIONS (one location per rank),
 *     the COMM_SELF group and one COMM_GROUP per distinct member list;
 *   communicators: r = rank r's Level Zero communicator, then MPI communicators;
 *   RMA windows: r = rank r's Level Zero window (on communicator r). */
#include "zc_merge.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ZC_UNIFY_MAGIC UINT64_C(0x7a63756e69667931) /* "zcunify1" */
#define ZC_UNIFY_MAX_METRICS 16 /* ZC_PAPI_MAX_EVENTS */

/* ---------------------------------------------------------------- one rank */
int64_t zc_merge_offset_at(const struct zc_clock_offset *o, int n, uint64_t t) {
    if (n <= 0) return 0;
    if (n == 1 || o[1].local == o[0].local) return o[0].offset;
    long double f = ((long double)t - (long double)o[0].local) / ((long double)o[1].local - (long double)o[0].local);
    return o[0].offset + (int64_t)(f * (long double)(o[1].offset - o[0].offset));
}

void zc_merge_serialize(struct zc_wbuf *b, const struct zc_merge_src *src) {
    const struct zc_defs *d = src->defs;
    zc_wbuf_put_n(b, (const uint64_t[]){ZC_UNIFY_MAGIC, src->rank}, 2);
    zc_wbuf_put_str(b, src->host);
    zc_wbuf_put_n(b, (const uint64_t[]){src->tmin, src->tmax, src->mpi_loc}, 3);
    /* each table: its count, then its elements */
    const struct {
        uint32_t n;
        zc_wbuf_put_defs_fn put;
    } tables[] = {{d->nstrings, zc_wbuf_put_strings}, {d->nregions, zc_wbuf_put_regions},
                  {d->ndevices, zc_wbuf_put_devices}, {d->ngroups, zc_wbuf_put_groups},
                  {d->ncomms, zc_wbuf_put_comms},     {d->nmetrics, zc_wbuf_put_metrics}};
    for (size_t t = 0; t < sizeof(tables) / sizeof(tables[0]); t++) {
        zc_wbuf_put(b, tables[t].n);
        tables[t].put(b, d, 0);
    }
    zc_wbuf_put(b, src->nlocs);
    for (size_t i = 0; i < src->nlocs; i++) {
        const struct zc_merge_loc *l = &src->locs[i];
        zc_wbuf_put(b, l->id);
        zc_wbuf_put_str(b, l->name);
        zc_wbuf_put_n(b, (const uint64_t[]){l->kind, l->otf2_events, l->group, l->comm_rank, l->recorded, l->clamped,
                                            l->dropped, l->data_end}, 8);
    }
}

/* ---------------------------------------------------------------- rank 0: merging */
struct rloc {
    uint64_t id, events, group, comm_rank;
    uint64_t recorded, clamped, dropped; /* the location's counters (LocationProperty) */
    uint64_t data_end;                   /* salvaged archives: where the rank's records end */
    uint32_t kind, name;
};
struct rcomm {
    uint32_t kind, name, parent, n, nremote;
    const uint64_t *members;
    const char *key;
};
struct rank_defs {
    bool ok;
    const char *host;
    uint64_t tmin, tmax, mpi_loc;
    uint32_t nstrings, nregions, ndevices, ngroups, ncomms, nlocs, nmetrics;
    uint32_t *smap;                /* local string -> global */
    const uint64_t *regions, *devices, *groups, *metrics;
    struct rcomm *comms;
    struct rloc *locs;
    uint32_t host_node, l0_base;   /* system tree node; first index in group 0 */
    uint32_t *dev_node;            /* local device -> system tree node */
    uint32_t group_base;           /* global id of its first accelerator location group */
    uint64_t *rmap, *cmap;         /* regions, communicators: local -> global */
    uint64_t mclass;               /* its metric class (local 0) -> global, if nmetrics */
};

/* open-addressing table of ids keyed by a 64-bit hash; equality is checked by the caller */
struct htab {
    uint32_t *slot;
    uint64_t *hash;
    size_t cap, n;
};

static bool ht_grow(struct htab *t) {
    if (t->n * 2 < t->cap) return true;
    size_t ncap = t->cap ? 2 * t->cap : 1024;
    uint32_t *s = malloc(ncap * sizeof(*s));
    uint64_t *h = malloc(ncap * sizeof(*h));
    if (!s || !h) {
        free(s);
        free(h);
        return false;
    }
    memset(s, 0xff, ncap * sizeof(*s));
    for (size_t i = 0; i < t->cap; i++) {
        if (t->slot[i] == ZC_NO_ID) continue;
        size_t j = t->hash[i] & (ncap - 1);
        while (s[j] != ZC_NO_ID) j = (j + 1) & (ncap - 1);
        s[j] = t->slot[i];
        h[j] = t->hash[i];
    }
    free(t->slot);
    free(t->hash);
    t->slot = s;
    t->hash = h;
    t->cap = ncap;
    return true;
}

/* Finds id with this hash for which eq(id) holds; else inserts next_id. Returns the id. */
static uint32_t ht_find(struct htab *t, uint64_t h, bool (*eq)(uint32_t, const void *), const void *arg, uint32_t next_id,
                        bool *added) {
    *added = false;
    if (!ht_grow(t)) return ZC_NO_ID;
    size_t j = h & (t->cap - 1);
    for (; t->slot[j] != ZC_NO_ID; j = (j + 1) & (t->cap - 1))
        if (t->hash[j] == h && eq(t->slot[j], arg)) return t->slot[j];
    t->slot[j] = next_id;
    t->hash[j] = h;
    t->n++;
    *added = true;
    return next_id;
}

static uint64_t fnv(const void *p, size_t n, uint64_t h) {
    const unsigned char *c = p;
    for (size_t i = 0; i < n; i++) h = (h ^ c[i]) * 1099511628211ull;
    return h;
}
#define FNV0 1469598103934665603ull

struct vec {
    void *v;
    size_t n, cap, elem;
    bool oom;
};

static void *vpush(struct vec *a) {
    if (a->n == a->cap) {
        size_t ncap = a->cap ? 2 * a->cap : 64;
        void *p = a->oom ? NULL : realloc(a->v, ncap * a->elem);
        if (!p) {
            a->oom = true;
            return NULL;
        }
        a->v = p;
        a->cap = ncap;
    }
    void *e = (char *)a->v + a->n++ * a->elem;
    memset(e, 0, a->elem);
    return e;
}

/* the merged definitions */
struct gregion {
    uint32_t name, role, paradigm;
};
struct gcomm {
    uint32_t kind, name, parent, group, group_b;
    const char *key;
};
struct ggroup {
    const uint64_t *members; /* world ranks */
    uint32_t n;
};
struct gmember {
    uint32_t name, descr, unit, type, mode;
};
struct gclass {
    uint32_t n;
    uint32_t m[ZC_UNIFY_MAX_METRICS]; /* global members */
};
struct merged {
    struct vec strings; /* const char * */
    struct htab string_ht;
    struct vec regions; /* struct gregion */
    struct htab region_ht;
    struct vec hosts;   /* const char * (host nodes 1..) */
    struct vec devs;    /* struct { host node, uuid, name } */
    struct vec comms;   /* struct gcomm (MPI; global id = size + index) */
    struct htab comm_ht;
    struct vec groups;  /* struct ggroup (MPI COMM_GROUPs) */
    struct htab group_ht;
    struct vec members; /* struct gmember (PAPI counters) */
    struct htab member_ht;
    struct vec classes; /* struct gclass: one per distinct list of members */
    struct htab class_ht;
    bool oom;
};
static struct merged *M; /* for the equality callbacks */

/* The global id of what key identifies (eq compares an id's entry with key): the one found in
 * t, else a new one, whose entry item (v->elem bytes) is appended to v. 0 when out of memory
 * (M->oom set). */
static uint32_t intern(struct htab *t, struct vec *v, uint64_t h, bool (*eq)(uint32_t, const void *), const void *key,
                       const void *item) {
    bool added;
    uint32_t id = ht_find(t, h, eq, key, (uint32_t)v->n, &added);
    if (id == ZC_NO_ID) {
        M->oom = true;
        return 0;
    }
    if (added) {
        void *p = vpush(v);
        if (p) memcpy(p, item, v->elem);
        else M->oom = true;
    }
    return id;
}

static bool str_eq(uint32_t id, const void *s) { return strcmp(((const char **)M->strings.v)[id], s) == 0; }

static uint32_t gstr(const char *s) { return intern(&M->string_ht, &M->strings, fnv(s, strlen(s), FNV0), str_eq, s, &s); }

static bool region_eq(uint32_t id, const void *a) {
    const struct gregion *x = &((struct gregion *)M->regions.v)[id], *y = a;
    return x->name == y->name && x->role == y->role && x->paradigm == y->paradigm;
}

static bool comm_eq(uint32_t id, const void *key) { return strcmp(((struct gcomm *)M->comms.v)[id].key, key) == 0; }

static bool group_eq(uint32_t id, const void *a) {
    const struct ggroup *x = &((struct ggroup *)M->groups.v)[id], *y = a;
    return x->n == y->n && (x->n == 0 || memcmp(x->members, y->members, x->n * sizeof(uint64_t)) == 0);
}

/* PAPI counters: members are one per (name, unit, type, mode), classes one per member list */
static bool member_eq(uint32_t id, const void *a) {
    const struct gmember *x = &((struct gmember *)M->members.v)[id], *y = a;
    return x->name == y->name && x->unit == y->unit && x->type == y->type && x->mode == y->mode;
}

static bool class_eq(uint32_t id, const void *a) {
    const struct gclass *x = &((struct gclass *)M->classes.v)[id], *y = a;
    return x->n == y->n && memcmp(x->m, y->m, x->n * sizeof(x->m[0])) == 0;
}

/* MPI COMM_GROUP for this member list (global group id offset added by the writer) */
static uint32_t ggroup(const uint64_t *m, uint32_t n) {
    struct ggroup g = {m, n};
    return intern(&M->group_ht, &M->groups, fnv(m, n * sizeof(uint64_t), FNV0), group_eq, &g, &g);
}

/* a count, then that many rows of `width` words in place; NULL when the words run out */
static const uint64_t *get_rows(struct zc_rbuf *b, uint32_t *n, uint32_t width) {
    *n = (uint32_t)zc_rbuf_get(b);
    return zc_rbuf_get_n(b, (uint64_t)width * *n);
}

/* a count, then room for that many entries of elem bytes (and one more: never empty); NULL when
 * the words ran out or out of memory */
static void *get_table(struct zc_rbuf *b, uint32_t *n, size_t elem) {
    *n = (uint32_t)zc_rbuf_get(b);
    return b->bad ? NULL : calloc((size_t)*n + 1, elem);
}

static bool parse_rank(struct rank_defs *r, const uint64_t *w, size_t nwords) {
    struct zc_rbuf b = {w, nwords, 0, false};
    if (zc_rbuf_get(&b) != ZC_UNIFY_MAGIC) return false;
    (void)zc_rbuf_get(&b); /* rank */
    r->host = zc_rbuf_get_str(&b);
    r->tmin = zc_rbuf_get(&b);
    r->tmax = zc_rbuf_get(&b);
    r->mpi_loc = zc_rbuf_get(&b);
    r->smap = get_table(&b, &r->nstrings, sizeof(uint32_t));
    if (!r->smap) return false;
    for (uint32_t i = 0; i < r->nstrings && !b.bad; i++) r->smap[i] = gstr(zc_rbuf_get_str(&b));
    r->regions = get_rows(&b, &r->nregions, 3);
    r->devices = get_rows(&b, &r->ndevices, 3);
    r->groups = get_rows(&b, &r->ngroups, 2);
    r->comms = get_table(&b, &r->ncomms, sizeof(*r->comms));
    if (!r->comms) return false;
    for (uint32_t i = 0; i < r->ncomms && !b.bad; i++) {
        struct rcomm *c = &r->comms[i];
        c->kind = (uint32_t)zc_rbuf_get(&b);
        c->name = (uint32_t)zc_rbuf_get(&b);
        c->parent = (uint32_t)zc_rbuf_get(&b);
        c->n = (uint32_t)zc_rbuf_get(&b);
        c->nremote = (uint32_t)zc_rbuf_get(&b);
        c->members = zc_rbuf_get_n(&b, (uint64_t)c->n + c->nremote);
        c->key = zc_rbuf_get_str(&b);
    }
    r->metrics = get_rows(&b, &r->nmetrics, 5);
    r->locs = get_table(&b, &r->nlocs, sizeof(*r->locs));
    if (!r->locs) return false;
    for (uint32_t i = 0; i < r->nlocs && !b.bad; i++) {
        struct rloc *l = &r->locs[i];
        l->id = zc_rbuf_get(&b);
        l->name = gstr(zc_rbuf_get_str(&b));
        l->kind = (uint32_t)zc_rbuf_get(&b);
        l->events = zc_rbuf_get(&b);
        l->group = zc_rbuf_get(&b);
        l->comm_rank = zc_rbuf_get(&b);
        l->recorded = zc_rbuf_get(&b);
        l->clamped = zc_rbuf_get(&b);
        l->dropped = zc_rbuf_get(&b);
        l->data_end = zc_rbuf_get(&b);
    }
    return !b.bad;
}

static uint32_t lstr(const struct rank_defs *r, uint64_t local) {
    return local < r->nstrings ? r->smap[local] : gstr("");
}

static OTF2_RegionRole role_of(uint32_t r) {
    switch (r) {
    case ZC_ROLE_WRAPPER: return OTF2_REGION_ROLE_WRAPPER;
    case ZC_ROLE_DATA_TRANSFER: return OTF2_REGION_ROLE_DATA_TRANSFER;
    case ZC_ROLE_ALLOCATE: return OTF2_REGION_ROLE_ALLOCATE;
    case ZC_ROLE_DEALLOCATE: return OTF2_REGION_ROLE_DEALLOCATE;
    case ZC_ROLE_BARRIER: return OTF2_REGION_ROLE_BARRIER;
    case ZC_ROLE_ARTIFICIAL: return OTF2_REGION_ROLE_ARTIFICIAL;
    case ZC_ROLE_P2P: return OTF2_REGION_ROLE_POINT2POINT;
    case ZC_ROLE_COLL_ONE2ALL: return OTF2_REGION_ROLE_COLL_ONE2ALL;
    case ZC_ROLE_COLL_ALL2ONE: return OTF2_REGION_ROLE_COLL_ALL2ONE;
    case ZC_ROLE_COLL_ALL2ALL: return OTF2_REGION_ROLE_COLL_ALL2ALL;
    case ZC_ROLE_COLL_OTHER: return OTF2_REGION_ROLE_COLL_OTHER;
    default: return OTF2_REGION_ROLE_FUNCTION;
    }
}

static OTF2_Paradigm paradigm_of(uint32_t p) {
    switch (p) {
    case ZC_PARADIGM_MPI: return OTF2_PARADIGM_MPI;
    case ZC_PARADIGM_MEASUREMENT: return OTF2_PARADIGM_MEASUREMENT_SYSTEM;
    default: return OTF2_PARADIGM_OPENCL; /* OTF2 3.0 has no Level Zero paradigm; named below */
    }
}

struct dev_node {
    uint32_t host, uuid, name;
};

static uint32_t gmetric_class(const struct rank_defs *r) {
    struct gclass c = {0, {0}};
    for (uint32_t i = 0; i < r->nmetrics && i < ZC_UNIFY_MAX_METRICS; i++) {
        const uint64_t *x = &r->metrics[5 * i];
        struct gmember g = {lstr(r, x[0]), lstr(r, x[1]), lstr(r, x[2]), (uint32_t)x[3], (uint32_t)x[4]};
        /* the description is not part of the identity: the first rank's is kept */
        struct gmember key = {g.name, 0, g.unit, g.type, g.mode};
        c.m[c.n++] = intern(&M->member_ht, &M->members, fnv(&key, sizeof(key), FNV0), member_eq, &g, &g);
    }
    return intern(&M->class_ht, &M->classes, fnv(c.m, c.n * sizeof(c.m[0]), FNV0), class_eq, &c, &c);
}

/* Merges every rank's definitions; fills each rank's maps. Returns false when out of memory. */
static bool merge(struct rank_defs *R, uint32_t size) {
    /* hosts, then devices: system tree ids ascend by kind */
    for (uint32_t r = 0; r < size; r++) {
        if (!R[r].ok) continue;
        size_t h;
        for (h = 0; h < M->hosts.n && strcmp(((const char **)M->hosts.v)[h], R[r].host); h++) {
        }
        if (h == M->hosts.n) {
            const char **p = vpush(&M->hosts);
            if (!p) return false;
            *p = R[r].host;
        }
        R[r].host_node = 1 + (uint32_t)h;
    }
    for (uint32_t r = 0; r < size; r++) {
        struct rank_defs *x = &R[r];
        if (!x->ok) continue;
        x->dev_node = calloc(x->ndevices + 1, sizeof(uint32_t));
        if (!x->dev_node) return false;
        for (uint32_t i = 0; i < x->ndevices; i++) {
            uint32_t uuid = lstr(x, x->devices[3 * i + 2]), name = lstr(x, x->devices[3 * i + 1]);
            size_t k;
            struct dev_node *dn = M->devs.v;
            /* ranks of one node sharing a device share its node in the tree */
            for (k = 0; k < M->devs.n && !(dn[k].host == x->host_node && dn[k].uuid == uuid); k++) {
            }
            if (k == M->devs.n) {
                struct dev_node *p = vpush(&M->devs);
                if (!p) return false;
                *p = (struct dev_node){x->host_node, uuid, name};
            }
            x->dev_node[i] = 1 + (uint32_t)M->hosts.n + (uint32_t)k;
        }
    }
    uint32_t next_group = size, l0_base = 0;
    for (uint32_t r = 0; r < size; r++) {
        struct rank_defs *x = &R[r];
        if (!x->ok) continue;
        x->group_base = next_group;
        next_group += x->ngroups;
        x->l0_base = l0_base;
        l0_base += x->nlocs;
        x->rmap = calloc(x->nregions + 1, sizeof(uint64_t));
        x->cmap = calloc(x->ncomms + 1, sizeof(uint64_t));
        if (!x->rmap || !x->cmap) return false;
        for (uint32_t i = 0; i < x->nregions; i++) {
            struct gregion g = {lstr(x, x->regions[3 * i]), (uint32_t)x->regions[3 * i + 1],
                                (uint32_t)x->regions[3 * i + 2]};
            x->rmap[i] = intern(&M->region_ht, &M->regions, fnv(&g, sizeof(g), FNV0), region_eq, &g, &g);
            if (M->oom || M->regions.oom) return false;
        }
        if (x->nmetrics) x->mclass = gmetric_class(x);
        for (uint32_t i = 0; i < x->ncomms; i++) {
            const struct rcomm *c = &x->comms[i];
            if (c->kind == ZC_COMM_L0) {
                x->cmap[i] = r;
                continue;
            }
            bool added;
            uint32_t id = ht_find(&M->comm_ht, fnv(c->key, strlen(c->key), FNV0), comm_eq, c->key, (uint32_t)M->comms.n,
                                  &added);
            if (id == ZC_NO_ID) return false;
            x->cmap[i] = size + id;
            if (!added) {
                /* ranks may name a communicator or not, and differently (MPI_Comm_set_name is
                 * local): it takes the name of the lowest rank that gave it one */
                struct gcomm *g = &((struct gcomm *)M->comms.v)[id];
                uint32_t nm = lstr(x, c->name);
                if (g->name == gstr("") && nm != g->name) g->name = nm;
                continue;
            }
            struct gcomm *g = vpush(&M->comms);
            if (!g) return false;
            g->kind = c->kind;
            g->name = lstr(x, c->name);
            g->key = c->key;
            /* the parent was met before the child on this rank, so it is already mapped */
            g->parent = c->parent < i ? (uint32_t)x->cmap[c->parent] : OTF2_UNDEFINED_COMM;
            if (c->kind == ZC_COMM_MPI_SELF) continue;
            if (c->kind == ZC_COMM_MPI_INTER) {
                /* both sides define it: group A is the side holding the lowest world rank */
                const uint64_t *a = c->members, *b = c->members + c->n;
                uint32_t na = c->n, nb = c->nremote;
                uint64_t mina = UINT64_MAX, minb = UINT64_MAX;
                for (uint32_t k = 0; k < na; k++) mina = a[k] < mina ? a[k] : mina;
                for (uint32_t k = 0; k < nb; k++) minb = b[k] < minb ? b[k] : minb;
                if (minb < mina) {
                    g->group = ggroup(b, nb);
                    g->group_b = ggroup(a, na);
                } else {
                    g->group = ggroup(a, na);
                    g->group_b = ggroup(b, nb);
                }
            } else {
                g->group = ggroup(c->members, c->n);
            }
        }
    }
    return !M->oom && !M->strings.oom && !M->regions.oom && !M->comms.oom && !M->groups.oom && !M->members.oom &&
           !M->classes.oom;
}

static void write_global(OTF2_Archive *archive, struct rank_defs *R, uint32_t size, bool mpi, zc_merge_msg_fn msg) {
    OTF2_GlobalDefWriter *g = OTF2_Archive_GetGlobalDefWriter(archive);
    if (!g) {
        msg(true, "no OTF2 global definition writer");
        return;
    }
    /* every string first */
    uint32_t s_machine = gstr("machine"), s_node = gstr("node"), s_l0 = gstr("Level Zero");
    uint32_t s_devclass = gstr("Level Zero Device"), s_uuid = gstr("UUID"), s_comm = gstr("L0");
    uint32_t s_win = gstr("L0_WINDOW"), s_empty = gstr(""), s_callsite = gstr("callsite id");
    uint32_t s_mpi = gstr("MPI"), s_self = gstr("MPI_COMM_SELF");
    /* per-location counters, for readers' data-quality reports (docs/archive.md) */
    uint32_t s_p_events = gstr("zecoll::events"), s_p_clamped = gstr("zecoll::clamped");
    uint32_t s_p_dropped = gstr("zecoll::dropped"), s_p_end = 0;
    bool salvaged = false;
    for (uint32_t r = 0; r < size; r++)
        for (uint32_t i = 0; R[r].ok && i < R[r].nlocs; i++) salvaged |= R[r].locs[i].data_end != 0;
    if (salvaged) s_p_end = gstr("zecoll::data_end");
    uint32_t *s_proc = calloc(size + 1, sizeof(uint32_t)), *s_hosts = NULL;
    char (*names)[32] = calloc(size + 1, sizeof(*names));
    size_t ngroups_total = 0;
    for (uint32_t r = 0; r < size; r++) ngroups_total += R[r].ok ? R[r].ngroups : 0;
    uint32_t *s_ctx = calloc(ngroups_total + 1, sizeof(uint32_t));
    char (*ctx_names)[32] = calloc(ngroups_total + 1, sizeof(*ctx_names));
    s_hosts = calloc(M->hosts.n + 1, sizeof(uint32_t));
    if (!s_proc || !names || !s_ctx || !ctx_names || !s_hosts) goto out;
    for (size_t h = 0; h < M->hosts.n; h++) s_hosts[h] = gstr(((const char **)M->hosts.v)[h]);
    for (uint32_t r = 0, k = 0; r < size; r++) {
        snprintf(names[r], sizeof(names[r]), mpi ? "MPI Rank %u" : "Process %u", r);
        s_proc[r] = gstr(names[r]);
        for (uint32_t i = 0; R[r].ok && i < R[r].ngroups; i++, k++) {
            snprintf(ctx_names[k], sizeof(ctx_names[k]), "L0 Context %u", (unsigned)R[r].groups[2 * i + 1]);
            s_ctx[k] = gstr(ctx_names[k]);
        }
    }
    if (M->oom || M->strings.oom) goto out;

    uint64_t tmin = UINT64_MAX, tmax = 0;
    for (uint32_t r = 0; r < size; r++) {
        if (!R[r].ok || R[r].tmin == UINT64_MAX) continue;
        tmin = R[r].tmin < tmin ? R[r].tmin : tmin;
        tmax = R[r].tmax > tmax ? R[r].tmax : tmax;
    }
    OTF2_GlobalDefWriter_WriteClockProperties(g, 1000000000u, tmin == UINT64_MAX ? 0 : tmin,
                                              tmin == UINT64_MAX ? 0 : tmax - tmin, OTF2_UNDEFINED_TIMESTAMP);
    const char **strs = M->strings.v;
    for (size_t i = 0; i < M->strings.n; i++) OTF2_GlobalDefWriter_WriteString(g, (uint32_t)i, strs[i]);
    OTF2_GlobalDefWriter_WriteParadigm(g, OTF2_PARADIGM_OPENCL, s_l0, OTF2_PARADIGM_CLASS_ACCELERATOR);
    const struct gregion *regs = M->regions.v;
    for (size_t i = 0; i < M->regions.n; i++)
        OTF2_GlobalDefWriter_WriteRegion(g, (uint32_t)i, regs[i].name, regs[i].name, s_empty, role_of(regs[i].role),
                                         paradigm_of(regs[i].paradigm), OTF2_REGION_FLAG_NONE, s_empty, 0, 0);
    OTF2_GlobalDefWriter_WriteParameter(g, 0, s_callsite, OTF2_PARAMETER_TYPE_UINT64);
    /* PAPI counters (A19): members, then one class per distinct list of them */
    const struct gmember *gm = M->members.v;
    for (size_t i = 0; i < M->members.n; i++)
        OTF2_GlobalDefWriter_WriteMetricMember(g, (uint32_t)i, gm[i].name, gm[i].descr, OTF2_METRIC_TYPE_PAPI,
                                               (OTF2_MetricMode)gm[i].mode, (OTF2_Type)gm[i].type, OTF2_BASE_DECIMAL, 0,
                                               gm[i].unit);
    const struct gclass *gcl = M->classes.v;
    for (size_t i = 0; i < M->classes.n; i++)
        OTF2_GlobalDefWriter_WriteMetricClass(g, (uint32_t)i, (uint8_t)gcl[i].n, gcl[i].m, OTF2_METRIC_SYNCHRONOUS,
                                              OTF2_RECORDER_KIND_CPU);
    /* system tree: machine > hosts > devices */
    OTF2_GlobalDefWriter_WriteSystemTreeNode(g, 0, s_machine, s_machine, OTF2_UNDEFINED_SYSTEM_TREE_NODE);
    for (size_t h = 0; h < M->hosts.n; h++) {
        OTF2_GlobalDefWriter_WriteSystemTreeNode(g, 1 + (uint32_t)h, s_hosts[h], s_node, 0);
        OTF2_GlobalDefWriter_WriteSystemTreeNodeDomain(g, 1 + (uint32_t)h, OTF2_SYSTEM_TREE_DOMAIN_SHARED_MEMORY);
    }
    const struct dev_node *dn = M->devs.v;
    for (size_t k = 0; k < M->devs.n; k++) {
        uint32_t id = 1 + (uint32_t)M->hosts.n + (uint32_t)k;
        OTF2_GlobalDefWriter_WriteSystemTreeNode(g, id, dn[k].name, s_devclass, dn[k].host);
        OTF2_GlobalDefWriter_WriteSystemTreeNodeDomain(g, id, OTF2_SYSTEM_TREE_DOMAIN_ACCELERATOR_DEVICE);
        OTF2_AttributeValue v;
        v.stringRef = dn[k].uuid;
        OTF2_GlobalDefWriter_WriteSystemTreeNodeProperty(g, id, s_uuid, OTF2_TYPE_STRING, v);
    }
    /* process groups first (id = rank), then accelerator groups: interleaving makes otf2-print
     * complain */
    for (uint32_t r = 0; r < size; r++)
        OTF2_GlobalDefWriter_WriteLocationGroup(g, r, s_proc[r], OTF2_LOCATION_GROUP_TYPE_PROCESS,
                                                R[r].ok ? R[r].host_node : 0, OTF2_UNDEFINED_LOCATION_GROUP);
    for (uint32_t r = 0, k = 0; r < size; r++)
        for (uint32_t i = 0; R[r].ok && i < R[r].ngroups; i++, k++) {
            uint64_t dev = R[r].groups[2 * i];
            OTF2_GlobalDefWriter_WriteLocationGroup(g, R[r].group_base + i, s_ctx[k], OTF2_LOCATION_GROUP_TYPE_ACCELERATOR,
                                                    dev < R[r].ndevices ? R[r].dev_node[dev] : R[r].host_node, r);
        }
    for (uint32_t r = 0; r < size; r++)
        for (uint32_t i = 0; R[r].ok && i < R[r].nlocs; i++) {
            const struct rloc *l = &R[r].locs[i];
            OTF2_GlobalDefWriter_WriteLocation(
                g, l->id, l->name, l->kind == ZC_LOC_THREAD ? OTF2_LOCATION_TYPE_CPU_THREAD : OTF2_LOCATION_TYPE_ACCELERATOR_STREAM,
                l->events, l->group == 0 ? r : R[r].group_base + (uint32_t)l->group - 1);
        }
    for (uint32_t r = 0; r < size; r++)
        for (uint32_t i = 0; R[r].ok && i < R[r].nlocs; i++) {
            const struct rloc *l = &R[r].locs[i];
            OTF2_AttributeValue v;
            v.uint64 = l->recorded;
            OTF2_GlobalDefWriter_WriteLocationProperty(g, l->id, s_p_events, OTF2_TYPE_UINT64, v);
            v.uint64 = l->clamped;
            OTF2_GlobalDefWriter_WriteLocationProperty(g, l->id, s_p_clamped, OTF2_TYPE_UINT64, v);
            v.uint64 = l->dropped;
            OTF2_GlobalDefWriter_WriteLocationProperty(g, l->id, s_p_dropped, OTF2_TYPE_UINT64, v);
            v.uint64 = l->data_end;
            if (l->data_end) OTF2_GlobalDefWriter_WriteLocationProperty(g, l->id, s_p_end, OTF2_TYPE_UINT64, v);
        }

    /* Level Zero communicators: one COMM_LOCATIONS for the paradigm, each rank's locations in
     * their communicator order; each rank's communicator a COMM_GROUP of its slice */
    size_t nl0 = 0;
    for (uint32_t r = 0; r < size; r++) nl0 += R[r].ok ? R[r].nlocs : 0;
    uint64_t *members = calloc(nl0 + size + 1, sizeof(uint64_t));
    if (!members) goto out;
    for (uint32_t r = 0; r < size; r++)
        for (uint32_t i = 0; R[r].ok && i < R[r].nlocs; i++)
            if (R[r].locs[i].comm_rank < R[r].nlocs) members[R[r].l0_base + R[r].locs[i].comm_rank] = R[r].locs[i].id;
    OTF2_GlobalDefWriter_WriteGroup(g, 0, s_comm, OTF2_GROUP_TYPE_COMM_LOCATIONS, OTF2_PARADIGM_OPENCL,
                                    OTF2_GROUP_FLAG_NONE, (uint32_t)nl0, members);
    for (uint32_t r = 0; r < size; r++) {
        uint32_t n = R[r].ok ? R[r].nlocs : 0;
        for (uint32_t i = 0; i < n; i++) members[i] = R[r].l0_base + i;
        OTF2_GlobalDefWriter_WriteGroup(g, 1 + r, s_comm, OTF2_GROUP_TYPE_COMM_GROUP, OTF2_PARADIGM_OPENCL,
                                        OTF2_GROUP_FLAG_NONE, n, members);
    }
    /* MPI: COMM_LOCATIONS indexed by world rank, then the groups of the communicators */
    uint32_t mpi_groups = 1 + size, self_group = OTF2_UNDEFINED_GROUP;
    if (M->comms.n) {
        for (uint32_t r = 0; r < size; r++) members[r] = R[r].ok ? R[r].mpi_loc : r;
        OTF2_GlobalDefWriter_WriteGroup(g, mpi_groups, s_mpi, OTF2_GROUP_TYPE_COMM_LOCATIONS, OTF2_PARADIGM_MPI,
                                        OTF2_GROUP_FLAG_NONE, size, members);
        self_group = mpi_groups + 1;
        OTF2_GlobalDefWriter_WriteGroup(g, self_group, s_self, OTF2_GROUP_TYPE_COMM_SELF, OTF2_PARADIGM_MPI,
                                        OTF2_GROUP_FLAG_NONE, 0, NULL);
        const struct ggroup *gg = M->groups.v;
        for (size_t i = 0; i < M->groups.n; i++)
            OTF2_GlobalDefWriter_WriteGroup(g, self_group + 1 + (uint32_t)i, s_empty, OTF2_GROUP_TYPE_COMM_GROUP,
                                            OTF2_PARADIGM_MPI, OTF2_GROUP_FLAG_NONE, gg[i].n, gg[i].members);
    }
    for (uint32_t r = 0; r < size; r++)
        OTF2_GlobalDefWriter_WriteComm(g, r, s_comm, 1 + r, OTF2_UNDEFINED_COMM, OTF2_COMM_FLAG_NONE);
    const struct gcomm *gc = M->comms.v;
    for (size_t i = 0; i < M->comms.n; i++) {
        uint32_t id = size + (uint32_t)i;
        if (gc[i].kind == ZC_COMM_MPI_INTER)
            OTF2_GlobalDefWriter_WriteInterComm(g, id, gc[i].name, self_group + 1 + gc[i].group,
                                                self_group + 1 + gc[i].group_b, gc[i].parent, OTF2_COMM_FLAG_NONE);
        else
            OTF2_GlobalDefWriter_WriteComm(g, id, gc[i].name,
                                           gc[i].kind == ZC_COMM_MPI_SELF ? self_group : self_group + 1 + gc[i].group,
                                           gc[i].parent, OTF2_COMM_FLAG_NONE);
    }
    for (uint32_t r = 0; r < size; r++) OTF2_GlobalDefWriter_WriteRmaWin(g, r, s_win, r, OTF2_RMA_WIN_FLAG_NONE);
    free(members);
out:
    if (M->oom) msg(true, "out of memory writing definitions");
    OTF2_Archive_CloseGlobalDefWriter(archive, g);
    free(s_proc);
    free(names);
    free(s_ctx);
    free(ctx_names);
    free(s_hosts);
}

/* appends to a bounded message (the end stays inside it) */
__attribute__((format(printf, 4, 5))) static void app(char *out, size_t cap, size_t *o, const char *fmt, ...) {
    if (*o + 1 >= cap) return;
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(out + *o, cap - *o, fmt, ap);
    va_end(ap);
    if (k > 0) *o = *o + (size_t)k < cap ? *o + (size_t)k : cap - 1;
}

/* Rank 0, once per job: ranks that counted different PAPI events (hosts differ) are named, each
 * set with its ranks ("ranks 0-3,8: a, b; ranks 4-7: a"). The usual case, every rank alike, says
 * nothing: the launcher's rank 0 already named what its host could not count (zc_papi.c). */
static void papi_differences(const struct rank_defs *R, uint32_t size, zc_merge_msg_fn msg) {
    uint32_t *set = calloc(size + 1, sizeof(uint32_t));
    bool differ = false;
    for (uint32_t r = 0; set && r < size; r++) {
        set[r] = R[r].ok && R[r].nmetrics ? (uint32_t)R[r].mclass : ZC_NO_ID;
        if (set[r] != set[0]) differ = true;
    }
    if (!set || !differ) {
        free(set);
        return;
    }
    char text[1536] = "", line[1600];
    size_t o = 0;
    const char **strs = M->strings.v;
    const struct gmember *gm = M->members.v;
    const struct gclass *gc = M->classes.v;
    for (uint32_t r = 0; r < size; r++) {
        bool first = true;
        for (uint32_t q = 0; q < r && first; q++) first = set[q] != set[r];
        if (!first) continue;
        app(text, sizeof(text), &o, "%sranks ", o ? "; " : "");
        for (uint32_t q = r, sep = 0; q < size;) { /* its ranks as ranges */
            if (set[q] != set[r]) {
                q++;
                continue;
            }
            uint32_t e = q;
            while (e + 1 < size && set[e + 1] == set[r]) e++;
            if (e == q) app(text, sizeof(text), &o, "%s%u", sep++ ? "," : "", q);
            else app(text, sizeof(text), &o, "%s%u-%u", sep++ ? "," : "", q, e);
            q = e + 1;
        }
        app(text, sizeof(text), &o, ": ");
        if (set[r] == ZC_NO_ID) app(text, sizeof(text), &o, "none");
        for (uint32_t i = 0; set[r] != ZC_NO_ID && i < gc[set[r]].n; i++)
            app(text, sizeof(text), &o, "%s%s", i ? ", " : "", strs[gm[gc[set[r]].m[i]].name]);
    }
    snprintf(line, sizeof(line), "the ranks counted different PAPI events: %s", text);
    msg(false, line);
    free(set);
}

void zc_merge_root(OTF2_Archive *archive, uint32_t size, bool mpi, const uint64_t *all, const size_t *sizes, void **maps,
                   size_t *map_sizes, zc_merge_msg_fn msg) {
    struct merged m;
    memset(&m, 0, sizeof(m));
    m.strings.elem = sizeof(const char *);
    m.regions.elem = sizeof(struct gregion);
    m.hosts.elem = sizeof(const char *);
    m.devs.elem = sizeof(struct dev_node);
    m.comms.elem = sizeof(struct gcomm);
    m.groups.elem = sizeof(struct ggroup);
    m.members.elem = sizeof(struct gmember);
    m.classes.elem = sizeof(struct gclass);
    M = &m;
    struct rank_defs *R = calloc(size, sizeof(*R));
    struct zc_wbuf out = {0};
    if (R) {
        size_t off = 0;
        for (uint32_t r = 0; r < size; r++) {
            R[r].ok = sizes[r] && parse_rank(&R[r], all + off, sizes[r] / 8);
            if (!R[r].ok && sizes[r]) {
                char text[128];
                snprintf(text, sizeof(text), "rank %u sent no usable definitions: its part of the archive is unreadable", r);
                msg(true, text);
            }
            off += sizes[r] / 8;
        }
        if (merge(R, size)) {
            write_global(archive, R, size, mpi, msg);
            papi_differences(R, size, msg);
        } else {
            msg(true, "out of memory unifying definitions");
        }
        /* maps, concatenated in rank order: nregions, regions..., ncomms, comms... */
        for (uint32_t r = 0; r < size; r++) {
            size_t before = out.n;
            uint32_t nr = R[r].ok && R[r].rmap ? R[r].nregions : 0, nc = R[r].ok && R[r].cmap ? R[r].ncomms : 0;
            zc_wbuf_put(&out, nr);
            for (uint32_t i = 0; i < nr; i++) zc_wbuf_put(&out, R[r].rmap[i]);
            zc_wbuf_put(&out, nc);
            for (uint32_t i = 0; i < nc; i++) zc_wbuf_put(&out, R[r].cmap[i]);
            bool metric = R[r].ok && R[r].nmetrics;
            zc_wbuf_put(&out, metric);
            if (metric) zc_wbuf_put(&out, R[r].mclass);
            map_sizes[r] = (out.n - before) * 8;
        }
        for (uint32_t r = 0; r < size; r++) {
            free(R[r].smap);
            free(R[r].comms);
            free(R[r].locs);
            free(R[r].dev_node);
            free(R[r].rmap);
            free(R[r].cmap);
        }
    }
    if (!R || out.oom) {
        for (uint32_t r = 0; r < size; r++) map_sizes[r] = 0;
        free(out.w);
        out.w = NULL;
    }
    *maps = out.w;
    free(R);
    free(m.strings.v);
    free(m.string_ht.slot);
    free(m.string_ht.hash);
    free(m.regions.v);
    free(m.region_ht.slot);
    free(m.region_ht.hash);
    free(m.hosts.v);
    free(m.devs.v);
    free(m.comms.v);
    free(m.comm_ht.slot);
    free(m.comm_ht.hash);
    free(m.groups.v);
    free(m.group_ht.slot);
    free(m.group_ht.hash);
    free(m.members.v);
    free(m.member_ht.slot);
    free(m.member_ht.hash);
    free(m.classes.v);
    free(m.class_ht.slot);
    free(m.class_ht.hash);
    M = NULL;
}

static void write_map(OTF2_DefWriter *dw, OTF2_MappingType type, const uint64_t *map, uint64_t n) {
    if (!n) return;
    OTF2_IdMap *m = OTF2_IdMap_CreateFromUint64Array(n, map, true); /* NULL: the identity */
    if (!m) return;
    OTF2_DefWriter_WriteMappingTable(dw, type, m);
    OTF2_IdMap_Free(m);
}

void zc_merge_write_local(OTF2_DefWriter *dw, const void *maps, size_t nbytes, uint32_t rank,
                          const struct zc_clock_offset *offsets, int noffsets) {
    struct zc_rbuf rb = {maps, nbytes / 8, 0, false};
    uint64_t nr = zc_rbuf_get(&rb);
    const uint64_t *rmap = zc_rbuf_get_n(&rb, nr);
    uint64_t nc = zc_rbuf_get(&rb);
    const uint64_t *cmap = zc_rbuf_get_n(&rb, nc);
    uint64_t nm = zc_rbuf_get(&rb);
    const uint64_t *mmap = zc_rbuf_get_n(&rb, nm);
    uint64_t win = rank;
    if (!rb.bad) {
        write_map(dw, OTF2_MAPPING_REGION, rmap, nr);
        write_map(dw, OTF2_MAPPING_COMM, cmap, nc);
        write_map(dw, OTF2_MAPPING_METRIC, mmap, nm);
    }
    write_map(dw, OTF2_MAPPING_RMA_WIN, &win, 1);
    for (int i = 0; i < noffsets; i++)
        OTF2_DefWriter_WriteClockOffset(dw, offsets[i].local, offsets[i].offset, offsets[i].stddev);
}
