/* SPDX-License-Identifier: MIT */
/* Recording windows (zc_window.c): whether this rank records now, and the log of transitions. */
#ifndef ZC_WINDOW_H
#define ZC_WINDOW_H

#include "zc_marks.h"

#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* zc_window.c: whether this rank records now. Every interposed call checks zc_rec_open(), one
 * load: bits 0-30 of zc_rec count the open windows, bit 31 is set while the collector is not
 * active (before start-up, after finalize, in a forked child), bits 32-63 count the on/off
 * transitions so far (each has an entry in the log that zc_win_log_get reads). */
extern _Atomic uint64_t zc_rec;
#define ZC_REC_INACTIVE (UINT64_C(1) << 31)
static inline uint64_t zc_rec_word(void) { return atomic_load_explicit(&zc_rec, memory_order_acquire); }
static inline bool zc_rec_open_w(uint64_t w) { return (int32_t)(uint32_t)w > 0; }
static inline bool zc_rec_open(void) { return zc_rec_open_w(zc_rec_word()); }
void zc_win_init(void);               /* constructor: this rank's windows (launcher's rank) */
void zc_win_set_active(bool on);      /* with zc_is_active */
void zc_win_mpi_init(uint32_t rank);  /* MPI_Init: the rank confirmed */
void zc_win_time_base(void);          /* MPI_Init returns: time windows count from now */
void zc_win_unselected(void);         /* this rank takes part in the job's archive, recording nothing */
bool zc_win_rank_selected(void);
void zc_win_pcontrol(int level);      /* MPI_Pcontrol: 0 stops, >= 1 starts, < 0 ignored */
void zc_win_finalize(void);
void zc_win_fork_child(void);
bool zc_win_sigaction(int sig, const struct sigaction *act, struct sigaction *old); /* the app's, for a window's signal */
const char *zc_win_describe(char *buf, size_t size);
bool zc_win_never_opened(char *buf, size_t size); /* no window ever opened here: which they were */
/* Transition k: its host time (ns) and whether recording turned on; false if not logged yet. */
bool zc_win_log_get(uint64_t k, uint64_t *ns, bool *on);
uint64_t zc_win_log_current(void);    /* the latest transition's number */
uint64_t zc_win_markers_lost(void);
/* Kernel selection, evaluated once per kernel handle (at zeKernelCreate): whether its launches
 * are timed (kernels.include/exclude) and which kernel windows count them. */
#define ZC_KSEL_MAX 16
struct zc_kernel_sel {
    bool selected;
    uint16_t nwin;
    uint16_t win[ZC_KSEL_MAX];
};
extern bool zc_win_kernels;        /* kernel windows or filters exist: launches look at their kernel */
extern bool zc_win_kernel_windows; /* kernel windows apply here: launches are counted while off too */
void zc_win_kernel_info(const char *name, struct zc_kernel_sel *k);
uint32_t zc_win_kernel_launch(const struct zc_kernel_sel *k); /* before the launch; windows to close after it */
void zc_win_kernel_after(const struct zc_kernel_sel *k, uint32_t close);
/* The live log of transitions as the writer places markers from it (zc_marks.h). */
extern const struct zc_marks_log zc_win_marks_log;

#endif
