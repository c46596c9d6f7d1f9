#!/usr/bin/env bash
# host16-r12d (round 12): target 3's kernels without the background drainer during the loop (ZECOLL_DRAIN_INTERVAL_US=0:
# records collected only at the final synchronisation), with and without the API regions; main 0b9ca8e (build/dev-r12a)
mkdir -p $OUT/fn
FULLNODE_REPS=30 FULLNODE_PARTS="kern" \
  FULLNODE_KERN_ENVS="nodrain=ZECOLL_DRAIN_INTERVAL_US=0 noapi=ZECOLL_API_TIMING=0 noapind=ZECOLL_API_TIMING=0:ZECOLL_DRAIN_INTERVAL_US=0" \
  timeout 400 bash bench/fullnode.sh build/dev-r12a $OUT/fn > $OUT/fn/stdout.txt 2>&1
