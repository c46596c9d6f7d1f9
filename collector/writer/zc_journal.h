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
struct zc_jrn_feed {
    /* Copies loc's records from stream index `from` on into out (at most max), *first = the
     * stream index of out[0]; every record before it has reached the archive's writer. */
    size_t (*snapshot)(struct zc_loc *loc, uint64_t from, struct zc_ev *out, size_t max, uint64_t *first);
    /* A process alone has records but no archive yet: open it now, so that there is a journal. */
    void (*open_archive)(void);
};
void zc_jrn_feed(const struct zc_jrn_feed *feed);

extern const struct zc_subsystem zc_jrn_subsystem;

#endif
