#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Real MPI clients nobody here wrote, from Debian, under libzecoll.so (labels mpi, mpich).

  check_clients.py netpipe   --collector LIB --work DIR --mpiexec MPIRUN.MPICH --program NPmpich2
  check_clients.py scalapack --collector LIB --work DIR --mpiexec-ompi MPIRUN --mpiexec-mpich MPIRUN.MPICH
                             --ompi PROG --mpich PROG --input LU.dat

netpipe: NetPIPE (netpipe-mpich2) ping-pongs every message size it prints (`N: S bytes R times`)
between 2 ranks under Hydra. The archive must hold, for each size S, as many messages of S bytes
sent by rank 0 as received by rank 1 and the other way (a multiple of R each: NetPIPE repeats its
R round trips a few times), and every printed size; the byte totals of both directions must agree
between sender and receiver. NetPIPE's exit status must be 0 and its list of sizes the same as
without the collector.

scalapack: the same ScaLAPACK test program (scalapack-mpi-test ships it built for both MPIs: the
Open MPI build under mpirun, the MPICH one under Hydra) with our small input, 2 ranks: both runs
pass every test they print, and the two archives agree in what the program did: the number of
point-to-point messages and their bytes, per pair of ranks, and the collectives per operation.

Exit status: 0 passed, 1 failed, 77 skipped (a program not installed).
"""
import argparse
import collections
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run_mpi_test import launch_cmd  # noqa: E402

SKIP = 77


def run(mpiexec, hydra, np, prog_args, work, trace=None, collector=None, timeout=120):
    """Runs the program (in work); returns (exit status, stdout)."""
    env = [f"LD_PRELOAD={collector}", f"ZECOLL_OUTPUT={trace}", "ZECOLL_STRICT=1"] if collector else []
    cmd = launch_cmd(mpiexec, np, env, hydra) + prog_args
    print("# " + " ".join(cmd))
    sys.stdout.flush()
    try:
        p = subprocess.run(cmd, cwd=work, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           timeout=timeout)
    except subprocess.TimeoutExpired:
        return 124, ""
    return p.returncode, p.stdout


def tally(trace):
    """Messages per (sender, receiver, bytes) as sent and as received, and collectives per
    (operation, sent, received) and rank, read back from the archive."""
    import otf2
    sent, recvd = collections.Counter(), collections.Counter()
    colls = collections.Counter()
    with otf2.reader.open(os.path.join(trace, "traces.otf2")) as rd:
        for loc, ev in rd.events:
            me = loc.group.name
            kind = type(ev).__name__
            if kind in ("MpiSend", "MpiIsend"):
                sent[(me, ev.msg_length, int(ev.receiver))] += 1
            elif kind in ("MpiRecv", "MpiIrecv"):
                recvd[(me, ev.msg_length, int(ev.sender))] += 1
            elif kind in ("MpiCollectiveEnd", "NonBlockingCollectiveComplete"):
                colls[(me, str(ev.collective_op), ev.size_sent, ev.size_received)] += 1
    return sent, recvd, colls


def pairs(sent, recvd):
    """(rank of sender, rank of receiver, bytes) -> [count sent, count received]; a rank by its
    OTF2 location group's name ('MPI Rank r'), a peer as its rank in the message's communicator."""
    out = collections.defaultdict(lambda: [0, 0])
    rank = lambda s: int(re.findall(r"\d+", s)[-1])  # noqa: E731
    for (me, size, peer), n in sent.items():
        out[(rank(me), peer, size)][0] += n
    for (me, size, peer), n in recvd.items():
        out[(peer, rank(me), size)][1] += n
    return out


def fresh(d):
    if os.path.isdir(d):
        shutil.rmtree(d)
    os.makedirs(d)


def netpipe(a):
    prog = shutil.which(a.program)
    if not prog:
        print(f"SKIP: {a.program} is not installed (netpipe-mpich2)")
        return SKIP
    args = [prog, "-u", "16", "-n", "10"]
    plain, traced = os.path.join(a.work, "plain"), os.path.join(a.work, "traced")
    fresh(plain)
    fresh(traced)
    rc0, out0 = run(a.mpiexec, True, 2, args, plain)
    trace = os.path.join(traced, "trace")
    rc1, out1 = run(a.mpiexec, True, 2, args, traced, trace, a.collector)
    print("\n".join("# " + ln for ln in out1.splitlines()[-6:]))
    points = lambda out: [(int(s), int(r)) for s, r in re.findall(r"^\s*\d+:\s+(\d+) bytes\s+(\d+) times", out, re.M)]  # noqa: E731
    bad = []
    if rc0 != 0 or rc1 != 0:
        bad.append(f"exit status {rc0} without, {rc1} with the collector")
    if not points(out1) or points(out0) != points(out1):
        bad.append(f"NetPIPE's points differ: {points(out0)} without, {points(out1)} with the collector")
    if not bad:
        got = pairs(*tally(trace)[:2])
        for size, reps in points(out1):
            for s, r in ((0, 1), (1, 0)):
                n_sent, n_recvd = got.get((s, r, size), (0, 0))
                if n_sent != n_recvd or n_sent == 0 or n_sent % reps:
                    bad.append(f"{size} B from rank {s} to {r}: {n_sent} sent, {n_recvd} received (want equal, a multiple of {reps})")
        for s, r in ((0, 1), (1, 0)):
            tot = [sum(n[i] * size for (x, y, size), n in got.items() if (x, y) == (s, r)) for i in (0, 1)]
            print(f"# rank {s} -> {r}: {tot[0]} bytes sent, {tot[1]} bytes received")
            if tot[0] != tot[1]:
                bad.append(f"byte totals {s} -> {r}: {tot[0]} sent, {tot[1]} received")
    for b in bad:
        print(f"not ok - {b}")
    print(("not ok" if bad else "ok") + f" - NPmpich2: {len(points(out1))} message sizes, both directions")
    return 1 if bad else 0


def scalapack(a):
    for p in (a.ompi, a.mpich):
        if not os.path.exists(p):
            print(f"SKIP: {p} is not installed (scalapack-mpi-test)")
            return SKIP
    runs = {}
    bad = []
    for name, mpiexec, hydra, prog in (("ompi", a.mpiexec_ompi, False, a.ompi), ("mpich", a.mpiexec_mpich, True, a.mpich)):
        work = os.path.join(a.work, name)
        fresh(work)
        shutil.copy(a.input, os.path.join(work, "LU.dat"))  # the name xdlu reads
        trace = os.path.join(work, "trace")
        rc, out = run(mpiexec, hydra, 2, [prog], work, trace, a.collector, timeout=a.timeout)
        passed = re.search(r"(\d+) tests completed and passed", out)
        failed = re.search(r"(\d+) tests completed and failed", out)
        print(f"# {name}: exit {rc}; " + "; ".join(m.group(0) for m in (passed, failed) if m))
        if rc != 0 or not passed or int(passed.group(1)) == 0 or (failed and int(failed.group(1)) != 0):
            bad.append(f"{name}: exit {rc}, output: {out[-500:]!r}")
            continue
        sent, recvd, colls = tally(trace)
        runs[name] = (passed.group(1), pairs(sent, recvd), colls)
    if not bad:
        (p0, m0, c0), (p1, m1, c1) = runs["ompi"], runs["mpich"]
        n0 = {k: v for k, v in m0.items()}
        print(f"# messages (ompi): {sum(v[0] for v in m0.values())}, bytes {sum(v[0] * k[2] for k, v in m0.items())}; "
              f"collectives: {sum(c0.values())}")
        if p0 != p1:
            bad.append(f"tests passed: {p0} under Open MPI, {p1} under MPICH")
        if n0 != dict(m1):
            diff = sorted(set(n0) ^ set(m1)) or sorted(k for k in n0 if n0[k] != m1[k])
            bad.append(f"messages differ (sender, receiver, bytes): {diff[:8]}")
        if any(v[0] != v[1] for v in m1.values()):
            bad.append("MPICH: sends and receives do not pair up")
        if c0 != c1:
            bad.append(f"collectives differ: {sorted(set(c0.items()) ^ set(c1.items()))[:8]}")
    for b in bad:
        print(f"not ok - {b}")
    print(("not ok" if bad else "ok") + " - ScaLAPACK: the same messages and collectives under Open MPI and MPICH")
    return 1 if bad else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("what", choices=["netpipe", "scalapack"])
    ap.add_argument("--collector", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--mpiexec", help="netpipe: MPICH's launcher")
    ap.add_argument("--program", default="NPmpich2")
    ap.add_argument("--mpiexec-ompi")
    ap.add_argument("--mpiexec-mpich")
    ap.add_argument("--ompi")
    ap.add_argument("--mpich")
    ap.add_argument("--input")
    ap.add_argument("--timeout", type=float, default=120)
    a = ap.parse_args()
    a.work = os.path.abspath(a.work)
    os.makedirs(a.work, exist_ok=True)
    return netpipe(a) if a.what == "netpipe" else scalapack(a)


if __name__ == "__main__":
    sys.exit(main())
