/* SPDX-License-Identifier: MIT */
/* One journal record into a rank's state (record types and payloads: zc_jrn_format.h). Each
 * applier checks that the payload makes sense before it keeps anything: a checksum-valid record
 * that does not stops reading, as damage does. */
#include "zc_salvage_internal.h"

#include "zc_otf2_enc.h"

#include <stdlib.h>
#include <string.h>

/* a record's payload is read with zc_rbuf (zc_merge.h): bounds-checked */
static const char *rd_str(struct zc_rbuf *r) {
    const char *str = zc_rbuf_get_str(r);
    if (strlen(str) >= 1u << 20) r->bad = true; /* names, paths: longer is damage */
    return r->bad ? "" : str;
}

/* A definitions table's record: first id, count, then count items, each read and appended by
 * `item`. The first id must be the table's size (tables only grow, in order); *arr (items of size
 * elem) gets room for the count first. */
static bool rd_table(struct zc_rbuf *r, struct zc_defs *d, void *arr, uint32_t have, uint64_t per_item_min_words,
                     size_t elem, bool (*item)(struct zc_defs *, struct zc_rbuf *)) {
    uint64_t first = zc_rbuf_get(r), count = zc_rbuf_get(r);
    if (r->bad || first != have || count > (r->n - r->i) / per_item_min_words || have + count >= UINT32_MAX)
        return false;
    void **a = arr;
    void *p = realloc(*a, (have + count + 1) * elem);
    if (!p) return false;
    *a = p;
    for (uint64_t i = 0; i < count; i++)
        if (!item(d, r)) return false;
    return true;
}

static struct zc_salv_loc *find_loc(struct zc_salv_rank *j, uint64_t id) {
    for (size_t i = 0; i < j->nlocs; i++)
        if (j->locs[i].id == id) return &j->locs[i];
    return NULL;
}

static bool apply_job(struct zc_salv_rank *j, struct zc_rbuf *r) {
    if (j->have_job || zc_rbuf_get(r) != j->version) return false; /* the file's magic's */
    j->rank = (uint32_t)zc_rbuf_get(r);
    j->size = (uint32_t)zc_rbuf_get(r);
    j->mpi = zc_rbuf_get(r) != 0;
    j->pid = zc_rbuf_get(r);
    j->start = zc_rbuf_get(r);
    j->mpi_loc = zc_rbuf_get(r);
    j->interval_ms = zc_rbuf_get(r);
    j->host = rd_str(r);
    j->dir = rd_str(r);
    j->exe = rd_str(r);
    if (r->bad || j->size == 0 || j->size > ZC_SALV_MAX_RANKS || j->rank >= j->size) return false;
    j->have_job = true;
    return true;
}

static bool string_item(struct zc_defs *d, struct zc_rbuf *r) {
    const char *s = rd_str(r);
    if (r->bad) return false;
    d->strings[d->nstrings++] = (char *)s;
    return true;
}

static bool region_item(struct zc_defs *d, struct zc_rbuf *r) {
    uint64_t name = zc_rbuf_get(r), role = zc_rbuf_get(r), par = zc_rbuf_get(r);
    if (r->bad || name >= d->nstrings || role > ZC_ROLE_COLL_OTHER || par > ZC_PARADIGM_MEASUREMENT) return false;
    d->regions[d->nregions++] =
        (struct zc_def_region){(uint32_t)name, (enum zc_region_role)role, (enum zc_paradigm)par};
    return true;
}

static bool device_item(struct zc_defs *d, struct zc_rbuf *r) {
    uint64_t index = zc_rbuf_get(r), name = zc_rbuf_get(r), uuid = zc_rbuf_get(r);
    if (r->bad || name >= d->nstrings || uuid >= d->nstrings || index > UINT32_MAX) return false;
    d->devices[d->ndevices++] = (struct zc_def_device){(uint32_t)index, (uint32_t)name, (uint32_t)uuid};
    return true;
}

static bool group_item(struct zc_defs *d, struct zc_rbuf *r) {
    uint64_t dev = zc_rbuf_get(r), ctx = zc_rbuf_get(r);
    if (r->bad || dev >= d->ndevices || ctx > UINT32_MAX) return false;
    d->groups[d->ngroups++] = (struct zc_def_group){(uint32_t)dev, (uint32_t)ctx};
    return true;
}

static bool comm_item(struct zc_defs *d, struct zc_rbuf *r) {
    struct zc_def_comm c;
    c.kind = (enum zc_comm_kind)zc_rbuf_get(r);
    uint64_t name = zc_rbuf_get(r), parent = zc_rbuf_get(r), nm = zc_rbuf_get(r), nr = zc_rbuf_get(r);
    if (r->bad || c.kind > ZC_COMM_MPI_INTER || name >= d->nstrings || nm > ZC_SALV_MAX_RANKS ||
        nr > ZC_SALV_MAX_RANKS || nm + nr > r->n - r->i || (parent != ZC_NO_ID && parent >= d->ncomms))
        return false;
    c.name = (uint32_t)name;
    c.parent = (uint32_t)parent;
    c.n = (uint32_t)nm;
    c.nremote = (uint32_t)nr;
    c.members = (uint64_t *)(r->w + r->i);
    r->i += nm + nr;
    c.key = (char *)rd_str(r);
    if (r->bad) return false;
    c.keylen = (uint32_t)strlen(c.key);
    c.renamed = 0;
    d->comms[d->ncomms++] = c;
    return true;
}

