/* SPDX-License-Identifier: MIT */
/* zecoll-salvage (`zecoll salvage DIR`): turns what a run that died left in its archive directory
 * (the salvage journals in DIR/zecoll-journal/, zc_jrn_format.h) into a readable OTF2 archive,
 * one process group per rank found, written as the collector would have written it (the same
 * event conversion, zc_evt.c, and definitions merge, zc_merge.c) and marked where each
 * location's data ends: a final MeasurementOnOff(OFF) at the rank's last flush, after closing any
 * region left open there, and the archive property ZECOLL::SALVAGED. The recording windows'
 * markers are placed from the journaled window log by the writer's own code (zc_marks.c).
 * Design: docs/salvage.md.
 *
 * Exit status: 0 salvaged (or nothing to do: the archive is complete), 2 bad input (one message
 * naming the file), 1 the archive could not be written. Damage inside a journal is not fatal:
 * reading stops at the first record whose length or checksum is wrong, and the summary says so. */
#include "zc_evt.h"
#include "zc_jrn_format.h"
#include "zc_marks.h"
#include "zc_merge.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_RANKS (1u << 24)

static const char *prog = "zecoll salvage";

/* ---------------------------------------------------------------- one rank's journal */
struct seg {
    uint64_t first;
    size_t n;
    struct zc_ev *ev; /* decoded (malloc'd) */
};

struct sloc {
    uint64_t id; /* local id (the rank is added when written) */
    uint32_t kind, group, comm_rank;
    const char *name;
    struct seg *segs;
    size_t nsegs, cap_segs;
    /* assembled and written */
    struct zc_ev *ev;
    size_t n;
    uint64_t lost, repaired, unlinked, otf2_events, recorded, clamped, last_ts;
    uint32_t l0_index; /* dense index in the rank's Level Zero communicator */
    uint64_t mk0;      /* its first entry of the window log */
};

struct wentry {
    uint64_t ns;
    bool on;
};

struct rank_j {
    const char *path;
    void *map;
    size_t map_len;
    bool have_job;
    uint32_t rank, size;
    bool mpi, final;
    bool missing; /* no journal: a placeholder (one empty thread location) keeps the job whole */
    uint64_t pid, start, mpi_loc, interval_ms;
    const char *host, *dir, *exe;
    struct zc_defs defs; /* strings, regions, devices, groups, comms: pointers into the file */
    size_t cap_strings;
    struct sloc *locs;
    size_t nlocs, cap_locs;
    struct zc_clock_offset offsets[2];
    int noffsets;
    uint64_t flush_time, nflush;
    uint64_t bytes_used, bytes_total; /* read up to the first damage / of the file */
    char damage[160];                  /* why reading stopped early, "" when it did not */
    uint64_t tmin, tmax;               /* on rank 0's clock, for the archive's clock properties */
    uint64_t cut;                      /* local time where its data ends */
    uint32_t flush_region;             /* local id of "zecoll buffer flush", or ZC_NO_ID */
    uint8_t metric_types[16];          /* OTF2_Type of each value of its metric class */
    struct wentry *win;                /* its window log (ZC_JRN_WINDOWS), nwin entries */
    size_t nwin, cap_win;
};

static void *xcalloc(size_t n, size_t size) {
    void *p = calloc(n ? n : 1, size);
    if (!p) {
        fprintf(stderr, "%s: out of memory\n", prog);
        exit(1);
    }
    return p;
}

/* grows *arr (of *cap elements of size elem) to hold at least n + 1 */
static void grow(void *arr, size_t *cap, size_t n, size_t elem) {
    void **a = arr;
    if (n < *cap) return;
    size_t ncap = *cap ? 2 * *cap : 16;
    void *p = realloc(*a, ncap * elem);
    if (!p) {
        fprintf(stderr, "%s: out of memory\n", prog);
        exit(1);
    }
    *a = p;
    *cap = ncap;
}

/* a record's payload is read with zc_rbuf (zc_merge.h): bounds-checked */
static const char *rd_str(struct zc_rbuf *r) {
    const char *str = zc_rbuf_get_str(r);
    if (strlen(str) >= 1u << 20) r->bad = true; /* names, paths: longer is damage */
    return r->bad ? "" : str;
}

/* The next id of a table must be `have`: tables only grow, in order. */
static bool rd_table(struct zc_rbuf *r, uint32_t have, uint64_t *count, uint64_t per_item_min_words) {
    uint64_t first = zc_rbuf_get(r);
    *count = zc_rbuf_get(r);
    return !r->bad && first == have && *count <= (r->n - r->i) / (per_item_min_words ? per_item_min_words : 1) &&
           have + *count < UINT32_MAX;
}

static struct sloc *find_loc(struct rank_j *j, uint64_t id) {
    for (size_t i = 0; i < j->nlocs; i++)
        if (j->locs[i].id == id) return &j->locs[i];
    return NULL;
}

