/* SPDX-License-Identifier: MIT */
/* One process at a time: its thread and stream locations are read with OTF2's global event
 * reader (time-merged, clock offsets and mapping tables applied, docs/archive.md A4), which is
 * what the union of busy intervals, copy/compute overlap, idle gaps and the host-to-device
 * callsite links need. Memory is the process's open regions, its operations in flight (Appends
 * not yet seen on the device) and the statistics' keys, never its events. A corrupt event file
 * stops the process's reading with an error naming the file (found by re-reading each location
 * alone). The events themselves are in zc_agg_events.c. */
#include "zc_agg_read.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define BATCH 65536

/* the paths of one read: the anchor file and the archive's directory */
struct paths {
    char anchor[PATH_MAX], dir[PATH_MAX];
};

static void evt_path(const char *dir, uint64_t id, char *out, size_t n) {
    snprintf(out, n, "%s/traces/%llu.evt", dir, (unsigned long long)id);
}

/* ---------------------------------------------------------------- the process's state */
/* Its locations (devices in the order their streams come), and the id -> location table. */
static int pctx_init(struct pctx *c, const struct agg_defs *d, struct agg_stats *s, const struct agg_proc *p,
                     const struct agg_read_opts *o) {
    memset(c, 0, sizeof(*c));
    c->d = d;
    c->s = s;
    c->p = p;
    c->rank = p->rank;
    c->own = AGG_NONE;
    c->first = UINT64_MAX;
    c->bin_lo = d->t0;
    c->bin_span = d->span ? d->span : 1;
    c->tl = o && o->timeline && agg_timeline_wants(o->timeline, p->rank) ? o->timeline : NULL;
    c->ls = calloc(p->nlocs + 1, sizeof(*c->ls));
    c->devs = calloc(p->nlocs + 1, sizeof(*c->devs));
    c->lcap = 16;
    while (c->lcap < 2 * (size_t)p->nlocs + 2) c->lcap *= 2;
    c->lkey = calloc(c->lcap, sizeof(uint64_t));
    c->lval = malloc(c->lcap * sizeof(uint32_t));
    c->bins = agg_stats_rank_bins(s, p->rank);
    if (!c->ls || !c->devs || !c->lkey || !c->lval || (s->nbins && !c->bins)) return -1;
    memset(c->lval, 0xff, c->lcap * sizeof(uint32_t));
    for (uint32_t i = 0; i < p->nlocs; i++) {
        const struct agg_loc *L = &d->locs[p->locs[i]];
        struct lst *l = &c->ls[c->nls];
        l->li = p->locs[i];
        l->stream = L->type == AGG_LOC_STREAM;
        l->dev = AGG_NONE;
        l->limit = L->file_size / 2 + 16; /* a record takes at least two bytes */
        if (l->stream && L->device != AGG_NONE) {
            uint32_t k = 0;
            while (k < c->ndevs && c->devs[k].node != L->device) k++;
            if (k == c->ndevs) c->devs[c->ndevs++].node = L->device;
            l->dev = k;
        }
        size_t j = agg_hash64(L->id) & (c->lcap - 1);
        while (c->lval[j] != AGG_NONE) j = (j + 1) & (c->lcap - 1);
        c->lkey[j] = L->id;
        c->lval[j] = c->nls++;
    }
    return 0;
}

static void pctx_free(struct pctx *c) {
    agg_comm_free(c); /* reads the locations' pending records: before they go */
    for (uint32_t i = 0; c->ls && i < c->nls; i++) {
        free(c->ls[i].fr);
        agg_metric_free(&c->ls[i]);
    }
    free(c->ls);
    free(c->devs);
    free(c->lkey);
    free(c->lval);
    agg_map_free(&c->pend);
    agg_map_free(&c->early);
    agg_map_free(&c->wmark);
}

/* ---------------------------------------------------------------- opening */
/* The locations with an event file; -1 (e set) when one is empty but should have events. */
static int select_locations(struct pctx *c, OTF2_Reader *rd, const struct paths *pa, uint32_t *nsel, struct agg_err *e) {
    *nsel = 0;
    for (uint32_t i = 0; i < c->nls; i++) {
        const struct agg_loc *L = &c->d->locs[c->ls[i].li];
        if (L->empty) {
            char path[PATH_MAX + 64];
            evt_path(pa->dir, L->id, path, sizeof(path));
            agg_err_set(e, path, "empty event file, its definition says %llu events (truncated)",
                        (unsigned long long)L->def_events);
            return -1;
        }
        if (!L->file_size) continue;
        if (OTF2_Reader_SelectLocation(rd, L->id) != OTF2_SUCCESS) {
            agg_err_set(e, pa->anchor, "cannot select location %llu (%s)", (unsigned long long)L->id, agg_otf2_last_error());
            return -1;
        }
        (*nsel)++;
    }
    return 0;
}

