#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Fuzzes the configuration loader (tests/config/fuzz_config.c) with libFuzzer, then merges what
# found new coverage into the committed corpus tests/config/fuzz/, which ctest replays in every
# build (config.fuzz_replay). Usage: scripts/fuzz-config.sh [seconds, default 300] [jobs, default 1]
# A crash leaves build/fuzz/crash-* (the input): add it to tests/config/fuzz/ with the fix.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
secs=${1:-300} jobs=${2:-1}
"$root/scripts/setup-deps.sh" clang
out="$root/build/fuzz"
mkdir -p "$out/work"
clang -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined -D_GNU_SOURCE \
  -I"$root/config" "$root"/config/zc_config{,_yaml,_windows,_render,_values}.c \
  "$root/tests/config/fuzz_config.c" $(pkg-config --cflags --libs yaml-0.1) -o "$out/fuzz_config"
cd "$out"
# the corpus, the bad and good configurations and the examples are the seeds
./fuzz_config -max_len=2048 -timeout=10 -rss_limit_mb=2048 -max_total_time="$secs" -jobs="$jobs" -workers="$jobs" \
  -dict="$root/tests/config/fuzz.dict" work "$root/tests/config/fuzz" "$root/tests/config/bad" \
  "$root/tests/config/good" "$root/examples"
# keep the corpus small: inputs that add edges, not counters
./fuzz_config -merge=1 -use_counters=0 "$root/tests/config/fuzz" work
echo "corpus: $(ls "$root/tests/config/fuzz" | wc -l) inputs in tests/config/fuzz"
