#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""ljhalf's pairs (bench/fullnode.sh) from its raw.txt: per pair B over A, the mean of the
repetitions' own ratios ± its standard error, their median and standard deviation, for LAMMPS's
loop time and the wall. The two jobs of a repetition ran at the same time on the two halves of the
cores, so each repetition's ratio is one measurement; the mean's standard error is the figure's
error bound. --trim K leaves out the K lowest and K highest ratios of each pair first (a
repetition where one job alone ran twice as long: host16-r12a has two), and says so.

  half_stats.py RAW "A/B ..." [--trim K]   (the run's FULLNODE_HALF, e.g. "base/with0 base/recoff")"""
import math
import statistics
import sys


def main():
    args = sys.argv[1:]
    trim = 0
    if len(args) == 4 and args[2] == "--trim" and args[3].isdigit():
        trim = int(args[3])
        args = args[:2]
    if len(args) != 2:
        sys.exit(__doc__)
    pairs = [p.split("/") for p in args[1].split()]
    runs = {}  # (pair index, tag) -> [(wall, loop)] in repetition order
    for line in open(args[0]):
        f = line.split()
        if not f or not f[0].startswith("ljhalf."):
            continue
        _, p, tag = f[0].split(".", 2)
        loop = float(f[f.index("loop_s") + 1])
        runs.setdefault((int(p), tag), []).append((float(f[1]), loop))
    for i, (a, b) in enumerate(pairs):
        ra, rb = runs.get((i, a), []), runs.get((i, b), [])
        for what, k in (("loop", 1), ("wall", 0)):
            rat = sorted(y[k] / x[k] for x, y in zip(ra, rb) if x[k] == x[k] and y[k] == y[k] and x[k] > 0)
            med = statistics.median(rat) if rat else float("nan")
            rat = rat[trim:len(rat) - trim]
            if len(rat) < 2:
                print(f"{b} over {a}, {what}: fewer than 2 repetitions")
                continue
            m, sd = statistics.fmean(rat), statistics.stdev(rat)
            cut = f", {trim} lowest and highest left out" if trim else ""
            print(f"{b} over {a}, {what}: x{m:.3f} ± {sd / math.sqrt(len(rat)):.3f} (median x{med:.3f}, "
                  f"s.d. {sd:.3f}, {len(rat)} reps{cut})")


if __name__ == "__main__":
    main()
