#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A full node (issue 22): what the collector costs where every core runs a rank, and where a GPU
# runs short kernels back to back. For the 16-core host, from a folder packed here by
# bench/fullnode_pack.sh (device-pack.sh's binaries and libraries plus Debian's LAMMPS and the
# libraries it needs that the host lacks). Side by side in one run, each variant once per
# repetition, the order alternating, medians printed with each target:
#   lj.N       LAMMPS in.lj (2,048 atoms), NP ranks bound to cores, 15,000 steps: without / with
#              (target ×1.03); also unbound (--bind-to none), for the occupancy target. Beside
#              each run's wall: LAMMPS's own "Loop time of" (the steps alone, without mpirun's
#              launch and the finalize) and the CPU steal during it (the host is a KVM guest)
#   fixed      the same, 300 steps, with MPI recording off (ZECOLL_RECORD_MPI=0) against no
#              collector: the fixed cost of starting and ending an NP-rank job (target ≤ 20 ms);
#              beside it recording on, the journal off, the journal's syncs off
#   phases     fixed's run (MPI recording off) with ZECOLL_PHASE_TIMES=1: where the fixed cost goes,
#              per step of the collector's start and end, wall and CPU, across the ranks
#              (bench/phase_times.py; OUTDIR/phases.withK.txt holds the raw lines)
#   kern.US    zc_bench_app kernels 200000 US on an in-order immediate list, US = 1 and 2:
#              without / with (targets ×1.05 / ×1.02); beside them the control (zc_bench_app
#              kernels ... ctl): no collector, the app makes its driver calls (a timestamp event
#              per kernel, read and reset by a second thread every 1 ms), the simulated driver's floor
#   kernpoll   (not in the default parts) kern with zesim's engines polling for submissions and
#              for a running kernel's end (ZESIM_POLL_US=50: a command streamer polls) instead of
#              sleeping, bound as kernpin (since round 11; unbound before)
#   kernpin    (not in the default parts) kern with the three busy threads placed alike in every
#              run: the app's thread bound to one CPU for the timed loop (ZC_BENCH_CPU), zesim's
#              engine to a CPU of another core (ZESIM_ENGINE_CPUS), the collector's threads and the
#              control's reader free; the host placing them anew each run spread single
#              repetitions from x0.78 to x1.31 with the same library (results/issue22-kernels6.md)
#   ljhalf     (not in the default parts) LAMMPS without and with the collector at the same time,
#              each NP/2 ranks bound to one half of the cores (whole cores, by sysfs topology;
#              the halves swapped every repetition): whatever else the host runs meanwhile
#              slows both alike, so the repetition's own ratio is what is compared. Each job has
#              half lj's atoms (a 4x8x8 lattice, processors 2 2 2 at 16 ranks) so that a rank's
#              domain is the one of lj at NP ranks (2x4x4 cells), all six directions through MPI.
#              FULLNODE_HALF (below) pairs two builds or settings of the collector the same way
#   reg        zc_bench_app reglist 500000: a regular list of 500,000 kernels appended, executed once,
#              synchronised (run_s), per kernel: without / with (target ≤ +200 ns); beside them the
#              control (zc_bench_app reglist ... ctl): no collector, the app makes its driver calls
#              (an event per kernel, the helper lists, the harvest and its reads), the simulated driver's floor
#   idle       zc_bench_app kernels 2000 1, then 2 s idle with its list (the collector's stream)
#              still there: context switches per second of the process's other threads in that
#              window (zc_bench_app ZC_BENCH_IDLE_MS; /proc/self/task/*/status), without / with:
#              the wake-ups our background threads cost a node that does nothing (occupancy)
#   usage: bench/fullnode.sh DIR [OUTDIR]   (FULLNODE_REPS=5 FULLNODE_NP=16 FULLNODE_STEPS=15000
#                                            FULLNODE_PARTS="lj fixed phases kern reg idle" FULLNODE_LIBS="lib.so ...")
# FULLNODE_LIBS: other libzecoll.so builds measured beside DIR's in the same repetitions (a
# before/after comparison: DIR/lib/alt0/libzecoll.so ... from fullnode_pack.sh). On the host, from the
# checkout that travels: bash bench/fullnode.sh build/dev-full $OUT/fn. The device tool sends the
# session's checkout, not a helper's worktree: from a worktree, copy the packed folder and this
# script with phase_times.py into an ignored folder of that checkout, carry it, and run the copy. OUTDIR gets table.txt (the medians) and raw.txt (every run).
# FULLNODE_PEERS="NAME=LIB[:VAR=VALUE...] ...": other tools, preloaded instead of the collector,
# measured in the same repetitions as further variants (lj bound to cores, fixed with everything
# recorded, mpi0), e.g. "mpip=DIR/peers/libmpiP.so:MPIP=-k0" (values without spaces or colons);
# each run in a working directory of its own (their reports land there; removed after the run).
# Nothing here builds them: bench/README.md says how they were built and where the figures are.
#   mpi0       (not in the default parts) zc_mpi_bench self 200000: 0-byte Irecv/Isend/Waitall,
#              1 rank bound to a core, ns per call (DIR/bin/zc_mpi_bench: pack it with device-pack.sh)
# FULLNODE_MPI=mpich: the LAMMPS parts (lj, fixed, phases) under MPICH instead of the host's Open MPI:
# a LAMMPS built for MPICH with Hydra and Debian's MPICH libraries travel in DIR/lammps-mpich.tar.xz
# (fullnode_pack.sh with FULLNODE_LMP_MPICH=path/to/lmp); mpiexec.hydra with the fork launcher,
# -bind-to core|none; the collector picks its MPICH flavour at start (issue 21).
set -uo pipefail
D=$(cd "${1:?usage: fullnode.sh DIR [OUTDIR]}" && pwd)
out=${2:-$(mktemp -d)}
mkdir -p "$out"
reps=${FULLNODE_REPS:-5}
np=${FULLNODE_NP:-$(nproc)}
steps=${FULLNODE_STEPS:-15000}
parts=" ${FULLNODE_PARTS:-lj fixed kern reg idle} "
part() { [[ "$parts" == *" $1 "* ]]; }
export LD_LIBRARY_PATH=$D/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
# FULLNODE_ZESIM: another build of the simulated driver (a before/after of zesim's own changes)
export ZE_ENABLE_ALT_DRIVERS=${FULLNODE_ZESIM:-$D/lib/libzesim.so}
unset ZESIM_TRUTH
libs=("$D/lib/libzecoll.so")
for l in ${FULLNODE_LIBS:-}; do libs+=("$(readlink -f "$l")"); done
app=$D/bin/zc_bench_app
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# LAMMPS travels compressed (fullnode_pack.sh): unpacked here, its libraries after the pack's
lmp=${FULLNODE_LMP:-}
mpi=${FULLNODE_MPI:-openmpi}
tarball=$D/lammps.tar.xz
[ "$mpi" = mpich ] && tarball=$D/lammps-mpich.tar.xz
[ "$mpi" = openmpi ] || [ "$mpi" = mpich ] || { echo "fullnode: FULLNODE_MPI=$mpi: openmpi or mpich" >&2; exit 2; }
if [ -z "$lmp" ] && [ -f "$tarball" ] && { part lj || part fixed || part phases || part ljhalf; }; then
  mkdir -p "$work/lammps" && tar -C "$work/lammps" -xJf "$tarball"
  lmp=$work/lammps/bin/lmp
  export LD_LIBRARY_PATH=$LD_LIBRARY_PATH:$work/lammps/lib
  [ "$mpi" = mpich ] && export PATH=$work/lammps/bin:$PATH UCX_MODULE_DIR=$work/lammps/lib/ucx
