/* SPDX-License-Identifier: MIT */
/* zesim internals: object layouts, the global simulator state and the helpers shared by the
 * zs_*.c files. Every driver entry point is named zs_<zeApiName> so fault injection can match
 * the API name from __func__. */
#ifndef ZS_INTERNAL_H
#define ZS_INTERNAL_H

#include <level_zero/ze_api.h>
#include <level_zero/ze_ddi.h>
#include <level_zero/zet_ddi.h>
#include <level_zero/zes_ddi.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Spec 1.9 in-order flags; absent from the 1.8.12 headers but honoured so apps can ask for them. */
#define ZS_LIST_FLAG_IN_ORDER (1u << 3)
#define ZS_QUEUE_FLAG_IN_ORDER (1u << 1)
/* The copy-offload hints: spec 1.14 (queue descriptors of immediate lists), 1.15 (list descriptors). */
#define ZS_QUEUE_FLAG_COPY_OFFLOAD (1u << 2)
#define ZS_LIST_FLAG_COPY_OFFLOAD (1u << 5)

#define ZS_MAX_DEVICES 16
#define ZS_MAX_ENGINES 16
#define ZS_GROUP_COMPUTE 0
#define ZS_GROUP_COPY 1
#define ZS_NGROUPS 2
#define ZS_MAX_KERNEL_ARGS 64

enum zs_magic {
    ZS_MAGIC_DRIVER = 0x7a730001, ZS_MAGIC_DEVICE, ZS_MAGIC_CONTEXT, ZS_MAGIC_QUEUE, ZS_MAGIC_LIST,
    ZS_MAGIC_EVENT_POOL, ZS_MAGIC_EVENT, ZS_MAGIC_FENCE, ZS_MAGIC_MODULE, ZS_MAGIC_KERNEL,
    ZS_MAGIC_BUILD_LOG, ZS_MAGIC_IMAGE, ZS_MAGIC_SAMPLER, ZS_MAGIC_DEAD = 0x7a73dead
};

/* ---------------------------------------------------------------- configuration */
struct zs_kmodel {
    char *name; /* NULL = default entry */
    double ns, ns_per_item;
};

struct zs_fault {
    char api[96];
    uint64_t nth;
    bool from_nth; /* "N+" form */
    ze_result_t result;
    atomic_uint_fast64_t calls;
};

struct zs_config {
    int ndev, ncompute, ncopy;
    /* the driver's generation (ZESIM_DRIVER_GEN): whose copy-offload rules it follows, and the
     * version it reports (compute-runtime's numbering: 0x01030000 + the release's build) */
    int driver_gen;
    bool integrated; /* ZESIM_INTEGRATED=1: the devices have no local memory */
    uint64_t hz;
    int ts_bits, kts_bits;
    double drift_ppm[ZS_MAX_DEVICES];
    int64_t offset_ns[ZS_MAX_DEVICES];
    uint64_t wrap_after_ms;
    uint64_t gts_cost_ns;
    struct zs_kmodel *kmodel;
    int nkmodel;
    double copy_latency_ns, copy_bytes_per_ns;
    uint64_t sync_op_ns, launch_latency_ns;
    uint64_t ring_cmds;
    uint64_t poll_ns; /* ZESIM_POLL_US: an idle engine polls this long before it sleeps */
    int engine_cpus[64]; /* ZESIM_ENGINE_CPUS: the CPUs engine workers are bound to, in turn */
    int nengine_cpus;
    _Atomic int engine_cpu_next;
    char *truth_path;
    struct zs_fault *faults;
    int nfaults;
    int64_t device_lost_after; /* -1 = off */
    int64_t event_pool_oom;    /* -1 = off */
    uint64_t slow_sync_ns;
    bool copy_qkt_abort;
    bool log;
};

/* ---------------------------------------------------------------- objects */
struct zs_engine;
struct zs_stream;
struct zs_inst;

struct _ze_driver_handle_t {
    uint32_t magic;
};

struct _ze_device_handle_t {
    uint32_t magic;
    int id;
    uint64_t t0; /* full tick counter value at host time H0 */
    double ppm;
    int64_t offset_ns;
    struct zs_engine *engines[ZS_NGROUPS][ZS_MAX_ENGINES];
};

struct _ze_context_handle_t {
    uint32_t magic;
};

