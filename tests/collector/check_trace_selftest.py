#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""check_trace.py's pairing of operations with records, on known inputs.

The collector's records need not sit at one common shift from the truth: another rank's are
shifted by its clock offset's error, and records placed from host observations (a driver without
global timestamps) each by the midpoint of the offset interval at the time they were placed,
which steps as observations narrow it. Pairing must still give every operation its own record
(else a correct archive fails with "start off by" twice the operations' spacing), and must still
report a record that is off by more than the bound.

  check_trace_selftest.py        exit 0 when every case holds
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_trace as ct  # noqa: E402

# One stream's barriers from a run of ex_multithread on zesim without zeDeviceGetGlobalTimestamps
# under load (null_entries.4 failed on it): (operation start, its duration, record start less
# operation start, record duration), ns, times relative to the first operation. The collector's
# printed bound was 21475 ns; the records' shift steps from ~16.0 to ~14.3 us after 4 records and
# from ~14.7 to ~8.0 us after 56, while operations follow each other from 1.6 us apart. One common
# shift (the median of the in-order differences, 14.3 us) paired 22 of them with a neighbour's
# record, one beyond the bound.
HOST_ANCHORED = [
    (0, 200, 15960, 208), (12539, 200, 15973, 208), (6807818, 200, 16111, 208), (6814398, 200, 16093, 208),
    (10732601, 200, 14262, 208), (10738825, 200, 14288, 208), (10860096, 200, 14267, 208), (10866320, 200, 14293, 208),
    (19104429, 200, 14598, 208), (19110653, 200, 14572, 208), (19406785, 200, 14586, 208), (19413009, 200, 14612, 156),
    (19496343, 200, 14611, 156), (19637569, 200, 14583, 208), (19719086, 200, 14576, 208), (19726111, 200, 14583, 208),
    (19756401, 200, 14605, 208), (20081991, 200, 14588, 208), (20088215, 200, 14614, 208), (20430180, 200, 14688, 156),
    (20436404, 200, 14662, 208), (20638645, 200, 14660, 208), (21208530, 200, 14671, 208), (21214754, 200, 14697, 208),
    (21591215, 200, 14695, 208), (21597439, 200, 14668, 208), (21821798, 200, 14271, 208), (22132802, 200, 14308, 156),
    (22236587, 200, 14293, 208), (22251223, 200, 14292, 208), (22636612, 200, 14320, 208), (22642836, 200, 14294, 208),
    (22867496, 200, 14321, 208), (22873720, 200, 14347, 156), (22956164, 200, 14299, 208), (22962388, 200, 14325, 208),
    (23612366, 200, 14347, 208), (23616237, 200, 14330, 208), (23622141, 200, 14312, 208), (23751909, 200, 14336, 208),
    (23860796, 200, 14355, 208), (23867020, 200, 14329, 208), (24092687, 200, 14565, 208), (24098911, 200, 14591, 156),
    (24373004, 200, 14561, 208), (24380220, 200, 14584, 208), (24578721, 200, 14573, 208), (24584945, 200, 14599, 208),
    (24715985, 200, 14601, 208), (24725615, 200, 14606, 156), (27378117, 200, 14656, 208), (27384341, 200, 14630, 208),
    (27437190, 200, 14646, 208), (27443770, 200, 14628, 208), (31967074, 200, 14709, 208), (31973298, 200, 14735, 208),
    (32136076, 200, 7867, 208), (32146196, 200, 7904, 156), (38610202, 200, 8012, 208), (38616426, 200, 8038, 156),
    (42702559, 200, 8103, 208), (42708783, 200, 8077, 208), (42723416, 200, 8079, 208), (42729640, 200, 8105, 208),
    (43507149, 200, 8096, 208), (43514058, 200, 8115, 208), (43520282, 200, 8088, 208), (43615845, 200, 8098, 208),
    (43720756, 200, 8135, 156), (43726980, 200, 8109, 208), (43728573, 200, 8131, 208), (43734797, 200, 8105, 208),
    (44204397, 200, 8140, 208), (44210621, 200, 8114, 208), (44663636, 200, 8120, 208), (44670511, 200, 8120, 208),
    (44795823, 200, 8120, 208), (44802618, 200, 8148, 208), (45476738, 200, 8143, 208), (45483533, 200, 8171, 156),
]
HOST_ANCHORED_BOUND = 21475


def make(rows):
    """Operations and their own records (record i belongs to operation i), sorted as check() does."""
    ops, recs = [], []
    for i, (t, d, err, rd) in enumerate(rows):
        ops.append({"host_start": t, "host_end": t + d, "kind": "barrier", "bytes": 0, "cmd": i, "exec": 0})
        recs.append({"start": t + err, "end": t + err + rd, "bytes": 0, "own": i})
    return (sorted(ops, key=lambda o: o["host_start"]), sorted(recs, key=lambda r: r["start"]))


def pair(rows, bound):
    """(pairs, wrongly paired, starts beyond the bound) as check() would judge them."""
    c = ct.Checker()
    ops, recs = make(rows)
    pairs = ct.pair_complete(c, "selftest", ops, recs, bound)
    wrong = sum(1 for o, r in pairs if r["own"] != o["cmd"])
    beyond = sum(1 for o, r in pairs if abs(r["start"] - o["host_start"]) > bound)
    return pairs, wrong, beyond, c.failures


def main():
    bad = []

    def expect(name, cond, detail):
        print(f"{'ok' if cond else 'not ok'} - {name}: {detail}")
        if not cond:
            bad.append(name)

    # 1. the real run: every operation with its own record, none beyond the printed bound
    pairs, wrong, beyond, fails = pair(HOST_ANCHORED, HOST_ANCHORED_BOUND)
    expect("host_anchored", len(pairs) == len(HOST_ANCHORED) and not wrong and not beyond and not fails,
           f"{len(pairs)} paired, {wrong} with another's record, {beyond} beyond {HOST_ANCHORED_BOUND} ns")

    # 2. a step at the very start and at the very end of the stream (truncated windows)
    rows = [(i * 10000, 100, 9000 if i < 2 or i >= 38 else 1000, 100) for i in range(40)]
    pairs, wrong, beyond, fails = pair(rows, 10000)
    expect("steps_at_edges", not wrong and not beyond and not fails, f"{wrong} wrongly paired, {beyond} beyond")

    # 3. another rank: one common shift larger than the operations' spacing
    rows = [(i * 3000, 200, 25000, 200) for i in range(50)]
    pairs, wrong, beyond, fails = pair(rows, 26000)
    expect("common_shift", not wrong and not beyond and not fails, f"{wrong} wrongly paired, {beyond} beyond")

    # 4. the checker must still fail a record off by more than the bound: one record 3x the
    # bound late among records within it; whichever operation it is paired with, that pair's
    # start is beyond the bound
    rows = [(i * 50000, 200, 2000, 200) for i in range(30)]
    rows[15] = (rows[15][0], 200, 30000, 200)
    pairs, wrong, beyond, fails = pair(rows, 10000)
    expect("outlier_reported", beyond >= 1, f"{beyond} pair(s) beyond the bound (want >= 1)")

    # 5. durations tell two swapped records apart (the shift steps back between them)
    rows = [(i * 4000, 100 + 50 * (i % 2), 3000, 100 + 50 * (i % 2)) for i in range(20)]
    rows[10] = (rows[10][0], rows[10][1], 6500, rows[10][3])  # placed after its successor
    pairs, wrong, beyond, fails = pair(rows, 7000)
    expect("swapped_by_duration", not wrong and not beyond, f"{wrong} wrongly paired, {beyond} beyond")

    print(f"# {len(bad)} case(s) failed")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
