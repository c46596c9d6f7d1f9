/* SPDX-License-Identifier: MIT */
/* The findings that open the report: at most five statements, ranked by the time they account
 * for, each quantified and linking to its section: the wait states that cost most (who waits,
 * for whom), GPU idle time while ranks wait in MPI (which call, for which rank), what else keeps
 * the GPUs idle, and MPI's share of the run. Built last (zc_agg_waits.c calls agg_findings_build
 * once the wait states and idle rows exist); printed first. A job without Level Zero activity
 * says so here, once. */
#include "zc_agg_report.h"

#include <stdarg.h>
#include <stdlib.h>

static void add(struct agg_report *r, struct r_finding *all, uint32_t *n, uint64_t weight, const char *anchor,
                const char *fmt, ...) __attribute__((format(printf, 6, 7)));
static void add(struct agg_report *r, struct r_finding *all, uint32_t *n, uint64_t weight, const char *anchor,
                const char *fmt, ...) {
    (void)r;
    if (*n >= 16 || weight == 0) return;
    struct r_finding *x = &all[(*n)++];
    x->weight = weight;
    x->anchor = anchor;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(x->text, sizeof(x->text), fmt, ap);
    va_end(ap);
}

/* "ranks 3 and 7": the first k waiting ranks of class cls (rows sorted by time) */
static uint32_t top_waiters(const struct agg_report *r, uint32_t cls, uint32_t *rk, uint64_t *ns, uint64_t *mpi) {
    uint32_t k = 0;
    *ns = *mpi = 0;
    for (uint32_t i = 0; i < r->nwr && k < 3; i++)
        if (r->wr[i].cls == cls && r->wr[i].ns) {
            rk[k++] = r->wr[i].a;
            *ns += r->wr[i].ns;
            *mpi += r->wr[i].mpi_ns;
        }
    return k;
}

static void ranks_text(char *out, size_t n, const uint32_t *rk, uint32_t k) {
    if (k == 1) snprintf(out, n, "rank %u", rk[0]);
    else if (k == 2) snprintf(out, n, "ranks %u and %u", rk[0], rk[1]);
    else snprintf(out, n, "ranks %u, %u and %u", rk[0], rk[1], rk[2]);
}

static void wait_findings(struct agg_report *r, struct r_finding *all, uint32_t *n) {
    for (uint32_t c = 0; c < r->nwc; c++) {
        const struct r_wait *w = &r->wc[c];
        if (!w->ns) continue;
        uint32_t rk[3];
        uint64_t ns, mpi;
        uint32_t k = top_waiters(r, w->cls, rk, &ns, &mpi);
        if (!k) continue;
        /* whom those ranks wait for most */
        uint32_t blamed = AGG_NONE;
        uint64_t bns = 0;
        for (uint32_t i = 0; i < r->nwp; i++) {
            const struct r_wait *p = &r->wp[i];
            bool mine = false;
            for (uint32_t j = 0; j < k; j++) mine |= p->a == rk[j];
            if (p->cls != w->cls || !mine) continue;
            uint64_t sum = 0; /* this blamed rank over all the waiting ranks named */
            for (uint32_t q = 0; q < r->nwp; q++) {
                bool m2 = false;
                for (uint32_t j = 0; j < k; j++) m2 |= r->wp[q].a == rk[j];
                if (r->wp[q].cls == w->cls && m2 && r->wp[q].b == p->b) sum += r->wp[q].ns;
            }
            if (sum > bns || (sum == bns && p->b < blamed)) bns = sum, blamed = p->b;
        }
        char who[64], t[64];
        ranks_text(who, sizeof(who), rk, k);
        agg_fmt_ns(t, sizeof(t), (double)ns);
        add(r, all, n, w->ns, "waits", "%s %s %.1f%% of %s MPI time (%s) in %s%s, %.1f%% of it for rank %u", who,
            k == 1 ? "spends" : "spend", 100 * rep_ratio(ns, mpi), k == 1 ? "its" : "their", t, w->cls_name,
            w->cls == W_LATE_SENDER ? " (waiting for late senders)" : "", 100 * rep_ratio(bns, ns), blamed);
    }
}

