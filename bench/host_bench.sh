#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Collector overhead on a machine without the Debian packages (the many-core host): runs prebuilt
# binaries packed by /work/shared/tools/device-pack.sh (DIR/bin: zc_bench_app zc_mpi_bench,
# DIR/lib: libzecoll.so libzecoll_ze.so libzesim.so and the Level Zero loader, OTF2, ...).
# Every variant of one measure runs once per repetition, alternating, and the median is printed
# with the target of issue 7. Besides the targets it runs the experiments that locate what scales
# with cores: the background drainer off, buffers large enough that the writer thread never runs,
# device or API timing off, the whole process pinned to one core or to two, (no collector) an
# application that spends 100 ns more per Append, and zesim's engines polling instead of sleeping
# (ZESIM_POLL_US: submission without a thread wake-up, as on hardware).
#   usage: bench/host_bench.sh DIR [OUTDIR]      (BENCH_REPS=5 BENCH_APPENDS=1000000 BENCH_IMM=200000
#                                                 BENCH_ITERS=200000 BENCH_PERF=path/to/perf
#                                                 BENCH_PARTS="reg imm wall mpi" BENCH_ZESIM=libzesim.so)
# BENCH_ZESIM runs the same measures on another build of the simulator (experiments: which part
# of a difference is the simulator's); BENCH_PARTS picks the groups of measures.
set -uo pipefail
D=$(cd "${1:?usage: host_bench.sh DIR [OUTDIR]}" && pwd)
out=${2:-$(mktemp -d)}
mkdir -p "$out"
reps=${BENCH_REPS:-5}
appends=${BENCH_APPENDS:-1000000}
imm=${BENCH_IMM:-200000}
iters=${BENCH_ITERS:-200000}
export LD_LIBRARY_PATH=$D/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export ZE_ENABLE_ALT_DRIVERS=${BENCH_ZESIM:-$D/lib/libzesim.so}
parts=" ${BENCH_PARTS:-reg imm wall mpi} "
part() { [[ "$parts" == *" $1 "* ]]; }
unset ZESIM_TRUTH
app=$D/bin/zc_bench_app
mapp=$D/bin/zc_mpi_bench
lib=$D/lib/libzecoll.so
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
raw=$out/raw.txt
: >"$raw"
py=$(command -v python3)
field() { "$py" -c "import json,sys; print(json.loads(sys.argv[1])[sys.argv[2]])" "$1" "$2" 2>/dev/null || echo nan; }
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
col=(ZECOLL_OUTPUT="$work/t-%p" ZECOLL_SUMMARY=0 LD_PRELOAD="$lib")

# one <name> <json-field> <cmd...>: runs once, records the value under name
declare -A vals
one() {
  local name=$1 f=$2; shift 2
  local o v
  o=$("$@" 2>>"$out/stderr.txt" | tail -1)
  v=$(field "$o" "$f")
  vals[$name]+="$v "
  echo "$name $v $o" >>"$raw"
  rm -rf "$work"/t-*
}
med() { [ -n "${vals[$1]:-}" ] && median ${vals[$1]}; }
row() { [ "$2" = "" ] || [ "$3" = "" ] || printf '%-58s %10s %10s %10s  %s\n' "$@"; }
delta() { "$py" -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):+.1f}')" "$1" "$2" 2>/dev/null; }
ratio() { "$py" -c "import sys; print(f'x{float(sys.argv[2]) / float(sys.argv[1]):.3f}')" "$1" "$2" 2>/dev/null; }
# drow / rrow LABEL KEY_WITHOUT KEY_WITH TARGET: the two medians and their difference / ratio
drow() { local a b; a=$(med "$2"); b=$(med "$3"); row "$1" "$a" "$b" "$(delta "$a" "$b")" "$4"; }
rrow() { local a b; a=$(med "$2"); b=$(med "$3"); row "$1" "$a" "$b" "$(ratio "$a" "$b")" "$4"; }

