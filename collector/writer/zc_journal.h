/* SPDX-License-Identifier: MIT */
/* The salvage journal (zc_journal.c; format in zc_jrn_format.h, docs/archive.md): what `zecoll
 * salvage` needs to rebuild the archive of a run that died: definitions and records, appended to
 * <archive>/zecoll-journal/<rank>.zcj as they reach the archive's writer, and by a background
 * flusher every ZECOLL_FLUSH_INTERVAL_MS for what still sits in location buffers. Removed when
 * the archive is complete. */
#ifndef ZC_JOURNAL_H
#define ZC_JOURNAL_H

#include "zc_loc.h"
#include "zc_proc.h" /* struct zc_subsystem */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

void zc_jrn_open(const char *dir); /* the archive exists (otf2 lock held) */
/* Records [first, first + n) of loc, in ns (otf2 lock held). Records already journaled (by the
 * flusher) are skipped. */
void zc_jrn_events(struct zc_loc *loc, uint64_t first, const struct zc_ev *ev, size_t n);
void zc_jrn_offsets(void); /* zc_job.offsets grew (MPI thread, clock_sync) */
/* At the end: complete = the archive is whole, the journal goes; otherwise everything recorded is
 * in it and it stays for `zecoll salvage`. Returns whether a journal is left behind. */
bool zc_jrn_close(bool complete);
/* Whether a journal is open, so that zc_jrn_close(false) will leave one behind: a rank that
 * cannot complete the archive says so before that close, whose last flush and fdatasync a busy
 * disk can make take longer than a rank stopped by mpirun (SIGTERM, then SIGKILL) is given. */
bool zc_jrn_exists(void);
void zc_jrn_start(void); /* a location exists: the flusher starts (once) */

/* Where the flusher's records come from, given by the writer (zc_writer.c) before any location
 * exists, so that the journal calls nothing above it. */
/* A seal (format 4, ZC_JRN_SEAL): loc's event file holds its records below k, in its first `end`
 * bytes; the encoder (zc_otf2_enc.h) was filling the chunk at chunk_off (first event number
 * chunk_first) with `events` written, the last at `time`. */
struct zc_jrn_seal {
    uint64_t k, end, chunk_off, events, time, chunk_first;
};
/* Appends loc's seal (OTF2 lock held, its event file written up to s->end). sync_fd >= 0 (a
 * window marker's seal, ZECOLL_FLUSH_SYNC): the journal takes the file's descriptor and
 * fdatasyncs it before its own next sync (the flusher's, or the close's), then closes it. */
void zc_jrn_seal(struct zc_loc *loc, const struct zc_jrn_seal *s, int sync_fd);
/* fd: an event file's descriptor kept open to be synced after a seal (zc_otf2_evt.c); a forked
 * child closes every such descriptor it inherited, unsynced (any thread, lock-free). */
void zc_jrn_sealed_fd(int fd);
/* Whether the flusher seals the event files (zc_journal.c): while true, the writer need not
 * journal a batch that our encoder writes to an event file of the open archive. */
bool zc_jrn_sealing(void);

/* A flusher's copy of a location: out[0, nconv) records first_conv on, converted (handed to the
 * writer, not encoded yet), then out[nconv, nconv + ncur) records first_cur on from its current
 * buffer (not converted); sync_fd: its event file to fdatasync after the pass (or -1). */
struct zc_jrn_snap {
    uint64_t first_conv, first_cur;
    size_t nconv, ncur;
    int sync_fd;
};

struct zc_jrn_feed {
    /* Seals loc's event file (zc_jrn_seal), then copies loc's records not in its sealed part,
     * from stream index `from` on, into out (at most max), as sn says; every record before
     * sn->first_conv (or, without converted ones, sn->first_cur) is in the file or journal. */
    void (*snapshot)(struct zc_loc *loc, uint64_t from, struct zc_ev *out, size_t max, struct zc_jrn_snap *sn);
    /* A process alone has records but no archive yet: open it now, so that there is a journal. */
    void (*open_archive)(void);
};
void zc_jrn_feed(const struct zc_jrn_feed *feed);

extern const struct zc_subsystem zc_jrn_subsystem;

#endif
