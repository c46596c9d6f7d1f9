/* SPDX-License-Identifier: MIT */
/* The Level Zero layer of zecoll: its types, its shared state and every function one of its files
 * offers another (README.md in this folder: which file does what, and which calls which). No
 * inline code here that calls into a file of the layer: the inline fast paths live in headers of
 * their own, each beside the .c with their slow paths (zc_ze_call.h, zc_ze_inbox.h,
 * zc_ze_objects.h, zc_ze_append.h).
 *
 * Interception: libzecoll_ze.so is the driver the loader loads (ZE_ENABLE_ALT_DRIVERS); its
 * getters call zecoll_ze_getter(), which loads the real driver, lets it fill the loader's table
 * and replaces every entry with a generated wrapper (zc_ze_gen.c). Our own calls go to
 * zc_ze_real directly, so they never reach our hooks or any layer above the driver.
 *
 * Device timing: every timed Append gets an injected KERNEL_TIMESTAMP event as its signal event;
 * an application event is re-signalled by a barrier waiting on ours. A record per executed
 * operation waits on its device stream (one per command queue, one per engine for immediate
 * lists) until completion is observed at a synchronisation point, is converted to host time
 * and written to the stream's location in start order.
 *
 * Locking: a timed Append takes no lock: lists are used by one thread at a time (the
 * spec requires it), so a list's event pool and templates are that thread's; an immediate list's
 * operations reach its stream through the list's single-producer inbox. Each stream has a mutex
 * for its record queue (Execute pushes, drainers) and a drain lock (one drainer at a time, the
 * inboxes' only consumer); a list's mutex guards the events drainers hand back and its helper
 * slots; the context pools have one each. Lock order: list -> context pool; stream alone. */
#ifndef ZC_ZE_INTERNAL_H
#define ZC_ZE_INTERNAL_H

#include "zc_core.h"
#include "zc_papi.h"
#include "zc_map.h"
#include "zc_ze_gen.h"

#define ZC_ZE_MAX_DEVICES 64
#define ZC_ZE_MAX_GROUPS 8
#define ZC_ZE_MAX_LANES 64
#define ZC_ZE_LIST_FLAG_IN_ORDER (1u << 3)  /* spec 1.9, absent from the 1.8.12 headers */
#define ZC_ZE_QUEUE_FLAG_IN_ORDER (1u << 1)
/* The copy-offload hints (spec 1.14 for queue descriptors, 1.15 for list descriptors): copies
 * appended to an in-order compute list may run on a copy engine the driver picks. */
#define ZC_ZE_QUEUE_FLAG_COPY_OFFLOAD (1u << 2)
#define ZC_ZE_LIST_FLAG_COPY_OFFLOAD (1u << 5)

/* ---------------------------------------------------------------- calls */
struct zc_ze_call {
    struct zc_thread *t;
    uint64_t t0;
    /* callsite to ptr: cleared by every call's begin (in this order: two 16-byte stores) */
    uint64_t callsite;             /* non-zero: written as "callsite id" inside the API region */
    /* hook scratch, carried from prologue to epilogue */
    ze_event_handle_t user_event;
    ze_event_handle_t inj;
    void *ptr;
    uint32_t api;
    ze_command_list_handle_t *lists; /* ExecuteCommandLists: the array we passed instead */
    uint32_t nlists;
    /* t == NULL: recording is off, the hooks do bookkeeping only (zc_ze_call_closed) */
};

/* What the hooks of an API do while recording is off (ze_hooks.spec, closed=...). */
enum zc_ze_closed {
    ZC_ZE_CLOSED_NEVER,   /* pass through */
    ZC_ZE_CLOSED_ALWAYS,  /* object bookkeeping */
    ZC_ZE_CLOSED_UEVENTS, /* once an app event was re-signalled by a timed operation */
    ZC_ZE_CLOSED_LAUNCH,  /* kernel windows apply: launches are counted */
    ZC_ZE_CLOSED_EXECUTE, /* some list carries our events (was timed while recording) */
    ZC_ZE_CLOSED_SYNC,    /* ZECOLL_DRAIN_INTERVAL_US=0: only synchronisation points collect */
};
extern atomic_bool zc_ze_uevents_any;     /* an app event was ever re-signalled */
extern atomic_uint_fast64_t zc_ze_tmpl_lists; /* a regular list was timed (holds our events) */
/* The background drainer parks when no stream holds anything (an idle process: no wake-ups);
 * the first record queued after that wakes it. One relaxed load where a record is queued (the
 * flag's line is written only when the drainer parks or wakes); a wake-up lost to the race with
 * parking (no fence on the Append path) waits for the parked drainer's timeout, ZC_BG_PARK_MS. */
extern atomic_uint zc_ze_bg_parked;
void zc_ze_bg_wake(void);
static inline void zc_ze_bg_poke(void) {
    if (__builtin_expect(atomic_load_explicit(&zc_ze_bg_parked, memory_order_relaxed) != 0, 0)) zc_ze_bg_wake();
}

