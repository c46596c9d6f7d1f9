#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Self-test of check_mpi_trace.py: writes small MPI-like OTF2 archives with python3-otf2 (a
correct 2-rank trace and variants with one defect each) and runs the checker on them. The correct
trace must pass every check; each broken one must fail exactly the checks named in CASES.

  checker_selftest.py [--work DIR] [--keep] [-v] [CASE ...]

Run with /usr/bin/python3. Prints TAP; exit status 1 if any case did not behave as expected.

The correct trace (2 ranks, 1 ns ticks): "MPI Rank r" process groups with a "Master thread"
location each; MPI_COMM_WORLD, MPI_COMM_SELF, a duplicate of world ("dup") and an
intercommunicator between the two ranks; MPI_Send/MPI_Recv both ways, Isend/Irecv + Wait, a
cancelled Irecv, an MPI_Test that fails once, Allreduce/Barrier on world, Bcast/Gather on dup,
an Iallreduce + Wait, a Sendrecv on the intercommunicator, and (optionally) an ACCELERATOR_STREAM
per rank with vector_add kernels. Rank 1's clock runs 3 ms ahead (raw timestamps = true + 3 ms)
and its ClockOffset records (-3 ms, at init and finalize) undo that.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import types

import otf2
import otf2.registry
from otf2.enums import CollectiveOp, GroupType, LocationGroupType, LocationType, Paradigm, RegionRole

try:
    import _otf2
except ImportError:  # pragma: no cover
    _otf2 = None

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT_NONE = 0xFFFFFFFF
MS = 1_000_000
BASE = 1_000_000_000  # raw timestamps start near 1 s, like a monotonic clock

# check names (substrings of the checker's TAP descriptions)
C_PRINT = "otf2-print"
C_TS = "timestamps never decrease"
C_NEST = "Enter/Leave nest"
C_RANKS = "one process location group per rank"
C_COMMS = "communicator definitions"
C_REGIONS = "regions unified"
C_P2P = "every send matched"
C_REQ = "non-blocking requests"
C_COLL = "collectives: same operations"
C_BYTES = "collective byte counts"
C_CLOCK = "clock offsets for every location"
C_CAUSAL = "causality"
C_DEV = "device streams"


class Scenario:
    """Events per rank in TRUE time; written as raw = BASE + true + skew[rank]."""

    def __init__(self, n=2, skew=(0, 3 * MS)):
        self.n = n
        self.skew = list(skew)
        self.ev = {r: [] for r in range(n)}       # rank -> [(true time, name, args)]
        self.dev_ev = {r: [] for r in range(n)}   # device stream events
        self.offsets = {r: None for r in range(n)}  # None: derived from the skew
        self.dev_offsets = {r: None for r in range(n)}
        self.group_names = {r: f"MPI Rank {r}" for r in range(n)}
        self.with_self = True
        self.dup_members = list(range(n))
        self.devices = False
        self.dup_region_on = None  # rank whose MPI_Send uses a duplicate region definition
        self.mapped_rank = None    # rank that records local region/comm ids (reversed) ...
        self.mapping_tables = True  # ... and writes REGION/COMM mapping tables for them
        self.extra_process_groups = 0

    def add(self, r, t, name, *args):
        self.ev[r].append((t, name, args))

    def region(self, r, t0, t1, reg, *inner):
        """Enter reg at t0, the inner events (time, name, args...), Leave at t1."""
        self.add(r, t0, "enter", reg)
        for e in inner:
            self.add(r, e[0], e[1], *e[2:])
        self.add(r, t1, "leave", reg)


