#!/usr/bin/env bash
# Eighth round: before (6639ed5's libzecoll.so) and after (small request ids, the tick conversion
# inlined into the converter) side by side, each with two writer stages and with one, on CPUs
# 4-7; the MPI loop with 0 bytes (m) and 8 doubles (m8), each against the no-collector base of
# its repetition, the variants' order rotating per repetition.
D=$PWD/build/dev-s11
export LD_LIBRARY_PATH=$D/lib
mpi() { local b=$1; shift; local xs=(); for e in "$@"; do xs+=(-x "$e"); done
  taskset -c ${CPUS:-4-7} mpirun --allow-run-as-root --oversubscribe --bind-to none -np 1 -x LD_LIBRARY_PATH "${xs[@]}" $D/bin/zc_mpi_bench self 300000 $b 2>/dev/null | python3 -c "import json,sys; print(json.loads(sys.stdin.read().strip().splitlines()[-1])['call_ns'])"; }
C="ZECOLL_OUTPUT=/tmp/t-%p ZECOLL_SUMMARY=0"
vs=(before after before1 after1)
run() { case $2 in
  before) mpi $1 $C LD_PRELOAD=$D/lib/libzecoll.so ZECOLL_WRITER_STAGES=2 ;;
  after) mpi $1 $C LD_PRELOAD=$D/after/libzecoll.so ZECOLL_WRITER_STAGES=2 ;;
  before1) mpi $1 $C LD_PRELOAD=$D/lib/libzecoll.so ZECOLL_WRITER_STAGES=1 ;;
  after1) mpi $1 $C LD_PRELOAD=$D/after/libzecoll.so ZECOLL_WRITER_STAGES=1 ;;
  esac; rm -rf /tmp/t-*; }
for r in $(seq ${REPS:-15}); do
  for g in "m 0" "m8 8"; do
    set -- $g
    echo "$1.base $(mpi $2)"
    for i in $(seq 0 $((${#vs[@]} - 1))); do
      v=${vs[$(( (i + r) % ${#vs[@]} ))]}
      echo "$1.$v $(run $2 $v)"
    done
  done
done > $OUT/ba_raw.txt
{ /usr/bin/python3 "$PWD/bench/paired.py" $OUT/ba_raw.txt before after m m8
  /usr/bin/python3 "$PWD/bench/paired.py" $OUT/ba_raw.txt before1 after1 m m8; } | tee $OUT/ba.txt