/* ---------------------------------------------------------------- what the driver offers */
/* A real driver may leave any entry of its tables NULL (older, NPU and minimal drivers). The
 * collector never calls one that is NULL: the getter records after every table which of the
 * entries the collector itself calls exist, and the way device timing works follows from that
 * (zc_ze_caps.c says which entry each capability needs; zeInit's post hook says once what is
 * off). Entries the application calls stay NULL in its tables, exactly as without zecoll.
 * Every driver call of ours is written zc_ze_real.<table>.<pfn> (R-><table>.<pfn> in the slot builders):
 * tests/collector/null_matrix.py finds the entries to test by that pattern. */
struct zc_ze_caps {
    bool timing;    /* event pools, events, host reset, status query, device properties */
    bool host_read; /* zeEventQueryKernelTimestamp: our events read from the host */
    bool barrier;   /* AppendBarrier: an application event re-signalled after our event */
    bool signal;    /* AppendSignalEvent: the same, but only where commands run in order */
    bool helpers;   /* pre/post helper lists of regular-list executions (no device harvest) */
    bool harvest;   /* + AppendQueryKernelTimestamps into host memory: device-side harvest */
    bool groups;    /* queue group properties: which engines are copy-only */
    bool copy_harvest; /* + command queues of ours: copy-only lists harvested on a compute engine */
};
extern struct zc_ze_caps zc_ze_caps;
/* Recomputed by the getter after each table the loader fetched. */
void zc_ze_caps_update(void);
/* Says once (job leader at warning level, other ranks at info) what a missing entry switched off. */
void zc_ze_caps_announce(void);

/* How executions of a regular list are timed (from zc_ze_caps and the list's engine). */
enum zc_reg_mode {
    ZC_REG_NONE,    /* not timed */
    ZC_REG_SERIAL,  /* no helper lists: a resubmission waits until the previous execution is read
                     * from the host, which then resets our events; app-event Appends untimed */
    ZC_REG_HOST,    /* helper lists, our events read from the host, one execution in flight */
    ZC_REG_DEVICE,  /* helper lists with device-side harvest, ZECOLL_HARVEST_BUFFERS in flight (copy-only
                     * lists: by a harvest list on a compute engine, zc_slot.harvest) */
};

/* exported: the bridge libzecoll_ze.so's getters call */
/* ---------------------------------------------------------------- devices and clocks */
struct zc_anchor {
    uint64_t host, dev; /* dev unrolled to 64 bits */
};

struct zc_dev {
    ze_device_handle_t h;
    uint32_t index, def;
    uint64_t hz;          /* from ze_device_properties_t 1.2: ticks per second */
    uint32_t kbits, gbits; /* kernel / global timestamp valid bits */
    uint32_t ngroups;
    bool copy_only[ZC_ZE_MAX_GROUPS];
    int copy_ordinal;     /* the first copy-only group (where offloaded copies run), -1 if none */
    bool integrated;      /* no local memory: no copy is device-to-device for the driver */
    uint8_t offload_rules; /* ZC_OFFLOAD_* of its driver's release (zc_ze_offload_rules) */
    /* where copy executions' timestamps are harvested: a compute group (the last engine of the
     * first one, the least likely to be the app's default); -1 if the device has none */
    int harvest_ordinal;
    uint32_t harvest_index;
    pthread_mutex_t clock_lock;
    struct zc_anchor *anchors;
    size_t nanchors, cap_anchors;
    long double sx, sy, sxx, sxy; /* least-squares sums, relative to anchors[0] */
    long double rate;             /* fitted ticks per ns */
    uint32_t next_stream;
    /* no global timestamps (zc_ze_clock.c): the device clock's offset is bounded from host
     * observations of each record (submitted before it started, seen after it ended) */
    bool host_anchored;
    bool off_valid;
    uint64_t dev_base;          /* unrolled tick of the first such record */
    long double off_lo, off_hi; /* host ns - (tick - dev_base) / rate lies in [off_lo, off_hi] ... */
    uint64_t off_t;             /* ... as of this host time (widened by the allowed drift since) */
    uint64_t max_err_ns, nanchored;
    uint32_t inconsistent_run;  /* observations in a row outside the interval */
    uint64_t restarts;          /* times the interval started again (drift beyond the allowance) */
    /* our completion queries failed here (zc_ze_device_off): timing stops on this device */
    atomic_bool off;
};

/* ---------------------------------------------------------------- operations */
enum zc_op_kind { ZC_OP_KERNEL, ZC_OP_COPY, ZC_OP_FILL, ZC_OP_IMAGE, ZC_OP_BARRIER };

/* Static description of a timed operation: a regular list keeps one per Append (its template),
 * an immediate list's record carries one. 32 bytes. */
struct zc_opdesc {
    uint8_t kind;
    uint8_t dir;       /* transfers: ZC_DIR_* (image copies too: an image is device memory) */
    uint8_t engine;    /* ZC_ENG_*: which engine of its list's stream ran it */
    uint8_t zero;      /* 0 (named so that the bytes before region are written as one word) */
    uint32_t region;   /* device region: kernel name, or API name + direction */
    uint32_t remote;   /* comm rank of the submitting thread's location (RMA remote) */
    uint64_t bytes;
    uint64_t callsite;
};

enum zc_dir { ZC_DIR_NONE, ZC_DIR_H2D, ZC_DIR_D2H, ZC_DIR_D2D, ZC_DIR_H2H, ZC_DIR_OTHER };

