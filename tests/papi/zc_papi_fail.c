/* SPDX-License-Identifier: MIT */
/* A PAPI library that fails: loaded by the collector through ZECOLL_PAPI_LIBRARY in the tests of
 * its failure policy. It links the real libpapi, so every PAPI function the collector looks up
 * in it is the real one except PAPI_read, which fails (PAPI_ESYS) from the N-th call on, N from
 * ZC_TEST_PAPI_READ_FAILS_AT (default 20). */
#include <dlfcn.h>
#include <papi.h>
#include <stdatomic.h>
#include <stdlib.h>

static int (*real)(int, long long *);
static long fails_at = 20;
static atomic_long calls;

/* before any thread can call PAPI_read: dlopen runs it */
__attribute__((constructor)) static void fail_init(void) {
    *(void **)&real = dlsym(RTLD_NEXT, "PAPI_read");
    const char *n = getenv("ZC_TEST_PAPI_READ_FAILS_AT");
    if (n) fails_at = atol(n);
}

int PAPI_read(int es, long long *values) {
    if (atomic_fetch_add(&calls, 1) + 1 >= fails_at || !real) return PAPI_ESYS;
    return real(es, values);
}
