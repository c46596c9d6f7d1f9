/* SPDX-License-Identifier: MIT */
/* The data quality section: what the archive held against what its definitions promise (events
 * per location, missing files and ranks), the collector's own counts (clamped, dropped), what did
 * not match (regions never left, Appends without a device record), measurement-off windows,
 * clock offsets with their uncertainty and drift, PAPI records that break A19, where a salvaged
 * archive's data ends, and the Level Zero spec versions with the calls to entries the collector
 * passed through untraced (A21). */
#include "zc_agg_report.h"

/* ---------------------------------------------------------------- build */
static int build_locations(struct agg_report *r, const struct agg_stats *s) {
    const struct agg_defs *d = r->d;
    if (!REP_ALLOC(r, r->loc, d->nlocs)) return -1;
    for (uint32_t li = 0; li < d->nlocs; li++) {
        const struct agg_loc *L = &d->locs[li];
        const struct agg_acc *a = agg_stats_find(s, T_LOC, 0, li, 0);
        struct r_loc *w = &r->loc[r->nloc++];
        *w = (struct r_loc){.li = li, .rank = L->proc, .defined = L->def_events, .recorded = L->p_events,
                            .clamped = L->p_clamped, .dropped = L->p_dropped, .props = L->have_props != 0,
                            .missing = L->missing};
        if (a) {
            w->read = a->n;
            w->metrics = a->sum;
            w->unclosed = a->x[0];
            w->badleave = a->x[1];
            w->offcount = a->x[2];
            w->offns = a->x[3];
            w->noffsets = a->bytes;
        }
        /* A4: in an MPI job every location with events has its rank's clock offsets */
        r->dq_no_offsets += d->mpi && w->read > 0 && w->noffsets == 0;
        r->dq_missing_locs += L->missing;
        r->dq_unclosed += w->unclosed;
        r->dq_badleave += w->badleave;
        r->dq_clamped += w->clamped;
        r->dq_dropped += w->dropped;
        r->dq_metrics += w->metrics;
        r->dq_short += !L->missing && w->read < w->defined;
    }
    return 0;
}

/* A rank is missing when it was not read, or when every location that should have events lacks
 * its file. */
static bool rank_missing(const struct agg_defs *d, uint32_t q, const struct agg_rank *x) {
    uint32_t with_events = 0, missing = 0;
    for (uint32_t i = 0; q < d->nprocs && i < d->procs[q].nlocs; i++) {
        const struct agg_loc *L = &d->locs[d->procs[q].locs[i]];
        with_events += L->def_events > 0;
        missing += L->missing;
    }
    return !x->present || (with_events > 0 && missing == with_events);
}

/* A20: a salvaged rank's data end, which each of its locations carries on the rank's clock,
 * moved onto the job's clock by the rank's offsets (interpolated as OTF2 does); 0 = none */
static uint64_t data_end(const struct agg_defs *d, uint32_t q, const struct agg_rank *x) {
    uint64_t end = 0;
    for (uint32_t i = 0; q < d->nprocs && i < d->procs[q].nlocs; i++) {
        uint64_t e = d->locs[d->procs[q].locs[i]].p_data_end;
        end = e > end ? e : end;
    }
    if (!end) return 0;
    long double off = 0;
    if (x->noffsets == 1 || (x->noffsets >= 2 && x->off_t1 == x->off_t0)) off = (long double)x->off_v0;
    else if (x->noffsets >= 2)
        off = (long double)x->off_v0 + ((long double)end - (long double)x->off_t0) * (long double)(x->off_v1 - x->off_v0) /
                                           ((long double)x->off_t1 - (long double)x->off_t0);
    return (uint64_t)((long double)end + off);
}

