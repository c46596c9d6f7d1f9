/* SPDX-License-Identifier: MIT */
/* zecoll-synth's definitions: each location's clock offsets (local definitions) and the global
 * definitions of a zecoll archive (docs/archive.md), with ids dense and ascending per type. Rank
 * r is process group r on host r / 8 with its accelerator group R + r on device (r % 8) / 2; its
 * thread and Q streams are named as the collector names them. */
#include "zc_synth.h"

#include <stdio.h>
#include <stdlib.h>

/* The rank's offset to rank 0's clock at both ends of the run (the skew undone, A4). */
static void write_clock_offsets(const struct synth *s) {
    const struct opts *o = s->o;
    OTF2_Archive_OpenDefFiles(s->ar);
    for (uint32_t r = 0; r < o->ranks; r++) {
        int64_t skew = synth_skew_of(o, r);
        for (uint32_t k = 0; k <= o->queues; k++) {
            OTF2_DefWriter *dw = OTF2_Archive_GetDefWriter(s->ar, synth_loc_id(r, k));
            OTF2_DefWriter_WriteClockOffset(dw, (uint64_t)(1000000000ll + skew), -skew, r ? 1000.0 : 0.0);
            OTF2_DefWriter_WriteClockOffset(dw, (uint64_t)((int64_t)s->gmax + skew), -skew, r ? 1000.0 : 0.0);
            OTF2_Archive_CloseDefWriter(s->ar, dw);
        }
    }
    OTF2_Archive_CloseDefFiles(s->ar);
}

/* the string ids the other definitions name; the lists start at their first id */
struct strs {
    uint32_t empty, l0, machine, node, devcls, uuid, cs, win, comm, mpi, world, master, ctx, pe, pc, pd, metric, unit,
        clock, ns;
    uint32_t reg[NREGIONS], host0, dev0, uuid0, rank0, stream0;
};

struct gdefs {
    OTF2_GlobalDefWriter *g;
    uint32_t n; /* strings so far */
    uint32_t nhosts, ndev;
};

static uint32_t str(struct gdefs *x, const char *s) {
    OTF2_GlobalDefWriter_WriteString(x->g, x->n, s);
    return x->n++;
}

static void write_strings(struct gdefs *x, const struct opts *o, struct strs *s) {
    char buf[128];
    s->empty = str(x, ""), s->l0 = str(x, "Level Zero"), s->machine = str(x, "machine"), s->node = str(x, "node");
    s->devcls = str(x, "Level Zero Device"), s->uuid = str(x, "UUID"), s->cs = str(x, "callsite id");
    s->win = str(x, "L0_WINDOW"), s->comm = str(x, "L0"), s->mpi = str(x, "MPI"), s->world = str(x, "MPI_COMM_WORLD");
    s->master = str(x, "Master thread"), s->ctx = str(x, "L0 Context 0"), s->pe = str(x, "zecoll::events");
    s->pc = str(x, "zecoll::clamped"), s->pd = str(x, "zecoll::dropped"), s->metric = str(x, "PAPI_TOT_INS");
    s->unit = str(x, "#"), s->clock = str(x, "perf::TASK-CLOCK"), s->ns = str(x, "ns");
    for (int i = 0; i < NREGIONS; i++) s->reg[i] = str(x, synth_region_names[i]);
    s->host0 = x->n;
    for (uint32_t h = 0; h < x->nhosts; h++) snprintf(buf, sizeof(buf), "synth-node%u", h), str(x, buf);
    s->dev0 = x->n;
    for (uint32_t k = 0; k < x->ndev; k++) snprintf(buf, sizeof(buf), "synth GPU %u [%u]", k, k % 4), str(x, buf);
    s->uuid0 = x->n;
    for (uint32_t k = 0; k < x->ndev; k++) snprintf(buf, sizeof(buf), "73796e7468%022x", k), str(x, buf);
    s->rank0 = x->n;
    for (uint32_t r = 0; r < o->ranks; r++) snprintf(buf, sizeof(buf), "MPI Rank %u", r), str(x, buf);
    s->stream0 = x->n;
    for (uint32_t k = 0; k < 4; k++)
        for (uint32_t q = 0; q < o->queues; q++) {
            if (o->brk.a8 && k == 0 && q == 0) snprintf(buf, sizeof(buf), "GPU stream"); /* not a queue's name */
            else snprintf(buf, sizeof(buf), "L0[%u:%u]", k, q);
            str(x, buf);
        }
}

