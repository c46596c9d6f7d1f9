#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The writer pipeline behind a recorded MPI call, part by part, in instructions on all the
# process's threads (bench/README.md, "The writer pipeline per recorded MPI call"): the loop of
# bench/writer_ir.sh (zc_mpi_bench's 0-byte Irecv/Isend/Waitall(2) on 1 rank, one writer stage,
# the journal's flusher idle), with and without the collector, the slope between N and 2N
# iterations per MPI call (start-up and definitions cancel). Callgrind attributes inlined code
# to the file it comes from (zc_evt.h's normalisation inside loc_convert counts as conversion),
# so each part is a set of source files and shared objects (bench/ir_parts.py, shared with
# bench/lammps_ir.sh), summed over every thread:
#   wrappers     the application thread's MPI wrappers (mpi/, generated ones, their inline headers)
#   conversion   ticks to ns, clamping, counting, a call's run (zc_evt.h, zc_clock.*, zc_ev.h)
#   matching     the writer's MPI request matching (mpi/zc_mpi_resolve.c)
#   journal      the salvage journal's encoding, checksum and bookkeeping (zc_jrn_format.h, zc_journal.c)
#   otf2 enc     our own encoder of OTF2's event files (zc_otf2_enc.c; ZECOLL_OTF2_ENCODER=own, the default)
#   otf2 ours    records to OTF2 calls (zc_evt.c, zc_otf2.c, zc_marks.c)
#   otf2 lib     libotf2's encoding
#   handoff      buffers handed to and taken back from the writer (zc_writer.c, zc_loc.*), copies
#   wake-ups     locks, condition variables, system calls (libc's pthread and syscall wrappers)
#   mpi lib      Open MPI (statuses asked where the application ignores them, ...)
#   ze append    the Level Zero wrappers on the application thread (collector/ze: call, append, shim)
#   ze harvest   device records: drain, harvest, records, events, queues (collector/ze, the rest)
#   driver       the simulated driver (tests/zesim) and the loader: the collector's own driver calls
#   other        the rest (the dynamic linker, the program)
# --case kernels: zc_bench_app kernels N 0 (N back-to-back kernels on an in-order immediate list,
# one sync), per kernel; --case reglist: zc_bench_app reglist N (N kernels appended to a regular
# list, executed once, synchronised), per kernel (issue 22's device-record figures; the
# background drainer's passes follow the clock, so these vary by a few per cent between runs);
# --case reglist-ctl: zc_bench_app reglist N ctl (no collector, the app makes the collector's driver
# calls) minus reglist N: the simulated driver's floor under the regular list's figure.
#   usage: bench/pipeline_ir.sh BUILD_DIR [--case mpi|kernels|reglist|reglist-ctl] [--loops N] [--stages S] [--keep DIR]
set -uo pipefail
build=$(cd "${1:?usage: pipeline_ir.sh BUILD_DIR [--loops N] [--stages S]}" && pwd)
shift
loops=20000 stages=1 keep="" case=mpi
while [ $# -gt 0 ]; do
  case $1 in
    --loops) loops=$2; shift 2 ;;
    --stages) stages=$2; shift 2 ;;
    --keep) keep=$2; shift 2 ;;
    --case) case=$2; shift 2 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
command -v valgrind >/dev/null || { echo "pipeline_ir: valgrind is not installed (scripts/setup-deps.sh installs it)" >&2; exit 2; }
work=${keep:-$(mktemp -d)}
mkdir -p "$work"
[ -n "$keep" ] || trap 'rm -rf "$work"' EXIT

case $case in
  mpi) prog=("$build/bench/zc_mpi_bench" self) tail=0 ;;
  kernels) prog=("$build/bench/zc_bench_app" kernels) tail=0 ;;
  reglist) prog=("$build/bench/zc_bench_app" reglist) tail="" ;;
  reglist-ctl) prog=("$build/bench/zc_bench_app" reglist) tail="" ctl=ctl ;;
  *) echo "pipeline_ir: unknown case $case" >&2; exit 2 ;;
esac
ctl=${ctl:-}
run() { # run <out> <lib or ""> <loops>
  env ZE_ENABLE_ALT_DRIVERS="$build/tests/zesim/libzesim.so" LD_PRELOAD="$2" ZECOLL_OUTPUT="$work/trace-%p" \
    ZECOLL_SUMMARY=0 ZECOLL_WRITER_STAGES="$stages" ZECOLL_FLUSH_INTERVAL_MS=3600000 \
    valgrind --tool=callgrind --separate-threads=yes --callgrind-out-file="$1.%p" \
    "${prog[@]}" "$3" $tail ${4:-} >"$1.log" 2>&1 ||
    { echo "pipeline_ir: failed: lib=$2 loops=$3" >&2; tail -5 "$1.log" >&2; return 1; }
}
pids=()
for n in "$loops" $((2 * loops)); do
  run "$work/none.n$n" "" "$n" & pids+=($!)
  if [ -n "$ctl" ]; then run "$work/with.n$n" "" "$n" "$ctl" & pids+=($!)
  else run "$work/with.n$n" "$build/collector/libzecoll.so" "$n" & pids+=($!); fi
  [ ${#pids[@]} -ge "$(nproc)" ] && { wait "${pids[0]}" || exit 1; pids=("${pids[@]:1}"); }
done
for p in "${pids[@]}"; do wait "$p" || exit 1; done

/usr/bin/python3 - "$work" "$loops" "$case" "$0" <<'EOF'
import os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(sys.argv[4])))
from ir_parts import PARTS, load, slope
work, loops, case = sys.argv[1], int(sys.argv[2]), sys.argv[3]
mpi = case == 'mpi'
calls = 3 * loops if mpi else loops  # the slope: 2N - N iterations of 3 calls, or N kernels
records = 6 * loops if mpi else 0    # Irecv (its request in the call's record), Isend and its request, Waitall, 2 completions
def parts(prefix):
    return slope(load(f'{work}/{prefix}.n{loops}.*-*'), load(f'{work}/{prefix}.n{2 * loops}.*-*'), calls, detail, prefix)
detail = {}
none, withc = parts('none'), parts('with')
tot = sum(withc.values()) - sum(none.values())
unit = 'recorded MPI call' if mpi else 'kernel'
what = 'the control (no collector, its driver calls) minus the plain case' if case == 'reglist-ctl' else 'with minus without the collector'
print(f"instructions per {unit} on all threads, {what} ({case}; callgrind, slope "
      f"between {loops} and {2 * loops} iterations" + (f"; {records / calls:.2f} records per call)" if mpi else ")"))
print(f"{'part':<12} {'per ' + ('call' if mpi else 'kernel'):>10} {'per record' if mpi else '':>11} {'share':>7}")
rec = lambda d: f"{d * calls / records:>+11.1f}" if mpi else f"{'':>11}"
for p in [p for p, _ in PARTS] + ['other']:
    d = withc[p] - none[p]
    if mpi or abs(d) >= 0.05: print(f"{p:<12} {d:>+10.1f} {rec(d)} {100 * d / tot:>6.1f}%")
print(f"{'total':<12} {tot:>+10.1f} {rec(tot)}")
if os.environ.get('PIPELINE_DETAIL'):  # every function that moved, for a closer look
    rows = sorted(((v.get('with', 0) - v.get('none', 0)), k) for k, v in detail.items())
    for d, k in sorted(rows, key=lambda r: -abs(r[0])):
        if abs(d) >= 0.5: print(f"  {d:+9.1f} {k}")
EOF
