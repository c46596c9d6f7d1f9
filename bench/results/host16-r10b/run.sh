#!/usr/bin/env bash
# round 10 merged (s10-house, s10-enc) = lib/, beside main a28ae82 (round 9 = lib/alt0): LAMMPS
# bound/unbound with loop time and steal, recording off and one buffer with the journal off as
# parts of the new build, then the back-to-back kernels and the regular list with their controls
set -u
D=$(cd "$(dirname "$0")" && pwd)
B=$D/../../bench
OUT=${1:?OUT}
mkdir -p "$OUT"
nproc
L=$D/lib/libzecoll.so
FULLNODE_PARTS="lj kern reg" FULLNODE_REPS=${REPS:-12} FULLNODE_LIBS="$D/lib/alt0/libzecoll.so" \
FULLNODE_PEERS="off=$L:ZECOLL_RECORD_MPI=0 bigj0=$L:ZECOLL_BUFFER_EVENTS=4194304:ZECOLL_FLUSH_INTERVAL_MS=0" \
  bash "$B/fullnode.sh" "$D" "$OUT/fn" > "$OUT/fn.log" 2>&1
cat "$OUT/fn/table.txt"
