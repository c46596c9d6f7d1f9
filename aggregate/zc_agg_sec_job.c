/* SPDX-License-Identifier: MIT */
/* The job section: the report's head in every format (what was read, how percentiles are
 * made), and in HTML the overview: cards of headline figures and the charts. */
#include "zc_agg_report.h"

/* the job's span: from its first event to its last, over the ranks read */
static int build(struct agg_report *r, const struct agg_stats *s) {
    r->first = UINT64_MAX;
    for (uint32_t k = 0; k < s->nranks; k++) {
        const struct agg_rank *x = &s->ranks[k];
        if (!x->present) continue;
        r->ranks_read++;
        r->events += x->events;
        if (x->events && x->first < r->first) r->first = x->first;
        if (x->events && x->last > r->last) r->last = x->last;
    }
    if (r->first == UINT64_MAX) r->first = r->last = 0;
    r->wall = r->last - r->first;
    return 0;
}

static const char *plural(uint32_t n) { return n == 1 ? "" : "s"; }

static void text(const struct agg_report *r, struct agg_text *t) {
    const struct agg_defs *d = r->d;
    char a[64];
    fprintf(t->f, "zecoll-aggregate report: %s\n", r->archive);
    fprintf(t->f, "job: %u rank%s (%s) on %u host%s, %u device%s, %u thread and %u stream locations; wall %s; %llu events\n",
            d->nranks, plural(d->nranks), d->mpi ? "MPI" : "processes", d->nhosts, plural(d->nhosts), d->ndevices,
            plural(d->ndevices), d->nthreads, d->nstreams, TXT_NS(a, r->wall), LLU(r->events));
    fprintf(t->f, "percentiles: log-linear sketch, nearest rank, relative error <= %.2f%%; every percentage names its "
                  "denominator\n", 100.0 * AGG_SKETCH_REL_ERROR);
}

static int csv(const struct agg_report *r, struct agg_csv *c) {
    char path[PATH_MAX + 64];
    snprintf(path, sizeof(path), "%s/README.txt", c->dir);
    FILE *f = fopen(path, "w");
    if (!f) return 0; /* a courtesy: the tables are what counts */
    fprintf(f, "zecoll-aggregate report of %s, one CSV file per table (docs/report-schema.md).\n"
               "Times in ns, sizes in bytes, bandwidths in bytes/s, shares as fractions of the denominator named in "
               "the JSON report.\nPercentiles (p50_ns, p90_ns, p99_ns, median_bandwidth_Bps): nearest rank from a "
               "log-linear sketch, relative error <= %.2f%%.\n",
            r->archive, 100.0 * AGG_SKETCH_REL_ERROR);
    fclose(f);
    return 0;
}

static void json(const struct agg_report *r, FILE *f) {
    const struct agg_defs *d = r->d;
    fprintf(f, "\"schema_version\":%d,\n", AGG_SCHEMA_VERSION);
    json_kv(f, "generator", "zecoll-aggregate", true);
    json_kv(f, "archive", r->archive, true);
    fputs("\n\"units\":{\"time\":\"ns\",\"size\":\"bytes\",\"bandwidth\":\"bytes/s\",\"share\":\"fraction of the stated "
          "denominator\"},\n",
          f);
    fprintf(f, "\"percentiles\":{\"method\":\"nearest rank\",\"sketch\":\"log-linear, 128 buckets per power of two, "
               "exact below 128\",\"relative_error\":%.8f},\n",
            AGG_SKETCH_REL_ERROR);
    fprintf(f,
            "\"job\":{\"ranks\":%u,\"ranks_read\":%u,\"mpi\":%s,\"hosts\":%u,\"devices\":%u,\"thread_locations\":%u,"
            "\"stream_locations\":%u,\"first_ns\":%llu,\"last_ns\":%llu,\"wall_ns\":%llu,\"events\":%llu}",
            d->nranks, r->ranks_read, d->mpi ? "true" : "false", d->nhosts, d->ndevices, d->nthreads, d->nstreams,
            LLU(r->first), LLU(r->last), LLU(r->wall), LLU(r->events));
}

