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
#define ZC_JRN_FILE_MAGIC UINT64_C(0x344c4e524a435a7f) /* "\x7fZCJRNL4", native byte order */
/* Older formats salvage reads: 3, the same records without SEAL (every record a writer wrote to an
 * event file is journaled too); 1, EVENTS records of LEB128 varints (zecoll before format 3) */
#define ZC_JRN_FILE_MAGIC_3 UINT64_C(0x334c4e524a435a7f) /* "\x7fZCJRNL3" */
#define ZC_JRN_FILE_MAGIC_1 UINT64_C(0x314c4e524a435a7f) /* "\x7fZCJRNL1" */
/* 2 stored records as they are (40 bytes each): 2.4 times the bytes, taken back before a release */
#define ZC_JRN_FILE_MAGIC_2 UINT64_C(0x324c4e524a435a7f)
#define ZC_JRN_REC_MAGIC UINT32_C(0x524a435a)         /* "ZCJR" */
/* the JOB record's version: the file's format (its magic's last byte); 3 and 4: EVENTS records as
 * below; 4: SEAL records (the event files hold the records below a seal) */
#define ZC_JRN_VERSION 4
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
     * encoded as below (format 3; format 1 further below) in that many bytes, zero-padded to a
     * whole word; times in ns (CLOCK_MONOTONIC_RAW + skew) */
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
    /* (format 4) a location's event file holds its records below a stream index (docs/salvage.md,
     * "Seals"): local location id, K (the records below it are in the file), the file's valid
     * bytes (its end offset), the offset of the chunk the encoder is filling, the events written
     * (OTF2's count), the last timestamp written in that chunk, the chunk's first event number.
     * A later seal of the same location supersedes it; records from K on are in EVENTS records. */
    ZC_JRN_SEAL = 14,
};
_Static_assert(ZC_JRN_SEAL <= ZC_JRN_MAX_TYPE, "record types must fit the checksum's type byte");
#define ZC_JRN_FINAL 1u

/* ---------------------------------------------------------------- EVENTS records, format 3
 * One record (a struct zc_ev, zc_ev.h) is a 16-bit little-endian header, bits 0-5 a layout code
 * and bits 6-15 the length classes of the fields the layout has (ts, a, b, c, d in that order,
 * from bit 6 up, 2 or 3 bits each as their set says; the bits above them 0), then each of those
 * fields little-endian in as many bytes as its class gives (ZC_JRN_SET_LEN). ts is the unsigned
 * difference from the previous record's time (0 before the first), b in the layouts that say so
 * the unsigned difference from the record's own time (a call's Leave, a buffer flush's end); a
 * field the layout does not have is 0. The layout code is the record's type (zc_ev.h) for the
 * types that have one (zc_jrn_layout), ZC_JRN_CODE_CALLSITE for a call with a callsite id. A
 * record that does not fit (a type without a layout, a field the layout lacks not 0, a value
 * longer than its set's classes, a time before the previous) takes the general form, code
 * ZC_JRN_CODE_ANY: bits 6-15 its type (1023: the type follows in 4 bytes), then a 16-bit word of five
 * 3-bit classes of set W, then the zigzag time difference, a, b, c and d as they are.
 *
 * Why: format 1's LEB128 varints (below, still read) cost a loop and a branch per 7 bits and a
 * branch per field on the writer's thread; here a field is a table lookup of its bit length, one
 * 8-byte store and an advance by its length, no branch but the type's: the journal's part per
 * recorded MPI call 220 -> 155 instructions (with the checksum below), in fewer bytes (two of
 * header, as format 1's type and mask bytes; whole bytes instead of 7 bits a byte): 6.0 instead
 * of 6.8 a record (bench/results/issue22-journal6.md). The type's branch is one load and an
 * indirect jump through a table of the layouts (a switch compiled to a tree of compares first):
 * 138 -> 117 a call at 2 records a call (bench/results/issue22-journal7.md). */
