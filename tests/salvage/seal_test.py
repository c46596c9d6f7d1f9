#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Sealed event files (docs/salvage.md, "Seals"): the writer journals nothing of what our encoder
writes to an event file; the flusher's passes seal the files, and salvage keeps each file up to
its seal and resumes the encoder there with the journal's records.

  seal_test.py --app ZC_BENCH_APP --zesim LIB --libdir DIR --bindir DIR --work DIR

zc_bench_app kernels N 1 records N kernels on an immediate list (several 1 MiB chunks on each of
its three locations), then idles; under ZECOLL_FLUSH_INTERVAL_MS=50 (buffers of 4,096
records: most are written between two passes) it is killed (SIGKILL) once
its journal has stopped growing for 1 s in the idle (every record is then behind a pass). The same
program run to its end is the reference: per location its events as otf2-print prints them,
without times and definition ids, and without the collector's own (buffer flushes, markers).
  * sealed: the journal holds SEAL records and journals fewer records than were written (the
    writer did not journal what went to the files); the salvaged archive's events are the
    complete run's, in order, up to where it was killed, every kernel there, none lost; the
    salvaged files start with the dead run's bytes up to the last seal's chunk;
  * a seal followed by more chunks: the journal cut after the first pass whose seal of a location
    has later chunks of that file after it: what the file holds after the seal is discarded and
    re-encoded from the journal, the events a prefix of the complete run's (no duplicate, no
    gap), none lost;
  * an event file shorter than its seal (a node failure before the write reached the disk):
    exit 0, a message naming the file, records counted lost, the archive readable;
  * OTF2's encoder (ZECOLL_OTF2_ENCODER=library): no seals, every record journaled, the salvaged
    events the complete run's up to the kill.
"""
import os
import re
import shutil
import signal
import struct
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import jrn_format as jf  # noqa: E402
from salv_common import collector_env, run_args  # noqa: E402

N = 200000
FLUSH, EVENTS = 10, 8
fails = []


def check(ok, what):
    print(("ok - " if ok else "not ok - ") + what)
    if not ok:
        fails.append(what)


def events(trace):
    """{location: [event without its time]} of an archive, or None when otf2-print fails"""
    r = subprocess.run(["otf2-print", os.path.join(trace, "traces.otf2")], capture_output=True, text=True)
    if r.returncode != 0:
        return None
    out = {}
    for line in r.stdout.splitlines():
        f = line.split(None, 3)
        if len(f) < 3 or not f[1].isdigit() or not f[2].isdigit():
            continue
        rest = f[3] if len(f) > 3 else ""
        if f[0] in ("BUFFER_FLUSH", "MEASUREMENT_ON_OFF") or "zecoll buffer flush" in rest:
            continue
        out.setdefault(int(f[1]), []).append(f[0] + " " + re.sub(r"<\d+>", "", rest))
    return out


def run(a, name, extra, kill):
    trace = os.path.join(a.work, name)
    env = collector_env(a, trace, dict({"ZECOLL_FLUSH_INTERVAL_MS": "50", "ZECOLL_BUFFER_EVENTS": "4096",
                                        "ZECOLL_SUMMARY": "0",
                                        "ZC_BENCH_IDLE_MS": "60000" if kill else "0"}, **extra))
    env.pop("ZESIM_TRUTH", None)
    p = subprocess.Popen([a.app, "kernels", str(N), "1"], env=env, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
    if not kill:
        p.wait(timeout=120)
        return trace
    jpath = os.path.join(trace, "zecoll-journal", "0.zcj")
    last, since, t_end = -1, time.monotonic(), time.monotonic() + 60
    while time.monotonic() < t_end:  # idle passes write nothing: a journal unchanged for 1 s
        size = os.path.getsize(jpath) if os.path.exists(jpath) else -1
        if size != last:
            last, since = size, time.monotonic()
        elif size > 0 and time.monotonic() - since > 1.0:
            break
        time.sleep(0.02)
    p.send_signal(signal.SIGKILL)
    p.wait()
    return trace


def salvage(a, d):
    r = subprocess.run([os.path.join(a.bindir, "zecoll"), "salvage", "--keep-journal", d], capture_output=True,
                       text=True)
    return r.returncode, r.stdout + r.stderr


def lost(out):
    m = re.search(r"(\d+) lost in gaps", out)
    return int(m.group(1)) if m else None


def copy_with(a, base, name, journal=None):
    d = os.path.join(a.work, name)
    shutil.copytree(base, d)
    if journal is not None:
        with open(os.path.join(d, "zecoll-journal", "0.zcj"), "wb") as f:
            f.write(journal)
    return d


def seals(data):
    """[(offset after the record, loc, k, end, chunk_off)] of a journal's SEAL records"""
    out = []
    for pos, typ, p in jf.records(data):
        if typ == jf.SEAL:
            loc, k, end, coff = struct.unpack_from("<4Q", p)
            out.append((pos + 24 + len(p), loc, k, end, coff))
    return out