/* Memory allocations known to the driver (USM). Sorted by base for interior-pointer lookup. */
struct zs_alloc {
    uintptr_t base;
    size_t size;
    ze_memory_type_t type;
    int device; /* -1 for host allocations */
    uint64_t id;
};

struct _ze_image_handle_t {
    uint32_t magic;
    ze_image_desc_t desc;
    size_t bpp; /* bytes per pixel */
    size_t width, height, depth;
    unsigned char *data;
    size_t size;
};

struct _ze_sampler_handle_t {
    uint32_t magic;
    ze_sampler_desc_t desc;
};

struct _ze_event_pool_handle_t {
    uint32_t magic;
    ze_event_pool_flags_t flags;
    uint32_t count;
    uint32_t cb_flags; /* a counter-based pool (zs_cb.c): its events' ZS_CB_* flags, 0 otherwise */
};

struct _ze_event_handle_t {
    uint32_t magic;
    ze_event_pool_handle_t pool;
    uint32_t index;
    /* The event's memory as the device writes it and the host reads it: on hardware, querying an
     * event's status or timestamps is a read of device-visible memory, with no driver-wide lock
     * (zs_event.c). Writers (the device completing a command, host signal and reset) take seq
     * like a lock (odd while writing); readers retry while it is odd or changed. */
    _Atomic uint32_t seq;
    _Atomic bool signaled;
    _Atomic uint64_t signal_ns;   /* host time at which it became signaled */
    _Atomic bool has_ts;          /* kernel timestamps valid */
    _Atomic uint64_t ts_start, ts_end; /* masked kernel-timestamp ticks */
    /* counter-based events (zs_cb.c): ZS_CB_* flags (0: a regular event; written under zs.lock,
     * read without it where only the creation's flags matter or no implicit conversion can be:
     * a host reset of an event is a memory write on hardware, not a driver-wide lock), the
     * generation of its latest signalling command (only that one signals it, under zs.lock), and
     * whether it owns its pool (CB events created without one) */
    _Atomic uint32_t cb;
    uint64_t cb_gen;
    bool own_pool;
    /* commands enqueued and not started that wait on it (one per wait slot), under zs.lock: a
     * signal kicks only their engine (waiter), or every engine if they are on several (many);
     * a GPU's waiting command costs nothing per signal of an event it does not wait on */
    uint32_t nwaiters;
    bool waiters_many;
    struct zs_engine *waiter;
};

/* A consistent copy of an event's memory, read without zs.lock. */
struct zs_event_state {
    bool signaled, has_ts;
    uint64_t signal_ns, ts_start, ts_end;
};
void zs_event_read(ze_event_handle_t ev, struct zs_event_state *st);
/* Host or device reset of an event's memory (no lock needed). */
void zs_event_reset(ze_event_handle_t ev);

struct _ze_fence_handle_t {
    uint32_t magic;
    ze_command_queue_handle_t queue;
    bool signaled; /* guarded by zs.lock */
};

/* Interned built-in kernel behaviour. */
enum zs_builtin { ZS_BI_NONE, ZS_BI_VECTOR_ADD, ZS_BI_SCALE_F32, ZS_BI_FILL_U32 };

struct zs_kdecl {
    const char *name; /* interned, never freed */
    uint32_t nargs;
    double ns, ns_per_item; /* < 0: use the env/default model */
};

struct _ze_module_handle_t {
    uint32_t magic;
    ze_device_handle_t device;
    struct zs_kdecl *kernels;
    uint32_t nkernels;
    void *binary;
    size_t binary_size;
};

struct _ze_module_build_log_handle_t {
    uint32_t magic;
    char *text;
};

struct zs_arg {
    uint32_t size;
    bool set;
    unsigned char val[16]; /* values up to 16 bytes inline */
    unsigned char *big;    /* larger values */
};

struct _ze_kernel_handle_t {
    uint32_t magic;
    ze_module_handle_t module;
    const char *name; /* interned */
    uint32_t nargs;
    struct zs_arg args[ZS_MAX_KERNEL_ARGS];
    uint32_t gx, gy, gz;
    double ns, ns_per_item;
    enum zs_builtin builtin;
    ze_kernel_indirect_access_flags_t indirect;
    ze_cache_config_flags_t cache;
};

