/* SPDX-License-Identifier: MIT */
/*
 * zt.h: header-only helpers for tests that run on zesim through the real Level Zero loader:
 * TAP output (also across fork()), Level Zero result checks, discovery of driver/devices/
 * context, queue-group lookup, modules from the zesim text format and from generated SPIR-V,
 * and a fork-based runner so a test can read back the ground truth (ZESIM_TRUTH) of a child
 * process after that child exited and zesim flushed it.
 *
 * Objects made by the zt_* helpers are tracked; zt_destroy()/zt_free() destroy one early,
 * zt_teardown()/zt_cleanup() destroy the rest (children of zt_fork_run() do it on return).
 *
 * Everything is static (inline), so one test program = one TAP stream. The TAP counters live in
 * a MAP_SHARED page: a child created with zt_fork_run() numbers its results in the same stream
 * and its failures count for the parent. Thread-safe: results may be reported from any thread.
 * Output: "ok N - text" / "not ok N - text", diagnostics "# ...", plan "1..N" at zt_done().
 */
#ifndef ZT_H
#define ZT_H

#include "zt_truth.h"

#include <errno.h>
#include <pthread.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <level_zero/ze_api.h>

/* Flags from spec 1.9 that the 1.8.12 headers lack; zesim honours them. */
#define ZT_CMDLIST_FLAG_IN_ORDER ((ze_command_list_flags_t)(1u << 3))
#define ZT_CMDQUEUE_FLAG_IN_ORDER ((ze_command_queue_flags_t)(1u << 1))

#define ZT_MAX_DEVICES 16
#define ZT_FOREVER UINT64_MAX

#if defined(__GNUC__)
#define ZT_PRINTF(a, b) __attribute__((format(printf, a, b)))
#define ZT_UNUSED __attribute__((unused))
#else
#define ZT_PRINTF(a, b)
#define ZT_UNUSED
#endif

/* ------------------------------------------------------------------------------------------ */
/* TAP                                                                                        */
/* ------------------------------------------------------------------------------------------ */

struct zt_tap {
    atomic_int next;    /* last test number handed out */
    atomic_int failed;  /* failed results (all processes) */
    int planned;        /* 0 = no plan given, the plan is printed by zt_done() */
};

static struct zt_tap *zt_tap_state ZT_UNUSED;

static inline struct zt_tap *zt_tap(void)
{
    /* Lazily created before any thread or child exists (first result or zt_plan()). */
    if (!zt_tap_state) {
        void *p = mmap(NULL, sizeof(struct zt_tap), PROT_READ | PROT_WRITE,
                       MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) {
            perror("zt: mmap");
            abort();
        }
        zt_tap_state = p;
    }
    return zt_tap_state;
}

/* One write(2) per line so lines of threads and children never interleave. */
static inline void zt_vemit(const char *prefix, const char *fmt, va_list ap)
{
    char buf[2048];
    int n = snprintf(buf, sizeof buf, "%s", prefix);
    if (n < 0)
        return;
    int m = vsnprintf(buf + n, sizeof buf - (size_t)n - 1, fmt, ap);
    if (m < 0)
        m = 0;
    size_t len = (size_t)n + (size_t)m;
    if (len > sizeof buf - 2)
        len = sizeof buf - 2;
    /* Multi-line diagnostics: keep every line a TAP comment. */
    if (prefix[0] == '#')
        for (size_t i = (size_t)n; i < len; i++)
            if (buf[i] == '\n')
                buf[i] = ' ';
    buf[len++] = '\n';
    fflush(stdout);
    ssize_t w = write(1, buf, len);
    (void)w;
}

/** Prints a TAP diagnostic line ("# ..."). */
static inline ZT_PRINTF(1, 2) void zt_diag(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    zt_vemit("# ", fmt, ap);
    va_end(ap);
}

/** Declares the number of results up front (optional; zt_done() checks it). */
static inline void zt_plan(int n)
{
    zt_tap()->planned = n;
    char buf[32];
    int len = snprintf(buf, sizeof buf, "1..%d\n", n);
    ssize_t w = write(1, buf, (size_t)len);
    (void)w;
}

static inline int zt_vok(int cond, const char *file, int line, const char *fmt, va_list ap)
{
    struct zt_tap *t = zt_tap();
    int n = atomic_fetch_add(&t->next, 1) + 1;
    char prefix[48];
    snprintf(prefix, sizeof prefix, "%sok %d - ", cond ? "" : "not ", n);
    zt_vemit(prefix, fmt, ap);
    if (!cond) {
        atomic_fetch_add(&t->failed, 1);
        zt_diag("  failed at %s:%d", file, line);
    }
    return cond;
}

static inline ZT_PRINTF(4, 5) int zt_ok_at(int cond, const char *file, int line, const char *fmt,
                                            ...)
{
    va_list ap;
    va_start(ap, fmt);
    int r = zt_vok(cond, file, line, fmt, ap);
    va_end(ap);
    return r;
}

static inline ZT_PRINTF(5, 6) int zt_is_int_at(long long got, long long want, const char *file,
                                                int line, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int r = zt_vok(got == want, file, line, fmt, ap);
    va_end(ap);
    if (!r)
        zt_diag("       got: %lld (0x%llx)  expected: %lld (0x%llx)", got,
                (unsigned long long)got, want, (unsigned long long)want);
    return r;
}

static inline ZT_PRINTF(5, 6) int zt_is_u64_at(uint64_t got, uint64_t want, const char *file,
                                                int line, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int r = zt_vok(got == want, file, line, fmt, ap);
    va_end(ap);
    if (!r)
        zt_diag("       got: %" PRIu64 " (0x%" PRIx64 ")  expected: %" PRIu64 " (0x%" PRIx64 ")",
                got, got, want, want);
    return r;
}

