/* SPDX-License-Identifier: MIT */
/* The driver bridge: which real driver we forward to, how the loader is pointed at our driver
 * face (libzecoll_ze.so), the table getter it calls, and the per-call begin/end that records
 * every Level Zero call as a region on the calling thread. */
#include "zc_ze_internal.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ZC_EXPORT __attribute__((visibility("default")))

struct zc_ze zc_ze = {
    .lists = ZC_MAP_INIT, .queues = ZC_MAP_INIT, .kernels = ZC_MAP_INIT, .ctxs = ZC_MAP_INIT,
    .fences = ZC_MAP_INIT, .uevents = ZC_MAP_INIT, .engine_streams = ZC_MAP_INIT,
    .devs_lock = PTHREAD_MUTEX_INITIALIZER, .streams_lock = PTHREAD_MUTEX_INITIALIZER,
};

static void *real_handle;
static char real_name[PATH_MAX];
static pthread_once_t real_once = PTHREAD_ONCE_INIT;
static atomic_bool tables_seen;
static char shim_path[PATH_MAX];

/* ---------------------------------------------------------------- loader setup */
static void warn_too_late(void) {
    static atomic_bool once;
    if (!atomic_exchange(&once, true))
        ZC_WARN("Level Zero was initialised before zecoll could register its driver (a library constructor "
                "called zeInit first, or ZE_ENABLE_ALT_DRIVERS was changed): GPU activity is not traced. Run the "
                "program with `zecoll run -- <app>` or export ZE_ENABLE_ALT_DRIVERS=%s", shim_path);
}

/* Whether the loader was initialised before our constructor (a library constructor called
 * zeInit, directly or through dlsym, which the interposed zeInit below cannot see): an
 * initialised loader answers a driver count, an uninitialised one ZE_RESULT_ERROR_UNINITIALIZED.
 * Only asked if the loader is loaded already; nothing is loaded or initialised by asking. */
static atomic_bool early_zeinit; /* the interposed zeInit ran before our constructor */
static bool loader_initialised(void) {
    if (atomic_load(&early_zeinit)) return true;
    void *h = dlopen("libze_loader.so.1", RTLD_LAZY | RTLD_NOLOAD);
    if (!h) return false;
    ze_result_t (*get)(uint32_t *, ze_driver_handle_t *) =
        (ze_result_t(*)(uint32_t *, ze_driver_handle_t *))dlsym(h, "zeDriverGet");
    uint32_t n = 0;
    bool init = get && get(&n, NULL) == ZE_RESULT_SUCCESS;
    dlclose(h);
    return init;
}

/* The loader reads ZE_ENABLE_ALT_DRIVERS at the first zeInit, so this must run before the app
 * initialises Level Zero: the constructor does it; `zecoll run` and `mpirun -x` do it earlier
 * still, for apps whose own library constructors call zeInit. */
static int ze_init(void) {
    Dl_info info;
    if (!dladdr((void *)ze_init, &info) || !info.dli_fname) {
        ZC_WARN("cannot find libzecoll.so's own path; Level Zero will not be traced");
        return 0;
    }
    char dir[PATH_MAX - 32];
    snprintf(dir, sizeof(dir), "%s", info.dli_fname);
    char *slash = strrchr(dir, '/');
    if (slash) *slash = 0;
    else snprintf(dir, sizeof(dir), ".");
    snprintf(shim_path, sizeof(shim_path), "%s/libzecoll_ze.so", dir);
    if (shim_path[0] != '/') {
        char abs[PATH_MAX];
        if (realpath(shim_path, abs)) memcpy(shim_path, abs, sizeof(shim_path));
    }
    if (access(shim_path, R_OK) != 0) {
        ZC_WARN("%s is missing; Level Zero will not be traced", shim_path);
        return 0;
    }
    if (!atomic_load(&tables_seen) && loader_initialised()) warn_too_late();
    const char *alt = getenv("ZE_ENABLE_ALT_DRIVERS");
    if (alt && strstr(alt, "libzecoll_ze.so")) return 0; /* set up by the launcher or a parent */
    if (!getenv("ZECOLL_REAL_DRIVERS")) {
        setenv("ZECOLL_REAL_DRIVERS", alt ? alt : "", 1);
        zc_knobs.REAL_DRIVERS = getenv("ZECOLL_REAL_DRIVERS");
    }
    setenv("ZE_ENABLE_ALT_DRIVERS", shim_path, 1);
    return 0;
}

