/* SPDX-License-Identifier: MIT */
/* Collector-side state for driver objects, the bottom of the layer: the shared state (zc_ze) and
 * the lookup caches of zc_ze_objects.h, devices (with their clocks' parameters, and whether timing
 * still runs on them), contexts with our pools of injected events, and the USM allocation ranges
 * that classify transfers. All driver calls here go to zc_ze_real, never through our own wrappers. */
#include "zc_ze_objects.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define ZC_POOL_EVENTS 256

struct zc_ze zc_ze = {
    .lists = ZC_MAP_INIT, .queues = ZC_MAP_INIT, .kernels = ZC_MAP_INIT, .images = ZC_MAP_INIT, .ctxs = ZC_MAP_INIT,
    .uevents = ZC_MAP_INIT, .devs_lock = PTHREAD_MUTEX_INITIALIZER, .streams_lock = PTHREAD_MUTEX_INITIALIZER,
};

_Thread_local struct zc_ze_tls_cache zc_ze_tls_list __attribute__((tls_model("initial-exec")));
_Thread_local struct zc_ze_tls_cache zc_ze_tls_kernel __attribute__((tls_model("initial-exec")));

void *__attribute__((noinline)) zc_ze_cached_miss(struct zc_ze_tls_cache *c, atomic_uint_fast64_t *gen,
                                                  struct zc_map *m, const void *h) {
    /* read again before the lookup: an object gone after it makes the next hit miss */
    uint64_t g = atomic_load_explicit(gen, memory_order_acquire);
    void *v = zc_map_get(m, h);
    *c = (struct zc_ze_tls_cache){h, v, g};
    return v;
}
atomic_uint_fast64_t zc_ze_list_gen = 1, zc_ze_kernel_gen = 1;

/* ---------------------------------------------------------------- devices */
static struct zc_dev *dev_register_locked(ze_device_handle_t h) {
    for (uint32_t i = 0; i < zc_ze.ndevs; i++)
        if (zc_ze.devs[i]->h == h) return zc_ze.devs[i];
    if (zc_ze.ndevs == ZC_ZE_MAX_DEVICES || !zc_ze_real.ze_device.pfnGetProperties) return NULL;
    ze_device_properties_t p;
    memset(&p, 0, sizeof(p));
    /* the 1.2 struct reports ticks per second; the 1.0 one rounds to whole ns per tick */
    p.stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES_1_2;
    if (zc_ze_real.ze_device.pfnGetProperties(h, &p) != ZE_RESULT_SUCCESS) return NULL;
    struct zc_dev *d = calloc(1, sizeof(*d));
    if (!d) return NULL;
    d->h = h;
    d->index = zc_ze.ndevs;
    d->hz = p.timerResolution ? p.timerResolution : 1000000000u;
    /* very old drivers answer the 1.2 query in ns/tick; a "frequency" below 1 kHz is that */
    if (d->hz < 1000) d->hz = 1000000000u / d->hz;
    d->kbits = p.kernelTimestampValidBits ? p.kernelTimestampValidBits : 32;
    d->gbits = p.timestampValidBits ? p.timestampValidBits : 64;
    pthread_mutex_init(&d->clock_lock, NULL);
    d->harvest_ordinal = -1;
    d->copy_ordinal = -1;
    d->integrated = (p.flags & ZE_DEVICE_PROPERTY_FLAG_INTEGRATED) != 0;
    d->offload_rules = zc_ze_offload_rules(NULL); /* its driver's, once enumerated */
    uint32_t n = 0;
    if (zc_ze_real.ze_device.pfnGetCommandQueueGroupProperties &&
        zc_ze_real.ze_device.pfnGetCommandQueueGroupProperties(h, &n, NULL) == ZE_RESULT_SUCCESS && n) {
        if (n > ZC_ZE_MAX_GROUPS) n = ZC_ZE_MAX_GROUPS;
        ze_command_queue_group_properties_t g[ZC_ZE_MAX_GROUPS];
        memset(g, 0, sizeof(g));
        for (uint32_t i = 0; i < n; i++) g[i].stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_GROUP_PROPERTIES;
        if (zc_ze_real.ze_device.pfnGetCommandQueueGroupProperties(h, &n, g) == ZE_RESULT_SUCCESS) {
            d->ngroups = n;
            for (uint32_t i = 0; i < n; i++) {
                d->copy_only[i] = !(g[i].flags & ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COMPUTE);
                if (d->copy_only[i] && d->copy_ordinal < 0 && g[i].numQueues) d->copy_ordinal = (int)i;
                if (!d->copy_only[i] && d->harvest_ordinal < 0 && g[i].numQueues) {
                    d->harvest_ordinal = (int)i;
                    d->harvest_index = g[i].numQueues - 1;
                }
            }
        }
    }
    char uuid[2 * ZE_MAX_DEVICE_UUID_SIZE + 1];
    for (int i = 0; i < ZE_MAX_DEVICE_UUID_SIZE; i++) snprintf(uuid + 2 * i, 3, "%02x", p.uuid.id[i]);
    char name[ZE_MAX_DEVICE_NAME + 16];
    snprintf(name, sizeof(name), "%s [%u]", p.name, d->index);
    d->def = zc_def_device(d->index, name, uuid);
    zc_ze.devs[zc_ze.ndevs++] = d;
    zc_ze_clock_anchor(d, true);
    return d;
}

