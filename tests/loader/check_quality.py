#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Never silent (docs/archive.md A21): runs a program under zecoll on zesim and judges the archive
against zesim's truth as check_trace.py does, then the Level Zero part of its data quality:
  * the archive's properties (otf2-print -I): ZECOLL::L0_SPEC_KNOWN is the newest spec version of
    collector/ze/ze_ddi_later.spec, ZECOLL::L0_SPEC_ASKED the version the loader asked for
    (--asked: 1.4 for Debian's loader), ZECOLL::L0_UNTRACED_CALLS and ZECOLL::L0_UNTRACED the
    calls to entries passed through untraced, counted independently in zesim's truth (each
    zeCommandListUpdateMutableCommandWaitEventsExp logs a "wait_events" line, each call of a
    function zesim hands out by name a "by_name" line); such a function named after a table entry
    is traced through that entry's wrapper (a host region per call) where the driver's table has it;
    any other has no host region;
  * functions handed out by name past the collector's BYNAME_MAX counters (x86-64; every one
    elsewhere) are not counted: ZECOLL::L0_UNTRACED_UNCOUNTED names them, in the order zesim's
    truth has their first lookups ("lookup": true), and their calls are in no count;
  * zecoll-aggregate's report of the archive (JSON data_quality.level_zero, the text and HTML
    lines, the CSV table data_quality_untraced) gives the same numbers and names.

  check_quality.py run --aggregate BIN --asked 1.N [--arg A ...] (then check_trace.py run's options)
"""
import argparse
import csv
import json
import os
import platform
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "collector"))
sys.path.insert(0, os.path.join(HERE, "..", "aggregate"))
import check_archive  # noqa: E402
import check_trace  # noqa: E402

# the untraced entries zesim logs, by the truth line each call writes; functions handed out by
# name log {"kind": "by_name", "what": <name>}
TRUTH_OF = {"zeCommandListUpdateMutableCommandWaitEventsExp": ("mutable", "wait_events")}
# functions handed out by name that are table entries: traced through the entry's wrapper (a host
# region per call) where the driver's table has the entry, from this spec version (zesim fills
# entries by version); counted by name below it. Either way an untraced entry's calls are counted.
BY_NAME_TABLE_ENTRY = {"zeCommandListAppendHostFunction": (1, 17)}
# collector/ze/zc_ze_byname.c: distinct functions whose calls a trampoline counts (x86-64 only)
BYNAME_MAX = 32 if platform.machine() == "x86_64" else 0
TEXT_SHOWN = 8  # the text report's line shows the first 8 counted entries, then "..."


def spec_known():
    """The newest spec version zecoll declares: the largest <since> of ze_ddi_later.spec."""
    path = os.path.join(HERE, "..", "..", "collector", "ze", "ze_ddi_later.spec")
    minors = [int(m) for line in open(path) if not line.startswith("#")
              for m in re.findall(r"(?<![\w.])1\.(\d+)(?![\w.])", line)]
    return f"1.{max(minors)}"


def truth_calls(path, asked):
    """{entry: calls} of the untraced entries zesim executed, and the functions handed out by name
    whose calls the collector cannot count (in the order of their first lookup)."""
    calls, looked_up = {}, []
    for line in open(path):
        if not line.endswith("\n"):
            continue
        rec = json.loads(line)
        for entry, (kind, what) in TRUTH_OF.items():
            if rec.get("kind") == kind and rec.get("what") == what:
                calls[entry] = calls.get(entry, 0) + 1
        if rec.get("kind") == "by_name" and rec.get("lookup"):
            if rec["what"] not in looked_up:
                looked_up.append(rec["what"])
        elif rec.get("kind") == "by_name":
            calls[rec["what"]] = calls.get(rec["what"], 0) + 1
    # a table entry's name is its wrapper where the driver's table has it: no counter of its own
    by_name = [n for n in looked_up if not (n in BY_NAME_TABLE_ENTRY and asked >= BY_NAME_TABLE_ENTRY[n])]
    uncounted = by_name[BYNAME_MAX:]
    for n in by_name[:BYNAME_MAX]:
        calls.setdefault(n, 0)  # handed out, never called: listed with 0
    for n in uncounted:
        calls.pop(n, None)
    return calls, uncounted


def judge_by_name(c, a, calls):
    """A function handed out by name under a table entry's name is that entry's wrapper where the
    driver's table has the entry: a host region per call; any other has none."""
    asked = tuple(int(x) for x in a.asked.split("."))
    _, _, info = check_trace.read_archive(c, os.path.join(a.work, "trace", "traces.otf2"))
    for name, n in calls.items():
        since = BY_NAME_TABLE_ENTRY.get(name)
        if name not in BY_NAME_TABLE_ENTRY and name in TRUTH_OF:
            continue
        want = n if since and asked >= since else 0
        got = info["host_regions"].get(name, 0)
        if got != want:
            c.fail(f"{got} host region(s) {name} handed out by name, want {want} ({n} call(s) in the truth)")
        else:
            c.note(f"{name}, handed out by name: {n} call(s), {got} host region(s)"
                   f" ({'traced through its wrapper' if want else 'counted by name'})")


def judge(c, a):
    asked = tuple(int(x) for x in a.asked.split("."))
    want_known = spec_known()
    want_calls, uncounted = truth_calls(os.path.join(a.work, "truth.jsonl"), asked)
    want_total = sum(want_calls.values())
    judge_by_name(c, a, want_calls)
    props = check_archive.archive_properties(os.path.join(a.work, "trace", "traces.otf2"))
    got = {k: props.get(f"ZECOLL::L0_{k}")
           for k in ("SPEC_KNOWN", "SPEC_ASKED", "UNTRACED_CALLS", "UNTRACED", "UNTRACED_UNCOUNTED")}
    ranked = sorted(want_calls.items(), key=lambda x: (-x[1], x[0]))
    want_list = ", ".join(f"{e} {n}" for e, n in ranked) or None
    want = {"SPEC_KNOWN": want_known, "SPEC_ASKED": a.asked, "UNTRACED_CALLS": str(want_total), "UNTRACED": want_list,
            "UNTRACED_UNCOUNTED": ", ".join(uncounted) or None}
    for k in want:
        if got[k] != want[k]:
            c.fail(f"archive property ZECOLL::L0_{k} is {got[k]!r}, want {want[k]!r}")
    if uncounted:  # the archive checker's rule A21 on the same archive
        for f in check_archive.check(os.path.join(a.work, "trace"), None, False).fail["A21"]:
            c.fail(f"check_archive.py A21: {f}")
    # the report
    out = os.path.join(a.work, "report")
    p = subprocess.run([a.aggregate, os.path.join(a.work, "trace"), "-q", "--output", out], capture_output=True,
                       text=True, timeout=120)
    if p.returncode != 0:
        c.fail(f"zecoll-aggregate exited {p.returncode}: {p.stderr[-500:]}")
        return
    lz = json.load(open(os.path.join(out, "report.json")))["data_quality"].get("level_zero")
    rep = {"spec_known": want_known, "spec_asked": a.asked, "untraced_calls": want_total,
           "untraced": [{"entry": e, "calls": n} for e, n in ranked], "untraced_uncounted": uncounted}
    if lz != rep:
        c.fail(f"report JSON data_quality.level_zero is {lz}, want {rep}")
    rows = list(csv.DictReader(open(os.path.join(out, "csv", "data_quality_untraced.csv"))))
    want_rows = [(e, str(n)) for e, n in ranked] + [(e, "") for e in uncounted]
    if [(r["entry"], r["calls"]) for r in rows] != want_rows:
        c.fail(f"data_quality_untraced.csv has {rows}, want {want_rows}")
    head = f"Level Zero: spec {a.asked} asked by the loader, {want_known} known to zecoll; {want_total} call(s) to " \
           "entries it passes through untraced"
    shown = ", ".join(f"{e} {n}" for e, n in ranked[:TEXT_SHOWN]) + (", ..." if len(ranked) > TEXT_SHOWN else "")
    lines = {"report.txt": [head + (": " + shown if shown else "")],
             "report.html": [head + (": " + want_list if want_list else "")]}
    if uncounted:
        for f in lines:
            lines[f].append("Level Zero: functions handed out by name that it passes through untraced and could not "
                            "count: " + ", ".join(uncounted))
    for f, want_lines in lines.items():
        text = open(os.path.join(out, f)).read()
        for line in want_lines:
            if line not in text:
                c.fail(f"{f} lacks the line {line!r}")
    c.note(f"Level Zero data quality: {lines['report.txt']}")


def main():
    argv = sys.argv[1:]
    if not argv or argv[0] != "run":
        sys.exit(__doc__)
    ap = argparse.ArgumentParser()
    # check_trace.py run's options, and the report's
    for flag, kw in [(f, {"required": True}) for f in ("--app", "--zesim", "--libdir", "--work", "--aggregate", "--asked")] + \
                    [(f, {"action": "append"}) for f in ("--arg", "--env", "--preload")] + \
                    [("--timeout", {"type": int, "default": 120}), ("--preload-first", {})]:
        ap.add_argument(flag, **kw)
    a = ap.parse_args(argv[1:])
    c = check_trace.run(a)
    if not c.failures:
        judge(c, a)
    print("\n".join([f"# {n}" for n in c.notes] + [f"not ok - {f}" for f in c.failures[:40]]))
    print("ok - trace matches ground truth; Level Zero data quality as the truth says" if not c.failures
          else f"# {len(c.failures)} failure(s)")
    return 1 if c.failures else 0

if __name__ == "__main__":
    sys.exit(main())
