/* SPDX-License-Identifier: MIT */
/* zecoll-salvage (`zecoll salvage DIR`): turns what a run that died left in its archive directory
 * (the salvage journals in DIR/zecoll-journal/, zc_jrn_format.h) into a readable OTF2 archive,
 * one process group per rank found, written as the collector would have written it (the same
 * event conversion, zc_evt.c, and definitions merge, zc_merge.c) and marked where each
 * location's data ends: a final MeasurementOnOff(OFF) at the rank's last flush, after closing any
 * region left open there, and the archive property ZECOLL::SALVAGED. The recording windows'
 * markers are placed from the journaled window log by the writer's own code (zc_marks.c).
 * Design: docs/salvage.md.
 *
 * Exit status: 0 salvaged (or nothing to do: the archive is complete), 2 bad input (one message
 * naming the file), 1 the archive could not be written. Damage inside a journal is not fatal:
 * reading stops at the first record whose length or checksum is wrong, and the summary says so.
 *
 * This file is the command: its options, the job's checks, the summary. Reading a journal:
 * zc_salvage_journal.c and zc_salvage_apply.c; assembling and writing: zc_salvage_write.c. */
#include "zc_salvage_internal.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char *const zc_salv_prog = "zecoll salvage";

static void usage(FILE *f) {
    fprintf(f,
            "usage: zecoll salvage [--keep-journal] [--force] [--quiet] ARCHIVE_DIR\n"
            "Rebuilds the OTF2 archive of a run that died (SIGKILL, node failure, MPI_Abort, an MPI job\n"
            "ending without MPI_Finalize) from the salvage journal the collector kept in\n"
            "ARCHIVE_DIR/zecoll-journal/: one process group per rank found, each location's data up to\n"
            "the rank's last flush (ZECOLL_FLUSH_INTERVAL_MS, default 1 s, before its death), its end\n"
            "marked by MeasurementOnOff(OFF), the archive marked ZECOLL::SALVAGED. Prints which ranks\n"
            "were found and missing, the records recovered per location and where each rank's data ends.\n"
            "  --keep-journal  keep ARCHIVE_DIR/zecoll-journal/ (default: removed once the archive is written)\n"
            "  --force         rebuild even if ARCHIVE_DIR/traces.otf2 exists (default: nothing to do); salvage a\n"
            "                  run that is still alive (refused by default) into ARCHIVE_DIR-salvaged, leaving\n"
            "                  ARCHIVE_DIR and its journal to the run\n"
            "  --quiet         print only problems\n"
            "Exit status: 0 salvaged or nothing to do, 1 the archive could not be written, 2 bad input or a\n"
            "live run.\n");
}

static void fmt_rel(char *buf, size_t n, uint64_t t, uint64_t t0) {
    if (t >= t0) snprintf(buf, n, "+%.6f s", (double)(t - t0) / 1e9);
    else snprintf(buf, n, "-%.6f s", (double)(t0 - t) / 1e9);
}


struct opts {
    bool keep, force, quiet;
    const char *dir;
};

/* -1: go on; else the exit status (a message or the usage printed). */
static int parse_args(int argc, char **argv, struct opts *o) {
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--keep-journal")) o->keep = true;
        else if (!strcmp(argv[i], "--force")) o->force = true;
        else if (!strcmp(argv[i], "--quiet")) o->quiet = true;
        else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            usage(stdout);
            return 0;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            fprintf(stderr, "%s: unknown option %s\n", zc_salv_prog, argv[i]);
            usage(stderr);
            return 2;
        } else if (o->dir) {
            fprintf(stderr, "%s: one archive directory at a time (%s, %s)\n", zc_salv_prog, o->dir, argv[i]);
            return 2;
        } else {
            o->dir = argv[i];
        }
    }
    if (!o->dir) {
        usage(stderr);
        return 2;
    }
    return -1;
}

/* Is the anchor file there and readable? An empty or unreadable one (a disk too small for the
 * collector's reserve, a copy cut short) is no complete archive: salvage rebuilds it. */
/* The archive directory's journal directory, opened (job->jdir named); NULL: there is nothing to
 * salvage, *status says why (0: the archive is complete; 2: bad input, message printed). */
