#!/usr/bin/env bash
# Eighth round, after the change: is the loop still held to the writers' pace? The after build
# (small request ids, the converter's tick conversion inlined) against two ablations of it
# (../host16-s5/ablate.patch on top): v1a without the clock (a counter, no rdtsc), v2a with its
# records stored into a scratch array and never published (the writers idle), and before
# (6639ed5). Two writer stages, CPUs 4-7, the 0-byte MPI loop, order rotating.
D=$PWD/build/dev-s11
export LD_LIBRARY_PATH=$D/lib
mpi() { local xs=(); for e in "$@"; do xs+=(-x "$e"); done
  taskset -c ${CPUS:-4-7} mpirun --allow-run-as-root --oversubscribe --bind-to none -np 1 -x LD_LIBRARY_PATH "${xs[@]}" $D/bin/zc_mpi_bench self 300000 0 2>/dev/null | python3 -c "import json,sys; print(json.loads(sys.stdin.read().strip().splitlines()[-1])['call_ns'])"; }
C="ZECOLL_OUTPUT=/tmp/t-%p ZECOLL_SUMMARY=0 ZECOLL_WRITER_STAGES=2"
vs=(before after v1a v2a)
lib() { case $1 in before) echo $D/lib/libzecoll.so ;; *) echo $D/$1/libzecoll.so ;; esac; }
for r in $(seq ${REPS:-15}); do
  echo "m.base $(mpi)"
  for i in $(seq 0 $((${#vs[@]} - 1))); do
    v=${vs[$(( (i + r) % ${#vs[@]} ))]}
    echo "m.$v $(mpi $C LD_PRELOAD=$(lib $v))"
    rm -rf /tmp/t-*
  done
done > $OUT/abl3_raw.txt
for v in before v1a v2a; do /usr/bin/python3 "$PWD/bench/paired.py" $OUT/abl3_raw.txt after $v m; done | tee $OUT/abl3.txt
