#!/usr/bin/env python3
"""Check mpi/mpi_api.spec against its format (mpi/README.md) and the installed mpi.h.

  check_spec.py [--spec mpi/mpi_api.spec] [--mpicc mpicc] [--std c11] [--strict] [--summary]
  check_spec.py --no-header SPEC      syntax and role checks only (no MPI installation needed)

Checks, each failure reported as `file:line: message`:
  * syntax: `<prototype> :: <shape> [key=value ...]` (`#` comments, trailing `\\` continuation);
  * the shape is one of README's shapes; every key is a role of that shape (or op=/how=);
  * every role names a parameter of the line's prototype, and that parameter has the C type the
    role needs (e.g. request= an `MPI_Request *`, scounts= an int array, comm= an MPI_Comm);
  * the required roles of the shape (README table) are present; for coll/icoll also the buffer
    roles the collective op needs (root= for rooted ones); op= is an OTF2 collective name, how= a
    documented value; `special` is used for exactly MPI_Init, MPI_Init_thread, MPI_Finalize,
    MPI_Pcontrol;
  * every MPI_* function the installed mpi.h declares (preprocessed as C11, like the project)
    appears exactly once, and its prototype equals the header's after whitespace normalisation.
    A spec function the header does not declare is a warning (the generator skips it), an error
    with --strict.
Exit status: 0 clean, 1 errors found, 2 the header could not be read.
"""

import argparse
import collections
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mpi_header  # noqa: E402

# ---------------------------------------------------------------------------------------------
# The README table: shape -> (required roles, optional roles)
SHAPES = {
    "plain": ([], []),
    "unwrapped": ([], []),
    "special": ([], []),
    "send": (["count", "datatype", "peer", "tag", "comm"], []),
    "recv": (["datatype", "comm", "status"], ["count", "peer", "tag"]),
    "isend": (["count", "datatype", "peer", "tag", "comm", "request"], []),
    "irecv": (["datatype", "comm", "request"], ["count", "peer", "tag"]),
    "send_init": (["count", "datatype", "peer", "tag", "comm", "request"], []),
    "recv_init": (["datatype", "comm", "request"], ["count", "peer", "tag"]),
    "sendrecv": (["scount", "stype", "peer", "stag", "rtype", "rpeer", "rtag", "comm", "status"],
                 ["rcount"]),
    "sendrecv_replace": (["count", "datatype", "peer", "stag", "rpeer", "rtag", "comm", "status"], []),
    "start": (["request"], []),
    "startall": (["n", "requests"], []),
    "wait": (["request", "status"], []),
    "test": (["request", "status"], ["flag"]),
    "waitall": (["n", "requests", "statuses"], []),
    "testall": (["n", "requests", "statuses"], ["flag"]),
    "waitany": (["n", "requests", "index", "status"], []),
    "testany": (["n", "requests", "index", "status"], ["flag"]),
    "waitsome": (["n", "requests", "outcount", "indices", "statuses"], []),
    "testsome": (["n", "requests", "outcount", "indices", "statuses"], []),
    "request_free": (["request"], []),
    "cancel": (["request"], []),
    "coll": (["op", "comm"],
             ["scount", "stype", "rcount", "rtype", "scounts", "rcounts", "stypes", "rtypes", "root"]),
    "icoll": (["op", "comm", "request"],
              ["scount", "stype", "rcount", "rtype", "scounts", "rcounts", "stypes", "rtypes", "root"]),
    # comm (the parent) is required "if any": see check_line
    "comm_new": (["newcomm"], ["comm", "how"]),
    "comm_free": (["comm"], []),
    "comm_name": (["comm"], []),
}

SPECIAL_FUNCS = {"MPI_Init", "MPI_Init_thread", "MPI_Finalize", "MPI_Pcontrol", "MPI_Abort"}

