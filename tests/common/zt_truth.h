/* SPDX-License-Identifier: MIT */
/*
 * zt_truth.h: reader for the zesim ground-truth log (ZESIM_TRUTH, JSON lines, one flat object
 * per line; format in tests/zesim/README.md "Ground truth") plus query helpers.
 *
 * Ownership: zt_truth_load()/zt_truth_parse() fill a zt_truth that owns every string and array
 * it points to; zt_truth_free() releases all of it (and is a no-op on a zeroed or freed
 * zt_truth). A zt_truth_sel only borrows op pointers from its zt_truth: free the selection
 * (zt_truth_sel_free) before or after, but do not use it after the zt_truth is freed.
 * Thread safety: none needed; a loaded zt_truth is read-only and may be shared by threads.
 *
 * The JSON parser accepts exactly what the format needs: one object per line whose values are
 * strings, numbers (integers keep their full 64-bit value, negative ones too; fractions and
 * exponents become doubles), null, true, false, and arrays of those scalars. Blank lines are
 * skipped. Unknown fields are kept (zt_truth_op.raw) and otherwise ignored, so new zesim fields
 * do not break readers.
 */
#ifndef ZT_TRUTH_H
#define ZT_TRUTH_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- generic JSON values ------------------------------------------------------------------ */

typedef enum zt_jtype { ZT_JNULL, ZT_JBOOL, ZT_JNUM, ZT_JSTR, ZT_JARR } zt_jtype;

typedef struct zt_jvalue {
    zt_jtype type;
    int b;                    /**< ZT_JBOOL: 0 or 1 */
    int is_int;               /**< ZT_JNUM: integer literal that fits in int64 or uint64 */
    int neg;                  /**< ZT_JNUM: negative */
    uint64_t u;               /**< ZT_JNUM, is_int && !neg: exact value */
    int64_t i;                /**< ZT_JNUM, is_int: exact value when it fits in int64 */
    double d;                 /**< ZT_JNUM: value as double (always set) */
    char *s;                  /**< ZT_JSTR: decoded UTF-8, NUL-terminated */
    struct zt_jvalue *items;  /**< ZT_JARR: elements (scalars) */
    size_t nitems;            /**< ZT_JARR: element count */
} zt_jvalue;

typedef struct zt_jfield {
    char *key;
    zt_jvalue v;
} zt_jfield;

/** One parsed line: fields in file order. */
typedef struct zt_jobject {
    zt_jfield *fields;
    size_t nfields;
} zt_jobject;

/** Field `key` of `o`, or NULL. */
const zt_jvalue *zt_jobject_get(const zt_jobject *o, const char *key);

/* ---- typed records ------------------------------------------------------------------------ */

/** A {"kind":"device",...} line (one per device, written at the first zeInit). */
typedef struct zt_truth_device {
    uint32_t device;
    char *name;
    uint64_t hz;               /**< ticks per second */
    uint32_t ts_bits;          /**< valid bits of global timestamps */
    uint32_t kernel_ts_bits;   /**< valid bits of kernel timestamps */
    double drift_ppm;          /**< device clock runs this many ppm fast against the host */
    int64_t offset_ns;
    double wrap_after_ms;
    uint64_t h0;               /**< host CLOCK_MONOTONIC_RAW ns at the first zeInit */
    uint64_t t0;               /**< full device ticks at h0 */
    int64_t pid;
    unsigned present;          /**< ZT_TD_* bits of the fields found with the right type */
    size_t line;               /**< 1-based line number in the file */
    const zt_jobject *raw;
} zt_truth_device;

enum {
    ZT_TD_DEVICE = 1u << 0, ZT_TD_NAME = 1u << 1, ZT_TD_HZ = 1u << 2, ZT_TD_TS_BITS = 1u << 3,
    ZT_TD_KERNEL_TS_BITS = 1u << 4, ZT_TD_DRIFT_PPM = 1u << 5, ZT_TD_OFFSET_NS = 1u << 6,
    ZT_TD_WRAP_AFTER_MS = 1u << 7, ZT_TD_H0 = 1u << 8, ZT_TD_T0 = 1u << 9, ZT_TD_PID = 1u << 10,
    ZT_TD_ALL = (1u << 11) - 1
};

