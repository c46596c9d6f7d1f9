#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Packs what bench/aggregate_readers.sh needs on a host without Debian's OTF2 (the 16-core host:
# Ubuntu, Open MPI 4.1.6) into OUT_DIR (inside the checkout, git-ignored, carried by the device
# run): BUILD_DIR's zecoll-aggregate and zecoll-synth and the libraries device-pack.sh adds
# (libotf2 and its companions); the host's glibc and Open MPI are used.
#   usage: bench/aggregate_pack.sh BUILD_DIR OUT_DIR
#   there: BENCH_BIN=OUT_DIR bench/aggregate_readers.sh [OUT_FILE]
set -euo pipefail
build=$(cd "${1:?usage: aggregate_pack.sh BUILD_DIR OUT_DIR}" && pwd)
out=${2:?usage: aggregate_pack.sh BUILD_DIR OUT_DIR}
root=$(cd "$(dirname "$0")/.." && pwd)
pack=${ZC_DEVICE_PACK:-}
for p in "$root/../shared/tools/device-pack.sh" /work/shared/tools/device-pack.sh; do
  [ -z "$pack" ] && [ -x "$p" ] && pack=$p
done
[ -n "$pack" ] || { echo "aggregate_pack: device-pack.sh not found (set ZC_DEVICE_PACK)" >&2; exit 2; }
"$pack" "$out" "$build/bin/zecoll-aggregate" "$build/bin/zecoll-synth"