/* ---------------------------------------------------------------- HTML overview */
/* The headline figures, one card each; every card names its denominator. */
static void html_gpu_cards(const struct agg_report *r, FILE *f) {
    char a[64], b[64];
    agg_fmt_ns(a, sizeof(a), (double)r->k_total);
    snprintf(b, sizeof(b), "%u kernels", r->nk);
    html_card(f, "kernel time (sum over ranks)", a, b);
    snprintf(a, sizeof(a), "%.1f%%", 100 * r->job.util);
    html_card(f, "device utilisation", a, "union of busy intervals / ranks' wall time while recording");
    snprintf(a, sizeof(a), "%.1f%%", 100 * r->job.overlap_share);
    html_card(f, "copy/compute overlap", a, "of device busy time");
    uint64_t bytes = 0;
    for (uint32_t i = 0; i < r->nx; i++) bytes += r->x[i].bytes;
    agg_fmt_bytes(a, sizeof(a), (double)bytes);
    html_card(f, "bytes copied", a, "all memory copies");
}

static void html_cards(const struct agg_report *r, FILE *f) {
    char a[64], b[64];
    fputs("<div class=\"cards\">\n", f);
    if (r->any_l0) html_gpu_cards(r, f);
    uint64_t denom_sum = 0, mpi_sum = 0, off_sum = 0;
    for (uint32_t i = 0; i < r->nmr; i++) denom_sum += r->mr[i].denom, mpi_sum += r->mr[i].mpi_ns, off_sum += r->mr[i].off;
    snprintf(a, sizeof(a), "%.1f%%", denom_sum ? 100.0 * (double)mpi_sum / (double)denom_sum : 0.0);
    html_card(f, "time in MPI", a,
              off_sum ? "of the ranks' wall time while recording (wall - measurement off)" : "of the ranks' wall time");
    if (r->nwc) {
        snprintf(a, sizeof(a), "%.1f%%", 100 * rep_ratio(r->w_total, r->mpi_total));
        html_card(f, "MPI time lost waiting", a, "wait states: for late senders, receivers, roots, the last rank");
    }
    if (r->any_l0 && r->lat_all.n) {
        agg_fmt_ns(a, sizeof(a), (double)r->lat_all.p50);
        html_card(f, "launch latency (p50)", a, "host Append to device start");
    }
    (void)b;
    fputs("</div>\n<div id=\"readout\"></div>\n", f);
}

static void html_charts(const struct agg_report *r, FILE *f) {
    uint32_t nranks = r->d->nranks;
    fputs("<h2>Top kernels</h2><div class=\"note\">Total device time per kernel name over all ranks; share = % of all kernel "
          "time. Barriers and signal-only commands are not kernels.</div>\n",
          f);
    html_chart_kernels(r, f);
    fputs("<h2>Imbalance: rank &times; kernel</h2><div class=\"note\">Each cell is a rank's total time in a kernel divided by the "
          "mean over all ranks (ranks that did not run it count as 0); red = slower than the mean.",
          f);
    if (nranks > HTML_MAXROWS)
        fprintf(f, " %u ranks are grouped into %d rows; each row shows its slowest rank.", nranks, HTML_MAXROWS);
    fputs("</div>\n", f);
    html_chart_imbalance(r, f);
    fputs("<h2>Device utilisation: rank &times; time</h2><div class=\"note\">Share of each time bin in which the rank's devices were "
          "busy (union of kernels, transfers and fills; averaged over the rank's devices).",
          f);
    if (nranks > HTML_MAXROWS) fprintf(f, " Ranks are grouped into %d rows (mean).", HTML_MAXROWS);
    fputs("</div>\n", f);
    html_chart_util(r, f);
    fputs("<h2>Bandwidth by memory and size</h2><div class=\"note\">Bytes / busy time of the memory copies of each size class "
          "(H host, D device, S shared, M other memory); logarithmic scale.</div>\n",
          f);
    html_chart_bandwidth(r, f);
}

static void html(const struct agg_report *r, FILE *f) {
    const struct agg_defs *d = r->d;
    char a[64];
    fputs("<h1>zecoll report</h1>\n<div class=\"sub\">", f);
    html_esc(f, r->archive);
    agg_fmt_ns(a, sizeof(a), (double)r->wall);
    fprintf(f, " &middot; %u rank%s on %u host%s, %u device%s &middot; wall %s &middot; %llu events &middot; percentiles from a "
               "log-linear sketch, relative error &le; %.2f%%</div>\n",
            d->nranks, plural(d->nranks), d->nhosts, plural(d->nhosts), d->ndevices, plural(d->ndevices), a,
            LLU(r->events), 100 * AGG_SKETCH_REL_ERROR);
    agg_findings_html(r, f); /* the findings first */
    html_cards(r, f);
    if (r->any_l0) html_charts(r, f);
}

const struct agg_section agg_sec_job = {"job", build, text, csv, json, html};
