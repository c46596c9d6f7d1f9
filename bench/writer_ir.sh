#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Instructions the collector costs a process per recorded MPI call on all its threads, the
# writer threads' work included: the work behind every call that the application's thread does not
# see (bench/ir_counts.sh counts that thread only), but pays for where a rank has no spare CPU (a
# writer thread shares its core) or calls MPI faster than the writers keep up (bench/results/rounds.md,
# fifth and eighth rounds). With one writer stage (ZECOLL_WRITER_STAGES=1) and two (=2); besides,
# each writer thread's share: converter and emitter (two stages), the single writer (one). The
# journal's flusher makes no pass while measured (ZECOLL_FLUSH_INTERVAL_MS=3600000: its passes
# follow the clock, and they resolve records ahead of the writer), so the journal is written by
# the writer alone, as between passes.
# The loop is zc_mpi_bench's 0-byte Irecv/Isend/Waitall(2) on 1 rank; the figure is the slope
# between N and 2N iterations (start-up and definitions cancel), divided by 3 calls per iteration.
# Threads are told apart by their start function (callgrind --separate-threads).
#   usage: bench/writer_ir.sh BUILD_DIR [LIB...] [--loops N] [--value]      (KEEP=1 keeps the files)
# --value: BUILD_DIR's library with one writer stage only; prints "without with" (instructions
# per call, all threads), for bench/ir_counts.sh (figure mpi_call_all_threads, guarded).
# Each LIB (a libzecoll.so, e.g. an older build's) is measured beside BUILD_DIR's own, with
# BUILD_DIR's zc_mpi_bench and zesim, for a side-by-side comparison.
set -uo pipefail
build=$(cd "${1:?usage: writer_ir.sh BUILD_DIR [LIB...] [--loops N]}" && pwd)
shift
libs=("$build/collector/libzecoll.so") loops=50000 value=""
while [ $# -gt 0 ]; do
  case $1 in
    --loops) loops=$2; shift 2 ;;
    --value) value=1; shift ;;
    *) libs+=("$(readlink -f "$1")"); shift ;;
  esac
done
command -v valgrind >/dev/null || { echo "writer_ir: valgrind is not installed (scripts/setup-deps.sh installs it)" >&2; exit 2; }
work=$(mktemp -d)
trap '[ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT; [ -n "${KEEP:-}" ] && echo "work: $work" >&2

# run <out> <lib> <stages> <loops>: callgrind with a file per thread
run() {
  env ZE_ENABLE_ALT_DRIVERS="$build/tests/zesim/libzesim.so" LD_PRELOAD="$2" ZECOLL_OUTPUT="$work/trace-%p" \
    ZECOLL_SUMMARY=0 ZECOLL_WRITER_STAGES="$3" ZECOLL_FLUSH_INTERVAL_MS=3600000 \
    valgrind --tool=callgrind --separate-threads=yes --callgrind-out-file="$1.%p" \
    "$build/bench/zc_mpi_bench" self "$4" 0 >"$1.log" 2>&1 ||
    { echo "writer_ir: failed: $2 stages=$3 loops=$4" >&2; tail -5 "$1.log" >&2; return 1; }
}
# total <out> <start function>: the instructions of the thread that started in it
total() {
  local f
  for f in "$1".*-[0-9]*; do
    grep -q "^c\?fn=([0-9]*) $2\$" "$f" && { sed -n 's/^totals: //p' "$f"; return; }
  done
  echo 0
}
# all <out>: the instructions of all threads
all() {
  local f s=0
  for f in "$1".*-[0-9]*; do s=$((s + $(sed -n 's/^totals: //p' "$f"))); done
  echo $s
}

pids=()
for n in "$loops" $((2 * loops)); do
  run "$work/none.n$n" "" 1 "$n" & pids+=($!)
done
stages=(1 2)
[ -n "$value" ] && { libs=("${libs[0]}"); stages=(1); }
for i in "${!libs[@]}"; do
  for s in "${stages[@]}"; do
    for n in "$loops" $((2 * loops)); do
      run "$work/l$i.s$s.n$n" "${libs[$i]}" "$s" "$n" & pids+=($!)
      [ ${#pids[@]} -ge "$(nproc)" ] && { wait "${pids[0]}" || exit 1; pids=("${pids[@]:1}"); }
    done
  done
done
for p in "${pids[@]}"; do wait "$p" || exit 1; done

slope() { awk -v a="$1" -v b="$2" -v n="$loops" 'BEGIN { printf "%.1f", (b - a) / (3 * n) }'; }
base=$(slope "$(all "$work/none.n$loops")" "$(all "$work/none.n$((2 * loops))")")
if [ -n "$value" ]; then
  echo "$base $(slope "$(all "$work/l0.s1.n$loops")" "$(all "$work/l0.s1.n$((2 * loops))")")"
  exit 0
fi
echo "instructions per MPI call (callgrind, slope between $loops and $((2 * loops)) iterations of 3 calls):"
echo "  all threads, with minus without the collector (every record is converted and written once,"
echo "  whichever thread does it), and each writer thread's share in the longer run (varies: buffers"
echo "  with window markers due, and the last ones at finalize, are written by other threads)"
printf '%-50s %10s %10s | %10s %10s %10s\n' library "1 stage" "2 stages" "writer(1)" converter emitter
for i in "${!libs[@]}"; do
  l=$work/l$i
  a1=$(slope "$(all "$l.s1.n$loops")" "$(all "$l.s1.n$((2 * loops))")")
  a2=$(slope "$(all "$l.s2.n$loops")" "$(all "$l.s2.n$((2 * loops))")")
  share() { awk -v t="$(total "$l.s$1.n$((2 * loops))" "$2")" -v n="$loops" 'BEGIN { printf "%.1f", t / (6 * n) }'; }
  printf '%-50s %10s %10s | %10s %10s %10s\n' "${libs[$i]}" \
    "$(awk -v a="$a1" -v b="$base" 'BEGIN { printf "%+.1f", a - b }')" "$(awk -v a="$a2" -v b="$base" 'BEGIN { printf "%+.1f", a - b }')" \
    "$(share 1 converter_main)" "$(share 2 converter_main)" "$(share 2 emitter_main)"
done
