/* SPDX-License-Identifier: MIT */
/* The driver bridge, the top of the Level Zero layer: which real driver we forward to, how the
 * loader is pointed at our driver face (libzecoll_ze.so), the table getter it calls, and the
 * layer's place in the collector's lifecycle (init, finalize, fork, thread exit). */
#include "zc_ze_call.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ZC_EXPORT __attribute__((visibility("default")))

static void *real_handle;
static char real_name[PATH_MAX];
static pthread_once_t real_once = PTHREAD_ONCE_INIT;
static atomic_bool tables_seen;
static char shim_path[PATH_MAX];
/* The drivers to forward to: ZECOLL_REAL_DRIVERS as loaded (the knob), unless ze_init took them
 * from ZE_ENABLE_ALT_DRIVERS before pointing that at us (the knob table stays as loaded). */
static const char *real_drivers;

static const char *real_drivers_list(void) { return real_drivers ? real_drivers : zc_knobs.REAL_DRIVERS; }

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
    /* after core_init and zc_clock_init (the constructor's order), before any call is recorded */
    zc_ze_tsc_timing = zc_on(ZC_F_API_TIMING) && zc_tsc;
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
        real_drivers = getenv("ZECOLL_REAL_DRIVERS");
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
    const char *drivers = real_drivers_list();
    bool given = drivers && *drivers;
    const char *list = given ? drivers : ZC_DEFAULT_DRIVER;
    real_handle = load_first(list, given);
    if (!real_handle && given && strcmp(list, ZC_DEFAULT_DRIVER) != 0) {
        /* every entry was refused or failed: the default, as for any bad setting */
        real_handle = load_first(ZC_DEFAULT_DRIVER, false);
        if (real_handle) ZC_WARN("ZECOLL_REAL_DRIVERS=%s: no driver among them; using %s", list, ZC_DEFAULT_DRIVER);
    }
    /* the same outcome as without zecoll: no driver, zeInit reports it */
    /* a warning where ZECOLL_REAL_DRIVERS was given: the application's zeInit fails, and the
     * variable is why */
    if (!real_handle && given)
        ZC_WARN("ZECOLL_REAL_DRIVERS=%s: no Level Zero driver to forward to (tried it and %s): the application's zeInit "
                "fails as on a machine without a driver",
                drivers, ZC_DEFAULT_DRIVER);
    else if (!real_handle) ZC_INFO("no Level Zero driver to forward to (tried %s)", list);
}


/* ---------------------------------------------------------------- table negotiation */
/* The loader's own version (zelLoaderGetVersions, which reads what the loader recorded before it
 * loaded any driver): 0 when it cannot be told. */
static unsigned loader_version(void) {
    typedef struct {
        char name[64];
        ze_api_version_t spec;
        int major, minor, patch;
    } comp_t; /* zel_component_version_t of the loader's ze_loader.h */
    /* the loader of a runtime that was dlopen()ed privately first, then the global scope */
    void *h = dlopen("libze_loader.so.1", RTLD_LAZY | RTLD_NOLOAD);
    void *where[2] = {h, RTLD_DEFAULT};
    unsigned v = 0;
    for (int w = h ? 0 : 1; w < 2 && !v; w++) {
        ze_result_t (*get)(size_t *, comp_t *) = (ze_result_t(*)(size_t *, comp_t *))dlsym(where[w], "zelLoaderGetVersions");
        comp_t c[16];
        size_t n = sizeof(c) / sizeof(c[0]);
        if (get && get(&n, c) == ZE_RESULT_SUCCESS)
            for (size_t i = 0; i < n && i < sizeof(c) / sizeof(c[0]); i++)
                if (strncmp(c[i].name, "loader", sizeof(c[i].name)) == 0)
                    v = (unsigned)c[i].major << 16 | (unsigned)c[i].minor << 8 | (unsigned)c[i].patch;
    }
    if (h) dlclose(h);
    return v;
}

/* Loaders 1.18.0 to 1.18.3 declared the CommandListExp table in another order (1.18.4 restored
 * it); they ask for spec 1.11, as 1.18.4 to 1.19 do. Wrapping by our order there would give an
 * entry another entry's wrapper: the table is forwarded untouched, unless the loader says it is
 * not one of them. */
static bool exp_order_unknown(enum zc_ze_table t, ze_api_version_t version) {
    if (t != ZC_ZE_TABLE_ze_command_list_exp || version < ZE_MAKE_VERSION(1, 10) || version > ZE_MAKE_VERSION(1, 11))
        return false;
    unsigned v = loader_version();
    bool bad = v == 0 || (v >= (1u << 16 | 18u << 8) && v <= (1u << 16 | 18u << 8 | 3u));
    if (bad) {
        static atomic_bool once;
        if (!atomic_exchange(&once, true))
            ZC_WARN("the Level Zero loader (%s) may order the command-list extension table differently (loaders "
                    "1.18.0 to 1.18.3 do): its %s calls pass through untraced", v ? "1.18.0 to 1.18.3" : "version unknown",
                    "zeCommandListImmediateAppendCommandListsExp and mutable-command-list");
    }
    return bad;
}

/* Room past zecoll's newest layout for a driver newer than zecoll that fills more than asked. */
#define ZC_ZE_SLACK 64

/* Called by libzecoll_ze.so's exported getters with the loader's version and table. The real
 * getter never gets the loader's table when it may be smaller than the newest layout zecoll knows
 * (a driver may fill entries newer than the version asked: compute-runtime fills
 * HostSynchronize, entry 28, for any version, one past a 1.4 loader's CommandList table); it
 * fills one of ours, wrapped per entry by the version that introduced it, and the loader gets
 * exactly the entries its version has. */