static DIR *open_journal_dir(const struct opts *o, struct zc_salv_job *job, int *status) {
    const char *dir = o->dir;
    char path[PATH_MAX];
    struct stat st;
    *status = 2;
    if (stat(dir, &st) != 0) {
        fprintf(stderr, "%s: %s: %s\n", zc_salv_prog, dir, strerror(errno));
        return NULL;
    }
    if (!S_ISDIR(st.st_mode)) {
        fprintf(stderr, "%s: %s: not a directory (an archive directory is expected)\n", zc_salv_prog, dir);
        return NULL;
    }
    snprintf(path, sizeof(path), "%s/traces.otf2", dir);
    if ((size_t)snprintf(job->jdir, sizeof(job->jdir), "%s/%s", dir, ZC_JRN_DIR) >= sizeof(job->jdir) - 32) {
        fprintf(stderr, "%s: %s: path too long\n", zc_salv_prog, dir);
        return NULL;
    }
    bool complete = zc_salv_anchor_readable(path);
    DIR *dd = opendir(job->jdir);
    if (complete && !o->force) {
        printf("%s: %s is a complete archive (traces.otf2 exists): nothing to salvage%s\n", zc_salv_prog, dir,
               dd ? " (its leftover journal is ignored; --force rebuilds the archive from it)" : "");
        if (dd) closedir(dd);
        *status = 0;
        return NULL;
    }
    if (!dd)
        fprintf(stderr,
                "%s: %s: no salvage journal (%s: %s): nothing to salvage from (ZECOLL_FLUSH_INTERVAL_MS=0, or the "
                "run died before its first flush or before MPI_Init)\n",
                zc_salv_prog, dir, job->jdir, strerror(errno));
    return dd;
}

static int rank_cmp(const void *a, const void *b) {
    const struct zc_salv_rank *x = a, *y = b;
    return x->rank < y->rank ? -1 : x->rank > y->rank;
}

/* Every *.zcj of dd (closed here) into job->J, sorted by rank; 0, or 2 (message printed, nothing
 * kept). */
static int read_journals(DIR *dd, struct zc_salv_job *job) {
    struct dirent *de;
    int bad = 0;
    while ((de = readdir(dd))) {
        size_t len = strlen(de->d_name);
        if (len < 5 || strcmp(de->d_name + len - 4, ".zcj") != 0) continue;
        zc_salv_grow(&job->J, &job->cap_j, job->nj, sizeof(*job->J));
        struct zc_salv_rank *j = &job->J[job->nj];
        memset(j, 0, sizeof(*j));
        j->tmin = UINT64_MAX;
        char *p = zc_salv_calloc(strlen(job->jdir) + len + 2, 1);
        sprintf(p, "%s/%s", job->jdir, de->d_name);
        if (!zc_salv_read_journal(j, p)) {
            bad = 1;
            break;
        }
        job->nj++;
    }
    closedir(dd);
    if (bad) { /* J[nj] was read in part (zeroed before) */
        zc_salv_free_journals(job->J, job->nj + 1);
        return 2;
    }
    if (!job->nj) {
        fprintf(stderr, "%s: %s: no journal files (*.zcj): nothing to salvage\n", zc_salv_prog, job->jdir);
        zc_salv_free_journals(job->J, job->nj);
        return 2;
    }
    qsort(job->J, job->nj, sizeof(*job->J), rank_cmp);
    return 0;
}

/* Do the journals hold records, all of one job? 0, or 2 (message printed). */
static int check_job(struct zc_salv_job *job) {
    const struct zc_salv_rank *J = job->J;
    size_t nsegs = 0;
    for (size_t i = 0; i < job->nj; i++)
        for (size_t k = 0; k < J[i].nlocs; k++) nsegs += J[i].locs[k].nsegs + J[i].locs[k].nseals; /* a seal: its file's */
    if (!nsegs) {
        /* Damage before the first buffer is not "died early": name the file and where it broke. */
        bool named = false;
        for (size_t i = 0; i < job->nj; i++)
            if (J[i].damage[0]) {
                fprintf(stderr, "%s: %s: %s, before any event records: nothing to salvage\n", zc_salv_prog, J[i].path,
                        J[i].damage);
                named = true;
            }
        if (!named)
            fprintf(stderr,
                    "%s: %s: no records in the journal(s) (the run died before any reached them): nothing to "
                    "salvage\n",
                    zc_salv_prog, job->jdir);
        return 2;
    }
    job->size = J[0].size;
    job->mpi = J[0].mpi;
    for (size_t i = 0; i < job->nj; i++) {
        if (J[i].size != job->size || J[i].mpi != job->mpi || (i && J[i].rank == J[i - 1].rank)) {
            fprintf(stderr, "%s: %s: rank %u of a %s of %u: not of the job of %s (rank %u of %u)\n", zc_salv_prog,
                    J[i].path, J[i].rank, J[i].mpi ? "job" : "process alone", J[i].size, J[0].path, J[0].rank,
                    job->size);
            return 2;
        }
    }
    return 0;
}

/* Ranks without a journal: the job's communicators name them, so each keeps a process group with
 * one empty thread location whose measurement is off from the job's start (job->t_first). */
