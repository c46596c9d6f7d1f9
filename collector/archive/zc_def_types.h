/* SPDX-License-Identifier: MIT */
/* What the archive's definitions are made of: the local definition tables (struct zc_defs, filled
 * by core/zc_defs.c in the collector, rebuilt from the journal by salvage/) and the clock offsets
 * of a rank. Types only. */
#ifndef ZC_DEF_TYPES_H
#define ZC_DEF_TYPES_H

#include <stdint.h>

enum zc_region_role { ZC_ROLE_FUNCTION, ZC_ROLE_WRAPPER, ZC_ROLE_DATA_TRANSFER, ZC_ROLE_ALLOCATE,
                      ZC_ROLE_DEALLOCATE, ZC_ROLE_BARRIER, ZC_ROLE_ARTIFICIAL, ZC_ROLE_P2P,
                      ZC_ROLE_COLL_ONE2ALL, ZC_ROLE_COLL_ALL2ONE, ZC_ROLE_COLL_ALL2ALL, ZC_ROLE_COLL_OTHER };
enum zc_paradigm { ZC_PARADIGM_L0, ZC_PARADIGM_MPI, ZC_PARADIGM_MEASUREMENT };
enum zc_comm_kind { ZC_COMM_L0, ZC_COMM_MPI, ZC_COMM_MPI_SELF, ZC_COMM_MPI_INTER };

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
 * member computes identically (mpi/zc_mpi_comm.c), so that unification can merge them. */
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

/* The process's PAPI counters (core/zc_papi.c): one metric class, local metric id 0, of these
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

/* A clock offset to rank 0, measured at MPI_Init and MPI_Finalize (mpi/): written into every
 * location's local definitions. */
struct zc_clock_offset {
    uint64_t local;  /* local time of the measurement */
    int64_t offset;  /* add to local time to get rank 0's */
    double stddev;
};

#endif
