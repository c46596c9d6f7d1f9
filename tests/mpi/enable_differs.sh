#!/bin/sh
# SPDX-License-Identifier: MIT
# enable_differs.sh MPIEXEC NP PRELOAD WORK PROGRAM: the collector off on rank 1 only
# (ZECOLL_ENABLE=0). No rank may wait for another in MPI_Init or MPI_Finalize (a 60 s timeout
# says they did); the program must pass; the job is untraced, said once; no archive is written.
set -u
mpiexec=$1 np=$2 preload=$3 work=$4 prog=$5
here=$(cd "$(dirname "$0")" && pwd)
rm -rf "$work" && mkdir -p "$work" || exit 1
timeout 60 "$mpiexec" --allow-run-as-root --oversubscribe -np "$np" -x LD_PRELOAD="$preload" \
  -x ZECOLL_OUTPUT="$work/trace" -x ASAN_OPTIONS=detect_leaks=0 -x ZECOLL_STRICT=1 \
  "$here/rank_env.sh" 1 ZECOLL_ENABLE=0 "$prog" > "$work/out.txt" 2>&1
rc=$?
cat "$work/out.txt"
[ $rc -eq 0 ] || { echo "not ok - mpirun exited with $rc (124: the job hung)"; exit 1; }
n=$(grep -c "the collector is off on some ranks" "$work/out.txt")
[ "$n" -eq 1 ] || { echo "not ok - the untraced job was reported $n times, want once"; exit 1; }
if ls -d "$work"/trace* >/dev/null 2>&1; then echo "not ok - an archive was written"; exit 1; fi
echo "ok - the job ran untraced, said once, no archive"
