/* SPDX-License-Identifier: MIT */
/* Logging and the internal-failure policy (zc_log.c): one write(2) per line, errno preserved; a
 * failure logs once, counts, and switches its feature off. */
#ifndef ZC_LOG_H
#define ZC_LOG_H

#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum { ZC_LOG_QUIET = 0, ZC_LOG_WARN = 1, ZC_LOG_INFO = 2, ZC_LOG_DEBUG = 3 };

/* The level and ZECOLL_STRICT, as the configuration says (zc_knobs_load sets them; until then
 * nothing is printed). */
void zc_log_config(uint64_t level, bool strict);
void zc_log(int level, const char *func, int line, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
#define ZC_WARN(...) zc_log(ZC_LOG_WARN, __func__, __LINE__, __VA_ARGS__)
#define ZC_INFO(...) zc_log(ZC_LOG_INFO, __func__, __LINE__, __VA_ARGS__)
#define ZC_DEBUG(...) zc_log(ZC_LOG_DEBUG, __func__, __LINE__, __VA_ARGS__)
/* Writes buf (len bytes formatted into its cap, len as snprintf reported it, so possibly more than
 * fit) to stderr as one line with one write(2): it always ends with a newline, and a line that did
 * not fit ends with a marker saying it was cut. */
void zc_log_write(char *buf, size_t cap, size_t len);

/* Features that an internal failure switches off, each on its own. */
enum zc_feature {
    ZC_F_TRACE,         /* the archive: nothing is written */
    ZC_F_DEVICE_TIMING, /* injection stops; the app runs on untimed */
    ZC_F_API_TIMING,
    ZC_F_MPI,
    ZC_F_PAPI,          /* PAPI counters (zc_papi.h): on only when papi.events is set */
    ZC_F_JOURNAL, /* the salvage journal (writer/zc_journal.c): the archive itself is unaffected */
    ZC_F_COUNT
};
extern atomic_bool zc_feature_on[ZC_F_COUNT];
extern atomic_uint_fast64_t zc_failures;

/* Internal failure: logs the first one per feature, counts all, turns the feature off. With
 * ZECOLL_STRICT=1 it aborts instead, so tests notice. */
void zc_fail(enum zc_feature f, const char *func, int line, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* ZECOLL_STRICT=1: says why and aborts (the first caller; others wait for its abort). */
_Noreturn void zc_strict_vabort(const char *func, int line, const char *fmt, va_list ap);
#define ZC_FAIL(f, ...) zc_fail(f, __func__, __LINE__, __VA_ARGS__)

static inline bool zc_on(enum zc_feature f) {
    return atomic_load_explicit(&zc_feature_on[f], memory_order_relaxed);
}

#endif
