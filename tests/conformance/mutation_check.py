#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Mutation check of the zesim conformance suite (not run by ctest).

Copies tests/zesim/zs_*.[ch] to a private directory, applies one small semantic break per
mutant (MUTANTS below; the patterns match the zesim sources they were written against and must
be refreshed when zesim changes), builds each copy with `cc -shared`, runs every ctest labelled
`conformance` of an existing build directory against it (ZE_ENABLE_ALT_DRIVERS points at the
mutant) and prints which tests fail that pass, or fail differently, with the real zesim.
It never modifies tests/zesim.

usage: mutation_check.py [--build DIR] [--work DIR] [mutant...]
"""
import json, os, re, shutil, subprocess, sys

HERE = os.path.dirname(os.path.abspath(__file__))
ZESIM_SRC = os.path.join(HERE, '..', 'zesim')
args = sys.argv[1:]
BUILD = os.path.join(HERE, '..', '..', 'build-conf')
ROOT = '/tmp/zesim-mutant'
while args and args[0].startswith('--'):
    opt = args.pop(0)
    if opt == '--build':
        BUILD = args.pop(0)
    elif opt == '--work':
        ROOT = args.pop(0)
    else:
        sys.exit(__doc__)
BUILD = os.path.abspath(BUILD)
REAL = BUILD + '/tests/zesim/libzesim.so'

def tests():
    out = subprocess.run(['ctest', '--test-dir', BUILD, '--show-only=json-v1'],
                         capture_output=True, text=True, check=True).stdout
    res = []
    for t in json.loads(out)['tests']:
        props = {p['name']: p['value'] for p in t.get('properties', [])}
        if 'conformance' not in props.get('LABELS', []):
            continue
        env = dict(e.split('=', 1) for e in props.get('ENVIRONMENT', []))
        res.append((t['name'], t['command'], env))
    return res

def build(name, muts):
    d = os.path.join(ROOT, 'm_' + name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    for f in os.listdir(ZESIM_SRC):
        if f.startswith('zs_') and (f.endswith('.c') or f.endswith('.h')):
            shutil.copy(os.path.join(ZESIM_SRC, f), d)
    for f, a, b in muts:
        p = os.path.join(d, f)
        s = open(p).read()
        if a not in s:
            sys.exit(f'{name}: pattern not found in {f}: {a!r}')
        s = s.replace(a, b, 1)
        open(p, 'w').write(s)
    srcs = sorted(os.path.join(d, f) for f in os.listdir(d) if f.startswith('zs_') and f.endswith('.c'))
    lib = os.path.join(d, 'libzesim.so')
    subprocess.run(['cc', '-shared', '-fPIC', '-O1', '-g', '-fvisibility=hidden', '-D_GNU_SOURCE', '-w',
                    '-o', lib] + srcs + ['-lpthread', '-lm'], check=True)
    return lib

def run(lib, only=None):
    """{test: set of failing assertion texts (numbers stripped)}"""
    res = {}
    for name, cmd, env in tests():
        if only and name not in only:
            continue
        e = dict(os.environ)
        e.update(env)
        e['ZE_ENABLE_ALT_DRIVERS'] = lib
        e['ZESIM_TRUTH'] = f'{ROOT}/truth/{name}.jsonl'
        os.makedirs(f'{ROOT}/truth', exist_ok=True)
        c = [lib if x == REAL else x for x in cmd]
        try:
            p = subprocess.run(c, env=e, capture_output=True, text=True, timeout=60)
            out, rc = p.stdout, p.returncode
        except subprocess.TimeoutExpired:
            out, rc = 'not ok 0 - TIMEOUT', 1
        fails = set(re.sub(r'^not ok \d+ - ', '', l) for l in out.splitlines() if l.startswith('not ok'))
        fails = set(re.sub(r'0x[0-9a-f]{6,}|\d+\.\d+|p\d{3,}', '#', f) for f in fails)
        if rc != 0 and not fails:
            fails = {f'exit status {rc}'}
        res[name] = fails
    return res

MUTANTS = {
 'list_in_order_ignored': [('zs_list.c', 'l->in_order = (desc->flags & ZS_LIST_FLAG_IN_ORDER) != 0;', 'l->in_order = false;')],
 'copy_engine_parallel': [('zs_exec.c', '''    if (e->copy_only) {
        if (e->nrunning) return false;''', '''    if (0) {
        if (e->nrunning) return false;'''),
                          ('zs_list.c', 'in->in_order = l->in_order || l->copy_only;', 'in->in_order = l->in_order;')],
 'event_wait_ignored': [('zs_exec.c', '        if (!ev->signaled) return false;\n        t = zs_max64(t, ev->signal_ns);', '        (void)ev;')],
 'kernel_ts_unmasked': [('zs_exec.c', '''zs_event_signal_locked(c->signal, in->end_ns, ts, zs_mask(zs_ticks_full(dev, in->start_ns), zs.cfg.kts_bits),''',
                         '''zs_event_signal_locked(c->signal, in->end_ns, ts, zs_mask(zs_ticks_full(dev, in->start_ns), 64),'''),
                        ('zs_exec.c', '''                               zs_mask(zs_ticks_full(dev, in->end_ns), zs.cfg.kts_bits));''',
                         '''                               zs_mask(zs_ticks_full(dev, in->end_ns), 64));''')],
 'args_read_at_execution': [('zs_internal.h', '    struct zs_arg *args; /* owned copy */\n', '    struct zs_arg *args; /* owned copy */\n    ze_kernel_handle_t live;\n'),
                            ('zs_list.c', '    kc->nargs = k->nargs;\n', '    kc->nargs = k->nargs;\n    kc->live = k;\n'),
                            ('zs_module.c', 'static void *arg_ptr(const struct zs_kcapture *kc, uint32_t i) {\n',
                             'static void *arg_ptr(const struct zs_kcapture *kc0, uint32_t i) {\n    struct zs_kcapture tmp = *kc0; tmp.args = kc0->live->args; const struct zs_kcapture *kc = &tmp;\n')],
 'shared_alloc_reported_device': [('zs_mem.c', 'return do_alloc(size, alignment, ZE_MEMORY_TYPE_SHARED,', 'return do_alloc(size, alignment, ZE_MEMORY_TYPE_DEVICE,')],
 'fail_nth_counts_as_plus': [('zs_core.c', 'if (n == f->nth || (f->from_nth && n > f->nth)) {', 'if (n >= f->nth) {')],
 'fail_counter_off_by_one': [('zs_core.c', 'uint64_t n = atomic_fetch_add(&f->calls, 1) + 1;', 'uint64_t n = atomic_fetch_add(&f->calls, 1);')],
 'drift_sign_flipped': [('zs_core.c', '(1.0L + (long double)dev->ppm / 1e6L)', '(1.0L - (long double)dev->ppm / 1e6L)')],
 'no_launch_latency': [('zs_exec.c', 'uint64_t t = in->submit_ns + zs.cfg.launch_latency_ns;', 'uint64_t t = in->submit_ns;')],
 'gts_no_cost': [('zs_device.c', 'uint64_t t0 = zs_now(), cost = zs.cfg.gts_cost_ns;', 'uint64_t t0 = zs_now(), cost = 0;')],
 'truth_exec_always_zero': [('zs_queue.c', 'in->exec = exec;', 'in->exec = 0;')],
 'truth_queue_field_is_list': [('zs_exec.c', 'in->device, in->ordinal, in->engine_index, in->stream->owner, in->list,', 'in->device, in->ordinal, in->engine_index, in->list, in->list,')],
 'sync_op_duration_zero': [('zs_exec.c', '    return zs.cfg.sync_op_ns;\n}', '    return 0;\n}')],
 'resignal_keeps_old_ts': [('zs_event.c', '    if (has_ts) {\n        ev->has_ts = true;', '    if (has_ts && !ev->has_ts) {\n        ev->has_ts = true;')],
}

if __name__ == '__main__':
    names = args or list(MUTANTS)
    base = run(build('baseline', []))
    print('baseline failing tests:', sorted(t for t, f in base.items() if f))
    for n in names:
        lib = build(n, MUTANTS[n])
        r = run(lib)
        caught = {t: sorted(f - base.get(t, set())) for t, f in r.items() if f - base.get(t, set())}
        print(f'\n== {n}: {"CAUGHT" if caught else "NOT CAUGHT"} by {len(caught)} tests')
        for t, f in sorted(caught.items()):
            print(f'   {t}: {len(f)} new failures, e.g. {f[0][:110]}')