/* the first and last clock offset of the rank (A4) and their uncertainties */
struct offset {
    uint64_t t, sd; /* local time; the standard deviation's IEEE bits */
    int64_t v;
};
struct offs {
    uint64_t n;
    struct offset first, last;
};

static OTF2_CallbackCode cb_offset(void *ud, OTF2_TimeStamp t, int64_t off, double sd) {
    struct offs *o = ud;
    o->last = (struct offset){.t = t, .v = off};
    memcpy(&o->last.sd, &sd, sizeof(sd));
    if (o->n++ == 0) o->first = o->last;
    return OTF2_CALLBACK_SUCCESS;
}

/* One location's local definitions, read for its clock offsets; OTF2 keeps its mapping tables
 * and offsets for the event reader. 1: none (ids are global, no offsets: reported). */
static int read_local_defs(struct pctx *c, OTF2_Reader *rd, OTF2_DefReaderCallbacks *dcb, const struct paths *pa,
                           uint32_t i, struct offs *lo, struct agg_err *e) {
    const struct agg_loc *L = &c->d->locs[c->ls[i].li];
    char path[PATH_MAX + 64];
    snprintf(path, sizeof(path), "%s/traces/%llu.def", pa->dir, (unsigned long long)L->id);
    struct stat st;
    if (stat(path, &st) != 0) return 1;
    OTF2_DefReader *dr = OTF2_Reader_GetDefReader(rd, L->id);
    if (!dr) {
        agg_err_set(e, path, "corrupt local definitions (%s)", agg_otf2_last_error());
        return -1;
    }
    OTF2_DefReaderCallbacks_SetClockOffsetCallback(dcb, cb_offset);
    OTF2_Reader_RegisterDefCallbacks(rd, dr, dcb, lo);
    uint64_t n = 0;
    OTF2_ErrorCode rc = OTF2_Reader_ReadAllLocalDefinitions(rd, dr, &n);
    OTF2_Reader_CloseDefReader(rd, dr);
    if (rc != OTF2_SUCCESS) {
        agg_err_set(e, path, "corrupt local definitions (%s)", agg_otf2_last_error());
        return -1;
    }
    return 0;
}

/* every selected location's offsets; the rank's are its location's with the most */
static int read_offsets(struct pctx *c, OTF2_Reader *rd, const struct paths *pa, struct offs *offs, struct agg_err *e) {
    if (OTF2_Reader_OpenDefFiles(rd) != OTF2_SUCCESS) return 0;
    OTF2_DefReaderCallbacks *dcb = OTF2_DefReaderCallbacks_New();
    int ret = 0;
    for (uint32_t i = 0; dcb && i < c->nls && ret == 0; i++) {
        if (!c->d->locs[c->ls[i].li].file_size) continue;
        struct offs lo = {0};
        int rc = read_local_defs(c, rd, dcb, pa, i, &lo, e);
        if (rc < 0) ret = -1;
        if (rc != 0) continue;
        if (lo.n > offs->n) *offs = lo;
        c->ls[i].noffsets = lo.n;
    }
    OTF2_DefReaderCallbacks_Delete(dcb);
    if (ret == 0) OTF2_Reader_CloseDefFiles(rd);
    return ret;
}

/* ---------------------------------------------------------------- reading */
/* Whether one location's event file decodes alone (a local reader, no callbacks, bounded like
 * the real read): 0 yes, 1 no (msg says why), -1 no reader to tell. */
static int location_bad(const char *anchor, const struct agg_loc *L, char *msg, size_t n) {
    OTF2_Reader *rd = OTF2_Reader_Open(anchor);
    if (!rd) return -1;
    int bad = 1;
    if (OTF2_Reader_SetSerialCollectiveCallbacks(rd) == OTF2_SUCCESS && OTF2_Reader_SelectLocation(rd, L->id) == OTF2_SUCCESS &&
        OTF2_Reader_OpenEvtFiles(rd) == OTF2_SUCCESS) {
        OTF2_EvtReader *er = OTF2_Reader_GetEvtReader(rd, L->id);
        uint64_t got = 0, k = 0, limit = L->file_size / 2 + 16;
        if (er) {
            OTF2_ErrorCode rc = OTF2_SUCCESS;
            while (got <= limit) {
                rc = OTF2_Reader_ReadLocalEvents(rd, er, BATCH, &k);
                got += k;
                if (rc != OTF2_SUCCESS || k < BATCH) break;
            }
            if (rc != OTF2_SUCCESS) snprintf(msg, n, "%s", agg_otf2_last_error());
            else if (got > limit) snprintf(msg, n, "more records than the file can hold");
            else bad = 0;
        }
        OTF2_Reader_CloseEvtFiles(rd);
    }
    OTF2_Reader_Close(rd);
    return bad;
}

