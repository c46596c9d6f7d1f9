/* SPDX-License-Identifier: MIT */
/* --timeline: the trace as Chrome trace-event JSON (ui.perfetto.dev, chrome://tracing). Each
 * reader writes its processes' events into its own part file while it reads them, remembering
 * where each process's events start and end; rank 0 then writes the header and copies the
 * processes' byte ranges in rank order, so the file is the same for any number of readers.
 * pid = rank, tid = location; every region is one complete ("X") event with its clock offsets
 * applied, timestamps in microseconds since the job's start with nanosecond digits. */
#include "zc_agg.h"

#include <stdlib.h>
#include <string.h>

struct agg_timeline {
    FILE *f;
    const struct agg_defs *d;
    uint64_t from, to;
    uint8_t *want; /* per rank; NULL = all */
    uint32_t proc;
    long start;
    uint32_t *procs;
    uint64_t *off, *len;
    uint32_t n, cap;
    bool bad;
};

void agg_json_str(FILE *f, const char *s) {
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\') fprintf(f, "\\%c", *p);
        else if (*p == '\n') fputs("\\n", f);
        else if (*p == '\t') fputs("\\t", f);
        else if (*p < 0x20 || *p == 0x7f) fprintf(f, "\\u%04x", *p);
        else fputc(*p, f);
    }
    fputc('"', f);
}

/* "0,2-5,9" -> flags; -1 on a syntax error */
static int parse_ranks(const char *s, uint8_t *want, uint32_t n) {
    while (*s) {
        char *e;
        unsigned long a = strtoul(s, &e, 10), b;
        if (e == s) return -1;
        b = a;
        if (*e == '-') {
            const char *s2 = e + 1;
            b = strtoul(s2, &e, 10);
            if (e == s2) return -1;
        }
        for (unsigned long r = a; r <= b && r < n; r++) want[r] = 1;
        if (*e == ',') e++;
        else if (*e) return -1;
        s = e;
    }
    return 0;
}

struct agg_timeline *agg_timeline_open(const char *part, const struct agg_defs *d, const struct agg_timeline_opts *o) {
    struct agg_timeline *t = calloc(1, sizeof(*t));
    if (!t) return NULL;
    t->d = d;
    t->from = o->from;
    t->to = o->to;
    if (o->ranks) {
        t->want = calloc(d->nranks + 1, 1);
        if (!t->want || parse_ranks(o->ranks, t->want, d->nranks) != 0) {
            free(t->want);
            free(t);
            return NULL;
        }
    }
    t->f = fopen(part, "w");
    if (!t->f) {
        free(t->want);
        free(t);
        return NULL;
    }
    return t;
}

bool agg_timeline_wants(struct agg_timeline *t, uint32_t rank) { return !t->want || (rank < t->d->nranks && t->want[rank]); }

/* threads above streams in the viewer, each in location order */
static uint32_t thread_sort(const struct agg_defs *d, uint32_t li) {
    return (d->locs[li].type == AGG_LOC_THREAD ? 0 : 1000000u) + li;
}

/* Every record starts with ",\n": a process's byte range can follow any other, or the header,
 * and the file stays valid JSON whichever processes are kept. */
void agg_timeline_begin_proc(struct agg_timeline *t, uint32_t proc) {
    const struct agg_defs *d = t->d;
    const struct agg_proc *p = &d->procs[proc];
    t->proc = proc;
    t->start = ftell(t->f);
    const char *host = p->host < d->nnodes ? agg_str(d, d->nodes[p->host].name) : "";
    fprintf(t->f, ",\n{\"ph\":\"M\",\"pid\":%u,\"tid\":0,\"name\":\"process_name\",\"args\":{\"name\":", p->rank);
    char nm[600];
    snprintf(nm, sizeof(nm), "%s%s%s", agg_str(d, d->groups[p->group].name), host[0] ? " @ " : "", host);
    agg_json_str(t->f, nm);
    fprintf(t->f, "}},\n{\"ph\":\"M\",\"pid\":%u,\"tid\":0,\"name\":\"process_sort_index\",\"args\":{\"sort_index\":%u}}",
            p->rank, p->rank);
    for (uint32_t i = 0; i < p->nlocs; i++) {
        uint32_t li = p->locs[i];
        const struct agg_loc *L = &d->locs[li];
        fprintf(t->f, ",\n{\"ph\":\"M\",\"pid\":%u,\"tid\":%u,\"name\":\"thread_name\",\"args\":{\"name\":", p->rank, li);
        if (L->type == AGG_LOC_STREAM && L->device != AGG_NONE) {
            snprintf(nm, sizeof(nm), "%s (%s)", agg_str(d, L->name), agg_str(d, d->nodes[L->device].name));
            agg_json_str(t->f, nm);
        } else {
            agg_json_str(t->f, agg_str(d, L->name));
        }
        fprintf(t->f, "}},\n{\"ph\":\"M\",\"pid\":%u,\"tid\":%u,\"name\":\"thread_sort_index\",\"args\":{\"sort_index\":%u}}",
                p->rank, li, thread_sort(d, li));
    }
}

/* Chrome's timestamps are in microseconds: the nanoseconds as three decimals, in integers (a
 * double would round them on long runs) */
static void us(FILE *f, uint64_t ns) { fprintf(f, "%llu.%03llu", (unsigned long long)(ns / 1000), (unsigned long long)(ns % 1000)); }