/** One executed operation. Nullable strings are NULL for JSON null; handles 0 for null. */
typedef struct zt_truth_op {
    uint64_t seq;
    char *kind;                /**< "kernel", "copy", ... */
    char *launch;              /**< kernels: "plain", "cooperative", "indirect", "multi_indirect" */
    char *name;                /**< kernel name or NULL */
    uint32_t device, ordinal, index;
    uint64_t queue;            /**< queue handle (immediate lists: the list handle) */
    uint64_t list;
    int immediate;
    uint64_t exec, cmd;
    uint64_t ts_start, ts_end; /**< masked kernel-timestamp ticks */
    uint64_t host_start, host_end;
    uint64_t bytes;
    char *src, *dst;           /**< copies: "host", "device", "shared", "unknown", "image" */
    uint32_t groups[3], group_size[3];
    uint64_t signal;           /**< event handle or 0 (null) */
    uint64_t *waits;
    size_t nwaits;
    int64_t tid;
    unsigned present;          /**< ZT_TO_* bits of the fields found with the right type */
    size_t line;
    const zt_jobject *raw;
} zt_truth_op;

enum {
    ZT_TO_SEQ = 1u << 0, ZT_TO_KIND = 1u << 1, ZT_TO_LAUNCH = 1u << 2, ZT_TO_NAME = 1u << 3,
    ZT_TO_DEVICE = 1u << 4, ZT_TO_ORDINAL = 1u << 5, ZT_TO_INDEX = 1u << 6,
    ZT_TO_QUEUE = 1u << 7, ZT_TO_LIST = 1u << 8, ZT_TO_IMMEDIATE = 1u << 9, ZT_TO_EXEC = 1u << 10,
    ZT_TO_CMD = 1u << 11, ZT_TO_TS_START = 1u << 12, ZT_TO_TS_END = 1u << 13,
    ZT_TO_HOST_START = 1u << 14, ZT_TO_HOST_END = 1u << 15, ZT_TO_BYTES = 1u << 16,
    ZT_TO_SRC = 1u << 17, ZT_TO_DST = 1u << 18, ZT_TO_GROUPS = 1u << 19,
    ZT_TO_GROUP_SIZE = 1u << 20, ZT_TO_SIGNAL = 1u << 21, ZT_TO_WAITS = 1u << 22,
    ZT_TO_TID = 1u << 23,
    /** fields every operation line carries (name and signal may be null) */
    ZT_TO_COMMON = ZT_TO_SEQ | ZT_TO_KIND | ZT_TO_NAME | ZT_TO_DEVICE | ZT_TO_ORDINAL |
                   ZT_TO_INDEX | ZT_TO_QUEUE | ZT_TO_LIST | ZT_TO_IMMEDIATE | ZT_TO_EXEC |
                   ZT_TO_CMD | ZT_TO_TS_START | ZT_TO_TS_END | ZT_TO_HOST_START |
                   ZT_TO_HOST_END | ZT_TO_BYTES | ZT_TO_SIGNAL | ZT_TO_WAITS | ZT_TO_TID
};

/** A whole truth file. */
typedef struct zt_truth {
    zt_truth_device *devices;  /**< in file order */
    size_t ndevices;
    zt_truth_op *ops;          /**< in file (= completion) order */
    size_t nops;
    zt_jobject *objects;       /**< every parsed line */
    size_t nobjects;
    size_t nbad;               /**< lines skipped in lenient mode */
} zt_truth;

/** Load flags. */
enum {
    ZT_TRUTH_LENIENT = 1u << 0 /**< skip malformed lines (count in nbad) instead of failing */
};

/**
 * Reads and parses the file at `path`. Returns 0, or -1 with a message in err (optional) and
 * *t zeroed. A missing file is an error.
 */
int zt_truth_load(const char *path, unsigned flags, zt_truth *t, char *err, size_t errsize);

/** Same as zt_truth_load() for text in memory (need not be NUL-terminated). */
int zt_truth_parse(const char *text, size_t len, unsigned flags, zt_truth *t, char *err,
                   size_t errsize);

/** Releases everything *t owns and zeroes it. */
void zt_truth_free(zt_truth *t);

/** Record of device `device`, or NULL. */
const zt_truth_device *zt_truth_device_find(const zt_truth *t, uint32_t device);

