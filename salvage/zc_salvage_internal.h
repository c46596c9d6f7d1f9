/* SPDX-License-Identifier: MIT */
/* What zecoll-salvage's files share: one rank's journal as read (struct zc_salv_rank), the job of
 * all ranks found, and the steps main takes: read (zc_salvage_journal.c, records applied by
 * zc_salvage_apply.c), assemble and write (zc_salvage_write.c). */
#ifndef ZC_SALVAGE_INTERNAL_H
#define ZC_SALVAGE_INTERNAL_H

#include "zc_evt.h"
#include "zc_jrn_format.h"
#include "zc_marks.h"
#include "zc_merge.h"

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <time.h>

#define ZC_SALV_MAX_RANKS (1u << 24)

extern const char *const zc_salv_prog; /* the name messages start with */

/* ---------------------------------------------------------------- one rank's journal */
struct zc_salv_seg { /* one journaled buffer of a location */
    uint64_t first;  /* stream index of its first record */
    size_t n;
    struct zc_ev *ev; /* decoded (malloc'd) */
};

struct zc_salv_seal { /* a SEAL record (format 4): the event file holds the records below k */
    uint64_t k, end, chunk_off, events, time, chunk_first;
};

/* The dead run's event file of a location up to its seal, as read back (zc_salvage_evt.c): the
 * salvaged file starts with it, and our encoder resumes in its last chunk */
struct zc_salv_prefix {
    bool ok;
    struct zc_salv_seal seal;
    uint8_t *chunk; /* the last chunk's sealed bytes (seal.end - seal.chunk_off) */
    size_t used;
    uint64_t first_ts;  /* its first timestamp (UINT64_MAX: none) */
    uint64_t recorded;  /* the application's events in it (as zc_evt_normalize counts) */
    uint32_t *open;     /* regions open at its end, innermost last */
    size_t nopen, cap_open;
    uint64_t *cs;       /* callsite ids of its calls (a thread's Appends, docs/archive.md A16) */
    size_t ncs, cap_cs;
};

struct zc_salv_loc {
    uint64_t id; /* local id (the rank is added when written) */
    uint32_t kind, group, comm_rank;
    const char *name;
    struct zc_salv_seg *segs;
    size_t nsegs, cap_segs;
    /* assembled and written */
    struct zc_ev *ev;
    size_t n;
    uint64_t lost, repaired, unlinked, otf2_events, recorded, clamped, last_ts;
    uint32_t l0_index; /* dense index in the rank's Level Zero communicator */
    uint64_t mk0;      /* its first entry of the window log */
    struct zc_salv_seal *seals; /* in the journal's order */
    size_t nseals, cap_seals;
    struct zc_salv_prefix pre; /* the latest seal its event file bears out */
};

struct zc_salv_win { /* an entry of the window log */
    uint64_t ns;
    bool on;
};

struct zc_salv_rank {
    const char *path;
    void *map;
    size_t map_len;
    bool have_job;
    unsigned version; /* the file's format (its magic): 3, or 1 (an older zecoll's) */
    uint32_t rank, size;
    bool mpi, final;
    bool missing; /* no journal: a placeholder (one empty thread location) keeps the job whole */
    uint64_t pid, start, mpi_loc, interval_ms;
    bool nodata;           /* found, but no record and no flush: kept like a missing rank */
    bool alive;            /* judged alive (salvaged with --force, beside the archive) */
    bool locked;           /* its writer's lock is held: the process is alive (zc_salvage_live.c) */
    struct timespec mtime; /* the file's last write: the flusher's heartbeat */
    const char *host, *dir, *exe;
    struct zc_defs defs; /* strings, regions, devices, groups, comms: pointers into the file */
    struct zc_salv_loc *locs;
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
    struct zc_salv_win *win;           /* its window log (ZC_JRN_WINDOWS), nwin entries */
    size_t nwin, cap_win;
};

/* The ranks found, sorted by rank, then placeholders for the missing ones. */
struct zc_salv_job {
    const char *dir;
    char jdir[PATH_MAX]; /* dir/zecoll-journal */
    struct zc_salv_rank *J;
    size_t nj, cap_j;
    size_t nfound;    /* ranks with a journal */
    uint32_t size;    /* ranks in the job */
    bool mpi;
    uint64_t t_first; /* the job's first record on rank 0's clock, UINT64_MAX if none */
};

