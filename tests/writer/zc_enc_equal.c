/* SPDX-License-Identifier: MIT */
/* writer.encoder.unit: the same record streams through OTF2's event writer (zc_evt_write) and
 * through our own encoder (zc_otf2_enc.h); the event files must be the same bytes. Every record
 * type zc_evt_write knows, calls with their MPI runs (a Leave after the records inside), NOPs,
 * metrics of 1 to 16 values of each type, equal timestamps, timestamp 0 at the start, values at
 * every compressed length (0, all ones, each byte count), a record refused for going back in
 * time, a location without events and one of many chunks (OTF2's smallest event chunk, 256 KiB,
 * so that dozens of chunk boundaries fall on every record type). Then the archive is read back
 * by OTF2's reader through the own files (the event counts agree).
 *
 * usage: zc_enc_equal DIR [SEED] */
#include "zc_evt.h"
#include "zc_otf2_enc.h"

#include <errno.h>
#include <otf2/otf2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define CHUNK (256 * 1024)
static int fails;
#define CHECK(c, ...)                                                                                                  \
    do {                                                                                                               \
        if (!(c)) {                                                                                                    \
            fails++;                                                                                                   \
            printf("not ok: " __VA_ARGS__);                                                                            \
            printf("\n");                                                                                              \
        }                                                                                                              \
    } while (0)

static uint64_t rng = 88172645463325252ull;
static uint64_t rnd(void) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}
/* a value of a random compressed length: 0, all ones, or 1..8 bytes */
static uint64_t val64(void) {
    unsigned k = rnd() % 10;
    if (k == 0) return 0;
    if (k == 9) return UINT64_MAX;
    uint64_t v = rnd() | 1;
    return k == 8 ? v | (1ull << 63) : (v & ((1ull << (8 * k)) - 1)) | (1ull << (8 * k - 1));
}
static uint32_t val32(void) {
    unsigned k = rnd() % 6;
    if (k == 0) return 0;
    if (k == 5) return UINT32_MAX;
    uint32_t v = (uint32_t)rnd();
    return k == 4 ? v | (1u << 31) : (v & ((1u << (8 * k)) - 1)) | (1u << (8 * k - 1));
}

static FILE *own_file;
static int sink(void *ud, const uint8_t *p, size_t n) {
    (void)ud;
    return fwrite(p, 1, n, own_file) == n ? 0 : EIO;
}

static OTF2_FlushType pre_flush(void *ud, OTF2_FileType ft, OTF2_LocationRef loc, void *cd, bool final) {
    return OTF2_FLUSH;
}
static OTF2_TimeStamp post_flush(void *ud, OTF2_FileType ft, OTF2_LocationRef loc) { return 0; }
static const OTF2_FlushCallbacks flush_cbs = {pre_flush, post_flush};

static const uint8_t metric_types[ZC_PAPI_MAX_EVENTS] = {OTF2_TYPE_UINT64, OTF2_TYPE_INT64, OTF2_TYPE_DOUBLE,
                                                         OTF2_TYPE_UINT64, OTF2_TYPE_UINT64, OTF2_TYPE_INT64,
                                                         OTF2_TYPE_UINT64, OTF2_TYPE_DOUBLE, OTF2_TYPE_UINT64,
                                                         OTF2_TYPE_UINT64, OTF2_TYPE_INT64, OTF2_TYPE_UINT64,
                                                         OTF2_TYPE_UINT64, OTF2_TYPE_UINT64, OTF2_TYPE_DOUBLE,
                                                         OTF2_TYPE_UINT64};

/* The callsite parameter's id of the location being written (its encoding is kept per batch):
 * one of every compressed length. */
static uint32_t callsite;

