/* SPDX-License-Identifier: MIT */
/* The hand-written MPI wrappers (MPI_Init, MPI_Init_thread, MPI_Finalize, MPI_Pcontrol) and the
 * job they set up: the collector's private communicator, the collective operations the OTF2
 * writer uses (struct zc_job), and clock offsets against rank 0.
 *
 * Every rank that loads libzecoll.so takes part in the same collective steps, decided only by
 * agreed values, so that no rank waits for another that chose differently: in MPI_Init all
 * ranks duplicate MPI_COMM_WORLD and agree whether all of them collect (otherwise each collecting
 * rank writes its own archive); in MPI_Finalize they agree whether the job's archive can be closed
 * (a rank stopped by a signal cannot). The collector's own messages use PMPI on the private
 * communicator: they never reach the application's wrappers or its communicators. */
#include "zc_mpi_internal.h"
#include "zc_mpi_gen.h"

#include "zc_journal.h"

/* OTF2's MPI collective callbacks (header-only, from libotf2-trace-dev) through PMPI; every MPI
 * symbol it needs is weak like ours (tests/collector/check_exports.sh checks). */
#pragma weak PMPI_Gather
#pragma weak PMPI_Scatter
#pragma weak PMPI_Comm_split
#pragma weak ompi_mpi_char
#pragma weak ompi_mpi_unsigned_char
#pragma weak ompi_mpi_short
#pragma weak ompi_mpi_unsigned_short
#pragma weak ompi_mpi_unsigned
#pragma weak ompi_mpi_long
#pragma weak ompi_mpi_unsigned_long
#pragma weak ompi_mpi_float
#pragma weak ompi_mpi_double
#pragma weak ompi_mpi_int8_t
#pragma weak ompi_mpi_uint8_t
#pragma weak ompi_mpi_int16_t
#pragma weak ompi_mpi_uint16_t
#pragma weak ompi_mpi_int32_t
#pragma weak ompi_mpi_uint32_t
#pragma weak ompi_mpi_datatype_null
#define OTF2_MPI_USE_PMPI
#include <otf2/OTF2_MPI_Collectives.h>

#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <unistd.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

atomic_bool zc_mpi_is_ready;
static MPI_Comm priv;       /* the collector's duplicate of MPI_COMM_WORLD */
static bool have_priv, job; /* job: one archive for the whole job (agreed by every rank) */
static bool linked;         /* libmpi was there when we were loaded: the weak references resolve */

/* Set at load time (the collector's constructor, first), whatever ZECOLL_ENABLE says: every rank
 * must take part in MPI_Init's collective steps, including a rank whose collector is off. Before
 * MPI_Init an MPI program is not yet a job: events wait for the job's archive if MPI will come
 * (the program links libmpi and a launcher started it: zc_job.mpi_expected, until MPI_Init). A
 * program that never calls MPI_Init writes them to its own archive at exit. */
static void mpi_detect(void) {
    linked = zc_mpi_linked();
    zc_job.mpi_linked = linked;
    zc_job.mpi_launched = linked && zc_launcher_started();
    atomic_store(&zc_job.mpi_expected, zc_job.mpi_launched);
}

/* The child of a fork is not an MPI process of the job. */
static void mpi_fork_child(void) {
    zc_mpi_set_ready(false);
    job = false;
}

/* A thread that exits frees its spare request records, and lets go of its thread slot (the next
 * thread that registers continues it: zc_core.h). */
static void mpi_thread_exit(void) {
    while (zc_mpi_tls.spare) {
        struct zc_req *r = zc_mpi_tls.spare;
        zc_mpi_tls.spare = r->next;
        free(r);
    }
    zc_mpi_tls.nspare = 0;
    zc_mpi_tls.t = NULL;
    zc_mpi_tls.fast = NULL;
}

static const struct zc_subsystem layer = {
    .name = "mpi", .detect = mpi_detect, .fork_child = mpi_fork_child, .thread_exit = mpi_thread_exit};

