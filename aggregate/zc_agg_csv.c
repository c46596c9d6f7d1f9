/* SPDX-License-Identifier: MIT */
/* The CSV report: a directory with one file per table (docs/report-schema.md), raw integers and
 * fixed-precision fractions; every section writes its own files. */
#include "zc_agg_report.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>

void csv_str(FILE *f, const char *s) {
    bool q = strpbrk(s, ",\"\n") != NULL;
    if (!q) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"') fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

void csv_strs(FILE *f, const char *a, const char *b) {
    csv_str(f, a);
    fputc(',', f);
    csv_str(f, b);
}

FILE *csv_open(struct agg_csv *c, const char *name, const char *header) {
    char path[PATH_MAX + 64];
    snprintf(path, sizeof(path), "%s/%s.csv", c->dir, name);
    FILE *f = fopen(path, "w");
    if (!f) agg_err_set(c->e, path, "cannot write (%s)", strerror(errno));
    else fprintf(f, "%s\n", header);
    return f;
}

int agg_report_csv(const struct agg_report *r, const char *dir, struct agg_err *e) {
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
        agg_err_set(e, dir, "cannot create the CSV directory (%s)", strerror(errno));
        return -1;
    }
    struct agg_csv c = {dir, e};
    for (size_t i = 0; i < agg_nsections; i++)
        if (agg_sections[i]->csv && agg_sections[i]->csv(r, &c) != 0) return -1;
    return 0;
}

int csv_table(struct agg_csv *c, const char *name, const char *header, const struct agg_report *r, const void *rows,
              size_t stride, uint32_t n, void (*row)(FILE *f, const struct agg_report *r, const void *row)) {
    FILE *f = csv_open(c, name, header);
    if (!f) return -1;
    for (uint32_t i = 0; i < n; i++) row(f, r, (const char *)rows + i * stride);
    fclose(f);
    return 0;
}

static void simple_row(FILE *f, const struct agg_report *r, const void *row) {
    const struct r_simple *x = row;
    csv_str(f, x->name);
    fprintf(f, ",%llu,%llu,%.6f,%.1f,%llu,%llu,%llu\n", LLU(x->calls), LLU(x->total), x->share, x->mean, LLU(x->min),
            LLU(x->max), LLU(x->bytes));
}

int csv_simple(struct agg_csv *c, const char *name, const struct r_simple *v, uint32_t n) {
    return CSV_TABLE(c, name, "name,calls,total_ns,share,mean_ns,min_ns,max_ns,bytes", NULL, v, n, simple_row);
}
