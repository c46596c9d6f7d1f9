#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""The report of bench/lammps_ir.sh from its working folder (LAMMPS_IR_KEEP keeps one, so that
this can be run again on it): calls per rank by function, instructions per MPI call on all
threads by part, and the CPU share they predict.

  lammps_ir.py WORK S1 S2 NP TSTEPS [STEPS_PER_S]"""
import os
import re
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ir_parts import NAMES, PARTS, load, part_of, slope  # noqa: E402

# Open MPI's progress (its polling while a call waits, its libevent thread): how long it spins
# depends on timing, which the collector's presence and callgrind both change, so it is kept
# apart from the collector's own instructions
# (matched on the shared object callgrind names in brackets: our wrappers' file is .../openmpi/...)
PROGRESS = r'\[[^]]*(libmpi|mca_|libopen-pal|libopen-rte|libevent|libpmix)[^]]*\]$|sched_yield'


# the collector's own code that no part of ir_parts.py names (zc_mpi_msg.c's send events, the
# communicator table, ...): pipeline_ir.sh counts it in 'other', here it is the collector's
OURS = r'^(collector|mpi|config|build)/|libzecoll'


def split(profiles):
    """The profiles without, and only, Open MPI's progress."""
    keep = [{k: v for k, v in d.items() if not re.search(PROGRESS, k)} for d in profiles]
    prog = [{k: v for k, v in d.items() if re.search(PROGRESS, k)} for d in profiles]
    return keep, prog


