#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""The collector against drivers that lack entry points: every driver entry the collector itself
calls (found in its sources), alone and in realistic groups, left NULL by zesim
(ZESIM_NULL_ENTRIES), times every example program.

  null_matrix.py --libdir DIR --zesim LIB --sources DIR --work DIR --app PATH... [--shard I/N]
                 [--jobs J] [--trace-check all|none] [--preload-first LIB] [--list]

For each (entries, program) the program runs alone and under the collector (ZECOLL_STRICT=1).
Checks: the same exit status and the same verdict lines (`<prog>: PASS/FAILED...`, numbers of
measured times masked); no internal error; at most one line saying what the driver lacks; the
archive is valid; and when the program passed, the archive against zesim's truth
(check_trace.py): with device timing on, every executed operation recorded exactly as usual
except the ones the collector reports as untimed (their number must match exactly); with device
timing off, no device record at all. --shard I/N runs every N-th case from the I-th (ctest runs
the shards in parallel).
"""
import argparse
import concurrent.futures
import glob
import json
import os
import re
import shlex
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_trace  # noqa: E402
from run_expect import device_records  # noqa: E402

# Groups a real driver lacks together: the device-side harvest commands (the example:
# every regular-list execution used to crash), the two ways to re-signal an app event, and what
# an old driver lacks (global timestamps and the device-side timestamp query).
GROUPS = {
    "harvest": ["ze_command_list.pfnAppendWaitOnEvents", "ze_command_list.pfnAppendEventReset",
                "ze_command_list.pfnAppendQueryKernelTimestamps", "ze_command_list.pfnAppendSignalEvent"],
    "resignal": ["ze_command_list.pfnAppendBarrier", "ze_command_list.pfnAppendSignalEvent"],
    "old": ["ze_device.pfnGetGlobalTimestamps", "ze_command_list.pfnAppendQueryKernelTimestamps"],
    "queries": ["ze_event.pfnQueryStatus", "ze_event.pfnQueryKernelTimestamp"],
}

CALL_RE = re.compile(r"(?:zc_ze_real\.|R->)(ze_\w+)\.(pfn\w+)")
VERDICT_RE = re.compile(r"^\S+: (PASS|FAILED|FAIL)\b.*$", re.M)
# measured quantities in verdict lines differ between runs
MEASURED_RE = re.compile(r"\d+(\.\d+)? ?(us|ns|ms|ticks)\b")
MISSING_RE = re.compile(r"the Level Zero driver lacks ")
OFF_RE = re.compile(r"GPU operations are not timed")
UNTIMED_RE = re.compile(r"(\d+) untimed operation")
SUMMARY_UNTIMED_RE = re.compile(r"^zecoll: rank .*; (\d+) untimed GPU operation", re.M)  # the summary line's
BOUND_RE = re.compile(r"device (\d+): .*starts within \+-(\d+) ns")


def collector_entries(src):
    found = set()
    for f in sorted(glob.glob(os.path.join(src, "*.[ch]"))):  # the inline headers too
        found.update(f"{t}.{m}" for t, m in CALL_RE.findall(open(f).read()))
    return sorted(found)


def verdicts(text):
    """The distinct verdict lines (threads that fail together may each say so)."""
    return sorted({MEASURED_RE.sub("#", m.group(0)) for m in VERDICT_RE.finditer(text)})


def run(cmd, env, timeout):
    try:
        p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout)
        return p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired as e:
        return "timeout", e.stdout or "", e.stderr or ""


def one_case(a, name, entries, app, werror):
    """app: a program, with its arguments after spaces; werror: otf2-print -Werror judges the
    archive too (the library's reader reads every archive whole in check_trace.check)"""
    argv = shlex.split(app)
    prog = " ".join([os.path.basename(argv[0])] + argv[1:])
    tag = f"{name} x {prog}"
    work = os.path.join(a.work, re.sub(r"[^\w.-]", "_", f"{name}-{prog}"))
    subprocess.run(["rm", "-rf", work])
    os.makedirs(work)
    base_env = dict(os.environ)
    for k in list(base_env):
        if k.startswith(("ZECOLL_", "ZESIM_")) or k == "LD_PRELOAD":
            del base_env[k]
    base_env.update({"ZE_ENABLE_ALT_DRIVERS": a.zesim, "ZESIM_NULL_ENTRIES": ",".join(entries)})
    fails = []
    rc0, out0, err0 = run(argv, base_env, 60)
    env = dict(base_env)
    env.update({"ZESIM_TRUTH": os.path.join(work, "truth.jsonl"), "ZECOLL_OUTPUT": os.path.join(work, "trace"),
                "ZECOLL_STRICT": "1", "ZECOLL_LOG_LEVEL": "2", "ZC_SCEN_OUT": os.path.join(work, "facts.json"),
                "LD_PRELOAD": ":".join(([a.preload_first] if a.preload_first else [])
                                       + [os.path.join(a.libdir, "libzecoll.so")])})
    rc1, out1, err1 = run(argv, env, 60)
    # A program that fails without the collector may exit from one thread while others still run
    # Level Zero: the loader's and driver's teardown then races with them, and the outcome varies
    # (ex_multithread without HostSynchronize: 2 aborts in 120 runs without zecoll). Such a pair is
    # run again, twice at most: the collector's outcome must be one the program has without it.
    for _ in range(2):
        if rc0 == 0 or (rc1 == rc0 and verdicts(out0 + err0) == verdicts(out1 + err1)):
            break
        rc0, out0, err0 = run(argv, base_env, 60)
        subprocess.run(["rm", "-rf", env["ZECOLL_OUTPUT"]])
        rc1, out1, err1 = run(argv, env, 60)
    if rc1 != rc0:
        fails.append(f"exit status {rc1} under the collector, {rc0} without")
    v0, v1 = verdicts(out0 + err0), verdicts(out1 + err1)
    if v0 != v1:
        fails.append(f"verdict {v1} under the collector, {v0} without")
    if re.search(r"internal error[:( ]", err1):
        fails.append("the collector reported an internal error: " + err1[-600:].replace("\n", " | "))
    nmiss = len(MISSING_RE.findall(err1))
    if nmiss > 1:
        fails.append(f"'the Level Zero driver lacks' said {nmiss} times, want at most once")
    archive = os.path.join(work, "trace", "traces.otf2")
    detail = ""
    if rc1 == 0 and not fails:
        if not os.path.exists(archive):
            fails.append("no archive")
        elif a.trace_check == "all":
            c = check_trace.Checker()
            if OFF_RE.search(err1):
                n = device_records(archive)
                if n:
                    fails.append(f"device timing is off, yet {n} device record(s)")
                detail = "device timing off"
            else:
                m = UNTIMED_RE.search(err1)
                untimed = int(m.group(1)) if m else 0
                m = SUMMARY_UNTIMED_RE.search(err1)
                if (int(m.group(1)) if m else 0) != untimed:  # the one line a user reads says it too
                    fails.append(f"the summary line says {m.group(1) if m else 'no'} untimed GPU operation(s), "
                                 f"the device report {untimed}")
                bounds = {int(d): int(b) for d, b in BOUND_RE.findall(err1)}
                skip = None
                if re.search(r"operations on immediate command lists are not timed", err1):
                    skip = "immediate"
                if re.search(r"operations on regular command lists are not timed", err1):
                    skip = "regular" if skip is None else "all"
                facts = None
                if os.path.exists(env["ZC_SCEN_OUT"]):  # what a zc_scen scenario says about itself
                    with open(env["ZC_SCEN_OUT"]) as f:
                        facts = json.load(f)
                check_trace.check(c, env["ZESIM_TRUTH"], env["ZECOLL_OUTPUT"], facts, allow_missing=untimed,
                                  start_bound=bounds, skip=skip, werror=werror)
                fails += c.failures[:5]
                detail = f"{untimed} untimed" + (f", starts within {max(bounds.values())} ns" if bounds else "")
    if fails:
        sys.stderr.write(f"--- {tag}: collector stderr:\n{err1[-1500:]}\n")
    return tag, fails, detail


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--libdir", required=True)
    ap.add_argument("--zesim", required=True)
    ap.add_argument("--sources", required=True, help="collector/ze: the entries are those its .c and .h files call")
    ap.add_argument("--work", required=True)
    ap.add_argument("--app", action="append", required=True, help="a program and its arguments, one string")
    ap.add_argument("--shard", default="0/1")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--trace-check", choices=["all", "none"], default="all")
    ap.add_argument("--preload-first")
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--only", help="comma-separated entry sets to run (names as listed), instead of all")
    a = ap.parse_args()
    entries = collector_entries(a.sources)
    # the sources must be readable by the pattern: a collector calling fewer than 20 driver entries
    # means the pattern no longer matches how it calls them
    if len(entries) < 20:
        print(f"not ok - only {len(entries)} driver entries found in {a.sources}: the pattern is stale")
        return 1
    for g in GROUPS.values():
        for e in g:
            if e not in entries:
                print(f"not ok - group entry {e} is not called by the collector any more")
                return 1
    cases = [(e, [e]) for e in entries] + [(g, v) for g, v in sorted(GROUPS.items())]
    if a.only:
        cases = [c for c in cases if c[0] in a.only.split(",")]
    # otf2-print -Werror (~0.6 s a call whatever the archive, half of this matrix's time) for one
    # program per entry set, rotating over the programs
    runs = [(n, e, app, j == i % len(a.app)) for i, (n, e) in enumerate(cases) for j, app in enumerate(a.app)]
    i, n = (int(x) for x in a.shard.split("/"))
    runs = runs[i::n]
    if a.list:
        for r in runs:
            print(r[0], os.path.basename(r[2]))
        return 0
    os.makedirs(a.work, exist_ok=True)
    failed = 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=a.jobs) as ex:
        for k, (tag, fails, detail) in enumerate(ex.map(lambda r: one_case(a, *r), runs), 1):
            if fails:
                failed += 1
                for f in fails:
                    print(f"not ok {k} - {tag}: {f}")
            else:
                print(f"ok {k} - {tag}" + (f" ({detail})" if detail else ""))
    print(f"# {len(runs)} case(s) of {len(cases)} entry sets x {len(a.app)} program(s), shard {a.shard}: "
          f"{failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
