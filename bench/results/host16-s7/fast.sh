#!/usr/bin/env bash
# the writer's decision without the OTF2 lock (after) against before (54c8522's build), both
# with two stages, and one stage for reference; CPUs 4-7, order alternating
D=$PWD/build/dev-s10
export LD_LIBRARY_PATH=$D/lib
mpi() { local xs=(); for e in "$@"; do xs+=(-x "$e"); done
  taskset -c 4-7 mpirun --allow-run-as-root --oversubscribe --bind-to none -np 1 -x LD_LIBRARY_PATH "${xs[@]}" $D/bin/zc_mpi_bench self 300000 0 2>/dev/null | python3 -c "import json,sys; print(json.loads(sys.stdin.read().strip().splitlines()[-1])['call_ns'])"; }
C="ZECOLL_OUTPUT=/tmp/t-%p ZECOLL_SUMMARY=0"
for r in $(seq ${REPS:-11}); do
  echo "m.base $(mpi)"
  if [ $((r % 2)) = 0 ]; then
    echo "m.before $(mpi $C LD_PRELOAD=$D/before/libzecoll.so)"; echo "m.after $(mpi $C LD_PRELOAD=$D/lib/libzecoll.so)"
  else
    echo "m.after $(mpi $C LD_PRELOAD=$D/lib/libzecoll.so)"; echo "m.before $(mpi $C LD_PRELOAD=$D/before/libzecoll.so)"
  fi
  echo "m.s1 $(mpi $C LD_PRELOAD=$D/lib/libzecoll.so ZECOLL_WRITER_STAGES=1)"
  rm -rf /tmp/t-*
done > $OUT/fast_raw.txt
/usr/bin/python3 "$PWD/bench/paired.py" $OUT/fast_raw.txt before after m | tee $OUT/fast.txt
/usr/bin/python3 "$PWD/bench/paired.py" $OUT/fast_raw.txt s1 after m | tee -a $OUT/fast.txt
