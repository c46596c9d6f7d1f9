/* SPDX-License-Identifier: MIT */
/*
 * zc_scen: the scenario application of the collector test matrix.
 *
 *   zc_scen --list                      prints every scenario name, one per line
 *   zc_scen <name> [--threads N]        runs one scenario; exit 0 only if every check passed
 *
 * Each scenario is an ordinary Level Zero application doing one thing a timestamp-injecting
 * collector can get wrong (see the THAPI "Tracer ze universal" catalogue): app events shared,
 * reused, reset, chained across lists; regular lists re-executed with and without syncs; copy
 * engines; threads; the context destroyed before its lists; recycled kernel handles; every launch
 * and transfer kind; synchronous modes; the 32-bit timestamp wrap. The app checks what it can see
 * itself (data results, event states, its own kernel timestamps and their ordering), so it must
 * pass unchanged under the collector. Names are <order>_<kind>_<situation>, order in {io, ooo}
 * (in-order flags / default out-of-order), kind in {imm, reg} (immediate / regular lists), plus a
 * few kind-independent extras.
 *
 * ZC_SCEN_OUT=<file>: at the end (also on failure) a JSON object for the checker:
 *   {"scenario", "events": [app event handles], "pools": [app pool handles],
 *    "expected": {"kernel","copy","fill","barrier","image": operations the app caused to execute},
 *    "kts": [{"event","start","end"[,"via":"qkt"]}: global kernel timestamps the app read]}
 *
 * Every host wait has a finite timeout (a timeout fails with "HANG: ..."); a watchdog ends the
 * process if anything else blocks (ZC_SCEN_WATCHDOG_S per phase, default 100 s: the scenario, then
 * the exit, where the collector writes its archive, each get the whole of it). The default stays
 * under the tests' 120 s limit so a hang is reported as one, and far above what any scenario
 * needs alone (~12 s at most): a loaded CI machine (load 15 on 2 cores) stretched a 30 s watchdog
 * over a run that had passed.
 */
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <level_zero/ze_api.h>

/* Spec 1.9 flags the 1.8.12 headers lack (zesim honours them). */
#define LIST_FLAG_IN_ORDER ((ze_command_list_flags_t)(1u << 3))
#define QUEUE_FLAG_IN_ORDER ((ze_command_queue_flags_t)(1u << 1))

#define TIMEOUT_S 10
#define TIMEOUT_NS ((uint64_t)TIMEOUT_S * 1000000000ull)
#define N 1024u       /* elements of the data buffers */
#define GROUP 64u     /* group size of the built-in kernels */
#define MAX_THREADS 64u

#define US 1000ull    /* ns */
#define MS 1000000ull /* ns */

/* ================================================================================ state */

typedef struct scen scen_t;
struct scen {
    const char *name;
    void (*fn)(const scen_t *s);
    bool in_order;  /* io_: in-order lists and queues */
    bool immediate; /* _imm_: immediate lists; _reg_: regular lists on queues */
};

enum { OP_KERNEL, OP_COPY, OP_FILL, OP_BARRIER, OP_IMAGE, OP_NCLASS };
static const char *const op_name[OP_NCLASS] = {"kernel", "copy", "fill", "barrier", "image"};

enum obj_kind { O_CTX, O_MODULE, O_KERNEL, O_MEM, O_POOL, O_EVENT, O_LIST, O_QUEUE, O_FENCE, O_IMAGE };
struct obj {
    enum obj_kind kind;
    void *h;
    ze_context_handle_t ctx; /* O_MEM */
};

struct kts_rec {
    void *ev;
    uint64_t start, end;
    bool qkt;
};

static struct {
    const scen_t *scen;
    unsigned nthreads;
    ze_driver_handle_t drv;
    ze_device_handle_t dev;
    ze_context_handle_t ctx;
    ze_module_handle_t mod;
    uint32_t compute_ord, ncompute, copy_ord, ncopy;
    bool have_copy;
    uint64_t hz;    /* kernel timestamp ticks per second */
    uint64_t kmask; /* kernel timestamp valid bits */
    uint64_t gmask; /* global timestamp valid bits */

    pthread_mutex_t lock; /* guards the arrays below */
    struct obj *objs;
    size_t nobjs, cap_objs;
    void **events;
    size_t nevents, cap_events;
    void **pools;
    size_t npools, cap_pools;
    struct kts_rec *kts;
    size_t nkts, cap_kts;
    atomic_uint_fast64_t expected[OP_NCLASS];
} G = {.nthreads = 8, .lock = PTHREAD_MUTEX_INITIALIZER};

/* ================================================================================ failure */

static void write_json(void);

static const char *rname(ze_result_t r) {
    switch (r) {
    case ZE_RESULT_SUCCESS: return "SUCCESS";
    case ZE_RESULT_NOT_READY: return "NOT_READY";
    case ZE_RESULT_ERROR_DEVICE_LOST: return "ERROR_DEVICE_LOST";
    case ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY: return "ERROR_OUT_OF_HOST_MEMORY";
    case ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY: return "ERROR_OUT_OF_DEVICE_MEMORY";
    case ZE_RESULT_ERROR_MODULE_BUILD_FAILURE: return "ERROR_MODULE_BUILD_FAILURE";
    case ZE_RESULT_ERROR_UNINITIALIZED: return "ERROR_UNINITIALIZED";
    case ZE_RESULT_ERROR_UNSUPPORTED_VERSION: return "ERROR_UNSUPPORTED_VERSION";
    case ZE_RESULT_ERROR_UNSUPPORTED_FEATURE: return "ERROR_UNSUPPORTED_FEATURE";
    case ZE_RESULT_ERROR_INVALID_ARGUMENT: return "ERROR_INVALID_ARGUMENT";
    case ZE_RESULT_ERROR_INVALID_NULL_HANDLE: return "ERROR_INVALID_NULL_HANDLE";
    case ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE: return "ERROR_HANDLE_OBJECT_IN_USE";
    case ZE_RESULT_ERROR_INVALID_NULL_POINTER: return "ERROR_INVALID_NULL_POINTER";
    case ZE_RESULT_ERROR_INVALID_SIZE: return "ERROR_INVALID_SIZE";
    case ZE_RESULT_ERROR_INVALID_ENUMERATION: return "ERROR_INVALID_ENUMERATION";
    case ZE_RESULT_ERROR_INVALID_KERNEL_NAME: return "ERROR_INVALID_KERNEL_NAME";
    case ZE_RESULT_ERROR_INVALID_GROUP_SIZE_DIMENSION: return "ERROR_INVALID_GROUP_SIZE_DIMENSION";
    case ZE_RESULT_ERROR_UNKNOWN: return "ERROR_UNKNOWN";
    default: return "?";
    }
}

static pthread_mutex_t fail_lock = PTHREAD_MUTEX_INITIALIZER;
static _Thread_local int step_line; /* scenario source line of the helper call in progress */

static _Noreturn void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Prints the failure, writes ZC_SCEN_OUT and exits 1. The first failing thread wins; any other
 * one blocks here until the process is gone. Never called with G.lock held. */
static _Noreturn void fail(const char *fmt, ...) {
    pthread_mutex_lock(&fail_lock);
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fflush(stdout);
    if (step_line)
        fprintf(stderr, "zc_scen %s: FAIL: %s (scenario step at zc_scen.c:%d)\n", G.scen ? G.scen->name : "(setup)",
                msg, step_line);
    else
        fprintf(stderr, "zc_scen %s: FAIL: %s\n", G.scen ? G.scen->name : "(setup)", msg);
    fflush(stderr);
    write_json();
    exit(1);
}

#define ZE(call) ze_check((call), #call, __LINE__)
static void ze_check(ze_result_t r, const char *what, int line) {
    if (r != ZE_RESULT_SUCCESS) fail("%s returned 0x%08x (%s) [zc_scen.c:%d]", what, (unsigned)r, rname(r), line);
}

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) fail(__VA_ARGS__);                                                            \
    } while (0)

static void watchdog(int sig) {
    (void)sig;
    static const char m[] = "zc_scen: FAIL: HANG: watchdog expired (blocked in a Level Zero call or at exit)\n";
    ssize_t w = write(2, m, sizeof m - 1);
    (void)w;
    _exit(1);
}

/* ================================================================================ bookkeeping */

static void *grow(void *p, size_t *cap, size_t need, size_t elem) {
    if (need <= *cap) return p;
    size_t ncap = *cap ? *cap * 2 : 64;
    while (ncap < need) ncap *= 2;
    void *n = realloc(p, ncap * elem);
    if (!n) {
        fprintf(stderr, "zc_scen: out of memory\n");
        abort();
    }
    *cap = ncap;
    return n;
}

static void track(enum obj_kind kind, void *h, ze_context_handle_t ctx) {
    pthread_mutex_lock(&G.lock);
    G.objs = grow(G.objs, &G.cap_objs, G.nobjs + 1, sizeof(*G.objs));
    G.objs[G.nobjs++] = (struct obj){kind, h, ctx};
    pthread_mutex_unlock(&G.lock);
}

/* Forgets the newest tracked object with handle h (the caller destroyed it or will). */
static void untrack(void *h) {
    pthread_mutex_lock(&G.lock);
    for (size_t i = G.nobjs; i-- > 0;)
        if (G.objs[i].h == h) {
            memmove(&G.objs[i], &G.objs[i + 1], (G.nobjs - i - 1) * sizeof(*G.objs));
            G.nobjs--;
            break;
        }
    pthread_mutex_unlock(&G.lock);
}

static size_t track_mark(void) {
    pthread_mutex_lock(&G.lock);
    size_t n = G.nobjs;
    pthread_mutex_unlock(&G.lock);
    return n;
}

static void destroy_obj(const struct obj *o) {
    switch (o->kind) {
    case O_CTX: ZE(zeContextDestroy(o->h)); break;
    case O_MODULE: ZE(zeModuleDestroy(o->h)); break;
    case O_KERNEL: ZE(zeKernelDestroy(o->h)); break;
    case O_MEM: ZE(zeMemFree(o->ctx, o->h)); break;
    case O_POOL: ZE(zeEventPoolDestroy(o->h)); break;
    case O_EVENT: ZE(zeEventDestroy(o->h)); break;
    case O_LIST: ZE(zeCommandListDestroy(o->h)); break;
    case O_QUEUE: ZE(zeCommandQueueDestroy(o->h)); break;
    case O_FENCE: ZE(zeFenceDestroy(o->h)); break;
    case O_IMAGE: ZE(zeImageDestroy(o->h)); break;
    }
}

