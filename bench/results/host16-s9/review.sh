#!/usr/bin/env bash
# Ninth round's review mend (the table's request ids through zr_new_id, one wait condition in
# zc_loc_write_out): 586ce98 (s9b) against the mended tree (s9a), Release, the 0-byte MPI loop
# with two writer stages (m2) and one (m1), CPUs 4-7, order rotating.
D=$PWD/build/dev-s11
export LD_LIBRARY_PATH=$D/lib
mpi() { local xs=(); for e in "$@"; do xs+=(-x "$e"); done
  taskset -c ${CPUS:-4-7} mpirun --allow-run-as-root --oversubscribe --bind-to none -np 1 -x LD_LIBRARY_PATH "${xs[@]}" $D/bin/zc_mpi_bench self 300000 0 2>/dev/null | python3 -c "import json,sys; print(json.loads(sys.stdin.read().strip().splitlines()[-1])['call_ns'])"; }
vs=(s9b s9a)
for r in $(seq ${REPS:-11}); do
  b=$(mpi); echo "m2.base $b"; echo "m1.base $b"
  for s in 2 1; do
    for i in 0 1; do
      v=${vs[$(( (i + r) % 2 ))]}
      echo "m$s.$v $(mpi ZECOLL_OUTPUT=/tmp/t-%p ZECOLL_SUMMARY=0 ZECOLL_WRITER_STAGES=$s LD_PRELOAD=$D/$v/libzecoll.so)"
      rm -rf /tmp/t-*
    done
  done
done > $OUT/review_raw.txt
/usr/bin/python3 "$PWD/bench/paired.py" $OUT/review_raw.txt s9b s9a m2 m1 | tee $OUT/review.txt
