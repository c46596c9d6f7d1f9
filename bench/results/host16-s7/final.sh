#!/usr/bin/env bash
# HEAD: which writer setting auto picks (log level 2), then the MPI loop with auto against one
# stage, order alternating, on CPUs 4-7 (auto: 2 stages) and 4,5 (auto: 1).
D=$PWD/build/dev-s9
export LD_LIBRARY_PATH=$D/lib ZE_ENABLE_ALT_DRIVERS=$D/lib/libzesim.so
L="-x LD_LIBRARY_PATH -x LD_PRELOAD=$D/lib/libzecoll.so -x ZECOLL_OUTPUT=/tmp/t-%p -x ZECOLL_SUMMARY=0 -x ZECOLL_LOG_LEVEL=2"
{
  echo "== mpirun default binding (core), 1 rank:"; mpirun --allow-run-as-root -np 1 $L $D/bin/zc_mpi_bench self 100000 0 2>&1 | grep -E "writer threads|call_ns"
  echo "== --bind-to none, unpinned:"; mpirun --allow-run-as-root --bind-to none -np 1 $L $D/bin/zc_mpi_bench self 100000 0 2>&1 | grep -E "writer threads|call_ns"
  echo "== taskset 4,5:"; taskset -c 4,5 mpirun --allow-run-as-root --bind-to none -np 1 $L $D/bin/zc_mpi_bench self 100000 0 2>&1 | grep -E "writer threads|call_ns"
  echo "== taskset 4-7:"; taskset -c 4-7 mpirun --allow-run-as-root --bind-to none -np 1 $L $D/bin/zc_mpi_bench self 100000 0 2>&1 | grep -E "writer threads|call_ns"
  echo "== 4 ranks, default binding (numa/socket):"; mpirun --allow-run-as-root -np 4 $L $D/bin/zc_mpi_bench self 100000 0 2>&1 | grep -E "writer threads" | sort | uniq -c
} > $OUT/auto.txt 2>&1
rm -rf /tmp/t-*
mpi() { local c=$1; shift; local xs=(); for e in "$@"; do xs+=(-x "$e"); done
  taskset -c $c mpirun --allow-run-as-root --oversubscribe --bind-to none -np 1 -x LD_LIBRARY_PATH "${xs[@]}" $D/bin/zc_mpi_bench self 300000 0 2>/dev/null | python3 -c "import json,sys; print(json.loads(sys.stdin.read().strip().splitlines()[-1])['call_ns'])"; }
C="ZECOLL_OUTPUT=/tmp/t-%p ZECOLL_SUMMARY=0 LD_PRELOAD=$D/lib/libzecoll.so"
for r in $(seq ${REPS:-11}); do
  for c in 4-7 4,5; do
    echo "c$c.base $(mpi $c)"
    if [ $((r % 2)) = 0 ]; then
      echo "c$c.auto $(mpi $c $C)"; echo "c$c.s1 $(mpi $c $C ZECOLL_WRITER_STAGES=1)"
    else
      echo "c$c.s1 $(mpi $c $C ZECOLL_WRITER_STAGES=1)"; echo "c$c.auto $(mpi $c $C)"
    fi
  done
  rm -rf /tmp/t-*
done > $OUT/final_raw.txt
/usr/bin/python3 "$PWD/bench/paired.py" $OUT/final_raw.txt s1 auto c4-7 c4,5 | tee $OUT/final.txt
cat $OUT/auto.txt
