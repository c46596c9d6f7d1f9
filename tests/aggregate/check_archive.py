#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Check an OTF2 archive against the archive contract (docs/archive.md), rule by rule.

  check_archive.py ARCHIVE_DIR [--mpi | --serial] [-v]
  check_archive.py --rules-match DOC     the rule ids of DOC and of this checker are the same

Reads the archive with Debian's python3-otf2 (system /usr/bin/python3) and `otf2-print -C` (clock
offsets: the Python binding does not expose local definitions). Prints one line per rule
("ok A3 ..." / "FAIL A3 ...") and exits 1 if any rule fails. Rules marked planned in the document
are checked only when the archive has such records.
"""
import argparse
import collections
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "scripts"))

LETTERS = "HDSMI"
COPY_RE = re.compile(r"^(zeCommandList\w+)\(([HDSMI])2([HDSMI])\)$")
FILL_RE = re.compile(r"^zeCommandListAppendMemoryFill\(([HDSMI])\)$")
BARRIERS = {"zeCommandListAppendBarrier", "zeCommandListAppendMemoryRangesBarrier"}
STREAM_RE = re.compile(r"^L0\[(\d+):(\d+)\](?:/(\d+))?$")
THREAD_RE = re.compile(r"^(Master thread|Thread \d+)$")
RULES = ["A1", "A2", "A3", "A4", "A5", "A6", "A7", "A8", "A9", "A10", "A11", "A12", "A13", "A14", "A15",
         "A16", "A17", "A18", "A19", "A20", "A21"]


class Result:
    def __init__(self):
        self.fail = collections.defaultdict(list)
        self.note = collections.defaultdict(list)

    def bad(self, rule, msg):
        if len(self.fail[rule]) < 5:
            self.fail[rule].append(msg)
        elif len(self.fail[rule]) == 5:
            self.fail[rule].append("...")


def doc_rules(path):
    with open(path) as f:
        return sorted(set(re.findall(r"\*\*(A\d+)\*\*", f.read())), key=lambda r: int(r[1:]))


def clock_offsets(anchor):
    """{location id: [(time, offset, stddev)]} from otf2-print -C."""
    p = subprocess.run(["otf2-print", "-C", anchor], capture_output=True, text=True)
    out = collections.defaultdict(list)
    for line in p.stdout.splitlines():
        m = re.match(r"^CLOCK_OFFSET\s+(\d+)\s+Time: (\d+), Offset: ([+-]?\d+), StdDev: (\S+)", line)
        if m:
            out[int(m.group(1))].append((int(m.group(2)), int(m.group(3)), float(m.group(4))))
    return out, p.returncode


def archive_properties(anchor):
    """{name: value} of the anchor file's properties (otf2-print -I)."""
    p = subprocess.run(["otf2-print", "-I", anchor], capture_output=True, text=True)
    props, name = {}, None
    for line in p.stdout.splitlines():
        m = re.match(r"^Property (name|value)\s+(.*)$", line)
        if m and m.group(1) == "name":
            name = m.group(2).strip()
        elif m and name is not None:
            props[name] = m.group(2).strip()
            name = None
    return props


