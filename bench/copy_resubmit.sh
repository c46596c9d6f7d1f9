#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Copy-only resubmission (bench/results/rounds.md "Copy-only resubmission"): 2000 back-to-back executions
# of one copy-only regular list, side by side in one run, alternating, medians: no collector; no
# collector with the harvest's round trip between engines made by the app's own lists (the floor
# of timing each execution with events); the same commands on the copy engine alone; the
# collector (and, with OLD_LIB, an older build of it). Then software counters per variant
# (context switches, CPU time; perf stat) and futex calls (strace -f -c).
#   usage: bench/copy_resubmit.sh BUILD [OLD_LIB]   (REPS=11 N=2000)
set -uo pipefail
B=$(cd "${1:?usage: copy_resubmit.sh BUILD [OLD_LIB]}" && pwd)
old=${2:-}
reps=${REPS:-11}
n=${N:-2000}
export ZE_ENABLE_ALT_DRIVERS=$B/tests/zesim/libzesim.so
unset ZESIM_TRUTH
app=$B/bench/zc_bench_app
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
py=/usr/bin/python3
col="env ZECOLL_OUTPUT=$work/t-%p ZECOLL_SUMMARY=0 LD_PRELOAD"
declare -A cmd=(
  [base]="env X=1 $app execs $n copy"
  [pingpong]="env X=1 $app execs $n copy pingpong"
  [local]="env X=1 $app execs $n copy local"
  [collector]="$col=$B/collector/libzecoll.so $app execs $n copy"
)
order=(base pingpong local collector)
if [ -n "$old" ]; then cmd[old]="$col=$old $app execs $n copy"; order+=(old); fi
declare -A wall host
for r in $(seq "$reps"); do
  for k in "${order[@]}"; do
    o=$(eval "${cmd[$k]}" 2>/dev/null | tail -1)
    wall[$k]+="$("$py" -c 'import json,sys; d = json.loads(sys.argv[1]); print("%.2f" % (d["wall_s"] * 1e3))' "$o" 2>/dev/null || echo nan) "
    host[$k]+="$("$py" -c 'import json,sys; d = json.loads(sys.argv[1]); print("%.2f" % (d["append_ns"] / 1e3))' "$o" 2>/dev/null || echo nan) "
    rm -rf "$work"/t-*
  done
done
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
echo "== $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), $reps alternating runs of $n executions"
printf '%-10s %12s %8s %16s  %s\n' variant "wall ms" ratio "host us/Execute" "all wall ms"
b=$(median ${wall[base]})
for k in "${order[@]}"; do
  m=$(median ${wall[$k]})
  printf '%-10s %12.2f %8s %16.2f  %s\n' "$k" "$m" "$("$py" -c "print(f'x{$m / $b:.2f}')")" "$(median ${host[$k]})" "${wall[$k]}"
done
if command -v perf >/dev/null && perf stat -e task-clock true >/dev/null 2>&1; then
  echo "-- perf stat (software events), one run each"
  for k in "${order[@]}"; do
    s=$(eval "perf stat -x, -e context-switches,cpu-migrations,task-clock ${cmd[$k]}" 2>&1 >/dev/null |
        awk -F, '/context-switches|task-clock|cpu-migrations/ {printf "%s %.0f  ", $3, $1}')
    printf '%-10s %s\n' "$k" "$s"
    rm -rf "$work"/t-*
  done
fi
if command -v strace >/dev/null; then
  echo "-- strace -f -c: futex calls per execution, one run each"
  for k in "${order[@]}"; do
    eval "strace -f -c -o $work/st ${cmd[$k]}" >/dev/null 2>&1
    printf '%-10s %s\n' "$k" "$(awk -v n="$n" '$NF == "futex" {printf "%.1f", $4 / n}' "$work/st")"
    rm -rf "$work"/t-*
  done
fi
