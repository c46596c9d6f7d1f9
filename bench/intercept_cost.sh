#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Per-call cost of the ways a collector can intercept Level Zero calls, in instructions per
# zeCommandListAppendBarrier call (callgrind, deterministic), on zesim through the real loader.
# Method, variants and interpretation: bench/intercept/README.md.
#
#   bench/intercept_cost.sh            # build into build/bench, measure, print the table
#
# Knobs (environment): IC_N1, IC_N2 (appends of the two measured runs, default 100000 and 200000;
# slope = (Ir(N2) - Ir(N1)) / (N2 - N1)), IC_CHECK_N (appends of the uninstrumented correctness runs,
# default 1000), IC_JOBS (parallel callgrind runs, default nproc), IC_BUILD (build directory).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${IC_BUILD:-$ROOT/build/bench}
N1=${IC_N1:-100000}
N2=${IC_N2:-200000}
CHECK_N=${IC_CHECK_N:-1000}
JOBS=${IC_JOBS:-$(nproc)}
((N2 > N1)) || { echo "IC_N2 must be larger than IC_N1" >&2; exit 2; }
# ic_app resets its list every 10000 appends; whole chunks keep the reset share identical per call.
((N1 % 10000 == 0 && N2 % 10000 == 0)) || { echo "IC_N1 and IC_N2 must be multiples of 10000" >&2; exit 2; }

# ---- tools and build ----------------------------------------------------------------------------------
if ! command -v valgrind >/dev/null 2>&1; then
  echo "== installing valgrind" >&2
  SUDO=; [ "$(id -u)" -eq 0 ] || SUDO=sudo
  $SUDO apt-get update -qq && $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq valgrind >/dev/null
fi
echo "== building zesim ic_app ic_preload ic_shim into $BUILD" >&2
cmake -S "$ROOT" -B "$BUILD" -DZC_WERROR=ON >/dev/null
cmake --build "$BUILD" -j"$JOBS" --target zesim ic_app ic_preload ic_shim >/dev/null

ZESIM=$BUILD/tests/zesim/libzesim.so
IC=$BUILD/bench/intercept
APP=$IC/ic_app
PRELOAD=$IC/libic_preload.so
SHIM=$IC/libic_shim.so
for f in "$ZESIM" "$APP" "$PRELOAD" "$SHIM"; do [ -e "$f" ] || { echo "missing $f" >&2; exit 1; }; done

WORK=$(mktemp -d /tmp/intercept_cost.XXXXXX)
trap 'rm -rf "$WORK"' EXIT

# ---- variants -------------------------------------------------------------------------------------------
# id | label | environment (space-separated K=V) | extra app argument | how the hook reports its count
VARIANTS=(
  "0|0  baseline (no interception)|ZE_ENABLE_ALT_DRIVERS=$ZESIM||none"
  "1|1  tracing layer + no-op tracer|ZE_ENABLE_ALT_DRIVERS=$ZESIM ZE_ENABLE_TRACING_LAYER=1|--tracer|tracer"
  "1b|1b tracing layer, no tracer|ZE_ENABLE_ALT_DRIVERS=$ZESIM ZE_ENABLE_TRACING_LAYER=1||none"
  "2|2  LD_PRELOAD interposer|ZE_ENABLE_ALT_DRIVERS=$ZESIM LD_PRELOAD=$PRELOAD||preload"
  "3|3  shim driver (table wrap)|ZE_ENABLE_ALT_DRIVERS=$SHIM ZC_BENCH_REAL_DRIVER=$ZESIM||shim"
)
field() { local IFS='|'; read -r -a f <<<"$1"; echo "${f[$2]}"; }