/* This flavour as the dispatch sees it (zc_mpi_flavour.h): ZC_MPI_FLAVOUR names it, and it is the
 * only global definition its objects keep (mpi/CMakeLists.txt). Open MPI's Fortran bindings call
 * PMPI_* directly, so its flavour has Fortran entry points of its own (generated and hand-written);
 * MPICH's call the C MPI_*, but for mpi_f08's calls without buffers (mpi_<name>_f08_: generated
 * and hand-written, zc_mpi_fortran.c). */
#define ZC_CAT(a, b) a##b
#define ZC_FLAVOUR_SYM(f) ZC_CAT(zc_mpi_flavour_, f)
#define ZC_STR(a) #a
#define ZC_FLAVOUR_NAME(f) ZC_STR(f)
__attribute__((visibility("default"))) extern const struct zc_mpi_flavour ZC_FLAVOUR_SYM(ZC_MPI_FLAVOUR);
const struct zc_mpi_flavour ZC_FLAVOUR_SYM(ZC_MPI_FLAVOUR) = {
    ZC_FLAVOUR_NAME(ZC_MPI_FLAVOUR), &layer,
    {zc_mpi_c_entries, zc_mpi_fh_entries, zc_mpi_f_entries}, {&zc_mpi_c_nentries, &zc_mpi_fh_nentries, &zc_mpi_f_nentries}
};

/* ---------------------------------------------------------------- job operations */
static int job_bcast(void *buf, size_t n) {
    return n <= INT_MAX && PMPI_Bcast(buf, (int)n, MPI_BYTE, 0, priv) == MPI_SUCCESS ? 0 : -1;
}

static int job_all_true(bool *v) {
    int in = *v ? 1 : 0, out = 0;
    if (PMPI_Allreduce(&in, &out, 1, MPI_INT, MPI_MIN, priv) != MPI_SUCCESS) return -1;
    *v = out != 0;
    return 0;
}

/* Sizes first; rank 0 then tells everyone whether the total fits MPI's int counts, so that every
 * rank makes the same number of calls whatever the outcome. */
static int job_gather(const void *buf, size_t n, void **all, size_t *sizes) {
    uint64_t mine = n, *s = zc_job.rank == 0 ? calloc(zc_job.size, sizeof(uint64_t)) : NULL;
    int ok = zc_job.rank != 0 || s != NULL;
    if (PMPI_Gather(&mine, 1, MPI_UINT64_T, s, 1, MPI_UINT64_T, 0, priv) != MPI_SUCCESS) ok = 0;
    int *counts = NULL, *displs = NULL;
    char *out = NULL;
    if (zc_job.rank == 0 && ok) {
        uint64_t total = 0;
        for (uint32_t r = 0; r < zc_job.size; r++) total += s[r];
        counts = malloc(zc_job.size * sizeof(int));
        displs = malloc(zc_job.size * sizeof(int));
        out = malloc(total ? total : 1);
        ok = total <= INT_MAX && counts && displs && out;
        for (uint32_t r = 0, off = 0; ok && r < zc_job.size; off += (uint32_t)s[r], r++) {
            counts[r] = (int)s[r];
            displs[r] = (int)off;
            sizes[r] = s[r];
        }
    }
    if (PMPI_Bcast(&ok, 1, MPI_INT, 0, priv) != MPI_SUCCESS) ok = 0;
    if (ok && PMPI_Gatherv(buf, (int)n, MPI_BYTE, out, counts, displs, MPI_BYTE, 0, priv) != MPI_SUCCESS) ok = 0;
    free(s);
    free(counts);
    free(displs);
    if (!ok) {
        free(out);
        if (zc_job.rank == 0) ZC_FAIL(ZC_F_TRACE, "cannot gather the ranks' definitions");
        return -1;
    }
    *all = out;
    return 0;
}