/* What decides whether a driver with copy offload runs a transfer on a copy engine (compute-runtime's
 * rules, zc_ze_lifetime.c): not its direction (ZC_DIR_* says host or device side, for the RMA
 * records) but whether both sides are in the device's local memory (device USM, images, and shared
 * USM, whose GPU storage is local on a device with local memory) and its size. A list's offload
 * set has a bit per class. */
enum zc_offload_class {
    ZC_OFC_FILL_SMALL, /* a fill of at most ZC_OFFLOAD_SMALL bytes */
    ZC_OFC_FILL_LARGE,
    ZC_OFC_COPY,       /* a copy with a side that is never local (host USM, other memory) */
    ZC_OFC_LL_SMALL,   /* a copy between local-capable sides (device, shared), at most ZC_OFFLOAD_SMALL */
    ZC_OFC_LL_LARGE,
    ZC_OFC_LL_IMAGE,   /* an image copy whose other side is local-capable (an image or device/shared USM) */
};
#define ZC_OFFLOAD_SMALL 8192u
/* A transfer's dir and offload class, as one byte on the Append path (dir below 16). */
#define ZC_XF(dir, cls) ((uint8_t)((unsigned)(dir) | (unsigned)(cls) << 4))
#define ZC_XF_DIR(xf) ((uint8_t)((xf) & 15u))
#define ZC_XF_CLS(xf) ((uint8_t)((xf) >> 4))
/* The rule sets (zc_dev.offload_rules): the driver's releases that changed them. */
#define ZC_OFFLOAD_FILL_SMALL_ONLY 1u /* compute-runtime 26.09 and newer: only fills up to 8 KiB */
#define ZC_OFFLOAD_LL_SMALL 2u        /* 26.18 and newer: local-to-local copies up to 8 KiB too */

/* The list's own engine, or the copy engine a copy of an in-order compute list with the
 * copy-offload hint was offloaded to (its record goes to the stream's copy-engine location). */
enum zc_engine { ZC_ENG_LIST, ZC_ENG_COPY, ZC_NENG };

/* ---------------------------------------------------------------- contexts and event pools */
struct zc_ctx {
    ze_context_handle_t h;
    uint32_t index;
    pthread_mutex_t lock;
    ze_event_pool_handle_t *pools;
    uint32_t npools, cap_pools;
    /* Our events, by state (zc_ze_objects.c); each array has room for every event the context
     * owns (cap_free), so each one can always come back. free: unsignalled and reset once by an
     * Append (defuse_conversion), for any list; raw: unsignalled, never reset by an Append, for
     * regular lists first; used: back from a regular list, maybe signalled, reset when taken. */
    ze_event_handle_t *free_events, *raw_events, *used_events;
    uint32_t nfree, cap_free, nraw, nused;
    uint64_t nevents;
    bool broken; /* pool creation failed: stop injecting in this context */
    bool create_failed; /* zeEventCreate failed for our events here (said once) */
};

/* ---------------------------------------------------------------- streams and records */
struct zc_exec;
struct zc_inbox; /* zc_ze_inbox.h */

enum zc_rec_state { ZC_REC_PENDING, ZC_REC_DONE };

struct zc_rec {
    struct zc_rec *next, *prev; /* stream FIFO (pending) or free list */
    struct zc_stream *stream;
    struct zc_opdesc op;
    uint8_t state;
    ze_event_handle_t inj;      /* read this event (immediate lists, copy lists) ... */
    struct zc_exec *exec;       /* ... or this execution's harvest buffer slot */
    uint32_t slot;
    struct zc_ctx *ctx;         /* immediate records return inj to this pool */
    bool own_inj;
    uint64_t submit_ns;
    uint64_t ts_start, ts_end;  /* raw kernel timestamps once drained */
    uint64_t start_ns, end_ns;
    int64_t s_rel;              /* device without global timestamps: ticks since its first record, */
    uint64_t seen_ns;           /* when it was seen complete (zc_ze_clock_observe) */
    ze_event_handle_t user_event; /* the app event re-signalled after this op, if any */
    struct zc_list *list;       /* immediate records: their list (deferred event recycling) */
    uint64_t seq;               /* immediate records: append number in their list */
    uint8_t pend;               /* while pending: how it counts for its stream's floor (ZC_PEND_*) */
};
enum { ZC_PEND_NONE, ZC_PEND_INORDER /* counted in its in-order list */, ZC_PEND_OTHER };

struct zc_stream {
    pthread_mutex_t drain_lock; /* one drainer at a time (taken before lock) */
    struct zc_dev *dev;
    uint32_t index;
    uint32_t group; /* accelerator location group */
    char name[48];
    pthread_mutex_t lock;
    struct zc_rec *head, *tail; /* pending records in submission order */
    uint64_t npending, pushes_since_drain;
    /* what bounds the start of pending records (emit_locked): in-order immediate lists with
     * pending records here, and pending records of anything else */
    uint32_t nlists;
    uint64_t nother;
    /* drained, waiting to be written in start order (zc_ze_order.c): a run of records that came
     * in start order (FIFO through next) and a min-heap of the others; ndone counts both */
    struct zc_rec *run_head, *run_tail;
    struct zc_rec **done;
    size_t ndone, nheap, cap_done;
    struct zc_rec *held, *held_tail; /* complete, waiting for the device clock to settle (FIFO) */
    struct zc_exec **await;     /* executions whose records completed before their post list ran */
    size_t nawait, cap_await;
    struct zc_inbox *inboxes;   /* immediate lists appending to this stream */
    uint64_t harvested;         /* operations collected so far (the drainer's pace) */
    /* where its records are written, per engine (ZC_ENG_*): the stream's own locations, and
     * those of the copies its lists offloaded to a copy engine */
    struct zc_lanes {
        struct zc_loc *loc[ZC_ZE_MAX_LANES];
        uint64_t end[ZC_ZE_MAX_LANES];
        uint32_t n;
    } lanes[ZC_NENG];
    struct zc_stream *next_all;
};

