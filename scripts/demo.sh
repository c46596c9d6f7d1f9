#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The main job: installs missing dependencies, builds zecoll, and runs the example Level Zero
# programs on zesim (the simulated GPU driver) through Debian's real loader, printing what each
# program did and what the simulated GPUs executed (from zesim's ground-truth log).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
"$root/scripts/setup-deps.sh"

build="$root/build/demo"
out="$root/out/demo"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j"$(nproc)"
mkdir -p "$out"
rm -f "$out"/*.jsonl

export ZE_ENABLE_ALT_DRIVERS="$build/tests/zesim/libzesim.so"
shopt -s nullglob
examples=("$build"/examples/ex_*)
[ ${#examples[@]} -gt 0 ] || { echo "no example programs were built" >&2; exit 1; }
for ex in "${examples[@]}"; do
  [ -x "$ex" ] && [ -f "$ex" ] || continue
  name=$(basename "$ex")
  echo "=== $name"
  ZESIM_TRUTH="$out/$name.jsonl" "$ex"
  echo "--- zesim ground truth ($out/$name.jsonl)"
  /usr/bin/python3 "$root/scripts/zesim_truth_summary.py" "$out/$name.jsonl"
done
echo "=== demo done: truth logs in $out"
