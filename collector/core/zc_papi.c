/* SPDX-License-Identifier: MIT */
/* PAPI counters per host thread (zc_papi.h). The process's first sample loads libpapi with
 * dlopen (papi.library, default the one zecoll was built with; Debian's libpapi-dev provides the
 * types), initialises it for threads and probes the configured events one by one in a scratch
 * event set: an unknown name, an event this host cannot count, or one that cannot be counted
 * together with those before it is left out, and the launcher's rank 0 names every event left
 * out in one warning, with PAPI's reason where the event's component is disabled here
 * (zc_papi_why.h) (once per job, like the configuration's messages; rank 0 also says at close
 * which ranks counted a different set, zc_unify.c). Each thread then gets its own event set when
 * it first samples: PAPI_register_thread, the events that passed the probe, PAPI_start; the
 * counts are the thread's own (PAPI_GRN_THR, PAPI's default) and accumulate from that start.
 * A thread's set is stopped and destroyed when it exits.
 *
 * Not loading PAPI is not a failure (no events configured, library missing, nothing countable):
 * the collector runs on without counters, after at most the one warning. A PAPI error once
 * counting runs (an event set that cannot be created or started on a thread, a failed read) is
 * an internal failure: logged once, counted, PAPI switched off (ZECOLL_STRICT=1: abort). */
#include "zc_papi.h"

#include "zc_defs.h"
#include "zc_fd.h"
#include "zc_knobs.h"
#include "zc_launcher.h"
#include "zc_log.h"

#include <dlfcn.h>
#include <otf2/OTF2_GeneralDefinitions.h>
#include <otf2/OTF2_Definitions.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if ZC_HAVE_PAPI
#include <papi.h>

#include "zc_papi_why.h"

#ifndef ZC_PAPI_SONAME
#define ZC_PAPI_SONAME "libpapi.so"
#endif

struct papi_fns {
    int (*library_init)(int);
    int (*thread_init)(unsigned long (*)(void));
    int (*register_thread)(void);
    int (*unregister_thread)(void);
    int (*create_eventset)(int *);
    int (*add_event)(int, int);
    int (*start)(int);
    int (*stop)(int, long long *);
    int (*read)(int, long long *);
    int (*cleanup_eventset)(int);
    int (*destroy_eventset)(int *);
    int (*event_name_to_code)(const char *, int *);
    int (*get_event_info)(int, PAPI_event_info_t *);
    char *(*strerror)(int);
    struct zc_papi_why why; /* what is disabled here, for the warning */
};

static struct {
    pthread_once_t once;
    struct papi_fns f;
    uint32_t n;                          /* events counted */
    int codes[ZC_PAPI_MAX_EVENTS];
    uint8_t types[ZC_PAPI_MAX_EVENTS];   /* OTF2_Type per value */
    bool types_set;
    pthread_key_t key;
} P = {.once = PTHREAD_ONCE_INIT};

/* A thread slot's counting (a slot serves one live thread after another, zc_loc.h): the event
 * set of the thread that holds the slot now, started on its first sample, and what the slot's
 * earlier threads counted, added to it, so a location's counters never go down. */
struct zc_papi_thread {
    int es; /* PAPI_NULL: no thread of the slot counts now */
    pthread_t owner;
    struct zc_thread *t;
    long long base[ZC_PAPI_MAX_EVENTS];
};
/* t->papi of a slot whose set could not start: nothing to read */
static struct zc_papi_thread no_set = {.es = PAPI_NULL};
static atomic_bool key_made;

static const char *perr(int rc) {
    const char *s = P.f.strerror ? P.f.strerror(rc) : NULL;
    return s ? s : "unknown PAPI error";
}

