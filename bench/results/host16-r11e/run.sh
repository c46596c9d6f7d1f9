#!/usr/bin/env bash
# host16-r11e (round 11): the Level Zero paths' prefetch alone (an Append's record and the drainer's device records;
# uncommitted, reverted after this run) against round 10's collector (alt0), zesim of 68e1bd2; carry build/dev-r11e
mkdir -p $OUT/fn
FULLNODE_REPS=20 FULLNODE_PARTS="kern" FULLNODE_LIBS="build/dev-r11e/lib/alt0/libzecoll.so" timeout 200 bash bench/fullnode.sh build/dev-r11e $OUT/fn > $OUT/fn/stdout.txt 2>&1