/* Why a library named as a driver is not one, or NULL: the Level Zero loader or one of its layers
 * (they define zeInit or zelLoaderGetVersion(s) beside their getters) or zecoll itself (which has
 * zecoll_ze_getter in its scope: libzecoll.so, or libzecoll_ze.so through its dependency).
 * Forwarding to any of them calls the loader, or us, again: recursion without end. */
static const char *not_a_driver(void *h) {
    if (dlsym(h, "zecoll_ze_getter")) return "zecoll itself";
    void *g = dlsym(h, "zeGetGlobalProcAddrTable");
    Dl_info gi;
    if (!g || !dladdr(g, &gi)) return NULL;
    static const char *const loader_only[] = {"zeInit", "zelLoaderGetVersions", "zelLoaderGetVersion"};
    for (size_t i = 0; i < sizeof(loader_only) / sizeof(loader_only[0]); i++) {
        void *p = dlsym(h, loader_only[i]);
        Dl_info pi;
        if (p && dladdr(p, &pi) && pi.dli_fbase == gi.dli_fbase) return "the Level Zero loader (or one of its layers)";
    }
    return NULL;
}

/* The first usable driver of a comma-separated list; NULL when none loads. */
static void *load_first(const char *list, bool named_by_user) {
    char buf[PATH_MAX * 2];
    snprintf(buf, sizeof(buf), "%s", list);
    char *save = NULL;
    for (char *p = strtok_r(buf, ",", &save); p; p = strtok_r(NULL, ",", &save)) {
        /* already loaded (the loader, zecoll): looked at without loading anything */
        void *h = dlopen(p, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
        if (!h) h = dlopen(p, RTLD_NOW | RTLD_LOCAL);
        if (!h) continue;
        const char *why = not_a_driver(h);
        if (why) {
            if (named_by_user)
                ZC_WARN("ZECOLL_REAL_DRIVERS: '%s' is %s, not a Level Zero driver (forwarding to it would recurse): "
                        "ignored", p, why);
            dlclose(h);
            continue;
        }
        if (dlsym(h, "zeGetGlobalProcAddrTable")) {
            snprintf(real_name, sizeof(real_name), "%s", p);
            if (strchr(list, ','))
                ZC_INFO("forwarding to %s, the first of ZECOLL_REAL_DRIVERS=%s that loads", p, list);
            return h;
        }
        dlclose(h);
    }
    return NULL;
}

#define ZC_DEFAULT_DRIVER "libze_intel_gpu.so.1" /* what the loader loads without ZE_ENABLE_ALT_DRIVERS */

static void load_real(void) {
    bool given = zc_knobs.REAL_DRIVERS && *zc_knobs.REAL_DRIVERS;
    const char *list = given ? zc_knobs.REAL_DRIVERS : ZC_DEFAULT_DRIVER;
    real_handle = load_first(list, given);
    if (!real_handle && given && strcmp(list, ZC_DEFAULT_DRIVER) != 0) {
        /* every entry was refused or failed: the default, as for any bad setting */
        real_handle = load_first(ZC_DEFAULT_DRIVER, false);
        if (real_handle) ZC_WARN("ZECOLL_REAL_DRIVERS=%s: no driver among them; using %s", list, ZC_DEFAULT_DRIVER);
    }
    /* the same outcome as without zecoll: no driver, zeInit reports it */
    if (!real_handle) ZC_INFO("no Level Zero driver to forward to (tried %s)", list);
}

/* ---------------------------------------------------------------- what the driver offers */
struct zc_ze_caps zc_ze_caps;
static char caps_missing[512]; /* the entries behind a reduced capability, by API name */

static void missing(bool *cap, const void *fn, const char *api) {
    if (fn) return;
    *cap = false;
    size_t n = strlen(caps_missing);
    if (!strstr(caps_missing, api) && n + strlen(api) + 3 < sizeof(caps_missing))
        snprintf(caps_missing + n, sizeof(caps_missing) - n, "%s%s", n ? ", " : "", api);
}
#define NEED(cap, tbl, mem, api) missing(&c.cap, (const void *)zc_ze_real.tbl.mem, api)

/* Each capability and the entries it needs (every entry the collector calls is in
 * tests/collector/null_matrix.py's matrix; entries not named here are only used where present:
 * destroy/free calls, kernel names, host synchronisation, driver and device enumeration). */
void zc_ze_caps_update(void) {
    struct zc_ze_caps c = {.timing = true, .host_read = true, .barrier = true, .signal = true, .helpers = true,
                           .harvest = true, .groups = true};
    caps_missing[0] = 0;
    NEED(timing, ze_event_pool, pfnCreate, "zeEventPoolCreate");
    NEED(timing, ze_event, pfnCreate, "zeEventCreate");
    NEED(timing, ze_event, pfnHostReset, "zeEventHostReset");
    NEED(timing, ze_event, pfnQueryStatus, "zeEventQueryStatus");
    NEED(timing, ze_device, pfnGetProperties, "zeDeviceGetProperties");
    if (c.timing) {
        NEED(host_read, ze_event, pfnQueryKernelTimestamp, "zeEventQueryKernelTimestamp");
        /* re-signalling an app event: a barrier waiting on our event; a signal appended after the
         * operation follows it only where commands run in order (in-order lists, copy engines) */
        NEED(barrier, ze_command_list, pfnAppendBarrier, "zeCommandListAppendBarrier");
        NEED(signal, ze_command_list, pfnAppendSignalEvent, "zeCommandListAppendSignalEvent");
        NEED(helpers, ze_command_list, pfnCreate, "zeCommandListCreate");
        NEED(helpers, ze_command_list, pfnClose, "zeCommandListClose");
        NEED(helpers, ze_command_list, pfnAppendWaitOnEvents, "zeCommandListAppendWaitOnEvents");
        NEED(helpers, ze_command_list, pfnAppendEventReset, "zeCommandListAppendEventReset");
        NEED(helpers, ze_command_list, pfnAppendSignalEvent, "zeCommandListAppendSignalEvent");
        NEED(helpers, ze_event, pfnHostSignal, "zeEventHostSignal");
        c.harvest = c.helpers;
        NEED(harvest, ze_command_list, pfnAppendQueryKernelTimestamps, "zeCommandListAppendQueryKernelTimestamps");
        NEED(harvest, ze_mem, pfnAllocHost, "zeMemAllocHost");
        /* without them a copy-only engine is not known, and a device-side timestamp query on one
         * aborts the real driver: every regular list is read back from the host */
        NEED(groups, ze_device, pfnGetCommandQueueGroupProperties, "zeDeviceGetCommandQueueGroupProperties");
        if (!c.groups) c.harvest = false;
        /* a harvest list of copy executions runs on a queue of ours, synchronised before it goes */
        c.copy_harvest = c.harvest;
        NEED(copy_harvest, ze_command_queue, pfnCreate, "zeCommandQueueCreate");
        NEED(copy_harvest, ze_command_queue, pfnExecuteCommandLists, "zeCommandQueueExecuteCommandLists");
        NEED(copy_harvest, ze_command_queue, pfnSynchronize, "zeCommandQueueSynchronize");
        NEED(copy_harvest, ze_command_queue, pfnDestroy, "zeCommandQueueDestroy");
    } else {
        c.host_read = c.barrier = c.signal = c.helpers = c.harvest = c.copy_harvest = false;
    }
    if (!zc_ze_real.ze_device.pfnGetGlobalTimestamps) {
        size_t n = strlen(caps_missing);
        snprintf(caps_missing + n, sizeof(caps_missing) - n, "%szeDeviceGetGlobalTimestamps", n ? ", " : "");
    }
    zc_ze_caps = c;
}

void zc_ze_caps_announce(void) {
    static atomic_bool said;
    if (!caps_missing[0] || atomic_exchange(&said, true)) return;
    const struct zc_ze_caps *c = &zc_ze_caps;
    char what[640];
    size_t n = 0;
#define SAY(...) n += (size_t)snprintf(what + n, n < sizeof(what) ? sizeof(what) - n : 0, __VA_ARGS__)
    if (!c->timing) {
        SAY("GPU operations are not timed (Level Zero calls are still recorded)");
    } else {
        if (!c->host_read) SAY("operations on immediate command lists are not timed; ");
        if (c->helpers && !c->harvest)
            SAY("regular command lists are read back from the host and a resubmission waits for the previous execution; ");
        if (c->harvest && !c->copy_harvest)
            SAY("executions of copy-only command lists are read back from the host (a resubmission waits for the "
                "previous one); ");
        if (c->host_read && !c->helpers)
            SAY("regular command lists are read back from the host between executions (a resubmission waits) and "
                "their operations that signal an application event are not timed; ");
        if (!c->host_read && !c->harvest) SAY("operations on regular command lists are not timed; ");
        if (!c->barrier && !c->signal) SAY("operations that signal an application event are not timed; ");
        else if (!c->barrier)
            SAY("on out-of-order lists, operations that signal an application event are not timed; ");
        if (!zc_ze_real.ze_device.pfnGetGlobalTimestamps)
            SAY("device times are placed from host observations (their error bound is printed at exit); ");
        if (n >= 2 && n < sizeof(what)) what[n -= 2] = 0; /* the last "; " */
    }
#undef SAY
    int level = zc_job_leader() ? ZC_LOG_WARN : ZC_LOG_INFO;
    zc_log(level, __func__, __LINE__, "the Level Zero driver lacks %s: %s (a driver feature, not an error)", caps_missing,
           what);
}

/* Called by libzecoll_ze.so's exported getters. The real driver fills the loader's table first
 * (so entries newer than our headers stay intact), then known entries are wrapped. */
ZC_EXPORT ze_result_t zecoll_ze_getter(int table, ze_api_version_t version, void *ddi) {
    pthread_once(&real_once, load_real);
    if (!real_handle) return ZE_RESULT_ERROR_UNINITIALIZED;
    if (table < 0 || table >= ZC_ZE_TABLE_COUNT || !ddi) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    typedef ze_result_t (*getter_t)(ze_api_version_t, void *);
    getter_t g = (getter_t)dlsym(real_handle, zc_ze_getter_names[table]);
    if (!g) return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
    ze_result_t r = g(version, ddi);
    if (r != ZE_RESULT_SUCCESS) return r;
    /* a table older than ours is smaller than the struct we know: leave it alone */
    if (version < ZE_API_VERSION_CURRENT) {
        static atomic_bool once;
        if (!atomic_exchange(&once, true))
            ZC_WARN("the loader asks for Level Zero API %u.%u, older than zecoll's %u.%u: calls are not traced",
                    ZE_MAJOR_VERSION(version), ZE_MINOR_VERSION(version), ZE_MAJOR_VERSION(ZE_API_VERSION_CURRENT),
                    ZE_MINOR_VERSION(ZE_API_VERSION_CURRENT));
        return r;
    }
    zc_ze_wrap_table((enum zc_ze_table)table, ddi);
    zc_ze_caps_update();
    atomic_store(&tables_seen, true);
    zc_ze.ready = true;
    return r;
}

/* Interposed only to explain a silent failure: if the app initialised Level Zero before
 * libzecoll.so's constructor ran (from its own library constructor), the loader never loaded
 * our driver face. */
ZC_EXPORT ze_result_t zeInit(ze_init_flags_t flags) {
    static ze_result_t (*next)(ze_init_flags_t);
    if (!next) next = (ze_result_t(*)(ze_init_flags_t))dlsym(RTLD_NEXT, "zeInit");
    if (!next) return ZE_RESULT_ERROR_UNINITIALIZED;
    ze_result_t r = next(flags);
    if (r == ZE_RESULT_SUCCESS && !atomic_load(&tables_seen)) {
        if (zc_active()) warn_too_late();
        else atomic_store(&early_zeinit, true); /* before our constructor: it warns */
    }
    return r;
}

/* ---------------------------------------------------------------- calls */
uint32_t zc_ze_api_region_cache[ZC_ZE_API_COUNT];

uint32_t zc_ze_api_region(uint32_t api) {
    uint32_t r = __atomic_load_n(&zc_ze_api_region_cache[api], __ATOMIC_RELAXED);
    if (r) return r - 1;
    const char *n = zc_ze_api_names[api];
    enum zc_region_role role = ZC_ROLE_FUNCTION;
    if (strstr(n, "MemoryCopy") || strstr(n, "ImageCopy")) role = ZC_ROLE_DATA_TRANSFER;
    else if (strstr(n, "MemAlloc")) role = ZC_ROLE_ALLOCATE;
    else if (strstr(n, "MemFree")) role = ZC_ROLE_DEALLOCATE;
    else if (strstr(n, "Launch")) role = ZC_ROLE_WRAPPER;
    r = zc_def_region(n, role, ZC_PARADIGM_L0);
    __atomic_store_n(&zc_ze_api_region_cache[api], r + 1, __ATOMIC_RELAXED);
    return r;
}

/* The thread's first call while recording: registration. */
bool zc_ze_call_begin_slow(struct zc_ze_call *c, uint32_t api) {
    if (!zc_thread_get()) return false;
    return zc_ze_call_begin_open(c, api);
}

atomic_bool zc_ze_uevents_any;
atomic_uint_fast64_t zc_ze_tmpl_lists;

/* A closed call whose launch opened a kernel window: from here on it is recorded like any. */
bool zc_ze_call_reopen(struct zc_ze_call *c) {
    struct zc_thread *t = zc_thread_get();
    if (!t) return false;
    c->t = t;
    c->t0 = zc_on(ZC_F_API_TIMING) ? zc_tick() : 0;
    return true;
}

/* Recording is off (a window closed, an unselected rank) or the collector is not active: the
 * hooks of this API run for bookkeeping only (c->t NULL), or not at all (false). Nothing is
 * injected, no call is recorded, the thread is not registered. */
bool zc_ze_call_closed(struct zc_ze_call *c, uint32_t api) {
    if (!zc_active()) {
        /* after finalize (or in a forked child) lists we timed still carry our events: their
         * executions keep getting the helper lists that keep the app's events correct */
        if (api != ZC_ZE_zeCommandQueueExecuteCommandLists || !zc_ze.ready) return false;
    } else {
        switch (zc_ze_closed_policy[api]) {
        case ZC_ZE_CLOSED_ALWAYS: break;
        case ZC_ZE_CLOSED_UEVENTS:
            if (!atomic_load_explicit(&zc_ze_uevents_any, memory_order_relaxed)) return false;
            break;
        case ZC_ZE_CLOSED_LAUNCH:
            if (!zc_win_kernel_windows) return false;
            break;
        case ZC_ZE_CLOSED_EXECUTE:
            if (!atomic_load_explicit(&zc_ze_tmpl_lists, memory_order_relaxed) || !zc_ze.ready) return false;
            break;
        case ZC_ZE_CLOSED_SYNC:
            if (zc_knobs.DRAIN_INTERVAL_US) return false;
            break;
        default: return false;
        }
    }
    memset(c, 0, sizeof(*c)); /* t = NULL: closed */
    c->api = api;
    return true;
}

/* The region not defined yet, or the buffer full. */
void zc_ze_call_end_slow(struct zc_ze_call *c, uint64_t t1) {
    uint32_t region = zc_ze_api_region(c->api);
    struct zc_ev ev = {c->t0, ZC_EV_CALL, region, t1, c->callsite, 0};
    struct zc_loc *l = c->t->loc;
    if (zc_own_begin(l)) zc_own_put(l, &ev, 1);
    zc_own_end(l);
}

/* ---------------------------------------------------------------- PAPI */
/* Decided when the tables are wrapped (zeInit): events configured and PAPI not found unusable or
 * failed yet; a later failure is seen by zc_papi_read, which then reads nothing. */
bool zc_ze_papi_wraps(bool launch) { return zc_on(ZC_F_PAPI) && (!launch || zc_knobs.PAPI_AROUND_LAUNCHES); }

void zc_ze_papi_enter(struct zc_ze_pcall *p) {
    p->k = 0;
    /* no Enter time: the call is not recorded as a region (API timing off, or not recording) */
    if (!p->c.t || !p->c.t0) return;
    p->k = zc_papi_read(p->c.t, p->m);
}

void zc_ze_papi_leave(struct zc_ze_pcall *p) {
    struct zc_ze_call *c = &p->c;
    if (!p->k || !c->t0 || !zc_on(ZC_F_API_TIMING)) return;
    struct zc_ev ev[2 * ZC_PAPI_MAX_RECS + 1];
    size_t k0 = p->k, k1 = zc_papi_read(c->t, ev + k0 + 1); /* the Leave's counters, inside the region */
    uint64_t t1 = zc_tick();
    memcpy(ev, p->m, k0 * sizeof(*ev));
    zc_papi_stamp(ev, k0, c->t0);
    /* the Leave's Metric is an event inside the call: written between its Enter and its Leave */
    ev[k0] = (struct zc_ev){c->t0, ZC_EV_CALL, zc_ze_api_region(c->api), t1, c->callsite, k1};
    zc_papi_stamp(ev + k0 + 1, k1, t1);
    struct zc_loc *l = c->t->loc;
    if (zc_own_begin(l)) zc_own_put(l, ev, k0 + 1 + k1);
    zc_own_end(l);
    c->t0 = 0; /* written: zc_ze_call_end adds nothing */
}

/* ---------------------------------------------------------------- subsystem */
static void ze_pre_finalize(void) {
    if (zc_ze.ready) zc_ze_finalize();
}

/* After fork the child must not touch the parent's in-flight GPU bookkeeping (and has no
 * drainer thread: fork copies only the calling thread). */
static void ze_fork_child(void) { zc_ze.ready = false; }

const struct zc_subsystem zc_ze_subsystem = {.name = "level-zero", .init = ze_init, .pre_finalize = ze_pre_finalize,
                                              .fork_child = ze_fork_child, .thread_exit = zc_ze_thread_exit};