fi
lmp=${lmp:-$(command -v lmp || true)}
raw=$out/raw.txt
: >"$raw"
py=$(command -v python3)
# the peers: names, libraries and their settings
peers=()
declare -A peer_lib peer_env
for s in ${FULLNODE_PEERS:-}; do
  n=${s%%=*}
  IFS=: read -ra f <<<"${s#*=}"
  [[ "$s" == *=* && "$n" =~ ^[A-Za-z0-9_]+$ && -n "${f[0]:-}" ]] ||
    { echo "fullnode: FULLNODE_PEERS: '$s' is not NAME=LIB[:VAR=VALUE...]" >&2; exit 2; }
  [ -e "${f[0]}" ] || { echo "fullnode: FULLNODE_PEERS: $n: ${f[0]} is missing" >&2; exit 2; }
  peers+=("$n"); peer_lib[$n]=$(readlink -f "${f[0]}"); peer_env[$n]="${f[*]:1}"
done
# FULLNODE_KERN_ENVS="NAME=VAR=VALUE[:VAR=VALUE] ...": the kernel parts also run the first library
# with these settings, printed over the default and over no collector (e.g. noapi=ZECOLL_API_TIMING=0)
read -ra kern_envs <<<"${FULLNODE_KERN_ENVS:-}"
mapp=$D/bin/zc_mpi_bench
if part mpi0 && [ ! -x "$mapp" ]; then echo "fullnode: $mapp is missing (device-pack.sh DIR zc_mpi_bench)" >&2; exit 2; fi
for f in "$app" "${libs[@]}" "$ZE_ENABLE_ALT_DRIVERS"; do
  [ -e "$f" ] || { echo "fullnode: $f is missing (pack with bench/fullnode_pack.sh)" >&2; exit 2; }
