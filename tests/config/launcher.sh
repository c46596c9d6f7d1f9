#!/bin/sh
# SPDX-License-Identifier: MIT
# launcher.sh ZECOLL WORK APP: the launcher's configuration commands. `zecoll config check` prints
# what zecoll-config prints (exit 0 / exit 2 with the messages); `zecoll run --config FILE` runs
# the program with that file (made absolute), and the archive's stored configuration names it.
set -u
zecoll=$1 work=$2 app=$3
here=$(cd "$(dirname "$0")" && pwd)
n=0 fails=0
ok() { n=$((n + 1)); if [ "$1" = 0 ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fails=$((fails + 1)); fi; }
for v in $(env | sed -n 's/^\(ZECOLL_[A-Z_]*\)=.*/\1/p'); do unset "$v"; done
rm -rf "$work" && mkdir -p "$work" || exit 1

cd "$here/good" || exit 1
"$zecoll" config check 02-issue-example.yaml > "$work/out" 2> "$work/err"
rc=$?
cmp -s "$work/out" 02-issue-example.expected; ok $(( rc != 0 || $? != 0 )) "zecoll config check FILE: exit 0 (got $rc), the effective configuration"
cd "$here/bad" || exit 1
"$zecoll" config check 39-every-error.yaml > "$work/out" 2> "$work/err"
rc=$?
cmp -s "$work/err" 39-every-error.expected; same=$?
ok $(( rc != 2 || same != 0 || $(wc -c < "$work/out") != 0 )) "zecoll config check BAD: exit 2 (got $rc), exactly its messages"
"$zecoll" config frobnicate > /dev/null 2>&1; rc=$?
ok $(( rc != 2 )) "an unknown config command: exit 2 (got $rc)"
"$zecoll" run --config > /dev/null 2> "$work/err"; rc=$?
grep -q "needs a file" "$work/err"; ok $(( rc != 2 || $? != 0 )) "run --config without a file: exit 2 (got $rc) and says so"

cd "$here" || exit 1
ZECOLL_OUTPUT="$work/trace" "$zecoll" run --config runs/stored.yaml -- "$app" > "$work/out" 2> "$work/err"
rc=$?
cat "$work/err"
ok $rc "zecoll run --config FILE -- app: exit 0"
head -1 "$work/trace/zecoll-config.yaml" | grep -qF "\"$here/runs/stored.yaml\""
ok $? "the archive's configuration names the file by its absolute path"
grep -q '^  events: 4096 *# .*runs/stored.yaml:5$' "$work/trace/zecoll-config.yaml"
ok $? "and holds its values with their origins"
echo "1..$n"
[ $fails -eq 0 ]