mpirun=(mpirun --allow-run-as-root --oversubscribe --bind-to none)
mpi() { # mpi <np> <mode>[:<doubles per message>] [env...]: one JSON line from rank 0
  local np=$1 mode=${2%%:*} d=0
  [[ $2 == *:* ]] && d=${2##*:}
  shift 2
  local xs=()
  for e in "$@"; do xs+=(-x "$e"); done
  "${mpirun[@]}" -np "$np" "${xs[@]}" "$mapp" "$mode" "$iters" "$d"
}

echo "== $(nproc) cores, $(uname -r), clocksource $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource 2>/dev/null), $reps alternating runs" | tee "$out/table.txt"
grep -o -m1 -w -E 'constant_tsc|nonstop_tsc' /proc/cpuinfo | sort -u | tr '\n' ' ' >>"$out/table.txt"; echo >>"$out/table.txt"
for r in $(seq "$reps"); do
  if part reg; then
  # regular list: host work only (never executed)
  one reg.base append_ns env X=1 "$app" regular "$appends"
  one reg.on append_ns env "${col[@]}" "$app" regular "$appends"
  one reg.apioff append_ns env "${col[@]}" ZECOLL_API_TIMING=0 "$app" regular "$appends"
  one reg.nodrain append_ns env "${col[@]}" ZECOLL_DRAIN_INTERVAL_US=0 "$app" regular "$appends"
  one reg.bigbuf append_ns env "${col[@]}" ZECOLL_BUFFER_EVENTS=8388608 "$app" regular "$appends"
  one reg.smallbuf append_ns env "${col[@]}" ZECOLL_BUFFER_EVENTS=8192 "$app" regular "$appends"
  one reg.ev.base append_ns env X=1 "$app" regular "$appends" event
  one reg.ev.on append_ns env "${col[@]}" "$app" regular "$appends" event
  one reg.closed append_ns env "${col[@]}" ZECOLL_WINDOWS=signal:SIGUSR2 "$app" regular "$appends"
  one reg.pin1.base append_ns taskset -c 3 env X=1 "$app" regular "$appends"
  one reg.pin1.on append_ns taskset -c 3 env "${col[@]}" "$app" regular "$appends"
  fi
  if part imm; then
  # immediate list: executing on zesim's worker thread
  one imm.base append_ns env X=1 "$app" appends "$imm"
  one imm.on append_ns env "${col[@]}" "$app" appends "$imm"
  one imm.apioff append_ns env "${col[@]}" ZECOLL_API_TIMING=0 "$app" appends "$imm"
  one imm.devoff append_ns env "${col[@]}" ZECOLL_DEVICE_TIMING=0 "$app" appends "$imm"
  one imm.nodrain append_ns env "${col[@]}" ZECOLL_DRAIN_INTERVAL_US=0 "$app" appends "$imm"
  one imm.bigbuf append_ns env "${col[@]}" ZECOLL_BUFFER_EVENTS=8388608 "$app" appends "$imm"
  one imm.ev.base append_ns env X=1 "$app" appends "$imm" event
  one imm.ev.on append_ns env "${col[@]}" "$app" appends "$imm" event
  one imm.closed append_ns env "${col[@]}" ZECOLL_WINDOWS=signal:SIGUSR2 "$app" appends "$imm"
  one imm.pin1.base append_ns taskset -c 3 env X=1 "$app" appends "$imm"
  one imm.pin1.on append_ns taskset -c 3 env "${col[@]}" "$app" appends "$imm"
  one imm.pin2.base append_ns taskset -c 2,3 env X=1 "$app" appends "$imm"
  one imm.pin2.on append_ns taskset -c 2,3 env "${col[@]}" "$app" appends "$imm"
  # no collector: the application busy ~100 ns longer per Append (how the simulator reacts)
  one imm.spin100 append_ns env ZC_BENCH_SPIN_NS=100 "$app" appends "$imm"
  # zesim's engines poll 50 us before they sleep (a command streamer polls its ring: a submission
  # is a doorbell write, not a wake-up); needs a spare core per engine
  one imm.poll.base append_ns env ZESIM_POLL_US=50 "$app" appends "$imm"
  one imm.poll.on append_ns env ZESIM_POLL_US=50 "${col[@]}" "$app" appends "$imm"
  one imm.poll.devoff append_ns env ZESIM_POLL_US=50 "${col[@]}" ZECOLL_DEVICE_TIMING=0 "$app" appends "$imm"
  one imm.poll.nodrain append_ns env ZESIM_POLL_US=50 "${col[@]}" ZECOLL_DRAIN_INTERVAL_US=0 "$app" appends "$imm"
  fi
  if part wall; then
  # wall time and resubmission
  one k.base wall_s env X=1 "$app" kernels 20000 20
  one k.on wall_s env "${col[@]}" "$app" kernels 20000 20
  one k.closed wall_s env "${col[@]}" ZECOLL_WINDOWS=signal:SIGUSR2 "$app" kernels 20000 20
  one ex.base wall_s env X=1 "$app" execs 2000 compute
  one ex.on wall_s env "${col[@]}" "$app" execs 2000 compute
  one cp.base wall_s env X=1 "$app" execs 2000 copy
  one cp.on wall_s env "${col[@]}" "$app" execs 2000 copy
  one cp.deep wall_s env "${col[@]}" ZECOLL_HARVEST_BUFFERS=4096 "$app" execs 2000 copy
  # no collector: the harvest's round trip copy engine -> compute engine -> copy engine made by
  # the app's own lists (the floor of the design), and the same commands on the copy engine alone
  one cp.pp wall_s env X=1 "$app" execs 2000 copy pingpong
  one cp.local wall_s env X=1 "$app" execs 2000 copy local
  one cp.poll.base wall_s env ZESIM_POLL_US=50 "$app" execs 2000 copy
  one cp.poll.on wall_s env ZESIM_POLL_US=50 "${col[@]}" "$app" execs 2000 copy
  one cp.poll.pp wall_s env ZESIM_POLL_US=50 "$app" execs 2000 copy pingpong
  fi
  if part mpi; then
  # MPI
  one mpi.base call_ns mpi 1 self
  one mpi.on call_ns mpi 1 self ZECOLL_OUTPUT="$work/t-%p" ZECOLL_SUMMARY=0 LD_PRELOAD="$lib"
  one mpi.off call_ns mpi 1 self LD_PRELOAD="$lib" ZECOLL_ENABLE=0
  one mpi.closed call_ns mpi 1 self ZECOLL_OUTPUT="$work/t-%p" ZECOLL_SUMMARY=0 LD_PRELOAD="$lib" ZECOLL_WINDOWS=signal:SIGUSR2
  one mpi.bigbuf call_ns mpi 1 self ZECOLL_OUTPUT="$work/t-%p" ZECOLL_SUMMARY=0 LD_PRELOAD="$lib" ZECOLL_BUFFER_EVENTS=8388608
  one mpi.smallbuf call_ns mpi 1 self ZECOLL_OUTPUT="$work/t-%p" ZECOLL_SUMMARY=0 LD_PRELOAD="$lib" ZECOLL_BUFFER_EVENTS=8192
  one mpi64.base call_ns mpi 1 self:8
  one mpi64.on call_ns mpi 1 self:8 ZECOLL_OUTPUT="$work/t-%p" ZECOLL_SUMMARY=0 LD_PRELOAD="$lib"
  one mpi2.base call_ns mpi 2 pair
  one mpi2.on call_ns mpi 2 pair ZECOLL_OUTPUT="$work/t-%p" ZECOLL_SUMMARY=0 LD_PRELOAD="$lib"
  fi
done

{
  row "measure (median)" "without" "with" "delta" "target"
  drow "ns per Append, regular list, API timing on" reg.base reg.on "<= +100 ns"
  drow "  API timing off" reg.base reg.apioff ""
  drow "  background drainer off" reg.base reg.nodrain "(experiment)"
  drow "  8M-event buffers (writer thread idle)" reg.base reg.bigbuf "(experiment)"
  drow "  8192-event buffers (in the L2 cache)" reg.base reg.smallbuf "(experiment)"
  drow "  with an app event (re-signal barrier)" reg.ev.base reg.ev.on "(info)"
  drow "  whole process on one core" reg.pin1.base reg.pin1.on "(experiment)"
  drow "  recording closed for the whole run" reg.base reg.closed "(issue 8)"
  drow "ns per Append, immediate list (executing)" imm.base imm.on "<= +150 ns"
  drow "  API timing off" imm.base imm.apioff ""
  drow "  device timing off (no injection)" imm.base imm.devoff "(experiment)"
  drow "  background drainer off" imm.base imm.nodrain "(experiment)"
  drow "  8M-event buffers (writer thread idle)" imm.base imm.bigbuf "(experiment)"
  drow "  with an app event (re-signal barrier)" imm.ev.base imm.ev.on "(info)"
  drow "  whole process on one core" imm.pin1.base imm.pin1.on "(experiment)"
  drow "  whole process on two cores" imm.pin2.base imm.pin2.on "(experiment)"
  drow "  no collector, the app busy 100 ns more per Append" imm.base imm.spin100 "(experiment)"
  drow "  recording closed for the whole run" imm.base imm.closed "(issue 8)"
  drow "  zesim engines poll 50 us (no wake-up per submission)" imm.poll.base imm.poll.on "(experiment)"
  drow "    … device timing off (no injection)" imm.poll.base imm.poll.devoff "(experiment)"
  drow "    … background drainer off" imm.poll.base imm.poll.nodrain "(experiment)"
  rrow "wall s, 20k kernels of 20 us" k.base k.on "<= x1.01"
  rrow "  recording closed for the whole run" k.base k.closed "<= x1.01 (issue 8)"
  rrow "wall s, 2000 resubmissions of a compute list" ex.base ex.on "(info)"
  rrow "wall s, 2000 resubmissions of a copy-only list" cp.base cp.on "<= x1.5"
  rrow "  4096 harvest buffers (no wait; a slot built per Execute)" cp.base cp.deep "(experiment)"
  rrow "  no collector, the round trip to a compute engine" cp.base cp.pp "(floor)"
  rrow "  no collector, the same commands, copy engine only" cp.base cp.local "(experiment)"
  rrow "  collector over that floor" cp.pp cp.on "(info)"
  rrow "  zesim engines poll 50 us (no wake-up per submission)" cp.poll.base cp.poll.on "(experiment)"
  rrow "    … no collector, the round trip (floor, polling)" cp.poll.base cp.poll.pp "(experiment)"
  drow "ns per MPI call, 1 rank (Irecv/Isend/Waitall)" mpi.base mpi.on "<= +60 ns"
  drow "  ZECOLL_ENABLE=0" mpi.base mpi.off ""
  drow "  recording closed for the whole run" mpi.base mpi.closed "(issue 8)"
  drow "  8M-event buffers (writer thread idle)" mpi.base mpi.bigbuf "(experiment)"
  drow "  8192-event buffers (in the L2 cache)" mpi.base mpi.smallbuf "(experiment)"
  drow "  messages of 8 doubles" mpi64.base mpi64.on "<= +60 ns"
  drow "ns per MPI call, 2 ranks exchanging" mpi2.base mpi2.on "(info)"
} | tee -a "$out/table.txt"

# Hardware counters, where the machine lets perf read them (a KVM guest may not).
perf=${BENCH_PERF:-$(command -v perf || true)}
if [ -n "$perf" ] && "$perf" stat -e cycles true >/dev/null 2>&1; then
  for v in base on; do
    e=(X=1); [ $v = on ] && e=("${col[@]}")
    "$perf" stat -x, -e task-clock,context-switches,cpu-migrations,cycles,instructions,cache-misses,LLC-load-misses \
      env "${e[@]}" "$app" appends "$imm" >/dev/null 2>"$out/perfstat.imm.$v.txt"
    "$perf" stat -x, -e task-clock,context-switches,cpu-migrations,cycles,instructions,cache-misses,LLC-load-misses \
      env "${e[@]}" "$app" regular "$appends" >/dev/null 2>"$out/perfstat.reg.$v.txt"
    rm -rf "$work"/t-*
  done
  ( cd "$work" && "$perf" c2c record -o "$work/c2c.data" -- env "${col[@]}" "$app" appends "$imm" >/dev/null 2>&1 &&
    "$perf" c2c report -i "$work/c2c.data" --stdio 2>&1 | head -150 >"$out/c2c.imm.txt" ) || echo "perf c2c unavailable" >"$out/c2c.imm.txt"
else
  echo "perf: no hardware counters here (or no perf)" >"$out/perfstat.txt"
  [ -n "$perf" ] && "$perf" stat -e cycles true >>"$out/perfstat.txt" 2>&1
fi
# Software events (context switches, migrations) and a profile sampled on the CPU clock, with
# call graphs: where the immediate-list Append's time goes, ours and the simulator's, kernel
# included. Works in a guest without a virtual PMU.
if [ -n "$perf" ] && part imm && "$perf" stat -e task-clock true >/dev/null 2>&1; then
  for v in base on nodrain; do
    e=(X=1); [ $v = on ] && e=("${col[@]}"); [ $v = nodrain ] && e=("${col[@]}" ZECOLL_DRAIN_INTERVAL_US=0)
    "$perf" stat -x, -e task-clock,context-switches,cpu-migrations,page-faults \
      env "${e[@]}" "$app" appends "$imm" >/dev/null 2>"$out/swstat.imm.$v.txt"
    rm -rf "$work"/t-*
  done
  for v in base on; do
    e=(X=1); [ $v = on ] && e=("${col[@]}")
    ( cd "$work" && "$perf" record -q -e cpu-clock -F 20000 -g -o "$work/p.data" -- env "${e[@]}" "$app" appends "$imm" >/dev/null 2>&1 &&
      "$perf" report -i "$work/p.data" --stdio --no-children --sort sym --percent-limit 0.7 -g none 2>/dev/null | grep -v '^$' | head -70 \
        >"$out/profile.imm.$v.txt"
      "$perf" report -i "$work/p.data" --stdio --no-children --sort comm,dso --percent-limit 0.5 -g none 2>/dev/null | grep -v '^$' | head -40 \
        >>"$out/profile.imm.$v.txt" ) || echo "perf record failed" >"$out/profile.imm.$v.txt"
    rm -rf "$work"/t-* "$work/p.data"
  done
fi
# The collector's own CPU time on the application thread per Append (perf samples on the CPU
# clock whose instruction lies in libzecoll.so, inside the timed batches: bench/thread_profile.py),
# apart from the simulator's reaction to it, which the wall-clock delta of an immediate list
# mostly measures. Medians of BENCH_REPS runs.
if [ -n "$perf" ] && "$perf" stat -e task-clock true >/dev/null 2>&1; then
  tp=$(dirname "${BASH_SOURCE[0]}")/thread_profile.py
  for r in $(seq "$reps"); do
    for m in "regular $appends" "appends $imm"; do
      for v in base on; do
        e=(X=1); [ $v = on ] && e=("${col[@]}")
        o=$(BENCH_PERF="$perf" "$py" "$tp" --period 50000 -- env "${e[@]}" "$app" $m 2>>"$out/stderr.txt")
        echo "tp.${m%% *}.$v $o" >>"$raw"
        vals[tp.${m%% *}.$v.own]+="$(field "$o" own_ns) "
        vals[tp.${m%% *}.$v.cpu]+="$(field "$o" cpu_ns) "
        rm -rf "$work"/t-*
      done
    done
  done
  {
    row "app-thread CPU ns per Append (perf, CPU-clock samples)" "without" "with" "delta" ""
    drow "  regular list: all" tp.regular.base.cpu tp.regular.on.cpu ""
    row "  regular list: in libzecoll.so (the collector's own)" "0" "$(med tp.regular.on.own)" "+$(med tp.regular.on.own)" "<= +100 ns"
    drow "  immediate list: all" tp.appends.base.cpu tp.appends.on.cpu ""
    row "  immediate list: in libzecoll.so (the collector's own)" "0" "$(med tp.appends.on.own)" "+$(med tp.appends.on.own)" "<= +150 ns"
  } | tee -a "$out/table.txt"
fi
echo "== raw values in $raw"
