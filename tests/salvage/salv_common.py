# SPDX-License-Identifier: MIT
"""What the salvage tests share: their command-line options for a program under the collector
on zesim, and its environment."""
import argparse
import os
import shutil


def add_run_args(ap):
    ap.add_argument("--app", required=True)
    ap.add_argument("--arg", action="append", default=[])
    ap.add_argument("--zesim", required=True)
    ap.add_argument("--libdir", required=True)
    ap.add_argument("--bindir", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--env", action="append", default=[], metavar="K=V")
    ap.add_argument("--preload-first", help="library to preload before libzecoll.so (sanitizer runtime)")
    ap.add_argument("--preload", action="append", default=[],
                    help="a test library to preload after --preload-first, before libzecoll.so (repeatable)")


def absolute(a):
    for k in ("app", "zesim", "libdir", "bindir", "work"):
        setattr(a, k, os.path.abspath(getattr(a, k)))


def run_args(doc):
    """A test's arguments (add_run_args), made absolute, its --work directory emptied."""
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_run_args(ap)
    a = ap.parse_args()
    absolute(a)
    shutil.rmtree(a.work, ignore_errors=True)
    os.makedirs(a.work)
    return a


def collector_env(a, trace, extra):
    """The environment of a program under the collector on zesim writing to `trace`, strict, with
    `extra` and then the --env settings (a sanitizer's *_OPTIONS add to what the caller set)."""
    env = dict(os.environ)
    preload = ([a.preload_first] if a.preload_first else []) + a.preload + [os.path.join(a.libdir, "libzecoll.so")]
    env.update({"ZE_ENABLE_ALT_DRIVERS": a.zesim, "ZECOLL_OUTPUT": trace, "ZECOLL_STRICT": "1",
                "LD_PRELOAD": ":".join(preload)})
    env.update(extra)
    for kv in a.env:
        k, _, v = kv.partition("=")
        if k.endswith("_OPTIONS") and env.get(k):
            v = env[k] + ":" + v
        env[k] = v
    return env
