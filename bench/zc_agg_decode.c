/* SPDX-License-Identifier: MIT */
/* The baseline of bench/aggregate.sh: reads an archive the way zecoll-aggregate does (one
 * process at a time: its locations selected, local definitions read so that mapping tables and
 * clock offsets apply, OTF2's global event reader merging them in time) but only counts the
 * records. zecoll-aggregate's events/s per reader is compared with this one's.
 *   zc_agg_decode ARCHIVE   -> {"events":N,"seconds":S,"events_per_s":R}
 * Processes are found by docs/archive.md A8: a location's rank is the low 32 bits of its id. */
#include <otf2/otf2.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

static double cpu_s(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 + (double)ru.ru_stime.tv_sec +
           (double)ru.ru_stime.tv_usec * 1e-6;
}

struct locs {
    uint64_t *id;
    size_t n, cap;
};

static OTF2_CallbackCode on_loc(void *ud, OTF2_LocationRef self, OTF2_StringRef name, OTF2_LocationType t, uint64_t nev,
                                OTF2_LocationGroupRef g) {
    struct locs *l = ud;
    if (!nev) return OTF2_CALLBACK_SUCCESS;
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 1024;
        l->id = realloc(l->id, l->cap * sizeof(uint64_t));
        if (!l->id) return OTF2_CALLBACK_INTERRUPT;
    }
    l->id[l->n++] = self;
    return OTF2_CALLBACK_SUCCESS;
}

static uint64_t count;
#define COUNT(name, ...)                                                                                               \
    static OTF2_CallbackCode name(OTF2_LocationRef l, OTF2_TimeStamp t, void *ud, OTF2_AttributeList *a, __VA_ARGS__) {   \
        count++;                                                                                                       \
        return OTF2_CALLBACK_SUCCESS;                                                                                  \
    }
COUNT(c_region, OTF2_RegionRef r)
COUNT(c_param, OTF2_ParameterRef p, uint64_t v)
COUNT(c_pint, OTF2_ParameterRef p, int64_t v)
COUNT(c_pstr, OTF2_ParameterRef p, OTF2_StringRef v)
COUNT(c_rma, OTF2_RmaWinRef w, uint32_t remote, uint64_t bytes, uint64_t m)
COUNT(c_rmadone, OTF2_RmaWinRef w, uint64_t m)
COUNT(c_send, uint32_t peer, OTF2_CommRef c, uint32_t tag, uint64_t len)
COUNT(c_isend, uint32_t peer, OTF2_CommRef c, uint32_t tag, uint64_t len, uint64_t req)
COUNT(c_req, uint64_t req)
static OTF2_CallbackCode c_plain(OTF2_LocationRef l, OTF2_TimeStamp t, void *ud, OTF2_AttributeList *a) {
    count++;
    return OTF2_CALLBACK_SUCCESS;
}
COUNT(c_coll, OTF2_CollectiveOp op, OTF2_CommRef c, uint32_t root, uint64_t s, uint64_t r)
COUNT(c_nbc, OTF2_CollectiveOp op, OTF2_CommRef c, uint32_t root, uint64_t s, uint64_t r, uint64_t req)
COUNT(c_onoff, OTF2_MeasurementMode m)
COUNT(c_metric, OTF2_MetricRef m, uint8_t n, const OTF2_Type *ty, const OTF2_MetricValue *v)
COUNT(c_flush, OTF2_TimeStamp st)

