/* SPDX-License-Identifier: MIT */
/* Why PAPI cannot count an event on this host, in PAPI's own words: the component that counts
 * it and the reason PAPI disabled that component (PAPI_get_component_info()->disabled_reason),
 * and which components can count here instead. Shared by the collector's warning (PAPI loaded
 * with dlopen: its functions are passed in) and `zecoll config check` (linked with PAPI). */
#ifndef ZC_PAPI_WHY_H
#define ZC_PAPI_WHY_H

#include <papi.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

struct zc_papi_why {
    int (*num_components)(void);
    const PAPI_component_info_t *(*get_component_info)(int);
    int (*get_component_index)(const char *);
    int (*get_event_component)(int);
    int (*enum_cmp_event)(int *, int, int);
};

/* Appends to the string out (cap bytes); what does not fit is cut. */
static inline void zc_papi_why_append(char *out, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static inline void zc_papi_why_append(char *out, size_t cap, const char *fmt, ...) {
    size_t o = strlen(out);
    if (o + 1 >= cap) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(out + o, cap - o, fmt, ap);
    va_end(ap);
}

/* The component of an event, as a bit of a mask (components 0-63; 0 when unknown): a known
 * event's own (code != NULL), else by its name: "NAME:::event" is component NAME's, and any other
 * name (presets PAPI_*, "pmu::event", bare native names) is the CPU component's, index 0. */
static inline uint64_t zc_papi_component_bit(const struct zc_papi_why *f, const char *name, const int *code) {
    int c = 0;
    const char *sep = strstr(name, ":::");
    if (code) {
        c = f->get_event_component(*code);
    } else if (sep) {
        char comp[PAPI_MIN_STR_LEN];
        snprintf(comp, sizeof(comp), "%.*s", (int)(sep - name), name);
        c = f->get_component_index(comp);
    }
    return c >= 0 && c < 64 ? (uint64_t)1 << c : 0;
}

/* Component cidx's information if PAPI disabled it here; NULL when it is enabled, or not
 * initialised yet (PAPI_EDELAY_INIT: it starts when one of its events is used). */
static inline const PAPI_component_info_t *zc_papi_disabled(const struct zc_papi_why *f, int cidx) {
    const PAPI_component_info_t *c = f->get_component_info(cidx);
    return c && c->disabled && c->disabled != PAPI_EDELAY_INIT ? c : NULL;
}

/* Appends to out, for every disabled component of mask, `; PAPI's NAME component is disabled
 * here: "REASON"`; returns how many. */
static inline int zc_papi_why_disabled(const struct zc_papi_why *f, uint64_t mask, char *out, size_t cap) {
    int n = 0;
    for (int i = 0; i < 64 && i < f->num_components(); i++) {
        const PAPI_component_info_t *c = mask >> i & 1 ? zc_papi_disabled(f, i) : NULL;
        if (!c) continue;
        zc_papi_why_append(out, cap, "; PAPI's %s component is disabled here: \"%s\"", c->name,
                           c->disabled_reason[0] ? c->disabled_reason : "no reason given");
        n++;
    }
    return n;
}

/* Appends to out the enabled components that have at least one event here (what can count
 * instead): `; enabled PAPI components with events here: A, B`, or that there is none. */
static inline void zc_papi_why_enabled(const struct zc_papi_why *f, char *out, size_t cap) {
    int n = 0;
    for (int i = 0; i < f->num_components(); i++) {
        const PAPI_component_info_t *c = f->get_component_info(i);
        int code = PAPI_NATIVE_MASK;
        if (!c || c->disabled || f->enum_cmp_event(&code, PAPI_ENUM_FIRST, i) != PAPI_OK) continue;
        zc_papi_why_append(out, cap, "%s%s", n++ ? ", " : "; enabled PAPI components with events here: ", c->name);
    }
    if (!n) zc_papi_why_append(out, cap, "; no enabled PAPI component has events here");
}

#endif