/* |got - want| <= tol, with both printed on failure. */
static inline ZT_PRINTF(6, 7) int zt_near_at(double got, double want, double tol,
                                              const char *file, int line, const char *fmt, ...)
{
    double d = got - want;
    if (d < 0)
        d = -d;
    va_list ap;
    va_start(ap, fmt);
    int r = zt_vok(d <= tol, file, line, fmt, ap);
    va_end(ap);
    if (!r)
        zt_diag("       got: %.6f  expected: %.6f +- %.6f", got, want, tol);
    return r;
}

/* lo <= got <= hi */
static inline ZT_PRINTF(6, 7) int zt_between_at(long long got, long long lo, long long hi,
                                                 const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int r = zt_vok(got >= lo && got <= hi, file, line, fmt, ap);
    va_end(ap);
    if (!r)
        zt_diag("       got: %lld  expected in [%lld, %lld]", got, lo, hi);
    return r;
}

static inline ZT_PRINTF(5, 6) int zt_is_str_at(const char *got, const char *want,
                                                const char *file, int line, const char *fmt, ...)
{
    int eq = (got == NULL && want == NULL) || (got && want && strcmp(got, want) == 0);
    va_list ap;
    va_start(ap, fmt);
    int r = zt_vok(eq, file, line, fmt, ap);
    va_end(ap);
    if (!r)
        zt_diag("       got: '%s'  expected: '%s'", got ? got : "(null)", want ? want : "(null)");
    return r;
}

#define zt_ok(cond, ...) zt_ok_at(!!(cond), __FILE__, __LINE__, __VA_ARGS__)
#define zt_is_int(got, want, ...) \
    zt_is_int_at((long long)(got), (long long)(want), __FILE__, __LINE__, __VA_ARGS__)
#define zt_is_u64(got, want, ...) \
    zt_is_u64_at((uint64_t)(got), (uint64_t)(want), __FILE__, __LINE__, __VA_ARGS__)
#define zt_near(got, want, tol, ...) \
    zt_near_at((double)(got), (double)(want), (double)(tol), __FILE__, __LINE__, __VA_ARGS__)
#define zt_between(got, lo, hi, ...)                                                          \
    zt_between_at((long long)(got), (long long)(lo), (long long)(hi), __FILE__, __LINE__,    \
                  __VA_ARGS__)
#define zt_is_str(got, want, ...) zt_is_str_at((got), (want), __FILE__, __LINE__, __VA_ARGS__)
#define zt_fail(...) zt_ok_at(0, __FILE__, __LINE__, __VA_ARGS__)
#define zt_pass(...) zt_ok_at(1, __FILE__, __LINE__, __VA_ARGS__)

/** Number of failed results so far (all processes of the stream). */
static inline int zt_failures(void)
{
    return atomic_load(&zt_tap()->failed);
}

/** Prints the plan if none was given and returns the exit status for main(). */
static inline int zt_done(void)
{
    struct zt_tap *t = zt_tap();
    int n = atomic_load(&t->next);
    if (t->planned == 0) {
        char buf[32];
        int len = snprintf(buf, sizeof buf, "1..%d\n", n);
        ssize_t w = write(1, buf, (size_t)len);
        (void)w;
    } else if (t->planned != n) {
        zt_diag("planned %d results but ran %d", t->planned, n);
        return 1;
    }
    int f = atomic_load(&t->failed);
    if (f)
        zt_diag("%d of %d results failed", f, n);
    if (n == 0) {
        zt_diag("no results at all");
        return 1;
    }
    return f ? 1 : 0;
}

/** Ends the process at once with a failure (used when continuing makes no sense). */
#define zt_bail(...)                                                                          \
    do {                                                                                      \
        zt_fail(__VA_ARGS__);                                                                 \
        fflush(stdout);                                                                       \
        _exit(2);                                                                             \
    } while (0)

/**
 * Call first in main(). Under ThreadSanitizer it re-executes the program once with
 * atexit_sleep_ms=0 appended to TSAN_OPTIONS: TSan otherwise sleeps 1 s in every exiting
 * process, and the tests fork many short-lived children. No-op in other builds.
 */
static inline void zt_init(int argc, char **argv)
{
    (void)argc;
#if defined(__SANITIZE_THREAD__)
    const char *o = getenv("TSAN_OPTIONS");
    if (!o || !strstr(o, "atexit_sleep_ms")) {
        char buf[1024];
        snprintf(buf, sizeof buf, "%s%satexit_sleep_ms=0", o ? o : "", o && *o ? ":" : "");
        setenv("TSAN_OPTIONS", buf, 1);
        execv("/proc/self/exe", argv);
    }
#else
    (void)argv;
#endif
}

/* ------------------------------------------------------------------------------------------ */
/* Level Zero results                                                                         */
/* ------------------------------------------------------------------------------------------ */

