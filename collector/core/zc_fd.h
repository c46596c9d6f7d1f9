/* SPDX-License-Identifier: MIT */
/* Descriptors 0-2 are the application's even when closed (zc_fd.c). zc_fd_high moves one of the
 * collector's own descriptors above 2 (close-on-exec; -1 if that failed, the original closed).
 * A guard holds the closed ones among 0-2 while code that opens files on our behalf runs
 * (OTF2's calls), so those files land above 2; release frees exactly what hold took. */
#ifndef ZC_FD_H
#define ZC_FD_H

int zc_fd_high(int fd);
struct zc_fd_guard {
    int fd[3];
    unsigned long long ino[3], dev[3];
};
void zc_fd_guard_hold(struct zc_fd_guard *g);
void zc_fd_guard_release(struct zc_fd_guard *g);

#endif
