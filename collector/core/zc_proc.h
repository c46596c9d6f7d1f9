/* SPDX-License-Identifier: MIT */
/* The process and its job (zc_proc.c): whom the archive is shared with, the rank, the start time,
 * whether the collector is active, and the steps of the whole collector that a layer may ask for.
 * The layers set what they know here (zc_job's fields); the composition root (zc_main.c) installs
 * the steps (zc_proc_ops). */
#ifndef ZC_PROC_H
#define ZC_PROC_H

#include "zc_def_types.h" /* struct zc_clock_offset */

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Whom this process's archive is shared with. Serial (the default): a process alone, its own
 * archive. MPI (set by mpi/ in MPI_Init): one archive per job, opened and closed collectively;
 * the writer's collective steps go through these operations, on the collector's private
 * communicator, so collector/ itself needs no MPI. */
struct zc_job {
    uint32_t rank, size;
    bool mpi;          /* one archive per job */
    bool closing;      /* inside MPI_Finalize on every rank: the collective close may run */
    uint64_t mpi_loc;  /* location (local id) of the thread that initialised MPI */
    int (*bcast)(void *buf, size_t n); /* from rank 0 */
    /* each rank sends n bytes; rank 0 receives them concatenated (*all, malloc'd) with sizes[] */
    int (*gather)(const void *buf, size_t n, void **all, size_t *sizes);
    /* rank 0 sends sizes[i] bytes of all to rank i; each receives its part (*mine, malloc'd) */
    int (*scatter)(const void *all, const size_t *sizes, void **mine, size_t *n);
    int (*all_true)(bool *v); /* logical AND over ranks */
    int (*otf2_collectives)(void *archive);
    struct zc_clock_offset offsets[2]; /* at init and at finalize */
    int noffsets;
    /* What the MPI layer finds at load time (its detect step, before any layer starts, whatever
     * ZECOLL_ENABLE says: every rank takes part in MPI_Init's collective steps): */
    bool mpi_linked;   /* the program links libmpi */
    bool mpi_launched; /* ... and an MPI launcher started it: its archive is the job's, opened in
                        * MPI_Init, never one the journal's flusher opens for it alone */
    /* ... and until MPI_Init: an MPI job is expected to start, so events are held for the job's
     * archive instead of opening one for this process alone */
    atomic_bool mpi_expected;
};
extern struct zc_job zc_job;
uint32_t zc_rank(void);

extern atomic_bool zc_is_active;
/* initialised, enabled and not yet finalized */
static inline bool zc_active(void) { return atomic_load_explicit(&zc_is_active, memory_order_acquire); }
/* The constructor's first clock reading (ns, zc_now), set by the root (zc_proc_start). */
uint64_t zc_start_time(void);
void zc_proc_start(uint64_t ns);
/* The working directory when the constructor ran ("" if it had none: deleted, too long). */
const char *zc_start_cwd(void);
/* Bumped as the finalize advances (buffers written, layers done): exit paths waiting for it tell
 * a slow finalizer from a stuck one by it. */
extern atomic_uint_fast64_t zc_progress;

/* One entry per layer of the composition root's table (zc_main.c), called in table order
 * (finalize in reverse). */
struct zc_subsystem {
    const char *name;
    void (*detect)(void);       /* at load, whatever ZECOLL_ENABLE says: what the layer knows, into zc_job */
    int (*init)(void);          /* constructor; non-zero = layer off */
    int (*post_mpi_init)(void); /* after the app's MPI_Init, on every rank (collective) */
    void (*pre_finalize)(void); /* app still intact: drain device work */
    void (*finalize)(void);     /* write out */
    void (*fork_child)(void);   /* in the child after fork() */
    void (*thread_exit)(void);  /* on a recording thread that exits, before its slot is reused */
    /* the layer's part of the summary line ("" or 0: none); its length */
    size_t (*summary)(char *buf, size_t cap);
};

/* The whole collector's steps, installed by the composition root before anything else runs. */
struct zc_thread;
struct zc_proc_ops {
    void (*finalize)(void);
    int (*post_mpi_init)(void);
    int (*start_unselected)(void);
    /* a recording thread exits, before its slot goes to the next one (the thread registry's key
     * destructor, zc_loc.c): its PAPI counters stop, and every layer's thread_exit runs */
    void (*thread_exit)(struct zc_thread *t);
};
extern struct zc_proc_ops zc_proc_ops;

/* The one finalize: the first caller runs it, every other exit path waits for it (bounded by its
 * progress); a thread on its way out while a fatal signal is delivered waits for that. */
void zc_finalize(void);
int zc_post_mpi_init(void); /* runs every layer's post_mpi_init; non-zero if one failed */
/* MPI_Init on a rank whose collector is off while others collect: start the core to take part
 * in the job's archive as an unselected rank (no events). 0 = started. */
int zc_start_unselected(void);

#endif