def correct_scenario(skew=(0, 3 * MS)):
    s = Scenario(2, skew)
    W, D, I = "world", "dup", "inter"
    for r in range(2):
        s.add(r, 1000, "enter", "main")
        s.region(r, 1000 + r, 2000 + r, "MPI_Init")
    # 0 -> 1, tag 5, 40 bytes
    s.region(0, 10_000, 10_500, "MPI_Send", (10_001, "send", 1, W, 5, 40))
    s.region(1, 9_000, 20_001, "MPI_Recv", (20_000, "recv", 0, W, 5, 40))
    # 1 -> 0, tag 6, 80 bytes
    s.region(1, 30_000, 30_500, "MPI_Send", (30_001, "send", 0, W, 6, 80))
    s.region(0, 25_000, 40_001, "MPI_Recv", (40_000, "recv", 1, W, 6, 80))
    # Isend 0 -> 1 tag 7 (request 1 on both sides), rank 1 tests once before waiting
    s.region(1, 45_000, 45_002, "MPI_Irecv", (45_001, "irecv_request", 1))
    s.region(0, 50_000, 50_002, "MPI_Isend", (50_001, "isend", 1, W, 7, 16, 1))
    s.region(0, 55_000, 55_002, "MPI_Wait", (55_001, "isend_complete", 1))
    s.region(1, 46_000, 46_002, "MPI_Test", (46_001, "request_test", 1))
    s.region(1, 47_000, 60_001, "MPI_Wait", (60_000, "irecv", 0, W, 7, 16, 1))
    # cancelled Irecv on rank 0 (request 2)
    s.region(0, 70_000, 70_002, "MPI_Irecv", (70_001, "irecv_request", 2))
    s.region(0, 70_500, 70_600, "MPI_Cancel")
    s.region(0, 71_000, 71_002, "MPI_Wait", (71_001, "request_cancelled", 2))
    # world collectives
    for r in range(2):
        s.region(r, 80_000 + 100 * r, 90_001 + 50 * r, "MPI_Allreduce",
                 (80_001 + 100 * r, "coll_begin"), (90_000 + 50 * r, "coll_end", "ALLREDUCE", W, ROOT_NONE, 8, 8))
        s.region(r, 100_000 + 300 * r, 110_001 + r, "MPI_Barrier",
                 (100_001 + 300 * r, "coll_begin"), (110_000 + r, "coll_end", "BARRIER", W, ROOT_NONE, 0, 0))
        s.region(r, 111_000, 112_000, "MPI_Comm_dup")
        # dup: Bcast root 1, Gather root 0
        s.region(r, 120_000, 130_001, "MPI_Bcast",
                 (120_001, "coll_begin"), (130_000, "coll_end", "BCAST", D, 1, 8 if r == 1 else 0, 0 if r == 1 else 8))
        s.region(r, 131_000, 135_001, "MPI_Gather",
                 (131_001, "coll_begin"), (135_000, "coll_end", "GATHER", D, 0, 4, 8 if r == 0 else 0))
        # non-blocking Iallreduce (request 10)
        s.region(r, 140_000, 140_002, "MPI_Iallreduce", (140_001, "nbc_request", 10))
        s.region(r, 141_000, 150_001, "MPI_Wait", (150_000, "nbc_complete", "ALLREDUCE", W, ROOT_NONE, 8, 8, 10))
        # intercommunicator exchange: rank 0 (group A) <-> rank 1 (group B), rank 0 of the remote group
        s.region(r, 160_000, 170_001, "MPI_Sendrecv", (160_001, "send", 0, I, 9, 4), (170_000, "recv", 0, I, 9, 4))
        s.region(r, 200_000 + r, 201_000 + r, "MPI_Finalize")
        s.add(r, 202_000, "leave", "main")
    return s


def add_devices(s):
    s.devices = True
    for r in range(s.n):
        for k in range(2):
            t = 5_000 + 20_000 * k
            s.dev_ev[r].append((t, "enter", "vector_add"))
            s.dev_ev[r].append((t + 8_000, "leave", "vector_add"))


