/* SPDX-License-Identifier: MIT */
/* When writing the archive fails (disk full, quota, file-size limit, I/O error): OTF2's errors
 * are routed through our log (one message, not OTF2's cascade on stderr) and counted; from the
 * first failure on, no more events are written (OTF2's buffers of them are discarded instead of
 * flushed into a full disk); a space reserve kept in the archive directory since it was opened
 * is given back so the definitions and the anchor file still fit; and each event file cut in the
 * middle of a chunk is cut back to its last whole chunk. The archive then reads as the run up to
 * the failure, and says so (ZECOLL::TRUNCATED in its anchor file, docs/archive.md).
 *
 * Everything here runs under zc_otf2.c's lock, in the thread calling OTF2 (its error callback is
 * synchronous), except the callback's test of whose error it is. */
#include "zc_otf2_io.h"

#include "zc_clock.h"
#include "zc_fd.h"
#include "zc_log.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <otf2/otf2.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static _Thread_local bool in_ours __attribute__((tls_model("initial-exec"))); /* OTF2 runs for us */
static OTF2_ErrorCallback prev_cb;
static void *prev_ud;
static atomic_uint_fast64_t io_errors;
static _Atomic bool damaged; /* a write failed: no more event data goes to disk (read without the
                              * OTF2 lock by zc_otf2_write_begin) */
static uint64_t damaged_at; /* zc_now() of the first failure */
static char first_error[256];
static int flushing_type = -1; /* the file OTF2 is flushing (pre_flush), -1 none */
static uint64_t flushing_loc;
static uint64_t *cut_locs; /* event files left incomplete: a write failed, or a buffer was discarded */
static size_t ncut, cap_cut;

static void mark_incomplete(uint64_t loc) {
    for (size_t i = 0; i < ncut; i++)
        if (cut_locs[i] == loc) return;
    if (ncut == cap_cut) {
        size_t nc = cap_cut ? 2 * cap_cut : 16;
        uint64_t *p = realloc(cut_locs, nc * sizeof(*p));
        if (!p) return;
        cut_locs = p;
        cap_cut = nc;
    }
    cut_locs[ncut++] = loc;
}

static bool io_code(OTF2_ErrorCode c) { return c >= OTF2_ERROR_E2BIG && c <= OTF2_ERROR_EXDEV; }

static OTF2_ErrorCode on_otf2_error(void *ud, const char *file, uint64_t line, const char *fn, OTF2_ErrorCode code,
                                    const char *fmt, va_list va) {
    (void)ud;
    if (!in_ours) { /* the application's own use of OTF2, if any: as it was */
        if (prev_cb) return prev_cb(prev_ud, file, line, fn, code, fmt, va);
        fprintf(stderr, "[OTF2] %s:%llu: error: %s: ", file, (unsigned long long)line, OTF2_Error_GetDescription(code));
        vfprintf(stderr, fmt, va);
        fputc('\n', stderr);
        return code;
    }
    char msg[192];
    vsnprintf(msg, sizeof(msg), fmt, va);
    if (!io_code(code)) {
        if (damaged || code <= OTF2_SUCCESS) /* the consequences OTF2 reports further up; warnings */
            ZC_DEBUG("OTF2: %s: %s (%s:%llu)", OTF2_Error_GetDescription(code), msg, file, (unsigned long long)line);
        else /* OTF2 refused what we asked of it: ours to fix */
            ZC_FAIL(ZC_F_TRACE, "OTF2: %s: %s (%s:%llu)", OTF2_Error_GetDescription(code), msg, file,
                    (unsigned long long)line);
        return code;
    }
    atomic_fetch_add(&io_errors, 1);
    if (flushing_type == OTF2_FILETYPE_EVENTS) mark_incomplete(flushing_loc);
    if (!damaged) {
        damaged = true;
        damaged_at = zc_now();
        snprintf(first_error, sizeof(first_error), "%s (%s)", OTF2_Error_GetDescription(code), msg);
        ZC_WARN("cannot write the archive: %s: no more events are written; the archive keeps the run up to here "
                "(its definitions are written at the end into the space kept for them)",
                first_error);
    }
    return code;
}

/* Our own encoder's event files (zc_otf2.c): a write that failed, as an I/O error of OTF2's. */
void zc_otf2_io_write_failed(uint64_t loc, int err, const char *path) {
    atomic_fetch_add(&io_errors, 1);
    mark_incomplete(loc);
    if (!damaged) {
        damaged = true;
        damaged_at = zc_now();
        /* in OTF2's words, as its own failures are said (the same message either way) */
        OTF2_ErrorCode c = err == ENOSPC ? OTF2_ERROR_ENOSPC : err == EFBIG ? OTF2_ERROR_EFBIG
                           : err == EDQUOT ? OTF2_ERROR_EDQUOT : err == EIO ? OTF2_ERROR_EIO
                           : err == EROFS ? OTF2_ERROR_EROFS : OTF2_ERROR_FILE_INTERACTION;
        snprintf(first_error, sizeof(first_error), "%s (%s: %s)", OTF2_Error_GetDescription(c), path, strerror(err));
        ZC_WARN("cannot write the archive: %s: no more events are written; the archive keeps the run up to here "
                "(its definitions are written at the end into the space kept for them)",
                first_error);
    }
}