static bool apply_comm_names(struct zc_salv_rank *j, struct zc_rbuf *r) {
    struct zc_defs *d = &j->defs;
    uint64_t cnt = zc_rbuf_get(r);
    if (r->bad || cnt > (r->n - r->i) / 2 || cnt * 2 != r->n - r->i) return false;
    for (uint64_t i = 0; i < cnt; i++) {
        uint64_t id = zc_rbuf_get(r), name = zc_rbuf_get(r);
        if (id >= d->ncomms || name >= d->nstrings) return false;
        d->comms[id].name = (uint32_t)name;
    }
    return true;
}

static bool apply_location(struct zc_salv_rank *j, struct zc_rbuf *r) {
    uint64_t id = zc_rbuf_get(r), kind = zc_rbuf_get(r), group = zc_rbuf_get(r), cr = zc_rbuf_get(r);
    const char *name = rd_str(r);
    uint64_t mk0 = r->i < r->n ? zc_rbuf_get(r) : 0; /* absent in journals without windows */
    if (r->bad || kind > ZC_LOC_DEVICE || group > j->defs.ngroups || (kind == ZC_LOC_DEVICE) != (group != 0) ||
        cr > UINT32_MAX || (id & 0xffffffffu) != 0 || find_loc(j, id))
        return false;
    zc_salv_grow(&j->locs, &j->cap_locs, j->nlocs, sizeof(*j->locs));
    j->locs[j->nlocs++] = (struct zc_salv_loc){.id = id, .kind = (uint32_t)kind, .group = (uint32_t)group,
                                               .comm_rank = (uint32_t)cr, .name = name, .mk0 = mk0};
    return true;
}

static bool apply_windows(struct zc_salv_rank *j, struct zc_rbuf *r) {
    uint64_t first = zc_rbuf_get(r), k = zc_rbuf_get(r);
    /* entries in order, each once; times never decrease (zc_win_log_get) */
    if (r->bad || first != j->nwin || k > (r->n - r->i) / 2 || k * 2 != r->n - r->i) return false;
    for (uint64_t i = 0; i < k; i++) {
        uint64_t ns = zc_rbuf_get(r), on = zc_rbuf_get(r);
        if (on > 1 || (j->nwin && ns < j->win[j->nwin - 1].ns)) return false;
        zc_salv_grow(&j->win, &j->cap_win, j->nwin, sizeof(*j->win));
        j->win[j->nwin++] = (struct zc_salv_win){ns, on != 0};
    }
    return true;
}

/* A buffer of a location: its records decoded (as the file's format encodes them), kept as a
 * segment of the location's stream. */
static bool apply_events(struct zc_salv_rank *j, struct zc_rbuf *r) {
    uint64_t id = zc_rbuf_get(r), first = zc_rbuf_get(r), k = zc_rbuf_get(r), bytes = zc_rbuf_get(r);
    struct zc_salv_loc *l = find_loc(j, id);
    /* every record takes 2 bytes at least (format 1: 3); the bytes fill the payload but its padding */
    if (r->bad || !l || bytes / (j->version == 1 ? 3 : 2) < k || (bytes + 7) / 8 != r->n - r->i || first > UINT64_MAX - k) return false;
    const uint8_t *bp = (const uint8_t *)(r->w + r->i);
    struct zc_ev *ev = malloc((k ? k : 1) * sizeof(*ev));
    if (!ev) return false;
    size_t at = 0;
    uint64_t prev = 0;
    int (*decode)(const uint8_t *, size_t, size_t *, uint64_t *, struct zc_ev *) =
        j->version == 1 ? zc_jrn1_decode_one : zc_jrn_decode_one;
    for (uint64_t i = 0; i < k; i++)
        if (decode(bp, bytes, &at, &prev, &ev[i]) != 0) {
            free(ev);
            return false;
        }
    if (at != bytes) {
        free(ev);
        return false;
    }
    zc_salv_grow(&l->segs, &l->cap_segs, l->nsegs, sizeof(*l->segs));
    l->segs[l->nsegs++] = (struct zc_salv_seg){first, (size_t)k, ev};
    return true;
}

