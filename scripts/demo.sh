#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The main job: installs missing dependencies, builds zecoll, and runs a 4-rank MPI + Level Zero
# job (examples/ex_mpi_halo: GPU updates, halo exchanges, collectives) on zesim (the simulated
# GPU driver, through Debian's real loader) under the collector, which writes one OTF2 archive
# for the job. The job records a window (examples/demo-window.yaml: the halo steps after the
# first two). It shows what the archive holds and checks each rank's device records against the
# ground truth zesim logged of everything it executed: exactly what the window covers must be
# recorded. Then the single-process examples, same way, whole runs.
# It ends with the job's report: zecoll-aggregate (`zecoll report`) reads the archive with two MPI
# reader ranks and prints the job-wide statistics; the HTML, JSON and CSV forms go next to it.
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

# check_one <name> <truth file> [rank [facts]]: checks one archive (or one rank of the job's
# archive; facts: what the window records, tests/collector/check_trace.py)
check_one() {
  local name=$1 truth=$2 rank=${3:-} facts=${4:-} report label
  report="$out/$name${rank:+.rank$rank}.check.txt"
  label=${rank:+rank $rank: }
  if /usr/bin/python3 "$root/tests/collector/check_trace.py" check --truth "$truth" --trace "$out/$name" \
       ${rank:+--rank "$rank"} ${facts:+--facts "$facts"} > "$report"; then
    echo "  ${label}$(grep -c 'matched' "$report") operation kinds, every execution recorded once${facts:+ (those the window covers)};" \
         "worst start error $(grep -o 'worst start [0-9]* ns' "$report" | awk '{print $3}' | sort -n | tail -1) ns"
  else
    status=1
    cat "$report"
  fi
}

ranks=4
mpirun=(mpirun -np "$ranks" --oversubscribe)
[ "$(id -u)" = 0 ] && mpirun+=(--allow-run-as-root)
echo
echo "=== main job: mpirun -np $ranks zecoll run --config examples/demo-window.yaml -- ex_mpi_halo (MPI + Level Zero on zesim)"
echo "    (a recording window: from the 3rd vector_add launch, i.e. the halo steps after the first two)"
"${mpirun[@]}" -x ZE_ENABLE_ALT_DRIVERS -x ZESIM_TRUTH="$out/mpi_halo.truth-%r.jsonl" -x ZECOLL_OUTPUT="$out/mpi_halo" \
  "$build/bin/zecoll" run --config "$root/examples/demo-window.yaml" -- "$build/examples/ex_mpi_halo"
echo "--- captured: one archive for the job ($out/mpi_halo/traces.otf2; view with Vampir or otf2-print)"
/usr/bin/python3 "$root/scripts/zecoll_trace_summary.py" "$out/mpi_halo" --top 6
echo "--- each rank's device records checked against zesim's ground truth: exactly the window's operations"
echo '{"record_from_launch": {"kernel": "vector_add", "nth": 3}}' > "$out/mpi_halo.window.json"
for r in $(seq 0 $((ranks - 1))); do check_one mpi_halo "$out/mpi_halo.truth-$r.jsonl" "$r" "$out/mpi_halo.window.json"; done
echo "--- the job's MPI records checked (messages matched, collectives, communicators, clocks, windows)"
if /usr/bin/python3 "$root/tests/mpi/check_mpi_trace.py" "$out/mpi_halo" --ranks "$ranks" --devices --windows \
     > "$out/mpi_halo.mpi-check.txt"; then
  echo "  $(grep -c '^ok' "$out/mpi_halo.mpi-check.txt") checks passed;" \
       "$(grep -o '[0-9]* messages matched' "$out/mpi_halo.mpi-check.txt" | head -1)" \
       "(details: $out/mpi_halo.mpi-check.txt)"
else
  status=1
  grep -v '^ok' "$out/mpi_halo.mpi-check.txt"
fi
for name in vector_add_immediate regular_list_repeat ooo_events copy_engines multithread; do
  ex="$build/examples/ex_$name"
  echo
  echo "=== ex_$name under zecoll"
  ZESIM_TRUTH="$out/$name.truth.jsonl" ZECOLL_OUTPUT="$out/$name" "$build/bin/zecoll" run -- "$ex"
  echo "--- captured ($out/$name/traces.otf2; view with Vampir or otf2-print)"
  /usr/bin/python3 "$root/scripts/zecoll_trace_summary.py" "$out/$name" --top 5
  echo "--- checked against zesim's ground truth"
  check_one "$name" "$out/$name.truth.jsonl"
done
echo
echo "=== the main job's report: mpirun -np 2 zecoll report $out/mpi_halo (zecoll-aggregate, 2 reader ranks)"
report="$out/mpi_halo.report"
readers=(mpirun -np 2 --oversubscribe)
[ "$(id -u)" = 0 ] && readers+=(--allow-run-as-root)
if ! "${readers[@]}" "$build/bin/zecoll" report "$out/mpi_halo" --output "$report" --top 8; then
  status=1
  echo "zecoll report failed"
fi
echo
echo "=== demo done: archives and truth logs in $out"
echo "=== the job's HTML report: $report/report.html (JSON, text and CSV beside it)"
exit $status
