#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Packs what bench/fullnode.sh needs on the 16-core host into OUT_DIR (inside the checkout, git-
# ignored, carried by the device run): device-pack.sh's folder of BUILD_DIR's collector, zesim,
# zc_bench_app and zc_devrate (bench/devrate.sh), plus Debian's LAMMPS (`lmp`, apt-get install lammps) with every library it needs
# that the host (Ubuntu, Open MPI 4.1.6) does not provide, compressed into OUT_DIR/lammps.tar.xz
# (~44 MB unpacked: LAMMPS's own libraries would fill most of a run's 64 MiB; fullnode.sh unpacks
# it there). The host's glibc, libstdc++ and Open MPI are used, as the collector's are.
# FULLNODE_LMP_MPICH=path/to/lmp (a LAMMPS built with mpicxx.mpich; Debian's links Open MPI): also
# OUT_DIR/lammps-mpich.tar.xz with it, Hydra (mpiexec.hydra, hydra_pmi_proxy) and every library
# but glibc's and the compiler's runtime (the host has no MPICH), for FULLNODE_MPI=mpich.
#   usage: bench/fullnode_pack.sh BUILD_DIR OUT_DIR [LIB...]   (LIB: other libzecoll.so builds,
#          packed as OUT_DIR/lib/alt<k>/libzecoll.so for FULLNODE_LIBS)
set -euo pipefail
build=$(cd "${1:?usage: fullnode_pack.sh BUILD_DIR OUT_DIR [LIB...]}" && pwd)
out=${2:?usage: fullnode_pack.sh BUILD_DIR OUT_DIR [LIB...]}
shift 2
root=$(cd "$(dirname "$0")/.." && pwd)
pack=${ZC_DEVICE_PACK:-}
for p in "$root/../shared/tools/device-pack.sh" /work/shared/tools/device-pack.sh; do
  [ -z "$pack" ] && [ -x "$p" ] && pack=$p
done
[ -n "$pack" ] || { echo "fullnode_pack: device-pack.sh not found (set ZC_DEVICE_PACK)" >&2; exit 2; }
lmp=$(command -v lmp || true)
[ -n "$lmp" ] || { echo "fullnode_pack: no lmp on PATH: apt-get install --no-install-recommends lammps" >&2; exit 2; }

"$pack" "$out" "$build/collector/libzecoll.so" "$build/collector/libzecoll_ze.so" \
  "$build/tests/zesim/libzesim.so" "$build/bench/zc_bench_app" "$build/bench/zc_devrate"
k=0
for l in "$@"; do
  mkdir -p "$out/lib/alt$k"
  cp -L "$l" "$out/lib/alt$k/libzecoll.so"
  # its driver bridge, which it loads from its own folder (without it Level Zero goes untraced)
  z=$(dirname "$(readlink -f "$l")")/libzecoll_ze.so
  [ -e "$z" ] || { echo "fullnode_pack: $z is missing (LIB's libzecoll_ze.so, beside it)" >&2; exit 2; }
  cp -L "$z" "$out/lib/alt$k/libzecoll_ze.so"
  k=$((k + 1))
done

# LAMMPS: the binary and the libraries the host lacks (everything but glibc's, the compiler's
# runtime and Open MPI's, which must be the host's own to match its mpirun)
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/bin" "$stage/lib"
cp -L "$lmp" "$stage/bin/lmp"
host='/(libc|libm|libpthread|libdl|librt|libresolv|ld-linux[^/]*|libstdc\+\+|libgcc_s|libmpi[^/]*|libopen-rte|libopen-pal|libhwloc|libevent[^/]*|libpmix|libudev|libz)\.so'
ldd "$lmp" | awk '/=> \//{print $3}' | grep -vE "$host" | while read -r l; do cp -L "$l" "$stage/lib/"; done
if ldd "$lmp" | grep -q "not found"; then
  echo "fullnode_pack: lmp misses libraries here:" >&2
  ldd "$lmp" | grep "not found" >&2
  exit 2
fi
tar -C "$stage" -cJf "$out/lammps.tar.xz" bin lib
if [ -n "${FULLNODE_LMP_MPICH:-}" ]; then
  rm -rf "$stage"/* && mkdir -p "$stage/bin" "$stage/lib"
  cp -L "$FULLNODE_LMP_MPICH" "$stage/bin/lmp"
  for t in mpiexec.hydra hydra_pmi_proxy; do
    p=$(command -v "$t") || { echo "fullnode_pack: no $t (apt-get install mpich)" >&2; exit 2; }
    cp -L "$p" "$stage/bin/"
  done
  base='/(libc|libm|libpthread|libdl|librt|libresolv|ld-linux[^/]*|libstdc\+\+|libgcc_s)\.so'
  for b in "$stage"/bin/*; do ldd "$b" | awk '/=> \//{print $3}'; done | sort -u | grep -vE "$base" |
    while read -r l; do cp -L "$l" "$stage/lib/"; done
  # UCX (MPICH's netmod) loads its transports from a directory of modules: ours, not the host's
  mkdir -p "$stage/lib/ucx"
  for m in /usr/lib/x86_64-linux-gnu/ucx/libuct_cma.so.0; do [ -e "$m" ] && cp -L "$m" "$stage/lib/ucx/libuct_cma.so"; done
  tar -C "$stage" -cJf "$out/lammps-mpich.tar.xz" bin lib
fi
du -sh "$out" "$out/lammps.tar.xz"
