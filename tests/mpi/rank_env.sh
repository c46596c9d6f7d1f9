#!/bin/sh
# SPDX-License-Identifier: MIT
# rank_env.sh RANK VAR=VALUE PROGRAM [ARGS...]: runs PROGRAM with VAR=VALUE set only on MPI rank
# RANK (OMPI_COMM_WORLD_RANK), to give ranks different settings under one mpirun.
rank=$1 kv=$2
shift 2
if [ "${OMPI_COMM_WORLD_RANK:-}" = "$rank" ]; then export "$kv"; fi
exec "$@"
