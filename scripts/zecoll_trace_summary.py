#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Summarise a zecoll OTF2 archive: device kernels, transfers (bytes, bandwidth), busy time, and
the host API calls that took longest. Reads with Debian's python3-otf2 (run with /usr/bin/python3).
  zecoll_trace_summary.py ARCHIVE_DIR [--top N]
This is a quick look at one archive; zecoll-aggregate produces job-wide statistics."""
import collections
import os
import sys

import otf2

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from zc_otf2_compat import patch_intercomm_reading  # noqa: E402

patch_intercomm_reading()


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    top = int(sys.argv[sys.argv.index("--top") + 1]) if "--top" in sys.argv else 8
    path = sys.argv[1]
    if os.path.isdir(path):
        path = os.path.join(path, "traces.otf2")
    kern = collections.defaultdict(list)
    xfer = collections.defaultdict(lambda: [0, 0, 0])
    api = collections.defaultdict(lambda: [0, 0])
    busy = collections.defaultdict(list)
    open_ = {}
    streams, threads = set(), set()
    msgs = [0, 0]  # point-to-point messages sent, bytes
    colls = collections.defaultdict(lambda: [0, 0])  # operation -> records (one per rank), bytes sent
    with otf2.reader.open(path) as tr:
        ranks = sum(1 for g in tr.definitions.location_groups if g.location_group_type == otf2.LocationGroupType.PROCESS)
        for loc, ev in tr.events:
            k = type(ev).__name__
            gpu = loc.type == otf2.LocationType.GPU
            (streams if gpu else threads).add(loc._ref)
            if k == "Enter":
                open_.setdefault(loc._ref, []).append((ev.region.name, ev.time, None))
            elif k in ("RmaGet", "RmaPut") and open_.get(loc._ref):
                n, t, _ = open_[loc._ref][-1]
                open_[loc._ref][-1] = (n, t, ev.bytes)
            elif k in ("MpiSend", "MpiIsend"):
                msgs[0] += 1
                msgs[1] += ev.msg_length
            elif k in ("MpiCollectiveEnd", "NonBlockingCollectiveComplete"):
                c = colls[str(ev.collective_op).split(".")[-1]]
                c[0] += 1
                c[1] += ev.size_sent
            elif k == "Leave" and open_.get(loc._ref):
                n, t, b = open_[loc._ref].pop()
                d = ev.time - t
                if gpu:
                    dev = loc.group.system_tree_parent.name
                    busy[dev].append((t, ev.time))
                    if b is not None:
                        x = xfer[n]
                        x[0] += 1
                        x[1] += b
                        x[2] += d
                    else:
                        kern[n].append(d)
                elif n != "zecoll buffer flush":
                    api[n][0] += 1
                    api[n][1] += d
    print(f"  {ranks} process(es), {len(threads)} host thread(s), {len(streams)} device stream location(s)")
    for dev, iv in sorted(busy.items()):
        iv.sort()
        union, cur_s, cur_e = 0, None, None
        for s, e in iv:
            if cur_e is None or s > cur_e:
                if cur_e is not None:
                    union += cur_e - cur_s
                cur_s, cur_e = s, e
            else:
                cur_e = max(cur_e, e)
        if cur_e is not None:
            union += cur_e - cur_s
        span = iv[-1][1] - iv[0][0] if iv else 0
        print(f"  {dev}: busy {union / 1e3:.1f} us of {span / 1e3:.1f} us between its first and last operation")
    if kern:
        print(f"  {'device operation':<40} {'count':>7} {'total us':>11} {'avg us':>9} {'min us':>9} {'max us':>9}")
        for n, ds in sorted(kern.items(), key=lambda kv: -sum(kv[1])):
            print(f"  {n[:40]:<40} {len(ds):>7} {sum(ds) / 1e3:>11.1f} {sum(ds) / len(ds) / 1e3:>9.2f} "
                  f"{min(ds) / 1e3:>9.2f} {max(ds) / 1e3:>9.2f}")
    if xfer:
        print(f"  {'transfer':<52} {'count':>6} {'bytes':>12} {'GB/s':>7}")
        for n, (c, b, d) in sorted(xfer.items(), key=lambda kv: -kv[1][1]):
            print(f"  {n[:52]:<52} {c:>6} {b:>12} {b / d if d else 0:>7.2f}")
    if msgs[0] or colls:
        print(f"  MPI: {msgs[0]} point-to-point messages, {msgs[1]} bytes; collectives (records on all ranks):"
              + "".join(f" {op} {n} ({b} B sent)" for op, (n, b) in sorted(colls.items())))
    if api:
        print(f"  {'slowest host API calls (total)':<40} {'calls':>7} {'total us':>11}")
        for n, (c, d) in sorted(api.items(), key=lambda kv: -kv[1][1])[:top]:
            print(f"  {n[:40]:<40} {c:>7} {d / 1e3:>11.1f}")


if __name__ == "__main__":
    main()
