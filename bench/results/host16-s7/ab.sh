#!/usr/bin/env bash
# ZECOLL_WRITER_STAGES=1 / =2 side by side, one build: MPI loop (0 bytes, 8 doubles) and
# regular-list Append; order alternating per repetition; pinned to CPUs 4,5 (app + writers).
D=$PWD/build/dev-s8
export LD_LIBRARY_PATH=$D/lib ZE_ENABLE_ALT_DRIVERS=$D/lib/libzesim.so
CPUS=${CPUS:-4,5}
mpi() { local d=$1; shift; local xs=(); for e in "$@"; do xs+=(-x "$e"); done
  taskset -c $CPUS mpirun --allow-run-as-root --oversubscribe --bind-to none -np 1 -x LD_LIBRARY_PATH "${xs[@]}" $D/bin/zc_mpi_bench self 300000 $d 2>/dev/null | python3 -c "import json,sys; print(json.loads(sys.stdin.read().strip().splitlines()[-1])['call_ns'])"; }
reg() { taskset -c $CPUS env "$@" $D/bin/zc_bench_app regular 1000000 2>/dev/null | python3 -c "import json,sys; print(json.loads(sys.stdin.read().strip().splitlines()[-1])['append_ns'])"; }
C="ZECOLL_OUTPUT=/tmp/t-%p ZECOLL_SUMMARY=0 LD_PRELOAD=$D/lib/libzecoll.so"
for r in $(seq ${REPS:-11}); do
  if [ $((r % 2)) = 0 ]; then o="1 2"; else o="2 1"; fi
  for d in 0 8; do
    echo "mpi$d.base $(mpi $d)"
    for s in $o; do echo "mpi$d.s$s $(mpi $d $C ZECOLL_WRITER_STAGES=$s)"; done
  done
  echo "reg.base $(reg X=1)"
  for s in $o; do echo "reg.s$s $(reg $C ZECOLL_WRITER_STAGES=$s)"; done
  rm -rf /tmp/t-*
done > $OUT/ab_raw.txt
/usr/bin/python3 "$PWD/bench/paired.py" $OUT/ab_raw.txt s1 s2 mpi0 mpi8 reg | tee $OUT/ab.txt
