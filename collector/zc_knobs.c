/* SPDX-License-Identifier: MIT */
/* The knob table (config/zc_knobs.def) turned into defaults, environment parsing and the
 * effective-configuration text. No other file calls getenv() for ZECOLL_* settings. */
#include "zc_core.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct zc_knobs zc_knobs;

enum knob_type { KT_bool, KT_uint, KT_size, KT_string };

static const struct knob {
    const char *name;
    enum knob_type type;
    const char *def;
    size_t offset;
} knobs[] = {
#define ZC_KNOB(name, type, def, doc) {#name, KT_##type, def, offsetof(struct zc_knobs, name)},
#include "zc_knobs.def"
#undef ZC_KNOB
};

static int parse_u64(const char *v, bool size_suffix, uint64_t *out) {
    char *end;
    errno = 0;
    unsigned long long x = strtoull(v, &end, 10);
    if (errno || end == v) return -1;
    if (size_suffix && *end) {
        unsigned long long mul = 1;
        switch (toupper((unsigned char)*end)) {
        case 'K': mul = 1ull << 10; break;
        case 'M': mul = 1ull << 20; break;
        case 'G': mul = 1ull << 30; break;
        default: return -1;
        }
        end++;
        if (x > UINT64_MAX / mul) return -1;
        x *= mul;
    }
    if (*end) return -1;
    *out = x;
    return 0;
}

static int parse_bool(const char *v, bool *out) {
    if (!strcmp(v, "1") || !strcasecmp(v, "yes") || !strcasecmp(v, "true") || !strcasecmp(v, "on")) *out = true;
    else if (!strcmp(v, "0") || !strcasecmp(v, "no") || !strcasecmp(v, "false") || !strcasecmp(v, "off")) *out = false;
    else return -1;
    return 0;
}

static int set_knob(const struct knob *k, const char *v) {
    void *p = (char *)&zc_knobs + k->offset;
    switch (k->type) {
    case KT_bool: return parse_bool(v, p);
    case KT_uint: return parse_u64(v, false, p);
    case KT_size: return parse_u64(v, true, p);
    case KT_string: *(const char **)p = v; return 0;
    }
    return -1;
}

int zc_knobs_load(void) {
    int bad = 0;
    for (size_t i = 0; i < sizeof(knobs) / sizeof(knobs[0]); i++) set_knob(&knobs[i], knobs[i].def);
    for (size_t i = 0; i < sizeof(knobs) / sizeof(knobs[0]); i++) {
        char var[64];
        snprintf(var, sizeof(var), "ZECOLL_%s", knobs[i].name);
        const char *v = getenv(var);
        if (!v) continue;
        if (set_knob(&knobs[i], v) != 0) {
            bad++;
            set_knob(&knobs[i], knobs[i].def);
            /* LOG_LEVEL itself may be the bad one: this message always prints */
            char msg[256];
            int n = snprintf(msg, sizeof(msg), "zecoll: ignoring %s=\"%s\": expected %s; using the default \"%s\"\n", var, v,
                             knobs[i].type == KT_bool ? "0 or 1" : knobs[i].type == KT_string ? "a string"
                             : knobs[i].type == KT_size ? "a size such as 4096, 64K or 1M" : "an unsigned integer",
                             knobs[i].def);
            if (n > 0) fputs(msg, stderr);
        }
    }
    return bad;
}

size_t zc_knobs_format(char *buf, size_t size) {
    size_t o = 0;
    for (size_t i = 0; i < sizeof(knobs) / sizeof(knobs[0]) && o < size; i++) {
        const void *p = (const char *)&zc_knobs + knobs[i].offset;
        int n = 0;
        switch (knobs[i].type) {
        case KT_bool: n = snprintf(buf + o, size - o, "ZECOLL_%s=%d\n", knobs[i].name, *(const bool *)p); break;
        case KT_uint:
        case KT_size: n = snprintf(buf + o, size - o, "ZECOLL_%s=%llu\n", knobs[i].name, (unsigned long long)*(const uint64_t *)p); break;
        case KT_string: n = snprintf(buf + o, size - o, "ZECOLL_%s=%s\n", knobs[i].name, *(const char *const *)p); break;
        }
        if (n < 0) break;
        o += (size_t)n;
    }
    return o < size ? o : size;
}
