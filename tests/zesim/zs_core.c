/* SPDX-License-Identifier: MIT */
/* zesim core: configuration from the environment, device clocks, the truth writer, fault
 * injection and zeInit. The driver, device and context entry points are in zs_device.c, the
 * table getters the loader dlsym()s in zs_ddi.c. */
#include "zs_internal.h"

#include <sched.h>

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

struct zs_state zs = {
    .lock = PTHREAD_MUTEX_INITIALIZER,
    .alloc_lock = PTHREAD_RWLOCK_INITIALIZER,
};

static pthread_once_t zs_cfg_once = PTHREAD_ONCE_INIT;
static pthread_once_t zs_init_once = PTHREAD_ONCE_INIT;

/* ---------------------------------------------------------------- small utilities */
uint64_t zs_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

pid_t zs_gettid(void) { return (pid_t)syscall(SYS_gettid); }

void zs_sleep_ns(uint64_t ns) {
    struct timespec ts = {.tv_sec = (time_t)(ns / 1000000000u), .tv_nsec = (long)(ns % 1000000000u)};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

void zs_log(const char *fmt, ...) {
    if (!zs.cfg.log) return;
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof(buf) - 1, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    if ((size_t)n > sizeof(buf) - 2) n = (int)sizeof(buf) - 2;
    buf[n++] = '\n';
    ssize_t w = write(2, buf, (size_t)n);
    (void)w;
}

void zs_slow_sync(void) {
    if (zs.cfg.slow_sync_ns) zs_sleep_ns(zs.cfg.slow_sync_ns);
}

/* Kernel names are interned for the life of the process: commands refer to them after the kernel
 * or module that named them is destroyed. */
static pthread_mutex_t intern_lock = PTHREAD_MUTEX_INITIALIZER;
static char **interned;
static size_t ninterned, cap_interned;

const char *zs_intern(const char *s) {
    pthread_mutex_lock(&intern_lock);
    for (size_t i = 0; i < ninterned; i++) {
        if (strcmp(interned[i], s) == 0) {
            pthread_mutex_unlock(&intern_lock);
            return interned[i];
        }
    }
    if (ninterned == cap_interned) {
        size_t ncap = cap_interned ? 2 * cap_interned : 64;
        char **n = realloc(interned, ncap * sizeof(*n));
        if (!n) {
            pthread_mutex_unlock(&intern_lock);
            return NULL;
        }
        interned = n;
        cap_interned = ncap;
    }
    char *copy = strdup(s);
    if (copy) interned[ninterned++] = copy;
    pthread_mutex_unlock(&intern_lock);
    return copy;
}

/* ---------------------------------------------------------------- deferred frees */
#define ZS_DEFER 4096
static pthread_mutex_t defer_lock = PTHREAD_MUTEX_INITIALIZER;
static void *deferred[ZS_DEFER];
static size_t defer_next;

void zs_defer_free(void *p) {
    pthread_mutex_lock(&defer_lock);
    void *old = deferred[defer_next];
    deferred[defer_next] = p;
    defer_next = (defer_next + 1) % ZS_DEFER;
    pthread_mutex_unlock(&defer_lock);
    free(old);
}

/* ---------------------------------------------------------------- configuration */
static uint64_t env_u64(const char *name, uint64_t def) {
    const char *v = getenv(name);
    if (!v || !*v) return def;
    char *end;
    errno = 0;
    unsigned long long x = strtoull(v, &end, 0);
    if (errno || *end) {
        fprintf(stderr, "zesim: ignoring %s=%s (not an unsigned integer)\n", name, v);
        return def;
    }
    return x;
}

static int64_t env_i64(const char *name, int64_t def) {
    const char *v = getenv(name);
    if (!v || !*v) return def;
    char *end;
    errno = 0;
    long long x = strtoll(v, &end, 0);
    if (errno || *end) {
        fprintf(stderr, "zesim: ignoring %s=%s (not an integer)\n", name, v);
        return def;
    }
    return x;
}

/* Per-device list "a,b,c": missing entries repeat the last given value. */
static void env_list(const char *name, const double *defs, int ndefs, double *out, int n) {
    const char *v = getenv(name);
    int given = 0;
    if (v && *v) {
        const char *p = v;
        while (*p && given < n) {
            char *end;
            double x = strtod(p, &end);
            if (end == p) {
                fprintf(stderr, "zesim: bad value in %s=%s\n", name, v);
                given = 0;
                break;
            }
            out[given++] = x;
            p = end;
            if (*p == ',') p++;
        }
    }
    for (int i = given; i < n; i++) {
        if (given > 0) out[i] = out[given - 1];
        else out[i] = defs[i < ndefs ? i : ndefs - 1];
    }
}

static const struct {
    const char *name;
    ze_result_t value;
} result_names[] = {
#define R(x) {#x, x}
    R(ZE_RESULT_SUCCESS), R(ZE_RESULT_NOT_READY), R(ZE_RESULT_ERROR_DEVICE_LOST),
    R(ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY), R(ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY),
    R(ZE_RESULT_ERROR_MODULE_BUILD_FAILURE), R(ZE_RESULT_ERROR_DEVICE_REQUIRES_RESET),
    R(ZE_RESULT_ERROR_UNINITIALIZED), R(ZE_RESULT_ERROR_UNSUPPORTED_VERSION),
    R(ZE_RESULT_ERROR_UNSUPPORTED_FEATURE), R(ZE_RESULT_ERROR_INVALID_ARGUMENT),
    R(ZE_RESULT_ERROR_INVALID_NULL_HANDLE), R(ZE_RESULT_ERROR_HANDLE_OBJECT_IN_USE),
    R(ZE_RESULT_ERROR_INVALID_NULL_POINTER), R(ZE_RESULT_ERROR_INVALID_SIZE),
    R(ZE_RESULT_ERROR_INVALID_SYNCHRONIZATION_OBJECT), R(ZE_RESULT_ERROR_INVALID_ENUMERATION),
    R(ZE_RESULT_ERROR_INVALID_KERNEL_NAME), R(ZE_RESULT_ERROR_INVALID_COMMAND_LIST_TYPE),
    R(ZE_RESULT_ERROR_UNKNOWN),
#undef R
};

static bool parse_result(const char *s, ze_result_t *out) {
    for (size_t i = 0; i < sizeof(result_names) / sizeof(result_names[0]); i++) {
        if (strcmp(s, result_names[i].name) == 0) {
            *out = result_names[i].value;
            return true;
        }
    }
    char *end;
    errno = 0;
    unsigned long x = strtoul(s, &end, 0);
    if (errno || *end || end == s) return false;
    *out = (ze_result_t)x;
    return true;
}

/* ZESIM_FAIL="zeApi:N[+][:RESULT],..." */
static void parse_faults(void) {
    const char *v = getenv("ZESIM_FAIL");
    if (!v || !*v) return;
    char *copy = strdup(v);
    if (!copy) return;
    int n = 1;
    for (const char *p = v; *p; p++) n += *p == ',';
    zs.cfg.faults = calloc((size_t)n, sizeof(struct zs_fault));
    if (!zs.cfg.faults) {
        free(copy);
        return;
    }
    char *save = NULL;
    for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        struct zs_fault *f = &zs.cfg.faults[zs.cfg.nfaults];
        char *c1 = strchr(tok, ':');
        if (!c1) goto bad;
        *c1 = 0;
        char *c2 = strchr(c1 + 1, ':');
        if (c2) *c2 = 0;
        snprintf(f->api, sizeof(f->api), "%s", tok);
        char *end;
        f->nth = strtoull(c1 + 1, &end, 10);
        if (end == c1 + 1 || f->nth == 0) goto bad;
        if (*end == '+') {
            f->from_nth = true;
            end++;
        }
        if (*end) goto bad;
        f->result = ZE_RESULT_ERROR_UNKNOWN;
        if (c2 && !parse_result(c2 + 1, &f->result)) goto bad;
        atomic_init(&f->calls, 0);
        zs.cfg.nfaults++;
        continue;
    bad:
        fprintf(stderr, "zesim: ignoring bad ZESIM_FAIL entry '%s' (want zeApi:N[+][:RESULT])\n", tok);
    }
    free(copy);
}

