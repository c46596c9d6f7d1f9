/* SPDX-License-Identifier: MIT */
/* What salvage must not harm: files that are not what their name says (a FIFO would block the
 * open, a device or directory is no journal), a run that is still alive (its journal's lock, or
 * its heartbeat), and the archive directory itself when writing fails (a full disk): the archive
 * is written into a staging directory and moved into place only when complete. */
#include "zc_salvage_internal.h"

#include <dirent.h>
#include <errno.h>
#include <otf2/otf2.h>
#include <stdarg.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char *kind_of(mode_t m) {
    if (S_ISDIR(m)) return "a directory";
    if (S_ISFIFO(m)) return "a FIFO";
    if (S_ISCHR(m) || S_ISBLK(m)) return "a device";
    if (S_ISSOCK(m)) return "a socket";
    return "not a regular file";
}

int zc_salv_open_regular(const char *path, const char *what, struct stat *st) {
    /* O_NONBLOCK: opening a FIFO without a writer would wait for one for ever */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0 || fstat(fd, st) != 0) {
        fprintf(stderr, "%s: %s: %s\n", zc_salv_prog, path, strerror(errno));
        if (fd >= 0) close(fd);
        return -1;
    }
    if (!S_ISREG(st->st_mode)) {
        fprintf(stderr, "%s: %s: %s, not %s\n", zc_salv_prog, path, kind_of(st->st_mode), what);
        close(fd);
        return -1;
    }
    return fd;
}

/* Whether any thread of pid runs on this host (a zombie's threads hold nothing). */
static bool pid_runs(uint64_t pid) {
    char p[64];
    snprintf(p, sizeof(p), "/proc/%llu/task", (unsigned long long)pid);
    DIR *d = opendir(p);
    if (!d) return false;
    bool runs = false;
    for (struct dirent *e; !runs && (e = readdir(d));) {
        if (e->d_name[0] == '.') continue;
        char sp[384], buf[512];
        snprintf(sp, sizeof(sp), "%s/%s/stat", p, e->d_name);
        FILE *f = fopen(sp, "re");
        if (!f) continue;
        size_t k = fread(buf, 1, sizeof(buf) - 1, f);
        fclose(f);
        buf[k] = 0;
        const char *c = strrchr(buf, ')');
        runs = c && c[1] == ' ' && c[2] != 'Z' && c[2] != 'X';
    }
    closedir(d);
    return runs;
}

bool zc_salv_lock_held(int fd) {
    struct flock lk = {.l_type = F_RDLCK, .l_whence = SEEK_SET};
    return fcntl(fd, F_OFD_GETLK, &lk) == 0 && lk.l_type != F_UNLCK;
}

/* The journal's lock is free now, or within a grace period. The kernel may release a dead
 * process's lock a few milliseconds after its last thread ended (its files' last references are
 * dropped by deferred work), so a salvage started as soon as mpirun returns can still see it. */
static bool lock_released(const char *path) {
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return false;
    bool held = zc_salv_lock_held(fd);
    for (int i = 0; held && i < 200; i++) { /* 2 s */
        struct timespec ts = {0, 10 * 1000000L};
        nanosleep(&ts, NULL);
        held = zc_salv_lock_held(fd);
    }
    close(fd);
    return !held;
}

bool zc_salv_alive(const struct zc_salv_rank *j, char *why, size_t n) {
    if (j->missing) return false;
    char host[256] = "";
    gethostname(host, sizeof(host) - 1);
    if (j->locked && !(!strcmp(host, j->host) && !pid_runs(j->pid) && lock_released(j->path))) {
        snprintf(why, n, "it holds its journal's lock");
        return true;
    }
    if (!strcmp(host, j->host)) {
        /* this host carries the lock: not held, so the writer has ended (a collector without the
         * lock, older than this salvage: its pid running the same executable) */
        char p[64], exe[PATH_MAX];
        snprintf(p, sizeof(p), "/proc/%llu/exe", (unsigned long long)j->pid);
        ssize_t k = readlink(p, exe, sizeof(exe) - 1);
        exe[k > 0 ? k : 0] = 0;
        if (k > 0 && !strcmp(exe, j->exe) && !j->final) {
            snprintf(why, n, "pid %llu still runs %s", (unsigned long long)j->pid, j->exe);
            return true;
        }
        return false;
    }
    /* another host, whose lock this file system may not show: the flusher writes the journal every
     * flush interval (a FLUSH record), so a recent write means a live writer */
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    double age = (double)(now.tv_sec - j->mtime.tv_sec) + (double)(now.tv_nsec - j->mtime.tv_nsec) / 1e9;
    double limit = 3.0 * (double)j->interval_ms / 1e3 + 5.0;
    if (!j->final && age < limit) {
        snprintf(why, n, "its journal was written %.1f s ago (on another host; a run is taken to be dead %.0f s after "
                 "its last write: 3 flush intervals + 5 s)", age < 0 ? 0 : age, limit);
        return true;
    }
    return false;
}

