/* SPDX-License-Identifier: MIT */
/* The host Level Zero API section: calls and time per function. The archive has no return
 * codes, so there is no error column. The collector's own regions (its buffer flushes) are not
 * API calls: their time goes to the data quality section. */
#include "zc_agg_report.h"

static int build(struct agg_report *r, const struct agg_stats *s) {
    const struct agg_defs *d = r->d;
    for (uint32_t i = 0; i < s->n; i++) {
        const struct agg_key *key = &s->keys[i];
        if (key->table == T_API && key->a < d->nregions && d->regions[key->a].host_class == AGG_H_MEASUREMENT)
            r->dq_flush_ns += s->accs[i].sum;
    }
    r->api_total = rep_simple_rows(r, s, T_API, AGG_H_MEASUREMENT, &r->api, &r->napi);
    if (!r->api) return -1;
    rep_shares(r->api, r->napi, r->api_total);
    return 0;
}

#define AC(field) REP_OFF(r_simple, field)

static const struct txt_col cols[] = {
    TXT_LEFT("function", 0, RK_STR, AC(name)), TXT_COL("calls", 9, RK_U64, AC(calls)), TXT_COL("total", 10, RK_NS, AC(total)),
    TXT_COL("share", 6, RK_PCT, AC(share)),    TXT_COL("mean", 10, RK_NSF, AC(mean)),  TXT_COL("max", 10, RK_NS, AC(max)),
};

static void text(const struct agg_report *r, struct agg_text *t) {
    char a[64];
    if (!r->napi) return;
    txt_heading(t, "Host Level Zero API: top %u; share = %% of all API time (%s); return codes are not in the archive",
                txt_min(t->top, r->napi), TXT_NS(a, r->api_total));
    TXT_TABLE(t, cols, 100, r->api, txt_min(r->napi, t->top));
}

static int csv(const struct agg_report *r, struct agg_csv *c) { return csv_simple(c, "level_zero_api", r->api, r->napi); }

static void json(const struct agg_report *r, FILE *f) {
    fprintf(f, "\"level_zero_api\":{\"share_denominator\":\"total_ns (all host Level Zero time)\",\"total_ns\":%llu,"
               "\"errors\":null,\"rows\":",
            LLU(r->api_total));
    json_simple_rows(f, r->api, r->napi, false);
    fputc('}', f);
}

const struct agg_section agg_sec_api = {"host API", build, text, csv, json, NULL};