static void parse_kernel_model(void) {
    const char *v = getenv("ZESIM_KERNEL_MODEL");
    int n = 1;
    if (v)
        for (const char *p = v; *p; p++) n += *p == ',';
    zs.cfg.kmodel = calloc((size_t)n + 1, sizeof(struct zs_kmodel));
    if (!zs.cfg.kmodel) return;
    if (v && *v) {
        char *copy = strdup(v), *save = NULL;
        for (char *tok = copy ? strtok_r(copy, ",", &save) : NULL; tok; tok = strtok_r(NULL, ",", &save)) {
            char *c1 = strrchr(tok, ':');
            if (!c1) goto bad;
            *c1 = 0;
            char *c2 = strrchr(tok, ':');
            if (!c2) goto bad;
            *c2 = 0;
            char *e1, *e2;
            double ns = strtod(c2 + 1, &e1), per = strtod(c1 + 1, &e2);
            if (*e1 || *e2 || ns < 0 || per < 0) goto bad;
            struct zs_kmodel *m = &zs.cfg.kmodel[zs.cfg.nkmodel++];
            m->name = strcmp(tok, "*") == 0 ? NULL : strdup(tok);
            m->ns = ns;
            m->ns_per_item = per;
            continue;
        bad:
            fprintf(stderr, "zesim: ignoring bad ZESIM_KERNEL_MODEL entry (want name:ns:ns_per_item)\n");
        }
        free(copy);
    }
    /* the built-in default comes last so an explicit "*" entry wins */
    struct zs_kmodel *d = &zs.cfg.kmodel[zs.cfg.nkmodel++];
    d->name = NULL;
    d->ns = 5000;
    d->ns_per_item = 0.25;
}

