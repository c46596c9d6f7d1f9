#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# zecoll-aggregate's wall time with 1, 2, 4, ... reader ranks on one large synthetic archive, side
# by side in one run (issue 24's target: the 1 -> 2 reader speed-up >= 1.6x). Not part of CI.
#   - zecoll-synth writes the archive (BENCH_RANKS ranks x BENCH_QUEUES queues x BENCH_OPS
#     operations, with clock skews and the planted wait states of --waits, so the wait-state
#     analysis runs as on a real job);
#   - every reader count K in BENCH_READERS runs `mpirun -np K zecoll-aggregate ARCHIVE --json`
#     (K = 1 through mpirun too: every count pays the same launcher), BENCH_REPS rounds, the counts'
#     order rotated each round (1 2 4 / 2 4 1 / 4 1 2: drift of the machine falls on all of them);
#   - per K: the median wall of the whole command, of zecoll-aggregate's own total (its --stats,
#     without mpirun's start) and of the slowest reader's reading phase; the speed-up over K = 1
#     as the ratio of medians and as the median of each round's ratio; every report byte-identical
#     to K = 1's.
# Readers beyond the host's cores are skipped. Wall times on a shared machine include waiting for
# the CPUs: run it on a quiet host.
#
# usage: bench/aggregate_readers.sh [OUT_FILE]
#   BENCH_BIN=DIR     prebuilt binaries for a host without Debian's OTF2 (the 16-core host: Ubuntu,
#                     Open MPI 4.1.6), packed here by
#                       ../shared/tools/device-pack.sh DIR build/rel/bin/zecoll-aggregate build/rel/bin/zecoll-synth
#                     (DIR/bin, DIR/lib: libotf2; DIR inside the checkout, git-ignored, carried);
#                     else BENCH_BUILD (default build/rel) is used as built
#   BENCH_RANKS=4096 BENCH_QUEUES=4 BENCH_OPS=1000 BENCH_READERS="1 2 4 8" BENCH_REPS=3
#   BENCH_WORK=DIR (default: a temporary folder, removed at the end)  BENCH_MPIRUN=mpirun
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
ranks=${BENCH_RANKS:-4096} queues=${BENCH_QUEUES:-4} ops=${BENCH_OPS:-1000}
readers=${BENCH_READERS:-1 2 4 8} reps=${BENCH_REPS:-3}
out=${1:-/dev/null}
if [ -n "${BENCH_BIN:-}" ]; then
  bin=$(cd "$BENCH_BIN" && pwd)
  export LD_LIBRARY_PATH=$bin/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  agg=$bin/bin/zecoll-aggregate synth=$bin/bin/zecoll-synth
else
  build=${BENCH_BUILD:-$root/build/rel}
  agg=$build/bin/zecoll-aggregate synth=$build/bin/zecoll-synth
fi
for b in "$agg" "$synth"; do
  [ -x "$b" ] || { echo "aggregate_readers: $b not found (build it, or set BENCH_BIN / BENCH_BUILD)" >&2; exit 2; }
done
mpirun=("${BENCH_MPIRUN:-mpirun}" --oversubscribe -x LD_LIBRARY_PATH)
[ "$(id -u)" = 0 ] && mpirun+=(--allow-run-as-root)
tmp=
if [ -n "${BENCH_WORK:-}" ]; then work=$BENCH_WORK; else tmp=$(mktemp -d); work=$tmp; fi
trap '[ -z "$tmp" ] || rm -rf "$tmp"' EXIT
rm -rf "$work/archive" "$work"/K*
mkdir -p "$work"
cores=$(nproc)
ks=()
for k in $readers; do
  if [ "$k" -le "$cores" ]; then ks+=("$k"); else echo "aggregate_readers: $k readers skipped ($cores cores)" >&2; fi
done
[ "${ks[0]:-}" = 1 ] || { echo "aggregate_readers: BENCH_READERS must start with 1" >&2; exit 2; }

