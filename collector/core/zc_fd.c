/* SPDX-License-Identifier: MIT */
/* File descriptors 0-2 belong to the application even when it closed them: a process started
 * with `<&-` that finds our pipe on fd 0 reads it (and eats our signal bytes), one with `>&-`
 * that finds an archive file on fd 1 writes its output into the trace. The collector's own
 * descriptors are moved above 2, and descriptors that others open on our behalf (OTF2's files,
 * opened with fopen inside its calls) are kept off 0-2 by holding the closed ones while those
 * calls run. */
#include "zc_fd.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

int zc_fd_high(int fd) {
    if (fd < 0 || fd > 2) return fd;
    int h = fcntl(fd, F_DUPFD_CLOEXEC, 3);
    int e = errno;
    close(fd);
    errno = e;
    return h;
}

static bool fd_closed(int fd) { return fcntl(fd, F_GETFD) == -1 && errno == EBADF; }

void zc_fd_guard_hold(struct zc_fd_guard *g) {
    int saved = errno;
    for (int fd = 0; fd < 3; fd++) {
        g->fd[fd] = -1;
        if (!fd_closed(fd)) continue;
        /* the lowest free descriptor: fd itself, the lower ones being held already. A memfd has
         * an inode of its own, so release can tell it from a descriptor the application put
         * there meanwhile (dup2 onto a descriptor it knows is closed). */
        int h = memfd_create("zecoll-fd-guard", MFD_CLOEXEC);
        if (h < 0) h = open("/dev/null", O_RDONLY | O_CLOEXEC);
        if (h < 0) continue;
        if (h != fd) { /* another thread took fd first: it is not free any more */
            close(h);
            continue;
        }
        struct stat st;
        if (fstat(h, &st) != 0) {
            close(h);
            continue;
        }
        g->fd[fd] = h;
        g->ino[fd] = st.st_ino;
        g->dev[fd] = st.st_dev;
    }
    errno = saved;
}

void zc_fd_guard_release(struct zc_fd_guard *g) {
    int saved = errno;
    for (int fd = 0; fd < 3; fd++) {
        if (g->fd[fd] < 0) continue;
        struct stat st;
        if (fstat(fd, &st) == 0 && st.st_ino == g->ino[fd] && st.st_dev == g->dev[fd]) close(fd);
        g->fd[fd] = -1;
    }
    errno = saved;
}
