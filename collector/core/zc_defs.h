/* SPDX-License-Identifier: MIT */
/* The process's local definitions (zc_defs.c): unique per process, ids dense from 0 in creation
 * order, thread safe. The tables' types are the archive's (zc_def_types.h); the writer reads them
 * at close and the journal as they grow. */
#ifndef ZC_DEFS_H
#define ZC_DEFS_H

#include "zc_def_types.h"

#include <stddef.h>

uint32_t zc_def_string(const char *s);
uint32_t zc_def_region(const char *name, enum zc_region_role role, enum zc_paradigm paradigm);

/* Well-known definitions made at init. */
extern uint32_t zc_param_callsite; /* UINT64 parameter "callsite id" */
extern uint32_t zc_region_flush;   /* "zecoll buffer flush" */

/* Accelerator topology, reported by the Level Zero layer. */
uint32_t zc_def_device(uint32_t index, const char *name, const char *uuid_hex);
uint32_t zc_def_accel_group(uint32_t device_def, uint32_t context_index);

/* Communicators. members/remote are world ranks; key identifies the communicator across ranks
 * (equal keys are one communicator). Returns the local id or ZC_NO_ID. */
uint32_t zc_def_comm(enum zc_comm_kind kind, const char *name, uint32_t parent, const uint64_t *members, uint32_t n,
                     const uint64_t *remote, uint32_t nremote, const char *key, size_t keylen);
/* The name the application gave communicator id (MPI_Comm_set_name), replacing the one it had. */
void zc_def_comm_name(uint32_t id, const char *name);

extern struct zc_defs zc_defs;

/* Sets the metric class (once; its strings defined with zc_def_string). 0, or -1 when out of
 * memory. */
int zc_def_metric_class(const struct zc_def_metric *m, uint32_t n);

/* The writer holds the lock while it walks the tables and adds the strings it needs. */
void zc_defs_lock(void);
void zc_defs_unlock(void);
uint32_t zc_def_string_locked(const char *s);

#endif