/* Destroys every object tracked after `mark`, newest first. */
static void destroy_from(size_t mark) {
    for (;;) {
        pthread_mutex_lock(&G.lock);
        if (G.nobjs <= mark) {
            pthread_mutex_unlock(&G.lock);
            return;
        }
        struct obj o = G.objs[--G.nobjs];
        pthread_mutex_unlock(&G.lock);
        destroy_obj(&o);
    }
}

static void note_handle(void ***arr, size_t *n, size_t *cap, void *h) {
    pthread_mutex_lock(&G.lock);
    bool seen = false;
    for (size_t i = 0; i < *n && !seen; i++) seen = (*arr)[i] == h;
    if (!seen) {
        *arr = grow(*arr, cap, *n + 1, sizeof(**arr));
        (*arr)[(*n)++] = h;
    }
    pthread_mutex_unlock(&G.lock);
}

static void note_kts(void *ev, uint64_t start, uint64_t end, bool qkt) {
    pthread_mutex_lock(&G.lock);
    G.kts = grow(G.kts, &G.cap_kts, G.nkts + 1, sizeof(*G.kts));
    G.kts[G.nkts++] = (struct kts_rec){ev, start, end, qkt};
    pthread_mutex_unlock(&G.lock);
}

static void write_json(void) {
    const char *path = getenv("ZC_SCEN_OUT");
    if (!path || !*path) return;
    FILE *f = fopen(path, "w");
    if (!f) {
        perror(path);
        return;
    }
    pthread_mutex_lock(&G.lock);
    fprintf(f, "{\"scenario\": \"%s\",\n \"events\": [", G.scen ? G.scen->name : "");
    for (size_t i = 0; i < G.nevents; i++) fprintf(f, "%s\"%p\"", i ? ", " : "", G.events[i]);
    fprintf(f, "],\n \"pools\": [");
    for (size_t i = 0; i < G.npools; i++) fprintf(f, "%s\"%p\"", i ? ", " : "", G.pools[i]);
    fprintf(f, "],\n \"expected\": {");
    for (int c = 0; c < OP_NCLASS; c++)
        fprintf(f, "%s\"%s\": %" PRIu64, c ? ", " : "", op_name[c], (uint64_t)atomic_load(&G.expected[c]));
    fprintf(f, "},\n \"kts\": [");
    for (size_t i = 0; i < G.nkts; i++)
        fprintf(f, "%s\n  {\"event\": \"%p\", \"start\": %" PRIu64 ", \"end\": %" PRIu64 "%s}", i ? "," : "",
                G.kts[i].ev, G.kts[i].start, G.kts[i].end, G.kts[i].qkt ? ", \"via\": \"qkt\"" : "");
    fprintf(f, "]}\n");
    pthread_mutex_unlock(&G.lock);
    fclose(f);
}

/* ================================================================================ helpers */

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static ze_context_handle_t ctx_new(void) {
    ze_context_desc_t d = {ZE_STRUCTURE_TYPE_CONTEXT_DESC, NULL, 0};
    ze_context_handle_t c = NULL;
    ZE(zeContextCreate(G.drv, &d, &c));
    track(O_CTX, c, NULL);
    return c;
}

/* --- memory */
static void *mem_host(ze_context_handle_t ctx, size_t size) {
    ze_host_mem_alloc_desc_t d = {ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC, NULL, 0};
    void *p = NULL;
    ZE(zeMemAllocHost(ctx, &d, size, 64, &p));
    track(O_MEM, p, ctx);
    return p;
}
static void *mem_dev(ze_context_handle_t ctx, size_t size) {
    ze_device_mem_alloc_desc_t d = {ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC, NULL, 0, 0};
    void *p = NULL;
    ZE(zeMemAllocDevice(ctx, &d, size, 64, G.dev, &p));
    track(O_MEM, p, ctx);
    return p;
}
static void *mem_shared(ze_context_handle_t ctx, size_t size) {
    ze_device_mem_alloc_desc_t dd = {ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC, NULL, 0, 0};
    ze_host_mem_alloc_desc_t hd = {ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC, NULL, 0};
    void *p = NULL;
    ZE(zeMemAllocShared(ctx, &dd, &hd, size, 64, G.dev, &p));
    track(O_MEM, p, ctx);
    return p;
}
static void mem_free(ze_context_handle_t ctx, void *p) {
    untrack(p);
    ZE(zeMemFree(ctx, p));
}
static void *hmem(size_t size) { return mem_host(G.ctx, size); }
static void *dmem(size_t size) { return mem_dev(G.ctx, size); }

/* --- modules and kernels */
static const char MODULE_TEXT[] = "ZESIM-MODULE\n"
                                  "kernel k5 args=0 ns=5000 ns_per_item=0\n"
                                  "kernel k10 args=0 ns=10000 ns_per_item=0\n"
                                  "kernel k20 args=0 ns=20000 ns_per_item=0\n"
                                  "kernel k30 args=0 ns=30000 ns_per_item=0\n"
                                  "kernel k40 args=0 ns=40000 ns_per_item=0\n"
                                  "kernel k50 args=0 ns=50000 ns_per_item=0\n"
                                  "kernel k200 args=0 ns=200000 ns_per_item=0\n"
                                  "kernel k2ms args=0 ns=2000000 ns_per_item=0\n"
                                  "kernel k10ms args=0 ns=10000000 ns_per_item=0\n"
                                  "kernel vector_add args=3 ns=8000 ns_per_item=0\n"
                                  "kernel fill_u32 args=2 ns=6000 ns_per_item=0\n"
                                  "kernel scale_f32 args=2 ns=4000 ns_per_item=0\n";
/* the built-ins keep their effect; their durations are fixed above */
#define NS_VADD (8 * US)
#define NS_FILL (6 * US)
#define NS_SCALE (4 * US)

/* Duration of a copy or fill of `bytes` under zesim's default copy model (latency 1500 ns +
 * 10 B/ns); 0 (not checked) when ZESIM_COPY_MODEL changes it. */
static uint64_t copy_ns(size_t bytes) {
    const char *m = getenv("ZESIM_COPY_MODEL");
    return m && *m ? 0 : 1500 + (uint64_t)((double)bytes / 10.0 + 0.5);
}

static ze_module_handle_t module_new(ze_context_handle_t ctx, const char *text) {
    ze_module_desc_t d = {ZE_STRUCTURE_TYPE_MODULE_DESC, NULL, ZE_MODULE_FORMAT_NATIVE, strlen(text),
                          (const uint8_t *)text, NULL, NULL};
    ze_module_handle_t m = NULL;
    ze_module_build_log_handle_t log = NULL;
    ze_result_t r = zeModuleCreate(ctx, G.dev, &d, &m, &log);
    if (r != ZE_RESULT_SUCCESS) {
        char buf[512] = "";
        size_t n = sizeof buf;
        if (log && zeModuleBuildLogGetString(log, &n, buf) != ZE_RESULT_SUCCESS) buf[0] = 0;
        buf[sizeof buf - 1] = 0;
        fail("zeModuleCreate returned 0x%08x (%s); build log: %s", (unsigned)r, rname(r), buf);
    }
    if (log) ZE(zeModuleBuildLogDestroy(log));
    track(O_MODULE, m, NULL);
    return m;
}

static bool is_builtin(const char *name) {
    return !strcmp(name, "vector_add") || !strcmp(name, "fill_u32") || !strcmp(name, "scale_f32");
}

static ze_kernel_handle_t kernel_new(ze_module_handle_t m, const char *name) {
    ze_kernel_desc_t d = {ZE_STRUCTURE_TYPE_KERNEL_DESC, NULL, 0, name};
    ze_kernel_handle_t k = NULL;
    ZE(zeKernelCreate(m, &d, &k));
    track(O_KERNEL, k, NULL);
    uint32_t gs = is_builtin(name) ? GROUP : 1;
    ZE(zeKernelSetGroupSize(k, gs, 1, 1));
    return k;
}
static ze_kernel_handle_t kern(const char *name) { return kernel_new(G.mod, name); }

static void set_ptr_arg(ze_kernel_handle_t k, uint32_t i, const void *p) {
    ZE(zeKernelSetArgumentValue(k, i, sizeof(p), &p));
}

static void expect_kernel_name(ze_kernel_handle_t k, const char *want) {
    char buf[64] = "";
    size_t n = sizeof buf;
    ZE(zeKernelGetName(k, &n, buf));
    CHECK(!strcmp(buf, want), "zeKernelGetName(%p) = \"%s\", expected \"%s\"", (void *)k, buf, want);
}

/* --- events */
static ze_event_pool_handle_t pool_new(ze_context_handle_t ctx, uint32_t count, bool timestamps) {
    ze_event_pool_desc_t d = {ZE_STRUCTURE_TYPE_EVENT_POOL_DESC, NULL,
                              ZE_EVENT_POOL_FLAG_HOST_VISIBLE | (timestamps ? ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP : 0),
                              count};
    ze_event_pool_handle_t p = NULL;
    ze_device_handle_t dev = G.dev;
    ZE(zeEventPoolCreate(ctx, &d, 1, &dev, &p));
    track(O_POOL, p, NULL);
    note_handle(&G.pools, &G.npools, &G.cap_pools, p);
    return p;
}

static ze_event_handle_t ev_new(ze_event_pool_handle_t p, uint32_t index) {
    ze_event_desc_t d = {ZE_STRUCTURE_TYPE_EVENT_DESC, NULL, index, ZE_EVENT_SCOPE_FLAG_HOST, ZE_EVENT_SCOPE_FLAG_HOST};
    ze_event_handle_t e = NULL;
    ZE(zeEventCreate(p, &d, &e));
    track(O_EVENT, e, NULL);
    note_handle(&G.events, &G.nevents, &G.cap_events, e);
    return e;
}

