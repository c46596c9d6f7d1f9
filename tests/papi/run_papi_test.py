#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""PAPI counters in the archive: runs a program under the collector (alone or under mpirun) and
reads the metrics back with python3-otf2 (TAP-like messages, exit 0 = pass).

  run_papi_test.py --work DIR --libdir DIR --zesim LIB [--np N --mpiexec MPIRUN]
                   [--preload-first LIB] [--env K=V]... [checks] -- PROGRAM [ARGS...]
checks:
  --counted NAME        (repeatable, in order) exactly these metric members are defined, and
                        every sampled Enter/Leave carries a Metric with them; none: no metrics
  --count REGEX=N       stderr matches REGEX exactly N times
  --papi-mapped 0|1     every "libpapi mapped: X" line of the program says X
  --launches            kernel launches are sampled too (papi.around_launches)
  --threads T --spin-us S   T worker threads each burn S us of their own CPU time before each
                        zeEventHostSynchronize (zc_papi_app): the TASK-CLOCK delta between two
                        of a thread's synchronisations is at least S us (its own time, nobody
                        else's), and that thread's location exists with its own counters. The
                        program measures its spins on a task-clock of its own ("own cpu clock:
                        task-clock"), so the bound is exact: no tolerance
  --regions NAME=N      (repeatable) thread locations show N sampled instances of region NAME
                        in total
  --clock-test PROG     tests/collector/zc_clock_test: measures the host timestamps' error bound
  --papi-failed N       PAPI fails at run time after N good reads: exactly N Metric records, and
                        sampled regions after the failure may lack theirs
  --signal NAME         the program is killed by this signal (strict mode), no archive checks
  --skip-if-countable EVENT   exit 77 (skip) when papi_command_line can count EVENT here
  --classes N           N metric classes (ranks counting different events); a Metric's members are
                        then those of any class, a subsequence of --counted
The program runs with ZE_ENABLE_ALT_DRIVERS=zesim, ZECOLL_OUTPUT=DIR/trace, ZECOLL_STRICT=1.

What always holds for an archive with metrics (docs/archive.md A19): Metric records only on
thread locations, each right before an Enter or Leave at its time; every Enter and Leave of an
MPI call, of a Level Zero host synchronisation (and of a launch with --launches) has one, no
other region has one; a location's values never decrease; a TASK-CLOCK delta over a region is at
most the region's duration plus the measured bound: twice the host timestamps' error bound
(zc_clock_test) plus the CPU clock's measured rate excess over the region's length."""
import argparse
import collections
import glob
import json
import os
import re
import subprocess
import sys

SYNC = {"zeCommandQueueSynchronize", "zeEventHostSynchronize", "zeFenceHostSynchronize", "zeContextSystemBarrier"}
LAUNCH = {"zeCommandListAppendLaunchKernel", "zeCommandListAppendLaunchCooperativeKernel",
          "zeCommandListAppendLaunchKernelIndirect", "zeCommandListAppendLaunchMultipleKernelsIndirect"}
CLOCK_NONLINEAR_NS = 15.0  # tests/collector/zc_clock_test.c: the clock's departure from a line between anchors


class Fails:
    def __init__(self):
        self.n = 0

    def __call__(self, msg):
        self.n += 1
        if self.n <= 30:
            print(f"not ok: {msg}")


def run_program(a, cmd):
    os.makedirs(a.work, exist_ok=True)
    subprocess.run(["rm", "-rf"] + glob.glob(os.path.join(a.work, "*")))
    env = {"ZE_ENABLE_ALT_DRIVERS": a.zesim, "ZECOLL_OUTPUT": os.path.join(a.work, "trace"), "ZECOLL_STRICT": "1",
           "LD_PRELOAD": ":".join(([a.preload_first] if a.preload_first else []) + [os.path.join(a.libdir, "libzecoll.so")])}
    for kv in a.env:
        k, v = kv.split("=", 1)
        env[k] = v
    if a.np:
        full = [a.mpiexec, "--allow-run-as-root", "--oversubscribe", "-np", str(a.np)]
        for k, v in env.items():
            full += ["-x", f"{k}={v}"]
        full += cmd
        penv = dict(os.environ)
    else:
        full = cmd
        penv = dict(os.environ)
        penv.update(env)
    p = subprocess.run(full, env=penv, cwd=a.work, capture_output=True, text=True, timeout=150)
    return p


def clock_bound(prog):
    """the host timestamps' error bound (ns), as tests/collector/zc_clock_test measures it"""
    if not prog:
        return 2 * CLOCK_NONLINEAR_NS
    out = subprocess.run([prog, "100"], capture_output=True, text=True, timeout=60).stdout.strip().splitlines()
    j = json.loads(out[-1])
    return float(j["anchor_bound_ns"]) + CLOCK_NONLINEAR_NS


def main():
    ap = argparse.ArgumentParser()
    for x in ("--work", "--libdir", "--zesim"):
        ap.add_argument(x, required=True)
    ap.add_argument("--np", type=int, default=0)
    ap.add_argument("--mpiexec", default="mpirun")
    ap.add_argument("--preload-first")
    ap.add_argument("--env", action="append", default=[])
    ap.add_argument("--counted", action="append", default=[])
    ap.add_argument("--count", action="append", default=[])
    ap.add_argument("--papi-mapped", type=int, choices=[0, 1])
    ap.add_argument("--launches", action="store_true")
    ap.add_argument("--threads", type=int)
    ap.add_argument("--spin-us", type=int)
    ap.add_argument("--regions", action="append", default=[])
    ap.add_argument("--clock-test")
    ap.add_argument("--papi-failed", type=int)
    ap.add_argument("--signal")
    ap.add_argument("--skip-if-countable")
    ap.add_argument("--classes", type=int)
    ap.add_argument("cmd", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    cmd = a.cmd[1:] if a.cmd and a.cmd[0] == "--" else a.cmd
    fail = Fails()
    if a.skip_if_countable:
        r = subprocess.run(["papi_command_line", a.skip_if_countable], capture_output=True, text=True)
        if f"Successfully added: {a.skip_if_countable}" in r.stdout:
            print(f"SKIP: {a.skip_if_countable} can be counted on this host")
            return 77

    p = run_program(a, cmd)
    sys.stdout.write(p.stdout[-1500:])
    sys.stderr.write(p.stderr[-3000:])
    if p.returncode == 77:
        print("SKIP: the program skipped itself")
        return 77
    if a.signal:
        import signal
        if p.returncode != -getattr(signal, a.signal):
            fail(f"exit status {p.returncode}, want killed by {a.signal}")
    elif p.returncode != 0:
        fail(f"exit status {p.returncode}")
    if re.search(r"internal error[:(]", p.stderr) and a.papi_failed is None and not a.signal:
        fail("the collector reported an internal error")
    for c in a.count:
        rx, n = c.rsplit("=", 1)
        got = len(re.findall(rx, p.stderr))
        if got != int(n):
            fail(f"stderr matches {rx!r} {got} times, want {n}")
    mapped = re.findall(r"^libpapi mapped: (\d)$", p.stdout, re.M)
    if a.papi_mapped is not None:
        if not mapped or any(int(m) != a.papi_mapped for m in mapped):
            fail(f"libpapi mapped: {mapped}, want all {a.papi_mapped}")
    if a.signal:
        return finish(fail)
    a.own_clocks = re.findall(r"^own cpu clock: (.*)$", p.stdout, re.M)
    excess_per_ms = max([int(x) for x in re.findall(r"^cpu clock excess per ms: (-?\d+)$", p.stdout, re.M)] + [0])
    archives = sorted(glob.glob(os.path.join(a.work, "trace*")))
    if len(archives) != 1:
        fail(f"want one archive, found {archives}")
        return finish(fail)
    archive = archives[0]
    r = subprocess.run(["otf2-print", "--silent", "-Werror", os.path.join(archive, "traces.otf2")],
                       capture_output=True, text=True)
    if r.returncode != 0:
        fail(f"otf2-print -Werror: {(r.stderr or r.stdout)[:300]}")
    check_archive(a, archive, fail, clock_bound(a.clock_test), max(excess_per_ms, 0) / 1e6)
    return finish(fail)


def finish(fail):
    print("PASS" if fail.n == 0 else f"FAIL: {fail.n} problem(s)")
    return 0 if fail.n == 0 else 1


def check_archive(a, archive, fail, ts_bound, rate_excess):
    import otf2
    with otf2.reader.open(os.path.join(archive, "traces.otf2")) as tr:
        d = tr.definitions
        members = list(d.metric_members)
        names = [m.name for m in members]
        if names != a.counted:
            fail(f"metric members {names}, want {a.counted}")
        for m in members:
            if m.metric_type != otf2.MetricType.PAPI or m.metric_mode != otf2.MetricMode.ACCUMULATED_START:
                fail(f"member {m.name}: type {m.metric_type}, mode {m.metric_mode}")
            want_unit = "ns" if m.name in ("perf::TASK-CLOCK", "perf::CPU-CLOCK") else "#"
            if m.unit != want_unit:
                fail(f"member {m.name}: unit {m.unit!r}, want {want_unit!r}")
        classes = list(d.metric_classes)
        for c in classes:
            if c.occurrence != otf2.MetricOccurrence.SYNCHRONOUS:
                fail(f"metric class {c}: occurrence {c.occurrence}")
        if len(classes) != (a.classes or (1 if a.counted else 0)):
            fail(f"{len(classes)} metric classes, want {a.classes or (1 if a.counted else 0)}")
        sampled = lambda r: r.paradigm == otf2.Paradigm.MPI or r.name in SYNC or (a.launches and r.name in LAUNCH)
        per_loc = collections.defaultdict(list)
        for loc, ev in tr.events:
            per_loc[loc].append(ev)
    n_metric = sum(1 for evs in per_loc.values() for e in evs if type(e).__name__ == "Metric")
    if a.papi_failed is not None and n_metric != a.papi_failed:
        fail(f"{n_metric} Metric records, want {a.papi_failed} (the reads before PAPI failed)")
    if not a.counted and n_metric:
        fail(f"{n_metric} Metric records, want none")
    print(f"# {n_metric} Metric records on {len(per_loc)} locations; timestamp bound {ts_bound:.0f} ns, "
          f"CPU clock rate excess {rate_excess * 1e6:.0f} ppm")
    counts = collections.Counter()
    tc = names.index("perf::TASK-CLOCK") if "perf::TASK-CLOCK" in names else None
    worst_over = None
    threads_seen = 0
    for loc, evs in per_loc.items():
        cpu = loc.type == otf2.LocationType.CPU_THREAD
        last = None        # the location's previous Metric values (monotonic)
        pending = None     # a Metric waiting for its Enter/Leave
        stack = []         # (region, time, values at Enter)
        syncs = []         # this location's zeEventHostSynchronize: (enter values, leave values)
        for e in evs:
            kind = type(e).__name__
            if kind == "Metric":
                if not cpu:
                    fail(f"Metric on {loc.name} ({loc.type})")
                if pending is not None:
                    fail(f"{loc.name}: Metric at {pending[0]} not followed by its Enter/Leave")
                got = [m.name for m in e.metric.members]
                if got != names and not (a.classes and [n for n in names if n in got] == got):
                    fail(f"{loc.name}: Metric of class {e.metric}, want the members {names}")
                # by member name, so that classes with fewer members compare with the others
                vals = [dict(zip(got, e.values)).get(n) for n in names]
                if last is not None and any(v is not None and w is not None and v < w for v, w in zip(vals, last)):
                    fail(f"{loc.name}: counters decrease at {e.time}: {last} -> {vals}")
                last = vals
                pending = (e.time, vals)
                continue
            if kind in ("Enter", "Leave"):
                want = cpu and sampled(e.region)
                if want and (pending is None or pending[0] != e.time) and a.papi_failed is None and a.counted:
                    fail(f"{loc.name}: {kind} {e.region.name} at {e.time} without its Metric")
                if not want and pending is not None:
                    fail(f"{loc.name}: Metric before {kind} {e.region.name}, which is not sampled")
                vals = pending[1] if pending is not None and pending[0] == e.time else None
                pending = None
                if kind == "Enter":
                    stack.append((e.region, e.time, vals))
                    continue
                if not stack or stack[-1][0] != e.region:
                    fail(f"{loc.name}: Leave {e.region.name} does not close the open region")
                    continue
                region, t0, v0 = stack.pop()
                if not want:
                    continue
                counts[region.name] += 1
                if v0 is None or vals is None:
                    continue
                if tc is not None and vals[tc] is not None:
                    delta, wall = vals[tc] - v0[tc], e.time - t0
                    bound = wall + 2 * ts_bound + rate_excess * wall
                    over = delta - wall
                    worst_over = over if worst_over is None else max(worst_over, over)
                    if delta < 0 or delta > bound:
                        fail(f"{loc.name}: {region.name} at {t0}: TASK-CLOCK delta {delta} ns, region {wall} ns "
                             f"(bound {bound:.0f})")
                if region.name == "zeEventHostSynchronize":
                    syncs.append((v0, vals))
                continue
            if pending is not None:
                fail(f"{loc.name}: Metric at {pending[0]} followed by {kind}")
                pending = None
        if pending is not None:
            fail(f"{loc.name}: Metric at the end, without its Enter/Leave")
        # the threads' own CPU time between two synchronisations
        if a.spin_us and tc is not None and len(syncs) > 1:
            threads_seen += 1
            if not a.own_clocks or any(c != "task-clock" for c in a.own_clocks):
                # CLOCK_THREAD_CPUTIME_ID runs ahead of TASK-CLOCK by part of each context switch
                fail(f"the program measured its spins on {a.own_clocks}, not on a task-clock: the "
                     f"spins' bound needs TASK-CLOCK's own clock")
                break
            for (_, leave), (enter, _) in zip(syncs, syncs[1:]):
                own = enter[tc] - leave[tc]
                if own < a.spin_us * 1000:
                    fail(f"{loc.name}: TASK-CLOCK between two synchronisations {own} ns, but the thread burnt "
                         f"{a.spin_us} us of its own CPU time there")
    if worst_over is not None:
        print(f"# TASK-CLOCK delta - region duration: at most {worst_over} ns")
    if a.threads and a.spin_us and threads_seen < a.threads * max(a.np, 1):
        fail(f"{threads_seen} thread locations with their own spinning counters, want {a.threads * max(a.np, 1)}")
    return check_regions(a, per_loc, fail, counts)


def check_regions(a, per_loc, fail, counts):
    for spec in a.regions:
        name, n = spec.rsplit("=", 1)
        if counts.get(name, 0) != int(n):
            fail(f"{counts.get(name, 0)} sampled {name} regions, want {n}")


if __name__ == "__main__":
    sys.exit(main())
