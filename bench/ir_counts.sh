#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Instructions the application's thread executes per Append and per MPI call, with and without the
# collector (callgrind): the figures CI compares (test bench.ir_guard).
#   append_regular     the collector's own instructions in one zeCommandListAppendLaunchKernel on a
#                      regular list, API timing on: the wrapper's inclusive cost minus the real
#                      driver function's (deterministic)
#   append_immediate   the same on an executing in-order immediate list (background drainer off, so
#                      that injected events come back at the same points every run)
#   append_v117        append_immediate's launch through a loader of spec 1.17 (bench/zc_bench_args.c:
#                      the tables fetched at 1.17 from libzecoll_ze.so as tests/loader's loader does)
#   append_with_args   the same list and loop with zeCommandListAppendLaunchKernelWithArguments (spec
#                      1.14, UR v2's launch: group counts and sizes by value, no signal event), issue
#                      20's target: within +200 like the classic launch
#   mpi_call           one of MPI_Irecv / MPI_Isend / MPI_Waitall(2) of a 0-byte self message (1
#                      rank): with minus without (deterministic)
#   mpi_call_mpich     mpi_call with MPICH (bench/zc_mpi_bench_mpich: the mpich flavour of libzecoll.so)
#   mpi_call_64b       the same with a message of 8 doubles (the send's size is then asked of MPI)
#   mpi_call_floor     mpi_call's loop with bench/zc_mpi_floor.c preloaded instead: two rdtsc and
#                      one 64-byte record per call and nothing else (for reference, not guarded)
#   mpi_call_all_threads  mpi_call's loop on all the process's threads with one writer stage: the
#                      writer's conversion, journal and OTF2 work per call too (bench/writer_ir.sh;
#                      slope between N and 2N iterations, deterministic; no target, guarded)
#   *_closed           the same with recording closed for the whole run (a window that never
#                      opens: ZECOLL_WINDOWS=signal:SIGUSR2, never sent), issue 8's target +30
# and for information (zesim's worker thread and the drainer make these vary by a few percent):
#   *_call_delta       Append call with minus without the collector (the driver's own extra work
#                      for a signal event included)
#   *_loop_delta       the measured loop per Append, list resets / synchronisations included
# Counted on the application's thread only, inside the measured loops of bench/zc_bench_app.c and
# bench/zc_mpi_bench.c, after a warm-up loop.
#   usage: bench/ir_counts.sh BUILD_DIR [--json FILE] [--check BASELINE.json] [--quick]
# --check fails (exit 1) when a guarded figure grows by more than 20% over the one recorded for
# this build type in BASELINE.json (bench/baseline.json); re-record with --json after an
# intended change.
set -uo pipefail
build=$(cd "${1:?usage: ir_counts.sh BUILD_DIR [--json FILE] [--check FILE]}" && pwd)
shift
json="" check="" n_app=8192 n_mpi=5000 n_w=50000
while [ $# -gt 0 ]; do
  case $1 in
    --json) json=$2; shift 2 ;;
    --check) check=$2; shift 2 ;;
    --quick) n_app=4096; n_mpi=2000; n_w=20000; shift ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
command -v valgrind >/dev/null || { echo "ir_counts: valgrind is not installed (scripts/setup-deps.sh installs it)" >&2; exit 2; }
app=$build/bench/zc_bench_app
mapp=$build/bench/zc_mpi_bench
lib=$build/collector/libzecoll.so
zesim=$build/tests/zesim/libzesim.so
btype=$(sed -n 's/^CMAKE_BUILD_TYPE:[A-Z]*=//p' "$build/CMakeCache.txt")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
py=/usr/bin/python3

