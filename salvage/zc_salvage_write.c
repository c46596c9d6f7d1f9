/* SPDX-License-Identifier: MIT */
/* Assembling and writing: each location's journaled buffers become one stream of records (gaps
 * counted as lost, what readers would reject repaired), written as the collector would have
 * written it (zc_evt.c, window markers by zc_marks.c) and closed at the rank's cut by a
 * MeasurementOnOff(OFF); then every rank's definitions, merged as at a collective close (zc_merge.c). */
#include "zc_salvage_internal.h"

#include "zc_otf2_enc.h"

#include <errno.h>
#include <unistd.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- assembling a location */
static int seg_cmp(const void *a, const void *b) {
    const struct zc_salv_seg *x = a, *y = b;
    return x->first < y->first ? -1 : x->first > y->first;
}

/* Does a record only name definitions the rank has? (a checksum-valid journal always does; this
 * keeps a hand-made one from producing an archive that readers reject) */
static bool ev_valid(const struct zc_salv_rank *j, const struct zc_ev *e) {
    const struct zc_defs *d = &j->defs;
    switch (e->type) {
    case ZC_EV_ENTER:
    case ZC_EV_LEAVE:
    case ZC_EV_CALL:
    case ZC_EV_CALL_IRECV: return e->a < d->nregions;
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
static void assemble(struct zc_salv_rank *j, struct zc_salv_loc *l) {
    if (l->nsegs) qsort(l->segs, l->nsegs, sizeof(*l->segs), seg_cmp); /* no segments: segs may be NULL */
    size_t total = 0;
    for (size_t i = 0; i < l->nsegs; i++) total += l->segs[i].n;
    l->ev = zc_salv_calloc(total + 1, sizeof(*l->ev));
    uint64_t next = l->pre.ok ? l->pre.seal.k : 0; /* below a seal: in the event file */
    for (size_t i = 0; i < l->nsegs; i++) {
        const struct zc_salv_seg *s = &l->segs[i];
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

static void repair(struct zc_salv_loc *l) {
    bool stream = l->kind == ZC_LOC_DEVICE;
    size_t o = 0;
    open_n = 0;
    for (size_t i = 0; i < l->pre.nopen; i++) { /* open at the end of the sealed part */
        zc_salv_grow(&open_stack, &open_cap, open_n, sizeof(*open_stack));
        open_stack[open_n++] = l->pre.open[i];
    }
    struct zc_ev *out = zc_salv_calloc(2 * l->n + 1, sizeof(*out));
    for (size_t i = 0; i < l->n; i++) {
        struct zc_ev e = l->ev[i];
        if (e.type == ZC_EV_ENTER) {
            if (stream && open_n) {
                out[o++] = (struct zc_ev){e.ts, ZC_EV_LEAVE, open_stack[--open_n], 0, 0, 0};
                l->repaired++;
            }
            zc_salv_grow(&open_stack, &open_cap, open_n, sizeof(*open_stack));
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
static void unlink_orphans(struct zc_salv_rank *j) {
    size_t n = 0, cap = 0;
    uint64_t *cs = NULL;
    for (size_t i = 0; i < j->nlocs; i++) {
        const struct zc_salv_loc *l = &j->locs[i];
        if (l->kind != ZC_LOC_THREAD) continue;
        for (size_t k = 0; k < l->pre.ncs; k++) { /* the calls in its sealed event file */
            zc_salv_grow(&cs, &cap, n, sizeof(*cs));
            cs[n++] = l->pre.cs[k];
        }
        for (size_t k = 0; k < l->n; k++)
            if (zc_ev_is_call(l->ev[k].type) && l->ev[k].c) {
                zc_salv_grow(&cs, &cap, n, sizeof(*cs));
                cs[n++] = l->ev[k].c;
            }
    }
    if (n) qsort(cs, n, sizeof(*cs), u64_cmp);
    for (size_t i = 0; i < j->nlocs; i++) {
        struct zc_salv_loc *l = &j->locs[i];
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

/* OTF2's errors: the first one's reason is kept for our one message (OTF2 would print a line of
 * its own for every layer it passes through); after a write failed, OTF2 is not called again: its
 * close after a failed chunk write freed the same block twice (a full disk, glibc abort). */
static char otf2_why[256];
static bool otf2_failed; /* some OTF2 call failed: its close does not always say so (a full disk) */
static OTF2_ErrorCode on_otf2_error(void *ud, const char *file, uint64_t line, const char *fn, OTF2_ErrorCode code,
                                    const char *msg, va_list va) {
    (void)ud, (void)file, (void)line, (void)fn;
    otf2_failed = true;
    if (!otf2_why[0]) {
        char m[200];
        vsnprintf(m, sizeof(m), msg ? msg : "", va);
        snprintf(otf2_why, sizeof(otf2_why), "%s%s%s", OTF2_Error_GetDescription(code), m[0] ? ": " : "", m);
    }
    return code;
}

static int merge_failed;
static void merge_msg(bool failure, const char *msg) {
    fprintf(stderr, "%s: %s%s\n", zc_salv_prog, failure ? "" : "note: ", msg);
    merge_failed |= failure;
}

/* The journaled window log, for zc_marks. */
static bool win_get(void *ud, uint64_t k, uint64_t *ns, bool *on) {
    const struct zc_salv_rank *j = ud;
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
    struct zc_enc *enc; /* a sealed file's: our encoder resumed at the seal, instead of w */
};
static void wctx_out(void *ud, const struct zc_ev *ev, size_t n, size_t index) {
    (void)index;
    struct wctx *c = ud;
    if (c->e != OTF2_SUCCESS) return;
    if (c->enc) {
        if (zc_enc_write(c->enc, ev, n, 0, c->metric_types, &c->lo, &c->hi) != 0) c->e = OTF2_ERROR_INVALID_ARGUMENT;
        if (c->enc->err) c->e = OTF2_ERROR_FILE_INTERACTION;
    } else {
        c->e = zc_evt_write(c->w, ev, n, 0, c->metric_types, &c->lo, &c->hi);
    }
}

/* A sealed file's chunks to the salvaged file (as the collector's sink: a whole chunk, or at the
 * end the last one's used part, at the chunk's offset) */
struct evt_sink {
    int fd;
    uint64_t off;
};
static int evt_sink(void *ud, const uint8_t *p, size_t n) {
    struct evt_sink *k = ud;
    size_t done = 0;
    while (done < n) {
        ssize_t w = pwrite(k->fd, p + done, n - done, (off_t)(k->off + done));
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return w < 0 ? errno : ENOSPC;
        done += (size_t)w;
    }
    if (n == ZC_ENC_CHUNK) k->off += n;
    return 0;
}
static const char *evt_dir; /* the archive being written (zc_salv_write_archive) */

/* Writes one location's events, with the window markers the collector would have placed among
 * them (zc_marks.h); false on an OTF2 error (message printed). */
static bool write_loc(OTF2_Archive *ar, struct zc_salv_rank *j, struct zc_salv_loc *l) {
    /* a sealed file: kept up to its seal, our encoder resumed there (zc_salvage_evt.c) */
    struct zc_enc enc = {0};
    struct evt_sink sink = {-1, 0};
    OTF2_EvtWriter *w = NULL;
    if (l->pre.ok) {
        char path[PATH_MAX];
        snprintf(path, sizeof(path), "%s/traces/%llu.evt", evt_dir, (unsigned long long)(l->id | j->rank));
        if (!zc_salv_prefix_copy(j, l, path, &sink.fd, &sink.off)) return false;
        if (zc_enc_resume(&enc, ZC_ENC_CHUNK, evt_sink, &sink, l->pre.chunk, l->pre.used, l->pre.seal.events,
                          l->pre.seal.time) != 0) {
            fprintf(stderr, "%s: cannot resume the event file of location %s of rank %u\n", zc_salv_prog, l->name,
                    j->rank);
            close(sink.fd);
            return false;
        }
    } else if (!(w = OTF2_Archive_GetEvtWriter(ar, l->id | j->rank))) {
        fprintf(stderr, "%s: no OTF2 event writer for location %s of rank %u\n", zc_salv_prog, l->name, j->rank);
        return false;
    }
    struct wctx c = {w, OTF2_SUCCESS, j->defs.nmetrics ? j->metric_types : NULL, UINT64_MAX, 0, NULL};
    if (l->pre.ok) {
        c.enc = &enc;
        c.lo = l->pre.first_ts;
        c.hi = l->pre.seal.time;
    }
    uint64_t last0 = l->pre.ok ? l->pre.seal.time : 0;
    const struct zc_marks_log log = {win_get, j};
    struct zc_marks m = {.mk = l->mk0, .m_on = true, .thread = l->kind == ZC_LOC_THREAD};
    /* as the collector: a location without records gets no window markers */
    bool marks = l->n && j->nwin;
    if (marks) zc_marks_emit(&m, &log, l->ev, l->n, last0, wctx_out, &c);
    else wctx_out(&c, l->ev, l->n, 0);
    OTF2_ErrorCode e = c.e;
    uint64_t lo = c.lo, hi = c.hi, last = last0; /* last: the latest time, a call's Leave included */
    for (size_t i = 0; i < l->n; i++) {
        if (l->ev[i].ts > last) last = l->ev[i].ts;
        if (zc_ev_is_call(l->ev[i].type) && l->ev[i].b > last) last = l->ev[i].b;
    }
    uint64_t end = hi > j->cut ? hi : j->cut;
    end = last > end ? last : end;
    /* what is still open at the cut (a call split over two buffers, a record torn by a gap) */
    if (open_n) last = end;
    while (e == OTF2_SUCCESS && open_n) {
        if (c.enc) {
            struct zc_ev lv = {end, ZC_EV_LEAVE, open_stack[--open_n], 0, 0, 0};
            wctx_out(&c, &lv, 1, 0);
            e = c.e;
        } else {
            e = OTF2_EvtWriter_Leave(w, NULL, end, open_stack[--open_n]);
        }
        l->repaired++;
    }
    /* the window transitions up to the cut; the data's end is an OFF unless recording was off
     * there already (an OFF in force: a second one would not alternate, A18) */
    bool on = true;
    if (marks && e == OTF2_SUCCESS) {
        on = zc_marks_end(&m, &log, end, &last, wctx_out, &c);
        e = c.e;
    }
    OTF2_ErrorCode ce = OTF2_SUCCESS;
    if (c.enc) {
        if (e == OTF2_SUCCESS && on) {
            struct zc_ev off = {end, ZC_EV_MEASUREMENT, 0, 0, 0, 0}; /* a = 0: OFF */
            wctx_out(&c, &off, 1, 0);
            e = c.e;
        }
        l->otf2_events = enc.events;
        if (zc_enc_close(&enc) != 0 || close(sink.fd) != 0) ce = OTF2_ERROR_FILE_INTERACTION;
    } else {
        if (e == OTF2_SUCCESS && on) e = OTF2_EvtWriter_MeasurementOnOff(w, NULL, end, OTF2_MEASUREMENT_OFF);
        if (e == OTF2_SUCCESS) e = OTF2_EvtWriter_GetNumberOfEvents(w, &l->otf2_events);
        ce = OTF2_Archive_CloseEvtWriter(ar, w);
    }
    if (e != OTF2_SUCCESS || ce != OTF2_SUCCESS) {
        if (!otf2_why[0]) snprintf(otf2_why, sizeof(otf2_why), "%s", OTF2_Error_GetName(e != OTF2_SUCCESS ? e : ce));
        fprintf(stderr, "%s: cannot write location %s of rank %u: %s\n", zc_salv_prog, l->name, j->rank, otf2_why);
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
    const struct zc_salv_loc *const *x = a, *const *y = b;
    return (*x)->comm_rank < (*y)->comm_rank ? -1 : (*x)->comm_rank > (*y)->comm_rank;
}

/* Only journaled locations are known: a rank's Level Zero communicator lists them densely, and
 * the RMA records that name a member by its index follow (an unknown member: the stream itself). */
static int comm_key_cmp(const void *key, const void *b) {
    uint32_t k = *(const uint32_t *)key, c = (*(struct zc_salv_loc *const *)b)->comm_rank;
    return k < c ? -1 : k > c;
}

static void renumber_l0(struct zc_salv_rank *j) {
    struct zc_salv_loc **by = zc_salv_calloc(j->nlocs, sizeof(*by));
    for (size_t i = 0; i < j->nlocs; i++) by[i] = &j->locs[i];
    qsort(by, j->nlocs, sizeof(*by), loc_cmp_comm);
    for (size_t i = 0; i < j->nlocs; i++) by[i]->l0_index = (uint32_t)i;
    for (size_t i = 0; i < j->nlocs; i++) {
        struct zc_salv_loc *l = &j->locs[i];
        for (size_t k = 0; k < l->n; k++) {
            struct zc_ev *e = &l->ev[k];
            if (e->type != ZC_EV_RMA_GET && e->type != ZC_EV_RMA_PUT) continue;
            uint32_t remote = (uint32_t)(e->c >> 32);
            struct zc_salv_loc **m = bsearch(&remote, by, j->nlocs, sizeof(*by), comm_key_cmp);
            e->c = (uint64_t)(m ? (*m)->l0_index : l->l0_index) << 32 | (e->c & 0xffffffffu);
        }
    }
    free(by);
}


/* ---------------------------------------------------------------- a rank */
void zc_salv_assemble_rank(struct zc_salv_rank *j) {
    uint64_t last = 0;
    for (size_t k = 0; k < j->nlocs; k++) zc_salv_read_prefix(j, &j->locs[k]);
    for (size_t k = 0; k < j->nlocs; k++) assemble(j, &j->locs[k]);
    unlink_orphans(j);
    for (size_t k = 0; k < j->nlocs; k++) {
        struct zc_salv_loc *l = &j->locs[k];
        /* after a sealed part: from its last time (its clamps are not known here: not counted) */
        uint64_t lt = l->pre.ok ? l->pre.seal.time : 0, nev = l->pre.recorded, ncl = 0;
        zc_evt_normalize(l->ev, l->n, l->kind == ZC_LOC_THREAD, j->flush_region, NULL, NULL, &lt, &nev, &ncl);
        l->recorded = nev;
        l->clamped = ncl;
        last = lt > last ? lt : last;
    }
    /* the last flush: everything recorded before it is here; without one, the last record */
    j->cut = j->nflush ? j->flush_time : last;
    renumber_l0(j);
}

/* ---------------------------------------------------------------- the archive */
static OTF2_Archive *open_archive(const char *dir) {
    OTF2_Archive *ar = OTF2_Archive_Open(dir, "traces", OTF2_FILEMODE_WRITE, 1024 * 1024, 4 * 1024 * 1024,
                                         OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE);
    if (!ar || OTF2_Archive_SetFlushCallbacks(ar, &flush_cbs, NULL) != OTF2_SUCCESS ||
        OTF2_Archive_SetSerialCollectiveCallbacks(ar) != OTF2_SUCCESS ||
        OTF2_Archive_SetCreator(ar, "zecoll salvage") != OTF2_SUCCESS ||
        OTF2_Archive_OpenEvtFiles(ar) != OTF2_SUCCESS) {
        fprintf(stderr, "%s: %s: cannot create the OTF2 archive%s%s\n", zc_salv_prog, dir, otf2_why[0] ? ": " : "",
                otf2_why);
        return NULL;
    }
    return ar;
}

/* Every location's events; 0, or 1 at the first location that could not be written. */
static int write_events(OTF2_Archive *ar, struct zc_salv_job *job) {
    int rc = 0;
    for (size_t i = 0; i < job->nj && !rc; i++) {
        struct zc_salv_rank *j = &job->J[i];
        for (size_t k = 0; k < j->nlocs && !rc; k++) {
            repair(&j->locs[k]);
            if (!write_loc(ar, j, &j->locs[k]) || otf2_failed) rc = 1;
        }
    }
    if (!rc && (OTF2_Archive_CloseEvtFiles(ar) != OTF2_SUCCESS || otf2_failed)) rc = 1;
    free(open_stack);
    open_stack = NULL;
    open_n = open_cap = 0;
    return rc;
}

/* Every rank's definitions, merged as at a collective close; missing ranks stay empty. 0, 1 when
 * the merge failed, -1 out of memory (message printed, nothing written). */
static int write_definitions(OTF2_Archive *ar, const struct zc_salv_job *job) {
    struct zc_wbuf all = {0};
    size_t *sizes = zc_salv_calloc(job->size, sizeof(size_t)), *map_sizes = zc_salv_calloc(job->size, sizeof(size_t));
    for (size_t i = 0; i < job->nj; i++) {
        const struct zc_salv_rank *j = &job->J[i];
        struct zc_merge_loc *ml = zc_salv_calloc(j->nlocs, sizeof(*ml));
        for (size_t k = 0; k < j->nlocs; k++) {
            const struct zc_salv_loc *l = &j->locs[k];
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
    int rc = -1;
    if (all.oom) {
        fprintf(stderr, "%s: out of memory\n", zc_salv_prog);
        goto out;
    }
    zc_merge_root(ar, job->size, job->mpi, all.w, sizes, &maps, map_sizes, merge_msg);
    OTF2_Archive_OpenDefFiles(ar);
    for (size_t i = 0; i < job->nj; i++) {
        const struct zc_salv_rank *j = &job->J[i];
        size_t off = 0;
        for (uint32_t r = 0; r < j->rank; r++) off += map_sizes[r];
        for (size_t k = 0; k < j->nlocs; k++) {
            OTF2_DefWriter *dw = OTF2_Archive_GetDefWriter(ar, j->locs[k].id | j->rank);
            if (!dw) continue;
            zc_merge_write_local(dw, maps ? (const char *)maps + off : NULL, maps ? map_sizes[j->rank] : 0, j->rank,
                                 j->offsets, job->mpi ? j->noffsets : 0);
            OTF2_Archive_CloseDefWriter(ar, dw);
        }
    }
    rc = OTF2_Archive_CloseDefFiles(ar) != OTF2_SUCCESS || merge_failed;
out:
    free(all.w);
    free(maps);
    free(sizes);
    free(map_sizes);
    return rc;
}

int zc_salv_write_archive(struct zc_salv_job *job, const char *dir) {
    OTF2_Error_RegisterCallback(on_otf2_error, NULL);
    evt_dir = dir;
    OTF2_Archive *ar = open_archive(dir);
    if (!ar) return 1;
    char prop[256];
    snprintf(prop, sizeof(prop), "%zu of %u rank(s)", job->nfound, job->size);
    OTF2_Archive_SetProperty(ar, "ZECOLL::SALVAGED", prop, true);
    /* after a failure the archive object is left as it is (see on_otf2_error): the program ends */
    int rc = write_events(ar, job);
    if (!rc) rc = write_definitions(ar, job) != 0 || otf2_failed;
    if (!rc && (OTF2_Archive_Close(ar) != OTF2_SUCCESS || otf2_failed)) rc = 1;
    if (rc)
        fprintf(stderr, "%s: cannot write the archive in %s: %s\n", zc_salv_prog, dir,
                otf2_why[0] ? otf2_why : "the definitions could not be merged");
    return rc;
}
