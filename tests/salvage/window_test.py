#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Window markers survive salvage: a program recording in a signal window
(ZECOLL_WINDOWS=signal:SIGUSR1, initially off) is toggled by this script at known times, then
SIGKILLed; `zecoll salvage` must rebuild the MeasurementOnOff records the complete archive would
have had (docs/archive.md A18, A20), read back with python3-otf2.

  window_test.py --app BIN [--arg A]... --zesim LIB --libdir DIR --bindir DIR --work DIR
                 [--env K=V]... [--preload-first LIB]

Two runs, each started, given its GPU work (zesim's truth holds 100 operations), then sent
SIGUSR1 every 0.25 s and SIGKILL 0.3 s after the last:
  on-at-kill:  USR1 x3 (on, off, on): recording is on when the process dies;
  off-at-kill: USR1 x4 (on, off, on, off): recording is off when it dies.
Each salvaged archive must pass the archive contract (tests/aggregate/check_archive.py: markers
alternate starting with OFF, none inside a region, nothing recorded while off, every location
ends with OFF), and on the master thread the markers are exactly OFF, then per toggle the
transition it caused, each between the time the toggle's signal was sent and the next one's
(causality: a transition cannot precede its signal, and the next toggle is sent after this one
was taken: the process answers each one in microseconds, 250 ms apart), then for on-at-kill the
final OFF of A20 (at or after the data's end), and for off-at-kill nothing after the window's
OFF (no second OFF at the cut). Every device stream with records shows the first ON too.
TAP output; exit 0 when every check passed."""
import os
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from salv_common import collector_env, run_args  # noqa: E402
from kill_test import finish, start, wait_started  # noqa: E402

import otf2  # noqa: E402  (Debian's python3-otf2: run with /usr/bin/python3)

PY = "/usr/bin/python3"
GAP = 0.25
checks = []


def ok(cond, what):
    checks.append(bool(cond))
    print(f"{'ok' if cond else 'not ok'} {len(checks)} - {what}")
    sys.stdout.flush()


def now_ns():
    return time.clock_gettime_ns(time.CLOCK_MONOTONIC_RAW)


def markers(anchor):
    """location name -> [(time, 'ON'|'OFF')], and location name -> zecoll::data_end."""
    out, ends = {}, {}
    with otf2.reader.open(anchor) as tr:
        for lp in tr.definitions.location_properties:
            if lp.name == "zecoll::data_end":
                ends[lp.location.name] = lp.value
        for loc, ev in tr.events:
            if isinstance(ev, otf2.events.MeasurementOnOff):
                mode = "ON" if str(ev.measurement_mode).endswith("ON") else "OFF"
                out.setdefault(loc.name, []).append((ev.time, mode))
            else:
                out.setdefault(loc.name, [])
    return out, ends


def one(a, name, toggles):
    work = os.path.join(a.work, name)
    os.makedirs(work)
    trace = os.path.join(work, "trace")
    env = collector_env(a, trace, {"ZESIM_TRUTH": os.path.join(work, "truth-%r.jsonl"),
                                   "ZESIM_TRUTH_UNBUFFERED": "1", "ZECOLL_FLUSH_INTERVAL_MS": "50",
                                   "ZECOLL_WINDOWS": "signal:SIGUSR1"})
    p = start([a.app] + a.arg, env, work)
    if not wait_started(work, 1, p):
        ok(False, f"{name}: the program started its GPU work: {finish(p)[-500:]}")
        return
    sent = []
    for _ in range(toggles):
        sent.append(now_ns())
        os.kill(p.pid, signal.SIGUSR1)
        time.sleep(GAP)
    time.sleep(0.3 - GAP)
    alive = p.poll() is None
    t_kill = now_ns()
    os.kill(p.pid, signal.SIGKILL)
    finish(p)
    ok(alive, f"{name}: the program ran until the SIGKILL")
    s = subprocess.run([os.path.join(a.bindir, "zecoll"), "salvage", trace], capture_output=True, text=True,
                       timeout=300)
    ok(s.returncode == 0, f"{name}: zecoll salvage exit 0 (got {s.returncode}) {s.stderr[-300:]}")
    c = subprocess.run([PY, os.path.join(HERE, "..", "aggregate", "check_archive.py"), trace, "--serial"],
                       capture_output=True, text=True, timeout=300)
    ok(c.returncode == 0, f"{name}: archive contract (A18 markers, A20) " +
       " | ".join(l for l in c.stdout.splitlines() if l.startswith("FAIL"))[:800])
    got, ends = markers(os.path.join(trace, "traces.otf2"))
    bounds = sent + [t_kill]
    master = got.get("Master thread", [])
    end = ends.get("Master thread", 0)
    # expected: OFF (start-up), then one transition per toggle, then (recording on) the final OFF
    want = ["OFF"] + ["ON" if i % 2 == 0 else "OFF" for i in range(toggles)] + (["OFF"] if toggles % 2 else [])
    ok([m for _, m in master] == want, f"{name}: master thread markers {[m for _, m in master]}, want {want}")
    if [m for _, m in master] == want:
        for i in range(toggles):
            t = master[1 + i][0]
            ok(bounds[i] <= t <= bounds[i + 1],
               f"{name}: transition {i + 1} ({want[1 + i]}) at {t}, between its signal {bounds[i]} and the next "
               f"event {bounds[i + 1]}")
        if toggles % 2:
            ok(master[-1][0] >= end > 0, f"{name}: the final OFF at {master[-1][0]}, at or after the data's end {end}")
        else:
            ok(master[-1][0] < end, f"{name}: the window's OFF ({master[-1][0]}) ends the location before the data's "
                                    f"end {end}: no second OFF at the cut")
    streams = {n: m for n, m in got.items() if n.startswith("L0[") and len(m) > 1}
    ok(streams and all(m[1][1] == "ON" and sent[0] <= m[1][0] for m in streams.values()),
       f"{name}: device streams with records show the window's ON ({ {n: m[:3] for n, m in streams.items()} })")


def main():
    a = run_args(__doc__)
    one(a, "on-at-kill", 3)
    one(a, "off-at-kill", 4)
    print(f"1..{len(checks)}")
    return 0 if all(checks) else 1


if __name__ == "__main__":
    sys.exit(main())
