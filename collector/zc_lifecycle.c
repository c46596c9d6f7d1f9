/* SPDX-License-Identifier: MIT */
/* The lifecycle table: every layer registers init / pre_finalize / finalize / fork_child /
 * thread_exit here, and the constructor, the exit paths (zc_exit.c: atexit, exit(), signals,
 * MPI_Finalize) and pthread_atfork drive them in order. Nothing else initialises or tears down
 * collector state. */
#include "zc_defs.h"
#include "zc_otf2_io.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const struct zc_subsystem *const subsystems[] = {
    &zc_core_subsystem,
    &zc_otf2_subsystem,
    &zc_jrn_subsystem, /* finalizes before otf2: its flusher stops before the buffers are written */
    &zc_ze_subsystem,
    &zc_mpi_subsystem,
};
#define NSUB (sizeof(subsystems) / sizeof(subsystems[0]))

atomic_bool zc_is_active; /* zc_core.h: read inline by zc_own_begin */
static uint64_t start_ns;
struct zc_job zc_job = {.size = 1};
int64_t zc_clock_skew;

uint64_t zc_start_time(void) { return start_ns; }
uint32_t zc_rank(void) { return zc_job.rank; }

/* ZECOLL_CLOCK_SKEW_NS: the launcher's rank picks this process's entry (MPI is not up yet, and
 * every timestamp must carry the same skew). */
static void set_clock_skew(void) {
    const char *list = zc_knobs.CLOCK_SKEW_NS;
    if (!list || !*list) return;
    int rank = zc_launcher_rank();
    long idx = rank < 0 ? 0 : rank;
    const char *p = list;
    for (long i = 0; i < idx && p; i++) {
        p = strchr(p, ',');
        if (p) p++;
    }
    if (!p) return; /* fewer entries than ranks: no skew */
    char *end;
    long long v = strtoll(p, &end, 10);
    if (end == p || (*end && *end != ',')) {
        ZC_WARN("ignoring ZECOLL_CLOCK_SKEW_NS=\"%s\": expected comma-separated integers (ns)", list);
        return;
    }
    zc_clock_skew = v;
}
/* ---------------------------------------------------------------- core subsystem */
static int core_init(void) {
    for (int f = 0; f < ZC_F_COUNT; f++) atomic_store(&zc_feature_on[f], true);
    if (!zc_knobs.API_TIMING) atomic_store(&zc_feature_on[ZC_F_API_TIMING], false);
    if (!zc_knobs.DEVICE_TIMING) atomic_store(&zc_feature_on[ZC_F_DEVICE_TIMING], false);
    if (!zc_knobs.RECORD_MPI) atomic_store(&zc_feature_on[ZC_F_MPI], false);
    /* no events: PAPI is never loaded and nothing samples (zc_papi.c) */
    if (!zc_knobs.PAPI_EVENTS.n) atomic_store(&zc_feature_on[ZC_F_PAPI], false);
    zc_param_callsite = 0; /* the one parameter, defined by the writer */
    zc_region_flush = zc_def_region("zecoll buffer flush", ZC_ROLE_ARTIFICIAL, ZC_PARADIGM_MEASUREMENT);
    /* local communicator 0: the process's Level Zero communicator (RMA window 0 lives on it) */
    if (zc_def_comm(ZC_COMM_L0, "L0", ZC_NO_ID, NULL, 0, NULL, 0, "l0", 2) != 0) return -1;
    zc_win_init();
    return 0;
}

static bool late_started; /* started in MPI_Init to take part in the job's archive (ZECOLL_ENABLE=0 here) */

static void core_finalize(void) {
    zc_win_finalize();
    if (!zc_knobs.SUMMARY || zc_knobs.LOG_LEVEL == 0 || late_started) return;
    uint64_t events = 0, clamped = 0, dropped = zc_loc_lost_count(), threads = 0, streams = 0;
    for (struct zc_loc *l = zc_loc_list(); l; l = l->next) {
        events += l->nevents;
        clamped += l->nclamped;
        dropped += l->ndropped;
        if (l->kind == ZC_LOC_THREAD) threads++;
        else streams++;
    }
    if (!zc_otf2_path()[0] && !events && !dropped) return; /* nothing recorded, nothing to say */
    char line[PATH_MAX + 512], win[128];
    zc_win_describe(win, sizeof(win));
    int n = snprintf(line, sizeof(line),
                     "zecoll: rank %u: %llu events on %llu thread(s) and %llu device stream(s) -> %s "
                     "(%llu clamped, %llu dropped, %llu internal errors, %llu write errors%s%s%s)",
                     zc_job.rank, (unsigned long long)events, (unsigned long long)threads, (unsigned long long)streams,
                     zc_on(ZC_F_TRACE) && zc_otf2_path()[0] ? zc_otf2_path() : "(no archive)", (unsigned long long)clamped,
                     (unsigned long long)dropped, (unsigned long long)atomic_load(&zc_failures),
                     (unsigned long long)zc_otf2_write_errors(),
                     zc_otf2_io_damaged() ? ": the archive ends where writing failed" : "", win[0] ? "; " : "", win);
    if (n > 0) zc_log_write(line, sizeof(line), (size_t)n);
}