REGIONS = {  # name -> role
    "main": RegionRole.FUNCTION, "MPI_Init": RegionRole.ARTIFICIAL, "MPI_Finalize": RegionRole.ARTIFICIAL,
    "MPI_Send": RegionRole.POINT2POINT, "MPI_Recv": RegionRole.POINT2POINT, "MPI_Isend": RegionRole.POINT2POINT,
    "MPI_Irecv": RegionRole.POINT2POINT, "MPI_Wait": RegionRole.POINT2POINT, "MPI_Test": RegionRole.POINT2POINT,
    "MPI_Cancel": RegionRole.POINT2POINT, "MPI_Sendrecv": RegionRole.POINT2POINT,
    "MPI_Allreduce": RegionRole.COLL_ALL2ALL, "MPI_Barrier": RegionRole.BARRIER,
    "MPI_Bcast": RegionRole.COLL_ONE2ALL, "MPI_Gather": RegionRole.COLL_ALL2ONE,
    "MPI_Iallreduce": RegionRole.COLL_ALL2ALL, "MPI_Comm_dup": RegionRole.COLL_OTHER,
}


_extra_global_defs = []
_registry_write = otf2.registry.DefinitionRegistry.write


def _write_with_extras(self, writer):
    _registry_write(self, writer)
    for fn in _extra_global_defs:
        fn(writer)


otf2.registry.DefinitionRegistry.write = _write_with_extras


