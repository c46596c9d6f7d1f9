/* SPDX-License-Identifier: MIT */
/* The GPU idle section: every idle gap of a rank's devices (between two busy periods) split by
 * what the rank's host threads did meanwhile: in MPI (and there, in which wait state, blaming
 * which rank), in a Level Zero host synchronisation, outside recording, or host compute; job
 * totals, per rank, and the 10 longest gaps with their cause. Rows: zc_agg_waits.c. */
#include "zc_agg_report.h"

static const char *const cause_keys[AGG_IDLE_NCAUSES] = {"mpi_ns", "l0_sync_ns", "outside_recording_ns", "host_compute_ns"};

/* ---------------------------------------------------------------- text */
#define IC(field) REP_OFF(r_idlewait, field)

static const char *cell_blamed(const struct agg_report *r, const void *row, char *buf, size_t n) {
    const struct r_idlewait *x = row;
    if (x->blamed == AGG_NONE) return "";
    snprintf(buf, n, "%u", x->blamed);
    return buf;
}

static const struct txt_col iw_cols[] = {
    TXT_COL("rank", 6, RK_U32, IC(rank)),       TXT_LEFT("while waiting in", 0, RK_STR, IC(cls_name)),
    TXT_LEFT("function", 18, RK_STR, IC(fn)),   TXT_FN("blamed", 7, false, cell_blamed),
    TXT_COL("idle", 10, RK_NS, IC(ns)),         TXT_COL("of its idle", 11, RK_PCT, IC(share)),
};

static void text(const struct agg_report *r, struct agg_text *t) {
    if (!r->nidl) return;
    const struct r_idle *j = &r->idle_job;
    char a[64], b[64], c[64], d[64], e[64], h[64];
    txt_heading(t, "GPU idle: %s in %llu gaps = %s of the devices' time (ranks' wall x devices)", TXT_NS(a, j->total),
                LLU(j->gaps), TXT_PCT(b, j->share));
    fprintf(t->f, "while the host was in MPI %s, in a Level Zero synchronisation %s, outside recording %s, computing %s\n",
            TXT_NS(a, j->ns[AGG_IDLE_MPI]), TXT_NS(b, j->ns[AGG_IDLE_SYNC]), TXT_NS(c, j->ns[AGG_IDLE_OFF]),
            TXT_NS(d, j->ns[AGG_IDLE_COMPUTE]));
    fprintf(t->f, "%-6s %10s %7s %10s %10s %10s %10s\n", "rank", "idle", "share", "in MPI", "L0 sync", "off", "compute");
    for (uint32_t i = 0; i < r->nidl && i < t->top; i++) {
        const struct r_idle *x = &r->idl[i];
        fprintf(t->f, "%-6u %10s %7s %10s %10s %10s %10s\n", x->rank, TXT_NS(a, x->total), TXT_PCT(b, x->share),
                TXT_NS(c, x->ns[AGG_IDLE_MPI]), TXT_NS(d, x->ns[AGG_IDLE_SYNC]), TXT_NS(e, x->ns[AGG_IDLE_OFF]),
                TXT_NS(h, x->ns[AGG_IDLE_COMPUTE]));
    }
    if (r->niw) {
        fprintf(t->f, "idle while in MPI, by wait state and blamed rank (top %u):\n", txt_min(t->top, r->niw));
        TXT_TABLE(t, iw_cols, 100, r->iw, txt_min(r->niw, t->top));
    }
    if (r->nig) {
        fprintf(t->f, "the %u longest gaps:\n", r->nig);
        for (uint32_t i = 0; i < r->nig; i++) {
            const struct r_idlegap *g = &r->ig[i];
            fprintf(t->f, "  %10s  rank %u %s at %s: %s\n", TXT_NS(a, g->dur), g->rank, rep_node_name(r, g->node),
                    TXT_NS(b, rep_since_start(r, g->start)), g->cause);
        }
    }
}

/* ---------------------------------------------------------------- CSV */
static void csv_idle(FILE *f, const struct agg_report *r, const void *row) {
    const struct r_idle *x = row;
    fprintf(f, "%u,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%.6f\n", x->rank, LLU(x->gaps), LLU(x->total), LLU(x->ns[0]),
            LLU(x->ns[1]), LLU(x->ns[2]), LLU(x->ns[3]), LLU(x->denom), x->share);
}

static void csv_iw(FILE *f, const struct agg_report *r, const void *row) {
    const struct r_idlewait *x = row;
    fprintf(f, "%u,%s,%s,%d,%llu,%.6f\n", x->rank, x->cls_name, x->fn, x->blamed == AGG_NONE ? -1 : (int)x->blamed,
            LLU(x->ns), x->share);
}

static void csv_gap(FILE *f, const struct agg_report *r, const void *row) {
    const struct r_idlegap *g = row;
    fprintf(f, "%u,", g->rank);
    csv_str(f, rep_node_name(r, g->node));
    fprintf(f, ",%llu,%llu,%llu,%llu,%llu,%llu,", LLU(g->start), LLU(g->dur), LLU(g->ns[0]), LLU(g->ns[1]), LLU(g->ns[2]),
            LLU(g->ns[3]));
    csv_str(f, g->cause);
    fputc('\n', f);
}

