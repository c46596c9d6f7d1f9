/* SPDX-License-Identifier: MIT */
/* The salvage journal: what `zecoll salvage` needs to rebuild the archive of a run that died
 * (SIGKILL, node failure, MPI_Abort, no MPI_Finalize), appended to
 * <archive>/zecoll-journal/<rank>.zcj (format: zc_jrn_format.h, docs/archive.md; design:
 * docs/salvage.md).
 *
 * The event files our encoder writes are the journal of what they hold (format 4, SEAL records):
 *   - the flusher, a thread that wakes every ZECOLL_FLUSH_INTERVAL_MS, seals each location's event
 *     file (the writer writes the filled part of its current chunk and a SEAL record: the records
 *     below K are in the file), then copies what is beyond the seal, the buffers in flight between
 *     the writer's stages and what still sits in the current buffer (the writer's snapshot: the
 *     owner keeps recording, lock-free), then writes a FLUSH record: every record put before its
 *     time is now in the files below their seals or in the journal (a pass that finds nothing new
 *     writes nothing: idle_pass_locked);
 *   - the archive's writer journals a batch only where no seal covers it (OTF2's encoder, a
 *     location with window markers, the held records, after finalize's pass: zc_jrn_sealing),
 *     with the stream index of its first record (with two writer threads, by the converting one,
 *     before the other hands it to OTF2).
 * A location's records are numbered in the order they were put, so a range the flusher already
 * journaled is skipped when its buffer is written later (jdone), and salvage can tell a gap.
 * Definitions (strings, regions, devices, groups, communicators, locations, clock offsets) are
 * appended before the first record that needs them. Every record carries its length and a
 * checksum: a file cut anywhere (the process killed mid-write, a node crash) reads back as a
 * prefix of whole records. With ZECOLL_FLUSH_SYNC the flusher also fdatasyncs, so a node crash
 * loses at most one interval. When the archive is complete the journal is removed. */
#include "zc_journal.h"

#include "zc_otf2_io.h"

#include "zc_clock.h"
#include "zc_defs.h"
#include "zc_evt.h"
#include "zc_jrn_format.h"
#include "zc_knobs.h"
#include "zc_log.h"
#include "zc_proc.h"
#include "zc_sig.h"
#include "zc_window.h"
#include "zc_wire.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

_Static_assert(sizeof(struct zc_jrn_hdr) == 24, "journal headers are 3 words");

/* jlock: the file, the staged records and what of the definitions is in the file. Taken inside
 * the OTF2 writer's lock (zc_jrn_events from zc_otf2_write, the held records at MPI_Init), and
 * with nothing else held by the flusher and by the converting writer thread (zc_otf2_write_begin). */
static pthread_mutex_t jlock = PTHREAD_MUTEX_INITIALIZER;
static int jfd = -1;
static bool jok; /* open and writable */
static char jdir[PATH_MAX], jpath[PATH_MAX];
/* ZECOLL_FLUSH_SYNC: the file's name (its entry in jdir, jdir's in the archive) is not durable
 * yet. The flusher's first pass makes it so, not zc_jrn_open: that runs in MPI_Init on every
 * rank, and two directory fsyncs per rank there, at once, are a metadata storm on a parallel
 * file system. Until then only a node crash could lose the name, and with it an interval's
 * records at most. */
static bool names_unsynced;
static char adir[PATH_MAX]; /* the archive's directory */
static uint32_t done_strings, done_regions, done_devices, done_groups, done_comms, done_comm_renames;
static const struct zc_def_metric *done_metrics; /* the class journaled (it is replaced, not grown) */
static int done_offsets;
static struct zc_wbuf stage; /* small records, written before the records that need them */
static uint64_t *enc;        /* an EVENTS record's encoded records */
static size_t enc_cap;       /* words */

/* ---------------------------------------------------------------- records */
static void fail_locked(const char *what) {
    int e = errno;
    jok = false;
    if (zc_write_failure(e)) { /* the disk, not us: a write error (zc_otf2_io.c), said once */
        zc_write_failure_count();
        atomic_store(&zc_feature_on[ZC_F_JOURNAL], false);
        ZC_WARN("cannot %s the salvage journal %s: %s; a run that dies now cannot be salvaged", what, jpath,
                strerror(e));
        return;
    }
    ZC_FAIL(ZC_F_JOURNAL, "cannot %s the salvage journal %s: %s; a run that dies now cannot be salvaged", what,
            jpath, strerror(e));
}

