#!/usr/bin/env bash
# host16-r12g (round 12): LAMMPS at once (ljhalf), the final code of this round (0ad6420: the collector's threads on
# the application's CPUs, with its guard) against round 11's (alt0 = main 0b9ca8e), and each against no collector
mkdir -p $OUT/fn
FULLNODE_REPS=24 FULLNODE_PARTS="ljhalf" FULLNODE_LIBS="build/dev-r12g/lib/alt0/libzecoll.so" \
  FULLNODE_HALF="with1/with0 base/with0" \
  timeout 200 bash bench/fullnode.sh build/dev-r12g $OUT/fn > $OUT/fn/stdout.txt 2>&1
