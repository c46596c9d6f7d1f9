/* SPDX-License-Identifier: MIT */
/* Never silent: entries zecoll passes through untraced (ze_hooks.spec `untraced`: device work it
 * does not time yet) are named once per run in a warning and counted per entry; the summary line
 * and the archive (ZECOLL::L0_* properties, docs/archive.md A21) say which spec version zecoll
 * knows, which one the loader asked for, and how many calls went to which untraced entry. The
 * count is one relaxed atomic add on the wrapper's recording path: such entries are rare calls.
 * Functions handed out by name untraced (zc_ze_byname.c) are counted among them. */
#include "zc_ze_internal.h"

#include <stdio.h>
#include <stdlib.h>

static atomic_uint_fast64_t untraced_calls[ZC_ZE_API_COUNT];
static atomic_uint asked; /* the highest ze_api_version_t a loader asked a getter for */

void zc_ze_untraced(uint32_t api) {
    if (api >= ZC_ZE_API_COUNT) return;
    if (atomic_fetch_add_explicit(&untraced_calls[api], 1, memory_order_relaxed) == 0)
        ZC_WARN("%s passes through untraced: the device work it submits or changes is not in the archive", zc_ze_api_names[api]);
}

void zc_ze_loader_asked(ze_api_version_t version) {
    unsigned v = atomic_load_explicit(&asked, memory_order_relaxed);
    while (version > v && !atomic_compare_exchange_weak(&asked, &v, version)) {
    }
}

static int version_text(char *b, size_t cap, unsigned v) {
    return snprintf(b, cap, "%u.%u", ZE_MAJOR_VERSION(v), ZE_MINOR_VERSION(v));
}

struct entry {
    uint64_t n;
    uint32_t order; /* API id; functions handed out by name after every API */
    const char *name;
};
static int by_calls(const void *a, const void *b) {
    const struct entry *x = a, *y = b;
    return x->n != y->n ? (x->n < y->n ? 1 : -1) : (x->order > y->order) - (x->order < y->order);
}

/* every untraced entry called, and every function handed out by name whose calls are counted
 * (called or not: it was handed out untraced) */
static struct entry entries[ZC_ZE_API_COUNT + 64]; /* finalize and the summary run once, on one thread */
static size_t nentries;
static void by_name_entry(const char *name, uint64_t calls, bool counted, void *arg) {
    (void)arg;
    if (counted && nentries < sizeof(entries) / sizeof(entries[0]))
        entries[nentries++] = (struct entry){calls, ZC_ZE_API_COUNT + (uint32_t)nentries, name};
}
static uint64_t gather(void) {
    uint64_t total = 0;
    nentries = 0;
    for (uint32_t a = 0; a < ZC_ZE_API_COUNT; a++) {
        uint64_t n = atomic_load(&untraced_calls[a]);
        if (n) entries[nentries++] = (struct entry){n, a, zc_ze_api_names[a]};
        total += n;
    }
    size_t first = nentries;
    zc_ze_by_name_each(by_name_entry, NULL);
    for (size_t i = first; i < nentries; i++) total += entries[i].n;
    qsort(entries, nentries, sizeof(entries[0]), by_calls);
    return total;
}

/* The calls to untraced entries, and the first `top` of those entries by calls ("name n, ...",
 * then "..." when there are more). */
static uint64_t untraced_top(char *b, size_t cap, size_t top) {
    size_t k = 0;
    uint64_t total = gather();
    b[0] = 0;
    for (size_t i = 0; i < nentries && i < top && k < cap; i++)
        k += (size_t)snprintf(b + k, cap - k, "%s%s %llu", i ? ", " : "", entries[i].name, (unsigned long long)entries[i].n);
    if (nentries > top && k < cap) snprintf(b + k, cap - k, ", ...");
    return total;
}

static void by_name_uncounted(const char *name, uint64_t calls, bool counted, void *arg) {
    (void)calls, (void)arg;
    if (!counted) zc_note_text("L0_UNTRACED_UNCOUNTED", name);
}

void zc_ze_untraced_finalize(void) {
    char known[16], loader[16];
    version_text(known, sizeof(known), ZC_ZE_SPEC_NEWEST);
    unsigned v = atomic_load(&asked);
    if (v) version_text(loader, sizeof(loader), v);
    else snprintf(loader, sizeof(loader), "none");
    char top[512];
    uint64_t total = untraced_top(top, sizeof(top), 8);
    zc_note_text("L0_SPEC_KNOWN", known);
    if (v) zc_note_text("L0_SPEC_ASKED", loader);
    for (size_t i = 0; i < nentries; i++) zc_note_count("L0_UNTRACED", entries[i].name, entries[i].n);
    zc_note_count("L0_UNTRACED_CALLS", NULL, total);
    zc_ze_by_name_each(by_name_uncounted, NULL);
    if (total) /* device work missing from the archive: a warning, like the entries' own */
        ZC_WARN("Level Zero: zecoll knows the API up to spec %s (the loader asked for %s); %llu call(s) went to entries "
                "it passes through untraced: %s",
                known, loader, (unsigned long long)total, top);
}

size_t zc_ze_summary(char *buf, size_t cap) {
    unsigned v = atomic_load(&asked);
    if (!cap) return 0;
    buf[0] = 0;
    if (!v) return 0; /* no loader came: Level Zero was not used */
    char known[16], loader[16], top[256];
    version_text(known, sizeof(known), ZC_ZE_SPEC_NEWEST);
    version_text(loader, sizeof(loader), v);
    uint64_t total = untraced_top(top, sizeof(top), 3);
    int n = total ? snprintf(buf, cap, "Level Zero spec %s asked by the loader, %s known to zecoll; %llu call(s) to untraced "
                                       "entries (%s)",
                             loader, known, (unsigned long long)total, top)
                  : snprintf(buf, cap, "Level Zero spec %s asked by the loader, %s known to zecoll; no call to untraced entries",
                             loader, known);
    /* GPU work that reached no archive record: the line's "dropped" counts only records the
     * writer lost, so an operation that found no free timing event (or whose record could not be
     * kept) would otherwise leave a summary that says nothing is missing */
    uint64_t untimed = atomic_load(&zc_ze.untimed), lost = zc_ze_dropped_records();
    if (n > 0 && (size_t)n < cap && (untimed || lost)) {
        int k = snprintf(buf + n, cap - (size_t)n, "; %llu untimed GPU operation(s), %llu device record(s) dropped",
                         (unsigned long long)untimed, (unsigned long long)lost);
        if (k > 0) n += k;
    }
    return n < 0 ? 0 : (size_t)n < cap ? (size_t)n : cap - 1;
}