# OTF2_COLLECTIVE_OP_* suffixes usable as op=, with the buffer roles each needs
_R = ["root"]
COLL_OPS = {
    "BARRIER": [],
    "BCAST": ["scount", "stype", "rcount", "rtype"] + _R,
    "GATHER": ["scount", "stype", "rcount", "rtype"] + _R,
    "GATHERV": ["scount", "stype", "rcounts", "rtype"] + _R,
    "SCATTER": ["scount", "stype", "rcount", "rtype"] + _R,
    "SCATTERV": ["scounts", "stype", "rcount", "rtype"] + _R,
    "ALLGATHER": ["scount", "stype", "rcount", "rtype"],
    "ALLGATHERV": ["scount", "stype", "rcounts", "rtype"],
    "ALLTOALL": ["scount", "stype", "rcount", "rtype"],
    "ALLTOALLV": ["scounts", "stype", "rcounts", "rtype"],
    "ALLTOALLW": ["scounts", "stypes", "rcounts", "rtypes"],
    "ALLREDUCE": ["scount", "stype", "rcount", "rtype"],
    "REDUCE": ["scount", "stype", "rcount", "rtype"] + _R,
    "REDUCE_SCATTER": ["stype", "rcounts", "rtype"],
    "SCAN": ["scount", "stype", "rcount", "rtype"],
    "EXSCAN": ["scount", "stype", "rcount", "rtype"],
    "REDUCE_SCATTER_BLOCK": ["scount", "stype", "rcount", "rtype"],
}
HOW_VALUES = {"dup", "split", "create", "create_group", "split_type", "intercomm", "merge", "topo"}
NON_PARAM_KEYS = {"op", "how"}

# role -> predicate on (normalised parameter declaration) and a description for messages
# (matched against mpi_header.normalise(declaration): "const int recvcounts[]", "MPI_Request*request")
_INT = (r"^(const )?int \w+$", "an int")
_INTPTR = (r"^int\*\w+$", "an int *")
_INTARR = (r"^(const )?int( \w+\[\]|\*\w+)$", "an int array")
_DT = (r"^(const )?MPI_Datatype \w+$", "an MPI_Datatype")
_DTARR = (r"^(const )?MPI_Datatype( \w+\[\]|\*\w+)$", "an MPI_Datatype array")
_COMM = (r"^MPI_Comm \w+$", "an MPI_Comm")
_COMMPTR = (r"^MPI_Comm\*\w+$", "an MPI_Comm *")
_STATUS = (r"^MPI_Status\*\w+$", "an MPI_Status *")
_STATUSES = (r"^MPI_Status( \w+\[\]|\*\w+)$", "an MPI_Status array")
_REQ = (r"^MPI_Request\*\w+$", "an MPI_Request *")
_REQS = (r"^MPI_Request( \w+\[\]|\*\w+)$", "an MPI_Request array")
ROLE_TYPES = {
    "count": _INT, "scount": _INT, "rcount": _INT,
    "peer": _INT, "rpeer": _INT, "tag": _INT, "stag": _INT, "rtag": _INT, "root": _INT, "n": _INT,
    "datatype": _DT, "stype": _DT, "rtype": _DT,
    "stypes": _DTARR, "rtypes": _DTARR,
    "scounts": _INTARR, "rcounts": _INTARR, "indices": _INTARR,
    "flag": _INTPTR, "index": _INTPTR, "outcount": _INTPTR,
    "status": _STATUS, "statuses": _STATUSES,
    "request": _REQ, "requests": _REQS,
    "newcomm": _COMMPTR,
    # comm: MPI_Comm, except comm_free (MPI_Comm *): see check_line
}

_LINE_RE = re.compile(r"^(?P<proto>.*?\))\s*::\s*(?P<rest>.*)$")
_KV_RE = re.compile(r"^(\w+)=(\w+)$")


class Reporter:
    def __init__(self, path, strict):
        self.path = path
        self.strict = strict
        self.errors = 0
        self.warnings = 0

    def error(self, line, msg):
        self.errors += 1
        print("%s:%s: error: %s" % (self.path, line, msg))

    def warn(self, line, msg):
        if self.strict:
            self.error(line, msg)
            return
        self.warnings += 1
        print("%s:%s: warning: %s" % (self.path, line, msg))


