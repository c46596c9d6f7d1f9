/* SPDX-License-Identifier: MIT */
/* zesim core: configuration from the environment, device clocks, the truth writer, fault
 * injection, driver/device/context entry points and the DDI table getters the loader dlsym()s. */
#include "zs_internal.h"

#include <ctype.h>
#include <errno.h>
#include <stddef.h>
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

/* ZESIM_NULL_ENTRIES="table.pfnName|zeApiName,...": entries the getters leave NULL, as a driver
 * that lacks them does. The member table comes from the installed headers (gen_ddi_members.py). */
static const struct zs_ddi_member {
    const char *table, *member, *api;
    size_t off;
} ddi_members[] = {
#define ZS_DDI(table, member, api) {#table, #member, #api, offsetof(table##_dditable_t, member)},
#include "zs_ddi_members.h"
#undef ZS_DDI
};
#define ZS_NDDI (sizeof(ddi_members) / sizeof(ddi_members[0]))
static bool null_entry[ZS_NDDI];

static void parse_null_entries(void) {
    const char *v = getenv("ZESIM_NULL_ENTRIES");
    if (!v || !*v) return;
    char *copy = strdup(v);
    if (!copy) return;
    char *save = NULL;
    for (char *tok = strtok_r(copy, ", ", &save); tok; tok = strtok_r(NULL, ", ", &save)) {
        char *dot = strchr(tok, '.');
        bool found = false;
        for (size_t i = 0; i < ZS_NDDI; i++) {
            const struct zs_ddi_member *m = &ddi_members[i];
            bool match = dot ? (strncmp(tok, m->table, (size_t)(dot - tok)) == 0 && m->table[dot - tok] == 0 &&
                                strcmp(dot + 1, m->member) == 0)
                             : strcmp(tok, m->api) == 0;
            if (match) null_entry[i] = found = true;
        }
        if (!found) {
            /* a typo would silently test nothing: refuse to run */
            fprintf(stderr, "zesim: ZESIM_NULL_ENTRIES: no dispatch-table entry '%s' (want table.pfnName, e.g. "
                            "ze_command_list.pfnAppendBarrier, or an API name, e.g. zeCommandListAppendBarrier)\n", tok);
            exit(2);
        }
    }
    free(copy);
}

/* Called by every getter after it filled its table. Only for a table at least as large as ours
 * (the requested version is not older than our headers): an older caller's struct may end
 * before the member. */
