/* SPDX-License-Identifier: MIT */
/* Sealed event files (format 4, docs/salvage.md "Seals"): the collector's flusher writes the
 * part of a location's current chunk that its encoder filled (collector/archive/zc_otf2_enc.h)
 * and journals a SEAL record saying which records the file then holds; the writer journals
 * nothing of what it writes to the file. Salvage keeps the file up to the seal and resumes the
 * encoder there with the journal's records from the seal on. Here the file is read back whole
 * up to the seal: every chunk's header and record (the records our encoder writes, nothing
 * else), its event count and last time against the seal's, and what the records after it need:
 * the regions open at its end, the callsite ids of its calls, the application's events in it. A
 * file cut short (a node failure before the write reached the disk) or damaged fails that, and
 * an earlier seal it bears out is taken instead (the records between are counted lost). */
#include "zc_salvage_internal.h"

#include "zc_otf2_enc.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char *zc_salv_run_dir;

/* OTF2 3.0's record types our encoder writes (zc_otf2_enc.c) */
enum {
    T_END_OF_CHUNK = 0,
    T_CHUNK_HEADER = 3,
    T_TIMESTAMP = 5,
    T_MEASUREMENT_ON_OFF = 11,
    T_ENTER = 12,
    T_LEAVE = 13,
    T_PARAMETER_UNSIGNED_INT = 34,
};

void zc_salv_free_prefix(struct zc_salv_prefix *p) {
    free(p->chunk);
    free(p->open);
    free(p->cs);
    memset(p, 0, sizeof(*p));
}

/* A compressed integer (0 and all-ones one byte, else a byte count up to max and the bytes) */
static const uint8_t *get_int(const uint8_t *p, const uint8_t *end, unsigned max, uint64_t *v) {
    if (p >= end) return NULL;
    uint8_t b = *p;
    if (b == 0 || b == 0xff) {
        *v = b == 0 ? 0 : max == 4 ? UINT32_MAX : UINT64_MAX;
        return p + 1;
    }
    if (b > max || (size_t)(end - p - 1) < b) return NULL;
    uint64_t x = 0;
    memcpy(&x, p + 1, b);
    *v = x;
    return p + 1 + b;
}

struct walk {
    uint64_t events, time, first_ts, markers, flushes;
    uint32_t flush_region;
    bool thread;
    struct zc_salv_prefix *pre;
};

/* The records of one chunk after its header, p to end: a whole chunk may end early with its
 * end-of-chunk bytes; the sealed part ends exactly at end. false: not what our encoder writes. */
static bool walk_chunk(struct walk *w, const uint8_t *p, const uint8_t *end, bool whole) {
    struct zc_salv_prefix *pre = w->pre;
    while (p < end) {
        uint8_t t = *p++;
        uint64_t v;
        switch (t) {
        case T_END_OF_CHUNK:
            if (!whole) return false;
            for (; p < end; p++)
                if (*p != T_END_OF_CHUNK) return false;
            return true;
        case T_TIMESTAMP:
            if (end - p < 8) return false;
            memcpy(&v, p, 8);
            p += 8;
            if (v < w->time) return false; /* OTF2's rule: times never go back */
            w->time = v;
            if (w->first_ts == UINT64_MAX) w->first_ts = v;
            break;
        case T_ENTER:
        case T_LEAVE:
            if (!(p = get_int(p, end, 4, &v))) return false;
            w->events++;
            if (t == T_ENTER) {
                zc_salv_grow(&pre->open, &pre->cap_open, pre->nopen, sizeof(*pre->open));
                pre->open[pre->nopen++] = (uint32_t)v;
                w->flushes += v == w->flush_region && w->thread;
            } else if (pre->nopen && pre->open[pre->nopen - 1] == v) {
                pre->nopen--;
            }
            break;
        case 16: case 17: case 20: case 21: /* MPI request records: one id, no length byte */
            if (!(p = get_int(p, end, 8, &v))) return false;
            w->events++;
            break;
        case 10: case T_MEASUREMENT_ON_OFF: case 14: case 15: case 18: case 19: case 22: case 23: case 31:
        case T_PARAMETER_UNSIGNED_INT: case 46: case 47: case 49: case 85: case 86: { /* a length byte */
            if (p >= end) return false;
            uint8_t len = *p++;
            if ((size_t)(end - p) < len) return false;
            if (t == T_PARAMETER_UNSIGNED_INT && w->thread) {
                uint64_t id, val;
                const uint8_t *q = get_int(p, p + len, 4, &id);
                if (!q || !get_int(q, p + len, 8, &val)) return false;
                if (id == 0) { /* the callsite id (the only parameter: ev_valid) */
                    zc_salv_grow(&pre->cs, &pre->cap_cs, pre->ncs, sizeof(*pre->cs));
                    pre->cs[pre->ncs++] = val;
                }
            }
            w->markers += t == T_MEASUREMENT_ON_OFF;
            p += len;
            w->events++;
            break;
        }
        default: return false;
        }
    }
    return true;
}

/* A chunk header: our byte order, the first event number that follows the file's events so far */
static bool header_ok(const uint8_t *h, uint64_t events, uint64_t *last) {
    uint64_t first;
    memcpy(&first, h + 2, 8);
    memcpy(last, h + 10, 8);
    return h[0] == T_CHUNK_HEADER && h[1] == 0x42 && first == events + 1;
}

