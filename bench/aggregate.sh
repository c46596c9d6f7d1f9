#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# zecoll-aggregate at scale, measured side by side in one run (not part of CI):
#   1. throughput of one reader rank against a reader that only decodes the same archive
#      (bench/zc_agg_decode: same per-process, time-merged OTF2 reading, callbacks that only count),
#      events per CPU second of the reading phase, median of BENCH_REPS alternating runs on a
#      synthetic job of BENCH_RANKS ranks x 4 queues x 1000 operations             target >= 0.8x
#   2. a 4096-rank x 4-queue synthetic job (~1.1e8 events, zecoll-synth) aggregated with 1 and
#      with 2 reader ranks (mpirun -np 2) on this machine: wall time with 2 readers  target < 10 min
#      speed-up 1 -> 2 readers: wall of the whole command, and of the reading phase
#      (the slowest reader)                                                        target >= 1.6x
#   and the peak memory (RSS) of each reader rank.
#   3. with BENCH_READERS="1 2 4 8" (a many-core host), the big job with each reader count:
#      speed-up over 1 reader, byte-identical reports.
# Wall times on a shared 2-core VM include waiting for the CPU; CPU seconds are given beside them.
# Usage: bench/aggregate.sh   (BENCH_REPS=3 BENCH_RANKS=256 BENCH_BIG_RANKS=4096 BENCH_WORK=dir
#                              BENCH_READERS="1 2" BENCH_BIG_REPS=1 BENCH_PIN=cpu)
# On a host without the Debian packages (the 16-core host): BENCH_BIN=DIR runs the prebuilt
# binaries of a folder packed by device-pack.sh (DIR/bin: zecoll-aggregate zecoll-synth
# zc_agg_decode, DIR/lib: libotf2 ...) with the host's mpirun.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
reps=${BENCH_REPS:-3}
ranks=${BENCH_RANKS:-256}
big=${BENCH_BIG_RANKS:-4096}
readers=${BENCH_READERS:-1 2}
big_reps=${BENCH_BIG_REPS:-1}
# BENCH_PIN=CPU: the single-reader runs (part 1 and the 1-reader runs of part 2) on that CPU only
pin=${BENCH_PIN:+taskset -c $BENCH_PIN}
if [ -n "${BENCH_BIN:-}" ]; then
  bin=$(cd "$BENCH_BIN" && pwd)
  export LD_LIBRARY_PATH=$bin/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  agg="$bin/bin/zecoll-aggregate" synth="$bin/bin/zecoll-synth" decode="$bin/bin/zc_agg_decode"
  work=${BENCH_WORK:-$(mktemp -d)/aggregate-bench}
else
  "$root/scripts/setup-deps.sh"
  build=${BENCH_BUILD:-$root/build/bench-release}
  work=${BENCH_WORK:-$build/aggregate-bench}
  cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build "$build" -j"$(nproc)" --target zecoll-aggregate zecoll-synth zc_agg_decode >/dev/null
  agg="$build/bin/zecoll-aggregate"
  synth="$build/bin/zecoll-synth"
  decode="$build/bench/zc_agg_decode"
fi
mpirun=(mpirun --oversubscribe --bind-to none)
[ "$(id -u)" = 0 ] && mpirun+=(--allow-run-as-root)
rm -rf "$work"
mkdir -p "$work"

py() { /usr/bin/python3 -c "$@"; }
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
now() { date +%s.%N; }
# stats <stderr file> <field>: from zecoll-aggregate --stats lines
stat_sum() { # events of all readers, slowest reader's CPU and wall seconds (reading phase), max RSS, RSS list
  py "
import re,sys
ev=cpu=wall=0; rss=[]
for l in open(sys.argv[1]):
    m=re.search(r'reader (\d+): (\d+) events in ([0-9.]+) s, ([0-9.]+) s CPU .*peak RSS (\d+) KiB', l)
    if m: ev+=int(m.group(2)); wall=max(wall,float(m.group(3))); cpu=max(cpu,float(m.group(4))); rss.append(int(m.group(5)))
print(ev, cpu, wall, max(rss) if rss else 0, ','.join(str(r) for r in rss))" "$1"
}

echo "zecoll-aggregate benchmark ($(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), $(date -u +%F))"
t0=$(now)
"$synth" --out "$work/medium" --ranks "$ranks" --queues 4 --ops 1000 --off
tgen=$(py "print(f'{$(now) - $t0:.1f}')")
size=$(du -sm "$work/medium" | cut -f1)

# 1: one reader against the decode-only reader, alternating runs
dec=() one=() rss1=()
for _ in $(seq "$reps"); do
  out=$($pin "$decode" "$work/medium")
  dec+=("$(py "import json,sys; print(json.loads(sys.argv[1])['events_per_cpu_s'])" "$out")")
  events=$(py "import json,sys; print(json.loads(sys.argv[1])['events'])" "$out")
  $pin "$agg" "$work/medium" -q --stats 2> "$work/s1.txt"
  read -r ev c _ mx _ < <(stat_sum "$work/s1.txt")
  one+=("$(py "print($ev / $c if $c > 0 else 0)")"); rss1+=("$mx")
done
md=$(median "${dec[@]}") m1=$(median "${one[@]}")
ratio=$(py "print(f'{$m1 / $md:.2f}')")

