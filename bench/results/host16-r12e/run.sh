#!/usr/bin/env bash
# host16-r12e (round 12): target 6 at once (ljhalf) under MPICH: LAMMPS built with mpicxx.mpich (Debian's source
# package, by hand outside the repository), Hydra binding each half's 8 ranks (-bind-to user:CPUS); the collector
# main 0b9ca8e (build/m) picks its MPICH flavour; packed with FULLNODE_LMP_MPICH (lammps.tar.xz left out)
mkdir -p $OUT/fn
FULLNODE_MPI=mpich FULLNODE_REPS=36 FULLNODE_PARTS="ljhalf" \
  timeout 430 bash bench/fullnode.sh build/dev-r12e $OUT/fn > $OUT/fn/stdout.txt 2>&1