def logical_lines(path):
    """(first physical line number, text) of every non-empty logical line."""
    with open(path) as f:
        phys = f.read().split("\n")
    out = []
    buf = ""
    start = None
    for i, raw in enumerate(phys, 1):
        text = raw.split("#", 1)[0].rstrip()
        cont = text.endswith("\\")
        if cont:
            text = text[:-1]
        if start is None:
            start = i
        buf += " " + text
        if cont:
            continue
        if buf.strip():
            out.append((start, buf.strip()))
        buf = ""
        start = None
    if buf.strip():
        out.append((start, buf.strip()))
    return out


Entry = collections.namedtuple("Entry", "line name proto shape roles")


def check_line(rep, lineno, text):
    m = _LINE_RE.match(text)
    if not m:
        rep.error(lineno, "expected `<prototype> :: <shape> [role=parameter ...]`")
        nm = re.search(r"\b(MPI_\w+)\s*\(", text)
        # keep the name so that the function is not also reported as missing
        return Entry(lineno, nm.group(1), None, None, {}) if nm else None
    proto = m.group("proto").strip()
    rest = m.group("rest").split()
    if "OMPI_DECLSPEC" in proto:
        rep.error(lineno, "prototype must not contain OMPI_DECLSPEC")
    if re.search(r"\bPMPI_\w+\s*\(", proto):
        rep.error(lineno, "list the MPI_* function, not PMPI_*")
        return None
    try:
        _ret, name, params = mpi_header.split_prototype(proto)
    except ValueError as e:
        rep.error(lineno, "cannot parse prototype: %s" % e)
        return None
    if not rest:
        rep.error(lineno, "%s: missing shape after ::" % name)
        return Entry(lineno, name, proto, None, {})
    shape = rest[0]
    if shape not in SHAPES:
        rep.error(lineno, "%s: unknown shape '%s' (known: %s)" % (name, shape, " ".join(sorted(SHAPES))))
        return Entry(lineno, name, proto, None, {})

    pmap = {}
    for decl, pname in params:
        if pname is None:
            if decl not in ("void", "..."):
                rep.error(lineno, "%s: parameter '%s' has no name" % (name, decl))
            continue
        if pname in pmap:
            rep.error(lineno, "%s: parameter name '%s' used twice" % (name, pname))
        pmap[pname] = decl

    roles = collections.OrderedDict()
    for kv in rest[1:]:
        km = _KV_RE.match(kv)
        if not km:
            rep.error(lineno, "%s: '%s' is not role=parameter" % (name, kv))
            continue
        k, v = km.groups()
        if k in roles:
            rep.error(lineno, "%s: role '%s' given twice" % (name, k))
            continue
        roles[k] = v

    required, optional = SHAPES[shape]
    allowed = set(required) | set(optional)
    for k, v in roles.items():
        if k not in allowed:
            rep.error(lineno, "%s: role '%s' is not a role of shape '%s' (allowed: %s)"
                      % (name, k, shape, " ".join(sorted(allowed)) or "none"))
            continue
        if k in NON_PARAM_KEYS:
            continue
        if v not in pmap:
            rep.error(lineno, "%s: %s=%s names no parameter (parameters: %s)"
                      % (name, k, v, " ".join(pmap) or "none"))
            continue
        if k == "comm":
            rt = _COMMPTR if shape == "comm_free" else _COMM
        else:
            rt = ROLE_TYPES.get(k)
        if rt and not re.match(rt[0], mpi_header.normalise(pmap[v])):
            rep.error(lineno, "%s: %s=%s but '%s' is not %s" % (name, k, v, pmap[v], rt[1]))
    for k in required:
        if k not in roles:
            rep.error(lineno, "%s: shape '%s' requires role '%s'" % (name, shape, k))

    if shape == "comm_new" and "comm" not in roles:
        # the parent communicator is required if there is one
        parents = [p for p, d in pmap.items() if re.match(_COMM[0], mpi_header.normalise(d))]
        if parents:
            rep.error(lineno, "%s: comm_new without comm= but it has a parent communicator "
                              "parameter (%s)" % (name, " ".join(parents)))
    if "how" in roles and roles["how"] not in HOW_VALUES:
        rep.error(lineno, "%s: how=%s is not one of %s" % (name, roles["how"], "|".join(sorted(HOW_VALUES))))
    if shape in ("coll", "icoll") and "op" in roles:
        op = roles["op"]
        if op not in COLL_OPS:
            rep.error(lineno, "%s: op=%s is not an OTF2 collective op (%s)"
                      % (name, op, " ".join(COLL_OPS)))
        else:
            for k in COLL_OPS[op]:
                if k not in roles:
                    rep.error(lineno, "%s: op=%s needs role '%s'" % (name, op, k))
        for a, b in (("scount", "scounts"), ("rcount", "rcounts"), ("stype", "stypes"), ("rtype", "rtypes")):
            if a in roles and b in roles:
                rep.error(lineno, "%s: give %s= or %s=, not both" % (name, a, b))
    if (shape == "special") != (name in SPECIAL_FUNCS):
        if shape == "special":
            rep.error(lineno, "%s: shape 'special' is only for %s" % (name, ", ".join(sorted(SPECIAL_FUNCS))))
        else:
            rep.error(lineno, "%s must have shape 'special' (hand-written wrapper)" % name)
    return Entry(lineno, name, proto, shape, roles)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("spec", nargs="?", default=os.path.join(here, "..", "mpi_api.spec"))
    ap.add_argument("--mpicc", default=None, help="MPI C compiler wrapper (default: $MPICC or mpicc)")
    ap.add_argument("--std", default="c11", help="C standard mpi.h is read with (default c11, as the project)")
    ap.add_argument("--no-header", action="store_true", help="skip the checks against the installed mpi.h")
    ap.add_argument("--strict", action="store_true", help="warnings are errors")
    ap.add_argument("--summary", action="store_true", help="print the number of lines per shape")
    args = ap.parse_args()

    spec = args.spec if args.spec != ap.get_default("spec") else os.path.relpath(args.spec)
    rep = Reporter(spec, args.strict)
    if not os.path.exists(args.spec):
        print("%s: error: no such file" % spec)
        return 1

    entries = []
    for lineno, text in logical_lines(args.spec):
        e = check_line(rep, lineno, text)
        if e:
            entries.append(e)

    first = {}
    for e in entries:
        if e.name in first:
            rep.error(e.line, "%s listed again (first at line %d)" % (e.name, first[e.name].line))
        else:
            first[e.name] = e

    with open(args.spec) as f:
        eof_line = f.read().count("\n") or 1
    if not args.no_header:
        try:
            decls, hpath = mpi_header.read_declarations(args.mpicc, args.std)
        except mpi_header.HeaderError as err:
            print("%s: error: cannot read mpi.h: %s" % (spec, err))
            return 2
        for name, hproto in decls.items():
            e = first.get(name)
            if e is None:
                rep.error(eof_line, "%s is declared by %s but missing from the spec: add\n    %s :: plain"
                          % (name, hpath, hproto))
                continue
            if e.proto is not None and mpi_header.normalise(e.proto) != mpi_header.normalise(hproto):
                rep.error(e.line, "%s: prototype differs from %s:\n    spec:   %s\n    mpi.h:  %s"
                          % (name, hpath, e.proto, hproto))
        for name, e in first.items():
            if name not in decls:
                rep.warn(e.line, "%s is not declared by %s (-std=%s): the generator will skip it"
                         % (name, hpath, args.std))

    if args.summary or rep.errors == 0:
        counts = collections.Counter(e.shape for e in first.values() if e.shape)
        print("%s: %d functions; %s" % (spec, len(first),
              ", ".join("%s %d" % (s, counts[s]) for s in SHAPES if counts[s])))
    if rep.errors:
        print("%s: %d error(s), %d warning(s)" % (spec, rep.errors, rep.warnings))
        return 1
    print("%s: OK%s" % (spec, " (%d warning(s))" % rep.warnings if rep.warnings else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
