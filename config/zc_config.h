/* SPDX-License-Identifier: MIT */
/* zecoll's configuration: the knob table (zc_knobs.def) as C types; loading it from defaults, a
 * YAML file and ZECOLL_* variables with positioned messages; rendering the effective
 * configuration; and the lookups the runtime makes (rank sets, kernel-name patterns, windows),
 * which never allocate and are safe from any thread once the configuration is loaded. */
#ifndef ZC_CONFIG_H
#define ZC_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---------------------------------------------------------------- value types */

/** Inclusive range of MPI world ranks. */
struct zc_rank_range {
    uint32_t lo, hi;
};

/** A set of ranks: `all`, or n sorted, disjoint, non-adjacent ranges. */
struct zc_rankset {
    bool all;
    uint32_t n;
    const struct zc_rank_range *v;
};

/** Whether rank is in s. O(log n), no allocation. */
bool zc_rankset_contains(const struct zc_rankset *s, uint32_t rank);

/** A list of non-empty strings (PAPI event names, kernel-name patterns). */
struct zc_strlist {
    uint32_t n;
    const char *const *v;
};

/** fnmatch(3) with no flags, byte-wise as in the C locale, whatever the process's locale: `*` any
 * run of bytes (including `/` and none), `?` one byte, `[abc]` `[a-z]` `[!a]` `[^a]` and the classes
 * `[[:alpha:]]` etc. (ASCII), `\x` the byte x. The whole name must match; case matters. A `[` with
 * no closing `]` is an ordinary byte. No allocation, no recursion. */
bool zc_glob_match(const char *pattern, const char *name);

/** Whether any pattern of l matches name (false for an empty list). */
bool zc_globs_match(const struct zc_strlist *l, const char *name);

/** Recording windows. Times are nanoseconds after MPI_Init returned (or after the process started
 * when it does not use MPI). */
enum zc_window_kind { ZC_WIN_TIME, ZC_WIN_PCONTROL, ZC_WIN_KERNEL, ZC_WIN_SIGNAL };
#define ZC_WIN_NS_END UINT64_MAX    /**< time window: stop = the end of the run */
#define ZC_WIN_COUNT_ALL UINT64_MAX /**< kernel window: every launch from start on */

struct zc_window {
    enum zc_window_kind kind;
    struct zc_rankset ranks; /**< ranks the window applies to (all unless `ranks:` was given) */
    bool initial;            /**< pcontrol, signal: open at start (pcontrol default on, signal off) */
    uint64_t start_ns;       /**< time: opens at start_ns (default 0) ... */
    uint64_t stop_ns;        /**< ... closes at stop_ns > start_ns (default ZC_WIN_NS_END) */
    const char *name;        /**< kernel: pattern (zc_glob_match) of the kernel names counted */
    uint64_t start;          /**< kernel: opens at the start-th matching launch (1-based) ... */
    uint64_t count;          /**< ... for count >= 1 launches (ZC_WIN_COUNT_ALL: to the end) */
    int signo;               /**< signal: each delivery toggles recording */
    uint32_t line, column;   /**< where it was defined (file, 1-based), 0 if from the variable */
};

struct zc_windows {
    uint32_t n; /**< 0: no windows, the whole run is recorded */
    const struct zc_window *v;
};

/** Whether window w applies on rank. */
static inline bool zc_window_on_rank(const struct zc_window *w, uint32_t rank) {
    return zc_rankset_contains(&w->ranks, rank);
}

/* ---------------------------------------------------------------- the knobs */

/** Every setting, one field per entry of zc_knobs.def, named as the variable without ZECOLL_. */
struct zc_knobs {
#define ZC_KNOB_bool bool
#define ZC_KNOB_uint uint64_t
#define ZC_KNOB_size uint64_t
#define ZC_KNOB_string const char *
#define ZC_KNOB_list struct zc_strlist
#define ZC_KNOB_globs struct zc_strlist
#define ZC_KNOB_rankset struct zc_rankset
#define ZC_KNOB_windows struct zc_windows
#define ZC_KNOB(name, type, yaml, def, min, max, doc) ZC_KNOB_##type name;
#include "zc_knobs.def"
#undef ZC_KNOB
};

/** Knob ids: ZC_K_<NAME>, in table order. */
enum zc_knob_id {
#define ZC_KNOB(name, type, yaml, def, min, max, doc) ZC_K_##name,
#include "zc_knobs.def"
#undef ZC_KNOB
    ZC_K_COUNT
};

