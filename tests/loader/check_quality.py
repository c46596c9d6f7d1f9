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
  * zecoll-aggregate's report of the archive (JSON data_quality.level_zero, the text and HTML
    lines, the CSV table data_quality_untraced) gives the same numbers.

  check_quality.py run --aggregate BIN --asked 1.N [--arg A ...] (then check_trace.py run's options)
"""
import argparse
import csv
import json
import os
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


def spec_known():
    """The newest spec version zecoll declares: the largest <since> of ze_ddi_later.spec."""
    path = os.path.join(HERE, "..", "..", "collector", "ze", "ze_ddi_later.spec")
    minors = [int(m) for line in open(path) if not line.startswith("#")
              for m in re.findall(r"(?<![\w.])1\.(\d+)(?![\w.])", line)]
    return f"1.{max(minors)}"


def truth_calls(path):
    """{entry: calls} of the untraced entries zesim executed."""
    calls = {}
    for line in open(path):
        if not line.endswith("\n"):
            continue
        rec = json.loads(line)
        for entry, (kind, what) in TRUTH_OF.items():
            if rec.get("kind") == kind and rec.get("what") == what:
                calls[entry] = calls.get(entry, 0) + 1
        if rec.get("kind") == "by_name":
            calls[rec["what"]] = calls.get(rec["what"], 0) + 1
    return calls


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
    want_known, want_calls = spec_known(), truth_calls(os.path.join(a.work, "truth.jsonl"))
    want_total = sum(want_calls.values())
    judge_by_name(c, a, want_calls)
    props = check_archive.archive_properties(os.path.join(a.work, "trace", "traces.otf2"))
    got = {k: props.get(f"ZECOLL::L0_{k}") for k in ("SPEC_KNOWN", "SPEC_ASKED", "UNTRACED_CALLS", "UNTRACED")}
    want_list = ", ".join(f"{e} {n}" for e, n in sorted(want_calls.items(), key=lambda x: (-x[1], x[0]))) or None
    want = {"SPEC_KNOWN": want_known, "SPEC_ASKED": a.asked, "UNTRACED_CALLS": str(want_total), "UNTRACED": want_list}
    for k in want:
        if got[k] != want[k]:
            c.fail(f"archive property ZECOLL::L0_{k} is {got[k]!r}, want {want[k]!r}")
    # the report
    out = os.path.join(a.work, "report")
    p = subprocess.run([a.aggregate, os.path.join(a.work, "trace"), "-q", "--output", out], capture_output=True,
                       text=True, timeout=120)
    if p.returncode != 0:
        c.fail(f"zecoll-aggregate exited {p.returncode}: {p.stderr[-500:]}")
        return
    lz = json.load(open(os.path.join(out, "report.json")))["data_quality"].get("level_zero")
    rep = {"spec_known": want_known, "spec_asked": a.asked, "untraced_calls": want_total,
           "untraced": [{"entry": e, "calls": n} for e, n in sorted(want_calls.items(), key=lambda x: (-x[1], x[0]))]}
    if lz != rep:
        c.fail(f"report JSON data_quality.level_zero is {lz}, want {rep}")
    rows = list(csv.DictReader(open(os.path.join(out, "csv", "data_quality_untraced.csv"))))
    if {r["entry"]: int(r["calls"]) for r in rows} != want_calls:
        c.fail(f"data_quality_untraced.csv has {rows}, want {want_calls}")
    line = f"Level Zero: spec {a.asked} asked by the loader, {want_known} known to zecoll; {want_total} call(s) to " \
           "entries it passes through untraced" + (": " + want_list if want_list else "")
    for f in ("report.txt", "report.html"):
        if line not in open(os.path.join(out, f)).read():
            c.fail(f"{f} lacks the line {line!r}")
    c.note(f"Level Zero data quality: {line}")


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
