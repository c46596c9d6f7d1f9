# SPDX-License-Identifier: MIT
"""The salvage journal's record checksum, written from its description in docs/archive.md (a
second implementation: the tests check the collector's records with it)."""
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
