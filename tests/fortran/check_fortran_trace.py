#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Run a Fortran MPI test program (zc_fortran_mpi*.F90) under libzecoll.so and judge its trace.

    check_fortran_trace.py --mpiexec mpirun --collector libzecoll.so --work DIR
                           [--init-region MPI_Init_thread] [--preload-first LIB] [--env K=V ...]
                           -- PROGRAM

Runs `mpirun -np 4 -x LD_PRELOAD=<collector> -x ZECOLL_OUTPUT=<DIR>/trace ... PROGRAM`, then reads
the job's OTF2 archive (python3-otf2) and checks, knowing exactly what the program does:

  - MPI_Init (or --init-region) and MPI_Finalize regions on every rank, MPI_Pcontrol too;
  - the exact number of MpiSend/MpiRecv/MpiIsend/MpiIsendComplete/MpiIrecvRequest/MpiIrecv events
    per rank, and every message sent (MpiSend, MpiIsend) matched by exactly one received (MpiRecv,
    MpiIrecv) on the same communicator, between the same ranks, with the same tag and bytes, the
    bytes being those the program sends for that tag (mod(tag, 7) + 1 INTEGERs) — receives
    completed through Wait/Waitall/Waitany/Waitsome/Test/Testany/Testsome/Testall, with statuses
    and with MPI_STATUS(ES)_IGNORE, wildcard sources included;
  - every issued request completed (Isend/Irecv request ids);
  - per communicator, the same sequence of collective operations on every member, with the
    bytes mpi/README.md defines for each (op, rank, root); the expected operations on
    MPI_COMM_WORLD, on the even/odd split communicators and on the duplicate;
  - the split communicators: two of them, members {0, 2} and {1, 3}, children of MPI_COMM_WORLD,
    named (MPI_COMM_SET_NAME) 'even' and 'odd'; the duplicate of MPI_COMM_WORLD named 'world dup'.

Exit status 0 when all checks pass, 1 otherwise (TAP-like "ok"/"not ok" lines).
"""
import argparse
import collections
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "mpi"))
from run_mpi_test import launch_cmd  # noqa: E402  (the launchers' command lines, shared)

NP = 4
N = 3        # the program's collective count
INT = 4      # bytes of an INTEGER
# the program's traffic per rank (zc_fortran_mpi.F90)
P2P_PER_RANK = {"MpiSend": 5, "MpiRecv": 5, "MpiIsend": 22, "MpiIsendComplete": 22,
                "MpiIrecvRequest": 22, "MpiIrecv": 22}
WORLD_OPS = ["BARRIER", "BCAST", "ALLREDUCE", "ALLREDUCE", "REDUCE", "GATHER", "GATHERV", "SCATTER",
             "SCATTERV", "ALLGATHER", "ALLGATHERV", "ALLTOALL", "ALLTOALLV", "ALLTOALLW",
             "REDUCE_SCATTER_BLOCK", "REDUCE_SCATTER", "SCAN", "EXSCAN"]
WORLD_NBC = ["BARRIER", "ALLREDUCE", "BCAST"]
SPLIT_OPS = ["ALLREDUCE", "BCAST", "BARRIER"]
DUP_OPS = ["BARRIER"]


def msg_bytes(tag):
    return (tag % 7 + 1) * INT


def expected_coll_bytes(op, r, s, root):
    """(sent, received) of the program's collective op on a communicator of size s, for rank r."""
    tri = INT * s * (s + 1) // 2  # counts 1..s (v variants: rank i sends/receives i + 1)
    table = {
        "BARRIER": (0, 0),
        "BCAST": (N * INT, 0) if r == root else (0, N * INT),
        "ALLREDUCE": (N * INT, N * INT),
        "REDUCE": (N * INT, N * INT if r == root else 0),
        "GATHER": (N * INT, s * N * INT if r == root else 0),
        "GATHERV": ((r + 1) * INT, tri if r == root else 0),
        "SCATTER": (s * N * INT if r == root else 0, N * INT),
        "SCATTERV": (tri if r == root else 0, (r + 1) * INT),
        "ALLGATHER": (N * INT, s * N * INT),
        "ALLGATHERV": ((r + 1) * INT, tri),
        "ALLTOALL": (s * N * INT, s * N * INT),
        "ALLTOALLV": (tri, s * (r + 1) * INT),
        "ALLTOALLW": (tri, s * (r + 1) * INT),
        "REDUCE_SCATTER_BLOCK": (s * N * INT, N * INT),
        "REDUCE_SCATTER": (tri, (r + 1) * INT),
        "SCAN": (N * INT, N * INT),
        "EXSCAN": (N * INT, N * INT),
    }
    return table[op]