/* ---------------------------------------------------------------- lists and executions */
struct zc_tmpl {
    struct zc_opdesc op;
    ze_event_handle_t inj;
    ze_event_handle_t user_event;
};

/* A prepared pair of helper lists for one in-flight execution of a regular list:
 * pre = [WaitOnEvents(gate), EventReset(gate), EventReset(inj...), SignalEvent(started)],
 * post = [QueryKernelTimestamps(inj... -> buf, signal done, wait inj...), SignalEvent(gate)].
 * Copy engines cannot run QueryKernelTimestamps: there post = [SignalEvent(copied)], pre has
 * no `started` unless the list signals app events (the records wait for the harvest), and a
 * harvest list of ours, executed on a compute engine of the same device (the app queue's
 * harvest queue, zc_queue), reads the timestamps once the copy execution signalled: harvest =
 * [QueryKernelTimestamps(inj... -> buf, wait copied), EventReset(copied), SignalEvent(gate),
 * SignalEvent(done)] (done before the gate where there is `started`: see slot_build). This
 * round trip between two engines, once per execution, is the floor of timing a copy-only
 * regular list with events (bench/README.md). So the device orders the executions and the host
 * never waits for one. A device without a compute engine: post = [SignalEvent(done),
 * SignalEvent(gate)], no buf, and the host reads our events before the next execution (one in
 * flight at a time).
 * The list's first execution after its templates were appended (struct zc_list's `fresh`) runs
 * pre0 = [WaitOnEvents(gate), EventReset(gate), SignalEvent(started)] instead: its events are
 * all unsignalled (a list's own pool holds only such events), so it needs none of the resets,
 * which a list executed once would pay per operation on the host and the device. Each pre list
 * is built when an execution first needs it; `run` is the one the slot's current execution runs. */
struct zc_slot {
    ze_command_list_handle_t pre, pre0, run, post, harvest;
    ze_kernel_timestamp_result_t *buf;
    ze_event_handle_t done, started, copied;
    bool busy;
};

struct zc_list {
    /* the appending thread's (the spec allows one at a time): injected events ready for use */
    ze_event_handle_t *pool;
    uint32_t npool, cap_pool;
    struct zc_inbox *inbox;    /* immediate lists */
    struct zc_tmpl *tmpl;      /* regular lists: one template per timed Append */
    uint32_t ntmpl, cap_tmpl;
    uint32_t nuntimed;         /* regular lists: Appends left untimed (counted per execution) */
    ze_command_list_handle_t h;
    struct zc_ctx *ctx;
    struct zc_dev *dev;
    uint32_t ordinal, index;
    bool immediate, in_order, copy_only;
    /* copy offload: bit c set when a transfer of class c (enum zc_offload_class) runs on a copy
     * engine (list_offload in zc_ze_lifetime.c); 0 for lists without the hint */
    uint8_t offload;
    bool timed;                /* its Appends get our events (immediate: a stream; regular: a mode) */
    bool resignal;             /* an application event can be re-signalled after our event here */
    uint8_t mode;              /* regular lists: enum zc_reg_mode */
    struct zc_stream *stream; /* immediate lists: their engine's stream */
    /* regular lists */
    uint64_t build;            /* bumped by reset: slots are built for one build */
    struct zc_slot *slots;
    uint32_t nslots, next_slot;
    uint64_t slots_build;
    ze_event_handle_t gate;
    atomic_uint inflight;      /* ZC_REG_SERIAL: executions not yet read back */
    bool serial_off;           /* ZC_REG_SERIAL: not timed any more (listed twice in one call) */
    bool shared_inj;           /* its templates' events are also another list's (clones): never reused */
    /* no execution since its templates' events were taken, all unsignalled (list lock): the next
     * one runs its slot's pre0 (struct zc_slot) */
    bool fresh;
    bool pool_used; /* its pool holds its earlier builds' events, maybe signalled (no fresh) */
    /* a regular list the application appends to (zeCommandListCreate): its events may come
     * without the Append reset that keeps an event off compute-runtime's implicit conversion
     * (only Appends on in-order immediate lists convert; zc_ze_objects.c) */
    bool raw_ok;
    uint64_t executions;
    /* What drainers write as operations complete: on cache lines of their own (the list is
     * allocated aligned), so that the appending thread's loads above do not miss after each.
     * Immediate in-order lists, under their stream's lock: records pending on the stream, and
     * the end of the last one drained (the list's next operation starts no earlier). */
    _Alignas(64) uint32_t npend;
    uint64_t done_end;
    pthread_mutex_t lock;
    /* events of completed immediate operations, reset and handed back by drainers (lock); a
     * regular list's: its earlier builds' events, not reset */
    ze_event_handle_t *ret;
    uint32_t nret, cap_ret;
};