# cg <out> <toggle> <collector 0|1> <cmd...>: callgrind run counting inside <toggle> only
cg() {
  local out=$1 toggle=$2 col=$3; shift 3
  local pre=(ZE_ENABLE_ALT_DRIVERS="$zesim" ${ZC_EXTRA_ENV:-})
  [ "$col" = 1 ] && pre+=(LD_PRELOAD="$lib" ZECOLL_OUTPUT="$work/trace-%p" ZECOLL_SUMMARY=0)
  env "${pre[@]}" valgrind --tool=callgrind --toggle-collect="$toggle" --callgrind-out-file="$out.%p" "$@" \
    >"$out.log" 2>&1 || { echo "ir_counts: failed: $*" >&2; sed 's/^/  /' "$out.log" | tail -20 >&2; return 1; }
}
# inclusive Ir of a function, and the total, from the callgrind files of one run (the total file)
ir() { # ir <out-prefix> <function|TOTAL>
  local f
  for f in "$1".*; do
    [ "$(sed -n 's/^totals: //p' "$f")" = 0 ] && continue
    if [ "$2" = TOTAL ]; then sed -n 's/^totals: //p' "$f"
    else callgrind_annotate --inclusive=yes --threshold=100 "$f" 2>/dev/null |
      awk -v fn="$2" '{ n = $0; sub(/ \[.*/, "", n); sub(/.*:/, "", n); if (n == fn || index(n, fn ".") == 1) { gsub(",", "", $1); print $1; exit } }'
    fi
  done | head -1
}

fail=0
pids=()
nodrain=(ZECOLL_DRAIN_INTERVAL_US=0)
cg "$work/reg.0" reg_measured 0 "$app" regular "$n_app" & pids+=($!)
cg "$work/reg.1" reg_measured 1 "$app" regular "$n_app" & pids+=($!)
for p in "${pids[@]}"; do wait "$p" || fail=1; done; pids=()
cg "$work/imm.0" imm_measured 0 "$app" appends "$n_app" & pids+=($!)
cg "$work/imm.1" imm_measured 1 "$app" appends "$n_app" & pids+=($!)
for p in "${pids[@]}"; do wait "$p" || fail=1; done; pids=()
ZC_EXTRA_ENV="${nodrain[*]}" cg "$work/imm.d" imm_measured 1 "$app" appends "$n_app" & pids+=($!)
if [ -x "$mapp" ]; then
  cg "$work/mpi.0" mpi_measured 0 "$mapp" self "$n_mpi" & pids+=($!)
fi
for p in "${pids[@]}"; do wait "$p" || fail=1; done; pids=()
# the classic launch and the launch with arguments through a loader of spec 1.17, with and without
bapp=$build/bench/zc_bench_args
ZC_EXTRA_ENV="${nodrain[*]}" cg "$work/v117.classic.1" args_measured 1 "$bapp" classic "$n_app" & pids+=($!)
ZC_EXTRA_ENV="${nodrain[*]}" cg "$work/v117.args.1" args_measured 1 "$bapp" args "$n_app" & pids+=($!)
for p in "${pids[@]}"; do wait "$p" || fail=1; done; pids=()
cg "$work/v117.args.0" args_measured 0 "$bapp" args "$n_app" || fail=1
if [ -x "$mapp" ]; then
  cg "$work/mpi.0b" mpi_measured 0 "$mapp" self "$n_mpi" 8 & pids+=($!)
  cg "$work/mpi.1b" mpi_measured 1 "$mapp" self "$n_mpi" 8 & pids+=($!)
fi
for p in "${pids[@]}"; do wait "$p" || fail=1; done; pids=()
# recording closed for the whole run: the window never opens (no MPI_Pcontrol in these programs)
closed=(ZECOLL_WINDOWS=signal:SIGUSR2)
ZC_EXTRA_ENV="${closed[*]}" cg "$work/reg.c" reg_measured 1 "$app" regular "$n_app" & pids+=($!)
ZC_EXTRA_ENV="${closed[*]}" cg "$work/imm.c" imm_measured 1 "$app" appends "$n_app" & pids+=($!)
for p in "${pids[@]}"; do wait "$p" || fail=1; done; pids=()
if [ -x "$mapp" ]; then
  cg "$work/mpi.1" mpi_measured 1 "$mapp" self "$n_mpi" & pids+=($!)
  ZC_EXTRA_ENV="${closed[*]}" cg "$work/mpi.c" mpi_measured 1 "$mapp" self "$n_mpi" & pids+=($!)
