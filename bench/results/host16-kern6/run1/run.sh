#!/usr/bin/env bash
# s6-22kern device run: kern (fullnode.sh), per-thread CPU (kern_cpu.py), regular list of 500,000 kernels.
set -u
D=$(cd "$(dirname "$0")" && pwd)
OUT=${1:?OUT}
mkdir -p "$OUT"
nproc; uname -r
FULLNODE_PARTS=kern FULLNODE_REPS=7 FULLNODE_LIBS="$D/lib/alt0/libzecoll.so $D/lib/alt1/libzecoll.so" \
  bash "$D/fullnode.sh" "$D" "$OUT/fn" > "$OUT/fn.log" 2>&1
tail -25 "$OUT/fn/table.txt"
KERN_CPU_REPS=5 KERN_CPU_VARIANTS="base ctl with adapt=$D/lib/alt0/libzecoll.so fifo=$D/lib/alt1/libzecoll.so main20ms=$D/lib/libzecoll.so:ZECOLL_DRAIN_INTERVAL_US=20000" \
  python3 "$D/kern_cpu.py" "$D" "$OUT/kc" > "$OUT/kc.log" 2>&1
cat "$OUT/kc/table.txt"
# regular list: 500,000 kernels appended, executed once, synchronised (run_s)
export LD_LIBRARY_PATH=$D/lib ZE_ENABLE_ALT_DRIVERS=$D/lib/libzesim.so
w=$(mktemp -d)
for r in 1 2 3; do
  for v in base main adapt; do
    case $v in
      base) e=(X=1) ;;
      main) e=(LD_PRELOAD=$D/lib/libzecoll.so ZECOLL_OUTPUT=$w/t-%p ZECOLL_SUMMARY=0) ;;
      adapt) e=(LD_PRELOAD=$D/lib/alt0/libzecoll.so ZECOLL_OUTPUT=$w/t-%p ZECOLL_SUMMARY=0) ;;
    esac
    echo "reglist $v $(env "${e[@]}" "$D/bin/zc_bench_app" reglist 500000 2>/dev/null | grep '^{')" | tee -a "$OUT/reglist.txt"
    rm -rf "$w"/t-*
  done
done
