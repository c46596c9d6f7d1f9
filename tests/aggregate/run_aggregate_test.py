#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Aggregate one archive with K = 1, 2, 3, 4 readers and judge the result.

  run_aggregate_test.py --aggregate BIN --mpiexec MPIRUN --work DIR
        (--archive DIR | --synth BIN [--synth-arg=A ...]) [--contract mpi|serial] [--truth-glob PATTERN]
        [--ks 1,2,3,4] [--timeout S] [--papi-expected FILE] [--planted FILE]

Steps:
  1. with --synth: zecoll-synth writes the archive and its expected statistics into DIR;
  2. check_archive.py: the archive follows docs/archive.md (with --contract);
  3. for every K: `zecoll-aggregate ARCHIVE` (K = 1 without mpirun, else `mpirun -np K`), writing
     the text, JSON, HTML, CSV reports and the Chrome-trace timeline into DIR/K<k>/; exit 0;
  4. every file of every K is byte-identical to K = 1's;
  5. check_report.py: K = 1's JSON and timeline against the archive read with python3-otf2, the
     truth logs (--truth-glob, `%r` = rank), the generator's expected statistics and the PAPI sums
     the test that wrote the archive computed from its program's own account (--papi-expected),
     and the wait states and GPU idle a program planted (--planted: check_planted.py).
Exit 77 (skipped) when the test that writes the archive skipped: its reason is in SKIPPED next to
where the archive would be (tests/papi/run_papi_test.py).
"""
import argparse
import filecmp
import glob
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
PY = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable


def run(cmd, timeout, **kw):
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, **kw)
    return p.returncode, p.stdout, p.stderr


def tree(d):
    out = []
    for root, _, files in os.walk(d):
        for f in files:
            out.append(os.path.relpath(os.path.join(root, f), d))
    return sorted(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--aggregate", required=True)
    ap.add_argument("--mpiexec", default="mpirun")
    ap.add_argument("--work", required=True)
    ap.add_argument("--archive")
    ap.add_argument("--synth")
    ap.add_argument("--synth-arg", action="append", default=[])
    ap.add_argument("--contract", choices=["mpi", "serial"])
    ap.add_argument("--truth-glob")
    ap.add_argument("--ks", default="1,2,3,4")
    ap.add_argument("--timeout", type=float, default=120)
    ap.add_argument("--papi-expected")
    ap.add_argument("--planted")
    a = ap.parse_args()
    work = os.path.abspath(a.work)
    if os.path.isdir(work):
        shutil.rmtree(work)
    os.makedirs(work)
    fails = []
    expected = None
    if a.synth:
        archive = os.path.join(work, "archive")
        expected = os.path.join(work, "expected.json")
        rc, out, err = run([a.synth, "--out", archive, "--expected", expected] + a.synth_arg, a.timeout)
        if rc != 0:
            print(f"FAIL: zecoll-synth exit {rc}: {err[-2000:]}")
            return 1
    else:
        archive = os.path.abspath(a.archive)
        skipped = os.path.join(os.path.dirname(archive), "SKIPPED")
        if not os.path.exists(os.path.join(archive, "traces.otf2")) and os.path.exists(skipped):
            print(f"SKIP: the test that writes this archive skipped: {open(skipped).read().strip()}")
            return 77
        if not os.path.exists(os.path.join(archive, "traces.otf2")):
            print(f"FAIL: no archive at {archive} (did the test that writes it run?)")
            return 1

    cmd = [PY, os.path.join(HERE, "check_archive.py"), archive] + ([f"--{a.contract}"] if a.contract else [])
    rc, out, err = run(cmd, a.timeout)
    print(out.splitlines()[-1] if out else err[-500:])
    if rc != 0:
        fails.append("the archive breaks the contract:\n" + "\n".join(l for l in out.splitlines() if l.startswith("FAIL")))

    ks = [int(k) for k in a.ks.split(",")]
    for k in ks:
        d = os.path.join(work, f"K{k}")
        os.makedirs(d)
        args = [archive, "-q", "--width", "120", "--no-progress", "--text", f"{d}/report.txt", "--json", f"{d}/report.json",
                "--html", f"{d}/report.html", "--csv", f"{d}/csv", "--timeline", f"{d}/timeline.json"]
        full = [a.aggregate] + args if k == 1 else [a.mpiexec, "--allow-run-as-root", "--oversubscribe", "-np", str(k),
                                                     a.aggregate] + args
        rc, out, err = run(full, a.timeout)
        if rc != 0:
            fails.append(f"K={k}: exit {rc}: {err[-2000:]}")
            continue
        print(f"K={k}: {len(tree(d))} files")
    base = os.path.join(work, f"K{ks[0]}")
    for k in ks[1:]:
        d = os.path.join(work, f"K{k}")
        if tree(d) != tree(base):
            fails.append(f"K={k} wrote other files than K={ks[0]}")
            continue
        differ = [f for f in tree(base) if not filecmp.cmp(os.path.join(base, f), os.path.join(d, f), shallow=False)]
        if differ:
            fails.append(f"K={k}: not byte-identical to K={ks[0]}: {differ}")
        else:
            print(f"K={k}: byte-identical to K={ks[0]}")

    if os.path.exists(os.path.join(base, "report.json")):
        cmd = [PY, os.path.join(HERE, "check_report.py"), "--archive", archive, "--report", f"{base}/report.json",
               "--timeline", f"{base}/timeline.json"]
        if expected:
            cmd += ["--expected", expected]
        if a.papi_expected:
            cmd += ["--papi-expected", a.papi_expected]
        if a.planted:
            cmd += ["--planted", a.planted]
        if a.truth_glob:
            for r in range(1024):
                p = a.truth_glob.replace("%r", str(r))
                if not os.path.exists(p):
                    break
                cmd += ["--truth", f"{r}:{p}"]
        rc, out, err = run(cmd, a.timeout)
        print(out.strip().splitlines()[-1] if out.strip() else err[-1000:])
        if rc != 0:
            fails.append("independent check:\n" + out[-4000:] + err[-2000:])
    for f in fails:
        print("FAIL:", f)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
