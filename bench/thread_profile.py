#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Where the application thread's CPU time goes during zc_bench_app's measured loop, per shared
object (perf sampling on the CPU clock: works in a guest without hardware counters).

The collector's own time per Append is the main thread's samples whose instruction lies in
libzecoll.so, times the sampling period, over the Appends: what the collector itself costs the
application thread, apart from how the simulated driver reacts to it (its lock, its worker's
wake-ups), which is what the wall-clock delta of an immediate list mostly measures on zesim.
Only samples inside the timed batches of Appends count (zc_bench_app's intervals), not the
synchronisations between them. Leaf attribution: a sample in libc or the kernel counts for libc or the kernel, whoever called
(on the Append path the collector calls neither; zesim calls both).

  usage: bench/thread_profile.py [--perf PERF] [--perf-libs DIR] [--period NS] -- zc_bench_app MODE N [...]
(BENCH_PERF, BENCH_PERF_LIBS: the same; DIR holds a carried perf's own libraries)
prints one JSON line: n, wall ns per Append (inside the batches), main-thread CPU ns per Append, and ns per
Append by shared object (own_ns: libzecoll.so)."""
import bisect, json, os, subprocess, sys, tempfile

def main():
    args = sys.argv[1:]
    perf, period, libs = os.environ.get("BENCH_PERF", "perf"), 10000, os.environ.get("BENCH_PERF_LIBS")
    while args and args[0] != "--":
        if args[0] == "--perf": perf = args[1]; args = args[2:]
        elif args[0] == "--period": period = int(args[1]); args = args[2:]
        elif args[0] == "--perf-libs": libs = args[1]; args = args[2:]
        else: sys.exit(f"thread_profile: unknown argument {args[0]}")
    cmd = args[1:]
    if not cmd: sys.exit(__doc__)
    penv = dict(os.environ)
    if libs:  # a perf carried with its own libraries: they are perf's, not the measured program's
        cmd = ["env", "LD_LIBRARY_PATH=" + os.environ.get("LD_LIBRARY_PATH", "")] + cmd
        penv["LD_LIBRARY_PATH"] = libs
    with tempfile.TemporaryDirectory() as d:
        data = os.path.join(d, "p.data")
        rec = subprocess.run([perf, "record", "-q", "-e", "cpu-clock", "-c", str(period), "-k", "monotonic_raw",
                              "-o", data, "--"] + cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                             env=dict(penv, ZC_BENCH_INTERVALS="1"))
        lines = [l for l in rec.stdout.splitlines() if l.startswith("{")]
        if rec.returncode != 0 or not lines: sys.exit(f"thread_profile: {' '.join(cmd)} failed ({rec.returncode})")
        out = json.loads(lines[-1])
        n, ivs = out["n"], sorted(out["intervals"])
        in_ns = sum(b - a for a, b in ivs)
        scr = subprocess.run([perf, "script", "-i", data, "-F", "pid,tid,time,ip,dso", "--ns"],
                             stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=penv)
    by = {}
    for line in scr.stdout.splitlines():
        f = line.split()
        if len(f) < 4 or "/" not in f[0]: continue
        pid, tid = f[0].split("/")
        if pid != tid: continue  # the application's (main) thread only
        try: t = float(f[1].rstrip(":"))
        except ValueError: continue
        i = bisect.bisect_right(ivs, [t, float("inf")]) - 1
        if i < 0 or t > ivs[i][1]: continue
        dso = os.path.basename(f[-1].strip("()")) if f[-1].startswith("(") else "?"
        for short in ("libzecoll", "libzesim", "libze_loader", "libc.so", "kernel.kallsyms", "zc_bench_app", "vdso"):
            if short in dso: dso = short; break
        by[dso] = by.get(dso, 0) + 1
    per = {k: round(v * period / n, 1) for k, v in sorted(by.items(), key=lambda kv: -kv[1])}
    print(json.dumps({"n": n, "wall_ns": round(1e9 * in_ns / n, 1), "cpu_ns": round(sum(by.values()) * period / n, 1),
                      "own_ns": per.get("libzecoll", 0.0), "by_dso_ns": per}))

main()