struct zc_exec {
    struct zc_list *list;
    struct zc_slot *slot;  /* NULL for copy lists (records read inj directly) */
    uint32_t pending;      /* records not yet drained */
    uint64_t submit_ns;
    bool done;             /* post list ran: harvest buffer complete, slot reusable */
    bool started;          /* pre list ran: our events hold this execution's times */
    bool dup;              /* the list more than once in its call: untimed, holds the slot */
};


/* An immediate list's state beside its inbox (it has no helper slots: l->slots holds it). */
struct zc_deferred { /* an injected event an app event's re-signal barrier waits on */
    ze_event_handle_t inj;
    uint64_t seq;
    ze_event_handle_t user_event;
};
struct zc_imm {
    struct zc_deferred *v;
    uint32_t n, cap;
    bool sync;
};
static inline struct zc_imm *zc_ze_imm(struct zc_list *l) { return (struct zc_imm *)(void *)l->slots; }

struct zc_queue {
    ze_command_queue_handle_t h;
    struct zc_dev *dev;
    struct zc_ctx *ctx;
    uint32_t ordinal, index, flags;
    bool copy_only, sync;
    struct zc_stream *stream;
    /* copy queues: ours, on the device's harvest engine, for the harvest lists of the
     * executions submitted here (created at the first; one per app queue, so that executions
     * that the app's queues keep apart never wait for each other's harvest) */
    ze_command_queue_handle_t harvest;
};


struct zc_kernel {
    uint32_t region;
    struct zc_kernel_sel sel; /* timed? counted by which kernel windows? (once, at creation) */
    char name[128];
};

struct zc_image {
    size_t bpp, w, h, d;
};

/* ---------------------------------------------------------------- events the app owns */
/* The latest timed operation that re-signalled an application event: lets the app's own
 * zeEventQueryKernelTimestamp see its operation's times instead of our barrier's. */
struct zc_uevent {
    struct zc_rec *rec;       /* pending record (immediate) */
    bool have_ts;
    uint64_t ts_start, ts_end;
    struct zc_stream *stream;
    ze_event_handle_t inj;    /* our event holding that operation's times, while it is kept */
};

/* ---------------------------------------------------------------- shared state */
struct zc_ze {
    bool ready;                 /* real driver loaded and initialised */
    struct zc_map lists, queues, kernels, images, ctxs, uevents;
    pthread_mutex_t devs_lock;
    struct zc_dev *devs[ZC_ZE_MAX_DEVICES];
    uint32_t ndevs;
    pthread_mutex_t streams_lock;
    struct zc_stream *streams;
    atomic_uint_fast64_t stalls, untimed;
    atomic_uint ddi_handles_hidden; /* zeDriverGetProperties answers whose DDI-handles property we cleared */
    atomic_uint devs_off;         /* devices whose timing stopped (zc_ze_device_off) */
};
extern struct zc_ze zc_ze;
extern struct zc_ze zc_ze; /* zc_ze_objects.c */

/* ================================================================ what each file offers, bottom up */
/* ---------------------------------------------------------------- zc_ze_caps.c */
/* Recomputed by the getter after each table the loader fetched. */
void zc_ze_caps_update(void);
/* Says once (job leader at warning level, other ranks at info) what a missing entry switched off. */
void zc_ze_caps_announce(void);

/* ---------------------------------------------------------------- zc_ze_clock.c */
/* Takes an anchor pair if the newest is older than ZECOLL_ANCHOR_INTERVAL_MS (or force). */
void zc_ze_clock_anchor(struct zc_dev *d, bool force);
/* Start/end of a kernel timestamp (masked to kbits) in host ns; not_before is a host time the
 * operation cannot have started before (its submission). */
void zc_ze_clock_convert(struct zc_dev *d, uint64_t ts_start, uint64_t ts_end, uint64_t not_before,
                         uint64_t *start, uint64_t *end);
/* The same for many records (a drainer's pass, in time order): the clock lock held from begin to
 * end (no other clock call of the device in between), the anchors of the previous record tried first. */
struct zc_ze_clockconv {
    struct zc_dev *d;
    uint64_t m, slack;
    double rate, inv; /* ticks per ns, and ns per tick */
    /* the anchors last used, and the keys they serve: host times [h_lo, h_hi), ticks [d_lo, d_hi) */
    const struct zc_anchor *ah, *ad;
    uint64_t h_lo, h_hi, d_lo, d_hi;
};
void zc_ze_clockconv_begin(struct zc_ze_clockconv *cv, struct zc_dev *d);
void zc_ze_clockconv_end(struct zc_ze_clockconv *cv);
/* The anchor that converts x (host ns, or unrolled ticks by_dev) and the keys it serves, [lo, hi). */
const struct zc_anchor *zc_ze_clockconv_seg(const struct zc_dev *d, uint64_t x, bool by_dev, uint64_t *lo, uint64_t *hi);
/* One record of the pass (inline: the drainer converts every kernel's times here; the anchors'
 * search runs only when a record leaves the segment of the one before). */