static int csv(const struct agg_report *r, struct agg_csv *c) {
    if (CSV_TABLE(c, "gpu_idle", "rank,gaps,idle_ns,mpi_ns,l0_sync_ns,outside_recording_ns,host_compute_ns,denominator_ns,share",
                  r, r->idl, r->nidl, csv_idle) ||
        CSV_TABLE(c, "gpu_idle_waits", "rank,wait_state,function,blamed,idle_ns,share_of_rank_idle", r, r->iw, r->niw, csv_iw))
        return -1;
    return CSV_TABLE(c, "gpu_idle_gaps", "rank,device,start_ns,duration_ns,mpi_ns,l0_sync_ns,outside_recording_ns,"
                                         "host_compute_ns,cause", r, r->ig, r->nig, csv_gap);
}

/* ---------------------------------------------------------------- JSON */
static void json_causes(FILE *f, const struct r_idle *x) {
    for (int k = 0; k < AGG_IDLE_NCAUSES; k++) fprintf(f, ",\"%s\":%llu", cause_keys[k], LLU(x->ns[k]));
}

static void json(const struct agg_report *r, FILE *f) {
    const struct r_idle *j = &r->idle_job;
    fprintf(f, "\"gpu_idle\":{\"share_denominator\":\"denominator_ns = the rank's wall time x its devices\",\"gaps\":%llu,"
               "\"idle_ns\":%llu,\"denominator_ns\":%llu,\"share\":%.6f",
            LLU(j->gaps), LLU(j->total), LLU(j->denom), j->share);
    json_causes(f, j);
    fputs(",\"by_rank\":[", f);
    for (uint32_t i = 0; i < r->nidl; i++) {
        const struct r_idle *x = &r->idl[i];
        fprintf(f, "%s{\"rank\":%u,\"gaps\":%llu,\"idle_ns\":%llu,\"denominator_ns\":%llu,\"share\":%.6f", i ? ",\n" : "\n",
                x->rank, LLU(x->gaps), LLU(x->total), LLU(x->denom), x->share);
        json_causes(f, x);
        fputc('}', f);
    }
    fputs("],\"in_mpi\":[", f);
    for (uint32_t i = 0; i < r->niw; i++) {
        const struct r_idlewait *x = &r->iw[i];
        json_row(f, i);
        fprintf(f, "\"rank\":%u,", x->rank);
        json_kv(f, "wait_state", x->cls_name, true);
        json_kv(f, "function", x->fn, true);
        if (x->blamed != AGG_NONE) fprintf(f, "\"blamed\":%u,", x->blamed);
        fprintf(f, "\"idle_ns\":%llu,\"share_of_rank_idle\":%.6f}", LLU(x->ns), x->share);
    }
    fputs("],\"longest_gaps\":[", f);
    for (uint32_t i = 0; i < r->nig; i++) {
        const struct r_idlegap *g = &r->ig[i];
        json_row(f, i);
        fprintf(f, "\"rank\":%u,", g->rank);
        json_kv(f, "device", rep_node_name(r, g->node), true);
        fprintf(f, "\"start_ns\":%llu,\"duration_ns\":%llu", LLU(rep_since_start(r, g->start)), LLU(g->dur));
        for (int k = 0; k < AGG_IDLE_NCAUSES; k++) fprintf(f, ",\"%s\":%llu", cause_keys[k], LLU(g->ns[k]));
        fputc(',', f);
        json_kv(f, "cause", g->cause, false);
        fputc('}', f);
    }
    fputs("]}", f);
}

/* ---------------------------------------------------------------- HTML */
static void html_blamed(FILE *f, const struct agg_report *r, const void *row) {
    const struct r_idlewait *x = row;
    if (x->blamed == AGG_NONE) html_td_s(f, "");
    else html_td_u(f, x->blamed);
}

static const struct html_col iw_html[] = {
    HTML_COL("rank", RK_U32, IC(rank)),  HTML_COL("wait state", RK_STR, IC(cls_name)), HTML_COL("function", RK_STR, IC(fn)),
    HTML_FN("blamed", html_blamed), HTML_COL("idle", RK_NS, IC(ns)),        HTML_COL("of its idle", RK_PCT, IC(share)),
};

static void html(const struct agg_report *r, FILE *f) {
    if (!r->nidl) return;
    const struct r_idle *j = &r->idle_job;
    char a[64];
    agg_fmt_ns(a, sizeof(a), (double)j->total);
    fprintf(f, "<h2 id=\"gpu-idle\">GPU idle, and why</h2>\n<p>%s idle (%.1f%% of the devices' time): ", a, 100 * j->share);
    for (int k = 0; k < AGG_IDLE_NCAUSES; k++) {
        agg_fmt_ns(a, sizeof(a), (double)j->ns[k]);
        fprintf(f, "%s%s %s", k ? ", " : "", cause_keys[k], a);
    }
    fputs(".</p>\n", f);
    if (r->niw) HTML_TABLE(f, r, iw_html, r->iw, txt_min(r->niw, 100));
    if (r->nig) {
        fputs("<h3>Longest gaps</h3>\n<ol>\n", f);
        for (uint32_t i = 0; i < r->nig; i++) {
            agg_fmt_ns(a, sizeof(a), (double)r->ig[i].dur);
            fprintf(f, "<li>%s, rank %u, ", a, r->ig[i].rank);
            html_esc(f, rep_node_name(r, r->ig[i].node));
            fputs(": ", f);
            html_esc(f, r->ig[i].cause);
            fputs("</li>\n", f);
        }
        fputs("</ol>\n", f);
    }
}

const struct agg_section agg_sec_idle = {"GPU idle", NULL, text, csv, json, html};
