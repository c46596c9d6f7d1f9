#!/usr/bin/env bash
# before (321c98a) / after (05df2e0) side by side: MPI loop (0 bytes, 8 doubles), regular-list Append
D=$PWD/build/dev-s7
export LD_LIBRARY_PATH=$D/lib ZE_ENABLE_ALT_DRIVERS=$D/lib/libzesim.so
mpi() { local d=$1; shift; local xs=(); for e in "$@"; do xs+=(-x "$e"); done
  taskset -c 4,5 mpirun --allow-run-as-root --oversubscribe --bind-to none -np 1 -x LD_LIBRARY_PATH "${xs[@]}" $D/bin/zc_mpi_bench self 300000 $d 2>/dev/null | python3 -c "import json,sys; print(json.loads(sys.stdin.read().strip().splitlines()[-1])['call_ns'])"; }
reg() { taskset -c 4,5 env "$@" $D/bin/zc_bench_app regular 1000000 2>/dev/null | python3 -c "import json,sys; print(json.loads(sys.stdin.read().strip().splitlines()[-1])['append_ns'])"; }
C="ZECOLL_OUTPUT=/tmp/t-%p ZECOLL_SUMMARY=0"
for r in $(seq ${REPS:-11}); do
  for d in 0 8; do
    echo "mpi$d.base $(mpi $d)"
    echo "mpi$d.before $(mpi $d LD_PRELOAD=$D/before/libzecoll.so $C)"
    echo "mpi$d.after $(mpi $d LD_PRELOAD=$D/lib/libzecoll.so $C)"
  done
  echo "reg.base $(reg X=1)"
  echo "reg.before $(reg LD_PRELOAD=$D/before/libzecoll.so $C)"
  echo "reg.after $(reg LD_PRELOAD=$D/lib/libzecoll.so $C)"
  rm -rf /tmp/t-*
done > $OUT/ba_raw.txt
python3 - $OUT/ba_raw.txt <<'PY' | tee $OUT/ba.txt
import collections, statistics, sys
d = collections.defaultdict(list)
for l in open(sys.argv[1]):
    k, v = l.split(); d[k].append(float(v))
for p in ("mpi0", "mpi8", "reg"):
    b = statistics.median(d[p + ".base"])
    print(f"{p:5s} base {b:7.1f}  before {statistics.median(d[p+'.before'])-b:+7.1f}  after {statistics.median(d[p+'.after'])-b:+7.1f}")
PY