def callsites(evs):
    """{location: [callsite ids of its kernels, in order]} of the device streams, or None where a
    stream is not made of whole kernels (Enter, its callsite id, Leave) and barriers"""
    out = {}
    for loc, v in evs.items():
        if loc == 0:
            continue
        cs, i = [], 0
        while i < len(v):
            if v[i].startswith("ENTER") and '"kus"' in v[i]:
                m = re.search(r"Value: (\d+)", v[i + 1] if i + 1 < len(v) else "")
                if not m or i + 2 >= len(v) or not (v[i + 2].startswith("LEAVE") and '"kus"' in v[i + 2]):
                    return None
                cs.append(int(m.group(1)))
                i += 3
            elif v[i].startswith("ENTER"):  # another operation (a barrier): up to its Leave
                leave = "LEAVE" + v[i][len("ENTER"):]
                j = next((j for j in range(i + 1, len(v)) if v[j] == leave), None)
                if j is None:
                    return None
                i = j + 1
            else:
                return None
        out[loc] = cs
    return out


def prefix_of(got, ref, what, whole):
    """The thread's events are the reference's first ones (no duplicate, no gap, in order); each
    stream's kernels whole, in order, none twice, each one the reference ran (which stream runs
    a kernel varies between runs); whole: every kernel"""
    if got is None or set(got) != set(ref):
        check(False, f"{what}: locations {sorted(got or [])} vs {sorted(ref)}")
        return False
    g, r = got[0], ref[0]
    if g != r[:len(g)]:
        i = next((i for i in range(min(len(g), len(r))) if g[i] != r[i]), min(len(g), len(r)))
        check(False, f"{what}: the thread differs at event {i} of {len(g)}: {g[i:i + 2]} vs {r[i:i + 2]}")
        return False
    cg, cr = callsites(got), callsites(ref)
    if cg is None or cr is None:
        check(False, f"{what}: a stream holds a torn kernel")
        return False
    allg = [c for v in cg.values() for c in v]
    allr = set(c for v in cr.values() for c in v)
    ok = all(v == sorted(v) for v in cg.values()) and len(set(allg)) == len(allg) and set(allg) <= allr
    ok = ok and (not whole or set(allg) == allr)
    if not ok:
        check(False, f"{what}: the streams' kernels: {len(allg)} ({len(set(allg))} distinct) of {len(allr)}")
    return ok


def kernels(evs):
    """kernel Appends on the thread (location 0), kernels executed on the streams"""
    app = sum(1 for e in evs.get(0, []) if e.startswith("ENTER") and "zeCommandListAppendLaunchKernel" in e)
    dev = sum(1 for loc, v in evs.items() if loc != 0 for e in v if e.startswith("ENTER") and '"kus"' in e)
    return app, dev


