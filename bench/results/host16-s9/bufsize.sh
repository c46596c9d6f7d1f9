#!/usr/bin/env bash
# Ninth round: does the size of the event buffers change the MPI loop's delta? The eighth
# round's build (a625788, two writer stages) with ZECOLL_BUFFER_EVENTS 1,024 / 8,192 / 65,536
# (the default) / 262,144, against the floor (bench/zc_mpi_floor.c). CPUs 4-7, order rotating.
D=$PWD/build/dev-s11
export LD_LIBRARY_PATH=$D/lib
mpi() { local xs=(); for e in "$@"; do xs+=(-x "$e"); done
  taskset -c ${CPUS:-4-7} mpirun --allow-run-as-root --oversubscribe --bind-to none -np 1 -x LD_LIBRARY_PATH "${xs[@]}" $D/bin/zc_mpi_bench self 300000 0 2>/dev/null | python3 -c "import json,sys; print(json.loads(sys.stdin.read().strip().splitlines()[-1])['call_ns'])"; }
C="ZECOLL_OUTPUT=/tmp/t-%p ZECOLL_SUMMARY=0 ZECOLL_WRITER_STAGES=${STAGES:-2} LD_PRELOAD=$D/after/libzecoll.so"
vs=(b65536 b1024 b8192 b262144 floor)
for r in $(seq ${REPS:-15}); do
  echo "m.base $(mpi)"
  for i in $(seq 0 $((${#vs[@]} - 1))); do
    v=${vs[$(( (i + r) % ${#vs[@]} ))]}
    case $v in
      floor) echo "m.$v $(mpi LD_PRELOAD=$D/floor/libzc_mpi_floor.so)" ;;
      *) echo "m.$v $(mpi $C ZECOLL_BUFFER_EVENTS=${v#b})" ;;
    esac
    rm -rf /tmp/t-*
  done
done > $OUT/bufsize_raw.txt
for v in b1024 b8192 b262144 floor; do /usr/bin/python3 "$PWD/bench/paired.py" $OUT/bufsize_raw.txt b65536 $v m; done | tee $OUT/bufsize.txt