done
if part lj || part fixed || part phases || part ljhalf; then
  [ -n "$lmp" ] && [ -x "$lmp" ] || { echo "fullnode: no LAMMPS (bench/fullnode_pack.sh packs Debian's)" >&2; exit 2; }
  if [ "$mpi" = mpich ]; then
    command -v mpiexec.hydra >/dev/null || { echo "fullnode: no mpiexec.hydra (FULLNODE_LMP_MPICH for fullnode_pack.sh)" >&2; exit 2; }
  else command -v mpirun >/dev/null || { echo "fullnode: mpirun is not on PATH" >&2; exit 2; }; fi
fi

# in.lj of LAMMPS's bench/, 2,048 atoms (an 8x8x8 fcc lattice); the step count from the command line
cat >"$work/in.lj" <<'EOF'
units           lj
atom_style      atomic
lattice         fcc 0.8442
region          box block 0 8 0 8 0 8
create_box      1 box
create_atoms    1 box
mass            1 1.0
velocity        all create 1.44 87287 loop geom
pair_style      lj/cut 2.5
pair_coeff      1 1 1.0 1.0 2.5
neighbor        0.3 bin
neigh_modify    delay 0 every 20 check no
fix             1 all nve
thermo          1000
run             ${steps}
EOF

# ljhalf's input: half the box along x, the same domain per rank at half the ranks
grid='* * *'; [ "$np" = 16 ] && grid='2 2 2' # 4x2x2 at 16 ranks: a rank's cells 2x4x4 in both
sed -e 's/^region .*/region          box block 0 4 0 8 0 8/' -e "s/^create_box/processors      $grid\\ncreate_box/" \
  "$work/in.lj" >"$work/in-half.lj"
