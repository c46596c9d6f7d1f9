/* SPDX-License-Identifier: MIT */
/* A library that initialises Level Zero from its constructor, as some runtimes do. glibc runs
 * it before an LD_PRELOADed library's constructor, so only `zecoll run` can be in time. */
#include <level_zero/ze_api.h>
#include <stdio.h>

__attribute__((constructor)) static void early_init(void) {
    ze_result_t r = zeInit(0);
    if (r != ZE_RESULT_SUCCESS) fprintf(stderr, "zc_ctor_init: zeInit in constructor: 0x%x\n", (unsigned)r);
}

/* referenced by the program so the linker keeps the library */
int zc_ctor_init_linked(void);
int zc_ctor_init_linked(void) { return 1; }
