/* SPDX-License-Identifier: MIT */
/* The salvage journal's record encodings (collector/archive/zc_jrn_format.h), which the collector
 * writes and zecoll-salvage reads:
 *   - format 3 (the collector's): random records of every type (those without a layout too, and
 *     types past 1023), fields of every bit length, times going back, decode to themselves
 *     within n * ZC_JRN_EV_MAX bytes, nothing stored past ZC_JRN_ENC_SLACK beyond them; a record
 *     cut short anywhere is damage (-1), never read past the cut; random bytes never read past
 *     their end; the records of the benchmarks' loops take the bytes the layouts promise;
 *   - format 3's checksum: the CRC-32C table a nibble at a time and the CPU's instruction agree
 *     with a bitwise reference; a record's words hashed in pieces give the whole's checksum;
 *   - format 1 (older zecolls'; salvage reads it): its encoder as it was (below, the journals'
 *     writer until format 3) makes LEB128 varints (known byte vectors) and records that format 1's
 *     decoder reads back, cut ones as damage.
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

/* ---------------------------------------------------------------- format 1's encoder, as it was */
static size_t old_put_u(uint8_t *p, uint64_t v) {
    size_t n = 0;
    while (v >= 0x80) {
        p[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    p[n++] = (uint8_t)v;
    return n;
}
static uint64_t old_zz(uint64_t d) { return (d << 1) ^ (uint64_t)((int64_t)d >> 63); }
static size_t old_encode(uint8_t *out, const struct zc_ev *ev, size_t n) {
    size_t o = 0;
    uint64_t prev = 0;
    for (size_t i = 0; i < n; i++) {
        const struct zc_ev *e = &ev[i];
        uint8_t *q = out + o;
        unsigned m = 0;
        size_t k = 2;
        q[0] = (uint8_t)e->type;
        k += old_put_u(q + k, old_zz(e->ts - prev));
        prev = e->ts;
        if (e->a) m |= 1, k += old_put_u(q + k, e->a);
        if (e->b) m |= 2, k += old_put_u(q + k, zc_jrn1_b_is_time(e->type) ? old_zz(e->b - e->ts) : e->b);
        if (e->c) m |= 4, k += old_put_u(q + k, e->c);
        if (e->d) m |= 8, k += old_put_u(q + k, e->d);
        q[1] = (uint8_t)m;
        o += k;
    }
    return o;
}

static int fails;
#define FAIL(...)                                                                                                      \
    do {                                                                                                               \
        if (fails++ < 5) fprintf(stderr, "FAIL: " __VA_ARGS__);                                                        \
    } while (0)

static void check_value(uint64_t v) {
    uint8_t b[16];
    size_t n = old_put_u(b, v), at = 0;
    uint64_t back = 0;
    if (n > 10 || zc_jrn1_get_u(b, n, &at, &back) != 0 || at != n || back != v) {
        FAIL("value %#" PRIx64 ": %zu bytes read back as %#" PRIx64 "\n", v, n, back);
        return;
    }
    for (size_t cut = 0; cut < n; cut++) { /* its bytes cut short: an error, not a value */
        at = 0;
        if (zc_jrn1_get_u(b, cut, &at, &back) != -1 || at > cut) {
            FAIL("value %#" PRIx64 " cut to %zu bytes read as a value\n", v, cut);
            return;
        }
    }
}
static void check_bytes(uint64_t v, const char *want, size_t nwant) {
    uint8_t b[16];
    size_t n = old_put_u(b, v);
    if (n != nwant || memcmp(b, want, n) != 0) FAIL("%#" PRIx64 " is not encoded as LEB128 (%zu bytes)\n", v, n);
}

enum { N = 4096 };
static struct zc_ev ev[N];
static uint8_t enc[N * ZC_JRN_EV_MAX + ZC_JRN_ENC_SLACK + 64];

/* every record of ev[0..n) decodes to itself from the n_enc bytes; the last one cut is damage */
static void check_decode(const char *what, int round, size_t n, size_t n_enc,
                         int (*dec)(const uint8_t *, size_t, size_t *, uint64_t *, struct zc_ev *)) {
    size_t at = 0, last_at = 0;
    uint64_t prev = 0, last_prev = 0;
    for (size_t i = 0; i < n; i++) {
        struct zc_ev d;
        last_at = at;
        last_prev = prev;
        if (dec(enc, n_enc, &at, &prev, &d) != 0 || memcmp(&d, &ev[i], sizeof(d)) != 0) {
            FAIL("%s, round %d: record %zu (type %u) does not decode to itself\n", what, round, i, ev[i].type);
            return;
        }
    }
    if (at != n_enc) FAIL("%s, round %d: %zu bytes decoded of %zu\n", what, round, at, n_enc);
    for (size_t cut = last_at; cut < n_enc; cut++) { /* the last record cut short at every byte */
        struct zc_ev d;
        size_t a = last_at;
        uint64_t p = last_prev;
        if (dec(enc, cut, &a, &p, &d) != -1 || a > cut)
            FAIL("%s, round %d: the last record cut to %zu of its %zu bytes decoded\n", what, round, cut - last_at,
                 n_enc - last_at);
    }
}

/* random records: types of every kind, each field zero half the time, of any length otherwise,
 * b near the time for the types whose b is a time, times mostly forward by a little */
static void random_records(size_t n, int wide_types) {
    uint64_t t = next() >> (next() % 64);
    for (size_t i = 0; i < n; i++) {
        t = next() % 8 ? t + any_len() % 100000 : next() % 2 ? t - any_len() % 1000 : any_len();
        uint64_t m = next();
        uint32_t type = (uint32_t)(next() % 34);
        if (wide_types && next() % 16 == 0) type = next() % 2 ? 1000 + (uint32_t)(next() % 100) : (uint32_t)next();
        if (!wide_types) type = (uint32_t)(type % 31);
        ev[i] = (struct zc_ev){t, type, m & 1 ? (uint32_t)any_len() : 0,
                               m & 2 ? (next() % 2 ? t + any_len() % 1000000 : any_len()) : 0, m & 4 ? any_len() : 0,
                               m & 8 ? any_len() : 0};
        if (m & 16) ev[i].b = ev[i].c = 0; /* as most types have them */
        if (m & 32) ev[i].d = 0;
    }
}

static size_t encode3(size_t n) {
    memset(enc, 0xa5, sizeof(enc));
    size_t b = zc_jrn_encode(enc, ev, n);
    if (b > n * ZC_JRN_EV_MAX) FAIL("%zu bytes for %zu records\n", b, n);
    for (size_t i = n * ZC_JRN_EV_MAX + ZC_JRN_ENC_SLACK; i < sizeof(enc); i++)
        if (enc[i] != 0xa5) {
            FAIL("the encoder stored past its room (byte %zu)\n", i);
            break;
        }
    return b;
}

/* one record's bytes in format 3 */
static size_t bytes_of(struct zc_ev e, uint64_t prev_ts) {
    ev[0] = (struct zc_ev){prev_ts, ZC_EV_ENTER, 1, 0, 0, 0};
    ev[1] = e;
    size_t all = encode3(2);
    return all - encode3(1);
}

static uint32_t crc_ref(uint32_t c, uint64_t w) { /* bit by bit, from the polynomial */
    for (int i = 0; i < 8; i++) {
        c ^= (uint8_t)(w >> (8 * i));
        for (int k = 0; k < 8; k++) c = c & 1 ? (c >> 1) ^ 0x82F63B78u : c >> 1;
    }
    return c;
}

static void check_checksum(void) {
    for (int i = 0; i < 100000; i++) {
        uint32_t c = (uint32_t)next();
        uint64_t w = next();
        if (zc_jrn_crc_sw(c, w) != crc_ref(c, w)) FAIL("CRC-32C table: %#x after %#" PRIx64 "\n", c, w);
    }
    static uint64_t w[1000];
    for (size_t i = 0; i < 1000; i++) w[i] = next();
#ifdef ZC_JRN_CRC_HW
    if (__builtin_cpu_supports("sse4.2")) {
        uint64_t a[4] = {1, 2, 3, 4}, b[4] = {1, 2, 3, 4};
        zc_jrn_lanes(a, w, 250, 1);
        zc_jrn_lanes(b, w, 250, 0);
        if (memcmp(a, b, sizeof(a))) FAIL("CRC-32C: the instruction's lanes differ from the table's\n");
    } else {
        printf("# no SSE 4.2 here: the instruction's lanes not compared\n");
    }
#endif
    for (int round = 0; round < 2000; round++) { /* in pieces as the writer gives them: the same */
        size_t n = (size_t)(next() % 1000), cut1 = n ? (size_t)(next() % (n + 1)) : 0;
        size_t cut2 = cut1 + (n - cut1 ? (size_t)(next() % (n - cut1 + 1)) : 0);
        struct zc_jrn_hs hs;
        zc_jrn_hash_init(&hs, 8, n);
        zc_jrn_hash_update(&hs, w, cut1);
        zc_jrn_hash_update(&hs, w + cut1, cut2 - cut1);
        zc_jrn_hash_update(&hs, w + cut2, n - cut2);
        if (zc_jrn_hash_final(&hs) != zc_jrn_hash(8, n, w)) FAIL("checksum of %zu words in pieces differs\n", n);
    }
}

int main(void) {
    check_checksum();
    /* format 1 */
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
    for (int i = 0; i < 200000; i++) check_value(any_len());
    for (int round = 0; round < 20 && !fails; round++) {
        random_records(N, 0);
        for (size_t i = 0; i < N; i++) ev[i].type &= 255; /* format 1 kept a byte of it */
        check_decode("format 1", round, N, old_encode(enc, ev, N), zc_jrn1_decode_one);
    }

    /* format 3 */
    for (int round = 0; round < 60 && !fails; round++) {
        random_records(N, 1);
        check_decode("format 3", round, N, encode3(N), zc_jrn_decode_one);
    }
    /* fields at the edges of every class: 2^k - 1, 2^k, for each field and type */
    for (uint32_t type = 1; type < 34 && !fails; type++)
        for (int k = 0; k <= 64; k++) {
            uint64_t v = k == 64 ? UINT64_MAX : (UINT64_C(1) << k) - (k % 2);
            for (int f = 0; f < 6; f++) {
                ev[0] = (struct zc_ev){1000, type, 0, 0, 0, 0};
                ev[1] = (struct zc_ev){1000 + (f == 0 ? v : 0), type, f == 1 ? (uint32_t)v : 0, f == 2 ? v : 0,
                                       f == 3 ? v : 0, f == 4 ? v : 0};
                if (f == 5) ev[1].b = ev[1].ts + v; /* a time after the record's */
                check_decode("format 3 edges", (int)type, 2, encode3(2), zc_jrn_decode_one);
            }
        }
    /* random bytes: decoded or refused, never read past their end */
    for (int round = 0; round < 200000; round++) {
        uint8_t b[24];
        for (int i = 0; i < 24; i++) b[i] = (uint8_t)next();
        if (round % 2) b[0] = (uint8_t)((b[0] & 0xc0) | (next() % 31)); /* codes that have a layout */
        size_t len = next() % 25, at = 0;
        uint64_t prev = next();
        struct zc_ev d;
        if (zc_jrn_decode_one(b, len, &at, &prev, &d) == 0 && at > len) FAIL("random bytes decoded past their end\n");
    }
    /* what the layouts promise for the benchmarks' records (bench/results/issue22-journal6.md) */
    struct {
        struct zc_ev e;
        size_t bytes;
    } want[] = {
        {{1100, ZC_EV_CALL, 3, 1190, 0, 2}, 6},                        /* an MPI call (Leave 90 ns after) */
        {{1000, ZC_EV_MPI_ISEND, 1, 0, 7, 40000}, 6},                  /* 0 bytes to rank 0, tag 7 */
        {{1000, ZC_EV_MPI_ISEND, 1, 800, (UINT64_C(5) << 32) | 7, 90000}, 13}, /* 800 bytes to rank 5 */
        {{1000, ZC_EV_MPI_IRECV_REQUEST, 1, 0, 0, 40000}, 5},
        {{3000, ZC_EV_CALL, 40, 3700, (UINT64_C(1) << 40) | 77, 0}, 13}, /* a kernel's append */
        {{3000, ZC_EV_ENTER, 6, 0, 0, 0}, 5},
        {{1000, ZC_EV_PARAM_U64, 0, (UINT64_C(1) << 40) | 77, 0, 0}, 8},
        {{1000, ZC_EV_LEAVE, 6, 0, 0, 0}, 3},
    };
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        size_t got = bytes_of(want[i].e, 1000);
        if (got != want[i].bytes) FAIL("record %zu (type %u): %zu bytes, not %zu\n", i, want[i].e.type, got, want[i].bytes);
    }
    if (fails) return 1;
    printf("PASS: format 3's records decode to what was encoded, in the bytes promised; format 1's LEB128 "
           "varints and records too; cut ones are damage\n");
    return 0;
}