/* A9, A10: roles and paradigms say what a region is */
static void write_regions(struct gdefs *x, const struct strs *s) {
    OTF2_GlobalDefWriter_WriteParadigm(x->g, OTF2_PARADIGM_OPENCL, s->l0, OTF2_PARADIGM_CLASS_ACCELERATOR);
    for (int i = 0; i < NREGIONS; i++) {
        OTF2_RegionRole role = OTF2_REGION_ROLE_FUNCTION;
        OTF2_Paradigm par = OTF2_PARADIGM_OPENCL;
        if (i == R_MPI_INIT || i == R_MPI_FINALIZE) par = OTF2_PARADIGM_MPI;
        if (i == R_MPI_ALLREDUCE) par = OTF2_PARADIGM_MPI, role = OTF2_REGION_ROLE_COLL_ALL2ALL;
        if (i >= R_MPI_SEND && i <= R_MPI_SSEND) par = OTF2_PARADIGM_MPI, role = OTF2_REGION_ROLE_POINT2POINT;
        if (i == R_MPI_BCAST) par = OTF2_PARADIGM_MPI, role = OTF2_REGION_ROLE_COLL_ONE2ALL;
        if (i == R_MPI_REDUCE) par = OTF2_PARADIGM_MPI, role = OTF2_REGION_ROLE_COLL_ALL2ONE;
        if (i == R_MPI_BARRIER) par = OTF2_PARADIGM_MPI, role = OTF2_REGION_ROLE_BARRIER;
        if (i == R_APP_LAUNCH) role = OTF2_REGION_ROLE_WRAPPER;
        if (i == R_APP_COPY || (i >= R_COPY0 && i <= R_FILL)) role = OTF2_REGION_ROLE_DATA_TRANSFER;
        if (i == R_BARRIER) role = OTF2_REGION_ROLE_BARRIER;
        OTF2_GlobalDefWriter_WriteRegion(x->g, (uint32_t)i, s->reg[i], s->reg[i], s->empty, role, par, OTF2_REGION_FLAG_NONE,
                                         s->empty, 0, 0);
    }
    OTF2_GlobalDefWriter_WriteParameter(x->g, 0, s->cs, OTF2_PARAMETER_TYPE_UINT64);
}

/* machine, hosts (1 + h), devices (1 + nhosts + k) with their UUIDs (A6) */
static void write_tree(struct gdefs *x, const struct strs *s) {
    OTF2_GlobalDefWriter_WriteSystemTreeNode(x->g, 0, s->machine, s->machine, OTF2_UNDEFINED_SYSTEM_TREE_NODE);
    for (uint32_t h = 0; h < x->nhosts; h++) {
        OTF2_GlobalDefWriter_WriteSystemTreeNode(x->g, 1 + h, s->host0 + h, s->node, 0);
        OTF2_GlobalDefWriter_WriteSystemTreeNodeDomain(x->g, 1 + h, OTF2_SYSTEM_TREE_DOMAIN_SHARED_MEMORY);
    }
    for (uint32_t k = 0; k < x->ndev; k++) {
        uint32_t id = 1 + x->nhosts + k;
        OTF2_GlobalDefWriter_WriteSystemTreeNode(x->g, id, s->dev0 + k, s->devcls, 1 + k / 4);
        OTF2_GlobalDefWriter_WriteSystemTreeNodeDomain(x->g, id, OTF2_SYSTEM_TREE_DOMAIN_ACCELERATOR_DEVICE);
        OTF2_AttributeValue v;
        v.stringRef = s->uuid0 + k;
        OTF2_GlobalDefWriter_WriteSystemTreeNodeProperty(x->g, id, s->uuid, OTF2_TYPE_STRING, v);
    }
}

