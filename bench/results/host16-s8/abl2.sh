#!/usr/bin/env bash
# Eighth round: the fifth round's ablation (../host16-s5/ablate.patch, -DZC_ABLATE=N builds of
# libzecoll.so) again, now that two writer stages keep the loop off the writers' pace: what the
# MPI call's remaining delta is made of. Every variant runs with ZECOLL_WRITER_STAGES=2 on CPUs
# 4-7 (the 0-byte Irecv/Isend/Waitall loop, 300,000 iterations), each against the no-collector
# base of its repetition, the variants' order rotating per repetition.
#   head   the build as it is (HEAD)           s1     the same, one writer stage
#   v1     no clock (a counter, no rdtsc)      v2     records into a 2 KiB scratch array, never published
#   v3     v1 + v2: the wrapper's instructions pf256 / pf1k: prefetchw 256 / 1,024 bytes ahead at each publish
D=$PWD/build/dev-s11
export LD_LIBRARY_PATH=$D/lib
mpi() { local xs=(); for e in "$@"; do xs+=(-x "$e"); done
  taskset -c ${CPUS:-4-7} mpirun --allow-run-as-root --oversubscribe --bind-to none -np 1 -x LD_LIBRARY_PATH "${xs[@]}" $D/bin/zc_mpi_bench self 300000 0 2>/dev/null | python3 -c "import json,sys; print(json.loads(sys.stdin.read().strip().splitlines()[-1])['call_ns'])"; }
C="ZECOLL_OUTPUT=/tmp/t-%p ZECOLL_SUMMARY=0 ZECOLL_WRITER_STAGES=2"
vs=(head s1 v1 v2 v3 pf256 pf1k)
lib() { case $1 in head|s1) echo $D/lib/libzecoll.so ;; *) echo $D/$1/libzecoll.so ;; esac; }
for r in $(seq ${REPS:-15}); do
  echo "m.base $(mpi)"
  for i in $(seq 0 $((${#vs[@]} - 1))); do
    v=${vs[$(( (i + r) % ${#vs[@]} ))]}
    extra=""; [ $v = s1 ] && extra=ZECOLL_WRITER_STAGES=1
    echo "m.$v $(mpi $C LD_PRELOAD=$(lib $v) $extra)"
    rm -rf /tmp/t-*
  done
done > $OUT/abl2_raw.txt
for v in s1 v1 v2 v3 pf256 pf1k; do /usr/bin/python3 "$PWD/bench/paired.py" $OUT/abl2_raw.txt head $v m; done | tee $OUT/abl2.txt
