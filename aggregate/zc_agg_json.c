/* SPDX-License-Identifier: MIT */
/* The JSON report (docs/report-schema.md): one object whose members the sections write in the
 * table's order. Integers are exact; derived numbers are printed with fixed formats, so equal
 * statistics give equal bytes. */
#include "zc_agg_report.h"

void json_kv(FILE *f, const char *k, const char *v, bool comma) {
    fprintf(f, "\"%s\":", k);
    agg_json_str(f, v);
    if (comma) fputc(',', f);
}

void json_row(FILE *f, uint32_t i) { fputs(i ? ",\n{" : "\n{", f); }

void json_simple_rows(FILE *f, const struct r_simple *v, uint32_t n, bool bytes) {
    fputc('[', f);
    for (uint32_t i = 0; i < n; i++) {
        json_row(f, i);
        json_kv(f, "name", v[i].name, true);
        fprintf(f, "\"calls\":%llu,\"total_ns\":%llu,\"share\":%.6f,\"mean_ns\":%.1f,\"min_ns\":%llu,\"max_ns\":%llu",
                LLU(v[i].calls), LLU(v[i].total), v[i].share, v[i].mean, LLU(v[i].min), LLU(v[i].max));
        if (bytes) fprintf(f, ",\"bytes\":%llu", LLU(v[i].bytes));
        fputc('}', f);
    }
    fputc(']', f);
}

int agg_report_json(const struct agg_report *r, FILE *f) {
    fputc('{', f);
    bool first = true;
    for (size_t i = 0; i < agg_nsections; i++) {
        if (!agg_sections[i]->json) continue;
        if (!first) fputs(",\n", f);
        agg_sections[i]->json(r, f);
        first = false;
    }
    fputs("}\n", f);
    return ferror(f) ? -1 : 0;
}