const struct zc_subsystem zc_core_subsystem = {.name = "core", .init = core_init, .finalize = core_finalize};

static int otf2_sub_init(void) { return zc_otf2_init(); }
static void otf2_sub_finalize(void) { zc_otf2_finalize(); }
const struct zc_subsystem zc_otf2_subsystem = {.name = "otf2", .init = otf2_sub_init, .post_mpi_init = zc_otf2_start_job,
                                                .finalize = otf2_sub_finalize, .fork_child = zc_otf2_io_fork_child};

int zc_post_mpi_init(void) {
    int rc = 0;
    for (size_t i = 0; i < NSUB; i++)
        if (subsystems[i]->post_mpi_init && subsystems[i]->post_mpi_init() != 0) rc = -1;
    return rc;
}

void zc_thread_exit_hooks(void) {
    for (size_t i = 0; i < NSUB; i++)
        if (subsystems[i]->thread_exit) subsystems[i]->thread_exit();
}

/* ---------------------------------------------------------------- finalize */
/* Every layer's pre_finalize and finalize, once; zc_exit.c's zc_finalize decides who runs it. */
void zc_lifecycle_finalize(void) {
    if (!zc_active()) return;
    for (size_t i = 0; i < NSUB; i++)
        if (subsystems[i]->pre_finalize) subsystems[i]->pre_finalize();
    atomic_fetch_add(&zc_progress, 1);
    /* events after this point (other threads still running) are not recorded */
    zc_win_set_active(false);
    atomic_store_explicit(&zc_is_active, false, memory_order_release);
    for (size_t i = NSUB; i-- > 0;) {
        if (subsystems[i]->finalize) subsystems[i]->finalize();
        atomic_fetch_add(&zc_progress, 1);
    }
}

/* ---------------------------------------------------------------- fork */
/* The child holds a copy of the parent's buffers; writing them would duplicate the parent's
 * events, so the child runs untraced (an exec'd program starts its own collector). */
static void atfork_child(void) {
    zc_win_set_active(false);
    zc_win_fork_child();
    atomic_store(&zc_is_active, false);
    zc_exit_fork_child();
    zc_loc_fork_child();
    for (size_t i = 0; i < NSUB; i++)
        if (subsystems[i]->fork_child) subsystems[i]->fork_child();
}

/* ---------------------------------------------------------------- constructor */
__attribute__((constructor)) static void zc_constructor(void) {
    static atomic_bool done;
    if (atomic_exchange(&done, true)) return;
    start_ns = zc_now();
    zc_knobs_load();
    if (!zc_knobs.ENABLE) return;
    set_clock_skew();
    zc_clock_init();
    for (size_t i = 0; i < NSUB; i++) {
        if (subsystems[i]->init && subsystems[i]->init() != 0) {
            ZC_WARN("layer %s did not initialise; collection is off", subsystems[i]->name);
            return;
        }
    }
    atomic_store_explicit(&zc_is_active, true, memory_order_release);
    zc_win_set_active(true);
    zc_exit_init(); /* atexit, signals (zc_exit.c) */
    pthread_atfork(NULL, NULL, atfork_child);
}

/* An MPI job in which some ranks collect and this one does not (ZECOLL_ENABLE=0 here, or its
 * start failed): the job's archive is written collectively, so this rank takes part in it as an
 * unselected rank (docs/config.md): the core and the writer start here, in MPI_Init, and record
 * nothing. Level Zero stays untouched (its driver was never redirected). 0 = started. */
int zc_start_unselected(void) {
    if (zc_active()) return 0;
    zc_knobs.SUMMARY = false;
    late_started = true;
    set_clock_skew();
    zc_clock_init();
    zc_win_unselected();
    if (core_init() != 0 || zc_otf2_init() != 0) return -1;
    atomic_store_explicit(&zc_is_active, true, memory_order_release);
    zc_win_set_active(true);
    zc_exit_init(); /* atexit, signals (zc_exit.c) */
    pthread_atfork(NULL, NULL, atfork_child);
    return 0;
}
