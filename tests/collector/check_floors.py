#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The collector's dependency rule (collector/README.md): files name only their own floor and the
floors below it, the two layers never name each other, and below the layers the only loop is an
inline header and its own .c.

    archive (collector/archive/)  <  core (collector/core/)  <  writer (collector/writer/)
        <  the layers: ze (collector/ze/, its generated wrappers) | mpi (mpi/, its generated wrappers)
        <  the root (collector/zc_main.c)

What a file names is read two ways:
  * from its text, comments and strings removed: its #include "..." lines, and every identifier
    that is a global symbol of the collector (zc_*) defined by another file;
  * from its object file (nm, gcc-nm for LTO objects): every zc_* symbol it leaves undefined
    that another file's object defines (calls and variable uses, those that inline functions of
    headers expand to included).
A name seen either way is an edge from the file's module (X.c and X.h together) to the module
that defines it.

  check_floors.py --source DIR --build DIR [--readme FILE]   exit 1 on a violation
  check_floors.py ... --inject FILE:NAME [--inject-include FILE:HEADER] [--extra-object O=FILE]
      pretend that FILE also names NAME / includes HEADER, or that object O belongs to FILE (the
      self-test: each must fail)
  check_floors.py --selftest --source DIR --build DIR         runs the check with injected
      violations and expects each to fail, and the real tree to pass
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

RANK = {"archive": 0, "core": 1, "writer": 2, "ze": 3, "mpi": 3, "root": 4}
LAYERS = {"ze", "mpi"}
TARGETS = ("zc_archive", "zc_core", "zc_writer", "zc_main", "zc_ze", "zc_mpi", "zc_mpi_openmpi", "zc_mpi_mpich")
SRC_EXT = (".c", ".h")


def floor_of(rel):
    """The floor of a path relative to the source tree ("@build/..." for generated files), None
    outside the collector, "?" for a collector file in no floor."""
    if rel.startswith("@build/collector/gen/"):
        return "ze"
    if rel.startswith("@build/mpi/gen/"):
        return "mpi"
    for prefix, floor in (("collector/archive/", "archive"), ("collector/core/", "core"),
                          ("collector/writer/", "writer"), ("collector/ze/", "ze")):
        if rel.startswith(prefix):
            return floor
    if rel == "collector/zc_main.c":
        return "root"
    if rel.startswith("mpi/") and not rel.startswith("mpi/tools/"):
        return "mpi"
    if rel.startswith("collector/") and rel.endswith(SRC_EXT):
        return "?"
    return None


def module_of(rel):
    return rel[:-2] if rel.endswith(SRC_EXT) else rel


def strip_code(text, strings=True):
    """The text without comments and (strings) string and character literals."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("\n" * text.count("\n", i, j))
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif c in "\"'" and strings:
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(c + c)
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def drop_declarations(code):
    """A header without its file-scope declarations (prototypes, extern variables): a header that
    declares what a .c defines does not depend on it; its inline bodies and macros do."""
    out, depth, stmt = [], 0, []
    for line in code.splitlines(keepends=True):
        if depth == 0 and line.lstrip().startswith("#"):
            out.append(line)
            continue
        for ch in line:
            if depth == 0:
                stmt.append(ch)
                if ch == ";":
                    text = "".join(stmt)
                    decl = text.lstrip().startswith("extern") or ("(" in text and "=" not in text)
                    out.append(re.sub(r"\w", " ", text) if decl else text)
                    stmt = []
                elif ch == "{":
                    out.append("".join(stmt))
                    stmt = []
                    depth += 1
            else:
                out.append(ch)
                depth += ch == "{"
                depth -= ch == "}"
    out.append("".join(stmt))
    return "".join(out)


INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)
# a zc_ identifier that is not a struct/union/enum tag nor a member (.x, ->x)
IDENT = re.compile(r"(?<![\w.>])(?<!struct\s)(?<!union\s)(?<!enum\s)(zc_\w+)")


class Tree:
    def __init__(self, source, build):
        self.source, self.build = os.path.abspath(source), os.path.abspath(build)
        self.files = {}  # rel -> absolute path
        for top in ("collector", "mpi"):
            for d, _, names in os.walk(os.path.join(self.source, top)):
                for nm in names:
                    if nm.endswith(SRC_EXT):
                        p = os.path.join(d, nm)
                        rel = os.path.relpath(p, self.source)
                        if floor_of(rel):
                            self.files[rel] = p
        # mpi/gen/<flavour>: the MPI layer's generated files, one directory per ABI flavour
        flavours = [os.path.join("mpi/gen", f) for f in ("openmpi", "mpich")]
        for gen in ["collector/gen", "mpi/gen"] + flavours:
            d = os.path.join(self.build, gen)
            if os.path.isdir(d):
                for nm in sorted(os.listdir(d)):
                    if nm.endswith(SRC_EXT):
                        self.files["@build/%s/%s" % (gen, nm)] = os.path.join(d, nm)
        self.by_base = {}
        for rel in self.files:
            self.by_base.setdefault(os.path.basename(rel), []).append(rel)

    def objects(self):
        """(object path, source rel) of every floor target's object."""
        for d, _, names in os.walk(self.build):
            m = re.search(r"(.*)/CMakeFiles/(\w+)\.dir(/.*)?$", d)
            if not m or m.group(2) not in TARGETS:
                continue
            subdir = os.path.relpath(m.group(1), self.build)
            for nm in names:
                if not nm.endswith(".o"):
                    continue
                obj = os.path.join(d, nm)
                rel_in_target = os.path.relpath(obj, os.path.join(m.group(1), "CMakeFiles", m.group(2) + ".dir"))[:-2]
                src = os.path.normpath(os.path.join(subdir, rel_in_target))
                if src in self.files:
                    yield obj, src
                elif "@build/" + src in self.files:
                    yield obj, "@build/" + src

    def resolve_include(self, includer, name):
        here = os.path.normpath(os.path.join(os.path.dirname(includer), name))
        if here in self.files:
            return here
        cands = self.by_base.get(os.path.basename(name), [])
        return cands[0] if len(cands) == 1 else None