static void add_missing_ranks(struct zc_salv_job *job) {
    job->t_first = UINT64_MAX;
    for (size_t i = 0; i < job->nj; i++)
        for (size_t k = 0; k < job->J[i].nlocs; k++)
            if (job->J[i].locs[k].n) {
                const struct zc_salv_rank *j = &job->J[i];
                uint64_t t = j->locs[k].ev[0].ts;
                t += (uint64_t)zc_merge_offset_at(j->offsets, j->noffsets, t);
                job->t_first = t < job->t_first ? t : job->t_first;
            }
    job->nfound = job->nj;
    /* a rank that died before its first flush: its journal holds the job and maybe definitions,
     * no record; it is kept like a missing rank (no location would leave its process group with
     * an undefined member, and its data would "end" at time 0) */
    for (size_t i = 0; i < job->nfound; i++) {
        struct zc_salv_rank *j = &job->J[i];
        bool any = false;
        for (size_t k = 0; k < j->nlocs; k++) any |= j->locs[k].n != 0;
        if (any || j->nflush) continue;
        j->nodata = true;
        j->cut = job->t_first;
        if (j->nlocs) continue;
        zc_salv_grow(&j->locs, &j->cap_locs, 0, sizeof(*j->locs));
        j->locs[0] = (struct zc_salv_loc){.kind = ZC_LOC_THREAD, .name = "Master thread",
                                          .ev = zc_salv_calloc(1, sizeof(struct zc_ev))};
        j->nlocs = 1;
        j->mpi_loc = 0;
    }
    for (uint32_t r = 0, i = 0; r < job->size; r++) {
        while (i < job->nfound && job->J[i].rank < r) i++;
        if (i < job->nfound && job->J[i].rank == r) continue;
        zc_salv_grow(&job->J, &job->cap_j, job->nj, sizeof(*job->J));
        struct zc_salv_rank *m = &job->J[job->nj++];
        *m = (struct zc_salv_rank){.rank = r, .size = job->size, .mpi = job->mpi, .missing = true, .have_job = true,
                                   .host = "(no journal)", .dir = job->dir, .exe = "", .tmin = UINT64_MAX,
                                   .cut = job->t_first, .flush_region = ZC_NO_ID};
        m->locs = zc_salv_calloc(1, sizeof(*m->locs));
        m->locs[0] = (struct zc_salv_loc){.kind = ZC_LOC_THREAD, .name = "Master thread",
                                          .ev = zc_salv_calloc(1, sizeof(struct zc_ev))};
        m->nlocs = m->cap_locs = 1;
    }
    qsort(job->J, job->nj, sizeof(*job->J), rank_cmp);
}

/* Ranks whose writer is alive: 0 (none; or --force: *side names the directory made beside the
 * archive for the salvaged one), or 2 (refused, message printed). */
static int check_alive(struct zc_salv_job *job, bool force, char *side, size_t n) {
    side[0] = 0;
    char why[256];
    size_t alive = 0;
    for (size_t i = 0; i < job->nj; i++) {
        struct zc_salv_rank *j = &job->J[i];
        if (!(j->alive = zc_salv_alive(j, why, sizeof(why)))) continue;
        fprintf(stderr, "%s: %s: rank %u (host %s, pid %llu) is still running: %s\n", zc_salv_prog, job->dir, j->rank,
                j->host, (unsigned long long)j->pid, why);
        alive++;
    }
    if (!alive) return 0;
    if (!force) {
        fprintf(stderr,
                "%s: %s: not salvaged: a live run completes its own archive (--force writes a salvaged copy of what "
                "its journal holds now into a new directory beside it, and leaves the run's files alone)\n",
                zc_salv_prog, job->dir);
        return 2;
    }
    if (!zc_salv_sibling_dir(job->dir, side, n)) return 1;
    fprintf(stderr,
            "%s: --force: %zu live rank(s): the salvaged copy goes to %s; %s and its journal are left to the live "
            "run\n",
            zc_salv_prog, alive, side, job->dir);
    return 0;
}

