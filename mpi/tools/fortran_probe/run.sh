#!/bin/sh
# Build the Fortran/C probes and the interposers, run each probe on 2 ranks with the C-only
# interposer and with the C+Fortran interposer, and list the Fortran symbols of Open MPI's
# Fortran libraries. Output: the log mpi/fortran.md quotes. Build products go to $OUT
# (default: a fresh temporary directory), never into the source tree.
#   sh mpi/tools/fortran_probe/run.sh [OUT]
set -eu
SRC=$(cd "$(dirname "$0")" && pwd)
OUT=${1:-$(mktemp -d /tmp/zc_fortran_probe.XXXXXX)}
mkdir -p "$OUT"
cd "$OUT"
LIB=$(mpicc --showme:libdirs | awk '{print $1}')
MPIRUN="mpirun --allow-run-as-root --oversubscribe -np 2"

run() { echo "\$ $*"; "$@"; }

echo "## versions"
echo "\$ mpirun --version | head -1; mpifort --version | head -1"
mpirun --version 2>&1 | head -1
mpifort --version | head -1
echo
echo "## build (in $OUT)"
run mpicc -std=c11 -Wall -Wextra -shared -fPIC -o libinterpose_c.so "$SRC/interpose_c.c"
run mpicc -std=c11 -Wall -Wextra -shared -fPIC -o libinterpose_cf.so "$SRC/interpose_c.c" "$SRC/interpose_f.c"
run mpicc -std=c11 -Wall -Wextra -shared -fPIC -DPROBE_NO_SENTINEL_FIX -o libinterpose_cf_nofix.so "$SRC/interpose_c.c" "$SRC/interpose_f.c"
run mpicc -std=c11 -Wall -Wextra -shared -fPIC -o libinterpose_cfp.so "$SRC/interpose_c.c" "$SRC/interpose_fp.c"
run mpicc -std=c11 -o probe_c "$SRC/probe_c.c"
run mpifort -cpp -DPROBE_MPIFH -o probe_mpifh "$SRC/probe_f.F90"
run mpifort -cpp -o probe_usempi "$SRC/probe_f.F90"
run mpifort -o probe_f08 "$SRC/probe_f08.f90"
echo
echo "## MPI symbols the probe executables import (nm -D --undefined-only)"
for p in probe_c probe_mpifh probe_usempi probe_f08; do
    echo "\$ nm -D --undefined-only $p | grep -i ' p*mpi_'"
    nm -D --undefined-only "$p" | grep -i ' p*mpi_' | awk '{print "    " $2}' | tr '\n' ' '; echo
done
echo
echo "## runs: C-only interposer (C entry points MPI_* forwarding to PMPI_*)"
for p in probe_c probe_mpifh probe_usempi probe_f08; do
    echo "\$ $MPIRUN -x LD_PRELOAD=\$OUT/libinterpose_c.so ./$p 2>&1 | sort"
    $MPIRUN -x LD_PRELOAD="$OUT/libinterpose_c.so" "./$p" 2>&1 | sed 's/\[pid [0-9]*\]/[pid]/' | sort | uniq -c
done
echo
# runs <title> <interposer> <probes...>: each probe under mpirun with the interposer preloaded
runs() {
    local title=$1 lib=$2; shift 2
    echo "## runs: $title"
    for p in "$@"; do
        echo "\$ $MPIRUN -x LD_PRELOAD=\$OUT/$lib ./$p 2>&1 | sort"
        $MPIRUN -x LD_PRELOAD="$OUT/$lib" "./$p" 2>&1 | sed 's/\[pid [0-9]*\]/[pid]/' | sort | uniq -c
    done
    echo
}
runs "C + Fortran interposer (Fortran entry points calling the C wrappers)" libinterpose_cf.so probe_mpifh probe_usempi probe_f08
runs "C + Fortran interposer variant B (record from Fortran args, forward to pmpi_*_)" libinterpose_cfp.so probe_mpifh probe_usempi probe_f08
echo "## negative control: Fortran wrappers that pass Fortran's MPI_IN_PLACE address through to C"
for p in probe_mpifh probe_f08; do
    echo "\$ $MPIRUN -x LD_PRELOAD=\$OUT/libinterpose_cf_nofix.so ./$p 2>&1 | grep done"
    $MPIRUN -x LD_PRELOAD="$OUT/libinterpose_cf_nofix.so" "./$p" 2>&1 | grep done || true