/* Writes to the file (jlock): the flusher's passes compare it to tell an idle interval */
static uint64_t jwrites;

/* SIGXFSZ held (zc_otf2_io.h): a journal reaching a file-size limit fails the write (EFBIG, said
 * once by fail_locked) instead of killing the application. The signal goes to the writing thread:
 * our own threads (the flusher, the writer's) are spawned with every signal blocked, but the
 * finalize's pass and the journal's close run on the application's exiting thread, and the clock
 * offsets on its MPI thread, outside OTF2's scope (which holds it too):
 * hostile.journal_size_limit. */
static bool write_all(const struct iovec *iov, int n) {
    jwrites++;
    struct iovec v[4];
    memcpy(v, iov, (size_t)n * sizeof(*v));
    struct zc_xfsz x;
    zc_xfsz_hold(&x);
    bool ok = true;
    while (n > 0) {
        ssize_t w = writev(jfd, v, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
            if (w == 0) errno = ENOSPC;
            ok = false;
            break;
        }
        while (n > 0 && (size_t)w >= v[0].iov_len) {
            w -= (ssize_t)v[0].iov_len;
            memmove(v, v + 1, (size_t)--n * sizeof(*v));
        }
        if (n > 0) {
            v[0].iov_base = (char *)v[0].iov_base + w;
            v[0].iov_len -= (size_t)w;
        }
    }
    int e = errno;
    zc_xfsz_release(&x);
    errno = e; /* fail_locked names it */
    return ok;
}

static size_t rec_begin(uint32_t type) {
    size_t at = stage.n;
    for (int i = 0; i < 3; i++) zc_wbuf_put(&stage, type);
    return at;
}

static void rec_end(size_t at) {
    if (stage.oom) return;
    struct zc_jrn_hdr h = {ZC_JRN_REC_MAGIC, (uint32_t)stage.w[at], stage.n - at - 3, 0};
    h.hash = zc_jrn_hash(h.type, h.nwords, stage.w + at + 3);
    memcpy(stage.w + at, &h, sizeof(h));
}

/* the staged records to the file */
static void stage_write_locked(void) {
    if (stage.oom) {
        errno = ENOMEM;
        fail_locked("stage records for");
    }
    if (jok && stage.n) {
        struct iovec v = {stage.w, stage.n * 8};
        if (!write_all(&v, 1)) fail_locked("write");
    }
    stage.n = 0;
    stage.oom = false;
}

/* New definitions since the last call, strings first (the others name them). */
static void defs_locked(void) {
    zc_defs_lock();
    const struct zc_defs *d = &zc_defs;
    size_t at;
    /* the tables that only grow: from the first not journaled, each a record of its own */
    const struct {
        uint32_t type, n, *done;
        zc_wbuf_put_defs_fn put;
    } grown[] = {{ZC_JRN_STRINGS, d->nstrings, &done_strings, zc_wbuf_put_strings},
                 {ZC_JRN_REGIONS, d->nregions, &done_regions, zc_wbuf_put_regions},
                 {ZC_JRN_DEVICES, d->ndevices, &done_devices, zc_wbuf_put_devices},
                 {ZC_JRN_GROUPS, d->ngroups, &done_groups, zc_wbuf_put_groups},
                 {ZC_JRN_COMMS, d->ncomms, &done_comms, zc_wbuf_put_comms}};
    for (size_t t = 0; t < sizeof(grown) / sizeof(grown[0]); t++) {
        uint32_t done = *grown[t].done;
        if (grown[t].n <= done) continue;
        at = rec_begin(grown[t].type);
        zc_wbuf_put_n(&stage, (const uint64_t[]){done, grown[t].n - done}, 2);
        grown[t].put(&stage, d, done);
        rec_end(at);
        *grown[t].done = grown[t].n;
    }
    if (d->comm_renames > done_comm_renames) { /* after COMMS: they name communicators it defined */
        uint64_t cnt = 0;
        for (uint32_t i = 0; i < d->ncomms; i++) cnt += d->comms[i].renamed > done_comm_renames;
        at = rec_begin(ZC_JRN_COMM_NAMES);
        zc_wbuf_put(&stage, cnt);
        for (uint32_t i = 0; i < d->ncomms; i++)
            if (d->comms[i].renamed > done_comm_renames) {
                zc_wbuf_put(&stage, i);
                zc_wbuf_put(&stage, d->comms[i].name);
            }
        rec_end(at);
        done_comm_renames = d->comm_renames;
    }
    if (d->metrics != done_metrics) {
        at = rec_begin(ZC_JRN_METRICS);
        zc_wbuf_put(&stage, d->nmetrics);
        zc_wbuf_put_metrics(&stage, d, 0);
        rec_end(at);
        done_metrics = d->metrics;
    }
    zc_defs_unlock();
}

