/* SPDX-License-Identifier: MIT */
/* The one OTF2 writer of the product. Events reach it in batches from location buffers.
 *
 * A process alone (serial) opens its archive on the first batch (or at finalize), so a run that
 * records nothing still produces a valid archive and a run that never flushes pays nothing
 * during execution. In an MPI job the archive is the job's: rank 0 picks the directory in
 * MPI_Init and every rank opens it collectively (zc_otf2_start_job); batches written before
 * that (Level Zero initialisation usually precedes MPI_Init) are held in memory and written
 * first. The archive is closed collectively in MPI_Finalize. Definitions are written once, at
 * close, by zc_unify.c. */
#include "zc_otf2.h"

#include "zc_journal.h"
#include "zc_otf2_evt.h"
#include "zc_otf2_io.h"
#include "zc_unify.h"

#include "zc_clock.h"
#include "zc_defs.h"
#include "zc_evt.h"
#include "zc_fd.h"
#include "zc_otf2_enc.h"
#include "zc_knobs.h"
#include "zc_log.h"
#include "zc_note.h"
#include "zc_papi.h"
#include "zc_phase.h"
#include "zc_proc.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <otf2/otf2.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static pthread_mutex_t otf2_lock = PTHREAD_MUTEX_INITIALIZER;
/* Everything OTF2 does runs under otf2_lock, with the application's closed descriptors 0-2 held
 * (zc_fd.c): the files OTF2 opens meanwhile land above 2. */
static struct zc_fd_guard otf2_fds;
static struct zc_otf2_io_scope otf2_io; /* its failures (zc_otf2_io.c) */
static void otf2_enter(void) {
    pthread_mutex_lock(&otf2_lock);
    zc_fd_guard_hold(&otf2_fds);
    zc_otf2_io_enter(&otf2_io);
}
static void otf2_leave(void) {
    zc_otf2_io_leave(&otf2_io);
    zc_fd_guard_release(&otf2_fds);
    pthread_mutex_unlock(&otf2_lock);
}
static OTF2_Archive *archive;
static bool opened, closed;
/* opened, with an archive, and not closed (set and cleared under otf2_lock): a batch is then
 * written unless tracing is off or a write failed, which zc_otf2_write_begin checks without the
 * lock, as decide_locked would with it */
static atomic_bool writable;
static char archive_dir[PATH_MAX];
static uint64_t ts_min = UINT64_MAX, ts_max;

const char *zc_otf2_path(void) { return archive_dir; }
uint64_t zc_otf2_write_errors(void) { return zc_otf2_io_errors(); }

/* After a failed write, event buffers are discarded instead of written (zc_otf2_io.c). */
static OTF2_FlushType pre_flush(void *ud, OTF2_FileType ft, OTF2_LocationRef loc, void *cd, bool final) {
    return zc_otf2_io_flush(ft, loc) ? OTF2_FLUSH : OTF2_NO_FLUSH;
}

/* Same clock as every event: OTF2 records the flush as a BufferFlush event with this time. */
static OTF2_TimeStamp post_flush(void *ud, OTF2_FileType ft, OTF2_LocationRef loc) {
    zc_otf2_io_flushed();
    return zc_now();
}

static const OTF2_FlushCallbacks flush_cbs = {pre_flush, post_flush};
#define ZC_EVT_CHUNK ZC_ENC_CHUNK /* bytes per event chunk */

/* Without memory callbacks OTF2 keeps every chunk of a writer in memory until it is closed.
 * Here an event writer holds at most ZC_EVT_CHUNKS chunks: when it asks for more, the NULL
 * makes OTF2 flush that buffer to its file and free its chunks, so memory stays flat however
 * long the run. Definition buffers are small and keep what they need. */
#define ZC_EVT_CHUNKS 2
struct chunks {
    size_t n;
    void *v[];
};

static void *mem_alloc(void *ud, OTF2_FileType ft, OTF2_LocationRef loc, void **pbd, uint64_t size) {
    size_t max = ft == OTF2_FILETYPE_EVENTS ? ZC_EVT_CHUNKS : 4096;
    struct chunks *c = *pbd;
    if (!c) {
        c = calloc(1, sizeof(*c) + max * sizeof(void *));
        if (!c) return NULL;
        *pbd = c;
    }
    if (c->n == max) return NULL;
    void *p = malloc(size);
    if (p) c->v[c->n++] = p;
    return p;
}

