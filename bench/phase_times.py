#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Where a job's fixed cost goes: reads the lines ZECOLL_PHASE_TIMES=1 prints at exit ("zecoll
phases rank R pid P: step wall/cpu ..." in microseconds, each step's share since the mark before
it, the CPU of all the process's threads) from files or stdin, and prints per step, across the
ranks of each run: the median and the largest wall time, the median CPU and the CPU of all ranks
together, then medians over the runs. Steps in parentheses are the application's (between our
marks), PMPI_* are MPI's own.
  usage: phase_times.py [FILE...]    (several runs: their lines in one file each, or one file
                                      with lines of several runs: a run is its set of pids)"""
import re
import statistics
import sys

LINE = re.compile(r"zecoll phases rank (\d+) pid (\d+):(.*)$")


def parse(lines):
    ranks = []  # (rank, [(step, wall, cpu)])
    for ln in lines:
        m = LINE.search(ln)
        if not m:
            continue
        toks = m.group(3).split()
        steps, seen = [], {}
        for name, v in zip(toks[0::2], toks[1::2]):
            w, c = (float(x) for x in v.split("/"))
            k = seen.get(name, 0)
            seen[name] = k + 1
            steps.append((name if not k else f"{name}#{k + 1}", w, c))
        ranks.append((int(m.group(1)), steps))
    return ranks


def runs_of(ranks):
    """Lines of one run: rank numbers do not repeat until the next run begins."""
    runs, cur = [], {}
    for r, steps in ranks:
        if r in cur:
            runs.append(cur)
            cur = {}
        cur[r] = steps
    if cur:
        runs.append(cur)
    return runs


def main():
    lines = []
    for f in sys.argv[1:] or ["-"]:
        lines += (sys.stdin if f == "-" else open(f, errors="replace")).read().splitlines()
    runs = runs_of(parse(lines))
    if not runs:
        print("phase_times: no 'zecoll phases' lines (ZECOLL_PHASE_TIMES=1)", file=sys.stderr)
        return 2
    order, per = [], {}
    for run in runs:
        for steps in run.values():
            for name, _, _ in steps:
                if name not in per:
                    per[name] = []
                    order.append(name)
        for name in per:
            got = [(w, c) for steps in run.values() for n, w, c in steps if n == name]
            if got:
                per[name].append((statistics.median(w for w, _ in got), max(w for w, _ in got),
                                  statistics.median(c for _, c in got), sum(c for _, c in got)))
    print(f"{len(runs)} run(s), {statistics.median(len(r) for r in runs):.0f} rank(s); us, medians over the runs")
    print(f"{'step':<22} {'wall med':>10} {'wall max':>10} {'cpu med':>10} {'cpu all':>10}")
    for name in order:
        v = per[name]
        print(f"{name:<22} " + " ".join(f"{statistics.median(x[i] for x in v):10.0f}" for i in range(4)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
