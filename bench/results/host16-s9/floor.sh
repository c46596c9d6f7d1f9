#!/usr/bin/env bash
# Ninth round: the floor of any tracer of the 0-byte MPI loop on the host, side by side with the
# collector. floor: bench/zc_mpi_floor.c (two rdtsc and one 64-byte record per call, nothing
# else); floor0: the same without the clock; after: the eighth round's build (a625788, two
# writer stages); v2a: that build with its records never published (the writers idle,
# ../host16-s5/ablate.patch); v2h: the same ablation of f4fae2e; L1, L2, L3: v2h without, in
# turn, datatype sizes and the communicator check (L1), the finalize guard (L2), the nesting mark
# (L3) (ladder.patch on top of ablate.patch, -DZC_ABLATE=258, 770, 1794). CPUs 4-7, order rotating.
D=$PWD/build/dev-s11
export LD_LIBRARY_PATH=$D/lib
mpi() { local xs=(); for e in "$@"; do xs+=(-x "$e"); done
  taskset -c ${CPUS:-4-7} mpirun --allow-run-as-root --oversubscribe --bind-to none -np 1 -x LD_LIBRARY_PATH "${xs[@]}" $D/bin/zc_mpi_bench self 300000 0 2>/dev/null | python3 -c "import json,sys; print(json.loads(sys.stdin.read().strip().splitlines()[-1])['call_ns'])"; }
C="ZECOLL_OUTPUT=/tmp/t-%p ZECOLL_SUMMARY=0 ZECOLL_WRITER_STAGES=2"
vs=(after v2a v2h L1 L2 L3 floor floor0)
lib() { case $1 in floor) echo $D/floor/libzc_mpi_floor.so ;; floor0) echo $D/floor/libzc_mpi_floor0.so ;; *) echo $D/$1/libzecoll.so ;; esac; }
for r in $(seq ${REPS:-15}); do
  echo "m.base $(mpi)"
  for i in $(seq 0 $((${#vs[@]} - 1))); do
    v=${vs[$(( (i + r) % ${#vs[@]} ))]}
    echo "m.$v $(mpi $C LD_PRELOAD=$(lib $v))"
    rm -rf /tmp/t-*
  done
done > $OUT/floor_raw.txt
for v in v2a v2h L1 L2 L3 floor floor0; do /usr/bin/python3 "$PWD/bench/paired.py" $OUT/floor_raw.txt after $v m; done | tee $OUT/floor.txt
grep -m1 "model name" /proc/cpuinfo >> $OUT/floor.txt
