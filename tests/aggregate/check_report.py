#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Check a zecoll-aggregate JSON report against values computed independently.

  check_report.py --archive DIR --report REPORT.json [--truth RANK:FILE ...] [--expected SYNTH.json] [-v]

From the archive, read with Debian's python3-otf2 (a separate reader: events time-merged, clock
offsets applied by the OTF2 library as in the aggregator) and recomputed here from scratch:
kernels (calls, total, min, max, mean, stddev, percentiles: the exact nearest-rank value and the
documented sketch bucket), per rank/device/queue rows, imbalance, slowest instances, transfers by
memory and size class with bandwidths, barriers, device utilisation as the union of busy
intervals (compute/copy/overlap, idle gaps, the rank x time map), launch latency from the
callsite links, MPI functions/bytes/ranks/collectives, host Level Zero API, PAPI counters (each
region's Leave - Enter values per counter, per rank in MPI / in Level Zero, each thread's first to
last sample), data quality.
With --truth (zesim's ground truth of rank R) the kernel and copy counts, bytes and durations of
that rank are checked against what the simulated driver executed, within the collector's stated
error (one device tick plus 20 ppm per operation; tests/collector/check_trace.py).
With --expected (zecoll-synth's own account of what it generated) the report must match it.
With --papi-expected (tests/papi/run_papi_test.py --ledger: computed from the PAPI test program's
own account of the work it counted, not from the archive) the PAPI sections must match it exactly:
per counter and region the calls and Leave - Enter total, min and max; per rank and counter the
threads, the first-to-last sum, and the sums and region counts in MPI and in Level Zero calls.
Exit status 1 on any mismatch, with one line per finding.
"""
import argparse
import collections
import json
import math
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "scripts"))
sys.path.insert(0, os.path.join(HERE, "..", "collector"))
sys.path.insert(0, HERE)
from check_comm import MpiEvents, check_gpu_idle, check_matrix, check_waits, measure, minus, union, world_of  # noqa: E402

REL = 1.0 / 256  # the sketch's documented bound
COPY_RE = re.compile(r"^(zeCommandList\w+)\(([HDSMI])2([HDSMI])\)$")
FILL_RE = re.compile(r"^zeCommandListAppendMemoryFill\(([HDSMI])\)$")


def bucket_mid(v):
    """The documented sketch layout, reimplemented: 128 sub-buckets per power of two."""
    if v < 128:
        return v
    e = v.bit_length() - 1
    sub = (v >> (e - 7)) & 127
    lo = (128 + sub) << (e - 7)
    return lo + ((1 << (e - 7)) >> 1)


def nearest_rank(sorted_vals, p):
    n = len(sorted_vals)
    k = max(1, min(n, -(-p * n // 100)))
    return sorted_vals[k - 1]


def sketch_q(sorted_vals, p):
    if not sorted_vals:
        return 0
    v = bucket_mid(nearest_rank(sorted_vals, p))
    return min(max(v, sorted_vals[0]), sorted_vals[-1])


def direction(kind, s, d):
    if kind == "fill":
        return "fill"
    if kind == "image":
        return "image"
    sd, dd = s == "D", d == "D"
    return "D2D" if sd and dd else "H2D" if dd else "D2H" if sd else "H2H"


class Checker:
    def __init__(self, verbose):
        self.bad = []
        self.n = 0
        self.verbose = verbose

    def eq(self, what, got, want):
        self.n += 1
        if got != want:
            self.bad.append(f"{what}: report {got!r}, expected {want!r}")

    def near(self, what, got, want, tol):
        self.n += 1
        if got is None or want is None or abs(got - want) > tol:
            self.bad.append(f"{what}: report {got!r}, expected {want!r} (tolerance {tol:g})")

    def true(self, what, cond):
        self.n += 1
        if not cond:
            self.bad.append(what)


def read_archive(path):
    """Everything the checks need, from python3-otf2 (and otf2-print -C for the clock offsets)."""
    import otf2
    from check_archive import clock_offsets
    from zc_otf2_compat import patch_intercomm_reading
    patch_intercomm_reading()
    A = {"offsets": clock_offsets(os.path.join(path, "traces.otf2"))[0]}
    with otf2.reader.open(os.path.join(path, "traces.otf2")) as tr:
        d = tr.definitions
        cp = d.clock_properties
        A["t0"], A["span"], A["resolution"] = cp.global_offset, cp.trace_length, cp.timer_resolution
        locs = list(d.locations)
        procs = sorted([g for g in d.location_groups if str(g.location_group_type) == "LocationGroupType.PROCESS"],
                       key=lambda g: g._ref)
        rank_of_group = {g._ref: i for i, g in enumerate(procs)}
        A["nranks"] = len(procs)
        A["host_of_rank"] = {i: g.system_tree_parent.name for i, g in enumerate(procs)}
        info = {}
        for loc in locs:
            g = loc.group
            pg = g if str(g.location_group_type) == "LocationGroupType.PROCESS" else g.creating_location_group
            stream = str(loc.type) in ("LocationType.GPU", "LocationType.ACCELERATOR_STREAM")
            info[loc._ref] = {"rank": rank_of_group[pg._ref], "name": loc.name, "stream": stream,
                              "device": g.system_tree_parent.name if stream else None,
                              "dev_ref": g.system_tree_parent._ref if stream else None,
                              "group": g._ref, "defined": loc.number_of_events}
        for ref, x in info.items():  # queue = base name in the same group (A8)
            x["queue"] = x["name"].split("/")[0] if x["stream"] else None
        props = collections.defaultdict(dict)
        for lp in d.location_properties:
            props[lp.location._ref][lp.name] = lp.value
        A["props"] = props
        A["info"] = info
        comms = {}
        for c in d.comms:
            comms[c._ref] = c.name
        A["comms"] = comms
        cs_param = [p for p in d.parameters if p.name == "callsite id"]
        world = world_of(d, info)
        sends = []  # the communication matrix (check_comm.py)
        mpi_ev = MpiEvents(info, world)  # the wait states (check_comm.py)
        stacks = collections.defaultdict(list)
        dev_recs, host_cs, counts, metrics, offs = [], {}, collections.Counter(), collections.Counter(), {}
        host_regions = []  # (rank, name, paradigm, dur, bytes, comm, outer)
        mpi_iv = collections.defaultdict(list)  # rank -> [(start, end)] of its threads' outermost MPI calls
        off_windows = collections.defaultdict(list)
        first, last, loc_last = {}, {}, {}
        regions = []
        # A19: the Metric right before an Enter/Leave at its time belongs to it
        summed = {m._ref for m in d.metric_members
                  if str(m.metric_mode) == "MetricMode.ACCUMULATED_START" and str(m.value_type) in ("Type.INT64", "Type.UINT64")
                  and str(m.base) == "Base.DECIMAL" and m.exponent == 0}
        mpend, mfirst, mlast = {}, collections.defaultdict(dict), collections.defaultdict(dict)
        mq = collections.Counter()  # unpaired, decreasing, one_sided
        mreg = collections.defaultdict(list)    # (member ref, region name) -> [(delta, dur)]
        mrank = collections.defaultdict(lambda: [0, 0])  # (rank, member ref, kind) -> [regions, sum]

        def take(ref, t):
            p = mpend.pop(ref, None)
            if p is None:
                return None
            if p[0] != t:
                mq["unpaired"] += 1
                return None
            return p
        for loc, ev in tr.events:
            ref = loc._ref
            x = info[ref]
            t = ev.time
            kind = type(ev).__name__
            if kind not in ("Enter", "Leave", "Metric") and ref in mpend:
                mpend.pop(ref)
                mq["unpaired"] += 1
            counts[ref] += 1
            loc_last[ref] = t
            r = x["rank"]
            first.setdefault(r, t)
            first[r] = min(first[r], t)
            last[r] = max(last.get(r, t), t)
            st = stacks[ref]
            if kind == "Enter":
                st.append({"region": ev.region, "t": t, "bytes": 0, "cs": None, "comm": None, "m": take(ref, t)})
            elif kind == "Leave":
                m1 = take(ref, t)
                if not st or st[-1]["region"]._ref != ev.region._ref:
                    continue
                f = st.pop()
                MpiEvents.leave(f, t)
                dur = t - f["t"]
                reg = f["region"]
                m0 = f["m"]
                if m0 is not None and m1 is not None and m0[1] == m1[1]:
                    par = str(reg.paradigm)
                    k = "mpi" if par == "Paradigm.MPI" else "l0" if par == "Paradigm.OPENCL" else "other"
                    for mref, a, b in zip(m0[1], m0[2], m1[2]):
                        if mref in summed and b >= a:
                            mreg[(mref, reg.name)].append((b - a, dur))
                            mrank[(r, mref, k)][0] += 1
                            mrank[(r, mref, k)][1] += b - a
                elif m0 is not None or m1 is not None:
                    mq["one_sided"] += 1
                regions.append((r, ref, reg.name, f["t"], t))
                if x["stream"]:
                    dev_recs.append({"rank": r, "ref": ref, "name": reg.name, "role": str(reg.region_role),
                                     "start": f["t"], "end": t, "dur": dur, "bytes": f["bytes"], "cs": f["cs"]})
                else:
                    par = str(reg.paradigm)
                    outer = not any(str(g["region"].paradigm) == "Paradigm.MPI" for g in st)
                    host_regions.append((r, reg.name, par, dur, f["bytes"], f["comm"], outer))
                    if outer and par == "Paradigm.MPI":
                        mpi_iv[r].append((f["t"], t))
            elif kind == "ParameterUnsignedInt" and cs_param and ev.parameter == cs_param[0]:
                if st:
                    st[-1]["cs"] = ev.value
                    if not x["stream"]:
                        host_cs[(r, ev.value)] = st[-1]["t"]
            elif kind in ("RmaGet", "RmaPut"):
                if st:
                    st[-1]["bytes"] += ev.bytes
            elif kind in ("MpiSend", "MpiRecv", "MpiIsend", "MpiIrecv"):
                if st:
                    st[-1]["bytes"] += ev.msg_length
                if kind in ("MpiSend", "MpiIsend"):
                    sends.append((ref, ev.communicator._ref, ev.receiver, ev.msg_length, world))
                mpi_ev.event(kind, ref, ev, t, st)
            elif kind == "MpiIrecvRequest":
                mpi_ev.event(kind, ref, ev, t, st)
            elif kind in ("MpiCollectiveEnd", "NonBlockingCollectiveComplete"):
                if kind == "MpiCollectiveEnd":
                    mpi_ev.event(kind, ref, ev, t, st)
                if st:
                    st[-1]["bytes"] += ev.size_sent + ev.size_received
                    st[-1]["comm"] = ev.communicator._ref
            elif kind == "Metric":
                metrics[ref] += 1
                if ref in mpend:
                    mq["unpaired"] += 1
                mem = tuple(m._ref for m in ev.metric.members)
                vals = list(ev.values)
                for mref, v in zip(mem, vals):
                    if mref not in summed:
                        continue
                    if mref not in mfirst[ref]:
                        mfirst[ref][mref] = v
                    elif v < mlast[ref][mref]:
                        mq["decreasing"] += 1
                    mlast[ref][mref] = v
                mpend[ref] = (t, mem, vals)
            elif kind == "MeasurementOnOff":
                if "OFF" in str(ev.measurement_mode):
                    off_windows[ref].append([t, None])
                elif off_windows[ref] and off_windows[ref][-1][1] is None:
                    off_windows[ref][-1][1] = t
        for ref, w in off_windows.items():  # an OFF without ON lasts to the location's last event
            for x in w:
                if x[1] is None:
                    x[1] = loc_last[ref]
        mq["unpaired"] += len(mpend)  # a Metric at a location's end
        for ref, fm in mfirst.items():  # each thread: its first sample to its last
            for mref, v in fm.items():
                if mlast[ref][mref] >= v:
                    c = mrank[(info[ref]["rank"], mref, "span")]
                    c[0] += 1
                    c[1] += mlast[ref][mref] - v
        A["papi"] = {"members": {m._ref: m for m in d.metric_members}, "summed": summed, "regions": mreg, "ranks": mrank,
                     "quality": mq}
        A.update(mpi_events=mpi_ev, sends=sends, regions=regions, dev_recs=dev_recs, host_cs=host_cs, counts=counts, metrics=metrics, host_regions=host_regions,
                 first=first, last=last, off_windows=off_windows, stacks=stacks, mpi_iv=mpi_iv)
    return A


def check(C, A, R, truth, expected):
    info = A["info"]
    nranks = A["nranks"]
    C.eq("job.ranks", R["job"]["ranks"], nranks)
    C.eq("job.events", R["job"]["events"], sum(A["counts"].values()))
    if A["first"]:
        C.eq("job.first_ns", R["job"]["first_ns"], min(A["first"].values()))
        C.eq("job.last_ns", R["job"]["last_ns"], max(A["last"].values()))
    for row in R["data_quality"]["ranks"]:
        r = row["rank"]
        if r in A["first"]:
            C.eq(f"rank {r} first_ns (clock offsets applied)", row["first_ns"], A["first"][r])
            C.eq(f"rank {r} last_ns", row["last_ns"], A["last"][r])

    # ---- device records by class
    kern = [x for x in A["dev_recs"] if x["role"] == "RegionRole.FUNCTION"]
    xfer = [x for x in A["dev_recs"] if x["role"] == "RegionRole.DATA_TRANSFER"]
    barr = [x for x in A["dev_recs"] if x["role"] == "RegionRole.BARRIER"]
    by_name = collections.defaultdict(list)
    for x in kern:
        by_name[x["name"]].append(x)
    rows = {k["name"]: k for k in R["kernels"]["rows"]}
    C.eq("kernel names", sorted(rows), sorted(by_name))
    ktotal = sum(x["dur"] for x in kern)
    C.eq("kernels.total_ns", R["kernels"]["total_ns"], ktotal)
    for name, v in by_name.items():
        k = rows.get(name)
        if not k:
            continue
        durs = sorted(x["dur"] for x in v)
        n, s, q = len(durs), sum(durs), sum(x * x for x in durs)
        C.eq(f"{name}.calls", k["calls"], n)
        C.eq(f"{name}.total_ns", k["total_ns"], s)
        C.eq(f"{name}.min_ns", k["min_ns"], durs[0])
        C.eq(f"{name}.max_ns", k["max_ns"], durs[-1])
        C.near(f"{name}.mean_ns", k["mean_ns"], s / n, 0.051)
        sd = math.sqrt(max(0, n * q - s * s)) / n if n > 1 else 0.0
        C.near(f"{name}.stddev_ns", k["stddev_ns"], sd, 0.051 + 1e-9 * sd)
        C.near(f"{name}.share", k["share"], s / ktotal if ktotal else 0, 5.1e-7)
        for p in (50, 90, 99):
            true_v = nearest_rank(durs, p)
            C.eq(f"{name}.p{p}_ns (sketch bucket)", k[f"p{p}_ns"], sketch_q(durs, p))
            C.true(f"{name}.p{p}_ns {k[f'p{p}_ns']} not within 2^-8 of the true {true_v}",
                   abs(k[f"p{p}_ns"] - true_v) <= REL * true_v + 0.5)
        # imbalance over all ranks
        per_rank = [0] * nranks
        for x in v:
            per_rank[x["rank"]] += x["dur"]
        mean = sum(per_rank) / nranks
        mx = max(per_rank)
        slow = per_rank.index(mx)
        im = k["imbalance"]
        C.eq(f"{name}.imbalance.slowest_rank", im["slowest_rank"], slow)
        C.eq(f"{name}.imbalance.rank_max_ns", im["rank_max_ns"], mx)
        C.eq(f"{name}.imbalance.ranks_running", im["ranks_running"], sum(1 for t in per_rank if t))
        C.eq(f"{name}.imbalance.slowest_host", im["slowest_host"], A["host_of_rank"][slow])
        C.near(f"{name}.imbalance.rank_mean_ns", im["rank_mean_ns"], mean, 0.051)
        cv = math.sqrt(max(0.0, sum(t * t for t in per_rank) / nranks - mean * mean)) / mean if mean else 0.0
        C.near(f"{name}.imbalance.cv", im["cv"], cv, 1e-5)
        C.near(f"{name}.imbalance.max_over_mean", im["max_over_mean"], mx / mean if mean else 0, 1e-5)
        # slowest instances: total order (duration desc, rank, location id, start)
        inst = sorted(v, key=lambda x: (-x["dur"], x["rank"], x["ref"], x["start"]))[:len(k["slowest"])]
        C.eq(f"{name}.slowest", [(s_["duration_ns"], s_["rank"], s_["location_id"], s_["start_ns"]) for s_ in k["slowest"]],
             [(x["dur"], x["rank"], x["ref"], max(0, x["start"] - A["t0"])) for x in inst])
        C.true(f"{name}.slowest: {len(k['slowest'])} instances, expected min(5, {n})", len(k["slowest"]) == min(5, n))
    # per rank / device / queue rows
    exp = collections.defaultdict(lambda: [0, 0])
    for x in kern:
        for key in (("rank", x["name"], x["rank"]), ("device", x["name"], info[x["ref"]]["device"]),
                    ("queue", x["name"], x["rank"], info[x["ref"]]["queue"])):
            exp[key][0] += 1
            exp[key][1] += x["dur"]
    got = {}
    for row in R["kernels_by_rank"]:
        got[("rank", row["kernel"], row["rank"])] = [row["calls"], row["total_ns"]]
    for row in R["kernels_by_device"]:
        got[("device", row["kernel"], row["device"])] = [row["calls"], row["total_ns"]]
    for row in R["kernels_by_queue"]:
        got[("queue", row["kernel"], row["rank"], row["queue"])] = [row["calls"], row["total_ns"]]
    C.eq("kernel rows by rank/device/queue", got, dict(exp))

    # ---- transfers
    tx = collections.defaultdict(list)
    for x in xfer:
        m = COPY_RE.match(x["name"])
        if m:
            kind = "image" if "I" in (m.group(2), m.group(3)) or "Image" in x["name"] else "copy"
            mem = m.group(2) + "2" + m.group(3)
        else:
            f = FILL_RE.match(x["name"])
            kind, mem = ("fill", f.group(1)) if f else ("copy", "M2M")
        x["kind"], x["mem"] = kind, mem
        tx[(kind, mem)].append(x)
    got = {(t["kind"], t["memory"]): t for t in R["transfers"]["rows"]}
    C.eq("transfer kinds", sorted(got), sorted(tx))
    for key, v in tx.items():
        t = got.get(key)
        if not t:
            continue
        kind, mem = key
        C.eq(f"transfer {key}.direction", t["direction"], direction(kind, mem[0], mem[-1]))
        C.eq(f"transfer {key}.calls", t["calls"], len(v))
        busy = sum(x["dur"] for x in v)
        byts = sum(x["bytes"] for x in v)
        C.eq(f"transfer {key}.busy_ns", t["busy_ns"], busy)
        if kind == "copy":
            C.eq(f"transfer {key}.bytes", t["bytes"], byts)
            C.near(f"transfer {key}.bandwidth", t["bandwidth_Bps"], byts * 1e9 / busy if busy else 0, 0.051 + 1e-9 * byts)
            bws = sorted(x["bytes"] * 10**9 // x["dur"] for x in v if x["dur"] and x["bytes"])
            if bws:
                C.eq(f"transfer {key}.median bandwidth (sketch bucket)", t["median_bandwidth_Bps"], bucket_mid(nearest_rank(bws, 50)))
        else:
            C.eq(f"transfer {key}.bytes", t["bytes"], None)
    sizes = collections.defaultdict(list)
    for x in xfer:
        if x["kind"] == "copy":
            sizes[(x["mem"], x["bytes"].bit_length())].append(x)
    got = {(t["memory"], (t["size_from"].bit_length())): t for t in R["transfers_by_size"]}
    C.eq("transfer size classes", sorted(got), sorted(sizes))
    for key, v in sizes.items():
        t = got.get(key)
        if t:
            C.eq(f"size class {key}.calls", t["calls"], len(v))
            C.eq(f"size class {key}.bytes", t["bytes"], sum(x["bytes"] for x in v))
            C.eq(f"size class {key}.busy", t["busy_ns"], sum(x["dur"] for x in v))
    bars = collections.defaultdict(list)
    for x in barr:
        bars[x["name"]].append(x["dur"])
    C.eq("barriers", {b["name"]: (b["calls"], b["total_ns"]) for b in R["barriers"]},
         {k: (len(v), sum(v)) for k, v in bars.items()})

    # ---- utilisation: union of busy intervals per (rank, device)
    per = collections.defaultdict(lambda: {"all": [], "c": [], "x": []})
    for x in kern + xfer:
        key = (x["rank"], info[x["ref"]]["device"])
        per[key]["all"].append((x["start"], x["end"]))
        per[key]["c" if x in kern else "x"].append((x["start"], x["end"]))
    off_by_dev = collections.defaultdict(list)
    for ref, w in A["off_windows"].items():
        if info[ref]["stream"]:
            off_by_dev[(info[ref]["rank"], info[ref]["device"])] += [tuple(a) for a in w]
    got = {(u["rank"], u["device"]): u for u in R["utilisation"]["ranks"]}
    C.eq("utilisation rows", sorted(got), sorted(per))
    gaps = collections.Counter()
    gap_ns = collections.Counter()
    bins = R["utilisation"]["timeline"]["bins"]
    t0, span = A["t0"], max(1, A["span"])
    busy_bins = collections.defaultdict(lambda: [0] * bins)
    ndev = collections.Counter(r for r, _ in per)
    for key, v in per.items():
        u = got.get(key)
        if not u:
            continue
        ua, uc, ux = union(v["all"]), union(v["c"]), union(v["x"])
        busy, comp, copy = measure(ua), measure(uc), measure(ux)
        C.eq(f"util {key}.busy", u["busy_ns"], busy)
        C.eq(f"util {key}.compute", u["compute_ns"], comp)
        C.eq(f"util {key}.copy", u["copy_ns"], copy)
        C.eq(f"util {key}.overlap", u["overlap_ns"], comp + copy - busy)
        r = key[0]
        wall = A["last"][r] - A["first"][r]
        C.eq(f"util {key}.wall", u["wall_ns"], wall)
        # off: measurement off on a stream of the device while the device was not busy (work in
        # flight when recording stopped is recorded, docs/archive.md A18)
        off = measure(minus(union(off_by_dev.get(key, [])), ua))
        C.eq(f"util {key}.measurement_off", u["measurement_off_ns"], off)
        C.near(f"util {key}.utilisation", u["utilisation"], busy / (wall - off) if wall > off else 0, 5.1e-7)
        offs = off_by_dev.get(key, [])
        for (s0, e0), (s1, e1) in zip(ua, ua[1:]):
            if s1 > e0 and not any(e0 <= a <= s1 for a, _ in offs):
                g = s1 - e0
                gaps[g.bit_length()] += 1
                gap_ns[g.bit_length()] += g
        for s, e in ua:
            def b_of(t):
                return 0 if t <= t0 else min(bins - 1, (t - t0) * bins // span)

            def b_start(b):
                return t0 + span * b // bins
            i, j = b_of(s), b_of(e - 1) if e > s else b_of(s)
            for b in range(i, j + 1):
                lo = s if b == i else b_start(b)
                hi = e if b == j else b_start(b + 1)
                if hi > lo:
                    busy_bins[r][b] += hi - lo
    C.eq("idle gap histogram", {g["to_ns"].bit_length() - 1: (g["count"], g["total_ns"]) for g in R["utilisation"]["idle_gaps"]},
         {k: (gaps[k], gap_ns[k]) for k in gaps})
    tl = R["utilisation"]["timeline"]["ranks"]
    for r in range(nranks):
        for b in range(bins):
            lo, hi = t0 + span * b // bins, t0 + span * (b + 1) // bins
            want = busy_bins[r][b] / ((hi - lo if hi > lo else 1) * (ndev[r] or 1))
            if tl[r][b] is None:
                C.true(f"rank {r} absent from the timeline", r not in A["first"])
            elif abs(tl[r][b] - want) > 5.1e-5:
                C.near(f"timeline rank {r} bin {b}", tl[r][b], want, 5.1e-5)
    C.n += 1

    # ---- launch latency: first device record of each Append
    first_rec = {}
    for x in sorted(A["dev_recs"], key=lambda x: x["start"]):
        if x["cs"] is not None and (x["rank"], x["cs"]) not in first_rec:
            first_rec[(x["rank"], x["cs"])] = x
    lat_all, lat_op, lat_q = [], collections.defaultdict(list), collections.defaultdict(list)
    neg = 0
    for key, x in first_rec.items():
        ta = A["host_cs"].get(key)
        if ta is None:
            continue
        lat = x["start"] - ta
        if lat < 0:
            neg += 1
            lat = 0
        lat_all.append(lat)
        lat_op[x["name"]].append(lat)
        lat_q[(x["rank"], info[x["ref"]]["queue"])].append(lat)
    la = R["launch_latency"]["all"]
    C.eq("latency.count", la["count"], len(lat_all))
    if lat_all:
        s = sorted(lat_all)
        C.eq("latency.min/max", (la["min_ns"], la["max_ns"]), (s[0], s[-1]))
        C.near("latency.mean", la["mean_ns"], sum(s) / len(s), 0.051)
        for p in (50, 90, 99):
            C.eq(f"latency.p{p}", la[f"p{p}_ns"], sketch_q(s, p))
    C.eq("latency by operation", {x["name"]: (x["count"], x["min_ns"], x["max_ns"]) for x in R["launch_latency"]["by_operation"]},
         {k: (len(v), min(v), max(v)) for k, v in lat_op.items()})
    C.eq("latency by queue", {(x["rank"], x["queue"]): (x["count"], x["min_ns"], x["max_ns"]) for x in R["launch_latency"]["by_queue"]},
         {k: (len(v), min(v), max(v)) for k, v in lat_q.items()})
    C.eq("negative latencies", R["data_quality"]["negative_latencies"], neg)
    host_only = sum(1 for k in A["host_cs"] if k not in first_rec)
    C.eq("appends without a device record", R["data_quality"]["appends_without_record"], host_only)
    dev_only = sum(1 for k in first_rec if k not in A["host_cs"])
    C.eq("device records without an Append", R["data_quality"]["records_without_append"], dev_only)
    repeats = sum(1 for x in A["dev_recs"] if x["cs"] is not None) - len(first_rec)
    C.eq("re-executions", R["data_quality"]["reexecutions"], repeats)

    # ---- host: MPI and Level Zero API
    mpi, api, coll = collections.defaultdict(list), collections.defaultdict(list), collections.defaultdict(list)
    mpi_rank = collections.Counter()
    for r, name, par, dur, byts, comm, outer in A["host_regions"]:
        if par == "Paradigm.MPI":
            mpi[name].append((dur, byts))
            if outer:
                mpi_rank[r] += dur
            if comm is not None:
                coll[(comm, name)].append((dur, byts))
        elif par != "Paradigm.MEASUREMENT_SYSTEM":
            api[name].append(dur)
    C.eq("MPI functions", {m["name"]: (m["calls"], m["total_ns"], m["bytes"]) for m in R["mpi"]["functions"]},
         {k: (len(v), sum(a for a, _ in v), sum(b for _, b in v)) for k, v in mpi.items()})
    # every rank of the job, also one that recorded nothing (not selected: docs/config.md)
    C.eq("MPI by rank", {m["rank"]: m["mpi_ns"] for m in R["mpi"]["by_rank"]},
         {r: mpi_rank.get(r, 0) for r in set(A["first"]) | {x["rank"] for x in info.values()}})
    # the MPI share's denominator: the rank's wall time less the time a thread of it was off
    # while none of its threads was in an MPI call (calls recorded while off stay in, A18)
    host_off = collections.defaultdict(list)
    for ref, w in A["off_windows"].items():
        if not info[ref]["stream"]:
            host_off[info[ref]["rank"]] += [tuple(a) for a in w]
    for m in R["mpi"]["by_rank"]:
        r = m["rank"]
        wall = A["last"][r] - A["first"][r] if r in A["first"] else 0
        off = min(wall, measure(minus(union(host_off.get(r, [])), union(A["mpi_iv"].get(r, [])))))
        C.eq(f"MPI rank {r}: wall, measurement off, denominator", (m["wall_ns"], m["measurement_off_ns"], m["denominator_ns"]),
             (wall, off, wall - off))
        C.near(f"MPI rank {r}: share_of_wall = MPI / (wall - off)", m["share_of_wall"],
               mpi_rank.get(r, 0) / (wall - off) if wall > off else 0, 5.1e-7)
    C.true("mpi.by_rank_share_denominator names the measurement-off time",
           "measurement_off_ns" in R["mpi"].get("by_rank_share_denominator", ""))
    C.eq("collectives by communicator", {(c["comm_id"], c["function"]): (c["calls"], c["total_ns"], c["bytes"]) for c in R["mpi"]["collectives"]},
         {k: (len(v), sum(a for a, _ in v), sum(b for _, b in v)) for k, v in coll.items()})
    for c in R["mpi"]["collectives"]:
        nm = A["comms"].get(c["comm_id"], "")
        if nm:
            C.eq(f"communicator {c['comm_id']} name", c["communicator"], nm)
    C.eq("Level Zero API", {a["name"]: (a["calls"], a["total_ns"]) for a in R["level_zero_api"]["rows"]},
         {k: (len(v), sum(v)) for k, v in api.items()})

    # ---- PAPI counters (A19)
    P, RP = A["papi"], R["papi"]
    members = P["members"]
    C.eq("papi counters", [(c["id"], c["name"], c["unit"], c["summed"]) for c in RP["counters"]],
         [(k, m.name, m.unit, k in P["summed"]) for k, m in sorted(members.items())])
    want = {}
    for (mref, name), v in P["regions"].items():
        ds = [a for a, _ in v]
        want[(members[mref].name, name)] = (len(v), sum(ds), min(ds), max(ds), sum(b for _, b in v))
    C.eq("papi regions (calls, total, min, max, region_ns)",
         {(x["counter"], x["region"]): (x["calls"], x["total"], x["min"], x["max"], x["region_ns"]) for x in RP["regions"]}, want)
    for x in RP["regions"]:
        n, tot = x["calls"], x["total"]
        C.near(f"papi {x['counter']} {x['region']} mean", x["mean"], tot / n if n else 0, 0.051)
        if x["unit"] == "ns":
            C.near(f"papi {x['counter']} {x['region']} of_time", x["of_time"], tot / x["region_ns"] if x["region_ns"] else 0,
                   5.1e-7)
        else:
            C.eq(f"papi {x['counter']} {x['region']} of_time", x["of_time"], None)
    want = collections.defaultdict(lambda: [0, 0, 0, 0, 0, 0])
    for (r, mref, k), (n, sm) in P["ranks"].items():
        w = want[(r, members[mref].name)]
        if k == "span":
            w[0], w[1] = n, sm
        elif k == "mpi":
            w[2], w[3] = sm, n
        elif k == "l0":
            w[4], w[5] = sm, n
    C.eq("papi ranks (threads, counted, in MPI, regions, in Level Zero, regions)",
         {(x["rank"], x["counter"]): [x["threads"], x["counted"], x["in_mpi"], x["mpi_regions"], x["in_level_zero"],
                                      x["level_zero_regions"]] for x in RP["ranks"]}, dict(want))
    ranks_of = collections.defaultdict(set)
    for (r, mref, k) in P["ranks"]:
        ranks_of[mref].add(r)
    C.eq("papi counters: ranks", {c["name"]: c["ranks"] for c in RP["counters"]},
         {m.name: len(ranks_of[k]) for k, m in members.items()})
    q = P["quality"]
    C.eq("papi data quality (unpaired, decreasing, one-sided)",
         (R["data_quality"]["metric_records_unpaired"], R["data_quality"]["metric_values_decreasing"],
          R["data_quality"]["metric_regions_one_sided"]), (q["unpaired"], q["decreasing"], q["one_sided"]))

    # ---- data quality
    dq = R["data_quality"]
    locs = {l["location_id"]: l for l in dq["locations"]}
    C.eq("data-quality locations", sorted(locs), sorted(info))
    for ref, x in info.items():
        l = locs.get(ref)
        if not l:
            continue
        C.eq(f"location {ref} events read", l["events_read"], A["counts"][ref])
        C.eq(f"location {ref} events defined", l["events_defined"], x["defined"])
        C.eq(f"location {ref} metrics", l["metrics"], A["metrics"][ref])
        p = A["props"].get(ref, {})
        C.eq(f"location {ref} clamped", l["clamped"], p.get("zecoll::clamped"))
        C.eq(f"location {ref} dropped", l["dropped"], p.get("zecoll::dropped"))
        C.eq(f"location {ref} unclosed", l["unclosed"], len(A["stacks"][ref]))
        w = A["off_windows"].get(ref, [])
        C.eq(f"location {ref} measurement off", (l["measurement_off"], l["measurement_off_ns"]),
             (len(w), sum(b - a for a, b in w)))
        C.eq(f"location {ref} clock offsets", l["clock_offsets"], len(A["offsets"].get(ref, [])))

    # ---- zesim's ground truth, per rank
    for rank, path in truth:
        from check_trace import load_truth, app_ops, expected_name, CLASS, RATE_PPM_TOL
        devices, ops = load_truth(path)
        want = [o for o in app_ops(ops, None) if CLASS[o["kind"]] in ("kernel", "copy")]
        tick = max(1e9 / v["hz"] for v in devices.values())
        t_k = collections.defaultdict(list)
        for o in want:
            t_k[expected_name(o)].append(o)
        got_k = collections.defaultdict(lambda: [0, 0])
        for row in R["kernels_by_rank"]:
            if row["rank"] == rank:
                got_k[row["kernel"]] = [row["calls"], row["total_ns"]]
        for name, v in t_k.items():
            if CLASS[v[0]["kind"]] != "kernel":
                continue
            tdur = sum(o["host_end"] - o["host_start"] for o in v)
            C.eq(f"truth rank {rank}: {name} calls", got_k[name][0], len(v))
            C.near(f"truth rank {rank}: {name} total_ns", got_k[name][1], tdur, len(v) * tick + RATE_PPM_TOL * 1e-6 * tdur)
        t_c = collections.defaultdict(lambda: [0, 0, 0])
        for o in want:
            if CLASS[o["kind"]] == "copy":
                m = COPY_RE.match(expected_name(o))
                t = t_c[m.group(2) + "2" + m.group(3)]
                t[0] += 1
                t[1] += o["bytes"]
                t[2] += o["host_end"] - o["host_start"]
        got_c = {}
        for row in R["transfers_by_rank"]:
            if row["rank"] == rank and row["kind"] == "copy":
                got_c[row["memory"]] = [row["calls"], row["bytes"], row["busy_ns"]]
        C.eq(f"truth rank {rank}: copy kinds", sorted(got_c), sorted(t_c))
        for mem, (n, b, dur) in t_c.items():
            g = got_c.get(mem, [0, 0, 0])
            C.eq(f"truth rank {rank}: {mem} copies", g[0], n)
            C.eq(f"truth rank {rank}: {mem} bytes", g[1], b)
            C.near(f"truth rank {rank}: {mem} busy_ns", g[2], dur, n * tick + RATE_PPM_TOL * 1e-6 * dur)

    # ---- the generator's own account
    if expected:
        E = expected
        for name, e in E.get("kernels", {}).items():
            k = rows.get(name)
            C.true(f"synth: kernel {name} missing", k is not None)
            if k:
                C.eq(f"synth: {name} calls/total/min/max", (k["calls"], k["total_ns"], k["min_ns"], k["max_ns"]),
                     (e["calls"], e["total_ns"], e["min_ns"], e["max_ns"]))
                C.eq(f"synth: {name} slowest rank", k["imbalance"]["slowest_rank"], e["slowest_rank"])
        tr = {t["memory"]: t for t in R["transfers"]["rows"] if t["kind"] == "copy"}
        for mem, e in E.get("copies", {}).items():
            t = tr.get(mem)
            C.eq(f"synth: {mem} copies/bytes/busy", (t["calls"], t["bytes"], t["busy_ns"]) if t else None,
                 (e["calls"], e["bytes"], e["busy_ns"]))
        ut = {(u["rank"], u["device"]): u for u in R["utilisation"]["ranks"]}
        for e in E.get("utilisation", []):
            u = ut.get((e["rank"], e["device"]))
            C.eq(f"synth: utilisation rank {e['rank']} {e['device']}",
                 (u["busy_ns"], u["compute_ns"], u["copy_ns"], u["overlap_ns"], u["measurement_off_ns"]) if u else None,
                 (e["busy_ns"], e["compute_ns"], e["copy_ns"], e["overlap_ns"], e["off_ns"]))
        for key in ("measurement_off", "metric_records", "reexecutions", "appends_without_record", "records_without_append"):
            if key in E:
                C.eq(f"synth: data_quality.{key}", dq[key], E[key])
        if "launch_latency" in E:
            C.eq("synth: launch latency count/min/max", (la["count"], la["min_ns"], la["max_ns"]),
                 tuple(E["launch_latency"]))
        if "mpi_ns" in E:
            C.eq("synth: MPI time per rank", {str(m["rank"]): m["mpi_ns"] for m in R["mpi"]["by_rank"]}, E["mpi_ns"])
        if "mpi_off_ns" in E and "span" in E:  # the MPI share's denominator, as generated
            C.eq("synth: MPI denominators per rank (wall - thread off)",
                 {str(m["rank"]): (m["measurement_off_ns"], m["denominator_ns"]) for m in R["mpi"]["by_rank"]},
                 {k: (v, E["span"][k][1] - E["span"][k][0] - v) for k, v in E["mpi_off_ns"].items()})
            for m in R["mpi"]["by_rank"]:
                k = str(m["rank"])
                C.near(f"synth: rank {k} share_of_wall", m["share_of_wall"],
                       E["mpi_ns"][k] / (E["span"][k][1] - E["span"][k][0] - E["mpi_off_ns"][k]), 5.1e-7)
        if "events" in E:
            C.eq("synth: events", R["job"]["events"], E["events"])
        if "waits" in E:  # the planted wait states (and the allreduces' Wait at NxN), exactly
            keys = ("wait_state", "waiting", "blamed", "waits", "ns", "waits_below_uncertainty", "ns_below_uncertainty")
            C.eq("synth: wait states by (waiting, blamed) pair",
                 sorted(tuple(x[k] for k in keys) for x in R["wait_states"]["by_pair"]),
                 sorted(tuple(x[k] for k in keys) for x in E["waits"]["by_pair"]))
            C.eq("synth: wait-state time", R["wait_states"]["ns"], E["waits"]["ns"])
        if "papi" in E:  # every counter's deltas per region and per rank, as generated
            C.eq("synth: papi regions",
                 {(x["counter"], x["region"]): (x["calls"], x["total"], x["min"], x["max"], x["region_ns"]) for x in R["papi"]["regions"]},
                 {(x["counter"], x["region"]): (x["calls"], x["total"], x["min"], x["max"], x["region_ns"]) for x in E["papi"]["regions"]})
            keys = ("threads", "counted", "in_mpi", "mpi_regions", "in_level_zero", "level_zero_regions")
            C.eq("synth: papi ranks", {(x["rank"], x["counter"]): tuple(x[k] for k in keys) for x in R["papi"]["ranks"]},
                 {(x["rank"], x["counter"]): tuple(x[k] for k in keys) for x in E["papi"]["ranks"]})
        if "span" in E:  # on rank 0's clock: the archive's clock offsets must have undone the skews
            C.eq("synth: each rank's first and last event, offsets applied",
                 {str(x["rank"]): [x["first_ns"], x["last_ns"]] for x in dq["ranks"]}, E["span"])


def check_papi_expected(C, R, PE):
    """The report's PAPI sections against the sums of the program's own account (exact)."""
    RP = R["papi"]
    C.eq("papi regions (calls, total, min, max) against the program's account",
         {f"{x['counter']}|{x['region']}": [x["calls"], x["total"], x["min"], x["max"]] for x in RP["regions"]},
         PE["regions"])
    C.eq("papi ranks (threads, counted, in MPI, regions, in Level Zero, regions) against the program's account",
         {f"{x['rank']}|{x['counter']}": [x["threads"], x["counted"], x["in_mpi"], x["mpi_regions"], x["in_level_zero"],
                                          x["level_zero_regions"]] for x in RP["ranks"]}, PE["ranks"])
    C.true("the program's account has PAPI regions", bool(PE["regions"]))


def us_to_ns(s):
    a, _, b = s.partition(".")
    return int(a) * 1000 + int((b + "000")[:3])


def check_timeline(C, A, path):
    """Every region of the archive (offsets applied) is one complete event: pid = rank, tid =
    location, ts and dur exact to the nanosecond; measurement-off windows as regions too."""
    with open(path) as f:
        text = f.read()
    T = json.loads(text)
    # the exact decimal strings of ts/dur, in event order (json floats would round)
    nums = re.findall(r'"ph":"X","pid":(\d+),"tid":\d+,"ts":([0-9.]+),"dur":([0-9.]+),"name":("(?:[^"\\]|\\.)*")', text)
    got = collections.Counter((int(p), json.loads(n), us_to_ns(ts), us_to_ns(du)) for p, ts, du, n in nums)
    C.eq("timeline complete events", sum(1 for e in T["traceEvents"] if e.get("ph") == "X"), len(nums))
    t0 = A["t0"]
    want = collections.Counter((r, name, max(0, a - t0), max(0, b - t0) - max(0, a - t0)) for r, ref, name, a, b in A["regions"])
    for ref, w in A["off_windows"].items():
        for a, b in w:
            want[(A["info"][ref]["rank"], "measurement off", a - t0, b - a)] += 1
    C.eq("timeline events (rank, name, start, duration)", sorted((got - want).items())[:5], [])
    C.eq("timeline events missing", sorted((want - got).items())[:5], [])
    names = {(e["pid"], e["args"]["name"]) for e in T["traceEvents"] if e.get("name") == "process_name"}
    C.eq("timeline processes", len(names),
         len({r for r, *_ in A["regions"]} | set(A["first"]) | {x["rank"] for x in A["info"].values()}))


def check_level_zero(C, archive, R):
    """A21: the data quality's level_zero against the archive's ZECOLL::L0_* properties (otf2-print)."""
    from check_archive import archive_properties
    P = archive_properties(os.path.join(archive, "traces.otf2"))
    if "ZECOLL::L0_SPEC_KNOWN" not in P:
        C.eq("data_quality.level_zero (no ZECOLL::L0_ properties)", R["data_quality"].get("level_zero"), None)
        return
    pairs = [e.rsplit(" ", 1) for e in P.get("ZECOLL::L0_UNTRACED", "").split(", ") if e and e != "..."]
    C.eq("data_quality.level_zero", R["data_quality"].get("level_zero"),
         {"spec_known": P["ZECOLL::L0_SPEC_KNOWN"], "spec_asked": P.get("ZECOLL::L0_SPEC_ASKED"),
          "untraced_calls": int(P.get("ZECOLL::L0_UNTRACED_CALLS", "0")),
          "untraced": [{"entry": e, "calls": int(n)} for e, n in pairs],
          "untraced_uncounted": [e for e in P.get("ZECOLL::L0_UNTRACED_UNCOUNTED", "").split(", ") if e]})


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--archive", required=True)
    ap.add_argument("--report", required=True)
    ap.add_argument("--truth", action="append", default=[], metavar="RANK:FILE")
    ap.add_argument("--expected")
    ap.add_argument("--papi-expected")
    ap.add_argument("--timeline", help="Chrome trace JSON written by --timeline (whole trace)")
    ap.add_argument("--planted", help="what tests/mpi/mpi_waits.c planted (its waits-planted.json): "
                                      "those wait states and GPU idle must be recovered (check_planted.py)")
    ap.add_argument("-v", action="store_true")
    a = ap.parse_args()
    with open(a.report) as f:
        R = json.load(f)
    A = read_archive(a.archive)
    truth = [(int(t.split(":", 1)[0]), t.split(":", 1)[1]) for t in a.truth]
    E = None
    if a.expected:
        with open(a.expected) as f:
            E = json.load(f)
    C = Checker(a.v)
    check(C, A, R, truth, E)
    check_level_zero(C, a.archive, R)
    if A["sends"] or "comm_matrix" in R:
        check_matrix(C, A, R)
    if A["mpi_events"].colls or A["mpi_events"].recvs or "wait_states" in R:
        check_waits(C, A, R)
    if "gpu_idle" in R:
        check_gpu_idle(C, A, R)
    if a.papi_expected:
        with open(a.papi_expected) as f:
            check_papi_expected(C, R, json.load(f))
    if a.timeline:
        check_timeline(C, A, a.timeline)
    planted = ""
    if a.planted:
        from check_planted import check_planted
        with open(a.planted) as f:
            k, disturbed = check_planted(C, A, R, json.load(f))
        planted = f" and {k} planted waits" + (f" ({disturbed} with another rank last: time only)" if disturbed else "")
    for b in C.bad[:60]:
        print("FAIL", b)
    if len(C.bad) > 60:
        print(f"... {len(C.bad) - 60} more")
    print(f"{a.report}: {C.n - len(C.bad)} of {C.n} checks hold against {a.archive}"
          + (f" and {len(truth)} truth log(s)" if truth else "") + (" and the generator's account" if E else "")
          + (" and the PAPI program's account" if a.papi_expected else "") + planted)
    return 1 if C.bad else 0


if __name__ == "__main__":
    sys.exit(main())
