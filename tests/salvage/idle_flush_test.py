#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""An idle journal costs no writes (docs/salvage.md, "An idle interval costs nothing"), and keeps
its heartbeat. zc_bench_app kernels 2000 1 records, then idles IDLE_MS with its list still there,
under ZECOLL_FLUSH_INTERVAL_MS=100; the journal's size is sampled every 10 ms until it is removed
at exit (the archive complete). In the idle window (from 0.4 s after the idle begins to 0.1 s
before the exit) the flusher passes ~35 times; the size may change only for the pass after the
records and the heartbeat (every (3 * 100 ms + 5 s) / 2 = 2.65 s): at least once (the heartbeat:
salvage's liveness test of a rank on another host reads the file's modification time), at most
4 times (before this change: every pass, ~35).
  usage: idle_flush_test.py --app ZC_BENCH_APP --zesim LIB --libdir DIR --bindir DIR --work DIR"""
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from salv_common import collector_env, run_args  # noqa: E402

IDLE_MS = 4500


def main():
    a = run_args(__doc__)
    trace = os.path.join(a.work, "trace")
    env = collector_env(a, trace, {"ZECOLL_FLUSH_INTERVAL_MS": "100", "ZC_BENCH_IDLE_MS": str(IDLE_MS),
                                   "ZECOLL_SUMMARY": "0"})
    env.pop("ZESIM_TRUTH", None)
    jpath = os.path.join(trace, "zecoll-journal", "0.zcj")
    p = subprocess.Popen([a.app, "kernels", "2000", "1"] + a.arg, env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    samples = []  # (time, size or None)
    while p.poll() is None:
        try:
            samples.append((time.monotonic(), os.stat(jpath).st_size))
        except OSError:
            samples.append((time.monotonic(), None))
        time.sleep(0.01)
    out, err = p.communicate()
    checks = []

    def ok(c, what):
        checks.append(c)
        print(f"{'ok' if c else 'not ok'} {len(checks)} - {what}")

    ok(p.returncode == 0, f"zc_bench_app exit 0 (got {p.returncode}) {err[-300:]}")
    seen = [(t, s) for t, s in samples if s is not None]
    ok(len(seen) > 0, "the journal existed while the program ran")
    if not seen:
        return 1
    t_gone = seen[-1][0]  # the last sample before it was removed (the finalize at exit)
    lo, hi = t_gone - IDLE_MS / 1000 + 0.4, t_gone - 0.1
    window = [(t, s) for t, s in seen if lo <= t <= hi]
    changes = sum(1 for (_, s0), (_, s1) in zip(window, window[1:]) if s1 != s0)
    ok(len(window) > 100, f"{len(window)} samples of the journal in the {hi - lo:.1f} s idle window")
    ok(changes >= 1, f"the idle journal got its heartbeat ({changes} writes in {hi - lo:.1f} s)")
    ok(changes <= 4, f"the idle journal was written {changes} times in {hi - lo:.1f} s at a 100 ms interval "
                     f"(at most 4: the pass after the records, the heartbeat)")
    print(f"1..{len(checks)}")
    return 0 if all(checks) else 1


if __name__ == "__main__":
    sys.exit(main())
