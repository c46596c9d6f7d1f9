/* SPDX-License-Identifier: MIT */
/* The archive's global definitions, read by every reader rank (they are identical for all, so
 * ids are the job's global ids and no name needs unifying between readers), then resolved into
 * what the statistics need: each location's process, device and queue (docs/archive.md A6-A8),
 * each region's class (A9, A10), and each process's event bytes for the partition. */
#include "zc_agg.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <otf2/otf2.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* Definitions with ids beyond this are taken as corruption, not as a reason to allocate. */
#define AGG_MAX_ID (1u << 26)

/* ---------------------------------------------------------------- errors */
static _Thread_local char otf2_msg[400];

static OTF2_ErrorCode on_otf2_error(void *ud, const char *file, uint64_t line, const char *func, OTF2_ErrorCode code,
                                    const char *fmt, va_list va) {
    (void)ud;
    (void)file;
    (void)line;
    (void)func;
    char m[300] = "";
    if (fmt) vsnprintf(m, sizeof(m), fmt, va);
    snprintf(otf2_msg, sizeof(otf2_msg), "%s%s%s", OTF2_Error_GetName(code), m[0] ? ": " : "", m);
    return code;
}

void agg_otf2_errors_capture(void) { OTF2_Error_RegisterCallback(on_otf2_error, NULL); }
const char *agg_otf2_last_error(void) { return otf2_msg; }

void agg_err_set(struct agg_err *e, const char *file, const char *fmt, ...) {
    if (!e || e->code) return;
    e->code = 2;
    snprintf(e->file, sizeof(e->file), "%s", file ? file : "");
    va_list va;
    va_start(va, fmt);
    vsnprintf(e->msg, sizeof(e->msg), fmt, va);
    va_end(va);
}

/* ---------------------------------------------------------------- probe */
/* OTF2's reader can loop for a very long time on a corrupt anchor file (a property count read
 * from the file drives its loops; seen with mutated anchors), or crash inside the library. The
 * anchor and the global definitions are therefore read once in a child process first: the child
 * tells through a pipe which file it is reading and that it advances; the parent gives up when
 * it stalls or dies, and names the file. */
static int phase_fd = -1;

static void phase(const char *path) {
    if (phase_fd < 0) return;
    char b[PATH_MAX + 2];
    int n = snprintf(b, sizeof(b), "F%s\n", path);
    if (write(phase_fd, b, (size_t)n) < 0) phase_fd = -1;
}

static void tick_phase(void) {
    if (phase_fd >= 0 && write(phase_fd, ".", 1) < 0) phase_fd = -1;
}

int agg_defs_probe(const char *archive, int stall_s, struct agg_err *e) {
    int fd[2];
    if (pipe(fd) != 0) return 0; /* no probe: the real read runs unprotected */
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        close(fd[0]);
        close(fd[1]);
        return 0;
    }
    if (pid == 0) {
        close(fd[0]);
        phase_fd = fd[1];
        struct agg_defs d;
        struct agg_err ce = {0};
        _exit(agg_defs_read(&d, archive, &ce) == 0 ? 0 : 3);
    }
    close(fd[1]);
    char file[PATH_MAX + 2] = "", line[PATH_MAX + 2];
    size_t ll = 0;
    int status = 0, waited = 0;
    for (;;) {
        struct pollfd p = {fd[0], POLLIN, 0};
        int pr = poll(&p, 1, 1000);
        if (pr > 0) {
            char buf[4096];
            ssize_t n = read(fd[0], buf, sizeof(buf));
            if (n > 0) {
                waited = 0;
                for (ssize_t i = 0; i < n; i++) {
                    if (buf[i] == '\n') {
                        line[ll] = 0;
                        if (line[0] == 'F') snprintf(file, sizeof(file), "%s", line + 1);
                        ll = 0;
                    } else if (buf[i] != '.' || ll) {
                        if (ll < sizeof(line) - 1) line[ll++] = buf[i];
                    }
                }
                continue;
            }
            if (n == 0) break; /* the child is done */
        }
        if (waitpid(pid, &status, WNOHANG) == pid) {
            pid = -1;
            break;
        }
        if (pr == 0 && ++waited >= stall_s) {
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            close(fd[0]);
            agg_err_set(e, file, "the OTF2 reader makes no progress on this file for %d s (corrupt?)", stall_s);
            return -1;
        }
    }
    close(fd[0]);
    if (pid > 0) waitpid(pid, &status, 0);
    if (WIFSIGNALED(status)) {
        agg_err_set(e, file, "the OTF2 reader crashes on this file (signal %d): corrupt", WTERMSIG(status));
        return -1;
    }
    return 0; /* success, or an error the real read reports itself */
}

