/* SPDX-License-Identifier: MIT */
/* The salvage journal's record encoding (collector/archive/zc_jrn_format.h), which the collector writes
 * and zecoll-salvage reads:
 *   - varints are LEB128 (known byte vectors), and every value below 2^16, 2^k - 1 / 2^k /
 *     2^k + 1 for k = 0..63 and random values of every bit length read back as written; cut
 *     short anywhere they read as damage;
 *   - random records (all field combinations, the types whose b is a time, times going back,
 *     fields of every size) decode to themselves, within n * ZC_JRN_EV_MAX bytes;
 *   - a record cut short anywhere reads as damage (-1), never past the cut.
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
/* a value of a random bit length 0..64 */
static uint64_t any_len(void) {
    unsigned bits = (unsigned)(next() % 65);
    return bits == 0 ? 0 : bits == 64 ? next() : next() & ((UINT64_C(1) << bits) - 1);
}

static int fails;
static void check_value(uint64_t v) {
    uint8_t b[16];
    size_t n = zc_jrn_put_u(b, v), at = 0;
    uint64_t back = 0;
    if (n > 10 || zc_jrn_get_u(b, n, &at, &back) != 0 || at != n || back != v) {
        if (fails++ < 5) fprintf(stderr, "FAIL: value %#" PRIx64 ": %zu bytes read back as %#" PRIx64 "\n", v, n, back);
        return;
    }
    for (size_t cut = 0; cut < n; cut++) { /* its bytes cut short: an error, not a value */
        at = 0;
        if (zc_jrn_get_u(b, cut, &at, &back) != -1 || at > cut) {
            if (fails++ < 5) fprintf(stderr, "FAIL: value %#" PRIx64 " cut to %zu bytes read as a value\n", v, cut);
            return;
        }
    }
}
static void check_bytes(uint64_t v, const char *want, size_t nwant) {
    uint8_t b[16];
    size_t n = zc_jrn_put_u(b, v);
    if (n != nwant || memcmp(b, want, n) != 0) {
        fprintf(stderr, "FAIL: %#" PRIx64 " is not encoded as LEB128 (%zu bytes)\n", v, n);
        fails++;
    }
}

int main(void) {
    check_bytes(0, "\x00", 1);
    check_bytes(127, "\x7f", 1);
    check_bytes(128, "\x80\x01", 2);
    check_bytes(300, "\xac\x02", 2);
    check_bytes(UINT64_MAX, "\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 10);
    for (uint64_t v = 0; v < 65536; v++) check_value(v);
    for (int k = 0; k < 64; k++) {
        uint64_t p = UINT64_C(1) << k;
        check_value(p - 1);
        check_value(p);
        check_value(p + 1);
    }
    check_value(UINT64_MAX);
    for (int i = 0; i < 1000000; i++) check_value(any_len());
    if (fails) return 1;

    enum { N = 4096 };
    static struct zc_ev ev[N];
    static uint8_t enc[N * ZC_JRN_EV_MAX];
    const uint32_t types[] = {ZC_EV_ENTER, ZC_EV_CALL, ZC_EV_BUFFER_FLUSH, ZC_EV_MPI_ISEND, ZC_EV_MPI_IRECV_REQUEST};
    for (int round = 0; round < 50; round++) {
        uint64_t t = next() >> (next() % 64);
        for (size_t i = 0; i < N; i++) {
            /* times mostly forward by a little, sometimes anywhere (a zigzag of any size) */
            t = next() % 8 ? t + any_len() % 100000 : any_len();
            uint64_t m = next();
            ev[i] = (struct zc_ev){t, types[next() % (sizeof(types) / sizeof(types[0]))], m & 1 ? (uint32_t)any_len() : 0,
                                   m & 2 ? (next() % 2 ? t + any_len() % 1000000 : any_len()) : 0, m & 4 ? any_len() : 0,
                                   m & 8 ? any_len() : 0};
        }
        size_t n_enc = zc_jrn_encode(enc, ev, N);
        if (n_enc > (size_t)N * ZC_JRN_EV_MAX) {
            fprintf(stderr, "FAIL: round %d: %zu bytes for %d records\n", round, n_enc, (int)N);
            return 1;
        }
        size_t at = 0, last_at = 0;
        uint64_t prev = 0, last_prev = 0;
        for (size_t i = 0; i < N; i++) {
            struct zc_ev d;
            last_at = at;
            last_prev = prev;
            if (zc_jrn_decode_one(enc, n_enc, &at, &prev, &d) != 0 || memcmp(&d, &ev[i], sizeof(d)) != 0) {
                fprintf(stderr, "FAIL: round %d: record %zu does not decode to itself\n", round, i);
                return 1;
            }
        }
        if (at != n_enc) {
            fprintf(stderr, "FAIL: round %d: %zu bytes decoded of %zu\n", round, at, n_enc);
            return 1;
        }
        /* the last record cut short at every byte: damage, and nothing read beyond the cut */
        for (size_t cut = last_at; cut < n_enc; cut++) {
            struct zc_ev d;
            size_t a = last_at;
            uint64_t p = last_prev;
            if (zc_jrn_decode_one(enc, cut, &a, &p, &d) != -1 || a > cut) {
                fprintf(stderr, "FAIL: round %d: the last record cut to %zu of its %zu bytes decoded\n", round,
                        cut - last_at, n_enc - last_at);
                return 1;
            }
        }
    }
    printf("PASS: LEB128 varints and records decode to what was encoded; cut ones are damage\n");
    return 0;
}