# run <outfile-prefix> <env> <mode> <n> <extra> [callgrind]: stdout+stderr -> prefix.log, rc -> prefix.rc
run() {
  local out=$1 envs=$2 mode=$3 n=$4 extra=$5 cg=${6:-}
  local -a cmd=("$APP" "$mode" "$n")
  [ -n "$extra" ] && cmd+=("$extra")
  if [ -n "$cg" ]; then
    cmd=(valgrind --tool=callgrind --callgrind-out-file="$out.cg" "${cmd[@]}")
  fi
  local -a envarr
  read -r -a envarr <<<"$envs" # K=V words; the paths contain no spaces
  set +e
  env "${envarr[@]}" "${cmd[@]}" >"$out.log" 2>&1
  echo $? >"$out.rc"
  set -e
  rm -f "$out.cg"
}

# The number of appends the variant's hook saw in a finished run (empty when it has no hook).
hook_count() {
  local log=$1 kind=$2
  case $kind in
    tracer) sed -n 's/.*tracer_prologues=\([0-9]*\).*/\1/p' "$log" | tail -1 ;;
    preload) sed -n 's/^ic-count preload \([0-9]*\)$/\1/p' "$log" | tail -1 ;;
    shim) sed -n 's/^ic-count shim \([0-9]*\)$/\1/p' "$log" | tail -1 ;;
    *) echo "" ;;
  esac
}
ir_of() { sed -n 's/^==[0-9]*== Collected : \([0-9]*\)$/\1/p' "$1" | tail -1; }

# ---- launch every run, at most $JOBS at a time ------------------------------------------------------------
pids=()
spawn() {
  while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do wait -n || true; done
  run "$@" &
  pids+=($!)
}
echo "== callgrind: N=$N1 and N=$N2 appends per variant, with and without the validation layer" >&2
for v in "${VARIANTS[@]}"; do
  id=$(field "$v" 0); envs=$(field "$v" 2); extra=$(field "$v" 3)
  for n in "$N1" "$N2"; do
    spawn "$WORK/cg.$id.$n" "$envs" direct "$n" "$extra" cg
    spawn "$WORK/cgv.$id.$n" "$envs ZE_ENABLE_VALIDATION_LAYER=1" direct "$n" "$extra" cg
  done
  for mode in direct dlopen dispatch-table; do
    spawn "$WORK/chk.$id.$mode" "$envs" "$mode" "$CHECK_N" "$extra"
  done
  spawn "$WORK/chkv.$id.direct" "$envs ZE_ENABLE_VALIDATION_LAYER=1" direct "$CHECK_N" "$extra"
done
# How the application reaches the loader changes the baseline itself (no interception).
for mode in dlopen dispatch-table; do
  for n in "$N1" "$N2"; do spawn "$WORK/cgmode.$mode.$n" "ZE_ENABLE_ALT_DRIVERS=$ZESIM" "$mode" "$n" "" cg; done
done
for p in "${pids[@]}"; do wait "$p" || true; done

# ---- evaluate --------------------------------------------------------------------------------------------
fail=0
check_rc() { # <prefix>: the app must have exited 0
  if [ "$(cat "$1.rc")" != 0 ]; then
    echo "FAILED: $(basename "$1") (exit $(cat "$1.rc")); log:" >&2
    sed 's/^/    /' "$1.log" | tail -15 >&2
    fail=1
    return 1
  fi
}
slope() { # <prefix> -> instructions per call, one decimal
  local a b
  check_rc "$1.$N1" || { echo "?"; return; }
  check_rc "$1.$N2" || { echo "?"; return; }
  a=$(ir_of "$1.$N1.log"); b=$(ir_of "$1.$N2.log")
  awk -v a="$a" -v b="$b" -v d="$((N2 - N1))" 'BEGIN { printf "%.1f", (b - a) / d }'
}
caught() { # <prefix> <kind> -> "yes (n/N)" / "NO (n/N)" / "n/a"
  local c
  [ "$2" = none ] && { echo "n/a"; return; }
  check_rc "$1" || { echo "run failed"; return; }
  c=$(hook_count "$1.log" "$2"); c=${c:-0}
  if [ "$c" = "$CHECK_N" ]; then echo "yes ($c/$CHECK_N)"; else echo "NO ($c/$CHECK_N)"; fi
}
layer_ok() { # <prefix> <layer>: the app saw the layer mapped
  grep -q "layers=[a-z,]*$2" "$1.log"
}

