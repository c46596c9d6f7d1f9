#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""The hostile probe's second round as tests: each case does what an adversarial HPC user did
(salvage of a live run, a full disk under salvage, FIFOs named as files, a chdir, a window that
never opens, a rank dying before its first flush, a disk smaller than the reserve, bad testing
knobs, drivers that fail at run time) and asserts the exact outcome.

  probe.py --bin DIR --libdir DIR --zesim LIB --work DIR --app zh_app [--mpi-app zh_app_mpi]
           [--regular-app ex_regular_list_repeat] [--mpiexec mpirun] [--preload-first LIB] CASE
"""
import argparse
import glob
import hashlib
import os
import re
import shutil
import signal
import stat
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "collector"))
import run_expect  # noqa: E402  (device_records)

A = None
FAILS = []


def ok(cond, msg):
    print(("ok - " if cond else "not ok - ") + msg)
    if not cond:
        FAILS.append(msg)
    return cond


def env(output=None, **extra):
    e = {k: v for k, v in os.environ.items() if not k.startswith("ZECOLL_")}
    e.update({"ZE_ENABLE_ALT_DRIVERS": A.zesim, "ZESIM_TRUTH": os.path.join(A.work, "truth.jsonl"),
              "LD_PRELOAD": ":".join(([A.preload_first] if A.preload_first else [])
                                     + [os.path.join(A.libdir, "libzecoll.so")])})
    if output:
        e["ZECOLL_OUTPUT"] = output
    if A.preload_first and "libasan" in A.preload_first:
        e["ASAN_OPTIONS"] = e.get("ASAN_OPTIONS", "") + ":detect_leaks=0"
    e.update({k: str(v) for k, v in extra.items()})
    return e


def run(cmd, e=None, timeout=60, **kw):
    p = subprocess.run([str(c) for c in cmd], env=e, capture_output=True, text=True, timeout=timeout, **kw)
    print(f"# {' '.join(str(c) for c in cmd)[-200:]}: status {p.returncode}")
    for line in (p.stderr or "").splitlines()[-12:]:
        print("#   " + line[:300])
    return p


def salvage(*args, timeout=60):
    return run([os.path.join(A.bin, "zecoll-salvage")] + list(args), os.environ.copy(), timeout=timeout)


def salvage_ended(d, timeout=120):
    """salvage of a job that has ended. mpirun may return while a rank it signalled is still ending
    (its threads exiting, its journal's lock held), and salvage rightly refuses a run whose rank
    still holds it: a user salvages a job that is gone, so this retries while salvage names a
    rank that still runs."""
    end = time.time() + timeout
    while True:
        r = salvage(d)
        if not (r.returncode == 2 and "is still running" in r.stderr and time.time() < end):
            return r
        time.sleep(0.05)


def fresh(name):
    d = os.path.join(A.work, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    return d


def readable(d, what):
    """otf2-print -Werror and python3-otf2 read the archive in d; its device records, or None."""
    anchor = os.path.join(d, "traces.otf2")
    r = subprocess.run(["otf2-print", "--silent", "-Werror", anchor], capture_output=True, text=True)
    if not ok(r.returncode == 0, f"{what}: otf2-print -Werror reads it"):
        print((r.stderr or r.stdout)[:400])
        return None
    try:
        return run_expect.device_records(anchor)
    except Exception as ex:  # the reader's failure is the finding
        ok(False, f"{what}: python3-otf2 reads it ({ex!r})")
        return None


def ours(stderr):
    return [ln for ln in stderr.splitlines() if ln.startswith("zecoll")]


def sha(path):
    return hashlib.sha256(open(path, "rb").read()).hexdigest()


def mount_tmpfs(mnt, size):
    os.makedirs(mnt, exist_ok=True)
    if os.geteuid() != 0 or subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", mnt]).returncode:
        print("SKIP: a small tmpfs needs root (CI runs as root)")
        sys.exit(77)


def dead_run(d, ops=4000, ms=100):
    """A run killed (SIGKILL) once its journal holds a few flushes: its archive directory d."""
    e = env(d, ZECOLL_FLUSH_INTERVAL_MS=ms, ZESIM_KERNEL_MODEL="*:200000:0")
    p = subprocess.Popen([A.app, "work", str(ops)], env=e, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    j = os.path.join(d, "zecoll-journal", "0.zcj")
    t0 = time.time()
    while time.time() - t0 < 30 and not (os.path.exists(j) and os.path.getsize(j) > 60000):
        time.sleep(0.05)
    p.send_signal(signal.SIGKILL)
    p.wait()
    return j


# ---------------------------------------------------------------- salvage
def case_salvage_live():
    """salvage while the run is alive: refused (rc 2, the host and pid named, nothing touched);
    --force writes a copy beside it and leaves the journal; the run then completes its own archive
    with every operation (nothing lost to the salvage)."""
    w = fresh("salvage-live")
    d = os.path.join(w, "trace")
    e = env(d, ZECOLL_FLUSH_INTERVAL_MS=100, ZESIM_KERNEL_MODEL="*:2000000:0")
    p = subprocess.Popen([A.app, "work", "1000"], env=e, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    j = os.path.join(d, "zecoll-journal", "0.zcj")
    t0 = time.time()
    while time.time() - t0 < 30 and not (os.path.exists(j) and os.path.getsize(j) > 2000):
        time.sleep(0.05)
    r = salvage(d)
    ok(r.returncode == 2, f"salvage of a live run exits 2 (got {r.returncode})")
    ok(re.search(rf"rank 0 \(host \S+, pid {p.pid}\) is still running: it holds its journal's lock", r.stderr)
       is not None, "it names the live rank's host and pid, and why it is judged alive")
    ok("not salvaged: a live run completes its own archive" in r.stderr, "it says nothing was salvaged")
    ok(not os.path.exists(os.path.join(d, "traces.otf2")), "no anchor file written into the live run's directory")
    r = salvage("--force", d)
    ok(r.returncode == 0, f"--force exits 0 (got {r.returncode})")
    ok(f"--force: 1 live rank(s): the salvaged copy goes to {d}-salvaged" in r.stderr, "--force says where its copy goes")
    ok("still running: data complete up to its last flush" in r.stdout, "the copy's summary says the rank still runs")
    n = readable(d + "-salvaged", "the --force copy")
    # (the run may have ended meanwhile, removing its journal itself: then its archive below says it)
    ok(p.poll() is not None or os.path.exists(j), "the live run's journal is left to it")
    o, err = p.communicate(timeout=120)
    ok(p.returncode == 0 and "PASS" in o, f"the run ends normally (status {p.returncode})")
    m = re.search(r"(\d+) commands executed", o)
    total = readable(d, "the live run's own archive")
    ok(m is not None and total == int(m.group(1)), f"its archive holds every operation ({total} of {m and m.group(1)})")
    ok(n is not None and total is not None and n < total, f"the copy holds a prefix ({n} records)")
    ok(not os.path.exists(os.path.join(d, "zecoll-journal")), "the completed run removed its journal")


def case_salvage_disk_full():
    """salvage into a disk with room for the dead run only: exit 1 with the reason, no crash, no
    [OTF2] lines, journal and the run's files untouched; a second try with room works."""
    w = fresh("salvage-disk-full")
    src = os.path.join(w, "dead")
    j = dead_run(src)
    for f in glob.glob(os.path.join(src, ".zecoll-reserve*")):
        os.unlink(f)  # (salvage would use it: the room is what the copy needs and 32 KiB)
    size = int(subprocess.run(["du", "-sk", src], capture_output=True, text=True).stdout.split()[0])
    mnt = os.path.join(w, "mnt")
    mount_tmpfs(mnt, f"{size + 32}k")
    try:
        d = os.path.join(mnt, "dead")
        shutil.copytree(src, d)
        before = sha(os.path.join(d, "zecoll-journal", "0.zcj"))
        listing = sorted(os.listdir(os.path.join(d, "traces")))
        r = salvage(d)
        ok(r.returncode == 1, f"salvage on a full disk exits 1 (got {r.returncode}; a crash is negative)")
        ok(re.search(r"cannot write the archive in \S+: No space left on device", r.stderr) is not None,
           "one line names the reason")
        ok("[OTF2]" not in r.stderr, "no OTF2 error lines")
        ok(sha(os.path.join(d, "zecoll-journal", "0.zcj")) == before, "the journal is untouched")
        ok(sorted(os.listdir(os.path.join(d, "traces"))) == listing, "the dead run's event files are untouched")
        ok(not os.path.exists(os.path.join(d, "traces.otf2")), "no anchor file left behind")
        ok(not glob.glob(os.path.join(d, ".zecoll-salvage*")), "no staging directory left behind")
        again = os.path.join(w, "again")
        shutil.copytree(d, again)
    finally:
        subprocess.run(["umount", "-l", mnt])
    r = salvage(again)
    ok(r.returncode == 0, f"a second try with room exits 0 (got {r.returncode})")
    readable(again, "the archive salvaged on the second try")
    del j


def case_salvage_files():
    """What is not a journal or an anchor file: a FIFO (the open must not block), a device, a
    directory: one message, exit 2, within seconds; a FIFO named traces.otf2 is no complete archive."""
    w = fresh("salvage-files")
    for kind in ("fifo", "dir", "dev"):
        d = os.path.join(w, kind)
        os.makedirs(os.path.join(d, "zecoll-journal"))
        jp = os.path.join(d, "zecoll-journal", "0.zcj")
        if kind == "fifo":
            os.mkfifo(jp)
        elif kind == "dir":
            os.mkdir(jp)
        else:
            os.symlink("/dev/zero", jp)
        r = salvage(d, timeout=20)
        want = {"fifo": "a FIFO", "dir": "a directory", "dev": "a device"}[kind]
        ok(r.returncode == 2 and r.stderr.strip() == f"zecoll salvage: {jp}: {want}, not a journal",
           f"a journal that is {want}: exit 2, one message (got {r.returncode})")
    fifo_dir = os.path.join(w, "fifo-dir")
    os.mkfifo(fifo_dir)
    r = salvage(fifo_dir, timeout=20)
    ok(r.returncode == 2 and "not a directory" in r.stderr, "an archive 'directory' that is a FIFO: exit 2")
    d = os.path.join(w, "anchor-fifo")
    dead_run(d, ms=50)
    for f in glob.glob(os.path.join(d, "traces.*")):
        os.unlink(f)
    os.mkfifo(os.path.join(d, "traces.otf2"))
    r = salvage(d, timeout=30)
    ok(r.returncode == 0, f"a FIFO in place of traces.otf2 is no complete archive: salvaged (got {r.returncode})")
    readable(d, "the archive salvaged over a FIFO anchor")


def case_salvage_early_death():
    """An MPI rank dying of SIGSEGV before its first flush: the salvaged archive reads in every
    reader, says 'no data' for the rank, and no time is negative."""
    if not A.mpi_app:
        print("SKIP: no MPI application")
        sys.exit(77)
    w = fresh("salvage-early-death")
    d = os.path.join(w, "trace")
    e = env(d, ZECOLL_FLUSH_INTERVAL_MS=60000)
    p = run([A.mpiexec, "--allow-run-as-root", "--oversubscribe", "-np", "3", "-x", "LD_PRELOAD", "-x",
             "ZECOLL_OUTPUT", "-x", "ZECOLL_FLUSH_INTERVAL_MS", "-x", "ZE_ENABLE_ALT_DRIVERS", A.mpi_app,
             "mpi-crash"], e, timeout=120)
    ok(p.returncode != 0, f"the job fails (status {p.returncode})")
    r = salvage_ended(d)
    ok(r.returncode == 0, f"salvage exits 0 (got {r.returncode})")
    ok(re.search(r"^rank 1 \(\S+, pid \d+\): no data \(it died before its first flush\)", r.stdout, re.M) is not None,
       "rank 1: no data")
    ok(not re.search(r"at -\d", r.stdout), "no negative time in the summary")
    readable(d, "the salvaged archive")
    c = run([sys.executable, os.path.join(A.src, "tests", "aggregate", "check_archive.py"), d], os.environ.copy())
    ok(c.returncode == 0, "check_archive.py passes")
    g = run([os.path.join(A.bin, "zecoll-aggregate"), d], os.environ.copy())
    ok(g.returncode == 0, "zecoll report reads it")


# ---------------------------------------------------------------- the collector
def case_config_files():
    """ZECOLL_CONFIG naming a FIFO without a writer, a directory, a device: the constructor never
    blocks, one message, the application runs untraced; `zecoll config check` too."""
    w = fresh("config-files")
    fifo = os.path.join(w, "c.yaml")
    os.mkfifo(fifo)
    for path, what in ((fifo, "a FIFO"), (w, "a directory"), ("/dev/zero", "a device")):
        t = time.time()
        p = run(["/bin/true"], env(None, ZECOLL_CONFIG=path), timeout=20)
        ok(p.returncode == 0 and time.time() - t < 10, f"ZECOLL_CONFIG={what}: the program runs (status {p.returncode})")
        ok(ours(p.stderr) == [f"zecoll: {path}: not a regular file ({what}): not a zecoll configuration",
                              "zecoll: the configuration is invalid: collection is off, the application runs untraced"],
           f"ZECOLL_CONFIG={what}: its message")
    c = run([os.path.join(A.bin, "zecoll-config"), "check", fifo], os.environ.copy(), timeout=20)
    ok(c.returncode == 2 and f"{fifo}: not a regular file (a FIFO)" in c.stdout + c.stderr,
       f"zecoll config check FIFO: its message, exit 2 (got {c.returncode})")


def case_exit_path():
    """A preloaded process that records nothing: no membarrier, no thread of ours (strace); a
    recording run: at most one membarrier."""
    if not shutil.which("strace"):
        print("SKIP: strace missing")
        sys.exit(77)
    w = fresh("exit-path")
    log = os.path.join(w, "strace.log")
    run(["strace", "-f", "-qq", "-e", "trace=membarrier,clone,clone3", "-o", log, "/bin/true"], env(None))
    calls = open(log).read()
    ok("membarrier" not in calls, "a process that records nothing calls no membarrier")
    ok("clone" not in calls, "... and starts no thread")
    run(["strace", "-f", "-qq", "-e", "trace=membarrier", "-o", log, A.app, "work", 50],
        env(os.path.join(w, "trace")), timeout=120)
    n = len(re.findall(r"membarrier\(MEMBARRIER_CMD_GLOBAL", open(log).read()))
    ok(n <= 1, f"a recording run: {n} expedited barrier(s), at most one")


def case_chdir():
    """A relative ZECOLL_OUTPUT is taken from the working directory at start: the application's
    chdir() changes nothing (the archive is complete, where it was meant to be)."""
    w = fresh("chdir")
    elsewhere = os.path.join(w, "elsewhere")
    os.makedirs(elsewhere)
    p = run([A.app, "chdir", elsewhere, 40], env("rel-trace"), cwd=w)
    ok(p.returncode == 0, f"the application runs (status {p.returncode})")
    ok(not os.path.exists(os.path.join(elsewhere, "rel-trace")), "nothing written where it went")
    ok(f"-> {os.path.join(w, 'rel-trace')} (" in p.stderr, "the summary names the absolute path")
    ok(readable(os.path.join(w, "rel-trace"), "the archive") == 81, "every operation is in it (81)")


def case_fork():
    """fork() before any Level Zero work, the work in the child (a daemonising program): the child
    records it, one archive with every operation, one summary line."""
    w = fresh("fork")
    d = os.path.join(w, "trace")
    p = run([A.app, "fork", 40], env(d))
    ok(p.returncode == 0 and "PASS (child)" in p.stdout, f"parent and child run (status {p.returncode})")
    ok(len(re.findall(r"^zecoll: rank 0: \d+ events", p.stderr, re.M)) == 1, "one summary line (the child's)")
    ok(readable(d, "the child's archive") == 81, "the child's archive holds every operation (81)")


def case_fork_sealed():
    """fork() after a window marker sealed an event file, whose descriptor the parent keeps to sync
    before its journal's next sync (no flusher pass before the end): the child, untraced, holds none
    of the parent's event files; the parent's archive holds every operation."""
    w = fresh("fork-sealed")
    d = os.path.join(w, "trace")
    p = run([A.app, "fork-sealed", d], env(d, ZECOLL_WINDOWS="signal:SIGUSR1 initial=on",
                                            ZECOLL_FLUSH_INTERVAL_MS="3600000", ZECOLL_BUFFER_EVENTS="1024"))
    print("\n".join("# " + l for l in p.stdout.splitlines() if "holds" in l or "descriptor" in l))
    m = re.search(r"the parent holds (\d+)", p.stdout)
    ok(m is not None and int(m.group(1)) > 0, "the parent holds its sealed event files (the case happens)")
    ok("the child holds 0" in p.stdout, "the child holds none of them")
    ok(p.returncode == 0 and "PASS" in p.stdout, f"parent and child run (status {p.returncode})")
    m = re.search(r"(\d+) commands executed", p.stdout)
    ok(m is not None and readable(d, "the parent's archive") == int(m.group(1)),
       "the parent's archive holds every operation")


def case_window_never():
    """A kernel window on a name never launched: one line says so, at the default log level."""
    w = fresh("window-never")
    d = os.path.join(w, "trace")
    p = run([A.app, "work", 20], env(d, ZECOLL_WINDOWS="kernel:never_launched"))
    ok(p.returncode == 0, "the application runs")
    ok(ours(p.stderr) == ["zecoll: rank 0: recording window(s) kernel:never_launched never opened: no archive"],
       "exactly one line says the window never opened")
    ok(not os.path.exists(d), "no archive")


def case_reserve_small():
    """A disk smaller than the reserve: the collector says so once, with advice that works; salvage
    treats the empty traces.otf2 as incomplete and rebuilds the archive elsewhere."""
    w = fresh("reserve-small")
    mnt = os.path.join(w, "mnt")
    mount_tmpfs(mnt, "200k")
    try:
        d = os.path.join(mnt, "trace")
        p = run([A.regular_app, 2000, 16], env(d))
        ok(p.returncode == 0, f"the application runs to its end (status {p.returncode})")
        ok(len(re.findall(r"is too small for the space the collector keeps for the archive's definitions "
                          r"\(\d+ KiB: No space left on device\)", p.stderr)) == 1, "one line: the disk is too small")
        ok(f"`zecoll salvage {d}` where there is room" in p.stderr, "its advice names salvage")
        ok(os.path.getsize(os.path.join(d, "traces.otf2")) == 0, "the disk filled: an empty anchor file")
        copy = os.path.join(w, "copy")
        shutil.copytree(d, copy)
    finally:
        subprocess.run(["umount", "-l", mnt])
    r = salvage(copy)
    print(r.stdout[-600:])
    ok(r.returncode == 0 and "nothing to salvage" not in r.stdout, f"salvage rebuilds it (status {r.returncode})")
    n = readable(copy, "the salvaged archive")
    ok(n is not None and n > 0, f"it holds the device records journaled ({n})")


def case_knobs():
    """ZECOLL_CLOCK_SKEW_NS out of range, empty or garbled: named once, ignored."""
    for v in ("99999999999999999999999", "", "5,abc", "3600000000001"):
        p = run(["/bin/true"], env(None, ZECOLL_CLOCK_SKEW_NS=v))
        ok(ours(p.stderr) == [f"zecoll: ZECOLL_CLOCK_SKEW_NS: expected comma-separated integers from -3600000000000 to "
                              f"3600000000000 (ns, one per rank), got '{v}'; ignored, keeping '' (the default)"],
           f"ZECOLL_CLOCK_SKEW_NS='{v}': one message")
    p = run(["/bin/true"], env(None, ZECOLL_CLOCK_SKEW_NS="100,-3600000000000"))
    ok(ours(p.stderr) == [], "a valid list is accepted silently")


def case_ze_messages():
    """Level Zero failures at the default log level: zeEventCreate failing for our events, a
    ZECOLL_REAL_DRIVERS without a driver, AppendQueryKernelTimestamps UNSUPPORTED at run time
    (host read-back: still every operation timed, no internal error)."""
    w = fresh("ze-messages")
    p = run([A.app, "work", 20], env(os.path.join(w, "t1"), ZESIM_FAIL="zeEventCreate:1+"))
    ok(p.returncode == 0, "zeEventCreate failing: the application runs")
    ok(len(re.findall(r"warning: \S+ zeEventCreate fails for the collector's timing events in context 0", p.stderr)) == 1,
       "one warning names zeEventCreate")
    p = run([A.app, "work", 20], env(os.path.join(w, "t2"), ZECOLL_REAL_DRIVERS="/nonexistent/libze_x.so"))
    ok(p.returncode != 0, "no driver: the application's zeInit fails as without one")
    ok(len(re.findall(r"warning: \S+ ZECOLL_REAL_DRIVERS=/nonexistent/libze_x.so: no Level Zero driver to forward to",
                      p.stderr)) == 1, "one warning names the variable")
    d = os.path.join(w, "t3")
    p = run([A.regular_app, 100, 16], env(d, ZESIM_FAIL="zeCommandListAppendQueryKernelTimestamps:1+:"
                                             "ZE_RESULT_ERROR_UNSUPPORTED_FEATURE"))
    ok(p.returncode == 0, "QueryKernelTimestamps unsupported: the application runs")
    ok(len(re.findall(r"warning: \S+ zeCommandListAppendQueryKernelTimestamps returns "
                      r"ZE_RESULT_ERROR_UNSUPPORTED_FEATURE: regular command lists are read back from the host",
                      p.stderr)) == 1, "one warning names the call and the fallback")
    ok(re.search(r" 0 internal errors", p.stderr) is not None, "no internal error")
    m = re.search(r"(\d+) commands executed", p.stdout)
    ok(m is not None and readable(d, "its archive") == int(m.group(1)), "every operation is timed")


CASES = {"salvage-live": case_salvage_live, "salvage-disk-full": case_salvage_disk_full,
         "salvage-files": case_salvage_files, "salvage-early-death": case_salvage_early_death,
         "config-files": case_config_files, "exit-path": case_exit_path, "chdir": case_chdir,
         "window-never": case_window_never, "fork": case_fork, "fork-sealed": case_fork_sealed, "reserve-small": case_reserve_small, "knobs": case_knobs,
         "ze-messages": case_ze_messages}


def main():
    global A
    ap = argparse.ArgumentParser()
    for a in ("--bin", "--libdir", "--zesim", "--work", "--app", "--src"):
        ap.add_argument(a, required=True)
    ap.add_argument("--mpi-app")
    ap.add_argument("--regular-app")
    ap.add_argument("--mpiexec", default="mpirun")
    ap.add_argument("--preload-first")
    ap.add_argument("case", choices=sorted(CASES))
    A = ap.parse_args()
    os.makedirs(A.work, exist_ok=True)
    CASES[A.case]()
    print("ok - all expectations hold" if not FAILS else f"# {len(FAILS)} failure(s)")
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
