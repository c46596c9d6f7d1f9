#!/usr/bin/env bash
# host16-r12a (round 12): LAMMPS by part at once (ljhalf): the collector (main 0b9ca8e) over none, MPI recording
# off over none, and the writer idle through the loop over the collector: alt0 = the same code plus an ablation
# (ZC_ABL_PREFAULT=1: each event buffer zeroed when allocated, so that one 4 M-event buffer takes no page fault
# while recording; the journal off: nothing reaches the writer until the end). Ablation patch: ablate-prefault.patch
mkdir -p $OUT/fn
FULLNODE_REPS=26 FULLNODE_PARTS="ljhalf" FULLNODE_LIBS="build/dev-r12a/lib/alt0/libzecoll.so" \
  FULLNODE_HALF="base/with0 base/recoff with0/with1.idle" \
  FULLNODE_HALF_ENVS="recoff=ZECOLL_RECORD_MPI=0 idle=ZECOLL_BUFFER_EVENTS=4194304:ZECOLL_FLUSH_INTERVAL_MS=0:ZC_ABL_PREFAULT=1" \
  timeout 560 bash bench/fullnode.sh build/dev-r12a $OUT/fn > $OUT/fn/stdout.txt 2>&1
