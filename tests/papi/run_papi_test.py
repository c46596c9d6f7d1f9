#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""PAPI counters in the archive: runs a program under the collector (alone or under mpirun) and
reads the metrics back with python3-otf2 (TAP-like messages, exit 0 = pass, 77 = skipped with
"SKIP: reason", also left in DIR/SKIPPED for the tests that read this test's archive).

  run_papi_test.py --work DIR --libdir DIR --zesim LIB [--np N --mpiexec MPIRUN]
                   [--info ZT_PAPI_INFO] [--sde-lib LIBZT_SDE] [--preload-first LIB] [--env K=V]...
                   [checks] -- PROGRAM [ARGS...]
  run_papi_test.py --work DIR --info ZT_PAPI_INFO --config-check ZECOLL_CONFIG --env ZECOLL_PAPI_EVENTS=...
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
  --skip-if-countable EVENT   skip when PAPI can count EVENT here
  --classes N           N metric classes (ranks counting different events); a Metric's members are
                        then those of any class, a subsequence of --counted
Software defined events (zt_sde.c: sde:::zecoll_test::work, work3, adds, reads):
  --needs-sde           skip when built without libsde (no --sde-lib)
  --preload-sde         LD_PRELOAD the events' library (programs that do not link it)
  --ledger              every thread's sampled calls, in order, with the values of work, work3
                        (3 x work) and adds at each Enter and Leave, are exactly those of the
                        program's own account (DIR/ledger.RANK.json, zc_papi_app.c); and reads
                        grows by exactly one per sample. Writes DIR/papi-expected.json, the
                        report's PAPI sums computed from the ledgers (tests/aggregate)
  --inside NAME=W       the work done inside region NAME, all ranks together, is W
  --reads               reads (the number of times PAPI read it on the thread) grows at every
                        sample of a location and by exactly one over each region; where no thread
                        slot changed hands, writes DIR/papi-expected.json from that rule
PAPI's components (--info: zt_papi_info, run in the program's environment):
  --needs-component C   skip when PAPI's component C is disabled here, with PAPI's reason
  --perf-disabled-warning partial|none   the warning names perf_event, disabled with PAPI's
                        reason, and what counts (partial: "counting" the sde event; none: the
                        enabled components with events); skip where perf_event is enabled
  --config-check TOOL   no program: `TOOL check` prints, on stderr, exactly the warnings expected
                        from zt_papi_info's answers for ZECOLL_PAPI_EVENTS
ZECOLL_TEST_FAKE_NO_PMU=1 in the environment makes PAPI's perf_event component look disabled on
a host that has a PMU: libpfm4 is told to leave out the CPU's PMUs (LIBPFM_DISABLED_PMUS, libpfm4's
own setting; those zt_papi_info's perf_event lists, less perf's software PMUs), so PAPI disables
perf_event itself, with its own reason, as on a CPU that libpfm4 does not know. A host without a
PMU is left as it is. The program runs with ZE_ENABLE_ALT_DRIVERS=zesim, ZECOLL_OUTPUT=DIR/trace,
ZECOLL_STRICT=1.

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
SDE = "sde:::zecoll_test::"
PAPI_EDELAY_INIT = -26  # a component that starts when one of its events is used: not disabled


class Fails:
    def __init__(self):
        self.n = 0

    def __call__(self, msg):
        self.n += 1
        if self.n <= 30:
            print(f"not ok: {msg}")


class Skip(Exception):
    pass


def program_env(a):
    env = {"ZE_ENABLE_ALT_DRIVERS": a.zesim, "ZECOLL_OUTPUT": os.path.join(a.work, "trace"), "ZECOLL_STRICT": "1",
           "LD_PRELOAD": ":".join(([a.preload_first] if a.preload_first else []) +
                                  ([a.sde_lib] if a.preload_sde else []) + [os.path.join(a.libdir, "libzecoll.so")])}
    env.update(a.fake_env)
    for kv in a.env:
        k, v = kv.split("=", 1)
        env[k] = v
    return env


