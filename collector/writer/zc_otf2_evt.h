/* SPDX-License-Identifier: MIT */
/* A location's event file (zc_otf2_evt.c), for zc_otf2.c: every call under its lock. */
#ifndef ZC_OTF2_EVT_H
#define ZC_OTF2_EVT_H

#include "zc_loc.h"

#include <otf2/otf2.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct zc_otf2_evt;

/* loc's event file (loc->writer), made on its first events (or at close, for one without any):
 * loc->gid = gid; dir is the archive's directory and must outlive the file. NULL: no memory. */
struct zc_otf2_evt *zc_otf2_evt_get(struct zc_loc *loc, uint64_t gid, OTF2_Archive *archive, const char *dir);
/* Writes a normalized batch; next = the stream index after its last record. The time range
 * written grows *ts_min / *ts_max. OTF2's error, or OTF2_ERROR_INVALID_ARGUMENT where our
 * encoder refused a timestamp before the last one (as OTF2 does). */
OTF2_ErrorCode zc_otf2_evt_write(struct zc_otf2_evt *o, const struct zc_ev *ev, size_t n, uint64_t next,
                                 uint64_t *ts_min, uint64_t *ts_max);
/* Closes loc's event file (loc->writer = NULL); loc->otf2_events, its event count. */
OTF2_ErrorCode zc_otf2_evt_close(struct zc_loc *loc, OTF2_Archive *archive);
/* Seals loc's event file while the archive is open (zc_otf2_seal, zc_otf2.h): the chunk's bytes
 * not in the file yet written at their offset, then a SEAL record (zc_jrn_seal). Returns K, the
 * records below it in the file (0: none, or a location journaled whole); *sync_fd: the file, for
 * the flusher to fdatasync after its pass (ZECOLL_FLUSH_SYNC), or unchanged; sync_fd NULL (a
 * window marker's seal, outside any pass): the journal keeps the file, to fdatasync before its
 * own next sync (zc_jrn_seal). */
uint64_t zc_otf2_evt_seal(struct zc_loc *loc, int *sync_fd);
/* The stream index after loc's last record written to its file (0: none) */
uint64_t zc_otf2_evt_next(const struct zc_loc *loc);
/* The tests' mode (ZECOLL_OTF2_ENCODER=both): our encoder's copy beside OTF2's file */
bool zc_otf2_evt_copy(void);

#endif
