#!/usr/bin/env bash
# host16-r11c (round 11): main 68e1bd2's zesim (the doorbell change and lock-free event resets) against
# round 10's zesim (6737fc2, packed as lib/zesim10/), the collector as round 10 left it; pack:
# bench/fullnode_pack.sh build/m build/dev-r11c; carry build/dev-r11c. kern_cpu.py: CPU per kernel per thread.
# (the zesim10 table was printed in the command's output: its table file did not come back)
mkdir -p $OUT/new $OUT/old $OUT/kc
FULLNODE_REPS=14 FULLNODE_PARTS="kern kernpin kernpoll" bash bench/fullnode.sh build/dev-r11c $OUT/new > $OUT/new/stdout.txt 2>&1
FULLNODE_ZESIM=$PWD/build/dev-r11c/lib/zesim10/libzesim.so FULLNODE_REPS=14 FULLNODE_PARTS="kern" bash bench/fullnode.sh build/dev-r11c $OUT/old > $OUT/old/stdout.txt 2>&1
KERN_CPU_REPS=7 timeout 200 python3 bench/kern_cpu.py build/dev-r11c $OUT/kc > $OUT/kc/stdout.txt 2>&1
