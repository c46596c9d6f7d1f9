#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Back-to-back kernels on an in-order immediate list: wall time and the CPU of every thread,
per kernel, side by side (issue 22, target 3: the collector's own CPU per kernel on every thread).

Runs `zc_bench_app kernels N US` (and its no-collector control `... ctl`, which makes the
collector's driver calls: a timestamp event per kernel, read and reset from a second thread)
with ZC_BENCH_THREAD_CPU=1, which prints each thread's CPU time in the timed run (schedstat).
Variants alternate within each repetition; medians are printed. Per kernel: the run's wall time,
the CPU of the main (appending) thread, of the collector's drainer (named zc-drain where the
build names it), of the other threads (zesim's engine worker, the control's reader, the
collector's writer and journal), and their sum; each against the control (the driver calls
without the collector).

usage: kern_cpu.py DIR [OUTDIR]  (DIR: a folder packed by device-pack.sh / fullnode_pack.sh;
  KERN_CPU_REPS=5 KERN_CPU_N=200000 KERN_CPU_US="1 2"
  KERN_CPU_VARIANTS="base ctl with NAME=LIB[:VAR=VALUE...] ..." where with is DIR/lib/libzecoll.so)
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile

d = os.path.abspath(sys.argv[1])
out = sys.argv[2] if len(sys.argv) > 2 else tempfile.mkdtemp()
os.makedirs(out, exist_ok=True)
reps = int(os.environ.get('KERN_CPU_REPS', '5'))
n = int(os.environ.get('KERN_CPU_N', '200000'))
uss = os.environ.get('KERN_CPU_US', '1 2').split()
app = os.path.join(d, 'bin', 'zc_bench_app')
work = tempfile.mkdtemp()
env0 = dict(os.environ)
env0['LD_LIBRARY_PATH'] = os.path.join(d, 'lib') + (':' + env0['LD_LIBRARY_PATH'] if env0.get('LD_LIBRARY_PATH') else '')
env0['ZE_ENABLE_ALT_DRIVERS'] = os.path.join(d, 'lib', 'libzesim.so')
env0.pop('ZESIM_TRUTH', None)
env0['ZC_BENCH_THREAD_CPU'] = '1'

variants = []  # (name, lib or None, extra env, ctl)
for v in os.environ.get('KERN_CPU_VARIANTS', 'base ctl with').split():
    if v == 'base':
        variants.append(('base', None, {}, False))
    elif v == 'ctl':
        variants.append(('ctl', None, {}, True))
    elif v == 'with':
        variants.append(('with', os.path.join(d, 'lib', 'libzecoll.so'), {}, False))
    else:
        name, spec = v.split('=', 1)
        f = spec.split(':')
        lib = f[0] if os.path.isabs(f[0]) else os.path.join(os.getcwd(), f[0])
        variants.append((name, lib, dict(x.split('=', 1) for x in f[1:]), False))

raw = open(os.path.join(out, 'raw.txt'), 'w')
vals = {}  # (us, name) -> list of dicts


def one(us, name, lib, extra, ctl):
    env = dict(env0)
    env.update(extra)
    if lib:
        env['LD_PRELOAD'] = lib
        env['ZECOLL_OUTPUT'] = os.path.join(work, 't-%p')
        env['ZECOLL_SUMMARY'] = '0'
    cmd = [app, 'kernels', str(n), us] + (['ctl'] if ctl else [])
    p = subprocess.run(cmd, env=env, capture_output=True, text=True)
    subprocess.run(['rm', '-rf'] + [os.path.join(work, f) for f in os.listdir(work)])
    js = [l for l in p.stdout.splitlines() if l.startswith('{')]
    raw.write(f'{us} {name} rc={p.returncode} {js[-1] if js else p.stderr[-300:]}\n')
    raw.flush()
    if p.returncode or not js:
        return
    o = json.loads(js[-1])
    th = o.get('thread_cpu_ns', [])
    main = th[0][2] if th else 0
    drain = sum(t[2] for t in th if t[1] == 'zc-drain')
    vals.setdefault((us, name), []).append({
        'run': o['run_s'] * 1e9 / n, 'main': main / n, 'drain': drain / n,
        'other': (o.get('cpu_ns', 0) - main - drain) / n, 'cpu': o.get('cpu_ns', 0) / n})


for r in range(reps):
    for us in uss:
        order = variants if r % 2 == 0 else list(reversed(variants))
        for v in order:
            one(us, *v)
raw.close()

cols = ['run', 'main', 'drain', 'other', 'cpu']
lines = [f'== kern_cpu: {os.cpu_count()} CPUs, {n} kernels, medians of {reps} alternating repetitions, ns per kernel',
         'wall = the run (appends + sync) / N; cpu: every thread of the process in the run (schedstat); '
         'main: the appending thread; drain: zc-drain; other: the rest (zesim engine, control reader, writer, journal)']
for us in uss:
    lines.append(f'-- kernels of {us} us')
    lines.append(f"{'variant':<14}" + ''.join(f'{c:>10}' for c in ['wall', 'main', 'drain', 'other', 'cpu']) +
                 f"{'wall/base':>11}{'wall/ctl':>10}{'cpu-ctl':>10}")
    med = {}
    for name, *_ in variants:
        xs = vals.get((us, name), [])
        if not xs:
            lines.append(f'{name:<14} (failed)')
            continue
        med[name] = {c: statistics.median(x[c] for x in xs) for c in cols}
    for name, m in med.items():
        b, c = med.get('base'), med.get('ctl')
        lines.append(f'{name:<14}' + ''.join(f'{m[k]:>10.1f}' for k in cols) +
                     (f"{m['run'] / b['run']:>10.3f}x" if b else f"{'':>11}") +
                     (f"{m['run'] / c['run']:>9.3f}x" if c else f"{'':>10}") +
                     (f"{m['cpu'] - c['cpu']:>+10.1f}" if c else ''))
open(os.path.join(out, 'table.txt'), 'w').write('\n'.join(lines) + '\n')
print('\n'.join(lines))