/* Which event file of the process is at fault: each read alone. None found: the rank's events
 * as a whole, with the reason the merged read gave. */
static void blame(const struct agg_defs *d, const struct paths *pa, const struct agg_proc *p, struct agg_err *e,
                  const char *fallback) {
    char path[PATH_MAX + 64];
    for (uint32_t i = 0; i < p->nlocs; i++) {
        const struct agg_loc *L = &d->locs[p->locs[i]];
        char msg[200] = "";
        if (!L->file_size) continue;
        int bad = location_bad(pa->anchor, L, msg, sizeof(msg));
        if (bad < 0) break;
        if (!bad) continue;
        evt_path(pa->dir, L->id, path, sizeof(path));
        agg_err_set(e, path, "corrupt or truncated event file (%s)", msg[0] ? msg : "cannot be decoded");
        return;
    }
    snprintf(path, sizeof(path), "%s/traces", pa->dir);
    agg_err_set(e, path, "events of rank %u cannot be read (%s)", p->rank, fallback);
}

/* The event files open, each with its reader, under one global (time-merging) reader; *gr is
 * set as soon as it exists, for the caller to close. */
static int open_events(struct pctx *c, OTF2_Reader *rd, const struct paths *pa, OTF2_GlobalEvtReader **gr, bool *evt_open,
                       struct agg_err *e) {
    if (OTF2_Reader_OpenEvtFiles(rd) != OTF2_SUCCESS) {
        agg_err_set(e, pa->anchor, "cannot open the event files (%s)", agg_otf2_last_error());
        return -1;
    }
    *evt_open = true;
    for (uint32_t i = 0; i < c->nls; i++) {
        const struct agg_loc *L = &c->d->locs[c->ls[i].li];
        if (L->file_size && !OTF2_Reader_GetEvtReader(rd, L->id)) {
            char path[PATH_MAX + 64];
            evt_path(pa->dir, L->id, path, sizeof(path));
            agg_err_set(e, path, "cannot open the event file (%s)", agg_otf2_last_error());
            return -1;
        }
    }
    *gr = OTF2_Reader_GetGlobalEvtReader(rd);
    OTF2_GlobalEvtReaderCallbacks *cb = *gr ? agg_event_callbacks() : NULL;
    if (!*gr || !cb) {
        agg_err_set(e, pa->anchor, "cannot read events (%s)", agg_otf2_last_error());
        return -1;
    }
    OTF2_Reader_RegisterGlobalEvtCallbacks(rd, *gr, cb, c);
    OTF2_GlobalEvtReaderCallbacks_Delete(cb);
    return 0;
}

/* Batches until the end; progress between them, as a share of the process's bytes by events
 * read of those defined. */
static int read_events(struct pctx *c, OTF2_Reader *rd, OTF2_GlobalEvtReader *gr, const struct paths *pa,
                       const struct agg_read_opts *o, struct agg_err *e) {
    const struct agg_defs *d = c->d;
    uint64_t total_def = 0;
    for (uint32_t i = 0; i < c->nls; i++) total_def += d->locs[c->ls[i].li].def_events;
    for (;;) {
        uint64_t n = 0;
        OTF2_ErrorCode rc = OTF2_Reader_ReadGlobalEvents(rd, gr, BATCH, &n);
        if (c->corrupt) {
            char path[PATH_MAX + 64];
            if (c->corrupt_li != AGG_NONE) {
                evt_path(pa->dir, d->locs[c->corrupt_li].id, path, sizeof(path));
                agg_err_set(e, path, "corrupt event file (%s)", c->why);
            } else {
                blame(d, pa, c->p, e, c->why);
            }
            return -1;
        }
        if (rc != OTF2_SUCCESS) {
            char why[200];
            snprintf(why, sizeof(why), "%s", agg_otf2_last_error());
            blame(d, pa, c->p, e, why);
            return -1;
        }
        if (o && o->progress && total_def)
            o->progress(o->progress_ud,
                        (uint64_t)((unsigned __int128)c->p->bytes * (c->events < total_def ? c->events : total_def) / total_def));
        if (n < BATCH) return 0;
    }
}

