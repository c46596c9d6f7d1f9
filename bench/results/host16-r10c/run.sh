#!/usr/bin/env bash
# round 10 merged build alone: LAMMPS bound/unbound with loop time and steal, MPI recording off as a part; more repetitions
set -u
D=$(cd "$(dirname "$0")" && pwd)
B=$D/../../bench
OUT=${1:?OUT}
mkdir -p "$OUT"
L=$D/lib/libzecoll.so
FULLNODE_PARTS="lj" FULLNODE_REPS=${REPS:-22} FULLNODE_PEERS="off=$L:ZECOLL_RECORD_MPI=0" \
  bash "$B/fullnode.sh" "$D" "$OUT/fn" > "$OUT/fn.log" 2>&1
cat "$OUT/fn/table.txt"