static int job_scatter(const void *all, const size_t *sizes, void **mine, size_t *n) {
    uint64_t *s = NULL, my = 0;
    int *counts = NULL, *displs = NULL, ok = 1;
    if (zc_job.rank == 0) {
        s = malloc(zc_job.size * sizeof(uint64_t));
        counts = malloc(zc_job.size * sizeof(int));
        displs = malloc(zc_job.size * sizeof(int));
        uint64_t off = 0;
        ok = s && counts && displs;
        for (uint32_t r = 0; ok && r < zc_job.size; off += sizes[r], r++) {
            s[r] = all ? sizes[r] : 0; /* nothing to send: every rank gets an empty map */
            counts[r] = (int)s[r];
            displs[r] = (int)off;
        }
        ok = ok && off <= INT_MAX;
        if (!ok && s) memset(s, 0, zc_job.size * sizeof(uint64_t));
    }
    if (PMPI_Bcast(&ok, 1, MPI_INT, 0, priv) != MPI_SUCCESS) ok = 0;
    if (ok && PMPI_Scatter(s, 1, MPI_UINT64_T, &my, 1, MPI_UINT64_T, 0, priv) != MPI_SUCCESS) ok = 0;
    char *buf = ok ? malloc(my ? my : 1) : NULL;
    /* a rank that cannot take its part still takes part in the call */
    if (ok && PMPI_Scatterv(all, counts, displs, MPI_BYTE, buf, buf ? (int)my : 0, MPI_BYTE, 0, priv) != MPI_SUCCESS) ok = 0;
    free(s);
    free(counts);
    free(displs);
    if (!ok || !buf) {
        free(buf);
        return -1;
    }
    *mine = buf;
    *n = my;
    return 0;
}

static int job_otf2_collectives(void *archive) {
    return OTF2_MPI_Archive_SetCollectiveCallbacks(archive, priv, MPI_COMM_NULL) == OTF2_SUCCESS ? 0 : -1;
}

/* ---------------------------------------------------------------- clocks */
/* Ranks that share a clock (same kernel boot, hence the same CLOCK_MONOTONIC_RAW; and the same
 * ZECOLL_CLOCK_SKEW_NS, which simulates separate clocks) have no offset between them: measuring
 * one would only add its error. Rank 0 exchanges ZC_SYNC_ROUNDS ping-pongs with one rank per
 * other clock; the round with the shortest round trip gives the offset (rank 0's midpoint minus
 * the rank's reading), uncertain by half that round trip, and every rank of that clock takes it.
 * Readers interpolate between the init and finalize measurements. */
#define ZC_SYNC_ROUNDS 16
#define ZC_SYNC_TAG 0x7a63

static uint64_t clock_identity(void) {
    char id[128] = "";
    struct zc_fd_guard g; /* the app's closed 0-2 stay closed, even for a moment */
    zc_fd_guard_hold(&g);
    FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
    if (!f || !fgets(id, sizeof(id), f)) gethostname(id, sizeof(id) - 1);
    if (f) fclose(f);
    zc_fd_guard_release(&g);
    uint64_t h = 1469598103934665603ull;
    for (const char *p = id; *p; p++) h = (h ^ (unsigned char)*p) * 1099511628211ull;
    return h ^ (uint64_t)zc_clock_skew;
}

static int64_t ping_pong(int peer, uint64_t *rtt, uint64_t *t_peer_best) {
    uint64_t best = UINT64_MAX, t_r = 0;
    int64_t off = 0;
    for (int k = 0; k < ZC_SYNC_ROUNDS; k++) {
        uint64_t t0 = zc_now();
        PMPI_Send(&t0, 1, MPI_UINT64_T, peer, ZC_SYNC_TAG, priv);
        PMPI_Recv(&t_r, 1, MPI_UINT64_T, peer, ZC_SYNC_TAG, priv, MPI_STATUS_IGNORE);
        uint64_t t1 = zc_now();
        if (t1 - t0 < best) {
            best = t1 - t0;
            off = (int64_t)(t0 + (t1 - t0) / 2 - t_r);
            *t_peer_best = t_r;
        }
    }
    *rtt = best;
    return off;
}

