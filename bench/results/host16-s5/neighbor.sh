#!/usr/bin/env bash
# Does any busy core slow the app's MPI loop (the host's power/frequency, shared L3/mesh), or only our
# writer's work? base / v4 / v0 alone, beside a spinning shell loop, beside a memory-streaming dd,
# each on CPU 6 while the app (and its writer) run on CPUs 4,5.
D=$PWD/build/dev-s5
export LD_LIBRARY_PATH=$D/lib
mpi() { local xs=(); for e in "$@"; do xs+=(-x "$e"); done
  taskset -c 4,5 mpirun --allow-run-as-root --oversubscribe --bind-to none -np 1 -x LD_LIBRARY_PATH "${xs[@]}" $D/bin/zc_mpi_bench self 300000 0 2>/dev/null | python3 -c "import json,sys; print(json.loads(sys.stdin.read().strip().splitlines()[-1])['call_ns'])"; }
C="ZECOLL_OUTPUT=/tmp/t-%p ZECOLL_SUMMARY=0"
run3() { echo "$1.base $(mpi)"; echo "$1.v4 $(mpi LD_PRELOAD=$D/lib/libzecoll_v4.so $C)"; echo "$1.v0 $(mpi LD_PRELOAD=$D/lib/libzecoll.so $C)"; rm -rf /tmp/t-*; }
for r in $(seq ${REPS:-9}); do
  run3 alone
  taskset -c 6 bash -c 'while :; do :; done' & p=$!; run3 spin; kill $p; wait $p 2>/dev/null
  taskset -c 6 bash -c 'while :; do dd if=/dev/zero of=/dev/null bs=8M count=200 status=none; done' & p=$!; run3 stream; kill $p; wait $p 2>/dev/null; pkill -f "dd if=/dev/zero" 
done > $OUT/neighbor_raw.txt
python3 - "$OUT/neighbor_raw.txt" <<'PY' | tee $OUT/neighbor.txt
import statistics, collections, sys
d = collections.defaultdict(list)
for l in open(sys.argv[1]):
    k, v = l.split(); d[k].append(float(v))
for env in ("alone", "spin", "stream"):
    b = statistics.median(d[env + ".base"])
    print(f"{env:7s} base {b:6.1f}  v4 {statistics.median(d[env+'.v4'])-b:+6.1f}  v0 {statistics.median(d[env+'.v0'])-b:+6.1f}")
PY
