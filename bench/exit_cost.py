#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""What a preloaded process that records nothing pays: N runs (default 200) of a program that
does nothing (bench/zc_exit_probe.c, compiled here with cc) without the collector, with
libzecoll.so preloaded and ZECOLL_ENABLE=0 (its libraries loaded, nothing started) and with it
enabled, interleaved run by run so that a loaded machine's delays fall on the three alike. Prints
each one's median wall time per process and its exit time (from the program's last clock reading,
as main returns, to its parent's wait returning: atexit handlers, the collector's finalize, the
kernel ending the process's threads), the ratio of wall times enabled / none, and the collector's
exit cost (enabled minus none, exit times of paired runs, median).

  bench/exit_cost.py BUILD_DIR [--runs N] [--check MS]

--check fails (exit 1) when the collector's exit cost exceeds MS milliseconds (the target is 0.2 ms;
an unconditional membarrier at exit cost ~15 ms, a signal-watcher thread started in every process
2-5 ms on a loaded machine).
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time


def one(argv, env):
    """(wall s, exit s) of one run"""
    r, w = os.pipe()
    t = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
    pid = os.posix_spawn(argv[0], argv, env, file_actions=[(os.POSIX_SPAWN_DUP2, w, 1), (os.POSIX_SPAWN_CLOSE, r)])
    os.close(w)
    os.waitpid(pid, 0)
    end = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
    out = os.read(r, 64)
    os.close(r)
    return (end - t) / 1e9, (end - int(out)) / 1e9


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--check", type=float)
    a = ap.parse_args()
    tmp = tempfile.mkdtemp()
    prog = os.path.join(tmp, "zc_exit_probe")
    subprocess.run(["cc", "-O2", "-o", prog, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                          "zc_exit_probe.c")], check=True)
    lib = os.path.join(os.path.abspath(a.build), "collector", "libzecoll.so")
    base = {k: v for k, v in os.environ.items() if not k.startswith("ZECOLL_") and k != "LD_PRELOAD"}
    flavours = {"none": base, "preload, ZECOLL_ENABLE=0": dict(base, LD_PRELOAD=lib, ZECOLL_ENABLE="0"),
                "preload, enabled": dict(base, LD_PRELOAD=lib)}
    wall = {k: [] for k in flavours}
    ex = {k: [] for k in flavours}
    diff = []
    for _ in range(a.runs):
        row = {k: one([prog], e) for k, e in flavours.items()}
        for k, (w, x) in row.items():
            wall[k].append(w)
            ex[k].append(x)
        diff.append(row["preload, enabled"][1] - row["none"][1])
    shutil.rmtree(tmp)
    med = {k: statistics.median(v) * 1e3 for k, v in wall.items()}
    for k, v in med.items():
        print(f"{k:26s} wall {v:7.3f} ms, exit {statistics.median(ex[k]) * 1e3:6.3f} ms (medians of {a.runs} runs)")
    print(f"ratio of wall times enabled / none: {med['preload, enabled'] / med['none']:.2f}")
    own = statistics.median(diff) * 1e3
    print(f"the collector's exit cost (exit time enabled - none, median of paired runs): {own:.3f} ms")
    if a.check is not None and own > a.check:
        print(f"FAIL: {own:.3f} ms > {a.check} ms")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
