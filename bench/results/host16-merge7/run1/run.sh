#!/usr/bin/env bash
# round 7 merge: fullnode lj+kern (new = lib/, round 6 = lib/alt0), then the regular list of 500,000 kernels
set -u
D=$(cd "$(dirname "$0")" && pwd)
OUT=${1:?OUT}
mkdir -p "$OUT"
nproc; uname -r
export LD_LIBRARY_PATH=$D/lib ZE_ENABLE_ALT_DRIVERS=$D/lib/libzesim.so
w=$(mktemp -d)
for r in 1 2 3 4 5; do
  for v in base new old; do
    case $v in
      base) e=(X=1) ;;
      new) e=(LD_PRELOAD=$D/lib/libzecoll.so ZECOLL_OUTPUT=$w/t-%p ZECOLL_SUMMARY=0) ;;
      old) e=(LD_PRELOAD=$D/lib/alt0/libzecoll.so ZECOLL_OUTPUT=$w/t-%p ZECOLL_SUMMARY=0) ;;
    esac
    echo "reglist $v $(env "${e[@]}" "$D/bin/zc_bench_app" reglist 500000 2>/dev/null | grep '^{')" | tee -a "$OUT/reglist.txt"
    rm -rf "$w"/t-*
  done
done
unset LD_LIBRARY_PATH ZE_ENABLE_ALT_DRIVERS
FULLNODE_PARTS="lj kern" FULLNODE_REPS=${REPS:-7} FULLNODE_LIBS="$D/lib/alt0/libzecoll.so" \
  bash "$D/../../bench/fullnode.sh" "$D" "$OUT/fn" > "$OUT/fn.log" 2>&1
cat "$OUT/fn/table.txt"