static void offsets_locked(void) {
    for (; done_offsets < zc_job.noffsets; done_offsets++) {
        const struct zc_clock_offset *o = &zc_job.offsets[done_offsets];
        uint64_t sd;
        memcpy(&sd, &o->stddev, sizeof(sd));
        size_t at = rec_begin(ZC_JRN_OFFSET);
        zc_wbuf_put_n(&stage, (const uint64_t[]){o->local, (uint64_t)o->offset, sd}, 3);
        rec_end(at);
    }
}

static void location_locked(struct zc_loc *l) {
    size_t at = rec_begin(ZC_JRN_LOCATION);
    zc_wbuf_put_n(&stage, (const uint64_t[]){l->id, l->kind, l->group, l->comm_rank}, 4);
    zc_wbuf_put_str(&stage, l->name);
    zc_wbuf_put(&stage, l->mk0);
    rec_end(at);
    l->jknown = true;
}

/* The window log's entries written since the last call (in order; one not written yet stops
 * it): salvage places the markers from them as the writer does (zc_marks.h). */
static uint64_t done_windows;
static void windows_locked(void) {
    uint64_t ns, from = done_windows;
    bool on;
    size_t at = SIZE_MAX;
    for (; done_windows < from + 65536 && zc_win_log_get(done_windows, &ns, &on); done_windows++) {
        if (at == SIZE_MAX) {
            at = rec_begin(ZC_JRN_WINDOWS);
            zc_wbuf_put(&stage, from);
            zc_wbuf_put(&stage, 0); /* the count, below */
        }
        zc_wbuf_put(&stage, ns);
        zc_wbuf_put(&stage, on);
    }
    if (at == SIZE_MAX) return;
    if (!stage.oom) stage.w[at + 4] = done_windows - from;
    rec_end(at);
}

static void flush_rec_locked(uint64_t t, uint64_t flags) {
    size_t at = rec_begin(ZC_JRN_FLUSH);
    zc_wbuf_put(&stage, t);
    zc_wbuf_put(&stage, flags);
    rec_end(at);
}

/* ---------------------------------------------------------------- the collector's side */
static void fsync_dir(const char *path) {
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return;
    (void)fsync(fd);
    close(fd);
}

/* the file's name survives a node crash too (names_unsynced); jlock held */
static void sync_names_locked(void) {
    if (!names_unsynced) return;
    names_unsynced = false;
    fsync_dir(jdir);
    fsync_dir(adir);
}

void zc_jrn_open(const char *dir) {
    if (!zc_on(ZC_F_JOURNAL)) return;
    pthread_mutex_lock(&jlock);
    if (jfd >= 0) goto out;
    snprintf(jpath, sizeof(jpath), "%s/%s/%u.zcj", dir, ZC_JRN_DIR, zc_job.rank);
    if ((size_t)snprintf(jdir, sizeof(jdir), "%s/%s", dir, ZC_JRN_DIR) >= sizeof(jdir) - 16) {
        errno = ENAMETOOLONG;
        fail_locked("create");
        goto out;
    }
    if (mkdir(jdir, 0777) != 0 && errno != EEXIST) { /* every rank of a job makes it */
        fail_locked("create the directory of");
        goto out;
    }
    int fd = open(jpath, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd >= 0 && fd <= 2) { /* never take the standard streams' numbers (closed stdin) */
        int hi = fcntl(fd, F_DUPFD_CLOEXEC, 3);
        close(fd);
        fd = hi;
    }
    if (fd < 0) {
        fail_locked("create");
        goto out;
    }
    jfd = fd;
    jok = true;
    /* held while the process runs, released by the kernel when it ends however it ends: `zecoll
     * salvage` reads it to refuse a run that is still alive (an open file description's lock, so a
     * forked child closing its copy does not release it; NFS carries it to other hosts) */
    struct flock lk = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
    (void)fcntl(fd, F_OFD_SETLK, &lk);
    char host[256] = "localhost", exe[PATH_MAX] = "";
    gethostname(host, sizeof(host) - 1);
    host[sizeof(host) - 1] = 0;
    ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    exe[n > 0 ? n : 0] = 0;
    zc_wbuf_put(&stage, ZC_JRN_FILE_MAGIC);
    size_t at = rec_begin(ZC_JRN_JOB);
    zc_wbuf_put(&stage, ZC_JRN_VERSION);
    zc_wbuf_put(&stage, zc_job.rank);
    zc_wbuf_put(&stage, zc_job.size);
    zc_wbuf_put(&stage, zc_job.mpi);
    zc_wbuf_put(&stage, (uint64_t)getpid());
    zc_wbuf_put(&stage, zc_start_time());
    zc_wbuf_put(&stage, zc_job.mpi_loc);
    zc_wbuf_put(&stage, zc_knobs.FLUSH_INTERVAL_MS);
    zc_wbuf_put_str(&stage, host);
    zc_wbuf_put_str(&stage, dir);
    zc_wbuf_put_str(&stage, exe);
    rec_end(at);
    offsets_locked();
    stage_write_locked();
    if (jok && zc_knobs.FLUSH_SYNC) {
        names_unsynced = true;
        snprintf(adir, sizeof(adir), "%s", dir); /* fits: jdir, longer, did */
    }
out:
    pthread_mutex_unlock(&jlock);
}

