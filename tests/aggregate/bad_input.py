#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Bad input: zecoll-aggregate on broken archives must print one message naming the file at fault
and exit with status 2 (no crash, no hang), or, for missing ranks and locations, aggregate the
rest and say so in the data-quality section.

  bad_input.py --aggregate BIN --synth BIN --mpiexec MPIRUN --work DIR [--np 2]

Each case copies a small synthetic archive (zecoll-synth, 4 ranks), breaks it, and runs the
aggregator alone and under `mpirun -np NP`.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys

HOST0 = "0.evt"                        # rank 0's thread
STREAM = "9223372036854775809.evt"     # rank 1's first stream


def run(cmd, timeout=120, env=None):
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return None, "", "timeout"
    return p.returncode, p.stdout, p.stderr


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--aggregate", required=True)
    ap.add_argument("--synth", required=True)
    ap.add_argument("--mpiexec", default="mpirun")
    ap.add_argument("--work", required=True)
    ap.add_argument("--np", type=int, default=2)
    a = ap.parse_args()
    work = os.path.abspath(a.work)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    good = os.path.join(work, "good")
    rc, _, err = run([a.synth, "--out", good, "--ranks", "4", "--queues", "2", "--ops", "400", "--skew"])
    if rc != 0:
        print("FAIL: zecoll-synth:", err)
        return 1

    def trunc(rel, frac):
        def f(d):
            p = os.path.join(d, rel)
            data = open(p, "rb").read()
            open(p, "wb").write(data[:int(len(data) * frac)])
        return f

    def garbage(rel, offset_frac, n):
        def f(d):
            p = os.path.join(d, rel)
            data = bytearray(open(p, "rb").read())
            o = int(len(data) * offset_frac)
            for i in range(o, min(len(data), o + n)):
                data[i] = (i * 97 + 13) & 0xff
            open(p, "wb").write(bytes(data))
        return f

    def remove(*rels):
        def f(d):
            for rel in rels:
                os.remove(os.path.join(d, rel))
        return f

    def hang_anchor(d):
        # an anchor file on which OTF2's own reader loops for minutes (found by fuzzing)
        data = open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "fuzz_corpus", "found-anchor-hang"), "rb").read()
        open(os.path.join(d, "traces.otf2"), "wb").write(data[1:])

    def special(rel, how):
        # a FIFO (with no writer: opening it to read would block for good), a directory or a
        # device where a file of the archive belongs
        def f(d):
            p = os.path.join(d, rel)
            os.remove(p)
            if how == "fifo":
                os.mkfifo(p)
            elif how == "dir":
                os.makedirs(p)
            else:
                os.symlink("/dev/zero", p)
        return f

    def empty_dir(d):
        shutil.rmtree(d)
        os.makedirs(d)

    # (name, how to break, expected exit, file the message must name (relative) or data-quality check)
    cases = [
        ("no_such_archive", lambda d: shutil.rmtree(d), 2, "traces.otf2"),
        ("empty_directory", empty_dir, 2, "traces.otf2"),
        ("anchor_empty", trunc("traces.otf2", 0), 2, "traces.otf2"),
        ("anchor_garbage", garbage("traces.otf2", 0.0, 64), 2, "traces.otf2"),
        ("anchor_otf2_hangs", hang_anchor, 2, "traces.otf2"),
        ("global_defs_missing", remove("traces.def"), 2, "traces.def"),
        ("global_defs_truncated", trunc("traces.def", 0.5), 2, "traces.def"),
        ("global_defs_garbage", garbage("traces.def", 0.3, 200), 2, "traces.def"),
        ("event_file_truncated", trunc("traces/" + STREAM, 0.5), 2, "traces/" + STREAM),
        ("event_file_garbage", garbage("traces/" + HOST0, 0.4, 4000), 2, "traces/" + HOST0),
        ("event_file_empty", trunc("traces/" + STREAM, 0.0), 2, "traces/" + STREAM),
        ("local_defs_garbage", garbage("traces/1.def", 0.0, 40), 2, "traces/1.def"),
        ("event_file_missing", remove("traces/" + STREAM), 0, {"missing_event_files": 1}),
        ("rank_missing", remove("traces/2.evt", "traces/9223372036854775810.evt", "traces/9223372041149743106.evt"), 0,
         {"missing_event_files": 3, "missing_ranks": 1}),
        ("local_defs_missing", remove("traces/1.def"), 0, {"missing_event_files": 0}),
        ("anchor_fifo", special("traces.otf2", "fifo"), 2, "traces.otf2"),
        ("global_defs_fifo", special("traces.def", "fifo"), 2, "traces.def"),
        ("event_file_fifo", special("traces/" + STREAM, "fifo"), 2, "traces/" + STREAM),
        ("event_file_directory", special("traces/" + HOST0, "dir"), 2, "traces/" + HOST0),
        ("anchor_device", special("traces.otf2", "dev"), 2, "traces.otf2"),
    ]
    fails = 0
    # under mpirun too for a few: the readers agree on the error and one of them reports it
    with_mpi = {"global_defs_garbage", "event_file_truncated", "event_file_garbage", "rank_missing", "anchor_otf2_hangs",
                "event_file_fifo"}
    runs = 0
    for name, brk, want_rc, want in cases:
        d = os.path.join(work, name)
        shutil.copytree(good, d)
        brk(d)
        for np_ in (1, a.np) if name in with_mpi else (1,):
            runs += 1
            jsonf = os.path.join(work, f"{name}.{np_}.json")
            args = [d, "-q", "--no-progress", "--json", jsonf]
            cmd = [a.aggregate] + args if np_ == 1 else [a.mpiexec, "--allow-run-as-root", "--oversubscribe", "-np", str(np_),
                                                          a.aggregate] + args
            rc, out, err = run(cmd, env=dict(os.environ, ZECOLL_AGGREGATE_STALL_S="3"))
            ours = [l for l in err.splitlines() if l.startswith("zecoll-aggregate:")]
            problem = None
            if rc is None:
                problem = "hung (timeout)"
            elif rc != want_rc and not (np_ > 1 and want_rc == 2 and rc != 0):
                problem = f"exit {rc}, want {want_rc}"
            elif want_rc == 2:
                path = os.path.join(d, want)
                if len(ours) != 1 or not ours[0].startswith(f"zecoll-aggregate: {path}: "):
                    problem = f"want one message naming {path}, got {ours}"
                elif np_ > 1 and rc != 2:
                    problem = f"exit {rc} under mpirun, want 2"
            else:
                if ours:
                    problem = f"unexpected messages {ours}"
                else:
                    R = json.load(open(jsonf))
                    for k, v in want.items():
                        if R["data_quality"][k] != v:
                            problem = f"data_quality.{k} = {R['data_quality'][k]}, want {v}"
                    if R["data_quality"]["ranks_read"] != 4:
                        problem = f"ranks_read {R['data_quality']['ranks_read']}"
            status = "ok" if not problem else "FAIL"
            fails += problem is not None
            print(f"{status} {name} (readers {np_}): " + (problem or (ours[0] if ours else "aggregated, reported")))
            if problem and err:
                print("   stderr:", err[-600:].replace("\n", "\n   "))
    print(f"{runs - fails} of {runs} bad-input runs behave")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
