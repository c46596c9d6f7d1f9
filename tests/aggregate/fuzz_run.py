#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Replay the fuzzing corpus (every input must pass without a crash), or fuzz for a while.

  fuzz_run.py --synth BIN --corpus DIR --work DIR (--replay BIN [--mutations N] | --fuzzer BIN [--runs N | --seconds S])

Both need the base archive the corpus inputs are files of: zecoll-synth writes it (deterministic:
2 ranks, 2 queues, 8 operations, skews, a measurement-off window, metrics, OTF2's smallest
chunks). --mutations N replays, instead of the corpus, N deterministic mutations (bit flips, cuts,
overwritten runs) of each file of the base archive. --fuzzer runs libFuzzer on a copy of the corpus with a fixed seed; anything it finds
(crash, leak in our code, timeout) fails the test and is left in WORK/artifacts to add to the
corpus once fixed.
"""
import argparse
import os
import random
import shutil
import subprocess
import sys

TARGETS = ["traces.otf2", "traces.def", "traces/0.evt", "traces/9223372036854775809.evt", "traces/0.def"]
BASE_ARGS = ["--ranks", "2", "--queues", "2", "--ops", "8", "--skew", "--off", "--metrics", "--small-chunks"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--synth", required=True)
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--replay")
    ap.add_argument("--fuzzer")
    ap.add_argument("--seconds", type=int, default=30)
    ap.add_argument("--runs", type=int, default=0, help="a fixed number of inputs instead of --seconds: with the fixed seed, "
                    "the same inputs on every machine however loaded (CI)")
    ap.add_argument("--mutations", type=int, default=0)
    a = ap.parse_args()
    work = os.path.abspath(a.work)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    base = os.path.join(work, "base")
    subprocess.run([a.synth, "--out", base] + BASE_ARGS, check=True)
    if a.replay:
        corpus = a.corpus
        if a.mutations:
            corpus = os.path.join(work, "mutations")
            os.makedirs(corpus)
            rnd = random.Random(20251124)
            for i, t in enumerate(TARGETS):
                data = open(os.path.join(base, t), "rb").read()
                for k in range(a.mutations):
                    b = bytearray(data)
                    m = rnd.random()
                    if m < 0.4:
                        for _ in range(rnd.randint(1, 8)):
                            b[rnd.randrange(len(b))] = rnd.randrange(256)
                    elif m < 0.6:
                        b = b[:rnd.randrange(len(b))]
                    elif m < 0.8:
                        p = rnd.randrange(len(b))
                        b[p:p + rnd.randint(1, 16)] = bytes(rnd.randrange(256) for _ in range(rnd.randint(1, 16)))
                    else:
                        p = rnd.randrange(len(b))
                        v = rnd.choice([0, 0xff, 0x7f, 0x80])
                        for j in range(p, min(len(b), p + rnd.randint(1, 8))):
                            b[j] = v
                    open(os.path.join(corpus, f"m{i}-{k:04d}"), "wb").write(bytes([i]) + bytes(b))
        p = subprocess.run([a.replay, base, corpus], capture_output=True, text=True, timeout=1200)
        print(p.stdout.strip(), p.stderr[-3000:])
        n = len(os.listdir(corpus))
        ok = p.returncode == 0 and f"{n} inputs replayed" in p.stdout
        print("ok" if ok else f"FAIL: replay exit {p.returncode}")
        return 0 if ok else 1
    corpus = os.path.join(work, "corpus")
    arts = os.path.join(work, "artifacts")
    shutil.copytree(a.corpus, corpus)
    os.makedirs(arts)
    # OTF2 leaks on some of its own error paths: leak detection would report the library.
    # A corrupt anchor makes OTF2 calloc what its fields claim (18 GB seen); a real process gets NULL or
    # untouched virtual memory, and OTF2 reports the file. Allocations over 1 GiB therefore fail here as
    # they do on a small node (ASan returns NULL before libFuzzer's malloc limit sees them), so the
    # failure path is what gets fuzzed rather than libFuzzer calling the request itself an OOM.
    env = dict(os.environ, ZC_FUZZ_BASE=base, UBSAN_OPTIONS="halt_on_error=1",
               ASAN_OPTIONS="detect_leaks=0:abort_on_error=0:allocator_may_return_null=1:max_allocation_size_mb=1024")
    limit = [f"-runs={a.runs}"] if a.runs else [f"-max_total_time={a.seconds}"]
    p = subprocess.run([a.fuzzer, corpus] + limit + ["-seed=1", "-timeout=20", "-rss_limit_mb=2048", "-malloc_limit_mb=2048",
                        "-max_len=8192", "-len_control=0", f"-artifact_prefix={arts}/", "-print_final_stats=1"],
                       env=env, capture_output=True, text=True, timeout=(a.runs // 5 if a.runs else a.seconds) + 240)
    tail = [l for l in p.stderr.splitlines() if l.startswith("stat::") or "ERROR" in l or "deadly" in l]
    print("\n".join(tail[-12:]))
    found = os.listdir(arts)
    if p.returncode != 0 or found:
        print(f"FAIL: libFuzzer exit {p.returncode}, artifacts {found}\n{p.stderr[-4000:]}")
        return 1
    print("ok: no crash, hang or sanitizer report")
    return 0


if __name__ == "__main__":
    sys.exit(main())