/* One verified record; false: its contents do not make sense (reading stops there). */
static bool apply(struct rank_j *j, uint32_t type, const uint64_t *p, uint64_t n) {
    struct zc_rbuf r = {p, (size_t)n, 0, false};
    struct zc_defs *d = &j->defs;
    uint64_t cnt;
    if (type != ZC_JRN_JOB && !j->have_job) return false;
    switch (type) {
    case ZC_JRN_JOB:
        if (j->have_job || zc_rbuf_get(&r) != ZC_JRN_VERSION) return false;
        j->rank = (uint32_t)zc_rbuf_get(&r);
        j->size = (uint32_t)zc_rbuf_get(&r);
        j->mpi = zc_rbuf_get(&r) != 0;
        j->pid = zc_rbuf_get(&r);
        j->start = zc_rbuf_get(&r);
        j->mpi_loc = zc_rbuf_get(&r);
        j->interval_ms = zc_rbuf_get(&r);
        j->host = rd_str(&r);
        j->dir = rd_str(&r);
        j->exe = rd_str(&r);
        if (r.bad || j->size == 0 || j->size > MAX_RANKS || j->rank >= j->size) return false;
        j->have_job = true;
        return true;
    case ZC_JRN_STRINGS:
        if (!rd_table(&r, d->nstrings, &cnt, 2)) return false;
        for (uint64_t i = 0; i < cnt; i++) {
            const char *s = rd_str(&r);
            if (r.bad) return false;
            grow(&d->strings, &j->cap_strings, d->nstrings, sizeof(char *));
            d->strings[d->nstrings++] = (char *)s;
        }
        return true;
    case ZC_JRN_REGIONS:
        if (!rd_table(&r, d->nregions, &cnt, 3)) return false;
        d->regions = realloc(d->regions, (d->nregions + cnt + 1) * sizeof(*d->regions));
        if (!d->regions) return false;
        for (uint64_t i = 0; i < cnt; i++) {
            uint64_t name = zc_rbuf_get(&r), role = zc_rbuf_get(&r), par = zc_rbuf_get(&r);
            if (r.bad || name >= d->nstrings || role > ZC_ROLE_COLL_OTHER || par > ZC_PARADIGM_MEASUREMENT) return false;
            d->regions[d->nregions++] =
                (struct zc_def_region){(uint32_t)name, (enum zc_region_role)role, (enum zc_paradigm)par};
        }
        return true;
    case ZC_JRN_DEVICES:
        if (!rd_table(&r, d->ndevices, &cnt, 3)) return false;
        d->devices = realloc(d->devices, (d->ndevices + cnt + 1) * sizeof(*d->devices));
        if (!d->devices) return false;
        for (uint64_t i = 0; i < cnt; i++) {
            uint64_t index = zc_rbuf_get(&r), name = zc_rbuf_get(&r), uuid = zc_rbuf_get(&r);
            if (r.bad || name >= d->nstrings || uuid >= d->nstrings || index > UINT32_MAX) return false;
            d->devices[d->ndevices++] = (struct zc_def_device){(uint32_t)index, (uint32_t)name, (uint32_t)uuid};
        }
        return true;
    case ZC_JRN_GROUPS:
        if (!rd_table(&r, d->ngroups, &cnt, 2)) return false;
        d->groups = realloc(d->groups, (d->ngroups + cnt + 1) * sizeof(*d->groups));
        if (!d->groups) return false;
        for (uint64_t i = 0; i < cnt; i++) {
            uint64_t dev = zc_rbuf_get(&r), ctx = zc_rbuf_get(&r);
            if (r.bad || dev >= d->ndevices || ctx > UINT32_MAX) return false;
            d->groups[d->ngroups++] = (struct zc_def_group){(uint32_t)dev, (uint32_t)ctx};
        }
        return true;
    case ZC_JRN_COMMS:
        if (!rd_table(&r, d->ncomms, &cnt, 7)) return false;
        d->comms = realloc(d->comms, (d->ncomms + cnt + 1) * sizeof(*d->comms));
        if (!d->comms) return false;
        for (uint64_t i = 0; i < cnt; i++) {
            struct zc_def_comm c;
            c.kind = (enum zc_comm_kind)zc_rbuf_get(&r);
            uint64_t name = zc_rbuf_get(&r), parent = zc_rbuf_get(&r), nm = zc_rbuf_get(&r), nr = zc_rbuf_get(&r);
            if (r.bad || c.kind > ZC_COMM_MPI_INTER || name >= d->nstrings || nm > MAX_RANKS || nr > MAX_RANKS ||
                nm + nr > r.n - r.i || (parent != ZC_NO_ID && parent >= d->ncomms))
                return false;
            c.name = (uint32_t)name;
            c.parent = (uint32_t)parent;
            c.n = (uint32_t)nm;
            c.nremote = (uint32_t)nr;
            c.members = (uint64_t *)(r.w + r.i);
            r.i += nm + nr;
            c.key = (char *)rd_str(&r);
            if (r.bad) return false;
            c.keylen = (uint32_t)strlen(c.key);
            c.renamed = 0;
            d->comms[d->ncomms++] = c;
        }
        return true;
    case ZC_JRN_COMM_NAMES:
        cnt = zc_rbuf_get(&r);
        if (r.bad || cnt > (r.n - r.i) / 2 || cnt * 2 != r.n - r.i) return false;
        for (uint64_t i = 0; i < cnt; i++) {
            uint64_t id = zc_rbuf_get(&r), name = zc_rbuf_get(&r);
            if (id >= d->ncomms || name >= d->nstrings) return false;
            d->comms[id].name = (uint32_t)name;
        }
        return true;
    case ZC_JRN_LOCATION: {
        uint64_t id = zc_rbuf_get(&r), kind = zc_rbuf_get(&r), group = zc_rbuf_get(&r), cr = zc_rbuf_get(&r);
        const char *name = rd_str(&r);
        uint64_t mk0 = r.i < r.n ? zc_rbuf_get(&r) : 0; /* absent in journals without windows */
        if (r.bad || kind > ZC_LOC_DEVICE || group > d->ngroups || (kind == ZC_LOC_DEVICE) != (group != 0) ||
            cr > UINT32_MAX || (id & 0xffffffffu) != 0 || find_loc(j, id))
            return false;
        grow(&j->locs, &j->cap_locs, j->nlocs, sizeof(*j->locs));
        j->locs[j->nlocs++] = (struct sloc){.id = id, .kind = (uint32_t)kind, .group = (uint32_t)group,
                                            .comm_rank = (uint32_t)cr, .name = name, .mk0 = mk0};
        return true;
    }
    case ZC_JRN_WINDOWS: {
        uint64_t first = zc_rbuf_get(&r), k = zc_rbuf_get(&r);
        /* entries in order, each once; times never decrease (zc_win_log_get) */
        if (r.bad || first != j->nwin || k > (r.n - r.i) / 2 || k * 2 != r.n - r.i) return false;
        for (uint64_t i = 0; i < k; i++) {
            uint64_t ns = zc_rbuf_get(&r), on = zc_rbuf_get(&r);
            if (on > 1 || (j->nwin && ns < j->win[j->nwin - 1].ns)) return false;
            grow(&j->win, &j->cap_win, j->nwin, sizeof(*j->win));
            j->win[j->nwin++] = (struct wentry){ns, on != 0};
        }
        return true;
    }
    case ZC_JRN_EVENTS: {
        uint64_t id = zc_rbuf_get(&r), first = zc_rbuf_get(&r), k = zc_rbuf_get(&r), bytes = zc_rbuf_get(&r);
        struct sloc *l = find_loc(j, id);
        /* every record takes 3 bytes at least; the bytes fill the payload but its padding */
        if (r.bad || !l || bytes / 3 < k || (bytes + 7) / 8 != r.n - r.i || first > UINT64_MAX - k) return false;
        const uint8_t *bp = (const uint8_t *)(r.w + r.i);
        struct zc_ev *ev = malloc((k ? k : 1) * sizeof(*ev));
        if (!ev) return false;
        size_t at = 0;
        uint64_t prev = 0;
        for (uint64_t i = 0; i < k; i++)
            if (zc_jrn_decode_one(bp, bytes, &at, &prev, &ev[i]) != 0) {
                free(ev);
                return false;
            }
        if (at != bytes) {
            free(ev);
            return false;
        }
        grow(&l->segs, &l->cap_segs, l->nsegs, sizeof(*l->segs));
        l->segs[l->nsegs++] = (struct seg){first, (size_t)k, ev};
        return true;
    }
    case ZC_JRN_METRICS: {
        uint64_t cnt2 = zc_rbuf_get(&r);
        if (r.bad || cnt2 > sizeof(j->metric_types) || cnt2 * 5 != r.n - r.i) return false;
        struct zc_def_metric *m = calloc(cnt2 + 1, sizeof(*m));
        if (!m) return false;
        for (uint64_t i = 0; i < cnt2; i++) {
            uint64_t name = zc_rbuf_get(&r), descr = zc_rbuf_get(&r), unit = zc_rbuf_get(&r);
            uint64_t vtype = zc_rbuf_get(&r), mode = zc_rbuf_get(&r);
            if (name >= d->nstrings || descr >= d->nstrings || unit >= d->nstrings || vtype > 255 || mode > 255) {
                free(m);
                return false;
            }
            m[i] = (struct zc_def_metric){(uint32_t)name, (uint32_t)descr, (uint32_t)unit, (uint32_t)vtype, (uint32_t)mode};
            j->metric_types[i] = (uint8_t)vtype;
        }
        free(d->metrics);
        d->metrics = m;
        d->nmetrics = (uint32_t)cnt2;
        return true;
    }
    case ZC_JRN_OFFSET: {
        uint64_t local = zc_rbuf_get(&r), off = zc_rbuf_get(&r), sd = zc_rbuf_get(&r);
        if (r.bad) return false;
        if (j->noffsets < 2) {
            struct zc_clock_offset *o = &j->offsets[j->noffsets++];
            o->local = local;
            o->offset = (int64_t)off;
            memcpy(&o->stddev, &sd, sizeof(sd));
        }
        return true;
    }
    case ZC_JRN_FLUSH: {
        uint64_t t = zc_rbuf_get(&r), flags = zc_rbuf_get(&r);
        if (r.bad) return false;
        j->flush_time = t;
        j->nflush++;
        j->final = (flags & ZC_JRN_FINAL) != 0;
        return true;
    }
    default: return true; /* a newer record type: skipped */
    }
}

