#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""The contract checker on archives that break one rule each (zecoll-synth --break RULE): it must
fail exactly that rule, and pass the same archive unbroken.

  contract_breaks.py --synth BIN --work DIR
"""
import argparse
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
RULES = ["A2", "A8", "A12", "A14", "A15", "A16"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--synth", required=True)
    ap.add_argument("--work", required=True)
    a = ap.parse_args()
    shutil.rmtree(a.work, ignore_errors=True)
    os.makedirs(a.work)
    fails = 0
    for rule in [None] + RULES:
        d = os.path.join(a.work, rule or "unbroken")
        subprocess.run([a.synth, "--out", d, "--ranks", "2", "--queues", "4", "--ops", "12", "--off", "--metrics"]
                       + (["--break", rule] if rule else []), check=True)
        p = subprocess.run(["/usr/bin/python3", os.path.join(HERE, "check_archive.py"), d, "--mpi"], capture_output=True, text=True)
        failed = sorted({l.split()[1].rstrip(":") for l in p.stdout.splitlines() if l.startswith("FAIL")})
        want = [rule] if rule else []
        ok = failed == want and (p.returncode != 0) == bool(rule)
        fails += not ok
        print(f"{'ok' if ok else 'FAIL'} {rule or 'unbroken'}: rules failed {failed}, expected {want}")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