/* ---------------------------------------------------------------- into the statistics */
/* the ends of the locations: open regions, measurement still off, counters */
static void flush_locations(struct pctx *c) {
    for (uint32_t i = 0; i < c->nls; i++) {
        struct lst *l = &c->ls[i];
        if (l->off) agg_end_off(c, l, l->last);
        agg_metric_flush(c, l);
        struct agg_acc *a = agg_stats_get(c->s, T_LOC, 0, l->li, 0);
        if (!a) continue;
        if (l->nev) {
            a->min = l->first;
            a->max = l->last;
        }
        a->n += l->nev;
        a->sum += l->nmetric;
        a->x[0] += l->depth;
        a->x[1] += l->badleave;
        a->x[2] += l->offcount;
        a->x[3] += l->offns;
        a->bytes = l->noffsets;
    }
}

static void flush_devices(struct pctx *c) {
    for (uint32_t k = 0; k < c->ndevs; k++) {
        struct dst *v = &c->devs[k];
        struct agg_acc *a = agg_stats_get(c->s, T_DEVUTIL, 0, c->rank, v->node);
        if (!a) continue; /* a rank and device are read once: the entry is new */
        *a = (struct agg_acc){.n = 1, .sum = v->busy, .x = {v->busy_c, v->busy_x, v->overlap, v->offns}, .min = v->first,
                              .max = v->last, .bytes = c->first <= c->last ? c->last - c->first : 0 /* the rank's window */};
    }
}

/* a process is read once: its rank's record is new (but for its time bins, filled while reading) */
static void flush_rank(struct pctx *c, const struct offs *offs) {
    struct agg_rank *R = &c->s->ranks[c->rank];
    uint64_t off_count = 0, off_ns = 0;
    for (uint32_t i = 0; i < c->nls; i++) {
        off_count += c->ls[i].offcount;
        off_ns += c->ls[i].offns;
    }
    *R = (struct agg_rank){.present = 1, .first = c->first == UINT64_MAX ? 0 : c->first, .last = c->last,
                           .ndev = c->ndevs, .mpi_ns = c->mpi_ns, .host_off_ns = c->host_offns,
                           .kernel_ns = c->kernel_ns, .events = c->events,
                           .cs_host_only = c->pend.n, /* still waiting: never matched */
                           .cs_dev_only = c->early.n, .cs_repeat = c->cs_repeat, .lat_negative = c->lat_neg,
                           .lat_negative_max = c->lat_neg_max, .off_count = off_count, .off_ns = off_ns,
                           .noffsets = offs->n, .off_t0 = offs->first.t, .off_t1 = offs->last.t,
                           .off_v0 = offs->first.v, .off_v1 = offs->last.v, .off_sd0 = offs->first.sd,
                           .off_sd1 = offs->last.sd, .bins = R->bins};
}

/* ---------------------------------------------------------------- one process */
int agg_read_process(const struct agg_defs *d, const char *archive, uint32_t proc, struct agg_stats *s,
                     const struct agg_read_opts *o, struct agg_err *e) {
    const struct agg_proc *p = &d->procs[proc];
    struct paths pa;
    agg_archive_paths(archive, pa.anchor, pa.dir);
    struct pctx c;
    struct offs offs = {0};
    OTF2_Reader *rd = NULL;
    OTF2_GlobalEvtReader *gr = NULL;
    bool evt_open = false;
    uint32_t nsel = 0;
    int ret = -1;
    if (pctx_init(&c, d, s, p, o) != 0) {
        agg_err_set(e, pa.anchor, "out of memory");
        goto out;
    }
    if (c.tl) agg_timeline_begin_proc(c.tl, proc);
    rd = OTF2_Reader_Open(pa.anchor);
    if (!rd || OTF2_Reader_SetSerialCollectiveCallbacks(rd) != OTF2_SUCCESS) {
        agg_err_set(e, pa.anchor, "cannot open the archive (%s)", agg_otf2_last_error());
        goto out;
    }
    if (select_locations(&c, rd, &pa, &nsel, e) != 0) goto out;
    if (nsel) {
        if (read_offsets(&c, rd, &pa, &offs, e) != 0) goto out;
        if (open_events(&c, rd, &pa, &gr, &evt_open, e) != 0 || read_events(&c, rd, gr, &pa, o, e) != 0) goto out;
    }
    flush_locations(&c);
    flush_devices(&c);
    flush_rank(&c, &offs);
    agg_idle_flush(&c);
    if (c.pend.oom || c.early.oom || c.wmark.oom || c.irecv_post.oom || c.coll_seq.oom || s->oom) {
        agg_err_set(e, pa.anchor, "out of memory");
        goto out;
    }
    ret = 0;
out:
    if (gr) OTF2_Reader_CloseGlobalEvtReader(rd, gr);
    if (evt_open) OTF2_Reader_CloseEvtFiles(rd);
    if (rd) OTF2_Reader_Close(rd);
    if (c.tl) {
        uint64_t off = 0, len = 0;
        agg_timeline_end_proc(c.tl, &off, &len);
    }
    pctx_free(&c);
    return ret;
}