fi
for p in "${pids[@]}"; do wait "$p" || fail=1; done; pids=()
# the same loop under MPICH (the mpich flavour; a singleton: no launcher)
mapp_mpich=$build/bench/zc_mpi_bench_mpich
if [ -x "$mapp_mpich" ]; then
  cg "$work/mpich.0" mpi_measured 0 "$mapp_mpich" self "$n_mpi" & pids+=($!)
  cg "$work/mpich.1" mpi_measured 1 "$mapp_mpich" self "$n_mpi" & pids+=($!)
fi
for p in "${pids[@]}"; do wait "$p" || fail=1; done; pids=()
# the bare recorder (bench/zc_mpi_floor.c: two rdtsc and one record per call, nothing else), for
# reference: what any tracer of this loop spends at least
floor_lib=$build/bench/libzc_mpi_floor.so
if [ -x "$mapp" ] && [ -f "$floor_lib" ]; then
  ZC_EXTRA_ENV="LD_PRELOAD=$floor_lib" cg "$work/mpi.f" mpi_measured 0 "$mapp" self "$n_mpi" || fail=1
fi
[ $fail = 0 ] || exit 2

per() { "$py" -c "import sys; print(f'{int(sys.argv[1]) / int(sys.argv[2]):.1f}')" "$1" "$2"; }
own() { # own <prefix> [API]: the collector's instructions inside the Append calls
  local w z api=${2:-zeCommandListAppendLaunchKernel}
  w=$(ir "$1" "zcw_$api")
  z=$(ir "$1" "zs_$api")
  per $((w - z)) "$n_app"
}
declare -A base with
base[append_regular]=0; with[append_regular]=$(own "$work/reg.1")
base[append_immediate]=0; with[append_immediate]=$(own "$work/imm.d")
base[append_regular_call_delta]=$(per "$(ir "$work/reg.0" zeCommandListAppendLaunchKernel)" "$n_app")
with[append_regular_call_delta]=$(per "$(ir "$work/reg.1" zeCommandListAppendLaunchKernel)" "$n_app")
base[append_regular_loop_delta]=$(per "$(ir "$work/reg.0" TOTAL)" "$n_app")
with[append_regular_loop_delta]=$(per "$(ir "$work/reg.1" TOTAL)" "$n_app")
base[append_immediate_call_delta]=$(per "$(ir "$work/imm.0" zeCommandListAppendLaunchKernel)" "$n_app")
with[append_immediate_call_delta]=$(per "$(ir "$work/imm.1" zeCommandListAppendLaunchKernel)" "$n_app")
base[append_immediate_loop_delta]=$(per "$(ir "$work/imm.0" TOTAL)" "$n_app")
with[append_immediate_loop_delta]=$(per "$(ir "$work/imm.1" TOTAL)" "$n_app")
base[append_regular_closed]=0; with[append_regular_closed]=$(own "$work/reg.c")
base[append_immediate_closed]=0; with[append_immediate_closed]=$(own "$work/imm.c")
base[append_regular_closed_call_delta]=${base[append_regular_call_delta]}
with[append_regular_closed_call_delta]=$(per "$(ir "$work/reg.c" zeCommandListAppendLaunchKernel)" "$n_app")
wa=zeCommandListAppendLaunchKernelWithArguments
base[append_v117]=0; with[append_v117]=$(own "$work/v117.classic.1")
base[append_with_args]=0; with[append_with_args]=$(own "$work/v117.args.1" $wa)
base[append_with_args_call_delta]=$(per "$(ir "$work/v117.args.0" zs_$wa)" "$n_app")
with[append_with_args_call_delta]=$(per "$(ir "$work/v117.args.1" zcw_$wa)" "$n_app")
keys=(append_regular append_immediate append_v117 append_with_args append_with_args_call_delta append_regular_call_delta append_regular_loop_delta append_immediate_call_delta
      append_immediate_loop_delta append_regular_closed append_immediate_closed append_regular_closed_call_delta)