/* A pool of n events, all created. */
static void events_new(ze_context_handle_t ctx, uint32_t n, bool timestamps, ze_event_handle_t *ev) {
    ze_event_pool_handle_t p = pool_new(ctx, n, timestamps);
    for (uint32_t i = 0; i < n; i++) ev[i] = ev_new(p, i);
}

static void wait_ev(ze_event_handle_t ev, const char *what) {
    ze_result_t r = zeEventHostSynchronize(ev, TIMEOUT_NS);
    if (r == ZE_RESULT_NOT_READY)
        fail("HANG: zeEventHostSynchronize(%s, event %p) not signalled after %d s", what, (void *)ev, TIMEOUT_S);
    if (r != ZE_RESULT_SUCCESS)
        fail("zeEventHostSynchronize(%s, event %p) returned 0x%08x (%s)", what, (void *)ev, (unsigned)r, rname(r));
}

static void expect_status(ze_event_handle_t ev, ze_result_t want, const char *what) {
    ze_result_t r = zeEventQueryStatus(ev);
    CHECK(r == want, "zeEventQueryStatus(%s, event %p) returned 0x%08x (%s), expected %s", what, (void *)ev,
          (unsigned)r, rname(r), rname(want));
}

static void wait_queue(ze_command_queue_handle_t q, const char *what) {
    ze_result_t r = zeCommandQueueSynchronize(q, TIMEOUT_NS);
    if (r == ZE_RESULT_NOT_READY)
        fail("HANG: zeCommandQueueSynchronize(%s, queue %p) not idle after %d s", what, (void *)q, TIMEOUT_S);
    if (r != ZE_RESULT_SUCCESS)
        fail("zeCommandQueueSynchronize(%s, queue %p) returned 0x%08x (%s)", what, (void *)q, (unsigned)r, rname(r));
}

static ze_fence_handle_t fence_new(ze_command_queue_handle_t q) {
    ze_fence_desc_t d = {ZE_STRUCTURE_TYPE_FENCE_DESC, NULL, 0};
    ze_fence_handle_t f = NULL;
    ZE(zeFenceCreate(q, &d, &f));
    track(O_FENCE, f, NULL);
    return f;
}

static void wait_fence(ze_fence_handle_t f, const char *what) {
    ze_result_t r = zeFenceHostSynchronize(f, TIMEOUT_NS);
    if (r == ZE_RESULT_NOT_READY)
        fail("HANG: zeFenceHostSynchronize(%s, fence %p) not signalled after %d s", what, (void *)f, TIMEOUT_S);
    if (r != ZE_RESULT_SUCCESS)
        fail("zeFenceHostSynchronize(%s, fence %p) returned 0x%08x (%s)", what, (void *)f, (unsigned)r, rname(r));
}

/* --- kernel timestamps (device ticks, masked to kernelTimestampValidBits) */
typedef struct {
    uint64_t start, end;
} span_t;

static uint64_t ticks_to_ns(uint64_t ticks) { return (uint64_t)((double)ticks * 1e9 / (double)G.hz); }

/* a - b in ticks, signed, modulo the timestamp width */
static int64_t ts_diff(uint64_t a, uint64_t b) {
    uint64_t d = (a - b) & G.kmask;
    if (d > G.kmask / 2) return -(int64_t)(G.kmask - d) - 1;
    return (int64_t)d;
}

static uint64_t span_ns(span_t s) { return ticks_to_ns((s.end - s.start) & G.kmask); }

static void check_duration(span_t s, uint64_t expect_ns, const char *what, void *ev) {
    if (!expect_ns) return;
    uint64_t got = span_ns(s), tol = 1 * US + expect_ns / 100;
    CHECK(got + tol >= expect_ns && got <= expect_ns + tol,
          "KTS: %s (event %p): kernel timestamp duration %" PRIu64 " ns, expected %" PRIu64 " ns +- %" PRIu64
          " (start %" PRIu64 ", end %" PRIu64 ")",
          what, ev, got, expect_ns, tol, s.start, s.end);
}

/* zeEventQueryKernelTimestamp on an app event known to be signalled; recorded for the checker.
 * expect_ns != 0: the duration must match the modelled kernel duration. */
static span_t kts(ze_event_handle_t ev, uint64_t expect_ns, const char *what) {
    ze_kernel_timestamp_result_t r;
    memset(&r, 0, sizeof r);
    ze_result_t res = zeEventQueryKernelTimestamp(ev, &r);
    if (res != ZE_RESULT_SUCCESS)
        fail("zeEventQueryKernelTimestamp(%s, event %p) returned 0x%08x (%s)", what, (void *)ev, (unsigned)res,
             rname(res));
    note_kts(ev, r.global.kernelStart, r.global.kernelEnd, false);
    span_t s = {r.global.kernelStart, r.global.kernelEnd};
    check_duration(s, expect_ns, what, ev);
    return s;
}

/* b must have started no earlier than a ended (a dependency the app declared). */
static void check_after(span_t a, span_t b, const char *what) {
    CHECK(ts_diff(b.start, a.end) >= 0,
          "ORDER: %s: start %" PRIu64 " is %" PRId64 " ticks before its predecessor's end %" PRIu64, what, b.start,
          -ts_diff(b.start, a.end), a.end);
}

/* --- data checks */
static void expect_f32(const char *what, const float *got, const float *want, size_t n) {
    for (size_t i = 0; i < n; i++)
        CHECK(got[i] == want[i], "DATA: %s: element %zu is %g, expected %g", what, i, (double)got[i], (double)want[i]);
}
static void expect_u32(const char *what, const uint32_t *got, uint32_t want, size_t n) {
    for (size_t i = 0; i < n; i++)
        CHECK(got[i] == want, "DATA: %s: element %zu is 0x%08x, expected 0x%08x", what, i, got[i], want);
}
static void expect_bytes(const char *what, const void *got, const void *want, size_t n) {
    const unsigned char *g = got, *w = want;
    for (size_t i = 0; i < n; i++)
        CHECK(g[i] == w[i], "DATA: %s: byte %zu is 0x%02x, expected 0x%02x", what, i, g[i], w[i]);
}
static void fill_bytes(void *p, size_t n, unsigned seed) {
    unsigned char *b = p;
    for (size_t i = 0; i < n; i++) b[i] = (unsigned char)(i * 7u + seed * 31u + 3u);
}

/* ================================================================================ lanes */
/* A lane is one command list plus, for regular lists, the queue it executes on. Appends go
 * through ap_* so the operations the app causes to execute are counted for "expected":
 * immediately on immediate lists, per execution on regular lists. */
typedef struct lane {
    const char *name;
    ze_context_handle_t ctx;
    ze_command_list_handle_t L;
    ze_command_queue_handle_t Q; /* regular lists */
    bool imm, io, closed;
    uint64_t cnt[OP_NCLASS]; /* regular lists: operations per execution */
    ze_event_handle_t sync_ev; /* immediate lists: the final-barrier event */
} lane_t;

#define W0 0, NULL
#define W1(e) 1, (ze_event_handle_t[]){(e)}
#define W2(a, b) 2, (ze_event_handle_t[]){(a), (b)}

static ze_command_queue_handle_t queue_new(ze_context_handle_t ctx, uint32_t ord, uint32_t idx, bool io,
                                           ze_command_queue_mode_t mode) {
    ze_command_queue_desc_t d = {ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC, NULL, ord, idx, io ? QUEUE_FLAG_IN_ORDER : 0,
                                 mode, ZE_COMMAND_QUEUE_PRIORITY_NORMAL};
    ze_command_queue_handle_t q = NULL;
    ZE(zeCommandQueueCreate(ctx, G.dev, &d, &q));
    track(O_QUEUE, q, NULL);
    return q;
}

/* Immediate list on engine (ord, idx), or regular list executed on shared_q or on a new queue
 * on (ord, idx). mode: of the immediate list / the new queue. */
static void lane_open(lane_t *ln, const char *name, ze_context_handle_t ctx, bool imm, bool io, uint32_t ord,
                      uint32_t idx, ze_command_queue_handle_t shared_q, ze_command_queue_mode_t mode) {
    memset(ln, 0, sizeof *ln);
    ln->name = name;
    ln->ctx = ctx;
    ln->imm = imm;
    ln->io = io;
    if (imm) {
        ze_command_queue_desc_t d = {ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC, NULL, ord, idx,
                                     io ? QUEUE_FLAG_IN_ORDER : 0, mode, ZE_COMMAND_QUEUE_PRIORITY_NORMAL};
        ZE(zeCommandListCreateImmediate(ctx, G.dev, &d, &ln->L));
        track(O_LIST, ln->L, NULL);
    } else {
        ln->Q = shared_q ? shared_q : queue_new(ctx, ord, idx, io, mode);
        ze_command_list_desc_t d = {ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC, NULL, ord, io ? LIST_FLAG_IN_ORDER : 0};
        ZE(zeCommandListCreate(ctx, G.dev, &d, &ln->L));
        track(O_LIST, ln->L, NULL);
    }
}

/* The scenario's main lane: compute engine 0, the scenario's order and kind. */
static void lane_std(lane_t *ln, const scen_t *S, const char *name) {
    lane_open(ln, name, G.ctx, S->immediate, S->in_order, G.compute_ord, 0, NULL, ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS);
}

static void count(lane_t *ln, int cls, uint64_t n) {
    if (ln->imm) atomic_fetch_add(&G.expected[cls], n);
    else ln->cnt[cls] += n;
}

/* Regular lists: close (once) and execute; immediate lists: nothing to do. */
static void lane_exec(lane_t *ln, ze_fence_handle_t fence) {
    if (ln->imm) return;
    if (!ln->closed) {
        ZE(zeCommandListClose(ln->L));
        ln->closed = true;
    }
    ZE(zeCommandQueueExecuteCommandLists(ln->Q, 1, &ln->L, fence));
    for (int c = 0; c < OP_NCLASS; c++) atomic_fetch_add(&G.expected[c], ln->cnt[c]);
}

static void lane_reset(lane_t *ln) {
    if (ln->imm) return;
    ZE(zeCommandListReset(ln->L));
    ln->closed = false;
    memset(ln->cnt, 0, sizeof ln->cnt);
}