#define ZC_JRN_EV_MAX 48  /* bytes of one encoded record at most (the general form, a 32-bit type) */
#define ZC_JRN_ENC_SLACK 8 /* the encoder stores 8 bytes at a time: room it needs past the last record */
#define ZC_JRN_CODE_CALLSITE 62
#define ZC_JRN_CODE_ANY 63
/* The layout codes are the record types' numbers: renumbering zc_ev.h's types is a new format. */
_Static_assert(ZC_EV_BUFFER_FLUSH == 7 && ZC_EV_MPI_NBC_REQID == 20 && ZC_EV_MPI_NOP == 26 && ZC_EV_CALL == 27 &&
                   ZC_EV_MEASUREMENT == 28 && ZC_EV_METRIC_MORE == 30 && ZC_EV_CALL_IRECV == 31,
               "the journal's layout codes (format 3) are the record types: a new numbering is a new format");

/* Length sets: the bytes of each class. T: time differences, request ids, counts; A: 32-bit
 * values and sizes; P: peer << 32 | tag, callsite ids (thread << 40 | n); C: a collective's
 * op << 32 | root; W (3 bits): anything. Their nibbles, class 0 lowest. */
enum { ZC_JRN_S_T, ZC_JRN_S_A, ZC_JRN_S_P, ZC_JRN_S_C, ZC_JRN_S_W, ZC_JRN_NSETS, ZC_JRN_S_NONE = 15 };
#define ZC_JRN_SETS(s)                                                                                                 \
    ((s) == ZC_JRN_S_T   ? 0x3210u                                                                                     \
     : (s) == ZC_JRN_S_A ? 0x4210u                                                                                     \
     : (s) == ZC_JRN_S_P ? 0x6510u                                                                                     \
     : (s) == ZC_JRN_S_C ? 0x8540u                                                                                     \
                         : 0x86543210u)
#define ZC_JRN_SET_LEN(s, k) ((ZC_JRN_SETS(s) >> (4 * ((k) & 7u))) & 15u) /* k: 0..7 */
#define ZC_JRN_SET_BITS(s) ((s) == ZC_JRN_S_W ? 3u : 2u)
/* the class of a value of `bits` bits (0..64) in set s, or 8: none holds it */
#define ZC_JRN_NB(bits) (((bits) + 7u) / 8u)
#define ZC_JRN_CK(bits, s, k) (ZC_JRN_NB(bits) <= ZC_JRN_SET_LEN(s, k) && (k) < (1u << ZC_JRN_SET_BITS(s)))
#define ZC_JRN_CLS(bits, s)                                                                                            \
    (ZC_JRN_CK(bits, s, 0)   ? 0u                                                                                      \
     : ZC_JRN_CK(bits, s, 1) ? 1u                                                                                      \
     : ZC_JRN_CK(bits, s, 2) ? 2u                                                                                      \
     : ZC_JRN_CK(bits, s, 3) ? 3u                                                                                      \
     : ZC_JRN_CK(bits, s, 4) ? 4u                                                                                      \
     : ZC_JRN_CK(bits, s, 5) ? 5u                                                                                      \
     : ZC_JRN_CK(bits, s, 6) ? 6u                                                                                      \
     : ZC_JRN_CK(bits, s, 7) ? 7u                                                                                      \
                             : 8u)
/* Tables by bit length (the encoder's index: bits 0..63, 63 for 63 and 64): the class shifted to
 * its place in the header (ZC_JRN_MISFIT, the top bit, where none holds the value), and the
 * bytes. One array for all, so that the encoder reaches each from one base register. */
#define ZC_JRN_MISFIT (UINT64_C(1) << 63)
#define ZC_JRN_CTAB_E(bits, s, pos) (ZC_JRN_CLS(bits, s) > 7u ? ZC_JRN_MISFIT : (uint64_t)ZC_JRN_CLS(bits, s) << (pos))
#define ZC_JRN_LTAB_E(bits, s, pos) (ZC_JRN_CLS(bits, s) > 7u ? 0u : ZC_JRN_SET_LEN(s, ZC_JRN_CLS(bits, s)))
#define ZC_JRN_R8(F, b, s, pos)                                                                                        \
    F((b) + 0u, s, pos), F((b) + 1u, s, pos), F((b) + 2u, s, pos), F((b) + 3u, s, pos), F((b) + 4u, s, pos),           \
        F((b) + 5u, s, pos), F((b) + 6u, s, pos), F((b) + 7u, s, pos)