def write(s, path):
    shutil.rmtree(path, ignore_errors=True)
    _extra_global_defs.clear()
    with otf2.writer.open(path, timer_resolution=1_000_000_000) as w:
        d = w.definitions
        machine = d.system_tree_node("machine")
        node = d.system_tree_node("node 0", parent=machine)
        pgroups, locs = [], []
        for r in range(s.n):
            g = d.location_group(s.group_names[r], location_group_type=LocationGroupType.PROCESS,
                                 system_tree_parent=node)
            pgroups.append(g)
        for k in range(s.extra_process_groups):
            pgroups.append(d.location_group(f"stray process {k}", location_group_type=LocationGroupType.PROCESS,
                                            system_tree_parent=node))
        for r in range(s.n):
            locs.append(d.location("Master thread", type=LocationType.CPU_THREAD, group=pgroups[r]))
        dev_locs = []
        if s.devices:
            for r in range(s.n):
                dn = d.system_tree_node(f"Level Zero Device::{r}", parent=node)
                ag = d.location_group(f"L0 Context {r}", location_group_type=LocationGroupType.ACCELERATOR,
                                      system_tree_parent=dn, creating_location_group=pgroups[r])
                dev_locs.append(d.location(f"L0[{r}:0]", type=LocationType.GPU, group=ag))
        regions = {}
        for name, role in REGIONS.items():
            regions[name] = d.region(name, region_role=role,
                                     paradigm=Paradigm.USER if name == "main" else Paradigm.MPI)
        dup_send = None
        if s.dup_region_on is not None:
            dup_send = d.region("MPI_Send", canonical_name="MPI_Send", description="duplicate",
                                region_role=RegionRole.POINT2POINT, paradigm=Paradigm.MPI)
        kernel = d.region("vector_add", region_role=RegionRole.FUNCTION, paradigm=Paradigm.OPENCL)
        d.group("MPI locations", group_type=GroupType.COMM_LOCATIONS, paradigm=Paradigm.MPI, members=locs)
        wg = d.group("world", group_type=GroupType.COMM_GROUP, paradigm=Paradigm.MPI, members=list(range(s.n)))
        comms = {"world": d.comm("MPI_COMM_WORLD", group=wg)}
        if s.with_self:
            sg = d.group("self", group_type=GroupType.COMM_SELF, paradigm=Paradigm.MPI, members=[])
            comms["self"] = d.comm("MPI_COMM_SELF", group=sg)
        dg = d.group("dup group", group_type=GroupType.COMM_GROUP, paradigm=Paradigm.MPI, members=s.dup_members)
        comms["dup"] = d.comm("dup", group=dg, parent=comms["world"])
        ga = d.group("inter A", group_type=GroupType.COMM_GROUP, paradigm=Paradigm.MPI, members=[0])
        gb = d.group("inter B", group_type=GroupType.COMM_GROUP, paradigm=Paradigm.MPI, members=[1])
        # python3-otf2 3.0.2 can write InterComm definitions no more than it can read them: write the
        # record with the C API after the other definitions; events only need the reference
        inter_ref = len(d.comms)
        name_ref = d.strings.get("inter")._ref
        world_ref, a_ref, b_ref = comms["world"]._ref, ga._ref, gb._ref
        _extra_global_defs.append(lambda gw: _otf2.GlobalDefWriter_WriteInterComm(
            gw._handle, inter_ref, name_ref, a_ref, b_ref, world_ref, _otf2.COMM_FLAG_NONE))
        comms["inter"] = types.SimpleNamespace(_ref=inter_ref, name="inter")

        all_regions = list(d.regions)
        all_comms = list(d.comms) + [comms["inter"]]
        for r in range(s.n):
            ew = w.event_writer_from_location(locs[r])
            sk = s.skew[r]
            # local ids of the mapped rank: reversed global ids, translated by mapping tables
            lreg = lambda reg: reg  # noqa: E731
            lcomm = lambda c: c  # noqa: E731
            if r == s.mapped_rank:
                nreg, ncomm = len(all_regions), len(all_comms)
                lreg = lambda reg: types.SimpleNamespace(_ref=nreg - 1 - reg._ref)  # noqa: E731
                lcomm = lambda c: types.SimpleNamespace(_ref=ncomm - 1 - c._ref)  # noqa: E731
                if s.mapping_tables:
                    for mtype, n in ((_otf2.MAPPING_REGION, nreg), (_otf2.MAPPING_COMM, ncomm)):
                        idmap = _otf2.IdMap_CreateFromUint64Array([n - 1 - i for i in range(n)], False)
                        _otf2.DefWriter_WriteMappingTable(ew._def_handle, mtype, idmap)
                        _otf2.IdMap_Free(idmap)
            times = []
            for t, name, args in sorted(s.ev[r], key=lambda e: e[0]):
                raw = BASE + t + sk
                times.append(raw)
                if name in ("enter", "leave"):
                    reg = regions[args[0]]
                    if name == "enter" and dup_send is not None and r == s.dup_region_on and args[0] == "MPI_Send":
                        reg = dup_send
                    if name == "leave" and dup_send is not None and r == s.dup_region_on and args[0] == "MPI_Send":
                        reg = dup_send
                    getattr(ew, name)(raw, lreg(reg))
                elif name == "send":
                    ew.mpi_send(raw, args[0], lcomm(comms[args[1]]), args[2], args[3])
                elif name == "recv":
                    ew.mpi_recv(raw, args[0], lcomm(comms[args[1]]), args[2], args[3])
                elif name == "isend":
                    ew.mpi_isend(raw, args[0], lcomm(comms[args[1]]), args[2], args[3], args[4])
                elif name == "irecv":
                    ew.mpi_irecv(raw, args[0], lcomm(comms[args[1]]), args[2], args[3], args[4])
                elif name == "isend_complete":
                    ew.mpi_isend_complete(raw, args[0])
                elif name == "irecv_request":
                    ew.mpi_irecv_request(raw, args[0])
                elif name == "request_test":
                    ew.mpi_request_test(raw, args[0])
                elif name == "request_cancelled":
                    ew.mpi_request_cancelled(raw, args[0])
                elif name == "coll_begin":
                    ew.mpi_collective_begin(raw)
                elif name == "coll_end":
                    ew.mpi_collective_end(raw, getattr(CollectiveOp, args[0]), lcomm(comms[args[1]]), args[2], args[3],
                                          args[4])
                elif name == "nbc_request":
                    ew.non_blocking_collective_request(raw, args[0])
                elif name == "nbc_complete":
                    ew.non_blocking_collective_complete(raw, getattr(CollectiveOp, args[0]), lcomm(comms[args[1]]),
                                                        args[2], args[3], args[4], args[5])
                else:
                    raise ValueError(name)
            offs = s.offsets[r]
            if offs is None:
                offs = [(times[0], -sk), (times[-1], -sk)]
            for t, o in offs:
                _otf2.DefWriter_WriteClockOffset(ew._def_handle, t, o, 0.0)
            if s.devices:
                dw = w.event_writer_from_location(dev_locs[r])
                dtimes = []
                for t, name, args in s.dev_ev[r]:
                    getattr(dw, name)(BASE + t + sk, kernel)
                    dtimes.append(BASE + t + sk)
                doffs = s.dev_offsets[r]
                if doffs is None and not dtimes:
                    doffs = []
                elif doffs is None:
                    doffs = [(dtimes[0], -sk), (dtimes[-1], -sk)]
                for t, o in doffs:
                    _otf2.DefWriter_WriteClockOffset(dw._def_handle, t, o, 0.0)


