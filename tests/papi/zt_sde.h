/* SPDX-License-Identifier: MIT */
/* The PAPI tests' Software Defined Events (zt_sde.c): what a thread counts, on any CPU. */
#ifndef ZT_SDE_H
#define ZT_SDE_H

/* The calling thread did n units of work: sde:::zecoll_test::work grows by n, ::work3 by 3 n,
 * ::adds by one. */
void zt_sde_add(long long n);
/* The calling thread's totals so far (what PAPI reads on it). */
long long zt_sde_work(void);
long long zt_sde_adds(void);

#endif
