/* SPDX-License-Identifier: MIT */
/* The OTF2 archive (zc_otf2.c): the writer's first sink. */
#ifndef ZC_OTF2_H
#define ZC_OTF2_H

#include "zc_loc.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

int zc_otf2_init(void);
/* Writes a full buffer of loc to its event writer (called with loc held); first = the stream
 * index of ev[0] (for the journal). */
void zc_otf2_write(struct zc_loc *loc, const struct zc_ev *ev, size_t n, uint64_t first);
/* The same in two steps, for the writer threads' pipeline (zc_writer.c): _begin decides what
 * becomes of the batch (held before MPI_Init, dropped, or written) and journals it; if it returns
 * true the batch is to be written, in order, by zc_otf2_write_end, while the next batch is
 * converted. zc_otf2_write is _begin + _end in one. */
bool zc_otf2_write_begin(struct zc_loc *loc, const struct zc_ev *ev, size_t n, uint64_t first);
void zc_otf2_write_end(struct zc_loc *loc, const struct zc_ev *ev, size_t n, uint64_t first);
/* The journal's flusher: seals loc's event file (a SEAL record, zc_journal.h); returns K, the
 * records of loc below it are in the file (0: none sealed); *sync_fd: the file to fdatasync after
 * the pass, or -1 (unchanged when nothing was sealed); NULL: the journal syncs it (zc_jrn_seal). */
uint64_t zc_otf2_seal(struct zc_loc *loc, int *sync_fd);
/* Measurement markers (recording windows): written, not journaled. */
void zc_otf2_write_marks(struct zc_loc *loc, const struct zc_ev *ev, size_t n);
/* The journal's flusher found records while no archive is open: a process alone opens its
 * archive now (an MPI job's opens in MPI_Init), so that there is a journal. */
void zc_otf2_open_for_journal(void);
/* MPI_Init (collective): opens the job's archive and writes the events held until then.
 * 0 = the job's archive is open on every rank. */
int zc_otf2_start_job(void);
/* The close, in two steps around the writer's last flush of every buffer: _begin ends holding
 * (what was held for an MPI job goes to a per-process archive) and says whether the archive is
 * still to be closed; zc_otf2_close then closes it: definitions, journal, configuration. */
bool zc_otf2_close_begin(void);
void zc_otf2_close(void);
const char *zc_otf2_path(void);
uint64_t zc_otf2_write_errors(void); /* writes of the archive that failed (disk full, I/O errors) */

#endif
