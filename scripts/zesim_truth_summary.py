#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Summarise a zesim ground-truth log (tests/zesim/README.md): what the simulated GPUs executed."""
import collections
import json
import sys


def summarise(path):
    devices, ops = [], []
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line:
                continue
            try:
                rec = json.loads(line)
            except json.JSONDecodeError as e:
                sys.exit(f"{path}:{n}: not JSON: {e}")
            (devices if rec.get("kind") == "device" else ops).append(rec)
    print(f"  {len(ops)} operations executed on {len({o['device'] for o in ops})} device(s), "
          f"{len({(o['device'], o['ordinal'], o['index']) for o in ops})} engine(s)")
    kinds = collections.Counter(o["kind"] for o in ops)
    print("  by kind: " + ", ".join(f"{k} {v}" for k, v in sorted(kinds.items())))
    kern = collections.defaultdict(lambda: [0, 0])
    for o in ops:
        if o["kind"] == "kernel":
            k = kern[o["name"]]
            k[0] += 1
            k[1] += o["host_end"] - o["host_start"]
    for name, (n, ns) in sorted(kern.items(), key=lambda kv: -kv[1][1]):
        print(f"  kernel {name:<16} {n:6d} launches {ns / 1e3:12.1f} us device time")
    xfer = collections.defaultdict(lambda: [0, 0])
    for o in ops:
        if o.get("bytes"):
            x = xfer[f"{o['kind']} {o.get('src') or '-'}->{o.get('dst') or '-'}"]
            x[0] += 1
            x[1] += o["bytes"]
    for name, (n, b) in sorted(xfer.items()):
        print(f"  {name:<34} {n:6d} ops {b:12d} bytes")
    bits = {d["device"]: d["kernel_ts_bits"] for d in devices}
    wraps = sum(1 for o in ops if o["ts_end"] < o["ts_start"])
    if wraps:
        print(f"  {wraps} operation(s) straddled a {bits.get(0, 32)}-bit device timestamp wrap")


if __name__ == "__main__":
    for p in sys.argv[1:]:
        summarise(p)