static void ap_barrier(lane_t *ln, ze_event_handle_t sig, uint32_t nw, ze_event_handle_t *w) {
    ZE(zeCommandListAppendBarrier(ln->L, sig, nw, w));
    count(ln, OP_BARRIER, 1);
}

/* Waits until everything submitted on the lane completed: a queue sync for regular lists; for
 * immediate lists (no zeCommandListHostSynchronize in loader 1.8.12) a barrier signalling an app
 * event, waited on and host-reset. */
static void lane_finish(lane_t *ln) {
    if (!ln->imm) {
        wait_queue(ln->Q, ln->name);
        return;
    }
    if (!ln->sync_ev) events_new(ln->ctx, 1, false, &ln->sync_ev);
    ap_barrier(ln, ln->sync_ev, W0);
    wait_ev(ln->sync_ev, "final barrier");
    ZE(zeEventHostReset(ln->sync_ev));
}

static void ap_k(lane_t *ln, ze_kernel_handle_t k, uint32_t groups, ze_event_handle_t sig, uint32_t nw,
                 ze_event_handle_t *w) {
    ze_group_count_t g = {groups, 1, 1};
    ZE(zeCommandListAppendLaunchKernel(ln->L, k, &g, sig, nw, w));
    count(ln, OP_KERNEL, 1);
}

static void ap_vadd(lane_t *ln, ze_kernel_handle_t k, const float *a, const float *b, float *c, uint32_t n,
                    ze_event_handle_t sig, uint32_t nw, ze_event_handle_t *w) {
    set_ptr_arg(k, 0, a);
    set_ptr_arg(k, 1, b);
    set_ptr_arg(k, 2, c);
    ap_k(ln, k, n / GROUP, sig, nw, w);
}

static void set_fill_args(ze_kernel_handle_t k, uint32_t *p, uint32_t v) {
    set_ptr_arg(k, 0, p);
    ZE(zeKernelSetArgumentValue(k, 1, sizeof v, &v));
}

static void ap_scale(lane_t *ln, ze_kernel_handle_t k, float *x, float s, uint32_t n, ze_event_handle_t sig,
                     uint32_t nw, ze_event_handle_t *w) {
    set_ptr_arg(k, 0, x);
    ZE(zeKernelSetArgumentValue(k, 1, sizeof s, &s));
    ap_k(ln, k, n / GROUP, sig, nw, w);
}

static void ap_copy(lane_t *ln, void *dst, const void *src, size_t size, ze_event_handle_t sig, uint32_t nw,
                    ze_event_handle_t *w) {
    ZE(zeCommandListAppendMemoryCopy(ln->L, dst, src, size, sig, nw, w));
    count(ln, OP_COPY, 1);
}

static void ap_fill(lane_t *ln, void *ptr, const void *pattern, size_t psize, size_t size, ze_event_handle_t sig,
                    uint32_t nw, ze_event_handle_t *w) {
    ZE(zeCommandListAppendMemoryFill(ln->L, ptr, pattern, psize, size, sig, nw, w));
    count(ln, OP_FILL, 1);
}

/* ================================================================================ scenarios */

/* In scenario code, helper calls record their source line for failure messages. */
#define STEP(call) (step_line = __LINE__, call)
#define ap_k(...) STEP(ap_k(__VA_ARGS__))
#define ap_vadd(...) STEP(ap_vadd(__VA_ARGS__))
#define ap_scale(...) STEP(ap_scale(__VA_ARGS__))
#define ap_copy(...) STEP(ap_copy(__VA_ARGS__))
#define ap_fill(...) STEP(ap_fill(__VA_ARGS__))
#define ap_barrier(...) STEP(ap_barrier(__VA_ARGS__))
#define lane_open(...) STEP(lane_open(__VA_ARGS__))
#define lane_std(...) STEP(lane_std(__VA_ARGS__))
#define lane_exec(...) STEP(lane_exec(__VA_ARGS__))
#define lane_finish(...) STEP(lane_finish(__VA_ARGS__))
#define lane_reset(...) STEP(lane_reset(__VA_ARGS__))
#define wait_ev(...) STEP(wait_ev(__VA_ARGS__))
#define wait_queue(...) STEP(wait_queue(__VA_ARGS__))
#define wait_fence(...) STEP(wait_fence(__VA_ARGS__))
#define expect_status(...) STEP(expect_status(__VA_ARGS__))
#define kts(...) STEP(kts(__VA_ARGS__))
#define kern(...) STEP(kern(__VA_ARGS__))
#define kernel_new(...) STEP(kernel_new(__VA_ARGS__))
#define module_new(...) STEP(module_new(__VA_ARGS__))
#define events_new(...) STEP(events_new(__VA_ARGS__))
#define ZE_STEP(call) (step_line = __LINE__, ZE(call))

/* 1. No app events at all: uploads, 6 kernels, a download; one sync at the end. */
static void s_no_event(const scen_t *S) {
    lane_t ln;
    lane_std(&ln, S, "main");
    float *hA = hmem(N * 4), *hC = hmem(N * 4), *dA = dmem(N * 4), *dB = dmem(N * 4), *dC = dmem(N * 4);
    float want[N];
    for (uint32_t i = 0; i < N; i++) {
        hA[i] = (float)i;
        hC[i] = -1;
        want[i] = (float)i + 2.0f;
    }
    ze_kernel_handle_t k20 = kern("k20"), va = kern("vector_add");
    const float two = 2.0f;
    ap_copy(&ln, dA, hA, N * 4, NULL, W0);
    ap_fill(&ln, dB, &two, sizeof two, N * 4, NULL, W0);
    if (!S->in_order) ap_barrier(&ln, NULL, W0); /* uploads before the kernels */
    for (int i = 0; i < 5; i++) ap_k(&ln, k20, 1, NULL, W0);
    ap_vadd(&ln, va, dA, dB, dC, N, NULL, W0);
    if (!S->in_order) ap_barrier(&ln, NULL, W0); /* kernels before the download */
    ap_copy(&ln, hC, dC, N * 4, NULL, W0);
    lane_exec(&ln, NULL);
    lane_finish(&ln);
    expect_f32("hC = hA + 2", hC, want, N);
}

/* 2. Each of 5 kernels signals its own timestamp event; the app waits for each and reads its
 * kernel timestamps. Out of order: some kernels depend on others through these events. */
static void s_own_event(const scen_t *S) {
    static const char *const names[5] = {"k10", "k20", "k30", "k40", "k50"};
    static const uint64_t ns[5] = {10 * US, 20 * US, 30 * US, 40 * US, 50 * US};
    static const int dep[5][2] = {{-1, -1}, {0, -1}, {-1, -1}, {1, 2}, {3, -1}}; /* out of order */
    lane_t ln;
    lane_std(&ln, S, "main");
    ze_event_handle_t ev[5];
    events_new(G.ctx, 5, true, ev);
    for (int i = 0; i < 5; i++) {
        ze_event_handle_t w[2];
        uint32_t nw = 0;
        for (int j = 0; j < 2 && !S->in_order; j++)
            if (dep[i][j] >= 0) w[nw++] = ev[dep[i][j]];
        ap_k(&ln, kern(names[i]), 1, ev[i], nw, nw ? w : NULL);
    }
    lane_exec(&ln, NULL);
    span_t t[5];
    for (int i = 0; i < 5; i++) {
        wait_ev(ev[i], names[i]);
        t[i] = kts(ev[i], ns[i], names[i]);
    }
    for (int i = 1; i < 5; i++) {
        char what[64];
        if (S->in_order) {
            snprintf(what, sizeof what, "in-order %s after %s", names[i], names[i - 1]);
            check_after(t[i - 1], t[i], what);
        }
        for (int j = 0; j < 2 && !S->in_order; j++)
            if (dep[i][j] >= 0) {
                snprintf(what, sizeof what, "%s waits for %s", names[i], names[dep[i][j]]);
                check_after(t[dep[i][j]], t[i], what);
            }
    }
    lane_finish(&ln);
}

/* 3. One app event signalled by 4 appends; waited on at the end. */
static void s_shared_event(const scen_t *S) {
    static const char *const names[4] = {"k20", "k30", "k40", "k50"};
    lane_t ln;
    lane_std(&ln, S, "main");
    ze_event_handle_t ev;
    events_new(G.ctx, 1, false, &ev);
    for (int i = 0; i < 4; i++) ap_k(&ln, kern(names[i]), 1, ev, W0);
    lane_exec(&ln, NULL);
    lane_finish(&ln);
    wait_ev(ev, "shared event");
    expect_status(ev, ZE_RESULT_SUCCESS, "shared event after the final sync");
}

/* 4. An event signalled by a kernel in build phase 1, synced, host-reset, then signalled by a
 * different kernel in build phase 2 (regular: list reset and rebuilt). */
static void s_event_reuse_phases(const scen_t *S) {
    lane_t ln;
    lane_std(&ln, S, "main");
    ze_event_handle_t ev;
    events_new(G.ctx, 1, true, &ev);
    ze_kernel_handle_t k10 = kern("k10"), k20 = kern("k20"), k50 = kern("k50");

    ap_k(&ln, k10, 1, NULL, W0);
    ap_k(&ln, k20, 1, ev, W0);
    lane_exec(&ln, NULL);
    wait_ev(ev, "phase 1");
    kts(ev, 20 * US, "phase 1: k20");
    lane_finish(&ln);
    ZE_STEP(zeEventHostReset(ev));
    expect_status(ev, ZE_RESULT_NOT_READY, "after host reset");

    lane_reset(&ln);
    ap_k(&ln, k50, 1, ev, W0);
    ap_k(&ln, k10, 1, NULL, W0);
    lane_exec(&ln, NULL);
    wait_ev(ev, "phase 2");
    kts(ev, 50 * US, "phase 2: k50");
    lane_finish(&ln);
}

/* 4b. Regular lists: executed once (its first execution skips the resets of zecoll's events),
 * again (they must be reset now), reset and recorded anew (events back to the pool, taken again),
 * executed once and again; the app's event read after each. */