static void clock_sync(void) {
    uint32_t size = zc_job.size, rank = zc_job.rank;
    uint64_t mine = clock_identity(), *ids = rank == 0 ? calloc(size, sizeof(uint64_t)) : NULL;
    /* per rank: role (1 = measured), then offset, stddev (ns), local time of the measurement */
    int64_t *res = rank == 0 ? calloc((size_t)size * 4, sizeof(int64_t)) : NULL, my[4] = {0, 0, 0, 0};
    int ok = rank != 0 || (ids && res);
    PMPI_Bcast(&ok, 1, MPI_INT, 0, priv);
    if (!ok) { /* rank 0 out of memory: no offsets, every rank agrees */
        free(ids);
        free(res);
        return;
    }
    PMPI_Gather(&mine, 1, MPI_UINT64_T, ids, 1, MPI_UINT64_T, 0, priv);
    if (rank == 0)
        for (uint32_t r = 1; r < size; r++) {
            uint32_t first = r;
            for (uint32_t q = 0; q < r && first == r; q++)
                if (ids[q] == ids[r]) first = q;
            res[4 * r] = ids[r] != ids[0] && first == r; /* measure the first rank of each other clock */
        }
    PMPI_Scatter(res, 4, MPI_INT64_T, my, 4, MPI_INT64_T, 0, priv);
    if (rank == 0) {
        for (uint32_t r = 1; r < size; r++) {
            if (!res[4 * r]) continue;
            uint64_t rtt = 0, t_r = 0;
            res[4 * r + 1] = ping_pong((int)r, &rtt, &t_r);
            res[4 * r + 2] = (int64_t)(rtt / 2);
            res[4 * r + 3] = (int64_t)t_r;
        }
        uint64_t now = zc_now();
        for (uint32_t r = 0; r < size; r++) {
            if (ids[r] == ids[0]) { /* rank 0's clock */
                res[4 * r + 1] = res[4 * r + 2] = 0;
                res[4 * r + 3] = (int64_t)now;
                continue;
            }
            for (uint32_t q = 0; q < r; q++) /* the measured rank of this clock */
                if (ids[q] == ids[r] && res[4 * q]) {
                    memcpy(&res[4 * r + 1], &res[4 * q + 1], 3 * sizeof(int64_t));
                    break;
                }
        }
    } else if (my[0]) {
        for (int k = 0; k < ZC_SYNC_ROUNDS; k++) {
            uint64_t t;
            PMPI_Recv(&t, 1, MPI_UINT64_T, 0, ZC_SYNC_TAG, priv, MPI_STATUS_IGNORE);
            t = zc_now();
            PMPI_Send(&t, 1, MPI_UINT64_T, 0, ZC_SYNC_TAG, priv);
        }
    }
    PMPI_Scatter(res, 4, MPI_INT64_T, my, 4, MPI_INT64_T, 0, priv);
    free(ids);
    free(res);
    if (zc_job.noffsets < 2)
        zc_job.offsets[zc_job.noffsets++] = (struct zc_clock_offset){(uint64_t)my[3], my[1], (double)my[2]};
    zc_jrn_offsets(); /* a dead job's salvage needs them */
}

/* ---------------------------------------------------------------- init / finalize */
/* recorded only while recording is on (a window open, this rank selected) */
static struct zc_thread *special_thread(void) {
    return zc_rec_open() && zc_on(ZC_F_MPI) ? zc_thread_get() : NULL;
}

void zc_mpi_special_begin(struct zc_mpi_special *s) {
    s->t0 = zc_tick();
    struct zc_thread *t = zc_on(ZC_F_PAPI) ? special_thread() : NULL;
    s->k0 = s->k1 = 0;
    if (t) s->k0 = zc_papi_read(t, s->m0);
}

void zc_mpi_special_end(struct zc_mpi_special *s) {
    struct zc_thread *t = s->k0 ? special_thread() : NULL;
    if (t) s->k1 = zc_papi_read(t, s->m1);
    s->t1 = zc_tick();
}