ZC_EXPORT ze_result_t zecoll_ze_getter(int table, ze_api_version_t version, void *ddi) {
    pthread_once(&real_once, load_real);
    if (!real_handle) return ZE_RESULT_ERROR_UNINITIALIZED;
    if (!ddi) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    zc_ze_loader_asked(version);
    typedef ze_result_t (*getter_t)(ze_api_version_t, void *);
    if (table >= ZC_ZE_TABLE_COUNT && table < ZC_ZE_TABLE_COUNT + (int)zc_ze_forward_count) {
        /* a zet/zes table newer than our headers: the driver's, untouched; none, as a driver
         * without it (the loader leaves its table empty) */
        getter_t g = (getter_t)dlsym(real_handle, zc_ze_forward_names[table - ZC_ZE_TABLE_COUNT]);
        return g ? g(version, ddi) : ZE_RESULT_SUCCESS;
    }
    if (table < 0 || table >= ZC_ZE_TABLE_COUNT) return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    enum zc_ze_table t = (enum zc_ze_table)table;
    int n = zc_ze_table_entries(t, version); /* the loader's table: -1 when only the headers' size is known */
    getter_t g = (getter_t)dlsym(real_handle, zc_ze_getter_names[t]);
    if (!g) {
        /* An optional table (an extension's, or one after our headers) the driver lacks: empty, as
         * the loader leaves it then. A core table of the headers: the driver is incomplete, and
         * the loader of those headers refuses it as it would without us. */
        static const char exp[] = "ExpProcAddrTable";
        const char *name = zc_ze_getter_names[t];
        size_t len = strlen(name);
        bool optional = (len > sizeof(exp) - 1 && strcmp(name + len - (sizeof(exp) - 1), exp) == 0) ||
                        (n >= 0 && zc_ze_table_entries(t, ZE_API_VERSION_CURRENT) == 0);
        if (!optional || version < ZE_API_VERSION_CURRENT) return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
        memset(ddi, 0, n < 0 ? zc_ze_table_size(t) : (size_t)n * sizeof(void (*)(void)));
        return ZE_RESULT_SUCCESS;
    }
    if (version < ZE_API_VERSION_CURRENT) {
        /* older than the headers: their entries may be past the loader's table */
        static atomic_bool once;
        if (!atomic_exchange(&once, true))
            ZC_WARN("the loader asks for Level Zero API %u.%u, older than zecoll's %u.%u: calls are not traced",
                    ZE_MAJOR_VERSION(version), ZE_MINOR_VERSION(version), ZE_MAJOR_VERSION(ZE_API_VERSION_CURRENT),
                    ZE_MINOR_VERSION(ZE_API_VERSION_CURRENT));
        return g(version, ddi);
    }
    if (exp_order_unknown(t, version)) return g(version, ddi);
    ze_result_t r;
    if (version > ZC_ZE_SPEC_NEWEST || (n < 0 && version > ZE_API_VERSION_CURRENT)) {
        /* a loader newer than our layout of the table: its table holds at least our layout */
        r = g(version, ddi);
        if (r != ZE_RESULT_SUCCESS) return r;
        zc_ze_wrap_table(t, ddi, version);
    } else {
        size_t ours = zc_ze_table_size(t), theirs = n < 0 ? ours : (size_t)n * sizeof(void (*)(void));
        void (*buf[128 + ZC_ZE_SLACK])(void) = {0};
        if (ours > 128 * sizeof(buf[0])) return ZE_RESULT_ERROR_UNSUPPORTED_VERSION; /* a layout past this buffer */
        memcpy(buf, ddi, theirs); /* what the loader put there stays where the driver writes nothing */
        r = g(version, buf);
        if (r != ZE_RESULT_SUCCESS) return r;
        zc_ze_wrap_table(t, buf, version);
        memcpy(ddi, buf, theirs);
    }
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

/* ---------------------------------------------------------------- subsystem */
/* Pre-finalize: wait for device work, drain, write. */
static void ze_finalize(void) {
    zc_ze_bg_stop();
    zc_ze_drain_all(true, zc_knobs.FINALIZE_TIMEOUT_MS * 1000000u);
    zc_ze_streams_flush();
    for (uint32_t i = 0; i < zc_ze.ndevs; i++) zc_ze_clock_report(zc_ze.devs[i]);
    zc_ze_untraced_finalize();
    uint64_t stalls = atomic_load(&zc_ze.stalls), untimed = atomic_load(&zc_ze.untimed);
    if (stalls || untimed || zc_ze_dropped_records())
        ZC_INFO("device timing: %llu resubmission stall(s), %llu untimed operation(s), %llu dropped record(s)",
                (unsigned long long)stalls, (unsigned long long)untimed, (unsigned long long)zc_ze_dropped_records());
}

static void ze_pre_finalize(void) {
    if (zc_ze.ready) ze_finalize();
}

/* After fork the child must not touch the parent's in-flight GPU bookkeeping (and has no
 * drainer thread: fork copies only the calling thread). */
static void ze_fork_child(void) { zc_ze.ready = false; }

const struct zc_subsystem zc_ze_subsystem = {.name = "level-zero", .init = ze_init, .pre_finalize = ze_pre_finalize,
                                              .fork_child = ze_fork_child, .thread_exit = zc_ze_thread_exit,
                                              .summary = zc_ze_summary};
