#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""writer.encoder.<scenario>: runs a program under the collector with ZECOLL_OTF2_ENCODER=both, so
that OTF2's event writer writes the archive's event files (traces/<location>.evt) and the
collector's own encoder a copy of each from the same records (traces/<location>.evt.own), and
requires them to be the same bytes, every location. The archive is then read: otf2-print
--silent -Werror, and Debian's python3-otf2 reads every event (as many as the definitions say).

usage: encoder_equal.py --work DIR --collector LIB [--zesim LIB] [--preload-first LIB]
                        [--mpiexec MPIEXEC --np N] [--env K=V]... [--min-events N] -- PROGRAM ARGS...
"""
import argparse
import glob
import os
import shutil
import subprocess
import sys

OTF2_CHUNK = 1 << 20  # the collector's event chunk (collector/writer/zc_otf2.c)
OTF2_HELD = 2         # chunks OTF2 holds per location before it flushes and adds a BufferFlush


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--work", required=True)
    ap.add_argument("--collector", required=True)
    ap.add_argument("--zesim")
    ap.add_argument("--preload-first")
    ap.add_argument("--mpiexec")
    ap.add_argument("--np", type=int, default=2)
    ap.add_argument("--env", action="append", default=[])
    ap.add_argument("--min-events", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=60)
    ap.add_argument("cmd", nargs="+")
    a = ap.parse_args()

    work = os.path.abspath(a.work)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    trace = os.path.join(work, "trace")
    env = {"LD_PRELOAD": ":".join(([a.preload_first] if a.preload_first else []) + [os.path.abspath(a.collector)]),
           "ZECOLL_OUTPUT": trace, "ZECOLL_STRICT": "1", "ZECOLL_OTF2_ENCODER": "both"}
    if a.zesim:
        env["ZE_ENABLE_ALT_DRIVERS"] = os.path.abspath(a.zesim)
    for kv in a.env:
        k, _, v = kv.partition("=")
        env[k] = v
    if a.mpiexec:
        full = [a.mpiexec, "--allow-run-as-root", "--oversubscribe", "-np", str(a.np)]
        for k, v in env.items():
            full += ["-x", f"{k}={v}"]
        full += a.cmd
        run_env = dict(os.environ)
    else:
        full = a.cmd
        run_env = dict(os.environ, **env)
    print("# " + " ".join(full))
    p = subprocess.run(full, cwd=work, env=run_env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                       timeout=a.timeout)
    sys.stdout.write(p.stdout[-4000:])
    if p.returncode == 77:
        print("SKIP: the program skipped itself")
        return 77
    if p.returncode != 0:
        print(f"FAIL: the program exited with {p.returncode}")
        return 1

    failed = []
    evts = sorted(glob.glob(os.path.join(trace, "traces", "*.evt")))
    owns = sorted(glob.glob(os.path.join(trace, "traces", "*.evt.own")))
    if not evts:
        failed.append(f"no event files in {trace}/traces")
    if [e + ".own" for e in evts] != owns:
        failed.append(f"OTF2's event files {[os.path.basename(e) for e in evts]} and ours "
                      f"{[os.path.basename(o) for o in owns]} are not of the same locations")
    total = 0
    for e in evts:
        o = e + ".own"
        if not os.path.exists(o):
            continue
        x, y = open(e, "rb").read(), open(o, "rb").read()
        total += len(x)
        if len(x) > OTF2_HELD * OTF2_CHUNK:
            failed.append(f"{e}: {len(x)} bytes, more than OTF2 holds in memory: it adds BufferFlush events of "
                          "its own (keep the scenario smaller)")
        elif x != y:
            at = next((i for i in range(min(len(x), len(y))) if x[i] != y[i]), min(len(x), len(y)))
            failed.append(f"{os.path.basename(e)}: OTF2's {len(x)} bytes and ours {len(y)} differ at byte {at}: "
                          f"{x[max(0, at - 8):at + 8].hex()} / {y[max(0, at - 8):at + 8].hex()}")
        else:
            print(f"ok: {os.path.basename(e)}: {len(x)} bytes, the same")

    # the archive read back (the same bytes as our encoder's: an archive it would have written)
    anchor = os.path.join(trace, "traces.otf2")
    pr = subprocess.run(["otf2-print", "--silent", "-Werror", anchor], stdout=subprocess.PIPE,
                        stderr=subprocess.STDOUT, text=True)
    if pr.returncode != 0:
        failed.append(f"otf2-print -Werror: rc {pr.returncode}: {pr.stdout[-2000:]}")
    rd = subprocess.run(["/usr/bin/python3", "-c", READ, anchor], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                        text=True)
    print("# python3-otf2: " + rd.stdout.strip())
    if rd.returncode != 0:
        failed.append(f"python3-otf2: {rd.stdout[-2000:]}")
    else:
        got, want = (int(v) for v in rd.stdout.split()[:2])
        if got != want or got < a.min_events:
            failed.append(f"python3-otf2 read {got} events; the definitions say {want}; at least {a.min_events} wanted")
    for f in failed:
        print("FAIL: " + f)
    if not failed:
        print(f"PASS: {len(evts)} event files, {total} bytes, byte-identical")
    return 1 if failed else 0


READ = """
import sys, otf2
with otf2.reader.open(sys.argv[1]) as tr:
    want = sum(l.number_of_events for l in tr.definitions.locations)
    got = sum(1 for _ in tr.events)
print(got, want)
"""

if __name__ == "__main__":
    sys.exit(main())