/* process and accelerator groups, the locations with their event counts, and the collector's
 * counts as location properties (A12) */
static void write_locations(struct gdefs *x, const struct synth *sy, const struct strs *s) {
    const struct opts *o = sy->o;
    uint32_t R = o->ranks, Q = o->queues;
    for (uint32_t r = 0; r < R; r++)
        OTF2_GlobalDefWriter_WriteLocationGroup(x->g, r, s->rank0 + r, OTF2_LOCATION_GROUP_TYPE_PROCESS, 1 + synth_host_of(r),
                                                OTF2_UNDEFINED_LOCATION_GROUP);
    for (uint32_t r = 0; r < R; r++)
        OTF2_GlobalDefWriter_WriteLocationGroup(x->g, R + r, s->ctx, OTF2_LOCATION_GROUP_TYPE_ACCELERATOR,
                                                1 + x->nhosts + synth_host_of(r) * 4 + synth_dev_of(r), r);
    for (uint32_t r = 0; r < R; r++)
        for (uint32_t k = 0; k <= Q; k++) {
            uint64_t n = sy->nevents[(size_t)r * (Q + 1) + k] + (o->brk.a2 && r == 0 && k == 0); /* A2: one too many */
            if (k == 0) OTF2_GlobalDefWriter_WriteLocation(x->g, r, s->master, OTF2_LOCATION_TYPE_CPU_THREAD, n, r);
            else
                OTF2_GlobalDefWriter_WriteLocation(x->g, synth_loc_id(r, k), s->stream0 + synth_dev_of(r) * Q + (k - 1),
                                                   OTF2_LOCATION_TYPE_ACCELERATOR_STREAM, n, R + r);
        }
    for (uint32_t r = 0; r < R; r++)
        for (uint32_t k = 0; k <= Q; k++) {
            if (o->brk.a12 && r == 0 && k == 1) continue; /* A12: a location without its counts */
            uint64_t id = synth_loc_id(r, k);
            OTF2_AttributeValue v;
            v.uint64 = sy->nevents[(size_t)r * (Q + 1) + k];
            OTF2_GlobalDefWriter_WriteLocationProperty(x->g, id, s->pe, OTF2_TYPE_UINT64, v);
            v.uint64 = k ? r % 3 : 0;
            OTF2_GlobalDefWriter_WriteLocationProperty(x->g, id, s->pc, OTF2_TYPE_UINT64, v);
            v.uint64 = 0;
            OTF2_GlobalDefWriter_WriteLocationProperty(x->g, id, s->pd, OTF2_TYPE_UINT64, v);
        }
}

/* groups: 0 every location, 1 + r rank r's L0 communicator, then MPI; communicators and RMA
 * windows (the copies' targets) */
