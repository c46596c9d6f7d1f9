#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Installs the Debian packages zecoll builds and tests with, only those that are missing.
# Needs root (or sudo) on Debian bookworm; prints what it installs. Arguments: more packages.
set -euo pipefail

pkgs=(
  build-essential cmake pkg-config python3
  libze1 libze-dev                                   # Level Zero loader 1.8.12 + tracing layer
  libopenmpi-dev openmpi-bin gfortran                # MPI (gfortran: Fortran MPI programs)
  mpich libmpich-dev                                 # the MPICH ABI beside Open MPI (mpi/README.md, "Flavours")
  netpipe-mpich2                                     # NetPIPE (NPmpich2): a real MPICH client for the MPICH tests
  scalapack-mpi-test                                 # ScaLAPACK's test programs built for both MPIs (mpich-tests/, openmpi-tests/)
  libotf2-trace-dev otf2-tools python3-otf2          # OTF2 writer, otf2-print, Python reader
  libpapi-dev papi-tools                             # PAPI counters
  libyaml-dev                                        # YAML configuration
  hpcc                                               # HPC Challenge: a real MPI application for the MPI tests
  lammps                                             # LAMMPS (lmp): an MPI application for the MPI and report tests, and bench/fullnode.sh
  python3-mpi4py                                     # MPI loaded by dlopen (pass-through test)
  chromium                                           # renders zecoll-aggregate's HTML report in its test
  clang                                              # libFuzzer build of the aggregator's reader path
  valgrind                                           # callgrind: instruction counts (bench/ir_counts.sh, test bench.ir_guard)
  environment-modules                                # `module load zecoll` of the installed tree (test install.relocated)
  strace                                             # hostile.exit_path: no membarrier or thread in a process that records nothing
)
pkgs+=("$@") # extra packages a script needs (scripts/fuzz-config.sh: clang for libFuzzer)

missing=()
for p in "${pkgs[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "zecoll: installing missing packages: ${missing[*]}"
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "zecoll: need root or sudo to install ${missing[*]}" >&2; exit 1; }
  sudo="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
# A fresh machine has no package lists; an old list may name versions the mirror dropped.
if ! $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"; then
  $sudo apt-get update -q
  $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