/* ---------------------------------------------------------------- commands */
enum zs_kind {
    ZS_K_KERNEL, ZS_K_COPY, ZS_K_COPY_REGION, ZS_K_COPY_FROM_CONTEXT, ZS_K_FILL, ZS_K_IMAGE_COPY,
    ZS_K_IMAGE_COPY_REGION, ZS_K_IMAGE_TO_MEM, ZS_K_IMAGE_FROM_MEM, ZS_K_BARRIER,
    ZS_K_RANGES_BARRIER, ZS_K_SIGNAL, ZS_K_WAIT, ZS_K_RESET, ZS_K_QUERY_TS, ZS_K_WRITE_TS,
    ZS_K_PREFETCH, ZS_K_ADVISE, ZS_K_COUNT
};

enum zs_launch { ZS_L_PLAIN, ZS_L_COOPERATIVE, ZS_L_INDIRECT, ZS_L_MULTI_INDIRECT };

/* Captured kernel state: arguments and group size are taken at Append time, as on hardware. */
struct zs_kcapture {
    const char *name;
    enum zs_builtin builtin;
    double ns, ns_per_item;
    uint32_t gx, gy, gz;
    ze_group_count_t groups;
    const ze_group_count_t *indirect_groups; /* read at execution time */
    const uint32_t *indirect_count;          /* multi-indirect: skip if index >= *count */
    uint32_t multi_index;
    uint32_t nargs;
    struct zs_arg *args; /* owned copy */
};

struct zs_region {
    ze_copy_region_t dst, src;
    uint32_t dst_pitch, dst_slice_pitch, src_pitch, src_slice_pitch;
};

struct zs_cmd {
    enum zs_kind kind;
    enum zs_launch launch;
    uint32_t index; /* position in its list */
    struct zs_kcapture *kc;
    void *dst;
    const void *src;
    size_t size;
    struct zs_region *region;
    unsigned char *pattern;
    size_t pattern_size;
    ze_image_handle_t dst_img, src_img;
    ze_image_region_t *img_dst_region, *img_src_region;
    /* QueryKernelTimestamps */
    uint32_t nq;
    ze_event_handle_t *qevents;
    size_t *qoffsets;
    /* events (the wait array is a private copy) */
    ze_event_handle_t signal;
    uint32_t nwaits;
    ze_event_handle_t *waits;
    ze_event_handle_t target; /* ZS_K_RESET: the event to reset */
    bool serial; /* must wait for every earlier command of its stream (multi-indirect chains) */
    bool same_append; /* immediate lists: part of the previous command's Append (multi-indirect) */
    uint64_t cb_gen;  /* a counter-based signal event: the generation this command signals */
    bool offload;     /* a copy of a list with copy offload: runs on the device's offload engine */
};

/* Immutable list contents; executions hold a reference so reset/destroy never free a body in use. */
struct zs_body {
    atomic_int refs;
    struct zs_cmd *cmds;
    uint32_t ncmds, cap;
};

struct zs_stream {
    struct zs_engine *engine;
    void *owner;      /* queue or immediate list handle: the truth "queue" */
    bool batch_serial; /* queues: executions run one after another */
    struct zs_inst *head, *tail; /* FIFO of not-yet-completed instances */
    uint64_t npending;
    uint64_t max_end_done;  /* latest end of a completed instance */
    uint64_t block_end;     /* latest end of a completed barrier or wait: later commands start after it */
    uint64_t multi_start;   /* start of the first kernel of the running multiple-indirect launch */
    uint64_t submitted_batches, completed_batches;
    struct zs_stream *next_in_engine;
    int refs; /* the owner + instances in flight */
    bool dead; /* owner destroyed */
};

struct zs_batch {
    struct zs_stream *stream;
    int pending;
    uint64_t max_end;
    ze_fence_handle_t fence;
    bool done;
    bool waited; /* a synchronous caller waits on it and frees it */
};

enum zs_inst_state { ZS_PENDING, ZS_RUNNING, ZS_COMPLETING, ZS_DONE };