struct zc_dev *zc_ze_dev(ze_device_handle_t h) {
    if (!h) return NULL;
    pthread_mutex_lock(&zc_ze.devs_lock);
    struct zc_dev *d = dev_register_locked(h);
    pthread_mutex_unlock(&zc_ze.devs_lock);
    return d;
}

/* Devices get numbers in driver order, as the application's zeDeviceGet sees them. */
void zc_ze_devices_enumerate(void) {
    if (!zc_ze_real.ze_driver.pfnGet || !zc_ze_real.ze_device.pfnGet) return;
    uint32_t nd = 0;
    if (zc_ze_real.ze_driver.pfnGet(&nd, NULL) != ZE_RESULT_SUCCESS || nd == 0) return;
    ze_driver_handle_t drv[8];
    if (nd > 8) nd = 8;
    if (zc_ze_real.ze_driver.pfnGet(&nd, drv) != ZE_RESULT_SUCCESS) return;
    for (uint32_t i = 0; i < nd; i++) {
        uint32_t n = 0;
        if (zc_ze_real.ze_device.pfnGet(drv[i], &n, NULL) != ZE_RESULT_SUCCESS || n == 0) continue;
        ze_device_handle_t devs[ZC_ZE_MAX_DEVICES];
        if (n > ZC_ZE_MAX_DEVICES) n = ZC_ZE_MAX_DEVICES;
        if (zc_ze_real.ze_device.pfnGet(drv[i], &n, devs) != ZE_RESULT_SUCCESS) continue;
        uint8_t rules = zc_ze_offload_rules(drv[i]);
        for (uint32_t k = 0; k < n; k++) {
            struct zc_dev *d = zc_ze_dev(devs[k]);
            /* a list may be created on another thread meanwhile: it reads the old or the new rules */
            if (d) __atomic_store_n(&d->offload_rules, rules, __ATOMIC_RELAXED);
        }
    }
}

/* ---------------------------------------------------------------- devices whose timing stopped */
/* Devices whose completion queries failed: one message each, timing stops there (callable with
 * any lock held: records are dropped by the next drain of each stream, see stream_drain). */