static bool apply_metrics(struct zc_salv_rank *j, struct zc_rbuf *r) {
    struct zc_defs *d = &j->defs;
    uint64_t cnt = zc_rbuf_get(r);
    if (r->bad || cnt > sizeof(j->metric_types) || cnt * 5 != r->n - r->i) return false;
    struct zc_def_metric *m = calloc(cnt + 1, sizeof(*m));
    if (!m) return false;
    for (uint64_t i = 0; i < cnt; i++) {
        uint64_t name = zc_rbuf_get(r), descr = zc_rbuf_get(r), unit = zc_rbuf_get(r);
        uint64_t vtype = zc_rbuf_get(r), mode = zc_rbuf_get(r);
        if (name >= d->nstrings || descr >= d->nstrings || unit >= d->nstrings || vtype > 255 || mode > 255) {
            free(m);
            return false;
        }
        m[i] = (struct zc_def_metric){(uint32_t)name, (uint32_t)descr, (uint32_t)unit, (uint32_t)vtype, (uint32_t)mode};
        j->metric_types[i] = (uint8_t)vtype;
    }
    free(d->metrics);
    d->metrics = m;
    d->nmetrics = (uint32_t)cnt;
    return true;
}

static bool apply_offset(struct zc_salv_rank *j, struct zc_rbuf *r) {
    uint64_t local = zc_rbuf_get(r), off = zc_rbuf_get(r), sd = zc_rbuf_get(r);
    if (r->bad) return false;
    if (j->noffsets < 2) {
        struct zc_clock_offset *o = &j->offsets[j->noffsets++];
        o->local = local;
        o->offset = (int64_t)off;
        memcpy(&o->stddev, &sd, sizeof(sd));
    }
    return true;
}

static bool apply_seal(struct zc_salv_rank *j, struct zc_rbuf *r) {
    uint64_t id = zc_rbuf_get(r);
    struct zc_salv_seal x;
    x.k = zc_rbuf_get(r);
    x.end = zc_rbuf_get(r);
    x.chunk_off = zc_rbuf_get(r);
    x.events = zc_rbuf_get(r);
    x.time = zc_rbuf_get(r);
    x.chunk_first = zc_rbuf_get(r);
    struct zc_salv_loc *l = find_loc(j, id);
    /* the sealed part lies in one chunk after whole ones, and seals of a location only grow */
    if (r->bad || !l || j->version < 4 || x.end <= x.chunk_off || x.end - x.chunk_off >= ZC_ENC_CHUNK ||
        x.chunk_off % ZC_ENC_CHUNK || x.chunk_first == 0 || x.chunk_first > x.events + 1)
        return false;
    if (l->nseals && (x.k < l->seals[l->nseals - 1].k || x.end < l->seals[l->nseals - 1].end)) return false;
    zc_salv_grow(&l->seals, &l->cap_seals, l->nseals, sizeof(*l->seals));
    l->seals[l->nseals++] = x;
    return true;
}

static bool apply_flush(struct zc_salv_rank *j, struct zc_rbuf *r) {
    uint64_t t = zc_rbuf_get(r), flags = zc_rbuf_get(r);
    if (r->bad) return false;
    j->flush_time = t;
    j->nflush++;
    j->final = (flags & ZC_JRN_FINAL) != 0;
    return true;
}

bool zc_salv_apply(struct zc_salv_rank *j, uint32_t type, const uint64_t *p, uint64_t n) {
    struct zc_rbuf rb = {p, (size_t)n, 0, false}, *r = &rb;
    struct zc_defs *d = &j->defs;
    if (type != ZC_JRN_JOB && !j->have_job) return false;
    /* a table's items take at least 2, 3 or 7 words: that bounds the count before allocating */
    switch (type) {
    case ZC_JRN_JOB: return apply_job(j, r);
    case ZC_JRN_STRINGS: return rd_table(r, d, &d->strings, d->nstrings, 2, sizeof(*d->strings), string_item);
    case ZC_JRN_REGIONS: return rd_table(r, d, &d->regions, d->nregions, 3, sizeof(*d->regions), region_item);
    case ZC_JRN_DEVICES: return rd_table(r, d, &d->devices, d->ndevices, 3, sizeof(*d->devices), device_item);
    case ZC_JRN_GROUPS: return rd_table(r, d, &d->groups, d->ngroups, 2, sizeof(*d->groups), group_item);
    case ZC_JRN_COMMS: return rd_table(r, d, &d->comms, d->ncomms, 7, sizeof(*d->comms), comm_item);
    case ZC_JRN_COMM_NAMES: return apply_comm_names(j, r);
    case ZC_JRN_LOCATION: return apply_location(j, r);
    case ZC_JRN_WINDOWS: return apply_windows(j, r);
    case ZC_JRN_EVENTS: return apply_events(j, r);
    case ZC_JRN_METRICS: return apply_metrics(j, r);
    case ZC_JRN_OFFSET: return apply_offset(j, r);
    case ZC_JRN_FLUSH: return apply_flush(j, r);
    case ZC_JRN_SEAL: return apply_seal(j, r);
    default: return true; /* a newer record type: skipped */
    }
}