now() { date +%s.%N; }
py() { python3 -c "$@"; }
{
  echo "zecoll-aggregate, 1 -> K readers ($cores cores, load $(cut -d' ' -f1-3 /proc/loadavg), $(date -u '+%F %T') UTC, $(uname -n))"
  t0=$(now)
  "$synth" --out "$work/archive" --ranks "$ranks" --queues "$queues" --ops "$ops" --skew --waits
  echo "archive: $ranks ranks x $queues queues x $ops ops, --skew --waits: $(du -sm "$work/archive" | cut -f1) MiB," \
       "written in $(py "print(f'{$(now) - $t0:.1f}')") s"
} | tee "$out"

# one run: wall of the command, zecoll-aggregate's total and its slowest reader's reading phase
declare -A wall total readw
for rep in $(seq "$reps"); do
  n=${#ks[@]}
  for j in $(seq 0 $((n - 1))); do
    k=${ks[$(((j + rep - 1) % n))]}
    d=$work/K$k
    mkdir -p "$d"
    t0=$(now)
    "${mpirun[@]}" -np "$k" "$agg" "$work/archive" -q --no-progress --stats --json "$d/report.json" 2> "$d/stats.txt"
    w=$(py "print(f'{$(now) - $t0:.3f}')")
    read -r tt rw < <(py "
import re,sys
tot=rd=0.0
for l in open(sys.argv[1]):
    m=re.search(r'stats: total ([0-9.]+) s', l)
    if m: tot=float(m.group(1))
    m=re.search(r'stats: reader \d+: \d+ events in ([0-9.]+) s', l)
    if m: rd=max(rd,float(m.group(1)))
print(tot, rd)" "$d/stats.txt")
    wall[$k,$rep]=$w total[$k,$rep]=$tt readw[$k,$rep]=$rw
    same=same
    [ "$k" = 1 ] || cmp -s "$work/K1/report.json" "$d/report.json" || same=DIFFERENT
    [ "$k" = 1 ] || [ ! -e "$work/K1/report.json" ] || [ "$same" = same ] ||
      echo "aggregate_readers: the report of $k readers differs from 1 reader's" >&2
    echo "round $rep: $k reader(s): wall $w s, zecoll-aggregate total $tt s, slowest reading phase $rw s" | tee -a "$out"
  done
done

py "
import statistics as st, sys
ks=[int(x) for x in sys.argv[1].split()]; reps=int(sys.argv[2])
def get(s):
    return {(int(a), int(b)): float(v) for a, b, v in (x.split(',') for x in s.split())}
W, T, R = get(sys.argv[3]), get(sys.argv[4]), get(sys.argv[5])
print()
print(f\"{'readers':>8} {'wall s':>9} {'total s':>9} {'reading s':>10} {'speed-up wall':>14} {'total':>7} {'reading':>8} {'per-round wall':>15}\")
med = lambda D, k: st.median(D[(k, r)] for r in range(1, reps + 1))
for k in ks:
    rr = st.median(W[(1, r)] / W[(k, r)] for r in range(1, reps + 1))
    print(f'{k:>8} {med(W, k):>9.2f} {med(T, k):>9.2f} {med(R, k):>10.2f} {med(W, 1) / med(W, k):>13.2f}x '
          f'{med(T, 1) / med(T, k):>6.2f}x {med(R, 1) / max(med(R, k), 1e-9):>7.2f}x {rr:>14.2f}x')
if 2 in ks:
    s = med(W, 1) / med(W, 2)
    print(f'1 -> 2 readers, whole command (wall, medians of {reps}): {s:.2f}x  (target >= 1.6x: {\"met\" if s >= 1.6 else \"NOT MET\"})')
    s = med(T, 1) / med(T, 2)
    print(f'1 -> 2 readers, zecoll-aggregate without the launcher (medians): {s:.2f}x  (target >= 1.6x: {\"met\" if s >= 1.6 else \"NOT MET\"})')
" "${ks[*]}" "$reps" \
  "$(for x in "${!wall[@]}"; do echo "$x,${wall[$x]}"; done)" \
  "$(for x in "${!total[@]}"; do echo "$x,${total[$x]}"; done)" \
  "$(for x in "${!readw[@]}"; do echo "$x,${readw[$x]}"; done)" | tee -a "$out"
for k in "${ks[@]}"; do
  [ "$k" = 1 ] && continue
  if cmp -s "$work/K1/report.json" "$work/K$k/report.json"; then r="byte-identical"; else r="DIFFERENT"; fi
  echo "report of $k readers: $r to 1 reader's" | tee -a "$out"
done