static void parse_config(void) {
    struct zs_config *c = &zs.cfg;
    c->log = env_u64("ZESIM_LOG", 0) != 0;
    c->ndev = (int)env_u64("ZESIM_DEVICES", 2);
    if (c->ndev < 1) c->ndev = 1;
    if (c->ndev > ZS_MAX_DEVICES) c->ndev = ZS_MAX_DEVICES;
    c->ncompute = (int)env_u64("ZESIM_COMPUTE_ENGINES", 4);
    c->ncopy = (int)env_u64("ZESIM_COPY_ENGINES", 2);
    c->driver_gen = (int)env_u64("ZESIM_DRIVER_GEN", 2026);
    if (c->driver_gen != 2025 && c->driver_gen != 2026) {
        fprintf(stderr, "zesim: ignoring ZESIM_DRIVER_GEN=%d (want 2025 or 2026)\n", c->driver_gen);
        c->driver_gen = 2026;
    }
    c->integrated = env_u64("ZESIM_INTEGRATED", 0) != 0;
    if (c->ncompute < 1) c->ncompute = 1;
    if (c->ncompute > ZS_MAX_ENGINES) c->ncompute = ZS_MAX_ENGINES;
    if (c->ncopy < 0) c->ncopy = 0;
    if (c->ncopy > ZS_MAX_ENGINES) c->ncopy = ZS_MAX_ENGINES;
    c->hz = env_u64("ZESIM_TIMER_HZ", 19200000);
    if (c->hz == 0) c->hz = 19200000;
    c->ts_bits = (int)env_u64("ZESIM_TS_BITS", 32);
    c->kts_bits = (int)env_u64("ZESIM_KERNEL_TS_BITS", 32);
    if (c->ts_bits < 8 || c->ts_bits > 64) c->ts_bits = 32;
    if (c->kts_bits < 8 || c->kts_bits > 64) c->kts_bits = 32;
    static const double drift_def[] = {20, -35};
    env_list("ZESIM_CLOCK_DRIFT_PPM", drift_def, 2, c->drift_ppm, ZS_MAX_DEVICES);
    static const double off_def[] = {0, 1234567891};
    double off[ZS_MAX_DEVICES];
    env_list("ZESIM_CLOCK_OFFSET_NS", off_def, 2, off, ZS_MAX_DEVICES);
    for (int i = 0; i < ZS_MAX_DEVICES; i++) c->offset_ns[i] = (int64_t)llround(off[i]);
    c->wrap_after_ms = env_u64("ZESIM_WRAP_AFTER_MS", 200);
    c->gts_cost_ns = env_u64("ZESIM_GTS_COST_NS", 10000);
    parse_kernel_model();
    double cm[2] = {1500, 10};
    const char *cmv = getenv("ZESIM_COPY_MODEL");
    if (cmv && *cmv && (sscanf(cmv, "%lf:%lf", &cm[0], &cm[1]) != 2 || cm[0] < 0 || cm[1] <= 0)) {
        fprintf(stderr, "zesim: ignoring ZESIM_COPY_MODEL=%s (want latency_ns:bytes_per_ns)\n", cmv);
        cm[0] = 1500;
        cm[1] = 10;
    }
    c->copy_latency_ns = cm[0];
    c->copy_bytes_per_ns = cm[1];
    c->sync_op_ns = env_u64("ZESIM_SYNC_OP_NS", 200);
    c->launch_latency_ns = env_u64("ZESIM_LAUNCH_LATENCY_NS", 2000);
    c->ring_cmds = env_u64("ZESIM_RING_CMDS", 8192);
    if (c->ring_cmds < 16) c->ring_cmds = 16;
    c->poll_ns = env_u64("ZESIM_POLL_US", 0) * 1000u;
    /* Benchmarks bind the simulated engines apart from the application's threads: a GPU's engine
     * takes no CPU from the host, and a worker the scheduler moves between runs (beside the
     * appending thread, on its SMT sibling, on another socket) moves the wall time more than what
     * is measured. A list of CPU numbers, given out to the workers in turn as they start. */
    const char *ec = getenv("ZESIM_ENGINE_CPUS");
    for (const char *p = ec; p && *p && c->nengine_cpus < 64;) {
        char *end;
        long v = strtol(p, &end, 10);
        if (end == p || v < 0 || v >= CPU_SETSIZE || (*end && *end != ',')) {
            fprintf(stderr, "zesim: ignoring ZESIM_ENGINE_CPUS=%s (want CPU numbers separated by commas)\n", ec);
            c->nengine_cpus = 0;
            break;
        }
        c->engine_cpus[c->nengine_cpus++] = (int)v;
        p = *end ? end + 1 : end;
    }
    const char *t = getenv("ZESIM_TRUTH");
    c->truth_path = (t && *t) ? strdup(t) : NULL;
    parse_faults();
    zs_parse_null_entries();
    c->device_lost_after = env_i64("ZESIM_DEVICE_LOST_AFTER", -1);
    c->event_pool_oom = env_i64("ZESIM_EVENT_POOL_OOM", -1);
    c->slow_sync_ns = env_u64("ZESIM_SLOW_SYNC_NS", 0);
    const char *q = getenv("ZESIM_COPY_QKT");
    c->copy_qkt_abort = !(q && strcmp(q, "error") == 0);
}

