/* SPDX-License-Identifier: MIT */
/* The JSON report (docs/report-schema.md). Integers are exact; derived numbers are printed with
 * fixed formats, so equal statistics give equal bytes. */
#include "zc_agg_report.h"

#include <string.h>

#define LLU(x) ((unsigned long long)(x))

static void kv_s(FILE *f, const char *k, const char *v, bool comma) {
    fprintf(f, "\"%s\":", k);
    agg_json_str(f, v);
    if (comma) fputc(',', f);
}

static void lat_obj(FILE *f, const struct r_lat *x, bool pct) {
    fprintf(f, "\"count\":%llu,\"mean_ns\":%.1f,\"min_ns\":%llu,\"max_ns\":%llu", LLU(x->n), x->mean, LLU(x->min), LLU(x->max));
    if (pct) fprintf(f, ",\"p50_ns\":%llu,\"p90_ns\":%llu,\"p99_ns\":%llu", LLU(x->p50), LLU(x->p90), LLU(x->p99));
}

static void util_obj(FILE *f, const struct r_util *u) {
    fprintf(f,
            "\"busy_ns\":%llu,\"compute_ns\":%llu,\"copy_ns\":%llu,\"overlap_ns\":%llu,\"measurement_off_ns\":%llu,"
            "\"wall_ns\":%llu,\"denominator_ns\":%llu,\"utilisation\":%.6f,\"compute\":%.6f,\"copy\":%.6f,"
            "\"overlap_of_busy\":%.6f",
            LLU(u->busy), LLU(u->compute), LLU(u->copy), LLU(u->overlap), LLU(u->off), LLU(u->window), LLU(u->denom), u->util,
            u->util_compute, u->util_copy, u->overlap_share);
}

static void xfer_obj(FILE *f, const struct r_xfer *x) {
    kv_s(f, "kind", x->kind, true);
    kv_s(f, "memory", x->mem, true);
    kv_s(f, "direction", x->dir, true);
    fprintf(f, "\"calls\":%llu,", LLU(x->calls));
    if (x->xfer >> 16 == 1) fprintf(f, "\"bytes\":%llu,", LLU(x->bytes));
    else fputs("\"bytes\":null,", f);
    fprintf(f, "\"busy_ns\":%llu", LLU(x->busy));
}

static void simple_rows(FILE *f, const struct r_simple *v, uint32_t n, bool bytes) {
    fputc('[', f);
    for (uint32_t i = 0; i < n; i++) {
        fputs(i ? ",\n{" : "\n{", f);
        kv_s(f, "name", v[i].name, true);
        fprintf(f, "\"calls\":%llu,\"total_ns\":%llu,\"share\":%.6f,\"mean_ns\":%.1f,\"min_ns\":%llu,\"max_ns\":%llu",
                LLU(v[i].calls), LLU(v[i].total), v[i].share, v[i].mean, LLU(v[i].min), LLU(v[i].max));
        if (bytes) fprintf(f, ",\"bytes\":%llu", LLU(v[i].bytes));
        fputc('}', f);
    }
    fputc(']', f);
}

