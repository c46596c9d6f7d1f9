#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Judge a zecoll OTF2 archive against zesim's ground-truth log.

  check_trace.py run --app BIN [--arg A ...] --zesim LIB --libdir DIR --work DIR [--env K=V ...]
  check_trace.py check --truth FILE --trace ARCHIVE_DIR [--facts FILE] [--rank R]
  check_trace.py check --trace ARCHIVE_DIR --rank R --truth FILE [--facts FILE] [--rank R --truth FILE ...]

`run` executes the program under the collector on zesim (ZECOLL_STRICT=1: any internal collector
error aborts) and then checks. The checks:
  * otf2-print --silent -Werror accepts the archive; the python3-otf2 reader reads all of it;
  * on every location timestamps never decrease and Enter/Leave nest and balance;
  * every GPU operation the application executed (from the truth log, minus the collector's own
    commands) appears exactly once as a device record: same kernel name / transfer direction,
    bytes, start within 1 us, duration within one device tick (+20 ppm of it for the fitted rate);
  * all operations of one queue (or immediate engine) land on one stream, and each stream serves
    one queue;
  * every device record's callsite id appears inside the host region of its Append call;
  * the app's own zeEventQueryKernelTimestamp results are its operations' times (not ours);
  * the program's own expectation of how many operations it ran matches the truth;
  * recording windows (docs/archive.md A18): MeasurementOnOff alternate OFF/ON on every location,
    never inside a region, nothing is recorded between an OFF and its ON; with the program's
    facts: exactly the operations it says must be recorded are ("record": a regex over
    "<record name>#<execution>"; "time_window": the append times of a list's operations, judged
    against the markers), host call regions counted exactly ("host_regions"), and the markers of
    the thread that turned recording on and off fall where it did so ("toggles").
