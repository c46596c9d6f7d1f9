#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# install.relocated: zecoll as a site deploys it. `cmake --install` into a prefix, the prefix moved
# elsewhere (so a path baked in at install time points at nothing), and from there, with a clean
# environment (env -i: PATH only; mpirun needs no more), what a user does:
#   1. the layout (docs/install.md) is complete: programs, libraries, docs, examples, modulefile;
#   2. nothing installed names the build: no RUNPATH but $ORIGIN, no build, source or install path
#      in what is loaded at run time (debug sections aside: they name the sources for debuggers);
#   3. `zecoll --version`: the project's version, the spec of ze_api.h (compiled here, not parsed),
#      the MPI flavours; `zecoll env` names the moved libraries;
#   4. the examples build from the installed tree alone (every file the compiler read is in the
#      moved prefix or the system's /usr);
#   5. an MPI + Level Zero job (ex_mpi_halo, 2 ranks, zesim as the GPU) under `zecoll run`, and a
#      program preloaded by name (LD_PRELOAD=libzecoll.so) after `module load zecoll` from a site's
#      module tree linking to the installed modulefile; the env script sets the same;
#   6. `zecoll report` on the job's archive;
# then judges the outcomes: each rank's device records against zesim's truth
# (tests/collector/check_trace.py), the report's numbers against the archive read with python3-otf2
# and the truth (tests/aggregate/check_report.py).
set -uo pipefail

usage() {
  echo "usage: install_test.sh --build DIR --source DIR --work DIR --zesim LIB --ze-inc DIR --flavours LIST" >&2
  echo "                       --bindir D --libdir D --datadir D --docdir D [--mpiexec MPIRUN] [--np N] [--cmake CMAKE]" >&2
  exit 2
}
np=2 mpiexec=mpirun cmake=cmake
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$2 ;; --source) src=$2 ;; --work) work=$2 ;; --zesim) zesim=$2 ;; --ze-inc) zeinc=$2 ;;
    --flavours) flavours=$2 ;; --mpiexec) mpiexec=$2 ;; --np) np=$2 ;; --cmake) cmake=$2 ;;
    --bindir) bindir=$2 ;; --libdir) libdir=$2 ;; --datadir) datadir=$2 ;; --docdir) docdir=$2 ;;
    *) usage ;;
  esac
  shift 2 || usage
done
for v in build src work zesim zeinc flavours bindir libdir datadir docdir; do [ -n "${!v:-}" ] || usage; done
py=/usr/bin/python3
[ -x "$py" ] || py=python3

fails=0
t0=$(date +%s%N)
at() { echo "[$(( ($(date +%s%N) - t0) / 1000000 )) ms]"; }
ok() { echo "ok - $* $(at)"; }
bad() { echo "not ok - $* $(at)"; fails=$((fails + 1)); }
# check <what> <command...>: ok when the command succeeds
check() { local what=$1; shift; if "$@"; then ok "$what"; else bad "$what"; fi; }
finish() { echo "# $fails failed"; [ "$fails" -eq 0 ]; exit $?; }

rm -rf "$work"
mkdir -p "$work/site-modules/zecoll"
version=$(sed -n 's/^project(zecoll VERSION \([0-9.]*\).*/\1/p' "$src/CMakeLists.txt")
stage="$work/stage"
prefix="$work/moved/zecoll-$version"

# ---- 1. install, move, layout
if ! "$cmake" --install "$build" --prefix "$stage" > "$work/install.log" 2>&1; then
  tail -20 "$work/install.log"
  bad "cmake --install $build --prefix $stage"
  finish
fi
mkdir -p "$work/moved" && mv "$stage" "$prefix" || { bad "move $stage to $prefix"; finish; }
ok "installed into $stage ($(grep -c '^-- Installing' "$work/install.log") files) and moved to $prefix"

