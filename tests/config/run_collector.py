#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""The collector given a configuration: runs a program with and without libzecoll.so and checks
what the configuration must do (TAP output).

  run_collector.py --work DIR --libdir DIR --zesim LIB --tool ZECOLL_CONFIG_BIN
                   [--np N --mpiexec MPIRUN] [--preload-first LIB] [--cwd DIR]
                   [--config FILE] [--env K=V]... [checks] -- PROGRAM [ARGS...]
checks:
  --same-as-plain        exit status and stdout exactly those of the program run without the
                         collector (the application is unchanged)
  --stderr-exactly FILE  the run's stderr is exactly these lines (in any order for --np > 1):
                         FILE's lines but its last ("zecoll-config: N error(s)"), each with
                         "zecoll: " before it, then the --stderr-line lines
  --stderr-line TEXT     (with --stderr-exactly) one more expected line
  --count REGEX=N        stderr matches REGEX exactly N times
  --signal NAME          the program is killed by this signal (not with --same-as-plain)
  --archive none|valid   no archive directory at all / exactly one archive otf2-print reads
  --stored               the archive holds zecoll-config.yaml (one), which `zecoll-config check`
                         accepts, with the same values as checking --config with the same
                         variables, and each value's origin
  --no-mpi-events        the archive has no MPI region (record.mpi: false)
