#!/usr/bin/env bash
# host16-r11d (round 11): three collectors beside no collector, zesim of 68e1bd2: lib/ = 8edc309 (a location's
# next two lines prefetched for writing at every publish, and the inbox's next entry), alt0 = 245f43c (the inbox's
# alone; built from 8edc309 with that commit reverted), alt1 = round 10's collector (host16-r11c's pack).
# Pack: bench/fullnode_pack.sh build/m build/dev-r11d ALT0 ALT1, alt libraries stripped of debug info; carry build/dev-r11d
mkdir -p $OUT/fn
FULLNODE_REPS=34 FULLNODE_PARTS="ljhalf kern" FULLNODE_LIBS="build/dev-r11d/lib/alt0/libzecoll.so build/dev-r11d/lib/alt1/libzecoll.so" \
  FULLNODE_HALF="base/with0 with1/with0" timeout 575 bash bench/fullnode.sh build/dev-r11d $OUT/fn > $OUT/fn/stdout.txt 2>&1