#define ZC_JRN_R64(F, s, pos)                                                                                          \
    ZC_JRN_R8(F, 0u, s, pos), ZC_JRN_R8(F, 8u, s, pos), ZC_JRN_R8(F, 16u, s, pos), ZC_JRN_R8(F, 24u, s, pos),          \
        ZC_JRN_R8(F, 32u, s, pos), ZC_JRN_R8(F, 40u, s, pos), ZC_JRN_R8(F, 48u, s, pos), ZC_JRN_R8(F, 56u, s, pos)
static const uint8_t zc_jrn_ltab[ZC_JRN_NSETS][64] = {
    {ZC_JRN_R64(ZC_JRN_LTAB_E, ZC_JRN_S_T, 0)}, {ZC_JRN_R64(ZC_JRN_LTAB_E, ZC_JRN_S_A, 0)},
    {ZC_JRN_R64(ZC_JRN_LTAB_E, ZC_JRN_S_P, 0)}, {ZC_JRN_R64(ZC_JRN_LTAB_E, ZC_JRN_S_C, 0)},
    {ZC_JRN_R64(ZC_JRN_LTAB_E, ZC_JRN_S_W, 0)}};
/* the (set, place) pairs the layouts below use */
#define ZC_JRN_CTABS(X)                                                                                                \
    X(T, 6) X(T, 10) X(T, 14) X(A, 8) X(A, 9) X(A, 10) X(A, 12) X(A, 14) X(P, 12) X(C, 14) X(W, 6) X(W, 11) X(W, 12)
#define ZC_JRN_CT_ENUM(s, pos) ZC_JRN_CT_##s##_##pos,
#define ZC_JRN_CT_TAB(s, pos) {ZC_JRN_R64(ZC_JRN_CTAB_E, ZC_JRN_S_##s, pos)},
enum { ZC_JRN_CTABS(ZC_JRN_CT_ENUM) ZC_JRN_NCTABS };
static const uint64_t zc_jrn_ctab[ZC_JRN_NCTABS][64] = {ZC_JRN_CTABS(ZC_JRN_CT_TAB)};
#undef ZC_JRN_CT_ENUM
#undef ZC_JRN_CT_TAB

/* The layouts, by code: the record type, whether b is a time (stored from ts), the set of each
 * field (ts, a, b, c, d; NONE: the field is 0). The encoder below spells each out. */
struct zc_jrn_layout {
    uint8_t type, btime, set[5];
};
#define ZC_JRN_N ZC_JRN_S_NONE
#define ZC_JRN_L(t, bt, s0, s1, s2, s3, s4)                                                                            \
    [t] = {t, bt, {ZC_JRN_S_##s0, ZC_JRN_S_##s1, ZC_JRN_S_##s2, ZC_JRN_S_##s3, ZC_JRN_S_##s4}}
#define ZC_JRN_S_N ZC_JRN_S_NONE
static const struct zc_jrn_layout zc_jrn_layout[ZC_JRN_CODE_ANY] = {
    ZC_JRN_L(ZC_EV_ENTER, 0, W, A, N, N, N),
    ZC_JRN_L(ZC_EV_LEAVE, 0, W, A, N, N, N),
    ZC_JRN_L(ZC_EV_MPI_COLL_BEGIN, 0, W, A, N, N, N),
    ZC_JRN_L(ZC_EV_MPI_NOP, 0, W, A, N, N, N),
    ZC_JRN_L(ZC_EV_MEASUREMENT, 0, W, A, N, N, N),
    ZC_JRN_L(ZC_EV_PARAM_U64, 0, W, A, W, N, N),
    ZC_JRN_L(ZC_EV_BUFFER_FLUSH, 1, W, A, W, N, N),
    ZC_JRN_L(ZC_EV_RMA_GET, 0, T, A, A, W, N),
    ZC_JRN_L(ZC_EV_RMA_PUT, 0, T, A, A, W, N),
    ZC_JRN_L(ZC_EV_RMA_COMPLETE, 0, W, A, N, W, N),
    ZC_JRN_L(ZC_EV_MPI_SEND, 0, T, A, A, P, T),
    ZC_JRN_L(ZC_EV_MPI_ISEND, 0, T, A, A, P, T),
    ZC_JRN_L(ZC_EV_MPI_RECV, 0, T, A, A, P, T),
    ZC_JRN_L(ZC_EV_MPI_IRECV, 0, T, A, A, P, T),
    ZC_JRN_L(ZC_EV_MPI_ISEND_COMPLETE, 0, W, A, N, N, W),
    ZC_JRN_L(ZC_EV_MPI_IRECV_REQUEST, 0, W, A, N, N, W),
    ZC_JRN_L(ZC_EV_MPI_REQUEST_TEST, 0, W, A, N, N, W),
    ZC_JRN_L(ZC_EV_MPI_REQUEST_CANCELLED, 0, W, A, N, N, W),
    ZC_JRN_L(ZC_EV_MPI_NBC_REQUEST, 0, W, A, N, N, W),
    ZC_JRN_L(ZC_EV_MPI_NBC_REQID, 0, W, A, N, N, W),
    ZC_JRN_L(ZC_EV_MPI_COLL_END, 0, T, A, A, A, C),
    ZC_JRN_L(ZC_EV_MPI_NBC_COMPLETE, 0, T, A, A, A, C),
    ZC_JRN_L(ZC_EV_CALL, 1, W, A, W, N, A), /* no callsite: MPI calls, the collector's own */
    ZC_JRN_L(ZC_EV_CALL_IRECV, 1, W, A, W, N, T), /* without a callsite (with one: the general form) */
    [ZC_JRN_CODE_CALLSITE] = {ZC_EV_CALL, 1, {ZC_JRN_S_T, ZC_JRN_S_A, ZC_JRN_S_T, ZC_JRN_S_P, ZC_JRN_S_T}},
};
#undef ZC_JRN_L

/* 8 bytes of v at p, little-endian (the fields are; a field's bytes are its first ones) */
static inline void zc_jrn_st8(uint8_t *p, uint64_t v) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    v = __builtin_bswap64(v);
#endif
    memcpy(p, &v, 8);
}

static inline void zc_jrn_st2(uint8_t *p, uint16_t v) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    v = __builtin_bswap16(v);
#endif
    memcpy(p, &v, 2);
}