missing=()
for f in "$bindir"/{zecoll,zecoll-aggregate,zecoll-salvage,zecoll-config} "$libdir"/{libzecoll.so,libzecoll_ze.so} \
         "$docdir"/README.md "$docdir"/docs/install.md "$docdir"/examples/README.md \
         "$datadir"/zecoll/examples/{CMakeLists.txt,README.md,ex_mpi_halo.c,common/ex_common.c,common/ex_common.h} \
         "$datadir/zecoll/modulefiles/zecoll/$version" "$datadir"/zecoll/zecoll-env.sh; do
  [ -e "$prefix/$f" ] || missing+=("$f")
done
while IFS= read -r f; do # every file of docs/ (pictures too), every example and configuration
  case "$f" in docs/*) rel="$docdir/$f" ;; *) rel="$datadir/zecoll/$f" ;; esac
  [ -e "$prefix/$rel" ] || missing+=("$rel")
done < <(cd "$src" && find docs -type f && ls examples/*.c examples/*.yaml)
for f in "$bindir"/{zecoll,zecoll-aggregate,zecoll-salvage,zecoll-config}; do
  [ -x "$prefix/$f" ] || missing+=("$f (executable)")
done
if [ ${#missing[@]} -eq 0 ]; then ok "layout: programs, libraries, docs, examples, modulefile, env script"
else bad "layout: missing ${missing[*]}"; fi
# every relative link of the installed documentation leads to a file or folder of it
broken=$("$py" - "$prefix/$docdir" <<'EOF'
import os, re, sys
top = sys.argv[1]
for root, _, files in os.walk(top):
    for f in files:
        if not f.endswith(".md"):
            continue
        with open(os.path.join(root, f), errors="replace") as fh:
            text = fh.read()
        for m in re.finditer(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text):
            t = m.group(1)
            if "://" not in t and not t.startswith("mailto:") and not os.path.exists(os.path.join(root, t)):
                print(f"{os.path.relpath(os.path.join(root, f), top)} -> {t}")
EOF
)
nlinks=$(grep -rhoE '\]\([^)#[:space:]]+' "$prefix/$docdir" --include='*.md' | grep -vc '://')
if [ -z "$broken" ] && [ "$nlinks" -gt 0 ]; then ok "the installed documentation's $nlinks relative links all resolve in it"
else bad "installed documentation: links that lead nowhere:"$'\n'"$broken"; fi

# ---- 2. nothing names the build, the sources or the install prefix
named=()
# the install prefix nowhere, debug sections included
while IFS= read -r f; do named+=("${f#"$prefix"/}: names $stage"); done < <(grep -rlaF "$stage" "$prefix")
# the build and the sources nowhere but in debug sections (one grep per path over the whole tree,
# then a look without debug sections at the programs and libraries it names)
debug_only=0
while IFS= read -r f; do
  probe=$f
  if readelf -h "$f" > /dev/null 2>&1; then
    objcopy --strip-debug "$f" "$work/nodebug" || named+=("${f#"$prefix"/}: objcopy failed")
    probe="$work/nodebug"
  fi
  if grep -qaF -e "$src" -e "$build" "$probe"; then named+=("${f#"$prefix"/}: names $src or $build")
  else debug_only=$((debug_only + 1)); fi
done < <(grep -rlaF -e "$src" -e "$build" "$prefix")
# no RUNPATH (or RPATH) but $ORIGIN in the programs and libraries
for f in "$prefix/$bindir"/* "$prefix/$libdir"/*; do
  readelf -h "$f" > /dev/null 2>&1 || continue
  rp=$(readelf -d "$f" | sed -n 's/.*(\(RUNPATH\|RPATH\)).*\[\(.*\)\]/\2/p')
  [ -z "$rp" ] || [ "$rp" = '$ORIGIN' ] || named+=("${f#"$prefix"/}: RUNPATH $rp")
done
[ "$(readelf -d "$prefix/$libdir/libzecoll_ze.so" | grep -c 'RUNPATH.*\[\$ORIGIN\]')" = 1 ] ||
  named+=("$libdir/libzecoll_ze.so: no RUNPATH \$ORIGIN (it must find libzecoll.so beside it)")
if [ ${#named[@]} -eq 0 ]; then
  ok "no RUNPATH but \$ORIGIN, no build, source or install path in the installed files ($debug_only name the sources in debug sections)"
else bad "relocation: $(printf '\n  %s' "${named[@]}")"; fi

# the clean environment: PATH alone (the moved prefix, the system); root needs mpirun's flag
clean=(env -i "PATH=$prefix/$bindir:/usr/bin:/bin")
mpirun=("$mpiexec" --oversubscribe)
[ "$(id -u)" = 0 ] && mpirun+=(--allow-run-as-root)

# ---- 3. --version and env
cat > "$work/spec.c" <<'EOF'
#include <level_zero/ze_api.h>
#include <stdio.h>
int main(void) {
    printf("%u.%u\n", ZE_MAJOR_VERSION(ZE_API_VERSION_CURRENT), ZE_MINOR_VERSION(ZE_API_VERSION_CURRENT));
    return 0;
}
EOF
cc -I"$zeinc" -o "$work/spec" "$work/spec.c" && spec=$("$work/spec") || spec="(ze_api.h did not compile)"
want="zecoll $version
Level Zero: API spec $spec (ZE_API_VERSION_CURRENT of the ze_api.h it was built against)
MPI: $flavours
libraries: $prefix/$libdir"
got=$("${clean[@]}" zecoll --version 2>&1)
if [ "$got" = "$want" ]; then ok "zecoll --version: $(echo "$got" | head -3 | tr '\n' ';')"
else bad "zecoll --version said:"$'\n'"$got"$'\n'"want:"$'\n'"$want"; fi
want="LD_PRELOAD=$prefix/$libdir/libzecoll.so
ZE_ENABLE_ALT_DRIVERS=$prefix/$libdir/libzecoll_ze.so
ZECOLL_REAL_DRIVERS=$zesim"
got=$("${clean[@]}" ZE_ENABLE_ALT_DRIVERS="$zesim" zecoll env 2>&1)
if [ "$got" = "$want" ]; then ok "zecoll env names the moved libraries"
else bad "zecoll env said:"$'\n'"$got"$'\n'"want:"$'\n'"$want"; fi

# ---- 4. the examples, built from the installed tree alone
exb="$work/examples-build"
if "${clean[@]}" cmake -S "$prefix/$datadir/zecoll/examples" -B "$exb" -DCMAKE_BUILD_TYPE=Release > "$work/examples.log" 2>&1 &&
   "${clean[@]}" cmake --build "$exb" --target ex_mpi_halo ex_vector_add_immediate -j2 >> "$work/examples.log" 2>&1; then
  # every file the compiler read (its dependency files): in the moved prefix or the system's
  read_from=$(find "$exb" -name '*.o.d' -exec cat {} + | tr -s ' \\' '\n\n' | grep '^/' | sort -u)
  foreign=$(echo "$read_from" | grep -v -e "^$prefix/" -e '^/usr/' || true)
  if [ -z "$read_from" ]; then bad "examples: no dependency files to say what the compiler read"
  elif [ -n "$foreign" ]; then bad "examples read files outside the installed tree: $foreign"
  else ok "examples built from the installed tree alone ($(echo "$read_from" | grep -c "^$prefix/") files of it)"; fi
else
  tail -30 "$work/examples.log"
  bad "examples: cmake -S $prefix/$datadir/zecoll/examples did not build"
fi

# ---- 5. an MPI + Level Zero job under the installed launcher
if "${clean[@]}" "${mpirun[@]}" -np "$np" -x ZE_ENABLE_ALT_DRIVERS="$zesim" -x ZESIM_TRUTH="$work/truth-%r.jsonl" \
     zecoll run --strict --output "$work/trace" -- "$exb/ex_mpi_halo" > "$work/job.log" 2>&1 &&
   [ -f "$work/trace/traces.otf2" ]; then
  ok "mpirun -np $np zecoll run -- ex_mpi_halo: passed, one archive"
else
  tail -30 "$work/job.log"
  bad "mpirun -np $np zecoll run -- ex_mpi_halo (no archive at $work/trace)"
fi
# the same libraries by name, from a site's module tree that links to the installed modulefile
ln -s "$prefix/$datadir/zecoll/modulefiles/zecoll/$version" "$work/site-modules/zecoll/$version"
modinit=/usr/share/modules/init/bash
if [ -f "$modinit" ]; then
  "${clean[@]}" ZE_ENABLE_ALT_DRIVERS="$zesim" ZESIM_TRUTH="$work/truth-module.jsonl" ZECOLL_OUTPUT="$work/trace-module" \
    ZECOLL_STRICT=1 bash -c ". $modinit && module use '$work/site-modules' && module load zecoll &&
      echo \"which=\$(command -v zecoll) ld=\$LD_LIBRARY_PATH\" &&
      LD_PRELOAD=libzecoll.so '$exb/ex_vector_add_immediate'" > "$work/module.log" 2>&1
  rc=$?
  if [ $rc = 0 ] && grep -qx "which=$prefix/$bindir/zecoll ld=$prefix/$libdir" "$work/module.log" &&
     [ -f "$work/trace-module/traces.otf2" ]; then
    ok "module load zecoll (linked from a site tree): PATH, LD_LIBRARY_PATH; LD_PRELOAD=libzecoll.so traced"
  else
    cat "$work/module.log"
    bad "module load zecoll, then LD_PRELOAD=libzecoll.so ex_vector_add_immediate (exit $rc)"
  fi
else
  bad "no $modinit: install environment-modules (scripts/setup-deps.sh)"
fi
got=$("${clean[@]}" bash -c ". '$prefix/$datadir/zecoll/zecoll-env.sh' && echo \"\$(command -v zecoll) \$LD_LIBRARY_PATH\"")
check "zecoll-env.sh sets PATH and LD_LIBRARY_PATH" [ "$got" = "$prefix/$bindir/zecoll $prefix/$libdir" ]

# ---- 6. the report
if "${clean[@]}" zecoll report "$work/trace" -q --no-progress --json "$work/report.json" --text "$work/report.txt" \
     > "$work/report.log" 2>&1 && [ -s "$work/report.json" ]; then
  ok "zecoll report: $(grep -m1 -i 'kernels' "$work/report.txt")"
else
  tail -20 "$work/report.log"
  bad "zecoll report $work/trace"
fi

# ---- the outcomes
truths=()
for r in $(seq 0 $((np - 1))); do
  truths+=(--truth "$r:$work/truth-$r.jsonl")
  out=$("$py" "$src/tests/collector/check_trace.py" check --truth "$work/truth-$r.jsonl" --trace "$work/trace" --rank "$r" 2>&1)
  if [ $? = 0 ]; then ok "rank $r: device records against zesim's truth: $(echo "$out" | grep -c matched) kinds matched"
  else echo "$out" | tail -20; bad "rank $r: device records against zesim's truth"; fi
done
out=$("$py" "$src/tests/collector/check_trace.py" check --truth "$work/truth-module.jsonl" --trace "$work/trace-module" 2>&1)
if [ $? = 0 ]; then ok "LD_PRELOAD=libzecoll.so: device records against zesim's truth"
else echo "$out" | tail -20; bad "LD_PRELOAD=libzecoll.so: device records against zesim's truth"; fi
out=$("$py" "$src/tests/aggregate/check_report.py" --archive "$work/trace" --report "$work/report.json" "${truths[@]}" 2>&1)
if [ $? = 0 ]; then ok "report against the archive and the truth: $(echo "$out" | tail -1)"
else echo "$out" | tail -30; bad "report against the archive and the truth"; fi
finish
