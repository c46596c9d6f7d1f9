#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""ljhalf's pairs (bench/fullnode.sh) from its raw.txt: per pair B over A, the mean of the
repetitions' own ratios ± its standard error, their median and standard deviation, for LAMMPS's
loop time and the wall. The two jobs of a repetition ran at the same time on the two halves of the
cores, so each repetition's ratio is one measurement; the mean's standard error is the figure's
error bound.

  half_stats.py RAW "A/B ..."     (the run's FULLNODE_HALF, e.g. "base/with0 base/recoff")"""
import math
import statistics
import sys


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    pairs = [p.split("/") for p in sys.argv[2].split()]
    runs = {}  # (pair index, tag) -> [(wall, loop)] in repetition order
    for line in open(sys.argv[1]):
        f = line.split()
        if not f or not f[0].startswith("ljhalf."):
            continue
        _, p, tag = f[0].split(".", 2)
        loop = float(f[f.index("loop_s") + 1])
        runs.setdefault((int(p), tag), []).append((float(f[1]), loop))
    for i, (a, b) in enumerate(pairs):
        ra, rb = runs.get((i, a), []), runs.get((i, b), [])
        for what, k in (("loop", 1), ("wall", 0)):
            rat = [y[k] / x[k] for x, y in zip(ra, rb) if x[k] == x[k] and y[k] == y[k] and x[k] > 0]
            if len(rat) < 2:
                print(f"{b} over {a}, {what}: fewer than 2 repetitions")
                continue
            m, sd = statistics.fmean(rat), statistics.stdev(rat)
            print(f"{b} over {a}, {what}: x{m:.3f} ± {sd / math.sqrt(len(rat)):.3f} (median x{statistics.median(rat):.3f}, "
                  f"s.d. {sd:.3f}, {len(rat)} reps)")


if __name__ == "__main__":
    main()
