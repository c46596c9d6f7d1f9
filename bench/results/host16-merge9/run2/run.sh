#!/usr/bin/env bash
# round 9 merge, run 2: LAMMPS alone (part lj), the new build with more repetitions, beside it as
# further variants the same build with the journal off, with its archive on tmpfs (/dev/shm: the
# bytes written without a disk's write-back), and with MPI recording off
set -u
D=$(cd "$(dirname "$0")" && pwd)
B=$D/../../bench
OUT=${1:?OUT}
mkdir -p "$OUT"
L=$D/lib/libzecoll.so
FULLNODE_PARTS="lj" FULLNODE_REPS=${REPS:-13} \
  FULLNODE_PEERS="jrn0=$L:ZECOLL_FLUSH_INTERVAL_MS=0 shm=$L:ZECOLL_OUTPUT=/dev/shm/zt-%p:ZECOLL_SUMMARY=0 rec0=$L:ZECOLL_RECORD_MPI=0" \
  bash "$B/fullnode.sh" "$D" "$OUT/fn" > "$OUT/fn.log" 2>&1
rm -rf /dev/shm/zt-*
cat "$OUT/fn/table.txt"