/* the record at q in the general form (its fields: dt the time difference, unsigned); returns its end */
__attribute__((cold, noinline)) static uint8_t *zc_jrn_put_any(uint8_t *q, const struct zc_ev *e, uint64_t dt) {
    uint64_t f[5] = {(dt << 1) ^ (uint64_t)((int64_t)dt >> 63), e->a, e->b, e->c, e->d};
    uint8_t *p = q + 2, *cwp;
    uint32_t t = e->type < 1023 ? e->type : 1023;
    if (t == 1023) {
        zc_jrn_st8(p, e->type);
        p += 4;
    }
    cwp = p;
    p += 2;
    unsigned cw = 0;
    for (int k = 0; k < 5; k++) {
        unsigned bits = f[k] ? 64u - (unsigned)__builtin_clzll(f[k]) : 0u, nb = ZC_JRN_NB(bits);
        unsigned cls = nb <= 6 ? nb : 7u;
        zc_jrn_st8(p, f[k]);
        p += cls < 7 ? cls : 8u;
        cw |= cls << (3 * k);
    }
    zc_jrn_st2(q, (uint16_t)(ZC_JRN_CODE_ANY | t << 6));
    zc_jrn_st2(cwp, (uint16_t)cw);
    return p;
}

/* A field: its class into the header (tag), its bytes stored, p past them. The index is its bit
 * length, from 2v + 1 (0 for 0); a value of 64 bits would read as a shorter one there, so its
 * top bit goes into mis, which sends the record to the general form as a misfit class does. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define ZC_JRN_BITLEN(v) __builtin_ia32_bsrdi((long long)((v) + (v) + 1)) /* long: no widening */
#else
#define ZC_JRN_BITLEN(v) (63 ^ __builtin_clzll((v) + (v) + 1))
#endif
#define ZC_JRN_ZERO(v)                                                                                                 \
    do {                                                                                                               \
        if (__builtin_expect((v) != 0, 0)) goto any;                                                                   \
    } while (0)
