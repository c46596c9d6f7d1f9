# SPDX-License-Identifier: MIT
"""The salvage journal's EVENTS records, written from their description in docs/archive.md (a
second implementation: the tests read the collector's records with it and write journals of
format 1, the one older zecolls wrote, from them)."""
import struct

from jrn_hash import jrn_hash

M = (1 << 64) - 1
MAGIC = {1: 0x314C4E524A435A7F, 3: 0x334C4E524A435A7F, 4: 0x344C4E524A435A7F}
SEAL = 14
REC_MAGIC = 0x524A435A
JOB, EVENTS = 1, 8
CALL, BUFFER_FLUSH = 27, 7

# format 3: the bytes of each class of a length set
SETS = {"T": (0, 1, 2, 3), "A": (0, 1, 2, 4), "P": (0, 1, 5, 6), "C": (0, 4, 5, 8), "W": (0, 1, 2, 3, 4, 5, 6, 8)}
# code: (type, b is a time, the sets of ts, a, b, c, d; None: the field is 0)
LAYOUTS = {}
for _t in (1, 2, 16, 26, 28):  # Enter, Leave, CollectiveBegin, the placeholder, MeasurementOnOff
    LAYOUTS[_t] = (_t, False, ("W", "A", None, None, None))
LAYOUTS[3] = (3, False, ("W", "A", "W", None, None))  # a parameter
LAYOUTS[7] = (7, True, ("W", "A", "W", None, None))  # a buffer flush
for _t in (4, 5):  # RMA get, put
    LAYOUTS[_t] = (_t, False, ("T", "A", "A", "W", None))
LAYOUTS[6] = (6, False, ("W", "A", None, "W", None))  # RMA completion
for _t in (8, 9, 12, 13):  # MPI send, isend, recv, irecv
    LAYOUTS[_t] = (_t, False, ("T", "A", "A", "P", "T"))
for _t in (10, 11, 14, 15, 18, 20):  # request ids: completions, tests, cancels, NBC requests
    LAYOUTS[_t] = (_t, False, ("W", "A", None, None, "W"))
for _t in (17, 19):  # collective end, NBC completion
    LAYOUTS[_t] = (_t, False, ("T", "A", "A", "A", "C"))
LAYOUTS[27] = (CALL, True, ("W", "A", "W", None, "A"))  # a call without a callsite id
LAYOUTS[31] = (31, True, ("W", "A", "W", None, "T"))  # an MPI_Irecv and its request, without a callsite id
LAYOUTS[62] = (CALL, True, ("T", "A", "T", "P", "T"))  # a call with one
ANY = 63


def _le(b, i, n):
    if i + n > len(b):
        raise ValueError("record cut short")
    return int.from_bytes(b[i:i + n], "little"), i + n


def decode3(b, count):
    """count records from bytes b: a list of (ts, type, a, b, c, d); ValueError where they are not"""
    out, i, prev = [], 0, 0
    for _ in range(count):
        h, i = _le(b, i, 2)
        code, f = h & 63, [0] * 5
        if code == ANY:
            typ = h >> 6
            if typ == 1023:
                typ, i = _le(b, i, 4)
            cw, i = _le(b, i, 2)
            for k in range(5):
                cls = (cw >> (3 * k)) & 7
                f[k], i = _le(b, i, SETS["W"][cls])
            f[0] = (prev + ((f[0] >> 1) ^ -(f[0] & 1))) & M
        else:
            if code not in LAYOUTS:
                raise ValueError(f"unknown layout code {code}")
            typ, btime, sets = LAYOUTS[code]
            pos = 6
            for k, s in enumerate(sets):
                if s is None:
                    continue
                bits = 3 if s == "W" else 2
                f[k], i = _le(b, i, SETS[s][(h >> pos) & ((1 << bits) - 1)])
                pos += bits
            if h >> pos:
                raise ValueError("header bits no layout has")
            f[0] = (f[0] + prev) & M
            if btime:
                f[2] = (f[2] + f[0]) & M
        prev = f[0]
        out.append((f[0], typ, f[1], f[2], f[3], f[4]))
    if i != len(b):
        raise ValueError(f"{len(b) - i} bytes after the records")
    return out


def _leb(v):
    out = bytearray()
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def _zz(d):
    d &= M
    return ((d << 1) ^ (M if d >> 63 else 0)) & M


def encode1(recs):
    """records in format 1: a type byte, a byte of which of a..d are not 0, LEB128 varints"""
    out, prev = bytearray(), 0
    for ts, typ, a, b, c, d in recs:
        body, m = _leb(_zz(ts - prev)), 0
        prev = ts
        for bit, v in ((1, a), (2, b), (4, c), (8, d)):
            if v:
                m |= bit
                body += _leb(_zz(v - ts) if bit == 2 and typ in (CALL, BUFFER_FLUSH) else v)
        out += bytes((typ & 0xFF, m)) + body
    return bytes(out)


def records(data):
    """(offset, type, payload) of every whole record of a journal's bytes, after its magic"""
    pos, out = 8, []
    while pos + 24 <= len(data):
        magic, typ, nw = struct.unpack_from("<IIQ", data, pos)
        if magic != REC_MAGIC or pos + 24 + 8 * nw > len(data):
            break
        out.append((pos, typ, data[pos + 24:pos + 24 + 8 * nw]))
        pos += 24 + 8 * nw
    return out


def _rec(typ, payload):
    nw = len(payload) // 8
    return struct.pack("<IIQQ", REC_MAGIC, typ, nw, jrn_hash(typ, nw, payload)) + payload


def to_format1(data):
    """A journal of format 3, or 4 without SEAL records, as format 1 would have held it (its whole
    records; a torn tail is left out); returns (bytes, EVENTS bytes in format 3, in format 1)."""
    out, n3, n1 = bytearray(struct.pack("<Q", MAGIC[1])), 0, 0
    for _pos, typ, p in records(data):
        if typ == JOB:
            p = struct.pack("<Q", 1) + p[8:]
        elif typ == EVENTS:
            loc, first, count, nb = struct.unpack_from("<4Q", p)
            enc = encode1(decode3(p[32:32 + nb], count))
            n3, n1 = n3 + nb, n1 + len(enc)
            p = struct.pack("<4Q", loc, first, count, len(enc)) + enc + bytes(-len(enc) % 8)
        out += _rec(typ, p)
    return bytes(out), n3, n1
