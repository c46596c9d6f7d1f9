#!/usr/bin/env bash
# round 9 merge, run 3: LAMMPS alone (part lj), the new build beside round 8's (35d1385, lib/alt0),
# more repetitions than run 1
set -u
D=$(cd "$(dirname "$0")" && pwd)
B=$D/../../bench
OUT=${1:?OUT}
mkdir -p "$OUT"
FULLNODE_PARTS="lj" FULLNODE_REPS=${REPS:-19} FULLNODE_LIBS="$D/lib/alt0/libzecoll.so" \
  bash "$B/fullnode.sh" "$D" "$OUT/fn" > "$OUT/fn.log" 2>&1
cat "$OUT/fn/table.txt"