static int build_ranks(struct agg_report *r, const struct agg_stats *s) {
    const struct agg_defs *d = r->d;
    if (!REP_ALLOC(r, r->rq, d->nranks)) return -1;
    for (uint32_t q = 0; q < d->nranks; q++) {
        const struct agg_rank *x = &s->ranks[q];
        struct r_rankq *w = &r->rq[r->nrq++];
        *w = (struct r_rankq){.rank = q, .present = x->present != 0, .events = x->events, .cs_host_only = x->cs_host_only,
                              .cs_dev_only = x->cs_dev_only, .cs_repeat = x->cs_repeat, .lat_negative = x->lat_negative,
                              .lat_negative_max = x->lat_negative_max, .off_count = x->off_count, .off_ns = x->off_ns,
                              .noffsets = x->noffsets, .off_t0 = x->off_t0, .off_t1 = x->off_t1, .off_v0 = x->off_v0,
                              .off_v1 = x->off_v1, .first = x->first, .last = x->last, .data_end = data_end(d, q, x)};
        /* the standard deviations travel as IEEE bits in the integer statistics */
        memcpy(&w->sd0, &x->off_sd0, sizeof(double));
        memcpy(&w->sd1, &x->off_sd1, sizeof(double));
        if (x->noffsets >= 2 && x->off_t1 > x->off_t0)
            w->drift_ppm = (double)(x->off_v1 - x->off_v0) * 1e6 / (double)(x->off_t1 - x->off_t0);
        r->dq_missing_ranks += rank_missing(d, q, x);
        r->dq_off_count += x->off_count;
        r->dq_off_ns += x->off_ns;
        r->dq_cs_host_only += x->cs_host_only;
        r->dq_cs_dev_only += x->cs_dev_only;
        r->dq_cs_repeat += x->cs_repeat;
        r->dq_lat_negative += x->lat_negative;
    }
    return 0;
}

/* A21: ZECOLL::L0_UNTRACED, "name n, name n, ..." (most calls first), as rows, then the names of
 * ZECOLL::L0_UNTRACED_UNCOUNTED, "name, name, ...", as rows whose calls are not known */
static uint32_t items(const char *p) {
    uint32_t n = *p != 0;
    for (const char *q = p; *q; q++) n += *q == ',';
    return n;
}
static int build_untraced(struct agg_report *r) {
    const char *p = r->d->l0_untraced, *u = r->d->l0_uncounted;
    uint32_t n = items(p), nu = items(u);
    if (!n && !nu) return 0;
    if (!REP_ALLOC(r, r->unt, n + nu)) return -1;
    while (*p && r->nunt < n) {
        struct r_untraced *x = &r->unt[r->nunt];
        unsigned long long calls;
        int used = 0;
        while (*p == ' ' || *p == ',') p++;
        if (sscanf(p, "%127s %llu%n", x->name, &calls, &used) != 2) break; /* a cut list ends: "..." */
        x->calls = calls;
        r->nunt++;
        p += used;
    }
    for (uint32_t i = 0; i < nu; i++) {
        struct r_untraced *x = &r->unt[r->nunt];
        int used = 0;
        while (*u == ' ' || *u == ',') u++;
        if (sscanf(u, "%127[^,]%n", x->name, &used) != 1) break;
        x->uncounted = true;
        r->nunt++;
        u += used;
    }
    return 0;
}

static int build(struct agg_report *r, const struct agg_stats *s) {
    r->dq_props = r->d->have_props;
    return build_locations(r, s) || build_ranks(r, s) || build_untraced(r) ? -1 : 0;
}

/* the counted untraced entries (the first rows) */
static uint32_t counted(const struct agg_report *r) {
    uint32_t n = 0;
    while (n < r->nunt && !r->unt[n].uncounted) n++;
    return n;
}

/* the counted untraced entries as "name n, ..." (at most `max`) */
static void untraced_list(FILE *f, const struct agg_report *r, uint32_t max) {
    uint32_t nc = counted(r);
    for (uint32_t i = 0; i < nc && i < max; i++) fprintf(f, "%s%s %llu", i ? ", " : "", r->unt[i].name, LLU(r->unt[i].calls));
    if (nc > max) fputs(", ...", f);
}

/* the functions handed out by name whose calls zecoll could not count, "name, ..." (all: the
 * collector names only those past its counters or off x86-64) */
static void uncounted_list(FILE *f, const struct agg_report *r, bool html) {
    for (uint32_t i = counted(r), k = 0; i < r->nunt; i++, k++) {
        if (k) fputs(", ", f);
        if (html) html_esc(f, r->unt[i].name);
        else fputs(r->unt[i].name, f);
    }
}
#define UNCOUNTED_TEXT "functions handed out by name that it passes through untraced and could not count: "


/* ---------------------------------------------------------------- text */
static uint64_t end_since_first(const struct agg_report *r, const struct r_rankq *x) {
    return x->data_end > r->first ? x->data_end - r->first : 0;
}

