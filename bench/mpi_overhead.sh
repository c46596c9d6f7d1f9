#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# MPI wrapper cost, measured side by side in one run (median of BENCH_REPS runs, alternating):
# a loop of 0-byte MPI_Irecv + MPI_Isend + MPI_Waitall(2) per iteration, ns per MPI call
#   self: 1 rank messaging itself (per-call cost without another process)   target <= +60 ns (issue 7)
#   pair: 2 ranks exchanging                                                 (for reference)
# without the collector, with it (MPI events recorded; ZECOLL_WRITER_STAGES auto: two writer
# threads where the process may run on 3 CPUs or more), with it and one writer thread (for
# comparison: the same where it has fewer CPUs), with it and one PAPI event
# (ZECOLL_PAPI_EVENTS=perf::TASK-CLOCK: two counter reads per recorded call), with it but
# ZECOLL_ENABLE=0, and with recording closed for the whole run (a window that never opens;
# issue 8: ns for information, the target is in instructions, bench/ir_counts.sh
# mpi_call_closed <= +30); and, for reference, the bare recorder (bench/zc_mpi_floor.c preloaded
# instead: two rdtsc and one 64-byte record per call, nothing else), the floor of any tracer that
# times these calls.
# Usage: bench/mpi_overhead.sh   (BENCH_REPS=5 BENCH_ITERS=200000)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
"$root/scripts/setup-deps.sh"
build=${BENCH_BUILD:-$root/build/bench-release}
reps=${BENCH_REPS:-5}
iters=${BENCH_ITERS:-200000}
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build" -j"$(nproc)" --target zecoll zc_mpi_bench >/dev/null
floor_lib=""
cmake --build "$build" -j"$(nproc)" --target zc_mpi_floor >/dev/null 2>&1 && floor_lib="$build/bench/libzc_mpi_floor.so"
app="$build/bench/zc_mpi_bench"
lib="$build/collector/libzecoll.so"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mpirun=(mpirun --allow-run-as-root --oversubscribe --bind-to none)

field() { /usr/bin/python3 -c "import json,sys; print(json.loads(sys.argv[1])[sys.argv[2]])" "$1" "$2"; }
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
run() { # run <np> <mode> <variant>
  local np=$1 mode=$2 v=$3 out
  case $v in
    base) out=$("${mpirun[@]}" -np "$np" "$app" "$mode" "$iters") ;;
    on) out=$("${mpirun[@]}" -np "$np" -x LD_PRELOAD="$lib" -x ZECOLL_OUTPUT="$work/t-%p" -x ZECOLL_SUMMARY=0 "$app" "$mode" "$iters") ;;
    w1) out=$("${mpirun[@]}" -np "$np" -x LD_PRELOAD="$lib" -x ZECOLL_OUTPUT="$work/t-%p" -x ZECOLL_SUMMARY=0 \
              -x ZECOLL_WRITER_STAGES=1 "$app" "$mode" "$iters") ;;
    papi) out=$("${mpirun[@]}" -np "$np" -x LD_PRELOAD="$lib" -x ZECOLL_OUTPUT="$work/t-%p" -x ZECOLL_SUMMARY=0 \
                -x ZECOLL_PAPI_EVENTS=perf::TASK-CLOCK "$app" "$mode" "$iters") ;;
    off) out=$("${mpirun[@]}" -np "$np" -x LD_PRELOAD="$lib" -x ZECOLL_ENABLE=0 "$app" "$mode" "$iters") ;;
    floor) [ -n "$floor_lib" ] || { echo n/a; return; }
           out=$("${mpirun[@]}" -np "$np" -x LD_PRELOAD="$floor_lib" "$app" "$mode" "$iters") ;;
    closed) out=$("${mpirun[@]}" -np "$np" -x LD_PRELOAD="$lib" -x ZECOLL_OUTPUT="$work/t-%p" -x ZECOLL_SUMMARY=0 \
                  -x ZECOLL_WINDOWS=signal:SIGUSR2 "$app" "$mode" "$iters") ;;
  esac
  field "$out" call_ns
}

echo "zecoll MPI wrapper cost ($(nproc) cores, median of $reps alternating runs, $iters iterations, $(date -u +%F))"
printf '%-44s %10s %10s %10s %10s %10s %10s %10s %10s %10s %s\n' "ns per MPI call (Irecv/Isend/Waitall)" "without" "with" "delta" \
  "1 writer" "+1 PAPI" "PAPI cost" "disabled" "closed" "floor" "target"
for cfg in "1 self" "2 pair"; do
  set -- $cfg
  b=() w=() w1=() p=() o=() cl=() fl=()
  for _ in $(seq "$reps"); do
    b+=("$(run "$1" "$2" base)"); w+=("$(run "$1" "$2" on)"); w1+=("$(run "$1" "$2" w1)"); p+=("$(run "$1" "$2" papi)")
    o+=("$(run "$1" "$2" off)"); cl+=("$(run "$1" "$2" closed)"); fl+=("$(run "$1" "$2" floor)")
  done
  mb=$(median "${b[@]}") mw=$(median "${w[@]}") m1=$(median "${w1[@]}") mp=$(median "${p[@]}") mo=$(median "${o[@]}")
  mc=$(median "${cl[@]}") mf=$(median "${fl[@]}")
  [ "$mf" = n/a ] || mf=$(/usr/bin/python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):+.1f}')" "$mb" "$mf")
  delta=$(/usr/bin/python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):+.1f}')" "$mb" "$mw")
  pcost=$(/usr/bin/python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):+.1f}')" "$mw" "$mp")
  tgt=$([ "$2" = self ] && echo "<= +60 ns" || echo "(reference)")
  printf '%-44s %10s %10s %10s %10s %10s %10s %10s %10s %10s %s\n' "$2 ($1 rank(s))" "$mb" "$mw" "$delta" "$m1" "$mp" "$pcost" "$mo" "$mc" \
    "$mf" "$tgt"
done
echo "1 writer: the collector with ZECOLL_WRITER_STAGES=1 (what 'with' is where a rank has fewer than 3 CPUs)"
echo "+1 PAPI: the collector with one PAPI event (perf::TASK-CLOCK); PAPI cost = +1 PAPI - with, per recorded MPI call"
echo "floor: the delta of the bare recorder (bench/zc_mpi_floor.c: two rdtsc and one record per call, nothing else)"