static void cfg_once(void) {
    parse_config();
    pthread_condattr_t a;
    pthread_condattr_init(&a);
    pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
    pthread_cond_init(&zs.host_cv, &a);
    pthread_condattr_destroy(&a);
}

void zs_global_init(void) { pthread_once(&zs_cfg_once, cfg_once); }

/* ---------------------------------------------------------------- clocks */
uint64_t zs_ticks_full(ze_device_handle_t dev, uint64_t host_ns) {
    /* long double keeps 64 mantissa bits: exact enough for hours of nanoseconds times 19.2 MHz */
    long double dt = (long double)(int64_t)(host_ns - zs.h0);
    long double rate = (long double)zs.cfg.hz * (1.0L + (long double)dev->ppm / 1e6L);
    long double ticks = floorl(dt * rate / 1e9L);
    return dev->t0 + (uint64_t)(int64_t)ticks;
}

/* ---------------------------------------------------------------- truth writer */
static pthread_mutex_t truth_lock = PTHREAD_MUTEX_INITIALIZER;
static FILE *truth_file;
static bool truth_closed;

bool zs_truth_enabled(void) { return truth_file != NULL; }

void zs_truth_write(const char *line, size_t len) {
    pthread_mutex_lock(&truth_lock);
    if (truth_file && !truth_closed) fwrite(line, 1, len, truth_file);
    pthread_mutex_unlock(&truth_lock);
}