# ---------------------------------------------------------------------------------------------
# the cases: (name, scenario builder, checker options, set of checks that must fail)

def mutate(fn, skew=(0, 3 * MS), devices=False):
    def build():
        s = correct_scenario(skew)
        if devices:
            add_devices(s)
        if fn:
            fn(s)
        return s
    return build


def m_unmatched_send(s):
    s.region(0, 180_000, 180_100, "MPI_Send", (180_001, "send", 1, "world", 99, 12))


def m_bytes(s):
    s.ev[1] = [(t, n, a if n != "recv" or a[2] != 5 else (a[0], a[1], a[2], 44)) for t, n, a in s.ev[1]]


def m_wrong_receiver(s):
    # rank 0 claims its tag-5 message went to rank 0
    s.ev[0] = [(t, n, a if n != "send" or a[2] != 5 else (0,) + a[1:]) for t, n, a in s.ev[0]]


def m_coll_count(s):
    s.region(0, 175_000, 175_100, "MPI_Barrier", (175_001, "coll_begin"),
             (175_050, "coll_end", "BARRIER", "world", ROOT_NONE, 0, 0))


def m_coll_root(s):
    s.ev[1] = [(t, n, a if n != "coll_end" or a[0] != "BCAST" else (a[0], a[1], 0, a[3], a[4])) for t, n, a in s.ev[1]]


def m_coll_order(s):
    # rank 1 calls MPI_Barrier before MPI_Allreduce on world (rank 0 the other way round)
    def swap(n, a):
        if n in ("enter", "leave") and a[0] in ("MPI_Allreduce", "MPI_Barrier"):
            return ("MPI_Barrier" if a[0] == "MPI_Allreduce" else "MPI_Allreduce",)
        if n == "coll_end" and a[0] == "ALLREDUCE" and a[1] == "world":
            return ("BARRIER", "world", ROOT_NONE, 0, 0)
        if n == "coll_end" and a[0] == "BARRIER":
            return ("ALLREDUCE", "world", ROOT_NONE, 8, 8)
        return a
    s.ev[1] = [(t, n, swap(n, a)) for t, n, a in s.ev[1]]


def m_coll_bytes(s):
    s.ev[0] = [(t, n, a if n != "coll_end" or a[0] != "GATHER" else (a[0], a[1], a[2], a[3], 4)) for t, n, a in s.ev[0]]


def m_no_offset(s):
    s.offsets[1] = []


def m_nonmonotonic(s):
    # rank 1's offsets fall by 2 ticks per tick: corrected timestamps run backwards
    t0 = BASE + 1000 + s.skew[1]
    s.offsets[1] = [(t0, -s.skew[1]), (t0 + 100_000, -s.skew[1] - 200_000)]


def m_wrong_offsets(s):
    t0, t1 = BASE + 1000 + s.skew[1], BASE + 202_000 + s.skew[1]
    s.offsets[1] = [(t0, -MS), (t1, -MS)]  # undoes 1 ms of the 3 ms


