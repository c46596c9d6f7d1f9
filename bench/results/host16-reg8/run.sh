#!/usr/bin/env bash
# issue 22 round 8 (s8-22reg): the regular list of 500,000 kernels and the in-order list, side by
# side: this branch's collector (lib/) and main's (lib/alt0), no collector, and the controls;
# first with this branch's zesim (waits by event), then the same with main's zesim (old/).
set -u
D=$(cd "$(dirname "$0")" && pwd)
OUT=${1:?OUT}
mkdir -p "$OUT"
nproc; uname -r
FULLNODE_PARTS="reg kern" FULLNODE_REPS=${REPS:-7} FULLNODE_LIBS="$D/lib/alt0/libzecoll.so" \
  bash "$D/fullnode.sh" "$D" "$OUT/new" > "$OUT/new.log" 2>&1
cat "$OUT/new/table.txt"
# main's zesim: a copy of the folder with old/libzesim.so in lib/
O=$(mktemp -d)
cp -a "$D/bin" "$D/lib" "$O/" && cp "$D/old/libzesim.so" "$O/lib/libzesim.so"
FULLNODE_PARTS="reg kern" FULLNODE_REPS=${REPS_OLD:-5} FULLNODE_LIBS="$O/lib/alt0/libzecoll.so" \
  bash "$D/fullnode.sh" "$O" "$OUT/oldsim" > "$OUT/oldsim.log" 2>&1
cat "$OUT/oldsim/table.txt"
rm -rf "$O"