static void text_salvaged(const struct agg_report *r, struct agg_text *t) {
    char a[64];
    fprintf(t->f, "salvaged: rebuilt by zecoll salvage from the journal of a run that died (%s); data ends at "
                  "(after the start):",
            r->d->salvaged);
    uint32_t shown = 0;
    for (uint32_t i = 0; i < r->nrq && shown < 16; i++) {
        const struct r_rankq *x = &r->rq[i];
        if (!x->data_end) continue;
        shown++;
        fprintf(t->f, " rank %u %s;", x->rank, TXT_NS(a, end_since_first(r, x)));
    }
    fprintf(t->f, "%s\n", r->nrq > 16 ? " ..." : "");
}

static void text_offsets(const struct agg_report *r, struct agg_text *t) {
    if (r->dq_no_offsets)
        fprintf(t->f, "%llu locations with events have no clock offsets: their times are on their own clock\n",
                LLU(r->dq_no_offsets));
    fprintf(t->f, "clock offsets (to rank 0; stddev = measurement uncertainty):");
    uint32_t shown = 0;
    for (uint32_t i = 0; i < r->nrq && shown < 8; i++) {
        const struct r_rankq *x = &r->rq[i];
        if (!x->present) continue;
        shown++;
        if (x->noffsets == 0) fprintf(t->f, " %u: none;", x->rank);
        else fprintf(t->f, " %u: %+lld..%+lld ns (sd %.0f ns, drift %.2f ppm);", x->rank, (long long)x->off_v0,
                     (long long)x->off_v1, x->sd0 > x->sd1 ? x->sd0 : x->sd1, x->drift_ppm);
    }
    fprintf(t->f, "%s\n", r->nrq > 8 ? " ..." : "");
}

static void text(const struct agg_report *r, struct agg_text *t) {
    const struct agg_defs *d = r->d;
    FILE *f = t->f;
    char a[64], b[64];
    txt_heading(t, "Data quality");
    fprintf(f, "ranks: %u defined, %u read%s; locations: %u (%llu with a missing event file, %llu with fewer events than "
               "defined)\n",
            d->nranks, r->ranks_read, r->dq_missing_ranks ? " (some missing)" : "", d->nlocs, LLU(r->dq_missing_locs),
            LLU(r->dq_short));
    if (r->dq_props)
        fprintf(f, "collector counts: %llu records clamped (completed out of order), %llu dropped\n", LLU(r->dq_clamped),
                LLU(r->dq_dropped));
    else fprintf(f, "collector counts: clamped/dropped unknown (the archive has no zecoll:: location properties)\n");
    if (d->salvaged[0]) text_salvaged(r, t);
    if (d->l0_known[0]) {
        fprintf(f, "Level Zero: spec %s asked by the loader, %s known to zecoll; %llu call(s) to entries it passes through "
                   "untraced%s",
                d->l0_asked[0] ? d->l0_asked : "(none)", d->l0_known, LLU(d->l0_untraced_calls), counted(r) ? ": " : "");
        untraced_list(f, r, 8);
        fputc('\n', f);
        if (counted(r) < r->nunt) {
            fputs("Level Zero: " UNCOUNTED_TEXT, f);
            uncounted_list(f, r, false);
            fputc('\n', f);
        }
    } else fprintf(f, "Level Zero: spec versions and untraced calls unknown (the archive has no ZECOLL::L0_ properties)\n");
    fprintf(f, "unmatched: %llu regions never left, %llu Leaves without their Enter; %llu Appends without a device record, "
               "%llu device records without an Append; %llu re-executions of recorded lists\n",
            LLU(r->dq_unclosed), LLU(r->dq_badleave), LLU(r->dq_cs_host_only), LLU(r->dq_cs_dev_only), LLU(r->dq_cs_repeat));
    fprintf(f, "measurement off: %llu windows, %s (summed over locations); collector's own buffer flushes %s\n",
            LLU(r->dq_off_count), TXT_NS(a, r->dq_off_ns), TXT_NS(b, r->dq_flush_ns));
    fprintf(f, "PAPI metric records: %llu read; %llu not right before an Enter/Leave at their time (or of an unknown class), "
               "%llu values lower than the thread's previous one, %llu regions with counters at one end only\n",
            LLU(r->dq_metrics), LLU(r->dq_m_unpaired), LLU(r->dq_m_decreasing), LLU(r->dq_m_one_sided));
    if (r->dq_lat_negative)
        fprintf(f, "%llu device starts earlier than their Append (clock conversion error)\n", LLU(r->dq_lat_negative));
    if (d->mpi) text_offsets(r, t);
}