/* One random put at time *t (the records a location buffer would hold, normalised). */
static size_t gen_put(struct zc_ev *ev, uint64_t *t) {
    size_t n = 0;
    if (rnd() % 4) *t += rnd() % 3 == 0 ? 0 : 1 + rnd() % (rnd() % 2 ? 100 : 1u << 30);
    struct zc_ev x = {.ts = *t, .a = val32(), .b = val64(), .c = val64(), .d = val64()};
    unsigned k = rnd() % 24;
    if (k < 14) { /* the simple types */
        static const uint32_t simple[] = {ZC_EV_ENTER, ZC_EV_LEAVE, ZC_EV_PARAM_U64, ZC_EV_RMA_GET, ZC_EV_RMA_PUT,
                                          ZC_EV_RMA_COMPLETE, ZC_EV_BUFFER_FLUSH, ZC_EV_MEASUREMENT,
                                          ZC_EV_MPI_COLL_BEGIN, ZC_EV_MPI_COLL_END, ZC_EV_MPI_NBC_REQUEST,
                                          ZC_EV_MPI_SEND, ZC_EV_MPI_ISEND_COMPLETE, ZC_EV_MPI_REQUEST_CANCELLED};
        x.type = simple[k];
        if (x.type == ZC_EV_MPI_COLL_END) x.d = (uint64_t)(rnd() % 20) << 32 | val32();
        if (x.type == ZC_EV_PARAM_U64 && rnd() % 2) x.a = callsite; /* a device operation's callsite */
        ev[n++] = x;
    } else if (k < 16) { /* NonBlockingCollectiveComplete and its request id */
        x.type = ZC_EV_MPI_NBC_COMPLETE;
        x.d = (uint64_t)(rnd() % 20) << 32 | val32();
        ev[n++] = x;
        ev[n++] = (struct zc_ev){.ts = *t, .type = ZC_EV_MPI_NBC_REQID, .d = val64()};
    } else if (k < 18) { /* PAPI: 1..16 values over METRIC and METRIC_MORE records */
        uint32_t nv = 1 + rnd() % ZC_PAPI_MAX_EVENTS;
        x.type = ZC_EV_METRIC;
        x.a = nv;
        ev[n++] = x;
        for (uint32_t j = ZC_PAPI_PER_REC; j < nv; j += ZC_PAPI_PER_REC)
            ev[n++] = (struct zc_ev){.ts = *t, .type = ZC_EV_METRIC_MORE, .b = val64(), .c = val64(), .d = val64()};
    } else if (k < 19) { /* an MPI_Irecv and its request in one record */
        x.type = ZC_EV_CALL_IRECV;
        x.c = rnd() % 2 ? val64() : 0;
        x.b = *t + rnd() % 1000;
        *t = x.b;
        ev[n++] = x;
    } else { /* a whole call, alone or with the MPI records inside it */
        x.type = ZC_EV_CALL;
        x.c = rnd() % 2 ? val64() : 0;
        unsigned inside = rnd() % 3 ? 0 : 1 + rnd() % 4;
        uint64_t tt = *t;
        x.d = inside;
        ev[n++] = x;
        for (unsigned j = 0; j < inside; j++) {
            static const uint32_t in[] = {ZC_EV_MPI_SEND,  ZC_EV_MPI_ISEND,        ZC_EV_MPI_RECV,
                                          ZC_EV_MPI_IRECV, ZC_EV_MPI_IRECV_REQUEST, ZC_EV_MPI_REQUEST_TEST,
                                          ZC_EV_MPI_NOP,   ZC_EV_MPI_ISEND_COMPLETE};
            tt += rnd() % 50;
            ev[n++] = (struct zc_ev){.ts = tt, .type = in[rnd() % 8], .a = val32(), .b = val64(), .c = val64(),
                                     .d = val64()};
        }
        uint64_t leave = tt + rnd() % 1000;
        ev[0].b = leave;
        *t = leave;
    }
    return n;
}

/* Writes nput random puts to location loc both ways, in batches of whole puts; the own bytes go
 * to DIR/traces/<loc>.evt.own. Returns the events written. `back`: one put goes back in time,
 * 1: by 10 ns, 2: before the location's first event (the time range then starts there), 3: a
 * record inside a call before the one before it, 4: a call's Leave before its last record (the
 * encoder writes a call's records with it: these leave the rest to its general steps). */
