#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Kill runs under the collector, salvage their archives and judge them against zesim's truth.

  kill_test.py serial --app BIN [--arg A]... --points N --seed S COMMON
  kill_test.py mpi --mpiexec MPIRUN [--hydra] --np 4 --app BIN [--arg A]... --victims one|all --points N --seed S COMMON
  kill_test.py mpi-end --mpiexec MPIRUN [--hydra] --np 4 --app BIN --arg MODE [--arg STEPS] COMMON
COMMON: --zesim LIB --libdir DIR --bindir DIR --work DIR --interval-ms I [--env K=V]...
        [--delay LO:HI] [--preload-first LIB]

serial: N runs of the program, each sent SIGKILL at a seeded random time in [LO, HI] s after its
GPU work began (its truth holds 100 operations: start-up takes long on a loaded machine). mpi: N runs of the job, SIGKILL to one random rank (mpirun then stops the others) or to
every rank at once (--hydra: MPIRUN is MPICH's Hydra, mpirun.mpich, which stops the others the
same way; the app then is an MPICH program, traced by the mpich flavour). mpi-end: one run of a job that ends by itself without MPI_Finalize
(tests/salvage/salv_mpi_end.c: MPI_Abort, or returning from main).

Each run: zesim writes every rank's truth unbuffered (it survives SIGKILL); then `zecoll salvage`
(the launcher) rebuilds the archive and the result must pass
  * zecoll salvage: exit 0, every rank found, the killed ranks said to have died;
  * the archive contract (tests/aggregate/check_archive.py, with A20 for salvaged archives);
  * per rank, tests/collector/check_trace.py --truncated: every device record is one of the
    operations zesim executed, right in name, bytes, start and duration, and each queue's records
    are its first operations in order (none wrong, no hole);
  * MPI: tests/mpi/check_mpi_trace.py --truncated (messages and collectives consistent up to
    where each rank's data ends);
  * the target: of the operations that completed more than one flush interval before the kill,
    at least 99% are recovered. Measured per rank as recovered / completed-before(T_kill - I),
    T_kill read from CLOCK_MONOTONIC_RAW (zesim's and the collector's clock) right before the
    signal, when the rank's last flush began within one interval before the kill (the flusher
    kept its schedule, within 2 ms of wake-up jitter). When a loaded machine delayed the flusher
    more (or the kill hit a flush), the same 99% is asserted against the last flush instead:
    completed-before(last flush - 10 ms, the time a device record may wait to be collected);
  * a rank that ended by itself (mpi-end: its journal's final flush) has every operation;
  * zecoll-aggregate reads the archive and its data-quality section says it was salvaged.
Exit status 0 when every run passed.
"""
import argparse
import glob
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "mpi"))
from salv_common import absolute, add_run_args, collector_env  # noqa: E402
from run_mpi_test import launch_cmd  # noqa: E402  (Open MPI's mpirun or MPICH's Hydra)
PY = "/usr/bin/python3"
TARGET = 0.99
# The flusher wakes on a timer: a pass begins this much after its deadline on an idle machine
# (timer slack and a wake-up); later than that, the machine was loaded or the kill hit a pass.
JITTER_NS = 2000000
# A device operation's record is put when a drainer (every ZECOLL_DRAIN_INTERVAL_US = 1 ms while
# work is pending) or the application's synchronisation collects it: the flush covers what was
# put before it began.
DRAIN_SLACK_NS = 10000000


def now_ns():
    return time.clock_gettime_ns(time.CLOCK_MONOTONIC_RAW)


class Run:
    def __init__(self, name):
        self.name = name
        self.fails = []
        self.notes = []

    def fail(self, msg):
        self.fails.append(msg)

    def note(self, msg):
        self.notes.append(msg)


def env_for(a, work):
    return collector_env(a, os.path.join(work, "trace"), {
        "ZESIM_TRUTH": os.path.join(work, "truth-%r.jsonl"), "ZESIM_TRUTH_UNBUFFERED": "1",
        "ZECOLL_FLUSH_INTERVAL_MS": str(a.interval_ms)})


def job_env(a, work):
    """The launcher's own environment (the collector is only for the ranks) and its command line,
    which exports the ranks' variables (-x K=V, or Hydra's -genv K V)."""
    env = env_for(a, work)
    keys = ["LD_PRELOAD", "ZE_ENABLE_ALT_DRIVERS", "ZESIM_TRUTH", "ZESIM_TRUTH_UNBUFFERED", "ZECOLL_OUTPUT",
            "ZECOLL_STRICT", "ZECOLL_FLUSH_INTERVAL_MS"] + [kv.partition("=")[0] for kv in a.env]
    if a.check_final_syncs:
        env["ZC_TEST_SYNC_LOG"] = os.path.join(work, "syncs.log")
        keys.append("ZC_TEST_SYNC_LOG")
    own = dict(os.environ)
    for k in keys:
        own.pop(k, None)
    return own, launch_cmd(a.mpiexec, a.np, [f"{k}={env[k]}" for k in keys], a.hydra)


def rank_pids(work, np_):
    """rank -> pid, from the first line zesim writes into each rank's truth (its device line)."""
    pids = {}
    for r in range(np_):
        try:
            with open(os.path.join(work, f"truth-{r}.jsonl")) as f:
                line = f.readline()
            pids[r] = json.loads(line)["pid"]
        except (OSError, ValueError, KeyError):
            pass
    return pids