def check(path, mode, verbose):
    import otf2
    from zc_otf2_compat import patch_intercomm_reading
    patch_intercomm_reading()
    R = Result()
    anchor = os.path.join(path, "traces.otf2")
    # A1 files
    for f in ("traces.otf2", "traces.def"):
        if not os.path.isfile(os.path.join(path, f)):
            R.bad("A1", f"missing {f}")
    if R.fail["A1"]:
        return R
    with otf2.reader.open(anchor) as tr:
        d = tr.definitions
        locs = list(d.locations)
        for loc in locs:
            ev = os.path.join(path, "traces", f"{loc._ref}.evt")
            if loc.number_of_events and not os.path.isfile(ev):
                R.bad("A1", f"location {loc._ref} has {loc.number_of_events} events and no {ev}")
            if not os.path.isfile(os.path.join(path, "traces", f"{loc._ref}.def")):
                R.bad("A1", f"location {loc._ref} has no local definition file")
        # A5 paradigm
        pnames = {str(p.paradigm): p.name for p in d.paradigms}
        if pnames.get("Paradigm.OPENCL") != "Level Zero":
            R.bad("A5", f"paradigm OPENCL named {pnames.get('Paradigm.OPENCL')!r}, not 'Level Zero'")
        # A6 system tree
        nodes = list(d.system_tree_nodes)
        domains = collections.defaultdict(set)
        for dm in d.system_tree_node_domains:
            domains[dm.system_tree_node._ref].add(str(dm.system_tree_node_domain))
        props = collections.defaultdict(dict)
        for pr in d.system_tree_node_properties:
            props[pr.system_tree_node._ref][pr.name] = pr.value
        roots = [n for n in nodes if n.parent is None]
        if len(roots) != 1 or roots[0].name != "machine":
            R.bad("A6", f"root nodes {[n.name for n in roots]}")
        hosts = {n._ref for n in nodes if n.class_name == "node"}
        devnodes = {n._ref for n in nodes if n.class_name == "Level Zero Device"}
        for n in nodes:
            if n.class_name == "node" and (n.parent is None or n.parent.name != "machine"
                                           or "SystemTreeDomain.SHARED_MEMORY" not in domains[n._ref]):
                R.bad("A6", f"host node {n.name} not under machine / without SHARED_MEMORY domain")
            if n.class_name == "Level Zero Device":
                if n.parent is None or n.parent._ref not in hosts:
                    R.bad("A6", f"device node {n.name} not under a host")
                if "SystemTreeDomain.ACCELERATOR_DEVICE" not in domains[n._ref] or "UUID" not in props[n._ref]:
                    R.bad("A6", f"device node {n.name} lacks the ACCELERATOR_DEVICE domain or the UUID property")
                if not re.search(r" \[\d+\]$", n.name):
                    R.bad("A6", f"device node name {n.name!r} is not '<name> [<index>]'")
        # A7 location groups
        groups = list(d.location_groups)
        procs = [g for g in groups if str(g.location_group_type) == "LocationGroupType.PROCESS"]
        mpi = any(g.name.startswith("MPI Rank ") for g in procs)
        if mode == "mpi" and not mpi:
            R.bad("A7", "expected an MPI job ('MPI Rank <r>' groups)")
        if mode == "serial" and mpi:
            R.bad("A7", "expected a process alone ('Process <r>')")
        for g in procs:
            want = f"{'MPI Rank' if mpi else 'Process'} {g._ref}"
            if g.name != want:
                R.bad("A7", f"process group {g._ref} named {g.name!r}, want {want!r}")
            if g.system_tree_parent is None or g.system_tree_parent._ref not in hosts:
                R.bad("A7", f"process group {g.name} not under a host node")
        for g in groups:
            if str(g.location_group_type) == "LocationGroupType.ACCELERATOR":
                if not re.match(r"^L0 Context \d+$", g.name):
                    R.bad("A7", f"accelerator group named {g.name!r}")
                if g.system_tree_parent is None or g.system_tree_parent._ref not in devnodes:
                    R.bad("A7", f"accelerator group {g._ref} not under a device node")
                c = g.creating_location_group
                if c is None or str(c.location_group_type) != "LocationGroupType.PROCESS":
                    R.bad("A7", f"accelerator group {g._ref} has no creating process group")
        # A8 locations
        rank_of = {}
        for loc in locs:
            g = loc.group
            proc = g if str(g.location_group_type) == "LocationGroupType.PROCESS" else g.creating_location_group
            rank_of[loc._ref] = proc._ref if proc is not None else None
            if (loc._ref & 0xffffffff) != rank_of[loc._ref]:
                R.bad("A8", f"location {loc._ref}: low 32 bits are not its rank {rank_of[loc._ref]}")
            if str(loc.type) == "LocationType.CPU_THREAD":
                if str(g.location_group_type) != "LocationGroupType.PROCESS" or not THREAD_RE.match(loc.name):
                    R.bad("A8", f"thread location {loc._ref} {loc.name!r} in group {g.name}")
            elif str(loc.type) in ("LocationType.GPU", "LocationType.ACCELERATOR_STREAM"):
                m = STREAM_RE.match(loc.name)
                if str(g.location_group_type) != "LocationGroupType.ACCELERATOR" or not m:
                    R.bad("A8", f"stream location {loc._ref} {loc.name!r} in group {g.name}")
                elif m.group(3) and not any(o.name == loc.name.split("/")[0] and o.group._ref == g._ref for o in locs):
                    R.bad("A8", f"lane {loc.name} without its base stream in group {g._ref}")
            else:
                R.bad("A8", f"location {loc._ref} of type {loc.type}")
        # A9/A10 regions (checked where they are used, below); A11 parameter
        params = {p.name: p for p in d.parameters}
        cs = params.get("callsite id")
        if cs is None or str(cs.parameter_type) != "ParameterType.UINT64":
            R.bad("A11", "no UINT64 parameter 'callsite id'")
        # A12 location properties
        lprops = collections.defaultdict(dict)
        for lp in d.location_properties:
            lprops[lp.location._ref][lp.name] = lp.value
        if lprops:
            for loc in locs:
                got = lprops.get(loc._ref, {})
                for k in ("zecoll::events", "zecoll::clamped", "zecoll::dropped"):
                    if not isinstance(got.get(k), int):
                        R.bad("A12", f"location {loc._ref} lacks UINT64 property {k}")
        else:
            R.note["A12"].append("no location properties (archive older than the rule)")
        # A20 salvaged archives: property, data_end on every location, a final OFF
        props = archive_properties(anchor)
        salvaged = "ZECOLL::SALVAGED" in props
        data_end = {ref: p["zecoll::data_end"] for ref, p in lprops.items() if "zecoll::data_end" in p}
        if data_end and not salvaged:
            R.bad("A20", "zecoll::data_end properties without the ZECOLL::SALVAGED archive property")
        if salvaged:
            if not re.match(r"^\d+ of \d+ rank\(s\)$", props["ZECOLL::SALVAGED"]):
                R.bad("A20", f"ZECOLL::SALVAGED is {props['ZECOLL::SALVAGED']!r}")
            for loc in locs:
                if not isinstance(data_end.get(loc._ref), int) or data_end[loc._ref] <= 0:
                    R.bad("A20", f"salvaged location {loc._ref} lacks a UINT64 zecoll::data_end")
            R.note["A20"].append(f"salvaged: {props['ZECOLL::SALVAGED']}")
        else:
            R.note["A20"].append("not salvaged")
        # A21 the Level Zero spec versions and the calls to entries passed through untraced
        if "ZECOLL::L0_SPEC_KNOWN" in props:
            ver = r"\d+\.\d+"
            if not re.match(rf"^{ver}$", props["ZECOLL::L0_SPEC_KNOWN"]):
                R.bad("A21", f"ZECOLL::L0_SPEC_KNOWN is {props['ZECOLL::L0_SPEC_KNOWN']!r}")
            if "ZECOLL::L0_SPEC_ASKED" in props and not re.match(rf"^{ver}(, {ver})*$", props["ZECOLL::L0_SPEC_ASKED"]):
                R.bad("A21", f"ZECOLL::L0_SPEC_ASKED is {props['ZECOLL::L0_SPEC_ASKED']!r}")
            total = props.get("ZECOLL::L0_UNTRACED_CALLS", "")
            entries = [e for e in props.get("ZECOLL::L0_UNTRACED", "").split(", ") if e]
            pairs = [e.rsplit(" ", 1) for e in entries if e != "..."]
            if not total.isdigit():
                R.bad("A21", f"ZECOLL::L0_UNTRACED_CALLS is {total!r}")
            elif any(len(p) != 2 or not re.match(r"^ze\w+$", p[0]) or not p[1].isdigit() for p in pairs):
                R.bad("A21", f"ZECOLL::L0_UNTRACED is {props.get('ZECOLL::L0_UNTRACED')!r}")
            else:
                calls = [int(p[1]) for p in pairs]
                if calls != sorted(calls, reverse=True) or (entries[-1:] != ["..."] and sum(calls) != int(total)):
                    R.bad("A21", f"ZECOLL::L0_UNTRACED {props.get('ZECOLL::L0_UNTRACED')!r} does not add up to "
                                 f"ZECOLL::L0_UNTRACED_CALLS {total}, most first")
            uncounted = props.get("ZECOLL::L0_UNTRACED_UNCOUNTED")
            counted = {p[0] for p in pairs}
            if uncounted is not None and (not re.match(r"^ze\w+(, ze\w+)*$", uncounted)
                                          or counted & set(uncounted.split(", "))):
                R.bad("A21", f"ZECOLL::L0_UNTRACED_UNCOUNTED is {uncounted!r} (names, none of them counted)")
            R.note["A21"].append(f"Level Zero spec {props.get('ZECOLL::L0_SPEC_ASKED', '(none)')} asked, "
                                 f"{props['ZECOLL::L0_SPEC_KNOWN']} known, {total} untraced call(s)")
        else:
            R.note["A21"].append("no ZECOLL::L0_ properties (no Level Zero use, or an archive older than the rule)")
        # A13 communicators and windows
        comms = {c._ref: c for c in d.comms}
        for r, g in enumerate(sorted(procs, key=lambda g: g._ref)):
            c = comms.get(g._ref)
            if c is None or c.name != "L0":
                R.bad("A13", f"no L0 communicator {g._ref}")
        wins = {w._ref: w for w in d.rma_wins}
        for g in procs:
            w = wins.get(g._ref)
            if w is None or w.name != "L0_WINDOW" or w.comm._ref != g._ref:
                R.bad("A13", f"no L0_WINDOW {g._ref} on communicator {g._ref}")
        if mpi and not any(c.name == "MPI_COMM_WORLD" for c in d.comms):
            R.bad("A13", "MPI job without MPI_COMM_WORLD")

        # events
        cp = d.clock_properties
        if cp.timer_resolution != 1000000000:
            R.bad("A3", f"timer resolution {cp.timer_resolution}")
        lo, hi = cp.global_offset - 2, cp.global_offset + cp.trace_length + 2
        tmin, tmax = None, None
        count = collections.Counter()
        last = {}
        stack = collections.defaultdict(list)
        dev_open = {}          # stream location -> dict of the record being read
        host_cs = {}           # (rank, callsite) -> (host region name, enter time)
        dev_cs = []            # (rank, callsite, region name, start, loc)
        thread_last_cs = {}    # host location -> last callsite seen there
        off = {}
        metric_pending = {}
        metric_last = {}
        seen_metric = seen_onoff = False
        last_kind = {}
        for loc, ev in tr.events:
            ref = loc._ref
            t = ev.time
            count[ref] += 1
            tmin = t if tmin is None or t < tmin else tmin
            tmax = t if tmax is None or t > tmax else tmax
            if ref in last and t < last[ref]:
                R.bad("A14", f"location {ref}: time {t} after {last[ref]}")
            last[ref] = t
            kind = type(ev).__name__
            last_kind[ref] = (kind, str(getattr(ev, "measurement_mode", "")))
            is_stream = str(loc.type) in ("LocationType.GPU", "LocationType.ACCELERATOR_STREAM")
            if metric_pending.get(ref) is not None and kind not in ("Metric",):
                mt = metric_pending.pop(ref)
                if kind not in ("Enter", "Leave") or t != mt:
                    R.bad("A19", f"location {ref}: Metric at {mt} not followed by Enter/Leave at that time")
            if ref in off and kind not in ("MeasurementOnOff",):
                R.bad("A18", f"location {ref}: {kind} at {t} while measurement is off")
            if kind == "Enter":
                st = stack[ref]
                st.append((ev.region, t))
                name = ev.region.name
                if is_stream:
                    if len(st) > 1:
                        R.bad("A15", f"{loc.name} ({ref}): {name} nested in {st[0][0].name}")
                    role = str(ev.region.region_role)
                    ok = ((role == "RegionRole.FUNCTION" and "(" not in name)
                          or (role == "RegionRole.DATA_TRANSFER" and (COPY_RE.match(name) or FILL_RE.match(name)))
                          or (role == "RegionRole.BARRIER" and name in BARRIERS))
                    if not ok or str(ev.region.paradigm) != "Paradigm.OPENCL":
                        R.bad("A9", f"device region {name!r} role {role} paradigm {ev.region.paradigm}")
                    dev_open[ref] = {"name": name, "start": t, "cs": None, "rma": None, "done": False,
                                     "seq": []}
                else:
                    par = str(ev.region.paradigm)
                    role = str(ev.region.region_role)
                    ok = ((par == "Paradigm.OPENCL" and name.startswith("ze"))
                          or (par == "Paradigm.MPI" and name.startswith("MPI_"))
                          or (par == "Paradigm.MEASUREMENT_SYSTEM" and name == "zecoll buffer flush"
                              and role == "RegionRole.ARTIFICIAL"))
                    if not ok:
                        R.bad("A10", f"thread region {name!r} paradigm {par} role {role}")
            elif kind == "Leave":
                st = stack[ref]
                if not st or st[-1][0]._ref != ev.region._ref:
                    R.bad("A14", f"location {ref}: Leave {ev.region.name} at {t} does not match "
                                 f"{st[-1][0].name if st else 'nothing'}")
                else:
                    st.pop()
                if is_stream and ref in dev_open:
                    rec = dev_open.pop(ref)
                    m = COPY_RE.match(rec["name"])
                    want_rma = m and m.group(2) != "I" and m.group(3) != "I"
                    if want_rma:
                        put = m.group(2) == "D" and m.group(3) != "D"
                        want = "RmaPut" if put else "RmaGet"
                        if rec["rma"] is None or rec["rma"][0] != want or rec["rma"][1] != rec["start"]:
                            R.bad("A15", f"{loc.name}: copy {rec['name']} at {rec['start']} without {want} at its start")
                        elif rec["rma"][4] != t:
                            R.bad("A15", f"{loc.name}: copy {rec['name']}: RmaOpCompleteBlocking not at its end")
                    elif rec["rma"] is not None:
                        R.bad("A15", f"{loc.name}: {rec['name']} carries RMA records")
                    if rec["cs"] is not None:
                        dev_cs.append((rank_of[ref], rec["cs"], rec["name"], rec["start"], ref))
            elif kind == "ParameterUnsignedInt":
                if ev.parameter.name != "callsite id":
                    continue
                if is_stream:
                    rec = dev_open.get(ref)
                    if rec is None or rec["start"] != t or rec["cs"] is not None or rec["rma"] is not None:
                        R.bad("A15", f"{loc.name}: callsite parameter at {t} not right after a record's Enter")
                    else:
                        rec["cs"] = ev.value
                else:
                    st = stack[ref]
                    if not st or st[-1][1] != t:
                        R.bad("A16", f"location {ref}: callsite {ev.value} not at the Enter of its region")
                        continue
                    key = (rank_of[ref], ev.value)
                    if key in host_cs:
                        R.bad("A16", f"callsite {ev.value} twice on the host of rank {key[0]}")
                    host_cs[key] = (st[-1][0].name, t)
                    prev = thread_last_cs.get(ref)
                    if prev is not None and (ev.value >> 40) == (prev >> 40) and ev.value <= prev:
                        R.bad("A16", f"location {ref}: callsite {ev.value} after {prev}")
                    thread_last_cs[ref] = ev.value
            elif kind in ("RmaGet", "RmaPut"):
                rec = dev_open.get(ref)
                if rec is None:
                    R.bad("A15", f"location {ref}: {kind} outside a device record")
                else:
                    if ev.win.name != "L0_WINDOW" or ev.win._ref != rank_of[ref]:
                        R.bad("A15", f"{loc.name}: {kind} on window {ev.win.name} {ev.win._ref}")
                    rec["rma"] = [kind, t, ev.bytes, ev.matching_id, None]
            elif kind == "RmaOpCompleteBlocking":
                rec = dev_open.get(ref)
                if rec is None or rec["rma"] is None or rec["rma"][3] != ev.matching_id:
                    R.bad("A15", f"location {ref}: RmaOpCompleteBlocking without its RMA operation")
                else:
                    rec["rma"][4] = t
            elif kind.startswith("Mpi") or kind.startswith("NonBlockingCollective"):
                st = stack[ref]
                if is_stream or not st or str(st[-1][0].paradigm) != "Paradigm.MPI":
                    R.bad("A17", f"location {ref}: {kind} at {t} outside an MPI region")
            elif kind == "MeasurementOnOff":
                seen_onoff = True
                mode_on = "ON" in str(ev.measurement_mode)
                if not mode_on:
                    if ref in off:
                        R.bad("A18", f"location {ref}: OFF twice")
                    if stack[ref]:  # an OFF waits for the regions in progress
                        R.bad("A18", f"location {ref}: OFF at {t} inside region {stack[ref][-1][0].name}")
                    off[ref] = t
                else:
                    if ref not in off:
                        R.bad("A18", f"location {ref}: ON without OFF")
                    off.pop(ref, None)
            elif kind == "Metric":
                seen_metric = True
                if is_stream:
                    R.bad("A19", f"Metric on stream location {ref}")
                metric_pending[ref] = t
                # accumulating counters never decrease on their thread
                for m, v in zip(ev.metric.members, ev.values):
                    if str(m.metric_mode) != "MetricMode.ACCUMULATED_START":
                        continue
                    prev = metric_last.get((ref, m._ref))
                    if prev is not None and v < prev:
                        R.bad("A19", f"location {ref}: {m.name} decreases at {t} ({prev} -> {v})")
                    metric_last[(ref, m._ref)] = v
        for ref, st in stack.items():
            if st:
                R.bad("A14", f"location {ref}: {len(st)} region(s) never left")
        if salvaged:
            for loc in locs:
                k = last_kind.get(loc._ref)
                if k is None or k[0] != "MeasurementOnOff" or "ON" in k[1].split(".")[-1]:
                    R.bad("A20", f"salvaged location {loc._ref} does not end with MeasurementOnOff(OFF) ({k})")
        for loc in locs:
            if count[loc._ref] != loc.number_of_events:
                R.bad("A2", f"location {loc._ref}: {count[loc._ref]} events read, definition says {loc.number_of_events}")
        if tmin is not None and (tmin < lo or tmax > hi):
            R.bad("A3", f"events span [{tmin}, {tmax}], clock properties say [{lo + 2}, {hi - 2}]")
        # A16: every device callsite has its Append, the right API, and ids have the documented form
        per_cs = collections.Counter((r, c) for r, c, *_ in dev_cs)
        for r, c, name, start, ref in dev_cs:
            h = host_cs.get((r, c))
            if h is None:
                R.bad("A16", f"rank {r}: device record {name} at {start} has callsite {c} with no Append")
                continue
            api, t0 = h
            want = name.split("(")[0] if "(" in name or name in BARRIERS else "zeCommandListAppendLaunch"
            if not api.startswith(want):
                R.bad("A16", f"rank {r}: record {name} linked to host region {api}")
            if start + 1000 < t0:
                R.bad("A16", f"rank {r}: record {name} starts {t0 - start} ns before its Append")
            if (c >> 40) == 0 or (c & ((1 << 40) - 1)) == 0:
                R.bad("A16", f"callsite {c} is not (thread index + 1) << 40 | n")
        R.note["A16"].append(f"{len(dev_cs)} device records linked, {sum(1 for v in per_cs.values() if v > 1)} "
                             f"callsites executed more than once (regular lists)")
        if not seen_onoff:
            R.note["A18"].append("no MeasurementOnOff records")
        if not seen_metric:
            R.note["A19"].append("no Metric records")
    # A4 clock offsets
    offs, rc = clock_offsets(anchor)
    if rc != 0:
        R.bad("A4", f"otf2-print -C failed ({rc})")
    by_rank = collections.defaultdict(set)
    for loc in locs:
        o = tuple(offs.get(loc._ref, []))
        if mpi:
            # a salvaged rank that died before MPI_Finalize measured only the first; one without a
            # journal has a single MeasurementOnOff and none (A20)
            placeholder = salvaged and loc.number_of_events == 1 and last_kind.get(loc._ref, ("",))[0] == "MeasurementOnOff"
            if loc.number_of_events and len(o) != 2 and not (salvaged and len(o) == 1) and not (placeholder and not o):
                R.bad("A4", f"location {loc._ref}: {len(o)} clock offsets, want 2")
            by_rank[rank_of[loc._ref]].add(o)
        elif o:
            R.bad("A4", f"process alone with clock offsets on {loc._ref}")
    for r, s in by_rank.items():
        s.discard(())
        if len(s) > 1:
            R.bad("A4", f"rank {r}: locations disagree on their clock offsets")
        if r == 0 and any(x[1] != 0 for o in s for x in o):
            R.bad("A4", "rank 0 has non-zero offsets")
    return R


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("archive", nargs="?")
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--mpi", action="store_const", const="mpi", dest="mode")
    g.add_argument("--serial", action="store_const", const="serial", dest="mode")
    ap.add_argument("--rules-match", metavar="DOC")
    ap.add_argument("-v", action="store_true")
    a = ap.parse_args()
    if a.rules_match:
        doc = doc_rules(a.rules_match)
        if doc != RULES:
            print(f"FAIL: rules in {a.rules_match}: {doc}; rules checked here: {RULES}")
            return 1
        print(f"ok: {len(doc)} rules, the same in the document and the checker")
        return 0
    if not a.archive:
        ap.error("ARCHIVE_DIR is required")
    path = a.archive[:-len("/traces.otf2")] if a.archive.endswith("/traces.otf2") else a.archive
    R = check(path, a.mode, a.v)
    bad = 0
    for rule in RULES:
        if R.fail[rule]:
            bad += 1
            print(f"FAIL {rule}: " + "; ".join(R.fail[rule]))
        else:
            print(f"ok {rule}" + (f" ({'; '.join(R.note[rule])})" if R.note[rule] else ""))
    print(f"{path}: {len(RULES) - bad} of {len(RULES)} rules hold")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
