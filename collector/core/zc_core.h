/* SPDX-License-Identifier: MIT */
/* The core floor in one include, for the layers (ze/, mpi/): what they record into (locations,
 * clock, windows, definitions) and what they read (knobs, the job, the log). Files of the core
 * itself include the headers they use. Everything here is hidden (-fvisibility=hidden); only
 * interposed symbols and the documented API leave libzecoll.so. */
#ifndef ZC_CORE_H
#define ZC_CORE_H

#include "zc_clock.h"
#include "zc_defs.h"
#include "zc_fd.h"
#include "zc_knobs.h"
#include "zc_launcher.h"
#include "zc_loc.h"
#include "zc_log.h"
#include "zc_note.h"
#include "zc_phase.h"
#include "zc_proc.h"
#include "zc_sig.h"
#include "zc_window.h"

#endif
