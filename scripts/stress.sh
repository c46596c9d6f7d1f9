#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Flakiness check (issue 10 item 15): runs a label's tests N times in a row in an existing build,
# stopping at the first failure, with CI's parallelism, so a test that fails once in a few runs under
# load shows up before it reaches CI.
# Usage: scripts/stress.sh [BUILD_DIR] [LABEL_REGEX] [N]   (default: build/test-default mpi 20)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
dir=${1:-$root/build/test-default}
label=${2:-mpi}
n=${3:-20}
[ -f "$dir/CTestTestfile.cmake" ] || { echo "stress.sh: $dir: not a configured build (run scripts/test.sh first)" >&2; exit 2; }
for i in $(seq 1 "$n"); do
  if ! out=$(ctest --test-dir "$dir" -L "$label" -j"$(nproc)" --output-on-failure 2>&1); then
    echo "$out" | tail -60
    echo "stress.sh: round $i of $n FAILED (label $label, $dir)"
    exit 1
  fi
  echo "round $i of $n: $(echo "$out" | grep -o '[0-9]* tests failed out of [0-9]*' || true)"
done
echo "stress.sh: $n rounds of label '$label' passed"
