#!/bin/sh
# SPDX-License-Identifier: MIT
# check_exports.sh <libzesim.so>: the driver exports exactly the 46 mandatory
# ze/zet/zesGet*ProcAddrTable getters, optionally *Exp getters and the spec-1.17 graph getters,
# and nothing else.
set -u
lib=$1
mandatory="zeGetGlobalProcAddrTable zeGetDriverProcAddrTable zeGetDeviceProcAddrTable
zeGetContextProcAddrTable zeGetCommandQueueProcAddrTable zeGetCommandListProcAddrTable
zeGetEventProcAddrTable zeGetEventPoolProcAddrTable zeGetFenceProcAddrTable
zeGetImageProcAddrTable zeGetKernelProcAddrTable zeGetMemProcAddrTable zeGetModuleProcAddrTable
zeGetModuleBuildLogProcAddrTable zeGetPhysicalMemProcAddrTable zeGetSamplerProcAddrTable
zeGetVirtualMemProcAddrTable
zetGetDeviceProcAddrTable zetGetContextProcAddrTable zetGetCommandListProcAddrTable
zetGetKernelProcAddrTable zetGetModuleProcAddrTable zetGetDebugProcAddrTable
zetGetMetricProcAddrTable zetGetMetricGroupProcAddrTable zetGetMetricQueryProcAddrTable
zetGetMetricQueryPoolProcAddrTable zetGetMetricStreamerProcAddrTable zetGetTracerExpProcAddrTable
zesGetDeviceProcAddrTable zesGetDriverProcAddrTable zesGetDiagnosticsProcAddrTable
zesGetEngineProcAddrTable zesGetFabricPortProcAddrTable zesGetFanProcAddrTable
zesGetFirmwareProcAddrTable zesGetFrequencyProcAddrTable zesGetLedProcAddrTable
zesGetMemoryProcAddrTable zesGetPerformanceFactorProcAddrTable zesGetPowerProcAddrTable
zesGetPsuProcAddrTable zesGetRasProcAddrTable zesGetSchedulerProcAddrTable
zesGetStandbyProcAddrTable zesGetTemperatureProcAddrTable"
syms=$(nm -D --defined-only "$lib" | awk 'NF >= 3 { print $3 }' | sort -u) || exit 1
fail=0
n=0
for m in $mandatory; do
  n=$((n + 1))
  if printf '%s\n' "$syms" | grep -qx "$m"; then
    echo "ok $n - exports $m"
  else
    echo "not ok $n - missing $m"; fail=1
  fi
done
for s in $syms; do
  case " $(echo $mandatory) " in *" $s "*) continue ;; esac
  n=$((n + 1))
  if printf '%s\n' "$s" | grep -Eq '^ze[ts]?Get[A-Za-z]*ExpProcAddrTable$|^zeGet(Executable)?GraphProcAddrTable$'; then
    echo "ok $n - optional $s"
  else
    echo "not ok $n - unexpected export $s"; fail=1
  fi
done
count=$(printf '%s\n' $mandatory | wc -l)
n=$((n + 1))
if [ "$count" -eq 46 ]; then echo "ok $n - 46 mandatory getters checked"; else echo "not ok $n - list has $count"; fail=1; fi
echo "1..$n"
exit $fail
