#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Fuzzes zecoll-aggregate's reader path with libFuzzer for a while (default 10 minutes) and adds
# what it finds to the corpus kept in tests/aggregate/fuzz_corpus (minimised with -merge=1).
# Crashes are left in build/fuzz/artifacts: fix them, then copy the input into the corpus.
# Needs clang (scripts/setup-deps.sh installs it). Usage: scripts/fuzz-aggregate.sh [seconds]
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
"$root/scripts/setup-deps.sh"
secs=${1:-600}
build="$root/build/fuzz"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j"$(nproc)" --target zc_agg_fuzz zecoll-synth >/dev/null
rm -rf "$build/base" "$build/new"
mkdir -p "$build/artifacts" "$build/new"
# the base archive the corpus inputs are files of (tests/aggregate/fuzz_run.py writes the same)
"$build/bin/zecoll-synth" --out "$build/base" --ranks 2 --queues 2 --ops 8 --skew --off --metrics --small-chunks
export ZC_FUZZ_BASE="$build/base" ASAN_OPTIONS=detect_leaks=0:allocator_may_return_null=1
"$build/aggregate/zc_agg_fuzz" "$build/new" "$root/tests/aggregate/fuzz_corpus" -max_total_time="$secs" -timeout=20 \
  -rss_limit_mb=2048 -max_len=8192 -len_control=0 -artifact_prefix="$build/artifacts/" -print_final_stats=1 || true
"$build/aggregate/zc_agg_fuzz" -merge=1 "$root/tests/aggregate/fuzz_corpus" "$build/new"
echo "corpus: $(ls "$root/tests/aggregate/fuzz_corpus" | wc -l) inputs; findings: $(ls "$build/artifacts" | wc -l) in $build/artifacts"