def nm_symbols(obj):
    """(defined globals, undefined) zc_* names of an object (gcc-nm reads LTO objects too)."""
    for tool in ("gcc-nm", "nm"):
        if shutil.which(tool):
            break
    out = subprocess.run([tool, obj], capture_output=True, text=True, check=True).stdout
    defined, undefined = set(), set()
    for line in out.splitlines():
        f = line.split()
        if len(f) < 2 or not f[-1].startswith("zc_"):
            continue
        kind = f[-2]
        if kind == "U":
            undefined.add(f[-1])
        elif kind.isupper():
            defined.add(f[-1])
    return defined, undefined


def check(tree, injects=(), inject_includes=(), extra_objects=(), readme=None, out=sys.stdout, show=False):
    problems = []
    objs = list(tree.objects()) + [(o, f) for o, f in extra_objects]
    if not any(f for _, f in objs):
        problems.append("no objects of %s under %s: build first" % (", ".join(TARGETS), tree.build))
    defined_by, undef_of = {}, {}
    for obj, src in objs:
        d, u = nm_symbols(obj)
        for s in d:
            defined_by.setdefault(s, src)
        undef_of.setdefault(src, set()).update(u)
    edges = {}  # (from module, to module) -> why

    def edge(frm, to, why):
        if module_of(frm) != module_of(to):
            edges.setdefault((module_of(frm), module_of(to)), (frm, to, why))

    for rel, path in tree.files.items():
        if floor_of(rel) == "?":
            problems.append("%s: in no floor (collector/README.md: archive/, core/, writer/, ze/ or zc_main.c)" % rel)
            continue
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
        code = strip_code(text)
        if rel.endswith(".h"):
            code = drop_declarations(code)
        incs = INCLUDE.findall(strip_code(text, strings=False)) + [h for fi, h in inject_includes if fi == rel]
        for name in incs:
            tgt = tree.resolve_include(rel, name)
            if tgt:
                edge(rel, tgt, 'includes "%s"' % name)
        names = set(IDENT.findall(code)) | {n for fi, n in injects if fi == rel}
        for name in sorted(names):
            if name in defined_by:
                edge(rel, defined_by[name], "names %s" % name)
    for src, names in undef_of.items():
        for name in sorted(names):
            if name in defined_by:
                edge(src, defined_by[name], "its object uses %s" % name)

    floor_mod = {module_of(r): floor_of(r) for r in tree.files}
    if show:
        for (a, b), (frm, to, why) in sorted(edges.items()):
            print("%s -> %s: %s %s" % (a, b, os.path.basename(frm), why), file=out)
    for (a, b), (frm, to, why) in sorted(edges.items()):
        fa, fb = floor_mod.get(a), floor_mod.get(b)
        if fa in (None, "?") or fb in (None, "?"):
            continue
        if RANK[fa] < RANK[fb]:
            problems.append("%s (%s) %s, of %s (%s): a floor names one above it" % (frm, fa, why, to, fb))
        elif fa in LAYERS and fb in LAYERS and fa != fb:
            problems.append("%s (layer %s) %s, of %s (layer %s): a layer names the other" % (frm, fa, why, to, fb))

    # loops between modules (X.c with X.h): none below the layers; the layers' are told, not failed
    graph = {}
    for a, b in edges:
        graph.setdefault(a, set()).add(b)
    for comp in sccs(graph):
        if len(comp) < 2:
            continue
        fl = {floor_mod.get(m) for m in comp}
        desc = " <-> ".join(sorted(comp))
        if fl & LAYERS:
            print("note: a loop in the layers: %s" % desc, file=out)
        else:
            problems.append("a loop between modules: %s" % desc)

    if readme:
        with open(readme, encoding="utf-8") as f:
            text = f.read()
        for rel in sorted(tree.files):
            if floor_of(rel) in ("archive", "core", "writer", "root") and os.path.basename(rel) not in text:
                problems.append("%s: not named in %s" % (rel, os.path.relpath(readme, tree.source)))

    for p in problems:
        print("FAIL: " + p, file=out)
    nmods = len({module_of(r) for r in tree.files})
    print("%s: %d files in %d modules, %d objects, %d edges between modules" % (
        "FAILED" if problems else "ok", len(tree.files), nmods, len(objs), len(edges)), file=out)
    return not problems