static void record_region(uint32_t fn, struct zc_mpi_special *s) {
    struct zc_thread *t = special_thread();
    if (!t) return;
    uint32_t r = zc_mpi_region(fn);
    /* Metric, Enter, Metric, Leave: the second Metric is an event inside the call */
    struct zc_ev e[2 * ZC_PAPI_MAX_RECS + 1];
    size_t k0 = s->k0 && s->k1 ? s->k0 : 0, k1 = k0 ? s->k1 : 0;
    memcpy(e, s->m0, k0 * sizeof(*e));
    zc_papi_stamp(e, k0, s->t0);
    e[k0] = (struct zc_ev){s->t0, ZC_EV_CALL, r, s->t1, 0, k1}; /* ticks (zc_tick) */
    memcpy(e + k0 + 1, s->m1, k1 * sizeof(*e));
    zc_papi_stamp(e + k0 + 1, k1, s->t1);
    if (zc_own_begin(t->loc)) zc_own_put(t->loc, e, k0 + 1 + k1);
    zc_own_end(t->loc);
}

/* The ranks the launcher started, from the variables it gives each process (0: none says):
 * Open MPI's mpirun (OMPI_COMM_WORLD_SIZE/RANK) and PMI launchers such as MPICH's Hydra
 * (PMI_SIZE/RANK). Not Slurm's SLURM_NTASKS: an allocation's singleton legitimately has it. */
static int launcher_size(const char **var, int *lrank) {
    static const char *const vars[][2] = {{"OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_RANK"}, {"PMI_SIZE", "PMI_RANK"}};
    for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
        const char *v = getenv(vars[i][0]), *r = getenv(vars[i][1]);
        if (!v) continue;
        *var = vars[i][0];
        *lrank = r ? atoi(r) : 0;
        return atoi(v);
    }
    return 0;
}

/* A program of one MPI started by the other MPI's launcher (an MPICH program under Open MPI's
 * mpirun, ...) finds itself alone in MPI_COMM_WORLD: every process is a job of its own, as it
 * would be without the collector. Said once per job (by the launcher's rank 0) and not traced,
 * rather than writing one archive per process. */
static bool wrong_launcher(int size) {
    const char *var = NULL;
    int lrank = 0, lsize = launcher_size(&var, &lrank);
    if (size != 1 || lsize <= 1) return false;
    if (lrank == 0)
        ZC_WARN("the launcher started %d processes (%s) but this program's MPI (%s) sees 1 in "
                "MPI_COMM_WORLD: the program was built for another MPI than its launcher's, so each "
                "process runs alone; not traced (run it with its own MPI's launcher)",
                lsize, var, ZC_FLAVOUR_NAME(ZC_MPI_FLAVOUR));
    return true;
}

static void after_init(void) {
    atomic_store(&zc_job.mpi_expected, false);
    zc_phase("init.PMPI_Init");
    if (PMPI_Comm_dup(MPI_COMM_WORLD, &priv) != MPI_SUCCESS) {
        /* a collective failure: every rank ends up here */
        ZC_WARN("cannot duplicate MPI_COMM_WORLD: each rank records on its own");
        return;
    }
    have_priv = true;
    int level = MPI_THREAD_SINGLE;
    PMPI_Query_thread(&level);
    zc_mpi_set_thread_level(level);
    int rank = 0, size = 1;
    PMPI_Comm_rank(priv, &rank);
    PMPI_Comm_size(priv, &size);
    zc_job.rank = (uint32_t)rank;
    if (wrong_launcher(size)) {
        for (int f = 0; f < ZC_F_COUNT; f++) atomic_store(&zc_feature_on[f], false);
        return;
    }
    /* A job's archive needs every rank. Where the collector is off (ZECOLL_ENABLE=0 on some ranks,
     * or its start failed there) while others collect, that rank takes part as an unselected
     * rank: in the archive's collective steps, with no events (zc_start_unselected). Only if
     * that fails somewhere does the job run untraced (said once). */
    zc_phase("init.dup");
    bool off = !zc_active();
    if (job_all_true(&off) != 0) off = true;
    if (off) return; /* off on every rank: nothing to do */
    if (!zc_active() && zc_start_unselected() != 0) ZC_WARN("rank %d cannot take part in the job's archive", rank);
    bool all = zc_active();
    if (job_all_true(&all) != 0) all = false;
    if (!all) {
        if (zc_active()) {
            int me = rank, first = rank;
            PMPI_Allreduce(&me, &first, 1, MPI_INT, MPI_MIN, priv);
            if (first == rank) ZC_WARN("the collector could not start on some ranks: this job is not recorded");
            for (int f = 0; f < ZC_F_COUNT; f++) atomic_store(&zc_feature_on[f], false);
        } else {
            int me = INT_MAX, first = 0;
            PMPI_Allreduce(&me, &first, 1, MPI_INT, MPI_MIN, priv);
        }
        return;
    }
    zc_phase("init.agree");
    zc_win_mpi_init((uint32_t)rank); /* the rank confirmed: its windows and rank selection */
    struct zc_thread *t = zc_thread_get();
    zc_job.size = (uint32_t)size;
    zc_job.mpi_loc = t ? t->loc->id : 0;
    zc_job.bcast = job_bcast;
    zc_job.gather = job_gather;
    zc_job.scatter = job_scatter;
    zc_job.all_true = job_all_true;
    zc_job.otf2_collectives = job_otf2_collectives;
    zc_job.mpi = true;
    job = true;
    zc_phase("init.thread");
    zc_post_mpi_init(); /* opens the job's archive; a failure there is agreed and switches tracing off */
    clock_sync();
    zc_phase("init.clock");
    zc_mpi_comms_init(rank, size);
    zc_mpi_set_ready(true);
    zc_phase("init.comms");
}