# 2: the big job, with 1 and with 2 readers (alternating, median of BENCH_BIG_REPS runs)
t0=$(now)
"$synth" --out "$work/big" --ranks "$big" --queues 4 --ops 1000
tbig_gen=$(py "print(f'{$(now) - $t0:.0f}')")
bigsize=$(du -sm "$work/big" | cut -f1)
w1=() w2=() r1=() r2=() c1=() c2=() same="byte-identical"
for _ in $(seq "$big_reps"); do
  t0=$(now)
  $pin "$agg" "$work/big" -q --stats --json "$work/big1.json" 2> "$work/sbig1.txt"
  w1+=("$(py "print(f'{$(now) - $t0:.2f}')")")
  t0=$(now)
  "${mpirun[@]}" -x LD_LIBRARY_PATH -np 2 "$agg" "$work/big" -q --stats --json "$work/big.json" 2> "$work/sbig.txt"
  w2+=("$(py "print(f'{$(now) - $t0:.2f}')")")
  cmp -s "$work/big1.json" "$work/big.json" || same="DIFFERENT"
  read -r bev1 bcpu1 bwall1 brss1 _ < <(stat_sum "$work/sbig1.txt")
  read -r bev bcpu bwall brss brss_all < <(stat_sum "$work/sbig.txt")
  r1+=("$bwall1") r2+=("$bwall") c1+=("$bcpu1") c2+=("$bcpu")
done
bcpu1=$(median "${c1[@]}") bcpu=$(median "${c2[@]}")
tbig1=$(median "${w1[@]}") tbig=$(median "${w2[@]}") bwall1=$(median "${r1[@]}") bwall=$(median "${r2[@]}")
speedup=$(py "print(f'{$tbig1 / $tbig:.2f}')")
speedup_read=$(py "print(f'{$bwall1 / $bwall:.2f}')")

verdict() { py "print('met' if $1 else 'NOT MET')"; }
echo
printf '%-62s %16s %16s %10s\n' "measure" "value" "target" ""
printf '%-62s %16s\n' "medium archive: $ranks ranks x 4 queues, $events events, $size MiB (written in ${tgen} s)" ""
printf '%-62s %16.0f\n' "  decode-only reader: events per CPU second (median)" "$md"
printf '%-62s %16.0f\n' "  zecoll-aggregate, 1 reader: events per CPU second (median)" "$m1"
printf '%-62s %16s %16s %10s\n' "  ratio aggregate / decode-only" "${ratio}x" ">= 0.8x" "$(verdict "$ratio >= 0.8")"
printf '%-62s %16s\n' "  peak RSS of the reader (KiB)" "$(median "${rss1[@]}")"
printf '%-62s %16s\n' "big archive: $big ranks x 4 queues, $bev events, $bigsize MiB (written in ${tbig_gen} s)" ""
[ "$big_reps" = 1 ] || printf '%-62s %16s\n' "  (median of $big_reps alternating runs of 1 and 2 readers)" ""
printf '%-62s %16s\n' "  1 reader: wall (s); reading phase wall / CPU (s)" "$tbig1; $bwall1 / $bcpu1"
printf '%-62s %16s %16s %10s\n' "  2 readers: wall (s)" "$tbig" "< 600" "$(verdict "$tbig < 600")"
printf '%-62s %16s\n' "  2 readers: slowest reader's reading wall / CPU (s)" "$bwall / $bcpu"
printf '%-62s %16s %16s %10s\n' "  speed-up 1 -> 2 readers, whole command (wall)" "${speedup}x" ">= 1.6x" "$(verdict "$speedup >= 1.6")"
printf '%-62s %16s %16s %10s\n' "  speed-up 1 -> 2 readers, reading phase (wall)" "${speedup_read}x" ">= 1.6x" "$(verdict "$speedup_read >= 1.6")"
printf '%-62s %16s\n' "  reports of 1 and 2 readers" "$same"
printf '%-62s %16s\n' "  peak RSS per reader, 1 reader / 2 readers (KiB)" "$brss1 / $brss_all"

# 3: more reader counts (a many-core host)
for k in $readers; do
  [ "$k" = 1 ] || [ "$k" = 2 ] && continue
  t0=$(now)
  "${mpirun[@]}" -x LD_LIBRARY_PATH -np "$k" "$agg" "$work/big" -q --stats --json "$work/bigk.json" 2> "$work/sbigk.txt"
  tk=$(py "print(f'{$(now) - $t0:.1f}')")
  cmp -s "$work/big1.json" "$work/bigk.json" && samek="byte-identical" || samek="DIFFERENT"
  read -r _ kcpu kwall krss _ < <(stat_sum "$work/sbigk.txt")
  printf '%-62s %16s\n' "  $k readers: wall (s); slowest reading wall / CPU (s); report" "$tk; $kwall / $kcpu; $samek"
  printf '%-62s %16s\n' "  speed-up 1 -> $k readers, whole command / reading phase (wall)" \
    "$(py "print(f'{$tbig1 / $tk:.2f}x / {$bwall1 / $kwall:.2f}x')")"
  printf '%-62s %16s\n' "  peak RSS per reader, $k readers (KiB, max)" "$krss"
done
rm -rf "$work/medium" "$work/big"
