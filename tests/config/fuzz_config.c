/* SPDX-License-Identifier: MIT */
/* libFuzzer target for the configuration loader. The input is a YAML file, optionally followed by
 * a NUL byte and variables ("NAME=VALUE" lines, NAME without ZECOLL_). Beyond the sanitizers it
 * checks that loading never fails for lack of anything but memory, that every message is one
 * line with a position or a variable, and that a valid configuration renders to YAML that loads
 * back, valid, to the same values. Built by scripts/fuzz-config.sh (clang -fsanitize=fuzzer); a
 * normal build replays the corpus with fuzz_replay.c. */
#include "zc_config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct vars {
    const char *text;
    size_t len;
};

/* NAME=VALUE lines of the input's second part. Returns a pointer into a static buffer. */
static const char *lookup(const char *name, void *ud) {
    static char buf[4096];
    const struct vars *v = ud;
    if (strncmp(name, "ZECOLL_", 7)) return NULL;
    name += 7;
    size_t nl = strlen(name);
    for (const char *p = v->text, *end = v->text + v->len; p < end;) {
        const char *eol = memchr(p, '\n', (size_t)(end - p));
        if (!eol) eol = end;
        if ((size_t)(eol - p) > nl && !memcmp(p, name, nl) && p[nl] == '=') {
            size_t vl = (size_t)(eol - p) - nl - 1;
            if (vl >= sizeof(buf) || memchr(p + nl + 1, 0, vl)) return NULL;
            memcpy(buf, p + nl + 1, vl);
            buf[vl] = 0;
            return buf;
        }
        p = eol + 1;
    }
    return NULL;
}

static bool utf8_ok(const char *s) {
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        int n = *p < 0x80 ? 0 : *p >= 0xc2 && *p < 0xe0 ? 1 : *p >= 0xe0 && *p < 0xf0 ? 2 : *p >= 0xf0 && *p < 0xf5 ? 3 : -1;
        if (n < 0) return false;
        p++;
        for (int i = 0; i < n; i++, p++)
            if ((*p & 0xc0) != 0x80) return false;
    }
    return true;
}

/* Strings that came from a variable may hold bytes that are not UTF-8: the one case where the
 * rendered YAML (\xNN escapes) does not give back the same bytes. */
static bool renders_exactly(const struct zc_config *c) {
    const struct zc_knobs *k = &c->knobs;
#define ZC_S(x) (!(x) || utf8_ok(x))
    if (!ZC_S(k->OUTPUT) || !ZC_S(k->REAL_DRIVERS) || !ZC_S(k->CLOCK_SKEW_NS)) return false;
    const struct zc_strlist *lists[] = {&k->PAPI_EVENTS, &k->KERNELS_INCLUDE, &k->KERNELS_EXCLUDE};
    for (size_t i = 0; i < 3; i++)
        for (uint32_t j = 0; j < lists[i]->n; j++)
            if (!utf8_ok(lists[i]->v[j])) return false;
    for (uint32_t i = 0; i < k->WINDOWS.n; i++)
        if (!ZC_S(k->WINDOWS.v[i].name)) return false;
#undef ZC_S
    return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    const char *text = (const char *)data;
    size_t ylen = size;
    struct vars v = {"", 0};
    const char *nul = memchr(text, 0, size);
    if (nul) {
        ylen = (size_t)(nul - text);
        v.text = nul + 1;
        v.len = size - ylen - 1;
    }
    struct zc_config_opts o = {.file = "fuzz.yaml", .data = text, .len = ylen, .getenv = lookup, .ud = &v};
    struct zc_config *c = zc_config_load(&o);
    if (!c) abort(); /* only out of memory may do that */
    for (uint32_t i = 0; i < c->nmsgs; i++) {
        const char *m = c->msgs[i].text;
        if (strchr(m, '\n') || (strncmp(m, "fuzz.yaml:", 10) && strncmp(m, "ZECOLL_", 7) &&
                                 (i != ZC_CONFIG_MAX_MSGS - 1 || strncmp(m, "too many problems", 17)))) {
            fprintf(stderr, "bad message: %s\n", m);
            abort();
        }
    }
    char *r1 = zc_config_render(c, true);
    free(r1);
    r1 = zc_config_render(c, false);
    if (!r1) abort();
    /* the lookups the runtime makes */
    const struct zc_knobs *k = &c->knobs;
    char name[16];
    snprintf(name, sizeof(name), "%.*s", (int)(ylen < 15 ? ylen : 15), text);
    if (!memchr(name, 0, ylen < 15 ? ylen : 15)) (void)zc_kernel_selected(k, name);
    for (uint32_t r = 0; r < 4; r++) (void)zc_rankset_contains(&k->RANKS, r * 1000003u);
    for (uint32_t i = 0; i < k->WINDOWS.n; i++) {
        const struct zc_window *w = &k->WINDOWS.v[i];
        (void)zc_window_on_rank(w, 7);
        if (w->kind == ZC_WIN_KERNEL && !w->name) abort();
        if (w->kind == ZC_WIN_TIME && w->stop_ns <= w->start_ns) abort();
    }
    if (c->nerrors == 0 && renders_exactly(c)) {
        struct zc_config_opts o2 = {.file = "rendered.yaml", .data = r1, .len = strlen(r1)};
        struct zc_config *c2 = zc_config_load(&o2);
        if (!c2) abort();
        char *r2 = zc_config_render(c2, false);
        if (c2->nmsgs || !r2 || strcmp(r1, r2)) {
            fprintf(stderr, "round trip differs:\n%s\n---- loads back as (%u messages: %s):\n%s\n", r1, c2->nmsgs,
                    c2->nmsgs ? c2->msgs[0].text : "", r2 ? r2 : "(null)");
            abort();
        }
        free(r2);
        zc_config_free(c2);
    }
    free(r1);
    zc_config_free(c);
    return 0;
}