/* One line of the truth from a printf format (the newline added); a line longer than the buffer
 * would be cut JSON, so it is not written. */
void zs_truthf(const char *fmt, ...) {
    if (!zs_truth_enabled()) return;
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof(line) - 1, fmt, ap);
    va_end(ap);
    if (n <= 0 || n >= (int)sizeof(line) - 1) return;
    line[n++] = '\n';
    zs_truth_write(line, (size_t)n);
}

/* Operation lines take their seq under the same lock that writes them, so the file is in seq
 * order even when two engines complete at once. fmt receives the seq and returns the length. */
void zs_truth_write_seq(size_t (*fmt)(char *buf, size_t size, uint64_t seq, void *arg), void *arg) {
    static uint64_t seq;
    char line[4096];
    pthread_mutex_lock(&truth_lock);
    if (truth_file && !truth_closed) {
        size_t n = fmt(line, sizeof(line), seq++, arg);
        fwrite(line, 1, n, truth_file);
    }
    pthread_mutex_unlock(&truth_lock);
}

static void truth_flush(void) {
    pthread_mutex_lock(&truth_lock);
    if (truth_file) fflush(truth_file);
    pthread_mutex_unlock(&truth_lock);
}

/* Runs at exit() (from any thread) and at dlclose: everything that executed is on disk. Workers
 * may still complete operations afterwards; those lines go to the stdio buffer and are flushed by
 * the final stdio cleanup if the process gets that far. */
__attribute__((destructor)) static void zs_fini(void) { truth_flush(); }

