#!/usr/bin/env bash
# host16-r11a (round 11): main ab52ca3 (zesim's doorbell change; the collector as round 10 left it),
# packed by bench/fullnode_pack.sh build/m build/dev-r11a; run with the device tool, carry build/dev-r11a
mkdir -p $OUT/fn
(lscpu; for c in /sys/devices/system/cpu/cpu[0-9]*; do echo "$c $(cat $c/topology/core_id) $(cat $c/topology/thread_siblings_list)"; done) > $OUT/topology.txt 2>&1
FULLNODE_REPS=13 FULLNODE_PARTS="ljhalf lj kernpin kern" timeout 585 bash bench/fullnode.sh build/dev-r11a $OUT/fn > $OUT/fn/stdout.txt 2>&1
