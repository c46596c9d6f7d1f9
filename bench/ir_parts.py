#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""The collector's parts in callgrind profiles, shared by bench/pipeline_ir.sh and
bench/lammps_ir.sh so that both group a function into the same part (the parts are listed in
pipeline_ir.sh's header). Callgrind attributes inlined code to the file it comes from, so a part
is a set of source files and shared objects; 'other' is the rest."""
import glob
import re
import subprocess

PARTS = [
    # the generated wrappers live in the build's mpi/gen/<flavour>/; zc_mpi_msg.c makes a call's
    # message events, zc_mpi_comm.c its communicator ids (both on the application thread)
    ('wrappers', r'(^|/)mpi/(gen/([a-z]+/)?)?zc_mpi_(gen|req|internal|call|msg|comm)|:zc_fast_|zc_mpi_bench'),
    ('conversion', r'zc_evt\.h:|zc_clock\.[ch]:|zc_ev\.h:'),
    ('matching', r'zc_mpi_resolve\.c'),
    ('journal', r'zc_jrn_format\.h|zc_journal\.c'),
    ('otf2 enc', r'zc_otf2_enc\.[ch]'),
    ('otf2 ours', r'zc_evt\.c|zc_otf2\.c|zc_otf2_io\.c|zc_marks\.c'),
    ('otf2 lib', r'libopen-trace-format2|libotf2'),
    ('handoff', r'zc_writer\.c|zc_loc\.[ch]|memmove|memcpy|memset'),
    ('wake-ups', r'pthread_|futex|lll_lock|__lll|writev|syscall|clone|sched_yield|nptl'),
    ('mpi lib', r'libmpi|mca_|libopen-pal|libopen-rte|openmpi'),
    ('ze append', r'collector/ze/(zc_ze_(call|append|shim)|gen/)|/ze/gen/|zc_ze_gen'),
    ('ze harvest', r'collector/ze/'),
    ('driver', r'tests/zesim|libzesim|libze_loader|zs_'),
]
NAMES = [p for p, _ in PARTS] + ['other']


def part_of(key):
    for p, rx in PARTS:
        if re.search(rx, key):
            return p
    return 'other'


def load(pattern):
    """Instructions by file:function, summed over every profile (thread) matching pattern."""
    d = {}
    for f in glob.glob(pattern):
        out = subprocess.run(['callgrind_annotate', '--auto=no', '--threshold=100', '--inclusive=no', f],
                             capture_output=True, text=True).stdout
        for line in out.splitlines():
            m = re.match(r'^\s*([\d,]+)\s+(?:\([^)]*\)\s+)?(\S.*?)$', line)
            if not m or 'PROGRAM TOTALS' in line or 'file:function' in line:
                continue
            d[m.group(2)] = d.get(m.group(2), 0) + int(m.group(1).replace(',', ''))
    return d


def slope(a, b, units, detail=None, tag=None):
    """Parts of (b - a) / units, a and b being load()'s results at two sizes of one run; with
    detail, each function's own slope is kept under detail[function][tag]."""
    out = {p: 0.0 for p in NAMES}
    for k in set(a) | set(b):
        v = (b.get(k, 0) - a.get(k, 0)) / units
        if detail is not None:
            detail.setdefault(k, {})[tag] = v
        out[part_of(k)] += v
    return out