static void s_reexec_phases(const scen_t *S) {
    lane_t ln;
    lane_std(&ln, S, "main");
    ze_event_handle_t ev;
    events_new(G.ctx, 1, true, &ev);
    ze_kernel_handle_t k10 = kern("k10"), k20 = kern("k20"), k50 = kern("k50");
    for (int phase = 0; phase < 2; phase++) {
        if (phase) lane_reset(&ln);
        ap_k(&ln, phase ? k50 : k10, 1, NULL, W0);
        ap_k(&ln, phase ? k10 : k20, 1, ev, W0);
        ap_k(&ln, k20, 1, NULL, W0);
        for (int r = 0; r < 2; r++) {
            lane_exec(&ln, NULL);
            wait_ev(ev, "execution");
            kts(ev, (phase ? 10 : 20) * US, "signalling kernel");
            lane_finish(&ln);
            ZE_STEP(zeEventHostReset(ev));
        }
    }
}

/* 5. The same work 3 times (regular: one list executed 3 times); the app host-resets its event
 * between rounds and waits on it after each. */
static void s_host_reset(const scen_t *S) {
    lane_t ln;
    lane_std(&ln, S, "main");
    ze_event_handle_t ev;
    events_new(G.ctx, 1, true, &ev);
    ze_kernel_handle_t k10 = kern("k10"), k30 = kern("k30");
    for (int r = 0; r < 3; r++) {
        if (r) {
            ZE_STEP(zeEventHostReset(ev));
            expect_status(ev, ZE_RESULT_NOT_READY, "after host reset");
        }
        if (S->immediate || r == 0) {
            ap_k(&ln, k10, 1, NULL, W0);
            ap_k(&ln, k30, 1, ev, W0);
        }
        lane_exec(&ln, NULL);
        wait_ev(ev, "round");
        kts(ev, 30 * US, "k30");
    }
    lane_finish(&ln);
}

/* 6. A regular list of 3 operations executed 20 times without rebuild, fence sync after each. */
static void s_exec_m(const scen_t *S) {
    enum { M = 20 };
    lane_t ln;
    lane_std(&ln, S, "main");
    ze_fence_handle_t fence = fence_new(ln.Q);
    uint32_t *in = hmem(N * 4), *out = hmem(N * 4), *dF = dmem(N * 4);
    const uint32_t pat = 0x01020304u;
    ap_k(&ln, kern("k10"), 1, NULL, W0);
    ap_copy(&ln, out, in, N * 4, NULL, W0);
    ap_fill(&ln, dF, &pat, sizeof pat, N * 4, NULL, W0);
    for (uint32_t m = 0; m < M; m++) {
        for (uint32_t i = 0; i < N; i++) {
            in[i] = m * N + i;
            out[i] = 0xdeadbeefu;
        }
        lane_exec(&ln, fence);
        wait_fence(fence, "execution");
        for (uint32_t i = 0; i < N; i++)
            CHECK(out[i] == m * N + i, "DATA: execution %u: out[%u] = %u, expected %u", m, i, out[i], m * N + i);
        ZE_STEP(zeFenceReset(fence));
    }
    lane_finish(&ln);
}

/* 7. A regular list executed 16 times back to back with no host sync in between, then one queue
 * sync; it signals an app event the app looks at only at the end. scale_f32 doubles x on each
 * execution, so the result proves every execution ran exactly once. */
static void s_inflight_m(const scen_t *S) {
    enum { M = 16 };
    lane_t ln;
    lane_std(&ln, S, "main");
    ze_event_handle_t ev;
    events_new(G.ctx, 1, true, &ev);
    float *x = hmem(N * 4), want[N];
    for (uint32_t i = 0; i < N; i++) {
        x[i] = (float)(1 + i % 4);
        want[i] = x[i] * 65536.0f;
    }
    ap_k(&ln, kern("k10"), 1, NULL, W0);
    ap_scale(&ln, kern("scale_f32"), x, 2.0f, N, ev, W0);
    for (int m = 0; m < M; m++) lane_exec(&ln, NULL);
    wait_queue(ln.Q, "after 16 executions");
    wait_ev(ev, "list event");
    kts(ev, NS_SCALE, "scale_f32 (last execution)");
    expect_f32("x * 2^16", x, want, N);
}

/* 8. Lists A -> B -> C chained only by events (B waits on A's, C on B's), on three engines;
 * submitted in reverse order; the app synchronizes only on C's event. */
static void s_cross_list_chain(const scen_t *S) {
    lane_t A, B, C;
    uint32_t nc = G.ncompute;
    lane_open(&A, "A", G.ctx, S->immediate, S->in_order, G.compute_ord, 0, NULL, ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS);
    lane_open(&B, "B", G.ctx, S->immediate, S->in_order, G.compute_ord, 1 % nc, NULL,
              ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS);
    lane_open(&C, "C", G.ctx, S->immediate, S->in_order, G.compute_ord, 2 % nc, NULL,
              ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS);
    ze_event_handle_t eA, eB, eC, ev[3];
    events_new(G.ctx, 3, true, ev);
    eA = ev[0], eB = ev[1], eC = ev[2];
    float *hA = hmem(N * 4), *hC = hmem(N * 4), *dA = dmem(N * 4), *dB = dmem(N * 4), want[N];
    for (uint32_t i = 0; i < N; i++) {
        hA[i] = (float)i * 0.5f;
        hC[i] = -1;
        want[i] = (float)i;
    }
    ze_kernel_handle_t k10 = kern("k10"), k20 = kern("k20"), va = kern("vector_add");
    /* built and submitted C first: each list waits on work not yet submitted */
    ap_k(&C, k10, 1, NULL, W0);
    ap_copy(&C, hC, dB, N * 4, eC, W1(eB));
    lane_exec(&C, NULL);
    ap_k(&B, k10, 1, NULL, W0);
    ap_vadd(&B, va, dA, dA, dB, N, eB, W1(eA));
    lane_exec(&B, NULL);
    ap_k(&A, k20, 1, NULL, W0);
    ap_copy(&A, dA, hA, N * 4, eA, W0);
    lane_exec(&A, NULL);

    wait_ev(eC, "C's event");
    expect_f32("hC = 2 * hA", hC, want, N);
    span_t ta = kts(eA, copy_ns(N * 4), "A: upload"), tb = kts(eB, NS_VADD, "B: vector_add"),
           tc = kts(eC, copy_ns(N * 4), "C: download");
    check_after(ta, tb, "B waits for A");
    check_after(tb, tc, "C waits for B");
    lane_finish(&A);
    lane_finish(&B);
    lane_finish(&C);
}

/* 9. Everything on the copy-only engine group: H2D, D2D, fill, D2H, app events on some;
 * regular lists are executed twice. */
static void s_copy_only(const scen_t *S) {
    CHECK(G.have_copy, "the device has no copy-only queue group");
    lane_t ln;
    lane_open(&ln, "copy", G.ctx, S->immediate, S->in_order, G.copy_ord, 0, NULL, ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS);
    ze_event_handle_t ev[4];
    events_new(G.ctx, 4, true, ev);
    uint32_t *hA = hmem(N * 4), *hB = hmem(N * 4), *hC = hmem(N * 4), *hD = hmem(N * 4);
    void *dA = dmem(N * 4), *dB = dmem(N * 4), *dC = dmem(N * 4), *dD = dmem(N * 4);
    const uint32_t pat = 0x11223344u;
    const uint16_t pat2 = 0xbeefu;
    int rounds = S->immediate ? 1 : 2;
    for (int r = 0; r < rounds; r++) {
        for (uint32_t i = 0; i < N; i++) {
            hA[i] = (uint32_t)r * N + i;
            hB[i] = hC[i] = hD[i] = 0;
        }
        if (r == 0) {
            ap_copy(&ln, dA, hA, N * 4, ev[0], W0);                 /* H2D */
            ap_copy(&ln, dB, dA, N * 4, ev[1], W1(ev[0]));          /* D2D */
            ap_fill(&ln, dC, &pat, sizeof pat, N * 4, ev[2], W0);   /* fill, 4-byte pattern */
            ap_fill(&ln, dD, &pat2, sizeof pat2, N * 4, ev[3], W0); /* fill, 2-byte pattern */
            ap_copy(&ln, hB, dB, N * 4, NULL, W1(ev[1]));           /* D2H */
            ap_copy(&ln, hC, dC, N * 4, NULL, W1(ev[2]));           /* D2H */
            ap_copy(&ln, hD, dD, N * 4, NULL, W1(ev[3]));           /* D2H */
        } else {
            for (int i = 0; i < 4; i++) ZE_STEP(zeEventHostReset(ev[i]));
        }
        lane_exec(&ln, NULL);
        wait_ev(ev[1], "D2D");
        kts(ev[1], copy_ns(N * 4), "D2D copy");
        lane_finish(&ln);
        kts(ev[0], copy_ns(N * 4), "H2D copy");
        kts(ev[2], copy_ns(N * 4), "fill (4-byte pattern)");
        kts(ev[3], copy_ns(N * 4), "fill (2-byte pattern)");
        for (uint32_t i = 0; i < N; i++)
            CHECK(hB[i] == (uint32_t)r * N + i, "DATA: round %d: hB[%u] = %u, expected %u", r, i, hB[i],
                  (uint32_t)r * N + i);
        expect_u32("buffer filled with a 4-byte pattern", hC, pat, N);
        expect_u32("buffer filled with a 2-byte pattern", hD, 0xbeefbeefu, N);
    }
}

/* 10. 80 kernels in one list (more than 64), every tenth with its own event. */
static void s_many_appends(const scen_t *S) {
    lane_t ln;
    lane_std(&ln, S, "main");
    ze_event_handle_t ev[8];
    events_new(G.ctx, 8, true, ev);
    float *a = hmem(N * 4), *b = hmem(N * 4), *c = hmem(N * 4), want[N];
    for (uint32_t i = 0; i < N; i++) {
        a[i] = (float)i;
        b[i] = 3.0f;
        c[i] = 0;
        want[i] = (float)i + 3.0f;
    }
    ze_kernel_handle_t k5 = kern("k5"), va = kern("vector_add");
    for (int i = 0; i < 80; i++) {
        if (i == 40) ap_vadd(&ln, va, a, b, c, N, NULL, W0);
        else ap_k(&ln, k5, 1, i % 10 == 9 ? ev[i / 10] : NULL, W0);
    }
    lane_exec(&ln, NULL);
    lane_finish(&ln);
    span_t t[8];
    for (int j = 0; j < 8; j++) {
        wait_ev(ev[j], "k5");
        t[j] = kts(ev[j], 5 * US, "k5");
        if (S->in_order && j) check_after(t[j - 1], t[j], "in-order k5");
    }
    expect_f32("vector_add", c, want, N);
}