The program runs in --cwd (default DIR) with ZE_ENABLE_ALT_DRIVERS=zesim and
ZECOLL_OUTPUT=DIR/trace; MPI runs use mpirun -x for every variable."""
import argparse
import glob
import os
import re
import shutil
import signal
import subprocess
import sys

ORIGIN = re.compile(r"\s+# (default|env ZECOLL_\w+|.+:\d+)$")


def values(text):
    """The effective configuration without its header and origin comments."""
    return [ORIGIN.sub("", line) for line in text.splitlines()[1:]]


def main():
    ap = argparse.ArgumentParser()
    for a in ("--work", "--libdir", "--zesim", "--tool"):
        ap.add_argument(a, required=True)
    ap.add_argument("--np", type=int)
    ap.add_argument("--mpiexec", default="mpirun")
    ap.add_argument("--preload-first")
    ap.add_argument("--cwd")
    ap.add_argument("--config")
    ap.add_argument("--env", action="append", default=[])
    ap.add_argument("--same-as-plain", action="store_true")
    ap.add_argument("--stderr-exactly")
    ap.add_argument("--stderr-line", action="append", default=[])
    ap.add_argument("--count", action="append", default=[])
    ap.add_argument("--signal")
    ap.add_argument("--archive", choices=["none", "valid"])
    ap.add_argument("--stored", action="store_true")
    ap.add_argument("--no-mpi-events", action="store_true")
    ap.add_argument("cmd", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    cmd = a.cmd[1:] if a.cmd and a.cmd[0] == "--" else a.cmd
    shutil.rmtree(a.work, ignore_errors=True)
    os.makedirs(a.work)
    cwd = a.cwd or a.work
    n = fails = 0

    def ok(cond, text):
        nonlocal n, fails
        n += 1
        fails += 0 if cond else 1
        print(f"{'' if cond else 'not '}ok {n} - {text}")
        return cond

    base = {k: v for k, v in os.environ.items() if not k.startswith("ZECOLL_")}
    base.update({"ZE_ENABLE_ALT_DRIVERS": a.zesim, "ASAN_OPTIONS": "detect_leaks=0"})
    extra = {"ZECOLL_OUTPUT": os.path.join(a.work, "trace")}
    if a.config:
        extra["ZECOLL_CONFIG"] = a.config
    for kv in a.env:
        k, v = kv.split("=", 1)
        extra[k] = v
    preload = ":".join(([a.preload_first] if a.preload_first else []) + [os.path.join(a.libdir, "libzecoll.so")])

    def run(with_collector):
        env = dict(base)
        ours = dict(extra, LD_PRELOAD=preload) if with_collector else {}
        full = cmd
        if a.np:
            # given to the ranks only: mpirun itself does not load the collector
            full = [a.mpiexec, "--allow-run-as-root", "--oversubscribe", "-np", str(a.np)]
            for k in ["ZE_ENABLE_ALT_DRIVERS", "ASAN_OPTIONS"]:
                full += ["-x", k]
            for k, v in ours.items():
                full += ["-x", f"{k}={v}"]
            full += cmd
        else:
            env.update(ours)
        p = subprocess.run(full, cwd=cwd, env=env, capture_output=True, text=True, timeout=240)
        return p.returncode, p.stdout, p.stderr

    rc, out, err = run(True)
    sys.stdout.write("".join(f"# stdout: {l}\n" for l in out.splitlines()[-20:]))
    sys.stdout.write("".join(f"# stderr: {l}\n" for l in err.splitlines()[-40:]))
    if a.same_as_plain:
        prc, pout, perr = run(False)
        ok(rc == prc, f"exit status {rc}, as without the collector ({prc})")
        same = out == pout if not a.np else sorted(out.splitlines()) == sorted(pout.splitlines())
        ok(same, "stdout exactly as without the collector")
    if a.signal:
        ok(rc == -getattr(signal, a.signal) or rc == 128 + getattr(signal, a.signal), f"killed by {a.signal} (status {rc})")
    if a.stderr_exactly:
        want = ["zecoll: " + l for l in open(a.stderr_exactly).read().splitlines()[:-1]] + a.stderr_line
        got = err.splitlines()
        if a.np:
            want, got = sorted(want), sorted(got)
        ok(got == want, "stderr: exactly the checker's messages, once" + ("" if got == want else
           "\n# want:\n" + "".join(f"#   {l}\n" for l in want)))
    for spec in a.count:
        rx, k = spec.rsplit("=", 1)
        got = len(re.findall(rx, err, re.M))
        ok(got == int(k), f"stderr has /{rx}/ {got} time(s), want {k}")
    archives = sorted(glob.glob(os.path.join(a.work, "trace*")))
    if a.archive == "none":
        ok(not archives, f"no archive ({archives})")
    if a.archive == "valid" or a.stored or a.no_mpi_events:
        if ok(len(archives) == 1 and os.path.exists(os.path.join(archives[0], "traces.otf2")), f"one archive ({archives})"):
            r = subprocess.run(["otf2-print", "--silent", "-Werror", os.path.join(archives[0], "traces.otf2")],
                               capture_output=True, text=True)
            ok(r.returncode == 0, f"otf2-print -Werror reads it {r.stderr[:300]}")
    if a.stored and archives:
        stored = glob.glob(os.path.join(archives[0], "**", "zecoll-config.yaml"), recursive=True)
        if ok(stored == [os.path.join(archives[0], "zecoll-config.yaml")], f"one zecoll-config.yaml in the archive ({stored})"):
            text = open(stored[0]).read()
            r = subprocess.run([a.tool, "check", stored[0]], capture_output=True, text=True,
                               env={k: v for k, v in base.items() if not k.startswith("ZECOLL_")})
            ok(r.returncode == 0, f"`zecoll-config check` accepts it {r.stderr[:500]}")
            env = dict(base)
            env.update(extra)
            ref = subprocess.run([a.tool, "check"], capture_output=True, text=True, env=env, cwd=cwd)
            ok(ref.returncode == 0 and values(text) == values(ref.stdout) and values(r.stdout) == values(text),
               "its values are the effective configuration of the run (the file and the variables)")
            ok(text == ref.stdout, "and so are its origins")
    if a.no_mpi_events and archives:
        r = subprocess.run(["otf2-print", os.path.join(archives[0], "traces.otf2")], capture_output=True, text=True)
        enters = [l for l in r.stdout.splitlines() if l.startswith("ENTER")]
        mpi = [l for l in enters if 'Region: "MPI_' in l]
        ok(enters and not mpi, f"{len(enters)} regions entered, none of them MPI ({mpi[:2]})")
    print(f"1..{n}")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