static inline void zc_ze_clockconv(struct zc_ze_clockconv *cv, uint64_t ts_start, uint64_t ts_end, uint64_t not_before,
                                   uint64_t *start, uint64_t *end) {
    const struct zc_dev *d = cv->d;
    uint64_t m = cv->m, lo = 0, st = 0;
    if (d->nanchors) {
        if (__builtin_expect(not_before < cv->h_lo || not_before >= cv->h_hi, 0))
            cv->ah = zc_ze_clockconv_seg(d, not_before, false, &cv->h_lo, &cv->h_hi);
        lo = cv->ah->dev + (uint64_t)(int64_t)((double)(int64_t)(not_before - cv->ah->host) * cv->rate);
    }
    lo -= cv->slack;
    uint64_t s = lo + (((ts_start & m) - lo) & m);
    uint64_t e = s + (((ts_end & m) - (ts_start & m)) & m);
    if (d->nanchors) {
        if (__builtin_expect(s < cv->d_lo || s >= cv->d_hi, 0))
            cv->ad = zc_ze_clockconv_seg(d, s, true, &cv->d_lo, &cv->d_hi);
        double dt = (double)(int64_t)(s - cv->ad->dev) * cv->inv;
        st = cv->ad->host + (uint64_t)(int64_t)(dt < 0 ? dt - 0.5 : dt + 0.5);
    }
    *start = st;
    /* the duration comes from the tick count and the fitted rate: converting the end from a
     * different anchor than the start would add that anchor's own error to the duration */
    *end = st + (uint64_t)((double)(e - s) * cv->inv + 0.5);
}
/* A device without global timestamps (d->host_anchored): a record seen complete at host time
 * seen narrows the clock offset's interval; its ticks relative to the device's first record and
 * its duration in ticks come back, to be placed by zc_ze_clock_place once the interval settled:
 * ZC_SETTLE_NS after seen by zc_ze_clock_observed (the newest observation), or at the end. */
#define ZC_SETTLE_NS 10000000u
void zc_ze_clock_observe(struct zc_dev *d, uint64_t ts_start, uint64_t ts_end, uint64_t not_before, uint64_t seen,
                         int64_t *s_rel, uint64_t *dur);
uint64_t zc_ze_clock_observed(struct zc_dev *d);
void zc_ze_clock_place(struct zc_dev *d, int64_t s_rel, uint64_t dur, uint64_t *start, uint64_t *end);
/* One line if the device's times were anchored from host observations (finalize). */
void zc_ze_clock_report(struct zc_dev *d);

/* ---------------------------------------------------------------- zc_ze_objects.c */
struct zc_dev *zc_ze_dev(ze_device_handle_t h); /* registers on first use; NULL on failure */
void zc_ze_devices_enumerate(void);
/* The copy-offload rules of a driver's release (ZC_OFFLOAD_*; ZECOLL_OFFLOAD_RULES forces them). */
uint8_t zc_ze_offload_rules(ze_driver_handle_t drv);
/* A completion query of ours on device d (call) answered r, neither success nor NOT_READY (or
 * waiting timed out: r = ZE_RESULT_NOT_READY with timeout): device timing stops on d, with one
 * message; its pending records are dropped at the next drain of each stream. Returns true when
 * r is such a failure. Lock-free: callable with any lock held. */
bool zc_ze_device_off(struct zc_dev *d, const char *call, ze_result_t r);
/* The same for a wait that cannot end (why: the message), counted as a driver failure. */
void zc_ze_device_stuck(struct zc_dev *d, const char *why);
static inline bool zc_ze_dev_on(const struct zc_dev *d) {
    return d && !atomic_load_explicit(&d->off, memory_order_relaxed);
}
/* Waits up to timeout_ns for our event: zeEventHostSynchronize, or status polls where the driver
 * lacks it. ZE_RESULT_SUCCESS, ZE_RESULT_NOT_READY (timeout) or the driver's error. */
ze_result_t zc_ze_event_wait(ze_event_handle_t e, uint64_t timeout_ns);
struct zc_ctx *zc_ze_ctx(ze_context_handle_t h); /* registers on first use */
/* An unsignalled KERNEL_TIMESTAMP|HOST_VISIBLE event, or NULL (then the op goes untimed). */
ze_event_handle_t zc_ze_event_get(struct zc_ctx *c);
/* Up to n such events into out (one lock); returns how many. raw: for a list with raw_ok (they
 * may lack the defusing Append reset). */
uint32_t zc_ze_event_get_batch(struct zc_ctx *c, ze_event_handle_t *out, uint32_t n, bool raw);
/* Returns an event to the pool; resets it first (one that had its defusing reset). */
void zc_ze_event_put(struct zc_ctx *c, ze_event_handle_t e);
/* Returns n events of a raw_ok list, not reset: ZC_EV_RAW unsignalled (its own pool),
 * ZC_EV_USED maybe signalled (its templates'; reset when taken again, or never if the context
 * goes first). */
enum zc_ev_back { ZC_EV_RAW, ZC_EV_USED };
void zc_ze_event_put_n(struct zc_ctx *c, const ze_event_handle_t *e, uint32_t n, enum zc_ev_back st);
/* Memory type of a pointer: 'H' host USM, 'D' device, 'S' shared, 'M' anything else. */
char zc_ze_memtype(const void *p);
void zc_ze_mem_add(const void *p, size_t size, char type);
void zc_ze_mem_del(const void *p);

/* ---------------------------------------------------------------- zc_ze_untraced.c, zc_ze_byname.c */
/* A call to an entry zecoll passes through untraced (ze_hooks.spec `untraced`): warned once per
 * entry, counted per entry. */
