#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""MPICH's launcher (Hydra) with the collector, and programs run by the other MPI's launcher.

  mpich_launch.py --hydra MPIRUN.MPICH --ompi MPIRUN --bindir DIR --collector LIB --zesim LIB --work DIR
                  --ring-mpich BIN --l0-mpich BIN --l0-ompi BIN [--python PY]

1. `zecoll run` per rank: `mpirun.mpich -n 4 zecoll run --output DIR -- mpi_ring_mpich`: exit 0, one
   archive with the job's 4 ranks and the ring's 36 messages (check_mpi_trace.py).
2. The collector exported into Hydra itself: `zecoll run --output DIR -- mpirun.mpich -n 4 ...`, so
   mpiexec.hydra and hydra_pmi_proxy load libzecoll.so (checked in the proxy's maps: else this proves
   nothing) and stay off: exactly one archive directory (the launchers took no name), complete, the
   same checks, no collector message but the ranks' summaries.
3. The wrong pairing, both ways: the MPICH build of mpi_l0 under Open MPI's mpirun, the Open MPI
   build under Hydra (2 processes each). Each process is an MPI job of one, as without the
   collector; the program checks its own results (its PASS line on each process), exit 0, the
   collector says so in exactly one line and writes no archive.
TAP output; exit 0 when every check passed."""
import argparse
import os
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
NP = 4
WRONG = "was built for another MPI than its launcher's"
checks = []


def ok(cond, what):
    checks.append(bool(cond))
    print(f"{'ok' if cond else 'not ok'} {len(checks)} - {what}")
    sys.stdout.flush()


def clean_env():
    return {k: v for k, v in os.environ.items() if not k.startswith(("ZECOLL_", "LD_PRELOAD", "ZE_ENABLE_ALT"))}


def run(cmd, cwd, env):
    p = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=120)
    print("# " + " ".join(cmd))
    sys.stdout.write("".join("# " + l + "\n" for l in (p.stdout + p.stderr).splitlines()[-8:]))
    return p


def check_trace(a, trace, what):
    c = subprocess.run([a.python, os.path.join(HERE, "check_mpi_trace.py"), trace, "--ranks", str(NP),
                        "--expect-messages=36", "--expect-region=MPI_Sendrecv"], capture_output=True, text=True,
                       timeout=300)
    sys.stdout.write("".join("# " + l + "\n" for l in c.stdout.splitlines() if l.startswith("not ok")))
    ok(c.returncode == 0, f"{what}: check_mpi_trace.py: 4 ranks, 36 messages, consistent")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    for k in ("--hydra", "--ompi", "--bindir", "--collector", "--zesim", "--work", "--ring-mpich", "--l0-mpich", "--l0-ompi"):
        ap.add_argument(k, required=True)
    ap.add_argument("--python", default=sys.executable)
    a = ap.parse_args()
    work = os.path.abspath(a.work)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    zecoll = os.path.join(a.bindir, "zecoll")
    hydra = [a.hydra, "-launcher", "fork", "-n"]

    # 1. zecoll run on every rank
    d = os.path.join(work, "run")
    os.makedirs(d)
    trace = os.path.join(d, "trace")
    p = run(hydra + [str(NP), zecoll, "run", "--strict", "--output", trace, "--", a.ring_mpich], d, clean_env())
    ok(p.returncode == 0, f"mpirun.mpich ... zecoll run -- ring: exit 0 (got {p.returncode})")
    check_trace(a, trace, "zecoll run under Hydra")

    # 2. the collector in Hydra's own environment: mpiexec.hydra and its proxy stay off
    d = os.path.join(work, "exported")
    os.makedirs(d)
    trace = os.path.join(d, "trace")
    probe = os.path.join(d, "probe.maps")
    script = f'"$@" || exit $?; [ "$PMI_RANK" = 0 ] || exit 0; grep -c libzecoll /proc/$PPID/maps > {probe}; exit 0'
    p = run([zecoll, "run", "--strict", "--output", trace, "--"] + hydra + [str(NP), "sh", "-c", script, "sh",
                                                                          a.ring_mpich], d, clean_env())
    ok(p.returncode == 0, f"zecoll run -- mpirun.mpich ... ring: exit 0 (got {p.returncode})")
    try:
        with open(probe) as f:
            mapped = int(f.read().strip() or 0)
    except (OSError, ValueError):
        mapped = 0
    ok(mapped > 0, "Hydra's proxy (the ranks' parent) loaded libzecoll.so")
    entries = sorted(e for e in os.listdir(d) if e != "probe.maps")
    ok(entries == ["trace"], f"exactly one archive directory, 'trace' (found {entries})")
    ok(os.path.isfile(os.path.join(trace, "traces.otf2")) and not os.path.exists(os.path.join(trace, "zecoll-journal")),
       "the archive is complete (traces.otf2, no salvage journal left)")
    others = [l for l in p.stderr.splitlines() if l.startswith("zecoll") and not re.match(r"zecoll: rank \d+: ", l)]
    ok(not others, f"no collector message but the ranks' summaries (got {others[:3]})")
    check_trace(a, trace, "the collector exported into Hydra")

    # 3. the wrong pairing, both ways
    zesim = os.path.abspath(a.zesim)
    for name, launch, prog in (("mpich program, Open MPI's mpirun",
                                [a.ompi, "--allow-run-as-root", "--oversubscribe", "-np", "2"], a.l0_mpich),
                               ("Open MPI program, Hydra", hydra + ["2"], a.l0_ompi)):
        d = os.path.join(work, "wrong-" + os.path.basename(prog))
        os.makedirs(d)
        trace = os.path.join(d, "trace")
        env = clean_env()
        env.update({"LD_PRELOAD": os.path.abspath(a.collector), "ZECOLL_OUTPUT": trace, "ZECOLL_STRICT": "1",
                    "ZE_ENABLE_ALT_DRIVERS": zesim})
        p = run(launch + [prog], d, env)  # Open MPI's -x is not needed: the ranks inherit
        passes = re.findall(r"PASS: .*\(1 ranks\)", p.stdout + p.stderr)
        ok(p.returncode == 0 and len(passes) == 2,
           f"{name}: exit 0 (got {p.returncode}), each of the 2 processes a job of one that passed its checks")
        said = [l for l in p.stderr.splitlines() if WRONG in l]
        ok(len(said) == 1, f"{name}: the collector says so in exactly one line (got {len(said)})")
        bad = [l for l in p.stderr.splitlines() if re.search(r"internal error[:( ]|salvage", l)]
        ok(not bad, f"{name}: no other complaint (got {bad[:2]})")
        ok(not os.path.exists(trace) and not os.path.exists(trace + ".1"), f"{name}: no archive written")
    print(f"1..{len(checks)}")
    return 0 if all(checks) else 1


if __name__ == "__main__":
    sys.exit(main())