/* Reads the file up to seal s into pre; NULL, or why not (a phrase) */
static const char *read_upto(int fd, uint64_t size, const struct zc_salv_seal *s, uint32_t flush_region, bool thread,
                             struct zc_salv_prefix *pre, uint8_t *buf) {
    if (size < s->end) return "shorter than";
    struct walk w = {0, 0, UINT64_MAX, 0, 0, flush_region, thread, pre};
    for (uint64_t off = 0; off < s->chunk_off; off += ZC_ENC_CHUNK) {
        if (pread(fd, buf, ZC_ENC_CHUNK, (off_t)off) != ZC_ENC_CHUNK) return "unreadable up to";
        uint64_t last;
        if (!header_ok(buf, w.events, &last) || !walk_chunk(&w, buf + 18, buf + ZC_ENC_CHUNK, true) || last != w.events)
            return "damaged before";
    }
    size_t used = (size_t)(s->end - s->chunk_off);
    if (pread(fd, buf, used, (off_t)s->chunk_off) != (ssize_t)used) return "unreadable up to";
    uint64_t last;
    if (used < 18 || !header_ok(buf, w.events, &last) || w.events + 1 != s->chunk_first) return "damaged before";
    if (!walk_chunk(&w, buf + 18, buf + used, false) || w.events != s->events || w.time != s->time)
        return "damaged before";
    pre->chunk = malloc(used);
    if (!pre->chunk) {
        fprintf(stderr, "%s: out of memory\n", zc_salv_prog);
        exit(1);
    }
    memcpy(pre->chunk, buf, used);
    pre->used = used;
    pre->first_ts = w.first_ts;
    uint64_t ours = w.markers + 2 * w.flushes; /* not the application's (zc_evt_normalize) */
    pre->recorded = w.events > ours ? w.events - ours : 0;
    pre->seal = *s;
    pre->ok = true;
    return NULL;
}

void zc_salv_read_prefix(struct zc_salv_rank *j, struct zc_salv_loc *l) {
    if (!l->nseals || !zc_salv_run_dir) return;
    char path[PATH_MAX];
    snprintf(path, sizeof(path), "%s/traces/%llu.evt", zc_salv_run_dir, (unsigned long long)(l->id | j->rank));
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    struct stat st;
    uint64_t size = fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? (uint64_t)st.st_size : 0;
    uint8_t *buf = zc_salv_calloc(ZC_ENC_CHUNK + 16, 1);
    const struct zc_salv_seal *latest = &l->seals[l->nseals - 1];
    const char *why = NULL;
    for (size_t i = l->nseals; i-- > 0;) {
        zc_salv_free_prefix(&l->pre);
        const char *w = fd < 0 ? "missing, not" : read_upto(fd, size, &l->seals[i], j->flush_region,
                                                           l->kind == ZC_LOC_THREAD, &l->pre, buf);
        if (!w) break;
        if (!why) why = w;
        zc_salv_free_prefix(&l->pre);
        if (fd < 0) break;
    }
    if (why) {
        uint64_t k = l->pre.ok ? l->pre.seal.k : 0;
        fprintf(stderr,
                "%s: rank %u location %s: its event file %s is %s its seal says (%llu bytes%s, the records below "
                "%llu): %s; the records it should hold from %llu on that the journal lacks are counted lost\n",
                zc_salv_prog, j->rank, l->name, path, why, (unsigned long long)latest->end,
                fd >= 0 ? "" : ", no file", (unsigned long long)latest->k,
                l->pre.ok ? "an earlier seal it holds is used" : "no seal it holds", (unsigned long long)k);
    }
    free(buf);
    if (fd >= 0) close(fd);
}

bool zc_salv_prefix_copy(const struct zc_salv_rank *j, const struct zc_salv_loc *l, const char *path, int *out,
                         uint64_t *last_chunk_off) {
    char src[PATH_MAX];
    snprintf(src, sizeof(src), "%s/traces/%llu.evt", zc_salv_run_dir, (unsigned long long)(l->id | j->rank));
    int in = open(src, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    uint64_t n = l->pre.seal.chunk_off, off = 0;
    uint8_t *buf = n ? zc_salv_calloc(ZC_ENC_CHUNK, 1) : NULL;
    bool ok = in >= 0 && fd >= 0;
    while (ok && off < n) { /* the whole chunks, as they are */
        ssize_t r = pread(in, buf, ZC_ENC_CHUNK, (off_t)off);
        ok = r == ZC_ENC_CHUNK && pwrite(fd, buf, ZC_ENC_CHUNK, (off_t)off) == ZC_ENC_CHUNK;
        off += ZC_ENC_CHUNK;
    }
    free(buf);
    if (!ok)
        fprintf(stderr, "%s: cannot copy %s into %s: %s\n", zc_salv_prog, src, path, strerror(errno ? errno : EIO));
    if (in >= 0) close(in);
    if (!ok && fd >= 0) {
        close(fd);
        fd = -1;
    }
    *out = fd;
    *last_chunk_off = n;
    return ok;
}