class Checker:
    def __init__(self):
        self.failures = 0

    def ok(self, cond, what, detail=""):
        if cond:
            print(f"ok - {what}")
        else:
            self.failures += 1
            print(f"not ok - {what}" + (f": {detail}" if detail else ""))
        return cond


def run(a, trace):
    preload = ([a.preload_first] if a.preload_first else []) + [a.collector]
    env = [f"LD_PRELOAD={':'.join(preload)}", f"ZECOLL_OUTPUT={trace}", "ZECOLL_STRICT=1"] + a.env
    cmd = launch_cmd(a.mpiexec, NP, env, a.hydra) + a.program
    print("# " + " ".join(cmd))
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=a.timeout)
    except subprocess.TimeoutExpired:
        print(f"not ok - {os.path.basename(a.program[0])} did not finish within {a.timeout} s")
        return False
    for line in p.stdout.splitlines():
        print("# " + line)
    good = p.returncode == 0 and "FAIL" not in p.stdout and ": ok" in p.stdout
    print(("ok" if good else "not ok") + f" - {os.path.basename(a.program[0])} ran (exit {p.returncode})")
    return good


def rank_of(loc):
    return int(loc.group.name.rsplit(" ", 1)[1])  # LocationGroup "MPI Rank <r>"


def judge(trace, init_region):
    import otf2

    c = Checker()
    anchor = os.path.join(trace, "traces.otf2")
    if not c.ok(os.path.exists(anchor), "the job wrote one OTF2 archive", anchor):
        return c
    regions = collections.defaultdict(collections.Counter)   # rank -> region name -> enters
    counts = collections.defaultdict(collections.Counter)    # rank -> event type -> n
    sent, received = collections.Counter(), collections.Counter()
    byte_errors = []
    issued, done = collections.defaultdict(set), collections.defaultdict(set)
    colls = collections.defaultdict(lambda: collections.defaultdict(list))  # comm -> rank -> [(op, root, s, r)]
    with otf2.reader.open(anchor) as tr:
        comms = [cm for cm in tr.definitions.comms if cm.group is not None and cm.group.paradigm == otf2.Paradigm.MPI]
        members = {cm: [rank_of(m) for m in cm.group.members] for cm in comms}
        for loc, ev in tr.events:
            r = rank_of(loc)
            name = type(ev).__name__
            counts[r][name] += 1
            if name == "Enter":
                regions[r][ev.region.name] += 1
            elif name in ("MpiSend", "MpiIsend", "MpiRecv", "MpiIrecv"):
                cm = ev.communicator
                me = members[cm].index(r) if cm in members and r in members[cm] else None
                if name in ("MpiSend", "MpiIsend"):
                    sent[(cm.name, id(cm), me, ev.receiver, ev.msg_tag, ev.msg_length)] += 1
                else:
                    received[(cm.name, id(cm), ev.sender, me, ev.msg_tag, ev.msg_length)] += 1
                if ev.msg_length != msg_bytes(ev.msg_tag):
                    byte_errors.append(f"rank {r} {name} tag {ev.msg_tag}: {ev.msg_length} bytes")
                if name == "MpiIsend":
                    issued[r].add(ev.request_id)
                elif name == "MpiIrecv":
                    done[r].add(ev.request_id)
            elif name == "MpiIrecvRequest":
                issued[r].add(ev.request_id)
            elif name == "MpiIsendComplete":
                done[r].add(ev.request_id)
            elif name in ("MpiCollectiveEnd", "NonBlockingCollectiveComplete"):
                root = ev.root if ev.root != 0xFFFFFFFF else None
                colls[ev.communicator][r].append((str(ev.collective_op).rsplit(".", 1)[-1], root, ev.size_sent, ev.size_received,
                                                  name == "NonBlockingCollectiveComplete"))

    ranks = list(range(NP))
    for r in ranks:
        for reg in (init_region, "MPI_Finalize", "MPI_Pcontrol"):
            c.ok(regions[r][reg] == 1, f"rank {r}: one {reg} region", f"{regions[r][reg]} found")
    for r in ranks:
        got = {k: counts[r][k] for k in P2P_PER_RANK}
        c.ok(got == P2P_PER_RANK, f"rank {r}: point-to-point events", f"got {got}, want {P2P_PER_RANK}")
    c.ok(not byte_errors, "every message has the bytes its tag implies", "; ".join(byte_errors[:6]))
    unmatched_s = sent - received
    unmatched_r = received - sent
    c.ok(sum(sent.values()) == NP * (P2P_PER_RANK["MpiSend"] + P2P_PER_RANK["MpiIsend"]) and not unmatched_s
         and not unmatched_r, f"{sum(sent.values())} messages, each send matched by exactly one receive "
         "(communicator, ranks, tag, bytes)",
         f"sends without receive: {sorted(k[:1] + k[2:] for k in unmatched_s)[:6]}; "
         f"receives without send: {sorted(k[:1] + k[2:] for k in unmatched_r)[:6]}")
    for r in ranks:
        c.ok(issued[r] == done[r], f"rank {r}: every point-to-point request completed",
             f"issued {len(issued[r])}, completed {len(done[r])}")

    # communicators and collectives
    world = [cm for cm in members if cm.name == "MPI_COMM_WORLD"]
    c.ok(len(world) == 1 and members[world[0]] == ranks, "MPI_COMM_WORLD with ranks 0..3")
    world = world[0] if world else None
    halves = sorted((m, cm.name) for cm, m in members.items() if cm.parent == world and len(m) == 2 and cm is not world)
    split = [m for m, _ in halves]
    c.ok(split == [[0, 2], [1, 3]], "split communicators {0, 2} and {1, 3}, children of MPI_COMM_WORLD",
         f"found {split}")
    dup = [cm for cm, m in members.items() if cm is not world and cm.parent == world and m == ranks]
    c.ok(len(dup) == 1, "the MPI_Comm_dup communicator", f"found {len(dup)}")
    # MPI_COMM_SET_NAME (a CHARACTER argument: hand-written entry points), the names set after
    # the definitions were made, the split's with trailing blanks that MPI takes off
    c.ok([n for _, n in halves] == ["even", "odd"] and [cm.name for cm in dup] == ["world dup"],
         "MPI_Comm_set_name: the split communicators named 'even' and 'odd', the dup 'world dup'",
         f"found {halves}, dup {[cm.name for cm in dup]}")
    for cm, per_rank in colls.items():
        mem = members.get(cm, [])
        label = cm.name or f"communicator {mem}"
        seqs = {r: [(op, root, nbc) for op, root, _, _, nbc in per_rank.get(r, [])] for r in mem}
        c.ok(set(per_rank) <= set(mem) and len({tuple(s) for s in seqs.values()}) == 1,
             f"{label}: the same {len(next(iter(seqs.values()), []))} collectives on each of its {len(mem)} members",
             f"counts per rank {[len(s) for s in seqs.values()]}")
        bad = []
        for r, evs in per_rank.items():
            me = mem.index(r) if r in mem else -1
            for op, root, s_, r_, nbc in evs:
                want = expected_coll_bytes(op, me, len(mem), root)
                if (s_, r_) != want:
                    bad.append(f"rank {r} {op}{' (nbc)' if nbc else ''} root {root}: sent/received {s_}/{r_}, want {want[0]}/{want[1]}")
        c.ok(not bad, f"{label}: collective bytes", "; ".join(bad[:6]))
        if cm is world:
            ops = [op for op, _, _, _, nbc in per_rank.get(0, []) if not nbc]
            nbc = [op for op, _, _, _, b in per_rank.get(0, []) if b]
            c.ok(ops == WORLD_OPS and nbc == WORLD_NBC, "MPI_COMM_WORLD: the program's collectives in order",
                 f"blocking {ops}, non-blocking {nbc}")
        elif sorted(mem) in ([0, 2], [1, 3]):
            ops = [op for op, _, _, _, _ in per_rank.get(mem[0], [])]
            c.ok(ops == SPLIT_OPS, f"split {mem}: Allreduce, Bcast, Barrier", f"{ops}")
        elif mem == ranks:
            ops = [op for op, _, _, _, _ in per_rank.get(0, [])]
            c.ok(ops == DUP_OPS, "duplicate of MPI_COMM_WORLD: one Barrier", f"{ops}")
    c.ok(world in colls and sum(1 for cm in colls if sorted(members.get(cm, [])) in ([0, 2], [1, 3])) == 2
         and any(cm in colls for cm in dup), "collectives recorded on world, both split halves and the duplicate")
    return c


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mpiexec", default="mpirun")
    ap.add_argument("--hydra", action="store_true", help="MPIEXEC is MPICH's Hydra (mpirun.mpich)")
    ap.add_argument("--collector", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--init-region", default="MPI_Init")
    ap.add_argument("--preload-first")
    ap.add_argument("--env", action="append", default=[])
    ap.add_argument("--timeout", type=float, default=120)
    ap.add_argument("program", nargs="+")
    a = ap.parse_args()
    try:
        import otf2  # noqa: F401
    except ImportError:
        print("# python3-otf2 is not installed: skipped")
        return 77
    shutil.rmtree(a.work, ignore_errors=True)
    os.makedirs(a.work)
    trace = os.path.join(a.work, "trace")
    if not run(a, trace):
        return 1
    c = judge(trace, a.init_region)
    print(f"# {c.failures} failed check(s)")
    return 1 if c.failures else 0


if __name__ == "__main__":
    sys.exit(main())