# the CPUs ordered by package and core (hardware threads of a core next to each other): halves
# of whole cores for ljhalf, and kernpin's two CPUs on different cores
mapfile -t cpus_by_core < <("$py" - <<'PYEOF'
import glob, os, re
rows = []
for d in glob.glob('/sys/devices/system/cpu/cpu[0-9]*'):
    c = int(re.sub(r'.*cpu', '', d))
    try:
        pkg = int(open(d + '/topology/physical_package_id').read()); core = int(open(d + '/topology/core_id').read())
    except OSError:
        pkg, core = 0, c
    if c in os.sched_getaffinity(0): rows.append((pkg, core, c))
for r in sorted(rows): print(r[2], f'{r[0]}.{r[1]}')
PYEOF
)
half_a=() half_b=()
for ((x = 0; x < ${#cpus_by_core[@]}; x++)); do
  c=${cpus_by_core[x]%% *}
  if [ $x -lt $((${#cpus_by_core[@]} / 2)) ]; then half_a+=("$c"); else half_b+=("$c"); fi
done
pin_app=${cpus_by_core[0]%% *} pin_eng=""
for e in "${cpus_by_core[@]}"; do [ "${e#* }" != "${cpus_by_core[0]#* }" ] && { pin_eng=${e%% *}; break; }; done

# steal: the CPU time the hypervisor took from this guest, all CPUs, in ms (/proc/stat's 8th
# field, USER_HZ 100). The host is a KVM guest whose repetitions spread ±10%: a run's steal says
# whether another tenant took the cores during it (printed per variant beside the LAMMPS rows)
steal() { awk '/^cpu / {print $9 * 10; exit}' /proc/stat 2>/dev/null || echo 0; }
# elapsed T0 T1: seconds between two `date +%s.%N` readings; loop_time LOG: LAMMPS's "Loop time of"
elapsed() { "$py" -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.4f}')" "$1" "$2"; }
loop_time() { awk '/^Loop time of/ {t = $4} END {print t + 0 ? t : "nan"}' "$1"; }
# timed <name> <cmd...>: the wall time of one run (s), recorded under name; a failed run is nan.
# A LAMMPS run also records its own "Loop time of" (loop.<name>: the 15,000 steps without
# mpirun's launch, the set-up and the finalize, whose spread is not ours) and the steal (steal.<name>)
declare -A vals
timed() {
  local name=$1; shift
  local t0 t1 rc s0 s1
  rm -f "$work/lmp.log"
  s0=$(steal)
  t0=$(date +%s.%N)
  "$@" >"$work/run.out" 2>&1; rc=$?
  t1=$(date +%s.%N)
  s1=$(steal)
  local v lt=nan
  if [ $rc = 0 ]; then v=$(elapsed "$t0" "$t1")
  else v=nan; echo "fullnode: $name failed (rc $rc):" >&2; tail -5 "$work/run.out" >&2; fi
  vals[$name]+="$v "
  vals[steal.$name]+="$((s1 - s0)) "
  if [ -f "$work/lmp.log" ]; then
    [ $rc = 0 ] && lt=$(loop_time "$work/lmp.log")
    vals[loop.$name]+="$lt "
  fi
  echo "$name $v steal_ms $((s1 - s0)) loop_s $lt" >>"$raw"
  rm -rf "$work"/t-* "$work/lmp.log"
}
# json <name> <field> <cmd...>: a field of the JSON line zc_bench_app prints
json() {
  local name=$1 f=$2; shift 2
  local o v
  o=$("$@" 2>>"$out/stderr.txt" | grep "^{" | tail -1)
  v=$("$py" -c "import json,sys; print(json.loads(sys.argv[1])[sys.argv[2]])" "$o" "$f" 2>/dev/null || echo nan)
  vals[$name]+="$v "
  echo "$name $v $o" >>"$raw"
  rm -rf "$work"/t-*
}
median() { printf '%s\n' "$@" | grep -v nan | sort -g | awk '{a[NR]=$1} END {if (NR) print a[int((NR+1)/2)]}'; }
med() { [ -n "${vals[$1]:-}" ] && median ${vals[$1]}; }
row() { printf '%-62s %10s %10s %24s  %s\n' "$@" | tee -a "$out/table.txt"; }
cmp() { # cmp LABEL KEY_WITHOUT KEY_WITH TARGET ratio|ms|delta
  local a b r
  a=$(med "$2"); b=$(med "$3")
  [ -n "$a" ] && [ -n "$b" ] || { row "$1" "${a:-n/a}" "${b:-n/a}" "" "$4"; return; }
  if [ "$5" = delta ]; then r=$("$py" -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):+.1f}')" "$a" "$b")
  elif [ "$5" = ns_reg ]; then # per kernel of the 500,000, and paired (each repetition's own difference)
    r=$("$py" -c "
import statistics as st, sys, math
a, b = float(sys.argv[1]), float(sys.argv[2])
x = [float(v) for v in sys.argv[3].split()]; y = [float(v) for v in sys.argv[4].split()]
p = [1e9 * (q - o) / 500000 for o, q in zip(x, y) if not (math.isnan(o) or math.isnan(q))]
print(f'{1e9 * (b - a) / 500000:+.0f} ns/kernel' + (f' (paired {st.median(p):+.0f})' if len(x) == len(y) and p else ''))" \
      "$a" "$b" "${vals[$2]}" "${vals[$3]}")
  elif [ "$5" = ms ]; then r=$("$py" -c "import sys; print(f'{1000 * (float(sys.argv[2]) - float(sys.argv[1])):+.1f} ms')" "$a" "$b")
  else # the ratio of the medians, and the median of the repetitions' own ratios (paired: each
    # repetition's variants ran next to each other, so a base that drifts within a run cancels)
    r=$("$py" -c "
import statistics as st, sys, math
a, b = float(sys.argv[1]), float(sys.argv[2])
x = [float(v) for v in sys.argv[3].split()]; y = [float(v) for v in sys.argv[4].split()]
p = [q / o for o, q in zip(x, y) if not (math.isnan(o) or math.isnan(q)) and o > 0]
print(f'x{b / a:.3f}' + (f' (paired x{st.median(p):.3f})' if len(x) == len(y) and p else ''))" \
      "$a" "$b" "${vals[$2]}" "${vals[$3]}"); fi
  row "$1" "$a" "$b" "$r" "$4"
}

mpirun=(mpirun --allow-run-as-root --oversubscribe)
# lmp_launch NP OMPI_BINDING HYDRA_BINDING LOG INPUT STEPS [env...]: LAMMPS on NP ranks under the
# chosen MPI, bound as Open MPI's options (words) or Hydra's -bind-to value say
lmp_launch() {
  local n=$1 ob=$2 hb=$3 log=$4 input=$5 steps_=$6; shift 6
  local xs=() e
  if [ "$mpi" = mpich ]; then # Hydra: -genv NAME VALUE; the fork launcher (no ssh on one node)
    for e in "$@"; do xs+=(-genv "${e%%=*}" "${e#*=}"); done
    mpiexec.hydra -launcher fork -bind-to "$hb" -n "$n" -genv LD_LIBRARY_PATH "$LD_LIBRARY_PATH" \
      -genv UCX_MODULE_DIR "$UCX_MODULE_DIR" \
      -genv ZE_ENABLE_ALT_DRIVERS "$ZE_ENABLE_ALT_DRIVERS" "${xs[@]}" \
      "$lmp" -nocite -log "$log" -screen none -var steps "$steps_" -in "$input"
    return
  fi
  for e in "$@"; do xs+=(-x "$e"); done
  # shellcheck disable=SC2086  # the binding options are words
  "${mpirun[@]}" $ob -np "$n" -x LD_LIBRARY_PATH -x ZE_ENABLE_ALT_DRIVERS "${xs[@]}" \
    "$lmp" -nocite -log "$log" -screen none -var steps "$steps_" -in "$input"
}
lj() { # lj <bind: core|none> <steps> [env...]
  local bind=$1 n=$2; shift 2
  lmp_launch "$np" "--bind-to $bind" "$bind" "$work/lmp.log" "$work/in.lj" "$n" "$@"
}
col() { echo "LD_PRELOAD=$1" ZECOLL_OUTPUT="$work/t-%p" ZECOLL_SUMMARY=0; }
# half <a|b> <tag> [env...]: lj's half job on one half of the cores; its wall, loop time recorded
# under ljhalf.<tag> (run in the background beside the other half)
half() {
  local h=$1 tag=$2; shift 2
  local set t0 t1 rc lt=nan v=nan log=$work/lmp-$h.log
  if [ "$h" = a ]; then set=$(IFS=,; echo "${half_a[*]}"); else set=$(IFS=,; echo "${half_b[*]}"); fi
  rm -f "$log"
  t0=$(date +%s.%N)
  lmp_launch $((np / 2)) "--cpu-set $set --bind-to core" "user:$set" "$log" "$work/in-half.lj" "$steps" "$@" \
    >"$work/half-$h.out" 2>&1
  rc=$?
  t1=$(date +%s.%N)
  if [ $rc = 0 ]; then
    v=$(elapsed "$t0" "$t1")
    lt=$(loop_time "$log")
  else echo "fullnode: ljhalf $tag on half $h failed (rc $rc):" >&2; tail -5 "$work/half-$h.out" >&2; fi
  echo "$tag $v $lt" >"$work/half-$h.res"
}
# ljhalf's pairs: FULLNODE_HALF="A/B ..." (default: base/with0 for each library), each side base
# (no collector), with<i> (library i), a NAME of FULLNODE_HALF_ENVS="NAME=VAR=VALUE[:VAR=VALUE] ..."
# (library 0 with those settings), with<i>.NAME (library i with them) or a peer of FULLNODE_PEERS
# (its settings; e.g. the bare recorder, bench/zc_mpi_floor.c); B's ratio over A is printed
declare -A half_env
for s in ${FULLNODE_HALF_ENVS:-}; do half_env[${s%%=*}]="${s#*=}"; done
half_pairs=()
if [ -n "${FULLNODE_HALF:-}" ]; then read -ra half_pairs <<<"$FULLNODE_HALF"
else for i in "${!libs[@]}"; do half_pairs+=("base/with$i"); done; fi
half_side() { # the environment of a side's job
  case $1 in
    base) ;;
    with[0-9]*.*) local i=${1%%.*} n=${1#*.}
       i=${i#with}
       [ -n "${libs[i]:-}" ] && [ -n "${half_env[$n]:-}" ] || { echo "fullnode: FULLNODE_HALF: no variant $1" >&2; return 1; }
       col "${libs[i]}"; tr ':' '\n' <<<"${half_env[$n]}" ;;
    with[0-9]*) [ -n "${libs[${1#with}]:-}" ] || { echo "fullnode: FULLNODE_HALF: no library $1" >&2; return 1; }
       col "${libs[${1#with}]}" ;;
    *) if [ -n "${peer_lib[$1]:-}" ]; then # a peer of FULLNODE_PEERS, in its own working directory's stead
         echo "LD_PRELOAD=${peer_lib[$1]}" ${peer_env[$1]}; return 0
       fi
       [ -n "${half_env[$1]:-}" ] || { echo "fullnode: FULLNODE_HALF: no variant $1" >&2; return 1; }
       col "${libs[0]}"; tr ':' '\n' <<<"${half_env[$1]}" ;;
  esac
}
for pr in "${half_pairs[@]}"; do
  for x in "${pr%%/*}" "${pr#*/}"; do half_side "$x" >/dev/null || exit 2; done
done
# ljhalf_round REP: each pair's two sides at the same time, one on each half of the cores
ljhalf_round() {
  local r=$1 p sa sb ha hb tag v lt s0 s1
  for p in "${!half_pairs[@]}"; do
    sa=${half_pairs[p]%%/*} sb=${half_pairs[p]#*/}
    # the halves swap every repetition: a difference between them cancels over pairs of repetitions
    if [ $((r % 2)) = 1 ]; then ha=$sa hb=$sb; else ha=$sb hb=$sa; fi
    s0=$(steal)
    # shellcheck disable=SC2046
    half a "$ha" $(half_side "$ha") &
    # shellcheck disable=SC2046
    half b "$hb" $(half_side "$hb") &
    wait
    s1=$(steal)
    for h in a b; do
      read -r tag v lt <"$work/half-$h.res"
      vals[ljhalf.$p.$tag]+="$v "; vals[loop.ljhalf.$p.$tag]+="$lt "
      echo "ljhalf.$p.$tag $v steal_ms $((s1 - s0)) loop_s $lt half $h" >>"$raw"
    done
    rm -rf "$work"/t-*
  done
}
mpi0() { # mpi0 [env...]: one rank bound to a core, 0-byte Irecv/Isend/Waitall
  local xs=() e
  for e in "$@"; do xs+=(-x "$e"); done
  "${mpirun[@]}" --bind-to core -np 1 -x LD_LIBRARY_PATH -x ZE_ENABLE_ALT_DRIVERS "${xs[@]}" "$mapp" self 200000 0
}
# inpeer <cmd...>: cmd in a working directory of its own (a peer's reports), removed after the run
inpeer() { mkdir -p "$work/t-peer" && (cd "$work/t-peer" && "$@"); }
peer_round() { # peer_round NAME: the peer's variants of one repetition
  local p=$1
  # shellcheck disable=SC2206  # the settings are words without spaces
  local pe=("LD_PRELOAD=${peer_lib[$p]}" ${peer_env[$p]})
  part lj && timed "lj.core.$p" inpeer lj core "$steps" "${pe[@]}"
  part fixed && timed "fixed.$p" inpeer lj core 300 "${pe[@]}"
  part mpi0 && json "mpi0.$p" call_ns inpeer mpi0 "${pe[@]}"
}

{
  echo "== fullnode: $(nproc) CPUs, $(uname -r), $np ranks, $steps steps, $reps alternating repetitions, LAMMPS under $mpi"
  echo "== libraries: ${libs[*]}; zesim: $ZE_ENABLE_ALT_DRIVERS"
} | tee "$out/table.txt"
for r in $(seq "$reps"); do
  # the order of the variants alternates between repetitions (even: reversed, with before base)
  order=(base with "${peers[@]}")
  [ $((r % 2)) = 0 ] && for ((a = 0, b = ${#order[@]} - 1; a < b; a++, b--)); do
    t=${order[a]}; order[a]=${order[b]}; order[b]=$t
  done
  part ljhalf && ljhalf_round "$r"
  for v in "${order[@]}"; do
    if [ "$v" != base ] && [ "$v" != with ]; then peer_round "$v"; continue; fi
    for i in "${!libs[@]}"; do
      [ "$v" = base ] && [ "$i" -gt 0 ] && continue
      k=$v; [ "$v" = with ] && k=with$i
      # shellcheck disable=SC2046
      if part lj; then
        if [ "$v" = base ]; then
          timed "lj.core.$k" lj core "$steps"
          timed "lj.none.$k" lj none "$steps"
        else
          timed "lj.core.$k" lj core "$steps" $(col "${libs[$i]}")
          timed "lj.none.$k" lj none "$steps" $(col "${libs[$i]}")
        fi
      fi
      if part fixed; then
        if [ "$v" = base ]; then timed "fixed.$k" lj core 300
        else
          timed "fixed.$k" lj core 300 $(col "${libs[$i]}") ZECOLL_RECORD_MPI=0
          timed "fixed.all.$k" lj core 300 $(col "${libs[$i]}")
          # where the fixed cost goes: the salvage journal off, its syncs off
          timed "fixed.nojrn.$k" lj core 300 $(col "${libs[$i]}") ZECOLL_RECORD_MPI=0 ZECOLL_FLUSH_INTERVAL_MS=0
          timed "fixed.nosync.$k" lj core 300 $(col "${libs[$i]}") ZECOLL_RECORD_MPI=0 ZECOLL_FLUSH_SYNC=0
        fi
      fi
      if part phases && [ "$v" = with ]; then
        timed "phases.$k" lj core 300 $(col "${libs[$i]}") ZECOLL_RECORD_MPI=0 ZECOLL_PHASE_TIMES=1
        grep 'zecoll phases' "$work/run.out" >>"$out/phases.$k.txt"
      fi
      for kp in kern kernpoll kernpin; do
        part $kp || continue
        # kernpoll: zesim's engines poll for submissions (ZESIM_POLL_US=50) instead of sleeping
        # on a condition variable, as a GPU's command streamer does: an Append kicks no thread
        # (tests/zesim/README.md); kern's wall measures zesim's futex wake-ups as well
        kx=(X=1) kk=kern
        # (bound as kernpin: a polling engine beside the appending thread would take its CPU)
        [ $kp = kernpoll ] && kx=(ZESIM_POLL_US=50 ZC_BENCH_CPU="$pin_app" ZESIM_ENGINE_CPUS="$pin_eng") kk=kernp
        [ $kp = kernpin ] && kx=(ZC_BENCH_CPU="$pin_app" ZESIM_ENGINE_CPUS="$pin_eng") kk=kernpin
        for us in 1 2; do
          if [ "$v" = base ]; then
            json "$kk.$us.$k" run_s env "${kx[@]}" "$app" kernels 200000 "$us"
            # the control: no collector, its driver calls made by the app (zc_bench_app ... ctl)
            json "$kk.$us.ctl" run_s env "${kx[@]}" "$app" kernels 200000 "$us" ctl
          else
            json "$kk.$us.$k" run_s env "${kx[@]}" $(col "${libs[$i]}") "$app" kernels 200000 "$us"
            # FULLNODE_KERN_ENVS' settings of the first library (parts of the collector's own)
            if [ "$k" = with0 ]; then
              for ke in "${kern_envs[@]}"; do
                # shellcheck disable=SC2046  # the settings are words
                json "$kk.$us.${ke%%=*}" run_s env "${kx[@]}" $(col "${libs[0]}") $(tr ':' ' ' <<<"${ke#*=}") \
                  "$app" kernels 200000 "$us"
              done
            fi
          fi
        done
      done
      if part reg; then
        if [ "$v" = base ]; then
          json "reg.$k" run_s env X=1 "$app" reglist 500000
          json "reg.ctl" run_s env X=1 "$app" reglist 500000 ctl
        else json "reg.$k" run_s env $(col "${libs[$i]}") "$app" reglist 500000; fi
      fi
      if part idle; then
        if [ "$v" = base ]; then json "idle.$k" idle_wakeups_per_s env ZC_BENCH_IDLE_MS=2000 "$app" kernels 2000 1
        else json "idle.$k" idle_wakeups_per_s env ZC_BENCH_IDLE_MS=2000 $(col "${libs[$i]}") "$app" kernels 2000 1; fi
      fi
      if part mpi0; then
        if [ "$v" = base ]; then json "mpi0.$k" call_ns mpi0
        else json "mpi0.$k" call_ns mpi0 $(col "${libs[$i]}"); fi
      fi
    done
  done
done

# kern_rows KEY LABEL CTL_LABEL FLOOR_LABEL: a kernel part's rows for library i, both lengths (%s: the
# length; no floor rows where FLOOR_LABEL is empty)
kern_rows() {
  local k=$1 us t
  for us in 1 2; do
    t="≤ x1.05"; [ $us = 2 ] && t="≤ x1.02"
    # shellcheck disable=SC2059  # the labels are formats of the length
    cmp "$(printf "$2" $us)" "$k.$us.base" "$k.$us.with$i" "$t" ratio
  done
  for us in 1 2; do
    # shellcheck disable=SC2059
    cmp "$(printf "$3" $us)" "$k.$us.ctl" "$k.$us.with$i" "(the collector's own)" ratio
  done
  if [ "$i" = 0 ]; then
    for ke in "${kern_envs[@]}"; do
      for us in 1 2; do
        cmp "… $us us, ${ke%%=*} (${ke#*=}) / with" "$k.$us.with0" "$k.$us.${ke%%=*}" "" ratio
        cmp "… $us us, ${ke%%=*} over no collector" "$k.$us.base" "$k.$us.${ke%%=*}" "" ratio
      done
    done
  fi
  [ -n "$4" ] || return 0
  for us in 1 2; do
    # shellcheck disable=SC2059
    cmp "$(printf "$4" $us)" "$k.$us.base" "$k.$us.ctl" "(zesim's floor)" ratio
  done
}
row "median of $reps (s)" without with "ratio/delta" target
for i in "${!libs[@]}"; do
  [ ${#libs[@]} -gt 1 ] && echo "-- ${libs[$i]}" | tee -a "$out/table.txt"
  part lj && cmp "LAMMPS in.lj, $np ranks bound to cores, $steps steps" lj.core.base "lj.core.with$i" "≤ x1.03" ratio
  part lj && cmp "… LAMMPS's own loop time, bound" loop.lj.core.base "loop.lj.core.with$i" "" ratio
  part lj && row "… CPU steal during a bound run (ms, all CPUs)" "$(med steal.lj.core.base)" "$(med "steal.lj.core.with$i")" "" ""
  part lj && cmp "… unbound (--bind-to none)" lj.none.base "lj.none.with$i" "(occupancy)" ratio
  part lj && cmp "… LAMMPS's own loop time, unbound" loop.lj.none.base "loop.lj.none.with$i" "" ratio
  part fixed && cmp "fixed cost, $np ranks, 300 steps, MPI recording off" fixed.base "fixed.with$i" "≤ +20 ms" ms
  part fixed && cmp "… MPI recording on" fixed.base "fixed.all.with$i" "" ms
  part fixed && cmp "… MPI recording off, salvage journal off" fixed.base "fixed.nojrn.with$i" "" ms
  part fixed && cmp "… MPI recording off, journal syncs off" fixed.base "fixed.nosync.with$i" "" ms
  part kern && kern_rows kern "kernels 200000 of %s us, in-order immediate list (run_s)" "… %s us, no collector, its driver calls (ctl) / with" ""
  part kernpin && kern_rows kernpin "kernels of %s us, app and engine bound (CPUs $pin_app, $pin_eng)" "… %s us bound, ctl / with" "… %s us bound, no collector / ctl"
  part kernpoll && kern_rows kernp "kernels of %s us, zesim polling (ZESIM_POLL_US=50), bound" "… %s us polling, ctl / with" "… %s us polling, no collector / ctl"
  part reg && cmp "regular list of 500000 kernels, executed once (run_s)" reg.base "reg.with$i" "≤ +200 ns" ns_reg
  part reg && cmp "… no collector, its driver calls (ctl) / without" reg.base reg.ctl "(zesim's floor)" ns_reg
  part reg && cmp "… no collector, its driver calls (ctl) / with" reg.ctl "reg.with$i" "(the collector's own)" ns_reg
  part idle && cmp "idle 2 s after 2000 kernels: other threads' wake-ups per s" idle.base "idle.with$i" "(occupancy) ~0" delta
done
for p in "${!half_pairs[@]}"; do
  part ljhalf || break
  sa=${half_pairs[p]%%/*} sb=${half_pairs[p]#*/}
  tg=""; [ "$sa" = base ] && tg="≤ x1.03"
  cmp "LAMMPS $sb over $sa at once, $((np / 2)) ranks each on half the cores (wall)" "ljhalf.$p.$sa" "ljhalf.$p.$sb" "$tg" ratio
  cmp "… LAMMPS's own loop time" "loop.ljhalf.$p.$sa" "loop.ljhalf.$p.$sb" "$tg" ratio
done
for i in "${!libs[@]}"; do
  part phases && [ -s "$out/phases.with$i.txt" ] || continue
  echo "-- where the fixed cost goes (ZECOLL_PHASE_TIMES), ${libs[$i]}" | tee -a "$out/table.txt"
  "$py" "$(dirname "$0")/phase_times.py" "$out/phases.with$i.txt" | tee -a "$out/table.txt"
done
for i in "${!libs[@]}"; do
  part mpi0 && cmp "0-byte Irecv/Isend/Waitall, 1 rank, ns per call: ${libs[$i]##*/lib/}" mpi0.base "mpi0.with$i" "" delta
done
for p in "${peers[@]}"; do # the peers beside the collector's rows: everything recorded
  echo "-- peer $p: ${peer_lib[$p]} ${peer_env[$p]}" | tee -a "$out/table.txt"
  part lj && cmp "LAMMPS in.lj, $np ranks bound to cores, $steps steps" lj.core.base "lj.core.$p" "" ratio
  part lj && cmp "… LAMMPS's own loop time" loop.lj.core.base "loop.lj.core.$p" "" ratio
  part fixed && cmp "fixed cost, $np ranks, 300 steps, the tool's default recording" fixed.base "fixed.$p" "" ms
  part mpi0 && cmp "0-byte Irecv/Isend/Waitall, 1 rank, ns per call" mpi0.base "mpi0.$p" "" delta
done
if part ljhalf; then # each pair's mean of the repetitions' own ratios ± its standard error (medians above)
  echo "-- ljhalf, mean of the repetitions' ratios ± s.e. (bench/half_stats.py; --trim K leaves out outliers)" | tee -a "$out/table.txt"
  "$py" "$(dirname "$0")/half_stats.py" "$raw" "${half_pairs[*]}" | tee -a "$out/table.txt"
fi
echo "raw: $raw"