static void idle_findings(struct agg_report *r, struct r_finding *all, uint32_t *n) {
    uint32_t done[2] = {AGG_NONE, AGG_NONE}, nd = 0;
    for (uint32_t i = 0; i < r->niw && nd < 2; i++) {
        const struct r_idlewait *x = &r->iw[i];
        if (x->cls >= W_NCLASSES || x->rank == done[0]) continue;
        const struct r_idle *ri = NULL;
        for (uint32_t j = 0; j < r->nidl; j++)
            if (r->idl[j].rank == x->rank) ri = &r->idl[j];
        if (!ri) continue;
        add(r, all, n, x->ns, "gpu-idle",
            "rank %u's GPUs idle %.1f%% of the run, %.1f%% of that while rank %u waits in %s (%s) for rank %u", x->rank,
            100 * ri->share, 100 * x->share, x->rank, x->fn, x->cls_name, x->blamed);
        done[nd++] = x->rank;
    }
    const struct r_idle *j = &r->idle_job;
    static const char *const what[AGG_IDLE_NCAUSES] = {"the host is in MPI", "the host waits in a Level Zero synchronisation",
                                                       "recording is off", "the host computes (no MPI, no Level Zero wait)"};
    int best = 0;
    for (int k = 1; k < AGG_IDLE_NCAUSES; k++)
        if (j->ns[k] > j->ns[best]) best = k;
    if (j->total && j->share >= 0.05)
        add(r, all, n, j->ns[best], "gpu-idle", "GPUs are idle %.1f%% of the devices' time; %.1f%% of that while %s", 100 * j->share,
            100 * rep_ratio(j->ns[best], j->total), what[best]);
}

static void mpi_finding(struct agg_report *r, struct r_finding *all, uint32_t *n) {
    uint64_t denom = 0;
    const struct r_mpirank *top = NULL;
    for (uint32_t i = 0; i < r->nmr; i++) {
        denom += r->mr[i].denom;
        if (!top || r->mr[i].share > top->share) top = &r->mr[i];
    }
    if (!top || !r->mpi_total) return;
    add(r, all, n, r->mpi_total, "communication", "MPI takes %.1f%% of the ranks' recorded time (rank %u the most: %.1f%%)",
        100 * rep_ratio(r->mpi_total, denom), top->rank, 100 * top->share);
}

static int cmp_finding(const void *x, const void *y) {
    const struct r_finding *a = x, *b = y;
    int c = rep_cmp_u64_desc(a->weight, b->weight);
    return c ? c : strcmp(a->text, b->text);
}

void agg_findings_build(struct agg_report *r, const struct agg_stats *s) {
    r->any_l0 = rep_count(s, T_API) || rep_count(s, T_KERNEL) || rep_count(s, T_XFER) || rep_count(s, T_BARRIER);
    for (uint32_t q = 0; q < s->nranks && !r->any_l0; q++) r->any_l0 = s->ranks[q].ndev != 0;
    struct r_finding all[16];
    uint32_t n = 0;
    wait_findings(r, all, &n);
    idle_findings(r, all, &n);
    mpi_finding(r, all, &n);
    qsort(all, n, sizeof(*all), cmp_finding);
    r->nfnd = n < AGG_FINDINGS ? n : AGG_FINDINGS;
    for (uint32_t i = 0; i < r->nfnd; i++) r->fnd[i] = all[i];
}

/* ---------------------------------------------------------------- formats */
static void text(const struct agg_report *r, struct agg_text *t) {
    if (!r->nfnd && r->any_l0) return;
    txt_heading(t, "Findings");
    if (!r->any_l0) fprintf(t->f, "No Level Zero activity was recorded: MPI and host sections only.\n");
    for (uint32_t i = 0; i < r->nfnd; i++) fprintf(t->f, "%u. %s (see %s)\n", i + 1, r->fnd[i].text, r->fnd[i].anchor);
}

static void json(const struct agg_report *r, FILE *f) {
    fprintf(f, "\"findings\":{\"level_zero_activity\":%s,\"items\":[", r->any_l0 ? "true" : "false");
    for (uint32_t i = 0; i < r->nfnd; i++) {
        json_row(f, i);
        fprintf(f, "\"rank\":%u,\"weight_ns\":%llu,", i + 1, LLU(r->fnd[i].weight));
        json_kv(f, "section", r->fnd[i].anchor, true);
        json_kv(f, "text", r->fnd[i].text, false);
        fputc('}', f);
    }
    fputs("]}", f);
}

void agg_findings_html(const struct agg_report *r, FILE *f) {
    if (!r->nfnd && r->any_l0) return;
    fputs("<h2 id=\"findings\">Findings</h2>\n", f);
    if (!r->any_l0) fputs("<p>No Level Zero activity was recorded: MPI and host sections only.</p>\n", f);
    fputs("<ol class=\"findings\">\n", f);
    for (uint32_t i = 0; i < r->nfnd; i++) {
        fputs("<li>", f);
        html_esc(f, r->fnd[i].text);
        fprintf(f, " <a href=\"#%s\">&#8594; %s</a></li>\n", r->fnd[i].anchor, r->fnd[i].anchor);
    }
    fputs("</ol>\n", f);
}

/* its HTML opens the overview (zc_agg_sec_job.c), above the cards */
const struct agg_section agg_sec_findings = {"findings", NULL, text, NULL, json, NULL};
