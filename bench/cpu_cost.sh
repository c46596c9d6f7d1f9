#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The collector's whole CPU cost per MPI call and per Append: the application thread's delta (what
# host_bench.sh and ir_counts.sh measure) plus what its own threads (writer, flusher, drainer) spend
# for the same records. A job that fills every core with ranks pays both; a job with idle cores
# pays the first only. Side by side in one run, medians of alternating runs:
#   wall ns per call, with and without the collector, the process free to use every core;
#   the same with the whole process pinned to one CPU (the collector's threads then take their
#     time from the application's, as on a node where every core runs a rank);
#   CPU ns per call: user + system time of the process (all threads) per call, from two runs of
#     N and 3N calls (the difference divided by 2N, so that start-up and finalisation, the
#     archive's unification included, drop out), with minus without.
#   usage: bench/cpu_cost.sh DIR [OUTDIR]    DIR: bin/ zc_mpi_bench zc_bench_app, lib/ libzecoll.so
#          (device-pack.sh layout, or a build tree: DIR/bench, DIR/collector, DIR/tests/zesim)
#          BENCH_REPS=5 BENCH_ITERS=300000 BENCH_APPENDS=1000000 BENCH_CPU=2 (the CPU to pin to)
set -uo pipefail
D=$(cd "${1:?usage: cpu_cost.sh DIR [OUTDIR]}" && pwd)
out=${2:-$(mktemp -d)}
mkdir -p "$out"
reps=${BENCH_REPS:-5} iters=${BENCH_ITERS:-300000} appends=${BENCH_APPENDS:-1000000} cpu=${BENCH_CPU:-2}
if [ -e "$D/lib/libzecoll.so" ]; then
  mapp=$D/bin/zc_mpi_bench app=$D/bin/zc_bench_app lib=$D/lib/libzecoll.so zesim=$D/lib/libzesim.so
  export LD_LIBRARY_PATH=$D/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
else
  mapp=$D/bench/zc_mpi_bench app=$D/bench/zc_bench_app lib=$D/collector/libzecoll.so zesim=$D/tests/zesim/libzesim.so
fi
export ZE_ENABLE_ALT_DRIVERS=$zesim
py=/usr/bin/python3; [ -x "$py" ] || py=$(command -v python3)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
col=(LD_PRELOAD="$lib" ZECOLL_OUTPUT="$work/t-%p" ZECOLL_SUMMARY=0)

# run <key> <pin: all|CPU> <mpi|reg> <scale> [env...]: appends "key.x<scale> wall_ns cpu_s" to raw.txt
run() {
  local key=$1.x$4 pin=$2 what=$3 k=$4; shift 4
  local cmd
  if [ "$what" = mpi ]; then
    local xs=(-x LD_LIBRARY_PATH -x ZE_ENABLE_ALT_DRIVERS)
    for e in "$@"; do xs+=(-x "$e"); done
    cmd=(mpirun --allow-run-as-root --oversubscribe --bind-to none -np 1 "${xs[@]}" "$mapp" self $((k * iters)) 8)
  else
    cmd=(env "$@" "$app" regular $((k * appends)))
  fi
  [ "$pin" != all ] && cmd=(taskset -c "$pin" "${cmd[@]}")
  "$py" - "$key" "$what" "${cmd[@]}" >>"$out/raw.txt" <<'PY'
import json, resource, subprocess, sys
key, what, cmd = sys.argv[1], sys.argv[2], sys.argv[3:]
r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
p = subprocess.run(cmd, capture_output=True, text=True)
r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
try:
    j = json.loads(p.stdout.strip().splitlines()[-1])
    ns = j["call_ns"] if what == "mpi" else j["append_ns"]
except Exception:
    sys.exit(f"cpu_cost: {key}: no result: {p.stdout[-300:]} {p.stderr[-300:]}")
cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
print(f"{key} {ns} {cpu}")
PY
  rm -rf "$work"/t-*
}

: >"$out/raw.txt"
for r in $(seq "$reps"); do
  for k in 1 3; do
    run mpi.base all mpi $k; run mpi.on all mpi $k "${col[@]}"
    run mpi.base1 "$cpu" mpi $k; run mpi.on1 "$cpu" mpi $k "${col[@]}"
    run reg.base all reg $k X=1; run reg.on all reg $k "${col[@]}"
    run reg.base1 "$cpu" reg $k X=1; run reg.on1 "$cpu" reg $k "${col[@]}"
  done
done

"$py" - "$out/raw.txt" "$iters" "$appends" <<'PY' | tee "$out/table.txt"
import collections, statistics, sys
raw, iters, appends = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
w, c = collections.defaultdict(list), collections.defaultdict(list)
for line in open(raw):
    k, ns, cpu = line.split()
    w[k].append(float(ns)); c[k].append(float(cpu))
med = lambda d, k: statistics.median(d[k])
# calls each run makes: zc_mpi_bench's warm-up tenth and the measured loop, 3 calls an iteration
calls = {"mpi": lambda k: 3 * (k * iters + k * iters // 10 + 1), "reg": lambda k: k * appends}
def cpu_per_call(p, key):  # CPU seconds of the 3N run minus the N run, per call, in ns
    return (med(c, key + ".x3") - med(c, key + ".x1")) * 1e9 / (calls[p](3) - calls[p](1))
print(f"{'per ...':46s} {'without':>9s} {'with':>9s} {'delta':>9s}")
for p, what in (("mpi", "MPI call (Irecv/Isend/Waitall, 8 doubles, 1 rank)"), ("reg", "Append, regular list")):
    print(what)
    for lab, a, b in (("wall ns, every core free", p + ".base", p + ".on"),
                      ("wall ns, pinned to one CPU", p + ".base1", p + ".on1")):
        a, b = a + ".x3", b + ".x3"
        print(f"  {lab:44s} {med(w, a):9.1f} {med(w, b):9.1f} {med(w, b) - med(w, a):+9.1f}")
    for lab, a, b in (("CPU ns (all threads), every core free", p + ".base", p + ".on"),
                      ("CPU ns (all threads), pinned", p + ".base1", p + ".on1")):
        x, y = cpu_per_call(p, a), cpu_per_call(p, b)
        print(f"  {lab:44s} {x:9.1f} {y:9.1f} {y - x:+9.1f}")
PY
echo "== raw values in $out/raw.txt"