def alive(pid):
    """Whether any thread of pid runs. A process whose leader is a zombie may still have threads
    ending (the collector's), which hold its descriptors and so its journal's lock; the leader's
    zombie alone holds nothing."""
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return False
    for t in tids:
        try:
            with open(f"/proc/{pid}/task/{t}/stat") as f:
                if f.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X"):
                    return True
        except (OSError, IndexError):
            pass
    return False


def wait_ranks_gone(work, np_, timeout=120):
    """Until no rank of the job runs. mpirun may exit while a rank it signalled is still ending (its
    exit handlers, the kernel tearing down its memory), and salvage rightly refuses a run whose rank
    still holds its journal's lock: a user salvages a job that is gone. Returns the pids still alive."""
    pids = list(rank_pids(work, np_).values())
    end = time.time() + timeout
    while time.time() < end and any(alive(q) for q in pids):
        time.sleep(0.02)
    return [q for q in pids if alive(q)]


def wait_started(work, np_, p, ops=100, timeout=60):
    """Until every rank's truth holds `ops` operations (the program is past its start-up, however
    loaded the machine), or the process ended. True when started."""
    end = time.time() + timeout
    while time.time() < end and p.poll() is None:
        n = []
        for r in range(np_):
            try:
                with open(os.path.join(work, f"truth-{r}.jsonl"), "rb") as f:
                    n.append(f.read().count(b"\n"))
            except OSError:
                n.append(0)
        if min(n) > ops:
            return True
        time.sleep(0.02)
    return False


def data_ends(anchor):
    """rank -> zecoll::data_end (the rank's clock) of a salvaged archive."""
    code = ("import otf2, json, sys\n"
            "out = {}\n"
            "with otf2.reader.open(sys.argv[1]) as tr:\n"
            "    for lp in tr.definitions.location_properties:\n"
            "        if lp.name == 'zecoll::data_end':\n"
            "            out[lp.location._ref & 0xffffffff] = lp.value\n"
            "print(json.dumps(out))\n")
    p = subprocess.run([PY, "-c", code, anchor], capture_output=True, text=True)
    try:
        return {int(k): v for k, v in json.loads(p.stdout).items()}
    except ValueError:
        return {}


