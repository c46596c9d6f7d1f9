#!/usr/bin/env bash
# v0 / v4 / base on different pairs of CPUs (is the writer's activity felt through a shared core?)
D=$PWD/build/dev-s5
for p in 4,5 4,6 4,12 0,15 all; do
  if [ $p = all ]; then c=0-15; else c=$p; fi
  mkdir -p /tmp/pl; CPUS=$c REPS=${REPS:-9} VARS="base v0 v4" OUT=/tmp/pl bash $D/abl.sh | sed "s/^/$p /"
done | tee $OUT/placement.txt
