/* SPDX-License-Identifier: MIT */
/* What the job's launcher (Open MPI, PMIx, MPICH's Hydra, Slurm) tells this process through its
 * environment, read in one place (zc_launcher.c), before MPI_Init says it. */
#ifndef ZC_LAUNCHER_H
#define ZC_LAUNCHER_H

#include <stdbool.h>

/* This process's rank in the job (OMPI_COMM_WORLD_RANK, PMIX_RANK, PMI_RANK), -1 if none is set. */
int zc_launcher_rank(void);
/* The job's ranks on this node (the first node's count of "2(x3),1" for Slurm); 1 where none says. */
unsigned zc_launcher_local_ranks(void);
/* A rank's share of this node's CPUs: the online CPUs over the job's ranks here (0 where there
 * are more ranks than CPUs); -1 where the node's count cannot be read. */
long zc_launcher_cpu_share(void);
/* Whether an MPI launcher started this process. */
bool zc_launcher_started(void);
/* Whether this process speaks for the job: the launcher's rank 0, or a process no MPI launcher
 * started. Messages that would repeat on every rank are printed by it only. */
bool zc_job_leader(void);

#endif