static void mem_free_all(void *ud, OTF2_FileType ft, OTF2_LocationRef loc, void **pbd, bool final) {
    struct chunks *c = *pbd;
    if (!c) return;
    for (size_t i = 0; i < c->n; i++) free(c->v[i]);
    c->n = 0;
    if (final) {
        free(c);
        *pbd = NULL;
    }
}

static const OTF2_MemoryCallbacks mem_cbs = {mem_alloc, mem_free_all};

/* Room OTF2 needs below the archive directory ("/traces/<20 digits>.evt" and the like) plus the
 * ".<n>" suffix of a taken name: a longer ZECOLL_OUTPUT would fail later, inside OTF2. */
#define ZC_DIR_ROOM 48
#define ZC_DEFAULT_OUTPUT "zecoll-trace-%e-%p"

/* Expands %e %p %h %t of tmpl into out (size bytes); false if the result does not fit, or one of
 * its names is longer than a file name may be (NAME_MAX, less room for the suffix). */
static bool expand_path(const char *tmpl, char *out, size_t size) {
    char exe[PATH_MAX] = "app", host[256] = "host";
    char buf[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
    if (n > 0) {
        buf[n] = 0;
        const char *b = strrchr(buf, '/');
        snprintf(exe, sizeof(exe), "%s", b ? b + 1 : buf);
    }
    gethostname(host, sizeof(host) - 1);
    size_t o = 0;
    bool fits = true;
    for (const char *p = tmpl; *p && fits; p++) {
        char piece[PATH_MAX + 8] = "";
        if (*p != '%' || !p[1]) {
            piece[0] = *p;
            piece[1] = 0;
        } else {
            switch (*++p) {
            case 'e': snprintf(piece, sizeof(piece), "%s", exe); break;
            case 'p': snprintf(piece, sizeof(piece), "%d", (int)getpid()); break;
            case 'h': snprintf(piece, sizeof(piece), "%s", host); break;
            case 't': {
                time_t t = time(NULL);
                struct tm tm;
                localtime_r(&t, &tm);
                strftime(piece, sizeof(piece), "%Y%m%d-%H%M%S", &tm);
                break;
            }
            case '%': snprintf(piece, sizeof(piece), "%%"); break;
            default: snprintf(piece, sizeof(piece), "%%%c", *p); break;
            }
        }
        size_t len = strlen(piece);
        if (o + len >= size) {
            fits = false;
            len = size - 1 - o;
        }
        memcpy(out + o, piece, len);
        o += len;
    }
    out[o] = 0;
    for (const char *c = out; *c && fits;) { /* every name within NAME_MAX, with room for ".<n>" */
        size_t len = strcspn(c, "/");
        if (len > NAME_MAX - 8) fits = false;
        c += len + (c[len] == '/');
    }
    return fits;
}

/* mkdir -p of the directories above path */
static int make_parents(const char *path) {
    char p[PATH_MAX];
    snprintf(p, sizeof(p), "%s", path);
    for (char *s = strchr(p + 1, '/'); s; s = strchr(s + 1, '/')) {
        *s = 0;
        if (mkdir(p, 0777) != 0 && errno != EEXIST) return -1;
        *s = '/';
    }
    return 0;
}

/* Creates the archive directory, <base> or, if taken, <base>.1, <base>.2 ...: mkdir tests and
 * claims a name in one step, so runs that start together with one ZECOLL_OUTPUT (job arrays,
 * jobs sharing a directory) each get their own. Returns 0 or the errno of the failure (EEXIST:
 * every name taken). */
static int create_dir(const char *base) {
    for (int i = 0; i < 1000; i++) {
        if (i == 0) snprintf(archive_dir, sizeof(archive_dir), "%s", base);
        else snprintf(archive_dir, sizeof(archive_dir), "%s.%d", base, i);
        if (mkdir(archive_dir, 0777) == 0) return 0;
        if (errno == ENOENT && make_parents(archive_dir) == 0 && mkdir(archive_dir, 0777) == 0) return 0;
        if (errno != EEXIST) return errno;
    }
    return EEXIST;
}

/* tmpl made absolute from the working directory at start-up ('%' in it escaped), so that an
 * application's chdir() changes nothing; tmpl itself if it is absolute or that does not fit. */
static const char *absolute(const char *tmpl, char *out, size_t size) {
    const char *cwd = zc_start_cwd();
    if (tmpl[0] == '/' || !cwd[0]) return tmpl;
    size_t o = 0;
    for (const char *c = cwd; *c && o + 3 < size; c++) {
        if (*c == '%') out[o++] = '%';
        out[o++] = *c;
    }
    int n = snprintf(out + o, size - o, "/%s", tmpl);
    return n < 0 || (size_t)n >= size - o ? tmpl : out;
}

/* Picks and creates the archive directory (archive_dir). A ZECOLL_OUTPUT too long to hold an
 * archive is named and replaced by the default; any other failure is named with its cause. */
static int choose_dir(void) {
    char abs_tmpl[PATH_MAX], base[PATH_MAX];
    const char *user = zc_knobs.OUTPUT && *zc_knobs.OUTPUT ? zc_knobs.OUTPUT : NULL;
    const char *tmpl = absolute(user ? user : ZC_DEFAULT_OUTPUT, abs_tmpl, sizeof(abs_tmpl));
    int e = expand_path(tmpl, base, sizeof(base) - ZC_DIR_ROOM) ? create_dir(base) : ENAMETOOLONG;
    if (e == ENAMETOOLONG && user) {
        ZC_WARN("ZECOLL_OUTPUT=%.48s...: the archive's path would be too long for its files (at most %d bytes and "
                "names of %d): writing the archive to the default %s instead",
                user, PATH_MAX - ZC_DIR_ROOM - 1, NAME_MAX - 8, ZC_DEFAULT_OUTPUT);
        tmpl = absolute(ZC_DEFAULT_OUTPUT, abs_tmpl, sizeof(abs_tmpl));
        e = expand_path(tmpl, base, sizeof(base) - ZC_DIR_ROOM) ? create_dir(base) : ENAMETOOLONG;
    }
    if (e == ENAMETOOLONG && tmpl == abs_tmpl) /* a working directory too deep to be named whole */
        e = expand_path(ZC_DEFAULT_OUTPUT, base, sizeof(base) - ZC_DIR_ROOM) ? create_dir(base) : e;
    if (e == 0) return 0;
    ZC_WARN("cannot create the archive directory %s (ZECOLL_OUTPUT=%s): %s; nothing is recorded", archive_dir,
            zc_knobs.OUTPUT ? zc_knobs.OUTPUT : "", e == EEXIST ? "it and its 999 numbered variants exist" : strerror(e));
    archive_dir[0] = 0;
    atomic_store(&zc_feature_on[ZC_F_TRACE], false);
    return -1;
}

static void write_held_locked(void);

/* Opens the archive (serial, or this rank's part of the job's) in archive_dir. Local steps
 * only, so that a failure can be agreed on before any collective one. */
/* Definition chunks of OTF2's smallest size: OTF2 clears the rest of a writer's last chunk when it
 * flushes it, and every location has a local definition writer (rank 0 the global one too), so
 * its default 4 MiB cost each rank 4 MiB of page faults and memset at close per location
 * (measured: most of the close's CPU); definitions larger than a chunk take several. */
#define ZC_DEF_CHUNK OTF2_CHUNK_SIZE_MIN
static int open_local(void) {
    archive = OTF2_Archive_Open(archive_dir, "traces", OTF2_FILEMODE_WRITE, ZC_EVT_CHUNK, ZC_DEF_CHUNK,
                                OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE);
    if (!archive) {
        ZC_FAIL(ZC_F_TRACE, "cannot create OTF2 archive %s (check ZECOLL_OUTPUT and permissions)", archive_dir);
        return -1;
    }
    if (OTF2_Archive_SetFlushCallbacks(archive, &flush_cbs, NULL) != OTF2_SUCCESS ||
        OTF2_Archive_SetMemoryCallbacks(archive, &mem_cbs, NULL) != OTF2_SUCCESS ||
        OTF2_Archive_SetCreator(archive, "zecoll") != OTF2_SUCCESS) {
        ZC_FAIL(ZC_F_TRACE, "cannot initialise OTF2 archive %s", archive_dir);
        OTF2_Archive_Close(archive);
        archive = NULL;
        return -1;
    }
    /* room for the definitions, should the disk fill up (rank 0 also writes the job's) */
    zc_otf2_io_reserve_open(archive_dir, zc_job.rank, zc_job.rank == 0 ? (uint64_t)zc_job.size * 1024 : 0);
    return 0;
}

static int open_locked(void) {
    if (opened) return archive ? 0 : -1;
    opened = true;
    if (choose_dir() != 0) return -1;
    if (open_local() != 0) return -1;
    if (OTF2_Archive_SetSerialCollectiveCallbacks(archive) != OTF2_SUCCESS ||
        OTF2_Archive_OpenEvtFiles(archive) != OTF2_SUCCESS) {
        ZC_FAIL(ZC_F_TRACE, "cannot initialise OTF2 archive %s", archive_dir);
        OTF2_Archive_Close(archive);
        archive = NULL;
        return -1;
    }
    zc_jrn_open(archive_dir);
    write_held_locked();
    atomic_store_explicit(&writable, true, memory_order_release);
    return 0;
}

/* Collective over the job (every rank calls it once, from MPI_Init). The steps that can fail
 * locally are agreed on before each collective one, so no rank is left waiting. */
int zc_otf2_start_job(void) {
    if (!zc_job.mpi) return 0;
    otf2_enter();
    if (opened && zc_job.size == 1 && archive) {
        /* a singleton (no launcher) that wrote its archive before MPI_Init: it stays serial */
        otf2_leave();
        return 0;
    }
    bool ok = !opened && !closed && zc_on(ZC_F_TRACE);
    if (zc_job.rank == 0 && ok && choose_dir() != 0) ok = false;
    zc_phase("init.mkdir");
    /* rank 0 decides the directory, as an absolute path (ranks may start in other directories) */
    if (zc_job.rank == 0 && ok && archive_dir[0] != '/') {
        char cwd[PATH_MAX], abs[PATH_MAX];
        if (getcwd(cwd, sizeof(cwd)) && (size_t)snprintf(abs, sizeof(abs), "%s/%s", cwd, archive_dir) < sizeof(abs))
            memcpy(archive_dir, abs, sizeof(abs));
    }
    char msg[PATH_MAX + 1];
    msg[0] = ok ? 1 : 0;
    memcpy(msg + 1, archive_dir, PATH_MAX);
    if (zc_job.bcast(msg, sizeof(msg)) != 0) ok = false;
    else if (zc_job.rank != 0) {
        ok = ok && msg[0];
        memcpy(archive_dir, msg + 1, PATH_MAX);
        archive_dir[PATH_MAX - 1] = 0;
    }
    zc_phase("init.bcast");
    opened = true;
    if (ok && open_local() != 0) ok = false;
    zc_phase("init.open");
    bool all = ok;
    if (zc_job.all_true(&all) != 0) all = false;
    zc_phase("init.agree2");
    /* each collective step's outcome is agreed on too: a rank that failed inside one must not
     * leave the others waiting in the next */
    if (all) {
        all = zc_job.otf2_collectives(archive) == 0;
        if (!all) ZC_FAIL(ZC_F_TRACE, "cannot set OTF2's MPI collective operations");
        if (zc_job.all_true(&all) != 0) all = false;
    }
    zc_phase("init.otf2coll");
    if (all) {
        all = OTF2_Archive_OpenEvtFiles(archive) == OTF2_SUCCESS;
        if (!all) ZC_FAIL(ZC_F_TRACE, "cannot open the event files of %s", archive_dir);
        if (zc_job.all_true(&all) != 0) all = false;
    }
    zc_phase("init.evtfiles");
    if (all) {
        zc_jrn_open(archive_dir);
        zc_phase("init.journal");
        write_held_locked();
        atomic_store_explicit(&writable, true, memory_order_release);
    } else {
        /* no collective close is possible any more: the handle is left behind, the trace is off */
        archive = NULL;
        atomic_store(&zc_feature_on[ZC_F_TRACE], false);
        if (zc_job.rank == 0) ZC_WARN("the job's archive could not be opened on every rank: nothing is recorded");
    }
    otf2_leave();
    return all ? 0 : -1;
}

int zc_otf2_init(void) {
    zc_otf2_io_init();
    return 0;
}

/* A location's OTF2 id: its local id with the rank, final once the archive is open. */
static uint64_t loc_id(const struct zc_loc *l) { return l->id | zc_rank(); }

/* ---------------------------------------------------------------- held events */
static uint64_t held_bytes;
static bool holding_done; /* no more holding: the archive is open, or the process is ending */

static void hold_locked(struct zc_loc *loc, const struct zc_ev *ev, size_t n) {
    if (loc->nheld + n > loc->cap_held) {
        size_t ncap = loc->cap_held ? 2 * loc->cap_held : 1024;
        while (ncap < loc->nheld + n) ncap *= 2;
        uint64_t more = (ncap - loc->cap_held) * sizeof(struct zc_ev);
        struct zc_ev *p = held_bytes + more <= zc_knobs.PRE_INIT_MEMORY ? realloc(loc->held, ncap * sizeof(*p)) : NULL;
        if (!p) {
            static bool warned;
            if (!warned) ZC_WARN("events before MPI_Init exceed ZECOLL_PRE_INIT_MEMORY=%llu bytes: later ones are dropped",
                                 (unsigned long long)zc_knobs.PRE_INIT_MEMORY);
            warned = true;
            loc->ndropped += n;
            return;
        }
        held_bytes += more;
        loc->held = p;
        loc->cap_held = ncap;
    }
    memcpy(loc->held + loc->nheld, ev, n * sizeof(*ev));
    loc->nheld += n;
}

static void write_events_locked(struct zc_loc *loc, const struct zc_ev *ev, size_t n, uint64_t next);

/* Right after the archive opens, before any other batch: each location's order is kept. */
static void write_held_locked(void) {
    holding_done = true;
    for (struct zc_loc *l = zc_loc_list(); l; l = l->next) {
        /* a location's first records: stream index 0 on (minus any dropped over the limit) */
        if (l->nheld) {
            size_t nrec = 0;
            for (size_t i = 0; i < l->nheld; i++) nrec += l->held[i].type != ZC_EV_MEASUREMENT;
            if (nrec != l->nheld) __atomic_store_n(&l->jall, true, __ATOMIC_RELAXED); /* markers: no seals */
            write_events_locked(l, l->held, l->nheld, nrec);
            /* the journal numbers a location's records; window markers are not records */
            size_t k = 0;
            for (size_t i = 0; i < l->nheld; i++)
                if (l->held[i].type != ZC_EV_MEASUREMENT) l->held[k++] = l->held[i];
            zc_jrn_events(l, 0, l->held, k);
        }
        free(l->held);
        l->held = NULL;
        l->nheld = l->cap_held = 0;
    }
    held_bytes = 0;
}

/* What becomes of a batch: held (before an MPI job's archive exists), dropped, or written
 * (true). */
static bool decide_locked(struct zc_loc *loc, const struct zc_ev *ev, size_t n) {
    if (closed || !zc_on(ZC_F_TRACE)) {
        loc->ndropped += n;
        return false;
    }
    if (!opened && !holding_done && atomic_load(&zc_job.mpi_expected)) {
        hold_locked(loc, ev, n);
        return false;
    }
    if (zc_job.mpi && !opened) { /* cannot happen: an MPI job opens in MPI_Init */
        loc->ndropped += n;
        return false;
    }
    if (open_locked() != 0 || zc_otf2_io_damaged()) { /* after a failed write: nothing more to disk */
        loc->ndropped += n;
        return false;
    }
    return true;
}

/* next: the stream index after the batch's last record (markers: the same as before) */
static void write_events_locked(struct zc_loc *loc, const struct zc_ev *ev, size_t n, uint64_t next) {
    struct zc_otf2_evt *o = zc_otf2_evt_get(loc, loc_id(loc), archive, archive_dir);
    if (!o) {
        ZC_FAIL(ZC_F_TRACE, "no OTF2 event writer for location %s", loc->name);
        loc->ndropped += n;
        return;
    }
    OTF2_ErrorCode e = zc_otf2_evt_write(o, ev, n, next, &ts_min, &ts_max);
    /* after a write failed, OTF2 is still given the events (its buffers of them are discarded,
     * and they count as dropped when the file is ended, zc_otf2_io.c); anything else is ours */
    if (e != OTF2_SUCCESS && !zc_otf2_io_damaged())
        ZC_FAIL(ZC_F_TRACE, "OTF2 event write failed on %s: %s", loc->name, OTF2_Error_GetName(e));
}

/* Does a batch of loc written now to the open archive go to the journal too? Not while the
 * flusher seals the event files our encoder writes (zc_jrn_sealing: its passes put what the
 * files hold below a seal, and journal the rest, docs/salvage.md): then the journal holds a
 * record once, and the writer's thread does not encode it twice. A location with markers
 * (windows) or OTF2's encoder is journaled whole, as before. */
static bool journal_batch(struct zc_loc *loc) {
    return !zc_jrn_sealing() || __atomic_load_n(&loc->jall, __ATOMIC_RELAXED);
}

void zc_otf2_write(struct zc_loc *loc, const struct zc_ev *ev, size_t n, uint64_t first) {
    if (n == 0) return;
    otf2_enter();
    if (decide_locked(loc, ev, n)) {
        write_events_locked(loc, ev, n, first + n);
        if (journal_batch(loc)) zc_jrn_events(loc, first, ev, n);
    }
    otf2_leave();
}

/* Neither the decision, once the archive is open, nor the journal (it has its own lock) waits
 * for the OTF2 lock, which zc_otf2_write_end holds while it writes a whole buffer: the converting
 * thread decides and journals a batch while the other writes the one before. A batch not
 * journaled here is in flight until _end encoded it: the flusher copies it from there. */
bool zc_otf2_write_begin(struct zc_loc *loc, const struct zc_ev *ev, size_t n, uint64_t first) {
    if (n == 0) return false;
    bool write;
    if (atomic_load_explicit(&writable, memory_order_acquire) && zc_on(ZC_F_TRACE) && !zc_otf2_io_damaged()) {
        write = true;
    } else {
        otf2_enter();
        write = decide_locked(loc, ev, n);
        otf2_leave();
    }
    if (write && journal_batch(loc)) zc_jrn_events(loc, first, ev, n);
    return write;
}

/* The archive cannot close meanwhile: finalize waits for the writer threads first (zc_writer.c). A
 * write that failed since _begin still hands OTF2 the events, as zc_otf2_write does. A location
 * whose file turned out not to be sealable (OTF2's encoder: no memory for ours) or sealing that
 * stopped (finalize) meanwhile: journaled here (a range _begin journaled is skipped). */
void zc_otf2_write_end(struct zc_loc *loc, const struct zc_ev *ev, size_t n, uint64_t first) {
    otf2_enter();
    if (closed) {
        loc->ndropped += n;
    } else {
        write_events_locked(loc, ev, n, first + n);
        if (journal_batch(loc)) zc_jrn_events(loc, first, ev, n);
    }
    otf2_leave();
}


/* Only while the archive is open (its event files are being written): the flusher (zc_writer.c's
 * snapshot, under the writer queue's lock) and a location's first window marker */
static uint64_t seal_locked(struct zc_loc *loc, int *sync_fd) {
    return opened && !closed ? zc_otf2_evt_seal(loc, sync_fd) : 0;
}

uint64_t zc_otf2_seal(struct zc_loc *loc, int *sync_fd) {
    otf2_enter();
    uint64_t k = seal_locked(loc, sync_fd);
    otf2_leave();
    return k;
}

/* Measurement markers (zc_writer.c): written like records but not journaled (they are no records
 * of the location's stream: a salvaged archive has none). Salvage places them from the journaled
 * window log, so a location's sealed part holds none: its file is sealed before its first one
 * and the location journaled whole from then on. */
void zc_otf2_write_marks(struct zc_loc *loc, const struct zc_ev *ev, size_t n) {
    if (n == 0) return;
    otf2_enter();
    if (closed || !zc_on(ZC_F_TRACE)) {
    } else if (!opened && !holding_done && atomic_load(&zc_job.mpi_expected)) {
        hold_locked(loc, ev, n);
    } else if (!(zc_job.mpi && !opened) && open_locked() == 0 && !zc_otf2_io_damaged()) {
        if (!__atomic_load_n(&loc->jall, __ATOMIC_RELAXED)) {
            /* its file (ZECOLL_FLUSH_SYNC) is synced before the journal's next sync, the one
             * that makes this SEAL record durable (zc_jrn_seal) */
            (void)seal_locked(loc, NULL);
            __atomic_store_n(&loc->jall, true, __ATOMIC_RELAXED);
        }
        write_events_locked(loc, ev, n, zc_otf2_evt_next(loc));
    }
    otf2_leave();
}

void zc_otf2_open_for_journal(void) {
    otf2_enter();
    if (!opened && !closed && !holding_done && zc_on(ZC_F_TRACE) && !zc_job.mpi && !zc_job.mpi_launched) open_locked();
    otf2_leave();
}

/* ---------------------------------------------------------------- close */
/* Events OTF2 was given for a location whose file ends early (zc_otf2_io.c) are dropped ones. */
static void count_lost(uint64_t id, uint64_t kept) {
    for (struct zc_loc *l = zc_loc_list(); l; l = l->next)
        if (l->gid == id && l->otf2_events > kept) l->ndropped += l->otf2_events - kept;
}

/* The layers' notes (zc_note.h), every rank's summed or joined on rank 0: archive properties
 * ZECOLL::<name>. Collective in an MPI job: every rank takes part whatever failed locally. */
static void note_property(const char *name, const char *value, void *arg) {
    char prop[80];
    snprintf(prop, sizeof(prop), "ZECOLL::%s", name);
    OTF2_ErrorCode c = OTF2_Archive_SetProperty(archive, prop, value, true);
    if (c != OTF2_SUCCESS) *(OTF2_ErrorCode *)arg = c;
}

static OTF2_ErrorCode write_notes(void) {
    bool job = zc_job.mpi && zc_job.gather;
    uint32_t ranks = job ? zc_job.size : 1;
    size_t n = 0, total = 0, *sizes = calloc(ranks, sizeof(size_t));
    char *mine = zc_note_serialise(&n);
    void *all = NULL;
    if (job) {
        if (zc_job.gather(mine ? mine : "", n, &all, sizes) != 0) all = NULL;
    } else if (sizes) {
        all = mine;
        sizes[0] = n;
    }
    OTF2_ErrorCode e = OTF2_SUCCESS;
    if ((!job || zc_job.rank == 0) && all && sizes) {
        for (uint32_t r = 0; r < ranks; r++) total += sizes[r];
        if (zc_note_merge(all, total, note_property, &e) != 0) ZC_FAIL(ZC_F_TRACE, "out of memory merging the archive notes");
    }
    if (job) free(all);
    free(mine);
    free(sizes);
    return e;
}

/* Collective in an MPI job. */
static void close_locked(void) {
    OTF2_ErrorCode e = OTF2_SUCCESS;
    for (struct zc_loc *l = zc_loc_list(); l; l = l->next) {
        /* every location is defined, so every one has its event file, even without events (the
         * thread of an unselected rank, which the job's MPI communicator names) */
        l->gid = loc_id(l);
        /* a location that never recorded anything: its (empty) file written directly, without a
         * writer, whose chunk would be allocated (and, by OTF2, cleared) only to write 20 bytes of
         * it; not when the tests ask for the encoder's copy beside OTF2's (every .evt has its .own) */
        if (!l->writer && !l->nevents && !zc_otf2_io_damaged() && !zc_otf2_evt_copy() &&
            zc_otf2_io_empty_evt(archive_dir, "traces", l->gid, ZC_EVT_CHUNK)) {
            l->otf2_events = 0;
            continue;
        }
        if (zc_otf2_evt_get(l, l->gid, archive, archive_dir)) {
            OTF2_ErrorCode c = zc_otf2_evt_close(l, archive);
            if (e == OTF2_SUCCESS) e = c;
            atomic_fetch_add_explicit(&zc_progress, 1, memory_order_relaxed);
        }
    }
    zc_phase("close.evtwriters");
    OTF2_ErrorCode c = OTF2_Archive_CloseEvtFiles(archive);
    if (e == OTF2_SUCCESS) e = c;
    zc_phase("close.evtfiles");
    /* the definitions and the anchor file get the space kept for them (zc_otf2_io.c) */
    zc_otf2_io_reserve_release();
    bool clean = !zc_otf2_io_damaged();
    if (zc_job.mpi && zc_job.all_true(&clean) != 0) clean = false;
    if (!clean) {
        char text[512];
        if (zc_otf2_io_damaged())
            snprintf(text, sizeof(text), "rank %u could not write from %llu ns on (%s): its later events are missing",
                     zc_job.rank, (unsigned long long)zc_otf2_io_damaged_at(), zc_otf2_io_first_error());
        else
            snprintf(text, sizeof(text), "a rank could not write all its events: see its summary line");
        c = OTF2_Archive_SetProperty(archive, "ZECOLL::TRUNCATED", text, true);
        if (e == OTF2_SUCCESS) e = c;
    }
    zc_phase("close.agree");
    c = write_notes();
    if (e == OTF2_SUCCESS) e = c;
    zc_phase("close.notes");
    zc_unify_write(archive, ts_min, ts_max);
    c = OTF2_Archive_Close(archive);
    if (e == OTF2_SUCCESS) e = c;
    archive = NULL;
    zc_phase("close.archive");
    zc_otf2_io_repair(archive_dir, "traces", ZC_EVT_CHUNK, count_lost);
    zc_phase("close.repair");
    /* an I/O failure is counted and said already; anything else is ours */
    if (e != OTF2_SUCCESS && !zc_otf2_io_damaged())
        ZC_FAIL(ZC_F_TRACE, "closing the archive %s failed: %s", archive_dir, OTF2_Error_GetName(e));
    /* after a failed write the journal may hold more than the files (it is written sooner and
     * smaller): it is kept for zecoll salvage */
    bool whole = c == OTF2_SUCCESS && zc_on(ZC_F_TRACE) && !zc_otf2_io_damaged();
    if (zc_jrn_close(whole))
        ZC_WARN("the archive %s may be incomplete; its journal holds what was recorded: `zecoll salvage %s` rebuilds it",
                archive_dir, archive_dir);
    zc_phase("close.journal");
    if (zc_job.rank == 0) zc_config_store(archive_dir); /* the effective configuration, in the archive */
    zc_phase("close.config");
}

bool zc_otf2_close_begin(void) {
    otf2_enter();
    bool to_close = !closed;
    if (to_close) holding_done = true; /* MPI did not start: what was held goes to a per-process archive */
    otf2_leave();
    return to_close;
}

/* After zc_otf2_close_begin, once the writer wrote every buffer. */
void zc_otf2_close(void) {
    otf2_enter();
    closed = true;
    atomic_store_explicit(&writable, false, memory_order_relaxed);
    if (zc_job.mpi) {
        /* The job's archive closes collectively, and only MPI_Finalize guarantees that every
         * rank takes part. A rank that exits without it (or is stopped by a signal) cannot. */
        if (!zc_job.closing) {
            if (archive) {
                bool kept = zc_jrn_exists(); /* said first (zc_journal.h) */
                ZC_WARN("rank %u ends without MPI_Finalize: the job's archive %s cannot be completed%s%s%s",
                        zc_job.rank, archive_dir, kept ? "; after the job, run `zecoll salvage " : "",
                        kept ? archive_dir : "", kept ? "`" : "");
                (void)zc_jrn_close(false);
            }
            archive_dir[0] = 0;
        } else if (archive) {
            close_locked();
        }
        otf2_leave();
        return;
    }
    /* a process that recorded nothing (a shell or `timeout` that inherited LD_PRELOAD) leaves no
     * archive behind */
    uint64_t total = 0;
    for (struct zc_loc *l = zc_loc_list(); l; l = l->next) total += l->nevents;
    if (!opened && total == 0) {
        otf2_leave();
        return;
    }
    if (zc_on(ZC_F_TRACE) && open_locked() == 0) {
        close_locked();
    } else {
        if (zc_jrn_exists()) /* said first (zc_journal.h) */
            ZC_WARN("the archive %s could not be completed; its journal holds what was recorded: run `zecoll salvage %s`",
                    archive_dir, archive_dir);
        (void)zc_jrn_close(false);
    }
    otf2_leave();
}