"""
import argparse
import bisect
import collections
import glob
import json
import os
import math
import re
import subprocess
import sys

TIMED = {"kernel", "copy", "copy_region", "copy_from_context", "fill", "image_copy", "image_copy_region",
         "image_copy_to_memory", "image_copy_from_memory", "barrier", "ranges_barrier"}
CLASS = {"kernel": "kernel", "copy": "copy", "copy_region": "copy", "copy_from_context": "copy", "fill": "fill",
         "image_copy": "image", "image_copy_region": "image", "image_copy_to_memory": "image",
         "image_copy_from_memory": "image", "barrier": "barrier", "ranges_barrier": "barrier"}
API = {"copy": "zeCommandListAppendMemoryCopy", "copy_region": "zeCommandListAppendMemoryCopyRegion",
       "copy_from_context": "zeCommandListAppendMemoryCopyFromContext", "fill": "zeCommandListAppendMemoryFill",
       "image_copy": "zeCommandListAppendImageCopy", "image_copy_region": "zeCommandListAppendImageCopyRegion",
       "image_copy_to_memory": "zeCommandListAppendImageCopyToMemory",
       "image_copy_from_memory": "zeCommandListAppendImageCopyFromMemory",
       "barrier": "zeCommandListAppendBarrier", "ranges_barrier": "zeCommandListAppendMemoryRangesBarrier"}
LETTER = {"host": "H", "device": "D", "shared": "S", "unknown": "M", "image": "I"}
# the location of the copies a stream's lists offloaded to a copy engine (docs/archive.md A8)
COPY_LOC = re.compile(r"^L0\[\d+:\d+\] copy engine \(group \d+\)$")
START_TOL_NS = 1000
RATE_PPM_TOL = 20


class Checker:
    def __init__(self):
        self.failures = []
        self.notes = []
        self.recovered = None
        self.prefix = ""  # "rank R: " when one process judges several ranks

    def fail(self, msg):
        self.failures.append(self.prefix + msg)

    def note(self, msg):
        self.notes.append(self.prefix + msg)


# truth lines that are no operation: what zesim's mutable lists and graphs did (zs_graph.c)
NOTE_KINDS = {"mutable", "graph", "by_name"}  # by_name: calls of functions handed out by name


def load_truth(path, notes=None):
    """notes: a list that gets the lines of NOTE_KINDS."""
    devices, ops = {}, []
    with open(path) as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            if not line.endswith("\n"):
                break  # the last line of a process killed while writing it (salvage tests)
            rec = json.loads(line)
            if rec["kind"] == "device":
                devices[rec["device"]] = rec
            elif rec["kind"].startswith("cb_"):
                continue  # counter-based events' lives (tests/loader/check_cb.py reads them)
            elif rec["kind"] in NOTE_KINDS:
                if notes is not None:
                    notes.append(rec)
            else:
                ops.append(rec)
    return devices, ops


def expected_name(op):
    k = op["kind"]
    if k == "kernel":
        return op["name"]
    if k in ("barrier", "ranges_barrier"):
        return API[k]
    if k in ("copy", "copy_region", "copy_from_context"):
        return f"{API[k]}({LETTER[op['src']]}2{LETTER[op['dst']]})"
    if k == "fill":
        return f"{API[k]}({LETTER[op['dst']]})"
    if k in ("image_copy", "image_copy_region"):
        return f"{API[k]}(I2I)"
    if k == "image_copy_to_memory":
        return f"{API[k]}(I2{LETTER[op['dst']]})"
    if k == "image_copy_from_memory":
        return f"{API[k]}({LETTER[op['src']]}2I)"
    raise KeyError(k)


def app_ops(ops, facts):
    """The application's timed operations: the truth minus the collector's own commands."""
    app_events = set(facts.get("events", [])) if facts else None
    injected = {o["signal"] for o in ops if o["kind"] in TIMED and o["kind"] not in ("barrier", "ranges_barrier")
                and o["signal"]}
    # the collector re-signals an app event right after the operation, waiting on that one's event
    prev_signal = {(o["list"], o["exec"], o["cmd"]): o["signal"] for o in ops}
    out = []
    for o in ops:
        if o["kind"] not in TIMED:
            continue
        if o["kind"] in ("barrier", "ranges_barrier") and o["waits"]:
            if app_events is not None:
                ours = not (set(o["waits"]) & app_events)
            else:
                ours = set(o["waits"]) <= injected or (
                    len(o["waits"]) == 1 and prev_signal.get((o["list"], o["exec"], o["cmd"] - 1)) == o["waits"][0])
            if ours:
                continue
        out.append(o)
    # a multiple-indirect launch has one signal event, so the collector records it once
    merged, i = [], 0
    by_list = sorted(out, key=lambda o: (o["list"], o["exec"], o["cmd"]))
    while i < len(by_list):
        o = by_list[i]
        if o.get("launch") == "multi_indirect":
            group = [o]
            while (i + 1 < len(by_list) and by_list[i + 1].get("launch") == "multi_indirect"
                   and by_list[i + 1]["list"] == o["list"] and by_list[i + 1]["exec"] == o["exec"]
                   and by_list[i + 1]["cmd"] in (group[-1]["cmd"], group[-1]["cmd"] + 1)
                   and not group[-1]["signal"]):
                i += 1
                group.append(by_list[i])
            m = dict(group[-1])
            m["host_start"] = group[0]["host_start"]
            m["ts_start"] = group[0]["ts_start"]
            m["name"] = "multiple indirect: " + ",".join(g["name"] for g in group)
            merged.append(m)
        else:
            merged.append(o)
        i += 1
    return merged


def read_archive(c, path, rank=None):
    """rank: only that MPI rank's locations (zecoll's location ids carry the rank in their low
    32 bits), for judging one rank of a job-wide archive against that rank's truth log."""
    import otf2
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
    from zc_otf2_compat import patch_intercomm_reading
    patch_intercomm_reading()
    mine = (lambda loc: True) if rank is None else (lambda loc: (loc._ref & 0xffffffff) == rank)
    records, host_callsites, gpu_locs = [], {}, {}
    stacks, last_ts = collections.defaultdict(list), {}
    open_rec = {}
    marks = collections.defaultdict(list)       # location name -> [(time, "ON"/"OFF")]
    first_ev = {}                               # location name -> time of its first event
    off = set()                                 # locations whose measurement is off
    host_regions = collections.Counter()
    spans = collections.defaultdict(set)        # location name -> {(Enter, Leave)} of its outermost regions
    with otf2.reader.open(path) as tr:
        defs = tr.definitions
        for loc in defs.locations:
            if loc.type == otf2.LocationType.GPU and mine(loc):
                dev_name = loc.group.system_tree_parent.name
                dev = int(dev_name.rsplit("[", 1)[1].rstrip("]")) if "[" in dev_name else -1
                gpu_locs[loc.name] = dev
        names = collections.Counter(loc.name for loc in defs.locations if mine(loc))
        for n, k in names.items():
            if k > 1:
                c.fail(f"{k} locations are named '{n}'")
        for loc, ev in tr.events:
            if not mine(loc):
                continue
            t = ev.time
            key = loc._ref
            if t < last_ts.get(key, 0):
                c.fail(f"{loc.name}: timestamp {t} after {last_ts[key]} (not monotonic)")
            last_ts[key] = t
            kind = type(ev).__name__
            st = stacks[key]
            first_ev.setdefault(loc.name, t)
            if kind == "MeasurementOnOff":
                on = "ON" in str(ev.measurement_mode)
                marks[loc.name].append((t, "ON" if on else "OFF"))
                if on and key not in off:
                    c.fail(f"{loc.name}: MeasurementOnOff(ON) at {t} without an OFF before it")
                if not on and key in off:
                    c.fail(f"{loc.name}: MeasurementOnOff(OFF) at {t} twice")
                if not on and st:
                    c.fail(f"{loc.name}: MeasurementOnOff(OFF) at {t} inside region {st[-1][0]}")
                (off.discard if on else off.add)(key)
                continue
            if key in off:
                c.fail(f"{loc.name}: {kind} at {t} while measurement is off")
            if kind == "Enter":
                st.append((ev.region.name, t))
                if loc.type != otf2.LocationType.GPU:
                    host_regions[ev.region.name] += 1
                if loc.type == otf2.LocationType.GPU:
                    if len(st) != 1:
                        c.fail(f"{loc.name}: device record {ev.region.name} nested inside {st[0][0]}")
                    open_rec[loc.name] = {"loc": loc.name, "device": gpu_locs[loc.name], "name": ev.region.name,
                                          "start": t, "callsite": None, "bytes": None, "rma": None}
            elif kind == "Leave":
                if not st or st[-1][0] != ev.region.name:
                    c.fail(f"{loc.name}: Leave {ev.region.name} at {t} does not match "
                           f"{st[-1][0] if st else 'nothing open'}")
                else:
                    _, t_enter = st.pop()
                    if not st:
                        spans[loc.name].add((t_enter, t))
                if loc.type == otf2.LocationType.GPU and loc.name in open_rec:
                    r = open_rec.pop(loc.name)
                    r["end"] = t
                    records.append(r)
            elif kind == "ParameterUnsignedInt":
                if loc.type == otf2.LocationType.GPU:
                    if loc.name in open_rec:
                        open_rec[loc.name]["callsite"] = ev.value
                else:
                    host_callsites.setdefault(ev.value, []).append(st[-1][0] if st else None)
            elif kind in ("RmaGet", "RmaPut"):
                if loc.name in open_rec:
                    open_rec[loc.name]["bytes"] = ev.bytes
                    open_rec[loc.name]["rma"] = kind
        for key, st in stacks.items():
            if st:
                c.fail(f"location {key}: {len(st)} region(s) never left: {[s[0] for s in st][:3]}")
    return records, host_callsites, {"marks": marks, "first": first_ev, "host_regions": host_regions, "spans": spans}


