/* SPDX-License-Identifier: MIT */
/* For bench/exit_cost.py: prints CLOCK_MONOTONIC (ns) as main returns, so that the parent, which
 * reads the clock when its wait returns, sees how long the process took to end (atexit handlers,
 * a preloaded collector's finalize, the kernel ending its threads). Records nothing. */
#include <stdio.h>
#include <time.h>

int main(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    printf("%lld\n", (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec);
    return 0;
}
