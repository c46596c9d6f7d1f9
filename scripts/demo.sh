#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The main job: installs missing dependencies, builds zecoll, and runs a 4-rank MPI + Level Zero
# job (examples/ex_mpi_halo: GPU updates, halo exchanges, collectives) on zesim (the simulated
# GPU driver, through Debian's real loader) under the collector, which writes one OTF2 archive
# for the job. It shows what the archive holds and checks each rank's device records against the
# ground truth zesim logged of everything it executed. Then the single-process examples, same way.
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

# check_one <name> <truth file> [rank]: checks one archive (or one rank of the job's archive)
check_one() {
  local name=$1 truth=$2 rank=${3:-} report label
  report="$out/$name${rank:+.rank$rank}.check.txt"
  label=${rank:+rank $rank: }
  if /usr/bin/python3 "$root/tests/collector/check_trace.py" check --truth "$truth" --trace "$out/$name" \
       ${rank:+--rank "$rank"} > "$report"; then
    echo "  ${label}$(grep -c 'matched' "$report") operation kinds, every execution recorded once;" \
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
echo "=== main job: mpirun -np $ranks zecoll run -- ex_mpi_halo (MPI + Level Zero on zesim)"
"${mpirun[@]}" -x ZE_ENABLE_ALT_DRIVERS -x ZESIM_TRUTH="$out/mpi_halo.truth-%r.jsonl" -x ZECOLL_OUTPUT="$out/mpi_halo" \
  "$build/bin/zecoll" run -- "$build/examples/ex_mpi_halo"
echo "--- captured: one archive for the job ($out/mpi_halo/traces.otf2; view with Vampir or otf2-print)"
/usr/bin/python3 "$root/scripts/zecoll_trace_summary.py" "$out/mpi_halo" --top 6
echo "--- each rank's device records checked against zesim's ground truth"
for r in $(seq 0 $((ranks - 1))); do check_one mpi_halo "$out/mpi_halo.truth-$r.jsonl" "$r"; done
echo "--- the job's MPI records checked (messages matched, collectives, communicators, clocks)"
if /usr/bin/python3 "$root/tests/mpi/check_mpi_trace.py" "$out/mpi_halo" --ranks "$ranks" --devices \
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