static const char *mpi_rank(void) {
    static const char *vars[] = {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"};
    for (size_t i = 0; i < 3; i++) {
        const char *v = getenv(vars[i]);
        if (v && *v) return v;
    }
    return "0";
}

static void truth_open(void) {
    if (!zs.cfg.truth_path) return;
    char path[4096];
    size_t o = 0;
    for (const char *p = zs.cfg.truth_path; *p && o < sizeof(path) - 32; p++) {
        if (p[0] == '%' && p[1] == 'p') {
            o += (size_t)snprintf(path + o, sizeof(path) - o, "%d", (int)getpid());
            p++;
        } else if (p[0] == '%' && p[1] == 'r') {
            o += (size_t)snprintf(path + o, sizeof(path) - o, "%s", mpi_rank());
            p++;
        } else {
            path[o++] = *p;
        }
    }
    path[o] = 0;
    FILE *f = fopen(path, "a");
    if (!f) {
        fprintf(stderr, "zesim: cannot open ZESIM_TRUTH file %s: %s\n", path, strerror(errno));
        return;
    }
    /* ZESIM_TRUTH_UNBUFFERED=1: each line reaches the file when it is written, so the truth of a
     * process killed by SIGKILL is complete up to its death (salvage tests) */
    const char *u = getenv("ZESIM_TRUTH_UNBUFFERED");
    if (u && strcmp(u, "1") == 0) setvbuf(f, NULL, _IOLBF, 4096);
    else setvbuf(f, NULL, _IOFBF, 1 << 20);
    truth_file = f;
}

/* ---------------------------------------------------------------- fault injection */
ze_result_t zs_fault_check(const char *func) {
    const char *api = strncmp(func, "zs_", 3) == 0 ? func + 3 : func;
    if (zs.cfg.log) zs_log("zesim: %s", api);
    if (zs.cfg.nfaults == 0) return ZE_RESULT_SUCCESS;
    for (int i = 0; i < zs.cfg.nfaults; i++) {
        struct zs_fault *f = &zs.cfg.faults[i];
        if (strcmp(f->api, api) != 0) continue;
        uint64_t n = atomic_fetch_add(&f->calls, 1) + 1;
        if (n == f->nth || (f->from_nth && n > f->nth)) {
            zs_log("zesim: injected failure %s call %llu -> 0x%x", api, (unsigned long long)n,
                   (unsigned)f->result);
            return f->result;
        }
    }
    return ZE_RESULT_SUCCESS;
}

/* ---------------------------------------------------------------- init */
static void init_once(void) {
    zs.h0 = zs_now();
    zs.driver.magic = ZS_MAGIC_DRIVER;
    truth_open();
    for (int d = 0; d < zs.cfg.ndev; d++) {
        struct _ze_device_handle_t *dev = &zs.devices[d];
        dev->magic = ZS_MAGIC_DEVICE;
        dev->id = d;
        dev->ppm = zs.cfg.drift_ppm[d];
        dev->offset_ns = zs.cfg.offset_ns[d];
        uint64_t period = zs.cfg.kts_bits >= 64 ? 0 : (UINT64_C(1) << zs.cfg.kts_bits);
        uint64_t wrap = (uint64_t)llroundl((long double)zs.cfg.wrap_after_ms * zs.cfg.hz / 1000.0L);
        int64_t off = (int64_t)llroundl((long double)dev->offset_ns * zs.cfg.hz / 1e9L);
        dev->t0 = period - wrap + (uint64_t)off;
        if (truth_file) {
            char line[512];
            int n = snprintf(line, sizeof(line),
                             "{\"kind\":\"device\",\"device\":%d,\"name\":\"zesim GPU %d\",\"hz\":%llu,"
                             "\"ts_bits\":%d,\"kernel_ts_bits\":%d,\"drift_ppm\":%.17g,\"offset_ns\":%lld,"
                             "\"wrap_after_ms\":%llu,\"h0\":%llu,\"t0\":%llu,\"pid\":%d}\n",
                             d, d, (unsigned long long)zs.cfg.hz, zs.cfg.ts_bits, zs.cfg.kts_bits, dev->ppm,
                             (long long)dev->offset_ns, (unsigned long long)zs.cfg.wrap_after_ms,
                             (unsigned long long)zs.h0, (unsigned long long)dev->t0, (int)getpid());
            zs_truth_write(line, (size_t)n);
        }
    }
}

static ze_result_t zs_zeInit(ze_init_flags_t flags) {
    zs_global_init();
    ZS_ENTER();
    /* VPU-only requests find no GPU here, as with the real GPU driver */
    if (flags && !(flags & ZE_INIT_FLAG_GPU_ONLY)) return ZE_RESULT_ERROR_UNINITIALIZED;
    pthread_once(&zs_init_once, init_once);
    return ZE_RESULT_SUCCESS;
}

void zs_fill_global_table(ze_global_dditable_t *t) { t->pfnInit = zs_zeInit; }
ze_result_t zs_init_gpu(void) { return zs_zeInit(ZE_INIT_FLAG_GPU_ONLY); }