def run_program(a, cmd):
    env = program_env(a)
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
    return subprocess.run(full, env=penv, cwd=a.work, capture_output=True, text=True, timeout=150)


def papi_info(a, env, events=(), sde=False):
    """zt_papi_info's answer in an environment like the program's (sde: with the program's
    software defined events, as zc_papi_app has them)"""
    if not a.info:
        raise Skip("PAPI's components cannot be listed here (no zt_papi_info: built without libpapi-dev)")
    e = dict(os.environ)
    e.update(env)
    if sde and a.sde_lib:
        e["LD_PRELOAD"] = ":".join(([a.preload_first] if a.preload_first else []) + [a.sde_lib])
    r = subprocess.run([a.info] + list(events), env=e, capture_output=True, text=True, timeout=60)
    try:
        return json.loads(r.stdout)
    except ValueError:
        raise SystemExit(f"not ok: zt_papi_info: {r.stdout[-300:]} {r.stderr[-300:]}")


def component(info, name):
    return next((c for c in info["components"] if c["name"] == name), None)


def disabled(c):
    return c is not None and c["disabled"] not in (0, PAPI_EDELAY_INIT)


def fake_no_pmu(a):
    """ZECOLL_TEST_FAKE_NO_PMU=1: the environment in which perf_event is disabled (see above)."""
    if os.environ.get("ZECOLL_TEST_FAKE_NO_PMU") != "1" or not a.info:
        return {}
    pe = component(papi_info(a, {}), "perf_event")
    if pe is None or disabled(pe):
        print(f"# ZECOLL_TEST_FAKE_NO_PMU=1: perf_event is disabled here already: {pe and pe['reason']!r}")
        return {}
    cores = [p for p in pe["pmus"] if not p.startswith("perf")]
    old = os.environ.get("LIBPFM_DISABLED_PMUS")
    env = {"LIBPFM_DISABLED_PMUS": ",".join(([old] if old else []) + cores)}
    pe2 = component(papi_info(a, env), "perf_event")
    if not cores or not disabled(pe2):
        raise SystemExit(f"not ok: ZECOLL_TEST_FAKE_NO_PMU=1: perf_event (PMUs {pe['pmus']}) is still enabled with "
                         f"LIBPFM_DISABLED_PMUS={env['LIBPFM_DISABLED_PMUS']}")
    print(f"# ZECOLL_TEST_FAKE_NO_PMU=1: LIBPFM_DISABLED_PMUS={env['LIBPFM_DISABLED_PMUS']}: perf_event disabled: "
          f"{pe2['reason']!r}")
    return env


def clock_bound(prog):
    """the host timestamps' error bound (ns), as tests/collector/zc_clock_test measures it"""
    if not prog:
        return 2 * CLOCK_NONLINEAR_NS
    out = subprocess.run([prog, "100"], capture_output=True, text=True, timeout=60).stdout.strip().splitlines()
    j = json.loads(out[-1])
    return float(j["anchor_bound_ns"]) + CLOCK_NONLINEAR_NS


def preconditions(a):
    """Raises Skip when this test cannot run here; returns extra --count checks."""
    if a.needs_sde and not a.sde_lib:
        raise Skip("built without PAPI's libsde (sde_lib.h and libsde.so: Debian libpapi-dev and libsde1): no "
                   "software defined events to count")
    if a.needs_component:
        c = component(papi_info(a, a.fake_env), a.needs_component)
        if c is None:
            raise Skip(f"this PAPI has no {a.needs_component} component")
        if disabled(c):
            raise Skip(f"PAPI's {a.needs_component} component is disabled here: \"{c['reason']}\""
                       + (" (ZECOLL_TEST_FAKE_NO_PMU=1)" if a.fake_env else ""))
    if a.skip_if_countable:
        ev = papi_info(a, a.fake_env, [a.skip_if_countable])["events"][a.skip_if_countable]
        if ev["countable"]:
            raise Skip(f"{a.skip_if_countable} can be counted on this host")
    if a.perf_disabled_warning:
        return [perf_disabled_warning(a)]
    return []