def m_unbalanced(s):
    # drop rank 0's Leave of MPI_Barrier
    s.ev[0] = [e for e in s.ev[0] if not (e[1] == "leave" and e[2][0] == "MPI_Barrier")]


def m_irecv_incomplete(s):
    s.region(1, 176_000, 176_002, "MPI_Irecv", (176_001, "irecv_request", 3))


def m_irecv_wrong_request(s):
    s.ev[1] = [(t, n, a if n != "irecv" else a[:4] + (5,)) for t, n, a in s.ev[1]]


def m_dup_region(s):
    s.dup_region_on = 1


def m_region_map(s):
    # rank 1's MpiSend appears inside MPI_Recv (what a wrong mapping table produces)
    s.ev[1] = [(t, n, ("MPI_Recv",) if n in ("enter", "leave") and a[0] == "MPI_Send" else a) for t, n, a in s.ev[1]]


def m_rank_name(s):
    s.group_names[1] = "MPI Rank 7"


def m_extra_group(s):
    s.extra_process_groups = 1


def m_no_self(s):
    s.with_self = False


def m_bad_group(s):
    s.dup_members = [0]


def m_mapped(s):
    s.mapped_rank = 1


def m_mapping_missing(s):
    s.mapped_rank = 1
    s.mapping_tables = False


def m_dev_no_kernel(s):
    s.dev_ev[1] = []


CASES = [
    ("correct", mutate(None), ["--expect-region", "MPI_Send", "--expect-region", "MPI_Allreduce",
                               "--expect-region", "MPI_Cancel@0", "--expect-comms", "2", "--expect-messages", "5"],
     set()),
    ("correct-skew-check", mutate(None), ["--skew-check", "--expect-skew", "0,3000000"], set()),
    ("correct-devices", mutate(None, devices=True), ["--devices", "--expect-region", "vector_add"], set()),
    ("correct-no-skew", mutate(None, skew=(0, 0)), [], set()),
    ("skew-check-without-skew", mutate(None, skew=(0, 0)), ["--skew-check"], {C_CAUSAL}),
    ("unmatched-send", mutate(m_unmatched_send), [], {C_P2P}),
    ("bytes-mismatch", mutate(m_bytes), [], {C_P2P}),
    ("wrong-receiver", mutate(m_wrong_receiver), [], {C_P2P}),
    ("message-count", mutate(None), ["--expect-messages", "6"], {C_P2P}),
    ("collective-count", mutate(m_coll_count), [], {C_COLL}),
    ("collective-root", mutate(m_coll_root), [], {C_COLL}),
    ("collective-order", mutate(m_coll_order), [], {C_COLL}),
    ("collective-bytes", mutate(m_coll_bytes), [], {C_BYTES}),
    ("missing-clock-offset", mutate(m_no_offset), [], {C_CLOCK, C_CAUSAL}),
    ("wrong-clock-offset", mutate(m_wrong_offsets), ["--expect-skew", "0,3000000"], {C_CLOCK, C_CAUSAL}),
    # rank 1's operations also change their order, so its collectives no longer line up
    ("non-monotonic", mutate(m_nonmonotonic), [], {C_TS, C_CAUSAL, C_COLL}),
    ("unbalanced-enter", mutate(m_unbalanced), [], {C_NEST}),
    ("irecv-never-completed", mutate(m_irecv_incomplete), [], {C_REQ}),
    ("irecv-wrong-request", mutate(m_irecv_wrong_request), [], {C_REQ}),
    ("duplicate-region", mutate(m_dup_region), [], {C_REGIONS}),
    ("wrong-region-mapping", mutate(m_region_map), [], {C_REGIONS}),
    ("expected-region-missing", mutate(None), ["--expect-region", "MPI_Cancel"], {C_REGIONS}),
    ("rank-name", mutate(m_rank_name), [], {C_RANKS}),
    ("extra-process-group", mutate(m_extra_group), [], {C_RANKS}),
    ("wrong-rank-count", mutate(None), ["--ranks", "3"], {C_RANKS, C_COMMS}),
    ("no-comm-self", mutate(m_no_self), [], {C_COMMS}),
    # dup's group lists rank 0 only: rank 1's collectives on it are foreign, rank 0's Gather alone
    # received more than it sent
    ("comm-group-wrong", mutate(m_bad_group), [], {C_COMMS, C_COLL, C_BYTES}),
    ("too-few-comms", mutate(None), ["--expect-comms", "3"], {C_COMMS}),
    ("comm-defs", mutate(None), ["--expect-comm-defs", "4"], set()),
    # a communicator known twice (the collector forgot one and found it again) is one too many
    ("comm-defs-extra", mutate(None), ["--expect-comm-defs", "3"], {C_COMMS}),
    # rank 1 records local ids, translated by REGION and COMM mapping tables (as the collector does)
    ("mapping-tables", mutate(m_mapped), ["--expect-region", "MPI_Send", "--expect-messages", "5"], set()),
    # ... and without the tables its events resolve to the wrong regions and communicators
    ("mapping-tables-missing", mutate(m_mapping_missing), ["--expect-region", "MPI_Send"],
     {C_REGIONS, C_P2P, C_COLL}),
    ("devices-missing", mutate(None), ["--devices"], {C_DEV}),
    ("devices-no-kernel", mutate(m_dev_no_kernel, devices=True), ["--devices"], {C_DEV}),
]


