/* SPDX-License-Identifier: MIT */
/* The launch latency section: host Append -> device start, the first execution of each Append
 * (later executions of a regular list are re-executions, in the data quality), over all
 * operations, per operation and per queue. */
#include "zc_agg_report.h"

#include <stdlib.h>

/* ---------------------------------------------------------------- build */
static const struct rep_key lat_order[] = {
    REP_DESC(r_lat, mean), REP_ASC(r_lat, rank), REP_ASC(r_lat, loc), REP_ASC(r_lat, region),
};

static struct r_lat lat_row(const struct agg_acc *a, const char *name, bool percentiles) {
    struct r_lat x = {.name = name, .n = a->n, .min = a->min, .max = a->max, .mean = rep_mean(a)};
    if (percentiles) x.p50 = rep_quantile(a, 50), x.p90 = rep_quantile(a, 90), x.p99 = rep_quantile(a, 99);
    return x;
}

static int build(struct agg_report *r, const struct agg_stats *s) {
    const struct agg_defs *d = r->d;
    const struct agg_acc *la = agg_stats_find(s, T_LAT_ALL, 0, 0, 0);
    if (la) r->lat_all = lat_row(la, "all", true);
    if (!REP_ALLOC(r, r->lq, rep_count(s, T_LAT_QUEUE)) || !REP_ALLOC(r, r->lk, rep_count(s, T_LAT_REGION))) return -1;
    for (uint32_t i = 0; i < s->n; i++) {
        const struct agg_key *key = &s->keys[i];
        const struct agg_acc *a = &s->accs[i];
        if (key->table == T_LAT_QUEUE) { /* no sketch per queue: the mean finds the slow queue */
            uint32_t li = (uint32_t)key->b;
            struct r_lat *w = &r->lq[r->nlq++];
            *w = lat_row(a, rep_loc_name(r, li), false);
            w->loc = li;
            w->rank = li < d->nlocs ? d->locs[li].proc : AGG_NONE;
            w->region = AGG_NONE;
        } else if (key->table == T_LAT_REGION) {
            struct r_lat *w = &r->lk[r->nlk++];
            *w = lat_row(a, rep_region_name(r, key->a), true);
            w->region = key->a;
            w->loc = w->rank = AGG_NONE;
        }
    }
    REP_SORT(r->lq, r->nlq, lat_order);
    REP_SORT(r->lk, r->nlk, lat_order);
    return 0;
}

/* ---------------------------------------------------------------- text */
#define LC(field) REP_OFF(r_lat, field)

static const char *rank_queue(const struct agg_report *r, const void *row, char *buf, size_t n) {
    const struct r_lat *x = row;
    snprintf(buf, n, "%u / %s", x->rank, x->name);
    return buf;
}

static const struct txt_col op_cols[] = {
    TXT_LEFT("operation", 0, RK_STR, LC(name)), TXT_COL("count", 9, RK_U64, LC(n)), TXT_COL("mean", 10, RK_NSF, LC(mean)),
    TXT_COL("p50", 10, RK_NS, LC(p50)),         TXT_COL("p90", 10, RK_NS, LC(p90)), TXT_COL("p99", 10, RK_NS, LC(p99)),
    TXT_COL("max", 10, RK_NS, LC(max)),
};

static const struct txt_col queue_cols[] = {
    TXT_FN("rank / queue", 0, true, rank_queue), TXT_COL("count", 9, RK_U64, LC(n)), TXT_COL("mean", 10, RK_NSF, LC(mean)),
    TXT_COL("min", 10, RK_NS, LC(min)),          TXT_COL("max", 10, RK_NS, LC(max)),
};