struct zs_inst {
    struct zs_cmd cmd; /* shallow copy of the recorded command */
    struct zs_body *body; /* NULL when the instance owns its command's allocations */
    struct zs_stream *stream;
    struct zs_batch *batch;
    bool in_order;
    enum zs_inst_state state;
    uint64_t submit_ns, start_ns, end_ns;
    uint64_t exec;
    int device, ordinal, engine_index;
    void *list;
    void *context;
    bool immediate;
    pid_t tid;
    struct zs_inst *prev, *next;           /* stream FIFO */
    struct zs_inst *run_next;              /* engine running list */
};

struct zs_engine {
    ze_device_handle_t device;
    int ordinal, index;
    bool copy_only;
    pthread_t thread;
    bool started;
    pthread_cond_t cv;
    bool kick;
    bool polling;          /* the worker polls gen instead of sleeping on cv (ZESIM_POLL_US) */
    _Atomic uint64_t gen;  /* bumped whenever the engine has something new to look at */
    struct zs_stream *streams;
    struct zs_inst *running;
    uint64_t nrunning;
    uint64_t free_ns; /* copy engines: end of the last command */
};

struct _ze_command_queue_handle_t {
    uint32_t magic;
    ze_device_handle_t device;
    ze_command_queue_desc_t desc;
    struct zs_stream *stream;
};

struct _ze_command_list_handle_t {
    uint32_t magic;
    ze_context_handle_t context;
    ze_device_handle_t device;
    uint32_t ordinal;
    bool immediate, closed, in_order, copy_only;
    bool offload; /* copy offload: the hint on an in-order compute list, the device has a copy engine */
    ze_command_queue_mode_t mode;
    struct zs_body *body;    /* regular lists */
    uint64_t executions;     /* regular lists: times executed */
    uint64_t appended;       /* immediate lists: append counter */
    uint64_t last_submit_ns; /* immediate lists: submission time of the last Append */
    struct zs_stream *stream; /* immediate lists */
    struct zs_listx *x;       /* mutable lists, graph capture (zs_graph.c); NULL: neither */
};

/* ---------------------------------------------------------------- global state */
struct zs_state {
    struct zs_config cfg;
    uint64_t h0;
    struct _ze_driver_handle_t driver;
    struct _ze_device_handle_t devices[ZS_MAX_DEVICES];
    /* One lock guards all execution state (streams, instances, events, fences, batches). */
    pthread_mutex_t lock;
    pthread_cond_t host_cv; /* broadcast whenever anything completes or is signalled */
    atomic_bool lost;
    atomic_uint_fast64_t ops_executed;
    /* allocation table */
    pthread_rwlock_t alloc_lock;
    struct zs_alloc *allocs;
    size_t nallocs, cap_allocs;
    uint64_t next_alloc_id;
    atomic_int npools;
};

extern struct zs_state zs;

/* zs_core.c */
void zs_global_init(void);
uint64_t zs_now(void);
uint64_t zs_ticks_full(ze_device_handle_t dev, uint64_t host_ns);
ze_result_t zs_fault_check(const char *func);
void zs_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void zs_slow_sync(void);
const char *zs_intern(const char *s);
void zs_truth_write(const char *line, size_t len);
void zs_truthf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void zs_truth_write_seq(size_t (*fmt)(char *buf, size_t size, uint64_t seq, void *arg), void *arg);
bool zs_truth_enabled(void);
void zs_sleep_ns(uint64_t ns);
pid_t zs_gettid(void);

/* Destroyed objects stay allocated (poisoned) for a while, so a late check of a handle the app
 * already destroyed reads a dead magic instead of freed memory. */
void zs_defer_free(void *p);

/* zs_ddi.c: reads ZESIM_NULL_ENTRIES (called once, from the configuration) */
void zs_parse_null_entries(void);

/* zs_mem.c */
ze_memory_type_t zs_alloc_type(const void *p, int *device);
uint64_t zs_alloc_room(const void *p); /* bytes from p to the end of its USM allocation, or UINT64_MAX */
size_t zs_image_size(ze_image_handle_t img);

/* zs_module.c */
void zs_kernel_run_builtin(const struct zs_kcapture *kc, uint64_t items);
double zs_kernel_duration(const struct zs_kcapture *kc, uint64_t items);

/* zs_event.c: called with zs.lock held */
void zs_event_signal_locked(ze_event_handle_t ev, uint64_t host_ns, bool has_ts, uint64_t ts_start,
                            uint64_t ts_end);