/* ---------------------------------------------------------------- CSV */
static void csv_location(FILE *f, const struct agg_report *r, const void *row) {
    const struct r_loc *x = row;
    fprintf(f, "%u,", x->rank);
    csv_str(f, rep_loc_name(r, x->li));
    fprintf(f, ",%llu,%llu,%llu,", LLU(r->d->locs[x->li].id), LLU(x->read), LLU(x->defined));
    if (x->props) fprintf(f, "%llu,%llu,%llu", LLU(x->recorded), LLU(x->clamped), LLU(x->dropped));
    else fputs(",,", f); /* unknown without the collector's location properties */
    fprintf(f, ",%llu,%llu,%llu,%llu,%llu,%d\n", LLU(x->metrics), LLU(x->unclosed), LLU(x->badleave), LLU(x->offcount),
            LLU(x->offns), x->missing);
}

static void csv_rank(FILE *f, const struct agg_report *r, const void *row) {
    const struct r_rankq *x = row;
    fprintf(f, "%u,%d,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%lld,%lld,%.1f,%.1f,%.4f\n", x->rank, x->present, LLU(x->events),
            LLU(x->cs_host_only), LLU(x->cs_dev_only), LLU(x->cs_repeat), LLU(x->lat_negative), LLU(x->off_count),
            LLU(x->off_ns), LLU(x->noffsets), (long long)x->off_v0, (long long)x->off_v1, x->sd0, x->sd1, x->drift_ppm);
}

static void csv_untraced(FILE *f, const struct agg_report *r, const void *row) {
    (void)r;
    const struct r_untraced *x = row;
    csv_str(f, x->name);
    if (x->uncounted) fputs(",\n", f); /* not known: the collector could not count them */
    else fprintf(f, ",%llu\n", LLU(x->calls));
}

static int csv(const struct agg_report *r, struct agg_csv *c) {
    if (CSV_TABLE(c, "data_quality_locations",
                  "rank,location,location_id,events_read,events_defined,recorded,clamped,dropped,metrics,unclosed,"
                  "bad_leaves,measurement_off,measurement_off_ns,missing_file",
                  r, r->loc, r->nloc, csv_location))
        return -1;
    if (CSV_TABLE(c, "data_quality_untraced", "entry,calls", r, r->unt, r->nunt, csv_untraced)) return -1;
    return CSV_TABLE(c, "data_quality_ranks",
                     "rank,read,events,appends_without_record,records_without_append,reexecutions,negative_latencies,"
                     "measurement_off,measurement_off_ns,clock_offsets,offset_first_ns,offset_last_ns,stddev_first_ns,"
                     "stddev_last_ns,drift_ppm",
                     r, r->rq, r->nrq, csv_rank);
}