def judge(a, run, work, t_kill, killed, np_, mpi, strict_final=False):
    """Salvage the archive of one dead run and check it (failures into run). strict_final: a rank
    that ended by itself (its journal's final flush) must have every operation it executed."""
    trace = os.path.join(work, "trace")
    interval = a.interval_ms * 1000000
    if mpi:
        left = wait_ranks_gone(work, np_)
        if left:
            run.note(f"ranks still running 120 s after mpirun exited: pids {left}")
    for r in a.drop_journal:  # as if its file were lost: salvage must keep the job whole without it
        os.unlink(os.path.join(trace, "zecoll-journal", f"{r}.zcj"))
    p = subprocess.run([os.path.join(a.bindir, "zecoll"), "salvage", trace] + (["--keep-journal"] if a.keep else []),
                       capture_output=True, text=True, timeout=300)
    out = p.stdout + p.stderr
    run.note("salvage: " + " | ".join(l for l in out.splitlines() if not l.startswith("  "))[:600])
    if p.returncode != 0:
        run.fail(f"zecoll salvage exited {p.returncode}: {out[-800:]}")
        return
    m = re.search(r"(\d+) of (\d+) rank\(s\) found", out)
    found = np_ - len(a.drop_journal)
    if not m or int(m.group(1)) != found or int(m.group(2)) != np_:
        run.fail(f"zecoll salvage did not find {found} of the {np_} rank(s): {out[:300]}")
    if a.drop_journal and not re.search(r"missing: " + " ".join(str(r) for r in sorted(a.drop_journal)) + r"\n", out):
        run.fail(f"zecoll salvage does not name the ranks without journal {a.drop_journal}: {out[:300]}")
    for r in killed:
        if r in a.drop_journal:
            continue
        if not re.search(rf"^rank {r} \(.*\): died", out, re.M):
            run.fail(f"zecoll salvage does not say that rank {r} died")
    final = {int(x) for x in re.findall(r"^rank (\d+) \(.*\): ended without completing", out, re.M)}
    anchor = os.path.join(trace, "traces.otf2")
    c = subprocess.run([PY, os.path.join(HERE, "..", "aggregate", "check_archive.py"), trace,
                        "--mpi" if mpi else "--serial"], capture_output=True, text=True, timeout=300)
    if c.returncode != 0:
        run.fail("archive contract: " + " | ".join(l for l in c.stdout.splitlines() if l.startswith("FAIL"))[:1500])
    if os.path.isdir(os.path.join(trace, "zecoll-journal")) and not a.keep:
        run.fail("the journal is still there after a successful salvage")
    ends = data_ends(anchor)
    for r in range(np_):
        if r in a.drop_journal:
            continue
        everything = strict_final and r in final
        end = ends.get(r)
        if end is None:
            run.fail(f"rank {r}: no zecoll::data_end in the salvaged archive")
            continue
        late = t_kill - end - interval
        on_time = late <= JITTER_NS
        # the measure when the flusher kept its schedule; else against its last flush
        before = 1 << 62 if everything else t_kill - interval if on_time else end - DRAIN_SLACK_NS
        cmd = [PY, os.path.join(HERE, "..", "collector", "check_trace.py"), "check", "--truth",
               os.path.join(work, f"truth-{r}.jsonl"), "--trace", trace, "--truncated",
               "--required-before", str(before)]
        if mpi:
            cmd += ["--rank", str(r)]
        c = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        if c.returncode != 0:
            run.fail(f"rank {r} against its truth: " + " | ".join(
                l for l in c.stdout.splitlines() if l.startswith("not ok"))[:1500])
            continue
        m = re.search(r"recovered (\d+) of the (\d+) operations", c.stdout)
        if not m:
            run.fail(f"rank {r}: no recovery figure from check_trace.py")
            continue
        got, total = int(m.group(1)), int(m.group(2))
        if everything:
            run.note(f"rank {r} ended by itself: recovered {got} of the {total} operations it executed")
            if got != total:
                run.fail(f"rank {r} ended by itself (final flush) but {total - got} of its {total} operations are missing")
            continue
        frac = got / total if total else 1.0
        what = (f"completed before T_kill - {a.interval_ms} ms" if on_time else
                f"completed before its last flush - {DRAIN_SLACK_NS // 1000000} ms (the flusher ran "
                f"{late / 1e6:.1f} ms late: a loaded machine, or the kill hit a flush)")
        run.note(f"rank {r}: recovered {got} of {total} operations {what} ({100 * frac:.2f}%); its data ends "
                 f"{(end - t_kill) / 1e6:+.1f} ms from the kill")
        if total and frac < TARGET:
            run.fail(f"rank {r}: recovered {got} of {total} ({100 * frac:.2f}%) operations {what}; target {TARGET:.0%}")
    if mpi:
        c = subprocess.run([PY, os.path.join(HERE, "..", "mpi", "check_mpi_trace.py"), trace, "--ranks", str(np_),
                            "--truncated"] + a.mpi_check, capture_output=True, text=True, timeout=300)
        if c.returncode != 0:
            run.fail("check_mpi_trace.py --truncated: " + " | ".join(
                l for l in c.stdout.splitlines() if l.startswith("not ok") or l.startswith("#   "))[:1500])
    rep = os.path.join(work, "report")
    # zecoll-aggregate is an MPI program: in an ASan build the leak checker would flag Open MPI's own
    # allocations (tests/aggregate turns it off for the same reason)
    env = dict(os.environ, ASAN_OPTIONS=(os.environ.get("ASAN_OPTIONS", "") + ":detect_leaks=0").lstrip(":"))
    c = subprocess.run([os.path.join(a.bindir, "zecoll-aggregate"), trace, "--output", rep], capture_output=True,
                       text=True, timeout=300, env=env)
    if c.returncode != 0:
        run.fail(f"zecoll-aggregate exited {c.returncode}: {(c.stdout + c.stderr)[-500:]}")
    elif "salvaged" not in c.stdout:
        run.fail("zecoll-aggregate's report does not say that the archive was salvaged")