def perf_disabled_warning(a):
    """The one warning of a run whose perf events cannot count, as PAPI's answers predict it."""
    info = papi_info(a, a.fake_env, sde=True)
    pe = component(info, "perf_event")
    if not disabled(pe):
        raise Skip("perf_event is enabled here: the warning of a host without it is tested with "
                   "ZECOLL_TEST_FAKE_NO_PMU=1 (scripts/test.sh)")
    left = (r"'perf::TASK-CLOCK' \(unknown to PAPI: [^)]+\), "
            r"'PAPI_TOT_INS' \((unknown to PAPI|cannot be counted here): [^)]+\)")
    note = re.escape(f"; PAPI's perf_event component is disabled here: \"{pe['reason']}\"")
    if a.perf_disabled_warning == "partial":
        return f"PAPI events not counted: {left}{note}; counting {re.escape(SDE)}work$=1"
    enabled = ", ".join(c["name"] for c in info["components"] if c["disabled"] == 0 and c["events"])
    tail = f"; enabled PAPI components with events here: {enabled}" if enabled else \
        "; no enabled PAPI component has events here"
    return (f"PAPI counts none of papi.events here: {left}{note}{re.escape(tail)}: PAPI counters are off, "
            f"the run is recorded without them$=1")


def config_check(a, fail):
    """zecoll config check: exactly the warnings PAPI's answers (zt_papi_info) predict."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ZECOLL_")}
    env.update(a.fake_env)
    for kv in a.env:
        k, v = kv.split("=", 1)
        env[k] = v
    events = env["ZECOLL_PAPI_EVENTS"].split(",")
    info = papi_info(a, a.fake_env, [e for e in events if not e.startswith("sde:::")])
    comps = info["components"]

    def note(cidx):
        c = comps[cidx] if 0 <= cidx < len(comps) else None
        return f"; PAPI's {c['name']} component is disabled here: \"{c['reason']}\"" if disabled(c) else ""
    where = "ZECOLL_PAPI_EVENTS: warning: papi.events: "
    want, can, sde = [], [], []
    for e in events:
        if e.startswith("sde:::"):
            sde.append(f"'{e}'")
            continue
        x = info["events"][e]
        if not x["known"]:
            pre = e.split(":::")[0] if ":::" in e else None
            cidx = 0 if pre is None else next((i for i, c in enumerate(comps) if c["name"] == pre), -1)
            want.append(f"{where}PAPI on this host does not know '{e}'{note(cidx)} (the collector will skip it)")
        elif not x["countable"]:
            want.append(f"{where}PAPI on this host cannot count '{e}': {x['why']}{note(x['component'])} "
                        f"(the collector will skip it)")
        else:
            can.append(f"'{e}'")
    if want:
        want.append(f"{where}on this host PAPI can count {', '.join(can) or 'none of them'}" +
                    (f"; the program's own software defined events (libsde), on any host: {', '.join(sde)}" if sde else ""))
    r = subprocess.run([a.config_check, "check"], env=env, cwd=a.work, capture_output=True, text=True, timeout=60)
    got = r.stderr.splitlines()
    print("\n".join(f"# {l}" for l in got))
    if r.returncode != 0:
        fail(f"exit status {r.returncode}")
    if got != want:
        fail("stderr is not what PAPI's answers predict; want:\n" + "\n".join(f"#   {l}" for l in want))
    if not [l for l in want if "disabled here" in l] and not a.fake_env and disabled(component(info, "perf_event")):
        fail("perf_event is disabled here but no warning names it")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--work", required=True)
    for x in ("--libdir", "--zesim"):
        ap.add_argument(x)
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
    ap.add_argument("--info")
    ap.add_argument("--sde-lib")
    ap.add_argument("--needs-sde", action="store_true")
    ap.add_argument("--preload-sde", action="store_true")
    ap.add_argument("--ledger", action="store_true")
    ap.add_argument("--inside", action="append", default=[])
    ap.add_argument("--reads", action="store_true")
    ap.add_argument("--needs-component")
    ap.add_argument("--perf-disabled-warning", choices=["partial", "none"])
    ap.add_argument("--config-check")
    ap.add_argument("cmd", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    cmd = a.cmd[1:] if a.cmd and a.cmd[0] == "--" else a.cmd
    fail = Fails()
    os.makedirs(a.work, exist_ok=True)
    subprocess.run(["rm", "-rf"] + glob.glob(os.path.join(a.work, "*")))
    a.fake_env = fake_no_pmu(a)
    try:
        a.count += preconditions(a)
    except Skip as e:
        print(f"SKIP: {e}")
        with open(os.path.join(a.work, "SKIPPED"), "w") as f:
            f.write(f"{e}\n")
        return 77
    if a.config_check:
        config_check(a, fail)
        return finish(fail)

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
        got = len(re.findall(rx, p.stderr, re.M))
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
        procs = sorted([g for g in d.location_groups if g.location_group_type == otf2.LocationGroupType.PROCESS],
                       key=lambda g: g._ref)
        rank_of = {g._ref: i for i, g in enumerate(procs)}
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
    seqs = {}  # thread location -> (rank, its sampled regions in order: [name, {member: value} at Enter, at Leave])
    for loc, evs in per_loc.items():
        cpu = loc.type == otf2.LocationType.CPU_THREAD
        last = None        # the location's previous Metric values (monotonic)
        pending = None     # a Metric waiting for its Enter/Leave
        stack = []         # (region, time, values at Enter, its entry in seq)
        syncs = []         # this location's zeEventHostSynchronize: (enter values, leave values)
        seq = []
        if cpu:
            g = loc.group
            seqs[loc] = (rank_of[(g if g.location_group_type == otf2.LocationGroupType.PROCESS
                                  else g.creating_location_group)._ref], seq)
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
                pending = (e.time, vals, dict(zip(got, e.values)))
                continue
            if kind in ("Enter", "Leave"):
                want = cpu and sampled(e.region)
                if want and (pending is None or pending[0] != e.time) and a.papi_failed is None and a.counted:
                    fail(f"{loc.name}: {kind} {e.region.name} at {e.time} without its Metric")
                if not want and pending is not None:
                    fail(f"{loc.name}: Metric before {kind} {e.region.name}, which is not sampled")
                at = pending is not None and pending[0] == e.time
                vals, named = (pending[1], pending[2]) if at else (None, None)
                pending = None
                if kind == "Enter":
                    entry = [e.region.name, named, None, 0]  # the last: sampled regions nested in it
                    if want:
                        for outer in stack:
                            if outer[3] is not None:
                                outer[3][3] += 1
                        seq.append(entry)
                    stack.append((e.region, e.time, vals, entry if want else None))
                    continue
                if not stack or stack[-1][0] != e.region:
                    fail(f"{loc.name}: Leave {e.region.name} does not close the open region")
                    continue
                region, t0, v0, entry = stack.pop()
                if not want:
                    continue
                entry[2] = named
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
    seqs = {loc: (r, q) for loc, (r, q) in seqs.items() if q}
    if a.reads and check_reads(seqs, fail) and not a.ledger:
        # no ledger, but the rule gives every value: the report's sums over the regions recorded
        write_expected(a, {rank: [(loc.name, [(x[0], {}, {}) for x in q]) for loc, (r, q) in seqs.items() if r == rank]
                           for rank in {r for r, _ in seqs.values()}})
    if a.ledger:
        check_ledger(a, seqs, fail)
    check_inside(a, seqs, fail)
    return check_regions(a, per_loc, fail, counts)


def reads_of(seq):
    """A location's reads values, sample by sample (Enter, Leave, ...; None where a Metric lacks it)"""
    return [v.get(SDE + "reads") if v else None for _, v0, v1, _ in seq for v in (v0, v1)]