static int cmp_rank(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    uint32_t rx = (uint32_t)x, ry = (uint32_t)y;
    if (rx != ry) return rx < ry ? -1 : 1;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: zc_agg_decode ARCHIVE_DIR\n");
        return 2;
    }
    char anchor[4096];
    snprintf(anchor, sizeof(anchor), "%s/traces.otf2", argv[1]);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    double c0 = cpu_s();
    OTF2_Reader *rd = OTF2_Reader_Open(anchor);
    if (!rd) return 2;
    OTF2_Reader_SetSerialCollectiveCallbacks(rd);
    struct locs L = {0};
    OTF2_GlobalDefReader *gr = OTF2_Reader_GetGlobalDefReader(rd);
    OTF2_GlobalDefReaderCallbacks *gcb = OTF2_GlobalDefReaderCallbacks_New();
    OTF2_GlobalDefReaderCallbacks_SetLocationCallback(gcb, on_loc);
    OTF2_Reader_RegisterGlobalDefCallbacks(rd, gr, gcb, &L);
    uint64_t n;
    OTF2_Reader_ReadAllGlobalDefinitions(rd, gr, &n);
    OTF2_GlobalDefReaderCallbacks_Delete(gcb);
    OTF2_Reader_Close(rd);
    qsort(L.id, L.n, sizeof(uint64_t), cmp_rank);

    OTF2_GlobalEvtReaderCallbacks *cb = OTF2_GlobalEvtReaderCallbacks_New();
    OTF2_GlobalEvtReaderCallbacks_SetEnterCallback(cb, c_region);
    OTF2_GlobalEvtReaderCallbacks_SetLeaveCallback(cb, c_region);
    OTF2_GlobalEvtReaderCallbacks_SetParameterUnsignedIntCallback(cb, c_param);
    OTF2_GlobalEvtReaderCallbacks_SetParameterIntCallback(cb, c_pint);
    OTF2_GlobalEvtReaderCallbacks_SetParameterStringCallback(cb, c_pstr);
    OTF2_GlobalEvtReaderCallbacks_SetRmaGetCallback(cb, c_rma);
    OTF2_GlobalEvtReaderCallbacks_SetRmaPutCallback(cb, c_rma);
    OTF2_GlobalEvtReaderCallbacks_SetRmaOpCompleteBlockingCallback(cb, c_rmadone);
    OTF2_GlobalEvtReaderCallbacks_SetMpiSendCallback(cb, c_send);
    OTF2_GlobalEvtReaderCallbacks_SetMpiRecvCallback(cb, c_send);
    OTF2_GlobalEvtReaderCallbacks_SetMpiIsendCallback(cb, c_isend);
    OTF2_GlobalEvtReaderCallbacks_SetMpiIrecvCallback(cb, c_isend);
    OTF2_GlobalEvtReaderCallbacks_SetMpiIsendCompleteCallback(cb, c_req);
    OTF2_GlobalEvtReaderCallbacks_SetMpiIrecvRequestCallback(cb, c_req);
    OTF2_GlobalEvtReaderCallbacks_SetMpiRequestTestCallback(cb, c_req);
    OTF2_GlobalEvtReaderCallbacks_SetMpiRequestCancelledCallback(cb, c_req);
    OTF2_GlobalEvtReaderCallbacks_SetMpiCollectiveBeginCallback(cb, c_plain);
    OTF2_GlobalEvtReaderCallbacks_SetMpiCollectiveEndCallback(cb, c_coll);
    OTF2_GlobalEvtReaderCallbacks_SetNonBlockingCollectiveRequestCallback(cb, c_req);
    OTF2_GlobalEvtReaderCallbacks_SetNonBlockingCollectiveCompleteCallback(cb, c_nbc);
    OTF2_GlobalEvtReaderCallbacks_SetMeasurementOnOffCallback(cb, c_onoff);
    OTF2_GlobalEvtReaderCallbacks_SetMetricCallback(cb, c_metric);
    OTF2_GlobalEvtReaderCallbacks_SetBufferFlushCallback(cb, c_flush);
    OTF2_GlobalEvtReaderCallbacks_SetUnknownCallback(cb, c_plain);
    for (size_t i = 0; i < L.n;) {
        size_t j = i;
        while (j < L.n && (uint32_t)L.id[j] == (uint32_t)L.id[i]) j++;
        rd = OTF2_Reader_Open(anchor);
        OTF2_Reader_SetSerialCollectiveCallbacks(rd);
        for (size_t k = i; k < j; k++) OTF2_Reader_SelectLocation(rd, L.id[k]);
        OTF2_Reader_OpenDefFiles(rd);
        for (size_t k = i; k < j; k++) {
            OTF2_DefReader *dr = OTF2_Reader_GetDefReader(rd, L.id[k]);
            if (dr) {
                OTF2_Reader_ReadAllLocalDefinitions(rd, dr, &n);
                OTF2_Reader_CloseDefReader(rd, dr);
            }
        }
        OTF2_Reader_CloseDefFiles(rd);
        OTF2_Reader_OpenEvtFiles(rd);
        for (size_t k = i; k < j; k++) OTF2_Reader_GetEvtReader(rd, L.id[k]);
        OTF2_GlobalEvtReader *ge = OTF2_Reader_GetGlobalEvtReader(rd);
        OTF2_Reader_RegisterGlobalEvtCallbacks(rd, ge, cb, NULL);
        OTF2_Reader_ReadAllGlobalEvents(rd, ge, &n);
        OTF2_Reader_CloseGlobalEvtReader(rd, ge);
        OTF2_Reader_CloseEvtFiles(rd);
        OTF2_Reader_Close(rd);
        i = j;
    }
    OTF2_GlobalEvtReaderCallbacks_Delete(cb);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
    double c = cpu_s() - c0;
    printf("{\"events\":%llu,\"seconds\":%.3f,\"cpu_seconds\":%.3f,\"events_per_s\":%.0f,\"events_per_cpu_s\":%.0f}\n",
           (unsigned long long)count, s, c, s > 0 ? (double)count / s : 0.0, c > 0 ? (double)count / c : 0.0);
    free(L.id);
    return 0;
}
