#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Render config/zc_knobs.def (the single knob table) as docs/knobs.md.
   gen_knob_docs.py [--check]   (--check: fail if docs/knobs.md is not what the table gives)"""
import os
import re
import sys

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
src = open(os.path.join(root, "config", "zc_knobs.def")).read()
rows = re.findall(r'ZC_KNOB\((\w+),\s*(\w+),\s*"((?:[^"\\]|\\.)*)",\s*"((?:[^"\\]|\\.)*)"\)', src)
out = ["# zecoll settings", "",
       "Generated from `config/zc_knobs.def` by `scripts/gen_knob_docs.py`; do not edit. Every setting is",
       "an environment variable `ZECOLL_<NAME>`. A value that does not",
       "parse is reported once, naming the variable, and the default is used.", "",
       "| variable | type | default | meaning |", "|---|---|---|---|"]
for name, typ, default, doc in rows:
    doc = doc.replace("|", "\\|")
    out.append(f"| `ZECOLL_{name}` | {typ} | `{default}` | {doc} |")
text = "\n".join(out) + "\n"
path = os.path.join(root, "docs", "knobs.md")
if "--check" in sys.argv:
    cur = open(path).read() if os.path.exists(path) else ""
    if cur != text:
        sys.exit("docs/knobs.md is out of date: run scripts/gen_knob_docs.py")
    print("ok - docs/knobs.md matches config/zc_knobs.def")
else:
    open(path, "w").write(text)