def check_reads(seqs, fail):
    """The reads counter: PAPI called it once to start a thread's set and once per sample since
    (libsde 7.0); the thread whose first sample loaded PAPI also started and stopped the probe's
    set, twice more. So a location's first value is 1, or 3 on one location per rank, each
    sample adds one (more where a slot's next thread took over: its predecessor's stop and its
    own start), and a region without sampled regions inside spans exactly one. True when every
    location grew by exactly one at each sample and no sampled region was inside another (then
    every value is known: write_expected)."""
    probers = collections.Counter()
    exact = True
    for loc, (rank, seq) in seqs.items():
        r = reads_of(seq)
        if None in r:
            fail(f"{loc.name}: a Metric without {SDE}reads")
            continue
        if r[0] not in (1, 3):
            fail(f"{loc.name}: reads starts at {r[0]}, want 1 (or 3 on the thread that loaded PAPI)")
        probers[rank] += r[0] == 3
        if any(y <= x for x, y in zip(r, r[1:])):
            fail(f"{loc.name}: reads does not grow at every sample: {r[:12]}...")
        exact = exact and r == list(range(r[0], r[0] + len(r))) and not any(x[3] for x in seq)
        for name, v0, v1, nested in seq:
            if v1 is not None and nested == 0 and v1[SDE + "reads"] - v0[SDE + "reads"] != 1:
                fail(f"{loc.name}: {name} spans {v1[SDE + 'reads'] - v0[SDE + 'reads']} reads, want 1")
    for rank, n in sorted(probers.items()):
        if n != 1:
            fail(f"rank {rank}: {n} locations start reads at 3, want one (the thread that loaded PAPI)")
    print(f"# reads: {sum(len(q) for _, q in seqs.values())} sampled regions on {len(seqs)} locations")
    return exact