def main():
    if len(sys.argv) < 6:
        sys.exit(__doc__)
    work, s1, s2, np, ts = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
    sps_given = sys.argv[6] if len(sys.argv) > 6 else ''
    calls = {}
    for n in (s1, s2):
        calls[n] = dict((k, int(v)) for k, v in (line.split() for line in open(f'{work}/calls.n{n}')))
    dsteps = s2 - s1
    fn = {k: (calls[s2].get(k, 0) - calls[s1].get(k, 0)) / np / dsteps
          for k in set(calls[s1]) | set(calls[s2]) if k != 'EVENTS'}
    per_step = sum(fn.values())  # MPI calls per rank per step
    events = (calls[s2]['EVENTS'] - calls[s1]['EVENTS']) / np / dsteps
    t = {}
    for line in open(f'{work}/times'):
        w, n, *v = line.split()
        if v:
            t.setdefault((w, int(n)), []).append(float(v[0]))

    def med(w, n):
        return statistics.median(t[(w, n)]) if t.get((w, n)) else float('nan')
    if sps_given:
        sps, how = float(sps_given), 'given'
    else:  # the slope between TSTEPS and 2*TSTEPS: start-up and end cancel
        sps, how = ts / (med('none', 2 * ts) - med('none', ts)), f'natively here, no collector, {ts}..{2 * ts} steps'
    print(f"LAMMPS in.lj, {np} ranks: MPI calls per rank (archive, slope {s1}..{s2} steps; {sps:.0f} steps/s: {how})")
    print(f"{'function':<16} {'per step':>9} {'per s':>10}")
    for k, v in sorted(fn.items(), key=lambda kv: -kv[1]):
        if v > 0:
            print(f"{k:<16} {v:>9.3f} {v * sps:>10.0f}")
    print(f"{'all':<16} {per_step:>9.3f} {per_step * sps:>10.0f}   ({events / per_step:.2f} OTF2 events per call)")
    if not sps_given:
        r = [med('with', n) / med('none', n) for n in (ts, 2 * ts)]
        print(f"native wall time with / without the collector (medians of 3): x{r[0]:.3f} ({ts} steps), "
              f"x{r[1]:.3f} ({2 * ts} steps)")

    mcalls = per_step * np * dsteps  # calls in the slope, all ranks
    prof = {w: [load(f'{work}/{w}.n{n}/cg.*-*') for n in (s1, s2)] for w in ('none', 'with', 'idle')}
    rows, progress = {}, {}
    for w in prof:
        keep, prog = split(prof[w])
        rows[w] = slope(*keep, mcalls)
        progress[w] = sum(slope(*prog, mcalls).values())
        rows[w]['other ours'] = sum(slope(*[{k: v for k, v in d.items() if re.search(OURS, k)} for d in keep], mcalls).values()) \
            - sum(slope(*[{k: v for k, v in d.items() if re.search(OURS, k) and re.search(r'|'.join(rx for _, rx in PARTS), k)}
                          for d in keep], mcalls).values())
        rows[w]['other'] -= rows[w]['other ours']
        # libc's memcpy and memset ('handoff' in ir_parts.py) copy Open MPI's messages too, more of
        # them when a receive is posted late (timing): with the rest of libc, out of the total
        libc = sum(slope(*[{k: v for k, v in d.items() if part_of(k) == 'handoff' and 'libc.so' in k} for d in keep],
                         mcalls).values())
        rows[w]['handoff'] -= libc
        rows[w]['other'] += libc
    note = os.environ.get('LAMMPS_IR_NOTE', '')
    print(f"\ninstructions per MPI call on all threads of all ranks, with minus without the collector "
          f"(callgrind, slope {s1}..{s2} steps, {np} ranks{'; ' + note if note else ''})")
    print(f"{'part':<12} {'flusher idle':>13} {'default':>9}")
    # 'wake-ups' and 'other' hold libc's locks, polls and sleeps, which Open MPI's progress calls
    # too (as often as it spins), so they move with timing: printed, but not in the total
    names = [p for p in NAMES if p not in ('mpi lib', 'wake-ups', 'other')] + ['other ours']
    for p in names + ['wake-ups', 'other']:
        if p == 'wake-ups':
            tot = {w: sum(rows[w][p] - rows['none'][p] for p in names) for w in ('idle', 'with')}
            print(f"{'collector':<12} {tot['idle']:>+13.1f} {tot['with']:>+9.1f}")
        print(f"{p:<12} {rows['idle'][p] - rows['none'][p]:>+13.1f} {rows['with'][p] - rows['none'][p]:>+9.1f}"
              + ('   libc (memcpy too) shared with Open MPI, timing-dependent' if p in ('wake-ups', 'other') else ''))
    print(f"{'(ompi spin)':<12} {progress['idle'] - progress['none']:>+13.1f} {progress['with'] - progress['none']:>+9.1f}"
          "   Open MPI's progress, timing-dependent: not in the total")

    keep, prog = split(prof['none'])
    own = sum(slope(*keep, np * dsteps).values())  # a rank's own instructions per step
    spin = sum(slope(*prog, np * dsteps).values())
    print(f"\npredicted CPU share: a rank without the collector runs {own / 1e6:.3f} M instructions per step "
          f"outside Open MPI's progress (+{spin / 1e6:.3f} M in it, under callgrind), "
          f"{own * sps / 1e9:.2f} G/s at {sps:.0f} steps/s; {per_step * sps:.0f} MPI calls/s")
    for w, name in (('idle', 'flusher idle'), ('with', 'default')):
        print(f"  {name:<13} {tot[w]:+.0f} x {per_step:.2f} calls/step = {tot[w] * per_step / 1e3:+.1f} k instructions/step, "
              f"{tot[w] * per_step * sps / 1e6:+.1f} M/s: {100 * tot[w] * per_step / own:.2f} % of the rank's own")
    if os.environ.get('LAMMPS_IR_DETAIL'):  # every function that moved (flusher idle), for a closer look
        detail = {}
        slope(*keep, mcalls, detail, 'none')
        slope(*split(prof['idle'])[0], mcalls, detail, 'idle')
        for k, v in sorted(detail.items(), key=lambda kv: -abs(kv[1].get('idle', 0) - kv[1].get('none', 0))):
            d = v.get('idle', 0) - v.get('none', 0)
            if abs(d) >= 0.5:
                print(f"  {d:+9.1f} {k}")


if __name__ == '__main__':
    main()