/** Name of a ze_result_t ("ZE_RESULT_ERROR_DEVICE_LOST"), or "?" for unknown values. */
static inline const char *zt_result_str(ze_result_t r)
{
    switch ((uint32_t)r) {
#define ZT_R(x) \
    case (uint32_t)x: return #x;
        ZT_R(ZE_RESULT_SUCCESS) ZT_R(ZE_RESULT_NOT_READY) ZT_R(ZE_RESULT_ERROR_DEVICE_LOST)
        ZT_R(ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY) ZT_R(ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY)
        ZT_R(ZE_RESULT_ERROR_MODULE_BUILD_FAILURE) ZT_R(ZE_RESULT_ERROR_MODULE_LINK_FAILURE)
        ZT_R(ZE_RESULT_ERROR_UNINITIALIZED) ZT_R(ZE_RESULT_ERROR_UNSUPPORTED_VERSION)
        ZT_R(ZE_RESULT_ERROR_UNSUPPORTED_FEATURE) ZT_R(ZE_RESULT_ERROR_INVALID_ARGUMENT)
        ZT_R(ZE_RESULT_ERROR_INVALID_NULL_HANDLE) ZT_R(ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE)
        ZT_R(ZE_RESULT_ERROR_INVALID_NULL_POINTER) ZT_R(ZE_RESULT_ERROR_INVALID_SIZE)
        ZT_R(ZE_RESULT_ERROR_UNSUPPORTED_SIZE) ZT_R(ZE_RESULT_ERROR_UNSUPPORTED_ALIGNMENT)
        ZT_R(ZE_RESULT_ERROR_INVALID_SYNCHRONIZATION_OBJECT)
        ZT_R(ZE_RESULT_ERROR_INVALID_ENUMERATION) ZT_R(ZE_RESULT_ERROR_UNSUPPORTED_ENUMERATION)
        ZT_R(ZE_RESULT_ERROR_UNSUPPORTED_IMAGE_FORMAT) ZT_R(ZE_RESULT_ERROR_INVALID_NATIVE_BINARY)
        ZT_R(ZE_RESULT_ERROR_INVALID_KERNEL_NAME) ZT_R(ZE_RESULT_ERROR_INVALID_FUNCTION_NAME)
        ZT_R(ZE_RESULT_ERROR_INVALID_GROUP_SIZE_DIMENSION)
        ZT_R(ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_INDEX)
        ZT_R(ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE)
        ZT_R(ZE_RESULT_ERROR_INVALID_COMMAND_LIST_TYPE) ZT_R(ZE_RESULT_ERROR_OVERLAPPING_REGIONS)
        ZT_R(ZE_RESULT_ERROR_UNKNOWN)
#undef ZT_R
    default:
        return "?";
    }
}

static inline int zt_check_ze_at(ze_result_t r, const char *expr, const char *file, int line)
{
    if (r == ZE_RESULT_SUCCESS)
        return 1;
    /* API name = the expression up to its '(' */
    char api[96];
    size_t n = strcspn(expr, "( ");
    if (n >= sizeof api)
        n = sizeof api - 1;
    memcpy(api, expr, n);
    api[n] = 0;
    zt_ok_at(0, file, line, "%s returned 0x%08x (%s)", api, (unsigned)r, zt_result_str(r));
    return 0;
}

/**
 * CHECK_ZE(call): evaluates a Level Zero call; silent on ZE_RESULT_SUCCESS, otherwise reports a
 * failed TAP result "zeApi returned 0x7800000... (NAME)". Evaluates to 1 on success, else 0.
 */
#define CHECK_ZE(call) zt_check_ze_at((call), #call, __FILE__, __LINE__)
/** REQUIRE_ZE(call): like CHECK_ZE but ends the process (exit 2) on failure. */
#define REQUIRE_ZE(call)                                                                      \
    do {                                                                                      \
        if (!CHECK_ZE(call)) {                                                                \
            fflush(stdout);                                                                   \
            _exit(2);                                                                         \
        }                                                                                     \
    } while (0)

static inline ZT_PRINTF(5, 6) int zt_is_ze_at(ze_result_t got, ze_result_t want, const char *file,
                                               int line, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int r = zt_vok(got == want, file, line, fmt, ap);
    va_end(ap);
    if (!r)
        zt_diag("       got: 0x%08x (%s)  expected: 0x%08x (%s)", (unsigned)got,
                zt_result_str(got), (unsigned)want, zt_result_str(want));
    return r;
}
/** IS_ZE(result, expected, description...): one TAP result comparing ze_result_t values. */
#define IS_ZE(got, want, ...) zt_is_ze_at((got), (want), __FILE__, __LINE__, __VA_ARGS__)

/* ------------------------------------------------------------------------------------------ */
/* time, environment                                                                          */
/* ------------------------------------------------------------------------------------------ */