if [ -x "$mapp" ]; then
  base[mpi_call]=$(per "$(ir "$work/mpi.0" TOTAL)" $((3 * n_mpi)))
  with[mpi_call]=$(per "$(ir "$work/mpi.1" TOTAL)" $((3 * n_mpi)))
  base[mpi_call_closed]=${base[mpi_call]}
  with[mpi_call_closed]=$(per "$(ir "$work/mpi.c" TOTAL)" $((3 * n_mpi)))
  base[mpi_call_64b]=$(per "$(ir "$work/mpi.0b" TOTAL)" $((3 * n_mpi)))
  with[mpi_call_64b]=$(per "$(ir "$work/mpi.1b" TOTAL)" $((3 * n_mpi)))
  keys+=(mpi_call mpi_call_closed mpi_call_64b)
  if [ -x "$mapp_mpich" ]; then
    base[mpi_call_mpich]=$(per "$(ir "$work/mpich.0" TOTAL)" $((3 * n_mpi)))
    with[mpi_call_mpich]=$(per "$(ir "$work/mpich.1" TOTAL)" $((3 * n_mpi)))
    keys+=(mpi_call_mpich)
  fi
  if [ -f "$floor_lib" ]; then
    base[mpi_call_floor]=${base[mpi_call]}
    with[mpi_call_floor]=$(per "$(ir "$work/mpi.f" TOTAL)" $((3 * n_mpi)))
    keys+=(mpi_call_floor)
  fi
  # the same loop's cost on all the process's threads, its writer's work included (one writer
  # stage, the journal's flusher idle: bench/writer_ir.sh), per call
  if read -r b w < <("$(dirname "$0")/writer_ir.sh" "$build" --loops "$n_w" --value) && [ -n "$w" ]; then
    base[mpi_call_all_threads]=$b; with[mpi_call_all_threads]=$w
    keys+=(mpi_call_all_threads)
  else
    echo "ir_counts: writer_ir.sh failed" >&2; exit 2
  fi
fi
declare -A target=([append_regular]=200 [append_immediate]=200 [append_v117]=200 [append_with_args]=200 [mpi_call]=150 [mpi_call_mpich]=150 [mpi_call_64b]=150 [append_regular_closed]=30
                   [append_immediate_closed]=30 [mpi_call_closed]=30)

printf 'instructions on the application thread (callgrind, %s build, %s appends / %s MPI iterations)\n' "$btype" "$n_app" "$n_mpi"
printf '%-24s %10s %10s %10s  %s\n' "per ..." "without" "with" "delta" "target"
out="{\"build_type\": \"$btype\""
for k in "${keys[@]}"; do
  d=$("$py" -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.1f}')" "${base[$k]}" "${with[$k]}")
  printf '%-24s %10s %10s %10s  %s\n' "$k" "${base[$k]}" "${with[$k]}" "+$d" "${target[$k]:+<= +${target[$k]}}"
  out+=", \"$k\": {\"without\": ${base[$k]}, \"with\": ${with[$k]}, \"delta\": $d}"
done
out+="}"
[ -n "$json" ] && echo "$out" >"$json"

if [ -n "$check" ]; then
  "$py" - "$check" "$btype" "$out" <<'PY' || fail=1
import json, sys
base = json.load(open(sys.argv[1]))
btype, now = sys.argv[2], json.loads(sys.argv[3])
ref = base.get(btype)
if ref is None:
    sys.exit(f"ir_guard: {sys.argv[1]} has no figures for build type {btype!r}")
targets = {"append_regular": 200, "append_immediate": 200, "append_v117": 200, "append_with_args": 200, "mpi_call": 150, "mpi_call_mpich": 150, "mpi_call_64b": 150,
           "append_regular_closed": 30,
           "append_immediate_closed": 30, "mpi_call_closed": 30, "mpi_call_all_threads": None}
bad = 0
for k, r in ref.items():
    if k not in targets:  # the informational figures vary from run to run
        continue
    if k not in now:
        continue
    # closed figures are a few instructions: 20% of them is less than one changed instruction
    d, limit = now[k]["delta"], max(r["delta"] * 1.2, r["delta"] + 3)
    ok = d <= limit
    issue = "issue-8" if k.endswith("_closed") else "issue-20" if k in ("append_v117", "append_with_args") else "issue-7"
    what = f"{issue} target +{targets[k]}" if targets[k] else "the writer's work: no target, a regression guard"
    print(f"ir_guard: {k}: +{d:.1f} instructions (recorded +{r['delta']:.1f}, limit +{limit:.1f}; "
          f"{what}) {'ok' if ok else 'FAILED'}")
    bad += not ok
sys.exit(1 if bad else 0)
PY
fi
exit $fail
