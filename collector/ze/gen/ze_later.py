# SPDX-License-Identifier: MIT
"""Reads collector/ze/ze_ddi_later.spec: the Level Zero table entries after spec 1.4 (the installed
headers), up to the newest spec zecoll knows. Used by gen_ze_wrappers.py (the collector's wrappers
and tables) and tests/zesim/gen_ddi_members.py; the format is described in the file itself."""
import re
import sys

PROTO_RE = re.compile(r"^(\w+)\s+(ze\w+)\s*\((.*)\)$")
PARAM_RE = re.compile(r"^(.*?)(\w+)$")
VERSION_RE = re.compile(r"^1\.(\d+)$")


def version(path, n, text):
    m = VERSION_RE.match(text)
    if not m:
        sys.exit(f"{path}:{n}: want a spec version 1.<minor>, got {text}")
    return (1 << 16) | int(m.group(1))


def split_params(path, n, text):
    """[(type, name)] of a prototype's parameter list."""
    out = []
    for p in (x.strip() for x in text.split(",")):
        m = PARAM_RE.match(p)
        if not m or not m.group(1).strip():
            sys.exit(f"{path}:{n}: cannot read the parameter '{p}' (want '<type> <name>')")
        out.append((" ".join(m.group(1).split()).replace("* *", "**"), m.group(2)))
    return out


def load(path):
    """types: [(name, declaration)]; tables: {table: (since, getter)}; entries: [(table, index,
    since, member, return type, api, [(type, name)])] in file order; forward: [getter]."""
    types, tables, entries, forward = [], {}, [], []
    for n, raw in enumerate(open(path), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        word = line.split(None, 1)
        if word[0] == "type":
            name, decl = word[1].split(None, 1)
            if not re.search(r"\b%s\b" % re.escape(name), decl):
                sys.exit(f"{path}:{n}: the declaration of {name} must name it")
            types.append((name, decl))
        elif word[0] == "forward":
            if not re.match(r"ze[st]Get\w+ProcAddrTable$", word[1]):
                sys.exit(f"{path}:{n}: want 'forward <zet/zes getter>'")
            forward.append(word[1])
        elif word[0] == "table":
            f = word[1].split()
            if len(f) != 3 or not re.match(r"zeGet\w+ProcAddrTable$", f[2]):
                sys.exit(f"{path}:{n}: want 'table <table> <since> <getter>'")
            tables[f[0]] = (version(path, n, f[1]), f[2])
        else:
            f = line.split(None, 4)
            if len(f) != 5 or not f[1].isdigit() or not f[3].startswith("pfn"):
                sys.exit(f"{path}:{n}: want '<table> <index> <since> <member> <return> <name>(<parameters>)'")
            m = PROTO_RE.match(f[4])
            if not m:
                sys.exit(f"{path}:{n}: cannot read the prototype '{f[4]}'")
            entries.append((f[0], int(f[1]), version(path, n, f[2]), f[3], m.group(1), m.group(2),
                            split_params(path, n, m.group(3))))
    return types, tables, entries, forward


def merge(path, header_tables, entries, tables):
    """Appends the entries to the ze tables of the headers and adds the new tables: returns
    {table: [(api, member, since)]} in table order, header tables first. Checks that every index
    follows its table's previous entry, and that since never goes down within a table."""
    out = {t: [(api, m, 0) for api, m in members] for t, members in header_tables.items()}
    for t in tables:
        if t in out:
            sys.exit(f"{path}: table {t} is in the installed headers already")
        out[t] = []
    for t, idx, since, member, ret, api, params in entries:
        if t not in out:
            sys.exit(f"{path}: {api}: unknown table {t} (declare it with a 'table' line)")
        if idx != len(out[t]):
            sys.exit(f"{path}: {api}: index {idx}, but table {t} has {len(out[t])} entries before it")
        if out[t] and since < out[t][-1][2]:
            sys.exit(f"{path}: {api}: since 1.{since & 0xffff} is older than the entry before it")
        if t in tables and since < tables[t][0]:
            sys.exit(f"{path}: {api}: since 1.{since & 0xffff} is older than its table")
        out[t].append((api, member, since))
    return out
