#!/usr/bin/env bash
# round 10, ablation of LAMMPS's cost by part (main a28ae82's behaviour = lib/): recording off,
# the journal off, one buffer for the whole run (no handoff during it) with the journal off, small buffers
set -u
D=$(cd "$(dirname "$0")" && pwd)
B=$D/../../bench
OUT=${1:?OUT}
mkdir -p "$OUT"
nproc; uname -r; cat /sys/devices/system/clocksource/clocksource0/current_clocksource
L=$D/lib/libzecoll.so
FULLNODE_PARTS="lj" FULLNODE_REPS=${REPS:-15} \
FULLNODE_PEERS="off=$L:ZECOLL_RECORD_MPI=0 j0=$L:ZECOLL_FLUSH_INTERVAL_MS=0 bigj0=$L:ZECOLL_BUFFER_EVENTS=4194304:ZECOLL_FLUSH_INTERVAL_MS=0 b1k=$L:ZECOLL_BUFFER_EVENTS=1024" \
  bash "$B/fullnode.sh" "$D" "$OUT/fn" > "$OUT/fn.log" 2>&1
cat "$OUT/fn/table.txt"