def assign(cost):
    """Minimum-cost assignment of rows to distinct columns (Hungarian method, rows <= columns
    after transposing if needed). Returns [(row, col)]."""
    n, m = len(cost), len(cost[0])
    if n > m:
        return [(r, c) for c, r in assign([[cost[r][c] for r in range(n)] for c in range(m)])]
    INF = float("inf")
    u, v, p, way = [0] * (n + 1), [0] * (m + 1), [0] * (m + 1), [0] * (m + 1)
    for i in range(1, n + 1):
        p[0], j0 = i, 0
        minv, used = [INF] * (m + 1), [False] * (m + 1)
        while True:
            used[j0] = True
            i0, delta, j1 = p[j0], INF, 0
            for j in range(1, m + 1):
                if not used[j]:
                    cur = cost[i0 - 1][j - 1] - u[i0] - v[j]
                    if cur < minv[j]:
                        minv[j], way[j] = cur, j0
                    if minv[j] < delta:
                        delta, j1 = minv[j], j
            for j in range(m + 1):
                if used[j]:
                    u[p[j]] += delta
                    v[j] -= delta
                else:
                    minv[j] -= delta
            j0 = j1
            if p[j0] == 0:
                break
        while j0:
            j1 = way[j0]
            p[j0] = p[j1]
            j0 = j1
    return [(p[j] - 1, j - 1) for j in range(1, m + 1) if p[j]]


OFFSET_RE = re.compile(r"^CLOCK_OFFSET\s+(\d+)\s+Time:\s*(\d+),\s*Offset:\s*([+-]?\d+),\s*StdDev:\s*([0-9.eE+-]+)")


_PRINTED = {}


def otf2_print(archive, *opts):
    """otf2-print's result, once per archive and options: the ranks of a job judged in one process
    (check --rank R --truth T ...) share it (otf2-print takes ~0.7 s on any archive of ours)."""
    key = (archive,) + opts
    if key not in _PRINTED:
        _PRINTED[key] = subprocess.run(["otf2-print", *opts, archive], capture_output=True, text=True)
    return _PRINTED[key]


def offset_error_bound(archive, rank):
    """Largest clock-offset uncertainty (ns) written for this rank's locations (otf2-print -C)."""
    p = otf2_print(archive, "-C", "--silent")
    bound = 0.0
    for line in p.stdout.splitlines():
        m = OFFSET_RE.match(line.strip())
        if m and (int(m.group(1)) & 0xffffffff) == rank:
            bound = max(bound, float(m.group(4)))
    return bound


def pair_nearest(c, where, outer, inner, ops_outer, shift, start_tol, missing):
    """Pairs each of outer with the closest unclaimed one of inner (sorted by start) of the same
    bytes for transfers: distance = start difference (a record's start less shift[id(record)],
    0 if absent) + duration difference. ops_outer: outer are the operations, inner the records
    (else the reverse). missing(x): the failure for an outer without a partner. Returns
    [(operation, record)]."""
    def o_r(x, y):
        return (x, y) if ops_outer else (y, x)

    def start(v, is_op):
        return v["host_start"] if is_op else v["start"]

    lo_sh, hi_sh = min(shift.values(), default=0), max(shift.values(), default=0)
    starts = [start(y, not ops_outer) for y in inner]
    used = [False] * len(inner)
    pairs = []
    for x in outer:
        # inner starts that can be near x, whatever the record's shift
        t = start(x, ops_outer)
        lo, hi = (t + lo_sh, t + hi_sh) if ops_outer else (t - hi_sh, t - lo_sh)
        i = bisect.bisect_left(starts, lo - 20 * start_tol)
        best, bestd = None, None
        while i < len(inner) and starts[i] <= hi + 20 * start_tol:
            o, r = o_r(x, inner[i])
            if not used[i] and (CLASS[o["kind"]] != "copy" or r["bytes"] == o["bytes"]):
                d = abs(r["start"] - shift.get(id(r), 0) - o["host_start"]) + \
                    abs((r["end"] - r["start"]) - (o["host_end"] - o["host_start"]))
                if bestd is None or d < bestd:
                    best, bestd = i, d
            i += 1
        if best is None:
            c.fail(missing(x))
            continue
        used[best] = True
        pairs.append(o_r(x, inner[best]))
    return pairs