def sccs(graph):
    """Tarjan's strongly connected components."""
    index, low, stack, on, res, counter = {}, {}, [], set(), [], [0]
    nodes = set(graph) | {b for bs in graph.values() for b in bs}
    for root in sorted(nodes):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.get(root, ()))))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph.get(w, ())))))
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on.discard(w)
                        comp.append(w)
                        if w == v:
                            break
                    res.append(comp)
    return res


def selftest(tree, readme):
    """Each injected violation must fail, the tree itself must pass."""
    import io
    results = []

    def expect(name, ok_wanted, **kw):
        buf = io.StringIO()
        ok = check(tree, readme=readme, out=buf, **kw)
        good = ok == ok_wanted
        results.append(good)
        print("%s %d - %s" % ("ok" if good else "not ok", len(results), name))
        if not good:
            sys.stdout.write("".join("  # " + l + "\n" for l in buf.getvalue().splitlines()))

    expect("the tree as it is passes", True)
    expect("the core calling the writer (a name in its text) fails", False,
           injects=[("collector/core/zc_loc.c", "zc_otf2_write")])
    expect("the core reading the job's archive path of the writer fails", False,
           injects=[("collector/core/zc_window.c", "zc_otf2_path")])
    expect("the archive including a core header fails", False,
           inject_includes=[("collector/archive/zc_ev.h", "zc_loc.h")])
    expect("the writer asking the MPI layer (zc_mpi_linked) fails", False,
           injects=[("collector/writer/zc_otf2.c", "zc_mpi_linked")])
    expect("a layer naming the other fails", False,
           injects=[("mpi/zc_mpi_special.c", "zc_ze_subsystem")])
    expect("a loop inside the core fails", False,
           injects=[("collector/core/zc_log.c", "zc_knobs")])
    # an object that calls up, with nothing of it in any source text: nm must see it
    with tempfile.TemporaryDirectory() as tmp:
        c = os.path.join(tmp, "up.c")
        with open(c, "w") as f:
            f.write("void zc_jrn_start(void);\nvoid zc_selftest_up(void);\n"
                    "void zc_selftest_up(void) { zc_jrn_start(); }\n")
        o = os.path.join(tmp, "up.o")
        cc = os.environ.get("CC", "cc")
        subprocess.run([cc, "-c", "-o", o, c], check=True)
        expect("an object of the core calling the writer (nm) fails", False,
               extra_objects=[(o, "collector/core/zc_loc.c")])
    if readme:
        with tempfile.NamedTemporaryFile("w", suffix=".md", delete=False) as f:
            with open(readme, encoding="utf-8") as r:
                f.write(r.read().replace("zc_unify.c", "zc_unif_.c"))
        try:
            buf = io.StringIO()
            ok = check(tree, readme=f.name, out=buf)
            results.append(not ok)
            print("%s %d - a file the README does not name fails" % ("ok" if not ok else "not ok", len(results)))
        finally:
            os.unlink(f.name)
    print("1..%d" % len(results))
    return all(results)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--source", required=True)
    ap.add_argument("--build", required=True)
    ap.add_argument("--readme")
    ap.add_argument("--selftest", action="store_true")
    ap.add_argument("--edges", action="store_true", help="print every edge between modules")
    ap.add_argument("--inject", action="append", default=[], help="FILE:NAME")
    ap.add_argument("--inject-include", action="append", default=[], help="FILE:HEADER")
    ap.add_argument("--extra-object", action="append", default=[], help="OBJECT=FILE")
    a = ap.parse_args()
    tree = Tree(a.source, a.build)
    if a.selftest:
        return 0 if selftest(tree, a.readme) else 1
    ok = check(tree, injects=[tuple(x.split(":", 1)) for x in a.inject],
               inject_includes=[tuple(x.split(":", 1)) for x in a.inject_include],
               extra_objects=[tuple(x.split("=", 1)) for x in a.extra_object], readme=a.readme, show=a.edges)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