/* 11./12. Threads. */
struct thr {
    const scen_t *S;
    unsigned t;
    pthread_barrier_t *bar;
    ze_command_queue_handle_t q; /* threads_shared, regular */
};

static void set_vadd_inputs(float *a, float *b, float *c, float *want, unsigned t, unsigned r) {
    for (uint32_t i = 0; i < N; i++) {
        a[i] = (float)(t * 10000 + r * 1000 + i % 512);
        b[i] = (float)(i % 7);
        c[i] = -1;
        want[i] = a[i] + b[i];
    }
}

/* Each thread: its own list (immediate, or regular on its own queue), 20 kernels. */
static void *thr_own(void *arg) {
    struct thr *T = arg;
    const scen_t *S = T->S;
    lane_t ln;
    lane_open(&ln, "thread", G.ctx, S->immediate, S->in_order, G.compute_ord, T->t % G.ncompute, NULL,
              ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS);
    ze_kernel_handle_t k5 = kern("k5"), va = kern("vector_add");
    ze_event_handle_t ev;
    events_new(G.ctx, 1, true, &ev);
    float *a = mem_shared(G.ctx, N * 4), *b = mem_shared(G.ctx, N * 4), *c = mem_shared(G.ctx, N * 4);
    float *want = malloc(N * sizeof(float));
    CHECK(want, "out of memory");
    set_vadd_inputs(a, b, c, want, T->t, 0);
    pthread_barrier_wait(T->bar);
    for (int i = 0; i < 19; i++) ap_k(&ln, k5, 1, NULL, W0);
    ap_vadd(&ln, va, a, b, c, N, ev, W0);
    lane_exec(&ln, NULL);
    wait_ev(ev, "thread's vector_add");
    kts(ev, NS_VADD, "thread's vector_add");
    lane_finish(&ln);
    expect_f32("thread's vector_add", c, want, N);
    free(want);
    return NULL;
}

/* Regular: each thread executes its own list 3 times on ONE shared queue; immediate: each thread
 * its own immediate list, all on compute engine 0. */
static void *thr_shared(void *arg) {
    struct thr *T = arg;
    const scen_t *S = T->S;
    lane_t ln;
    lane_open(&ln, "thread", G.ctx, S->immediate, S->in_order, G.compute_ord, 0, T->q,
              ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS);
    ze_kernel_handle_t k5 = kern("k5"), va = kern("vector_add");
    float *a = hmem(N * 4), *b = hmem(N * 4), *c = hmem(N * 4), *want = malloc(N * sizeof(float));
    CHECK(want, "out of memory");
    if (S->immediate) {
        ze_event_handle_t ev;
        events_new(G.ctx, 1, true, &ev);
        set_vadd_inputs(a, b, c, want, T->t, 0);
        pthread_barrier_wait(T->bar);
        for (int i = 0; i < 19; i++) ap_k(&ln, k5, 1, NULL, W0);
        ap_vadd(&ln, va, a, b, c, N, ev, W0);
        wait_ev(ev, "thread's vector_add");
        kts(ev, NS_VADD, "thread's vector_add");
        lane_finish(&ln);
        expect_f32("thread's vector_add", c, want, N);
    } else {
        ze_fence_handle_t fence = fence_new(T->q);
        for (int i = 0; i < 4; i++) ap_k(&ln, k5, 1, NULL, W0);
        ap_vadd(&ln, va, a, b, c, N, NULL, W0);
        pthread_barrier_wait(T->bar);
        for (unsigned r = 0; r < 3; r++) {
            set_vadd_inputs(a, b, c, want, T->t, r);
            lane_exec(&ln, fence);
            wait_fence(fence, "thread's execution");
            expect_f32("thread's vector_add", c, want, N);
            ZE_STEP(zeFenceReset(fence));
        }
    }
    free(want);
    return NULL;
}

static void run_threads(const scen_t *S, void *(*fn)(void *), ze_command_queue_handle_t q) {
    unsigned n = G.nthreads;
    pthread_t th[MAX_THREADS];
    struct thr T[MAX_THREADS];
    pthread_barrier_t bar;
    pthread_barrier_init(&bar, NULL, n);
    for (unsigned t = 0; t < n; t++) {
        T[t] = (struct thr){S, t, &bar, q};
        CHECK(pthread_create(&th[t], NULL, fn, &T[t]) == 0, "pthread_create failed");
    }
    for (unsigned t = 0; t < n; t++) pthread_join(th[t], NULL);
    pthread_barrier_destroy(&bar);
}

static void s_threads_own(const scen_t *S) { run_threads(S, thr_own, NULL); }

static void s_threads_shared(const scen_t *S) {
    ze_command_queue_handle_t q = NULL;
    if (!S->immediate) {
        q = queue_new(G.ctx, G.compute_ord, 0, S->in_order, ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS);
    }
    run_threads(S, thr_shared, q);
    if (q) wait_queue(q, "shared queue");
}

/* 13. Work in a second context, synced; the context is destroyed BEFORE its lists, queue,
 * events, pool, kernels and module (as libomptarget does at exit); then a new context works. */
static void ctx_work(ze_context_handle_t c, const scen_t *S, const char *kname, uint64_t kns) {
    ze_module_handle_t m = module_new(c, MODULE_TEXT);
    ze_kernel_handle_t k = kernel_new(m, kname), va = kernel_new(m, "vector_add");
    lane_t ln;
    lane_open(&ln, "ctx", c, S->immediate, S->in_order, G.compute_ord, 0, NULL, ZE_COMMAND_QUEUE_MODE_ASYNCHRONOUS);
    ze_event_handle_t ev[2];
    events_new(c, 2, true, ev);
    float *a = mem_host(c, N * 4), *b = mem_host(c, N * 4), *cc = mem_host(c, N * 4), want[N];
    set_vadd_inputs(a, b, cc, want, 1, 0);
    ap_k(&ln, k, 1, ev[0], W0);
    ap_vadd(&ln, va, a, b, cc, N, ev[1], W0);
    lane_exec(&ln, NULL);
    wait_ev(ev[0], kname);
    wait_ev(ev[1], "vector_add");
    kts(ev[0], kns, kname);
    kts(ev[1], NS_VADD, "vector_add");
    lane_finish(&ln);
    expect_f32("vector_add", cc, want, N);
    mem_free(c, a);
    mem_free(c, b);
    mem_free(c, cc);
}

static void s_ctx_destroy_first(const scen_t *S) {
    size_t mark = track_mark();
    ze_context_handle_t c2 = ctx_new();
    ctx_work(c2, S, "k20", 20 * US);
    untrack(c2);
    ZE_STEP(zeContextDestroy(c2));
    printf("context %p destroyed before its lists, queue, events, pool, kernels and module\n", (void *)c2);
    destroy_from(mark);

    ze_context_handle_t c3 = ctx_new();
    ctx_work(c3, S, "k10", 10 * US);
}

/* 14. Kernel X launched, synced and destroyed; kernel Y from another module created (likely at
 * X's recycled address) and launched; the timestamps tell the two apart. */
static void s_kernel_reuse(const scen_t *S) {
    lane_t ln;
    lane_std(&ln, S, "main");
    ze_event_handle_t ev;
    events_new(G.ctx, 1, true, &ev);

    ze_module_handle_t mx = module_new(G.ctx, "ZESIM-MODULE\nkernel kx args=0 ns=10000 ns_per_item=0\n");
    ze_module_handle_t my = module_new(G.ctx, "ZESIM-MODULE\nkernel ky args=0 ns=30000 ns_per_item=0\n");
    ze_kernel_handle_t kx = kernel_new(mx, "kx");
    expect_kernel_name(kx, "kx");
    ap_k(&ln, kx, 1, ev, W0);
    lane_exec(&ln, NULL);
    wait_ev(ev, "kx");
    kts(ev, 10 * US, "kx");
    lane_finish(&ln);
    lane_reset(&ln);
    ZE_STEP(zeEventHostReset(ev));
    void *old_k = kx;
    untrack(kx);
    ZE_STEP(zeKernelDestroy(kx));
    /* created right after X's destruction, the allocator likely hands out X's address again;
     * a few more tries (destroyed unused) make that near certain */
    ze_kernel_handle_t ky = NULL, spare[8];
    int nspare = 0;
    for (;;) {
        ky = kernel_new(my, "ky");
        if ((void *)ky == old_k || nspare == 8) break;
        spare[nspare++] = ky;
    }
    for (int i = 0; i < nspare; i++) {
        untrack(spare[i]);
        ZE_STEP(zeKernelDestroy(spare[i]));
    }
    printf("kernel handle %s (X %p, Y %p, %d spare)\n", (void *)ky == old_k ? "reused" : "not reused", old_k,
           (void *)ky, nspare);
    expect_kernel_name(ky, "ky");
    ap_k(&ln, ky, 1, ev, W0);
    lane_exec(&ln, NULL);
    wait_ev(ev, "ky");
    kts(ev, 30 * US, "ky");
    lane_finish(&ln);
}

/* --- extras */

