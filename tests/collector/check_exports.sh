#!/bin/sh
# SPDX-License-Identifier: MIT
# libzecoll.so exports exactly its interposers and bridge; libzecoll_ze.so exactly the 53
# zeGet*/zetGet*/zesGet* table getters the loader looks up.
set -eu
core=$1 shim=$2
got=$(nm -D --defined-only "$core" | awk '{print $3}' | sort | tr '\n' ' ')
want="sigaction signal zeInit zecoll_ze_getter "
[ "$got" = "$want" ] || { echo "not ok - libzecoll.so exports: $got (want: $want)"; exit 1; }
bad=$(nm -D --defined-only "$shim" | awk '{print $3}' | grep -Ev '^ze[st]?Get[A-Za-z]+ProcAddrTable$' || true)
n=$(nm -D --defined-only "$shim" | awk '{print $3}' | grep -Ec '^ze[st]?Get[A-Za-z]+ProcAddrTable$')
[ -z "$bad" ] || { echo "not ok - libzecoll_ze.so exports more: $bad"; exit 1; }
[ "$n" -eq 53 ] || { echo "not ok - libzecoll_ze.so exports $n getters, want 53"; exit 1; }
echo "ok - exports"
