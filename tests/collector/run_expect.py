#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Run a program under the collector and check what must hold when things go wrong.

  run_expect.py --work DIR --libdir DIR --zesim LIB [--env K=V]... [--rc N | --signal SIG]
                [--stderr REGEX]... [--no-stderr REGEX]... [--count REGEX=N]...
                [--archive valid|none] [--device-records MIN:MAX] [--max-seconds S]
                [--kill-after S] [--no-preload] [--preload-first LIB] [--preload LIB]... -- program args...

The collector is preloaded (unless --no-preload) and the loader pointed at zesim. Checks: exit
code or signal, stderr patterns (and exact counts of a pattern), wall time, and the archive:
accepted by otf2-print -Werror and read by the Python reader, with a device-record count range.
"""
import argparse
import glob
import os
import re
import signal
import subprocess
import sys
import time


def device_records(archive):
    import otf2
    n = 0
    with otf2.reader.open(archive) as tr:
        for loc, ev in tr.events:
            if loc.type == otf2.LocationType.GPU and type(ev).__name__ == "Enter":
                n += 1
    return n


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--work", required=True)
    ap.add_argument("--libdir", required=True)
    ap.add_argument("--zesim", required=True)
    ap.add_argument("--env", action="append", default=[])
    ap.add_argument("--rc", type=int)
    ap.add_argument("--signal")
    ap.add_argument("--stderr", action="append", default=[])
    ap.add_argument("--no-stderr", action="append", default=[])
    ap.add_argument("--count", action="append", default=[])
    ap.add_argument("--archive", choices=["valid", "none"])
    ap.add_argument("--device-records")
    ap.add_argument("--max-seconds", type=float)
    ap.add_argument("--kill-after", type=float)
    ap.add_argument("--no-preload", action="store_true")
    ap.add_argument("--preload-first")
    ap.add_argument("--preload", action="append", default=[],
                    help="a test library to preload after --preload-first, before libzecoll.so (repeatable)")
    ap.add_argument("cmd", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    cmd = a.cmd[1:] if a.cmd and a.cmd[0] == "--" else a.cmd
    os.makedirs(a.work, exist_ok=True)
    subprocess.run(["rm", "-rf"] + glob.glob(os.path.join(a.work, "*")))
    env = dict(os.environ)
    env.update({"ZE_ENABLE_ALT_DRIVERS": a.zesim, "ZECOLL_OUTPUT": os.path.join(a.work, "trace"),
                "ZESIM_TRUTH": os.path.join(a.work, "truth.jsonl")})
    if not a.no_preload:
        env["LD_PRELOAD"] = ":".join(([a.preload_first] if a.preload_first else []) + a.preload
                                     + [os.path.join(a.libdir, "libzecoll.so")])
    for kv in a.env:
        k, v = kv.split("=", 1)
        env[k] = v.replace("@LIBDIR@", a.libdir).replace("@ZESIM@", a.zesim)
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if a.kill_after:
        time.sleep(a.kill_after)
        p.send_signal(signal.SIGTERM)
    out, err = p.communicate(timeout=300)
    dt = time.monotonic() - t0
    sys.stdout.write(out[-2000:])
    sys.stderr.write(err[-4000:])
    fails = []
    if a.signal:
        want = -getattr(signal, a.signal)
        if p.returncode != want:
            fails.append(f"exit status {p.returncode}, want killed by {a.signal}")
    elif a.rc is not None and p.returncode != a.rc:
        fails.append(f"exit code {p.returncode}, want {a.rc}")
    for rx in a.stderr:
        if not re.search(rx, err, re.M):
            fails.append(f"stderr lacks /{rx}/")
    for rx in a.no_stderr:
        if re.search(rx, err, re.M):
            fails.append(f"stderr has /{rx}/")
    for spec in a.count:
        rx, n = spec.rsplit("=", 1)
        got = len(re.findall(rx, err, re.M))
        if got != int(n):
            fails.append(f"stderr has /{rx}/ {got} time(s), want {n}")
    if a.max_seconds and dt > a.max_seconds:
        fails.append(f"took {dt:.1f} s, limit {a.max_seconds} s")
    archive = os.path.join(a.work, "trace", "traces.otf2")
    if a.archive == "none" and os.path.exists(archive):
        fails.append("an archive was written")
    if a.archive == "valid":
        if not os.path.exists(archive):
            fails.append("no archive")
        else:
            r = subprocess.run(["otf2-print", "--silent", "-Werror", archive], capture_output=True, text=True)
            if r.returncode != 0:
                fails.append(f"otf2-print -Werror rc {r.returncode}: {(r.stderr or r.stdout)[:300]}")
            try:
                n = device_records(archive)
                if a.device_records:
                    lo, hi = (int(x) for x in a.device_records.split(":"))
                    if not lo <= n <= hi:
                        fails.append(f"{n} device records, want {lo}..{hi}")
            except Exception as e:
                fails.append(f"python3-otf2 reader failed: {e!r}")
    for f in fails:
        print("not ok - " + f)
    print("ok - expectations hold" if not fails else f"# {len(fails)} failure(s)")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
