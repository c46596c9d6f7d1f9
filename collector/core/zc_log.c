/* SPDX-License-Identifier: MIT */
/* Logging and the internal-failure policy. Messages are formatted into a bounded stack buffer
 * and written with one write(2), so lines from ranks and threads do not interleave and no stdio
 * lock is taken (the app may be inside printf when we log). errno is preserved. */
#include "zc_log.h"

#include "zc_proc.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

atomic_bool zc_feature_on[ZC_F_COUNT];
atomic_uint_fast64_t zc_failures;
static atomic_bool failed_once[ZC_F_COUNT];
/* zc_knobs' LOG_LEVEL and STRICT, given by zc_knobs_load: the loader logs, so it is the one that
 * knows the log, not the other way round */
static uint64_t log_level;
static bool strict;

void zc_log_config(uint64_t level, bool strict_abort) {
    log_level = level;
    strict = strict_abort;
}

static const char *const feature_names[ZC_F_COUNT] = {"trace output", "device timing", "API timing", "MPI tracing",
                                                             "PAPI counting", "the salvage journal"};

/* A line longer than the buffer ends with this marker (and its newline), so a reader sees it was
 * cut rather than a message that looks complete. */
static const char cut_marker[] = " [... message cut]\n";

void zc_log_write(char *buf, size_t cap, size_t len) {
    if (cap < sizeof(cut_marker) + 1) return;
    if (len + 1 > cap) { /* no room for the newline: the text did not fit */
        len = cap - sizeof(cut_marker);
        memcpy(buf + len, cut_marker, sizeof(cut_marker) - 1);
        len += sizeof(cut_marker) - 1;
    } else {
        buf[len++] = '\n';
    }
    ssize_t w = write(2, buf, len);
    (void)w;
}

static void vlog(const char *tag, const char *func, int line, const char *fmt, va_list ap) {
    int saved = errno;
    char buf[1024];
    int n = snprintf(buf, sizeof(buf), "zecoll[%u:%d:%ld] %s%s:%d: ", zc_rank(), (int)getpid(),
                     (long)syscall(SYS_gettid), tag, func, line);
    size_t len = n > 0 ? (size_t)n : 0;
    if (len < sizeof(buf)) {
        int m = vsnprintf(buf + len, sizeof(buf) - len, fmt, ap);
        if (m > 0) len += (size_t)m;
    }
    zc_log_write(buf, sizeof(buf), len);
    errno = saved;
}

void zc_log(int level, const char *func, int line, const char *fmt, ...) {
    if ((uint64_t)level > log_level) return;
    va_list ap;
    va_start(ap, fmt);
    vlog(level <= ZC_LOG_WARN ? "warning: " : "", func, line, fmt, ap);
    va_end(ap);
}

void zc_strict_vabort(const char *func, int line, const char *fmt, va_list ap) {
    /* one thread says it and aborts; another failing meanwhile waits for that abort */
    static atomic_bool aborting;
    if (atomic_exchange(&aborting, true))
        for (;;) pause();
    vlog("internal error (ZECOLL_STRICT=1, aborting): ", func, line, fmt, ap);
    abort();
}

void zc_fail(enum zc_feature f, const char *func, int line, const char *fmt, ...) {
    /* counted when it switches the feature off: a path that keeps failing while the feature is
     * off (every execution of a list timed before) is one failure, not one per call */
    if (atomic_load(&zc_feature_on[f])) atomic_fetch_add(&zc_failures, 1);
    va_list ap;
    va_start(ap, fmt);
    if (strict) zc_strict_vabort(func, line, fmt, ap);
    if (!atomic_exchange(&failed_once[f], true)) {
        vlog("internal error: ", func, line, fmt, ap);
        char msg[160];
        snprintf(msg, sizeof(msg), "%s is now off; the application continues unaffected", feature_names[f]);
        zc_log(ZC_LOG_WARN, func, line, "%s", msg);
    }
    va_end(ap);
    atomic_store(&zc_feature_on[f], false);
}