/* Maps and reads one journal. false: not a journal at all (message printed). */
static bool read_journal(struct rank_j *j, const char *path) {
    j->path = path;
    j->flush_region = ZC_NO_ID;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        fprintf(stderr, "%s: %s: %s\n", prog, path, strerror(errno));
        if (fd >= 0) close(fd);
        return false;
    }
    j->bytes_total = (uint64_t)st.st_size;
    if (st.st_size < (off_t)(8 + sizeof(struct zc_jrn_hdr))) {
        close(fd);
        fprintf(stderr, "%s: %s: not a zecoll journal (%lld bytes)\n", prog, path, (long long)st.st_size);
        return false;
    }
    j->map_len = (size_t)st.st_size;
    j->map = mmap(NULL, j->map_len, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (j->map == MAP_FAILED) {
        j->map = NULL;
        fprintf(stderr, "%s: %s: %s\n", prog, path, strerror(errno));
        return false;
    }
    const uint64_t *w = j->map;
    size_t nw = j->map_len / 8, pos = 1;
    if (w[0] != ZC_JRN_FILE_MAGIC) {
        fprintf(stderr, "%s: %s: not a zecoll journal (wrong magic; written on another architecture?)\n", prog, path);
        return false;
    }
    while (pos + 3 <= nw) {
        struct zc_jrn_hdr h;
        memcpy(&h, w + pos, sizeof(h));
        if (h.magic != ZC_JRN_REC_MAGIC || h.type == 0 || h.type > ZC_JRN_MAX_TYPE || h.nwords > ZC_JRN_MAX_WORDS) {
            snprintf(j->damage, sizeof(j->damage), "damaged record header at byte %zu", pos * 8);
            break;
        }
        if (h.nwords > nw - pos - 3) {
            snprintf(j->damage, sizeof(j->damage), "torn record at byte %zu (the process died writing it)", pos * 8);
            break;
        }
        if (zc_jrn_hash(h.type, h.nwords, w + pos + 3) != h.hash) {
            snprintf(j->damage, sizeof(j->damage), "record at byte %zu fails its checksum", pos * 8);
            break;
        }
        if (!apply(j, h.type, w + pos + 3, h.nwords)) {
            snprintf(j->damage, sizeof(j->damage), "record at byte %zu (type %u) does not make sense", pos * 8, h.type);
            break;
        }
        pos += 3 + (size_t)h.nwords;
    }
    if (!j->damage[0] && pos * 8 < j->map_len)
        snprintf(j->damage, sizeof(j->damage), "torn record at byte %zu (the process died writing it)", pos * 8);
    j->bytes_used = pos * 8;
    if (!j->have_job) {
        fprintf(stderr, "%s: %s: no readable job record (%s)\n", prog, path, j->damage[0] ? j->damage : "empty");
        return false;
    }
    for (uint32_t i = 0; i < j->defs.nregions; i++) {
        const struct zc_def_region *g = &j->defs.regions[i];
        if (g->paradigm == ZC_PARADIGM_MEASUREMENT && g->role == ZC_ROLE_ARTIFICIAL &&
            strcmp(j->defs.strings[g->name], "zecoll buffer flush") == 0)
            j->flush_region = i;
    }
    return true;
}

