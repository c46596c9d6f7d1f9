#!/usr/bin/env bash
# round 9 merge: one device stream's records (devrate.sh: no collector, the control, this build with
# 1 and 2 writer stages, round 8's (35d1385) with 2), then fullnode lj + kern + reg (new = lib/, round 8 = lib/alt0)
set -u
D=$(cd "$(dirname "$0")" && pwd)
B=$D/../../bench
OUT=${1:?OUT}
mkdir -p "$OUT"
nproc; uname -r
DEVRATE_REPS=${DREPS:-3} DEVRATE_VARIANTS="base ctl s2 old2=$D/lib/alt0/libzecoll.so:ZECOLL_WRITER_STAGES=2 s1" \
  bash "$B/devrate.sh" "$D" "$OUT/devrate" > "$OUT/devrate.log" 2>&1
cat "$OUT/devrate/table.txt"
FULLNODE_PARTS="lj kern reg" FULLNODE_REPS=${REPS:-11} FULLNODE_LIBS="$D/lib/alt0/libzecoll.so" \
  bash "$B/fullnode.sh" "$D" "$OUT/fn" > "$OUT/fn.log" 2>&1
cat "$OUT/fn/table.txt"
