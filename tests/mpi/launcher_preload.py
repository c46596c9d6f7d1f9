#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""The launcher stays off: `mpirun` run with LD_PRELOAD=libzecoll.so exported (so that mpirun
itself loads the collector) and `-x LD_PRELOAD=...` for the ranks.

  launcher_preload.py --mpiexec MPIRUN --collector LIB --zesim LIB --work DIR
                      [--preload-first LIB] [--python PY] -- PROGRAM [ARGS...]

1. Baseline: mpirun without the collector; rank 0 counts mpirun's threads (/proc/PPID/task).
2. The job with the collector exported and -x'd, ZECOLL_OUTPUT=DIR/trace and a 20 ms flush
   interval (a collector running in mpirun would have started its flusher and opened its
   archive within it). Rank 0 waits 0.3 s after the program and records mpirun's threads and
   whether mpirun mapped libzecoll.so (it must: else this test proves nothing).
   Required: mpirun's thread count equals the baseline's; the work directory holds exactly one
   archive, DIR/trace (not DIR/trace.1: the launcher took no name), complete (no journal left),
   with the job's 4 ranks (check_mpi_trace.py); only the 4 ranks printed a summary.
3. Names: programs called `srun` (built-in list) and `my-launcher` (ZECOLL_LAUNCHERS=my-*)
   say at log level 3 that they are launchers; one called `not-a-launcher` does not.
TAP output; exit 0 when every check passed."""
import argparse
import os
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
NP = 4
LAUNCHER_LINE = re.compile(r"(\S+) is a job launcher \(docs/config.md#launchers\): collection is off")

checks = []


def ok(cond, what):
    checks.append(bool(cond))
    print(f"{'ok' if cond else 'not ok'} {len(checks)} - {what}")
    sys.stdout.flush()


def clean_env(preload=None):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ZECOLL_", "LD_PRELOAD"))}
    if preload:
        env["LD_PRELOAD"] = preload
    return env


def mpirun(a, env, xs, work, probe):
    """Runs PROGRAM on NP ranks through `sh -c`, so that rank 0 can look at its parent (mpirun)."""
    script = ('"$@" || exit $?; [ "$OMPI_COMM_WORLD_RANK" = 0 ] || exit 0; sleep 0.3; '
              f'ls /proc/$PPID/task | wc -l > {probe}.threads; '
              f'grep -c libzecoll /proc/$PPID/maps > {probe}.maps; exit 0')
    cmd = [a.mpiexec, "--allow-run-as-root", "--oversubscribe", "-np", str(NP)]
    for x in xs:
        cmd += ["-x", x]
    cmd += ["sh", "-c", script, "sh"] + a.command
    p = subprocess.run(cmd, cwd=work, env=env, capture_output=True, text=True, timeout=120)
    sys.stdout.write("".join("# " + l + "\n" for l in (p.stdout + p.stderr).splitlines()[-12:]))
    return p


def read_int(path):
    try:
        with open(path) as f:
            return int(f.read().strip())
    except (OSError, ValueError):
        return None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mpiexec", required=True)
    ap.add_argument("--collector", required=True)
    ap.add_argument("--zesim", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--preload-first")
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("command", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    a.command = a.command[1:] if a.command[:1] == ["--"] else a.command
    work = os.path.abspath(a.work)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    first = [a.preload_first] if a.preload_first else []
    zesim = f"ZE_ENABLE_ALT_DRIVERS={os.path.abspath(a.zesim)}"

    # 1. baseline (the sanitizer runtime, if any, preloaded the same way)
    base = os.path.join(work, "base")
    os.makedirs(base)
    env = clean_env(":".join(first) or None)
    env["ZE_ENABLE_ALT_DRIVERS"] = os.path.abspath(a.zesim)
    p = mpirun(a, env, [zesim], base, "probe")
    threads0 = read_int(os.path.join(base, "probe.threads"))
    ok(p.returncode == 0 and threads0, f"without the collector: exit 0 (got {p.returncode}), mpirun has "
                                       f"{threads0} thread(s)")

    # 2. the collector exported into mpirun's own environment, and -x'd to the ranks
    job = os.path.join(work, "job")
    os.makedirs(job)
    trace = os.path.join(job, "trace")
    preload = ":".join(first + [os.path.abspath(a.collector)])
    env = clean_env(preload)
    vars_ = {"ZECOLL_OUTPUT": trace, "ZECOLL_FLUSH_INTERVAL_MS": "20", "ZECOLL_STRICT": "1",
             "ZE_ENABLE_ALT_DRIVERS": os.path.abspath(a.zesim)}
    env.update(vars_)
    p = mpirun(a, env, [f"LD_PRELOAD={preload}"] + [f"{k}={v}" for k, v in vars_.items()], job, "probe")
    ok(p.returncode == 0, f"with the collector exported: exit 0 (got {p.returncode})")
    ok((read_int(os.path.join(job, "probe.maps")) or 0) > 0, "mpirun itself loaded libzecoll.so")
    threads1 = read_int(os.path.join(job, "probe.threads"))
    ok(threads1 == threads0, f"mpirun started no thread of ours: {threads1} thread(s), {threads0} without")
    entries = sorted(e for e in os.listdir(job) if not e.startswith("probe."))
    ok(entries == ["trace"], f"exactly one archive directory, 'trace' (found {entries})")
    ok(os.path.isfile(os.path.join(trace, "traces.otf2")) and not os.path.exists(os.path.join(trace, "zecoll-journal")),
       "the archive is complete (traces.otf2, no salvage journal left)")
    summaries = re.findall(r"^zecoll: rank (\d+): .* -> (\S+) ", p.stderr, re.M)
    ok(sorted(summaries) == [(str(r), trace) for r in range(NP)],
       f"one summary per rank, each naming {trace} (got {summaries})")
    others = [l for l in p.stderr.splitlines() if l.startswith("zecoll") and not re.match(r"zecoll: rank \d+: ", l)]
    ok(not others, f"no other message from the collector (got {others[:3]})")
    c = subprocess.run([a.python, os.path.join(HERE, "check_mpi_trace.py"), trace, "--ranks", str(NP)],
                       capture_output=True, text=True, timeout=300)
    sys.stdout.write("".join("# " + l + "\n" for l in (c.stdout + c.stderr).splitlines()[-5:]))
    ok(c.returncode == 0, "check_mpi_trace.py: the job's archive has its 4 ranks and is consistent")

    # 3. names: the built-in list and ZECOLL_LAUNCHERS, by argv[0]
    names = os.path.join(work, "names")
    os.makedirs(names)
    for name, extra, expect in (("srun", "", True), ("my-launcher", "my-*", True), ("not-a-launcher", "my-*", False)):
        link = os.path.join(names, name)
        os.symlink(shutil.which("true"), link)
        env = clean_env(preload)
        env.update({"ZECOLL_LOG_LEVEL": "3", "ZECOLL_LAUNCHERS": extra, "ZECOLL_OUTPUT": os.path.join(names, "t")})
        r = subprocess.run([link], cwd=names, env=env, capture_output=True, text=True, timeout=60)
        said = LAUNCHER_LINE.findall(r.stderr)
        ok(r.returncode == 0 and said == ([name] if expect else []),
           f"'{name}' (ZECOLL_LAUNCHERS='{extra}') {'is' if expect else 'is not'} a launcher (said: {said})")
    print(f"1..{len(checks)}")
    return 0 if all(checks) else 1


if __name__ == "__main__":
    sys.exit(main())