/* Frees what reading (and assembling) n journals allocated; J itself too. The paths that give
 * up on bad input call it as well, so that a sanitizer's leak checker finds nothing. */
static void free_journals(struct rank_j *J, size_t n) {
    for (size_t i = 0; J && i < n; i++) {
        for (size_t k = 0; k < J[i].nlocs; k++) {
            for (size_t m = 0; m < J[i].locs[k].nsegs; m++) free(J[i].locs[k].segs[m].ev);
            free(J[i].locs[k].segs);
            free(J[i].locs[k].ev);
        }
        free(J[i].locs);
        free(J[i].defs.strings);
        free(J[i].defs.regions);
        free(J[i].defs.devices);
        free(J[i].defs.groups);
        free(J[i].defs.comms);
        free(J[i].defs.metrics);
        free(J[i].win);
        if (J[i].map) munmap(J[i].map, J[i].map_len);
        free((void *)J[i].path);
    }
    free(J);
}

/* ---------------------------------------------------------------- assembling a location */
static int seg_cmp(const void *a, const void *b) {
    const struct seg *x = a, *y = b;
    return x->first < y->first ? -1 : x->first > y->first;
}

/* Does a record only name definitions the rank has? (a checksum-valid journal always does; this
 * keeps a hand-made one from producing an archive that readers reject) */
static bool ev_valid(const struct rank_j *j, const struct zc_ev *e) {
    const struct zc_defs *d = &j->defs;
    switch (e->type) {
    case ZC_EV_ENTER:
    case ZC_EV_LEAVE:
    case ZC_EV_CALL: return e->a < d->nregions;
    case ZC_EV_PARAM_U64: return e->a == 0;
    case ZC_EV_RMA_GET:
    case ZC_EV_RMA_PUT:
    case ZC_EV_RMA_COMPLETE: return e->a == 0;
    case ZC_EV_BUFFER_FLUSH: return true;
    case ZC_EV_METRIC: return d->nmetrics && e->a == d->nmetrics;
    case ZC_EV_METRIC_MORE: return d->nmetrics != 0;
    case ZC_EV_MPI_SEND:
    case ZC_EV_MPI_ISEND:
    case ZC_EV_MPI_RECV:
    case ZC_EV_MPI_IRECV:
    case ZC_EV_MPI_COLL_END:
    case ZC_EV_MPI_NBC_COMPLETE: return e->a < d->ncomms;
    case ZC_EV_MPI_ISEND_COMPLETE:
    case ZC_EV_MPI_IRECV_REQUEST:
    case ZC_EV_MPI_REQUEST_TEST:
    case ZC_EV_MPI_REQUEST_CANCELLED:
    case ZC_EV_MPI_COLL_BEGIN:
    case ZC_EV_MPI_NBC_REQUEST:
    case ZC_EV_MPI_NBC_REQID: return true;
    default: return false;
    }
}

/* The location's records in stream order, each once; gaps counted as lost. */
static void assemble(struct rank_j *j, struct sloc *l) {
    if (l->nsegs) qsort(l->segs, l->nsegs, sizeof(*l->segs), seg_cmp); /* no segments: segs may be NULL */
    size_t total = 0;
    for (size_t i = 0; i < l->nsegs; i++) total += l->segs[i].n;
    l->ev = xcalloc(total + 1, sizeof(*l->ev));
    uint64_t next = 0;
    for (size_t i = 0; i < l->nsegs; i++) {
        const struct seg *s = &l->segs[i];
        if (s->first + s->n <= next) continue; /* journaled twice (flusher, then writer) */
        if (s->first > next) l->lost += s->first - next;
        size_t from = s->first < next ? (size_t)(next - s->first) : 0;
        for (size_t k = from; k < s->n; k++) {
            if (ev_valid(j, &s->ev[k])) l->ev[l->n++] = s->ev[k];
            else l->repaired++;
        }
        next = s->first + s->n;
    }
}

/* Enter/Leave must nest and balance on every location (docs/archive.md A14): a Leave that does
 * not close the innermost open region is dropped; on a stream (one operation at a time) an Enter
 * closes what is open. What is open at the end is closed at the cut by the caller. */
static uint32_t *open_stack;
static size_t open_n, open_cap;

static void repair(struct sloc *l) {
    bool stream = l->kind == ZC_LOC_DEVICE;
    size_t o = 0;
    open_n = 0;
    struct zc_ev *out = xcalloc(2 * l->n + 1, sizeof(*out));
    for (size_t i = 0; i < l->n; i++) {
        struct zc_ev e = l->ev[i];
        if (e.type == ZC_EV_ENTER) {
            if (stream && open_n) {
                out[o++] = (struct zc_ev){e.ts, ZC_EV_LEAVE, open_stack[--open_n], 0, 0, 0};
                l->repaired++;
            }
            grow(&open_stack, &open_cap, open_n, sizeof(*open_stack));
            open_stack[open_n++] = e.a;
        } else if (e.type == ZC_EV_LEAVE) {
            if (!open_n || open_stack[open_n - 1] != e.a) {
                l->repaired++;
                continue;
            }
            open_n--;
        }
        out[o++] = e;
    }
    free(l->ev);
    l->ev = out;
    l->n = o;
}

static int u64_cmp(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* A device record names its Append by callsite id (docs/archive.md A16). The Append is on a
 * thread location and may be missing: the journal holds a device buffer written out before the
 * thread's last records reached it. Such a record keeps its times and loses the link (A15: the
 * parameter is absent when the operation could not be linked). */