def start(cmd, env, cwd):
    return subprocess.Popen(cmd, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)


def finish(p, timeout=60):
    try:
        out, _ = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, _ = p.communicate()
        out += "\n(timed out, killed)"
    return out


def one_serial(a, k, delay):
    run = Run(f"point {k}: SIGKILL after {delay:.3f} s")
    work = os.path.join(a.work, f"p{k}")
    os.makedirs(work)
    p = start([a.app] + a.arg, env_for(a, work), work)
    if not wait_started(work, 1, p):
        run.fail(f"the program did not start its GPU work: {finish(p)[-500:]}")
        return run
    time.sleep(delay)
    if p.poll() is not None:
        run.fail(f"the program ended by itself before the kill ({p.returncode}): {finish(p)[-500:]}")
        return run
    t_kill = now_ns()
    os.kill(p.pid, signal.SIGKILL)
    finish(p)
    judge(a, run, work, t_kill, [0], 1, False)
    return run


def one_mpi(a, k, delay, victim):
    what = "every rank" if victim is None else f"rank {victim}"
    run = Run(f"point {k}: SIGKILL to {what} after {delay:.3f} s")
    work = os.path.join(a.work, f"p{k}")
    os.makedirs(work)
    env, launch = job_env(a, work)
    p = start(launch + [a.app] + a.arg, env, work)
    if not wait_started(work, a.np, p):
        run.fail(f"not every rank started its GPU work: {finish(p)[-800:]}")
        return run
    time.sleep(delay)
    pids = rank_pids(work, a.np)
    if p.poll() is not None or len(pids) != a.np:
        run.fail(f"the job ended or not every rank started before the kill (ranks {sorted(pids)}): {finish(p)[-800:]}")
        return run
    victims = list(range(a.np)) if victim is None else [victim]
    t_kill = now_ns()
    for r in victims:
        try:
            os.kill(pids[r], signal.SIGKILL)
        except ProcessLookupError:
            run.fail(f"rank {r} (pid {pids[r]}) was gone before the kill")
    out = finish(p)
    run.note(f"killed pids {[pids[r] for r in victims]} (ranks {victims}); mpirun: "
             + " | ".join(l for l in out.splitlines() if "zecoll" in l)[:400])
    judge(a, run, work, t_kill, victims, a.np, True)
    return run