/* ---------------------------------------------------------------- JSON */
static void json_totals(const struct agg_report *r, FILE *f) {
    const struct agg_defs *d = r->d;
    fprintf(f,
            "\"data_quality\":{\"ranks_defined\":%u,\"ranks_read\":%u,\"missing_ranks\":%llu,\"missing_event_files\":%llu,"
            "\"short_event_files\":%llu,",
            d->nranks, r->ranks_read, LLU(r->dq_missing_ranks), LLU(r->dq_missing_locs), LLU(r->dq_short));
    if (d->salvaged[0]) json_kv(f, "salvaged", d->salvaged, true);
    else fputs("\"salvaged\":null,", f);
    if (r->dq_props) fprintf(f, "\"clamped\":%llu,\"dropped\":%llu,", LLU(r->dq_clamped), LLU(r->dq_dropped));
    else fputs("\"clamped\":null,\"dropped\":null,", f);
    if (d->l0_known[0]) {
        fputs("\"level_zero\":{", f);
        json_kv(f, "spec_known", d->l0_known, true);
        if (d->l0_asked[0]) json_kv(f, "spec_asked", d->l0_asked, true);
        else fputs("\"spec_asked\":null,", f);
        fprintf(f, "\"untraced_calls\":%llu,\"untraced\":[", LLU(d->l0_untraced_calls));
        uint32_t nc = counted(r);
        for (uint32_t i = 0; i < nc; i++) {
            fputs(i ? ",{" : "{", f);
            json_kv(f, "entry", r->unt[i].name, true);
            fprintf(f, "\"calls\":%llu}", LLU(r->unt[i].calls));
        }
        fputs("],\"untraced_uncounted\":[", f);
        for (uint32_t i = nc; i < r->nunt; i++) {
            if (i > nc) fputc(',', f);
            agg_json_str(f, r->unt[i].name);
        }
        fputs("]},", f);
    } else fputs("\"level_zero\":null,", f);
    fprintf(f,
            "\"unclosed_regions\":%llu,\"leaves_without_enter\":%llu,\"appends_without_record\":%llu,"
            "\"records_without_append\":%llu,\"reexecutions\":%llu,\"negative_latencies\":%llu,"
            "\"measurement_off\":{\"windows\":%llu,\"ns\":%llu},\"metric_records\":%llu,\"metric_records_unpaired\":%llu,"
            "\"metric_values_decreasing\":%llu,\"metric_regions_one_sided\":%llu,\"collector_flush_ns\":%llu,"
            "\"locations_without_clock_offsets\":%llu,",
            LLU(r->dq_unclosed), LLU(r->dq_badleave), LLU(r->dq_cs_host_only), LLU(r->dq_cs_dev_only), LLU(r->dq_cs_repeat),
            LLU(r->dq_lat_negative), LLU(r->dq_off_count), LLU(r->dq_off_ns), LLU(r->dq_metrics), LLU(r->dq_m_unpaired),
            LLU(r->dq_m_decreasing), LLU(r->dq_m_one_sided), LLU(r->dq_flush_ns), LLU(r->dq_no_offsets));
}

static const char *loc_type(uint8_t type) {
    return type == AGG_LOC_THREAD ? "thread" : type == AGG_LOC_STREAM ? "stream" : "other";
}

static void json_locations(const struct agg_report *r, FILE *f) {
    const struct agg_defs *d = r->d;
    fputs("\n\"locations\":[", f);
    for (uint32_t i = 0; i < r->nloc; i++) {
        const struct r_loc *x = &r->loc[i];
        fprintf(f, "%s{\"rank\":%u,", i ? ",\n" : "\n", x->rank);
        json_kv(f, "location", rep_loc_name(r, x->li), true);
        fprintf(f, "\"location_id\":%llu,\"type\":\"%s\",\"events_read\":%llu,\"events_defined\":%llu,", LLU(d->locs[x->li].id),
                loc_type(d->locs[x->li].type), LLU(x->read), LLU(x->defined));
        if (x->props)
            fprintf(f, "\"recorded\":%llu,\"clamped\":%llu,\"dropped\":%llu,", LLU(x->recorded), LLU(x->clamped),
                    LLU(x->dropped));
        else fputs("\"recorded\":null,\"clamped\":null,\"dropped\":null,", f);
        fprintf(f,
                "\"metrics\":%llu,\"unclosed\":%llu,\"leaves_without_enter\":%llu,\"measurement_off\":%llu,"
                "\"measurement_off_ns\":%llu,\"clock_offsets\":%llu,\"missing_file\":%s}",
                LLU(x->metrics), LLU(x->unclosed), LLU(x->badleave), LLU(x->offcount), LLU(x->offns), LLU(x->noffsets),
                x->missing ? "true" : "false");
    }
    fputs("],\n", f);
}