/* Not an internal failure: PAPI cannot be used here. The launcher's rank 0 says why, once. */
static void papi_unavailable(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void papi_unavailable(const char *fmt, ...) {
    atomic_store(&zc_feature_on[ZC_F_PAPI], false);
    if (!zc_job_leader()) return;
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    ZC_WARN("%s: PAPI counters are off, the run is recorded without them", msg);
}

static unsigned long thread_id(void) { return (unsigned long)pthread_self(); }

/* Stops and destroys the exiting thread's set, keeping its counts for the slot's next thread
 * (on that thread: PAPI's key destructor, or zc_papi_thread_exit before the slot is left). */
static void set_end(struct zc_papi_thread *p) {
    if (!p || p == &no_set || p->es == PAPI_NULL || !pthread_equal(p->owner, pthread_self())) return;
    long long v[ZC_PAPI_MAX_EVENTS];
    if (P.f.stop(p->es, v) == PAPI_OK)
        for (uint32_t i = 0; i < P.n; i++) p->base[i] += v[i];
    P.f.cleanup_eventset(p->es);
    P.f.destroy_eventset(&p->es);
    p->es = PAPI_NULL;
    P.f.unregister_thread();
}

static void thread_end(void *arg) { set_end(arg); }

void zc_papi_thread_exit(struct zc_thread *t) {
    if (!t->papi) return;
    set_end(t->papi);
    if (atomic_load(&key_made)) pthread_setspecific(P.key, NULL); /* done: no destructor later */
}

#define SYM(field, name)                                                                                               \
    do {                                                                                                               \
        *(void **)&P.f.field = dlsym(lib, name);                                                                       \
        if (!P.f.field) missing = name;                                                                                \
    } while (0)

/* The unit of an event: PAPI's, else ns for the perf clocks (their values are nanoseconds),
 * else "#" (a count). */
static const char *unit_of(const char *name, const PAPI_event_info_t *info) {
    if (info && info->units[0]) return info->units;
    static const char *const clocks[] = {"perf::TASK-CLOCK", "perf::CPU-CLOCK", "perf::PERF_COUNT_SW_TASK_CLOCK",
                                         "perf::PERF_COUNT_SW_CPU_CLOCK"};
    for (size_t i = 0; i < sizeof(clocks) / sizeof(clocks[0]); i++)
        if (!strncmp(name, clocks[i], strlen(clocks[i])) && (!name[strlen(clocks[i])] || name[strlen(clocks[i])] == ':'))
            return "ns";
    return "#";
}

/* Adds to msg (one warning for every event left out). */
static void left_out(char *msg, size_t cap, const char *name, const char *why) {
    size_t o = strlen(msg);
    snprintf(msg + o, cap - o, "%s'%s' (%s)", o ? ", " : "", name, why);
}

static void process_init(void) {
    const struct zc_strlist *ev = &zc_knobs.PAPI_EVENTS;
    const char *path = zc_knobs.PAPI_LIBRARY && zc_knobs.PAPI_LIBRARY[0] ? zc_knobs.PAPI_LIBRARY : ZC_PAPI_SONAME;
    /* An application that uses PAPI itself would share PAPI's state with us: its own event sets
     * could then not start on threads where ours run. It keeps PAPI to itself. */
    void *own = dlopen(path, RTLD_LAZY | RTLD_NOLOAD);
    if (own || dlsym(RTLD_DEFAULT, "PAPI_library_init")) {
        if (own) dlclose(own);
        papi_unavailable("the application uses PAPI itself (%s is loaded)", own ? path : "PAPI_library_init is defined");
        return;
    }
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        const char *e = dlerror();
        papi_unavailable("cannot load the PAPI library %s (%s; papi.library / ZECOLL_PAPI_LIBRARY)", path, e ? e : "?");
        return;
    }
    const char *missing = NULL;
    SYM(library_init, "PAPI_library_init");
    SYM(thread_init, "PAPI_thread_init");
    SYM(register_thread, "PAPI_register_thread");
    SYM(unregister_thread, "PAPI_unregister_thread");
    SYM(create_eventset, "PAPI_create_eventset");
    SYM(add_event, "PAPI_add_event");
    SYM(start, "PAPI_start");
    SYM(stop, "PAPI_stop");
    SYM(read, "PAPI_read");
    SYM(cleanup_eventset, "PAPI_cleanup_eventset");
    SYM(destroy_eventset, "PAPI_destroy_eventset");
    SYM(event_name_to_code, "PAPI_event_name_to_code");
    SYM(get_event_info, "PAPI_get_event_info");
    SYM(strerror, "PAPI_strerror");
    SYM(why.num_components, "PAPI_num_components");
    SYM(why.get_component_info, "PAPI_get_component_info");
    SYM(why.get_component_index, "PAPI_get_component_index");
    SYM(why.get_event_component, "PAPI_get_event_component");
    SYM(why.enum_cmp_event, "PAPI_enum_cmp_event");
    if (missing) {
        papi_unavailable("%s is not a PAPI library zecoll can use (no %s)", path, missing);
        return; /* the library stays loaded: unloading what we may have half-used is not safe */
    }
    int v = P.f.library_init(PAPI_VER_CURRENT);
    if (v != PAPI_VER_CURRENT) {
        if (v > 0)
            papi_unavailable("%s is PAPI %d.%d, zecoll was built for %d.%d", path, PAPI_VERSION_MAJOR(v),
                             PAPI_VERSION_MINOR(v), PAPI_VERSION_MAJOR(PAPI_VER_CURRENT), PAPI_VERSION_MINOR(PAPI_VER_CURRENT));
        else
            papi_unavailable("PAPI does not initialise (%s)", perr(v));
        return;
    }
    int rc = P.f.thread_init(thread_id);
    if (rc != PAPI_OK) {
        papi_unavailable("PAPI's thread support does not initialise (%s)", perr(rc));
        return;
    }
    /* the probe: each event alone after those that passed, so a conflict names the event */
    int es = PAPI_NULL;
    rc = P.f.create_eventset(&es);
    if (rc != PAPI_OK) {
        papi_unavailable("PAPI cannot create an event set (%s)", perr(rc));
        return;
    }
    PAPI_event_info_t *info = calloc(1, sizeof(*info));
    struct zc_def_metric m[ZC_PAPI_MAX_EVENTS];
    char msg[1024] = "", counted[512] = "";
    uint64_t comps = 0; /* the components of the events left out */
    for (uint32_t i = 0; i < ev->n; i++) {
        const char *name = ev->v[i];
        int code = 0;
        if (P.n == ZC_PAPI_MAX_EVENTS) {
            left_out(msg, sizeof(msg), name, "more than 16 events");
            continue;
        }
        if ((rc = P.f.event_name_to_code(name, &code)) != PAPI_OK) {
            char why[160];
            snprintf(why, sizeof(why), "unknown to PAPI: %s", perr(rc));
            left_out(msg, sizeof(msg), name, why);
            comps |= zc_papi_component_bit(&P.f.why, name, NULL);
            continue;
        }
        if ((rc = P.f.add_event(es, code)) != PAPI_OK) {
            char why[160];
            snprintf(why, sizeof(why), "cannot be counted here: %s", perr(rc));
            left_out(msg, sizeof(msg), name, why);
            comps |= zc_papi_component_bit(&P.f.why, name, &code);
            continue;
        }
        bool have_info = info && P.f.get_event_info(code, info) == PAPI_OK;
        const char *descr = have_info && info->long_descr[0] ? info->long_descr
                            : have_info && info->short_descr[0] ? info->short_descr
                                                                : name;
        uint8_t type = OTF2_TYPE_INT64;
        if (have_info && info->data_type == PAPI_DATATYPE_UINT64) type = OTF2_TYPE_UINT64;
        if (have_info && info->data_type == PAPI_DATATYPE_BIT64) type = OTF2_TYPE_UINT64;
        if (have_info && info->data_type == PAPI_DATATYPE_FP64) type = OTF2_TYPE_DOUBLE;
        uint32_t mode = have_info && info->value_type == PAPI_VALUETYPE_ABSOLUTE ? OTF2_METRIC_ABSOLUTE_POINT
                                                                                         : OTF2_METRIC_ACCUMULATED_START;
        m[P.n] = (struct zc_def_metric){zc_def_string(name), zc_def_string(descr), zc_def_string(unit_of(name, have_info ? info : NULL)),
                                        type, mode};
        P.types[P.n] = type;
        P.codes[P.n++] = code;
        size_t o = strlen(counted);
        snprintf(counted + o, sizeof(counted) - o, "%s%s", o ? ", " : "", name);
    }
    free(info);
    if (P.n) {
        long long vals[ZC_PAPI_MAX_EVENTS];
        rc = P.f.start(es);
        if (rc == PAPI_OK) rc = P.f.stop(es, vals);
    }
    P.f.cleanup_eventset(es);
    P.f.destroy_eventset(&es);
    /* A machine whose CPU libpfm4 does not know has perf_event disabled: every perf:: and PAPI_
     * event is then left out, and the user needs PAPI's reason and what could count instead. */
    char note[512] = "";
    if (zc_papi_why_disabled(&P.f.why, comps, note, sizeof(note)) && !P.n)
        zc_papi_why_enabled(&P.f.why, note, sizeof(note));
    if (!P.n) {
        papi_unavailable("PAPI counts none of papi.events here: %s%s", msg, note);
        return;
    }
    if (rc != PAPI_OK) {
        papi_unavailable("PAPI cannot count %s here (%s)", counted, perr(rc));
        return;
    }
    if (msg[0] && zc_job_leader()) ZC_WARN("PAPI events not counted: %s%s; counting %s", msg, note, counted);
    if (pthread_key_create(&P.key, thread_end) != 0 || !(atomic_store(&key_made, true), true) ||
        zc_def_metric_class(m, P.n) != 0) {
        ZC_FAIL(ZC_F_PAPI, "out of memory starting PAPI");
        return;
    }
    /* release: a writer that sees the types sees them complete (zc_papi_otf2_types) */
    __atomic_store_n(&P.types_set, true, __ATOMIC_RELEASE);
}

