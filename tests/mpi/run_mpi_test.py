#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Run an MPI program under mpirun (with or without the zecoll collector) and check its trace.

  run_mpi_test.py --mpiexec MPIRUN [--hydra] --np 4 --work DIR [--collector LIB] [--zesim LIB]
                  [--skew S0,S1,...] [--env K=V]... [--preload-first LIB] [--timeout 60]
                  [--skip-if-missing] [--input FILE]... [--expect-output FILE:REGEX]...
                  [--check=OPTION]... [--truth [--start-tol-ns NS]] -- PROGRAM [ARGS...]

Steps:
  1. empty the work directory DIR (the program's working directory), copy the --input files in;
  2. run  MPIRUN --allow-run-as-root --oversubscribe -np N
              [-x LD_PRELOAD=[PRELOAD_FIRST:]LIB -x ZECOLL_OUTPUT=DIR/trace -x ZECOLL_STRICT=1]
              [-x ZE_ENABLE_ALT_DRIVERS=ZESIM] [-x ZECOLL_CLOCK_SKEW_NS=S0,S1,...] [-x K=V ...]
              PROGRAM ARGS
     (--hydra: MPICH's MPIRUN -launcher fork -n N [-genv K V ...] PROGRAM ARGS)
     with a timeout (default 60 s; the whole process group is killed when it expires);
  3. require exit status 0 (77 = the program skipped itself: passed on as 77), no
     "internal error" report from the collector, and every --expect-output match;
  4. with --collector: require exactly one archive (DIR/trace, or the one DIR/trace* the
     collector created) and run check_mpi_trace.py on it with --ranks N, each --check option, and
     --skew-check --expect-skew S0,... when --skew is given.
  5. with --truth: zesim logged each rank's ground truth (ZESIM_TRUTH=DIR/truth-%r.jsonl); each
     rank's device records are judged against it by tests/collector/check_trace.py --rank r
     (with --facts DIR/facts-<r>.json when the program wrote one: its recording windows).
Without --collector only steps 1-3 run: the program itself must pass.
--skip-if-missing: exit 77 (ctest SKIP_RETURN_CODE) when PROGRAM is not installed.
Exit status: 0 passed, 1 failed, 77 skipped.
"""
import argparse
import glob
import os
import re
import shutil
import signal
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SKIP = 77


def tail(text, n=4000):
    return text if len(text) <= n else "...\n" + text[-n:]


def find_program(prog):
    if os.sep in prog:
        return prog if os.path.isfile(prog) and os.access(prog, os.X_OK) else None
    return shutil.which(prog)


def launch_cmd(mpiexec, np, env, hydra=False):
    """The launcher's command line for np ranks with the variables env (K=V) exported to them:
    Open MPI's mpirun (-x K=V), or MPICH's Hydra (-genv K V; ranks forked, no ssh)."""
    if hydra:
        cmd = [mpiexec, "-launcher", "fork", "-n", str(np)]
        for x in env:
            cmd += ["-genv"] + x.split("=", 1)
        return cmd
    cmd = [mpiexec, "--allow-run-as-root", "--oversubscribe", "-np", str(np)]
    for x in env:
        cmd += ["-x", x]
    return cmd


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mpiexec", default="mpirun")
    ap.add_argument("--np", type=int, default=4)
    ap.add_argument("--hydra", action="store_true",
                    help="MPIRUN is MPICH's Hydra (mpirun.mpich): -genv K V for -x K=V, ranks forked locally")
    ap.add_argument("--work", required=True)
    ap.add_argument("--collector", help="libzecoll.so to preload (absent: run without the collector)")
    ap.add_argument("--zesim", help="libzesim.so for ZE_ENABLE_ALT_DRIVERS")
    ap.add_argument("--skew", help="ZECOLL_CLOCK_SKEW_NS for the ranks; enables the skew checks")
    ap.add_argument("--env", action="append", default=[], metavar="K=V", help="more variables for the ranks")
    ap.add_argument("--preload-first", help="library to preload before the collector (sanitizer runtime)")
    ap.add_argument("--timeout", type=float, default=60.0)
    ap.add_argument("--skip-if-missing", action="store_true")
    ap.add_argument("--input", action="append", default=[], metavar="FILE",
                    help="copy FILE into the work directory (the program's working directory) first")
    ap.add_argument("--expect-output", action="append", default=[], metavar="FILE:REGEX",
                    help="after the run, FILE (relative to the work directory) must match REGEX (multi-line)")
    ap.add_argument("--check", action="append", default=[], metavar="OPTION",
                    help="option for check_mpi_trace.py (use --check=--expect-region=MPI_Send)")
    ap.add_argument("--python", default=sys.executable, help="interpreter for check_mpi_trace.py")
    ap.add_argument("--truth", action="store_true",
                    help="zesim logs each rank's ground truth; every rank's device records are judged "
                         "against it (tests/collector/check_trace.py check --rank r)")
    ap.add_argument("--start-tol-ns", type=int, help="start tolerance for --truth (clock offsets add error)")
    ap.add_argument("--facts", help="for --truth: what every rank must show (check_trace.py --facts), "
                                    "unless the program wrote its own facts-<rank>.json")
    ap.add_argument("command", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    cmd = a.command[1:] if a.command[:1] == ["--"] else a.command
    if not cmd:
        ap.error("no program given (after --)")

    prog = find_program(cmd[0])
    if prog is None:
        if a.skip_if_missing:
            print(f"SKIP: {cmd[0]} is not installed")
            return SKIP
        print(f"FAIL: program {cmd[0]} not found")
        return 1
    cmd[0] = os.path.abspath(prog)
    mpiexec = find_program(a.mpiexec)
    if mpiexec is None:
        print(f"FAIL: {a.mpiexec} not found")
        return 1

    # 1. a clean work directory
    work = os.path.abspath(a.work)
    if os.path.isdir(work):
        shutil.rmtree(work)
    os.makedirs(work)
    trace = os.path.join(work, "trace")
    for f in a.input:
        shutil.copy(f, work)

    # 2. mpirun
    xs = []
    if a.collector:
        preload = ([a.preload_first] if a.preload_first else []) + [os.path.abspath(a.collector)]
        xs += [f"LD_PRELOAD={':'.join(preload)}", f"ZECOLL_OUTPUT={trace}", "ZECOLL_STRICT=1"]
    if a.zesim:
        xs.append(f"ZE_ENABLE_ALT_DRIVERS={os.path.abspath(a.zesim)}")
    if a.skew:
        xs.append(f"ZECOLL_CLOCK_SKEW_NS={a.skew}")
    if a.truth:
        xs.append(f"ZESIM_TRUTH={os.path.join(work, 'truth-%r.jsonl')}")
    for kv in a.env:
        # sanitizer options add to what the caller exported (scripts/test.sh sets halt_on_error etc.)
        k, _, v = kv.partition("=")
        if k.endswith("_OPTIONS") and os.environ.get(k):
            kv = f"{k}={os.environ[k]}:{v}"
        xs.append(kv)
    full = launch_cmd(mpiexec, a.np, xs, a.hydra) + cmd
    print("# " + " ".join(full))
    sys.stdout.flush()
    p = subprocess.Popen(full, cwd=work, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         start_new_session=True)
    try:
        out, err = p.communicate(timeout=a.timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, err = p.communicate()
        sys.stdout.write(tail(out))
        sys.stdout.write(tail(err))
        print(f"FAIL: mpirun did not finish within {a.timeout:g} s (killed)")
        return 1
    sys.stdout.write(tail(out))
    sys.stdout.write(tail(err))

    # 3. exit status
    if p.returncode == SKIP:
        print("SKIP: the program skipped itself (exit status 77)")
        return SKIP
    failed = []
    if p.returncode != 0:
        failed.append(f"mpirun exited with {p.returncode}")
    if a.collector and re.search(r"internal error[:( ]", err):
        failed.append("the collector reported an internal error")
    for spec in a.expect_output:
        fname, _, rx = spec.partition(":")
        path = os.path.join(work, fname)
        try:
            with open(path, errors="replace") as fh:
                text = fh.read()
        except OSError as e:
            failed.append(f"no output file {fname}: {e}")
            continue
        if not re.search(rx, text, re.M):
            failed.append(f"{fname} does not match /{rx}/")
    if failed:
        for f in failed:
            print("FAIL: " + f)
        return 1
    if not a.collector:
        print("PASS: the program passed without the collector")
        return 0

    # 4. the trace: one archive per job
    archives = sorted(glob.glob(os.path.join(work, "trace*", "traces.otf2")))
    if len(archives) > 1:
        print(f"FAIL: {len(archives)} archives ({', '.join(os.path.dirname(x) for x in archives)}): "
              "expected one per job (each rank wrote its own?)")
        return 1
    anchor_dir = trace
    if not os.path.isfile(os.path.join(trace, "traces.otf2")):
        found = sorted(glob.glob(os.path.join(work, "trace*", "traces.otf2")), key=os.path.getmtime)
        if not found:
            print(f"FAIL: no archive at {trace} (nothing like {work}/trace*/traces.otf2 either)")
            return 1
        anchor_dir = os.path.dirname(found[-1])
        print(f"# archive found at {anchor_dir}")
    check = [a.python, os.path.join(HERE, "check_mpi_trace.py"), anchor_dir, "--ranks", str(a.np)]
    if a.skew:
        check += ["--skew-check", "--expect-skew", a.skew]
    check += a.check
    print("# " + " ".join(check))
    sys.stdout.flush()
    try:
        c = subprocess.run(check, timeout=max(120.0, 4 * a.timeout))
    except subprocess.TimeoutExpired:
        print("FAIL: check_mpi_trace.py did not finish")
        return 1
    if c.returncode != 0:
        print(f"FAIL: check_mpi_trace.py found problems (exit status {c.returncode})")
        return 1
    if a.truth:
        # every rank against its own truth, in one process: the archive is printed and read once
        tc = [a.python, os.path.join(HERE, "..", "collector", "check_trace.py"), "check", "--trace", anchor_dir]
        if a.start_tol_ns:
            tc += ["--start-tol-ns", str(a.start_tol_ns)]
        for r in range(a.np):
            facts = os.path.join(work, f"facts-{r}.json")  # the program's own account (mpi_windows.c)
            facts = facts if os.path.exists(facts) else a.facts or "none"
            tc += ["--rank", str(r), "--truth", os.path.join(work, f"truth-{r}.jsonl"), "--facts", facts]
        print("# " + " ".join(tc))
        sys.stdout.flush()
        if subprocess.run(tc, timeout=max(120.0, 4 * a.timeout)).returncode != 0:
            print("FAIL: device records do not match the ranks' ground truth (rank named on each line)")
            return 1
    print("PASS: program and trace")
    return 0


if __name__ == "__main__":
    sys.exit(main())
