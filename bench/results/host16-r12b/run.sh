#!/usr/bin/env bash
# host16-r12b (round 12): LAMMPS at once (ljhalf) beside the bare recorder (bench/zc_mpi_floor.c with MPI_Send,
# MPI_Wait and MPI_Sendrecv, LAMMPS's calls: two rdtsc and one 64-byte record in a thread-local ring per call, no
# writer, nothing read), and the same without the clock (floor0); the collector: main 0b9ca8e (build/dev-r12a)
mkdir -p $OUT/fn
FULLNODE_REPS=36 FULLNODE_PARTS="ljhalf" \
  FULLNODE_PEERS="floor=build/dev-r12a/peers/libzc_mpi_floor.so floor0=build/dev-r12a/peers/libzc_mpi_floor0.so" \
  FULLNODE_HALF="base/with0 base/floor floor/with0 base/floor0" \
  timeout 570 bash bench/fullnode.sh build/dev-r12a $OUT/fn > $OUT/fn/stdout.txt 2>&1
