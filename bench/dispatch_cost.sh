#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The MPI dispatch's cost per call (bench/README.md, "MPI flavours"): bench/zc_mpi_dispatch.c, with
# libzecoll.so preloaded, calls MPI_Comm_size through the exported entry and straight to the
# flavour's wrapper, in alternating blocks in one process; this prints, per program (one per MPI:
# zc_mpi_dispatch for Open MPI, zc_mpi_dispatch_mpich for MPICH) and recording state (closed: a
# window that never opens, the wrapper a load and a tail call; open: the call recorded as a region),
# the medians of ns per call both ways, their difference and ratio, and with --callgrind the
# instructions per call both ways (exact; the entry's jmp is the difference).
#   usage: bench/dispatch_cost.sh [--lib LIBZECOLL] [--n N] [--reps R] [--callgrind] PROGRAM...
#   e.g.   bench/dispatch_cost.sh --lib build/rel/collector/libzecoll.so --callgrind \
#            build/rel/bench/zc_mpi_dispatch build/rel/bench/zc_mpi_dispatch_mpich
set -uo pipefail
lib="" n=1000 reps=201 cg=0 progs=()
while [ $# -gt 0 ]; do
  case $1 in
    --lib) lib=$2; shift 2 ;;
    --n) n=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --callgrind) cg=1; shift ;;
    *) progs+=("$1"); shift ;;
  esac
done
[ -n "$lib" ] && [ ${#progs[@]} -gt 0 ] || { echo "usage: dispatch_cost.sh --lib LIBZECOLL [--n N] [--reps R] [--callgrind] PROGRAM..." >&2; exit 2; }
lib=$(readlink -f "$lib")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
rc=0
for p in "${progs[@]}"; do
  for state in closed open; do
    envs=(LD_PRELOAD="$lib" ZECOLL_OUTPUT="$work/trace-%p" ZECOLL_SUMMARY=0)
    [ $state = closed ] && envs+=(ZECOLL_WINDOWS=signal:SIGUSR2)
    if ! out=$(env "${envs[@]}" "$p" "$n" "$reps" 2>"$work/err"); then
      echo "dispatch_cost: $p failed:" >&2; tail -5 "$work/err" >&2; rc=1; continue
    fi
    get() { awk -v k="$1" '$1 == k {print $2}' <<<"$out"; }
    printf '%-24s %-6s ns/call: entry %7.3f  wrapper %7.3f  delta %6.3f (middle half %s..%s)  ratio %.4f\n' \
      "$(basename "$p")" "$state" "$(get via_entry_ns)" "$(get via_slot_ns)" "$(get delta_ns)" \
      "$(awk '$1 == "delta_iqr_ns" {print $2}' <<<"$out")" "$(awk '$1 == "delta_iqr_ns" {print $3}' <<<"$out")" "$(get ratio)"
    if [ $cg = 1 ]; then
      f=$work/cg.$state.$(basename "$p")
      if env "${envs[@]}" valgrind --tool=callgrind --toggle-collect=via_entry --toggle-collect=via_slot \
        --callgrind-out-file="$f.%p" "$p" "$n" 5 >"$f.log" 2>&1; then
        calls=$((n * 6)) # the warm-up block and 5 blocks
        ann=$(for x in "$f".*; do [ "$(sed -n 's/^totals: //p' "$x")" = 0 ] || callgrind_annotate --inclusive=yes --threshold=100 "$x"; done 2>/dev/null)
        ir() { awk -v fn="$1" '{ s = $0; sub(/ \[.*/, "", s); sub(/.*:/, "", s); if (s == fn) { gsub(",", "", $1); print $1; exit } }' <<<"$ann"; }
        e=$(ir via_entry) w=$(ir via_slot)
        awk -v e="$e" -v w="$w" -v c=$calls -v name="$(basename "$p")" -v st=$state 'BEGIN {
          printf "%-24s %-6s instructions/call: entry %.2f  wrapper %.2f  delta %.2f\n", name, st, e / c, w / c, (e - w) / c }'
      else
        echo "dispatch_cost: callgrind of $p failed:" >&2; tail -5 "$f.log" >&2; rc=1
      fi
    fi
  done
done
exit $rc
