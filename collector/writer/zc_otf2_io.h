/* SPDX-License-Identifier: MIT */
/* Failures to write the archive (zc_otf2_io.c), for the OTF2 writer (zc_otf2.c) and the journal. */
#ifndef ZC_OTF2_IO_H
#define ZC_OTF2_IO_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

void zc_otf2_io_init(void); /* routes OTF2's errors through zc_log */
/* Around every stretch of OTF2 calls made for us (under the writer's lock). */
/* SIGXFSZ held on this thread around a write of ours (a file-size limit then fails the write
 * with EFBIG instead of killing the application); what the write raised is taken back */
struct zc_xfsz {
    sigset_t mask;
    bool pending; /* one was pending before: the application's, left to it */
};
void zc_xfsz_hold(struct zc_xfsz *s);
void zc_xfsz_release(struct zc_xfsz *s);
struct zc_otf2_io_scope {
    struct zc_xfsz xfsz;
};
void zc_otf2_io_enter(struct zc_otf2_io_scope *s);
void zc_otf2_io_leave(struct zc_otf2_io_scope *s);
/* OTF2's pre-flush callback: false = discard this buffer (event data after a failure). */
bool zc_otf2_io_flush(int file_type, uint64_t loc);
void zc_otf2_io_flushed(void);
/* A write of our own encoder's event file of location loc failed with errno err (zc_otf2.c):
 * counted, said once, the file ended after its last whole chunk at close. */
void zc_otf2_io_write_failed(uint64_t loc, int err, const char *path);
bool zc_otf2_io_damaged(void);      /* a write failed */
uint64_t zc_otf2_io_errors(void);   /* failed writes (I/O errors OTF2 reported) */
uint64_t zc_otf2_io_damaged_at(void);
const char *zc_otf2_io_first_error(void);
/* The space reserve: made when the archive is opened, grown by `bytes` per location (0 = the
 * default), given back before the definitions are written. */
void zc_otf2_io_reserve_open(const char *dir, uint32_t rank, uint64_t extra);
void zc_otf2_io_reserve_grow(uint64_t bytes);
void zc_otf2_io_reserve_release(void);
/* After the close: event files left incomplete end after their last whole chunk, readable;
 * kept() learns how many events of each such location the archive holds. */
/* The event file of a location that never had an event writer, written as OTF2 writes one for a
 * location without events (the byte order mark of this machine's OTF2); false if it cannot be. */
bool zc_otf2_io_empty_evt(const char *dir, const char *name, uint64_t loc, uint64_t chunk);
void zc_otf2_io_repair(const char *dir, const char *name, uint64_t chunk, void (*kept)(uint64_t loc, uint64_t events));
void zc_otf2_io_fork_child(void);
/* errno of a write that failed because of the file system (full, quota, file-size limit, I/O,
 * read-only), not because of us; such failures are counted as write errors (also the journal's) */
bool zc_write_failure(int e);
void zc_write_failure_count(void);

#endif
