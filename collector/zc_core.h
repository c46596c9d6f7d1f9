/* SPDX-License-Identifier: MIT */
/* zecoll core internals: knobs, logging and failure policy, host clock, threads, locations and
 * their event buffers, definitions, the OTF2 writer and the lifecycle. Everything here is hidden
 * (-fvisibility=hidden); only interposed symbols and the documented API leave libzecoll.so. */
#ifndef ZC_CORE_H
#define ZC_CORE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

/* ---------------------------------------------------------------- knobs */
struct zc_knobs {
#define ZC_KNOB_bool bool
#define ZC_KNOB_uint uint64_t
#define ZC_KNOB_size uint64_t
#define ZC_KNOB_string const char *
#define ZC_KNOB(name, type, def, doc) ZC_KNOB_##type name;
#include "zc_knobs.def"
#undef ZC_KNOB
};
extern struct zc_knobs zc_knobs;

/* Reads every ZECOLL_* variable; a bad value is reported (naming the variable) and the default
 * kept. Returns the number of bad values. */
int zc_knobs_load(void);
/* One "NAME=value" line per knob into buf (for the trace's effective-configuration record). */
size_t zc_knobs_format(char *buf, size_t size);

/* ---------------------------------------------------------------- logging and failures */
enum { ZC_LOG_QUIET = 0, ZC_LOG_WARN = 1, ZC_LOG_INFO = 2, ZC_LOG_DEBUG = 3 };