static uint64_t one_location(OTF2_Archive *ar, const char *dir, uint64_t loc, size_t nput, int back) {
    char path[4096];
    snprintf(path, sizeof(path), "%s/traces/%llu.evt.own", dir, (unsigned long long)loc);
    own_file = fopen(path, "wb");
    CHECK(own_file, "cannot create %s", path);
    if (!own_file) return 0;
    OTF2_EvtWriter *w = OTF2_Archive_GetEvtWriter(ar, loc);
    struct zc_enc e;
    CHECK(zc_enc_open(&e, CHUNK, sink, NULL) == 0, "zc_enc_open");
    static struct zc_ev batch[4096];
    uint64_t t = rnd() % 2 && back != 2 ? 0 : 1000000, lo1 = UINT64_MAX, hi1 = 0, lo2 = UINT64_MAX, hi2 = 0;
    size_t done = 0;
    while (done < nput) {
        size_t n = 0, want = 1 + rnd() % 200;
        for (; done < nput && want-- && n + 64 < sizeof(batch) / sizeof(*batch); done++) {
            size_t k = gen_put(batch + n, &t);
            if (back == 1 && done == nput / 2 && t > 10) batch[n].ts = t - 10, t -= 10; /* refused by both */
            if (back == 2 && done == nput / 2) batch[n].ts = 1;
            if (back >= 3 && done == nput / 2) { /* a call whose second record (3) or Leave (4) goes back */
                batch[n] = (struct zc_ev){.ts = t, .type = ZC_EV_CALL, .a = 5, .b = t + (back == 3 ? 20 : 7), .d = 2};
                batch[n + 1] = (struct zc_ev){.ts = t + 5, .type = ZC_EV_MPI_SEND, .a = 1, .b = 8, .c = 3};
                batch[n + 2] = (struct zc_ev){.ts = t + (back == 3 ? 1 : 10), .type = ZC_EV_MPI_IRECV, .a = 1, .b = 8,
                                              .c = 3, .d = 42};
                k = 3;
                t += 20;
            }
            n += k;
        }
        OTF2_ErrorCode r1 = zc_evt_write(w, batch, n, callsite, metric_types, &lo1, &hi1);
        int r2 = zc_enc_write(&e, batch, n, callsite, metric_types, &lo2, &hi2);
        CHECK((r1 == OTF2_SUCCESS) == (r2 == 0), "location %llu: library %d, own %d", (unsigned long long)loc, r1, r2);
        CHECK(lo1 == lo2 && hi1 == hi2, "location %llu: time range", (unsigned long long)loc);
    }
    uint64_t n1 = 0;
    OTF2_EvtWriter_GetNumberOfEvents(w, &n1);
    CHECK(n1 == e.events, "location %llu: %llu events by OTF2, %llu by ours", (unsigned long long)loc,
          (unsigned long long)n1, (unsigned long long)e.events);
    OTF2_Archive_CloseEvtWriter(ar, w);
    CHECK(zc_enc_close(&e) == 0, "zc_enc_close");
    fclose(own_file);
    return n1;
}