/** Host CLOCK_MONOTONIC_RAW in ns: the clock zesim's truth and global timestamps use. */
static inline uint64_t zt_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline void zt_sleep_ns(uint64_t ns)
{
    struct timespec ts = {(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

static inline void zt_sleep_ms(unsigned ms)
{
    zt_sleep_ns((uint64_t)ms * 1000000u);
}

/** Integer value of an environment variable, def when unset or empty. */
static inline long long zt_env_ll(const char *name, long long def)
{
    const char *v = getenv(name);
    if (!v || !*v)
        return def;
    return strtoll(v, NULL, 0);
}

/** Linux thread id (the "tid" field of the truth log). */
static inline int64_t zt_gettid(void)
{
    return (int64_t)syscall(SYS_gettid);
}

/** Handle as the truth log prints it ("0x..." compared numerically). */
#define ZT_H64(h) ((uint64_t)(uintptr_t)(h))

/* ------------------------------------------------------------------------------------------ */
/* object registry: everything the zt_* helpers create is destroyed by zt_cleanup()          */
/* ------------------------------------------------------------------------------------------ */

/* Kinds in destruction order (zt_cleanup destroys lower values first). */
typedef enum {
    ZT_OBJ_EVENT, ZT_OBJ_FENCE, ZT_OBJ_KERNEL, ZT_OBJ_IMAGE, ZT_OBJ_LIST, ZT_OBJ_QUEUE,
    ZT_OBJ_POOL, ZT_OBJ_MODULE, ZT_OBJ_MEM, ZT_OBJ_CONTEXT, ZT_OBJ_NKINDS
} zt_obj_kind;

struct zt_obj {
    zt_obj_kind kind;
    void *h;
    ze_context_handle_t ctx; /* ZT_OBJ_MEM */
};

static struct {
    pthread_mutex_t mu;
    struct zt_obj *v;
    size_t n, cap;
} zt_objs ZT_UNUSED = {PTHREAD_MUTEX_INITIALIZER, NULL, 0, 0};

/** Registers an object for zt_cleanup() (the zt_* creation helpers do this). Thread-safe. */
static inline void zt_track(zt_obj_kind kind, void *h, ze_context_handle_t ctx)
{
    if (!h)
        return;
    pthread_mutex_lock(&zt_objs.mu);
    if (zt_objs.n == zt_objs.cap) {
        size_t cap = zt_objs.cap ? 2 * zt_objs.cap : 64;
        struct zt_obj *v = realloc(zt_objs.v, cap * sizeof *v);
        if (!v)
            abort();
        zt_objs.v = v;
        zt_objs.cap = cap;
    }
    zt_objs.v[zt_objs.n].kind = kind;
    zt_objs.v[zt_objs.n].h = h;
    zt_objs.v[zt_objs.n].ctx = ctx;
    zt_objs.n++;
    pthread_mutex_unlock(&zt_objs.mu);
}

/** Forgets an object (it is being destroyed by the test). Returns 1 if it was tracked. */
static inline int zt_untrack(void *h)
{
    int found = 0;
    pthread_mutex_lock(&zt_objs.mu);
    for (size_t i = zt_objs.n; i-- > 0;)
        if (zt_objs.v[i].h == h) {
            zt_objs.v[i] = zt_objs.v[--zt_objs.n];
            found = 1;
            break;
        }
    pthread_mutex_unlock(&zt_objs.mu);
    return found;
}

static inline ze_result_t zt_destroy_obj(const struct zt_obj *o)
{
    switch (o->kind) {
    case ZT_OBJ_EVENT: return zeEventDestroy((ze_event_handle_t)o->h);
    case ZT_OBJ_FENCE: return zeFenceDestroy((ze_fence_handle_t)o->h);
    case ZT_OBJ_KERNEL: return zeKernelDestroy((ze_kernel_handle_t)o->h);
    case ZT_OBJ_IMAGE: return zeImageDestroy((ze_image_handle_t)o->h);
    case ZT_OBJ_LIST: return zeCommandListDestroy((ze_command_list_handle_t)o->h);
    case ZT_OBJ_QUEUE: return zeCommandQueueDestroy((ze_command_queue_handle_t)o->h);
    case ZT_OBJ_POOL: return zeEventPoolDestroy((ze_event_pool_handle_t)o->h);
    case ZT_OBJ_MODULE: return zeModuleDestroy((ze_module_handle_t)o->h);
    case ZT_OBJ_MEM: return zeMemFree(o->ctx, o->h);
    case ZT_OBJ_CONTEXT: return zeContextDestroy((ze_context_handle_t)o->h);
    default: return ZE_RESULT_ERROR_INVALID_ARGUMENT;
    }
}

/**
 * Destroys every tracked object, children before parents, contexts last (results ignored:
 * after a device loss some calls fail). Call it when no command is in flight.
 */
static inline void zt_cleanup(void)
{
    for (int k = 0; k < ZT_OBJ_NKINDS; k++) {
        for (;;) {
            struct zt_obj o;
            int found = 0;
            pthread_mutex_lock(&zt_objs.mu);
            for (size_t i = zt_objs.n; i-- > 0;)
                if ((int)zt_objs.v[i].kind == k) {
                    o = zt_objs.v[i];
                    zt_objs.v[i] = zt_objs.v[--zt_objs.n];
                    found = 1;
                    break;
                }
            pthread_mutex_unlock(&zt_objs.mu);
            if (!found)
                break;
            (void)zt_destroy_obj(&o);
        }
    }
}

#define ZT_DEF_DESTROY(fn, type, call)                                                        \
    static inline int fn(type h)                                                              \
    {                                                                                         \
        zt_untrack((void *)h);                                                                \
        return CHECK_ZE(call);                                                                \
    }
ZT_DEF_DESTROY(zt_destroy_event, ze_event_handle_t, zeEventDestroy(h))
ZT_DEF_DESTROY(zt_destroy_fence, ze_fence_handle_t, zeFenceDestroy(h))
ZT_DEF_DESTROY(zt_destroy_kernel, ze_kernel_handle_t, zeKernelDestroy(h))
ZT_DEF_DESTROY(zt_destroy_image, ze_image_handle_t, zeImageDestroy(h))
ZT_DEF_DESTROY(zt_destroy_list, ze_command_list_handle_t, zeCommandListDestroy(h))
ZT_DEF_DESTROY(zt_destroy_queue, ze_command_queue_handle_t, zeCommandQueueDestroy(h))
ZT_DEF_DESTROY(zt_destroy_pool, ze_event_pool_handle_t, zeEventPoolDestroy(h))
ZT_DEF_DESTROY(zt_destroy_module, ze_module_handle_t, zeModuleDestroy(h))
ZT_DEF_DESTROY(zt_destroy_context, ze_context_handle_t, zeContextDestroy(h))
#undef ZT_DEF_DESTROY

/** zt_destroy(handle): destroys any Level Zero object (checked) and forgets it. */
#define zt_destroy(h)                                                                         \
    _Generic((h), ze_event_handle_t: zt_destroy_event, ze_fence_handle_t: zt_destroy_fence,   \
             ze_kernel_handle_t: zt_destroy_kernel, ze_image_handle_t: zt_destroy_image,      \
             ze_command_list_handle_t: zt_destroy_list,                                       \
             ze_command_queue_handle_t: zt_destroy_queue,                                     \
             ze_event_pool_handle_t: zt_destroy_pool, ze_module_handle_t: zt_destroy_module,  \
             ze_context_handle_t: zt_destroy_context)(h)

/** zeMemFree (checked) of a tracked or untracked allocation. */
static inline int zt_free(ze_context_handle_t ctx, void *p)
{
    zt_untrack(p);
    return CHECK_ZE(zeMemFree(ctx, p));
}

/* ------------------------------------------------------------------------------------------ */
/* discovery                                                                                  */
/* ------------------------------------------------------------------------------------------ */

/** Driver, devices and one context over all devices. */
typedef struct zt_env {
    ze_driver_handle_t driver;
    uint32_t ndev;
    ze_device_handle_t dev[ZT_MAX_DEVICES];
    ze_context_handle_t ctx;
} zt_env;

/** zeInit(0), first driver, all its devices, a context. Ends the process on failure. */
static inline void zt_setup(zt_env *e)
{
    memset(e, 0, sizeof *e);
    REQUIRE_ZE(zeInit(0));
    uint32_t n = 0;
    REQUIRE_ZE(zeDriverGet(&n, NULL));
    if (n < 1)
        zt_bail("zeDriverGet found no driver");
    n = 1;
    REQUIRE_ZE(zeDriverGet(&n, &e->driver));
    e->ndev = 0;
    REQUIRE_ZE(zeDeviceGet(e->driver, &e->ndev, NULL));
    if (e->ndev < 1)
        zt_bail("zeDeviceGet found no device");
    if (e->ndev > ZT_MAX_DEVICES)
        e->ndev = ZT_MAX_DEVICES;
    REQUIRE_ZE(zeDeviceGet(e->driver, &e->ndev, e->dev));
    ze_context_desc_t cd = {ZE_STRUCTURE_TYPE_CONTEXT_DESC, NULL, 0};
    REQUIRE_ZE(zeContextCreate(e->driver, &cd, &e->ctx));
    zt_track(ZT_OBJ_CONTEXT, e->ctx, NULL);
}

/** Destroys everything the helpers created (zt_cleanup), the context included. */
static inline void zt_teardown(zt_env *e)
{
    zt_cleanup();
    e->ctx = NULL;
}

/** A second context, tracked. */
static inline ze_context_handle_t zt_context(const zt_env *e)
{
    ze_context_desc_t cd = {ZE_STRUCTURE_TYPE_CONTEXT_DESC, NULL, 0};
    ze_context_handle_t c = NULL;
    REQUIRE_ZE(zeContextCreate(e->driver, &cd, &c));
    zt_track(ZT_OBJ_CONTEXT, c, NULL);
    return c;
}

/**
 * Ordinal of the first queue group whose flags contain all of `want` and none of `unwanted`,
 * or -1. The number of engines of that group goes to *nqueues (optional).
 */
static inline int zt_find_group(ze_device_handle_t dev, ze_command_queue_group_property_flags_t want,
                                ze_command_queue_group_property_flags_t unwanted,
                                uint32_t *nqueues)
{
    uint32_t n = 0;
    if (!CHECK_ZE(zeDeviceGetCommandQueueGroupProperties(dev, &n, NULL)) || n == 0)
        return -1;
    ze_command_queue_group_properties_t p[16];
    if (n > 16)
        n = 16;
    for (uint32_t i = 0; i < n; i++) {
        memset(&p[i], 0, sizeof p[i]);
        p[i].stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_GROUP_PROPERTIES;
    }
    if (!CHECK_ZE(zeDeviceGetCommandQueueGroupProperties(dev, &n, p)))
        return -1;
    for (uint32_t i = 0; i < n; i++)
        if ((p[i].flags & want) == want && (p[i].flags & unwanted) == 0) {
            if (nqueues)
                *nqueues = p[i].numQueues;
            return (int)i;
        }
    return -1;
}

/** Ordinal of the compute group (COMPUTE flag). Ends the process if there is none. */
static inline uint32_t zt_compute_ordinal(ze_device_handle_t dev)
{
    int o = zt_find_group(dev, ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COMPUTE, 0, NULL);
    if (o < 0)
        zt_bail("no compute queue group");
    return (uint32_t)o;
}

/** Ordinal of the copy-only group (COPY without COMPUTE). Ends the process if there is none. */
static inline uint32_t zt_copy_ordinal(ze_device_handle_t dev)
{
    int o = zt_find_group(dev, ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COPY,
                          ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COMPUTE, NULL);
    if (o < 0)
        zt_bail("no copy-only queue group");
    return (uint32_t)o;
}

/* ------------------------------------------------------------------------------------------ */
/* lists, queues, events                                                                      */
/* ------------------------------------------------------------------------------------------ */

/** Immediate list on (ordinal, index) with the given mode and queue flags. */
static inline ze_command_list_handle_t zt_imm_list(const zt_env *e, uint32_t d, uint32_t ordinal,
                                                   uint32_t index, ze_command_queue_mode_t mode,
                                                   ze_command_queue_flags_t qflags)
{
    ze_command_queue_desc_t qd = {ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC, NULL, ordinal, index,
                                  qflags, mode, ZE_COMMAND_QUEUE_PRIORITY_NORMAL};
    ze_command_list_handle_t l = NULL;
    REQUIRE_ZE(zeCommandListCreateImmediate(e->ctx, e->dev[d], &qd, &l));
    zt_track(ZT_OBJ_LIST, l, NULL);
    return l;
}

/** Asynchronous, out-of-order immediate list on the compute group engine 0 of device d. */
static inline ze_command_list_handle_t zt_imm_compute(const zt_env *e, uint32_t d)
{
    return zt_imm_list(e, d, zt_compute_ordinal(e->dev[d]), 0,
                       ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS, 0);
}

static inline ze_command_queue_handle_t zt_queue(const zt_env *e, uint32_t d, uint32_t ordinal,
                                                 uint32_t index, ze_command_queue_mode_t mode,
                                                 ze_command_queue_flags_t flags)
{
    ze_command_queue_desc_t qd = {ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC, NULL, ordinal, index,
                                  flags, mode, ZE_COMMAND_QUEUE_PRIORITY_NORMAL};
    ze_command_queue_handle_t q = NULL;
    REQUIRE_ZE(zeCommandQueueCreate(e->ctx, e->dev[d], &qd, &q));
    zt_track(ZT_OBJ_QUEUE, q, NULL);
    return q;
}

static inline ze_command_list_handle_t zt_list(const zt_env *e, uint32_t d, uint32_t ordinal,
                                               ze_command_list_flags_t flags)
{
    ze_command_list_desc_t ld = {ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC, NULL, ordinal, flags};
    ze_command_list_handle_t l = NULL;
    REQUIRE_ZE(zeCommandListCreate(e->ctx, e->dev[d], &ld, &l));
    zt_track(ZT_OBJ_LIST, l, NULL);
    return l;
}

/** Event pool of `count` events; flags e.g. HOST_VISIBLE | KERNEL_TIMESTAMP. */
static inline ze_event_pool_handle_t zt_pool(const zt_env *e, uint32_t count,
                                             ze_event_pool_flags_t flags)
{
    ze_event_pool_desc_t pd = {ZE_STRUCTURE_TYPE_EVENT_POOL_DESC, NULL, flags, count};
    ze_event_pool_handle_t p = NULL;
    REQUIRE_ZE(zeEventPoolCreate(e->ctx, &pd, e->ndev, (ze_device_handle_t *)e->dev, &p));
    zt_track(ZT_OBJ_POOL, p, NULL);
    return p;
}

static inline ze_event_handle_t zt_event(ze_event_pool_handle_t pool, uint32_t index)
{
    ze_event_desc_t ed = {ZE_STRUCTURE_TYPE_EVENT_DESC, NULL, index, ZE_EVENT_SCOPE_FLAG_HOST,
                          ZE_EVENT_SCOPE_FLAG_HOST};
    ze_event_handle_t ev = NULL;
    REQUIRE_ZE(zeEventCreate(pool, &ed, &ev));
    zt_track(ZT_OBJ_EVENT, ev, NULL);
    return ev;
}

/** Host-visible timestamp pool with n events created into ev[]. */
static inline ze_event_pool_handle_t zt_ts_events(const zt_env *e, uint32_t n,
                                                  ze_event_handle_t *ev)
{
    ze_event_pool_handle_t p = zt_pool(
        e, n, ZE_EVENT_POOL_FLAG_HOST_VISIBLE | ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP);
    for (uint32_t i = 0; i < n; i++)
        ev[i] = zt_event(p, i);
    return p;
}

static inline void *zt_host_alloc(const zt_env *e, size_t size)
{
    ze_host_mem_alloc_desc_t hd = {ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC, NULL, 0};
    void *p = NULL;
    REQUIRE_ZE(zeMemAllocHost(e->ctx, &hd, size, 64, &p));
    zt_track(ZT_OBJ_MEM, p, e->ctx);
    return p;
}

static inline void *zt_device_alloc(const zt_env *e, uint32_t d, size_t size)
{
    ze_device_mem_alloc_desc_t dd = {ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC, NULL, 0, 0};
    void *p = NULL;
    REQUIRE_ZE(zeMemAllocDevice(e->ctx, &dd, size, 64, e->dev[d], &p));
    zt_track(ZT_OBJ_MEM, p, e->ctx);
    return p;
}

static inline void *zt_shared_alloc(const zt_env *e, uint32_t d, size_t size)
{
    ze_device_mem_alloc_desc_t dd = {ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC, NULL, 0, 0};
    ze_host_mem_alloc_desc_t hd = {ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC, NULL, 0};
    void *p = NULL;
    REQUIRE_ZE(zeMemAllocShared(e->ctx, &dd, &hd, size, 64, e->dev[d], &p));
    zt_track(ZT_OBJ_MEM, p, e->ctx);
    return p;
}

/** Image of the given type/size with a plain format (layout, e.g. ZE_IMAGE_FORMAT_LAYOUT_8_8_8_8). */
static inline ze_image_handle_t zt_image(const zt_env *e, uint32_t d, ze_image_type_t type,
                                         ze_image_format_layout_t layout,
                                         ze_image_format_type_t ftype, uint64_t w, uint32_t h,
                                         uint32_t depth)
{
    ze_image_desc_t id;
    memset(&id, 0, sizeof id);
    id.stype = ZE_STRUCTURE_TYPE_IMAGE_DESC;
    id.flags = ZE_IMAGE_FLAG_KERNEL_WRITE;
    id.type = type;
    id.format.layout = layout;
    id.format.type = ftype;
    id.format.x = ZE_IMAGE_FORMAT_SWIZZLE_R;
    id.format.y = ZE_IMAGE_FORMAT_SWIZZLE_G;
    id.format.z = ZE_IMAGE_FORMAT_SWIZZLE_B;
    id.format.w = ZE_IMAGE_FORMAT_SWIZZLE_A;
    id.width = w;
    id.height = h;
    id.depth = depth;
    ze_image_handle_t img = NULL;
    REQUIRE_ZE(zeImageCreate(e->ctx, e->dev[d], &id, &img));
    zt_track(ZT_OBJ_IMAGE, img, NULL);
    return img;
}

/* ------------------------------------------------------------------------------------------ */
/* modules                                                                                    */
/* ------------------------------------------------------------------------------------------ */

/**
 * Builds a module from `bytes`; returns the zeModuleCreate result. On return *mod is the module
 * (or NULL) and, when log/logsize are given, the build log text (always NUL-terminated).
 */
static inline ze_result_t zt_module_bytes(const zt_env *e, uint32_t d, ze_module_format_t fmt,
                                          const void *bytes, size_t size, ze_module_handle_t *mod,
                                          char *log, size_t logsize)
{
    ze_module_desc_t md = {ZE_STRUCTURE_TYPE_MODULE_DESC, NULL, fmt, size,
                           (const uint8_t *)bytes, NULL, NULL};
    ze_module_build_log_handle_t bl = NULL;
    *mod = NULL;
    ze_result_t r = zeModuleCreate(e->ctx, e->dev[d], &md, mod, log ? &bl : NULL);
    if (log && logsize) {
        log[0] = 0;
        if (bl) {
            size_t n = 0;
            if (CHECK_ZE(zeModuleBuildLogGetString(bl, &n, NULL)) && n <= logsize)
                CHECK_ZE(zeModuleBuildLogGetString(bl, &n, log));
            log[logsize - 1] = 0;
            CHECK_ZE(zeModuleBuildLogDestroy(bl));
        }
    }
    return r;
}

/** Module from zesim text (e.g. "ZESIM-MODULE\nkernel busy args=0 ns=20000\n"). */
static inline ze_module_handle_t zt_module_text(const zt_env *e, uint32_t d, const char *text)
{
    ze_module_handle_t m = NULL;
    char log[512];
    ze_result_t r = zt_module_bytes(e, d, ZE_MODULE_FORMAT_NATIVE, text, strlen(text), &m, log,
                                    sizeof log);
    if (r != ZE_RESULT_SUCCESS) {
        zt_diag("build log: %s", log);
        zt_bail("zeModuleCreate(text) returned 0x%08x (%s)", (unsigned)r, zt_result_str(r));
    }
    zt_track(ZT_OBJ_MODULE, m, NULL);
    return m;
}

static inline ze_kernel_handle_t zt_kernel(ze_module_handle_t m, const char *name)
{
    ze_kernel_desc_t kd = {ZE_STRUCTURE_TYPE_KERNEL_DESC, NULL, 0, name};
    ze_kernel_handle_t k = NULL;
    REQUIRE_ZE(zeKernelCreate(m, &kd, &k));
    zt_track(ZT_OBJ_KERNEL, k, NULL);
    return k;
}

/* --- SPIR-V ------------------------------------------------------------------------------- */

/** Parameter types for generated SPIR-V kernels. */
typedef enum { ZT_SPV_PTR_F32, ZT_SPV_PTR_U32, ZT_SPV_F32, ZT_SPV_U32 } zt_spv_type;

typedef struct zt_spv_kernel {
    const char *name;
    unsigned nparams;
    zt_spv_type params[8];
} zt_spv_kernel;

/*
 * Builds a valid SPIR-V 1.0 module (validated with spirv-val, OpenCL environment) declaring the
 * given kernels: Addresses+Kernel capabilities, Physical64/OpenCL memory model, one
 * OpEntryPoint Kernel per kernel and a function with one OpFunctionParameter per parameter and
 * an empty body. Returns the number of words written, 0 if `cap` words are too few.
 */
static inline size_t zt_spirv_build(const zt_spv_kernel *k, unsigned nk, uint32_t *w, size_t cap)
{
    enum { ID_VOID = 1, ID_F32, ID_U32, ID_PF32, ID_PU32, ID_FIRST };
    size_t n = 0;
    uint32_t next = ID_FIRST;
    uint32_t fnty[16], fn[16];
    if (nk > 16)
        return 0;
#define ZT_W(x)                                                                               \
    do {                                                                                      \
        if (n >= cap)                                                                         \
            return 0;                                                                         \
        w[n++] = (uint32_t)(x);                                                               \
    } while (0)
#define ZT_OP(words, op) ZT_W(((uint32_t)(words) << 16) | (uint32_t)(op))
    for (unsigned i = 0; i < nk; i++) {
        fnty[i] = next++;
        fn[i] = next++;
    }
    /* header: magic, version 1.0, generator 0, bound (patched below), schema */
    ZT_W(0x07230203u);
    ZT_W(0x00010000u);
    ZT_W(0);
    size_t bound_at = n;
    ZT_W(0);
    ZT_W(0);
    ZT_OP(2, 17); /* OpCapability Addresses */
    ZT_W(4);
    ZT_OP(2, 17); /* OpCapability Kernel */
    ZT_W(6);
    ZT_OP(3, 14); /* OpMemoryModel Physical64 OpenCL */
    ZT_W(2);
    ZT_W(2);
    for (unsigned i = 0; i < nk; i++) {
        size_t len = strlen(k[i].name);
        size_t sw = len / 4 + 1; /* NUL-terminated, padded to words */
        ZT_OP(3 + sw, 15);      /* OpEntryPoint Kernel %fn "name" */
        ZT_W(6);
        ZT_W(fn[i]);
        for (size_t j = 0; j < sw; j++) {
            uint32_t word = 0;
            for (size_t b = 0; b < 4; b++) {
                size_t c = j * 4 + b;
                if (c < len)
                    word |= (uint32_t)(unsigned char)k[i].name[c] << (8 * b);
            }
            ZT_W(word);
        }
    }
    ZT_OP(2, 19); /* OpTypeVoid */
    ZT_W(ID_VOID);
    ZT_OP(3, 22); /* OpTypeFloat 32 */
    ZT_W(ID_F32);
    ZT_W(32);
    ZT_OP(4, 21); /* OpTypeInt 32 unsigned(0) */
    ZT_W(ID_U32);
    ZT_W(32);
    ZT_W(0);
    ZT_OP(4, 32); /* OpTypePointer CrossWorkgroup f32 */
    ZT_W(ID_PF32);
    ZT_W(5);
    ZT_W(ID_F32);
    ZT_OP(4, 32); /* OpTypePointer CrossWorkgroup u32 */
    ZT_W(ID_PU32);
    ZT_W(5);
    ZT_W(ID_U32);
    static const uint32_t type_id[] = {ID_PF32, ID_PU32, ID_F32, ID_U32};
    for (unsigned i = 0; i < nk; i++) {
        /* OpTypeFunction %void params... (identical signatures are distinct ids; allowed) */
        ZT_OP(3 + k[i].nparams, 33);
        ZT_W(fnty[i]);
        ZT_W(ID_VOID);
        for (unsigned p = 0; p < k[i].nparams; p++)
            ZT_W(type_id[k[i].params[p]]);
    }
    for (unsigned i = 0; i < nk; i++) {
        ZT_OP(5, 54); /* OpFunction %void %fn None %fnty */
        ZT_W(ID_VOID);
        ZT_W(fn[i]);
        ZT_W(0);
        ZT_W(fnty[i]);
        for (unsigned p = 0; p < k[i].nparams; p++) {
            ZT_OP(3, 55); /* OpFunctionParameter */
            ZT_W(type_id[k[i].params[p]]);
            ZT_W(next++);
        }
        ZT_OP(2, 248); /* OpLabel */
        ZT_W(next++);
        ZT_OP(1, 253); /* OpReturn */
        ZT_OP(1, 56);  /* OpFunctionEnd */
    }
    w[bound_at] = next;
#undef ZT_OP
#undef ZT_W
    return n;
}

/** The built-in kernels of zesim plus a no-argument "busy" kernel, as SPIR-V. */
static const zt_spv_kernel zt_spv_builtins[] ZT_UNUSED = {
    {"vector_add", 3, {ZT_SPV_PTR_F32, ZT_SPV_PTR_F32, ZT_SPV_PTR_F32}},
    {"scale_f32", 2, {ZT_SPV_PTR_F32, ZT_SPV_F32}},
    {"fill_u32", 2, {ZT_SPV_PTR_U32, ZT_SPV_U32}},
    {"busy", 0, {ZT_SPV_U32}},
};

/** Module built from generated SPIR-V for the kernels k[0..nk). Ends the process on failure. */
static inline ze_module_handle_t zt_module_spirv(const zt_env *e, uint32_t d,
                                                 const zt_spv_kernel *k, unsigned nk)
{
    uint32_t words[1024];
    size_t n = zt_spirv_build(k, nk, words, 1024);
    if (!n)
        zt_bail("SPIR-V buffer too small");
    ze_module_handle_t m = NULL;
    char log[512];
    ze_result_t r = zt_module_bytes(e, d, ZE_MODULE_FORMAT_IL_SPIRV, words, n * 4, &m, log,
                                    sizeof log);
    if (r != ZE_RESULT_SUCCESS) {
        zt_diag("build log: %s", log);
        zt_bail("zeModuleCreate(SPIR-V) returned 0x%08x (%s)", (unsigned)r, zt_result_str(r));
    }
    zt_track(ZT_OBJ_MODULE, m, NULL);
    return m;
}

/** Appends kernel k with a group count (x,1,1); the group size must have been set. */
static inline ze_result_t zt_launch(ze_command_list_handle_t l, ze_kernel_handle_t k, uint32_t gx,
                                    ze_event_handle_t sig, uint32_t nwait,
                                    ze_event_handle_t *waits)
{
    ze_group_count_t gc = {gx, 1, 1};
    return zeCommandListAppendLaunchKernel(l, k, &gc, sig, nwait, waits);
}

/* ------------------------------------------------------------------------------------------ */
/* fork runner: ground truth of a child process                                               */
/* ------------------------------------------------------------------------------------------ */

/** Anonymous memory shared with children created later (results of the child for the parent). */
static inline void *zt_shm(size_t size)
{
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        zt_bail("mmap(%zu) failed", size);
    memset(p, 0, size);
    return p;
}

/**
 * Truth file for a child run tagged `tag`: $ZESIM_TRUTH with its ".jsonl" suffix replaced by
 * "-<tag>.jsonl" (or /tmp/zt-<pid>-<tag>.jsonl when ZESIM_TRUTH is unset).
 */
static inline void zt_truth_path_for(const char *tag, char *out, size_t size)
{
    const char *base = getenv("ZESIM_TRUTH");
    if (!base || !*base) {
        snprintf(out, size, "/tmp/zt-%d-%s.jsonl", (int)getpid(), tag);
        return;
    }
    size_t len = strlen(base);
    if (len > 6 && strcmp(base + len - 6, ".jsonl") == 0)
        len -= 6;
    snprintf(out, size, "%.*s-%s.jsonl", (int)len, base, tag);
}

/**
 * Runs fn(arg) in a child process (fork before any Level Zero call of the parent!) whose
 * ZESIM_TRUTH is zt_truth_path_for(tag) (removed first). The child exits normally with
 * exit(0) after fn returns, so zesim flushes its truth file. Returns the raw wait status; a
 * child that did not exit with 0 is reported as a failed result. The path goes to truth_out.
 */
static inline int zt_fork_run(const char *tag, void (*fn)(void *), void *arg, char *truth_out,
                              size_t truth_size)
{
    (void)zt_tap(); /* the TAP state must be shared before the fork */
    char path[1024];
    zt_truth_path_for(tag, path, sizeof path);
    if (truth_out)
        snprintf(truth_out, truth_size, "%s", path);
    unlink(path);
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0)
        zt_bail("fork failed");
    if (pid == 0) {
        setenv("ZESIM_TRUTH", path, 1);
        struct rlimit nocore = {0, 0};
        setrlimit(RLIMIT_CORE, &nocore);
        fn(arg);
        zt_cleanup(); /* whatever fn left, so leak checkers see a clean process */
        fflush(stdout);
        exit(0);
    }
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
    }
    if (!(WIFEXITED(st) && WEXITSTATUS(st) == 0)) {
        if (WIFSIGNALED(st))
            zt_fail("child '%s' killed by signal %d", tag, WTERMSIG(st));
        else
            zt_fail("child '%s' exited with status %d", tag, WEXITSTATUS(st));
    }
    return st;
}

/**
 * zt_fork_run(tag, child, arg) and then check(the truth it logged); the loaded truth is freed
 * after check. A truth log that does not load is a failed result (and check is not called).
 */
static inline void zt_fork_check(const char *tag, void (*child)(void *), void *arg,
                                 void (*check)(const zt_truth *))
{
    char truth[1024];
    zt_fork_run(tag, child, arg, truth, sizeof truth);
    zt_truth t;
    char err[256] = "";
    if (!zt_ok(zt_truth_load(truth, 0, &t, err, sizeof err) == 0, "%s: truth loads (%s)", tag, err))
        return;
    check(&t);
    zt_truth_free(&t);
}

#endif /* ZT_H */
