#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The test command: installs missing dependencies, then builds and runs the whole ctest suite three
# times: a -Werror build, an ASan+UBSan build, and a TSan build (threaded tests, label "tsan"); the
# TSan build's threaded runs that write archives run twice, the second time through both writer
# threads (ZECOLL_WRITER_STAGES=2: a 2-CPU machine otherwise runs one, collector/writer/zc_writer.c). The default
# build's PAPI tests run once more with PAPI's perf_event component made to look disabled
# (ZECOLL_TEST_FAKE_NO_PMU=1, tests/papi/run_papi_test.py), so the path of a CPU that libpfm4 does
# not know stays tested on hosts that have a PMU. It ends with every test skipped in each run and
# why (each skipped test's own reason), so a green run shows what it did not test.
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
runs=() # "title|junit file" of every ctest run, for the skipped tests at the end
# run TITLE DIR [VAR=VALUE...] -- ctest args...: one ctest run, its results in a JUnit file
run() {
  local title=$1 dir=$2 n=${#runs[@]}
  shift 2
  local vars=()
  while [ "$1" != -- ]; do vars+=("$1"); shift; done
  shift
  local junit="$dir/Testing/junit-$n.xml"
  echo "=== zecoll tests: $title ($dir)"
  runs+=("$title|$junit")
  if ! env "${vars[@]}" ctest --test-dir "$dir" --output-on-failure -j"$jobs" --output-junit "$junit" "$@"; then
    status=1
    echo "=== FAILED: $title"
  fi
}

for b in $builds; do
  dir="$root/build/test-$b"
  case $b in
    default) san=none; sel=() ;;
    asan)    san=asan; sel=(-LE nosan) ;;
    tsan)    san=tsan; sel=(-L tsan) ;;
    *) echo "unknown build '$b'" >&2; exit 2 ;;
  esac
  cmake -S "$root" -B "$dir" -DZC_WERROR=ON -DZC_SANITIZER=$san -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
  cmake --build "$dir" -j"$jobs"
  run "$b build" "$dir" -- "${sel[@]}" "$@"
  if [ "$b" = default ]; then
    run "$b build, PAPI tests without perf_event (ZECOLL_TEST_FAKE_NO_PMU=1)" "$dir" ZECOLL_TEST_FAKE_NO_PMU=1 -- \
      -L papi "$@"
  fi
  if [ "$b" = tsan ]; then
    # the threaded runs that write through the writer and have no .stages2 twin of their own
    run "$b build, ZECOLL_WRITER_STAGES=2" "$dir" ZECOLL_WRITER_STAGES=2 -- "${sel[@]}" \
      -R 'multithread$|thread_churn|threads_shared|mpi\.trace\.threads' "$@"
  fi
done

# What was not tested: each skipped test with the reason it printed (its last line naming a skip).
echo "=== skipped tests (not tested in these runs)"
for r in "${runs[@]}"; do
  python3 - "${r%%|*}" "${r#*|}" <<'PY'
import os, sys
import xml.etree.ElementTree as ET
title, path = sys.argv[1], sys.argv[2]
if not os.path.exists(path):
    sys.exit(print(f"{title}: no results ({path})"))
cases = ET.parse(path).getroot().iter("testcase")
skipped = [c for c in cases if c.get("status") == "notrun" or c.find("skipped") is not None]
print(f"{title}: {len(skipped) or 'none'} skipped")
for c in skipped:
    out = [l.strip() for l in (c.findtext("system-out") or "").splitlines() if l.strip()]
    why = [l for l in out if "skip" in l.lower()]
    s = c.find("skipped")
    print(f"  {c.get('name')}: {(why or out or [s.get('message') if s is not None else 'not run'])[-1]}")
PY
done
exit $status