#define ZC_JRN_F(v, S, POS)                                                                                            \
    do {                                                                                                               \
        uint64_t v_ = (v);                                                                                             \
        long long i_ = ZC_JRN_BITLEN(v_);                                                                              \
        mis |= v_;                                                                                                     \
        tag |= ctab[ZC_JRN_CT_##S##_##POS][i_];                                                                        \
        zc_jrn_st8(p, v_);                                                                                             \
        p += ltab[ZC_JRN_S_##S][i_];                                                                                   \
    } while (0)

/* A field that is often 0 (a request's start at its call's Enter, the record before it): 0 is
 * class 0 in every set, no bytes and no header bits, so a test skips the field's work. Only
 * where it measured lower (bench/results/issue22-writer8.md): elsewhere the branch costs more. */
#define ZC_JRN_FZ(v, S, POS)                                                                                           \
    do {                                                                                                               \
        if (v) ZC_JRN_F(v, S, POS);                                                                                    \
    } while (0)

/* a: 32 bits, never a misfit */
#define ZC_JRN_FA(v, POS)                                                                                              \
    do {                                                                                                               \
        uint64_t v_ = (v);                                                                                             \
        long long i_ = ZC_JRN_BITLEN(v_);                                                                              \
        tag |= ctab[ZC_JRN_CT_A_##POS][i_];                                                                            \
        zc_jrn_st8(p, v_);                                                                                             \
        p += ltab[ZC_JRN_S_A][i_];                                                                                     \
    } while (0)

/* Encodes n records into out (room for n * ZC_JRN_EV_MAX + ZC_JRN_ENC_SLACK bytes); returns the
 * bytes written. */
static inline size_t zc_jrn_encode(uint8_t *restrict out, const struct zc_ev *restrict ev, size_t n) {
    /* the layout of each type (zc_ev.h's order; the types without one: the general form), one load
     * and an indirect jump: a switch became a tree of compares before its table (~8 a record) */
    static const void *const lab[32] = {
        &&misfit, &&l0, &&l0, &&l1, &&l2, &&l2, &&l3, &&l1,
        &&l4, &&l4, &&l5, &&l5, &&l4, &&l4, &&l5, &&l5,
        &&l0, &&l6, &&l5, &&l6, &&l5, &&misfit, &&misfit, &&misfit,
        &&misfit, &&misfit, &&l0, &&l7, &&l0, &&misfit, &&misfit, &&l8,
    };
    /* the tables' addresses in registers for the whole loop (the compiler would recompute both
     * for every record: 2 instructions a record) */
    const uint64_t(*ctab)[64] = zc_jrn_ctab;
    const uint8_t(*ltab)[64] = zc_jrn_ltab;
    __asm__("" : "+r"(ctab), "+r"(ltab));
    uint8_t *p = out;
    uint64_t prev = 0;
    for (const struct zc_ev *e = ev, *end = ev + n; e < end; e++) {
        const uint64_t ts = e->ts, dt = ts - prev;
        const uint32_t type = e->type;
        uint8_t *q = p;
        uint64_t mis = 0, tag = type;
        p += 2;
        prev = ts;
        goto *(type < 32 ? lab[type] : &&misfit);
    l0: /* enter, leave, mpi_coll_begin, mpi_nop, measurement */
        ZC_JRN_ZERO(e->b | e->c | e->d);
        ZC_JRN_F(dt, W, 6);
        ZC_JRN_FA(e->a, 9);
        goto put;
    l1: /* param_u64, buffer_flush */
        ZC_JRN_ZERO(e->c | e->d);
        ZC_JRN_F(dt, W, 6);
        ZC_JRN_FA(e->a, 9);
        ZC_JRN_F(type == ZC_EV_BUFFER_FLUSH ? e->b - ts : e->b, W, 11);
        goto put;
    l2: /* rma_get, rma_put */
        ZC_JRN_ZERO(e->d);
        ZC_JRN_F(dt, T, 6);
        ZC_JRN_FA(e->a, 8);
        ZC_JRN_F(e->b, A, 10);
        ZC_JRN_F(e->c, W, 12);
        goto put;
    l3: /* rma_complete */
        ZC_JRN_ZERO(e->b | e->d);
        ZC_JRN_F(dt, W, 6);
        ZC_JRN_FA(e->a, 9);
        ZC_JRN_F(e->c, W, 11);
        goto put;
    l4: /* mpi_send, mpi_isend, mpi_recv, mpi_irecv */
        ZC_JRN_FZ(dt, T, 6);
        ZC_JRN_FA(e->a, 8);
        ZC_JRN_F(e->b, A, 10);
        ZC_JRN_F(e->c, P, 12);
        ZC_JRN_F(e->d, T, 14);
        goto put;
    l5: /* mpi_isend_complete, mpi_irecv_request, mpi_request_test, mpi_request_cancelled, mpi_nbc_request, mpi_nbc_reqid */
        ZC_JRN_ZERO(e->b | e->c);
        ZC_JRN_F(dt, W, 6);
        ZC_JRN_FA(e->a, 9);
        ZC_JRN_F(e->d, W, 11);
        goto put;
    l6: /* mpi_coll_end, mpi_nbc_complete */
        ZC_JRN_F(dt, T, 6);
        ZC_JRN_FA(e->a, 8);
        ZC_JRN_F(e->b, A, 10);
        ZC_JRN_F(e->c, A, 12);
        ZC_JRN_F(e->d, C, 14);
        goto put;
    l7: /* call */
        if (e->c) {
            tag = ZC_JRN_CODE_CALLSITE;
            ZC_JRN_F(dt, T, 6);
            ZC_JRN_FA(e->a, 8);
            ZC_JRN_F(e->b - ts, T, 10);
            ZC_JRN_F(e->c, P, 12);
            ZC_JRN_F(e->d, T, 14);
        } else {
            ZC_JRN_F(dt, W, 6);
            ZC_JRN_FA(e->a, 9);
            ZC_JRN_F(e->b - ts, W, 11);
            ZC_JRN_F(e->d, A, 14);
        }
        goto put;
    l8: /* call_irecv */
        /* MPI calls carry no callsite id: one with it takes the general form */
        ZC_JRN_ZERO(e->c);
        ZC_JRN_F(dt, W, 6);
        ZC_JRN_FA(e->a, 9);
        ZC_JRN_F(e->b - ts, W, 11);
        ZC_JRN_F(e->d, T, 14);
        goto put;
    misfit:
        tag = ZC_JRN_MISFIT;
    put:
        /* a misfit class, a 64-bit value or a field the layout lacks not 0: the general form */
        if (__builtin_expect((int64_t)(tag | mis) >= 0, 1)) {
            zc_jrn_st2(q, (uint16_t)tag);
            continue;
        }
    any:
        p = zc_jrn_put_any(q, e, dt);
    }
    return (size_t)(p - out);
}
#undef ZC_JRN_F
#undef ZC_JRN_FA
#undef ZC_JRN_FZ
#undef ZC_JRN_ZERO

/* Decoding, bounds-checked: returns 0 and leaves *i past the record, or -1 when the bytes end
 * inside it or it cannot be a record (an unknown code, header bits no layout has, a out of 32 bits). */
static inline int zc_jrn_get_le(const uint8_t *p, size_t len, size_t *i, unsigned n, uint64_t *v) {
    if (n > len - *i) return -1;
    uint64_t x = 0;
    for (unsigned k = 0; k < n; k++) x |= (uint64_t)p[*i + k] << (8 * k);
    *i += n;
    *v = x;
    return 0;
}
/* One record at p[*i..len); *prev: the previous record's time (0 before the first). */
static inline int zc_jrn_decode_one(const uint8_t *p, size_t len, size_t *i, uint64_t *prev, struct zc_ev *e) {
    if (*i > len || len - *i < 2) return -1;
    unsigned h = p[*i] | (unsigned)p[*i + 1] << 8, code = h & 63u;
    uint64_t f[5] = {0}, type;
    *i += 2;
    if (code == ZC_JRN_CODE_ANY) {
        uint64_t cw;
        type = h >> 6;
        if ((type == 1023 && zc_jrn_get_le(p, len, i, 4, &type)) || zc_jrn_get_le(p, len, i, 2, &cw) || cw >> 15)
            return -1;
        for (unsigned k = 0; k < 5; k++) {
            unsigned cls = (unsigned)(cw >> (3 * k)) & 7u;
            if (zc_jrn_get_le(p, len, i, cls < 7 ? cls : 8u, &f[k])) return -1;
        }
        f[0] = *prev + ((f[0] >> 1) ^ (uint64_t) - (int64_t)(f[0] & 1));
    } else {
        const struct zc_jrn_layout *l = &zc_jrn_layout[code];
        unsigned pos = 6;
        if (!l->type) return -1;
        type = l->type;
        for (unsigned k = 0; k < 5; k++) {
            unsigned s = l->set[k];
            if (s == ZC_JRN_S_NONE) continue;
            unsigned bits = ZC_JRN_SET_BITS(s), cls = (h >> pos) & ((1u << bits) - 1);
            pos += bits;
            if (zc_jrn_get_le(p, len, i, ZC_JRN_SET_LEN(s, cls), &f[k])) return -1;
        }
        if (h >> pos) return -1;
        f[0] += *prev;
        if (l->btime) f[2] += f[0];
    }
    if (f[1] > UINT32_MAX) return -1;
    *prev = f[0];
    *e = (struct zc_ev){f[0], (uint32_t)type, (uint32_t)f[1], f[2], f[3], f[4]};
    return 0;
}

/* ---------------------------------------------------------------- EVENTS records, format 1
 * (zecoll-salvage reads journals of older zecolls): a record's type (one byte), a byte whose bits
 * 0-3 say which of a, b, c, d are not zero, then LEB128 varints: the time as the zigzag difference
 * from the previous record's (from 0 for the first), and each non-zero field, b as the zigzag
 * difference from the record's own time for the types whose b is a time (a call's Leave, a buffer
 * flush's end). Decoding, bounds-checked: returns 0 and leaves *i past the record, or -1 when the
 * bytes end inside it or a varint is longer than 64 bits. */
static inline uint64_t zc_jrn_unzz(uint64_t z) { return (z >> 1) ^ (uint64_t)-(int64_t)(z & 1); }
static inline int zc_jrn1_b_is_time(uint32_t type) { return type == ZC_EV_BUFFER_FLUSH || zc_ev_is_call(type); }
static inline int zc_jrn1_get_u(const uint8_t *p, size_t len, size_t *i, uint64_t *v) {
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
static inline int zc_jrn1_decode_one(const uint8_t *p, size_t len, size_t *i, uint64_t *prev, struct zc_ev *e) {
    if (*i + 2 > len) return -1;
    uint32_t type = p[(*i)++];
    uint8_t m = p[(*i)++];
    uint64_t z, a = 0, b = 0, c = 0, d = 0;
    if (m & 0xf0 || zc_jrn1_get_u(p, len, i, &z)) return -1;
    uint64_t ts = *prev + zc_jrn_unzz(z);
    if ((m & 1) && (zc_jrn1_get_u(p, len, i, &a) || a > UINT32_MAX)) return -1;
    if ((m & 2) && zc_jrn1_get_u(p, len, i, &b)) return -1;
    if ((m & 2) && zc_jrn1_b_is_time(type)) b = ts + zc_jrn_unzz(b);
    if ((m & 4) && zc_jrn1_get_u(p, len, i, &c)) return -1;
    if ((m & 8) && zc_jrn1_get_u(p, len, i, &d)) return -1;
    *prev = ts;
    *e = (struct zc_ev){ts, type, (uint32_t)a, b, c, d};
    return 0;
}

/* ---------------------------------------------------------------- checksums
 * Format 1's: a 64-bit hash in four lanes of multiplications (~6 instructions a word). */
static inline uint64_t zc_jrn_rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }
static inline uint64_t zc_jrn1_round(uint64_t acc, uint64_t w) {
    return zc_jrn_rotl(acc + w * UINT64_C(0xC2B2AE3D27D4EB4F), 31) * UINT64_C(0x9E3779B185EBCA87);
}
struct zc_jrn1_hs {
    uint64_t v[4], buf[4];
    size_t nbuf;
};
static inline void zc_jrn1_hash_init(struct zc_jrn1_hs *s, uint32_t type, uint64_t nwords) {
    uint64_t seed = ((uint64_t)type << 56) ^ nwords;
    s->v[0] = seed + UINT64_C(0x60EA27EEADC0B5D6);
    s->v[1] = seed + UINT64_C(0xC2B2AE3D27D4EB4F);
    s->v[2] = seed;
    s->v[3] = seed - UINT64_C(0x9E3779B185EBCA87);
    s->nbuf = 0;
}
/* Words may come in pieces (a record's header words, then its events): the result is the same. */
static inline void zc_jrn1_hash_update(struct zc_jrn1_hs *s, const uint64_t *w, size_t n) {
    size_t i = 0;
    while (s->nbuf && i < n) {
        s->buf[s->nbuf++] = w[i++];
        if (s->nbuf == 4) {
            for (int k = 0; k < 4; k++) s->v[k] = zc_jrn1_round(s->v[k], s->buf[k]);
            s->nbuf = 0;
        }
    }
    for (; i + 4 <= n; i += 4) {
        s->v[0] = zc_jrn1_round(s->v[0], w[i]);
        s->v[1] = zc_jrn1_round(s->v[1], w[i + 1]);
        s->v[2] = zc_jrn1_round(s->v[2], w[i + 2]);
        s->v[3] = zc_jrn1_round(s->v[3], w[i + 3]);
    }
    for (; i < n; i++) s->buf[s->nbuf++] = w[i];
}
static inline uint64_t zc_jrn1_hash_final(const struct zc_jrn1_hs *s) {
    uint64_t h = zc_jrn_rotl(s->v[0], 1) + zc_jrn_rotl(s->v[1], 7) + zc_jrn_rotl(s->v[2], 12) +
                 zc_jrn_rotl(s->v[3], 18);
    for (size_t i = 0; i < s->nbuf; i++)
        h = zc_jrn_rotl(h ^ zc_jrn1_round(0, s->buf[i]), 27) * UINT64_C(0x9E3779B185EBCA87);
    h ^= h >> 33;
    h *= UINT64_C(0xC2B2AE3D27D4EB4F);
    h ^= h >> 29;
    h *= UINT64_C(0x165667B19E3779F9);
    return h ^ (h >> 32);
}
static inline uint64_t zc_jrn1_hash(uint32_t type, uint64_t nwords, const uint64_t *w) {
    struct zc_jrn1_hs s;
    zc_jrn1_hash_init(&s, type, nwords);
    zc_jrn1_hash_update(&s, w, nwords);
    return zc_jrn1_hash_final(&s);
}


/* Format 3's: CRC-32C (Castagnoli, reflected polynomial 0x82F63B78, no pre or post inversion) in
 * four lanes, word i into lane i mod 4 (each word's bytes in memory order), the lanes, the
 * record's type and length and the words after the last group of four mixed into 64 bits at the
 * end. It detects torn and garbled records (a CRC finds every error burst up to 32 bits long); it
 * is not cryptographic. Where the CPU has SSE 4.2 a word is one instruction (a run-time test per
 * record); elsewhere a table of 16 entries, a nibble at a time. */
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
    memcpy(&w, (const char *)p + 8 * i, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    w = __builtin_bswap64(w); /* the bytes in memory order */
#endif
    return w;
}
static inline void zc_jrn_lanes_sw(uint64_t *v, const void *w, size_t groups) {
    for (size_t i = 0; i < groups; i++)
        for (int k = 0; k < 4; k++) v[k] = zc_jrn_crc_sw(v[k], zc_jrn_word(w, 4 * i + (size_t)k));
}
#if defined(__x86_64__) && defined(__GNUC__)
#define ZC_JRN_CRC_HW 1
__attribute__((target("sse4.2"))) static inline void zc_jrn_lanes_hw(uint64_t *v, const void *w, size_t groups) {
    unsigned long long a = v[0], b = v[1], c = v[2], d = v[3];
    for (size_t i = 0; i < groups; i++) {
        a = __builtin_ia32_crc32di(a, zc_jrn_word(w, 4 * i));
        b = __builtin_ia32_crc32di(b, zc_jrn_word(w, 4 * i + 1));
        c = __builtin_ia32_crc32di(c, zc_jrn_word(w, 4 * i + 2));
        d = __builtin_ia32_crc32di(d, zc_jrn_word(w, 4 * i + 3));
    }
    v[0] = a, v[1] = b, v[2] = c, v[3] = d;
}
#endif
/* whole groups of four words into the lanes; hw: the CPU's instruction where it has one, 0 the
 * table (the tests compare the two) */
static inline void zc_jrn_lanes(uint64_t *v, const void *w, size_t groups, int hw) {
#ifdef ZC_JRN_CRC_HW
    if (hw) {
        zc_jrn_lanes_hw(v, w, groups);
        return;
    }
#endif
    (void)hw;
    zc_jrn_lanes_sw(v, w, groups);
}
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
#ifdef ZC_JRN_CRC_HW
    s->hw = __builtin_cpu_supports("sse4.2");
#else
    s->hw = 0;
#endif
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
