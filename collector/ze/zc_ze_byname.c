/* SPDX-License-Identifier: MIT */
/* Never silent, for functions handed out by name: zeDriverGetExtensionFunctionAddress gives the
 * application functions that are in no table (compute-runtime's zex... and zeIntel... ones, the
 * entries a table lacks). zecoll cannot wrap a function whose prototype it does not know, but it
 * can count its calls without knowing it: the application gets a trampoline of ours instead of
 * the driver's pointer, which adds one to the function's count and jumps to the driver's function
 * with every register and the stack as the caller left them (x86-64: one locked add, whose flags
 * are dead across a call, and an indirect jump). Each name is warned about once at its first
 * lookup; the calls go into the untraced counts (zc_ze_untraced.c), counted whether recording or
 * not (a trampoline does not know). Elsewhere, or once the trampolines are used up, the driver's
 * pointer is handed out and the name is noted as uncounted.
 * This file is compiled without link-time optimisation (collector/CMakeLists.txt): the
 * trampolines are top-level assembly naming the counters and targets below, which LTO could
 * rename or drop. */
#include "zc_ze_internal.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#define BYNAME_MAX 32 /* distinct functions counted (trampolines) */
#define BYNAME_NAMES 128 /* distinct functions named (compute-runtime has about 70) */
#define BYNAME_LEN 96

/* read and written by the trampolines (hidden: reached PC-relative) */
__attribute__((visibility("hidden"), used)) uint64_t zc_ze_byname_calls[BYNAME_MAX];
__attribute__((visibility("hidden"), used)) void *zc_ze_byname_real[BYNAME_MAX];

#if defined(__x86_64__) && defined(__ELF__)
#define BYNAME_TRAMPOLINES BYNAME_MAX
/* Trampoline i at zc_ze_byname_tramps + 32 i: endbr64 (a valid indirect-branch target where CET
 * is on, a no-op elsewhere), the count, the jump. */
__asm__(".pushsection .text\n"
        ".p2align 5\n"
        ".globl zc_ze_byname_tramps\n"
        ".hidden zc_ze_byname_tramps\n"
        ".type zc_ze_byname_tramps, @function\n"
        "zc_ze_byname_tramps:\n"
        ".irp i, 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31\n"
        ".p2align 5\n"
        "endbr64\n"
        "lock incq zc_ze_byname_calls+8*\\i(%rip)\n"
        "jmp *zc_ze_byname_real+8*\\i(%rip)\n"
        ".endr\n"
        ".size zc_ze_byname_tramps, .-zc_ze_byname_tramps\n"
        ".popsection\n");
extern const char zc_ze_byname_tramps[];
_Static_assert(BYNAME_MAX == 32, "the .irp list above has one trampoline per slot");
#else
#define BYNAME_TRAMPOLINES 0
#endif

static struct {
    char name[BYNAME_LEN];
    void *fn;     /* the driver's function */
    bool counted; /* through trampoline `slot` */
    unsigned slot;
} names[BYNAME_NAMES];
static unsigned nnames, nslots;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

void *zc_ze_untraced_by_name(const char *name, void *fn) {
    void *out = fn;
    bool warn = false, counted = false;
    char shown[BYNAME_LEN]; /* the name as noted */
    pthread_mutex_lock(&lock);
    unsigned i = 0;
    while (i < nnames && names[i].fn != fn) i++; /* one function, one count, whatever name it was asked by */
    bool no_slot = false;
    if (i == nnames && nnames < BYNAME_NAMES) { /* a new one */
        snprintf(names[i].name, BYNAME_LEN, "%s", name);
        for (char *q = names[i].name; *q; q++) /* the notes list "name calls, ...": a C identifier only */
            if (!((*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z') || (*q >= '0' && *q <= '9') || *q == '_')) *q = '_';
        names[i].fn = fn;
        if (nslots < BYNAME_TRAMPOLINES) {
            names[i].slot = nslots++;
            /* the target before the trampoline is handed out (x86-64 keeps stores in order) */
            __atomic_store_n(&zc_ze_byname_real[names[i].slot], fn, __ATOMIC_RELEASE);
            names[i].counted = true;
        } else no_slot = BYNAME_TRAMPOLINES > 0;
        memcpy(shown, names[i].name, sizeof(shown));
        nnames++;
        warn = true;
    }
    if (i < nnames && names[i].counted) {
#if BYNAME_TRAMPOLINES
        out = (void *)(zc_ze_byname_tramps + 32 * names[i].slot);
#endif
        counted = true;
    }
    pthread_mutex_unlock(&lock);
    static atomic_bool full_said, names_said;
    if (no_slot && !atomic_exchange(&full_said, true))
        ZC_WARN("more than %d functions handed out by zeDriverGetExtensionFunctionAddress: %.64s and those after it "
                "pass through untraced and uncounted (named in the archive's ZECOLL::L0_UNTRACED_UNCOUNTED)",
                BYNAME_MAX, name);
    if (i == BYNAME_NAMES && !atomic_exchange(&names_said, true))
        ZC_WARN("more than %d functions handed out by zeDriverGetExtensionFunctionAddress: %.64s and those after it "
                "pass through untraced, uncounted and not named in the archive",
                BYNAME_NAMES, name);
    if (warn)
        ZC_WARN("%s (handed out by zeDriverGetExtensionFunctionAddress) passes through untraced: its calls are %s, "
                "the device work it submits or changes is not in the archive",
                shown, counted ? "counted, not recorded" : "neither counted nor recorded");
    return out;
}

size_t zc_ze_by_name_each(void (*fn)(const char *name, uint64_t calls, bool counted, void *arg), void *arg) {
    pthread_mutex_lock(&lock);
    unsigned n = nnames;
    pthread_mutex_unlock(&lock);
    for (unsigned i = 0; i < n; i++) /* entries below n are written once, before n grew */
        fn(names[i].name, names[i].counted ? __atomic_load_n(&zc_ze_byname_calls[names[i].slot], __ATOMIC_RELAXED) : 0,
           names[i].counted, arg);
    return n;
}
