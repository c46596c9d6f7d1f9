#!/usr/bin/env bash
# topology, and one archive per writer-stage setting (its "zecoll buffer flush" regions: the waits)
D=$PWD/build/dev-s8
export LD_LIBRARY_PATH=$D/lib
lscpu -e | head -20 > $OUT/lscpu.txt
for s in 1 2; do
  for c in 4,5 4-7; do
    taskset -c $c mpirun --allow-run-as-root --oversubscribe --bind-to none -np 1 -x LD_LIBRARY_PATH -x LD_PRELOAD=$D/lib/libzecoll.so \
      -x ZECOLL_OUTPUT=$OUT/s$s-c${c/,/_}-trace -x ZECOLL_SUMMARY=1 -x ZECOLL_WRITER_STAGES=$s $D/bin/zc_mpi_bench self 100000 0 > $OUT/s$s-c${c/,/_}.txt 2>&1
  done
done
du -sh $OUT