def failing_checks(out):
    return [m.group(1) for m in re.finditer(r"^not ok \d+ - (.*)$", out, re.M)]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--work", help="directory for the archives (default: a temporary one)")
    ap.add_argument("--keep", action="store_true", help="keep the archives")
    ap.add_argument("-v", "--verbose", action="store_true", help="print the checker's output")
    ap.add_argument("cases", nargs="*")
    a = ap.parse_args()
    if _otf2 is None:
        print("not ok 1 - python3-otf2's _otf2 module is missing")
        return 1
    work = a.work or tempfile.mkdtemp(prefix="mpi_checker_selftest.")
    os.makedirs(work, exist_ok=True)
    checker = os.path.join(HERE, "check_mpi_trace.py")
    cases = [c for c in CASES if not a.cases or c[0] in a.cases]
    bad = 0
    for i, (name, build, opts, want_fail) in enumerate(cases, 1):
        path = os.path.join(work, name)
        try:
            write(build(), path)
        except Exception as e:
            print(f"not ok {i} - {name}: writing the archive failed: {type(e).__name__}: {e}")
            bad += 1
            continue
        cmd = [sys.executable, checker, path]
        if "--ranks" not in opts:
            cmd += ["--ranks", "2"]
        cmd += opts
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        failed = failing_checks(p.stdout)
        got = {c for c in (C_PRINT, C_TS, C_NEST, C_RANKS, C_COMMS, C_REGIONS, C_P2P, C_REQ, C_COLL, C_BYTES,
                           C_CLOCK, C_CAUSAL, C_DEV) if any(c in f for f in failed)}
        want_rc = 1 if want_fail else 0
        ok = p.returncode == want_rc and got == want_fail and not p.stderr.strip()
        if not ok or a.verbose:
            sys.stdout.write("".join(f"#   | {l}\n" for l in p.stdout.splitlines()))
            if p.stderr.strip():
                sys.stdout.write("".join(f"#   ! {l}\n" for l in p.stderr.splitlines()))
        desc = "passes" if not want_fail else "caught by: " + ", ".join(sorted(want_fail))
        if ok:
            print(f"ok {i} - {name}: {desc}")
        else:
            bad += 1
            print(f"not ok {i} - {name}: expected rc {want_rc} and failures {sorted(want_fail)}, "
                  f"got rc {p.returncode} and failures {sorted(got)}")
    print(f"1..{len(cases)}")
    if not a.keep and not a.work:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