# in-order differences around a record that its shift is the median of (see pair_complete)
SHIFT_WINDOW = 8


def pair_complete(c, where, e, g, start_tol):
    """Every operation with a record. Records are shifted against their operations: another
    rank's all by its clock offset's error (up to its bound), and records placed from host
    observations (a driver without global timestamps) each by the offset interval's midpoint at
    the time it was placed, which moves as observations narrow the interval (up to the printed
    bound, and not by the same amount for the whole run). That shift is taken out before pairing,
    or two operations closer together than twice the shift could each claim the other's record:
    for each record, the median of the in-order differences (the device-to-host mapping is
    monotonic) of up to SHIFT_WINDOW records on either side, as many on each (so that where the
    shift steps, every record's own side of the step is the majority of its window; in-order
    pairing itself is never wrong by more than the best pairing's worst start: uncrossing two
    pairs on a line does not lengthen the longer). The starts are then checked unshifted."""
    diffs = [r["start"] - o["host_start"] for o, r in zip(e, g)]
    shift = {}
    for k, r in enumerate(g):  # as many as e (the caller's check)
        h = min(SHIFT_WINDOW, k, len(diffs) - 1 - k)
        w = sorted(diffs[k - h:k + h + 1])
        shift[id(r)] = w[len(w) // 2]
    return pair_nearest(c, where, e, g, True, shift, start_tol,
                        lambda o: f"{where}: no record near the operation at {o['host_start']} "
                                  f"(cmd {o['cmd']}, exec {o['exec']})")


def pair_truncated(c, where, e, g, start_tol):
    """A salvaged archive: every record with an operation (none wrong); operations may lack a
    record (how many of those that completed early enough were recovered is counted by the
    caller)."""
    return pair_nearest(c, where, g, e, False, {}, start_tol,
                        lambda r: f"{where}: the record at {r['start']} is no operation zesim executed")


def check(c, truth_path, trace_dir, facts, rank=None, allow_missing=None, start_bound=None, skip=None,
          truncated=False, required_before=None, werror=True):
    """allow_missing: the number of operations the collector reported as untimed (a driver that
    lacks what timing them needs): exactly that many may have no record, every record must still
    match an operation. start_bound: {device: ns} for devices whose times the collector anchored
    from host observations (a driver without global timestamps): its printed error bound replaces
    the start tolerance there, and durations may be off by the device clock's drift (the truth's
    drift_ppm) because the nominal timer rate converts them. skip: "immediate" or "regular": the
    collector said it does not time operations of those lists (the driver lacks what it needs).
    truncated: the archive was salvaged from a run that died (zecoll salvage): every record must
    be an operation zesim executed, right in name, bytes, start and duration (none wrong), but
    operations may be missing. required_before (ns, the rank's clock): count how many of the
    operations that completed before it were recovered (c.recovered = (recovered, total)).
    werror: otf2-print -Werror judges the archive too (the reader below reads it whole anyway)."""
    archive = os.path.join(trace_dir, "traces.otf2")
    if not os.path.exists(archive):
        c.fail(f"no archive at {archive}")
        return
    p = otf2_print(archive, "--silent", "-Werror") if werror else None
    if p and p.returncode != 0:
        c.fail(f"otf2-print --silent -Werror: rc {p.returncode}: {(p.stderr or p.stdout)[:500]}")
    notes = []
    devices, ops = load_truth(truth_path, notes)
    # a driver rule broken under the collector (zesim refused the call): the application saw an error
    for n in notes:
        if n.get("what") == "violation":
            c.fail(f"zesim: {n['reason']} (list {n['list']}, command {n['cmd']})")
    try:
        records, host_cs, info = read_archive(c, archive, rank)
    except Exception as e:  # the reader refusing the archive is a finding, not a crash
        c.fail(f"python3-otf2 reader failed: {e!r}")
        return
    want = all_ops = app_ops(ops, facts)
    if skip == "all":
        want = []
    elif skip:
        want = [o for o in want if o["immediate"] != (skip == "immediate")]
    if facts:
        want = check_windows(c, facts, want, records, info)
    start_tol = START_TOL_NS
    if rank is not None:
        # Another rank's clock is mapped onto rank 0's by the offsets the collector measured with
        # ping-pongs; each is uncertain by at most half its round trip, which the collector writes
        # as the offset's standard deviation (the bound, not a statistical estimate). Readers
        # interpolate between the init and finalize offsets, so the error anywhere in between is
        # at most the larger of the two bounds: that is what this rank's starts may add.
        bound = offset_error_bound(archive, rank)
        start_tol += math.ceil(bound)
        c.note(f"start tolerance {start_tol} ns: {START_TOL_NS} ns + this rank's clock-offset bound {bound:.0f} ns")

    # the program's own account of what it ran
    if facts and "expected" in facts:
        got = collections.Counter(CLASS[o["kind"]] for o in all_ops if o.get("launch") != "multi_indirect")
        got["kernel"] += sum(1 for o in ops if o.get("launch") == "multi_indirect")
        for cls, n in facts["expected"].items():
            if got.get(cls, 0) != n:
                c.fail(f"truth has {got.get(cls, 0)} {cls} operation(s), the program says it ran {n}")

    # exact attribution. Identical operations on different engines can start within nanoseconds
    # of each other, so first find which stream serves each queue (majority of nearest matches),
    # then pair operations and records within (queue's stream, name).
    tick = {d: 1e9 / v["hz"] for d, v in devices.items()}
    # immediate lists share one stream per engine and context; queues have their own. A copy
    # zesim ran on a copy engine for a list with the copy-offload hint ("offload": that engine) is
    # written to its stream's copy-engine location (COPY_LOC): a queue of its own here.
    qkey = lambda o: (((o.get("context"), o["device"], o["ordinal"], o["index"]) if o["immediate"] else (o["queue"],))
                      + (("offload",) if o.get("offload") else ()))
    skey = lambda r: r["loc"].split("/")[0]
    by_name = collections.defaultdict(list)
    for r in records:
        by_name[(r["device"], r["name"])].append(r)
    for v in by_name.values():
        v.sort(key=lambda r: r["start"])
    # Which stream serves which queue is an assignment problem: each queue to one stream, each
    # stream to at most one queue, minimising the summed distance from every operation to the
    # nearest same-name record on the stream. Per-queue majority votes are not enough: two threads
    # running the same kernels in lockstep put both queues' operations nanoseconds apart, and every
    # operation can be nearest to the same stream. A collector that mixes queues on one stream
    # still fails below (counts and timings of the assigned stream do not match).
    by_stream = collections.defaultdict(list)
    for r in records:
        by_stream[(skey(r), r["device"], r["name"])].append(r["start"])
    for v in by_stream.values():
        v.sort()
    streams = sorted({skey(r) for r in records})
    ops_of = collections.defaultdict(list)
    for o in want:
        ops_of[qkey(o)].append(o)
    queues = sorted(ops_of, key=str)
    CAP = 10 * 1000 * 1000  # an operation with no same-name record nearby costs 10 ms

    def qcost(q, st):
        total = 0
        for o in ops_of[q]:
            g = by_stream.get((st, o["device"], expected_name(o)), [])
            i = bisect.bisect_left(g, o["host_start"])
            total += min([abs(g[j] - o["host_start"]) for j in (i - 1, i) if 0 <= j < len(g)] + [CAP])
        return total

    q2s = {}
    if queues and streams:
        cost = [[qcost(q, st) for st in streams] for q in queues]
        for qi, si in assign(cost):
            q2s[queues[qi]] = streams[si]
    for q in queues:
        if q not in q2s and allow_missing is None and not truncated:  # salvaged: a queue whose records were all lost has none
            c.fail(f"queue/engine {q}: more queues than streams, no stream left for it")
    s2q = collections.defaultdict(set)
    for q, st in q2s.items():
        s2q[st].add(q)
    for st, qs in s2q.items():
        if len(qs) != 1:
            c.fail(f"stream {st}: serves {len(qs)} queues/engines {sorted(map(str, qs))[:4]}")
    # the engine that ran each operation: offloaded copies on a copy-engine location, the rest not
    for q, st in q2s.items():
        if (q[-1] == "offload") != bool(COPY_LOC.search(st)):
            what = "copies a copy engine ran" if q[-1] == "offload" else "operations its list's engine ran"
            c.fail(f"queue/engine {q}: {what} are on location {st}")
    offloaded = sum(1 for o in want if o.get("offload"))
    if offloaded:
        c.note(f"{offloaded} copies and fills offloaded to a copy engine, on {sorted(st for q, st in q2s.items() if q[-1] == 'offload')}")

    paired = set()
    exp = collections.defaultdict(list)
    for o in want:
        exp[(q2s.get(qkey(o)), o["device"], expected_name(o))].append(o)
    got = collections.defaultdict(list)
    for r in records:
        got[(skey(r), r["device"], r["name"])].append(r)
    missing = 0
    start_bound = start_bound or {}
    for key in sorted(set(exp) | set(got), key=str):
        e = sorted(exp.get(key, []), key=lambda o: o["host_start"])
        g = sorted(got.get(key, []), key=lambda r: r["start"])
        where = f"{key[0]} (device {key[1]}) '{key[2]}'"
        tol_s = max(start_tol, start_bound.get(key[1], 0))
        if allow_missing is not None and len(g) < len(e):
            missing += len(e) - len(g)
            # fewer records than operations: every record must still have its own operation
            for r in g:
                near = [o for o in e if abs(o["host_start"] - r["start"]) <= tol_s]
                if not near:
                    c.fail(f"{where}: record at {r['start']} matches no operation within {tol_s} ns")
                else:
                    e.remove(min(near, key=lambda o: abs(o["host_start"] - r["start"])))
            continue
        if truncated:
            pairs = pair_truncated(c, where, e, g, tol_s)
        elif len(e) != len(g):
            c.fail(f"{where}: {len(e)} executed, {len(g)} recorded")
            continue
        else:
            pairs = pair_complete(c, where, e, g, tol_s)
        paired.update(id(o) for o, _ in pairs)
        worst_s = worst_d = 0
        for o, r in pairs:
            ds = r["start"] - o["host_start"]
            dd = (r["end"] - r["start"]) - (o["host_end"] - o["host_start"])
            worst_s, worst_d = max(worst_s, abs(ds)), max(worst_d, abs(dd))
            if abs(ds) > tol_s:
                c.fail(f"{where}: start off by {ds} ns (truth {o['host_start']}, cmd {o['cmd']}, exec {o['exec']})")
            # ticks quantise start and end (< one tick together); the rate fitted from the anchors
            # adds its own error, proportional to the duration: about a tick over the anchors' span, so
            # ~10 ppm in the first milliseconds of a run (anchors 1 ms apart), less later. Without
            # anchors the nominal rate is off by the clock's drift.
            ppm = RATE_PPM_TOL
            if o["device"] in start_bound:
                ppm = abs(devices[o["device"]].get("drift_ppm", 0)) + 1
            tol = tick[o["device"]] + 1 + ppm * 1e-6 * (o["host_end"] - o["host_start"])
            if abs(dd) > tol:
                c.fail(f"{where}: duration off by {dd} ns (> one tick {tick[o['device']]:.1f} ns + {ppm} ppm)")
            if CLASS[o["kind"]] == "copy" and r["bytes"] != o["bytes"]:
                c.fail(f"{where}: {r['bytes']} bytes recorded, {o['bytes']} moved")
        c.note(f"{where}: {len(pairs)} matched (worst start {worst_s} ns, duration {worst_d} ns)")
    if allow_missing is not None and missing != allow_missing:
        c.fail(f"{missing} operation(s) have no record, the collector reported {allow_missing} untimed")

    if required_before is not None:
        req = [o for o in want if o["host_end"] <= required_before]
        c.recovered = (sum(1 for o in req if id(o) in paired), len(req))
        c.note(f"recovered {c.recovered[0]} of the {c.recovered[1]} operations that completed before "
               f"{required_before} ns")

    # host <-> device link
    bad = unlinked = 0
    for r in records:
        if truncated and r["callsite"] is None:
            unlinked += 1  # its Append did not reach the journal before the run died (A15)
            continue
        hosts = host_cs.get(r["callsite"], [])
        if len(hosts) != 1 or not (hosts[0] or "").startswith("zeCommandListAppend"):
            bad += 1
    if bad:
        c.fail(f"{bad} device record(s) without exactly one host Append region carrying their callsite id")
    if unlinked:
        c.note(f"{unlinked} device record(s) without a callsite: their Append was not salvaged")

    # the app's own timestamp queries
    if facts:
        by_signal = collections.defaultdict(list)
        by_cmd = {(o["list"], o["exec"], o["cmd"]): o for o in ops}
        for o in ops:
            if o["signal"]:
                by_signal[o["signal"]].append(o)
        for q in facts.get("kts", []):
            ev = q["event"]
            cands = []
            for b in by_signal.get(ev, []):  # our barrier re-signalling the app's event ...
                for w in b["waits"]:
                    cands += [x for x in by_signal.get(w, []) if x["kind"] in TIMED]  # ... waits on its op
                if b["kind"] == "signal" and allow_missing is not None:
                    # a driver without AppendBarrier: our AppendSignalEvent right after the op
                    prev = by_cmd.get((b["list"], b["exec"], b["cmd"] - 1))
                    if prev and prev["kind"] in TIMED:
                        cands.append(prev)
            # a multiple-indirect launch's event spans its kernels (merged in `want`)
            span = {o["signal"]: (o["ts_start"], o["ts_end"]) for o in want if o.get("launch") == "multi_indirect"}
            times = [span.get(x["signal"], (x["ts_start"], x["ts_end"])) for x in cands]
            direct = [(x["ts_start"], x["ts_end"]) for x in by_signal.get(ev, [])]
            if allow_missing is not None:
                # an operation the collector left untimed signals the app's event itself
                times += [span.get(x["signal"], (x["ts_start"], x["ts_end"])) for x in by_signal.get(ev, [])
                          if x["kind"] in TIMED]
            if (q["start"], q["end"]) not in times:
                c.fail(f"app's timestamp query on {ev} returned {q['start']}..{q['end']}, not its operation's "
                       f"times {[(x['ts_start'], x['ts_end']) for x in cands][:3]} (ops signalling it: {direct[:3]})")


def check_windows(c, facts, want, records, info):
    """The program's account of its recording windows: which of the operations it ran must be
    recorded (returned: `want` narrowed to them), its host regions, and where the markers of the
    thread that switched recording must be."""
    marks = info["marks"]
    thread_marks = marks.get("Master thread", [])
    # the markers of the switching thread: the ones it placed once it existed (a thread gets a
    # location with its first recorded call), each within the bounds of its action
    tog = facts.get("toggles") or []
    if tog and tog[0][2] == "ON":
        tog = [[0, tog[0][0], "OFF"]] + tog  # recording was off from the start
    if tog:
        k = len(tog) - len(thread_marks)
        if k < 0 or [m for _, m in thread_marks] != [x[2] for x in tog[k:]]:
            c.fail(f"thread markers {[m for _, m in thread_marks]}, expected (a suffix of) {[x[2] for x in tog]}")
        else:
            first = info["first"].get("Master thread")
            for (t, m), (t0, t1, _) in zip(thread_marks, tog[k:]):
                if not t0 <= t <= t1:
                    c.fail(f"thread {m} at {t}, not within [{t0}, {t1}] where the program switched recording")
            # an action skipped at the start must precede the thread's first recorded event
            for t0, t1, m in tog[:k]:
                if first is not None and t0 > first:
                    c.fail(f"thread: no marker for the {m} at [{t0}, {t1}]")
            c.note(f"thread markers: {len(thread_marks)} of {len(tog)} switches (the location exists from its first call)")
    elif "toggles" in facts and any(marks.values()) and not facts.get("time_window"):
        c.fail(f"MeasurementOnOff records where no window was configured: {dict(marks)}")
    for name, n in (facts.get("host_regions") or {}).items():
        got = info["host_regions"].get(name, 0)
        if got != n:
            c.fail(f"{got} host region(s) {name}, expected {n}")
        else:
            c.note(f"{n} host region(s) {name}, as expected")
    rx = facts.get("record")
    if rx:
        pat = re.compile(rx)
        keep = [o for o in want if pat.fullmatch(f"{expected_name(o)}#{o['exec']}")]
        c.note(f"{len(keep)} of {len(want)} executed operations must be recorded ({rx})")
        want = keep
    rf = facts.get("record_from_launch")
    if rf:  # a kernel window open from the nth launch of a kernel to the end (one list per process)
        launches = sorted((o for o in want if o["kind"] == "kernel" and o.get("name") == rf["kernel"]),
                          key=lambda o: (o["list"], o["exec"], o["cmd"]))
        if len(launches) < rf["nth"]:
            c.fail(f"record_from_launch: only {len(launches)} launches of {rf['kernel']}")
            return want
        first = launches[rf["nth"] - 1]
        if len({o["list"] for o in want}) != 1:
            c.fail("record_from_launch: the check needs the operations of one command list")
        keep = [o for o in want if (o["exec"], o["cmd"]) >= (first["exec"], first["cmd"])]
        c.note(f"{len(keep)} of {len(want)} operations from the {rf['nth']}. {rf['kernel']} launch on must be recorded")
        want = keep
    tw = facts.get("time_window")
    if tw is not None:
        # A call the thread began as the window closed (it saw recording on, its Enter's tick came
        # after the closing one: the window's switch is lock-free) is recorded whole, with an ON
        # at its Enter and an OFF at its Leave after the window's OFF (zc_marks.c, in-flight
        # items). Such a pair is accepted only where it brackets exactly one outermost region.
        ms, spans = list(thread_marks), info["spans"].get("Master thread", set())
        while len(ms) >= 3 and [m for _, m in ms[-3:]] == ["OFF", "ON", "OFF"] and (ms[-2][0], ms[-1][0]) in spans:
            c.note(f"time window: a call recorded whole at its close, bracketed ON {ms[-2][0]} / OFF {ms[-1][0]}")
            ms = ms[:-2]
        ons = [t for t, m in ms if m == "ON"]
        offs = [t for t, m in ms if m == "OFF"]
        if not ons and not offs:
            c.fail("time window: no MeasurementOnOff on the thread")
            return want
        # the window opened at most once and closed at most once (or never, if it outlived the run)
        t_on = ons[0] if ons else 0
        t_off = offs[-1] if offs and (not ons or offs[-1] > t_on) else None
        if len(ons) > 1 or len(offs) > 2:
            c.fail(f"time window: markers {thread_marks}")
        times = {cmd: (t0, t1) for cmd, t0, t1 in tw}
        by_start = sorted(records, key=lambda r: r["start"])
        starts = [r["start"] for r in by_start]
        keep, inside, ambiguous = [], 0, 0
        for o in want:
            if o.get("name") != "tk" or o["cmd"] not in times:
                continue
            t0, t1 = times[o["cmd"]]
            if t0 > t_on and (t_off is None or t1 < t_off):
                keep.append(o)
                inside += 1
            elif t1 < t_on or (t_off is not None and t0 > t_off):
                pass
            else:  # appended while recording switched: either way, as long as it is whole
                ambiguous += 1
                i = bisect.bisect_left(starts, o["host_start"] - START_TOL_NS)
                if i < len(starts) and abs(starts[i] - o["host_start"]) <= START_TOL_NS:
                    keep.append(o)
        c.note(f"time window [{t_on}, {t_off}]: {inside} operations appended inside, {ambiguous} at an edge")
        lo = facts.get("time_base_lo")
        if lo is not None:  # the window counts from MPI_Init's return, after lo: never early
            if ons and t_on < lo + facts["time_start_ns"]:
                c.fail(f"time window opened at {t_on}, before MPI_Init + start ({lo} + {facts['time_start_ns']})")
            if t_off is not None and t_off < lo + facts["time_stop_ns"]:
                c.fail(f"time window closed at {t_off}, before MPI_Init + stop ({lo} + {facts['time_stop_ns']})")
            c.note(f"time window opened {t_on - lo - facts['time_start_ns']} ns after the earliest possible moment")
        if inside == 0:
            c.fail("time window: no operation appended inside it")
        want = keep
    return want


def run(args):
    os.makedirs(args.work, exist_ok=True)
    for f in glob.glob(os.path.join(args.work, "*")):
        if os.path.isdir(f):
            subprocess.run(["rm", "-rf", f])
        else:
            os.unlink(f)
    env = dict(os.environ)
    env.update({
        "ZE_ENABLE_ALT_DRIVERS": args.zesim,
        "ZESIM_TRUTH": os.path.join(args.work, "truth.jsonl"),
        "ZECOLL_OUTPUT": os.path.join(args.work, "trace"),
        "ZECOLL_STRICT": "1",
        "ZC_SCEN_OUT": os.path.join(args.work, "facts.json"),
        # a sanitizer runtime must come first in the initial library list
        "LD_PRELOAD": ":".join(([args.preload_first] if args.preload_first else []) + (args.preload or [])
                               + [os.path.join(args.libdir, "libzecoll.so")]),
    })
    for kv in args.env or []:
        k, v = kv.split("=", 1)
        env[k] = v
    cmd = [args.app] + (args.arg or [])
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=args.timeout)
    sys.stdout.write(p.stdout[-3000:])
    sys.stderr.write(p.stderr[-3000:])
    c = Checker()
    if p.returncode != 0:
        c.fail(f"{' '.join(cmd)} exited with {p.returncode}")
    if re.search(r"internal error[:( ]", p.stderr):
        c.fail("the collector reported an internal error")
    facts = None
    fp = os.path.join(args.work, "facts.json")
    if os.path.exists(fp):
        with open(fp) as f:
            facts = json.load(f)
    if not c.failures:
        # a device without global timestamps: the collector prints the error bound of the records
        # it placed from host observations, which is then the start tolerance on that device
        bounds = {int(d): int(b) for d, b in re.findall(r"device (\d+): .*starts within \+-(\d+) ns", p.stderr)}
        for d, b in sorted(bounds.items()):
            c.note(f"device {d}: start tolerance {b} ns, the collector's bound (no global timestamps)")
        check(c, env["ZESIM_TRUTH"], env["ZECOLL_OUTPUT"], facts, start_bound=bounds)
    # a complete archive keeps no salvage journal (docs/salvage.md)
    if os.path.exists(os.path.join(env["ZECOLL_OUTPUT"], "zecoll-journal")):
        c.fail("the archive is complete but its salvage journal (zecoll-journal/) is still there")
    return c


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--app", required=True)
    r.add_argument("--arg", action="append")
    r.add_argument("--zesim", required=True)
    r.add_argument("--libdir", required=True)
    r.add_argument("--work", required=True)
    r.add_argument("--env", action="append")
    r.add_argument("--timeout", type=int, default=120)
    r.add_argument("--preload-first", help="library to preload before libzecoll.so (sanitizer runtime)")
    r.add_argument("--preload", action="append",
                   help="a test library to preload after --preload-first, before libzecoll.so (repeatable)")
    k = sub.add_parser("check")
    k.add_argument("--truth", required=True, action="append",
                   help="zesim's log; with --rank, one per rank, in the order of the --rank options")
    k.add_argument("--trace", required=True)
    k.add_argument("--facts", action="append", help="one, or one per --rank (none: that rank has none)")
    k.add_argument("--rank", type=int, action="append",
                   help="judge only this rank's locations (MPI job archive); repeatable: each rank against its --truth")
    k.add_argument("--truncated", action="store_true",
                   help="a salvaged archive: every record is an operation zesim executed (none wrong); some may be missing")
    k.add_argument("--required-before", type=int, metavar="NS",
                   help="report how many operations that completed before NS (rank's clock) were recovered")
    k.add_argument("--start-tol-ns", type=int, help=f"start tolerance (default {START_TOL_NS} ns; clock "
                   "offsets between ranks add their measurement error)")
    a = ap.parse_args()
    if a.cmd == "run":
        c = run(a)
    else:
        c = Checker()
        if a.start_tol_ns:
            globals()["START_TOL_NS"] = a.start_tol_ns
        ranks = a.rank or [None]
        facts = [None if f == "none" else json.load(open(f)) for f in (a.facts or [])] or [None]
        if len(a.truth) != len(ranks) or len(facts) not in (1, len(ranks)):
            ap.error("check: one --truth per --rank, and one --facts or one per --rank")
        for i, r in enumerate(ranks):
            if len(ranks) > 1:
                c.prefix = f"rank {r}: "
            check(c, a.truth[i], a.trace, facts[i % len(facts)], rank=r, truncated=a.truncated,
                  required_before=a.required_before)
    for n in c.notes:
        print("# " + n)
    for f in c.failures[:40]:
        print("not ok - " + f)
    if len(c.failures) > 40:
        print(f"# ... and {len(c.failures) - 40} more failure(s)")
    print("ok - trace matches ground truth" if not c.failures else f"# {len(c.failures)} failure(s)")
    return 1 if c.failures else 0


if __name__ == "__main__":
    sys.exit(main())
