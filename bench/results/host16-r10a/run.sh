#!/usr/bin/env bash
# round 10, before its merges (main e59569b's library = a28ae82's): LAMMPS under MPICH (target 6;
# LAMMPS 20220106 built with mpicxx.mpich, Hydra), then the back-to-back kernels with zesim
# sleeping (kern) and polling (kernpoll) beside their controls
set -u
D=$(cd "$(dirname "$0")" && pwd)
B=$D/../../bench
OUT=${1:?OUT}
mkdir -p "$OUT"
nproc; cat /sys/devices/system/clocksource/clocksource0/current_clocksource
FULLNODE_MPI=mpich FULLNODE_PARTS="lj" FULLNODE_REPS=${REPS:-9} bash "$B/fullnode.sh" "$D" "$OUT/mpich" > "$OUT/mpich.log" 2>&1
cat "$OUT/mpich/table.txt"
FULLNODE_PARTS="kern kernpoll" FULLNODE_REPS=${REPS:-9} bash "$B/fullnode.sh" "$D" "$OUT/kern" > "$OUT/kern.log" 2>&1
cat "$OUT/kern/table.txt"
