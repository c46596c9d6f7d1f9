#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""zecoll-aggregate --diff on reports of synthetic jobs with known differences.

  diff_test.py --aggregate BIN --synth BIN --mpiexec MPIRUN --work DIR

  A: 6 ranks; B: the same model with 12 ranks and another seed (aggregated with 2 readers);
  C: 8 ranks with k_axpy 30% slower (zecoll-synth --slowdown 30).
  A vs A: nothing flagged, exit 0.   A vs B: different rank counts, no regression, exit 0.
  A vs C: k_axpy (and only it) regresses per call, per rank and at p50, exit 1.
  C vs A: the same change is an improvement, exit 0.
  Malformed, foreign and missing reports: exit 2 with one message naming the file.
"""
import argparse
import os
import shutil
import subprocess
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--aggregate", required=True)
    ap.add_argument("--synth", required=True)
    ap.add_argument("--mpiexec", default="mpirun")
    ap.add_argument("--work", required=True)
    a = ap.parse_args()
    w = os.path.abspath(a.work)
    shutil.rmtree(w, ignore_errors=True)
    os.makedirs(w)
    specs = {"A": ["--ranks", "6"], "B": ["--ranks", "12", "--seed", "5"], "C": ["--ranks", "8", "--slowdown", "30"]}
    for n, args in specs.items():
        subprocess.run([a.synth, "--out", f"{w}/{n}", "--ops", "60"] + args, check=True)
        cmd = [a.aggregate, f"{w}/{n}", "-q", "--json", f"{w}/{n}.json"]
        if n == "B":
            cmd = [a.mpiexec, "--allow-run-as-root", "--oversubscribe", "-np", "2"] + cmd
        subprocess.run(cmd, check=True, capture_output=True)
    fails = 0

    def diff(x, y, want_rc, must=(), must_not=(), err_names=None):
        nonlocal fails
        p = subprocess.run([a.aggregate, "--diff", x, y], capture_output=True, text=True)
        problems = []
        if p.returncode != want_rc:
            problems.append(f"exit {p.returncode}, want {want_rc}")
        for m in must:
            if not any(m(l) for l in p.stdout.splitlines()):
                problems.append(f"no line satisfies {m.__doc__}")
        for m in must_not:
            bad = [l for l in p.stdout.splitlines() if m(l)]
            if bad:
                problems.append(f"unexpected: {bad[:2]}")
        if err_names is not None:
            ours = [l for l in p.stderr.splitlines() if l.startswith("zecoll-aggregate:")]
            if len(ours) != 1 or not ours[0].startswith(f"zecoll-aggregate: {err_names}: "):
                problems.append(f"want one message naming {err_names}: {p.stderr!r}")
        fails += bool(problems)
        print(("FAIL " if problems else "ok ") + f"--diff {os.path.basename(x)} {os.path.basename(y)}: " +
              ("; ".join(problems) if problems else (p.stdout.strip().splitlines() or [p.stderr.strip()])[-1]))
        if problems:
            print(p.stdout[-3000:], p.stderr[-1000:])

    def reg_axpy(l):
        """a REGRESSION line for k_axpy"""
        return "REGRESSION" in l and "k_axpy" in l

    def faster_axpy(l):
        """k_axpy per call faster"""
        return l.startswith("per call") and "k_axpy" in l and l.endswith("faster")

    def any_reg(l):
        """REGRESSION"""
        return "REGRESSION" in l

    def reg_not_axpy(l):
        """a REGRESSION of another kernel"""
        return "REGRESSION" in l and "k_axpy" not in l

    def nothing(l):
        """0 changes"""
        return l.startswith("0 change(s) beyond noise")

    A, B, C = f"{w}/A.json", f"{w}/B.json", f"{w}/C.json"
    diff(A, A, 0, must=(nothing,))
    diff(A, B, 0, must_not=(any_reg,))
    diff(A, C, 1, must=(reg_axpy,), must_not=(reg_not_axpy,))
    diff(C, A, 0, must=(faster_axpy,), must_not=(any_reg,))
    open(f"{w}/bad.json", "w").write('{"schema_version": 1, "kernels": [')
    diff(A, f"{w}/bad.json", 2, err_names=f"{w}/bad.json")
    open(f"{w}/other.json", "w").write('{"schema_version": 99, "kernels": {}, "job": {}}')
    diff(f"{w}/other.json", A, 2, err_names=f"{w}/other.json")
    diff(A, f"{w}/none.json", 2, err_names=f"{w}/none.json")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
