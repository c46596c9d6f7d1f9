#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""What the salvage journal costs (docs/salvage.md), measured side by side in one run.

  bench/journal_cost.py BUILD_DIR [--reps 3] [--appends 1000000]

Runs zc_bench_app under the collector on zesim with the journal off (ZECOLL_FLUSH_INTERVAL_MS=0,
the collector as before) and on (1000 ms, the default; 100 ms; 10 ms), alternating the settings
within each repetition, and prints medians:
  * host ns per Append on a regular list (the application thread's hot path: the journal must
    not change it);
  * wall time of 20k kernels of 20 us on an immediate list (device records, drained);
  * for 1M Appends on an immediate list (every one a device record and a host record): the
    process's CPU time (user + sys: the writer thread and the flusher included) and the bytes it
    wrote (/proc/PID/io wchar, read before the process is reaped: archive plus journal).
Ratios are against the journal off.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile


def run(app, lib, zesim, env_extra, args, work):
    env = dict(os.environ)
    env.update({"ZE_ENABLE_ALT_DRIVERS": zesim, "LD_PRELOAD": lib, "ZECOLL_SUMMARY": "0",
                "ZECOLL_OUTPUT": os.path.join(work, "trace-%p")})
    env.pop("ZESIM_TRUTH", None)
    env.update(env_extra)
    p = subprocess.Popen([app] + args, env=env, stdout=subprocess.PIPE, text=True)
    out = p.stdout.read()
    # wait without reaping, so that the exited process's I/O counters are still readable
    os.waitid(os.P_PID, p.pid, os.WEXITED | os.WNOWAIT)
    wchar = 0
    try:
        with open(f"/proc/{p.pid}/io") as f:
            for line in f:
                if line.startswith("wchar:"):
                    wchar = int(line.split()[1])
    except OSError:
        pass
    _, status, ru = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode != 0:
        sys.exit(f"{app} {' '.join(args)} failed ({p.returncode})")
    res = json.loads(out.strip().splitlines()[-1])
    res["cpu_s"] = ru.ru_utime + ru.ru_stime
    res["wchar"] = wchar
    return res


def median(v):
    v = sorted(v)
    return v[len(v) // 2]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("build")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--appends", type=int, default=1000000)
    a = ap.parse_args()
    b = os.path.abspath(a.build)
    app, lib = f"{b}/bench/zc_bench_app", f"{b}/collector/libzecoll.so"
    zesim = f"{b}/tests/zesim/libzesim.so"
    configs = [("off", {"ZECOLL_FLUSH_INTERVAL_MS": "0"}), ("1000 ms", {"ZECOLL_FLUSH_INTERVAL_MS": "1000"}),
               ("100 ms", {"ZECOLL_FLUSH_INTERVAL_MS": "100"}), ("10 ms", {"ZECOLL_FLUSH_INTERVAL_MS": "10"})]
    measures = [("regular", ["regular", str(a.appends)], "append_ns"),
                ("kernels", ["kernels", "20000", "20"], "wall_s"),
                ("imm", ["appends", str(a.appends)], None)]
    got = {(c, m): [] for c, _ in configs for m, _, _ in measures}
    with tempfile.TemporaryDirectory() as work:
        for rep in range(a.reps):
            order = configs if rep % 2 == 0 else configs[::-1]
            for m, args, _ in measures:
                for c, env in order:
                    got[(c, m)].append(run(app, lib, zesim, env, args, work))
                    subprocess.run(["rm", "-rf"] + [os.path.join(work, x) for x in os.listdir(work)])
    print(f"salvage journal cost on zesim ({os.cpu_count()} cores, median of {a.reps} alternating runs)")
    print(f"{'measure':<58}" + "".join(f"{c:>14}" for c, _ in configs))

    def row(name, m, key, fmt, ratio=False):
        vals = [median([r[key] for r in got[(c, m)]]) for c, _ in configs]
        cells = [fmt(v) + (f" x{v / vals[0]:.3f}" if ratio and i and vals[0] else "") for i, v in enumerate(vals)]
        print(f"{name:<58}" + "".join(f"{x:>14}" for x in cells))

    row("host ns per Append, regular list (application thread)", "regular", "append_ns", lambda v: f"{v:.1f}")
    row("wall s, 20k kernels of 20 us", "kernels", "wall_s", lambda v: f"{v:.3f}", True)
    row(f"CPU s of the process, {a.appends} immediate Appends", "imm", "cpu_s", lambda v: f"{v:.3f}", True)
    row(f"MB written by the process, {a.appends} immediate Appends", "imm", "wchar", lambda v: f"{v / 1e6:.1f}", True)
    row(f"peak RSS MiB, {a.appends} immediate Appends", "imm", "maxrss_kb", lambda v: f"{v / 1024:.1f}", True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
