/* SPDX-License-Identifier: MIT */
/* The report: its table of sections, the build that runs them in order over the merged
 * statistics, and what every section shares (memory, derived numbers, names, formats). Rows are
 * sorted with a total order (value, then name, then id), so equal values never depend on the
 * order of the statistics' keys, which differs with the number of readers. */
#include "zc_agg_report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A new section: its file (zc_agg_sec_*.c), its hooks, its place here. Every section is built
 * before any is printed, in this order: the straggler rows read the sorted kernels, the data
 * quality the host API's flush time and PAPI's counts; the job section's HTML overview reads the
 * figures of all. */
extern const struct agg_section agg_sec_job, agg_sec_findings, agg_sec_kernels, agg_sec_transfers, agg_sec_util,
    agg_sec_latency, agg_sec_mpi, agg_sec_matrix, agg_sec_waits, agg_sec_idle, agg_sec_api, agg_sec_papi, agg_sec_quality;
/* The findings print second but are built by the wait states' build (they read every section
 * before it); the GPU sections print nothing for a job without Level Zero activity. */
const struct agg_section *const agg_sections[] = {
    &agg_sec_job,    &agg_sec_findings, &agg_sec_kernels, &agg_sec_transfers, &agg_sec_util,
    &agg_sec_latency, &agg_sec_mpi,     &agg_sec_matrix,  &agg_sec_waits,     &agg_sec_idle,
    &agg_sec_api,    &agg_sec_papi,     &agg_sec_quality,
};
const size_t agg_nsections = sizeof(agg_sections) / sizeof(agg_sections[0]);

/* ---------------------------------------------------------------- formatting */
void agg_fmt_ns(char *out, size_t n, double ns) {
    if (ns < 1e3) snprintf(out, n, "%.0f ns", ns);
    else if (ns < 1e6) snprintf(out, n, "%.2f us", ns / 1e3);
    else if (ns < 1e9) snprintf(out, n, "%.2f ms", ns / 1e6);
    else snprintf(out, n, "%.3f s", ns / 1e9);
}