static void device_off_say(struct zc_dev *d, bool count, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void strict_abort(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    zc_strict_vabort(__func__, __LINE__, fmt, ap);
}

static void device_off_say(struct zc_dev *d, bool count, const char *fmt, ...) {
    if (!d || atomic_exchange(&d->off, true)) return;
    atomic_fetch_add(&zc_ze.devs_off, 1);
    char msg[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (count) { /* the driver failed us: counted once per device, not once per record */
        atomic_fetch_add(&zc_failures, 1);
        if (zc_knobs.STRICT) strict_abort("device %u: %s", d->index, msg);
    }
    ZC_WARN("device %u: %s: its GPU operations are not timed from now on, records still pending are dropped", d->index,
            msg);
}

bool zc_ze_device_off(struct zc_dev *d, const char *call, ze_result_t r) {
    if (r == ZE_RESULT_SUCCESS || r == ZE_RESULT_NOT_READY) return false;
    if (r == ZE_RESULT_ERROR_UNSUPPORTED_FEATURE || r == ZE_RESULT_ERROR_UNINITIALIZED)
        device_off_say(d, false, "the driver does not support %s on our events (0x%x; a driver feature, not an error)",
                       call, (unsigned)r);
    else if (r == ZE_RESULT_ERROR_DEVICE_LOST)
        device_off_say(d, false, "device lost (%s returned ZE_RESULT_ERROR_DEVICE_LOST)", call);
    else
        device_off_say(d, true, "%s failed on our events (0x%x)", call, (unsigned)r);
    return true;
}

void zc_ze_device_stuck(struct zc_dev *d, const char *why) { device_off_say(d, true, "%s", why); }

ze_result_t zc_ze_event_wait(ze_event_handle_t e, uint64_t timeout_ns) {
    if (zc_ze_real.ze_event.pfnHostSynchronize) return zc_ze_real.ze_event.pfnHostSynchronize(e, timeout_ns);
    uint64_t deadline = timeout_ns == UINT64_MAX ? UINT64_MAX : zc_now() + timeout_ns, nap = 1000;
    for (;;) {
        ze_result_t r = zc_ze_real.ze_event.pfnQueryStatus(e);
        if (r != ZE_RESULT_NOT_READY || zc_now() >= deadline) return r;
        struct timespec ts = {0, (long)nap};
        nanosleep(&ts, NULL);
        if (nap < 100000) nap *= 2;
    }
}

/* ---------------------------------------------------------------- contexts and event pools */
static pthread_mutex_t ctx_lock = PTHREAD_MUTEX_INITIALIZER;
static uint32_t next_ctx;

struct zc_ctx *zc_ze_ctx(ze_context_handle_t h) {
    if (!h) return NULL;
    struct zc_ctx *c = zc_map_get(&zc_ze.ctxs, h);
    if (c) return c;
    pthread_mutex_lock(&ctx_lock);
    c = zc_map_get(&zc_ze.ctxs, h);
    if (!c && (c = calloc(1, sizeof(*c)))) {
        c->h = h;
        c->index = next_ctx++;
        pthread_mutex_init(&c->lock, NULL);
        int err;
        zc_map_put(&zc_ze.ctxs, h, c, &err);
        if (err) {
            free(c);
            c = NULL;
        }
    }
    pthread_mutex_unlock(&ctx_lock);
    return c;
}

/* On PVC and BMG the driver turns a regular event that an Append on an in-order immediate list
 * signals into a counter-based one (compute-runtime's implicit conversion), unless that event was
 * ever reset by an Append: then it stays regular for good. Ours are signalled on the application's
 * in-order lists and must stay regular (reset from the host between uses, which the driver
 * rejects on counter-based events, and read back after a later reuse). An AppendEventReset of
 * each on a regular list of ours that never runs settles it before any list but a regular one
 * the app appends to gets it (zc_ze_event_get_batch): only an Append on an in-order immediate
 * list converts (compute-runtime's InOrderCmdListTests: an Append on a regular list, in-order or
 * not, or on an out-of-order immediate one, never does), so the events a regular list signals
 * need not be settled until they go to another list, and a list of N kernels executed once
 * costs no N resets appended for this. Without the entries (or a device of the context) they
 * stay as they are. */
static void defuse_conversion(struct zc_ctx *c, ze_event_handle_t *ev, uint32_t n) {
    struct zc_ze_real *R = &zc_ze_real;
    if (!n || !R->ze_command_list.pfnCreate || !R->ze_command_list.pfnAppendEventReset || !R->ze_command_list.pfnDestroy)
        return;
    ze_device_handle_t dev = NULL;
    pthread_mutex_lock(&zc_ze.devs_lock);
    if (zc_ze.ndevs) dev = zc_ze.devs[0]->h;
    pthread_mutex_unlock(&zc_ze.devs_lock);
    ze_command_list_desc_t ld = {ZE_STRUCTURE_TYPE_COMMAND_LIST_DESC, NULL, 0, 0};
    ze_command_list_handle_t l;
    if (!dev || R->ze_command_list.pfnCreate(c->h, dev, &ld, &l) != ZE_RESULT_SUCCESS) return;
    for (uint32_t i = 0; i < n; i++) R->ze_command_list.pfnAppendEventReset(l, ev[i]);
    R->ze_command_list.pfnDestroy(l);
}

/* Room in every state's array for n more events than the context owns. */
static bool room_locked(struct zc_ctx *c, uint64_t n) {
    if (c->nevents + n <= c->cap_free) return true;
    uint32_t ncap = c->cap_free ? 2 * c->cap_free : ZC_POOL_EVENTS;
    while (ncap < c->nevents + n) ncap *= 2;
    ze_event_handle_t **arr[3] = {&c->free_events, &c->raw_events, &c->used_events};
    for (int i = 0; i < 3; i++) {
        ze_event_handle_t *p = realloc(*arr[i], ncap * sizeof(*p));
        if (!p) return false; /* the arrays grown so far keep their room: harmless */
        *arr[i] = p;
    }
    c->cap_free = ncap;
    return true;
}

/* A new event pool's events: defused into free, or (for a list with raw_ok) as they are into raw. */
static int pool_grow_locked(struct zc_ctx *c, bool raw) {
    ze_event_pool_desc_t pd = {ZE_STRUCTURE_TYPE_EVENT_POOL_DESC, NULL,
                               ZE_EVENT_POOL_FLAG_KERNEL_TIMESTAMP | ZE_EVENT_POOL_FLAG_HOST_VISIBLE, ZC_POOL_EVENTS};
    ze_event_pool_handle_t pool;
    ze_result_t r = zc_ze_real.ze_event_pool.pfnCreate(c->h, &pd, 0, NULL, &pool);
    if (r != ZE_RESULT_SUCCESS) {
        /* the app keeps running untimed in this context; not worth disabling timing elsewhere */
        if (!c->broken) ZC_WARN("cannot create an event pool for timing in context %u (0x%x): its GPU operations go untimed",
                                c->index, (unsigned)r);
        c->broken = true;
        return -1;
    }
    if (c->npools == c->cap_pools) {
        uint32_t ncap = c->cap_pools ? 2 * c->cap_pools : 8;
        ze_event_pool_handle_t *n = realloc(c->pools, ncap * sizeof(*n));
        if (!n) goto fail;
        c->pools = n;
        c->cap_pools = ncap;
    }
    if (!room_locked(c, ZC_POOL_EVENTS)) goto fail;
    c->pools[c->npools++] = pool;
    ze_event_handle_t *dst = raw ? c->raw_events : c->free_events;
    uint32_t *nd = raw ? &c->nraw : &c->nfree, first = *nd;
    for (uint32_t i = 0; i < ZC_POOL_EVENTS; i++) {
        ze_event_desc_t ed = {ZE_STRUCTURE_TYPE_EVENT_DESC, NULL, i, ZE_EVENT_SCOPE_FLAG_HOST, ZE_EVENT_SCOPE_FLAG_HOST};
        ze_event_handle_t e;
        ze_result_t er = zc_ze_real.ze_event.pfnCreate(pool, &ed, &e);
        if (er != ZE_RESULT_SUCCESS) {
            /* said once per context, at the default level: else only "untimed operation(s)" at
             * level 2 tells why the archive holds no device times */
            if (i == 0 && !c->create_failed)
                ZC_WARN("zeEventCreate fails for the collector's timing events in context %u (0x%x): GPU operations "
                        "there that find no free event go untimed",
                        c->index, (unsigned)er);
            c->create_failed |= i == 0;
            break;
        }
        dst[(*nd)++] = e;
        c->nevents++;
    }
    if (!raw) defuse_conversion(c, dst + first, *nd - first);
    return *nd > first ? 0 : -1;
fail:
    if (zc_ze_real.ze_event_pool.pfnDestroy) zc_ze_real.ze_event_pool.pfnDestroy(pool);
    c->broken = true;
    ZC_FAIL(ZC_F_DEVICE_TIMING, "out of memory growing the injected-event pool");
    return -1;
}

/* Up to n events from the top of one state's array into out. */
static uint32_t take(ze_event_handle_t *from, uint32_t *nfrom, ze_event_handle_t *out, uint32_t n) {
    uint32_t k = n < *nfrom ? n : *nfrom;
    *nfrom -= k;
    if (k) memcpy(out, from + *nfrom, k * sizeof(*out)); /* an empty state's array may not exist yet */
    return k;
}

/* Which events a list gets, cheapest first. A list with raw_ok (a regular list the app appends
 * to) takes raw ones first, then free ones, then used ones reset from the host, and grows the
 * pool without the defusing Append resets: events signalled only on regular lists are never
 * converted. Any other list (immediate ones, our helper lists) gets free ones, then used ones
 * reset, then raw ones, the two latter defused here (one list of ours for the batch), and grows
 * the pool defused. Either way every event handed out is unsignalled. */
uint32_t zc_ze_event_get_batch(struct zc_ctx *c, ze_event_handle_t *out, uint32_t n, bool raw) {
    if (!c) return 0;
    pthread_mutex_lock(&c->lock);
    uint32_t k = 0;
    if (raw) k += take(c->raw_events, &c->nraw, out, n);
    k += take(c->free_events, &c->nfree, out + k, n - k);
    uint32_t used = k;
    k += take(c->used_events, &c->nused, out + k, n - k);
    for (uint32_t i = used; i < k; i++) zc_ze_real.ze_event.pfnHostReset(out[i]);
    if (!raw) {
        k += take(c->raw_events, &c->nraw, out + k, n - k);
        defuse_conversion(c, out + used, k - used);
    }
    while (k < n && !c->broken && pool_grow_locked(c, raw) == 0)
        k += raw ? take(c->raw_events, &c->nraw, out + k, n - k) : take(c->free_events, &c->nfree, out + k, n - k);
    pthread_mutex_unlock(&c->lock);
    return k;
}

ze_event_handle_t zc_ze_event_get(struct zc_ctx *c) {
    ze_event_handle_t e = NULL;
    return zc_ze_event_get_batch(c, &e, 1, false) ? e : NULL;
}

void zc_ze_event_put(struct zc_ctx *c, ze_event_handle_t e) {
    if (!c || !e) return;
    zc_ze_real.ze_event.pfnHostReset(e);
    pthread_mutex_lock(&c->lock);
    if (c->nfree < c->cap_free) c->free_events[c->nfree++] = e;
    else ZC_DEBUG("event returned to a full pool list (context %u)", c->index); /* cannot happen */
    pthread_mutex_unlock(&c->lock);
}

void zc_ze_event_put_n(struct zc_ctx *c, const ze_event_handle_t *e, uint32_t n, enum zc_ev_back st) {
    if (!c || !n) return;
    pthread_mutex_lock(&c->lock);
    ze_event_handle_t *to = st == ZC_EV_RAW ? c->raw_events : c->used_events;
    uint32_t *nto = st == ZC_EV_RAW ? &c->nraw : &c->nused;
    for (uint32_t i = 0; i < n; i++) {
        if (!e[i]) continue;
        if (*nto < c->cap_free) to[(*nto)++] = e[i];
        else ZC_DEBUG("event returned to a full pool list (context %u)", c->index); /* cannot happen */
    }
    pthread_mutex_unlock(&c->lock);
}

/* ---------------------------------------------------------------- USM ranges */
struct range {
    uintptr_t base;
    size_t size;
    char type;
};
static pthread_rwlock_t mem_lock = PTHREAD_RWLOCK_INITIALIZER;
static struct range *ranges;
static size_t nranges, cap_ranges;

static size_t lower_bound(uintptr_t p) {
    size_t lo = 0, hi = nranges;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (ranges[mid].base < p) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

void zc_ze_mem_add(const void *p, size_t size, char type) {
    pthread_rwlock_wrlock(&mem_lock);
    if (nranges == cap_ranges) {
        size_t ncap = cap_ranges ? 2 * cap_ranges : 256;
        struct range *n = realloc(ranges, ncap * sizeof(*n));
        if (!n) {
            pthread_rwlock_unlock(&mem_lock);
            return; /* the range classifies as 'M': a naming loss, not a failure */
        }
        ranges = n;
        cap_ranges = ncap;
    }
    size_t i = lower_bound((uintptr_t)p);
    memmove(&ranges[i + 1], &ranges[i], (nranges - i) * sizeof(*ranges));
    ranges[i] = (struct range){(uintptr_t)p, size, type};
    nranges++;
    pthread_rwlock_unlock(&mem_lock);
}

void zc_ze_mem_del(const void *p) {
    pthread_rwlock_wrlock(&mem_lock);
    size_t i = lower_bound((uintptr_t)p);
    if (i < nranges && ranges[i].base == (uintptr_t)p) {
        memmove(&ranges[i], &ranges[i + 1], (nranges - i - 1) * sizeof(*ranges));
        nranges--;
    }
    pthread_rwlock_unlock(&mem_lock);
}

char zc_ze_memtype(const void *p) {
    char t = 'M';
    pthread_rwlock_rdlock(&mem_lock);
    size_t i = lower_bound((uintptr_t)p + 1);
    if (i > 0 && (uintptr_t)p < ranges[i - 1].base + ranges[i - 1].size) t = ranges[i - 1].type;
    pthread_rwlock_unlock(&mem_lock);
    return t;
}