/* ---------------------------------------------------------------- growth */
/* Definitions are arrays indexed by their id (zecoll's ids are dense); an id beyond AGG_MAX_ID is
 * taken as corruption instead of a reason to allocate. */
static bool grow(void **p, uint32_t *n, uint64_t want, size_t elem) {
    if (want <= *n) return true;
    if (want > AGG_MAX_ID) return false;
    uint64_t cap = *n ? *n : 16;
    while (cap < want) cap *= 2;
    void *q = realloc(*p, (size_t)cap * elem);
    if (!q) return false;
    memset((char *)q + (size_t)*n * elem, 0, (size_t)(cap - *n) * elem);
    *p = q;
    *n = (uint32_t)cap;
    return true;
}

struct prop {
    uint64_t loc, value;
    int which;
};

struct rd {
    struct agg_defs *d;
    struct prop *props; /* applied once the locations are hashed */
    uint32_t nprops, cap_props;
    uint32_t cap_strings, cap_regions, cap_groups, cap_nodes, cap_comms, cap_gsize, cap_mmembers, cap_mclasses;
    uint32_t nlocs_cap;
    bool bad;
    char why[200];
    bool clock_seen;
};

static OTF2_CallbackCode bad(struct rd *r, const char *why) {
    if (!r->bad) snprintf(r->why, sizeof(r->why), "%s", why);
    r->bad = true;
    return OTF2_CALLBACK_INTERRUPT;
}