def final_syncs(run, work, np_):
    """Every event file with bytes was made durable by its rank before that rank's last sync of its
    journal (the one whose SEAL records name the files' bytes: ZECOLL_FLUSH_SYNC's promise). Run
    with no flusher pass during the job, so that only the final pass seals them."""
    wait_ranks_gone(work, np_)
    try:
        with open(os.path.join(work, "syncs.log")) as f:
            lines = [l.split(" ", 2) for l in f.read().splitlines()]
    except OSError as e:
        run.fail(f"no sync log: {e}")
        return
    last_jrn = {}
    for i, (pid, _, path) in enumerate(lines):
        if path.endswith(".zcj"):
            last_jrn[pid] = i
    synced = {}  # pid -> the event files it synced before its last journal sync
    for i, (pid, _, path) in enumerate(lines):
        if path.endswith(".evt") and pid in last_jrn and i < last_jrn[pid]:
            synced.setdefault(pid, set()).add(os.path.realpath(path))
    tdir = os.path.join(work, "trace", "traces")
    files = [os.path.realpath(os.path.join(tdir, n)) for n in sorted(os.listdir(tdir))
             if n.endswith(".evt") and os.path.getsize(os.path.join(tdir, n)) > 0] if os.path.isdir(tdir) else []
    if not last_jrn or not files:
        run.fail(f"nothing to check: {len(last_jrn)} ranks synced their journal, {len(files)} event files")
        return
    # a rank mpirun stopped (SIGTERM after another rank's end) may end before its journal's close:
    # every rank that reached it synced its own event files first
    bare = [pid for pid in last_jrn if not synced.get(pid)]
    if bare:
        run.fail(f"pids {bare} synced their journal's last time without syncing an event file before")
    if len(last_jrn) == np_:  # every rank reached its close: every event file is among the synced
        every = set().union(*synced.values())
        missing = [os.path.basename(f) for f in files if f not in every]
        if missing:
            run.fail(f"event files not synced before their rank's last journal sync: {missing}")
    run.note(f"{sum(len(v) for v in synced.values())} of {len(files)} event files synced before the last "
             f"journal syncs of {len(last_jrn)} of {np_} ranks")


def one_end(a):
    run = Run(f"job ending with '{a.arg[0]}'")
    work = os.path.join(a.work, "end")
    os.makedirs(work)
    env, launch = job_env(a, work)
    p = start(launch + [a.app] + a.arg, env, work)
    out = finish(p)
    t_end = now_ns()
    run.note(f"mpirun exited {p.returncode}")
    if re.search(r"internal error[:( ]", out):
        run.fail("the collector reported an internal error: " + out[-800:])
    n_warn = len(re.findall(r"ends without MPI_Finalize.*zecoll salvage", out))
    if n_warn == 0:
        run.fail("no rank said to run `zecoll salvage`: " + out[-800:])
    if a.check_final_syncs:
        final_syncs(run, work, a.np)
    # the job ended by itself: everything recorded is in the journals (t_end bounds every op)
    judge(a, run, work, t_end, [], a.np, True, strict_final=True)
    return run


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("mode", choices=["serial", "mpi", "mpi-end"])
    add_run_args(ap)
    ap.add_argument("--interval-ms", type=int, default=100)
    ap.add_argument("--points", type=int, default=2)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--delay", default="0.4:1.0",
                    help="LO:HI seconds after every rank's GPU work began (100 operations in its truth)")
    ap.add_argument("--mpiexec", default="mpirun")
    ap.add_argument("--np", type=int, default=4)
    ap.add_argument("--hydra", action="store_true", help="MPIRUN is MPICH's Hydra (mpirun.mpich)")
    ap.add_argument("--victims", choices=["one", "all"], default="one")
    ap.add_argument("--keep", action="store_true", help="keep the journals (debugging)")
    ap.add_argument("--check-final-syncs", action="store_true",
                    help="mpi-end: every event file synced before its rank's last journal sync (needs the zc_slow_sync preload)")
    ap.add_argument("--mpi-check", action="append", default=[], metavar="ARG",
                    help="one more argument for check_mpi_trace.py of an MPI run's archive (repeatable)")
    ap.add_argument("--drop-journal", type=int, action="append", default=[], metavar="RANK",
                    help="delete this rank's journal before salvaging (a lost file): the job keeps the rank")
    a = ap.parse_args()
    absolute(a)
    shutil.rmtree(a.work, ignore_errors=True)
    os.makedirs(a.work)
    rnd = random.Random(a.seed)
    lo, hi = (float(x) for x in a.delay.split(":"))
    runs = []
    if a.mode == "mpi-end":
        runs.append(one_end(a))
    for k in range(a.points if a.mode != "mpi-end" else 0):
        delay = rnd.uniform(lo, hi)
        if a.mode == "serial":
            runs.append(one_serial(a, k, delay))
        else:
            victim = rnd.randrange(a.np) if a.victims == "one" else None
            runs.append(one_mpi(a, k, delay, victim))
    bad = 0
    for r in runs:
        print(("ok - " if not r.fails else "not ok - ") + r.name)
        for n in r.notes:
            print("# " + n)
        for f in r.fails:
            print("#   FAIL: " + f)
        bad += bool(r.fails)
    print(f"{len(runs) - bad} of {len(runs)} run(s) passed")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