/* A found rank's line: how it ended, what was recovered, where each location's data ends. */
static void print_rank(const struct zc_salv_rank *j, uint64_t t0) {
    char cut[64];
    uint64_t cut_g = j->cut + (uint64_t)zc_merge_offset_at(j->offsets, j->noffsets, j->cut);
    fmt_rel(cut, sizeof(cut), cut_g, t0 == UINT64_MAX ? cut_g : t0);
    uint64_t rec = 0, lost = 0, rep = 0, unl = 0;
    for (size_t k = 0; k < j->nlocs; k++) {
        rec += j->locs[k].recorded;
        lost += j->locs[k].lost;
        rep += j->locs[k].repaired;
        unl += j->locs[k].unlinked;
    }
    printf("rank %u (%s, pid %llu): %s %s; %zu location(s), %llu records, %llu lost in gaps, %llu repaired, "
           "%llu device records without their Append\n",
           j->rank, j->host, (unsigned long long)j->pid,
           j->final   ? "ended without completing its archive: complete up to its end at"
           : j->alive ? "still running: data complete up to its last flush at"
                      : "died: data complete up to its last flush at",
           cut, j->nlocs, (unsigned long long)rec, (unsigned long long)lost, (unsigned long long)rep,
           (unsigned long long)unl);
    if (j->damage[0])
        printf("  %s: %s; %llu of %llu bytes used\n", j->path, j->damage, (unsigned long long)j->bytes_used,
               (unsigned long long)j->bytes_total);
    for (size_t k = 0; k < j->nlocs; k++) {
        const struct zc_salv_loc *l = &j->locs[k];
        char end[64];
        uint64_t e = l->last_ts + (uint64_t)zc_merge_offset_at(j->offsets, j->noffsets, l->last_ts);
        fmt_rel(end, sizeof(end), e, t0 == UINT64_MAX ? e : t0);
        printf("  %-24s %10llu records, ends at %s\n", l->name, (unsigned long long)l->recorded, end);
    }
}

static void print_summary(const struct zc_salv_job *job) {
    const struct zc_salv_rank *J = job->J;
    uint64_t t0 = UINT64_MAX;
    for (size_t i = 0; i < job->nj; i++) t0 = J[i].tmin < t0 ? J[i].tmin : t0;
    t0 = job->t_first < t0 ? job->t_first : t0;
    printf("%s: %s: %s, %zu of %u rank(s) found", zc_salv_prog, job->dir, job->mpi ? "MPI job" : "process alone",
           job->nfound, job->size);
    if (job->nfound < job->size) {
        printf("; missing:");
        for (size_t i = 0; i < job->nj; i++)
            if (J[i].missing) printf(" %u", J[i].rank);
    }
    printf("\n");
    for (size_t i = 0; i < job->nj; i++) {
        if (J[i].missing)
            printf("rank %u: no journal (killed before MPI_Init, or its file lost): an empty location, "
                   "measurement off from the start\n",
                   J[i].rank);
        else if (J[i].nodata)
            printf("rank %u (%s, pid %llu): no data (it %s): an empty location, measurement "
                   "off from the start\n",
                   J[i].rank, J[i].host, (unsigned long long)J[i].pid, J[i].alive ? "has not flushed yet" : "died before its first flush");
        else print_rank(&J[i], t0);
    }
    printf("%s: wrote %s/traces.otf2 (salvaged)\n", zc_salv_prog, job->dir);
}

int main(int argc, char **argv) {
    struct opts o = {0};
    int st = parse_args(argc, argv, &o);
    if (st >= 0) return st;
    struct zc_salv_job job = {.dir = o.dir};
    DIR *dd = open_journal_dir(&o, &job, &st);
    if (!dd) return st;
    if ((st = read_journals(dd, &job)) != 0) return st;
    if ((st = check_job(&job)) != 0) {
        zc_salv_free_journals(job.J, job.nj);
        return st;
    }
    /* a run still alive: its archive is its own to finish (it would finish into ours, or lose the
     * event files ours replaces); --force writes beside it and leaves it everything */
    const char *into = o.dir;
    char side[PATH_MAX];
    if ((st = check_alive(&job, o.force, side, sizeof(side))) != 0) {
        zc_salv_free_journals(job.J, job.nj);
        return st;
    }
    if (side[0]) {
        into = side;
        o.keep = true;
    }
    zc_salv_run_dir = o.dir; /* the dead run's event files, sealed parts read back */
    for (size_t i = 0; i < job.nj; i++) zc_salv_assemble_rank(&job.J[i]);
    add_missing_ranks(&job);
    if (zc_salv_write_into(&job, into) != 0) {
        if (side[0]) rmdir(side);
        fprintf(stderr, "%s: %s: the journal and the run's files are kept as they were: salvage again where there is room\n",
                zc_salv_prog, o.dir);
        zc_salv_free_journals(job.J, job.nj);
        return 1;
    }
    job.dir = into;
    if (!o.quiet) print_summary(&job);
    if (!o.keep && zc_salv_rm_tree(job.jdir) != 0)
        fprintf(stderr, "%s: %s: could not remove the journal: %s\n", zc_salv_prog, job.jdir, strerror(errno));
    zc_salv_free_journals(job.J, job.nj);
    return 0;
}