void zc_ze_untraced(uint32_t api);
/* A loader asked a getter for this spec version (the highest is kept). */
void zc_ze_loader_asked(ze_api_version_t version);
/* A function handed out by name (zeDriverGetExtensionFunctionAddress) that zecoll does not
 * follow: named once in a warning; what to hand out instead of fn, a counting trampoline of ours
 * that jumps to fn (x86-64, while trampolines last), else fn itself (its calls then uncounted). */
void *zc_ze_untraced_by_name(const char *name, void *fn);
/* Each function handed out by name untraced: its name, its calls (0 where not counted), whether
 * counted; returns how many. */
size_t zc_ze_by_name_each(void (*fn)(const char *name, uint64_t calls, bool counted, void *arg), void *arg);
/* At finalize: the warning naming the untraced entries called, and the archive's notes (spec
 * versions, untraced calls per entry). */
void zc_ze_untraced_finalize(void);
/* The layer's part of the summary line ("" before any loader asked); its length. */
size_t zc_ze_summary(char *buf, size_t cap);

/* ---------------------------------------------------------------- zc_ze_call.c */
uint32_t zc_ze_api_region(uint32_t api);
/* A closed call whose launch opened a kernel window: recorded from here on like any. */
bool zc_ze_call_reopen(struct zc_ze_call *c);

/* ---------------------------------------------------------------- zc_ze_events.c */
/* App events re-signalled after a timed operation. */
void zc_ze_uevent_set(ze_event_handle_t ev, struct zc_rec *r);
/* Associates an app event with the injected event of a list template (regular lists). */
void zc_ze_uevent_set_inj(ze_event_handle_t ev, ze_event_handle_t inj);
/* Our event inj goes back to the pool: no app event may point at it any more. */
void zc_ze_uevent_forget_inj(ze_event_handle_t ev, ze_event_handle_t inj);
/* The injected event that holds the times of ev's operation, or NULL. */
ze_event_handle_t zc_ze_uevent_inj(ze_event_handle_t ev);
void zc_ze_uevent_clear(ze_event_handle_t ev, bool destroy);
/* r completed (its times are known) or was dropped: the app event that points at it learns so. */
void zc_ze_uevent_complete(struct zc_rec *r);
void zc_ze_uevent_drop(struct zc_rec *r);
/* The stream of ev's pending operation (NULL if none), and then its timestamps once drained
 * (false if none). */
struct zc_stream *zc_ze_uevent_pending(ze_event_handle_t ev);
bool zc_ze_uevent_read(ze_event_handle_t ev, ze_kernel_timestamp_result_t *dst);

/* ---------------------------------------------------------------- zc_ze_records.c */
/* Allocates a record (free list; no malloc after warm-up). */
struct zc_rec *zc_ze_rec_new(void);
void zc_ze_rec_free(struct zc_rec *r);
/* A thread keeps at most two batches of freed records; the rest goes back to the shared list. */
void zc_ze_rec_release_flush(void);
void zc_ze_thread_exit(void); /* the lifecycle's thread_exit: cached records back to the shared list */
struct zc_exec *zc_ze_exec_new(void);
void zc_ze_exec_free(struct zc_exec *x);
/* The execution's records are all done: its slot (if any) is released and it is freed. */
void zc_ze_exec_release(struct zc_exec *x);
/* A slot whose post list ran: reusable by the next execution of its list. */
void zc_ze_slot_release(struct zc_slot *s);
/* Room for n events in the list's own pool. */
bool zc_ze_list_pool_reserve(struct zc_list *l, uint32_t n);
/* The list's pool is empty: what drainers handed back, else a batch from the context (the
 * appending thread only). */
ze_event_handle_t zc_ze_event_refill(struct zc_list *l);
/* An event the list took but did not use (the Append failed): straight back. */
void zc_ze_event_unget(struct zc_list *l, ze_event_handle_t e);
/* r, an immediate operation of l, completed: its event (and those of the re-signal barriers before
 * it) go back to the list. */
void zc_ze_list_event_done(struct zc_list *l, const struct zc_rec *r);
/* Immediate operations of l completed in order up to append number last, none re-signalling an
 * app event: their n events are reset and go back (with the re-signal barriers' before last), one lock. */
void zc_ze_list_events_done(struct zc_list *l, const ze_event_handle_t *ev, uint32_t n, uint64_t last);

/* ---------------------------------------------------------------- zc_ze_direct.c */
/* Records never written: out of memory, no lane, a driver that stopped answering (the summary). */
extern atomic_uint_fast64_t zc_ze_records_dropped;
/* An operation's events (Enter, its callsite, an RMA pair for a copy, Leave) on the first lane
 * of its engine free at start (stream locked); false if no lane could be allocated (counted lost). */
bool zc_ze_write_op(struct zc_stream *s, const struct zc_opdesc *op, uint64_t start, uint64_t end);
/* The stream's only inbox is an in-order immediate list's and nothing else is pending (drain_lock
 * and lock held): writes its completed operations straight from the inbox, in append order; true
 * when what is left there waits for the next pass, false when the rest must become records. */
bool zc_ze_direct_harvest(struct zc_stream *s, struct zc_tickconv *tc);

