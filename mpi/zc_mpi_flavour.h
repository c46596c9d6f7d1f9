/* SPDX-License-Identifier: MIT */
/* What a flavour of the MPI layer (the layer compiled against one MPI ABI: Open MPI, the MPICH ABI;
 * later the MPI-5 standard ABI) offers the dispatch (zc_mpi_dispatch.c), which is compiled once and
 * includes no mpi.h: its definitions of the exported MPI_* and mpi_*_ names, and its layer hooks.
 * Each flavour's objects are linked into one relocatable object whose only global definition is its
 * descriptor, zc_mpi_flavour_<name> (mpi/CMakeLists.txt), so the flavours' like-named internals
 * never meet. */
#ifndef ZC_MPI_FLAVOUR_H
#define ZC_MPI_FLAVOUR_H

#include "zc_proc.h"

struct zc_mpi_entry {
    const char *name; /* the exported name: MPI_Send, mpi_send_, mpi_send_f08_ */
    void *fn;         /* the flavour's definition of it */
};

struct zc_mpi_flavour {
    const char *name;                  /* "openmpi", "mpich", "abi" */
    const struct zc_subsystem *layer;  /* its hooks, called through zc_mpi_subsystem once chosen */
    const struct zc_mpi_entry *tab[3]; /* C wrappers; generated and hand-written Fortran entries */
    const unsigned *n[3];              /* their lengths (NULL: no such table) */
};

/* C wrappers of the flavour (generated), its Fortran entry points (Open MPI only). */
extern const struct zc_mpi_entry zc_mpi_c_entries[], zc_mpi_f_entries[], zc_mpi_fh_entries[];
extern const unsigned zc_mpi_c_nentries, zc_mpi_f_nentries, zc_mpi_fh_nentries;

/* An MPI function `name` of an MPI library loaded after us (dispatch module). */
void *zc_mpi_resolve(const char *name);

#endif