/* The definitions and loc's LOCATION record, before a record of loc (jlock held) */
static void loc_defs_locked(struct zc_loc *loc) {
    defs_locked();
    if (!loc->jknown) {
        /* a stream's lanes (L0[d:n]/k) are created after it, and the archive needs it beside them
         * (A8) even if it has no records yet: streams created earlier go first. Their names are
         * set before they are published; a thread's is set after, so threads wait for records. */
        if (loc->kind == ZC_LOC_DEVICE)
            for (struct zc_loc *l = zc_loc_list(); l; l = l->next)
                if (l->kind == ZC_LOC_DEVICE && !l->jknown && l->id < loc->id) location_locked(l);
        location_locked(loc);
    }
}

/* The descriptors of sealed event files kept open to be synced (the flusher's list, the final
 * pass's, the markers'), one bit each: a forked child closes those it inherited (jrn_fork_child)
 * from this lock-free set, whatever state the lists were copied in; one above the set (a process
 * with more than 65536 descriptors) stays open in a child. */
enum { HELD_FDS = 65536 };
static uint64_t held_fds[HELD_FDS / 64];

void zc_jrn_sealed_fd(int fd) {
    if (fd >= 0 && fd < HELD_FDS) __atomic_fetch_or(&held_fds[fd / 64], UINT64_C(1) << (fd % 64), __ATOMIC_RELAXED);
}

/* its bit cleared first: the number may be reused as soon as it is closed */
static void sealed_close(int fd, bool sync) {
    if (sync) (void)fdatasync(fd);
    if (fd < HELD_FDS) __atomic_fetch_and(&held_fds[fd / 64], ~(UINT64_C(1) << (fd % 64)), __ATOMIC_RELAXED);
    close(fd);
}

/* Descriptors of sealed event files kept open to be synced before a journal naming their seals
 * (the flusher's pass's, the finalize's, the window markers'): each list guarded by its owner's lock */
struct fd_list {
    int *v;
    size_t n, cap;
};

static void fds_push(struct fd_list *l, int fd) {
    if (fd < 0) return;
    if (l->n == l->cap) {
        size_t nc = l->cap ? 2 * l->cap : 16;
        int *p = realloc(l->v, nc * sizeof(*p));
        if (!p) { /* not synced: a node crash may lose what it sealed (salvage counts it lost) */
            sealed_close(fd, false);
            return;
        }
        l->v = p;
        l->cap = nc;
    }
    l->v[l->n++] = fd;
}

/* each closed (synced first with sync), the list emptied */
static void fds_close(struct fd_list *l, bool sync) {
    for (size_t i = 0; i < l->n; i++) sealed_close(l->v[i], sync);
    free(l->v);
    *l = (struct fd_list){0};
}

/* the list handed over to be closed outside its lock, its owner's emptied */
static struct fd_list fds_take(struct fd_list *l) {
    struct fd_list t = *l;
    *l = (struct fd_list){0};
    return t;
}

/* Event files a window marker sealed (jlock), added with their SEAL record: synced by the
 * flusher before its next sync of the journal (it takes them under jlock right before it), or by
 * the journal's close before its last. */
static struct fd_list mark_fds;