static void unlink_orphans(struct rank_j *j) {
    size_t n = 0, cap = 0;
    uint64_t *cs = NULL;
    for (size_t i = 0; i < j->nlocs; i++) {
        const struct sloc *l = &j->locs[i];
        if (l->kind != ZC_LOC_THREAD) continue;
        for (size_t k = 0; k < l->n; k++)
            if (l->ev[k].type == ZC_EV_CALL && l->ev[k].c) {
                grow(&cs, &cap, n, sizeof(*cs));
                cs[n++] = l->ev[k].c;
            }
    }
    if (n) qsort(cs, n, sizeof(*cs), u64_cmp);
    for (size_t i = 0; i < j->nlocs; i++) {
        struct sloc *l = &j->locs[i];
        if (l->kind != ZC_LOC_DEVICE) continue;
        size_t o = 0;
        for (size_t k = 0; k < l->n; k++) {
            const struct zc_ev *e = &l->ev[k];
            if (e->type == ZC_EV_PARAM_U64 && !(n && bsearch(&e->b, cs, n, sizeof(*cs), u64_cmp))) {
                l->unlinked++;
                continue;
            }
            l->ev[o++] = *e;
        }
        l->n = o;
    }
    free(cs);
}

/* ---------------------------------------------------------------- writing */
static OTF2_FlushType pre_flush(void *ud, OTF2_FileType ft, OTF2_LocationRef loc, void *cd, bool final) {
    (void)ud, (void)ft, (void)loc, (void)cd, (void)final;
    return OTF2_FLUSH;
}
/* Only called for the final flush of a writer (no memory callbacks: chunks stay in memory until
 * the location's writer is closed), which records no event. */
static OTF2_TimeStamp post_flush(void *ud, OTF2_FileType ft, OTF2_LocationRef loc) {
    (void)ud, (void)ft, (void)loc;
    return 0;
}
static const OTF2_FlushCallbacks flush_cbs = {pre_flush, post_flush};

static int merge_failed;
static void merge_msg(bool failure, const char *msg) {
    fprintf(stderr, "%s: %s%s\n", prog, failure ? "" : "note: ", msg);
    merge_failed |= failure;
}

/* The journaled window log, for zc_marks. */
static bool win_get(void *ud, uint64_t k, uint64_t *ns, bool *on) {
    const struct rank_j *j = ud;
    if (k >= j->nwin) return false;
    *ns = j->win[k].ns;
    *on = j->win[k].on;
    return true;
}

struct wctx {
    OTF2_EvtWriter *w;
    OTF2_ErrorCode e;
    const uint8_t *metric_types;
    uint64_t lo, hi;
};
static void wctx_out(void *ud, const struct zc_ev *ev, size_t n, size_t index) {
    (void)index;
    struct wctx *c = ud;
    if (c->e == OTF2_SUCCESS) c->e = zc_evt_write(c->w, ev, n, 0, c->metric_types, &c->lo, &c->hi);
}

/* Writes one location's events, with the window markers the collector would have placed among
 * them (zc_marks.h); false on an OTF2 error (message printed). */
static bool write_loc(OTF2_Archive *ar, struct rank_j *j, struct sloc *l) {
    OTF2_EvtWriter *w = OTF2_Archive_GetEvtWriter(ar, l->id | j->rank);
    if (!w) {
        fprintf(stderr, "%s: no OTF2 event writer for location %s of rank %u\n", prog, l->name, j->rank);
        return false;
    }
    struct wctx c = {w, OTF2_SUCCESS, j->defs.nmetrics ? j->metric_types : NULL, UINT64_MAX, 0};
    const struct zc_marks_log log = {win_get, j};
    struct zc_marks m = {.mk = l->mk0, .m_on = true, .thread = l->kind == ZC_LOC_THREAD};
    /* as the collector: a location without records gets no window markers */
    bool marks = l->n && j->nwin;
    if (marks) zc_marks_emit(&m, &log, l->ev, l->n, 0, wctx_out, &c);
    else wctx_out(&c, l->ev, l->n, 0);
    OTF2_ErrorCode e = c.e;
    uint64_t lo = c.lo, hi = c.hi, last = 0; /* last: the latest time, a call's Leave included */
    for (size_t i = 0; i < l->n; i++) {
        if (l->ev[i].ts > last) last = l->ev[i].ts;
        if (l->ev[i].type == ZC_EV_CALL && l->ev[i].b > last) last = l->ev[i].b;
    }
    uint64_t end = hi > j->cut ? hi : j->cut;
    end = last > end ? last : end;
    /* what is still open at the cut (a call split over two buffers, a record torn by a gap) */
    if (open_n) last = end;
    while (e == OTF2_SUCCESS && open_n) {
        e = OTF2_EvtWriter_Leave(w, NULL, end, open_stack[--open_n]);
        l->repaired++;
    }
    /* the window transitions up to the cut; the data's end is an OFF unless recording was off
     * there already (an OFF in force: a second one would not alternate, A18) */
    bool on = true;
    if (marks && e == OTF2_SUCCESS) {
        on = zc_marks_end(&m, &log, end, &last, wctx_out, &c);
        e = c.e;
    }
    if (e == OTF2_SUCCESS && on) e = OTF2_EvtWriter_MeasurementOnOff(w, NULL, end, OTF2_MEASUREMENT_OFF);
    if (e == OTF2_SUCCESS) e = OTF2_EvtWriter_GetNumberOfEvents(w, &l->otf2_events);
    OTF2_ErrorCode ce = OTF2_Archive_CloseEvtWriter(ar, w);
    if (e != OTF2_SUCCESS || ce != OTF2_SUCCESS) {
        fprintf(stderr, "%s: writing location %s of rank %u: %s\n", prog, l->name, j->rank,
                OTF2_Error_GetName(e != OTF2_SUCCESS ? e : ce));
        return false;
    }
    l->last_ts = end;
    if (lo < UINT64_MAX) {
        uint64_t a = lo + (uint64_t)zc_merge_offset_at(j->offsets, j->noffsets, lo);
        j->tmin = a < j->tmin ? a : j->tmin;
    }
    uint64_t b = end + (uint64_t)zc_merge_offset_at(j->offsets, j->noffsets, end);
    j->tmax = b > j->tmax ? b : j->tmax;
    return true;
}

static int loc_cmp_comm(const void *a, const void *b) {
    const struct sloc *const *x = a, *const *y = b;
    return (*x)->comm_rank < (*y)->comm_rank ? -1 : (*x)->comm_rank > (*y)->comm_rank;
}