static void json_ranks(const struct agg_report *r, FILE *f) {
    fputs("\"ranks\":[", f);
    for (uint32_t i = 0; i < r->nrq; i++) {
        const struct r_rankq *x = &r->rq[i];
        fprintf(f,
                "%s{\"rank\":%u,\"read\":%s,\"events\":%llu,\"appends_without_record\":%llu,\"records_without_append\":%llu,"
                "\"reexecutions\":%llu,\"negative_latencies\":%llu,\"negative_latency_max_ns\":%llu,"
                "\"measurement_off\":%llu,\"measurement_off_ns\":%llu,\"clock_offsets\":%llu,\"first_ns\":%llu,\"last_ns\":%llu",
                i ? ",\n" : "\n", x->rank, x->present ? "true" : "false", LLU(x->events), LLU(x->cs_host_only),
                LLU(x->cs_dev_only), LLU(x->cs_repeat), LLU(x->lat_negative), LLU(x->lat_negative_max), LLU(x->off_count),
                LLU(x->off_ns), LLU(x->noffsets), LLU(x->first), LLU(x->last));
        if (x->data_end) fprintf(f, ",\"data_end_ns\":%llu", LLU(x->data_end));
        if (x->noffsets)
            fprintf(f, ",\"offset_first_ns\":%lld,\"offset_last_ns\":%lld,\"stddev_first_ns\":%.1f,\"stddev_last_ns\":%.1f,"
                       "\"drift_ppm\":%.4f",
                    (long long)x->off_v0, (long long)x->off_v1, x->sd0, x->sd1, x->drift_ppm);
        fputc('}', f);
    }
    fputs("]}", f);
}

static void json(const struct agg_report *r, FILE *f) {
    json_totals(r, f);
    json_locations(r, f);
    json_ranks(r, f);
}

/* ---------------------------------------------------------------- HTML */
static void html(const struct agg_report *r, FILE *f) {
    const struct agg_defs *d = r->d;
    char a[64];
    fputs("<h2>Data quality</h2><div class=\"note\"><ul>", f);
    fprintf(f, "<li>ranks: %u defined, %u read, %llu missing; locations: %u, %llu missing event files, %llu shorter than "
               "defined</li>",
            d->nranks, r->ranks_read, LLU(r->dq_missing_ranks), d->nlocs, LLU(r->dq_missing_locs), LLU(r->dq_short));
    if (d->salvaged[0]) {
        fputs("<li>salvaged: rebuilt by zecoll salvage from the journal of a run that died (", f);
        html_esc(f, d->salvaged);
        fputs("); data ends at (after the start):", f);
        for (uint32_t i = 0; i < r->nrq; i++)
            if (r->rq[i].data_end) fprintf(f, " rank %u %s;", r->rq[i].rank, TXT_NS(a, end_since_first(r, &r->rq[i])));
        fputs("</li>", f);
    }
    if (d->l0_known[0]) {
        fputs("<li>Level Zero: spec ", f);
        html_esc(f, d->l0_asked[0] ? d->l0_asked : "(none)");
        fputs(" asked by the loader, ", f);
        html_esc(f, d->l0_known);
        fprintf(f, " known to zecoll; %llu call(s) to entries it passes through untraced", LLU(d->l0_untraced_calls));
        uint32_t nc = counted(r);
        for (uint32_t i = 0; i < nc; i++) {
            fputs(i ? ", " : ": ", f);
            html_esc(f, r->unt[i].name);
            fprintf(f, " %llu", LLU(r->unt[i].calls));
        }
        fputs("</li>", f);
        if (nc < r->nunt) {
            fputs("<li>Level Zero: " UNCOUNTED_TEXT, f);
            uncounted_list(f, r, true);
            fputs("</li>", f);
        }
    } else fputs("<li>Level Zero: spec versions and untraced calls unknown (no ZECOLL::L0_ properties)</li>", f);
    if (r->dq_props) fprintf(f, "<li>collector: %llu records clamped, %llu dropped</li>", LLU(r->dq_clamped), LLU(r->dq_dropped));
    else fputs("<li>collector counts unknown (no zecoll:: location properties)</li>", f);
    fprintf(f, "<li>unmatched: %llu regions never left, %llu Leaves without Enter, %llu Appends without a device record, %llu "
               "device records without an Append</li>",
            LLU(r->dq_unclosed), LLU(r->dq_badleave), LLU(r->dq_cs_host_only), LLU(r->dq_cs_dev_only));
    fprintf(f, "<li>measurement off: %llu windows, %s over all locations</li>", LLU(r->dq_off_count), TXT_NS(a, r->dq_off_ns));
    fprintf(f, "<li>PAPI metric records: %llu read, %llu without their Enter/Leave, %llu decreasing values, %llu regions "
               "with counters at one end only</li>",
            LLU(r->dq_metrics), LLU(r->dq_m_unpaired), LLU(r->dq_m_decreasing), LLU(r->dq_m_one_sided));
    fputs("</ul></div>\n", f);
}

const struct agg_section agg_sec_quality = {"data quality", build, text, csv, json, html};
