#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The tables of bench/devrate.sh from its raw lines ("VARIANT N LIB JSON", zc_devrate's JSON).

Threads are named by their start routine, looked up in the symbol table of the library that
started them (the variant's libzecoll.so, or libzesim.so): bg_main is the drainer (the harvest of
device timestamps), converter_main the writer's converter (conversion and the salvage journal;
with one writer stage also OTF2), emitter_main the OTF2 emitter (two stages), flusher_main the
journal's flusher, engine_main zesim's engine.
  usage: devrate.py RAW WORKDIR IR(0|1) LIBZESIM
"""
import glob
import json
import os
import re
import statistics
import struct
import sys

raw, work, ir, sim = sys.argv[1], sys.argv[2], sys.argv[3] == '1', sys.argv[4]
ROLE = {'bg_main': 'drainer (harvest)', 'converter_main': 'converter (conv., journal[, OTF2])',
        'emitter_main': 'emitter (OTF2)', 'flusher_main': 'journal flusher', 'engine_main': 'zesim engine',
        'timer_main': 'window timer', 'sig_watcher': 'signal watcher'}
COLLECTOR = ('drainer', 'converter', 'emitter', 'journal', 'window', 'signal')
_syms = {}


def symbols(path):
    """FUNC symbols of an ELF64 file's .symtab (else .dynsym): [(value, size, name)]."""
    if path in _syms: return _syms[path]
    out = []
    try:
        b = open(path, 'rb').read()
        shoff, = struct.unpack_from('<Q', b, 0x28)
        shentsize, shnum = struct.unpack_from('<HH', b, 0x3a)
        secs = [struct.unpack_from('<IIQQQQIIQQ', b, shoff + i * shentsize) for i in range(shnum)]
        for want in (2, 11):  # SHT_SYMTAB, SHT_DYNSYM
            for s in secs:
                if s[1] != want: continue
                strtab = secs[s[6]]
                for off in range(s[4], s[4] + s[5], 24):
                    name, info, _, _, value, size = struct.unpack_from('<IBBHQQ', b, off)
                    if info & 0xf == 2 and value:
                        e = b.index(b'\0', strtab[4] + name)
                        out.append((value, size, b[strtab[4] + name:e].decode()))
            if out: break
    except (OSError, ValueError, struct.error):
        pass
    _syms[path] = out
    return out


def role(who, lib):
    if who == 'main': return 'main (app: appends, sync)'
    m = re.match(r'(.*)\+0x([0-9a-f]+)$', who)
    if not m: return who
    path = lib if m.group(1).startswith('libzecoll') else sim if 'zesim' in m.group(1) else None
    off = int(m.group(2), 16)
    for v, sz, name in symbols(path) if path else []:
        if v <= off < v + max(sz, 1):
            name = re.sub(r'\.(lto_priv|constprop|isra|part)\..*$', '', name)
            return ROLE.get(name, f'{m.group(1)}:{name}')
    return who


runs = {}  # variant -> [(lib, n, json)]
order = []
for line in open(raw):
    f = line.split(' ', 3)
    if len(f) < 4 or not f[3].strip().startswith('{'): continue
    v, n, lib, j = f[0], int(f[1]), f[2], json.loads(f[3])
    if v not in runs: order.append(v)
    runs.setdefault(v, []).append((lib, n, j))


def per_thread(lib, j):
    """{role: value} (a role's threads summed) from one run's threads."""
    d = {}
    for tid, who, o, ns in j['threads']:
        r = role(who, lib)
        d[r] = d.get(r, 0) + ns
    return d


def med(xs):
    return statistics.median(xs) if xs else float('nan')


