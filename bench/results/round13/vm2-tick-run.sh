#!/usr/bin/env bash
# VM experiment: LAMMPS in.lj on 2 ranks bound to cores: none / collector / collector with the writer's grid / writer idle
reps=${REPS:-16}; steps=${STEPS:-4000}
MAIN=/work/main/build/m/collector/libzecoll.so; TICK=/work/wt/tick/build/m/collector/libzecoll.so
run() { # name env...
  local name=$1; shift
  rm -rf /tmp/vmexp-trace
  mpirun --allow-run-as-root --oversubscribe --bind-to core -np 2 -x ZECOLL_OUTPUT=/tmp/vmexp-trace "$@" \
    lmp -nocite -log /tmp/vmexp.log -screen none -var steps $steps -in in.lj >/dev/null 2>&1
  echo "$rep $name $(awk '/^Loop time of/ {print $4}' /tmp/vmexp.log)"
}
for rep in $(seq 1 $reps); do
  for v in $(printf "%s\n" base with tick tick1s | shuf); do
    case $v in
      base) run base ;;
      with) run with -x LD_PRELOAD=$MAIN ;;
      tick) run tick -x LD_PRELOAD=$TICK -x ZECOLL_WRITER_TICK_MS=${TICKMS:-250} ;;
      tick1s) run tick1s -x LD_PRELOAD=$TICK -x ZECOLL_WRITER_TICK_MS=1000 ;;
    esac
  done
done
