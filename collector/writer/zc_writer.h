/* SPDX-License-Identifier: MIT */
/* The writer floor's entry in the composition root's table (zc_writer.c): it installs the
 * locations' sink, opens the job's archive in MPI_Init and writes everything out at the end. */
#ifndef ZC_WRITER_H
#define ZC_WRITER_H

#include "zc_proc.h" /* struct zc_subsystem */

extern const struct zc_subsystem zc_writer_subsystem;

#endif
