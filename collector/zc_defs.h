/* SPDX-License-Identifier: MIT */
/* The local definition tables behind zc_def_*() (zc_core.h), read by the OTF2 writer. */
#ifndef ZC_DEFS_H
#define ZC_DEFS_H

#include "zc_core.h"

#define ZC_NO_ID UINT32_MAX

struct zc_def_region {
    uint32_t name;
    enum zc_region_role role;
    enum zc_paradigm paradigm;
};

struct zc_def_device {
    uint32_t index; /* device number in the process */
    uint32_t name, uuid;
};

/* accelerator location group: one per (device, context); location group id = position + 1 */
struct zc_def_group {
    uint32_t device, context;
};

/* A communicator. Local id 0 is the process's Level Zero communicator (its locations; RMA window
 * 0 lives on it). MPI communicators carry their members as world ranks and a key that every
 * member computes identically (mpi/zc_mpi.c), so that unification can merge them. */
struct zc_def_comm {
    enum zc_comm_kind kind;
    uint32_t name;    /* string */
    uint32_t parent;  /* local communicator id or ZC_NO_ID */
    uint32_t n, nremote;
    uint64_t *members; /* n local-group members then nremote remote-group members (world ranks) */
    char *key;
    uint32_t keylen;
    uint32_t renamed; /* zc_defs.comm_renames when its name last changed (MPI_Comm_set_name), 0: never */
};

/* The process's PAPI counters (zc_papi.c): one metric class, local metric id 0, of these
 * members in order (the events that count here); none when PAPI did not start. */
struct zc_def_metric {
    uint32_t name, descr, unit; /* strings */
    uint32_t type;              /* OTF2_Type of its values */
    uint32_t mode;              /* OTF2_MetricMode */
};

struct zc_defs {
    char **strings;
    uint32_t nstrings, cap_strings;
    uint32_t *hash;
    uint32_t hash_cap;
    struct zc_def_region *regions;
    uint32_t nregions, cap_regions;
    struct zc_def_device *devices;
    uint32_t ndevices, cap_devices;
    struct zc_def_group *groups;
    uint32_t ngroups, cap_groups;
    struct zc_def_comm *comms;
    uint32_t ncomms, cap_comms;
    uint32_t comm_renames; /* names changed after definition, for the journal (ZC_JRN_COMM_NAMES) */
    struct zc_def_metric *metrics;
    uint32_t nmetrics;
};
extern struct zc_defs zc_defs;

/* Sets the metric class (once; its strings defined with zc_def_string). 0, or -1 when out of
 * memory. */
int zc_def_metric_class(const struct zc_def_metric *m, uint32_t n);

/* The writer holds the lock while it walks the tables and adds the strings it needs. */
void zc_defs_lock(void);
void zc_defs_unlock(void);
uint32_t zc_def_string_locked(const char *s);

#endif
