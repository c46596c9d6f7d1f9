#!/usr/bin/env bash
# MPI-call ablation (issue 7, fifth round): v0 = the build as it is; v1 = no clock reads (a counter
# instead of rdtsc); v2 = records stored into a 2 KiB scratch array, never published (no buffer
# traffic, the writer idle); v3 = both; v4 = only the call's record published (3 records per loop instead of 7); v8 = all published, request records as NOP (the writer skips them); v16 = one NOP record more per Isend/Irecv (9 per loop); v0-8M = v0 with buffers that do not fill while measured.
# zc_mpi_bench self N 0 (0-byte Irecv/Isend/Waitall, the target's loop), alternating, pinned to two CPUs.
D=$PWD/build/dev-s5
export LD_LIBRARY_PATH=$D/lib
reps=${REPS:-15}
mpi() { local xs=(); for e in "$@"; do xs+=(-x "$e"); done
  taskset -c ${CPUS:-4,5} mpirun --allow-run-as-root --oversubscribe --bind-to none -np 1 -x LD_LIBRARY_PATH "${xs[@]}" $D/bin/zc_mpi_bench self 300000 ${DOUBLES:-0} 2>/dev/null | python3 -c "import json,sys; print(json.loads(sys.stdin.read().strip().splitlines()[-1])['call_ns'])"; }
C="ZECOLL_OUTPUT=/tmp/t-%p ZECOLL_SUMMARY=0"
VARS=${VARS:-base v0 v1 v2 v3 v0-8M}
for r in $(seq $reps); do
  for v in $VARS; do
    case $v in
      base) echo "base $(mpi)" ;;
      v0) echo "v0 $(mpi LD_PRELOAD=$D/lib/libzecoll.so $C)" ;;
      v0-thp) echo "$v $(mpi LD_PRELOAD=$D/lib/libzecoll.so $C GLIBC_TUNABLES=glibc.malloc.hugetlb=1)" ;;
      v0-*-thp) b=${v#v0-}; echo "$v $(mpi LD_PRELOAD=$D/lib/libzecoll.so $C ZECOLL_BUFFER_EVENTS=${b%-thp} GLIBC_TUNABLES=glibc.malloc.hugetlb=1)" ;;
      v0-*) echo "$v $(mpi LD_PRELOAD=$D/lib/libzecoll.so $C ZECOLL_BUFFER_EVENTS=${v#v0-})" ;;
      v0-shm) echo "$v $(mpi LD_PRELOAD=$D/lib/libzecoll.so ZECOLL_OUTPUT=/dev/shm/t-%p ZECOLL_SUMMARY=0)" ;;
      v0-nojrn) echo "$v $(mpi LD_PRELOAD=$D/lib/libzecoll.so $C ZECOLL_FLUSH_INTERVAL_MS=0)" ;;
      v0-shm-nojrn) echo "$v $(mpi LD_PRELOAD=$D/lib/libzecoll.so ZECOLL_OUTPUT=/dev/shm/t-%p ZECOLL_SUMMARY=0 ZECOLL_FLUSH_INTERVAL_MS=0)" ;;
      v4-shm) echo "$v $(mpi LD_PRELOAD=$D/lib/libzecoll_v4.so ZECOLL_OUTPUT=/dev/shm/t-%p ZECOLL_SUMMARY=0)" ;;
      *) echo "$v $(mpi LD_PRELOAD=$D/lib/libzecoll_$v.so $C)" ;;
    esac
  done
  rm -rf /tmp/t-* /dev/shm/t-*
done > $OUT/abl_raw.txt
$D/bin/zc_clock_probe > $OUT/clock.json 2>&1
{ df -T /tmp /dev/shm; ldd --version | head -1; cat /sys/kernel/mm/transparent_hugepage/enabled; grep -i AnonHugePages /proc/meminfo; } > $OUT/thp.txt 2>&1
python3 - "$OUT/abl_raw.txt" <<'PY' | tee $OUT/abl.txt
import statistics, collections, sys
d = collections.defaultdict(list)
for l in open(sys.argv[1]):
    k, v = l.split(); d[k].append(float(v))
b = statistics.median(d["base"])
for k in d:
    m = statistics.median(d[k]); q = sorted(d[k])
    print(f"{k:6s} median {m:7.1f}  delta {m - b:+7.1f}  (q1 {q[len(q)//4]:.1f}, q3 {q[3*len(q)//4]:.1f})")
PY
