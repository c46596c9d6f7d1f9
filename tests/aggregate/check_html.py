#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Render zecoll-aggregate's HTML report in headless Chromium and check it.

  check_html.py --aggregate BIN --work DIR (--archive DIR | --synth BIN [--synth-arg=A ...]) [--chromium PATH]

  * the file is self-contained: no http(s) URL, no <link>, no src= attribute, no @import;
  * Chromium's console shows exactly the report's own "charts ready" line: no error, no warning
    (checked to work: the same page with an injected error must fail);
  * the DOM after the scripts ran has the six charts (top kernels, rank x kernel imbalance,
    rank x time utilisation, bandwidth by memory and size, communication matrix, MPI time per rank),
    each with drawn rectangles, the findings first (above the cards), and the
    sortable tables;
  * a PNG screenshot is saved as DIR/report.png, to look at.
Exit 77 (skip) when no Chromium is installed.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys

CHARTS = ["chart-kernels", "chart-imbalance", "chart-utilisation", "chart-bandwidth", "chart-matrix", "chart-mpi-ranks"]


def chromium(exe, args, timeout=120):
    base = [exe, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run",
            "--disable-extensions", "--user-data-dir=" + os.environ.get("ZC_CHROME_PROFILE", "/tmp/zc-chromium-profile")]
    p = subprocess.run(base + args, capture_output=True, text=True, timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def judge(exe, html, work, png=None):
    problems = []
    text = open(html, encoding="utf-8").read()
    for pat in (r"https?://", r"<link\b", r"\bsrc=", r"@import"):
        if re.search(pat, text):
            problems.append(f"not self-contained: matches {pat}")
    rc, dom, err = chromium(exe, ["--enable-logging=stderr", "--v=0", "--dump-dom", "file://" + os.path.abspath(html)])
    if rc != 0:
        problems.append(f"chromium --dump-dom exit {rc}: {err[-500:]}")
    console = [l for l in err.splitlines() if ":CONSOLE" in l]
    ours = [l for l in console if '"zecoll-report: ' in l and "charts ready" in l]
    if len(ours) != 1:
        problems.append(f"the report's own console line is missing: {console[:3]}")
    others = [l for l in console if l not in ours]
    if others:
        problems.append(f"console messages: {others[:3]}")
    m = re.search(r'data-charts="(\d+)"', dom)
    if not m or int(m.group(1)) != len(CHARTS):
        problems.append(f"the page's script did not count {len(CHARTS)} charts: {m.group(0) if m else 'no data-charts'}")
    for cid in CHARTS:
        sm = re.search(r'<svg id="' + cid + r'"(.*?)</svg>', dom, re.S)
        if not sm:
            problems.append(f"chart {cid} missing from the DOM")
        elif sm.group(1).count("<rect") < 1:
            problems.append(f"chart {cid} has nothing drawn")
    if not re.search(r'<h2 id="findings">Findings</h2>\s*<ol class="findings">\s*<li>', dom):
        problems.append("the findings do not open the report")
    if dom.find('id="findings"') > dom.find('class="cards"'):
        problems.append("the findings come after the overview's cards")
    if dom.count('class="sortable"') < 3:
        problems.append("tables missing")
    if "--metrics" in " ".join(sys.argv) and not re.search(r"<h2>PAPI counters</h2>.*?<td>perf::TASK-CLOCK</td>", dom, re.S):
        problems.append("the PAPI counters' tables are missing (synthetic archive with --metrics)")
    if png:
        rc, out, err = chromium(exe, ["--window-size=1280,2400", "--screenshot=" + png, "file://" + os.path.abspath(html)])
        if rc != 0 or not os.path.exists(png) or open(png, "rb").read(8) != b"\x89PNG\r\n\x1a\n" or os.path.getsize(png) < 10000:
            problems.append(f"no screenshot ({rc}): {err[-300:]}")
    return problems


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--aggregate", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--archive")
    ap.add_argument("--synth")
    ap.add_argument("--synth-arg", action="append", default=[])
    ap.add_argument("--chromium")
    a = ap.parse_args()
    exe = a.chromium or shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
    if not exe:
        print("SKIP: no chromium (scripts/setup-deps.sh installs Debian's chromium)")
        return 77
    work = os.path.abspath(a.work)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    archive = a.archive
    if a.synth:
        archive = os.path.join(work, "archive")
        subprocess.run([a.synth, "--out", archive] + a.synth_arg, check=True)
    html = os.path.join(work, "report.html")
    p = subprocess.run([a.aggregate, archive, "-q", "--no-progress", "--html", html], capture_output=True, text=True)
    if p.returncode != 0:
        print(f"FAIL: zecoll-aggregate exit {p.returncode}: {p.stderr}")
        return 1
    png = os.path.join(work, "report.png")
    problems = judge(exe, html, work, png)
    # the checks can fail: the same page with a script error and a chart removed
    bad = os.path.join(work, "broken.html")
    text = open(html, encoding="utf-8").read()
    text = text.replace("console.log(", "undefinedFunction();console.log(", 1).replace('id="chart-bandwidth"', 'id="x"', 1)
    open(bad, "w", encoding="utf-8").write(text)
    broken = judge(exe, bad, work)
    if not any("console" in b for b in broken) or not any("chart-bandwidth" in b for b in broken):
        problems.append(f"the checker did not notice a broken page: {broken}")
    for pr in problems:
        print("FAIL:", pr)
    if not problems:
        print(f"ok: {html} renders with {len(CHARTS)} charts and a clean console; screenshot {png}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
