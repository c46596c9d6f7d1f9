/* SPDX-License-Identifier: MIT */
/* Merging per-rank definitions into an archive's global definitions. Shared by the collector's
 * close (zc_unify.c, rank 0) and zecoll-salvage (salvage/), which rebuilds each rank's
 * definitions from its journal: one archive layout (docs/archive.md), written by one piece of
 * code. Nothing here touches collector state. */
#ifndef ZC_MERGE_H
#define ZC_MERGE_H

#include "zc_def_types.h"
#include "zc_ev.h" /* enum zc_loc_kind */
#include "zc_wire.h"

#include <stdbool.h>
#include <stddef.h>

#include <otf2/otf2.h>

/* One location as the merge needs it. */
struct zc_merge_loc {
    uint64_t id;          /* OTF2 location id (rank in the low 32 bits) */
    const char *name;
    uint32_t kind;        /* enum zc_loc_kind */
    uint64_t otf2_events; /* events in its event file */
    uint32_t group;       /* 0 = the process, k = accelerator group k (zc_def_accel_group) */
    uint32_t comm_rank;   /* index in the rank's Level Zero communicator (dense from 0) */
    uint64_t recorded, clamped, dropped; /* the zecoll:: location properties (docs/archive.md A12) */
    uint64_t data_end;    /* salvaged archives only (A20): the rank's records are complete up to
                           * this time (its last flush, on this location's clock); 0 = not salvaged */
};

/* One rank's definitions. tmin/tmax: first and last timestamps on rank 0's clock (UINT64_MAX, 0
 * when it has none); mpi_loc: the location id of the thread that called MPI_Init. */
struct zc_merge_src {
    uint32_t rank;
    const char *host;
    uint64_t tmin, tmax, mpi_loc;
    const struct zc_defs *defs;
    const struct zc_merge_loc *locs;
    size_t nlocs;
};

/* Appends src in the serialised form zc_merge_root reads. The caller keeps defs stable. */
void zc_merge_serialize(struct zc_wbuf *b, const struct zc_merge_src *src);

/* The offset to add to local time t, interpolated between the measurements (extrapolated
 * beyond them) as OTF2 readers do; 0 without any. */
int64_t zc_merge_offset_at(const struct zc_clock_offset *o, int n, uint64_t t);

/* failure: the archive lacks something (an internal failure for the collector); otherwise a
 * warning (ranks that counted different PAPI events) */
typedef void (*zc_merge_msg_fn)(bool failure, const char *msg);

/* Reads the serialised definitions of ranks 0..size-1 (concatenated in all; sizes[r] bytes each,
 * 0 = the rank is missing), writes the archive's global definitions (mpi: "MPI Rank r" process
 * groups, else "Process r") and returns every rank's maps concatenated in *maps (malloc'd, NULL
 * on failure) with map_sizes[r] bytes each. Problems go to msg(), once each. */
void zc_merge_root(OTF2_Archive *archive, uint32_t size, bool mpi, const uint64_t *all, const size_t *sizes, void **maps,
                   size_t *map_sizes, zc_merge_msg_fn msg);

/* A location's local definitions: its rank's mapping tables (maps/nbytes: that rank's part of
 * zc_merge_root's output: regions, communicators, metric class; NULL: none, ids are global), its
 * RMA window and its clock offsets. */
void zc_merge_write_local(OTF2_DefWriter *dw, const void *maps, size_t nbytes, uint32_t rank,
                          const struct zc_clock_offset *offsets, int noffsets);

#endif
