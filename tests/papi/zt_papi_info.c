/* SPDX-License-Identifier: MIT */
/* What PAPI can count on this host, as the PAPI tests' harness needs it (run_papi_test.py):
 * one JSON object on stdout with every component (name, PAPI's disabled code and reason, the
 * PMUs it found, whether it has an event) and, for each EVENT argument, whether PAPI knows it
 * (and its component), and whether an event set can count it here (else PAPI's error).
 *
 * usage: zt_papi_info [EVENT...] */
#include <papi.h>
#include <stdio.h>

static void json_str(const char *s) {
    putchar('"');
    for (; s && *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') printf("\\%c", c);
        else if (c < 0x20) printf("\\u%04x", c);
        else putchar(c);
    }
    putchar('"');
}

int main(int argc, char **argv) {
    int v = PAPI_library_init(PAPI_VER_CURRENT);
    if (v != PAPI_VER_CURRENT) {
        printf("{\"error\": ");
        json_str(v > 0 ? "PAPI version mismatch" : PAPI_strerror(v));
        puts("}");
        return 1;
    }
    printf("{\"components\": [");
    for (int i = 0; i < PAPI_num_components(); i++) {
        const PAPI_component_info_t *c = PAPI_get_component_info(i);
        printf("%s{\"name\": ", i ? ", " : "");
        json_str(c ? c->name : "?");
        printf(", \"disabled\": %d, \"reason\": ", c ? c->disabled : 0);
        json_str(c ? c->disabled_reason : "");
        printf(", \"pmus\": [");
        for (int k = 0; c && k < PAPI_PMU_MAX && c->pmu_names[k]; k++) {
            printf("%s", k ? ", " : "");
            json_str(c->pmu_names[k]);
        }
        int code = PAPI_NATIVE_MASK;
        printf("], \"events\": %s}", c && !c->disabled && PAPI_enum_cmp_event(&code, PAPI_ENUM_FIRST, i) == PAPI_OK ? "true" : "false");
    }
    printf("], \"events\": {");
    for (int i = 1; i < argc; i++) {
        int code = 0, es = PAPI_NULL;
        int rc = PAPI_event_name_to_code(argv[i], &code), known = rc == PAPI_OK;
        if (rc == PAPI_OK) rc = PAPI_create_eventset(&es);
        if (rc == PAPI_OK) rc = PAPI_add_event(es, code);
        if (es != PAPI_NULL) {
            PAPI_cleanup_eventset(es);
            PAPI_destroy_eventset(&es);
        }
        printf("%s", i > 1 ? ", " : "");
        json_str(argv[i]);
        printf(": {\"known\": %s, \"component\": %d, \"countable\": %s, \"why\": ", known ? "true" : "false",
               known ? PAPI_get_event_component(code) : -1, rc == PAPI_OK ? "true" : "false");
        json_str(rc == PAPI_OK ? "" : PAPI_strerror(rc));
        printf("}");
    }
    puts("}}");
    return 0;
}