static int write_comms(struct gdefs *x, const struct opts *o, const struct strs *s) {
    uint32_t R = o->ranks, Q = o->queues;
    uint64_t *mem = calloc((size_t)R * (Q + 1) + R + 1, sizeof(uint64_t));
    if (!mem) return -1;
    for (uint32_t r = 0; r < R; r++)
        for (uint32_t k = 0; k <= Q; k++) mem[(size_t)r * (Q + 1) + k] = synth_loc_id(r, k);
    OTF2_GlobalDefWriter_WriteGroup(x->g, 0, s->comm, OTF2_GROUP_TYPE_COMM_LOCATIONS, OTF2_PARADIGM_OPENCL,
                                    OTF2_GROUP_FLAG_NONE, R * (Q + 1), mem);
    for (uint32_t r = 0; r < R; r++) {
        for (uint32_t k = 0; k <= Q; k++) mem[k] = (uint64_t)r * (Q + 1) + k;
        OTF2_GlobalDefWriter_WriteGroup(x->g, 1 + r, s->comm, OTF2_GROUP_TYPE_COMM_GROUP, OTF2_PARADIGM_OPENCL,
                                        OTF2_GROUP_FLAG_NONE, Q + 1, mem);
    }
    for (uint32_t r = 0; r < R; r++) mem[r] = r;
    OTF2_GlobalDefWriter_WriteGroup(x->g, 1 + R, s->mpi, OTF2_GROUP_TYPE_COMM_LOCATIONS, OTF2_PARADIGM_MPI,
                                    OTF2_GROUP_FLAG_NONE, R, mem);
    OTF2_GlobalDefWriter_WriteGroup(x->g, 2 + R, s->empty, OTF2_GROUP_TYPE_COMM_GROUP, OTF2_PARADIGM_MPI,
                                    OTF2_GROUP_FLAG_NONE, R, mem);
    free(mem);
    for (uint32_t r = 0; r < R; r++)
        OTF2_GlobalDefWriter_WriteComm(x->g, r, s->comm, 1 + r, OTF2_UNDEFINED_COMM, OTF2_COMM_FLAG_NONE);
    OTF2_GlobalDefWriter_WriteComm(x->g, R, s->world, 2 + R, OTF2_UNDEFINED_COMM, OTF2_COMM_FLAG_NONE);
    for (uint32_t r = 0; r < R; r++) OTF2_GlobalDefWriter_WriteRmaWin(x->g, r, s->win, r, OTF2_RMA_WIN_FLAG_NONE);
    return 0;
}

/* A19: two counters; class 0 (even ranks) has the first, class 1 (odd ranks) both */
static void write_metrics(struct gdefs *x, const struct strs *s) {
    OTF2_GlobalDefWriter_WriteMetricMember(x->g, PM_INS, s->metric, s->metric, OTF2_METRIC_TYPE_PAPI,
                                           OTF2_METRIC_ACCUMULATED_START, OTF2_TYPE_UINT64, OTF2_BASE_DECIMAL, 0, s->unit);
    OTF2_GlobalDefWriter_WriteMetricMember(x->g, PM_CLOCK, s->clock, s->clock, OTF2_METRIC_TYPE_PAPI,
                                           OTF2_METRIC_ACCUMULATED_START, OTF2_TYPE_INT64, OTF2_BASE_DECIMAL, 0, s->ns);
    OTF2_MetricMemberRef m[NPM] = {PM_INS, PM_CLOCK};
    OTF2_GlobalDefWriter_WriteMetricClass(x->g, 0, 1, m, OTF2_METRIC_SYNCHRONOUS, OTF2_RECORDER_KIND_CPU);
    OTF2_GlobalDefWriter_WriteMetricClass(x->g, 1, 2, m, OTF2_METRIC_SYNCHRONOUS, OTF2_RECORDER_KIND_CPU);
}

void synth_write_defs(const struct synth *sy) {
    write_clock_offsets(sy);
    struct gdefs x = {.g = OTF2_Archive_GetGlobalDefWriter(sy->ar), .nhosts = (sy->o->ranks + 7) / 8};
    x.ndev = x.nhosts * 4;
    struct strs s;
    OTF2_GlobalDefWriter_WriteClockProperties(x.g, 1000000000u, sy->gmin, sy->gmax - sy->gmin, OTF2_UNDEFINED_TIMESTAMP);
    write_strings(&x, sy->o, &s);
    write_regions(&x, &s);
    write_tree(&x, &s);
    write_locations(&x, sy, &s);
    if (write_comms(&x, sy->o, &s) != 0) exit(1);
    if (sy->o->metrics) write_metrics(&x, &s);
    OTF2_Archive_CloseGlobalDefWriter(sy->ar, x.g);
}