void agg_fmt_bytes(char *out, size_t n, double b) {
    const char *u[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    int i = 0;
    while (b >= 1024 && i < 5) b /= 1024, i++;
    if (i == 0) snprintf(out, n, "%.0f B", b);
    else snprintf(out, n, "%.2f %s", b, u[i]);
}

void agg_fmt_rate(char *out, size_t n, double bps) {
    const char *u[] = {"B/s", "kB/s", "MB/s", "GB/s", "TB/s"};
    int i = 0;
    while (bps >= 1000 && i < 4) bps /= 1000, i++;
    snprintf(out, n, "%.3g %s", bps, u[i]);
}

/* powers of two read better without their decimals: "4.00 KiB" -> "4 KiB" */
void rep_pow2_bytes(char *out, size_t n, double b) {
    agg_fmt_bytes(out, n, b);
    char *p = strstr(out, ".00");
    if (p) memmove(p, p + 3, strlen(p + 3) + 1);
}

void rep_size_class(char *out, size_t n, uint32_t cls) {
    if (cls == 0) {
        snprintf(out, n, "0 B");
        return;
    }
    char a[32], b[32];
    rep_pow2_bytes(a, sizeof(a), (double)((uint64_t)1 << (cls - 1)));
    if (cls >= 64) snprintf(b, sizeof(b), "max");
    else rep_pow2_bytes(b, sizeof(b), (double)((uint64_t)1 << cls));
    size_t la = strlen(a), lb = strlen(b);
    if (la + lb + 5 > n) {
        snprintf(out, n, "?");
        return;
    }
    snprintf(out, n, "[%s, %s)", a, b);
}

/* ---------------------------------------------------------------- names */
const char *rep_region_name(const struct agg_report *r, uint32_t region) {
    const struct agg_defs *d = r->d;
    return region < d->nregions ? agg_str(d, d->regions[region].name) : "?";
}

const char *rep_node_name(const struct agg_report *r, uint32_t node) {
    const struct agg_defs *d = r->d;
    return node < d->nnodes ? agg_str(d, d->nodes[node].name) : "?";
}

const char *rep_host_of_rank(const struct agg_report *r, uint32_t rank) {
    const struct agg_defs *d = r->d;
    return rank < d->nprocs ? rep_node_name(r, d->procs[rank].host) : "?";
}

const char *rep_loc_name(const struct agg_report *r, uint32_t li) {
    return li < r->d->nlocs ? agg_str(r->d, r->d->locs[li].name) : "?";
}

uint64_t rep_since_start(const struct agg_report *r, uint64_t t) { return t > r->d->t0 ? t - r->d->t0 : 0; }

/* ---------------------------------------------------------------- derived numbers */
double rep_mean(const struct agg_acc *a) { return a->n ? (double)a->sum / (double)a->n : 0.0; }

double rep_sd(const struct agg_acc *a) {
    if (a->n < 2) return 0.0;
    long double n = (long double)a->n, s = (long double)a->sum, q = (long double)a->sq;
    long double v = (q - s * s / n) / n;
    return v > 0 ? (double)sqrtl(v) : 0.0;
}

/* The sketch's bucket midpoint can lie outside the values seen: the true range wins. */
uint64_t rep_quantile(const struct agg_acc *a, double p) {
    uint64_t v = agg_sketch_quantile(a->sk, a->n, p);
    if (v < a->min) return a->min;
    if (v > a->max) return a->max;
    return v;
}

double rep_ratio(uint64_t a, uint64_t b) { return b ? (double)a / (double)b : 0.0; }

int rep_cmp_u64_desc(uint64_t a, uint64_t b) { return a > b ? -1 : a < b; }

int rep_cmp_named(const char *an, uint32_t ar, const char *bn, uint32_t br) {
    int c = strcmp(an, bn);
    return c ? c : (ar > br) - (ar < br);
}

int rep_cmp_keys(const void *a, const void *b, const struct rep_key *k, size_t nk) {
    for (size_t i = 0; i < nk; i++) {
        int c;
        if (k[i].kind == RK_F) {
            double x = rep_f64_at(a, k[i].off), y = rep_f64_at(b, k[i].off);
            c = x < y ? -1 : x > y;
        } else {
            uint64_t x = k[i].kind == RK_U32 ? rep_u32_at(a, k[i].off) : rep_u64_at(a, k[i].off);
            uint64_t y = k[i].kind == RK_U32 ? rep_u32_at(b, k[i].off) : rep_u64_at(b, k[i].off);
            c = x < y ? -1 : x > y;
        }
        if (c) return k[i].desc ? -c : c;
    }
    return 0;
}

struct keys {
    const struct rep_key *k;
    size_t n;
};

static int cmp_by_keys(const void *a, const void *b, void *keys) {
    const struct keys *k = keys;
    return rep_cmp_keys(a, b, k->k, k->n);
}

void rep_sort(void *rows, size_t n, size_t size, const struct rep_key *k, size_t nk) {
    struct keys keys = {k, nk};
    qsort_r(rows, n, size, cmp_by_keys, &keys);
}

uint32_t rep_count(const struct agg_stats *s, uint32_t t) {
    uint32_t n = 0;
    for (uint32_t i = 0; i < s->n; i++) n += s->keys[i].table == t;
    return n;
}

static int cmp_simple(const void *x, const void *y) {
    const struct r_simple *a = x, *b = y;
    int c = rep_cmp_u64_desc(a->total, b->total);
    return c ? c : rep_cmp_named(a->name, a->region, b->name, b->region);
}

uint64_t rep_simple_rows(struct agg_report *r, const struct agg_stats *s, uint32_t table, uint32_t skip,
                         struct r_simple **rows, uint32_t *n) {
    const struct agg_defs *d = r->d;
    uint64_t total = 0;
    struct r_simple *v;
    *n = 0;
    if (!REP_ALLOC(r, v, rep_count(s, table))) return 0;
    for (uint32_t i = 0; i < s->n; i++) {
        const struct agg_key *key = &s->keys[i];
        const struct agg_acc *a = &s->accs[i];
        if (key->table != table) continue;
        if (skip != AGG_NONE && key->a < d->nregions && d->regions[key->a].host_class == skip) continue;
        v[(*n)++] = (struct r_simple){.region = key->a, .name = rep_region_name(r, key->a), .calls = a->n,
                                      .total = a->sum, .min = a->min, .max = a->max, .bytes = a->bytes,
                                      .mean = rep_mean(a)};
        total += a->sum;
    }
    qsort(v, *n, sizeof(*v), cmp_simple);
    *rows = v;
    return total;
}

void rep_shares(struct r_simple *v, uint32_t n, uint64_t total) {
    for (uint32_t i = 0; i < n; i++) v[i].share = rep_ratio(v[i].total, total);
}

/* ---------------------------------------------------------------- build */
void *rep_alloc(struct agg_report *r, size_t n, size_t size) {
    if (r->nmem == r->capmem) {
        uint32_t nc = r->capmem ? 2 * r->capmem : 64;
        void **m = realloc(r->mem, nc * sizeof(*m));
        if (!m) return NULL;
        r->mem = m;
        r->capmem = nc;
    }
    void *p = calloc(n + 1, size);
    if (p) r->mem[r->nmem++] = p;
    return p;
}

struct agg_report *agg_report_build(const struct agg_defs *d, const struct agg_stats *s, const struct agg_report_opts *o) {
    struct agg_report *r = calloc(1, sizeof(*r));
    if (!r) return NULL;
    r->d = d;
    r->o = *o;
    snprintf(r->archive, sizeof(r->archive), "%s", o->archive ? o->archive : "");
    for (size_t i = 0; i < agg_nsections; i++)
        if (agg_sections[i]->build && agg_sections[i]->build(r, s) != 0) {
            agg_report_free(r);
            return NULL;
        }
    return r;
}

void agg_report_free(struct agg_report *r) {
    if (!r) return;
    for (uint32_t i = 0; i < r->nmem; i++) free(r->mem[i]);
    free(r->mem);
    free(r);
}