void zc_jrn_seal(struct zc_loc *loc, const struct zc_jrn_seal *s, int sync_fd) {
    pthread_mutex_lock(&jlock);
    /* in the list before its record is written: a sync of the journal that may carry the record
     * takes the list after it (the flusher's), or under jlock (the close's) */
    if (sync_fd >= 0 && jok) fds_push(&mark_fds, sync_fd);
    else if (sync_fd >= 0) sealed_close(sync_fd, false);
    if (jok) {
        loc_defs_locked(loc);
        size_t at = rec_begin(ZC_JRN_SEAL);
        zc_wbuf_put_n(&stage, (const uint64_t[]){loc->id, s->k, s->end, s->chunk_off, s->events, s->time, s->chunk_first},
                      7);
        rec_end(at);
        stage_write_locked();
    }
    pthread_mutex_unlock(&jlock);
}

void zc_jrn_events(struct zc_loc *loc, uint64_t first, const struct zc_ev *ev, size_t n) {
    pthread_mutex_lock(&jlock);
    if (!jok || first + n <= loc->jdone) goto out;
    loc_defs_locked(loc);
    stage_write_locked();
    size_t skip = loc->jdone > first ? (size_t)(loc->jdone - first) : 0, m = n - skip;
    size_t words = (m * ZC_JRN_EV_MAX + ZC_JRN_ENC_SLACK + 7) / 8;
    if (words > enc_cap) {
        uint64_t *p = realloc(enc, words * sizeof(*p));
        if (!p) {
            errno = ENOMEM;
            fail_locked("encode records for");
            goto out;
        }
        enc = p;
        enc_cap = words;
    }
    size_t bytes = zc_jrn_encode((uint8_t *)enc, ev + skip, m);
    words = (bytes + 7) / 8;
    memset((uint8_t *)enc + bytes, 0, words * 8 - bytes);
    uint64_t pre[4] = {loc->id, first + skip, m, bytes};
    struct zc_jrn_hdr h = {ZC_JRN_REC_MAGIC, ZC_JRN_EVENTS, 4 + words, 0};
    struct zc_jrn_hs hs;
    zc_jrn_hash_init(&hs, h.type, h.nwords);
    zc_jrn_hash_update(&hs, pre, 4);
    zc_jrn_hash_update(&hs, enc, words);
    h.hash = zc_jrn_hash_final(&hs);
    struct iovec v[3] = {{&h, sizeof(h)}, {pre, sizeof(pre)}, {enc, words * 8}};
    if (jok && !write_all(v, 3)) fail_locked("write");
    loc->jdone = first + n;
out:
    pthread_mutex_unlock(&jlock);
}

void zc_jrn_offsets(void) {
    pthread_mutex_lock(&jlock);
    if (jok) {
        offsets_locked();
        stage_write_locked();
    }
    pthread_mutex_unlock(&jlock);
}

bool zc_jrn_exists(void) {
    pthread_mutex_lock(&jlock);
    bool open = jfd >= 0;
    pthread_mutex_unlock(&jlock);
    return open;
}

/* The event files the finalize's pass sealed (jlock): made durable by the journal's close before
 * the journal whose SEAL records name their bytes, when the journal is kept (ZECOLL_FLUSH_SYNC);
 * not in the pass itself, which runs before the slower steps of finalize (jrn_pre_finalize) */
static struct fd_list final_fds;

static void close_final_fds_locked(bool sync) {
    fds_close(&final_fds, sync);
    fds_close(&mark_fds, sync);
}

bool zc_jrn_close(bool complete) {
    pthread_mutex_lock(&jlock);
    bool kept = false;
    /* before the journal's own fdatasync below: its seals must not name bytes a node crash loses */
    close_final_fds_locked(!complete && jfd >= 0 && jok && zc_knobs.FLUSH_SYNC);
    if (jfd >= 0) {
        if (complete) {
            close(jfd);
            if (unlink(jpath) == 0) (void)rmdir(jdir); /* the last rank's succeeds */
        } else {
            if (jok) { /* (offsets: journaled by the MPI thread that measures them) */
                defs_locked();
                windows_locked();
                flush_rec_locked(zc_now(), ZC_JRN_FINAL);
                stage_write_locked();
                if (jok && zc_knobs.FLUSH_SYNC) (void)fdatasync(jfd);
                sync_names_locked();
            }
            close(jfd);
            kept = true;
        }
        jfd = -1;
        jok = false;
    }
    free(stage.w);
    stage = (struct zc_wbuf){0};
    free(enc);
    enc = NULL;
    enc_cap = 0;
    pthread_mutex_unlock(&jlock);
    return kept;
}

