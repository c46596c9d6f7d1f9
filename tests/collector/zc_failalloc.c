/* SPDX-License-Identifier: MIT */
/* Fault injection for hostile.py's buffer-none case (issue 10 item 9): preloaded ahead of
 * libzecoll.so, malloc fails for every request libzecoll.so makes of an event buffer's size
 * (a power of two of at least 1024 40-byte records), as when memory has run out; every other
 * allocation (the application's, the driver's, OTF2's) is served by glibc. With
 * ZC_FAILALLOC_ABOVE=N only the buffers of more than N records fail (buffer-short: memory that
 * runs short rather than out). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

void *__libc_malloc(size_t n);

__attribute__((visibility("default"))) void *malloc(size_t n) {
    size_t recs = n / 40;
    const char *above = getenv("ZC_FAILALLOC_ABOVE");
    if (n % 40 == 0 && recs >= 1024 && (recs & (recs - 1)) == 0 && (!above || recs > strtoull(above, NULL, 10))) {
        Dl_info di;
        if (dladdr(__builtin_return_address(0), &di) && di.dli_fname && strstr(di.dli_fname, "libzecoll.so")) {
            errno = ENOMEM;
            return NULL;
        }
    }
    return __libc_malloc(n);
}
