#!/usr/bin/env bash
# Ninth round: with two writer stages, does the writers' work per call still reach the MPI loop?
# f4fae2e with ../host16-s5/ablate.patch: v4h publishes only each call's own record (3 records
# per loop instead of 7; the same stores), v32h writes no OTF2 event for the request records
# (matched and journaled), v64h matches nothing (the resolver turns request records into
# nothing); nojrn: after without the salvage journal (ZECOLL_FLUSH_INTERVAL_MS=0); against after
# (a625788, whose application path is f4fae2e's) and the bare recorder. CPUs 4-7, order rotating.
D=$PWD/build/dev-s11
export LD_LIBRARY_PATH=$D/lib
mpi() { local xs=(); for e in "$@"; do xs+=(-x "$e"); done
  taskset -c ${CPUS:-4-7} mpirun --allow-run-as-root --oversubscribe --bind-to none -np 1 -x LD_LIBRARY_PATH "${xs[@]}" $D/bin/zc_mpi_bench self 300000 0 2>/dev/null | python3 -c "import json,sys; print(json.loads(sys.stdin.read().strip().splitlines()[-1])['call_ns'])"; }
C="ZECOLL_OUTPUT=/tmp/t-%p ZECOLL_SUMMARY=0 ZECOLL_WRITER_STAGES=${STAGES:-2}"
vs=(after v4h v32h v64h nojrn floor)
for r in $(seq ${REPS:-15}); do
  echo "m.base $(mpi)"
  for i in $(seq 0 $((${#vs[@]} - 1))); do
    v=${vs[$(( (i + r) % ${#vs[@]} ))]}
    case $v in
      floor) echo "m.$v $(mpi LD_PRELOAD=$D/floor/libzc_mpi_floor.so)" ;;
      nojrn) echo "m.$v $(mpi $C LD_PRELOAD=$D/after/libzecoll.so ZECOLL_FLUSH_INTERVAL_MS=0)" ;;
      *) echo "m.$v $(mpi $C LD_PRELOAD=$D/$v/libzecoll.so)" ;;
    esac
    rm -rf /tmp/t-*
  done
done > $OUT/writers${STAGES:-2}_raw.txt
for v in v4h v32h v64h nojrn floor; do /usr/bin/python3 "$PWD/bench/paired.py" $OUT/writers${STAGES:-2}_raw.txt after $v m; done | tee $OUT/writers${STAGES:-2}.txt
