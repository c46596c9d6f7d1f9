#!/usr/bin/env bash
# Where the app thread's time goes in the MPI loop: the collector's "zecoll buffer flush" regions
# (the app waiting for the writer thread to finish the previous buffer), summed from the archive.
D=$PWD/build/dev-s5
export LD_LIBRARY_PATH=$D/lib
for r in $(seq ${REPS:-5}); do
  for v in ${VARS:-v0}; do
    lib=$D/lib/libzecoll.so; [ $v != v0 ] && lib=$D/lib/libzecoll_$v.so
    rm -rf /tmp/fa
    o=$(taskset -c 4,5 mpirun --allow-run-as-root --oversubscribe --bind-to none -np 1 -x LD_LIBRARY_PATH -x LD_PRELOAD=$lib -x ZECOLL_OUTPUT=/tmp/fa -x ZECOLL_SUMMARY=0 $D/bin/zc_mpi_bench self 300000 ${DOUBLES:-0} 2>/dev/null | tail -1)
    f=$($D/bin/otf2-print /tmp/fa/traces.otf2 2>/dev/null | awk '/buffer flush/ {if ($1=="ENTER") t=$3; else {s+=$3-t; n++}} $1=="ENTER" && /MPI_Irecv/ {c++} END {printf "%d %.3f %d", n, s/1e6, c}')
    echo "$v $o flushes/ms/irecvs: $f"
  done
done | tee $OUT/flush.txt