/* ---------------------------------------------------------------- the flusher */
static pthread_mutex_t flock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t fcond;
static bool fstop, fstarted;
static pthread_t fthread;
static atomic_bool fonce;
/* one pass at a time (the flusher's, or the one at the start of finalize): scratch is theirs */
static pthread_mutex_t pass_lock = PTHREAD_MUTEX_INITIALIZER;
static bool passes_stopped; /* pass_lock: finalize began, the flusher makes no more passes */
static struct zc_ev *scratch;
static size_t scratch_cap;
static const struct zc_jrn_feed *feed; /* the writer's (zc_writer.c), set before the flusher starts */
/* Event files the pass sealed, to fdatasync (ZECOLL_FLUSH_SYNC) before the journal once the
 * pass's locks are released (pass_lock) */
static struct fd_list seal_fds;
/* The writer may leave to the flusher's seals what it writes to an event file (zc_jrn_sealing):
 * the flusher runs, and its final pass (finalize) has not begun */
static atomic_bool sealing;

void zc_jrn_feed(const struct zc_jrn_feed *f) { feed = f; }

bool zc_jrn_sealing(void) { return atomic_load_explicit(&sealing, memory_order_acquire); }

static bool journal_open(void) {
    pthread_mutex_lock(&jlock);
    bool ok = jok;
    pthread_mutex_unlock(&jlock);
    return ok;
}

/* What of l is in neither its event file's sealed part nor the journal: the writer seals the
 * file first (feed->snapshot), then the records from the seal on, those handed to the writer
 * but not encoded yet (converted) and its current buffer's, are copied and journaled. */
static void flush_loc(struct zc_loc *l) {
    size_t cap = (ZC_LOC_FLIGHT + 1) * l->cap;
    if (cap > scratch_cap) {
        struct zc_ev *p = realloc(scratch, cap * sizeof(*p));
        if (!p) return;
        scratch = p;
        scratch_cap = cap;
    }
    pthread_mutex_lock(&jlock);
    uint64_t from = l->jdone;
    pthread_mutex_unlock(&jlock);
    struct zc_jrn_snap sn = {0};
    sn.sync_fd = -1;
    feed->snapshot(l, from, scratch, scratch_cap, &sn);
    fds_push(&seal_fds, sn.sync_fd);
    if (sn.nconv) zc_jrn_events(l, sn.first_conv, scratch, sn.nconv);
    size_t n = sn.ncur;
    if (!n) return;
    struct zc_ev *cur = scratch + sn.nconv;
    if (l->kind == ZC_LOC_THREAD) { /* ticks to ns, as the writer converts them */
        struct zc_tickconv tc;
        uint64_t last = 0, events = 0, clamped = 0;
        zc_tickconv_begin(&tc);
        zc_evt_normalize(cur, n, true, zc_region_flush, zc_tickconv_cb, &tc, &last, &events, &clamped);
    }
    zc_jrn_events(l, sn.first_cur, cur, n);
}

/* An idle pass writes nothing, so that a process that records nothing costs no write and no
 * fdatasync every interval (the occupancy of a full node): nothing was written to the file since
 * the last FLUSH record and that one carried nothing either (the one after the last records,
 * whose time bounds what came in during their pass), and no definition or window transition
 * waits. What a crash can lose stays one interval of records: there were none. The file's
 * modification time is the heartbeat `zecoll salvage` judges a rank on another host by (alive:
 * written within 3 intervals + 5 s), so an idle journal still gets a FLUSH record every half of
 * that. jlock: */
static uint64_t flushed_writes;   /* jwrites after the last FLUSH record */
static bool flushed_with_data;    /* that pass wrote more than its FLUSH record */
static uint64_t flushed_ns;       /* the time of that FLUSH record */

static bool idle_pass_locked(uint64_t t0) {
    uint64_t beat = (3 * zc_knobs.FLUSH_INTERVAL_MS + 5000) * UINT64_C(500000); /* half the limit, ns */
    return !stage.n && jwrites == flushed_writes && !flushed_with_data && t0 - flushed_ns < beat;
}