/* Only journaled locations are known: a rank's Level Zero communicator lists them densely, and
 * the RMA records that name a member by its index follow (an unknown member: the stream itself). */
static int comm_key_cmp(const void *key, const void *b) {
    uint32_t k = *(const uint32_t *)key, c = (*(struct sloc *const *)b)->comm_rank;
    return k < c ? -1 : k > c;
}

static void renumber_l0(struct rank_j *j) {
    struct sloc **by = xcalloc(j->nlocs, sizeof(*by));
    for (size_t i = 0; i < j->nlocs; i++) by[i] = &j->locs[i];
    qsort(by, j->nlocs, sizeof(*by), loc_cmp_comm);
    for (size_t i = 0; i < j->nlocs; i++) by[i]->l0_index = (uint32_t)i;
    for (size_t i = 0; i < j->nlocs; i++) {
        struct sloc *l = &j->locs[i];
        for (size_t k = 0; k < l->n; k++) {
            struct zc_ev *e = &l->ev[k];
            if (e->type != ZC_EV_RMA_GET && e->type != ZC_EV_RMA_PUT) continue;
            uint32_t remote = (uint32_t)(e->c >> 32);
            struct sloc **m = bsearch(&remote, by, j->nlocs, sizeof(*by), comm_key_cmp);
            e->c = (uint64_t)(m ? (*m)->l0_index : l->l0_index) << 32 | (e->c & 0xffffffffu);
        }
    }
    free(by);
}

/* ---------------------------------------------------------------- the job */
static int rank_cmp(const void *a, const void *b) {
    const struct rank_j *x = a, *y = b;
    return x->rank < y->rank ? -1 : x->rank > y->rank;
}

static void usage(FILE *f) {
    fprintf(f,
            "usage: zecoll salvage [--keep-journal] [--force] [--quiet] ARCHIVE_DIR\n"
            "Rebuilds the OTF2 archive of a run that died (SIGKILL, node failure, MPI_Abort, an MPI job\n"
            "ending without MPI_Finalize) from the salvage journal the collector kept in\n"
            "ARCHIVE_DIR/zecoll-journal/: one process group per rank found, each location's data up to\n"
            "the rank's last flush (ZECOLL_FLUSH_INTERVAL_MS, default 1 s, before its death), its end\n"
            "marked by MeasurementOnOff(OFF), the archive marked ZECOLL::SALVAGED. Prints which ranks\n"
            "were found and missing, the records recovered per location and where each rank's data ends.\n"
            "  --keep-journal  keep ARCHIVE_DIR/zecoll-journal/ (default: removed once the archive is written)\n"
            "  --force         rebuild even if ARCHIVE_DIR/traces.otf2 exists (default: nothing to do)\n"
            "  --quiet         print only problems\n"
            "Exit status: 0 salvaged or nothing to do, 1 the archive could not be written, 2 bad input.\n");
}

static int rm_tree(const char *path) {
    DIR *d = opendir(path);
    if (!d) return errno == ENOENT ? 0 : -1;
    struct dirent *e;
    int rc = 0;
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        char p[PATH_MAX];
        if ((size_t)snprintf(p, sizeof(p), "%s/%s", path, e->d_name) >= sizeof(p)) {
            rc = -1;
            continue;
        }
        struct stat st;
        if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode)) rc |= rm_tree(p);
        else if (unlink(p) != 0) rc = -1;
    }
    closedir(d);
    return rmdir(path) != 0 ? -1 : rc;
}

static void fmt_rel(char *buf, size_t n, uint64_t t, uint64_t t0) {
    if (t >= t0) snprintf(buf, n, "+%.6f s", (double)(t - t0) / 1e9);
    else snprintf(buf, n, "-%.6f s", (double)(t0 - t) / 1e9);
}

