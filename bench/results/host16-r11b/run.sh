#!/usr/bin/env bash
# host16-r11b (round 11): the pack of host16-r11a (the collector as round 10 left it, zesim with the doorbell
# change f903b30, not yet 68e1bd2's lock-free resets); fullnode.sh of 4e35d13 (FULLNODE_HALF pairs)
mkdir -p $OUT/fn
FULLNODE_REPS=26 FULLNODE_PARTS="ljhalf kernpoll" FULLNODE_HALF="base/with0 with0/buf8k with0/nojrn" \
  FULLNODE_HALF_ENVS="buf8k=ZECOLL_BUFFER_EVENTS=8192 nojrn=ZECOLL_FLUSH_INTERVAL_MS=0" \
  timeout 560 bash bench/fullnode.sh build/dev-r11a $OUT/fn > $OUT/fn/stdout.txt 2>&1