def load_ledgers(a):
    """rank -> the program's threads: [(who, [(name, work, work3, adds at Enter; at Leave)])], launches
    left out unless they are sampled"""
    out = {}
    for path in sorted(glob.glob(os.path.join(a.work, "ledger.*.json"))):
        j = json.load(open(path))
        out[j["rank"]] = [(t["thread"], [(n, {SDE + "work": w0, SDE + "work3": 3 * w0, SDE + "adds": a0},
                                          {SDE + "work": w1, SDE + "work3": 3 * w1, SDE + "adds": a1})
                                         for n, w0, w1, a0, a1 in t["calls"] if a.launches or n not in LAUNCH])
                          for t in j["threads"]]
    return out


def same(got, want):
    """A Metric's values against the ledger's, member by member (those it has)"""
    return got is not None and all(got[k] == v for k, v in want.items() if k in got)


def check_ledger(a, seqs, fail):
    """Every thread location is one of the program's threads: the same sampled calls in the same
    order, each Metric's work, work3 and adds exactly the ledger's at that call's entry and exit."""
    ledgers = load_ledgers(a)
    if sorted(ledgers) != sorted({r for r, _ in seqs.values()}):
        fail(f"ledgers of ranks {sorted(ledgers)}, archive locations of ranks {sorted({r for r, _ in seqs.values()})}")
    free = {r: [t for t in ts if t[1]] for r, ts in ledgers.items()}
    n = 0
    for loc, (rank, seq) in sorted(seqs.items(), key=lambda x: x[0]._ref):
        cands = free.get(rank, [])
        match = next((t for t in cands if len(t[1]) == len(seq) and all(
            g[0] == w[0] and same(g[1], w[1]) and same(g[2], w[2]) for g, w in zip(seq, t[1]))), None)
        if match is None:
            alike = [t for t in cands if [x[0] for x in t[1]] == [x[0] for x in seq]]
            best = min(alike, key=lambda t: sum(not (same(g[1], w[1]) and same(g[2], w[2])) for g, w in zip(seq, t[1])),
                       default=None)
            if best is None:
                fail(f"rank {rank} {loc.name}: sampled calls {[x[0] for x in seq][:8]}... ({len(seq)}) are no "
                     f"thread's of the ledger: {[(t[0], len(t[1])) for t in cands]}")
            else:
                k = next(i for i, (g, w) in enumerate(zip(seq, best[1])) if not (same(g[1], w[1]) and same(g[2], w[2])))
                fail(f"rank {rank} {loc.name}: call {k} {seq[k][0]}: Metric {seq[k][1]} -> {seq[k][2]}, the ledger of "
                     f"{best[0]} nearest: {best[1][k][1]} -> {best[1][k][2]}")
            continue
        cands.remove(match)
        n += 2 * len(seq)
    for rank, ts in free.items():
        for who, calls in ts:
            fail(f"rank {rank}: {who}'s {len(calls)} sampled calls are on no location")
    print(f"# ledger: {n} Metrics equal the program's account, on {len(seqs)} thread locations")
    if a.reads or SDE + "reads" in a.counted:
        for loc, (rank, seq) in seqs.items():  # exactly one per sample: no sampled call missed on the thread
            r = reads_of(seq)
            if None not in r and r != list(range(r[0], r[0] + len(r))):
                fail(f"{loc.name}: reads {r[:12]}... does not grow by one at each sample")
        if not a.reads:
            check_reads(seqs, fail)
    if not a.classes:
        write_expected(a, ledgers)


