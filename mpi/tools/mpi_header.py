"""Read the MPI C function declarations of the installed Open MPI mpi.h.

Shared by extract_prototypes.py and check_spec.py (helper scripts only; the build's generator,
mpi/gen/gen_mpi_wrappers.py, does its own reading).

Two preprocessor runs of a file that only includes <mpi.h>, both as C11 (the project's
CMAKE_C_STANDARD; the C standard matters: with C11, Open MPI 4.1 replaces the MPI-1 functions
removed in MPI-3.0 (MPI_Address, MPI_Type_struct, ...) by _Static_assert macros and declares
nothing for them):

  * `mpicc -E -fdirectives-only`: conditionals evaluated, macros NOT expanded, so the
    prototypes read exactly as written in mpi.h (`MPI_Fint`, not `int`; `OMPI_DECLSPEC` prefix).
  * `mpicc -E`: fully preprocessed; the set of MPI_* names that are really declared as functions.

Both must agree on the set of names, otherwise declarations of a form this reader does not know
exist and the caller is told (`HeaderError`).
"""

import os
import re
import shutil
import subprocess
import tempfile

_IDENT = r"[A-Za-z_]\w*"
_TOKEN_RE = re.compile(r"[A-Za-z_]\w*|\d\w*|\.\.\.|\S")
_IDENT_RE = re.compile(r"^\w+$")


class HeaderError(Exception):
    pass


def normalise(text):
    """Whitespace-normalised form of a C declaration: tokens joined by single spaces only where two
    word tokens touch.  `void * buf`, `void *buf` and `void*  buf` all give `void*buf`."""
    toks = _TOKEN_RE.findall(text)
    out = []
    for t in toks:
        if out and _IDENT_RE.match(out[-1][-1]) and _IDENT_RE.match(t[0]):
            out.append(" ")
        out.append(t)
    return "".join(out)


def collapse(text):
    """Collapse every whitespace run to one space (the display form used in the spec: mpi.h's
    text otherwise unchanged, so `int MPI_File_set_errhandler( MPI_File file, ...)` keeps the
    header's space after the parenthesis)."""
    return re.sub(r"\s+", " ", text).strip()


def _strip_comments(text):
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", " ", text)
    return text


def _statements(text):
    """Split preprocessor output into top-level `;`-terminated statements (directives and
    line markers removed)."""
    lines = [ln for ln in text.split("\n") if not ln.lstrip().startswith("#")]
    text = _strip_comments("\n".join(lines))
    depth = 0
    cur = []
    out = []
    for ch in text:
        if ch in "({[":
            depth += 1
        elif ch in ")}]":
            depth -= 1
        if ch == ";" and depth == 0:
            out.append("".join(cur))
            cur = []
            continue
        cur.append(ch)
    return out


def _matching_paren(s, i):
    depth = 0
    for j in range(i, len(s)):
        if s[j] == "(":
            depth += 1
        elif s[j] == ")":
            depth -= 1
            if depth == 0:
                return j
    raise HeaderError("unbalanced parentheses in: " + s[:200])


_FUNC_RE = re.compile(r"\b(MPI_\w+)\s*\(")


def _function_decls(stmts, strip_prefix):
    """(name, prototype) for every statement that declares a function named MPI_*.
    strip_prefix: regex removed from the start of the declaration (OMPI_DECLSPEC/visibility)."""
    found = []
    for st in stmts:
        s = st.strip()
        # the statement may carry the tail of a previous struct/enum: keep text after the last '}'
        if "}" in s:
            s = s[s.rfind("}") + 1:].strip()
        if not s or s.startswith("typedef") or s.startswith("extern \"C\""):
            continue
        s2 = re.sub(r"^\s*extern\s+", "", s)
        s2 = re.sub(strip_prefix, "", s2).strip()
        m = _FUNC_RE.search(s2)
        if not m:
            continue
        # must be "<return type> NAME(" with NAME the declared identifier, not e.g. a
        # variable with an initializer or a function pointer typedef
        head = s2[:m.start()].strip()
        if not head or "=" in head or "(" in head:
            continue
        close = _matching_paren(s2, m.end() - 1)
        tail = s2[close + 1:].strip()
        # anything after the parameter list must be attributes only
        tail_wo = re.sub(r"__mpi_interface_deprecated__\s*\((?:[^()]|\([^()]*\))*\)", "", tail)
        tail_wo = re.sub(r"__mpi_interface_removed__\s*\([^()]*\)", "", tail_wo)
        tail_wo = re.sub(r"__attribute__\s*\(\((?:[^()]|\([^()]*\))*\)\)", "", tail_wo).strip()
        if tail_wo:
            if tail_wo.startswith("{"):
                raise HeaderError("inline definition of %s in mpi.h not supported" % m.group(1))
            continue
        proto = s2[:close + 1]
        found.append((m.group(1), proto))
    return found