bool zc_write_failure(int e) { return e == ENOSPC || e == EFBIG || e == EDQUOT || e == EIO || e == EROFS; }
void zc_write_failure_count(void) { atomic_fetch_add(&io_errors, 1); }

void zc_otf2_io_init(void) {
    prev_cb = OTF2_Error_RegisterCallback(on_otf2_error, NULL);
}

/* SIGXFSZ: a file-size limit (RLIMIT_FSIZE) reached by our writes would kill the application;
 * held while we write (OTF2, the own encoder, the salvage journal), the write fails with EFBIG
 * instead, which each writer handles. A SIGXFSZ that our writes raised on this thread is taken
 * back before the mask is restored. */
void zc_xfsz_hold(struct zc_xfsz *s) {
    sigset_t x;
    sigemptyset(&x);
    sigaddset(&x, SIGXFSZ);
    pthread_sigmask(SIG_BLOCK, &x, &s->mask);
    sigset_t pend;
    s->pending = sigpending(&pend) == 0 && sigismember(&pend, SIGXFSZ);
}

void zc_xfsz_release(struct zc_xfsz *s) {
    sigset_t pend;
    if (!s->pending && sigpending(&pend) == 0 && sigismember(&pend, SIGXFSZ)) {
        sigset_t x;
        sigemptyset(&x);
        sigaddset(&x, SIGXFSZ);
        struct timespec zero = {0, 0};
        int saved = errno;
        sigtimedwait(&x, NULL, &zero);
        errno = saved;
    }
    pthread_sigmask(SIG_SETMASK, &s->mask, NULL);
}

void zc_otf2_io_enter(struct zc_otf2_io_scope *s) {
    in_ours = true;
    zc_xfsz_hold(&s->xfsz);
}

void zc_otf2_io_leave(struct zc_otf2_io_scope *s) {
    flushing_type = -1;
    zc_xfsz_release(&s->xfsz);
    in_ours = false;
}

bool zc_otf2_io_flush(int file_type, uint64_t loc) {
    flushing_type = file_type;
    flushing_loc = loc;
    if (!damaged || file_type != OTF2_FILETYPE_EVENTS) return true;
    mark_incomplete(loc);
    return false;
}

void zc_otf2_io_flushed(void) { flushing_type = -1; }

bool zc_otf2_io_damaged(void) { return damaged; }
uint64_t zc_otf2_io_errors(void) { return atomic_load(&io_errors); }

/* ---------------------------------------------------------------- the space reserve */
/* Blocks allocated in the archive directory while the disk has room, given back at close for the
 * definitions, the mapping tables of every location and the anchor file (a few KiB of data, but
 * at least one block per file). Grown with the locations. */
#define ZC_RESERVE_BASE (256 * 1024)
#define ZC_RESERVE_PER_LOC (8 * 1024)
static int reserve_fd = -1;
static char reserve_path[PATH_MAX];
static off_t reserve_size;
static int reserve_err; /* posix_fallocate's last failure */