def main():
    a = run_args(__doc__)
    ref = events(run(a, "complete", {}, False))
    check(ref is not None and kernels(ref) == (N, N), f"the complete run: {N} kernels appended and executed")
    if ref is None:
        return 1

    # sealed
    dead = run(a, "dead", {}, True)
    data = open(os.path.join(dead, "zecoll-journal", "0.zcj"), "rb").read()
    sl = seals(data)
    journaled = sum(struct.unpack_from("<3Q", p)[2] for _o, typ, p in jf.records(data) if typ == EVENTS)
    total = sum(len(v) for v in ref.values())
    print(f"# journal: {len(data)} bytes, {len(sl)} seals, {journaled} records journaled; {total} events written")
    check(struct.unpack_from("<Q", data, 0)[0] == jf.MAGIC[4] and len(sl) > 3, "the journal (format 4) holds seals")
    check(journaled < total / 2, f"the writer did not journal what went to the event files ({journaled} records)")
    d = copy_with(a, dead, "whole")
    rc, out = salvage(a, d)
    got = events(d)
    check(rc == 0 and lost(out) == 0, f"salvaged: exit {rc}, {lost(out)} lost: {out[-300:]}")
    check(prefix_of(got, ref, "sealed", True) and kernels(got) == (N, N), "sealed: the complete run's events, every kernel")
    last = {}
    for _o, loc, k, end, coff in sl:
        last[loc] = coff
    # (a stream's file may hold less than a chunk: which stream runs a kernel varies)
    check(last.get(0, 0) > 0, f"the thread's file sealed after whole chunks ({last.get(0, 0)} bytes)")
    for loc, coff in last.items():
        name = f"{loc}.evt"
        a_ = open(os.path.join(dead, "traces", name), "rb").read(coff)
        b_ = open(os.path.join(d, "traces", name), "rb").read(coff)
        check(a_ == b_, f"{name}: the dead run's {coff} bytes of whole chunks kept")

    # a seal followed by more chunks of the same file: the journal cut after the first pass with one
    cut = None
    for i, (after, loc, k, end, coff) in enumerate(sl):
        if any(l2 == loc and c2 > coff for _a, l2, _k, _e, c2 in sl[i + 1:]):
            flushes = [pos + 24 + len(p) for pos, typ, p in jf.records(data) if typ == FLUSH and pos >= after]
            cut = flushes[0] if flushes else None
            break
    check(cut is not None, "a seal followed by later chunks of its file")
    if cut is not None:
        d = copy_with(a, dead, "early", data[:cut])
        rc, out = salvage(a, d)
        got2 = events(d)
        check(rc == 0 and lost(out) == 0, f"early seal: exit {rc}, {lost(out)} lost: {out[-300:]}")
        check(prefix_of(got2, ref, "early seal", False) and sum(map(len, got2.values())) < sum(map(len, got.values())),
              "early seal: the bytes after it discarded, its records re-encoded from the journal, a prefix")

    # an event file shorter than its seal
    loc, end, coff = max(((s[1], s[3], s[4]) for s in sl if s[1] == 0), key=lambda s: s[1])
    d = copy_with(a, dead, "short")
    os.truncate(os.path.join(d, "traces", f"{loc}.evt"), coff + 100)
    rc, out = salvage(a, d)
    check(rc == 0 and (lost(out) or 0) > 0 and f"{loc}.evt" in out and "shorter than its seal" in out,
          f"short file: exit {rc}, {lost(out)} lost, message: {out[-500:]}")
    got3 = events(d)
    # (a kernel whose Append the lost part held loses its callsite id, A15)
    strip = lambda v: [e for e in v if not e.startswith("PARAMETER")]  # noqa: E731
    check(got3 is not None and all(strip(got3.get(l, [])) == strip(got[l]) for l in got if l != loc),
          "short file: the archive reads, the other locations whole")

    # OTF2's encoder: everything journaled, no seals
    dead = run(a, "deadlib", {"ZECOLL_OTF2_ENCODER": "library"}, True)
    data = open(os.path.join(dead, "zecoll-journal", "0.zcj"), "rb").read()
    journaled = sum(struct.unpack_from("<3Q", p)[2] for _o, typ, p in jf.records(data) if typ == EVENTS)
    check(not seals(data) and journaled >= 3 * N, f"library: no seals, {journaled} records journaled")
    rc, out = salvage(a, dead)
    got4 = events(dead)
    check(rc == 0 and lost(out) == 0, f"library: exit {rc}, {lost(out)} lost: {out[-300:]}")
    check(prefix_of(got4, ref, "library", True) and kernels(got4) == (N, N), "library: the complete run's events")
    print("# FAILED" if fails else "# passed")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