void zc_mpi_init_done(uint32_t fn, struct zc_mpi_special *s) {
    after_init();
    record_region(fn, s);
    /* time windows count from here, when the application continues */
    if (zc_active()) zc_win_time_base();
}

#ifdef OMPI_MAJOR_VERSION
bool zc_mpi_linked(void) { return PMPI_Init != NULL && PMPI_Comm_dup != NULL && &ompi_mpi_comm_world != NULL; }
#else /* handles are constants: the functions suffice */
bool zc_mpi_linked(void) { return PMPI_Init != NULL && PMPI_Comm_dup != NULL; }
#endif

void zc_mpi_finalize_prepare(void) {
    struct zc_mpi_special s;
    zc_mpi_special_begin(&s);
    zc_phase("(app)");
    if (job) {
        /* the region is recorded before the archive closes: it covers the collector's close */
        clock_sync();
        zc_phase("fin.clock");
        bool ok = zc_active();
        if (job_all_true(&ok) != 0) ok = false;
        zc_phase("fin.agree");
        zc_mpi_special_end(&s);
        record_region(ZC_MPI_MPI_Finalize, &s);
        zc_mpi_set_ready(false);
        zc_job.closing = ok;
        if (!ok && zc_job.rank == 0)
            ZC_WARN("a rank stopped collecting before MPI_Finalize (signal?): the job's archive is not completed");
        zc_finalize(); /* the collective close, when agreed */
        job = false;
    } else {
        zc_mpi_set_ready(false);
    }
    if (have_priv) {
        PMPI_Comm_free(&priv);
        have_priv = false;
    }
    zc_phase("fin.comm_free");
}

static int init_common(int *argc, char ***argv, int required, int *provided, bool thread) {
    struct zc_mpi_special s;
    zc_phase("(app.before_init)");
    zc_mpi_special_begin(&s);
    int r = thread ? PMPI_Init_thread(argc, argv, required, provided) : PMPI_Init(argc, argv);
    int e = errno;
    zc_mpi_special_end(&s);
    if (r == MPI_SUCCESS) zc_mpi_init_done(thread ? ZC_MPI_MPI_Init_thread : ZC_MPI_MPI_Init, &s);
    errno = e;
    return r;
}

__attribute__((visibility("default"))) int MPI_Init(int *argc, char ***argv) {
    if (!linked) {
        int (*p)(int *, char ***) = (int (*)(int *, char ***))zc_mpi_resolve("PMPI_Init");
        return p ? p(argc, argv) : MPI_ERR_INTERN;
    }
    return init_common(argc, argv, 0, NULL, false);
}