enum zc_knob_type { ZC_T_BOOL, ZC_T_UINT, ZC_T_SIZE, ZC_T_STRING, ZC_T_LIST, ZC_T_GLOBS, ZC_T_RANKSET, ZC_T_WINDOWS };

/** The table itself (for documentation and tools). */
struct zc_knob_info {
    const char *name; /**< without ZECOLL_ */
    enum zc_knob_type type;
    const char *type_name;
    const char *yaml; /**< "" = environment only */
    const char *def;
    uint64_t min, max;
    const char *doc;
};
extern const struct zc_knob_info zc_knob_table[ZC_K_COUNT];

/** A launch of kernel `name` is timed: it matches KERNELS_INCLUDE (or that list is empty) and no
 * pattern of KERNELS_EXCLUDE. */
bool zc_kernel_selected(const struct zc_knobs *k, const char *name);

/* ---------------------------------------------------------------- loading */

enum zc_origin_kind { ZC_ORIGIN_DEFAULT, ZC_ORIGIN_FILE, ZC_ORIGIN_ENV };
struct zc_origin {
    enum zc_origin_kind kind;
    uint32_t line, column; /**< ZC_ORIGIN_FILE: the value's position (1-based) */
};

enum zc_msg_kind {
    ZC_MSG_ERROR,   /**< the configuration is invalid (collection off) */
    ZC_MSG_IGNORED, /**< a variable's value was ignored; the file's or default value stays */
    ZC_MSG_WARNING, /**< informative only */
};
struct zc_msg {
    enum zc_msg_kind kind;
    const char *text; /**< "FILE:LINE:COLUMN: message", "FILE: message" or "ZECOLL_X=\"v\": message" */
};

struct zc_config {
    struct zc_knobs knobs;
    struct zc_origin origin[ZC_K_COUNT];
    const char *file;   /**< the file read (as named), NULL if none */
    uint32_t nerrors;   /**< ZC_MSG_ERROR messages: non-zero = invalid */
    uint32_t nignored;  /**< ZC_MSG_IGNORED messages */
    uint32_t nmsgs;     /**< messages kept (at most ZC_CONFIG_MAX_MSGS; the counts above are exact) */
    const struct zc_msg *msgs;
    struct zc_config_priv *priv;
};
#define ZC_CONFIG_MAX_MSGS 100

struct zc_config_opts {
    /** The file to read; NULL: the value of ZECOLL_CONFIG (none if unset or empty). */
    const char *file;
    /** If set, the file's contents (len bytes), not read from disk; file (or "<input>") names it. */
    const char *data;
    size_t len;
    /** Looks up ZECOLL_* variables; NULL: none (defaults and file only). */
    const char *(*getenv)(const char *name, void *ud);
    void *ud;
    /** If set (NAME=VALUE entries, NULL-terminated), ZECOLL_* entries that are no setting get a
     * ZC_MSG_WARNING each (zecoll-config check; the collector leaves them alone). */
    const char *const *environ;
};

/** Loads defaults, then the file, then the variables (each overrides the one before), checking
 * everything. Returns NULL only when out of memory. The result owns all its strings and arrays
 * until zc_config_free. Rule: any error in the file, and a bad value of a variable of type list,
 * globs, rankset or windows (selection: falling back would record what the user excluded), is a
 * ZC_MSG_ERROR; a bad value of any other variable is ZC_MSG_IGNORED (value kept). */
struct zc_config *zc_config_load(const struct zc_config_opts *opts);
void zc_config_free(struct zc_config *c); /**< NULL is fine */

/** The effective configuration as YAML that zc_config_load reads back to the same values; with
 * origins, each value's origin in a comment ("default", "FILE:LINE", "env ZECOLL_X"). malloc'd
 * (the caller frees it); NULL if out of memory. */
char *zc_config_render(const struct zc_config *c, bool origins);

/** Parsers shared with the runtime and tests. Each returns 0, or -1 with a message in err. */
int zc_parse_duration(const char *s, uint64_t *ns, char *err, size_t errsz);
int zc_parse_signal(const char *s, int *signo, char *err, size_t errsz);
/** SIGUSR1, SIGRTMIN+3, ... into buf. */
const char *zc_signal_name(int signo, char *buf, size_t size);

#endif