static OTF2_CallbackCode cb_clock(void *ud, uint64_t res, uint64_t off, uint64_t len, uint64_t rt) {
    struct rd *r = ud;
    (void)rt;
    r->d->ticks = res;
    r->d->t0 = off;
    r->d->span = len;
    r->clock_seen = true;
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode cb_string(void *ud, OTF2_StringRef self, const char *s) {
    struct rd *r = ud;
    if ((self & 1023) == 0) tick_phase(); /* the probe's parent sees progress */
    if (!grow((void **)&r->d->strings, &r->cap_strings, (uint64_t)self + 1, sizeof(char *))) return bad(r, "implausible string id");
    free(r->d->strings[self]);
    r->d->strings[self] = strdup(s ? s : "");
    if (!r->d->strings[self]) return bad(r, "out of memory");
    if (self >= r->d->nstrings) r->d->nstrings = self + 1;
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode cb_region(void *ud, OTF2_RegionRef self, OTF2_StringRef name, OTF2_StringRef canon,
                                   OTF2_StringRef desc, OTF2_RegionRole role, OTF2_Paradigm par, OTF2_RegionFlag fl,
                                   OTF2_StringRef file, uint32_t b, uint32_t e) {
    struct rd *r = ud;
    if (!grow((void **)&r->d->regions, &r->cap_regions, (uint64_t)self + 1, sizeof(struct agg_region)))
        return bad(r, "implausible region id");
    r->d->regions[self] = (struct agg_region){.name = name, .role = (uint8_t)role, .paradigm = (uint8_t)par};
    if (self >= r->d->nregions) r->d->nregions = self + 1;
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode cb_node(void *ud, OTF2_SystemTreeNodeRef self, OTF2_StringRef name, OTF2_StringRef cls,
                                 OTF2_SystemTreeNodeRef parent) {
    struct rd *r = ud;
    if (!grow((void **)&r->d->nodes, &r->cap_nodes, (uint64_t)self + 1, sizeof(struct agg_node)))
        return bad(r, "implausible system tree node id");
    r->d->nodes[self] = (struct agg_node){.name = name, .cls = cls, .parent = parent, .defined = true};
    if (self >= r->d->nnodes) r->d->nnodes = self + 1;
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode cb_lgroup(void *ud, OTF2_LocationGroupRef self, OTF2_StringRef name, OTF2_LocationGroupType t,
                                   OTF2_SystemTreeNodeRef node, OTF2_LocationGroupRef creator) {
    struct rd *r = ud;
    if (!grow((void **)&r->d->groups, &r->cap_groups, (uint64_t)self + 1, sizeof(struct agg_lgroup)))
        return bad(r, "implausible location group id");
    r->d->groups[self] = (struct agg_lgroup){.name = name, .type = (uint8_t)t, .node = node, .creator = creator, .defined = true};
    if (self >= r->d->ngroups) r->d->ngroups = self + 1;
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode cb_loc(void *ud, OTF2_LocationRef self, OTF2_StringRef name, OTF2_LocationType t, uint64_t nev,
                                OTF2_LocationGroupRef group) {
    struct rd *r = ud;
    if ((r->d->nlocs & 1023) == 0) tick_phase();
    struct agg_defs *d = r->d;
    if (!grow((void **)&d->locs, &r->nlocs_cap, (uint64_t)d->nlocs + 1, sizeof(struct agg_loc))) return bad(r, "too many locations");
    struct agg_loc *l = &d->locs[d->nlocs++];
    memset(l, 0, sizeof(*l));
    l->id = self;
    l->name = name;
    l->type = t == OTF2_LOCATION_TYPE_CPU_THREAD ? AGG_LOC_THREAD
              : t == OTF2_LOCATION_TYPE_ACCELERATOR_STREAM ? AGG_LOC_STREAM : AGG_LOC_OTHER;
    l->def_events = nev;
    l->group = group;
    l->proc = l->device = l->queue = AGG_NONE;
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode cb_group(void *ud, OTF2_GroupRef self, OTF2_StringRef name, OTF2_GroupType t, OTF2_Paradigm p,
                                  OTF2_GroupFlag fl, uint32_t n, const uint64_t *members) {
    struct rd *r = ud;
    if (!grow((void **)&r->d->group_size, &r->cap_gsize, (uint64_t)self + 1, sizeof(uint32_t))) return bad(r, "implausible group id");
    r->d->group_size[self] = n;
    if (self >= r->d->ngroup_size) r->d->ngroup_size = self + 1;
    /* MPI groups' members: communicator ranks to world ranks (the matrix, wait states) */
    if (p == OTF2_PARADIGM_MPI && agg_group_keep(r->d, self, t, n, members) != 0) return bad(r, "out of memory");
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode comm_common(struct rd *r, OTF2_CommRef self, OTF2_StringRef name, OTF2_GroupRef g,
                                     OTF2_GroupRef gb, OTF2_CommRef parent, bool inter) {
    if (!grow((void **)&r->d->comms, &r->cap_comms, (uint64_t)self + 1, sizeof(struct agg_comm)))
        return bad(r, "implausible communicator id");
    struct agg_comm *c = &r->d->comms[self];
    *c = (struct agg_comm){.name = name, .group = g, .group_b = gb, .parent = parent, .inter = inter, .defined = true};
    c->size = g < r->d->ngroup_size ? r->d->group_size[g] : 0;
    if (inter && gb < r->d->ngroup_size) c->size += r->d->group_size[gb];
    if (self >= r->d->ncomms) r->d->ncomms = self + 1;
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode cb_comm(void *ud, OTF2_CommRef self, OTF2_StringRef name, OTF2_GroupRef g, OTF2_CommRef parent,
                                 OTF2_CommFlag fl) {
    return comm_common(ud, self, name, g, OTF2_UNDEFINED_GROUP, parent, false);
}

static OTF2_CallbackCode cb_intercomm(void *ud, OTF2_CommRef self, OTF2_StringRef name, OTF2_GroupRef a, OTF2_GroupRef b,
                                      OTF2_CommRef common, OTF2_CommFlag fl) {
    return comm_common(ud, self, name, a, b, common, true);
}

static OTF2_CallbackCode cb_param(void *ud, OTF2_ParameterRef self, OTF2_StringRef name, OTF2_ParameterType t) {
    struct rd *r = ud;
    const char *s = name < r->d->nstrings ? r->d->strings[name] : NULL;
    if (s && strcmp(s, "callsite id") == 0 && t == OTF2_PARAMETER_TYPE_UINT64) r->d->callsite_param = self;
    return OTF2_CALLBACK_SUCCESS;
}

/* Location properties come before their locations can be looked up: kept, applied in
 * resolution (apply_props). */
static OTF2_CallbackCode cb_locprop(void *ud, OTF2_LocationRef loc, OTF2_StringRef name, OTF2_Type t, OTF2_AttributeValue v) {
    struct rd *r = ud;
    struct agg_defs *d = r->d;
    const char *s = name < d->nstrings ? d->strings[name] : NULL;
    if (!s || t != OTF2_TYPE_UINT64) return OTF2_CALLBACK_SUCCESS;
    int which = strcmp(s, "zecoll::events") == 0 ? 1 : strcmp(s, "zecoll::clamped") == 0 ? 2
              : strcmp(s, "zecoll::dropped") == 0 ? 4 : strcmp(s, "zecoll::data_end") == 0 ? 8 : 0;
    if (!which) return OTF2_CALLBACK_SUCCESS;
    if (!grow((void **)&r->props, &r->cap_props, (uint64_t)r->nprops + 1, sizeof(struct prop))) return bad(r, "too many properties");
    r->props[r->nprops++] = (struct prop){loc, v.uint64, which};
    return OTF2_CALLBACK_SUCCESS;
}

/* A19 */
static OTF2_CallbackCode cb_mmember(void *ud, OTF2_MetricMemberRef self, OTF2_StringRef name, OTF2_StringRef descr,
                                    OTF2_MetricType mt, OTF2_MetricMode mode, OTF2_Type vt, OTF2_Base base, int64_t exp,
                                    OTF2_StringRef unit) {
    struct rd *r = ud;
    if (!grow((void **)&r->d->mmembers, &r->cap_mmembers, (uint64_t)self + 1, sizeof(struct agg_mmember)))
        return bad(r, "implausible metric member id");
    /* a base other than decimal 10^0 scales the values: not summed as they are */
    bool plain = base == OTF2_BASE_DECIMAL && exp == 0;
    r->d->mmembers[self] = (struct agg_mmember){name, descr, unit, (uint8_t)vt, (uint8_t)mode, !plain, true};
    if (self >= r->d->nmmembers) r->d->nmmembers = self + 1;
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode cb_mclass(void *ud, OTF2_MetricRef self, uint8_t n, const OTF2_MetricMemberRef *members,
                                   OTF2_MetricOccurrence occ, OTF2_RecorderKind kind) {
    struct rd *r = ud;
    if (!grow((void **)&r->d->mclasses, &r->cap_mclasses, (uint64_t)self + 1, sizeof(struct agg_mclass)))
        return bad(r, "implausible metric class id");
    struct agg_mclass *c = &r->d->mclasses[self];
    free(c->m);
    c->m = malloc((n ? n : 1) * sizeof(uint32_t));
    if (!c->m) return bad(r, "out of memory");
    for (uint8_t i = 0; i < n; i++) c->m[i] = members[i];
    c->n = n;
    c->defined = true;
    if (self >= r->d->nmclasses) r->d->nmclasses = self + 1;
    if (n > r->d->mclass_max) r->d->mclass_max = n;
    return OTF2_CALLBACK_SUCCESS;
}

bool agg_member_summed(const struct agg_mmember *m) {
    return m->defined && !m->scaled && m->mode == OTF2_METRIC_ACCUMULATED_START &&
           (m->type == OTF2_TYPE_INT64 || m->type == OTF2_TYPE_UINT64);
}

/* ---------------------------------------------------------------- helpers */
const char *agg_str(const struct agg_defs *d, uint32_t s) {
    return s < d->nstrings && d->strings[s] ? d->strings[s] : "";
}

uint32_t agg_loc_index(const struct agg_defs *d, uint64_t id) {
    if (!d->loc_ht_cap) return AGG_NONE;
    size_t m = d->loc_ht_cap - 1;
    for (size_t j = agg_hash64(id) & m;; j = (j + 1) & m) {
        if (d->loc_ht_val[j] == AGG_NONE) return AGG_NONE;
        if (d->loc_ht_key[j] == id) return d->loc_ht_val[j];
    }
}

void agg_archive_paths(const char *archive, char anchor[PATH_MAX], char dir[PATH_MAX]) {
    size_t len = strlen(archive);
    if (len >= 5 && strcmp(archive + len - 5, ".otf2") == 0) snprintf(anchor, PATH_MAX, "%s", archive);
    else snprintf(anchor, PATH_MAX, "%s%straces.otf2", archive, len && archive[len - 1] == '/' ? "" : "/");
    snprintf(dir, PATH_MAX, "%s", anchor);
    char *slash = strrchr(dir, '/');
    if (slash) *slash = 0;
    else snprintf(dir, PATH_MAX, ".");
}

static char mem_letter(char c) { return strchr("HDSMI", c) && c ? c : 0; }

/* A9: what a region is when it runs on a stream, and on a thread (A10) */
static void classify(struct agg_defs *d, struct agg_region *r) {
    const char *n = agg_str(d, r->name);
    r->dev_class = AGG_D_KERNEL;
    r->xfer = 0;
    if (r->role == OTF2_REGION_ROLE_BARRIER) r->dev_class = AGG_D_BARRIER;
    else if (r->role == OTF2_REGION_ROLE_DATA_TRANSFER) {
        const char *p = strrchr(n, '(');
        size_t len = strlen(n);
        if (p && len >= 3 && n[len - 1] == ')') {
            const char *a = p + 1;
            size_t k = (size_t)(n + len - 1 - a);
            if (k == 3 && a[1] == '2' && mem_letter(a[0]) && mem_letter(a[2])) {
                bool img = a[0] == 'I' || a[2] == 'I' || strstr(n, "Image");
                r->dev_class = img ? AGG_D_IMAGE : AGG_D_COPY;
                r->xfer = (uint32_t)(img ? 2 : 1) << 16 | (uint32_t)(uint8_t)a[0] << 8 | (uint8_t)a[2];
            } else if (k == 1 && mem_letter(a[0])) {
                r->dev_class = AGG_D_FILL;
                r->xfer = (uint32_t)3 << 16 | (uint8_t)a[0];
            } else {
                r->dev_class = AGG_D_COPY;
                r->xfer = (uint32_t)1 << 16 | 'M' << 8 | 'M';
            }
        } else {
            r->dev_class = AGG_D_COPY;
            r->xfer = (uint32_t)1 << 16 | 'M' << 8 | 'M';
        }
    }
    if (r->paradigm == OTF2_PARADIGM_MPI) r->host_class = AGG_H_MPI;
    else if (r->paradigm == OTF2_PARADIGM_MEASUREMENT_SYSTEM) r->host_class = AGG_H_MEASUREMENT;
    else if (r->paradigm == OTF2_PARADIGM_OPENCL) r->host_class = AGG_H_L0;
    else r->host_class = AGG_H_OTHER;
    r->l0_sync = r->host_class == AGG_H_L0 && agg_is_l0_sync(n);
}

void agg_xfer_name(uint32_t x, char *out, size_t n) {
    char s = (char)((x >> 8) & 0xff), d = (char)(x & 0xff);
    if ((x >> 16) == 3) snprintf(out, n, "%c", d ? d : '?');
    else snprintf(out, n, "%c2%c", s ? s : '?', d ? d : '?');
}

const char *agg_xfer_kind(uint32_t x) {
    switch (x >> 16) {
    case 1: return "copy";
    case 2: return "image";
    case 3: return "fill";
    default: return "other";
    }
}

const char *agg_xfer_direction(uint32_t x) {
    char s = (char)((x >> 8) & 0xff), d = (char)(x & 0xff);
    if ((x >> 16) == 3) return "fill";
    if ((x >> 16) == 2) return "image";
    bool sd = s == 'D', dd = d == 'D';
    return sd && dd ? "D2D" : dd ? "H2D" : sd ? "D2H" : "H2H";
}

/* ---------------------------------------------------------------- resolution */
static int cmp_loc_id(const void *a, const void *b, void *ud) {
    const struct agg_defs *d = ud;
    uint64_t x = d->locs[*(const uint32_t *)a].id, y = d->locs[*(const uint32_t *)b].id;
    return x < y ? -1 : x > y;
}

static uint32_t proc_group_of(const struct agg_defs *d, uint32_t g) {
    for (int hops = 0; hops < 8 && g < d->ngroups && d->groups[g].defined; hops++) {
        if (d->groups[g].type == OTF2_LOCATION_GROUP_TYPE_PROCESS) return g;
        g = d->groups[g].creator;
    }
    return AGG_NONE;
}

/* regions' classes (A9, A10); which system tree nodes are devices and hosts (A6) */
static void classify_all(struct agg_defs *d) {
    for (uint32_t i = 0; i < d->nregions; i++) classify(d, &d->regions[i]);
    for (uint32_t i = 0; i < d->nnodes; i++) {
        struct agg_node *n = &d->nodes[i];
        const char *c = agg_str(d, n->cls);
        n->device = strcmp(c, "Level Zero Device") == 0 || strstr(c, "Device") != NULL;
        n->host = strcmp(c, "node") == 0;
        if (n->device) d->ndevices++;
        if (n->host) d->nhosts++;
    }
}

/* location id -> index (agg_loc_index); a location defined twice is an error */
static int hash_locations(struct agg_defs *d, struct agg_err *e) {
    size_t cap = 16;
    while (cap < 2 * (size_t)d->nlocs + 2) cap *= 2;
    d->loc_ht_key = malloc(cap * sizeof(uint64_t));
    d->loc_ht_val = malloc(cap * sizeof(uint32_t));
    if (!d->loc_ht_key || !d->loc_ht_val) return -1;
    memset(d->loc_ht_val, 0xff, cap * sizeof(uint32_t));
    d->loc_ht_cap = cap;
    for (uint32_t i = 0; i < d->nlocs; i++) {
        size_t j = agg_hash64(d->locs[i].id) & (cap - 1);
        while (d->loc_ht_val[j] != AGG_NONE) {
            if (d->loc_ht_key[j] == d->locs[i].id) {
                agg_err_set(e, NULL, "location %llu is defined twice", (unsigned long long)d->locs[i].id);
                return -2;
            }
            j = (j + 1) & (cap - 1);
        }
        d->loc_ht_key[j] = d->locs[i].id;
        d->loc_ht_val[j] = i;
    }
    return 0;
}

/* the location properties (A12, A20), read before the locations could be looked up */
static void apply_props(struct agg_defs *d, const struct rd *r) {
    for (uint32_t i = 0; i < r->nprops; i++) {
        uint32_t li = agg_loc_index(d, r->props[i].loc);
        if (li == AGG_NONE) continue;
        struct agg_loc *l = &d->locs[li];
        if (r->props[i].which == 1) l->p_events = r->props[i].value;
        else if (r->props[i].which == 2) l->p_clamped = r->props[i].value;
        else if (r->props[i].which == 8) l->p_data_end = r->props[i].value;
        else l->p_dropped = r->props[i].value;
        l->have_props |= (uint8_t)r->props[i].which;
        d->have_props = 1;
    }
}

/* Processes: one per PROCESS group, in group id order (= rank order, A7); a process's rank is
 * its index, which is its group id in a zecoll archive. proc_of_group: d->ngroups + 1 entries. */
static int find_processes(struct agg_defs *d, uint32_t *proc_of_group) {
    for (uint32_t g = 0; g < d->ngroups; g++) proc_of_group[g] = AGG_NONE;
    for (uint32_t g = 0; g < d->ngroups; g++)
        if (d->groups[g].defined && d->groups[g].type == OTF2_LOCATION_GROUP_TYPE_PROCESS) d->nprocs++;
    d->procs = calloc(d->nprocs + 1, sizeof(struct agg_proc));
    if (!d->procs) return -1;
    uint32_t k = 0;
    for (uint32_t g = 0; g < d->ngroups; g++)
        if (d->groups[g].defined && d->groups[g].type == OTF2_LOCATION_GROUP_TYPE_PROCESS) {
            struct agg_proc *p = &d->procs[k];
            p->group = g;
            p->rank = k;
            p->host = d->groups[g].node;
            if (strncmp(agg_str(d, d->groups[g].name), "MPI Rank ", 9) == 0) d->mpi = 1;
            proc_of_group[g] = k++;
        }
    d->nranks = d->nprocs;
    return 0;
}

/* What a file of the archive is instead of a regular file (a FIFO would block OTF2's read for
 * good, a device or directory fail it obscurely), or NULL for a regular file. */
static const char *irregular_kind(mode_t m) {
    if (S_ISREG(m)) return NULL;
    if (S_ISFIFO(m)) return "a FIFO";
    if (S_ISDIR(m)) return "a directory";
    return S_ISCHR(m) || S_ISBLK(m) ? "a device" : "not a regular file";
}

/* The same for a path; NULL also where there is none (a missing file is judged where it is
 * read). stat() itself never blocks on a FIFO. */
static const char *not_regular(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 ? irregular_kind(st.st_mode) : NULL;
}

/* Each location's process, device (a stream's group's node) and event file; each process's
 * location count and bytes (the partition's weight). */
static bool place_locations(struct agg_defs *d, const uint32_t *proc_of_group, const char *dir,
                            struct agg_err *e) {
    for (uint32_t i = 0; i < d->nlocs; i++) {
        struct agg_loc *l = &d->locs[i];
        uint32_t pg = proc_group_of(d, l->group);
        l->proc = pg == AGG_NONE ? AGG_NONE : proc_of_group[pg];
        if (l->type == AGG_LOC_THREAD) d->nthreads++;
        if (l->type == AGG_LOC_STREAM) {
            d->nstreams++;
            uint32_t node = l->group < d->ngroups ? d->groups[l->group].node : AGG_NONE;
            l->device = node < d->nnodes && d->nodes[node].defined ? node : AGG_NONE;
        }
        char path[PATH_MAX + 64];
        snprintf(path, sizeof(path), "%s/traces/%llu.evt", dir, (unsigned long long)l->id);
        struct stat st;
        if (stat(path, &st) == 0) {
            const char *kind = irregular_kind(st.st_mode);
            if (kind) { /* checked before any is opened */
                agg_err_set(e, path, "is %s, not an OTF2 event file", kind);
                return false;
            }
            l->file_size = (uint64_t)st.st_size;
            l->empty = st.st_size == 0 && l->def_events > 0;
        } else {
            l->missing = l->def_events > 0;
        }
        if (l->proc != AGG_NONE) {
            d->procs[l->proc].nlocs++;
            d->procs[l->proc].bytes += l->file_size;
        }
    }
    return true;
}

/* each process's locations, sorted by id */
static int list_locations(struct agg_defs *d) {
    for (uint32_t p = 0; p < d->nprocs; p++) {
        d->procs[p].locs = calloc(d->procs[p].nlocs + 1, sizeof(uint32_t));
        if (!d->procs[p].locs) return -1;
        d->procs[p].nlocs = 0;
    }
    for (uint32_t i = 0; i < d->nlocs; i++)
        if (d->locs[i].proc != AGG_NONE) {
            struct agg_proc *p = &d->procs[d->locs[i].proc];
            p->locs[p->nlocs++] = i;
        }
    for (uint32_t p = 0; p < d->nprocs; p++) qsort_r(d->procs[p].locs, d->procs[p].nlocs, sizeof(uint32_t), cmp_loc_id, d);
    return 0;
}

/* queues (A8): a lane "X/k" belongs to the location named "X" in the same group */
static void join_lanes(struct agg_defs *d) {
    for (uint32_t p = 0; p < d->nprocs; p++) {
        struct agg_proc *pr = &d->procs[p];
        for (uint32_t i = 0; i < pr->nlocs; i++) {
            struct agg_loc *l = &d->locs[pr->locs[i]];
            if (l->type != AGG_LOC_STREAM) continue;
            l->queue = pr->locs[i];
            const char *n = agg_str(d, l->name), *slash = strrchr(n, '/');
            if (!slash) continue;
            size_t blen = (size_t)(slash - n);
            for (uint32_t j = 0; j < pr->nlocs; j++) {
                const struct agg_loc *b = &d->locs[pr->locs[j]];
                const char *bn = agg_str(d, b->name);
                if (b->type == AGG_LOC_STREAM && b->group == l->group && strlen(bn) == blen && memcmp(bn, n, blen) == 0) {
                    l->queue = pr->locs[j];
                    break;
                }
            }
        }
    }
}

static int resolve(struct agg_defs *d, const struct rd *r, const char *dir, struct agg_err *e) {
    classify_all(d);
    int h = hash_locations(d, e);
    if (h == -2) return -1;
    if (h != 0) goto oom;
    apply_props(d, r);
    uint32_t *proc_of_group = calloc(d->ngroups + 1, sizeof(uint32_t));
    if (!proc_of_group || find_processes(d, proc_of_group) != 0) {
        free(proc_of_group);
        goto oom;
    }
    bool placed = place_locations(d, proc_of_group, dir, e);
    free(proc_of_group);
    if (!placed) return -1;
    if (list_locations(d) != 0) goto oom;
    join_lanes(d);
    return 0;
oom:
    agg_err_set(e, NULL, "out of memory reading the definitions");
    return -1;
}

static OTF2_GlobalDefReaderCallbacks *def_callbacks(void) {
    OTF2_GlobalDefReaderCallbacks *cb = OTF2_GlobalDefReaderCallbacks_New();
    if (!cb) return NULL;
    OTF2_GlobalDefReaderCallbacks_SetClockPropertiesCallback(cb, cb_clock);
    OTF2_GlobalDefReaderCallbacks_SetStringCallback(cb, cb_string);
    OTF2_GlobalDefReaderCallbacks_SetRegionCallback(cb, cb_region);
    OTF2_GlobalDefReaderCallbacks_SetSystemTreeNodeCallback(cb, cb_node);
    OTF2_GlobalDefReaderCallbacks_SetLocationGroupCallback(cb, cb_lgroup);
    OTF2_GlobalDefReaderCallbacks_SetLocationCallback(cb, cb_loc);
    OTF2_GlobalDefReaderCallbacks_SetGroupCallback(cb, cb_group);
    OTF2_GlobalDefReaderCallbacks_SetCommCallback(cb, cb_comm);
    OTF2_GlobalDefReaderCallbacks_SetInterCommCallback(cb, cb_intercomm);
    OTF2_GlobalDefReaderCallbacks_SetParameterCallback(cb, cb_param);
    OTF2_GlobalDefReaderCallbacks_SetLocationPropertyCallback(cb, cb_locprop);
    OTF2_GlobalDefReaderCallbacks_SetMetricMemberCallback(cb, cb_mmember);
    OTF2_GlobalDefReaderCallbacks_SetMetricClassCallback(cb, cb_mclass);
    return cb;
}

/* what a reader cannot do without: readable definitions with a clock and locations */
static bool defs_complete(const struct agg_defs *d, const struct rd *r, OTF2_ErrorCode rc, const char *gdef,
                          struct agg_err *e) {
    if (r->bad) agg_err_set(e, gdef, "corrupt global definitions (%s)", r->why);
    else if (rc != OTF2_SUCCESS) agg_err_set(e, gdef, "corrupt or truncated global definitions (%s)", agg_otf2_last_error());
    else if (!r->clock_seen || d->ticks == 0) agg_err_set(e, gdef, "no clock properties: not a complete archive");
    else if (d->nlocs == 0) agg_err_set(e, gdef, "no locations defined: not a complete archive");
    else return true;
    return false;
}


/* A21: the ZECOLL::L0_* properties the collector writes at close (absent: "" and 0) */
static void l0_properties(OTF2_Reader *rd, struct agg_defs *d) {
    static const struct {
        const char *name;
        size_t off, cap;
    } p[] = {{"ZECOLL::L0_SPEC_KNOWN", offsetof(struct agg_defs, l0_known), sizeof(d->l0_known)},
             {"ZECOLL::L0_SPEC_ASKED", offsetof(struct agg_defs, l0_asked), sizeof(d->l0_asked)},
             {"ZECOLL::L0_UNTRACED", offsetof(struct agg_defs, l0_untraced), sizeof(d->l0_untraced)},
             {"ZECOLL::L0_UNTRACED_UNCOUNTED", offsetof(struct agg_defs, l0_uncounted), sizeof(d->l0_uncounted)}};
    for (size_t i = 0; i < sizeof(p) / sizeof(p[0]); i++) {
        char *v = NULL;
        if (OTF2_Reader_GetProperty(rd, p[i].name, &v) == OTF2_SUCCESS && v)
            snprintf((char *)d + p[i].off, p[i].cap, "%s", v);
        free(v);
    }
    char *v = NULL;
    if (OTF2_Reader_GetProperty(rd, "ZECOLL::L0_UNTRACED_CALLS", &v) == OTF2_SUCCESS && v)
        d->l0_untraced_calls = strtoull(v, NULL, 10);
    free(v);
}

int agg_defs_read(struct agg_defs *d, const char *archive, struct agg_err *e) {
    memset(d, 0, sizeof(*d));
    d->callsite_param = AGG_NONE;
    d->mpi_locs_group = AGG_NONE;
    char anchor[PATH_MAX], dir[PATH_MAX];
    agg_archive_paths(archive, anchor, dir);
    struct stat st;
    if (stat(anchor, &st) != 0) {
        agg_err_set(e, anchor, "%s (not an OTF2 archive: give its directory or its traces.otf2)", strerror(errno));
        return -1;
    }
    char gdef[PATH_MAX + 16];
    snprintf(gdef, sizeof(gdef), "%s/traces.def", dir);
    const char *bad = anchor, *kind = not_regular(anchor);
    if (!kind) kind = not_regular(bad = gdef);
    if (kind) {
        agg_err_set(e, bad, "is %s, not a file of an OTF2 archive", kind);
        return -1;
    }
    agg_otf2_errors_capture();
    phase(anchor);
    OTF2_Reader *rd = OTF2_Reader_Open(anchor);
    if (!rd) {
        agg_err_set(e, anchor, "not a readable OTF2 anchor file (%s)", agg_otf2_last_error());
        return -1;
    }
    int ret = -1;
    struct rd r = {.d = d};
    if (OTF2_Reader_SetSerialCollectiveCallbacks(rd) != OTF2_SUCCESS) {
        agg_err_set(e, anchor, "cannot use the archive (%s)", agg_otf2_last_error());
        goto out;
    }
    OTF2_GlobalDefReader *gr = OTF2_Reader_GetGlobalDefReader(rd);
    if (!gr) {
        agg_err_set(e, gdef, "cannot read the global definitions (%s)",
                    stat(gdef, &st) == 0 ? agg_otf2_last_error() : strerror(ENOENT));
        goto out;
    }
    OTF2_GlobalDefReaderCallbacks *cb = def_callbacks();
    if (!cb) {
        agg_err_set(e, anchor, "out of memory");
        goto out;
    }
    OTF2_Reader_RegisterGlobalDefCallbacks(rd, gr, cb, &r);
    OTF2_GlobalDefReaderCallbacks_Delete(cb);
    uint64_t n = 0;
    phase(gdef);
    OTF2_ErrorCode rc = OTF2_Reader_ReadAllGlobalDefinitions(rd, gr, &n);
    phase(anchor); /* resolving: stats the event files */
    if (!defs_complete(d, &r, rc, gdef, e) || resolve(d, &r, dir, e) != 0) goto out;
    char *salv = NULL; /* A20: rebuilt by zecoll salvage */
    if (OTF2_Reader_GetProperty(rd, "ZECOLL::SALVAGED", &salv) == OTF2_SUCCESS && salv)
        snprintf(d->salvaged, sizeof(d->salvaged), "%s", salv[0] ? salv : "yes");
    free(salv);
    l0_properties(rd, d);
    if (d->nprocs == 0) {
        agg_err_set(e, gdef, "no process location groups defined");
        goto out;
    }
    ret = 0;
out:
    OTF2_Reader_Close(rd);
    free(r.props);
    if (ret != 0) agg_defs_free(d);
    return ret;
}

void agg_defs_free(struct agg_defs *d) {
    for (uint32_t i = 0; i < d->nstrings; i++) free(d->strings[i]);
    free(d->strings);
    free(d->regions);
    free(d->groups);
    free(d->nodes);
    free(d->locs);
    free(d->comms);
    free(d->group_size);
    agg_groups_free(d);
    free(d->mmembers);
    for (uint32_t i = 0; i < d->nmclasses; i++) free(d->mclasses[i].m);
    free(d->mclasses);
    for (uint32_t p = 0; p < d->nprocs; p++) free(d->procs[p].locs);
    free(d->procs);
    free(d->loc_ht_key);
    free(d->loc_ht_val);
    memset(d, 0, sizeof(*d));
}
