/* SPDX-License-Identifier: MIT */
/* A location's event file (loc->writer), split from zc_otf2.c: written by our own encoder
 * (zc_otf2_enc.h) into traces/<id>.evt, or by OTF2's event writer, or both (the encoder's copy
 * then goes to <id>.evt.own, for the tests that compare the two: ZECOLL_OTF2_ENCODER), and sealed
 * for the salvage journal (docs/salvage.md, "Seals"). Everything here runs under zc_otf2.c's
 * lock, with its I/O scope entered (zc_otf2_io.c). */
#include "zc_otf2_evt.h"

#include "zc_journal.h"
#include "zc_otf2_io.h"

#include "zc_core.h"
#include "zc_evt.h"
#include "zc_fd.h"
#include "zc_otf2_enc.h"
#include "zc_knobs.h"
#include "zc_log.h"
#include "zc_papi.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { ENC_OWN, ENC_LIBRARY, ENC_BOTH };
static int enc_mode = -1; /* decided when the first event file opens */

struct zc_otf2_evt {
    OTF2_EvtWriter *lib;
    struct zc_enc enc; /* enc.chunk: the own encoder is used */
    uint64_t gid;
    const char *dir; /* the archive's directory (zc_otf2.c's, set once) */
    bool created; /* the file exists */
    bool failed;  /* a write failed: the rest is discarded */
    /* seals (zc_otf2_evt_seal): the file offset of the chunk the encoder fills, how many of its
     * bytes are in the file already, the stream index after the last record encoded, and that
     * of the last seal */
    uint64_t chunk_off, written, next, sealed;
};

static int encoder_mode(void) {
    if (enc_mode >= 0) return enc_mode;
    const char *k = zc_knobs.OTF2_ENCODER;
    enc_mode = ENC_OWN;
    if (k && !strcmp(k, "library")) enc_mode = ENC_LIBRARY;
    else if (k && !strcmp(k, "both")) enc_mode = ENC_BOTH;
    else if (k && *k && strcmp(k, "own"))
        ZC_WARN("ignoring ZECOLL_OTF2_ENCODER=\"%s\": expected own, library or both; using own", k);
    if (enc_mode != ENC_LIBRARY && !zc_enc_supported()) enc_mode = ENC_LIBRARY; /* a big-endian host */
    return enc_mode;
}

/* false when the name does not fit (an archive directory near PATH_MAX): a write error */
static bool evt_path(const struct zc_otf2_evt *o, char *path, size_t size) {
    int k = snprintf(path, size, "%s/traces/%llu.evt%s", o->dir, (unsigned long long)o->gid,
                     enc_mode == ENC_BOTH ? ".own" : "");
    return k > 0 && (size_t)k < size;
}

/* Bytes of the current chunk, from its byte `from` to `to`, into the file at their offset (the
 * chunk's offset: a seal wrote part of the chunk before, zc_otf2_evt_seal), and its header first
 * where `head` (its last event number, set when the chunk ends); the descriptor is kept open for
 * the caller when keep (else closed). 0 or an errno (the failure said and counted). */
enum { CHUNK_HEAD = 18 };
static int evt_pwrite(struct zc_otf2_evt *o, const uint8_t *p, uint64_t from, uint64_t to, int *keep, bool head) {
    bool copy = enc_mode == ENC_BOTH; /* the test copy: no part of the archive */
    char path[PATH_MAX];
    int fd = -1, err = ENAMETOOLONG;
    if (evt_path(o, path, sizeof(path))) {
        fd = zc_fd_high(open(path, O_WRONLY | O_CLOEXEC | (o->created ? 0 : O_CREAT | O_TRUNC), 0666));
        err = fd < 0 ? errno : 0;
    }
    o->created = o->created || fd >= 0;
    if (!err && head && from > CHUNK_HEAD) {
        ssize_t w;
        do w = pwrite(fd, p, CHUNK_HEAD, (off_t)o->chunk_off);
        while (w < 0 && errno == EINTR);
        if (w != CHUNK_HEAD) err = w < 0 ? errno : ENOSPC;
    }
    while (!err && from < to) {
        ssize_t w = pwrite(fd, p + from, (size_t)(to - from), (off_t)(o->chunk_off + from));
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) err = w < 0 ? errno : ENOSPC;
        else from += (uint64_t)w;
    }
    if (fd >= 0 && !err && keep) {
        zc_jrn_sealed_fd(fd); /* a forked child closes it (zc_journal.c) */
        *keep = fd;
        return 0;
    }
    if (fd >= 0 && close(fd) != 0 && !err && errno != EINTR) err = errno;
    if (err) {
        o->failed = true;
        if (!copy) zc_otf2_io_write_failed(o->gid, err, path);
    }
    return err;
}

/* The encoder's chunks to the file, under otf2_lock (SIGXFSZ held, zc_otf2_io_enter): a whole
 * chunk, or at the end the last one's used part, at the chunk's offset. After a failed write
 * (here or OTF2's) the archive's event data is discarded, as OTF2's pre-flush does: the file is
 * ended after its last whole chunk at close (zc_otf2_io_repair). */
