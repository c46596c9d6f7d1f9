#!/usr/bin/env bash
# s6-22kern device run 2: main (lib/) against the final build (lib/alt0): kern, kern_cpu, regular list.
set -u
D=$(cd "$(dirname "$0")" && pwd)
OUT=${1:?OUT}
mkdir -p "$OUT"
FULLNODE_PARTS=kern FULLNODE_REPS=5 FULLNODE_LIBS="$D/lib/alt0/libzecoll.so" bash "$D/fullnode.sh" "$D" "$OUT/fn" > "$OUT/fn.log" 2>&1
tail -12 "$OUT/fn/table.txt"
KERN_CPU_REPS=5 KERN_CPU_VARIANTS="base ctl with final=$D/lib/alt0/libzecoll.so" python3 "$D/kern_cpu.py" "$D" "$OUT/kc" > "$OUT/kc.log" 2>&1
cat "$OUT/kc/table.txt"
export LD_LIBRARY_PATH=$D/lib ZE_ENABLE_ALT_DRIVERS=$D/lib/libzesim.so
w=$(mktemp -d)
for r in 1 2 3 4 5; do
  vs="base main final"; [ $((r % 2)) = 0 ] && vs="final main base"
  for v in $vs; do
    case $v in
      base) e=(X=1) ;;
      main) e=(LD_PRELOAD=$D/lib/libzecoll.so ZECOLL_OUTPUT=$w/t-%p ZECOLL_SUMMARY=0) ;;
      final) e=(LD_PRELOAD=$D/lib/alt0/libzecoll.so ZECOLL_OUTPUT=$w/t-%p ZECOLL_SUMMARY=0) ;;
    esac
    echo "reglist $v $(env "${e[@]}" "$D/bin/zc_bench_app" reglist 500000 2>/dev/null | grep '^{')" >> "$OUT/reglist.txt"
    rm -rf "$w"/t-*
  done
done
python3 - "$OUT/reglist.txt" <<'PY'
import json, statistics, sys
v = {}
for l in open(sys.argv[1]):
    _, name, js = l.split(' ', 2)
    v.setdefault(name, []).append(json.loads(js)['run_s'])
b = statistics.median(v['base'])
for k, xs in v.items():
    m = statistics.median(xs)
    print(f"reglist 500000 {k:6} median run_s {m:.4f}  per kernel over base {(m - b) / 5e5 * 1e9:+.0f} ns  ({' '.join(f'{x:.3f}' for x in xs)})")
PY
