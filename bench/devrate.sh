#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Device records a second through the collector on ONE device stream (issue 22, target 4: >= 5 M
# kernel records a second). A kernel record is one kernel's record on its device stream (the
# device location's Enter, callsite parameter and Leave). bench/zc_devrate saturates one in-order
# immediate list with N back-to-back kernels of 0 ns (zesim runs them as fast as it can) and
# prints the CPU of every thread in that part, the threads named by their start routine. Per
# kernel record, per stage of the collector (each its own thread: the drainer's harvest of
# timestamps; the writer's converter, which also writes the salvage journal, and with
# ZECOLL_WRITER_STAGES=2 the emitter of OTF2; the journal's flusher), in ns of CPU, and the rate
# that stage alone allows (1e9 / its ns): the busiest one bounds the stream. Beside them the rate
# achieved: N / the time until every thread but the main one is idle again (the records are through
# all stages then), and without the collector (no collector's variant: zesim's and the app's own
# bound). Each variant once per repetition, medians printed.
#   variants (DEVRATE_VARIANTS, default "base ctl s1 s2"):
#     base     no collector;  s1 / s2  the collector, ZECOLL_WRITER_STAGES=1 / 2
#     ctl      no collector, the control (bench/zc_bench_ctl.h): a timestamp event per kernel that a
#              reader thread queries and resets every 1 ms, the drainer's driver calls; the drainer
#              minus that reader is the harvest's own (a real driver's query and reset are a memory
#              read and write: zesim's are calls through its locks)
#     s1api0   s1 with the Level Zero calls not recorded (ZECOLL_API_TIMING=0): the device stream's
#              records alone through the stages
#     NAME=LIB[:VAR=VALUE...]  another libzecoll.so (before/after), e.g. old=DIR/lib/alt0/libzecoll.so:ZECOLL_WRITER_STAGES=2
#   --ir: instructions instead (callgrind, this machine): per thread, the slope between N and 2N
#         kernels (DEVRATE_N defaults to 65536 then), per kernel record; a thread's count is its
#         whole life's, so the slope takes out start-up, the warm-up (DEVRATE_WARM, the same in
#         both runs) and what is written at exit (the same events left in the buffers: N a
#         multiple of 65,536, the events of a location's buffer)
#   usage: bench/devrate.sh DIR [OUTDIR] [--ir]   (DIR: a build folder or one packed by device-pack.sh
#          with bin/zc_devrate; DEVRATE_N=1048576 DEVRATE_REPS=5)
set -uo pipefail
D=$(cd "${1:?usage: devrate.sh DIR [OUTDIR] [--ir]}" && pwd)
shift
out="" ir=0
for a in "$@"; do
  if [ "$a" = --ir ]; then ir=1; else out=$a; fi
done
out=${out:-$(mktemp -d)}
mkdir -p "$out"
if [ -x "$D/bin/zc_devrate" ]; then
  app=$D/bin/zc_devrate col=$D/lib/libzecoll.so sim=$D/lib/libzesim.so
  export LD_LIBRARY_PATH=$D/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
else
  app=$D/bench/zc_devrate col=$D/collector/libzecoll.so sim=$D/tests/zesim/libzesim.so
fi
[ -x "$app" ] || { echo "devrate: no zc_devrate in $D" >&2; exit 2; }
# multiples of 65,536 (ZECOLL_BUFFER_EVENTS): the same events left in each buffer after as before
n=${DEVRATE_N:-$([ $ir = 1 ] && echo 65536 || echo 1048576)}
warm=${DEVRATE_WARM:-$((n / 4))}
reps=${DEVRATE_REPS:-$([ $ir = 1 ] && echo 1 || echo 5)}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
raw=$out/raw.txt
: >"$raw"
vspec() { # NAME -> "LIB ENV..."
  case $1 in
    base) echo "-" ;;
    s1) echo "$col ZECOLL_WRITER_STAGES=1" ;;
    s2) echo "$col ZECOLL_WRITER_STAGES=2" ;;
    s1api0) echo "$col ZECOLL_WRITER_STAGES=1 ZECOLL_API_TIMING=0" ;;
    ctl) echo "- ZC_DEVRATE_CTL=1" ;;
    *=*)
      local s=${1#*=}
      local lib=${s%%:*}
      local rest=${s#"$lib"}
      echo "$(readlink -f "$lib") ${rest//:/ }" ;;
    *) echo "devrate: unknown variant $1" >&2; exit 2 ;;
  esac
}
one() { # one NAME N OUTFILE [valgrind...]
  local spec lib
  read -r lib spec <<<"$(vspec "$1")"
  local pre=()
  [ "$lib" = - ] || pre=(LD_PRELOAD="$lib")
  (cd "$work" && env ZE_ENABLE_ALT_DRIVERS="$sim" ZECOLL_OUTPUT="$work/trace-%p" ZECOLL_SUMMARY=0 "${pre[@]}" $spec \
    "${@:4}" "$app" "$2" "$warm") >"$3" 2>"$3.err" || { echo "devrate: $1 failed" >&2; tail -3 "$3.err" >&2; }
  rm -rf "$work"/trace-*
}
variants=${DEVRATE_VARIANTS:-base ctl s1 s2}
if [ $ir = 1 ]; then
  command -v valgrind >/dev/null || { echo "devrate: valgrind is not installed" >&2; exit 2; }
  for v in $variants; do
    for k in 1 2; do
      one "$v" $((k * n)) "$work/${v%%=*}.$k.json" valgrind --tool=callgrind --separate-threads=yes \
        --callgrind-out-file="$work/cg.${v%%=*}.$k.%p"
      echo "${v%%=*} $((k * n)) $(vspec "$v" | cut -d" " -f1) $(tail -1 "$work/${v%%=*}.$k.json")" >>"$raw"
    done
  done
else
  for r in $(seq "$reps"); do
    read -ra vs <<<"$variants"
    [ $((r % 2)) = 0 ] && mapfile -t vs < <(printf '%s\n' "${vs[@]}" | tac)
    for v in "${vs[@]}"; do
      one "$v" "$n" "$work/one.json"
      echo "${v%%=*} $n $(vspec "$v" | cut -d" " -f1) $(tail -1 "$work/one.json")" >>"$raw"
    done
  done
fi
/usr/bin/env python3 "$(dirname "$0")/devrate.py" "$raw" "$work" "$ir" "$sim" | tee "$out/table.txt"