static long cmp_files(const char *a, const char *b, long *size) {
    FILE *fa = fopen(a, "rb"), *fb = fopen(b, "rb");
    long at = -2;
    *size = 0;
    if (fa && fb) {
        for (long i = 0;; i++) {
            int ca = fgetc(fa), cb = fgetc(fb);
            if (ca != cb) {
                at = i;
                break;
            }
            if (ca == EOF) {
                at = -1;
                *size = i;
                break;
            }
        }
    }
    if (fa) fclose(fa);
    if (fb) fclose(fb);
    return at;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(stderr, "usage: %s DIR [SEED]\n", argv[0]);
        return 2;
    }
    const char *dir = argv[1];
    if (argc > 2) rng ^= strtoull(argv[2], NULL, 0) * 0x9E3779B97F4A7C15ull; /* a stream per seed */
    printf("# seed %llu\n", (unsigned long long)rng);
    OTF2_Archive *ar = OTF2_Archive_Open(dir, "traces", OTF2_FILEMODE_WRITE, CHUNK, 4 * 1024 * 1024,
                                         OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE);
    if (!ar) {
        printf("not ok: cannot create the archive %s\n", dir);
        return 1;
    }
    OTF2_Archive_SetFlushCallbacks(ar, &flush_cbs, NULL);
    OTF2_Archive_SetSerialCollectiveCallbacks(ar);
    OTF2_Archive_OpenEvtFiles(ar);
    /* no memory callbacks: OTF2 keeps every chunk until the close (no BufferFlush of its own) */
    struct {
        uint64_t loc;
        size_t puts;
        int back;
    } locs[] = {{0, 0, 0}, {1, 1, 0}, {2, 3000, 0}, {3, 400, 1}, {4, 100000, 0}, {5, 400, 2}, {6, 400, 3}, {7, 400, 4}};
    size_t nl = sizeof(locs) / sizeof(*locs);
    uint64_t events[8];
    static const uint32_t callsites[] = {7, 0, UINT32_MAX, 0x12345, 0x89abcdef, 7, 0, 300};
    for (size_t i = 0; i < nl; i++) {
        callsite = callsites[i];
        events[i] = one_location(ar, dir, locs[i].loc, locs[i].puts, locs[i].back);
    }
    OTF2_Archive_CloseEvtFiles(ar);
    /* the definitions a reader needs: one location per file, one region, a string */
    OTF2_GlobalDefWriter *g = OTF2_Archive_GetGlobalDefWriter(ar);
    OTF2_GlobalDefWriter_WriteClockProperties(g, 1000000000, 0, UINT64_MAX / 2, OTF2_UNDEFINED_TIMESTAMP);
    OTF2_GlobalDefWriter_WriteString(g, 0, "x");
    OTF2_GlobalDefWriter_WriteSystemTreeNode(g, 0, 0, 0, OTF2_UNDEFINED_SYSTEM_TREE_NODE);
    OTF2_GlobalDefWriter_WriteLocationGroup(g, 0, 0, OTF2_LOCATION_GROUP_TYPE_PROCESS, 0, OTF2_UNDEFINED_LOCATION_GROUP);
    for (size_t i = 0; i < nl; i++)
        OTF2_GlobalDefWriter_WriteLocation(g, locs[i].loc, 0, OTF2_LOCATION_TYPE_CPU_THREAD, events[i], 0);
    OTF2_Archive_CloseGlobalDefWriter(ar, g);
    OTF2_Archive_Close(ar);

    long total = 0;
    for (size_t i = 0; i < nl; i++) {
        char a[4096], b[4200];
        snprintf(a, sizeof(a), "%s/traces/%llu.evt", dir, (unsigned long long)locs[i].loc);
        snprintf(b, sizeof(b), "%s.own", a);
        long size = 0, at = cmp_files(a, b, &size);
        CHECK(at == -1, "location %llu: %s and %s differ at byte %ld", (unsigned long long)locs[i].loc, a, b, at);
        if (at == -1) printf("ok: location %llu: %ld bytes (%ld chunks), %llu events, the same\n",
                             (unsigned long long)locs[i].loc, size, (size + CHUNK - 1) / CHUNK,
                             (unsigned long long)events[i]);
        total += size;
    }
    CHECK(total > 8 * CHUNK, "the test wrote %ld bytes, fewer than 8 chunks", total);
    /* the own files in place of OTF2's: OTF2's reader reads every event */
    for (size_t i = 0; getenv("ZC_ENC_KEEP") && i < nl; i++) { /* to look at both */
        char a[4096], b[4200];
        snprintf(a, sizeof(a), "%s/traces/%llu.evt", dir, (unsigned long long)locs[i].loc);
        snprintf(b, sizeof(b), "%s.lib", a);
        CHECK(link(a, b) == 0, "link %s", b);
    }
    for (size_t i = 0; i < nl; i++) {
        char a[4096], b[4200];
        snprintf(a, sizeof(a), "%s/traces/%llu.evt", dir, (unsigned long long)locs[i].loc);
        snprintf(b, sizeof(b), "%s.own", a);
        CHECK(rename(b, a) == 0, "rename %s", b);
    }
    char anchor[4096];
    snprintf(anchor, sizeof(anchor), "%s/traces.otf2", dir);
    OTF2_Reader *rd = OTF2_Reader_Open(anchor);
    CHECK(rd, "OTF2_Reader_Open");
    if (rd) {
        OTF2_Reader_SetSerialCollectiveCallbacks(rd);
        for (size_t i = 0; i < nl; i++) OTF2_Reader_SelectLocation(rd, locs[i].loc);
        OTF2_Reader_OpenEvtFiles(rd);
        for (size_t i = 0; i < nl; i++) {
            OTF2_EvtReader *er = OTF2_Reader_GetEvtReader(rd, locs[i].loc);
            uint64_t got = 0;
            OTF2_ErrorCode r = er ? OTF2_Reader_ReadLocalEvents(rd, er, UINT64_MAX, &got) : OTF2_ERROR_INVALID;
            CHECK(r == OTF2_SUCCESS && got == events[i], "location %llu: OTF2's reader read %llu of %llu events (%s)",
                  (unsigned long long)locs[i].loc, (unsigned long long)got, (unsigned long long)events[i],
                  OTF2_Error_GetName(r));
            if (er) OTF2_Reader_CloseEvtReader(rd, er);
        }
        OTF2_Reader_CloseEvtFiles(rd);
        OTF2_Reader_Close(rd);
    }
    printf("%s\n", fails ? "FAILED" : "PASSED");
    return fails ? 1 : 0;
}