bool zc_salv_sibling_dir(const char *dir, char *out, size_t n) {
    size_t len = strlen(dir);
    while (len > 1 && dir[len - 1] == '/') len--;
    for (int i = 0; i < 1000; i++) {
        int k = i ? snprintf(out, n, "%.*s-salvaged.%d", (int)len, dir, i)
                  : snprintf(out, n, "%.*s-salvaged", (int)len, dir);
        if (k < 0 || (size_t)k >= n) break;
        if (mkdir(out, 0777) == 0) return true;
        if (errno != EEXIST) {
            fprintf(stderr, "%s: %s: %s\n", zc_salv_prog, out, strerror(errno));
            return false;
        }
    }
    fprintf(stderr, "%s: %s: no free name for the salvaged archive beside it\n", zc_salv_prog, dir);
    return false;
}

static int rm_tree(const char *path) {
    DIR *d = opendir(path);
    if (!d) return errno == ENOENT ? 0 : -1;
    struct dirent *e;
    int rc = 0;
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        char p[PATH_MAX];
        if ((size_t)snprintf(p, sizeof(p), "%s/%s", path, e->d_name) >= sizeof(p)) {
            rc = -1;
            continue;
        }
        struct stat st;
        if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode)) rc |= rm_tree(p);
        else if (unlink(p) != 0) rc = -1;
    }
    closedir(d);
    return rmdir(path) != 0 ? -1 : rc;
}

int zc_salv_rm_tree(const char *path) { return rm_tree(path); }

/* stage/name to into/name (a directory: what was there first removed); 0 or -1 (errno). */
static int move_in(const char *stage, const char *into, const char *name) {
    char from[PATH_MAX], to[PATH_MAX];
    if ((size_t)snprintf(from, sizeof(from), "%s/%s", stage, name) >= sizeof(from) ||
        (size_t)snprintf(to, sizeof(to), "%s/%s", into, name) >= sizeof(to)) {
        errno = ENAMETOOLONG;
        return -1;
    }
    struct stat st;
    if (lstat(to, &st) == 0 && S_ISDIR(st.st_mode) && rm_tree(to) != 0) return -1;
    return rename(from, to);
}

static OTF2_ErrorCode quiet(void *ud, const char *file, uint64_t line, const char *fn, OTF2_ErrorCode code,
                            const char *msg, va_list va) {
    (void)ud, (void)file, (void)line, (void)fn, (void)msg, (void)va;
    return code;
}

bool zc_salv_anchor_readable(const char *path) {
    struct stat st;
    if (lstat(path, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size == 0) return false;
    OTF2_ErrorCallback prev = OTF2_Error_RegisterCallback(quiet, NULL);
    OTF2_Reader *r = OTF2_Reader_Open(path);
    OTF2_Error_RegisterCallback(prev, NULL);
    if (!r) return false;
    uint64_t n = 0;
    bool ok = OTF2_Reader_GetNumberOfLocations(r, &n) == OTF2_SUCCESS;
    OTF2_Reader_Close(r);
    return ok;
}

/* The dead run's space reserve (the collector's, for its definitions: collector/writer/zc_otf2_io.c):
 * room for the salvaged archive on a full disk. */
static void drop_reserves(const char *dir) {
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *e;
    char p[PATH_MAX];
    while ((e = readdir(d)))
        if (!strncmp(e->d_name, ".zecoll-reserve", 15) && (size_t)snprintf(p, sizeof(p), "%s/%s", dir, e->d_name) < sizeof(p))
            unlink(p);
    closedir(d);
}

int zc_salv_write_into(struct zc_salv_job *job, const char *into) {
    char stage[PATH_MAX];
    if ((size_t)snprintf(stage, sizeof(stage), "%s/.zecoll-salvage.%ld", into, (long)getpid()) >= sizeof(stage) ||
        mkdir(stage, 0777) != 0) {
        fprintf(stderr, "%s: %s: cannot create a staging directory for the archive: %s\n", zc_salv_prog, into,
                strerror(errno ? errno : ENAMETOOLONG));
        return 1;
    }
    drop_reserves(into);
    char anchor[PATH_MAX + 16];
    snprintf(anchor, sizeof(anchor), "%s/traces.otf2", stage);
    if (zc_salv_write_archive(job, stage) != 0) {
        rm_tree(stage);
        return 1;
    }
    if (!zc_salv_anchor_readable(anchor)) { /* a write that failed unreported */
        fprintf(stderr, "%s: cannot write the archive in %s: its anchor file does not read back (disk full?)\n",
                zc_salv_prog, stage);
        rm_tree(stage);
        return 1;
    }
    /* the anchor file last: the archive never looks complete before its parts are in place */
    if (move_in(stage, into, "traces") != 0 || move_in(stage, into, "traces.def") != 0 ||
        move_in(stage, into, "traces.otf2") != 0) {
        fprintf(stderr, "%s: %s: cannot move the archive into place: %s\n", zc_salv_prog, into, strerror(errno));
        rm_tree(stage);
        return 1;
    }
    rmdir(stage);
    return 0;
}