def check_inside(a, seqs, fail):
    for spec in a.inside:
        name, w = spec.rsplit("=", 1)
        got = sum(v1[SDE + "work"] - v0[SDE + "work"] for _, seq in seqs.values() for n, v0, v1, _ in seq
                  if n == name and v0 and v1 and SDE + "work" in v0)
        if got != int(w):
            fail(f"work inside {name}: {got}, want {w}")


def write_expected(a, ledgers):
    """What zecoll report's PAPI sections must say, from the ledgers alone (or, for reads alone,
    from the sampled regions of each location and the reads rule) (tests/aggregate
    check_report.py --papi-expected): per counter and region the calls and the Leave - Enter
    total, min and max; per rank and counter the threads, their first-to-last sums and the sums in
    MPI and in Level Zero calls. reads spans one per region and 2 n - 1 over a thread of n regions."""
    regions = collections.defaultdict(list)
    ranks = collections.defaultdict(lambda: [0, 0, 0, 0, 0, 0])
    for rank, threads in ledgers.items():
        for _, calls in threads:
            if not calls:
                continue
            for m in a.counted:
                if m == SDE + "reads":
                    deltas, span = [1] * len(calls), 2 * len(calls) - 1
                else:
                    deltas, span = [v1[m] - v0[m] for _, v0, v1 in calls], calls[-1][2][m] - calls[0][1][m]
                r = ranks[f"{rank}|{m}"]
                r[0] += 1
                r[1] += span
                for (name, _, _), dv in zip(calls, deltas):
                    regions[f"{m}|{name}"].append(dv)
                    k = 2 if name.startswith("MPI_") else 4
                    r[k] += dv
                    r[k + 1] += 1
    out = {"regions": {k: [len(v), sum(v), min(v), max(v)] for k, v in regions.items()}, "ranks": ranks}
    with open(os.path.join(a.work, "papi-expected.json"), "w") as f:
        json.dump(out, f, indent=1, sort_keys=True)


def check_regions(a, per_loc, fail, counts):
    for spec in a.regions:
        name, n = spec.rsplit("=", 1)
        if counts.get(name, 0) != int(n):
            fail(f"{counts.get(name, 0)} sampled {name} regions, want {n}")


if __name__ == "__main__":
    sys.exit(main())