/* Plain, cooperative, indirect and multiple-indirect launches on an immediate list. */
static void s_launch_kinds(const scen_t *S) {
    lane_t ln;
    lane_std(&ln, S, "main");
    ze_event_handle_t ev[6];
    events_new(G.ctx, 6, true, ev);
    uint32_t *p[4];
    for (int i = 0; i < 4; i++) {
        p[i] = hmem(N * 4);
        memset(p[i], 0, N * 4);
    }
    ze_kernel_handle_t kf[4];
    for (int i = 0; i < 4; i++) kf[i] = kern("fill_u32");

    /* plain */
    ap_k(&ln, kern("k20"), 1, ev[0], W0);
    /* cooperative */
    set_fill_args(kf[0], p[0], 7);
    ze_group_count_t g = {N / GROUP, 1, 1};
    ZE_STEP(zeCommandListAppendLaunchCooperativeKernel(ln.L, kf[0], &g, ev[1], W0));
    count(&ln, OP_KERNEL, 1);
    /* indirect: the group count is read from device memory when the kernel runs */
    struct args_blk {
        uint32_t count;
        uint32_t pad[3];
        ze_group_count_t one;
        ze_group_count_t two[2];
    } *h = hmem(sizeof *h), *d = dmem(sizeof *h);
    h->count = 2;
    h->one = g;
    h->two[0] = h->two[1] = g;
    ap_copy(&ln, d, h, sizeof *h, ev[2], W0);
    set_fill_args(kf[1], p[1], 8);
    ZE_STEP(zeCommandListAppendLaunchKernelIndirect(ln.L, kf[1], &d->one, ev[3], W1(ev[2])));
    count(&ln, OP_KERNEL, 1);
    /* multiple kernels, indirect: count buffer = 2 */
    set_fill_args(kf[2], p[2], 9);
    set_fill_args(kf[3], p[3], 10);
    ze_kernel_handle_t two[2] = {kf[2], kf[3]};
    ZE_STEP(zeCommandListAppendLaunchMultipleKernelsIndirect(ln.L, 2, two, &d->count, d->two, ev[4], W1(ev[2])));
    count(&ln, OP_KERNEL, 2);
    lane_finish(&ln);

    kts(ev[0], 20 * US, "plain k20");
    kts(ev[1], NS_FILL, "cooperative fill_u32");
    kts(ev[2], copy_ns(sizeof *h), "upload of the launch arguments");
    kts(ev[3], NS_FILL, "indirect fill_u32");
    wait_ev(ev[4], "multiple indirect");
    /* one event for the whole launch: it spans both kernels, which run one after the other */
    kts(ev[4], 2 * NS_FILL, "multiple indirect (the event spans both kernels)");
    for (int i = 0; i < 4; i++) {
        char what[64];
        snprintf(what, sizeof what, "fill_u32 #%d", i);
        expect_u32(what, p[i], 7u + (uint32_t)i, N);
    }
}

/* Every transfer kind: H2D, D2H, D2D, H2H, shared->device, malloc->device, region copy, copy from
 * another context, fill on device memory. */
static void s_transfers(const scen_t *S) {
    enum { B = 4096, RW = 64, RH = 16, SP = 128 };
    lane_t ln;
    lane_std(&ln, S, "main");
    ze_context_handle_t c2 = ctx_new();
    unsigned char *hA = hmem(B), *hB = hmem(B), *sS = mem_shared(G.ctx, B), *mM = malloc(B), *hX = mem_host(c2, B);
    unsigned char *hR = hmem(SP * RH);
    CHECK(mM, "out of memory");
    fill_bytes(hA, B, 1);
    fill_bytes(sS, B, 2);
    fill_bytes(mM, B, 3);
    fill_bytes(hX, B, 4);
    fill_bytes(hR, SP * RH, 5);
    memset(hB, 0, B);
    void *dA = dmem(B), *dA2 = dmem(B), *dS = dmem(B), *dM = dmem(B), *dR = dmem(RW * RH), *dX = dmem(B), *dF = dmem(B);
    unsigned char *oA = hmem(B), *oS = hmem(B), *oM = hmem(B), *oR = hmem(RW * RH), *oX = hmem(B), *oF = hmem(B);
    const uint64_t pat = 0x0123456789abcdefull;

    ap_copy(&ln, dA, hA, B, NULL, W0);  /* H2D */
    ap_copy(&ln, hB, hA, B, NULL, W0);  /* H2H */
    ap_copy(&ln, dS, sS, B, NULL, W0);  /* shared -> device */
    ap_copy(&ln, dM, mM, B, NULL, W0);  /* malloc -> device */
    ze_copy_region_t dr = {0, 0, 0, RW, RH, 1}, sr = {32, 0, 0, RW, RH, 1};
    ZE_STEP(zeCommandListAppendMemoryCopyRegion(ln.L, dR, &dr, RW, 0, hR, &sr, SP, 0, NULL, W0));
    count(&ln, OP_COPY, 1);
    ZE_STEP(zeCommandListAppendMemoryCopyFromContext(ln.L, dX, c2, hX, B, NULL, W0));
    count(&ln, OP_COPY, 1);
    ap_fill(&ln, dF, &pat, sizeof pat, B, NULL, W0);
    ap_barrier(&ln, NULL, W0);
    ap_copy(&ln, dA2, dA, B, NULL, W0); /* D2D */
    ap_barrier(&ln, NULL, W0);
    ap_copy(&ln, oA, dA2, B, NULL, W0); /* D2H */
    ap_copy(&ln, oS, dS, B, NULL, W0);
    ap_copy(&ln, oM, dM, B, NULL, W0);
    ap_copy(&ln, oR, dR, RW * RH, NULL, W0);
    ap_copy(&ln, oX, dX, B, NULL, W0);
    ap_copy(&ln, oF, dF, B, NULL, W0);
    lane_exec(&ln, NULL);
    lane_finish(&ln);

    expect_bytes("H2D, D2D, D2H", oA, hA, B);
    expect_bytes("H2H", hB, hA, B);
    expect_bytes("shared -> device", oS, sS, B);
    expect_bytes("malloc -> device", oM, mM, B);
    for (int y = 0; y < RH; y++) expect_bytes("region copy", oR + y * RW, hR + y * SP + 32, RW);
    expect_bytes("copy from context", oX, hX, B);
    for (int i = 0; i < B; i += 8) expect_bytes("fill", oF + i, &pat, 8);
    free(mM);
}

/* Image from memory, image to image, image region, image to memory. */
static void s_images(const scen_t *S) {
    enum { W = 16, H = 8 };
    lane_t ln;
    lane_std(&ln, S, "main");
    ze_image_desc_t d = {ZE_STRUCTURE_TYPE_IMAGE_DESC,
                         NULL,
                         ZE_IMAGE_FLAG_KERNEL_WRITE,
                         ZE_IMAGE_TYPE_2D,
                         {ZE_IMAGE_FORMAT_LAYOUT_8_8_8_8, ZE_IMAGE_FORMAT_TYPE_UINT, ZE_IMAGE_FORMAT_SWIZZLE_R,
                          ZE_IMAGE_FORMAT_SWIZZLE_G, ZE_IMAGE_FORMAT_SWIZZLE_B, ZE_IMAGE_FORMAT_SWIZZLE_A},
                         W,
                         H,
                         1,
                         0,
                         0};
    ze_image_handle_t img[3];
    for (int i = 0; i < 3; i++) {
        ZE_STEP(zeImageCreate(G.ctx, G.dev, &d, &img[i]));
        track(O_IMAGE, img[i], NULL);
    }
    unsigned char *src = hmem(W * H * 4), *dst = hmem(W * H * 4), want[W * H * 4];
    fill_bytes(src, W * H * 4, 9);
    memset(dst, 0xee, W * H * 4);
    ze_event_handle_t ev[4];
    events_new(G.ctx, 4, false, ev);
    ze_image_region_t sr = {4, 2, 0, 8, 4, 1}, dr = {0, 0, 0, 8, 4, 1};
    ZE_STEP(zeCommandListAppendImageCopyFromMemory(ln.L, img[0], src, NULL, ev[0], W0));
    ZE_STEP(zeCommandListAppendImageCopy(ln.L, img[1], img[0], ev[1], W1(ev[0])));
    ZE_STEP(zeCommandListAppendImageCopyRegion(ln.L, img[2], img[1], &dr, &sr, ev[2], W1(ev[1])));
    ZE_STEP(zeCommandListAppendImageCopyToMemory(ln.L, dst, img[2], NULL, ev[3], W1(ev[2])));
    count(&ln, OP_IMAGE, 4);
    lane_exec(&ln, NULL);
    wait_ev(ev[3], "image to memory");
    lane_finish(&ln);
    memset(want, 0, sizeof want); /* new images are zero in zesim */
    for (int y = 0; y < 4; y++) memcpy(want + y * W * 4, src + ((y + 2) * W + 4) * 4, 8 * 4);
    expect_bytes("image round trip", dst, want, sizeof want);
}

/* 4 independent 10 ms kernels on an out-of-order immediate list overlap on the device: global
 * timestamps written before them and after a barrier behind them are < 4 x 10 ms apart. The
 * kernels are long so that even a slow host (sanitizer build, 2 loaded cores: 2 ms kernels were
 * not enough once in CI) submits all four before the first one ends. */
static void s_ooo_overlap(const scen_t *S) {
    lane_t ln;
    lane_std(&ln, S, "main");
    ze_kernel_handle_t k = kern("k10ms");
    uint64_t *gts = hmem(2 * sizeof(uint64_t));
    gts[0] = gts[1] = 0;
    uint64_t t0 = now_ns();
    ZE_STEP(zeCommandListAppendWriteGlobalTimestamp(ln.L, &gts[0], NULL, W0));
    for (int i = 0; i < 4; i++) ap_k(&ln, k, 1, NULL, W0);
    ap_barrier(&ln, NULL, W0);
    ZE_STEP(zeCommandListAppendWriteGlobalTimestamp(ln.L, &gts[1], NULL, W0));
    lane_finish(&ln);
    uint64_t el = now_ns() - t0, dev = ticks_to_ns((gts[1] - gts[0]) & G.gmask);
    printf("4 x 10 ms kernels: %.1f us on the device, %.1f us wall time\n", (double)dev / 1e3, (double)el / 1e3);
    CHECK(dev >= 10000 * US && dev < 39900 * US,
          "OVERLAP: global timestamps around 4 independent 10 ms kernels are %.1f us apart (%" PRIu64 " -> %" PRIu64
          "): expected 10000..39900 us (they overlap)",
          (double)dev / 1e3, gts[0], gts[1]);
}