void zc_otf2_io_reserve_open(const char *dir, uint32_t rank, uint64_t extra) {
    if (snprintf(reserve_path, sizeof(reserve_path), "%s/.zecoll-reserve.%u", dir, rank) >= (int)sizeof(reserve_path))
        return;
    reserve_fd = zc_fd_high(open(reserve_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
    reserve_size = 0;
    zc_otf2_io_reserve_grow(ZC_RESERVE_BASE + extra);
    if (reserve_fd >= 0 && reserve_size == 0) { /* ENOSPC, or EDQUOT: said now, the advice one that works */
        int e = reserve_err;
        ZC_WARN("the disk of %s is too small for the space the collector keeps for the archive's definitions "
                "(%llu KiB: %s): if it fills, the archive cannot be completed; its journal keeps what is recorded: "
                "then, after the run, `zecoll salvage %s` where there is room (a copy of the directory on a larger disk)",
                dir, (unsigned long long)((ZC_RESERVE_BASE + extra) >> 10), strerror(e), dir);
    }
}

void zc_otf2_io_reserve_grow(uint64_t bytes) {
    if (reserve_fd < 0 || damaged) return;
    if (bytes == 0) bytes = ZC_RESERVE_PER_LOC;
    /* only the new part: where the file system cannot allocate, glibc writes every block */
    int e = posix_fallocate(reserve_fd, reserve_size, (off_t)bytes); /* returns its error, errno untouched */
    if (e == 0) reserve_size += (off_t)bytes;
    else reserve_err = e;
}

void zc_otf2_io_reserve_release(void) {
    if (reserve_fd < 0) return;
    close(reserve_fd);
    unlink(reserve_path);
    reserve_fd = -1;
}

/* ---------------------------------------------------------------- after the close */
/* An event file a failure left incomplete (cut inside a chunk, or without its last buffers) is
 * cut back to its last whole chunk and given the empty last chunk OTF2 ends a file with: a
 * chunk header (record type, the byte order mark of the file's own chunks, the numbers of its
 * first and last events, here last + 1 and last) and OTF2's end-of-chunk and end-of-file marks.
 * A file with no whole chunk becomes what OTF2 writes for a location without events. Readers
 * then read every event of the whole chunks (checked by the disk-full test with otf2-print and
 * python3-otf2); the part chunk is lost (at most a chunk per location). */
static const uint8_t empty_tail[2] = {0x02, 0x01};

/* The file ends after `whole` chunks (0: an empty file); false if that cannot be written. */
static bool end_after(int fd, uint64_t whole, uint64_t chunk, const uint8_t mark[2], uint64_t *kept) {
    uint8_t head[18] = {0x03, mark[1]};
    uint64_t first = 1, last = 0;
    if (whole) { /* the last whole chunk's header: its event numbers */
        uint8_t prev[18];
        if (pread(fd, prev, sizeof(prev), (off_t)((whole - 1) * chunk)) != (ssize_t)sizeof(prev) || prev[0] != 0x03)
            return false;
        head[1] = prev[1];
        memcpy(&last, prev + 10, 8);
        first = last + 1;
    }
    memcpy(head + 2, &first, 8);
    memcpy(head + 10, &last, 8);
    off_t at = (off_t)(whole * chunk);
    if (ftruncate(fd, at) != 0 || pwrite(fd, head, sizeof(head), at) != (ssize_t)sizeof(head) ||
        pwrite(fd, empty_tail, sizeof(empty_tail), at + (off_t)sizeof(head)) != (ssize_t)sizeof(empty_tail))
        return false;
    *kept = last;
    return true;
}

/* Returns the events the file keeps. Where the end cannot be written after the last whole chunk
 * (a file-size limit), one chunk fewer is kept, and so on. */
static uint64_t repair_file(const char *path, uint64_t chunk, const uint8_t mark[2]) {
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) return 0;
    fd = zc_fd_high(fd);
    struct stat st;
    uint64_t whole = fstat(fd, &st) == 0 ? (uint64_t)st.st_size / chunk : 0, kept = 0;
    for (;; whole--) {
        if (end_after(fd, whole, chunk, mark, &kept) || whole == 0) break;
    }
    close(fd);
    return kept;
}

bool zc_otf2_io_empty_evt(const char *dir, const char *name, uint64_t loc, uint64_t chunk) {
    char path[PATH_MAX];
    if (snprintf(path, sizeof(path), "%s/%s/%llu.evt", dir, name, (unsigned long long)loc) >= (int)sizeof(path))
        return false;
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (fd < 0) return false;
    fd = zc_fd_high(fd);
    uint64_t kept = 0;
    bool ok = end_after(fd, 0, chunk, (const uint8_t[2]){0x03, 0x42}, &kept);
    close(fd);
    return ok;
}

void zc_otf2_io_repair(const char *dir, const char *name, uint64_t chunk, void (*kept)(uint64_t loc, uint64_t events)) {
    char path[PATH_MAX];
    uint8_t mark[2] = {0x03, 0x42}; /* what OTF2 writes on this machine, unless a file says otherwise */
    for (size_t i = 0; i < ncut; i++) { /* a whole chunk of any file of ours: its byte order mark */
        if (snprintf(path, sizeof(path), "%s/%s/%llu.evt", dir, name, (unsigned long long)cut_locs[i]) >=
            (int)sizeof(path))
            continue;
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        uint8_t b[2];
        bool got = fd >= 0 && read(fd, b, 2) == 2 && b[0] == 0x03;
        if (fd >= 0) close(fd);
        if (got) {
            mark[1] = b[1];
            break;
        }
    }
    for (size_t i = 0; i < ncut; i++) {
        if (snprintf(path, sizeof(path), "%s/%s/%llu.evt", dir, name, (unsigned long long)cut_locs[i]) <
            (int)sizeof(path))
            kept(cut_locs[i], repair_file(path, chunk, mark));
    }
}

/* The anchor file's word on it, and the summary's. */
const char *zc_otf2_io_first_error(void) { return first_error; }
uint64_t zc_otf2_io_damaged_at(void) { return damaged_at; }

void zc_otf2_io_fork_child(void) {
    reserve_fd = -1; /* the parent's */
}