/* waits on zs.host_cv until done(arg); timeout_ns as in L0 (0 = poll, UINT64_MAX = forever) */
ze_result_t zs_wait_locked(bool (*done)(void *), void *arg, uint64_t timeout_ns);

/* zs_exec.c, the engine: called with zs.lock held */
void zs_kick_all_locked(void);
void zs_engine_kick_locked(struct zs_engine *e);
void zs_kick_waiters_locked(ze_event_handle_t ev);
/* a stream on engine (ordinal, index) of dev, its worker started if need be; serial: its batches
 * run one after the other (a queue's executions) */
struct zs_stream *zs_stream_new_locked(ze_device_handle_t dev, int ordinal, int index, void *owner, bool serial);
void zs_stream_release_locked(struct zs_stream *s);
/* Copy offload (compute-runtime's rules): the engine that runs a list's offloaded copies (copy
 * engine 0 of the device, its worker started), and whether a command of such a list is one */
struct zs_engine *zs_offload_engine_locked(ze_device_handle_t dev);
bool zs_cmd_offloaded(const struct zs_cmd *c);
/* A full ring buffer stalls the submitting thread, as on hardware. */
ze_result_t zs_ring_wait_locked(struct zs_stream *s);
void zs_enqueue_locked(struct zs_stream *s, struct zs_inst *in);
void zs_batch_complete_locked(struct zs_batch *b);
bool zs_batch_done(void *arg); /* for zs_wait_locked: the batch arg completed */

/* zs_exec.c: command memory (a regular list's body is shared by its executions in flight) */
void zs_kcapture_free(struct zs_kcapture *kc);
void zs_cmd_free(struct zs_cmd *c);
struct zs_body *zs_body_new(void);
void zs_body_unref(struct zs_body *b);

/* zs_cb.c: counter-based events with the driver's rules (creation through the extension functions,
 * a pool's pNext and the core entry; host signal/reset rejected; in-order counters; the implicit
 * conversion of regular events, ZESIM_IMPLICIT_CB=1) */
#define ZS_CB_IMMEDIATE 0x1u
#define ZS_CB_NON_IMMEDIATE 0x2u
#define ZS_CB_EXPLICIT 0x100u     /* created counter-based */
#define ZS_CB_IMPLICIT 0x200u     /* a regular event the driver converted */
#define ZS_CB_IMPLICIT_OFF 0x400u /* a regular event that can no longer be converted */
uint32_t zs_cb_pool_flags(const void *pNext);
/* an Append that names ev as its signal event on l: the driver's checks and conversion */
ze_result_t zs_cb_append_check(ze_command_list_handle_t l, ze_event_handle_t ev);
/* the result the driver gives a host signal / host reset / appended reset of ev (success: allowed) */
ze_result_t zs_cb_host_signal(ze_event_handle_t ev);
ze_result_t zs_cb_host_reset(ze_event_handle_t ev);
ze_result_t zs_cb_append_reset(ze_event_handle_t ev);
/* zs.lock held: a command enters its stream / completes */
void zs_cb_enqueue_locked(struct zs_inst *in);
bool zs_cb_signal_current_locked(const struct zs_inst *in);
void *zs_cb_ext_function(const char *name);
void zs_cb_event_table(void *t, ze_api_version_t v);

/* Entry-point prologue: fault injection, then the device-lost check. */
/* zs_later.c: entries after spec 1.4 (zesim's own declarations of them), filled by version */
void zs_later_global(void *t, ze_api_version_t v);
void zs_later_device(void *t, ze_api_version_t v);
void zs_later_list(void *t, ze_api_version_t v);
void zs_later_list_exp(void *t, ze_api_version_t v);
void zs_later_driver_properties(ze_driver_properties_t *p);
/* functions handed out by name (zeIntelGetDriverVersionString, zeCommandListAppendHostFunction) */
void *zs_later_ext_function(const char *name);
/* zs_graph.c: mutable command lists, clones, graph capture and replay */
void zs_graph_fill_list(void *t, ze_api_version_t v);
void zs_graph_fill_list_exp(void *t, ze_api_version_t v);
void zs_graph_fill_graph(void *t, ze_api_version_t v);
void zs_graph_fill_executable_graph(void *t, ze_api_version_t v);
/* a list created with zeCommandListCreate's pNext (a mutable list?); reset and destroyed */
ze_result_t zs_listx_created(ze_command_list_handle_t l, const void *pNext);
void zs_listx_reset(ze_command_list_handle_t l);
void zs_listx_free(ze_command_list_handle_t l);
/* where an Append of a list with l->x goes: the body that records it (a regular list's, or the
 * graph an immediate list captures into), NULL to run it now; *r: a rule it breaks */
