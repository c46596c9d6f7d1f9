/* SPDX-License-Identifier: MIT */
/* A test library (LD_PRELOAD, before libzecoll.so): a bigger machine than CI's 2-core one.
 * ZC_TEST_CPUS=N makes sched_getaffinity report CPUs 0..N-1 and sysconf(_SC_NPROCESSORS_ONLN)
 * N, so that the writer's automatic choice (ZECOLL_WRITER_STAGES=0) can be seen on 16 CPUs
 * (writer.stages.*). Nothing is scheduled differently: only what the process is told. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static long fake(void) {
    const char *v = getenv("ZC_TEST_CPUS");
    long n = v ? strtol(v, NULL, 10) : 0;
    return n > 0 && n <= CPU_SETSIZE ? n : 0;
}

int sched_getaffinity(pid_t pid, size_t size, cpu_set_t *set) {
    long n = fake();
    if (n && size >= sizeof(cpu_set_t)) {
        CPU_ZERO_S(size, set);
        for (long i = 0; i < n; i++) CPU_SET_S((size_t)i, size, set);
        return 0;
    }
    int (*real)(pid_t, size_t, cpu_set_t *) = (int (*)(pid_t, size_t, cpu_set_t *))dlsym(RTLD_NEXT, "sched_getaffinity");
    return real(pid, size, set);
}

long sysconf(int name) {
    long n = fake();
    if (n && (name == _SC_NPROCESSORS_ONLN || name == _SC_NPROCESSORS_CONF)) return n;
    long (*real)(int) = (long (*)(int))dlsym(RTLD_NEXT, "sysconf");
    return real(name);
}
