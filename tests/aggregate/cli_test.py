#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""The command line of zecoll-aggregate and its alias `zecoll report`, on a synthetic job.

  cli_test.py --zecoll BIN --aggregate BIN --synth BIN --mpiexec MPIRUN --work DIR
"""
import argparse
import filecmp
import json
import os
import re
import shutil
import subprocess
import sys

CSV = ["kernels", "kernels_by_rank", "kernels_by_device", "kernels_by_queue", "transfers", "transfers_by_size",
       "transfers_by_rank", "utilisation", "utilisation_timeline", "idle_gaps", "launch_latency",
       "launch_latency_by_queue", "mpi", "level_zero_api", "barriers", "mpi_by_rank", "collectives", "slowest",
       "data_quality_locations", "data_quality_ranks", "data_quality_untraced", "papi_counters", "papi_regions", "papi_ranks", "comm_matrix",
       "comm_matrix_by_comm", "mpi_sizes", "waits", "waits_by_rank", "waits_by_function", "waits_by_comm", "waits_by_pair",
       "gpu_idle", "gpu_idle_waits", "gpu_idle_gaps"]


def main():
    ap = argparse.ArgumentParser()
    for o in ("zecoll", "aggregate", "synth", "mpiexec", "work"):
        ap.add_argument("--" + o, required=True)
    a = ap.parse_args()
    w = os.path.abspath(a.work)
    shutil.rmtree(w, ignore_errors=True)
    os.makedirs(w)
    arch = f"{w}/archive"
    subprocess.run([a.synth, "--out", arch, "--ranks", "5", "--ops", "40", "--off"], check=True)
    mpi = [a.mpiexec, "--allow-run-as-root", "--oversubscribe", "-np", "2"]
    fails = []

    def run(cmd, want=0):
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        if p.returncode != want:
            fails.append(f"{' '.join(cmd)}: exit {p.returncode}, want {want}: {p.stderr[-500:]}")
        return p

    def same(x, y, what):
        if not filecmp.cmp(x, y, shallow=False):
            fails.append(f"{what}: {x} and {y} differ")

    run([a.aggregate, arch, "-q", "--json", f"{w}/direct.json"])
    run([a.zecoll, "report", arch, "-q", "--json", f"{w}/report.json"])
    run(mpi + [a.zecoll, "report", arch, "-q", "--json", f"{w}/report2.json"])
    same(f"{w}/direct.json", f"{w}/report.json", "zecoll report")
    same(f"{w}/direct.json", f"{w}/report2.json", "mpirun -np 2 zecoll report")

    run([a.aggregate, arch, "-q", "--output", f"{w}/out"])
    for f in ("report.txt", "report.json", "report.html"):
        if not os.path.isfile(f"{w}/out/{f}"):
            fails.append(f"--output: no {f}")
    got = sorted(f[:-4] for f in os.listdir(f"{w}/out/csv") if f.endswith(".csv"))
    if "relative error" not in open(f"{w}/out/csv/README.txt").read():
        fails.append("--output: csv/README.txt does not state the sketch's error")
    if got != sorted(CSV):
        fails.append(f"--output: CSV files {got}")
    same(f"{w}/out/report.json", f"{w}/direct.json", "--output's JSON")

    # timeline: a rank subset and a time window
    run([a.aggregate, arch, "-q", "--timeline", f"{w}/tl.json", "--timeline-ranks", "1,3-4", "--timeline-range", "1ms:2ms"])
    T = json.load(open(f"{w}/tl.json"))
    xs = [e for e in T["traceEvents"] if e.get("ph") == "X"]
    if not xs:
        fails.append("timeline: no events")
    if {e["pid"] for e in xs} != {1, 3, 4}:
        fails.append(f"timeline ranks {sorted({e['pid'] for e in xs})}, want [1, 3, 4]")
    out = [e for e in xs if e["ts"] < 1000 - 1e-6 or e["ts"] + e["dur"] > 2000 + 1e-6]
    if out:
        fails.append(f"timeline: events outside 1ms..2ms: {out[:2]}")
    run([a.aggregate, arch, "-q", "--timeline", f"{w}/tl2.json", "--timeline-ranks", "x"], want=2)

    # text options
    p = run([a.aggregate, arch, "--top", "2", "--sort", "name", "--width", "90"])
    sec = p.stdout.split("== Kernels")[1].split("\n==")[0].strip().splitlines()
    names = [l.split()[0] for l in sec[2:]]
    if names != sorted(names) or len(names) != 2:
        fails.append(f"--top 2 --sort name: kernel rows {names}")
    if any(len(l) > 90 for l in sec):
        fails.append("--width 90: a kernel table line is wider")
    if p.stderr:
        fails.append(f"no progress expected when stderr is not a terminal: {p.stderr[-200:]}")
    p = run([a.aggregate, arch, "-q", "--progress"])
    if "ETA" not in p.stderr:
        fails.append(f"--progress: {p.stderr[-200:]!r}")
    p = run([a.aggregate, arch, "--no-such-option"], want=2)
    if len([l for l in p.stderr.splitlines() if l.startswith("zecoll-aggregate:")]) != 1:
        fails.append(f"bad option: {p.stderr!r}")
    run([a.aggregate, arch, "--top", "zero"], want=2)
    p = run([a.aggregate, "--help"])
    if "--timeline" not in p.stdout:
        fails.append("--help does not list the options")
    p = run([a.zecoll, "--help"])
    if "zecoll report" not in p.stdout:
        fails.append("zecoll --help does not list report")
    for f in fails:
        print("FAIL:", f)
    if not fails:
        print("ok: zecoll report, --output, timeline subsets, text options, progress, usage errors")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