def _run_cpp(mpicc, args, source):
    with tempfile.TemporaryDirectory() as d:
        src = os.path.join(d, "mpi_h_probe.c")
        with open(src, "w") as f:
            f.write(source)
        r = subprocess.run([mpicc] + args + [src], capture_output=True, text=True)
        if r.returncode != 0:
            raise HeaderError("%s %s failed:\n%s" % (mpicc, " ".join(args), r.stderr))
        return r.stdout


def find_mpicc():
    mpicc = os.environ.get("MPICC") or shutil.which("mpicc")
    if not mpicc:
        raise HeaderError("mpicc not found (set MPICC)")
    return mpicc


def read_declarations(mpicc=None, std="c11"):
    """Return an ordered dict name -> prototype (as written in mpi.h, OMPI_DECLSPEC and
    deprecation attributes removed, whitespace collapsed) of every MPI_* function the installed
    mpi.h declares when compiled as C11.  Also returns the path of mpi.h."""
    mpicc = mpicc or find_mpicc()
    src = "#include <mpi.h>\n"
    raw = _run_cpp(mpicc, ["-std=" + std, "-E", "-fdirectives-only"], src)
    full = _run_cpp(mpicc, ["-std=" + std, "-E"], src)
    path = None
    m = re.search(r'^# \d+ "([^"]*/mpi\.h)"', raw, re.M)
    if m:
        path = m.group(1)

    raw_decls = _function_decls(_statements(raw), r"^\s*(OMPI_DECLSPEC\s+)+")
    full_decls = _function_decls(
        _statements(full), r"^\s*(__attribute__\s*\(\((?:[^()]|\([^()]*\))*\)\)\s*)+")

    protos = {}
    for name, proto in raw_decls:
        proto = collapse(proto)
        if name in protos and normalise(protos[name]) != normalise(proto):
            raise HeaderError("%s declared twice with different prototypes:\n  %s\n  %s"
                              % (name, protos[name], proto))
        protos.setdefault(name, proto)
    full_names = {n for n, _ in full_decls}
    if set(protos) != full_names:
        raise HeaderError("unexpanded/expanded header disagree: only unexpanded: %s; only expanded: %s"
                          % (sorted(set(protos) - full_names), sorted(full_names - set(protos))))
    return protos, path


def split_prototype(proto):
    """(return_type, name, [(param_decl, param_name)]) of a prototype string."""
    m = _FUNC_RE.search(proto)
    if not m:
        raise ValueError("no MPI_* function name")
    ret = proto[:m.start()].strip()
    name = m.group(1)
    close = _matching_paren(proto, m.end() - 1)
    if proto[close + 1:].strip():
        raise ValueError("text after the parameter list")
    inner = proto[m.end():close]
    params = []
    depth = 0
    cur = ""
    for ch in inner:
        if ch == "," and depth == 0:
            params.append(cur.strip())
            cur = ""
            continue
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        cur += ch
    if cur.strip():
        params.append(cur.strip())
    out = []
    for p in params:
        if p in ("void", "..."):
            out.append((p, None))
            continue
        # function pointer parameter: name inside (*name)
        fm = re.search(r"\(\s*\*\s*(" + _IDENT + r")\s*\)", p)
        if fm:
            out.append((p, fm.group(1)))
            continue
        q = re.sub(r"(\[[^\]]*\]\s*)+$", "", p).strip()
        im = re.search(r"(" + _IDENT + r")$", q)
        pname = im.group(1) if im else None
        # a lone type name ("MPI_Comm") would be a nameless parameter
        words = re.findall(_IDENT, q)
        if pname and len([w for w in words if w not in ("const", "volatile", "restrict")]) < 2:
            pname = None
        out.append((p, pname))
    return ret, name, out
