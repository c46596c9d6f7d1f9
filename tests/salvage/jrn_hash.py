# SPDX-License-Identifier: MIT
"""The salvage journal's record checksums, written from their description in docs/archive.md (a
second implementation: the tests check the collector's records with it): jrn_hash3 format 3's
(CRC-32C lanes), jrn_hash format 1's."""
import struct

M = (1 << 64) - 1
P1, P2, P3 = 0x9E3779B185EBCA87, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9


def _rotl(x, r):
    return ((x << r) | (x >> (64 - r))) & M


def _round(acc, w):
    return (_rotl((acc + w * P2) & M, 31) * P1) & M


def jrn_hash(rtype, nwords, payload):
    """rtype: the record type; nwords: payload length in words; payload: its bytes."""
    w = struct.unpack_from(f"<{nwords}Q", payload)
    seed = ((rtype << 56) ^ nwords) & M
    v = [(seed + 0x60EA27EEADC0B5D6) & M, (seed + P2) & M, seed, (seed - P1) & M]
    i = 0
    while i + 4 <= nwords:
        for k in range(4):
            v[k] = _round(v[k], w[i + k])
        i += 4
    h = (_rotl(v[0], 1) + _rotl(v[1], 7) + _rotl(v[2], 12) + _rotl(v[3], 18)) & M
    for k in range(i, nwords):
        h = (_rotl(h ^ _round(0, w[k]), 27) * P1) & M
    h ^= h >> 33
    h = (h * P2) & M
    h ^= h >> 29
    h = (h * P3) & M
    return h ^ (h >> 32)


def _table():
    t = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ (0x82F63B78 if c & 1 else 0)
        t.append(c)
    return t


_T = _table()


def _crc(c, data):
    """CRC-32C (reflected 0x82F63B78) of data from state c, no inversion"""
    for b in data:
        c = _T[(c ^ b) & 0xFF] ^ (c >> 8)
    return c


def jrn_hash3(rtype, nwords, payload):
    """format 3's: rtype the record type; nwords the payload's length in words; payload its bytes."""
    data = bytes(payload[:8 * nwords])
    v = [0x60EA27EE, 0xC2B2AE3D, 0x27D4EB4F, 0x9E3779B1]
    whole = nwords // 4 * 4
    for k in range(4):  # lane k: words k, k + 4, ...
        v[k] = _crc(v[k], b"".join(data[8 * i:8 * i + 8] for i in range(k, whole, 4)))
    h = ((rtype << 56) ^ nwords) ^ (v[0] << 32 | v[1])
    h = ((_rotl(h, 27) * P1) & M) ^ (v[2] << 32 | v[3])
    for x in struct.unpack_from(f"<{nwords - whole}Q", data, 8 * whole):
        h = (_rotl(h ^ ((x * P2) & M), 31) * P1) & M
    h ^= h >> 33
    h = (h * P2) & M
    h ^= h >> 29
    h = (h * P3) & M
    return h ^ (h >> 32)
