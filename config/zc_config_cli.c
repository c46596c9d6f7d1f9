/* SPDX-License-Identifier: MIT */
/* zecoll-config: `zecoll config check` (the effective configuration with each value's origin, or
 * every error with its position) and the knob reference docs/knobs.md, both from the same code
 * and table the collector uses. */
#include "zc_config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if ZC_HAVE_PAPI
#include <papi.h>

#include "zc_papi_why.h"
#endif

extern char **environ;

static const char *env(const char *name, void *ud) {
    (void)ud;
    return getenv(name);
}

static void usage(FILE *f) {
    fputs("usage: zecoll-config check [FILE]   check FILE (default: $ZECOLL_CONFIG) and the ZECOLL_* variables;\n"
          "                                    print the effective configuration and exit 0, or every\n"
          "                                    problem as FILE:LINE:COLUMN: message and exit 2\n"
          "       zecoll-config --markdown       the settings reference (docs/knobs.md)\n"
          "       zecoll-config --check-docs F   exit 1 unless F is what --markdown prints\n",
          f);
}

/* PAPI event names are checked by the collector at run time; here each one this host cannot count
 * is named with PAPI's reason (a disabled component's own), and then which ones can count. */
static void papi_warnings(const struct zc_config *c) {
    const struct zc_strlist *ev = &c->knobs.PAPI_EVENTS;
    if (!ev->n) return;
    char where[512];
    const struct zc_origin *o = &c->origin[ZC_K_PAPI_EVENTS];
    if (o->kind == ZC_ORIGIN_FILE) snprintf(where, sizeof(where), "%s:%u:%u", c->file, o->line, o->column);
    else snprintf(where, sizeof(where), "ZECOLL_PAPI_EVENTS");
#if ZC_HAVE_PAPI
    if (PAPI_library_init(PAPI_VER_CURRENT) != PAPI_VER_CURRENT) {
        fprintf(stderr, "%s: warning: papi.events: PAPI does not initialise here, event names not checked\n", where);
        return;
    }
    const struct zc_papi_why why = {PAPI_num_components, PAPI_get_component_info, PAPI_get_component_index,
                                    PAPI_get_event_component, PAPI_enum_cmp_event};
    char can[1024] = "", sde[1024] = "";
    bool left_out = false;
    for (uint32_t i = 0; i < ev->n; i++) {
        const char *name = ev->v[i];
        /* PAPI's sde component has the events of the program it runs in (libsde): not this one's */
        if (!strncmp(name, "sde:::", 6)) {
            zc_papi_why_append(sde, sizeof(sde), "%s'%s'", sde[0] ? ", " : "", name);
            continue;
        }
        char note[512] = "";
        int code = 0, es = PAPI_NULL, rc = PAPI_event_name_to_code(name, &code);
        if (rc != PAPI_OK) {
            zc_papi_why_disabled(&why, zc_papi_component_bit(&why, name, NULL), note, sizeof(note));
            fprintf(stderr, "%s: warning: papi.events: PAPI on this host does not know '%s'%s (the collector will skip it)\n",
                    where, name, note);
            left_out = true;
            continue;
        }
        if ((rc = PAPI_create_eventset(&es)) == PAPI_OK) rc = PAPI_add_event(es, code);
        if (es != PAPI_NULL) {
            PAPI_cleanup_eventset(es);
            PAPI_destroy_eventset(&es);
        }
        if (rc != PAPI_OK) {
            zc_papi_why_disabled(&why, zc_papi_component_bit(&why, name, &code), note, sizeof(note));
            fprintf(stderr, "%s: warning: papi.events: PAPI on this host cannot count '%s': %s%s (the collector will skip it)\n",
                    where, name, PAPI_strerror(rc), note);
            left_out = true;
            continue;
        }
        zc_papi_why_append(can, sizeof(can), "%s'%s'", can[0] ? ", " : "", name);
    }
    if (left_out)
        fprintf(stderr, "%s: warning: papi.events: on this host PAPI can count %s%s%s\n", where, can[0] ? can : "none of them",
                sde[0] ? "; the program's own software defined events (libsde), on any host: " : "", sde);
#else
    fprintf(stderr, "%s: warning: papi.events: built without PAPI, event names not checked\n", where);
#endif
}

