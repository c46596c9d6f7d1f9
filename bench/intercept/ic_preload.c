// SPDX-License-Identifier: MIT
// Variant 2 of the interception-cost benchmark: LD_PRELOAD symbol interposition.
//
// Defines zeCommandListAppendBarrier; the dynamic linker binds the application's calls to it because
// preloaded objects come first in the global lookup scope. The hook counts the call and forwards to
// the next definition (the loader's), resolved once with dlsym(RTLD_NEXT) and cached. Calls made
// through dlsym(handle) or through dispatch tables never reach this symbol (see README.md).
// At exit it prints "ic-count preload <calls>" to stderr.
#include <dlfcn.h>
#include <level_zero/ze_api.h>
#include <level_zero/ze_ddi.h>
#include <stdio.h>

static ze_pfnCommandListAppendBarrier_t next_append_barrier;
static unsigned long calls;

static void resolve(void) {
    next_append_barrier = (ze_pfnCommandListAppendBarrier_t)dlsym(RTLD_NEXT, "zeCommandListAppendBarrier");
}

// The application's DT_NEEDED loader is mapped before any constructor runs, so this normally
// resolves here; the lazy path below covers applications that load the loader later.
__attribute__((constructor)) static void ic_preload_init(void) { resolve(); }

__attribute__((destructor)) static void ic_preload_fini(void) { fprintf(stderr, "ic-count preload %lu\n", calls); }

// Only reached if the constructor could not resolve (the loader was not loaded yet). Kept out of
// line: with the lazy path inlined, gcc saves registers on every call (15 instructions instead of 5).
__attribute__((noinline, cold)) static ze_result_t append_barrier_unresolved(ze_command_list_handle_t hCommandList,
                                                                            ze_event_handle_t hSignalEvent,
                                                                            uint32_t numWaitEvents,
                                                                            ze_event_handle_t *phWaitEvents) {
    resolve();
    if (!next_append_barrier) return ZE_RESULT_ERROR_UNINITIALIZED;
    return next_append_barrier(hCommandList, hSignalEvent, numWaitEvents, phWaitEvents);
}

ZE_APIEXPORT ze_result_t ZE_APICALL zeCommandListAppendBarrier(ze_command_list_handle_t hCommandList,
                                                               ze_event_handle_t hSignalEvent, uint32_t numWaitEvents,
                                                               ze_event_handle_t *phWaitEvents) {
    ++calls;
    ze_pfnCommandListAppendBarrier_t next = next_append_barrier;
    if (__builtin_expect(next == NULL, 0))
        return append_barrier_unresolved(hCommandList, hSignalEvent, numWaitEvents, phWaitEvents);
    return next(hCommandList, hSignalEvent, numWaitEvents, phWaitEvents);
}
