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
#include <string.h>

#define ZC_JRN_DIR "zecoll-journal"              /* in the archive directory: <rank>.zcj */
#define ZC_JRN_FILE_MAGIC UINT64_C(0x324c4e524a435a7f) /* "\x7fZCJRNL2", native byte order */
/* format 1's (until the records were stored as they are): refused with a word on which zecoll reads it */
#define ZC_JRN_FILE_MAGIC_1 UINT64_C(0x314c4e524a435a7f)
#define ZC_JRN_REC_MAGIC UINT32_C(0x524a435a)         /* "ZCJR" */
/* 2: EVENTS records hold struct zc_ev as they are, CRC-32C checksums (1: varints, another hash) */
#define ZC_JRN_VERSION 2
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
    /* local location id, stream index of the first record, count, bytes (40 x count), then the
     * count records, each a struct zc_ev as below; times in ns (CLOCK_MONOTONIC_RAW + skew) */
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

/* An EVENTS record's records are the writer's struct zc_ev as they are in memory, 5 words each:
 * ts, then type and a (two uint32 in that order), b, c, d. The writer hands the batch it converted
 * to writev as it is: no encoding, no copy, only the checksum reads it. (Format 1 encoded each
 * record to ~8 bytes of varints: ~90 instructions a record on the writer's thread, a quarter of
 * the pipeline behind an MPI call, for 5 times fewer bytes:
 * bench/results/issue22-journal-encoder.md.) */
#define ZC_JRN_EV_WORDS 5
_Static_assert(sizeof(struct zc_ev) == 8 * ZC_JRN_EV_WORDS, "a journal record is a struct zc_ev");

/* The checksum: CRC-32C (Castagnoli, reflected polynomial 0x82F63B78, no pre or post inversion)
 * in four lanes, word i into lane i mod 4 (each word's bytes in memory order), the lanes and the
 * record's type and length mixed into 64 bits at the end. It detects torn and garbled records (a
 * CRC catches every error burst up to 32 bits long), it is not cryptographic. Where the CPU has
 * SSE 4.2 a word is one instruction (~2 a word with the loop: the journal's pass over 40-byte
 * records costs ~9 instructions a record); elsewhere a table of 16 entries, a nibble at a time. */
static const uint32_t zc_jrn_crc_nib[16] = {
    0x00000000, 0x105ec76f, 0x20bd8ede, 0x30e349b1, 0x417b1dbc, 0x5125dad3, 0x61c69362, 0x7198540d,
    0x82f63b78, 0x92a8fc17, 0xa24bb5a6, 0xb21572c9, 0xc38d26c4, 0xd3d3e1ab, 0xe330a81a, 0xf36e6f75};
static inline uint64_t zc_jrn_crc_sw(uint64_t crc, uint64_t w) {
    uint32_t c = (uint32_t)crc;
    for (int i = 0; i < 8; i++) {
        c ^= (uint8_t)(w >> (8 * i));
        c = (c >> 4) ^ zc_jrn_crc_nib[c & 15];
        c = (c >> 4) ^ zc_jrn_crc_nib[c & 15];
    }
    return c;
}
static inline uint64_t zc_jrn_word(const void *p, size_t i) {
    uint64_t w;
    memcpy(&w, (const char *)p + 8 * i, 8); /* an EVENTS record's words are struct zc_ev */
    return w;
}
static inline void zc_jrn_lanes_sw(uint64_t *v, const void *w, size_t groups) {
    for (size_t i = 0; i < groups; i++)
        for (int k = 0; k < 4; k++) v[k] = zc_jrn_crc_sw(v[k], zc_jrn_word(w, 4 * i + (size_t)k));
}
#if defined(__x86_64__) && defined(__GNUC__)
#define ZC_JRN_CRC_HW 1
__attribute__((target("sse4.2"))) static inline void zc_jrn_lanes_hw(uint64_t *v, const void *w, size_t groups) {
    uint64_t a = v[0], b = v[1], c = v[2], d = v[3];
    for (size_t i = 0; i < groups; i++) {
        a = __builtin_ia32_crc32di(a, zc_jrn_word(w, 4 * i));
        b = __builtin_ia32_crc32di(b, zc_jrn_word(w, 4 * i + 1));
        c = __builtin_ia32_crc32di(c, zc_jrn_word(w, 4 * i + 2));
        d = __builtin_ia32_crc32di(d, zc_jrn_word(w, 4 * i + 3));
    }
    v[0] = a, v[1] = b, v[2] = c, v[3] = d;
}
#endif
/* whole groups of four words into the lanes; hw: 1 the CPU's instruction where there is one (a
 * run-time check), 0 the table (the tests compare the two) */
static inline void zc_jrn_lanes(uint64_t *v, const void *w, size_t groups, int hw) {
#ifdef ZC_JRN_CRC_HW
    if (hw && __builtin_cpu_supports("sse4.2")) {
        zc_jrn_lanes_hw(v, w, groups);
        return;
    }
#endif
    (void)hw;
    zc_jrn_lanes_sw(v, w, groups);
}

static inline uint64_t zc_jrn_rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }
#define ZC_JRN_P1 UINT64_C(0x9E3779B185EBCA87)
#define ZC_JRN_P2 UINT64_C(0xC2B2AE3D27D4EB4F)
#define ZC_JRN_P3 UINT64_C(0x165667B19E3779F9)
struct zc_jrn_hs {
    uint64_t seed, v[4], buf[4];
    size_t nbuf;
    int hw;
};
static inline void zc_jrn_hash_init(struct zc_jrn_hs *s, uint32_t type, uint64_t nwords) {
    s->seed = ((uint64_t)type << 56) ^ nwords;
    s->v[0] = 0x60EA27EE, s->v[1] = 0xC2B2AE3D, s->v[2] = 0x27D4EB4F, s->v[3] = 0x9E3779B1;
    s->nbuf = 0;
    s->hw = 1;
}
/* Words may come in pieces (a record's header words, then its events): the result is the same. */
static inline void zc_jrn_hash_update(struct zc_jrn_hs *s, const void *w, size_t n) {
    size_t i = 0;
    while (s->nbuf && i < n) {
        s->buf[s->nbuf++] = zc_jrn_word(w, i++);
        if (s->nbuf == 4) {
            zc_jrn_lanes(s->v, s->buf, 1, s->hw);
            s->nbuf = 0;
        }
    }
    size_t groups = (n - i) / 4;
    if (groups) zc_jrn_lanes(s->v, (const char *)w + 8 * i, groups, s->hw);
    for (i += 4 * groups; i < n; i++) s->buf[s->nbuf++] = zc_jrn_word(w, i);
}
static inline uint64_t zc_jrn_hash_final(const struct zc_jrn_hs *s) {
    uint64_t h = s->seed ^ (s->v[0] << 32 | s->v[1]);
    h = zc_jrn_rotl(h, 27) * ZC_JRN_P1 ^ (s->v[2] << 32 | s->v[3]);
    for (size_t i = 0; i < s->nbuf; i++) h = zc_jrn_rotl(h ^ s->buf[i] * ZC_JRN_P2, 31) * ZC_JRN_P1;
    h ^= h >> 33;
    h *= ZC_JRN_P2;
    h ^= h >> 29;
    h *= ZC_JRN_P3;
    return h ^ (h >> 32);
}
static inline uint64_t zc_jrn_hash(uint32_t type, uint64_t nwords, const void *w) {
    struct zc_jrn_hs s;
    zc_jrn_hash_init(&s, type, nwords);
    zc_jrn_hash_update(&s, w, nwords);
    return zc_jrn_hash_final(&s);
}

#endif
