/* SPDX-License-Identifier: MIT */
/* The salvage journal's record checksum (collector/archive/zc_jrn_format.h), which the collector
 * writes and zecoll-salvage checks:
 *   - its lanes are CRC-32C: RFC 3720's test vectors (32 bytes of zeros, of ones, ascending,
 *     descending), with the CPU's instruction and with the table;
 *   - the two agree on random payloads of every length 0..64 words, and a payload hashed in
 *     random pieces gives the hash of the whole (the writer hashes a header, then its records);
 *   - every single-bit flip of a payload of 5..40 words (one to eight 40-byte records), of its
 *     type byte and of its length changes the hash, and so does a payload cut short by one word or
 *     a trailing word zeroed (a torn write).
 * Exits 0 when all hold, 1 with the first difference otherwise. */
#include "zc_jrn_format.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng = UINT64_C(0x9E3779B97F4A7C15);
static uint64_t next(void) { /* xorshift64* */
    rng ^= rng >> 12;
    rng ^= rng << 25;
    rng ^= rng >> 27;
    return rng * UINT64_C(0x2545F4914F6CDD1D);
}

static int fails;
#define FAIL(...)                                                                                                      \
    do {                                                                                                               \
        if (fails++ < 5) fprintf(stderr, "FAIL: " __VA_ARGS__);                                                        \
    } while (0)

/* CRC-32C of 32 bytes as iSCSI defines it (initial value and final xor all ones), by the lanes'
 * step applied to one lane only */
static uint32_t crc32c_32(const uint8_t *b, int hw) {
    uint64_t v[4] = {0xffffffffu, 0, 0, 0};
    for (int i = 0; i < 4; i++) {
        uint64_t w[4] = {0}, lanes[4] = {v[0], 0, 0, 0};
        memcpy(&w[0], b + 8 * i, 8);
        zc_jrn_lanes(lanes, w, 1, hw);
        v[0] = lanes[0];
    }
    return (uint32_t)v[0] ^ 0xffffffffu;
}

static uint64_t hash_with(uint32_t type, uint64_t n, const uint64_t *w, int hw) {
    struct zc_jrn_hs s;
    zc_jrn_hash_init(&s, type, n);
    s.hw = hw;
    zc_jrn_hash_update(&s, w, n);
    return zc_jrn_hash_final(&s);
}

/* the words of w[0..n) under a header that says nwords */
static uint64_t hash_seeded(uint32_t type, uint64_t nwords, const uint64_t *w, size_t n) {
    struct zc_jrn_hs s;
    zc_jrn_hash_init(&s, type, nwords);
    zc_jrn_hash_update(&s, w, n);
    return zc_jrn_hash_final(&s);
}

int main(void) {
    uint8_t b[32];
    const struct {
        int kind;
        uint32_t crc;
    } rfc[] = {{0, 0x8a9136aa}, {1, 0x62a8ab43}, {2, 0x46dd794e}, {3, 0x113fdb5c}};
    for (size_t t = 0; t < sizeof(rfc) / sizeof(rfc[0]); t++) {
        for (int i = 0; i < 32; i++)
            b[i] = (uint8_t)(rfc[t].kind == 0 ? 0 : rfc[t].kind == 1 ? 0xff : rfc[t].kind == 2 ? i : 31 - i);
        for (int hw = 0; hw < 2; hw++)
            if (crc32c_32(b, hw) != rfc[t].crc)
                FAIL("RFC 3720 vector %zu: %#x, not %#x (%s)\n", t, crc32c_32(b, hw), rfc[t].crc,
                     hw ? "the CPU's instruction" : "the table");
    }

    enum { MAXW = 64 };
    uint64_t w[MAXW];
    for (int round = 0; round < 2000; round++) {
        size_t n = (size_t)(next() % (MAXW + 1));
        for (size_t i = 0; i < n; i++) w[i] = next() >> (next() % 64);
        uint32_t type = (uint32_t)(1 + next() % ZC_JRN_MAX_TYPE);
        uint64_t h = hash_with(type, n, w, 1);
        if (h != hash_with(type, n, w, 0)) FAIL("round %d: the CPU's instruction and the table differ\n", round);
        if (h != zc_jrn_hash(type, n, w)) FAIL("round %d: zc_jrn_hash differs\n", round);
        struct zc_jrn_hs s;
        zc_jrn_hash_init(&s, type, n);
        for (size_t at = 0; at < n;) { /* in pieces */
            size_t k = 1 + (size_t)(next() % 7);
            if (k > n - at) k = n - at;
            zc_jrn_hash_update(&s, w + at, k);
            at += k;
        }
        if (zc_jrn_hash_final(&s) != h) FAIL("round %d: pieces of %zu words hash otherwise\n", round, n);
    }

    for (size_t n = 5; n <= 40; n += 5) {
        for (size_t i = 0; i < n; i++) w[i] = next() >> (next() % 64);
        const uint32_t type = ZC_JRN_EVENTS;
        uint64_t h = zc_jrn_hash(type, n, w);
        for (size_t i = 0; i < n; i++)
            for (int bit = 0; bit < 64; bit++) {
                w[i] ^= UINT64_C(1) << bit;
                if (zc_jrn_hash(type, n, w) == h) FAIL("%zu words: bit %d of word %zu flipped goes unseen\n", n, bit, i);
                w[i] ^= UINT64_C(1) << bit;
            }
        for (int bit = 0; bit < 8; bit++)
            if (zc_jrn_hash(type ^ (1u << bit), n, w) == h) FAIL("%zu words: type bit %d goes unseen\n", n, bit);
        for (int bit = 0; bit < 32; bit++)
            if (hash_seeded(type, n ^ (UINT64_C(1) << bit), w, n) == h)
                FAIL("%zu words: length bit %d goes unseen\n", n, bit);
        if (zc_jrn_hash(type, n - 1, w) == h || zc_jrn_hash(type, n, w) != h) FAIL("%zu words: a cut goes unseen\n", n);
        uint64_t last = w[n - 1];
        w[n - 1] = 0;
        if (last && zc_jrn_hash(type, n, w) == h) FAIL("%zu words: the last one zeroed goes unseen\n", n);
        w[n - 1] = last;
    }
    if (fails) return 1;
    printf("PASS: CRC-32C lanes (RFC 3720 vectors; instruction and table agree), pieces, flips, cuts\n");
    return 0;
}
