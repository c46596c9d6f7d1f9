/* SPDX-License-Identifier: MIT */
/* The one OTF2 writer of the product. Events reach it in batches from location buffers; the
 * archive is opened on the first batch (or at finalize), so a run that records nothing still
 * produces a valid archive and a run that never flushes pays nothing during execution.
 * Definitions are written once, at finalize, in the order OTF2 readers expect
 * (ClockProperties, Strings, Paradigm, Regions, Parameters, SystemTree, LocationGroups,
 * Locations, Groups, Comms, RmaWins). */
#include "zc_defs.h"

#include <errno.h>
#include <limits.h>
#include <otf2/otf2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static pthread_mutex_t otf2_lock = PTHREAD_MUTEX_INITIALIZER;
static OTF2_Archive *archive;
static bool opened, closed;
static char archive_dir[PATH_MAX];
static uint64_t ts_min = UINT64_MAX, ts_max;

const char *zc_otf2_path(void) { return archive_dir; }

static OTF2_FlushType pre_flush(void *ud, OTF2_FileType ft, OTF2_LocationRef loc, void *cd, bool final) {
    return OTF2_FLUSH;
}

/* Same clock as every event: OTF2 records the flush as a BufferFlush event with this time. */
static OTF2_TimeStamp post_flush(void *ud, OTF2_FileType ft, OTF2_LocationRef loc) { return zc_now(); }

static const OTF2_FlushCallbacks flush_cbs = {pre_flush, post_flush};

/* Without memory callbacks OTF2 keeps every chunk of a writer in memory until it is closed.
 * Here an event writer holds at most ZC_EVT_CHUNKS chunks: when it asks for more, the NULL
 * makes OTF2 flush that buffer to its file and free its chunks, so memory stays flat however
 * long the run. Definition buffers are small and keep what they need. */
#define ZC_EVT_CHUNKS 2
struct chunks {
    size_t n;
    void *v[];
};

static void *mem_alloc(void *ud, OTF2_FileType ft, OTF2_LocationRef loc, void **pbd, uint64_t size) {
    size_t max = ft == OTF2_FILETYPE_EVENTS ? ZC_EVT_CHUNKS : 4096;
    struct chunks *c = *pbd;
    if (!c) {
        c = calloc(1, sizeof(*c) + max * sizeof(void *));
        if (!c) return NULL;
        *pbd = c;
    }
    if (c->n == max) return NULL;
    void *p = malloc(size);
    if (p) c->v[c->n++] = p;
    return p;
}

static void mem_free_all(void *ud, OTF2_FileType ft, OTF2_LocationRef loc, void **pbd, bool final) {
    struct chunks *c = *pbd;
    if (!c) return;
    for (size_t i = 0; i < c->n; i++) free(c->v[i]);
    c->n = 0;
    if (final) {
        free(c);
        *pbd = NULL;
    }
}

static const OTF2_MemoryCallbacks mem_cbs = {mem_alloc, mem_free_all};