void zc_log(int level, const char *func, int line, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
#define ZC_WARN(...) zc_log(ZC_LOG_WARN, __func__, __LINE__, __VA_ARGS__)
#define ZC_INFO(...) zc_log(ZC_LOG_INFO, __func__, __LINE__, __VA_ARGS__)
#define ZC_DEBUG(...) zc_log(ZC_LOG_DEBUG, __func__, __LINE__, __VA_ARGS__)

/* Features that an internal failure switches off, each on its own. */
enum zc_feature {
    ZC_F_TRACE,         /* the archive: nothing is written */
    ZC_F_DEVICE_TIMING, /* injection stops; the app runs on untimed */
    ZC_F_API_TIMING,
    ZC_F_MPI,
    ZC_F_COUNT
};
extern atomic_bool zc_feature_on[ZC_F_COUNT];
extern atomic_uint_fast64_t zc_failures;

/* Internal failure: logs the first one per feature, counts all, turns the feature off. With
 * ZECOLL_STRICT=1 it aborts instead, so tests notice. */
void zc_fail(enum zc_feature f, const char *func, int line, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
#define ZC_FAIL(f, ...) zc_fail(f, __func__, __LINE__, __VA_ARGS__)

static inline bool zc_on(enum zc_feature f) {
    return atomic_load_explicit(&zc_feature_on[f], memory_order_relaxed);
}

/* ---------------------------------------------------------------- host clock */
/* CLOCK_MONOTONIC_RAW is the host side of zeDeviceGetGlobalTimestamps, so device times map onto
 * the same axis. */
static inline uint64_t zc_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ---------------------------------------------------------------- events and locations */
enum zc_ev_type {
    ZC_EV_ENTER = 1,   /* a = region */
    ZC_EV_LEAVE,       /* a = region */
    ZC_EV_PARAM_U64,   /* a = parameter, b = value */
    ZC_EV_RMA_GET,     /* a = window, b = bytes, c = remote << 32 | matching id (low 32 bits) */
    ZC_EV_RMA_PUT,     /* same fields */
    ZC_EV_RMA_COMPLETE, /* a = window, c = matching id */
    ZC_EV_BUFFER_FLUSH, /* b = stop time */
};

struct zc_ev {
    uint64_t ts;
    uint32_t type;
    uint32_t a;
    uint64_t b, c;
};

enum zc_loc_kind { ZC_LOC_THREAD, ZC_LOC_DEVICE };

struct zc_loc {
    uint64_t id;           /* OTF2 location id */
    enum zc_loc_kind kind;
    uint32_t comm_rank;    /* index in the process's L0 communicator (RMA remote) */
    char name[64];
    uint32_t group;        /* location-group index, see zc_defs_* */
    atomic_flag busy;      /* held while appending or flushing */
    struct zc_ev *buf;
    size_t n, cap;
    uint64_t last_ts;      /* clamp: OTF2 drops events earlier than the previous one */
    uint64_t nevents, nclamped, ndropped;
    uint64_t otf2_events;  /* as the writer counted them, read before it closes */
    uint64_t rma_match;    /* matching ids of RMA operations on this location */
    void *writer;          /* OTF2_EvtWriter */
    struct zc_loc *next;
};

/* Creates and registers a location; never freed (the archive needs all of them at the end). */
struct zc_loc *zc_loc_new(enum zc_loc_kind kind, uint32_t group, const char *name);
/* The same with a given buffer size in events (0 = ZECOLL_BUFFER_EVENTS). */
struct zc_loc *zc_loc_new_cap(enum zc_loc_kind kind, uint32_t group, const char *name, size_t cap);
/* Appends n events; flushes the buffer to the archive first if it is full. The caller owns loc
 * for the duration (zc_loc_lock) unless it is the owning thread's own location. */
void zc_loc_put(struct zc_loc *loc, const struct zc_ev *ev, size_t n);
static inline void zc_loc_lock(struct zc_loc *l) {
    while (atomic_flag_test_and_set_explicit(&l->busy, memory_order_acquire)) {
    }
}
static inline void zc_loc_unlock(struct zc_loc *l) { atomic_flag_clear_explicit(&l->busy, memory_order_release); }
/* Flushes every location (at finalize). */
void zc_loc_flush_all(void);
/* Flushes the calling thread's buffer if it is at least half full: called where the app waits
 * anyway (synchronisation), so the conversion to OTF2 stays off the hot path. */
void zc_loc_flush_own_if_half(void);
struct zc_loc *zc_loc_list(void);

/* ---------------------------------------------------------------- threads */
struct zc_thread {
    uint32_t index;
    struct zc_loc *loc;
    uint64_t callsites; /* per-thread callsite counter */
};
/* The calling thread's record, registering it on first use. NULL while the collector is off or
 * when registration failed. */
struct zc_thread *zc_thread_get(void);

/* ---------------------------------------------------------------- definitions */
/* Local definitions, unique per process; ids are dense from 0 in creation order. Thread safe. */
enum zc_region_role { ZC_ROLE_FUNCTION, ZC_ROLE_WRAPPER, ZC_ROLE_DATA_TRANSFER, ZC_ROLE_ALLOCATE,
                      ZC_ROLE_DEALLOCATE, ZC_ROLE_BARRIER, ZC_ROLE_ARTIFICIAL };
enum zc_paradigm { ZC_PARADIGM_L0, ZC_PARADIGM_MPI, ZC_PARADIGM_MEASUREMENT };

uint32_t zc_def_string(const char *s);
uint32_t zc_def_region(const char *name, enum zc_region_role role, enum zc_paradigm paradigm);

/* Well-known definitions made at init. */
extern uint32_t zc_param_callsite; /* UINT64 parameter "callsite id" */
extern uint32_t zc_region_flush;   /* "zecoll buffer flush" */

/* Accelerator topology, reported by the Level Zero layer. */
uint32_t zc_def_device(uint32_t index, const char *name, const char *uuid_hex);
uint32_t zc_def_accel_group(uint32_t device_def, uint32_t context_index);

/* ---------------------------------------------------------------- OTF2 writer */
int zc_otf2_init(void);
/* Writes a full buffer of loc to its event writer (called with loc held). */
void zc_otf2_write(struct zc_loc *loc, const struct zc_ev *ev, size_t n);
/* Closes the archive: flush everything, write definitions. */
void zc_otf2_finalize(void);
const char *zc_otf2_path(void);

/* ---------------------------------------------------------------- lifecycle */
/* One entry per layer; called in table order (finalize in reverse). */
struct zc_subsystem {
    const char *name;
    int (*init)(void);          /* constructor; non-zero = layer off */
    void (*pre_finalize)(void); /* app still intact: drain device work */
    void (*finalize)(void);     /* write out */
    void (*fork_child)(void);   /* in the child after fork() */
};
extern const struct zc_subsystem zc_core_subsystem, zc_ze_subsystem, zc_otf2_subsystem;

bool zc_active(void);   /* initialised, enabled and not yet finalized */
uint64_t zc_start_time(void);
uint32_t zc_rank(void);
void zc_finalize(void); /* idempotent */

#endif
