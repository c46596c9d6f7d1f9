#!/bin/sh
# SPDX-License-Identifier: MIT
# libzecoll.so exports exactly its interposers, its bridge, the MPI_* wrappers that
# gen_mpi_wrappers.py made for the installed mpi.h (its list) and the Fortran entry points mpi_*_
# that gen_mpi_fortran.py made (its list); every MPI symbol it needs is a
# weak reference, so it loads into programs without MPI. libzecoll_ze.so exports exactly the 53
# zeGet*/zetGet*/zesGet* table getters the loader looks up.
set -eu
core=$1 shim=$2 mpilist=$3 flist=$4
got=$(nm -D --defined-only "$core" | awk '{print $3}' | grep -v '^MPI_' | grep -v '^mpi_' | sort | tr '\n' ' ')
want="exit sigaction signal zeInit zecoll_ze_getter "
[ "$got" = "$want" ] || { echo "not ok - libzecoll.so exports: $got (want: $want + MPI_* + mpi_*)"; exit 1; }
mpi_got=$(nm -D --defined-only "$core" | awk '{print $3}' | grep '^MPI_' | sort | tr '\n' ' ')
mpi_want=$( (sort "$mpilist"; printf 'MPI_Finalize\nMPI_Init\nMPI_Init_thread\nMPI_Pcontrol\n') | sort -u | tr '\n' ' ')
[ "$mpi_got" = "$mpi_want" ] || { echo "not ok - MPI exports differ from the generated list:"; \
  echo "$mpi_got" | tr ' ' '\n' > /tmp/zc_exp_got.$$; echo "$mpi_want" | tr ' ' '\n' > /tmp/zc_exp_want.$$; \
  diff /tmp/zc_exp_want.$$ /tmp/zc_exp_got.$$ | head; rm -f /tmp/zc_exp_got.$$ /tmp/zc_exp_want.$$; exit 1; }
nmpi=$(echo "$mpi_got" | wc -w)
f_got=$(nm -D --defined-only "$core" | awk '{print $3}' | grep '^mpi_' | sort | tr '\n' ' ')
f_want=$(sort -u "$flist" | tr '\n' ' ')
[ "$f_got" = "$f_want" ] || { echo "not ok - Fortran MPI exports differ from the generated list:"; \
  echo "$f_got" | tr ' ' '\n' > /tmp/zc_exp_got.$$; echo "$f_want" | tr ' ' '\n' > /tmp/zc_exp_want.$$; \
  diff /tmp/zc_exp_want.$$ /tmp/zc_exp_got.$$ | head; rm -f /tmp/zc_exp_got.$$ /tmp/zc_exp_want.$$; exit 1; }
nf=$(echo "$f_got" | wc -w)
strong=$(nm -D --undefined-only "$core" | awk '$1 == "U" {print $2}' | grep -E '^(P?MPI_|ompi_|mpi_|pmpi_)' || true)
[ -z "$strong" ] || { echo "not ok - strong MPI references (libzecoll.so would need libmpi): $strong"; exit 1; }
if ldd "$core" | grep -q 'libmpi'; then echo "not ok - libzecoll.so links libmpi"; exit 1; fi
bad=$(nm -D --defined-only "$shim" | awk '{print $3}' | grep -Ev '^ze[st]?Get[A-Za-z]+ProcAddrTable$' || true)
n=$(nm -D --defined-only "$shim" | awk '{print $3}' | grep -Ec '^ze[st]?Get[A-Za-z]+ProcAddrTable$')
[ -z "$bad" ] || { echo "not ok - libzecoll_ze.so exports more: $bad"; exit 1; }
# the installed headers' 53 tables, the 9 ze and 13 zet/zes tables of collector/ze/ze_ddi_later.spec
[ "$n" -eq 75 ] || { echo "not ok - libzecoll_ze.so exports $n getters, want 75"; exit 1; }
echo "ok - exports ($nmpi MPI wrappers, $nf Fortran MPI entry points, MPI references weak)"