if ir:
    # instructions per thread: callgrind's thread files, numbered by creation (1 = main), the slope
    # between the N and 2N runs of each variant
    print('instructions per kernel record on each thread (callgrind, slope between N and 2N kernels)')
    base = None
    for v in order:
        rs = sorted(runs[v], key=lambda r: r[1])
        if len(rs) < 2: continue
        tot = []
        for k, (lib, n, j) in enumerate(rs[:2]):
            names = {1: 'main (app: appends, sync)'}
            for tid, who, o, ns in j['threads']:
                if o > 0: names[o + 1] = role(who, lib)
            d = {}
            for fpath in glob.glob(f'{work}/cg.{v}.{k + 1}.*-*'):
                t = int(fpath.rsplit('-', 1)[1])
                txt = open(fpath).read()
                m = re.search(r'^(?:summary|totals):\s*(\d+)', txt, re.M)
                if m:
                    r = names.get(t, f'thread {t}')
                    d[r] = d.get(r, 0) + int(m.group(1))
            tot.append((n, d))
        (n1, a), (n2, b) = tot
        per = {r: (b.get(r, 0) - a.get(r, 0)) / (n2 - n1) for r in set(a) | set(b)}
        if v == 'base': base = per
        print(f'\n{v}:')
        for r in sorted(per, key=lambda r: -per[r]):
            extra = ''
            if base and v != 'base' and r in base: extra = f'   ({per[r] - base[r]:+.1f} over no collector)'
            print(f'  {r:<38} {per[r]:>9.1f}{extra}')
        s = sum(per.values())
        print(f'  {"all threads":<38} {s:>9.1f}' + (f'   ({s - sum(base.values()):+.1f} over no collector)' if base and v != 'base' else ''))
    sys.exit(0)

CTL = 'control reader (the harvest\'s driver calls)'
ctl_ns = med([per_thread(lib, j).get(CTL, float('nan')) / n for lib, n, j in runs.get('ctl', [])])
print('one device stream saturated: ns of CPU per kernel record per thread (medians of the repetitions),')
print('the rate each stage alone allows (1e9 / ns), and the rates achieved (kernel records a second)')
basecpu = None
for v in order:
    rs = runs[v]
    roles = {}
    for lib, n, j in rs:
        for r, ns in per_thread(lib, j).items():
            roles.setdefault(r, []).append(ns / n)
    n = rs[0][1]
    allcpu = med([sum(t[3] for t in j['threads']) / nn for lib, nn, j in rs])
    print(f'\n{v} ({len(rs)} runs of {n} kernels):')
    print(f'  {"thread":<38} {"ns/record":>10} {"allows (M/s)":>13}')
    busiest = None
    for r in sorted(roles, key=lambda r: -med(roles[r])):
        x = med(roles[r])
        print(f'  {r:<38} {x:>10.1f} {1e3 / x if x > 0 else float("inf"):>13.2f}')
        if r.split(' ')[0] in COLLECTOR and (busiest is None or x > busiest[1]): busiest = (r, x)
    print(f'  {"all threads":<38} {allcpu:>10.1f}' + (f'   ({allcpu - basecpu:+.1f} over no collector)' if basecpu and v != 'base' else ''))
    if v == 'base': basecpu = allcpu
    ach = med([nn / j['done_s'] for lib, nn, j in rs]) / 1e6
    sync = med([nn / j['sync_s'] for lib, nn, j in rs]) / 1e6
    app = med([nn / j['appends_s'] for lib, nn, j in rs]) / 1e6
    print(f'  appends {app:.2f} M/s; device done (sync) {sync:.2f} M/s; through every stage {ach:.2f} M/s')
    if busiest: print(f'  busiest stage of the collector: {busiest[0]}, allows {1e3 / busiest[1]:.2f} M/s')
    dr = [x for r, x in ((r, med(roles[r])) for r in roles) if r.startswith('drainer')]
    if dr and ctl_ns == ctl_ns and v != 'ctl':  # the control ran: the drainer without zesim's calls
        own = dr[0] - ctl_ns
        print(f'  drainer minus the control\'s reader ({ctl_ns:.1f}: the driver calls): {own:.1f} ns, allows '
              f'{1e3 / own if own > 0 else float("inf"):.2f} M/s')