struct zs_body *zs_listx_target(ze_command_list_handle_t l, const struct zs_cmd *c, ze_result_t *r);
/* every command of body onto immediate list l's stream, as execution `exec` of `id` (zs.lock held) */
ze_result_t zs_enqueue_body_locked(ze_command_list_handle_t l, struct zs_body *body, void *id, uint64_t exec, bool in_order);
struct zs_kcapture *zs_kernel_capture(ze_kernel_handle_t k);
/* the experimental graph entries (before spec 1.17) by name, for zeDriverGetExtensionFunctionAddress */
void *zs_graph_ext_function(const char *name);
/* what zs_later.c reuses of the other files */
/* with: a launch's own group size and argument values (zeCommandListAppendLaunchKernelWithArguments),
 * put into its capture only: the kernel object is not changed, so threads may launch one kernel
 * with different arguments at once (NULL: the kernel's own) */
struct zs_launch_with {
    uint32_t gx, gy, gz;
    void **args;
};
ze_result_t zs_list_launch(ze_command_list_handle_t l, ze_kernel_handle_t k, const ze_group_count_t *g,
                           const struct zs_launch_with *with, ze_event_handle_t sig, uint32_t nw, ze_event_handle_t *w);
ze_result_t zs_list_barrier(ze_command_list_handle_t l, ze_event_handle_t sig, uint32_t nw, ze_event_handle_t *w);
ze_result_t zs_driver_get(uint32_t *pCount, ze_driver_handle_t *phDrivers);
ze_result_t zs_init_gpu(void);

#define ZS_ENTER()                                                                                 \
    do {                                                                                           \
        ze_result_t zs_fault_r_ = zs_fault_check(__func__);                                        \
        if (zs_fault_r_ != ZE_RESULT_SUCCESS) return zs_fault_r_;                                  \
    } while (0)
#define ZS_ENTER_DEV()                                                                             \
    do {                                                                                           \
        ZS_ENTER();                                                                                \
        if (atomic_load_explicit(&zs.lost, memory_order_relaxed)) return ZE_RESULT_ERROR_DEVICE_LOST; \
    } while (0)

#define ZS_CHECK(obj, m)                                                                           \
    do {                                                                                           \
        if ((obj) == NULL) return ZE_RESULT_ERROR_INVALID_NULL_HANDLE;                             \
        if ((obj)->magic != (m)) return ZE_RESULT_ERROR_INVALID_ARGUMENT;                          \
    } while (0)

static inline uint64_t zs_mask(uint64_t v, int bits) {
    return bits >= 64 ? v : (v & ((UINT64_C(1) << bits) - 1));
}
static inline uint64_t zs_max64(uint64_t a, uint64_t b) { return a > b ? a : b; }

/* Table fillers, one per table, called by the getters in zs_ddi.c; minor: the minor API version
 * the caller asked for (entries of later versions are left alone). */
void zs_fill_global_table(ze_global_dditable_t *t);
void zs_fill_driver_table(ze_driver_dditable_t *t);
void zs_fill_device_table(ze_device_dditable_t *t, unsigned minor);
void zs_fill_context_table(ze_context_dditable_t *t, unsigned minor);
void zs_fill_mem_table(ze_mem_dditable_t *t);
void zs_fill_image_table(ze_image_dditable_t *t);
void zs_fill_sampler_table(ze_sampler_dditable_t *t);
void zs_fill_module_table(ze_module_dditable_t *t);
void zs_fill_build_log_table(ze_module_build_log_dditable_t *t);
void zs_fill_kernel_table(ze_kernel_dditable_t *t);
void zs_fill_event_table(ze_event_dditable_t *t);
void zs_fill_event_pool_table(ze_event_pool_dditable_t *t);
void zs_fill_fence_table(ze_fence_dditable_t *t);
void zs_fill_queue_table(ze_command_queue_dditable_t *t);
void zs_fill_list_table(ze_command_list_dditable_t *t, unsigned minor);

#endif
