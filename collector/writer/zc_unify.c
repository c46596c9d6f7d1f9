/* SPDX-License-Identifier: MIT */
/* Definitions at close. Every process records with local ids (regions, communicators) in the
 * order it met them; kernel names and communicators differ between ranks. At close each rank
 * serialises its definitions, rank 0 gathers them, merges them into one global set
 * (zc_merge.c), writes the global definitions, and sends every rank its local-to-global maps,
 * which each rank writes as OTF2 mapping tables into its locations' local definitions, next to
 * its clock offsets. A process alone runs the same code with a job of one, so serial and MPI
 * archives are built the same way. */
#include "zc_unify.h"

#include "zc_defs.h"
#include "zc_loc.h"
#include "zc_log.h"
#include "zc_merge.h"
#include "zc_phase.h"
#include "zc_proc.h"

#include <otf2/otf2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void serialize(struct zc_wbuf *b, uint64_t ts_min, uint64_t ts_max) {
    char host[256] = "localhost";
    gethostname(host, sizeof(host) - 1);
    host[sizeof(host) - 1] = 0;
    size_t nlocs = 0, i = 0;
    for (struct zc_loc *l = zc_loc_list(); l; l = l->next) nlocs++;
    struct zc_merge_loc *locs = calloc(nlocs + 1, sizeof(*locs));
    if (!locs) {
        b->oom = true;
        return;
    }
    for (struct zc_loc *l = zc_loc_list(); l && i < nlocs; l = l->next, i++)
        locs[i] = (struct zc_merge_loc){l->gid, l->name, l->kind, l->otf2_events, l->group, l->comm_rank,
                                        l->nevents, l->nclamped, l->ndropped, 0};
    /* the job's time axis is rank 0's: corrected first and last timestamps */
    const struct zc_clock_offset *o = zc_job.offsets;
    int no = zc_job.noffsets;
    struct zc_merge_src src = {
        .rank = zc_job.rank,
        .host = host,
        .tmin = ts_min == UINT64_MAX ? UINT64_MAX : ts_min + (uint64_t)zc_merge_offset_at(o, no, ts_min),
        .tmax = ts_min == UINT64_MAX ? 0 : ts_max + (uint64_t)zc_merge_offset_at(o, no, ts_max),
        .mpi_loc = zc_job.mpi_loc | zc_job.rank,
        .defs = &zc_defs,
        .locs = locs,
        .nlocs = i,
    };
    zc_defs_lock();
    zc_merge_serialize(b, &src);
    zc_defs_unlock();
    free(locs);
}

static void merge_msg(bool failure, const char *msg) {
    if (failure) ZC_FAIL(ZC_F_TRACE, "%s", msg);
    else ZC_WARN("%s", msg);
}

void zc_unify_write(void *archive_v, uint64_t ts_min, uint64_t ts_max) {
    OTF2_Archive *archive = archive_v;
    struct zc_wbuf b = {0};
    serialize(&b, ts_min, ts_max);
    if (b.oom) {
        ZC_FAIL(ZC_F_TRACE, "out of memory serialising definitions");
        b.n = 0;
    }
    zc_phase("unify.serialize");
    bool job = zc_job.mpi && zc_job.gather;
    void *all = NULL, *maps = NULL, *mine = NULL;
    size_t *sizes = calloc(zc_job.size, sizeof(size_t)), *map_sizes = calloc(zc_job.size, sizeof(size_t)), nmine = 0;
    /* every rank takes part in every collective step, whatever failed locally */
    if (job) {
        if (zc_job.gather(b.w, b.n * 8, &all, sizes) != 0) all = NULL;
    } else if (sizes) {
        all = b.w;
        sizes[0] = b.n * 8;
    }
    if (!job || zc_job.rank == 0) {
        if (all && sizes && map_sizes) zc_merge_root(archive, zc_job.size, zc_job.mpi, all, sizes, &maps, map_sizes, merge_msg);
        else ZC_FAIL(ZC_F_TRACE, "cannot gather the ranks' definitions");
    }
    zc_phase("unify.gather_merge");
    if (job) {
        if (zc_job.scatter(maps, map_sizes, &mine, &nmine) != 0) mine = NULL;
        free(maps);
        free(all);
    } else {
        mine = maps;
        nmine = map_sizes ? map_sizes[0] : 0;
    }
    free(b.w);
    free(sizes);
    free(map_sizes);

    zc_phase("unify.scatter");
    /* this rank's maps and clock offsets, in every location's local definitions */
    OTF2_Archive_OpenDefFiles(archive);
    for (struct zc_loc *l = zc_loc_list(); l; l = l->next) {
        /* every location gets a (possibly empty) local definition file */
        OTF2_DefWriter *dw = OTF2_Archive_GetDefWriter(archive, l->gid);
        if (!dw) continue;
        zc_merge_write_local(dw, mine, mine ? nmine : 0, zc_job.rank, zc_job.offsets, zc_job.mpi ? zc_job.noffsets : 0);
        OTF2_Archive_CloseDefWriter(archive, dw);
    }
    OTF2_Archive_CloseDefFiles(archive);
    free(mine);
}
