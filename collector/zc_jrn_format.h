/* SPDX-License-Identifier: MIT */
/* The salvage journal's on-disk format (docs/archive.md, "The salvage journal"): written by the
 * collector (zc_journal.c), read by zecoll-salvage (salvage/). A journal is append-only: a magic,
 * then records, each a header (magic, type, payload length) and a payload of 64-bit words, with a
 * checksum over both, so a reader finds a torn or damaged tail and stops before it. */
#ifndef ZC_JRN_FORMAT_H
#define ZC_JRN_FORMAT_H

#include <stddef.h>
#include <stdint.h>

#define ZC_JRN_DIR "zecoll-journal"              /* in the archive directory: <rank>.zcj */
#define ZC_JRN_FILE_MAGIC UINT64_C(0x314c4e524a435a7f) /* "\x7fZCJRNL1", native byte order */
#define ZC_JRN_REC_MAGIC UINT32_C(0x524a435a)         /* "ZCJR" */
#define ZC_JRN_VERSION 1
/* A payload longer than this is damage, not data (the largest record is one buffer of events). */
#define ZC_JRN_MAX_WORDS (UINT64_C(1) << 31)

struct zc_jrn_hdr {
    uint32_t magic; /* ZC_JRN_REC_MAGIC */
    uint32_t type;  /* enum zc_jrn_type */
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
    ZC_JRN_LOCATION = 7, /* local id (rank not included), kind, group, comm_rank, name string */
    /* local location id, stream index of the first record, count, then count records of 5 words
     * (struct zc_ev: ts, type | a << 32, b, c, d); times in ns (CLOCK_MONOTONIC_RAW + skew) */
    ZC_JRN_EVENTS = 8,
    ZC_JRN_OFFSET = 9, /* clock offset to rank 0: local time, offset (int64), stddev (double bits) */
    /* time (ns), flags: every record put before `time` is in the journal above (device
     * operations once drained); ZC_JRN_FINAL: the process ended and wrote everything it had */
    ZC_JRN_FLUSH = 10,
};
#define ZC_JRN_FINAL 1u

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
    uint64_t h = zc_jrn_rotl(s->v[0], 1) + zc_jrn_rotl(s->v[1], 7) + zc_jrn_rotl(s->v[2], 12) + zc_jrn_rotl(s->v[3], 18);
    for (size_t i = 0; i < s->nbuf; i++) h = zc_jrn_rotl(h ^ zc_jrn_round(0, s->buf[i]), 27) * UINT64_C(0x9E3779B185EBCA87);
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