static void text(const struct agg_report *r, struct agg_text *t) {
    if (!r->any_l0) return; /* no Level Zero activity: said once, in the findings */
    const struct r_lat *x = &r->lat_all;
    char a[64], b[64], c[64], e[64], g[64];
    txt_heading(t, "Launch latency: host Append -> device start (first execution of each Append)");
    if (!x->n) {
        fprintf(t->f, "(no linked device records)\n");
        return;
    }
    fprintf(t->f, "all: %llu operations, mean %s, p50 %s, p90 %s, p99 %s, max %s\n", LLU(x->n), TXT_NS(a, x->mean),
            TXT_NS(b, x->p50), TXT_NS(c, x->p90), TXT_NS(e, x->p99), TXT_NS(g, x->max));
    TXT_TABLE(t, op_cols, 110, r->lk, txt_min(r->nlk, t->top));
    fprintf(t->f, "per queue (highest mean first, top %u):\n", txt_min(t->top, 5));
    TXT_TABLE(t, queue_cols, 90, r->lq, txt_min(r->nlq, txt_min(t->top, 5)));
}

/* ---------------------------------------------------------------- CSV */
static void csv_op(FILE *f, const struct agg_report *r, const void *row) {
    const struct r_lat *x = row;
    csv_str(f, x->name);
    fprintf(f, ",%llu,%.1f,%llu,%llu,%llu,%llu,%llu\n", LLU(x->n), x->mean, LLU(x->min), LLU(x->max), LLU(x->p50),
            LLU(x->p90), LLU(x->p99));
}

static void csv_queue(FILE *f, const struct agg_report *r, const void *row) {
    const struct r_lat *x = row;
    fprintf(f, "%u,", x->rank);
    csv_str(f, x->name);
    fprintf(f, ",%llu,%.1f,%llu,%llu\n", LLU(x->n), x->mean, LLU(x->min), LLU(x->max));
}

static int csv(const struct agg_report *r, struct agg_csv *c) {
    FILE *f = csv_open(c, "launch_latency", "operation,count,mean_ns,min_ns,max_ns,p50_ns,p90_ns,p99_ns");
    if (!f) return -1;
    if (r->lat_all.n) csv_op(f, r, &r->lat_all); /* "all" first, when there is a latency at all */
    for (uint32_t i = 0; i < r->nlk; i++) csv_op(f, r, &r->lk[i]);
    fclose(f);
    return CSV_TABLE(c, "launch_latency_by_queue", "rank,queue,count,mean_ns,min_ns,max_ns", r, r->lq, r->nlq, csv_queue);
}

/* ---------------------------------------------------------------- JSON */
static void lat_obj(FILE *f, const struct r_lat *x, bool pct) {
    fprintf(f, "\"count\":%llu,\"mean_ns\":%.1f,\"min_ns\":%llu,\"max_ns\":%llu", LLU(x->n), x->mean, LLU(x->min), LLU(x->max));
    if (pct) fprintf(f, ",\"p50_ns\":%llu,\"p90_ns\":%llu,\"p99_ns\":%llu", LLU(x->p50), LLU(x->p90), LLU(x->p99));
}

static void json(const struct agg_report *r, FILE *f) {
    fputs("\"launch_latency\":{\"definition\":\"device start - host Append start, first record of each Append\",\"all\":{", f);
    lat_obj(f, &r->lat_all, true);
    fputs("},\"by_operation\":[", f);
    for (uint32_t i = 0; i < r->nlk; i++) {
        json_row(f, i);
        json_kv(f, "name", r->lk[i].name, true);
        lat_obj(f, &r->lk[i], true);
        fputc('}', f);
    }
    fputs("],\"by_queue\":[", f);
    for (uint32_t i = 0; i < r->nlq; i++) {
        fprintf(f, "%s{\"rank\":%u,", i ? ",\n" : "\n", r->lq[i].rank);
        json_kv(f, "queue", r->lq[i].name, true);
        lat_obj(f, &r->lq[i], false);
        fputc('}', f);
    }
    fputs("]}", f);
}

const struct agg_section agg_sec_latency = {"launch latency", build, text, csv, json, NULL};