void agg_timeline_region(struct agg_timeline *t, uint32_t li, uint32_t region, uint64_t start, uint64_t end, uint64_t bytes,
                         uint64_t cs, const char *cat) {
    const struct agg_defs *d = t->d;
    uint64_t a = start > d->t0 ? start - d->t0 : 0, b = end > d->t0 ? end - d->t0 : 0;
    if (b < t->from || a > t->to) return; /* a region across an edge of the range is cut to it */
    if (a < t->from) a = t->from;
    if (b > t->to) b = t->to;
    if (b < a) b = a;
    fprintf(t->f, ",\n{\"ph\":\"X\",\"pid\":%u,\"tid\":%u,\"ts\":", d->procs[t->proc].rank, li);
    us(t->f, a);
    fputs(",\"dur\":", t->f);
    us(t->f, b - a);
    fputs(",\"name\":", t->f);
    agg_json_str(t->f, region == AGG_NONE ? cat : agg_str(d, d->regions[region].name));
    fputs(",\"cat\":", t->f);
    agg_json_str(t->f, cat);
    if (bytes || cs) {
        fputs(",\"args\":{", t->f);
        if (bytes) fprintf(t->f, "\"bytes\":%llu%s", (unsigned long long)bytes, cs ? "," : "");
        if (cs) fprintf(t->f, "\"callsite\":%llu", (unsigned long long)cs);
        fputc('}', t->f);
    }
    fputc('}', t->f);
}

void agg_timeline_end_proc(struct agg_timeline *t, uint64_t *off, uint64_t *len) {
    long end = ftell(t->f);
    if (t->n == t->cap) {
        uint32_t nc = t->cap ? 2 * t->cap : 64;
        uint32_t *p = realloc(t->procs, nc * sizeof(*p));
        uint64_t *o = p ? realloc(t->off, nc * sizeof(*o)) : NULL;
        if (p) t->procs = p;
        if (o) t->off = o;
        uint64_t *l = o ? realloc(t->len, nc * sizeof(*l)) : NULL;
        if (l) t->len = l;
        if (!p || !o || !l) {
            t->bad = true;
            return;
        }
        t->cap = nc;
    }
    t->procs[t->n] = t->proc;
    t->off[t->n] = (uint64_t)t->start;
    t->len[t->n] = (uint64_t)(end - t->start);
    t->n++;
    if (off) *off = (uint64_t)t->start;
    if (len) *len = (uint64_t)(end - t->start);
}

uint32_t agg_timeline_ranges(const struct agg_timeline *t, const uint32_t **procs, const uint64_t **off,
                             const uint64_t **len) {
    *procs = t->procs;
    *off = t->off;
    *len = t->len;
    return t->n;
}

int agg_timeline_close(struct agg_timeline *t) {
    if (!t) return 0;
    int bad = t->bad || ferror(t->f);
    if (fclose(t->f) != 0) bad = 1;
    free(t->want);
    free(t->procs);
    free(t->off);
    free(t->len);
    free(t);
    return bad ? -1 : 0;
}

int agg_timeline_assemble(const char *out, const struct agg_defs *d, const char *const *parts, const uint64_t *part_of,
                          const uint64_t *off, const uint64_t *len, uint32_t nprocs, const struct agg_timeline_opts *o,
                          struct agg_err *e) {
    FILE *f = fopen(out, "w");
    if (!f) {
        agg_err_set(e, out, "cannot write the timeline");
        return -1;
    }
    fputs("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n{\"ph\":\"M\",\"pid\":0,\"tid\":0,\"name\":\"zecoll_trace\","
          "\"args\":{\"clock\":\"microseconds since the job's first event, clock offsets applied\",\"t0_ns\":",
          f);
    fprintf(f, "%llu,\"from_ns\":%llu,\"to_ns\":", (unsigned long long)d->t0, (unsigned long long)o->from);
    if (o->to == UINT64_MAX) fputs("null", f);
    else fprintf(f, "%llu", (unsigned long long)o->to);
    fputs(",\"ranks\":", f);
    agg_json_str(f, o->ranks ? o->ranks : "all");
    fputs("}}", f);
    /* the processes' byte ranges in rank order, from whichever reader's part holds each: the
     * same bytes for any number of readers */
    int ret = 0;
    FILE *cur = NULL;
    uint64_t cur_part = UINT64_MAX;
    char *buf = malloc(1 << 16);
    if (!buf) ret = -1;
    for (uint32_t p = 0; p < nprocs && ret == 0; p++) {
        if (len[p] == 0 || part_of[p] == UINT64_MAX) continue;
        if (part_of[p] != cur_part) {
            if (cur) fclose(cur);
            cur = fopen(parts[part_of[p]], "r");
            cur_part = part_of[p];
            if (!cur) {
                agg_err_set(e, parts[part_of[p]], "cannot read a timeline part");
                ret = -1;
                break;
            }
        }
        if (fseek(cur, (long)off[p], SEEK_SET) != 0) {
            ret = -1;
            break;
        }
        for (uint64_t left = len[p]; left > 0;) {
            size_t k = left > (1 << 16) ? (1 << 16) : (size_t)left;
            if (fread(buf, 1, k, cur) != k) {
                agg_err_set(e, parts[part_of[p]], "timeline part is short");
                ret = -1;
                break;
            }
            fwrite(buf, 1, k, f);
            left -= k;
        }
    }
    if (cur) fclose(cur);
    free(buf);
    fputs("\n]}\n", f);
    if (fclose(f) != 0 && ret == 0) {
        agg_err_set(e, out, "cannot write the timeline");
        ret = -1;
    }
    return ret;
}