/* One pass: every location's records not yet in the journal, then a FLUSH record with the time
 * the pass began (pass_lock held), unless the pass is idle (above) and not `force`d. Returns the journal's descriptor for the caller to make the
 * pass durable with (ZECOLL_FLUSH_SYNC) after releasing pass_lock, or -1: an fdatasync can take
 * seconds on a busy disk, and the finalize's own pass (a SIGTERM, MPI_Abort) must not wait for
 * it behind the lock (it waited up to the abort's time limit and lost the aborting rank's last
 * records). The journal's close may close the descriptor meanwhile (jrn_finalize): that
 * fdatasync then fails, or syncs whatever file took the number, which harms nothing. */
static int flush_pass(bool force) {
    uint64_t t0 = zc_now();
    if (!journal_open()) {
        /* a process alone opens its archive on its first full buffer: open it now instead if
         * anything was recorded, so that the records are journaled */
        bool any = false;
        for (struct zc_loc *l = zc_loc_list(); l && !any; l = l->next)
            any = __atomic_load_n(&l->n, __ATOMIC_ACQUIRE) != 0;
        if (any) feed->open_archive();
        if (!journal_open()) return -1;
    }
    /* devices first: a device record is put after its Append (on a thread location), so every
     * device record copied here has its Append in the threads' copies that follow */
    for (struct zc_loc *l = zc_loc_list(); l; l = l->next)
        if (l->kind == ZC_LOC_DEVICE) flush_loc(l);
    for (struct zc_loc *l = zc_loc_list(); l; l = l->next)
        if (l->kind != ZC_LOC_DEVICE) flush_loc(l);
    pthread_mutex_lock(&jlock);
    int fd = -1;
    if (jok) {
        defs_locked();
        windows_locked(); /* after the records: every transition they may follow */
        if (force || !idle_pass_locked(t0)) {
            flushed_with_data = stage.n || jwrites != flushed_writes;
            flush_rec_locked(t0, 0);
            stage_write_locked();
            flushed_writes = jwrites;
            flushed_ns = t0;
            fd = jok ? jfd : -1;
        }
    }
    pthread_mutex_unlock(&jlock);
    return zc_knobs.FLUSH_SYNC ? fd : -1;
}

static void *flusher_main(void *arg) {
    (void)arg;
    uint64_t interval = zc_knobs.FLUSH_INTERVAL_MS * UINT64_C(1000000);
    struct timespec dl;
    clock_gettime(CLOCK_MONOTONIC, &dl);
    pthread_mutex_lock(&flock);
    while (!fstop) {
        uint64_t ns = (uint64_t)dl.tv_nsec + interval;
        dl.tv_sec += (time_t)(ns / 1000000000u);
        dl.tv_nsec = (long)(ns % 1000000000u);
        while (!fstop && pthread_cond_timedwait(&fcond, &flock, &dl) != ETIMEDOUT) {
        }
        if (fstop) break;
        pthread_mutex_unlock(&flock);
        pthread_mutex_lock(&pass_lock);
        int fd = passes_stopped ? -1 : flush_pass(false);
        /* the event files the pass sealed: synced before the journal that names their seals */
        struct fd_list sfd = fds_take(&seal_fds);
        pthread_mutex_unlock(&pass_lock);
        /* outside both locks: the writer keeps appending, a finalize's pass can run */
        fds_close(&sfd, zc_knobs.FLUSH_SYNC);
        if (fd >= 0) {
            /* the files window markers sealed, their SEAL records in the journal (taken last: a
             * marker may seal during the pass or the syncs above) */
            pthread_mutex_lock(&jlock);
            struct fd_list mfd = fds_take(&mark_fds);
            pthread_mutex_unlock(&jlock);
            fds_close(&mfd, true);
            (void)fdatasync(fd);
            pthread_mutex_lock(&jlock);
            bool names = names_unsynced;
            names_unsynced = false;
            pthread_mutex_unlock(&jlock);
            if (names) { /* jdir and adir do not change once set */
                fsync_dir(jdir);
                fsync_dir(adir);
            }
        }
        pthread_mutex_lock(&flock);
        /* a pass that overran its interval (a loaded machine) does not queue up more */
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (now.tv_sec > dl.tv_sec || (now.tv_sec == dl.tv_sec && now.tv_nsec > dl.tv_nsec)) dl = now;
    }
    pthread_mutex_unlock(&flock);
    return NULL;
}