done
echo
echo "## Fortran symbols for MPI_Send in Open MPI's libraries ($LIB)"
for l in libmpi.so libmpi_mpifh.so libmpi_usempi_ignore_tkr.so libmpi_usempif08.so; do
    echo "\$ nm -D --defined-only $l | grep -i 'mpi_send\\(_f\\|_f08\\)*_*\$'"
    nm -D --defined-only "$LIB/$l" | grep -i ' p*mpi_send\(_f\|_f08\)*_*$' | sort -k3 | sed 's/^/    /' || echo "    (none)"
done
echo
echo "## what the Fortran layers call (undefined symbols)"
echo "\$ nm -D --undefined-only libmpi_mpifh.so | grep -E ' P?MPI_(Send|Recv|Bcast|Allreduce|Comm_split|Isend|Wait|Init|Finalize)\$'"
nm -D --undefined-only "$LIB/libmpi_mpifh.so" | grep -E ' P?MPI_(Send|Recv|Bcast|Allreduce|Comm_split|Isend|Wait|Init|Finalize)$' | sed 's/^/    /'
echo "\$ nm -D --undefined-only libmpi_usempif08.so | grep -E ' (ompi|P?MPI|p?mpi)_(send|recv|bcast|allreduce|comm_split|isend|wait|init|finalize)(_f)?_*\$' -i"
nm -D --undefined-only "$LIB/libmpi_usempif08.so" | grep -iE ' (ompi|p?mpi)_(send|recv|bcast|allreduce|comm_split|isend|wait|init|finalize)(_f)?_*$' | sed 's/^/    /'
for l in libmpi_mpifh.so libmpi_usempif08.so; do
    echo "\$ nm -D --undefined-only $l | grep -c ' MPI_'; nm -D --undefined-only $l | grep -c ' PMPI_'"
    nm -D --undefined-only "$LIB/$l" | grep -c ' MPI_' || true
    nm -D --undefined-only "$LIB/$l" | grep -c ' PMPI_' || true
done
echo "\$ nm -D --defined-only libmpi_mpifh.so | grep -E ' ompi_send_f\$'"
nm -D --defined-only "$LIB/libmpi_mpifh.so" | grep -E ' ompi_send_f$' | sed 's/^/    /'
echo "\$ nm -D --defined-only libmpi_mpifh.so | awk '{print \$3}' | grep -cE '^mpi_[a-z0-9_]*[a-z0-9]_\$'   # Fortran procedures, gfortran names"
nm -D --defined-only "$LIB/libmpi_mpifh.so" | awk '{print $3}' | grep -cE '^mpi_[a-z0-9_]*[a-z0-9]_$'
echo "\$ nm -D --defined-only libmpi_usempif08.so | awk '{print \$3}' | grep -cE '^mpi_.*_f08_\$'"
nm -D --defined-only "$LIB/libmpi_usempif08.so" | awk '{print $3}' | grep -cE '^mpi_.*_f08_$'
echo "\$ nm -D --defined-only libmpi_usempif08.so | grep -ciE ' p?mpi_wti(me|ck)'"
nm -D --defined-only "$LIB/libmpi_usempif08.so" | grep -ciE ' p?mpi_wti(me|ck)' || true
echo "\$ nm -D --defined-only libmpi_usempi_ignore_tkr.so | grep -ci 'send'"
nm -D --defined-only "$LIB/libmpi_usempi_ignore_tkr.so" | grep -ci 'send' || true