/**
 * Checks that an op line has every field the README lists with the right JSON type (and the
 * kernel-only fields for kernels). Returns 1 if complete, else 0 with the problem in why.
 */
int zt_truth_op_check(const zt_truth_op *op, char *why, size_t whysize);

/** Same for a device line. */
int zt_truth_device_check(const zt_truth_device *d, char *why, size_t whysize);

/**
 * The device-clock model of the README: full ticks of device `d` at host time `host_ns`
 * (T0 + floor((h - H0) * (1 + ppm/1e6) * hz / 1e9)), not masked. Evaluated in long double.
 */
uint64_t zt_truth_full_ticks(const zt_truth_device *d, uint64_t host_ns);

/** Ticks the device counts in `ns` host nanoseconds: ns * hz * (1 + ppm/1e6) / 1e9. */
double zt_truth_ticks_for_ns(const zt_truth_device *d, double ns);

/** x mod 2^bits (bits >= 64 returns x). */
uint64_t zt_mask_bits(uint64_t x, unsigned bits);

/* ---- queries ------------------------------------------------------------------------------ */

#define ZT_ANY (-1)

/**
 * A filter; fields left at their "any" value do not filter. Initialise with
 * ZT_TRUTH_QUERY_INIT and set what you need, e.g.
 *   zt_truth_query q = ZT_TRUTH_QUERY_INIT; q.kind = "kernel"; q.list = (uint64_t)list;
 */
typedef struct zt_truth_query {
    const char *kind;    /**< NULL = any */
    const char *name;    /**< NULL = any */
    const char *launch;  /**< NULL = any */
    uint64_t list;       /**< 0 = any */
    uint64_t queue;      /**< 0 = any */
    uint64_t signal;     /**< 0 = any */
    uint64_t waits_on;   /**< 0 = any; else the op must list this event in waits */
    int device;          /**< ZT_ANY = any */
    int ordinal;         /**< ZT_ANY = any */
    int index;           /**< ZT_ANY = any */
    int immediate;       /**< ZT_ANY = any, else 0 or 1 */
    long long exec;      /**< ZT_ANY = any */
} zt_truth_query;

#define ZT_TRUTH_QUERY_INIT \
    { NULL, NULL, NULL, 0, 0, 0, 0, ZT_ANY, ZT_ANY, ZT_ANY, ZT_ANY, ZT_ANY }

/** 1 if op matches q. */
int zt_truth_match(const zt_truth_op *op, const zt_truth_query *q);

/** Borrowed op pointers, in file order unless sorted. */
typedef struct zt_truth_sel {
    const zt_truth_op **ops;
    size_t n;
} zt_truth_sel;

/** Selects the ops matching q (q NULL = all). Returns 0, -1 when out of memory. */
int zt_truth_select(const zt_truth *t, const zt_truth_query *q, zt_truth_sel *out);

/** Selects the ops for which pred(op, user) is non-zero. */
int zt_truth_select_fn(const zt_truth *t, int (*pred)(const zt_truth_op *, void *), void *user,
                       zt_truth_sel *out);

/** Number of ops matching q. */
size_t zt_truth_count(const zt_truth *t, const zt_truth_query *q);

/** First op (in file order) matching q, or NULL. */
const zt_truth_op *zt_truth_find(const zt_truth *t, const zt_truth_query *q);

typedef enum zt_truth_order {
    ZT_BY_HOST_START, /**< host_start, then seq */
    ZT_BY_SEQ,
    ZT_BY_CMD         /**< exec, then cmd, then seq: append order within one list */
} zt_truth_order;

/** Stable sort of a selection. */
void zt_truth_sel_sort(zt_truth_sel *s, zt_truth_order order);

void zt_truth_sel_free(zt_truth_sel *s);

/** Parses "0x1234" (or decimal) into a number; 0 for NULL. */
uint64_t zt_truth_handle(const char *s);

/**
 * Expands %p (pid) and %r (rank) in a ZESIM_TRUTH pattern like zesim does; %% is a '%'.
 * Returns 0, -1 if out is too small.
 */
int zt_truth_expand_path(const char *pattern, long pid, long rank, char *out, size_t size);

#ifdef __cplusplus
}
#endif

#endif /* ZT_TRUTH_H */
