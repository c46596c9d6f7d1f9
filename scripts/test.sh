#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The test command: installs missing dependencies, then builds and runs the whole ctest suite three
# times: a -Werror build, an ASan+UBSan build, and a TSan build (threaded tests, label "tsan"); the
# TSan build's tests run twice, the second time through both writer threads
# (ZECOLL_WRITER_STAGES=2: a 2-CPU machine otherwise runs one, collector/writer/zc_writer.c).
# Usage: scripts/test.sh [extra ctest args]   (ZC_TEST_BUILDS="default asan tsan" picks builds)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
"$root/scripts/setup-deps.sh"

jobs=$(nproc)
builds=${ZC_TEST_BUILDS:-default asan tsan}
# Sanitizer reports must fail the test that triggered them.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1}

status=0
for b in $builds; do
  dir="$root/build/test-$b"
  case $b in
    default) san=none; sel=() ;;
    asan)    san=asan; sel=(-LE nosan) ;;
    tsan)    san=tsan; sel=(-L tsan) ;;
    *) echo "unknown build '$b'" >&2; exit 2 ;;
  esac
  echo "=== zecoll tests: $b build ($dir)"
  cmake -S "$root" -B "$dir" -DZC_WERROR=ON -DZC_SANITIZER=$san -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
  cmake --build "$dir" -j"$jobs"
  if ! ctest --test-dir "$dir" --output-on-failure -j"$jobs" "${sel[@]}" "$@"; then
    status=1
    echo "=== FAILED: $b build"
  fi
  if [ "$b" = tsan ]; then
    echo "=== zecoll tests: $b build, ZECOLL_WRITER_STAGES=2"
    if ! ZECOLL_WRITER_STAGES=2 ctest --test-dir "$dir" --output-on-failure -j"$jobs" "${sel[@]}" "$@"; then
      status=1
      echo "=== FAILED: $b build, ZECOLL_WRITER_STAGES=2"
    fi
  fi
done
exit $status