base=$(slope "$WORK/cg.0")
basev=$(slope "$WORK/cgv.0")
row() { printf '%-33s %10s %10s %14s %10s %-17s %-16s %s\n' "$@"; }
printf "\n"
row "variant" "instr/call" "extra" "+validation" "extra" "works w/ validation" "catches dlopen" "catches dispatch"
row "" "(slope)" "vs base" "instr/call" "vs base" "layer" "apps" "-table apps"
row "---------------------------------" "----------" "----------" "--------------" "----------" "-----------------" "----------------" "----------------"
for v in "${VARIANTS[@]}"; do
  id=$(field "$v" 0); label=$(field "$v" 1); envs=$(field "$v" 2); kind=$(field "$v" 4)
  s=$(slope "$WORK/cg.$id"); sv=$(slope "$WORK/cgv.$id")
  extra=$(awk -v s="$s" -v b="$base" 'BEGIN { if (s == "?" || b == "?") print "?"; else printf "%+.1f", s - b }')
  extrav=$(awk -v s="$sv" -v b="$basev" 'BEGIN { if (s == "?" || b == "?") print "?"; else printf "%+.1f", s - b }')
  # The layers must really have been loaded, or the numbers mean nothing.
  for n in "$N1" "$N2"; do
    if [ -f "$WORK/cgv.$id.$n.log" ] && ! layer_ok "$WORK/cgv.$id.$n" validation; then
      echo "FAILED: validation layer not loaded in cgv.$id.$n" >&2; fail=1
    fi
    if [[ $envs == *ZE_ENABLE_TRACING_LAYER=1* ]] && ! layer_ok "$WORK/cg.$id.$n" tracing; then
      echo "FAILED: tracing layer not loaded in cg.$id.$n" >&2; fail=1
    fi
    # The measured runs themselves must have been intercepted on every call.
    if [ "$kind" != none ]; then
      for p in cg cgv; do
        c=$(hook_count "$WORK/$p.$id.$n.log" "$kind")
        [ "${c:-0}" = "$n" ] || { echo "FAILED: $p.$id.$n hook saw ${c:-0} of $n calls" >&2; fail=1; }
      done
    fi
  done
  if [ "$kind" = none ]; then
    withv="n/a"
  else
    withv=$(caught "$WORK/chkv.$id.direct" "$kind")
    layer_ok "$WORK/chkv.$id.direct" validation || withv="layer not loaded"
  fi
  row "$label" "$s" "$([ "$id" = 0 ] && echo "-" || echo "$extra")" "$sv" \
    "$([ "$id" = 0 ] && echo "-" || echo "$extrav")" "$withv" \
    "$(caught "$WORK/chk.$id.dlopen" "$kind")" "$(caught "$WORK/chk.$id.dispatch-table" "$kind")"
  # Direct-mode correctness runs must see every call too (uninstrumented, CHECK_N appends).
  if [ "$kind" != none ]; then
    d=$(caught "$WORK/chk.$id.direct" "$kind")
    [[ $d == yes* ]] || { echo "FAILED: variant $id direct check: $d" >&2; fail=1; }
  fi
done

printf "\nbaseline by calling style (no interception, no layer):\n"
printf "  %-16s %10s\n" "direct" "$base"
for mode in dlopen dispatch-table; do printf "  %-16s %10s\n" "$mode" "$(slope "$WORK/cgmode.$mode")"; done

printf "\nzelEnableTracingLayer in this loader: %s\n" \
  "$(sed -n 's/.*zelEnableTracingLayer=\([a-z]*\).*/\1/p' "$WORK/chk.0.direct.log" | tail -1)"
printf "loader: %s; valgrind: %s; N1=%s N2=%s; correctness runs N=%s\n" \
  "$(dpkg-query -W -f='${Package} ${Version}' libze1 2>/dev/null || echo unknown)" "$(valgrind --version)" "$N1" "$N2" "$CHECK_N"
exit "$fail"