/* Expands %e %p %h %t in ZECOLL_OUTPUT. */
static void expand_path(char *out, size_t size) {
    const char *tmpl = zc_knobs.OUTPUT && *zc_knobs.OUTPUT ? zc_knobs.OUTPUT : "zecoll-trace-%e-%p";
    char exe[PATH_MAX] = "app", host[256] = "host";
    char buf[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
    if (n > 0) {
        buf[n] = 0;
        const char *b = strrchr(buf, '/');
        snprintf(exe, sizeof(exe), "%s", b ? b + 1 : buf);
    }
    gethostname(host, sizeof(host) - 1);
    size_t o = 0;
    for (const char *p = tmpl; *p && o + 1 < size; p++) {
        if (*p != '%' || !p[1]) {
            out[o++] = *p;
            continue;
        }
        char piece[PATH_MAX + 8] = "";
        switch (*++p) {
        case 'e': snprintf(piece, sizeof(piece), "%s", exe); break;
        case 'p': snprintf(piece, sizeof(piece), "%d", (int)getpid()); break;
        case 'h': snprintf(piece, sizeof(piece), "%s", host); break;
        case 't': {
            time_t t = time(NULL);
            struct tm tm;
            localtime_r(&t, &tm);
            strftime(piece, sizeof(piece), "%Y%m%d-%H%M%S", &tm);
            break;
        }
        case '%': snprintf(piece, sizeof(piece), "%%"); break;
        default: snprintf(piece, sizeof(piece), "%%%c", *p); break;
        }
        size_t len = strlen(piece);
        if (o + len >= size) break;
        memcpy(out + o, piece, len);
        o += len;
    }
    out[o] = 0;
}

/* Never writes into an existing archive: picks <dir>, <dir>.1, <dir>.2 ... */
static int choose_dir(void) {
    char base[PATH_MAX - 16];
    expand_path(base, sizeof(base));
    for (int i = 0; i < 1000; i++) {
        if (i == 0) snprintf(archive_dir, sizeof(archive_dir), "%s", base);
        else snprintf(archive_dir, sizeof(archive_dir), "%s.%d", base, i);
        struct stat st;
        if (stat(archive_dir, &st) != 0 && errno == ENOENT) return 0;
    }
    return -1;
}

static int open_locked(void) {
    if (opened) return archive ? 0 : -1;
    opened = true;
    if (choose_dir() != 0) {
        ZC_FAIL(ZC_F_TRACE, "no free archive directory name for ZECOLL_OUTPUT=%s", zc_knobs.OUTPUT);
        return -1;
    }
    archive = OTF2_Archive_Open(archive_dir, "traces", OTF2_FILEMODE_WRITE, 1024 * 1024, 4 * 1024 * 1024,
                                OTF2_SUBSTRATE_POSIX, OTF2_COMPRESSION_NONE);
    if (!archive) {
        ZC_FAIL(ZC_F_TRACE, "cannot create OTF2 archive %s (check ZECOLL_OUTPUT and permissions)", archive_dir);
        return -1;
    }
    if (OTF2_Archive_SetFlushCallbacks(archive, &flush_cbs, NULL) != OTF2_SUCCESS ||
        OTF2_Archive_SetMemoryCallbacks(archive, &mem_cbs, NULL) != OTF2_SUCCESS ||
        OTF2_Archive_SetSerialCollectiveCallbacks(archive) != OTF2_SUCCESS ||
        OTF2_Archive_SetCreator(archive, "zecoll") != OTF2_SUCCESS ||
        OTF2_Archive_OpenEvtFiles(archive) != OTF2_SUCCESS) {
        ZC_FAIL(ZC_F_TRACE, "cannot initialise OTF2 archive %s", archive_dir);
        OTF2_Archive_Close(archive);
        archive = NULL;
        return -1;
    }
    return 0;
}

int zc_otf2_init(void) { return 0; }

static uint64_t loc_id(const struct zc_loc *l) { return l->id | zc_rank(); }

static void write_locked(struct zc_loc *loc, const struct zc_ev *ev, size_t n) {
    if (closed || !zc_on(ZC_F_TRACE) || open_locked() != 0) {
        loc->ndropped += n;
        return;
    }
    OTF2_EvtWriter *w = loc->writer;
    if (!w) {
        w = OTF2_Archive_GetEvtWriter(archive, loc_id(loc));
        if (!w) {
            ZC_FAIL(ZC_F_TRACE, "no OTF2 event writer for location %s", loc->name);
            loc->ndropped += n;
            return;
        }
        loc->writer = w;
    }
    OTF2_ErrorCode e = OTF2_SUCCESS;
    for (size_t i = 0; i < n && e == OTF2_SUCCESS; i++) {
        const struct zc_ev *x = &ev[i];
        if (x->ts < ts_min) ts_min = x->ts;
        if (x->ts > ts_max) ts_max = x->ts;
        switch (x->type) {
        case ZC_EV_ENTER: e = OTF2_EvtWriter_Enter(w, NULL, x->ts, x->a); break;
        case ZC_EV_LEAVE: e = OTF2_EvtWriter_Leave(w, NULL, x->ts, x->a); break;
        case ZC_EV_PARAM_U64: e = OTF2_EvtWriter_ParameterUnsignedInt(w, NULL, x->ts, x->a, x->b); break;
        case ZC_EV_RMA_GET: e = OTF2_EvtWriter_RmaGet(w, NULL, x->ts, x->a, (uint32_t)(x->c >> 32), x->b, x->c & 0xffffffffu); break;
        case ZC_EV_RMA_PUT: e = OTF2_EvtWriter_RmaPut(w, NULL, x->ts, x->a, (uint32_t)(x->c >> 32), x->b, x->c & 0xffffffffu); break;
        case ZC_EV_RMA_COMPLETE: e = OTF2_EvtWriter_RmaOpCompleteBlocking(w, NULL, x->ts, x->a, x->c); break;
        case ZC_EV_BUFFER_FLUSH: e = OTF2_EvtWriter_BufferFlush(w, NULL, x->ts, x->b); break;
        default: break;
        }
    }
    if (e != OTF2_SUCCESS)
        ZC_FAIL(ZC_F_TRACE, "OTF2 event write failed on %s: %s", loc->name, OTF2_Error_GetName(e));
}

void zc_otf2_write(struct zc_loc *loc, const struct zc_ev *ev, size_t n) {
    if (n == 0) return;
    pthread_mutex_lock(&otf2_lock);
    write_locked(loc, ev, n);
    pthread_mutex_unlock(&otf2_lock);
}

/* ---------------------------------------------------------------- definitions */
static OTF2_RegionRole role_of(enum zc_region_role r) {
    switch (r) {
    case ZC_ROLE_WRAPPER: return OTF2_REGION_ROLE_WRAPPER;
    case ZC_ROLE_DATA_TRANSFER: return OTF2_REGION_ROLE_DATA_TRANSFER;
    case ZC_ROLE_ALLOCATE: return OTF2_REGION_ROLE_ALLOCATE;
    case ZC_ROLE_DEALLOCATE: return OTF2_REGION_ROLE_DEALLOCATE;
    case ZC_ROLE_BARRIER: return OTF2_REGION_ROLE_BARRIER;
    case ZC_ROLE_ARTIFICIAL: return OTF2_REGION_ROLE_ARTIFICIAL;
    default: return OTF2_REGION_ROLE_FUNCTION;
    }
}

static OTF2_Paradigm paradigm_of(enum zc_paradigm p) {
    switch (p) {
    case ZC_PARADIGM_MPI: return OTF2_PARADIGM_MPI;
    case ZC_PARADIGM_MEASUREMENT: return OTF2_PARADIGM_MEASUREMENT_SYSTEM;
    default: return OTF2_PARADIGM_OPENCL; /* OTF2 3.0 has no Level Zero paradigm; named below */
    }
}

static void write_defs(void) {
    OTF2_GlobalDefWriter *g = OTF2_Archive_GetGlobalDefWriter(archive);
    if (!g) {
        ZC_FAIL(ZC_F_TRACE, "no OTF2 global definition writer");
        return;
    }
    zc_defs_lock();
    struct zc_defs *d = &zc_defs;
    /* every string the definitions below need, created before the string table is written */
    char host[256] = "localhost", buf[128];
    gethostname(host, sizeof(host) - 1);
    uint32_t s_machine = zc_def_string_locked("machine"), s_node_class = zc_def_string_locked("node");
    uint32_t s_host = zc_def_string_locked(host), s_l0 = zc_def_string_locked("Level Zero");
    uint32_t s_devclass = zc_def_string_locked("Level Zero Device"), s_uuid = zc_def_string_locked("UUID");
    snprintf(buf, sizeof(buf), "Process %u", zc_rank());
    uint32_t s_proc = zc_def_string_locked(buf);
    uint32_t s_comm = zc_def_string_locked("L0"), s_win = zc_def_string_locked("L0_WINDOW");
    uint32_t s_empty = zc_def_string_locked(""), s_callsite = zc_def_string_locked("callsite id");
    uint32_t *s_groups = calloc(d->ngroups + 1, sizeof(uint32_t));
    for (uint32_t i = 0; s_groups && i < d->ngroups; i++) {
        snprintf(buf, sizeof(buf), "L0 Context %u", d->groups[i].context);
        s_groups[i] = zc_def_string_locked(buf);
    }
    uint32_t nlocs = 0;
    for (struct zc_loc *l = zc_loc_list(); l; l = l->next) nlocs++;
    uint32_t *s_locs = calloc(nlocs + 1, sizeof(uint32_t));
    struct zc_loc **locs = calloc(nlocs + 1, sizeof(*locs));
    uint32_t k = 0;
    for (struct zc_loc *l = zc_loc_list(); l && s_locs && locs; l = l->next, k++) {
        locs[k] = l;
        s_locs[k] = zc_def_string_locked(l->name);
    }
    if (!s_groups || !s_locs || !locs) {
        zc_defs_unlock();
        ZC_FAIL(ZC_F_TRACE, "out of memory writing definitions");
        free(s_groups);
        free(s_locs);
        free(locs);
        return;
    }

    OTF2_GlobalDefWriter_WriteClockProperties(g, 1000000000u, ts_min == UINT64_MAX ? 0 : ts_min,
                                              ts_min == UINT64_MAX ? 0 : ts_max - ts_min, OTF2_UNDEFINED_TIMESTAMP);
    for (uint32_t i = 0; i < d->nstrings; i++) OTF2_GlobalDefWriter_WriteString(g, i, d->strings[i]);
    OTF2_GlobalDefWriter_WriteParadigm(g, OTF2_PARADIGM_OPENCL, s_l0, OTF2_PARADIGM_CLASS_ACCELERATOR);
    for (uint32_t i = 0; i < d->nregions; i++) {
        const struct zc_def_region *r = &d->regions[i];
        OTF2_GlobalDefWriter_WriteRegion(g, i, r->name, r->name, s_empty, role_of(r->role), paradigm_of(r->paradigm),
                                         OTF2_REGION_FLAG_NONE, s_empty, 0, 0);
    }
    OTF2_GlobalDefWriter_WriteParameter(g, 0, s_callsite, OTF2_PARAMETER_TYPE_UINT64);
    /* system tree: machine > host > devices */
    OTF2_GlobalDefWriter_WriteSystemTreeNode(g, 0, s_machine, s_machine, OTF2_UNDEFINED_SYSTEM_TREE_NODE);
    OTF2_GlobalDefWriter_WriteSystemTreeNode(g, 1, s_host, s_node_class, 0);
    OTF2_GlobalDefWriter_WriteSystemTreeNodeDomain(g, 1, OTF2_SYSTEM_TREE_DOMAIN_SHARED_MEMORY);
    for (uint32_t i = 0; i < d->ndevices; i++) {
        OTF2_GlobalDefWriter_WriteSystemTreeNode(g, 2 + i, d->devices[i].name, s_devclass, 1);
        OTF2_GlobalDefWriter_WriteSystemTreeNodeDomain(g, 2 + i, OTF2_SYSTEM_TREE_DOMAIN_ACCELERATOR_DEVICE);
        OTF2_AttributeValue v;
        v.stringRef = d->devices[i].uuid;
        OTF2_GlobalDefWriter_WriteSystemTreeNodeProperty(g, 2 + i, s_uuid, OTF2_TYPE_STRING, v);
    }
    /* process group first, then accelerator groups (interleaving makes otf2-print complain) */
    OTF2_GlobalDefWriter_WriteLocationGroup(g, 0, s_proc, OTF2_LOCATION_GROUP_TYPE_PROCESS, 1, OTF2_UNDEFINED_LOCATION_GROUP);
    for (uint32_t i = 0; i < d->ngroups; i++)
        OTF2_GlobalDefWriter_WriteLocationGroup(g, i + 1, s_groups[i], OTF2_LOCATION_GROUP_TYPE_ACCELERATOR,
                                                2 + d->groups[i].device, 0);
    /* locations in communicator-rank order, so the L0 group lists them the same way */
    uint64_t *members = calloc(nlocs + 1, sizeof(uint64_t)), *ranks = calloc(nlocs + 1, sizeof(uint64_t));
    for (uint32_t i = 0; i < nlocs; i++) {
        struct zc_loc *l = locs[i];
        OTF2_GlobalDefWriter_WriteLocation(g, loc_id(l), s_locs[i],
                                           l->kind == ZC_LOC_THREAD ? OTF2_LOCATION_TYPE_CPU_THREAD : OTF2_LOCATION_TYPE_ACCELERATOR_STREAM,
                                           l->otf2_events, l->group);
        if (members && l->comm_rank < nlocs) members[l->comm_rank] = loc_id(l);
    }
    if (members && ranks) {
        for (uint32_t i = 0; i < nlocs; i++) ranks[i] = i;
        OTF2_GlobalDefWriter_WriteGroup(g, 0, s_comm, OTF2_GROUP_TYPE_COMM_LOCATIONS, OTF2_PARADIGM_OPENCL,
                                        OTF2_GROUP_FLAG_NONE, nlocs, members);
        OTF2_GlobalDefWriter_WriteGroup(g, 1, s_comm, OTF2_GROUP_TYPE_COMM_GROUP, OTF2_PARADIGM_OPENCL,
                                        OTF2_GROUP_FLAG_NONE, nlocs, ranks);
        OTF2_GlobalDefWriter_WriteComm(g, 0, s_comm, 1, OTF2_UNDEFINED_COMM, OTF2_COMM_FLAG_NONE);
        OTF2_GlobalDefWriter_WriteRmaWin(g, 0, s_win, 0, OTF2_RMA_WIN_FLAG_NONE);
    }
    zc_defs_unlock();
    OTF2_Archive_CloseGlobalDefWriter(archive, g);
    free(members);
    free(ranks);
    free(s_groups);
    free(s_locs);
    free(locs);
}

void zc_otf2_finalize(void) {
    pthread_mutex_lock(&otf2_lock);
    if (closed) {
        pthread_mutex_unlock(&otf2_lock);
        return;
    }
    pthread_mutex_unlock(&otf2_lock);
    zc_loc_flush_all();
    pthread_mutex_lock(&otf2_lock);
    closed = true;
    /* a process that recorded nothing (a shell or `timeout` that inherited LD_PRELOAD) leaves no
     * archive behind */
    uint64_t total = 0;
    for (struct zc_loc *l = zc_loc_list(); l; l = l->next) total += l->nevents;
    if (!opened && total == 0) {
        pthread_mutex_unlock(&otf2_lock);
        return;
    }
    if (!zc_on(ZC_F_TRACE) || open_locked() != 0) {
        pthread_mutex_unlock(&otf2_lock);
        return;
    }
    for (struct zc_loc *l = zc_loc_list(); l; l = l->next)
        if (l->writer) {
            OTF2_EvtWriter_GetNumberOfEvents(l->writer, &l->otf2_events);
            OTF2_Archive_CloseEvtWriter(archive, l->writer);
            l->writer = NULL;
        }
    OTF2_Archive_CloseEvtFiles(archive);
    /* every location gets a (possibly empty) local definition file */
    OTF2_Archive_OpenDefFiles(archive);
    for (struct zc_loc *l = zc_loc_list(); l; l = l->next) {
        OTF2_DefWriter *dw = OTF2_Archive_GetDefWriter(archive, loc_id(l));
        if (dw) OTF2_Archive_CloseDefWriter(archive, dw);
    }
    OTF2_Archive_CloseDefFiles(archive);
    write_defs();
    OTF2_Archive_Close(archive);
    archive = NULL;
    pthread_mutex_unlock(&otf2_lock);
}
