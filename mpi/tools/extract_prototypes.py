#!/usr/bin/env python3
"""Print the MPI_* C function prototypes the installed mpi.h declares (C11), one per line.

Bootstrap / maintenance helper for mpi/mpi_api.spec (the spec, not this output, is the source).

  extract_prototypes.py                 prototypes as written in mpi.h (OMPI_DECLSPEC removed)
  extract_prototypes.py --skeleton      the same as spec lines "<prototype> :: plain"
  extract_prototypes.py --missing SPEC  only the functions that SPEC does not list yet
  extract_prototypes.py --names         function names only

Environment: MPICC (default: mpicc from PATH).
"""

import argparse
import os
import re
import signal
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mpi_header  # noqa: E402


def spec_names(path):
    names = set()
    with open(path) as f:
        text = f.read().replace("\\\n", " ")
    for line in text.split("\n"):
        line = line.split("#", 1)[0]
        m = re.search(r"\b(MPI_\w+)\s*\(", line)
        if m:
            names.add(m.group(1))
    return names


def main():
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--skeleton", action="store_true")
    ap.add_argument("--names", action="store_true")
    ap.add_argument("--missing", metavar="SPEC")
    ap.add_argument("--std", default="c11", help="C standard used to preprocess mpi.h (default c11)")
    args = ap.parse_args()
    try:
        decls, path = mpi_header.read_declarations(std=args.std)
    except mpi_header.HeaderError as e:
        print("extract_prototypes: %s" % e, file=sys.stderr)
        return 1
    skip = spec_names(args.missing) if args.missing else set()
    print("# %d MPI_* functions declared by %s (-std=%s)" % (len(decls), path, args.std))
    for name, proto in decls.items():
        if name in skip:
            continue
        if args.names:
            print(name)
        elif args.skeleton or args.missing:
            print("%s :: plain" % proto)
        else:
            print(proto)
    return 0


if __name__ == "__main__":
    sys.exit(main())