/* zeCommandListAppendQueryKernelTimestamps by the app itself, on a compute immediate list. */
static void s_user_qkt_compute(const scen_t *S) {
    lane_t ln;
    lane_std(&ln, S, "main");
    ze_event_handle_t ev, evq;
    events_new(G.ctx, 1, true, &ev);
    events_new(G.ctx, 1, false, &evq);
    ze_kernel_timestamp_result_t *res = hmem(sizeof *res);
    memset(res, 0, sizeof *res);
    ap_k(&ln, kern("k20"), 1, ev, W0);
    wait_ev(ev, "k20");
    span_t h = kts(ev, 20 * US, "k20 (host query)");
    ZE_STEP(zeCommandListAppendQueryKernelTimestamps(ln.L, 1, &ev, res, NULL, evq, W0));
    wait_ev(evq, "query kernel timestamps");
    note_kts(ev, res->global.kernelStart, res->global.kernelEnd, true);
    span_t q = {res->global.kernelStart, res->global.kernelEnd};
    check_duration(q, 20 * US, "k20 (device query)", ev);
    CHECK(q.start == h.start && q.end == h.end,
          "KTS: device query [%" PRIu64 ", %" PRIu64 "] differs from host query [%" PRIu64 ", %" PRIu64 "]", q.start,
          q.end, h.start, h.end);
    lane_finish(&ln);
}

/* A synchronous-mode immediate list and a synchronous queue: work is complete on return. */
static void s_sync_mode(const scen_t *S) {
    lane_t li, lr;
    lane_open(&li, "sync immediate", G.ctx, true, false, G.compute_ord, 0, NULL, ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS);
    lane_open(&lr, "sync queue", G.ctx, false, false, G.compute_ord, 1 % G.ncompute, NULL,
              ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS);
    ze_event_handle_t ev[6];
    events_new(G.ctx, 6, true, ev);
    ze_kernel_handle_t k10 = kern("k10"), k20 = kern("k20"), k30 = kern("k30"), va = kern("vector_add");
    float *a = hmem(N * 4), *b = hmem(N * 4), *c = hmem(N * 4), *a2 = hmem(N * 4), *b2 = hmem(N * 4),
          *c2 = hmem(N * 4), want[N], want2[N];
    set_vadd_inputs(a, b, c, want, 1, 0);
    set_vadd_inputs(a2, b2, c2, want2, 2, 0);

    ap_k(&li, k10, 1, ev[0], W0);
    expect_status(ev[0], ZE_RESULT_SUCCESS, "k10 right after a synchronous append");
    ap_k(&li, k20, 1, ev[1], W0);
    expect_status(ev[1], ZE_RESULT_SUCCESS, "k20 right after a synchronous append");
    ap_vadd(&li, va, a, b, c, N, ev[2], W0);
    expect_status(ev[2], ZE_RESULT_SUCCESS, "vector_add right after a synchronous append");
    expect_f32("vector_add (synchronous immediate list)", c, want, N);
    kts(ev[0], 10 * US, "k10");
    kts(ev[1], 20 * US, "k20");
    kts(ev[2], NS_VADD, "vector_add");
    /* and one without an event (the collector's inbox entry takes its slow path, which drains) */
    ap_k(&li, k30, 1, NULL, W0);

    ap_k(&lr, k10, 1, ev[3], W0);
    ap_k(&lr, k30, 1, ev[4], W0);
    ap_vadd(&lr, va, a2, b2, c2, N, ev[5], W0);
    lane_exec(&lr, NULL);
    for (int i = 3; i < 6; i++) expect_status(ev[i], ZE_RESULT_SUCCESS, "right after executing on a synchronous queue");
    expect_f32("vector_add (synchronous queue)", c2, want2, N);
    kts(ev[3], 10 * US, "k10");
    kts(ev[4], 30 * US, "k30");
    kts(ev[5], NS_VADD, "vector_add");
    lane_finish(&lr);
}

/* ~400 ms of kernels: with zesim's defaults the 32-bit kernel timestamp counter wraps 200 ms after
 * zeInit, so this crosses the wrap. */
static void s_wrap(const scen_t *S) {
    lane_t ln;
    lane_std(&ln, S, "main");
    ze_event_handle_t ev[4];
    events_new(G.ctx, 4, true, ev);
    ze_kernel_handle_t k = kern("k10ms");
    uint64_t t0 = now_ns();
    for (int i = 0; i < 40; i++) ap_k(&ln, k, 1, i % 10 == 0 ? ev[i / 10] : NULL, W0);
    lane_finish(&ln);
    uint64_t el = now_ns() - t0;
    printf("40 x 10 ms kernels: %.1f ms wall time\n", (double)el / 1e6);
    CHECK(el >= 399 * MS, "in-order list of 40 x 10 ms kernels completed after only %.1f ms", (double)el / 1e6);
    span_t t[4];
    for (int j = 0; j < 4; j++) {
        t[j] = kts(ev[j], 10 * MS, "k10ms");
        if (j) check_after(t[j - 1], t[j], "in-order k10ms");
    }
}

/* ================================================================================ table */

#define SIT4(sit, fn)                                                                              \
    {"io_imm_" sit, fn, true, true}, {"io_reg_" sit, fn, true, false}, {"ooo_imm_" sit, fn, false, true},      \
        {"ooo_reg_" sit, fn, false, false}
#define SIT_REG(sit, fn) {"io_reg_" sit, fn, true, false}, {"ooo_reg_" sit, fn, false, false}

static const scen_t scenarios[] = {
    SIT4("no_event", s_no_event),
    SIT4("own_event", s_own_event),
    SIT4("shared_event", s_shared_event),
    SIT4("event_reuse_phases", s_event_reuse_phases),
    SIT4("host_reset", s_host_reset),
    SIT_REG("reexec_phases", s_reexec_phases),
    SIT_REG("exec_m", s_exec_m),
    SIT_REG("inflight_m", s_inflight_m),
    SIT4("cross_list_chain", s_cross_list_chain),
    SIT4("copy_only", s_copy_only),
    SIT4("many_appends", s_many_appends),
    SIT4("threads_own", s_threads_own),
    SIT4("threads_shared", s_threads_shared),
    SIT4("ctx_destroy_first", s_ctx_destroy_first),
    SIT4("kernel_reuse", s_kernel_reuse),
    {"launch_kinds", s_launch_kinds, false, true},
    {"transfers_imm", s_transfers, false, true},
    {"transfers_reg", s_transfers, false, false},
    {"images", s_images, false, true},
    {"ooo_overlap", s_ooo_overlap, false, true},
    {"user_qkt_compute", s_user_qkt_compute, false, true},
    {"sync_mode", s_sync_mode, false, true},
    {"wrap", s_wrap, true, true},
};
#define NSCEN (sizeof scenarios / sizeof scenarios[0])

/* ================================================================================ setup */

static void setup(void) {
    ZE(zeInit(ZE_INIT_FLAG_GPU_ONLY));
    uint32_t n = 1;
    ZE(zeDriverGet(&n, &G.drv));
    CHECK(n >= 1, "no Level Zero driver");
    ze_device_handle_t devs[4];
    n = 4;
    ZE(zeDeviceGet(G.drv, &n, devs));
    CHECK(n >= 1, "no device");
    G.dev = devs[0];

    ze_device_properties_t p = {.stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES_1_2};
    ZE(zeDeviceGetProperties(G.dev, &p));
    G.hz = p.timerResolution; /* ticks per second with the 1.2 structure */
    CHECK(G.hz > 0, "timerResolution is 0");
    G.kmask = p.kernelTimestampValidBits >= 64 ? UINT64_MAX : (1ull << p.kernelTimestampValidBits) - 1;
    G.gmask = p.timestampValidBits >= 64 ? UINT64_MAX : (1ull << p.timestampValidBits) - 1;

    ze_command_queue_group_properties_t gp[16];
    n = 16;
    ZE(zeDeviceGetCommandQueueGroupProperties(G.dev, &n, NULL));
    if (n > 16) n = 16;
    for (uint32_t i = 0; i < n; i++) gp[i] = (ze_command_queue_group_properties_t){
                                         .stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_GROUP_PROPERTIES};
    ZE(zeDeviceGetCommandQueueGroupProperties(G.dev, &n, gp));
    bool have_compute = false;
    for (uint32_t i = 0; i < n; i++) {
        bool compute = gp[i].flags & ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COMPUTE;
        bool copy = gp[i].flags & ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COPY;
        if (compute && !have_compute) {
            have_compute = true;
            G.compute_ord = i;
            G.ncompute = gp[i].numQueues;
        } else if (copy && !compute && !G.have_copy) {
            G.have_copy = true;
            G.copy_ord = i;
            G.ncopy = gp[i].numQueues;
        }
    }
    CHECK(have_compute && G.ncompute > 0, "no compute queue group");

    G.ctx = ctx_new();
    G.mod = module_new(G.ctx, MODULE_TEXT);
}

static void usage(FILE *f) {
    fprintf(f, "usage: zc_scen --list | zc_scen <scenario> [--threads N]\n");
}

int main(int argc, char **argv) {
    const char *name = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--list")) {
            for (size_t s = 0; s < NSCEN; s++) printf("%s\n", scenarios[s].name);
            return 0;
        } else if (!strcmp(argv[i], "--threads") && i + 1 < argc) {
            long t = strtol(argv[++i], NULL, 10);
            if (t < 1 || t > (long)MAX_THREADS) {
                fprintf(stderr, "zc_scen: --threads must be 1..%u\n", MAX_THREADS);
                return 2;
            }
            G.nthreads = (unsigned)t;
        } else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            usage(stdout);
            return 0;
        } else if (!name && argv[i][0] != '-') {
            name = argv[i];
        } else {
            usage(stderr);
            return 2;
        }
    }
    if (!name) {
        usage(stderr);
        return 2;
    }
    for (size_t s = 0; s < NSCEN && !G.scen; s++)
        if (!strcmp(scenarios[s].name, name)) G.scen = &scenarios[s];
    if (!G.scen) {
        fprintf(stderr, "zc_scen: unknown scenario '%s' (see --list)\n", name);
        return 2;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);

    const char *wd = getenv("ZC_SCEN_WATCHDOG_S");
    unsigned wd_s = wd && atoi(wd) > 0 ? (unsigned)atoi(wd) : 100;
    signal(SIGALRM, watchdog);
    alarm(wd_s);

    setup();
    G.scen->fn(G.scen);
    destroy_from(0);
    write_json();
    printf("zc_scen %s: PASS\n", G.scen->name);
    alarm(wd_s); /* the exit's own phase */
    return 0;
}