int main(int argc, char **argv) {
    bool keep = false, force = false, quiet = false;
    const char *dir = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--keep-journal")) keep = true;
        else if (!strcmp(argv[i], "--force")) force = true;
        else if (!strcmp(argv[i], "--quiet")) quiet = true;
        else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            usage(stdout);
            return 0;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            fprintf(stderr, "%s: unknown option %s\n", prog, argv[i]);
            usage(stderr);
            return 2;
        } else if (dir) {
            fprintf(stderr, "%s: one archive directory at a time (%s, %s)\n", prog, dir, argv[i]);
            return 2;
        } else {
            dir = argv[i];
        }
    }
    if (!dir) {
        usage(stderr);
        return 2;
    }
    char path[PATH_MAX], jdir[PATH_MAX];
    struct stat st;
    if (stat(dir, &st) != 0) {
        fprintf(stderr, "%s: %s: %s\n", prog, dir, strerror(errno));
        return 2;
    }
    if (!S_ISDIR(st.st_mode)) {
        fprintf(stderr, "%s: %s: not a directory (an archive directory is expected)\n", prog, dir);
        return 2;
    }
    snprintf(path, sizeof(path), "%s/traces.otf2", dir);
    if ((size_t)snprintf(jdir, sizeof(jdir), "%s/%s", dir, ZC_JRN_DIR) >= sizeof(jdir) - 32) {
        fprintf(stderr, "%s: %s: path too long\n", prog, dir);
        return 2;
    }
    bool complete = access(path, F_OK) == 0;
    DIR *dd = opendir(jdir);
    if (complete && !force) {
        printf("%s: %s is a complete archive (traces.otf2 exists): nothing to salvage%s\n", prog, dir,
               dd ? " (its leftover journal is ignored; --force rebuilds the archive from it)" : "");
        if (dd) closedir(dd);
        return 0;
    }
    if (!dd) {
        fprintf(stderr,
                "%s: %s: no salvage journal (%s: %s): nothing to salvage from (ZECOLL_FLUSH_INTERVAL_MS=0, or the "
                "run died before its first flush or before MPI_Init)\n",
                prog, dir, jdir, strerror(errno));
        return 2;
    }

    /* ---- read every rank's journal */
    struct rank_j *J = NULL;
    size_t nj = 0, cap_j = 0;
    struct dirent *de;
    int bad = 0;
    while ((de = readdir(dd))) {
        size_t len = strlen(de->d_name);
        if (len < 5 || strcmp(de->d_name + len - 4, ".zcj") != 0) continue;
        grow(&J, &cap_j, nj, sizeof(*J));
        struct rank_j *j = &J[nj];
        memset(j, 0, sizeof(*j));
        j->tmin = UINT64_MAX;
        char *p = xcalloc(strlen(jdir) + len + 2, 1);
        sprintf(p, "%s/%s", jdir, de->d_name);
        if (!read_journal(j, p)) {
            bad = 1;
            break;
        }
        nj++;
    }
    closedir(dd);
    if (bad) { /* J[nj] was read in part (zeroed before) */
        free_journals(J, nj + 1);
        return 2;
    }
    if (!nj) {
        fprintf(stderr, "%s: %s: no journal files (*.zcj): nothing to salvage\n", prog, jdir);
        free_journals(J, nj);
        return 2;
    }
    qsort(J, nj, sizeof(*J), rank_cmp);
    size_t nsegs = 0;
    for (size_t i = 0; i < nj; i++)
        for (size_t k = 0; k < J[i].nlocs; k++) nsegs += J[i].locs[k].nsegs;
    if (!nsegs) {
        /* Damage before the first buffer is not "died early": name the file and where it broke. */
        bool named = false;
        for (size_t i = 0; i < nj; i++)
            if (J[i].damage[0]) {
                fprintf(stderr, "%s: %s: %s, before any event records: nothing to salvage\n", prog, J[i].path, J[i].damage);
                named = true;
            }
        if (!named)
            fprintf(stderr,
                    "%s: %s: no records in the journal(s) (the run died before any reached them): nothing to "
                    "salvage\n",
                    prog, jdir);
        free_journals(J, nj);
        return 2;
    }
    uint32_t size = J[0].size;
    bool mpi = J[0].mpi;
    for (size_t i = 0; i < nj; i++) {
        if (J[i].size != size || J[i].mpi != mpi || (i && J[i].rank == J[i - 1].rank)) {
            fprintf(stderr, "%s: %s: rank %u of a %s of %u: not of the job of %s (rank %u of %u)\n", prog, J[i].path,
                    J[i].rank, J[i].mpi ? "job" : "process alone", J[i].size, J[0].path, J[0].rank, size);
            free_journals(J, nj);
            return 2;
        }
    }

    /* ---- assemble each location; where each rank's data ends */
    for (size_t i = 0; i < nj; i++) {
        struct rank_j *j = &J[i];
        uint64_t last = 0;
        for (size_t k = 0; k < j->nlocs; k++) assemble(j, &j->locs[k]);
        unlink_orphans(j);
        for (size_t k = 0; k < j->nlocs; k++) {
            struct sloc *l = &j->locs[k];
            uint64_t lt = 0, nev = 0, ncl = 0;
            zc_evt_normalize(l->ev, l->n, l->kind == ZC_LOC_THREAD, j->flush_region, NULL, NULL, &lt, &nev, &ncl);
            l->recorded = nev;
            l->clamped = ncl;
            last = lt > last ? lt : last;
        }
        /* the last flush: everything recorded before it is here; without one, the last record */
        j->cut = j->nflush ? j->flush_time : last;
        renumber_l0(j);
    }

    /* ---- ranks without a journal: the job's communicators name them, so each keeps a process
     * group with one empty thread location whose measurement is off from the job's start */
    uint64_t t_first = UINT64_MAX;
    for (size_t i = 0; i < nj; i++)
        for (size_t k = 0; k < J[i].nlocs; k++)
            if (J[i].locs[k].n) {
                uint64_t t = J[i].locs[k].ev[0].ts;
                t += (uint64_t)zc_merge_offset_at(J[i].offsets, J[i].noffsets, t);
                t_first = t < t_first ? t : t_first;
            }
    size_t nfound = nj;
    for (uint32_t r = 0, i = 0; r < size; r++) {
        while (i < nfound && J[i].rank < r) i++;
        if (i < nfound && J[i].rank == r) continue;
        grow(&J, &cap_j, nj, sizeof(*J));
        struct rank_j *m = &J[nj++];
        memset(m, 0, sizeof(*m));
        *m = (struct rank_j){.rank = r, .size = size, .mpi = mpi, .missing = true, .have_job = true,
                             .host = "(no journal)", .dir = dir, .exe = "", .tmin = UINT64_MAX, .cut = t_first,
                             .flush_region = ZC_NO_ID};
        m->locs = xcalloc(1, sizeof(*m->locs));
        m->locs[0] =
            (struct sloc){.kind = ZC_LOC_THREAD, .name = "Master thread", .ev = xcalloc(1, sizeof(struct zc_ev))};
        m->nlocs = m->cap_locs = 1;
    }
    qsort(J, nj, sizeof(*J), rank_cmp);

    /* ---- the archive: the dead run's partial OTF2 files are replaced */
    snprintf(path, sizeof(path), "%s/traces", dir);
    if (rm_tree(path) != 0) {
        fprintf(stderr, "%s: %s: cannot remove the dead run's partial event files: %s\n", prog, path, strerror(errno));
        return 1;
    }
    snprintf(path, sizeof(path), "%s/traces.otf2", dir);
    unlink(path);
    snprintf(path, sizeof(path), "%s/traces.def", dir);
    unlink(path);
    OTF2_Archive *ar = OTF2_Archive_Open(dir, "traces", OTF2_FILEMODE_WRITE, 1024 * 1024, 4 * 1024 * 1024,
                                         OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE);
    if (!ar || OTF2_Archive_SetFlushCallbacks(ar, &flush_cbs, NULL) != OTF2_SUCCESS ||
        OTF2_Archive_SetSerialCollectiveCallbacks(ar) != OTF2_SUCCESS ||
        OTF2_Archive_SetCreator(ar, "zecoll salvage") != OTF2_SUCCESS ||
        OTF2_Archive_OpenEvtFiles(ar) != OTF2_SUCCESS) {
        fprintf(stderr, "%s: %s: cannot create the OTF2 archive\n", prog, dir);
        return 1;
    }
    char prop[256];
    snprintf(prop, sizeof(prop), "%zu of %u rank(s)", nfound, size);
    OTF2_Archive_SetProperty(ar, "ZECOLL::SALVAGED", prop, true);
    int rc = 0;
    for (size_t i = 0; i < nj && !rc; i++) {
        struct rank_j *j = &J[i];
        for (size_t k = 0; k < j->nlocs && !rc; k++) {
            repair(&j->locs[k]);
            if (!write_loc(ar, j, &j->locs[k])) rc = 1;
        }
    }
    OTF2_Archive_CloseEvtFiles(ar);

    /* definitions: every rank's, merged as at a collective close; missing ranks stay empty */
    struct zc_wbuf all = {0};
    size_t *sizes = xcalloc(size, sizeof(size_t)), *map_sizes = xcalloc(size, sizeof(size_t));
    for (size_t i = 0; i < nj; i++) {
        struct rank_j *j = &J[i];
        struct zc_merge_loc *ml = xcalloc(j->nlocs, sizeof(*ml));
        for (size_t k = 0; k < j->nlocs; k++) {
            const struct sloc *l = &j->locs[k];
            ml[k] = (struct zc_merge_loc){l->id | j->rank, l->name, l->kind, l->otf2_events, l->group, l->l0_index,
                                          l->recorded, l->clamped, l->lost, j->cut ? j->cut : 1};
        }
        struct zc_merge_src src = {j->rank, j->host, j->tmin, j->tmin == UINT64_MAX ? 0 : j->tmax,
                                   j->mpi_loc | j->rank, &j->defs, ml, j->nlocs};
        size_t before = all.n;
        zc_merge_serialize(&all, &src);
        sizes[j->rank] = (all.n - before) * 8;
        free(ml);
    }
    void *maps = NULL;
    if (all.oom) {
        fprintf(stderr, "%s: out of memory\n", prog);
        return 1;
    }
    zc_merge_root(ar, size, mpi, all.w, sizes, &maps, map_sizes, merge_msg);
    OTF2_Archive_OpenDefFiles(ar);
    for (size_t i = 0; i < nj; i++) {
        struct rank_j *j = &J[i];
        size_t off = 0;
        for (uint32_t r = 0; r < j->rank; r++) off += map_sizes[r];
        for (size_t k = 0; k < j->nlocs; k++) {
            OTF2_DefWriter *dw = OTF2_Archive_GetDefWriter(ar, j->locs[k].id | j->rank);
            if (!dw) continue;
            zc_merge_write_local(dw, maps ? (const char *)maps + off : NULL, maps ? map_sizes[j->rank] : 0, j->rank,
                                 j->offsets, mpi ? j->noffsets : 0);
            OTF2_Archive_CloseDefWriter(ar, dw);
        }
    }
    OTF2_Archive_CloseDefFiles(ar);
    if (OTF2_Archive_Close(ar) != OTF2_SUCCESS || merge_failed) rc = 1;
    if (rc) {
        fprintf(stderr, "%s: %s: the archive could not be written completely\n", prog, dir);
        return 1;
    }

    /* ---- summary */
    uint64_t t0 = UINT64_MAX;
    for (size_t i = 0; i < nj; i++) t0 = J[i].tmin < t0 ? J[i].tmin : t0;
    t0 = t_first < t0 ? t_first : t0;
    if (!quiet) {
        printf("%s: %s: %s, %zu of %u rank(s) found", prog, dir, mpi ? "MPI job" : "process alone", nfound, size);
        if (nfound < size) {
            printf("; missing:");
            for (size_t i = 0; i < nj; i++)
                if (J[i].missing) printf(" %u", J[i].rank);
        }
        printf("\n");
        for (size_t i = 0; i < nj; i++) {
            struct rank_j *j = &J[i];
            if (j->missing) {
                printf("rank %u: no journal (killed before MPI_Init, or its file lost): an empty location, "
                       "measurement off from the start\n",
                       j->rank);
                continue;
            }
            char cut[64];
            uint64_t cut_g = j->cut + (uint64_t)zc_merge_offset_at(j->offsets, j->noffsets, j->cut);
            fmt_rel(cut, sizeof(cut), cut_g, t0 == UINT64_MAX ? cut_g : t0);
            uint64_t rec = 0, lost = 0, rep = 0, unl = 0;
            for (size_t k = 0; k < j->nlocs; k++) {
                rec += j->locs[k].recorded;
                lost += j->locs[k].lost;
                rep += j->locs[k].repaired;
                unl += j->locs[k].unlinked;
            }
            printf("rank %u (%s, pid %llu): %s %s; %zu location(s), %llu records, %llu lost in gaps, %llu repaired, "
                   "%llu device records without their Append\n",
                   j->rank, j->host, (unsigned long long)j->pid,
                   j->final ? "ended without completing its archive: complete up to its end at"
                            : "died: data complete up to its last flush at",
                   cut, j->nlocs, (unsigned long long)rec, (unsigned long long)lost, (unsigned long long)rep,
                   (unsigned long long)unl);
            if (j->damage[0])
                printf("  %s: %s; %llu of %llu bytes used\n", j->path, j->damage, (unsigned long long)j->bytes_used,
                       (unsigned long long)j->bytes_total);
            for (size_t k = 0; k < j->nlocs; k++) {
                const struct sloc *l = &j->locs[k];
                char end[64];
                uint64_t e = l->last_ts + (uint64_t)zc_merge_offset_at(j->offsets, j->noffsets, l->last_ts);
                fmt_rel(end, sizeof(end), e, t0 == UINT64_MAX ? e : t0);
                printf("  %-24s %10llu records, ends at %s\n", l->name, (unsigned long long)l->recorded, end);
            }
        }
        printf("%s: wrote %s/traces.otf2 (salvaged)\n", prog, dir);
    }
    if (!keep && rm_tree(jdir) != 0)
        fprintf(stderr, "%s: %s: could not remove the journal: %s\n", prog, jdir, strerror(errno));
    free_journals(J, nj);
    free(all.w);
    free(maps);
    free(sizes);
    free(map_sizes);
    free(open_stack);
    return 0;
}
