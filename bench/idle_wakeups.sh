#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Occupancy (issue 22, target 5): how often the collector's background threads wake while the
# application idles. zc_bench_app kernels 2000 1 (an in-order immediate list: the collector's
# stream and drainer exist), then ZC_BENCH_IDLE_MS of sleep with the list still there; the app
# counts the context switches of its other threads in that window (/proc/self/task/*/status,
# voluntary + not) and prints them per second. Without the collector (the simulated driver's own
# threads), then with each library, REPS runs each, medians.
#   usage: bench/idle_wakeups.sh BUILD_DIR [--reps N] [--idle-ms MS] [--max W] [LIB...]
# LIB: other libzecoll.so builds beside BUILD_DIR's (a before/after comparison). --max W: exit 1
# when BUILD_DIR's library adds more than W wake-ups a second to the control (ctest
# bench.idle_wakeups). On the 16-core host, from a fullnode_pack.sh folder: bench/fullnode.sh's
# idle part measures the same.
set -uo pipefail
build=$(cd "${1:?usage: idle_wakeups.sh BUILD_DIR [--reps N] [--idle-ms MS] [--max W] [LIB...]}" && pwd)
shift
reps=3 idle=1000 max=
libs=("$build/collector/libzecoll.so")
while [ $# -gt 0 ]; do
  case $1 in
    --reps) reps=$2; shift 2 ;;
    --idle-ms) idle=$2; shift 2 ;;
    --max) max=$2; shift 2 ;;
    *) libs+=("$(readlink -f "$1")"); shift ;;
  esac
done
app=$build/bench/zc_bench_app
export ZE_ENABLE_ALT_DRIVERS=$build/tests/zesim/libzesim.so
unset ZESIM_TRUTH
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
one() { # one [LIB]: wake-ups per second of one run
  local o
  if [ $# = 1 ]; then o=$(env LD_PRELOAD="$1" ZECOLL_OUTPUT="$work/t-%p" ZECOLL_SUMMARY=0 ZC_BENCH_IDLE_MS="$idle" "$app" kernels 2000 1)
  else o=$(env ZC_BENCH_IDLE_MS="$idle" "$app" kernels 2000 1); fi
  rm -rf "$work"/t-*
  /usr/bin/python3 -c "import json,sys; print(json.loads(sys.argv[1])['idle_wakeups_per_s'])" "$o" 2>/dev/null || echo nan
}
median() { printf '%s\n' "$@" | grep -v nan | sort -g | awk '{a[NR]=$1} END {if (NR) print a[int((NR+1)/2)]; else print "nan"}'; }
declare -a base
declare -A with
for r in $(seq "$reps"); do
  base+=("$(one)")
  for i in "${!libs[@]}"; do with[$i]+="$(one "${libs[$i]}") "; done
done
b=$(median "${base[@]}")
printf '%-70s %10s\n' "idle ${idle} ms after 2000 kernels: other threads' wake-ups per second (median of $reps)" ""
printf '  %-68s %10s\n' "no collector (the simulated driver's threads)" "$b"
rc=0
for i in "${!libs[@]}"; do
  w=$(median ${with[$i]})
  printf '  %-68s %10s  (%s)\n' "${libs[$i]}" "$w" "$(/usr/bin/python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):+.1f}')" "$b" "$w")"
  if [ "$i" = 0 ] && [ -n "$max" ]; then
    /usr/bin/python3 -c "import sys, math; d = float(sys.argv[2]) - float(sys.argv[1]); sys.exit(0 if not math.isnan(d) and d <= float(sys.argv[3]) else 1)" "$b" "$w" "$max" \
      || { echo "idle_wakeups: the collector adds more than $max wake-ups a second while the app idles" >&2; rc=1; }
  fi
done
exit $rc