/* Allocation failures end the program (status 1): there is no partial salvage to fall back on. */
void *zc_salv_calloc(size_t n, size_t size);
/* grows *arr (of *cap elements of size elem) to hold at least n + 1 */
void zc_salv_grow(void *arr, size_t *cap, size_t n, size_t elem);

/* ---------------------------------------------------------------- reading (zc_salvage_journal.c) */
/* Maps and reads one journal into *j (zeroed, path malloc'd: j owns it). false: not a journal at
 * all (message printed). */
bool zc_salv_read_journal(struct zc_salv_rank *j, const char *path);
/* Frees what reading (and assembling) n journals allocated; J itself too. */
void zc_salv_free_journals(struct zc_salv_rank *J, size_t n);
/* One verified record into j; false: its contents do not make sense (zc_salvage_apply.c). */
bool zc_salv_apply(struct zc_salv_rank *j, uint32_t type, const uint64_t *p, uint64_t n);

/* ---------------------------------------------------------------- files and live runs (zc_salvage_live.c) */
/* Opens path read-only without blocking (a FIFO with no writer, a device) and checks that it is a
 * regular file; the descriptor, or -1 with one message naming the file and `what` it should be. */
int zc_salv_open_regular(const char *path, const char *what, struct stat *st);
/* Whether another open file description holds a lock on fd's file: a live collector holds a write
 * lock on its journal (collector/writer/zc_journal.c); a failed test reads as not held. */
bool zc_salv_lock_held(int fd);
/* Is a rank's writer still alive? Its lock is held (same host, or a file system that carries
 * locks), or, from another host, its journal was written within three flush intervals + 5 s.
 * why: a phrase saying how it was judged. */
bool zc_salv_alive(const struct zc_salv_rank *j, char *why, size_t n);
/* The archive of the job's ranks, written into a staging directory beside `into` and moved into
 * place when complete (the dead run's partial files replaced then): a write that fails leaves
 * `into` and the journal as they were. 0, or 1 (message printed). */
int zc_salv_write_into(struct zc_salv_job *job, const char *into);
/* A new directory beside dir for the archive of a run that is still alive (--force): dir-salvaged,
 * or dir-salvaged.N; false (message printed) if none could be made. */
bool zc_salv_sibling_dir(const char *dir, char *out, size_t n);
/* Is the anchor file there, not empty, and read by OTF2? (an empty or unreadable one: a disk too
 * small for the collector's reserve, a copy cut short, is no complete archive) */
bool zc_salv_anchor_readable(const char *path);
/* Removes a directory tree; 0 or -1 (errno). */
int zc_salv_rm_tree(const char *path);

/* ---------------------------------------------------------------- sealed event files (zc_salvage_evt.c) */
/* The archive directory whose traces/ the dead run's event files are in (main sets it) */
extern const char *zc_salv_run_dir;
/* The latest of l's seals that its event file bears out (read back whole: every chunk's header
 * and records) into l->pre; a later seal the file does not bear out is said (the records below
 * it that the file should hold are then lost). */
void zc_salv_read_prefix(struct zc_salv_rank *j, struct zc_salv_loc *l);
void zc_salv_free_prefix(struct zc_salv_prefix *p);
/* The salvaged file of l: its prefix copied from the dead run's file into `path`, then an encoder
 * resumed in its last chunk (zc_enc_resume); false: message printed. */
bool zc_salv_prefix_copy(const struct zc_salv_rank *j, const struct zc_salv_loc *l, const char *path, int *fd,
                         uint64_t *last_chunk_off);

/* ---------------------------------------------------------------- writing (zc_salvage_write.c) */
/* Each location's records in stream order, normalized; where the rank's data ends (j->cut). */
void zc_salv_assemble_rank(struct zc_salv_rank *j);
/* The archive written into the directory `dir` (new and empty); 0, or 1 (message printed: the
 * first OTF2 error's reason; OTF2 is not called again after it). */
int zc_salv_write_archive(struct zc_salv_job *job, const char *dir);

#endif
