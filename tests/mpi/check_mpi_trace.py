#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Check the OTF2 archive of an MPI job traced by zecoll (one archive per job).

  check_mpi_trace.py ARCHIVE --ranks N [--expect-region NAME[@r,r...]]... [--expect-comms N]
                     [--expect-comm-defs N] [--expect-comm-name NAME=R,...] [--expect-messages N] [--expect-colls OP=N] [--skew-check] [--expect-skew S0,S1,...] [--devices]
                     [--no-causality] [--causality-tol-ns NS] [--skew-tol-ns NS]

ARCHIVE is the archive directory (holding traces.otf2) or the anchor file itself. Run it with
/usr/bin/python3 (Debian's python3-otf2 is only importable there). Prints TAP ("ok N - ...",
"not ok N - ...", details as "# ..."), exits 1 if any check failed, 2 on bad usage.

Checks (one TAP line each):
  archive         the anchor file exists
  otf2-print      `otf2-print --silent -Werror` accepts the archive
  reader          the python3-otf2 reader reads all definitions and all events
  timestamps      on every location timestamps never decrease (as read, i.e. with the clock
                  offsets applied, and raw)
  nesting         Enter/Leave nest and balance on every location; MpiCollectiveBegin/End pair up
  ranks           exactly one PROCESS location group per rank; MPI_COMM_WORLD lists N host
                  locations, rank r's in a group whose name contains r ("MPI Rank r")
  communicators   MPI_COMM_WORLD and MPI_COMM_SELF exist; every communicator's group members
                  are world ranks (locations of MPI_COMM_WORLD); ranks only use communicators
                  they are members of; --expect-comms N: at least N user communicators used;
                  --expect-comm-defs N: exactly N definitions (a communicator known twice fails);
                  --expect-comm-name NAME=R,...: one definition has that name and those members
  regions         no two global region definitions share name, canonical name, role and
                  paradigm; every MPI event lies inside an MPI-paradigm region that fits it
                  (MpiSend in a *send* region, a BCAST collective in MPI_Bcast, ...), which also
                  catches wrong per-rank mapping tables; --expect-region NAME: NAME is entered
                  on every rank (NAME@0,2: on ranks 0 and 2)
  p2p             every MpiSend/MpiIsend is matched by exactly one MpiRecv/MpiIrecv with the
                  same communicator, tag and bytes, between the ranks its receiver/sender
                  fields name (ranks in the communicator, mapped through its group to world
                  ranks; intercommunicators: ranks in the remote group); no receive unmatched;
                  message count and bytes per (communicator, tag) reported; --expect-messages N:
                  exactly N messages
  requests        per location: MpiIsend -> MpiIsendComplete, MpiIrecvRequest -> MpiIrecv
                  (same request id) unless MpiRequestCancelled; NonBlockingCollectiveRequest ->
                  NonBlockingCollectiveComplete; MpiRequestTest only for active requests; no
                  request left active
  collectives     per communicator, every member rank records the same sequence of collective
                  operations (blocking ones by completion, non-blocking ones by initiation)
                  with the same roots; no non-member records one; --expect-colls OP=N: every
                  rank records exactly N collectives of operation OP (BARRIER, ALLREDUCE, ...)
  coll-bytes      byte counts of the collectives are consistent across the members
                  (GATHER/SCATTER/ALLTOALL families: sum sent = sum received; ALLGATHER(V):
                  everybody receives the sum of what was sent; BARRIER: 0 bytes)
  clock-offsets   every location with events has ClockOffset records (python3-otf2 does not
                  expose them: parsed from `otf2-print -C --silent`); --expect-skew: the
                  offsets undo the injected per-rank skews (relative to rank 0)
  causality       with the offsets applied (interpolated between the records, as OTF2 readers
                  do) no receive completes before its send started and nobody leaves a
                  BARRIER/ALLREDUCE before everybody entered it (tolerance --causality-tol-ns
                  plus the offsets' standard deviations); --skew-check also requires that the
                  RAW timestamps violate causality (proof that a skew was injected and undone)
  devices         (--devices) every rank has ACCELERATOR_STREAM locations (in ACCELERATOR
                  location groups created by its process group) with kernel regions on them

--windows (recording windows, rank selection: docs/archive.md A18): a rank measures while its
MPI location is not between a MeasurementOnOff OFF and its ON; a rank without events never
measures. Then a send may lack its receive if the receiving rank stopped measuring at some
point after the send, a receive may lack its send if the sender did not measure at some point
before it; collectives are compared among the members that recorded any on that communicator;
--devices asks streams of the ranks with events only.

--truncated: the archive was salvaged from a job that died (zecoll salvage, docs/salvage.md), so
each rank's records stop somewhere. What was recorded must still be right, and only the ends may
be missing: per (communicator, sender, receiver, tag) the unmatched sends and receives come after
every matched one (a hole in the middle fails); per communicator every member's collectives are a
prefix of the longest member's sequence; requests still active at the end are allowed.
"""
import argparse
import bisect
import collections
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
from zc_otf2_compat import patch_intercomm_reading  # noqa: E402

MAX_DETAILS = 25

COLL_OPS = {"BARRIER", "BCAST", "GATHER", "GATHERV", "SCATTER", "SCATTERV", "ALLGATHER", "ALLGATHERV",
            "ALLTOALL", "ALLTOALLV", "ALLTOALLW", "ALLREDUCE", "REDUCE", "REDUCE_SCATTER", "SCAN", "EXSCAN",
            "REDUCE_SCATTER_BLOCK"}
ROOTED = {"BCAST", "GATHER", "GATHERV", "SCATTER", "SCATTERV", "REDUCE"}
ROOT_NONE = 0xFFFFFFFF
P2P_SEND = ("MpiSend", "MpiIsend")
P2P_RECV = ("MpiRecv", "MpiIrecv")
MPI_EVENTS = {"MpiSend", "MpiIsend", "MpiIsendComplete", "MpiIrecvRequest", "MpiRecv", "MpiIrecv",
              "MpiRequestTest", "MpiRequestCancelled", "MpiCollectiveBegin", "MpiCollectiveEnd",
              "NonBlockingCollectiveRequest", "NonBlockingCollectiveComplete"}


# ---------------------------------------------------------------------------------------------
# helpers

def enum_name(v):
    """'ALLREDUCE' for CollectiveOp.ALLREDUCE, whatever the binding's enum type looks like."""
    s = str(v)
    return s.split(".")[-1] if "." in s else s


def attr(obj, *names, default=None):
    for n in names:
        if hasattr(obj, n):
            return getattr(obj, n)
    return default


def as_int(v):
    if v is None:
        return None
    if hasattr(v, "value"):
        v = v.value
    try:
        return int(v)
    except (TypeError, ValueError):
        return None


def ref(d):
    return attr(d, "_ref", "ref")


class Tap:
    def __init__(self):
        self.n = 0
        self.failed = 0

    def result(self, name, errors, notes=()):
        self.n += 1
        for note in notes:
            print("# " + note)
        if errors:
            self.failed += 1
            print(f"not ok {self.n} - {name}")
            for e in errors[:MAX_DETAILS]:
                print(f"#   {e}")
            if len(errors) > MAX_DETAILS:
                print(f"#   ... and {len(errors) - MAX_DETAILS} more")
        else:
            print(f"ok {self.n} - {name}")
        sys.stdout.flush()

    def skip(self, name, why):
        self.n += 1
        print(f"ok {self.n} - {name} # SKIP {why}")

    def finish(self):
        print(f"1..{self.n}")
        if self.failed:
            print(f"# {self.failed} of {self.n} checks failed")
        return 1 if self.failed else 0


def find_anchor(path):
    if os.path.isfile(path):
        return path
    cand = os.path.join(path, "traces.otf2")
    if os.path.isfile(cand):
        return cand
    if os.path.isdir(path):
        found = sorted(os.path.join(path, f) for f in os.listdir(path) if f.endswith(".otf2")
                       and os.path.isfile(os.path.join(path, f)))
        if len(found) == 1:
            return found[0]
    return None


# ---------------------------------------------------------------------------------------------
# clock offsets and raw timestamps

OFFSET_RE = re.compile(r"^CLOCK_OFFSET\s+(\d+)\s+Time:\s*(\d+),\s*Offset:\s*([+-]?\d+),\s*StdDev:\s*(\S+)")


def read_clock_offsets(defs, anchor):
    """{location ref: [(time, offset, stddev), ...]} and how they were obtained."""
    out = collections.defaultdict(list)
    py = attr(defs, "clock_offsets")
    if py:
        try:
            for co in py:
                loc = attr(co, "location")
                out[ref(loc) if loc is not None else None].append(
                    (int(attr(co, "time", "local_time")), int(attr(co, "offset")),
                     float(attr(co, "standard_deviation", "stddev", default=0.0))))
            if out:
                return out, "python3-otf2"
        except (TypeError, ValueError):
            out.clear()
    p = subprocess.run(["otf2-print", "-C", "--silent", anchor], capture_output=True, text=True)
    for line in p.stdout.splitlines():
        m = OFFSET_RE.match(line.strip())
        if m:
            try:
                sd = float(m.group(4).rstrip(","))
            except ValueError:
                sd = 0.0
            out[int(m.group(1))].append((int(m.group(2)), int(m.group(3)), sd))
    for v in out.values():
        v.sort()
    return out, "otf2-print -C"


def interp_offset(offs, t):
    """Offset at local time t: linear between the records, the end segments extended (what the
    OTF2 event reader does; a single record is a constant offset)."""
    if not offs:
        return 0.0
    if len(offs) == 1:
        return float(offs[0][1])
    times = [o[0] for o in offs]
    i = bisect.bisect_right(times, t) - 1
    i = max(0, min(i, len(offs) - 2))
    (t0, o0, _), (t1, o1, _) = offs[i], offs[i + 1]
    if t1 == t0:
        return float(o1)
    return o0 + (o1 - o0) * (t - t0) / (t1 - t0)


def stddev_at(offs, t):
    if not offs:
        return 0.0
    times = [o[0] for o in offs]
    i = max(0, min(bisect.bisect_right(times, t) - 1, len(offs) - 1))
    sd = [abs(offs[i][2])]
    if i + 1 < len(offs):
        sd.append(abs(offs[i + 1][2]))
    return max(x for x in sd if x == x) if any(x == x for x in sd) else 0.0  # NaN-safe


def read_raw_times(anchor, loc_refs):
    """Timestamps per location WITHOUT clock offsets (a local event reader with
    OTF2_EvtReader_ApplyClockOffsets(false)), in file order. None if the binding cannot."""
    try:
        import _otf2
    except ImportError:
        return None
    out = collections.defaultdict(list)
    keep = []  # the ctypes callbacks must outlive the reading
    h = None
    try:
        h = _otf2.Reader_Open(anchor)
        _otf2.Reader_SetSerialCollectiveCallbacks(h)
        for lr in loc_refs:
            _otf2.Reader_SelectLocation(h, lr)
        defs_open = True
        try:
            _otf2.Reader_OpenDefFiles(h)
        except Exception:
            defs_open = False
        _otf2.Reader_OpenEvtFiles(h)
        if defs_open:
            for lr in loc_refs:
                dr = _otf2.Reader_GetDefReader(h, lr)
                if dr:
                    _otf2.Reader_ReadAllLocalDefinitions(h, dr)
                    _otf2.Reader_CloseDefReader(h, dr)
            _otf2.Reader_CloseDefFiles(h)
        setters = [n for n in dir(_otf2) if n.startswith("EvtReaderCallbacks_Set") and n.endswith("Callback")
                   and n != "EvtReaderCallbacks_SetUnknownCallback"]
        for lr in loc_refs:
            er = _otf2.Reader_GetEvtReader(h, lr)
            _otf2.EvtReader_ApplyClockOffsets(er, False)
            cbs = _otf2.EvtReaderCallbacks_New()
            lst = out[lr]
            for s in setters:
                # one function object per callback: the binding keeps each ctypes trampoline alive
                # only through an attribute of the Python function it wraps
                def cb(location, time, *rest, _lst=lst):
                    _lst.append(int(time))

                keep.append(cb)
                getattr(_otf2, s)(cbs, cb)
            _otf2.Reader_RegisterEvtCallbacks(h, er, cbs, None)
            _otf2.Reader_ReadAllLocalEvents(h, er)
            _otf2.EvtReaderCallbacks_Delete(cbs)
            _otf2.Reader_CloseEvtReader(h, er)
        _otf2.Reader_CloseEvtFiles(h)
    except Exception as e:  # pragma: no cover - depends on the binding
        sys.stderr.write(f"check_mpi_trace: raw timestamp reader failed ({e}); inverting the offsets instead\n")
        return None
    finally:
        if h is not None:
            try:
                _otf2.Reader_Close(h)
            except Exception:
                pass
    return out


# ---------------------------------------------------------------------------------------------
# the trace model

class Trace:
    def __init__(self):
        self.defs = None
        self.res = 1
        self.locations = []
        self.loc_by_ref = {}
        self.events = collections.defaultdict(list)  # loc ref -> [(kind, corrected time, event, stack top)]
        self.read_error = None


def load(anchor):
    import otf2
    tr = Trace()
    tr.patch_note = patch_intercomm_reading()
    try:
        with otf2.reader.open(anchor) as rd:
            tr.defs = rd.definitions
            tr.res = rd.timer_resolution or 1
            tr.locations = list(tr.defs.locations)
            tr.loc_by_ref = {ref(l): l for l in tr.locations}
            stacks = collections.defaultdict(list)
            for loc, ev in rd.events:
                lr = ref(loc)
                kind = type(ev).__name__
                st = stacks[lr]
                top = st[-1] if st else None
                tr.events[lr].append((kind, int(ev.time), ev, top))
                if kind == "Enter":
                    st.append((ev.region, int(ev.time), len(tr.events[lr]) - 1))
                elif kind == "Leave" and st and region_key(st[-1][0]) == region_key(ev.region):
                    st.pop()
    except Exception as e:
        tr.read_error = f"{type(e).__name__}: {e}"
    return tr


def region_key(r):
    return ref(r) if r is not None else None


def is_mpi_paradigm(region):
    return region is not None and enum_name(attr(region, "paradigm", default="")) == "MPI"


# ---------------------------------------------------------------------------------------------
# checks

class Checker:
    def __init__(self, args, tap):
        self.a = args
        self.tap = tap
        self.tr = None
        self.anchor = None
        self.raw = {}        # loc ref -> [raw times]
        self.corr = {}       # loc ref -> [corrected times]
        self.offsets = {}
        self.rank_of_group = {}
        self.rank_of_loc = {}
        self.world = None
        self.world_locs = []
        self.comm_info = {}  # comm ref -> dict

    # -- basics ---------------------------------------------------------------------------------
    def off_periods(self):
        """rank -> [(start, end)] of the times its MPI location did not measure (--windows)."""
        per_rank = {}
        for r, loc in enumerate(self.world_locs):
            lr = ref(loc)
            evs = self.tr.events.get(lr, [])
            if not evs:
                per_rank[r] = [(float("-inf"), float("inf"))]
                continue
            spans, start = [], None
            for i, (kind, t, ev, top) in enumerate(evs):
                if kind != "MeasurementOnOff":
                    continue
                if "OFF" in str(ev.measurement_mode):
                    start = self.corr[lr][i]
                elif start is not None:
                    spans.append((start, self.corr[lr][i]))
                    start = None
            if start is not None:
                spans.append((start, float("inf")))
            per_rank[r] = spans
        return per_rank

    def unmeasured(self, rank, lo=float("-inf"), hi=float("inf")):
        """whether rank did not measure at some moment in [lo, hi]"""
        return any(a < hi and b > lo for a, b in self.off.get(rank, []))

    def run(self):
        a, tap = self.a, self.tap
        self.anchor = find_anchor(a.archive)
        if not self.anchor:
            tap.result("archive", [f"no traces.otf2 (anchor file) at {a.archive}"])
            return
        tap.result("archive", [], [f"archive {self.anchor}"])
        p = subprocess.run(["otf2-print", "--silent", "-Werror", self.anchor], capture_output=True, text=True)
        tap.result("otf2-print --silent -Werror accepts the archive",
                   [] if p.returncode == 0 else
                   [f"rc {p.returncode}: {l}" for l in (p.stderr + p.stdout).strip().splitlines()[:10]] or
                   [f"rc {p.returncode}"])
        self.tr = load(self.anchor)
        if self.tr.read_error:
            tap.result("python3-otf2 reads all definitions and events", [self.tr.read_error])
            return
        nev = sum(len(v) for v in self.tr.events.values())
        declared = sum(as_int(attr(l, "number_of_events", default=0)) or 0 for l in self.tr.locations)
        notes = [f"{len(self.tr.locations)} locations, {nev} events read"]
        if getattr(self.tr, "patch_note", None) and any(type(c).__name__ == "InterComm" for c in self.tr.defs.comms):
            notes.append(self.tr.patch_note)
        if declared and declared != nev:
            notes.append(f"(the Location definitions declare {declared} events)")
        tap.result("python3-otf2 reads all definitions and events", [], notes)

        self.check_ranks()
        self.check_comms()
        self.prepare_times()
        self.check_timestamps()
        self.check_nesting()
        self.check_regions()
        self.off = self.off_periods() if a.windows else {}
        pairs = self.check_p2p()
        self.check_requests()
        instances = self.check_collectives()
        self.check_clock_offsets()
        self.check_causality(pairs, instances)
        if a.devices:
            self.check_devices()

    def prepare_times(self):
        tr = self.tr
        self.offsets, self.offset_source = read_clock_offsets(tr.defs, self.anchor)
        refs = sorted(tr.events.keys())
        raw = read_raw_times(self.anchor, refs) if refs else {}
        self.raw_note = []
        self.applied_by_us = False
        for lr in refs:
            corr = [e[1] for e in tr.events[lr]]
            offs = self.offsets.get(lr, [])
            r = raw.get(lr) if raw is not None else None
            if r is None or len(r) != len(corr):
                # invert corrected = raw + offset(raw) (two fixed-point steps suffice: |slope| << 1)
                r = []
                for c in corr:
                    t = c - interp_offset(offs, c)
                    t = c - interp_offset(offs, t)
                    r.append(int(round(t)))
                self.raw_note.append(lr)
            elif offs and all(c == x for c, x in zip(corr, r)) and any(o[1] for o in offs):
                # this reader did not apply the offsets: do it here
                corr = [int(round(x + interp_offset(offs, x))) for x in r]
                self.applied_by_us = True
            self.raw[lr] = r
            self.corr[lr] = corr

    def ev_time(self, lr, idx, raw=False):
        return (self.raw if raw else self.corr)[lr][idx]

    def loc_name(self, lr):
        l = self.tr.loc_by_ref.get(lr)
        if l is None:
            return f"location {lr}"
        r = self.rank_of_loc.get(lr)
        return f"'{l.name}' (location {lr}{'' if r is None else f', rank {r}'})"

    def check_timestamps(self):
        errs = []
        for lr in sorted(self.tr.events):
            for name, ts in (("with offsets", self.corr[lr]), ("raw", self.raw[lr])):
                for i in range(1, len(ts)):
                    if ts[i] < ts[i - 1]:
                        errs.append(f"{self.loc_name(lr)}: {name} timestamp {ts[i]} of event {i} "
                                    f"({self.tr.events[lr][i][0]}) is before {ts[i - 1]}")
                        break
        notes = []
        if self.applied_by_us:
            notes.append("the reader did not apply the clock offsets; the checker applies them")
        if self.raw_note:
            notes.append(f"raw timestamps of {len(self.raw_note)} location(s) reconstructed from the offsets")
        self.tap.result("timestamps never decrease on any location", errs, notes)

    def check_nesting(self):
        errs = []
        for lr, evs in sorted(self.tr.events.items()):
            st = []
            in_coll = None
            for i, (kind, t, ev, top) in enumerate(evs):
                if kind == "Enter":
                    st.append(ev.region)
                elif kind == "Leave":
                    if not st:
                        errs.append(f"{self.loc_name(lr)}: Leave '{ev.region.name}' at {t} with no region open")
                    elif region_key(st[-1]) != region_key(ev.region):
                        errs.append(f"{self.loc_name(lr)}: Leave '{ev.region.name}' at {t} while "
                                    f"'{st[-1].name}' is the innermost open region")
                        st.pop()
                    else:
                        st.pop()
                elif kind == "MpiCollectiveBegin":
                    if in_coll is not None:
                        errs.append(f"{self.loc_name(lr)}: MpiCollectiveBegin at {t} inside another one (from {in_coll})")
                    in_coll = t
                elif kind == "MpiCollectiveEnd":
                    if in_coll is None:
                        errs.append(f"{self.loc_name(lr)}: MpiCollectiveEnd at {t} without MpiCollectiveBegin")
                    in_coll = None
            if st:
                errs.append(f"{self.loc_name(lr)}: {len(st)} region(s) never left: {[r.name for r in st][:4]}")
            if in_coll is not None:
                errs.append(f"{self.loc_name(lr)}: MpiCollectiveBegin at {in_coll} never ended")
        self.tap.result("Enter/Leave nest and balance on every location", errs)

    # -- ranks and communicators ------------------------------------------------------------
    def check_ranks(self):
        defs, n = self.tr.defs, self.a.ranks
        errs, notes = [], []
        comms = list(defs.comms)
        worlds = [c for c in comms if c.name == "MPI_COMM_WORLD"]
        if len(worlds) != 1:
            errs.append(f"{len(worlds)} communicators named MPI_COMM_WORLD")
        if worlds:
            self.world = worlds[0]
            grp = attr(self.world, "group")
            self.world_locs = list(attr(grp, "members", default=()) or ())
            if len(self.world_locs) != n:
                errs.append(f"MPI_COMM_WORLD has {len(self.world_locs)} members, expected {n}")
            for r, loc in enumerate(self.world_locs):
                g = attr(loc, "group")
                if g is None:
                    errs.append(f"world rank {r}: member {loc} is not a location")
                    continue
                if ref(g) in self.rank_of_group:
                    errs.append(f"world ranks {self.rank_of_group[ref(g)]} and {r} share location group '{g.name}'")
                self.rank_of_group[ref(g)] = r
        pgroups = [g for g in defs.location_groups
                   if enum_name(attr(g, "location_group_type", default="PROCESS")) == "PROCESS"]
        if len(pgroups) != n:
            errs.append(f"{len(pgroups)} PROCESS location groups ({[g.name for g in pgroups][:8]}), expected {n}")
        if not self.world:
            # fall back to the names, so that the other checks can still say something useful
            for g in pgroups:
                m = re.search(r"(\d+)\s*$", g.name)
                if m:
                    self.rank_of_group[ref(g)] = int(m.group(1))
        for g in pgroups:
            r = self.rank_of_group.get(ref(g))
            if r is None:
                errs.append(f"PROCESS location group '{g.name}' holds no MPI_COMM_WORLD location")
            elif not re.search(rf"(?<!\d){r}(?!\d)", g.name):
                errs.append(f"location group of world rank {r} is named '{g.name}' (expected 'MPI Rank {r}')")
        ranks_seen = sorted(self.rank_of_group.values())
        if ranks_seen != list(range(n)) and not errs:
            errs.append(f"process groups map to ranks {ranks_seen}, expected 0..{n - 1}")
        # every location -> rank (accelerator groups through their creating process group)
        for l in self.tr.locations:
            g = attr(l, "group")
            r = self.rank_of_group.get(ref(g)) if g is not None else None
            if r is None and g is not None:
                cg = attr(g, "creating_location_group")
                if cg is not None:
                    r = self.rank_of_group.get(ref(cg))
            if r is not None:
                self.rank_of_loc[ref(l)] = r
        unmapped = [self.loc_name(lr) for lr, evs in self.tr.events.items()
                    if evs and lr not in self.rank_of_loc]
        if unmapped:
            errs.append(f"locations with events that belong to no rank: {unmapped[:6]}")
        per_rank = collections.Counter(self.rank_of_loc.values())
        notes.append("locations per rank: " + ", ".join(f"{r}: {per_rank[r]}" for r in sorted(per_rank)))
        self.tap.result(f"one process location group per rank ({n} ranks), named after the rank", errs, notes)

    def members_of_group(self, grp):
        """World ranks of a COMM_GROUP/COMM_LOCATIONS group's members; None for COMM_SELF."""
        if grp is None:
            return []
        gt = enum_name(attr(grp, "group_type", default=""))
        if gt == "COMM_SELF":
            return None
        out = []
        for m in attr(grp, "members", default=()) or ():
            try:
                out.append(self.world_locs.index(m))
            except ValueError:
                out.append(("?", m))
        return out

    def check_comms(self):
        defs = self.tr.defs
        errs, notes = [], []
        names = collections.Counter(c.name for c in defs.comms)
        if not names.get("MPI_COMM_WORLD"):
            errs.append("no MPI_COMM_WORLD communicator")
        if not names.get("MPI_COMM_SELF"):
            errs.append("no MPI_COMM_SELF communicator")
        for c in defs.comms:
            info = {"comm": c, "name": c.name, "inter": False}
            if type(c).__name__ == "InterComm":
                info["inter"] = True
                info["a"] = self.members_of_group(attr(c, "groupA", "group_a"))
                info["b"] = self.members_of_group(attr(c, "groupB", "group_b"))
                for side in ("a", "b"):
                    bad = [m for m in info[side] or [] if isinstance(m, tuple)]
                    if bad:
                        errs.append(f"intercommunicator '{c.name}': group {side.upper()} has members that are not world "
                                    f"locations: {bad[:3]}")
            else:
                grp = attr(c, "group")
                info["members"] = self.members_of_group(grp)
                info["paradigm"] = enum_name(attr(grp, "paradigm", default=""))
                info["self"] = info["members"] is None
                if info["members"] is not None:
                    bad = [m for m in info["members"] if isinstance(m, tuple)]
                    if bad and info["paradigm"] == "MPI":
                        errs.append(f"communicator '{c.name}': group members that are not MPI_COMM_WORLD locations: "
                                    f"{bad[:3]}")
                    if len(set(map(str, info["members"]))) != len(info["members"]):
                        errs.append(f"communicator '{c.name}': a rank is listed twice: {info['members']}")
            self.comm_info[ref(c)] = info
        if self.world is not None:
            wm = self.comm_info[ref(self.world)].get("members")
            if wm != list(range(self.a.ranks)):
                errs.append(f"MPI_COMM_WORLD members {wm}, expected world ranks 0..{self.a.ranks - 1}")
        # who uses which communicator
        used = collections.defaultdict(set)
        for lr, evs in self.tr.events.items():
            for kind, t, ev, top in evs:
                c = attr(ev, "communicator")
                if c is not None and kind in MPI_EVENTS:
                    used[ref(c)].add(self.rank_of_loc.get(lr))
        for cref, ranks in sorted(used.items()):
            info = self.comm_info.get(cref)
            if info is None:
                errs.append(f"events use communicator {cref}, which has no definition")
                continue
            if info.get("self"):
                continue
            mem = set(info["a"] or []) | set(info["b"] or []) if info["inter"] else set(info["members"] or [])
            outside = sorted(r for r in ranks if r is not None and r not in mem)
            if outside:
                errs.append(f"ranks {outside} record events on '{info['name']}' but its group is {sorted(mem, key=str)}")
        user = [cref for cref in used if self.comm_info.get(cref) and
                self.comm_info[cref]["name"] not in ("MPI_COMM_WORLD", "MPI_COMM_SELF")
                and not self.comm_info[cref].get("self")]
        for cref in sorted(used):
            info = self.comm_info.get(cref)
            if info:
                mem = (f"A={info['a']} B={info['b']}" if info["inter"] else
                       "self" if info.get("self") else str(info["members"]))
                notes.append(f"communicator {cref} '{info['name']}'{' (inter)' if info['inter'] else ''}: "
                             f"members {mem}, used by ranks {sorted(r for r in used[cref] if r is not None)}")
        notes.append(f"{len(user)} user communicator(s) used, {len(self.comm_info)} communicator definitions")
        if self.a.expect_comms is not None and len(user) < self.a.expect_comms:
            errs.append(f"{len(user)} user communicators used, expected at least {self.a.expect_comms}")
        if self.a.expect_comm_defs is not None and len(self.comm_info) != self.a.expect_comm_defs:
            errs.append(f"{len(self.comm_info)} communicator definitions, expected {self.a.expect_comm_defs}: "
                        + ", ".join(f"'{i['name']}' {i.get('members')}" for i in self.comm_info.values()))
        for name, want in self.a.expect_comm_name or []:
            got = [i for i in self.comm_info.values() if i["name"] == name]
            if len(got) != 1:
                errs.append(f"{len(got)} communicator definitions named '{name}', expected 1 (names: "
                            + ", ".join(sorted(repr(i["name"]) for i in self.comm_info.values())) + ")")
            elif got[0].get("members") != want:
                errs.append(f"communicator '{name}': members {got[0].get('members')}, expected world ranks {want}")
            else:
                notes.append(f"communicator '{name}': members {want}, as expected")
        self.tap.result("communicator definitions (WORLD, SELF, members as world ranks)", errs, notes)

    # -- regions ------------------------------------------------------------------------------
    def check_regions(self):
        errs, notes = [], []
        seen = collections.defaultdict(list)
        for r in self.tr.defs.regions:
            key = (r.name, attr(r, "canonical_name"), enum_name(attr(r, "region_role", default="")),
                   enum_name(attr(r, "paradigm", default="")))
            seen[key].append(ref(r))
        for key, refs in seen.items():
            if len(refs) > 1:
                errs.append(f"region '{key[0]}' (role {key[2]}, paradigm {key[3]}) defined {len(refs)} times: {refs[:6]}")
            if not key[0]:
                errs.append(f"region(s) {refs[:4]} without a name")
        entered = collections.defaultdict(set)  # name -> ranks
        bad_ctx = 0
        for lr, evs in self.tr.events.items():
            rank = self.rank_of_loc.get(lr)
            for kind, t, ev, top in evs:
                if kind == "Enter":
                    entered[ev.region.name].add(rank)
                    continue
                if kind not in MPI_EVENTS:
                    continue
                reg = top[0] if top else None
                problem = None
                if reg is None:
                    problem = "outside any region"
                elif not is_mpi_paradigm(reg):
                    problem = f"inside '{reg.name}' (paradigm {enum_name(attr(reg, 'paradigm', default='?'))})"
                else:
                    low = reg.name.lower()
                    if kind == "MpiSend" and "send" not in low:
                        problem = f"inside '{reg.name}'"
                    elif kind == "MpiRecv" and "recv" not in low:
                        problem = f"inside '{reg.name}'"
                    elif kind == "MpiIsend" and "send" not in low and "start" not in low:
                        problem = f"inside '{reg.name}'"
                    elif kind == "MpiIrecvRequest" and "recv" not in low and "start" not in low:
                        problem = f"inside '{reg.name}'"
                    elif kind == "MpiCollectiveEnd":
                        op = enum_name(ev.collective_op)
                        rop = reg.name[4:].upper() if reg.name.upper().startswith("MPI_") else ""
                        if rop in COLL_OPS and rop != op:
                            problem = f"(operation {op}) inside '{reg.name}'"
                if problem:
                    bad_ctx += 1
                    if bad_ctx <= MAX_DETAILS:
                        errs.append(f"{self.loc_name(lr)}: {kind} at {t} {problem}")
        if bad_ctx > MAX_DETAILS:
            errs.append(f"... {bad_ctx} MPI events in a wrong region context in all")
        all_ranks = set(range(self.a.ranks))
        for spec in self.a.expect_region or []:
            name, _, rs = spec.partition("@")
            want = {int(x) for x in rs.split(",") if x != ""} if rs else all_ranks
            got = entered.get(name, set())
            missing = sorted(want - got)
            if missing:
                errs.append(f"region '{name}' is never entered on rank(s) {missing} (entered on {sorted(r for r in got if r is not None)})")
            else:
                notes.append(f"'{name}' entered on ranks {sorted(r for r in got if r is not None)}")
        mpi_regions = sorted({r.name for r in self.tr.defs.regions if is_mpi_paradigm(r)})
        notes.append(f"{len(mpi_regions)} MPI regions defined: {' '.join(mpi_regions[:40])}"
                     f"{' ...' if len(mpi_regions) > 40 else ''}")
        self.tap.result("regions unified; MPI events inside fitting MPI regions; expected regions on every rank",
                        errs, notes)

    # -- point to point ------------------------------------------------------------------------
    def peer_world(self, info, my_rank, peer):
        """World rank of `peer` (a rank in the communicator, remote group for intercomms) as seen
        by world rank my_rank; my rank in the communicator. (None, reason) on failure."""
        if info is None:
            return None, None, "undefined communicator"
        if info["inter"]:
            a, b = info["a"] or [], info["b"] or []
            if my_rank in a:
                local, remote = a, b
            elif my_rank in b:
                local, remote = b, a
            else:
                return None, None, f"rank {my_rank} is in neither group of '{info['name']}'"
        elif info.get("self"):
            local = remote = [my_rank]
        else:
            local = remote = info["members"] or []
            if my_rank not in local:
                return None, None, f"rank {my_rank} is not a member of '{info['name']}' {local}"
        if peer is None or not (0 <= peer < len(remote)):
            return None, None, f"peer rank {peer} outside '{info['name']}' (size {len(remote)})"
        w = remote[peer]
        if isinstance(w, tuple):
            return None, None, f"peer rank {peer} of '{info['name']}' is not a world location"
        return w, local.index(my_rank), None

    def check_p2p(self):
        errs, notes = [], []
        sends = collections.defaultdict(list)  # (comm, src, dst, tag) -> [msg]
        recvs = collections.defaultdict(list)
        post_time = {}  # (loc, request) -> (time, idx) of the open Irecv request
        for lr, evs in self.tr.events.items():
            me = self.rank_of_loc.get(lr)
            for idx, (kind, t, ev, top) in enumerate(evs):
                if kind == "MpiIrecvRequest":
                    post_time[(lr, as_int(ev.request_id))] = idx
                    continue
                if kind not in P2P_SEND and kind not in P2P_RECV:
                    continue
                comm = ev.communicator
                info = self.comm_info.get(ref(comm))
                tag, nbytes = as_int(ev.msg_tag), as_int(ev.msg_length)
                if kind in P2P_SEND:
                    dst, _, why = self.peer_world(info, me, as_int(ev.receiver))
                    if why:
                        errs.append(f"{self.loc_name(lr)}: {kind} at {t}: {why}")
                        continue
                    sends[(ref(comm), me, dst, tag)].append(
                        {"loc": lr, "idx": idx, "bytes": nbytes, "kind": kind, "order": t})
                else:
                    src, _, why = self.peer_world(info, me, as_int(ev.sender))
                    if why:
                        errs.append(f"{self.loc_name(lr)}: {kind} at {t}: {why}")
                        continue
                    order_idx = idx
                    if kind == "MpiIrecv":
                        order_idx = post_time.pop((lr, as_int(ev.request_id)), idx)
                    elif top is not None:
                        order_idx = top[2]  # the Enter of the receive call
                    recvs[(ref(comm), src, me, tag)].append(
                        {"loc": lr, "idx": idx, "bytes": nbytes, "kind": kind, "order": self.corr[lr][order_idx]})
        pairs = []
        per_ct = collections.defaultdict(lambda: [0, 0])
        unmatched_s = unmatched_r = excused = 0
        truncated_tail = [0, 0]
        for key in sorted(set(sends) | set(recvs), key=str):
            ss = sorted(sends.get(key, []), key=lambda m: m["order"])
            rr = sorted(recvs.get(key, []), key=lambda m: m["order"])
            used = [False] * len(rr)
            first = 0  # first unused receive: keeps the common in-order case linear
            last_s = last_r = -1  # the last matched send / receive of this key
            tail_s = []
            for si, s in enumerate(ss):
                while first < len(rr) and used[first]:
                    first += 1
                j = next((j for j in range(first, len(rr)) if not used[j] and rr[j]["bytes"] == s["bytes"]), None)
                if j is None and self.a.truncated:
                    tail_s.append(si)
                    continue
                if j is None:
                    if self.a.windows and self.unmeasured(key[2], lo=self.corr[s["loc"]][s["idx"]]):
                        excused += 1  # the receiver stopped measuring after this send
                        continue
                    unmatched_s += 1
                    if unmatched_s <= MAX_DETAILS:
                        errs.append(f"unmatched {s['kind']}: {self.comm_name(key[0])} rank {key[1]} -> {key[2]} tag "
                                    f"{key[3]}, {s['bytes']} bytes at {self.corr[s['loc']][s['idx']]} "
                                    f"({len(rr)} receive(s) with this key: bytes {[r['bytes'] for r in rr][:5]})")
                    continue
                used[j] = True
                last_s, last_r = si, max(last_r, j)
                pairs.append((s, rr[j], key))
                pc = per_ct[(key[0], key[3])]
                pc[0] += 1
                pc[1] += s["bytes"] or 0
            if self.a.truncated:
                # a salvaged job: messages may be missing only after the last matched one
                holes_s = [si for si in tail_s if si < last_s]
                holes_r = [j for j in range(len(rr)) if not used[j] and j < last_r]
                for si in holes_s[:MAX_DETAILS]:
                    errs.append(f"{self.comm_name(key[0])} rank {key[1]} -> {key[2]} tag {key[3]}: send #{si} unmatched "
                                f"before matched ones (a hole, not a truncation)")
                for j in holes_r[:MAX_DETAILS]:
                    errs.append(f"{self.comm_name(key[0])} rank {key[1]} -> {key[2]} tag {key[3]}: receive #{j} unmatched "
                                f"before matched ones (a hole, not a truncation)")
                truncated_tail[0] += len(tail_s) - len(holes_s)
                truncated_tail[1] += sum(1 for j in range(len(rr)) if not used[j]) - len(holes_r)
                continue
            for j, r in enumerate(rr):
                if not used[j]:
                    if self.a.windows and self.unmeasured(key[1], hi=self.corr[r["loc"]][r["idx"]]):
                        excused += 1  # the sender did not measure at some time before this receive
                        continue
                    unmatched_r += 1
                    if unmatched_r <= MAX_DETAILS:
                        errs.append(f"unmatched {r['kind']}: {self.comm_name(key[0])} rank {key[1]} -> {key[2]} tag "
                                    f"{key[3]}, {r['bytes']} bytes at {self.corr[r['loc']][r['idx']]}")
        if unmatched_s + unmatched_r > MAX_DETAILS:
            errs.append(f"{unmatched_s} unmatched sends, {unmatched_r} unmatched receives in all")
        lines = [f"{self.comm_name(c)} tag {tag}: {cnt} messages, {b} bytes"
                 for (c, tag), (cnt, b) in sorted(per_ct.items(), key=lambda kv: (str(kv[0][0]), kv[0][1]))]
        if len(lines) > 40:
            lines = lines[:40] + [f"... {len(lines) - 40} more (communicator, tag) pairs"]
        notes += lines
        notes.append(f"{len(pairs)} messages matched")
        if self.a.windows:
            notes.append(f"{excused} message ends whose other end was not measuring (--windows)")
        if self.a.truncated:
            notes.append(f"truncated job: {truncated_tail[0]} send(s) and {truncated_tail[1]} receive(s) "
                         f"unmatched at the ends of their sequences")
        if self.a.expect_messages is not None and len(pairs) != self.a.expect_messages:
            errs.append(f"{len(pairs)} messages matched, the program sends exactly {self.a.expect_messages}")
        self.tap.result("every send matched by exactly one receive (communicator, tag, bytes, ranks)", errs, notes)
        return pairs

    def comm_name(self, cref):
        info = self.comm_info.get(cref)
        return f"'{info['name']}'<{cref}>" if info else f"comm <{cref}>"

    # -- requests -----------------------------------------------------------------------------
    def check_requests(self):
        errs = []
        counts = collections.Counter()
        for lr, evs in self.tr.events.items():
            active = {}  # request id -> (kind, time)
            nbc = {}
            for kind, t, ev, top in evs:
                rid = as_int(attr(ev, "request_id"))
                where = f"{self.loc_name(lr)}: {kind} (request {rid}) at {t}"
                if kind in ("MpiIsend", "MpiIrecvRequest"):
                    if rid in active:
                        errs.append(f"{where}: request still active from {active[rid][0]} at {active[rid][1]}")
                    active[rid] = ("isend" if kind == "MpiIsend" else "irecv", t)
                elif kind == "MpiIsendComplete":
                    if active.get(rid, ("",))[0] != "isend":
                        errs.append(f"{where}: no active MpiIsend with this request id")
                    else:
                        del active[rid]
                        counts["isend"] += 1
                elif kind == "MpiIrecv":
                    if active.get(rid, ("",))[0] != "irecv":
                        errs.append(f"{where}: no active MpiIrecvRequest with this request id")
                    else:
                        del active[rid]
                        counts["irecv"] += 1
                elif kind == "MpiRequestCancelled":
                    if rid in active:
                        del active[rid]
                        counts["cancelled"] += 1
                    elif rid in nbc:
                        del nbc[rid]
                        counts["cancelled"] += 1
                    else:
                        errs.append(f"{where}: no active request with this id")
                elif kind == "MpiRequestTest":
                    if rid not in active and rid not in nbc:
                        errs.append(f"{where}: no active request with this id")
                    counts["tests"] += 1
                elif kind == "NonBlockingCollectiveRequest":
                    if rid in nbc or rid in active:
                        errs.append(f"{where}: request id already active")
                    nbc[rid] = t
                elif kind == "NonBlockingCollectiveComplete":
                    if rid not in nbc:
                        errs.append(f"{where}: no active NonBlockingCollectiveRequest with this id")
                    else:
                        del nbc[rid]
                        counts["nbc"] += 1
            if self.a.truncated:  # the job died with these in flight
                counts["active"] += len(active) + len(nbc)
                continue
            for rid, (k, t) in sorted(active.items(), key=str):
                errs.append(f"{self.loc_name(lr)}: {'MpiIsend' if k == 'isend' else 'MpiIrecvRequest'} request {rid} "
                            f"at {t} never completed or cancelled")
            for rid, t in sorted(nbc.items(), key=str):
                errs.append(f"{self.loc_name(lr)}: NonBlockingCollectiveRequest {rid} at {t} never completed")
        note = (f"completed: {counts['isend']} isend, {counts['irecv']} irecv, {counts['nbc']} non-blocking "
                f"collectives; {counts['cancelled']} cancelled; {counts['tests']} unsuccessful tests"
                + (f"; {counts['active']} still active at the end (truncated job)" if self.a.truncated else ""))
        self.tap.result("non-blocking requests complete on their location (or are cancelled)", errs, [note])

    # -- collectives ---------------------------------------------------------------------------
    def check_collectives(self):
        errs, notes = [], []
        seqs = collections.defaultdict(lambda: collections.defaultdict(list))  # comm -> rank -> [rec]
        for lr, evs in self.tr.events.items():
            me = self.rank_of_loc.get(lr)
            nbc_req = {}
            for idx, (kind, t, ev, top) in enumerate(evs):
                if kind == "NonBlockingCollectiveRequest":
                    nbc_req[as_int(ev.request_id)] = t
                    continue
                if kind not in ("MpiCollectiveEnd", "NonBlockingCollectiveComplete"):
                    continue
                order = t if kind == "MpiCollectiveEnd" else nbc_req.pop(as_int(ev.request_id), t)
                rec = {"order": order, "op": enum_name(ev.collective_op), "root": as_int(ev.root),
                       "sent": as_int(ev.size_sent), "recv": as_int(ev.size_received), "loc": lr,
                       "enter": self.corr[lr][top[2]] if (top is not None and kind == "MpiCollectiveEnd") else None,
                       "enter_idx": top[2] if (top is not None and kind == "MpiCollectiveEnd") else None,
                       "leave": t, "idx": idx, "nb": kind != "MpiCollectiveEnd"}
                seqs[ref(ev.communicator)][me].append(rec)
        instances = []
        for cref in sorted(seqs, key=str):
            info = self.comm_info.get(cref)
            name = self.comm_name(cref)
            per_rank = seqs[cref]
            for r in per_rank:
                per_rank[r].sort(key=lambda x: x["order"])
            if info is None or info.get("self"):
                notes.append(f"{name}: {sum(len(v) for v in per_rank.values())} collectives (per-rank communicator, "
                             f"not compared)")
                continue
            members = (sorted(set(info["a"] or []) | set(info["b"] or []), key=str) if info["inter"]
                       else list(info["members"] or []))
            for r in per_rank:
                if r not in members:
                    errs.append(f"{name}: rank {r} records {len(per_rank[r])} collectives but is not a member {members}")
            if self.a.windows:  # the members that recorded none did not measure (or were not selected)
                members = [r for r in members if per_rank.get(r)]
            ref_rank = members[0] if members else None
            if self.a.truncated and members:  # compare with the longest; every member a prefix of it
                ref_rank = max(members, key=lambda r: len(per_rank.get(r, [])))
            ref_seq = per_rank.get(ref_rank, [])
            if self.a.windows and members:
                # the longest sequence is the job's; every other member's is a subsequence of it
                # that lacks only collectives it was not measuring for
                ref_rank = max(members, key=lambda r: len(per_rank.get(r, [])))
                full = per_rank[ref_rank]
                span = lambda x: (x["enter"] if x["enter"] is not None else x["order"], x["leave"])
                for r in members:
                    seq, k = per_rank[r], 0
                    for x in seq:
                        while k < len(full) and (full[k]["op"], full[k]["root"]) != (x["op"], x["root"]):
                            if not self.unmeasured(r, *span(full[k])):
                                errs.append(f"{name}: rank {r} lacks {full[k]['op']} (#{k} of rank {ref_rank}) "
                                            f"although it was measuring then")
                            k += 1
                        if k == len(full):
                            errs.append(f"{name}: rank {r}'s collectives ({self.op_summary(seq)}) are not a "
                                        f"subsequence of rank {ref_rank}'s ({self.op_summary(full)})")
                            break
                        k += 1
                    for y in full[k:]:
                        if not self.unmeasured(r, *span(y)):
                            errs.append(f"{name}: rank {r} lacks {y['op']} of rank {ref_rank} although it was measuring")
                notes.append(f"{name}: rank {ref_rank} records {self.op_summary(full)}; the others a part of it (--windows)")
                continue
            for r in members:
                seq = per_rank.get(r, [])
                if self.a.truncated and len(seq) < len(ref_seq):
                    seq_cmp = ref_seq[:len(seq)]
                else:
                    seq_cmp = ref_seq
                if len(seq) != len(seq_cmp):
                    errs.append(f"{name}: rank {r} records {len(seq)} collectives, rank {ref_rank} {len(ref_seq)} "
                                f"({self.op_summary(seq)} vs {self.op_summary(ref_seq)})")
                    continue
                for k, (x, y) in enumerate(zip(seq, seq_cmp)):
                    if x["op"] != y["op"]:
                        errs.append(f"{name}: collective #{k} is {x['op']} on rank {r} but {y['op']} on rank {ref_rank}")
                        break
                    if not info["inter"] and x["root"] != y["root"]:
                        errs.append(f"{name}: collective #{k} ({x['op']}) has root {self.root_str(x['root'])} on rank {r} "
                                    f"but {self.root_str(y['root'])} on rank {ref_rank}")
                        break
                    if not info["inter"] and x["op"] in ROOTED and not (
                            x["root"] is not None and 0 <= x["root"] < len(members)):
                        errs.append(f"{name}: collective #{k} ({x['op']}) has root {self.root_str(x['root'])}, "
                                    f"not a rank of the communicator")
                        break
            ref_seq = per_rank.get(ref_rank, [])
            if ref_seq:
                ops = collections.Counter(x["op"] for x in ref_seq)
                notes.append(f"{name}: {len(ref_seq)} collectives per member ({', '.join(f'{o} x{c}' for o, c in sorted(ops.items()))})")
            common = min((len(per_rank.get(r, [])) for r in members), default=0)
            if self.a.truncated:
                notes.append(f"{name}: {common} to {len(ref_seq)} collectives per member (truncated job)")
            if not info["inter"] and (self.a.truncated or all(len(per_rank.get(r, [])) == len(ref_seq) for r in members)):
                for k in range(common):
                    inst = {r: per_rank[r][k] for r in members}
                    if len({i["op"] for i in inst.values()}) == 1:
                        instances.append((cref, k, inst))
        for op, want in self.a.expect_colls or []:  # per rank, over all its communicators
            for r in range(self.a.ranks):
                got = sum(1 for per_rank in seqs.values() for x in per_rank.get(r, []) if x["op"] == op)
                if got != want:
                    errs.append(f"rank {r} records {got} {op} collectives, expected {want} (--expect-colls)")
        self.tap.result("collectives: same operations, order and roots on every member of each communicator",
                        errs, notes)
        self.check_coll_bytes(instances)
        return instances

    @staticmethod
    def op_summary(seq):
        c = collections.Counter(x["op"] for x in seq)
        return ", ".join(f"{o} x{n}" for o, n in sorted(c.items())) or "none"

    @staticmethod
    def root_str(root):
        return "NONE" if root == ROOT_NONE else str(root)

    def check_coll_bytes(self, instances):
        errs = []
        checked = 0
        for cref, k, inst in instances:
            op = next(iter(inst.values()))["op"]
            sent = {r: i["sent"] or 0 for r, i in inst.items()}
            recv = {r: i["recv"] or 0 for r, i in inst.items()}
            what = f"{self.comm_name(cref)} collective #{k} ({op})"
            if op in ("GATHER", "GATHERV", "SCATTER", "SCATTERV", "ALLTOALL", "ALLTOALLV", "ALLTOALLW"):
                checked += 1
                if sum(sent.values()) != sum(recv.values()):
                    errs.append(f"{what}: {sum(sent.values())} bytes sent in all but {sum(recv.values())} received "
                                f"(sent {sent}, received {recv})")
            elif op in ("ALLGATHER", "ALLGATHERV"):
                checked += 1
                total = sum(sent.values())
                bad = {r: b for r, b in recv.items() if b != total}
                if bad:
                    errs.append(f"{what}: ranks received {bad}, expected the {total} bytes sent in all")
            elif op == "BARRIER":
                checked += 1
                if any(sent.values()) or any(recv.values()):
                    errs.append(f"{what}: barrier with bytes (sent {sent}, received {recv})")
            elif op in ("ALLREDUCE", "REDUCE_SCATTER_BLOCK", "SCAN"):
                checked += 1
                if len(set(sent.values())) > 1:
                    errs.append(f"{what}: different send sizes {sent}")
        self.tap.result("collective byte counts consistent across members", errs,
                        [f"{checked} collective instances checked"])

    # -- clocks ---------------------------------------------------------------------------------
    def check_clock_offsets(self):
        errs, notes = [], [f"clock offsets from {self.offset_source}"]
        with_events = [lr for lr, evs in self.tr.events.items() if evs]
        if self.a.truncated:  # a salvaged rank without journal: one MeasurementOnOff, no offsets
            with_events = [lr for lr in with_events if any(e[0] != "MeasurementOnOff" for e in self.tr.events[lr])]
        missing = [self.loc_name(lr) for lr in sorted(with_events) if not self.offsets.get(lr)]
        if missing:
            errs.append(f"{len(missing)} location(s) with events have no ClockOffset: {missing[:8]}")
        single = [lr for lr in with_events if len(self.offsets.get(lr, [])) == 1]
        if single:
            notes.append(f"{len(single)} location(s) have a single ClockOffset (no init/finalize interpolation)")
        per_rank = {}
        for lr in with_events:
            r = self.rank_of_loc.get(lr)
            loc = self.tr.loc_by_ref.get(lr)
            if r is not None and loc is not None and enum_name(loc.type) == "CPU_THREAD" and self.offsets.get(lr):
                per_rank.setdefault(r, self.offsets[lr])
        for r in sorted(per_rank):
            o = per_rank[r]
            notes.append(f"rank {r}: " + ", ".join(f"t={t} offset={off:+d} sd={sd:g}" for t, off, sd in o[:4]))
        if self.a.expect_skew is not None:
            sk = self.a.expect_skew
            tol = self.a.skew_tol_ns * self.tr.res / 1e9
            ns = self.tr.res / 1e9
            if 0 not in per_rank:
                errs.append("no clock offsets for rank 0, cannot compare the skews")
            else:
                for r in sorted(per_rank):
                    if r >= len(sk):
                        continue
                    want = (sk[0] - sk[r]) * ns  # corrected = raw + offset, raw_r = true + skew_r
                    for t, off, sd in per_rank[r]:
                        got = off - interp_offset(per_rank[0], t)
                        # sd is half the shortest ping-pong round trip: a bound on the offset's
                        # error (the peer read its clock inside that round trip), not a guess
                        if abs(got - want) > tol + sd * ns:
                            errs.append(f"rank {r}: offset {got:+.0f} ticks relative to rank 0 at t={t}, expected "
                                        f"{want:+.0f} (injected skew {sk[r]} ns, rank 0 {sk[0]} ns)")
        self.tap.result("clock offsets for every location", errs, notes)

    def check_causality(self, pairs, instances):
        if self.a.no_causality:
            self.tap.skip("causality", "--no-causality")
            return
        res = self.tr.res
        base_tol = self.a.causality_tol_ns * res / 1e9
        errs, notes = [], []
        stats = {"corr": [0, None], "raw": [0, None]}  # violations, worst slack

        def account(which, slack, tol, msg):
            st = stats[which]
            if st[1] is None or slack < st[1]:
                st[1] = slack
            if slack < -tol:
                st[0] += 1
                if which == "corr" and st[0] <= MAX_DETAILS:
                    errs.append(msg)

        for s, r, key in pairs:
            sl, rl = s["loc"], r["loc"]
            tol = base_tol + stddev_at(self.offsets.get(sl), self.raw[sl][s["idx"]]) + \
                stddev_at(self.offsets.get(rl), self.raw[rl][r["idx"]])
            for which, times in (("corr", self.corr), ("raw", self.raw)):
                slack = times[rl][r["idx"]] - times[sl][s["idx"]]
                account(which, slack, tol,
                        f"{r['kind']} on rank {key[2]} completes at {times[rl][r['idx']]}, "
                        f"{-slack} ticks before its {s['kind']} on rank {key[1]} started "
                        f"({self.comm_name(key[0])} tag {key[3]})")
        nb = 0
        for cref, k, inst in instances:
            op = next(iter(inst.values()))["op"]
            if op not in ("BARRIER", "ALLREDUCE") or any(i["nb"] or i["enter_idx"] is None for i in inst.values()):
                continue
            if op == "ALLREDUCE" and any(not i["sent"] for i in inst.values()):
                continue
            nb += 1
            tol = base_tol + max(stddev_at(self.offsets.get(i["loc"]), self.raw[i["loc"]][i["idx"]])
                                 for i in inst.values()) * 2
            for which, times in (("corr", self.corr), ("raw", self.raw)):
                enters = {rk: times[i["loc"]][i["enter_idx"]] for rk, i in inst.items()}
                leaves = {rk: times[i["loc"]][i["idx"]] for rk, i in inst.items()}
                last_in = max(enters, key=enters.get)
                first_out = min(leaves, key=leaves.get)
                slack = leaves[first_out] - enters[last_in]
                account(which, slack, tol,
                        f"{self.comm_name(cref)} {op} #{k}: rank {first_out} finished at {leaves[first_out]}, "
                        f"{-slack} ticks before rank {last_in} entered")
        tol_note = f"tolerance {self.a.causality_tol_ns} ns + offset standard deviations"
        notes.append(f"{len(pairs)} messages and {nb} barrier/allreduce instances checked ({tol_note})")
        for which, label in (("corr", "with offsets"), ("raw", "raw timestamps")):
            v, worst = stats[which]
            notes.append(f"{label}: {v} violation(s), worst slack "
                         f"{'n/a' if worst is None else f'{worst * 1e9 / res:.0f} ns'}")
        if stats["corr"][0] > MAX_DETAILS:
            errs.append(f"{stats['corr'][0]} causality violations in all")
        if self.a.skew_check:
            if not pairs and not nb:
                errs.append("--skew-check: no messages or barriers to check")
            elif stats["raw"][0] == 0:
                errs.append("--skew-check: the RAW timestamps violate causality nowhere, so no skew was injected "
                            "(or the collector wrote corrected timestamps and no offsets): the check proves nothing")
        self.tap.result("causality: receives after sends, collectives after all entered"
                        + (" (skew injected and undone)" if self.a.skew_check else ""), errs, notes)

    # -- devices -------------------------------------------------------------------------------
    def check_devices(self):
        errs, notes = [], []
        streams = collections.defaultdict(list)
        acc_groups = [g for g in self.tr.defs.location_groups
                      if enum_name(attr(g, "location_group_type", default="")) == "ACCELERATOR"]
        if not acc_groups:
            errs.append("no ACCELERATOR location groups")
        for g in acc_groups:
            cg = attr(g, "creating_location_group")
            if cg is None or ref(cg) not in self.rank_of_group:
                errs.append(f"accelerator location group '{g.name}' has no creating process group "
                            f"({'none' if cg is None else cg.name})")
        for l in self.tr.locations:
            if enum_name(l.type) in ("GPU", "ACCELERATOR_STREAM"):
                streams[self.rank_of_loc.get(ref(l))].append(l)
        kernels = collections.defaultdict(collections.Counter)
        for r, locs in streams.items():
            for l in locs:
                for kind, t, ev, top in self.tr.events.get(ref(l), []):
                    if kind == "Enter" and not is_mpi_paradigm(ev.region):
                        role = enum_name(attr(ev.region, "region_role", default=""))
                        if role in ("FUNCTION", "KERNEL"):
                            kernels[r][ev.region.name] += 1
        for r in range(self.a.ranks):
            if self.a.windows and self.off.get(r) == [(float("-inf"), float("inf"))]:
                notes.append(f"rank {r}: no events (not selected)")
                continue
            if not streams.get(r):
                errs.append(f"rank {r} has no ACCELERATOR_STREAM location")
            elif not kernels.get(r):
                errs.append(f"rank {r}: no kernel region entered on its {len(streams[r])} stream(s)")
            else:
                notes.append(f"rank {r}: {len(streams[r])} stream(s), kernels "
                             + ", ".join(f"{k} x{c}" for k, c in sorted(kernels[r].items())))
        if streams.get(None):
            errs.append(f"{len(streams[None])} stream location(s) belong to no rank")
        self.tap.result("device streams with kernels on every rank", errs, notes)


def parse_op_count(v):
    op, _, n = v.partition("=")
    if not op or not n.isdigit():
        raise argparse.ArgumentTypeError(f"--expect-colls {v}: OP=N expected")
    return op.upper(), int(n)


def parse_skews(s):
    try:
        return [int(x) for x in s.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a comma list of integers: {s}")


def parse_comm_name(s):
    name, _, ranks = s.rpartition("=")
    if not name:
        raise argparse.ArgumentTypeError(f"'{s}': expected NAME=R,R,...")
    return name, [int(r) for r in ranks.split(",")]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("archive", help="archive directory (with traces.otf2) or the anchor file")
    ap.add_argument("--ranks", type=int, required=True, help="number of MPI ranks of the job")
    ap.add_argument("--expect-region", action="append", metavar="NAME[@r,r...]",
                    help="region entered on every rank (or on the listed ranks); repeatable")
    ap.add_argument("--expect-comms", type=int, metavar="N", help="at least N user communicators used")
    ap.add_argument("--expect-comm-defs", type=int, metavar="N",
                    help="exactly N communicator definitions (WORLD and SELF included)")
    ap.add_argument("--expect-comm-name", action="append", type=parse_comm_name, metavar="NAME=R,R,...",
                    help="exactly one communicator definition has this name (MPI_Comm_set_name), and its "
                         "members are these world ranks, in this order; repeatable")
    ap.add_argument("--expect-messages", type=int, metavar="N", help="exactly N point-to-point messages matched")
    ap.add_argument("--expect-colls", action="append", type=parse_op_count, metavar="OP=N",
                    help="every rank records exactly N collectives of OTF2 operation OP (e.g. BARRIER=3)")
    ap.add_argument("--skew-check", action="store_true",
                    help="a clock skew was injected: raw timestamps must violate causality, corrected ones not")
    ap.add_argument("--expect-skew", type=parse_skews, metavar="S0,S1,...",
                    help="injected per-rank skews in ns (ZECOLL_CLOCK_SKEW_NS); offsets must undo them")
    ap.add_argument("--skew-tol-ns", type=int, default=1,
                    help="tolerance of --expect-skew beyond each offset's own error bound (default 1 ns: rounding)")
    ap.add_argument("--causality-tol-ns", type=int, default=20000,
                    help="causality tolerance in ns, added to the offsets' standard deviations (default 20 us)")
    ap.add_argument("--no-causality", action="store_true", help="skip the causality check")
    ap.add_argument("--truncated", action="store_true",
                    help="a salvaged archive of a job that died: sequences may end early (see above)")
    ap.add_argument("--devices", action="store_true", help="expect device streams and kernels on every rank")
    ap.add_argument("--windows", action="store_true",
                    help="recording windows or rank selection: excuse what falls where a rank did not measure")
    a = ap.parse_args(argv)
    if a.ranks < 1:
        ap.error("--ranks must be >= 1")
    tap = Tap()
    try:
        import otf2
        otf2.reader  # the binding's reader module must be there
    except (ImportError, AttributeError) as e:
        tap.result("python3-otf2 importable", [f"{e} (run with Debian's /usr/bin/python3)"])
        return tap.finish()
    try:
        Checker(a, tap).run()
    except Exception:  # a checker bug or an unexpected binding: a failure, with the evidence
        import traceback
        tap.result("checker ran to the end", traceback.format_exc().splitlines())
    return tap.finish()


if __name__ == "__main__":
    sys.exit(main())
