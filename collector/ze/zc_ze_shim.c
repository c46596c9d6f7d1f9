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
    const char *alt = getenv("ZE_ENABLE_ALT_DRIVERS");
    if (alt && strstr(alt, "libzecoll_ze.so")) return 0; /* set up by the launcher or a parent */
    if (!getenv("ZECOLL_REAL_DRIVERS")) {
        setenv("ZECOLL_REAL_DRIVERS", alt ? alt : "", 1);
        zc_knobs.REAL_DRIVERS = getenv("ZECOLL_REAL_DRIVERS");
    }
    setenv("ZE_ENABLE_ALT_DRIVERS", shim_path, 1);
    return 0;
}

static void load_real(void) {
    const char *list = zc_knobs.REAL_DRIVERS && *zc_knobs.REAL_DRIVERS ? zc_knobs.REAL_DRIVERS : "libze_intel_gpu.so.1";
    char buf[PATH_MAX * 2];
    snprintf(buf, sizeof(buf), "%s", list);
    char *save = NULL;
    for (char *p = strtok_r(buf, ",", &save); p; p = strtok_r(NULL, ",", &save)) {
        if (strstr(p, "libzecoll_ze.so")) continue; /* never forward to ourselves */
        void *h = dlopen(p, RTLD_NOW | RTLD_LOCAL);
        if (h && dlsym(h, "zeGetGlobalProcAddrTable")) {
            real_handle = h;
            snprintf(real_name, sizeof(real_name), "%s", p);
            if (strchr(list, ','))
                ZC_INFO("forwarding to %s, the first of ZECOLL_REAL_DRIVERS=%s that loads", p, list);
            return;
        }
        if (h) dlclose(h);
    }
    /* the same outcome as without zecoll: no driver, zeInit reports it */
    ZC_INFO("no Level Zero driver to forward to (tried %s)", list);
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
    if (r == ZE_RESULT_SUCCESS && zc_active() && !atomic_load(&tables_seen)) {
        static atomic_bool once;
        if (!atomic_exchange(&once, true))
            ZC_WARN("Level Zero was initialised before zecoll could register its driver (a library constructor "
                    "called zeInit first, or ZE_ENABLE_ALT_DRIVERS was changed): GPU activity is not traced. Run the "
                    "program with `zecoll run -- <app>` or export ZE_ENABLE_ALT_DRIVERS=%s", shim_path);
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

/* The thread's first call (registration), or the collector is not active. */
bool zc_ze_call_begin_slow(struct zc_ze_call *c, uint32_t api) {
    if (!zc_active()) {
        /* after finalize (or in a forked child) lists we timed still carry our events: their
         * executions keep getting the helper lists that keep the app's events correct */
        if (api != ZC_ZE_zeCommandQueueExecuteCommandLists || !zc_ze.ready) return false;
        memset(c, 0, sizeof(*c));
        c->api = api;
        return true;
    }
    if (!zc_thread_get()) return false;
    return zc_ze_call_begin(c, api);
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

const struct zc_subsystem zc_ze_subsystem = {.name = "level-zero", .init = ze_init, .pre_finalize = ze_pre_finalize, .fork_child = ze_fork_child};