/* ---------------------------------------------------------------- zc_ze_order.c */
/* A stream's completed records to write in start order (stream locked): push (false: out of
 * memory, not kept), the earliest (NULL: none), take the earliest (or the one first gave), forget a
 * list going away. */
bool zc_ze_done_push(struct zc_stream *s, struct zc_rec *r);
struct zc_rec *zc_ze_done_first(const struct zc_stream *s);
struct zc_rec *zc_ze_done_pop(struct zc_stream *s);
struct zc_rec *zc_ze_done_take(struct zc_stream *s, struct zc_rec *first);
void zc_ze_done_forget_list(struct zc_stream *s, const struct zc_list *l);

/* ---------------------------------------------------------------- zc_ze_drain.c */
struct zc_stream *zc_ze_stream_new(struct zc_dev *d, struct zc_ctx *c, const char *what);
/* An immediate list's inbox on its engine's stream, and its end (drains what is still in it). */
struct zc_inbox *zc_ze_stream_inbox_open(struct zc_stream *s, struct zc_list *l);
void zc_ze_stream_inbox_close(struct zc_inbox *ib);
/* Queues a submitted record on its stream. */
void zc_ze_stream_push(struct zc_stream *s, struct zc_rec *r);
/* The same for n records linked by ->next, in submission order, under one lock. */
void zc_ze_stream_push_chain(struct zc_stream *s, struct zc_rec *first, uint64_t n);
/* Drains what has completed on s and writes what can be written. */
void zc_ze_stream_drain(struct zc_stream *s);
/* The same, stopping after give_up_after consecutive incomplete records (0: scans everything). */
void zc_ze_stream_drain_some(struct zc_stream *s, unsigned give_up_after);
/* Collects what completed on every stream, stopping at each one's first incomplete records. */
void zc_ze_drain_completed(void);
/* Drains every stream; with wait, waits (bounded) for outstanding work first. */
void zc_ze_drain_all(bool wait, uint64_t timeout_ns);
/* Writes what completed, whatever is still pending (finalize). */
void zc_ze_streams_flush(void);
uint64_t zc_ze_dropped_records(void);
void zc_ze_drop_context(struct zc_ctx *x);
/* A list goes away: its records still queued on any stream stop pointing at it. */
void zc_ze_streams_forget_list(struct zc_list *l);
/* An execution without records that holds its slot until its post list ran. */
void zc_ze_stream_await(struct zc_stream *s, struct zc_exec *x);
/* The background drainer: started with the first stream, stopped (joined) at finalize. */
void zc_ze_bg_start(void);
void zc_ze_bg_stop(void);
/* Operations pile up (an inbox's backlog): the drainer passes now and goes back to its shortest
 * interval (one wake-up per pile; a slow path's call). */
void zc_ze_bg_hurry(void);

/* ---------------------------------------------------------------- zc_ze_exec.c */
/* A list about to be reset or destroyed: waits (bounded) for the harvests of its executions. */
void zc_ze_slots_quiesce(struct zc_list *l);
/* The list's helper slots and gate go back or away (ctx_dying: its context is being destroyed). */
void zc_ze_slots_destroy(struct zc_list *l, bool ctx_dying);
/* Executions of regular lists (on a queue, or on an immediate list's timeline as q): their
 * [pre, list, post] wrapping before the driver's call, their records after it. */
void zc_ze_exec_pre(struct zc_ze_call *c, struct zc_queue *q, uint32_t *n, ze_command_list_handle_t **lists);
void zc_ze_exec_post(struct zc_ze_call *c, ze_result_t r);

/* ---------------------------------------------------------------- zc_ze_lifetime.c */
/* A list of ours for a handle made from src (a clone, a capture): src's kind, not registered;
 * its registration in the lists map; everything of one no longer in that map. */
struct zc_list *zc_ze_list_like(ze_command_list_handle_t h, const struct zc_list *src);
void zc_ze_list_register(struct zc_list *l);
void zc_ze_list_release(struct zc_list *l);

/* ---------------------------------------------------------------- zc_ze_submit.c */
/* An immediate list as the queue its appended executions run on (per thread, for one call), or
 * NULL where they are not recorded (untimed, copy-only, or not an immediate list). */
struct zc_queue *zc_ze_imm_queue(ze_command_list_handle_t h);

/* ---------------------------------------------------------------- zc_ze_graph_exp.c */
/* zeDriverGetExtensionFunctionAddress gave *fn for name: a wrapper of ours instead, where zecoll
 * follows that entry (the experimental graph entries before spec 1.17); true where it does. */
bool zc_ze_graph_exp_address(const char *name, void **fn);

/* ---------------------------------------------------------------- zc_ze_gen.c (generated) */
/* Every API's plain wrapper (no PAPI sampling), and where the real entry it calls is in
 * zc_ze_real, counted in entries: data for zc_ze_driver.c, which hands the wrapper out for a
 * function the driver gives by an entry's name. */
struct zc_ze_wrapper_ref {
    void (*fn)(void);
    uint16_t real;
};
extern const struct zc_ze_wrapper_ref zc_ze_wrappers[ZC_ZE_API_COUNT];

/* ---------------------------------------------------------------- zc_ze_shim.c */
/* exported: the bridge libzecoll_ze.so's getters call */
ze_result_t zecoll_ze_getter(int table, ze_api_version_t version, void *ddi);

#endif
