#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# What a real application's MPI calls cost the collector (issue 22, target 1): Debian's LAMMPS
# (`lmp`, apt-get install lammps) on NP ranks (default 2) with fullnode.sh's in.lj (read from
# that script, so both run the same input), step counts S1 and S2 (default 200 and 400), so that
# start-up and finalize cancel in every slope. It prints
#   calls     MPI calls per rank per step and per second, by function, and OTF2 events per call
#             (the archive of the collector's callgrind runs, read with otf2-print; the steps a
#             second from native runs without the collector, TSTEPS and 2*TSTEPS steps, 3 each)
#   ratio     the native wall time with / without the collector on this machine (NP ranks, as
#             many cores as ranks when NP = nproc: a full node, like the 16-core host's)
#   ir        instructions per MPI call on all threads of all ranks, with minus without the
#             collector, by part (bench/ir_parts.py: pipeline_ir.sh's grouping), callgrind
#             --separate-threads=yes on every rank, slope between S1 and S2 steps; once with the
#             journal's flusher at its default interval and once idle (as pipeline_ir.sh runs it).
#             Under callgrind the program runs ~50x slower, so the flusher's timed passes fall on
#             ~50x fewer steps' worth of calls natively: the idle row is the closer figure for a
#             native run, the default row an upper bound.
#   share     the predicted CPU share: instructions added per second of a rank (per call times
#             calls a second) over the rank's own instructions per second without the collector
#             (its instructions per step under callgrind times the native steps a second). Open
#             MPI's progress loop spins while it waits, and how long depends on timing, so the
#             'mpi lib' row and the rank's own count move a little between runs.
#   usage: bench/lammps_ir.sh BUILD_DIR [S1 S2]   (LAMMPS_IR_NP=2 LAMMPS_IR_TSTEPS=2000
#          LAMMPS_IR_KEEP=DIR keeps the profiles; LAMMPS_IR_DETAIL=1 also lists each function that moved)
set -uo pipefail
build=$(cd "${1:?usage: lammps_ir.sh BUILD_DIR [S1 S2]}" && pwd)
s1=${2:-200}
s2=${3:-400}
np=${LAMMPS_IR_NP:-2}
tsteps=${LAMMPS_IR_TSTEPS:-2000}
here=$(cd "$(dirname "$0")" && pwd)
lib=$build/collector/libzecoll.so
for t in valgrind otf2-print mpirun; do
  command -v $t >/dev/null || { echo "lammps_ir: $t is not installed (scripts/setup-deps.sh installs it)" >&2; exit 2; }
done
lmp=$(command -v lmp) || { echo "lammps_ir: no lmp on PATH: apt-get install --no-install-recommends lammps" >&2; exit 2; }
[ -e "$lib" ] || { echo "lammps_ir: $lib is missing (build BUILD_DIR first)" >&2; exit 2; }
[ "$s2" -gt "$s1" ] || { echo "lammps_ir: S2 ($s2) must exceed S1 ($s1)" >&2; exit 2; }
work=${LAMMPS_IR_KEEP:-$(mktemp -d)}
mkdir -p "$work"
[ -n "${LAMMPS_IR_KEEP:-}" ] || trap 'rm -rf "$work"' EXIT

# the input: fullnode.sh's in.lj (LAMMPS's bench/in.lj, 2,048 atoms), one copy in the repository
# shellcheck disable=SC2016 # the pattern names fullnode.sh's literal "$work"
sed -n '/^cat >"$work\/in.lj" <<'"'"'EOF'"'"'$/,/^EOF$/p' "$here/fullnode.sh" | sed '1d;$d' >"$work/in.lj"
grep -q '^run' "$work/in.lj" || { echo "lammps_ir: no in.lj in $here/fullnode.sh" >&2; exit 2; }

mpirun=(mpirun --allow-run-as-root --oversubscribe -np "$np")
lj() { # lj <steps> [VAR=VALUE...] -- [tool...]: one LAMMPS run; VARs exported to the ranks
  local n=$1 xs=(); shift
  while [ $# -gt 0 ] && [ "$1" != -- ]; do xs+=(-x "$1"); shift; done
  shift
  "${mpirun[@]}" "${xs[@]}" "$@" "$lmp" -nocite -log none -screen none -var steps "$n" -in "$work/in.lj"
}
col=("LD_PRELOAD=$lib" "ZECOLL_SUMMARY=0")
# Under callgrind, S2 - S1 steps make a few thousand events per rank, fewer than a buffer holds
# (buffer.events, 65,536): all of them would be converted at MPI_Finalize, on the application
# thread, and the slope would measure that path rather than a long run's (full buffers handed to
# the writer thread). Small buffers (LAMMPS_IR_BUFFER, default 1,024 events) make the slope cross
# several; their per-buffer costs then weigh 64 times what they weigh at the default.
buf=${LAMMPS_IR_BUFFER:-1024}
export LAMMPS_IR_NOTE="buffer.events $buf"
cg() { # cg <name> <steps> [VAR=VALUE...]: every rank under callgrind, a profile per thread
  local name=$1 n=$2; shift 2
  mkdir -p "$work/$name.n$n"
  lj "$n" "ZECOLL_OUTPUT=$work/$name.n$n/trace" "$@" -- \
    valgrind --tool=callgrind --separate-threads=yes --callgrind-out-file="$work/$name.n$n/cg.%p" \
    >"$work/$name.n$n.log" 2>&1 || { echo "lammps_ir: $name, $n steps failed:" >&2; tail -5 "$work/$name.n$n.log" >&2; exit 1; }
}
for n in "$s1" "$s2"; do
  cg none "$n"
  cg with "$n" "${col[@]}" "ZECOLL_BUFFER_EVENTS=$buf"
  cg idle "$n" "${col[@]}" "ZECOLL_BUFFER_EVENTS=$buf" ZECOLL_FLUSH_INTERVAL_MS=3600000
done
# the calls each rank makes, by function (the archive of the runs with the collector)
for n in "$s1" "$s2"; do
  fs=("$work"/with.n"$n"/trace*/traces.otf2)
  f=${fs[0]}
  [ -e "$f" ] || { echo "lammps_ir: no archive from the run of $n steps" >&2; exit 1; }
  otf2-print "$f" | awk '$1 == "ENTER" && $5 ~ /^"P?MPI_/ { gsub(/"/, "", $5); c[$5]++ } $1 ~ /^[A-Z_]+$/ && $2 ~ /^[0-9]+$/ { e++ }
    END { for (k in c) print k, c[k]; print "EVENTS", e }' >"$work/calls.n$n"
done
# native steps a second, without and with the collector (alternating, 3 each); LAMMPS_IR_SPS
# instead takes the steps a second measured elsewhere (the 16-core host's) and skips these runs
timed() { local t0 t1; t0=$(date +%s.%N); "$@" >/dev/null 2>&1 || return 1; t1=$(date +%s.%N); echo "$t0 $t1" | awk '{print $2 - $1}'; }
: >"$work/times"
if [ -z "${LAMMPS_IR_SPS:-}" ]; then
  for _ in 1 2 3; do
    for n in "$tsteps" $((2 * tsteps)); do
      echo "none $n $(timed lj "$n" --)" >>"$work/times"
      echo "with $n $(timed lj "$n" "${col[@]}" "ZECOLL_OUTPUT=$work/t-%p" --)" >>"$work/times"
      rm -rf "$work"/t-*
    done
  done
fi

/usr/bin/python3 "$here/lammps_ir.py" "$work" "$s1" "$s2" "$np" "$tsteps" "${LAMMPS_IR_SPS:-}"
