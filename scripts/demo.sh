#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The main job: installs missing dependencies, builds zecoll, and runs the example Level Zero
# programs on zesim (the simulated GPU driver, through Debian's real loader) under the collector.
# For each program it shows what the trace captured and checks the trace against the ground
# truth zesim logged of everything it executed.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
"$root/scripts/setup-deps.sh"

build="$root/build/demo"
out="$root/out/demo"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j"$(nproc)"
rm -rf "$out"
mkdir -p "$out"

export ZE_ENABLE_ALT_DRIVERS="$build/tests/zesim/libzesim.so"
status=0
for name in vector_add_immediate regular_list_repeat ooo_events copy_engines multithread; do
  ex="$build/examples/ex_$name"
  echo
  echo "=== ex_$name under zecoll"
  ZESIM_TRUTH="$out/$name.truth.jsonl" ZECOLL_OUTPUT="$out/$name" "$build/bin/zecoll" run -- "$ex"
  echo "--- captured ($out/$name/traces.otf2; view with Vampir or otf2-print)"
  /usr/bin/python3 "$root/scripts/zecoll_trace_summary.py" "$out/$name" --top 5
  echo "--- checked against zesim's ground truth"
  if /usr/bin/python3 "$root/tests/collector/check_trace.py" check --truth "$out/$name.truth.jsonl" \
       --trace "$out/$name" > "$out/$name.check.txt"; then
    echo "  $(grep -c 'matched' "$out/$name.check.txt") operation kinds, every execution recorded once;" \
         "worst start error $(grep -o 'worst start [0-9]* ns' "$out/$name.check.txt" | awk '{print $3}' | sort -n | tail -1) ns" \
         "(details: $out/$name.check.txt)"
  else
    status=1
    cat "$out/$name.check.txt"
  fi
done
echo
echo "=== demo done: archives and truth logs in $out"
exit $status
