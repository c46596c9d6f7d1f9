/* SPDX-License-Identifier: MIT */
/* The salvage journal's on-disk format (docs/archive.md, "The salvage journal"): written by the
 * collector (zc_journal.c), read by zecoll-salvage (salvage/). A journal is append-only: a magic,
 * then records, each a header (magic, type, payload length) and a payload of 64-bit words, with a
 * checksum over both, so a reader finds a torn or damaged tail and stops before it. */
#ifndef ZC_JRN_FORMAT_H
#define ZC_JRN_FORMAT_H

#include "zc_ev.h"

#include <stddef.h>
#include <stdint.h>

#define ZC_JRN_DIR "zecoll-journal"              /* in the archive directory: <rank>.zcj */
#define ZC_JRN_FILE_MAGIC UINT64_C(0x314c4e524a435a7f) /* "\x7fZCJRNL1", native byte order */
#define ZC_JRN_REC_MAGIC UINT32_C(0x524a435a)         /* "ZCJR" */
#define ZC_JRN_VERSION 1
/* A payload longer than this is damage, not data (the largest record is one buffer of events). */
#define ZC_JRN_MAX_WORDS (UINT64_C(1) << 31)
/* The checksum's seed holds the type in its top byte only (type << 56), so bits 8-31 of a type
 * are not covered: a reader must refuse a type above this as a damaged header, or a flipped bit
 * there would turn a record into an unknown (skipped) type without failing its checksum. */
#define ZC_JRN_MAX_TYPE 255u

struct zc_jrn_hdr {
    uint32_t magic; /* ZC_JRN_REC_MAGIC */
    uint32_t type;  /* enum zc_jrn_type: 1..ZC_JRN_MAX_TYPE */
    uint64_t nwords; /* payload length in 64-bit words */
    uint64_t hash;  /* zc_jrn_hash(type, nwords, payload) */
};

/* Payloads are 64-bit words; a string is its length with the NUL, then its bytes and the NUL,
 * zero-padded to whole words (as in the collector's serialised definitions). */
enum zc_jrn_type {
    /* first record: version, rank, size, mpi (0/1), pid, start time (ns), mpi_loc (local id of
     * the thread that called MPI_Init), flush interval (ms), then strings: host, archive
     * directory, executable */
    ZC_JRN_JOB = 1,
    ZC_JRN_STRINGS = 2, /* first id, count, count strings */
    ZC_JRN_REGIONS = 3, /* first id, count, count x (name string, role, paradigm) */
    ZC_JRN_DEVICES = 4, /* first id, count, count x (index, name string, uuid string) */
    ZC_JRN_GROUPS = 5,  /* first id, count, count x (device, context): accelerator groups 1.. */
    /* first id, count, count x (kind, name, parent, n, nremote, n + nremote world ranks, key string) */
    ZC_JRN_COMMS = 6,
    /* local id (rank not included), kind, group, comm_rank, name string, then (since windows
     * are journaled; absent: 0) the first entry of the window log its markers start from */
    ZC_JRN_LOCATION = 7,
    /* local location id, stream index of the first record, count, bytes, then count records
     * encoded as below in that many bytes, zero-padded to a whole word; times in ns
     * (CLOCK_MONOTONIC_RAW + skew) */
    ZC_JRN_EVENTS = 8,
    ZC_JRN_OFFSET = 9, /* clock offset to rank 0: local time, offset (int64), stddev (double bits) */
    /* time (ns), flags: every record put before `time` is in the journal above (device
     * operations once drained); ZC_JRN_FINAL: the process ended and wrote everything it had */
    ZC_JRN_FLUSH = 10,
    /* the process's PAPI metric class (zc_defs.h), replacing any before: count, count x (name,
     * description, unit strings, OTF2 value type, OTF2 metric mode) */
    ZC_JRN_METRICS = 11,
    /* entries of the rank's log of recording-window transitions (collector/core/zc_window.c; entry
     * 0: the state at start-up), from which markers are placed (zc_marks.h): first
     * entry, count, count x (time in ns, 1 = recording turned on / 0 = off) */
    ZC_JRN_WINDOWS = 12,
    /* communicators named after their COMMS record (MPI_Comm_set_name): count, count x (local
     * communicator id, name string); a later record for the same id replaces the name. A reader
     * without it keeps the names communicators had when defined. */
    ZC_JRN_COMM_NAMES = 13,
};
_Static_assert(ZC_JRN_COMM_NAMES <= ZC_JRN_MAX_TYPE, "record types must fit the checksum's type byte");
#define ZC_JRN_FINAL 1u