/* The calling thread's set, created and started on its first sample. */
static struct zc_papi_thread *thread_start_fds(struct zc_thread *t);
/* PAPI opens perf_event descriptors (the probe, each thread's set): never on the application's
 * closed 0-2 (zc_fd.c). */
static struct zc_papi_thread *thread_start(struct zc_thread *t) {
    struct zc_fd_guard g;
    zc_fd_guard_hold(&g);
    struct zc_papi_thread *p = thread_start_fds(t);
    zc_fd_guard_release(&g);
    return p;
}

static struct zc_papi_thread *thread_start_fds(struct zc_thread *t) {
    pthread_once(&P.once, process_init);
    if (!zc_on(ZC_F_PAPI)) return NULL;
    struct zc_papi_thread *p = t->papi; /* the slot's, with its earlier threads' counts */
    if (!p && !(p = calloc(1, sizeof(*p)))) {
        ZC_FAIL(ZC_F_PAPI, "out of memory for a thread's PAPI event set");
        return NULL;
    }
    p->es = PAPI_NULL;
    p->t = t;
    p->owner = pthread_self();
    int rc = P.f.register_thread();
    if (rc == PAPI_OK) rc = P.f.create_eventset(&p->es);
    for (uint32_t i = 0; rc == PAPI_OK && i < P.n; i++) rc = P.f.add_event(p->es, P.codes[i]);
    if (rc == PAPI_OK) rc = P.f.start(p->es);
    if (rc != PAPI_OK) {
        if (p->es != PAPI_NULL) {
            P.f.cleanup_eventset(p->es);
            P.f.destroy_eventset(&p->es);
        }
        if (p != t->papi) free(p);
        t->papi = &no_set;
        ZC_FAIL(ZC_F_PAPI, "cannot start PAPI counting on thread %u: %s", t->index, perr(rc));
        return NULL;
    }
    pthread_setspecific(P.key, p);
    t->papi = p;
    return p;
}