__attribute__((visibility("default"))) int MPI_Init_thread(int *argc, char ***argv, int required, int *provided) {
    if (!linked) {
        int (*p)(int *, char ***, int, int *) = (int (*)(int *, char ***, int, int *))zc_mpi_resolve("PMPI_Init_thread");
        return p ? p(argc, argv, required, provided) : MPI_ERR_INTERN;
    }
    return init_common(argc, argv, required, provided, true);
}

__attribute__((visibility("default"))) int MPI_Finalize(void) {
    if (!linked) {
        int (*p)(void) = (int (*)(void))zc_mpi_resolve("PMPI_Finalize");
        return p ? p() : MPI_ERR_INTERN;
    }
    zc_mpi_finalize_prepare();
    int r = PMPI_Finalize();
    zc_phase("PMPI_Finalize");
    return r;
}

/* MPI_Abort ends the job without MPI_Finalize: this rank finalizes first as a rank that cannot
 * close the job's archive (zc_otf2_finalize), so that its salvage journal holds everything it
 * recorded, up to this call (a region of no duration: the call does not return). The other ranks
 * are stopped by the runtime and write theirs on SIGTERM. The finalize runs on a helper thread
 * and is waited for at most ZECOLL_FINALIZE_TIMEOUT_MS + 1 s: MPI_Abort is also called from error
 * handlers and signal handlers, where a lock this thread holds could block it, and an abort must
 * never turn into a hang. */
static void *abort_finalize(void *arg) {
    (void)arg;
    zc_finalize();
    return NULL;
}

void zc_mpi_abort_prepare(void) {
    if (!zc_active()) return;
    struct zc_mpi_special sp;
    zc_mpi_special_begin(&sp);
    zc_mpi_special_end(&sp);
    sp.t1 = sp.t0; /* the call does not return: a region of no duration where it was made */
    record_region(ZC_MPI_MPI_Abort, &sp);
    zc_mpi_set_ready(false);
    pthread_t th;
    if (zc_thread_spawn(&th, "zc-abort", abort_finalize, NULL) != 0) return;
    struct timespec dl;
    clock_gettime(CLOCK_REALTIME, &dl);
    uint64_t ns = (uint64_t)dl.tv_nsec + (zc_knobs.FINALIZE_TIMEOUT_MS + 1000) * UINT64_C(1000000);
    dl.tv_sec += (time_t)(ns / 1000000000u);
    dl.tv_nsec = (long)(ns % 1000000000u);
    if (pthread_timedjoin_np(th, NULL, &dl) != 0) pthread_detach(th);
}

__attribute__((visibility("default"))) int MPI_Abort(MPI_Comm comm, int errorcode) {
    if (!linked) {
        int (*p)(MPI_Comm, int) = (int (*)(MPI_Comm, int))zc_mpi_resolve("PMPI_Abort");
        return p ? p(comm, errorcode) : MPI_ERR_INTERN;
    }
    int e = errno;
    zc_mpi_abort_prepare();
    errno = e;
    return PMPI_Abort(comm, errorcode);
}

/* The level is passed on; MPI_Pcontrol's variadic arguments have no meaning in Open MPI. */
__attribute__((visibility("default"))) int MPI_Pcontrol(const int level, ...) {
    if (!linked) {
        int (*p)(int, ...) = (int (*)(int, ...))zc_mpi_resolve("PMPI_Pcontrol");
        return p ? p(level) : MPI_ERR_INTERN;
    }
    /* the call that starts recording and the one that stops it are both recorded */
    if (level > 0) zc_win_pcontrol(level);
    struct zc_mpi_call c;
    int r;
    if (!zc_mpi_begin(&c, ZC_MPI_MPI_Pcontrol, ZC_MPI_PASS)) {
        r = PMPI_Pcontrol(level);
    } else {
        r = PMPI_Pcontrol(level);
        int e = errno;
        zc_mpi_end(&c, ZC_MPI_MPI_Pcontrol);
        errno = e;
    }
    if (level == 0) zc_win_pcontrol(0);
    return r;
}