/* One record of an EVENTS payload (a struct zc_ev, zc_ev.h): its type (one byte), a byte whose
 * bits 0-3 say which of a, b, c, d are not zero, then LEB128 varints: the time as the zigzag
 * difference from the previous record's (from 0 for the first), and each non-zero field, b as the
 * zigzag difference from the record's own time for the types whose b is a time (a call's Leave,
 * a buffer flush's end). About 8 bytes for the 40 of the record: the journal writes less than
 * the OTF2 archive. */
#define ZC_JRN_EV_MAX 47 /* bytes of one encoded record at most */
static inline size_t zc_jrn_put_u(uint8_t *p, uint64_t v) {
    size_t n = 0;
    while (v >= 0x80) {
        p[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    p[n++] = (uint8_t)v;
    return n;
}
static inline uint64_t zc_jrn_zz(uint64_t d) { return (d << 1) ^ (uint64_t)((int64_t)d >> 63); }
static inline uint64_t zc_jrn_unzz(uint64_t z) { return (z >> 1) ^ (uint64_t)-(int64_t)(z & 1); }
static inline int zc_jrn_b_is_time(uint32_t type) { return type == ZC_EV_BUFFER_FLUSH || zc_ev_is_call(type); }

/* Encodes n records into out (room for n * ZC_JRN_EV_MAX); returns the bytes written. The field
 * mask is gathered by the tests that write the fields, not computed apart (the writer encodes
 * every record: 4 compares and shifts per record were a sixth of the encoding, bench/README.md). */
static inline size_t zc_jrn_encode(uint8_t *out, const struct zc_ev *ev, size_t n) {
    size_t o = 0;
    uint64_t prev = 0;
    for (size_t i = 0; i < n; i++) {
        const struct zc_ev *e = &ev[i];
        uint8_t *q = out + o;
        unsigned m = 0;
        size_t k = 2;
        q[0] = (uint8_t)e->type;
        k += zc_jrn_put_u(q + k, zc_jrn_zz(e->ts - prev));
        prev = e->ts;
        if (e->a) {
            m |= 1;
            k += zc_jrn_put_u(q + k, e->a);
        }
        if (e->b) {
            m |= 2;
            k += zc_jrn_put_u(q + k, zc_jrn_b_is_time(e->type) ? zc_jrn_zz(e->b - e->ts) : e->b);
        }
        if (e->c) {
            m |= 4;
            k += zc_jrn_put_u(q + k, e->c);
        }
        if (e->d) {
            m |= 8;
            k += zc_jrn_put_u(q + k, e->d);
        }
        q[1] = (uint8_t)m;
        o += k;
    }
    return o;
}

/* Decoding, bounds-checked: returns 0 and leaves *i past the record, or -1 when the bytes end
 * inside it or a varint is longer than 64 bits. */
static inline int zc_jrn_get_u(const uint8_t *p, size_t len, size_t *i, uint64_t *v) {
    uint64_t x = 0;
    for (int sh = 0; sh < 64; sh += 7) {
        if (*i >= len) return -1;
        uint8_t byte = p[(*i)++];
        x |= (uint64_t)(byte & 0x7f) << sh;
        if (!(byte & 0x80)) {
            *v = x;
            return 0;
        }
    }
    return -1;
}
/* One record at p[*i..len); *prev: the previous record's time (0 before the first). */
static inline int zc_jrn_decode_one(const uint8_t *p, size_t len, size_t *i, uint64_t *prev, struct zc_ev *e) {
    if (*i + 2 > len) return -1;
    uint32_t type = p[(*i)++];
    uint8_t m = p[(*i)++];
    uint64_t z, a = 0, b = 0, c = 0, d = 0;
    if (m & 0xf0 || zc_jrn_get_u(p, len, i, &z)) return -1;
    uint64_t ts = *prev + zc_jrn_unzz(z);
    if ((m & 1) && (zc_jrn_get_u(p, len, i, &a) || a > UINT32_MAX)) return -1;
    if ((m & 2) && zc_jrn_get_u(p, len, i, &b)) return -1;
    if ((m & 2) && zc_jrn_b_is_time(type)) b = ts + zc_jrn_unzz(b);
    if ((m & 4) && zc_jrn_get_u(p, len, i, &c)) return -1;
    if ((m & 8) && zc_jrn_get_u(p, len, i, &d)) return -1;
    *prev = ts;
    *e = (struct zc_ev){ts, type, (uint32_t)a, b, c, d};
    return 0;
}

/* A 64-bit checksum, four independent lanes so it runs at memory speed (~1 ns per 40-byte
 * record); it detects torn and garbled records, it is not cryptographic. */
static inline uint64_t zc_jrn_rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }
static inline uint64_t zc_jrn_round(uint64_t acc, uint64_t w) {
    return zc_jrn_rotl(acc + w * UINT64_C(0xC2B2AE3D27D4EB4F), 31) * UINT64_C(0x9E3779B185EBCA87);
}
struct zc_jrn_hs {
    uint64_t v[4], buf[4];
    size_t nbuf;
};
static inline void zc_jrn_hash_init(struct zc_jrn_hs *s, uint32_t type, uint64_t nwords) {
    uint64_t seed = ((uint64_t)type << 56) ^ nwords;
    s->v[0] = seed + UINT64_C(0x60EA27EEADC0B5D6);
    s->v[1] = seed + UINT64_C(0xC2B2AE3D27D4EB4F);
    s->v[2] = seed;
    s->v[3] = seed - UINT64_C(0x9E3779B185EBCA87);
    s->nbuf = 0;
}
/* Words may come in pieces (a record's header words, then its events): the result is the same. */
static inline void zc_jrn_hash_update(struct zc_jrn_hs *s, const uint64_t *w, size_t n) {
    size_t i = 0;
    while (s->nbuf && i < n) {
        s->buf[s->nbuf++] = w[i++];
        if (s->nbuf == 4) {
            for (int k = 0; k < 4; k++) s->v[k] = zc_jrn_round(s->v[k], s->buf[k]);
            s->nbuf = 0;
        }
    }
    for (; i + 4 <= n; i += 4) {
        s->v[0] = zc_jrn_round(s->v[0], w[i]);
        s->v[1] = zc_jrn_round(s->v[1], w[i + 1]);
        s->v[2] = zc_jrn_round(s->v[2], w[i + 2]);
        s->v[3] = zc_jrn_round(s->v[3], w[i + 3]);
    }
    for (; i < n; i++) s->buf[s->nbuf++] = w[i];
}
static inline uint64_t zc_jrn_hash_final(const struct zc_jrn_hs *s) {
    uint64_t h = zc_jrn_rotl(s->v[0], 1) + zc_jrn_rotl(s->v[1], 7) + zc_jrn_rotl(s->v[2], 12) +
                 zc_jrn_rotl(s->v[3], 18);
    for (size_t i = 0; i < s->nbuf; i++)
        h = zc_jrn_rotl(h ^ zc_jrn_round(0, s->buf[i]), 27) * UINT64_C(0x9E3779B185EBCA87);
    h ^= h >> 33;
    h *= UINT64_C(0xC2B2AE3D27D4EB4F);
    h ^= h >> 29;
    h *= UINT64_C(0x165667B19E3779F9);
    return h ^ (h >> 32);
}
static inline uint64_t zc_jrn_hash(uint32_t type, uint64_t nwords, const uint64_t *w) {
    struct zc_jrn_hs s;
    zc_jrn_hash_init(&s, type, nwords);
    zc_jrn_hash_update(&s, w, nwords);
    return zc_jrn_hash_final(&s);
}

#endif