static int check(const char *file) {
    struct zc_config_opts o = {.file = file, .getenv = env, .environ = (const char *const *)environ};
    struct zc_config *c = zc_config_load(&o);
    if (!c) {
        fputs("zecoll-config: out of memory\n", stderr);
        return 2;
    }
    for (uint32_t i = 0; i < c->nmsgs; i++)
        fprintf(stderr, "%s%s\n", c->msgs[i].kind == ZC_MSG_WARNING ? "warning: " : "", c->msgs[i].text);
    int rc = c->nerrors || c->nignored ? 2 : 0;
    if (!rc) {
        papi_warnings(c);
        fflush(stderr);
        char *text = zc_config_render(c, true);
        if (!text) {
            fputs("zecoll-config: out of memory\n", stderr);
            rc = 2;
        } else {
            fputs(text, stdout);
            free(text);
        }
    } else {
        fprintf(stderr, "zecoll-config: %u error(s)%s\n", c->nerrors + c->nignored,
                c->nignored ? " (the collector ignores a bad variable of a tuning setting and keeps the value shown)" : "");
    }
    zc_config_free(c);
    return rc;
}

/* A table cell: '|' escaped, the text otherwise as written in zc_knobs.def. */
static void cell(FILE *f, const char *s) {
    for (; *s; s++) {
        if (*s == '|') fputc('\\', f);
        fputc(*s, f);
    }
}

static const char *size_text(uint64_t v, char *buf, size_t n) {
    const char *suffix = "KMGT";
    int k = -1;
    while (v && k < 3 && v % 1024 == 0) v /= 1024, k++;
    if (k >= 0) snprintf(buf, n, "%llu%c", (unsigned long long)v, suffix[k]);
    else snprintf(buf, n, "%llu", (unsigned long long)v);
    return buf;
}

static void markdown(FILE *f) {
    fputs("# zecoll settings\n\n"
          "Generated from `config/zc_knobs.def` by `zecoll-config --markdown`; do not edit. Every setting is\n"
          "an environment variable `ZECOLL_<NAME>` and, except `ZECOLL_CONFIG`, a key of the YAML\n"
          "configuration file ([config.md](config.md)); a variable overrides the file, the file the\n"
          "default. Check a configuration with `zecoll config check FILE`.\n\n"
          "Bad values: any error in the file, and a bad value of `ZECOLL_PAPI_EVENTS`, `ZECOLL_RANKS`,\n"
          "`ZECOLL_KERNELS_*` or `ZECOLL_WINDOWS`, make the configuration invalid: the collector says so\n"
          "once per job and the application runs untraced (`ZECOLL_STRICT=1`: it aborts). A bad value of\n"
          "any other variable is named in one message and ignored: the file's value or the default stays.\n\n"
          "| variable | YAML key | type | default | range | meaning |\n|---|---|---|---|---|---|\n",
          f);
    for (int i = 0; i < ZC_K_COUNT; i++) {
        const struct zc_knob_info *k = &zc_knob_table[i];
        char lo[32], hi[32];
        fprintf(f, "| `ZECOLL_%s` | %s%s%s | %s | ", k->name, k->yaml[0] ? "`" : "", k->yaml[0] ? k->yaml : "(variable only)",
                k->yaml[0] ? "`" : "", k->type_name);
        if (k->def[0]) {
            fputc('`', f);
            cell(f, k->def);
            fputc('`', f);
        } else {
            fputs(k->type == ZC_T_WINDOWS ? "none" : "empty", f);
        }
        fputs(" | ", f);
        if (k->type == ZC_T_UINT) fprintf(f, "%llu to %llu", (unsigned long long)k->min, (unsigned long long)k->max);
        else if (k->type == ZC_T_SIZE)
            fprintf(f, "%s to %s", size_text(k->min, lo, sizeof(lo)), size_text(k->max, hi, sizeof(hi)));
        fputs(" | ", f);
        cell(f, k->doc);
        fputs(" |\n", f);
    }
}

static int check_docs(const char *path) {
    char *want = NULL, *have = NULL;
    size_t wn = 0;
    FILE *m = open_memstream(&want, &wn);
    if (!m) return 2;
    markdown(m);
    fclose(m);
    FILE *f = fopen(path, "r");
    size_t hn = 0;
    if (f) {
        have = malloc(wn + 2);
        if (have) hn = fread(have, 1, wn + 1, f);
        fclose(f);
    }
    int rc = have && hn == wn && !memcmp(have, want, wn) ? 0 : 1;
    if (rc) fprintf(stderr, "%s is out of date: run build/bin/zecoll-config --markdown > docs/knobs.md\n", path);
    else printf("ok - %s matches config/zc_knobs.def\n", path);
    free(want);
    free(have);
    return rc;
}

int main(int argc, char **argv) {
    if (argc >= 2 && !strcmp(argv[1], "check") && argc <= 3) return check(argc == 3 ? argv[2] : NULL);
    if (argc == 2 && !strcmp(argv[1], "--markdown")) {
        markdown(stdout);
        return 0;
    }
    if (argc == 3 && !strcmp(argv[1], "--check-docs")) return check_docs(argv[2]);
    if (argc == 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
        usage(stdout);
        return 0;
    }
    usage(stderr);
    return 2;
}