int agg_report_json(const struct agg_report *r, FILE *f) {
    const struct agg_defs *d = r->d;
    fprintf(f, "{\"schema_version\":%d,\n", AGG_SCHEMA_VERSION);
    kv_s(f, "generator", "zecoll-aggregate", true);
    kv_s(f, "archive", r->archive, true);
    fputs("\n\"units\":{\"time\":\"ns\",\"size\":\"bytes\",\"bandwidth\":\"bytes/s\",\"share\":\"fraction of the stated "
          "denominator\"},\n",
          f);
    fprintf(f, "\"percentiles\":{\"method\":\"nearest rank\",\"sketch\":\"log-linear, 128 buckets per power of two, "
               "exact below 128\",\"relative_error\":%.8f},\n",
            AGG_SKETCH_REL_ERROR);
    fprintf(f,
            "\"job\":{\"ranks\":%u,\"ranks_read\":%u,\"mpi\":%s,\"hosts\":%u,\"devices\":%u,\"thread_locations\":%u,"
            "\"stream_locations\":%u,\"first_ns\":%llu,\"last_ns\":%llu,\"wall_ns\":%llu,\"events\":%llu},\n",
            d->nranks, r->ranks_read, d->mpi ? "true" : "false", d->nhosts, d->ndevices, d->nthreads, d->nstreams,
            LLU(r->first), LLU(r->last), LLU(r->wall), LLU(r->events));

    /* kernels */
    fprintf(f, "\"kernels\":{\"share_denominator\":\"total_ns (all kernel time)\",\"total_ns\":%llu,\"rows\":[", LLU(r->k_total));
    for (uint32_t i = 0; i < r->nk; i++) {
        const struct r_kernel *k = &r->k[i];
        fputs(i ? ",\n{" : "\n{", f);
        kv_s(f, "name", k->name, true);
        fprintf(f,
                "\"calls\":%llu,\"total_ns\":%llu,\"share\":%.6f,\"mean_ns\":%.1f,\"min_ns\":%llu,\"max_ns\":%llu,"
                "\"stddev_ns\":%.1f,\"p50_ns\":%llu,\"p90_ns\":%llu,\"p99_ns\":%llu,",
                LLU(k->calls), LLU(k->total), k->share, k->mean, LLU(k->min), LLU(k->max), k->sd, LLU(k->p50), LLU(k->p90),
                LLU(k->p99));
        fprintf(f, "\"imbalance\":{\"ranks_running\":%u,\"rank_mean_ns\":%.1f,\"rank_max_ns\":%llu,\"slowest_rank\":%u,",
                k->ranks_running, k->rank_mean, LLU(k->rank_max), k->max_rank);
        kv_s(f, "slowest_host", k->max_host, true);
        kv_s(f, "slowest_device", k->max_device, true);
        fprintf(f, "\"max_over_mean\":%.6f,\"cv\":%.6f},\"slowest\":[", k->max_over_mean, k->rank_cv);
        for (uint32_t q = 0; k->top && q < k->top->n; q++) {
            const struct agg_top_ent *t = &k->top->e[q];
            fprintf(f, "%s{\"duration_ns\":%llu,\"rank\":%llu,", q ? "," : "", LLU(t->dur), LLU(t->rank));
            kv_s(f, "location", rep_loc_name(r, agg_loc_index(d, t->loc)), true);
            fprintf(f, "\"location_id\":%llu,\"start_ns\":%llu}", LLU(t->loc),
                    LLU(t->start > d->t0 ? t->start - d->t0 : 0));
        }
        fputs("]}", f);
    }
    fputs("]},\n", f);
    const struct {
        const char *key;
        const struct r_rowk *v;
        uint32_t n;
    } rk[] = {{"kernels_by_rank", r->kr, r->nkr}, {"kernels_by_device", r->kd, r->nkd}, {"kernels_by_queue", r->kq, r->nkq}};
    for (int t = 0; t < 3; t++) {
        fprintf(f, "\"%s\":[", rk[t].key);
        for (uint32_t i = 0; i < rk[t].n; i++) {
            const struct r_rowk *w = &rk[t].v[i];
            fputs(i ? ",\n{" : "\n{", f);
            kv_s(f, "kernel", agg_str(d, d->regions[w->region].name), true);
            if (t == 0) fprintf(f, "\"rank\":%u,", w->rank);
            else if (t == 1) kv_s(f, "device", rep_node_name(r, w->node), true);
            else {
                fprintf(f, "\"rank\":%u,", w->rank);
                kv_s(f, "queue", rep_loc_name(r, w->loc), true);
            }
            fprintf(f, "\"calls\":%llu,\"total_ns\":%llu,\"mean_ns\":%.1f,\"min_ns\":%llu,\"max_ns\":%llu}", LLU(w->calls),
                    LLU(w->total), w->mean, LLU(w->min), LLU(w->max));
        }
        fputs("],\n", f);
    }
    fprintf(f, "\"stragglers\":{\"kernels\":%u,\"ratio_denominator\":\"mean over ranks of the time in those kernels\",\"rows\":[",
            r->strag_kernels);
    for (uint32_t i = 0; i < r->nstrag; i++)
        fprintf(f, "%s{\"rank\":%u,\"top_kernels_ns\":%llu,\"ratio\":%.6f,\"mpi_ns\":%llu}", i ? ",\n" : "\n", r->strag[i].rank,
                LLU(r->strag[i].top_ns), r->strag[i].ratio, LLU(r->strag[i].mpi_ns));
    fputs("]},\n", f);

    /* transfers */
    fputs("\"transfers\":{\"bandwidth\":\"bytes / busy_ns (summed durations)\",\"rows\":[", f);
    for (uint32_t i = 0; i < r->nx; i++) {
        const struct r_xfer *x = &r->x[i];
        fputs(i ? ",\n{" : "\n{", f);
        xfer_obj(f, x);
        fprintf(f, ",\"mean_ns\":%.1f,\"min_ns\":%llu,\"max_ns\":%llu,", x->mean, LLU(x->min), LLU(x->max));
        if (x->xfer >> 16 == 1) fprintf(f, "\"bandwidth_Bps\":%.1f,\"median_bandwidth_Bps\":%llu}", x->bw, LLU(x->p50_bw));
        else fputs("\"bandwidth_Bps\":null,\"median_bandwidth_Bps\":null}", f);
    }
    fputs("]},\n\"transfers_by_size\":[", f);
    for (uint32_t i = 0, n = 0; i < r->nxs; i++) {
        const struct r_xfer *x = &r->xs[i];
        if (x->xfer >> 16 != 1) continue;
        fputs(n++ ? ",\n{" : "\n{", f);
        xfer_obj(f, x);
        fprintf(f, ",\"size_from\":%llu,\"size_to\":%llu,\"bandwidth_Bps\":%.1f,\"median_bandwidth_Bps\":%llu}", LLU(x->lo),
                LLU(x->hi), x->bw, LLU(x->p50_bw));
    }
    fputs("],\n\"transfers_by_rank\":[", f);
    for (uint32_t i = 0; i < r->nxr; i++) {
        fputs(i ? ",\n{" : "\n{", f);
        xfer_obj(f, &r->xr[i]);
        fprintf(f, ",\"rank\":%u}", r->xr[i].rank);
    }
    fputs("],\n\"barriers\":", f);
    simple_rows(f, r->bar, r->nbar, false);
    fputs(",\n", f);

    /* utilisation */
    fputs("\"utilisation\":{\"definition\":\"union of the busy intervals of kernels, transfers and fills per rank and "
          "device; denominator = the rank's wall time minus the time measurement was off there while the device was not busy\",\"job\":{",
          f);
    util_obj(f, &r->job);
    fputs("},\"devices\":[", f);
    for (uint32_t i = 0; i < r->nud; i++) {
        fputs(i ? ",\n{" : "\n{", f);
        kv_s(f, "device", rep_node_name(r, r->ud[i].node), true);
        fprintf(f, "\"ranks\":%u,", r->ud[i].rank);
        util_obj(f, &r->ud[i]);
        fputc('}', f);
    }
    fputs("],\"ranks\":[", f);
    for (uint32_t i = 0; i < r->nu; i++) {
        fprintf(f, "%s{\"rank\":%u,", i ? ",\n" : "\n", r->u[i].rank);
        kv_s(f, "device", rep_node_name(r, r->u[i].node), true);
        util_obj(f, &r->u[i]);
        fputc('}', f);
    }
    fputs("],\"idle_gaps\":[", f);
    for (uint32_t i = 0; i < r->ngap; i++)
        fprintf(f, "%s{\"from_ns\":%llu,\"to_ns\":%llu,\"count\":%llu,\"total_ns\":%llu}", i ? "," : "", LLU(r->gap[i].lo),
                LLU(r->gap[i].hi), LLU(r->gap[i].count), LLU(r->gap[i].total));
    fprintf(f, "],\n\"timeline\":{\"bins\":%u,\"t0_ns\":%llu,\"span_ns\":%llu,\"value\":\"busy / (bin length x the "
               "rank's devices); null: rank not read\",\"ranks\":[",
            r->nbins, LLU(d->t0), LLU(d->span));
    for (uint32_t q = 0; r->umat && q < d->nranks; q++) {
        fputs(q ? ",\n[" : "\n[", f);
        for (uint32_t b = 0; b < r->nbins; b++) {
            double v = r->umat[(size_t)q * r->nbins + b];
            if (v < 0) fprintf(f, "%snull", b ? "," : "");
            else fprintf(f, "%s%.4f", b ? "," : "", v);
        }
        fputc(']', f);
    }
    fputs("]}},\n", f);

    /* launch latency */
    fputs("\"launch_latency\":{\"definition\":\"device start - host Append start, first record of each Append\",\"all\":{", f);
    lat_obj(f, &r->lat_all, true);
    fputs("},\"by_operation\":[", f);
    for (uint32_t i = 0; i < r->nlk; i++) {
        fputs(i ? ",\n{" : "\n{", f);
        kv_s(f, "name", r->lk[i].name, true);
        lat_obj(f, &r->lk[i], true);
        fputc('}', f);
    }
    fputs("],\"by_queue\":[", f);
    for (uint32_t i = 0; i < r->nlq; i++) {
        fprintf(f, "%s{\"rank\":%u,", i ? ",\n" : "\n", r->lq[i].rank);
        kv_s(f, "queue", r->lq[i].name, true);
        lat_obj(f, &r->lq[i], false);
        fputc('}', f);
    }
    fputs("]},\n", f);

    /* MPI */
    fprintf(f, "\"mpi\":{\"share_denominator\":\"total_ns (all MPI time)\",\"total_ns\":%llu,\"functions\":", LLU(r->mpi_total));
    simple_rows(f, r->mpi, r->nmpi, true);
    fputs(",\"by_rank_share_denominator\":\"denominator_ns = wall_ns (the rank's first to last event) - measurement_off_ns "
          "(a thread of the rank paused by a recording window while none was in an MPI call): MPI time is only what "
          "was recorded\",\"by_rank\":[", f);
    for (uint32_t i = 0; i < r->nmr; i++)
        fprintf(f, "%s{\"rank\":%u,\"mpi_ns\":%llu,\"wall_ns\":%llu,\"measurement_off_ns\":%llu,\"denominator_ns\":%llu,"
                   "\"share_of_wall\":%.6f,\"kernel_ns\":%llu}",
                i ? ",\n" : "\n", r->mr[i].rank, LLU(r->mr[i].mpi_ns), LLU(r->mr[i].wall), LLU(r->mr[i].off),
                LLU(r->mr[i].denom), r->mr[i].share, LLU(r->mr[i].kernel_ns));
    fputs("],\"collectives\":[", f);
    for (uint32_t i = 0; i < r->ncoll; i++) {
        const struct r_coll *x = &r->coll[i];
        fputs(i ? ",\n{" : "\n{", f);
        kv_s(f, "communicator", x->comm_name, true);
        fprintf(f, "\"comm_id\":%u,\"size\":%u,", x->comm, x->comm_size);
        kv_s(f, "function", x->name, true);
        fprintf(f, "\"calls\":%llu,\"total_ns\":%llu,\"mean_ns\":%.1f,\"bytes\":%llu}", LLU(x->calls), LLU(x->total), x->mean,
                LLU(x->bytes));
    }
    fputs("]},\n", f);
    fprintf(f, "\"level_zero_api\":{\"share_denominator\":\"total_ns (all host Level Zero time)\",\"total_ns\":%llu,"
               "\"errors\":null,\"rows\":",
            LLU(r->api_total));
    simple_rows(f, r->api, r->napi, false);
    fputs("},\n", f);

    /* PAPI counters (A19) */
    fputs("\"papi\":{\"definition\":\"per counter: its value at a region's Leave minus at its Enter, summed over the "
          "region's instances with a Metric at both ends (accumulating integer counters only: summed); counted: from each "
          "thread's first sample to its last, summed over the rank's threads\",\"counters\":[",
          f);
    for (uint32_t i = 0; i < r->npc; i++) {
        const struct r_counter *x = &r->pc[i];
        fprintf(f, "%s{\"id\":%u,", i ? ",\n" : "\n", x->member);
        kv_s(f, "name", x->name, true);
        kv_s(f, "unit", x->unit, true);
        kv_s(f, "description", x->descr, true);
        kv_s(f, "type", x->type, true);
        kv_s(f, "mode", x->mode, true);
        fprintf(f, "\"summed\":%s,\"ranks\":%u}", x->summed ? "true" : "false", x->ranks);
    }
    fputs("],\"regions\":[", f);
    for (uint32_t i = 0; i < r->npm; i++) {
        const struct r_mregion *x = &r->pm[i];
        fputs(i ? ",\n{" : "\n{", f);
        kv_s(f, "counter", x->counter, true);
        kv_s(f, "unit", x->unit, true);
        kv_s(f, "region", x->name, true);
        kv_s(f, "kind", x->kind, true);
        fprintf(f, "\"calls\":%llu,\"total\":%llu,\"mean\":%.1f,\"min\":%llu,\"max\":%llu,\"region_ns\":%llu,", LLU(x->calls),
                LLU(x->total), x->mean, LLU(x->min), LLU(x->max), LLU(x->region_ns));
        if (x->of_time >= 0) fprintf(f, "\"of_time\":%.6f}", x->of_time);
        else fputs("\"of_time\":null}", f);
    }
    fputs("],\"ranks\":[", f);
    for (uint32_t i = 0; i < r->npr; i++) {
        const struct r_mrank *x = &r->pr[i];
        fprintf(f, "%s{\"rank\":%u,", i ? ",\n" : "\n", x->rank);
        kv_s(f, "counter", x->counter, true);
        kv_s(f, "unit", x->unit, true);
        fprintf(f, "\"threads\":%llu,\"counted\":%llu,\"in_mpi\":%llu,\"mpi_regions\":%llu,\"in_level_zero\":%llu,"
                   "\"level_zero_regions\":%llu}",
                LLU(x->threads), LLU(x->counted), LLU(x->in_mpi), LLU(x->mpi_regions), LLU(x->in_l0), LLU(x->l0_regions));
    }
    fputs("]},\n", f);

    /* data quality */
    fprintf(f,
            "\"data_quality\":{\"ranks_defined\":%u,\"ranks_read\":%u,\"missing_ranks\":%llu,\"missing_event_files\":%llu,"
            "\"short_event_files\":%llu,",
            d->nranks, r->ranks_read, LLU(r->dq_missing_ranks), LLU(r->dq_missing_locs), LLU(r->dq_short));
    if (d->salvaged[0]) kv_s(f, "salvaged", d->salvaged, true);
    else fputs("\"salvaged\":null,", f);
    if (r->dq_props) fprintf(f, "\"clamped\":%llu,\"dropped\":%llu,", LLU(r->dq_clamped), LLU(r->dq_dropped));
    else fputs("\"clamped\":null,\"dropped\":null,", f);
    fprintf(f,
            "\"unclosed_regions\":%llu,\"leaves_without_enter\":%llu,\"appends_without_record\":%llu,"
            "\"records_without_append\":%llu,\"reexecutions\":%llu,\"negative_latencies\":%llu,"
            "\"measurement_off\":{\"windows\":%llu,\"ns\":%llu},\"metric_records\":%llu,\"metric_records_unpaired\":%llu,"
            "\"metric_values_decreasing\":%llu,\"metric_regions_one_sided\":%llu,\"collector_flush_ns\":%llu,"
            "\"locations_without_clock_offsets\":%llu,\n\"locations\":[",
            LLU(r->dq_unclosed), LLU(r->dq_badleave), LLU(r->dq_cs_host_only), LLU(r->dq_cs_dev_only), LLU(r->dq_cs_repeat),
            LLU(r->dq_lat_negative), LLU(r->dq_off_count), LLU(r->dq_off_ns), LLU(r->dq_metrics), LLU(r->dq_m_unpaired),
            LLU(r->dq_m_decreasing), LLU(r->dq_m_one_sided), LLU(r->dq_flush_ns), LLU(r->dq_no_offsets));
    for (uint32_t i = 0; i < r->nloc; i++) {
        const struct r_loc *x = &r->loc[i];
        fprintf(f, "%s{\"rank\":%u,", i ? ",\n" : "\n", x->rank);
        kv_s(f, "location", rep_loc_name(r, x->li), true);
        fprintf(f, "\"location_id\":%llu,\"type\":\"%s\",\"events_read\":%llu,\"events_defined\":%llu,",
                LLU(d->locs[x->li].id), d->locs[x->li].type == AGG_LOC_THREAD ? "thread" : d->locs[x->li].type == AGG_LOC_STREAM ? "stream" : "other",
                LLU(x->read), LLU(x->defined));
        if (x->props) fprintf(f, "\"recorded\":%llu,\"clamped\":%llu,\"dropped\":%llu,", LLU(x->recorded), LLU(x->clamped), LLU(x->dropped));
        else fputs("\"recorded\":null,\"clamped\":null,\"dropped\":null,", f);
        fprintf(f,
                "\"metrics\":%llu,\"unclosed\":%llu,\"leaves_without_enter\":%llu,\"measurement_off\":%llu,"
                "\"measurement_off_ns\":%llu,\"clock_offsets\":%llu,\"missing_file\":%s}",
                LLU(x->metrics), LLU(x->unclosed), LLU(x->badleave), LLU(x->offcount), LLU(x->offns), LLU(x->noffsets),
                x->missing ? "true" : "false");
    }
    fputs("],\n\"ranks\":[", f);
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
    fputs("]}}\n", f);
    return ferror(f) ? -1 : 0;
}
