#!/usr/bin/env bash
# host16-r12c (round 12): target 3's kernels by part: the collector (main 0b9ca8e, build/dev-r12a) with its Level
# Zero API regions off (noapi: the injection alone), its device timing off (nodev: the API regions alone), both off
# (pass: the wrappers alone), beside the default, no collector and the control (FULLNODE_KERN_ENVS)
mkdir -p $OUT/fn
FULLNODE_REPS=30 FULLNODE_PARTS="kern" \
  FULLNODE_KERN_ENVS="noapi=ZECOLL_API_TIMING=0 nodev=ZECOLL_DEVICE_TIMING=0 pass=ZECOLL_API_TIMING=0:ZECOLL_DEVICE_TIMING=0" \
  timeout 480 bash bench/fullnode.sh build/dev-r12a $OUT/fn > $OUT/fn/stdout.txt 2>&1