void zc_jrn_start(void) {
    if (!zc_on(ZC_F_JOURNAL) || atomic_exchange(&fonce, true)) return;
    pthread_mutex_lock(&flock);
    fstarted = zc_thread_spawn(&fthread, "zc-flush", flusher_main, NULL) == 0;
    atomic_store(&sealing, fstarted);
    pthread_mutex_unlock(&flock);
    if (!fstarted) ZC_FAIL(ZC_F_JOURNAL, "cannot start the journal's flusher thread");
}

/* ---------------------------------------------------------------- lifecycle */
static int jrn_init(void) {
    pthread_condattr_t a;
    pthread_condattr_init(&a);
    pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
    pthread_cond_init(&fcond, &a);
    pthread_condattr_destroy(&a);
    if (!zc_knobs.FLUSH_INTERVAL_MS) atomic_store(&zc_feature_on[ZC_F_JOURNAL], false);
    return 0;
}

/* The first step of finalize (a signal, exit, MPI_Abort): everything recorded so far goes into
 * the journal at once, before the slower steps (waiting for the GPU, writing the archive) that a
 * SIGKILL following the SIGTERM (mpirun stopping a job) may cut short. Written is enough for
 * that (the page cache outlives the process); it is not made durable here, which would put an
 * fdatasync in front of those steps: the journal's close does it (ZECOLL_FLUSH_SYNC). */
static void jrn_pre_finalize(void) {
    /* from here the writer journals what it writes again: this pass seals what it wrote without
     * (every batch decided before is encoded, or in flight and copied by the pass), and no pass
     * follows to seal what comes after (zc_writer.c's last buffers) */
    atomic_store(&sealing, false);
    if (!journal_open()) return;
    pthread_mutex_lock(&pass_lock);
    (void)flush_pass(true);
    /* written; the journal's close syncs them when it keeps the journal (zc_jrn_close) */
    pthread_mutex_lock(&jlock);
    /* beside an earlier finalize's pass's (a signal during exit) */
    for (size_t i = 0; i < seal_fds.n; i++) fds_push(&final_fds, seal_fds.v[i]);
    pthread_mutex_unlock(&jlock);
    seal_fds.n = 0;
    pthread_mutex_unlock(&pass_lock);
}

/* Before the archive's writer writes the last buffers: the flusher must not copy from them. A
 * pass in progress is waited for, not the fdatasync the flusher may then be in (seconds on a busy
 * disk, which a rank stopped by mpirun or an MPI_Abort within its time limit does not have: the
 * rank's last words, its journal's final record and the notice to run `zecoll salvage`, come
 * after this). The flusher ends by itself after that call, detached; the journal's descriptor
 * may be closed under it (an fdatasync keeps its file). */
static void jrn_finalize(void) {
    pthread_mutex_lock(&flock);
    fstop = true;
    bool started = fstarted;
    fstarted = false;
    pthread_cond_broadcast(&fcond);
    pthread_mutex_unlock(&flock);
    pthread_mutex_lock(&pass_lock);
    passes_stopped = true;
    atomic_store(&sealing, false);
    fds_close(&seal_fds, false);
    free(scratch);
    scratch = NULL;
    scratch_cap = 0;
    pthread_mutex_unlock(&pass_lock);
    if (started) pthread_detach(fthread);
}

/* The child of a fork runs untraced: it has no flusher and must not write the parent's file, nor
 * hold the parent's event files open (the sealed ones the parent keeps to sync: closed here,
 * neither synced nor written; the lists they were in are dropped, not freed, as the fork may have
 * copied them mid-change, and their numbers may be the child's own files later). */
static void jrn_fork_child(void) {
    pthread_mutex_init(&jlock, NULL);
    pthread_mutex_init(&flock, NULL);
    pthread_mutex_init(&pass_lock, NULL);
    for (int w = 0; w < HELD_FDS / 64; w++) {
        uint64_t bits = __atomic_exchange_n(&held_fds[w], 0, __ATOMIC_RELAXED);
        for (; bits; bits &= bits - 1) close(w * 64 + __builtin_ctzll(bits));
    }
    seal_fds = final_fds = mark_fds = (struct fd_list){0};
    if (jfd >= 0) close(jfd);
    jfd = -1;
    jok = false;
    names_unsynced = false;
    fstarted = false;
    atomic_store(&sealing, false);
    atomic_store(&fonce, true);
}

const struct zc_subsystem zc_jrn_subsystem = {
    .name = "journal",
    .init = jrn_init,
    .pre_finalize = jrn_pre_finalize,
    .finalize = jrn_finalize,
    .fork_child = jrn_fork_child};