static void null_entries(const char *table, void *t, ze_api_version_t v) {
    for (size_t i = 0; i < ZS_NDDI; i++) {
        if (!null_entry[i] || strcmp(ddi_members[i].table, table) != 0) continue;
        if (v < ZE_API_VERSION_CURRENT) continue;
        memset((char *)t + ddi_members[i].off, 0, sizeof(void (*)(void)));
    }
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
    const char *t = getenv("ZESIM_TRUTH");
    c->truth_path = (t && *t) ? strdup(t) : NULL;
    parse_faults();
    parse_null_entries();
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

/* ---------------------------------------------------------------- driver */
static ze_result_t zs_zeDriverGet(uint32_t *pCount, ze_driver_handle_t *phDrivers) {
    ZS_ENTER();
    if (!pCount) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    if (zs.driver.magic != ZS_MAGIC_DRIVER) return ZE_RESULT_ERROR_UNINITIALIZED;
    if (*pCount == 0 || !phDrivers) {
        *pCount = 1;
        return ZE_RESULT_SUCCESS;
    }
    *pCount = 1;
    phDrivers[0] = &zs.driver;
    return ZE_RESULT_SUCCESS;
}

static ze_result_t zs_zeDriverGetApiVersion(ze_driver_handle_t h, ze_api_version_t *version) {
    ZS_ENTER();
    ZS_CHECK(h, ZS_MAGIC_DRIVER);
    if (!version) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    *version = ZE_API_VERSION_1_4;
    return ZE_RESULT_SUCCESS;
}

static ze_result_t zs_zeDriverGetProperties(ze_driver_handle_t h, ze_driver_properties_t *p) {
    ZS_ENTER();
    ZS_CHECK(h, ZS_MAGIC_DRIVER);
    if (!p) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    memset(p->uuid.id, 0, sizeof(p->uuid.id));
    memcpy(p->uuid.id, "zesim-driver", 12);
    p->driverVersion = 0x01080c00;
    return ZE_RESULT_SUCCESS;
}

static ze_result_t zs_zeDriverGetIpcProperties(ze_driver_handle_t h, ze_driver_ipc_properties_t *p) {
    ZS_ENTER();
    ZS_CHECK(h, ZS_MAGIC_DRIVER);
    if (!p) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    p->flags = 0;
    return ZE_RESULT_SUCCESS;
}

static ze_result_t zs_zeDriverGetExtensionProperties(ze_driver_handle_t h, uint32_t *pCount,
                                                     ze_driver_extension_properties_t *p) {
    ZS_ENTER();
    ZS_CHECK(h, ZS_MAGIC_DRIVER);
    if (!pCount) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    *pCount = 0;
    return ZE_RESULT_SUCCESS;
}

static ze_result_t zs_zeDriverGetExtensionFunctionAddress(ze_driver_handle_t h, const char *name, void **ppf) {
    ZS_ENTER();
    ZS_CHECK(h, ZS_MAGIC_DRIVER);
    if (!name || !ppf) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    *ppf = NULL;
    return ZE_RESULT_ERROR_INVALID_ARGUMENT;
}

/* ---------------------------------------------------------------- device */
static ze_result_t zs_zeDeviceGet(ze_driver_handle_t h, uint32_t *pCount, ze_device_handle_t *phDevices) {
    ZS_ENTER();
    ZS_CHECK(h, ZS_MAGIC_DRIVER);
    if (!pCount) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    uint32_t n = (uint32_t)zs.cfg.ndev;
    if (*pCount == 0 || !phDevices) {
        *pCount = n;
        return ZE_RESULT_SUCCESS;
    }
    if (*pCount > n) *pCount = n;
    for (uint32_t i = 0; i < *pCount; i++) phDevices[i] = &zs.devices[i];
    return ZE_RESULT_SUCCESS;
}

static ze_result_t zs_zeDeviceGetSubDevices(ze_device_handle_t d, uint32_t *pCount, ze_device_handle_t *ph) {
    ZS_ENTER();
    ZS_CHECK(d, ZS_MAGIC_DEVICE);
    if (!pCount) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    *pCount = 0;
    return ZE_RESULT_SUCCESS;
}

static ze_result_t zs_zeDeviceGetProperties(ze_device_handle_t d, ze_device_properties_t *p) {
    ZS_ENTER();
    ZS_CHECK(d, ZS_MAGIC_DEVICE);
    if (!p) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    /* stype and pNext belong to the caller */
    p->type = ZE_DEVICE_TYPE_GPU;
    p->vendorId = 0x8086;
    p->deviceId = 0x0bd5;
    p->flags = 0;
    p->subdeviceId = 0;
    p->coreClockRate = 1600;
    p->maxMemAllocSize = UINT64_C(4) << 30;
    p->maxHardwareContexts = 64;
    p->maxCommandQueuePriority = 2;
    p->numThreadsPerEU = 8;
    p->physicalEUSimdWidth = 16;
    p->numEUsPerSubslice = 8;
    p->numSubslicesPerSlice = 8;
    p->numSlices = 1;
    /* Units differ by struct version: ns per tick (1.0, truncated like the real driver) or ticks
     * per second (1.2). Collectors that read the 1.0 form lose precision: 52 instead of 52.083. */
    if (p->stype == ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES_1_2) p->timerResolution = zs.cfg.hz;
    else p->timerResolution = 1000000000u / zs.cfg.hz;
    p->timestampValidBits = (uint32_t)zs.cfg.ts_bits;
    p->kernelTimestampValidBits = (uint32_t)zs.cfg.kts_bits;
    memset(p->uuid.id, 0, sizeof(p->uuid.id));
    memcpy(p->uuid.id, "zesimdev", 8);
    p->uuid.id[8] = (uint8_t)d->id;
    snprintf(p->name, sizeof(p->name), "zesim GPU %d", d->id);
    return ZE_RESULT_SUCCESS;
}

static ze_result_t zs_zeDeviceGetComputeProperties(ze_device_handle_t d, ze_device_compute_properties_t *p) {
    ZS_ENTER();
    ZS_CHECK(d, ZS_MAGIC_DEVICE);
    if (!p) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    p->maxTotalGroupSize = 1024;
    p->maxGroupSizeX = p->maxGroupSizeY = p->maxGroupSizeZ = 1024;
    p->maxGroupCountX = p->maxGroupCountY = p->maxGroupCountZ = 0xffffffffu;
    p->maxSharedLocalMemory = 64 * 1024;
    p->numSubGroupSizes = 3;
    memset(p->subGroupSizes, 0, sizeof(p->subGroupSizes));
    p->subGroupSizes[0] = 8;
    p->subGroupSizes[1] = 16;
    p->subGroupSizes[2] = 32;
    return ZE_RESULT_SUCCESS;
}

static ze_result_t zs_zeDeviceGetModuleProperties(ze_device_handle_t d, ze_device_module_properties_t *p) {
    ZS_ENTER();
    ZS_CHECK(d, ZS_MAGIC_DEVICE);
    if (!p) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    p->spirvVersionSupported = ZE_MAKE_VERSION(1, 2);
    p->flags = ZE_DEVICE_MODULE_FLAG_FP16 | ZE_DEVICE_MODULE_FLAG_FP64 | ZE_DEVICE_MODULE_FLAG_INT64_ATOMICS;
    p->fp16flags = p->fp32flags = p->fp64flags = ZE_DEVICE_FP_FLAG_ROUND_TO_NEAREST | ZE_DEVICE_FP_FLAG_FMA;
    p->maxArgumentsSize = 2048;
    p->printfBufferSize = 4 << 20;
    memset(&p->nativeKernelSupported, 0, sizeof(p->nativeKernelSupported));
    return ZE_RESULT_SUCCESS;
}

static ze_result_t zs_zeDeviceGetCommandQueueGroupProperties(ze_device_handle_t d, uint32_t *pCount,
                                                             ze_command_queue_group_properties_t *p) {
    ZS_ENTER();
    ZS_CHECK(d, ZS_MAGIC_DEVICE);
    if (!pCount) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    uint32_t n = zs.cfg.ncopy > 0 ? 2 : 1;
    if (*pCount == 0 || !p) {
        *pCount = n;
        return ZE_RESULT_SUCCESS;
    }
    if (*pCount > n) *pCount = n;
    for (uint32_t i = 0; i < *pCount; i++) {
        if (i == ZS_GROUP_COMPUTE) {
            p[i].flags = ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COMPUTE | ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COPY |
                         ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_METRICS |
                         ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COOPERATIVE_KERNELS;
            p[i].maxMemoryFillPatternSize = 128;
            p[i].numQueues = (uint32_t)zs.cfg.ncompute;
        } else {
            p[i].flags = ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COPY;
            p[i].maxMemoryFillPatternSize = 4;
            p[i].numQueues = (uint32_t)zs.cfg.ncopy;
        }
    }
    return ZE_RESULT_SUCCESS;
}

static ze_result_t zs_zeDeviceGetMemoryProperties(ze_device_handle_t d, uint32_t *pCount,
                                                  ze_device_memory_properties_t *p) {
    ZS_ENTER();
    ZS_CHECK(d, ZS_MAGIC_DEVICE);
    if (!pCount) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    if (*pCount == 0 || !p) {
        *pCount = 1;
        return ZE_RESULT_SUCCESS;
    }
    *pCount = 1;
    p->flags = 0;
    p->maxClockRate = 3200;
    p->maxBusWidth = 256;
    p->totalSize = UINT64_C(16) << 30;
    snprintf(p->name, sizeof(p->name), "HBM");
    return ZE_RESULT_SUCCESS;
}

static ze_result_t zs_zeDeviceGetMemoryAccessProperties(ze_device_handle_t d,
                                                        ze_device_memory_access_properties_t *p) {
    ZS_ENTER();
    ZS_CHECK(d, ZS_MAGIC_DEVICE);
    if (!p) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    ze_memory_access_cap_flags_t all = ZE_MEMORY_ACCESS_CAP_FLAG_RW | ZE_MEMORY_ACCESS_CAP_FLAG_ATOMIC |
                                       ZE_MEMORY_ACCESS_CAP_FLAG_CONCURRENT |
                                       ZE_MEMORY_ACCESS_CAP_FLAG_CONCURRENT_ATOMIC;
    p->hostAllocCapabilities = all;
    p->deviceAllocCapabilities = all;
    p->sharedSingleDeviceAllocCapabilities = all;
    p->sharedCrossDeviceAllocCapabilities = ZE_MEMORY_ACCESS_CAP_FLAG_RW;
    p->sharedSystemAllocCapabilities = 0;
    return ZE_RESULT_SUCCESS;
}

static ze_result_t zs_zeDeviceGetCacheProperties(ze_device_handle_t d, uint32_t *pCount,
                                                 ze_device_cache_properties_t *p) {
    ZS_ENTER();
    ZS_CHECK(d, ZS_MAGIC_DEVICE);
    if (!pCount) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    if (*pCount == 0 || !p) {
        *pCount = 1;
        return ZE_RESULT_SUCCESS;
    }
    *pCount = 1;
    p->flags = ZE_DEVICE_CACHE_PROPERTY_FLAG_USER_CONTROL;
    p->cacheSize = 16u << 20;
    return ZE_RESULT_SUCCESS;
}

static ze_result_t zs_zeDeviceGetImageProperties(ze_device_handle_t d, ze_device_image_properties_t *p) {
    ZS_ENTER();
    ZS_CHECK(d, ZS_MAGIC_DEVICE);
    if (!p) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    p->maxImageDims1D = 16384;
    p->maxImageDims2D = 16384;
    p->maxImageDims3D = 2048;
    p->maxImageBufferSize = UINT64_C(1) << 32;
    p->maxImageArraySlices = 2048;
    p->maxSamplers = 16;
    p->maxReadImageArgs = 128;
    p->maxWriteImageArgs = 128;
    return ZE_RESULT_SUCCESS;
}

static ze_result_t zs_zeDeviceGetExternalMemoryProperties(ze_device_handle_t d,
                                                          ze_device_external_memory_properties_t *p) {
    ZS_ENTER();
    ZS_CHECK(d, ZS_MAGIC_DEVICE);
    if (!p) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    p->memoryAllocationImportTypes = p->memoryAllocationExportTypes = 0;
    p->imageImportTypes = p->imageExportTypes = 0;
    return ZE_RESULT_SUCCESS;
}

static ze_result_t zs_zeDeviceGetP2PProperties(ze_device_handle_t d, ze_device_handle_t peer,
                                               ze_device_p2p_properties_t *p) {
    ZS_ENTER();
    ZS_CHECK(d, ZS_MAGIC_DEVICE);
    ZS_CHECK(peer, ZS_MAGIC_DEVICE);
    if (!p) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    p->flags = ZE_DEVICE_P2P_PROPERTY_FLAG_ACCESS;
    return ZE_RESULT_SUCCESS;
}

static ze_result_t zs_zeDeviceCanAccessPeer(ze_device_handle_t d, ze_device_handle_t peer, ze_bool_t *v) {
    ZS_ENTER();
    ZS_CHECK(d, ZS_MAGIC_DEVICE);
    ZS_CHECK(peer, ZS_MAGIC_DEVICE);
    if (!v) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    *v = 1;
    return ZE_RESULT_SUCCESS;
}

static ze_result_t zs_zeDeviceGetStatus(ze_device_handle_t d) {
    ZS_ENTER();
    ZS_CHECK(d, ZS_MAGIC_DEVICE);
    return atomic_load(&zs.lost) ? ZE_RESULT_ERROR_DEVICE_LOST : ZE_RESULT_SUCCESS;
}

/* Real drivers read the CPU clock and the GPU counter over MMIO; it costs ~11 us. The pair is
 * consistent: the device value is the counter at exactly the returned host time. */
static ze_result_t zs_zeDeviceGetGlobalTimestamps(ze_device_handle_t d, uint64_t *host, uint64_t *dev) {
    ZS_ENTER_DEV();
    ZS_CHECK(d, ZS_MAGIC_DEVICE);
    if (!host || !dev) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    uint64_t t0 = zs_now(), cost = zs.cfg.gts_cost_ns;
    uint64_t mid = t0 + cost / 2;
    while (zs_now() < t0 + cost) {
    }
    *host = mid;
    *dev = zs_mask(zs_ticks_full(d, mid), zs.cfg.ts_bits);
    return ZE_RESULT_SUCCESS;
}

/* ---------------------------------------------------------------- context */
static ze_result_t zs_zeContextCreate(ze_driver_handle_t h, const ze_context_desc_t *desc, ze_context_handle_t *ph) {
    ZS_ENTER_DEV();
    ZS_CHECK(h, ZS_MAGIC_DRIVER);
    if (!desc || !ph) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;
    struct _ze_context_handle_t *c = calloc(1, sizeof(*c));
    if (!c) return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
    c->magic = ZS_MAGIC_CONTEXT;
    *ph = c;
    return ZE_RESULT_SUCCESS;
}

static ze_result_t zs_zeContextCreateEx(ze_driver_handle_t h, const ze_context_desc_t *desc, uint32_t n,
                                        ze_device_handle_t *phDevices, ze_context_handle_t *ph) {
    return zs_zeContextCreate(h, desc, ph);
}

static ze_result_t zs_zeContextDestroy(ze_context_handle_t c) {
    ZS_ENTER();
    ZS_CHECK(c, ZS_MAGIC_CONTEXT);
    /* Objects created in the context stay usable for whoever still holds them (the spec makes that
     * undefined); the poisoned magic, kept readable for a while by zs_defer_free, makes later use
     * of this context handle fail cleanly. */
    c->magic = ZS_MAGIC_DEAD;
    zs_defer_free(c);
    return ZE_RESULT_SUCCESS;
}

static ze_result_t zs_zeContextGetStatus(ze_context_handle_t c) {
    ZS_ENTER();
    ZS_CHECK(c, ZS_MAGIC_CONTEXT);
    return atomic_load(&zs.lost) ? ZE_RESULT_ERROR_DEVICE_LOST : ZE_RESULT_SUCCESS;
}

static ze_result_t zs_zeContextSystemBarrier(ze_context_handle_t c, ze_device_handle_t d) {
    ZS_ENTER_DEV();
    ZS_CHECK(c, ZS_MAGIC_CONTEXT);
    return ZE_RESULT_SUCCESS;
}

static ze_result_t zs_zeContextMakeMemoryResident(ze_context_handle_t c, ze_device_handle_t d, void *p, size_t s) {
    ZS_ENTER_DEV();
    ZS_CHECK(c, ZS_MAGIC_CONTEXT);
    return ZE_RESULT_SUCCESS;
}

static ze_result_t zs_zeContextEvictMemory(ze_context_handle_t c, ze_device_handle_t d, void *p, size_t s) {
    ZS_ENTER_DEV();
    ZS_CHECK(c, ZS_MAGIC_CONTEXT);
    return ZE_RESULT_SUCCESS;
}

static ze_result_t zs_zeContextMakeImageResident(ze_context_handle_t c, ze_device_handle_t d, ze_image_handle_t i) {
    ZS_ENTER_DEV();
    ZS_CHECK(c, ZS_MAGIC_CONTEXT);
    return ZE_RESULT_SUCCESS;
}

static ze_result_t zs_zeContextEvictImage(ze_context_handle_t c, ze_device_handle_t d, ze_image_handle_t i) {
    ZS_ENTER_DEV();
    ZS_CHECK(c, ZS_MAGIC_CONTEXT);
    return ZE_RESULT_SUCCESS;
}

/* ---------------------------------------------------------------- DDI getters */
#define ZS_EXPORT __attribute__((visibility("default")))

/* Any 1.x version is accepted; entries introduced after the requested version are left alone,
 * because the caller's table is only as large as that version's struct. */
#define ZS_VERSION_CHECK(v, tbl)                                                                   \
    do {                                                                                           \
        zs_global_init();                                                                          \
        if (!(tbl)) return ZE_RESULT_ERROR_INVALID_NULL_POINTER;                                   \
        if (ZE_MAJOR_VERSION(v) != 1) return ZE_RESULT_ERROR_UNSUPPORTED_VERSION;                  \
    } while (0)
#define ZS_SINCE(v, minor) (ZE_MINOR_VERSION(v) >= (minor))

ZS_EXPORT ze_result_t zeGetGlobalProcAddrTable(ze_api_version_t v, ze_global_dditable_t *t) {
    ZS_VERSION_CHECK(v, t);
    t->pfnInit = zs_zeInit;
    null_entries("ze_global", t, v);
    return ZE_RESULT_SUCCESS;
}

ZS_EXPORT ze_result_t zeGetDriverProcAddrTable(ze_api_version_t v, ze_driver_dditable_t *t) {
    ZS_VERSION_CHECK(v, t);
    t->pfnGet = zs_zeDriverGet;
    t->pfnGetApiVersion = zs_zeDriverGetApiVersion;
    t->pfnGetProperties = zs_zeDriverGetProperties;
    t->pfnGetIpcProperties = zs_zeDriverGetIpcProperties;
    t->pfnGetExtensionProperties = zs_zeDriverGetExtensionProperties;
    t->pfnGetExtensionFunctionAddress = zs_zeDriverGetExtensionFunctionAddress;
    null_entries("ze_driver", t, v);
    return ZE_RESULT_SUCCESS;
}

ZS_EXPORT ze_result_t zeGetDeviceProcAddrTable(ze_api_version_t v, ze_device_dditable_t *t) {
    ZS_VERSION_CHECK(v, t);
    t->pfnGet = zs_zeDeviceGet;
    t->pfnGetSubDevices = zs_zeDeviceGetSubDevices;
    t->pfnGetProperties = zs_zeDeviceGetProperties;
    t->pfnGetComputeProperties = zs_zeDeviceGetComputeProperties;
    t->pfnGetModuleProperties = zs_zeDeviceGetModuleProperties;
    t->pfnGetCommandQueueGroupProperties = zs_zeDeviceGetCommandQueueGroupProperties;
    t->pfnGetMemoryProperties = zs_zeDeviceGetMemoryProperties;
    t->pfnGetMemoryAccessProperties = zs_zeDeviceGetMemoryAccessProperties;
    t->pfnGetCacheProperties = zs_zeDeviceGetCacheProperties;
    t->pfnGetImageProperties = zs_zeDeviceGetImageProperties;
    t->pfnGetExternalMemoryProperties = zs_zeDeviceGetExternalMemoryProperties;
    t->pfnGetP2PProperties = zs_zeDeviceGetP2PProperties;
    t->pfnCanAccessPeer = zs_zeDeviceCanAccessPeer;
    t->pfnGetStatus = zs_zeDeviceGetStatus;
    if (ZS_SINCE(v, 1)) t->pfnGetGlobalTimestamps = zs_zeDeviceGetGlobalTimestamps;
    null_entries("ze_device", t, v);
    return ZE_RESULT_SUCCESS;
}

ZS_EXPORT ze_result_t zeGetContextProcAddrTable(ze_api_version_t v, ze_context_dditable_t *t) {
    ZS_VERSION_CHECK(v, t);
    t->pfnCreate = zs_zeContextCreate;
    t->pfnDestroy = zs_zeContextDestroy;
    t->pfnGetStatus = zs_zeContextGetStatus;
    t->pfnSystemBarrier = zs_zeContextSystemBarrier;
    t->pfnMakeMemoryResident = zs_zeContextMakeMemoryResident;
    t->pfnEvictMemory = zs_zeContextEvictMemory;
    t->pfnMakeImageResident = zs_zeContextMakeImageResident;
    t->pfnEvictImage = zs_zeContextEvictImage;
    if (ZS_SINCE(v, 1)) t->pfnCreateEx = zs_zeContextCreateEx;
    null_entries("ze_context", t, v);
    return ZE_RESULT_SUCCESS;
}

ZS_EXPORT ze_result_t zeGetCommandQueueProcAddrTable(ze_api_version_t v, ze_command_queue_dditable_t *t) {
    ZS_VERSION_CHECK(v, t);
    zs_fill_queue_table(t);
    null_entries("ze_command_queue", t, v);
    return ZE_RESULT_SUCCESS;
}

ZS_EXPORT ze_result_t zeGetCommandListProcAddrTable(ze_api_version_t v, ze_command_list_dditable_t *t) {
    ZS_VERSION_CHECK(v, t);
    zs_fill_list_table(t, ZE_MINOR_VERSION(v));
    null_entries("ze_command_list", t, v);
    return ZE_RESULT_SUCCESS;
}

ZS_EXPORT ze_result_t zeGetEventProcAddrTable(ze_api_version_t v, ze_event_dditable_t *t) {
    ZS_VERSION_CHECK(v, t);
    zs_fill_event_table(t);
    null_entries("ze_event", t, v);
    return ZE_RESULT_SUCCESS;
}

ZS_EXPORT ze_result_t zeGetEventPoolProcAddrTable(ze_api_version_t v, ze_event_pool_dditable_t *t) {
    ZS_VERSION_CHECK(v, t);
    zs_fill_event_pool_table(t);
    null_entries("ze_event_pool", t, v);
    return ZE_RESULT_SUCCESS;
}

ZS_EXPORT ze_result_t zeGetFenceProcAddrTable(ze_api_version_t v, ze_fence_dditable_t *t) {
    ZS_VERSION_CHECK(v, t);
    zs_fill_fence_table(t);
    null_entries("ze_fence", t, v);
    return ZE_RESULT_SUCCESS;
}

ZS_EXPORT ze_result_t zeGetImageProcAddrTable(ze_api_version_t v, ze_image_dditable_t *t) {
    ZS_VERSION_CHECK(v, t);
    zs_fill_image_table(t);
    null_entries("ze_image", t, v);
    return ZE_RESULT_SUCCESS;
}

ZS_EXPORT ze_result_t zeGetKernelProcAddrTable(ze_api_version_t v, ze_kernel_dditable_t *t) {
    ZS_VERSION_CHECK(v, t);
    zs_fill_kernel_table(t);
    null_entries("ze_kernel", t, v);
    return ZE_RESULT_SUCCESS;
}

ZS_EXPORT ze_result_t zeGetMemProcAddrTable(ze_api_version_t v, ze_mem_dditable_t *t) {
    ZS_VERSION_CHECK(v, t);
    zs_fill_mem_table(t);
    null_entries("ze_mem", t, v);
    return ZE_RESULT_SUCCESS;
}

ZS_EXPORT ze_result_t zeGetModuleProcAddrTable(ze_api_version_t v, ze_module_dditable_t *t) {
    ZS_VERSION_CHECK(v, t);
    zs_fill_module_table(t);
    null_entries("ze_module", t, v);
    return ZE_RESULT_SUCCESS;
}

ZS_EXPORT ze_result_t zeGetModuleBuildLogProcAddrTable(ze_api_version_t v, ze_module_build_log_dditable_t *t) {
    ZS_VERSION_CHECK(v, t);
    zs_fill_build_log_table(t);
    null_entries("ze_module_build_log", t, v);
    return ZE_RESULT_SUCCESS;
}

ZS_EXPORT ze_result_t zeGetSamplerProcAddrTable(ze_api_version_t v, ze_sampler_dditable_t *t) {
    ZS_VERSION_CHECK(v, t);
    zs_fill_sampler_table(t);
    null_entries("ze_sampler", t, v);
    return ZE_RESULT_SUCCESS;
}

/* Tables zesim does not implement: the loader needs the getter to succeed; NULL entries make the
 * loader answer ZE_RESULT_ERROR_UNSUPPORTED_FEATURE. */
#define ZS_EMPTY_GETTER(fn, type)                                                                  \
    ZS_EXPORT ze_result_t fn(ze_api_version_t v, type *t) {                                       \
        ZS_VERSION_CHECK(v, t);                                                                    \
        return ZE_RESULT_SUCCESS;                                                                  \
    }

ZS_EMPTY_GETTER(zeGetPhysicalMemProcAddrTable, ze_physical_mem_dditable_t)
ZS_EMPTY_GETTER(zeGetVirtualMemProcAddrTable, ze_virtual_mem_dditable_t)
ZS_EMPTY_GETTER(zetGetDeviceProcAddrTable, zet_device_dditable_t)
ZS_EMPTY_GETTER(zetGetContextProcAddrTable, zet_context_dditable_t)
ZS_EMPTY_GETTER(zetGetCommandListProcAddrTable, zet_command_list_dditable_t)
ZS_EMPTY_GETTER(zetGetKernelProcAddrTable, zet_kernel_dditable_t)
ZS_EMPTY_GETTER(zetGetModuleProcAddrTable, zet_module_dditable_t)
ZS_EMPTY_GETTER(zetGetDebugProcAddrTable, zet_debug_dditable_t)
ZS_EMPTY_GETTER(zetGetMetricProcAddrTable, zet_metric_dditable_t)
ZS_EMPTY_GETTER(zetGetMetricGroupProcAddrTable, zet_metric_group_dditable_t)
ZS_EMPTY_GETTER(zetGetMetricQueryProcAddrTable, zet_metric_query_dditable_t)
ZS_EMPTY_GETTER(zetGetMetricQueryPoolProcAddrTable, zet_metric_query_pool_dditable_t)
ZS_EMPTY_GETTER(zetGetMetricStreamerProcAddrTable, zet_metric_streamer_dditable_t)
ZS_EMPTY_GETTER(zetGetTracerExpProcAddrTable, zet_tracer_exp_dditable_t)
ZS_EMPTY_GETTER(zesGetDeviceProcAddrTable, zes_device_dditable_t)
ZS_EMPTY_GETTER(zesGetDriverProcAddrTable, zes_driver_dditable_t)
ZS_EMPTY_GETTER(zesGetDiagnosticsProcAddrTable, zes_diagnostics_dditable_t)
ZS_EMPTY_GETTER(zesGetEngineProcAddrTable, zes_engine_dditable_t)
ZS_EMPTY_GETTER(zesGetFabricPortProcAddrTable, zes_fabric_port_dditable_t)
ZS_EMPTY_GETTER(zesGetFanProcAddrTable, zes_fan_dditable_t)
ZS_EMPTY_GETTER(zesGetFirmwareProcAddrTable, zes_firmware_dditable_t)
ZS_EMPTY_GETTER(zesGetFrequencyProcAddrTable, zes_frequency_dditable_t)
ZS_EMPTY_GETTER(zesGetLedProcAddrTable, zes_led_dditable_t)
ZS_EMPTY_GETTER(zesGetMemoryProcAddrTable, zes_memory_dditable_t)
ZS_EMPTY_GETTER(zesGetPerformanceFactorProcAddrTable, zes_performance_factor_dditable_t)
ZS_EMPTY_GETTER(zesGetPowerProcAddrTable, zes_power_dditable_t)
ZS_EMPTY_GETTER(zesGetPsuProcAddrTable, zes_psu_dditable_t)
ZS_EMPTY_GETTER(zesGetRasProcAddrTable, zes_ras_dditable_t)
ZS_EMPTY_GETTER(zesGetSchedulerProcAddrTable, zes_scheduler_dditable_t)
ZS_EMPTY_GETTER(zesGetStandbyProcAddrTable, zes_standby_dditable_t)
ZS_EMPTY_GETTER(zesGetTemperatureProcAddrTable, zes_temperature_dditable_t)
