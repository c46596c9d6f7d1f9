#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Summary of a side-by-side device run (bench/results/*/ab.sh, final.sh): RAW holds lines
"<group>.<variant> <value>", one per run, repetitions in order. For each group: the median of
its "base" runs, each variant's median over that base, and the median of the per-repetition
differences B - A ("paired": the variants ran next to each other, order alternating).

  paired.py RAW A B GROUP...      e.g. paired.py ab_raw.txt s1 s2 mpi0 mpi8 reg"""
import collections
import statistics
import sys


def main():
    if len(sys.argv) < 5:
        sys.exit(__doc__)
    raw, a, b, groups = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
    d = collections.defaultdict(list)
    for line in open(raw):
        k, v = line.split()
        d[k].append(float(v))
    for g in groups:
        base = statistics.median(d[f"{g}.base"])
        va, vb = d[f"{g}.{a}"], d[f"{g}.{b}"]
        paired = statistics.median(y - x for x, y in zip(va, vb))
        print(f"{g:6s} base {base:7.1f}  {a} {statistics.median(va) - base:+7.1f}  {b} {statistics.median(vb) - base:+7.1f}"
              f"  paired {b}-{a} {paired:+7.1f}  (n={len(va)})")


if __name__ == "__main__":
    main()