size_t zc_papi_read(struct zc_thread *t, struct zc_ev *rec) {
    if (!zc_on(ZC_F_PAPI)) return 0;
    struct zc_papi_thread *p = t->papi;
    if (__builtin_expect(p == &no_set, 0)) return 0;
    if (__builtin_expect(!p || p->es == PAPI_NULL, 0) && !(p = thread_start(t))) return 0;
    long long v[ZC_PAPI_MAX_EVENTS];
    int rc = P.f.read(p->es, v);
    if (__builtin_expect(rc != PAPI_OK, 0)) {
        ZC_FAIL(ZC_F_PAPI, "PAPI_read failed on thread %u: %s", t->index, perr(rc));
        return 0;
    }
    uint32_t n = P.n;
    size_t k = 0;
    for (uint32_t i = 0; i < n; i += ZC_PAPI_PER_REC, k++) {
        uint64_t w[ZC_PAPI_PER_REC] = {0, 0, 0};
        for (uint32_t j = 0; j < ZC_PAPI_PER_REC && i + j < n; j++) w[j] = (uint64_t)(p->base[i + j] + v[i + j]);
        rec[k] = (struct zc_ev){0, k ? ZC_EV_METRIC_MORE : ZC_EV_METRIC, k ? 0 : n, w[0], w[1], w[2]};
    }
    return k;
}

const uint8_t *zc_papi_otf2_types(void) { return __atomic_load_n(&P.types_set, __ATOMIC_ACQUIRE) ? P.types : NULL; }

#else /* built without libpapi-dev */
void zc_papi_thread_exit(struct zc_thread *t) { (void)t; }


size_t zc_papi_read(struct zc_thread *t, struct zc_ev *rec) {
    (void)t;
    (void)rec;
    static atomic_flag said = ATOMIC_FLAG_INIT;
    if (zc_on(ZC_F_PAPI) && !atomic_flag_test_and_set(&said)) {
        atomic_store(&zc_feature_on[ZC_F_PAPI], false);
        if (zc_job_leader()) ZC_WARN("zecoll was built without PAPI (libpapi-dev): papi.events are not counted");
    }
    return 0;
}

const uint8_t *zc_papi_otf2_types(void) { return NULL; }

#endif