static int own_sink(void *ud, const uint8_t *p, size_t n) {
    struct zc_otf2_evt *o = ud;
    bool copy = enc_mode == ENC_BOTH;
    if (o->failed) return EIO;
    if (!copy && !zc_otf2_io_flush(OTF2_FILETYPE_EVENTS, o->gid)) {
        zc_otf2_io_flushed();
        o->failed = true;
        return EIO;
    }
    if (!copy) zc_otf2_io_flushed();
    /* what a seal wrote of the chunk is in the file already: its header (now with its last event
     * number) and the rest (at a short interval, most of a chunk would be written twice) */
    uint64_t from = o->written <= n ? o->written : 0;
    int err = evt_pwrite(o, p, from, n, NULL, true);
    if (!err && n == o->enc.chunk_size) { /* a whole chunk: the next one follows it */
        o->chunk_off += n;
        o->written = 0;
    }
    return err;
}

struct zc_otf2_evt *zc_otf2_evt_get(struct zc_loc *loc, uint64_t gid, OTF2_Archive *archive, const char *dir) {
    if (loc->writer) return loc->writer;
    struct zc_otf2_evt *o = calloc(1, sizeof(*o));
    if (!o) return NULL;
    loc->gid = o->gid = gid;
    o->dir = dir;
    int mode = encoder_mode();
    if (mode != ENC_OWN) o->lib = OTF2_Archive_GetEvtWriter(archive, loc->gid);
    bool own = mode != ENC_LIBRARY && zc_enc_open(&o->enc, ZC_ENC_CHUNK, own_sink, o) == 0;
    if (mode == ENC_OWN && !own) o->lib = OTF2_Archive_GetEvtWriter(archive, loc->gid); /* no memory: OTF2's */
    if (mode != ENC_OWN || !own) __atomic_store_n(&loc->jall, true, __ATOMIC_RELAXED); /* no seals: journaled */
    if (!o->lib && !own) {
        free(o);
        return NULL;
    }
    loc->writer = o;
    zc_otf2_io_reserve_grow(0); /* its mapping tables, at the end */
    return o;
}

OTF2_ErrorCode zc_otf2_evt_close(struct zc_loc *loc, OTF2_Archive *archive) {
    struct zc_otf2_evt *o = loc->writer;
    OTF2_ErrorCode e = OTF2_SUCCESS;
    if (o->enc.chunk) {
        loc->otf2_events = o->enc.events;
        zc_enc_close(&o->enc); /* its failures are the archive's (zc_otf2_io.c) */
    }
    if (o->lib) {
        OTF2_EvtWriter_GetNumberOfEvents(o->lib, &loc->otf2_events);
        e = OTF2_Archive_CloseEvtWriter(archive, o->lib);
    }
    free(o);
    loc->writer = NULL;
    return e;
}


/* Under the OTF2 lock the encoder is between batches: every record encoded is whole, a call's
 * events complete, so the filled part of the chunk is a valid end of the file. */
uint64_t zc_otf2_evt_seal(struct zc_loc *loc, int *sync_fd) {
    uint64_t k = 0;
    struct zc_otf2_evt *o = loc->writer;
    if (o && o->enc.chunk && !o->lib && !o->failed && enc_mode == ENC_OWN &&
        !__atomic_load_n(&loc->jall, __ATOMIC_RELAXED) && !zc_otf2_io_damaged()) {
        k = o->sealed;
        uint64_t used = (uint64_t)(o->enc.pos - o->enc.chunk);
        if (o->next != o->sealed || used != o->written) {
            int fd = -1;
            if (evt_pwrite(o, o->enc.chunk, o->written, used, zc_knobs.FLUSH_SYNC ? &fd : NULL, false) == 0) {
                o->written = used;
                uint64_t first;
                memcpy(&first, o->enc.chunk + 2, 8);
                struct zc_jrn_seal sl = {o->next, o->chunk_off + used, o->chunk_off, o->enc.events, o->enc.time, first};
                /* a marker's seal (no sync_fd): the journal keeps the file, to sync it before
                 * its own next sync, which makes the SEAL record durable */
                zc_jrn_seal(loc, &sl, sync_fd ? -1 : fd);
                k = o->sealed = o->next;
                if (sync_fd) *sync_fd = fd;
            } else { /* said and counted; the writer's batches are dropped from now on */
                k = o->sealed;
            }
        }
    }
    return k;
}
OTF2_ErrorCode zc_otf2_evt_write(struct zc_otf2_evt *o, const struct zc_ev *ev, size_t n, uint64_t next,
                                 uint64_t *ts_min, uint64_t *ts_max) {
    o->next = next;
    const uint8_t *types = zc_papi_otf2_types();
    OTF2_ErrorCode e = OTF2_SUCCESS;
    if (o->lib) e = zc_evt_write(o->lib, ev, n, zc_param_callsite, types, ts_min, ts_max);
    if (o->enc.chunk && zc_enc_write(&o->enc, ev, n, zc_param_callsite, types, ts_min, ts_max) != 0 &&
        e == OTF2_SUCCESS)
        e = OTF2_ERROR_INVALID_ARGUMENT; /* a timestamp before the last one: refused, as by OTF2 */
    return e;
}

uint64_t zc_otf2_evt_next(const struct zc_loc *loc) {
    return loc->writer ? ((const struct zc_otf2_evt *)loc->writer)->next : 0;
}

bool zc_otf2_evt_copy(void) { return encoder_mode() == ENC_BOTH; }
