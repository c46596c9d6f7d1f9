#!/usr/bin/python3
# SPDX-License-Identifier: MIT
"""Runs the UR-v2-like application (zc_ldr_urv2.c) under zecoll on zesim and judges it: the archive
against zesim's truth exactly as check_trace.py does (every kernel once, names, starts, durations
within one device tick, the app's own timestamp reads), and the counter-based events' lives in the
truth (zesim's "cb_*" lines) against what the application says it did:
  * every CB event it created was created, by the path it used (zex2, core; pool events are
    counted by the application only: they are zeEventCreate's);
  * the driver rejected exactly the host signals, host resets, appended resets and wrong-kind
    signals the application provoked itself: zecoll never host-signals, host-resets or
    append-resets a CB event, nor signals one where the driver forbids it;
  * with ZESIM_IMPLICIT_CB=1 the driver converted exactly the application's regular events that
    it signalled on in-order immediate lists, none of zecoll's own;
  * copy offload: zesim ran on a copy engine as many copies and fills as the application expects
    of its lists with the copy-offload hint under the driver's rules (facts "offloaded"), and none
    those rules keep on the compute engine (offload_allowed, written from compute-runtime's rules
    for the generation ZESIM_DRIVER_GEN and local memory, none with ZESIM_INTEGRATED=1);
    check_trace.py has already judged that each of them, and no other operation, is on its
    stream's copy-engine location, which zecoll decided from the driver's version.

  check_cb.py run --app BIN --arg A ... (the arguments of check_trace.py run)
"""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "collector"))
import check_trace  # noqa: E402


SMALL = 8192  # compute-runtime 2026: fills and local-to-local copies up to 8 KiB offloaded
COPIES = ("copy", "copy_region", "copy_from_context")


def offload_allowed(o, gen, integrated):
    """Whether a driver of generation gen may run truth operation o on a copy engine."""
    def local(t):  # device-local memory: device and shared USM, images, where the device has it
        return not integrated and t in ("device", "shared", "image")
    both = local(o.get("src")) and local(o.get("dst"))
    if o["kind"] == "fill":
        return gen == 2025 or o["bytes"] <= SMALL
    if o["kind"] in COPIES:
        return not both or (gen == 2026 and o["bytes"] <= SMALL)
    if o["kind"].startswith("image"):
        return not both
    return False


def cb_checks(c, work, implicit, integrated=False):
    facts = json.load(open(os.path.join(work, "facts.json")))
    cb = facts["cb"]
    lines = [json.loads(l) for l in open(os.path.join(work, "truth.jsonl")) if l.endswith("\n") and '"cb_' in l]
    created = {}
    for rec in lines:
        if rec["kind"] == "cb_event":
            created[rec["via"]] = created.get(rec["via"], 0) + 1
    for via in ("zex2", "core"):
        if created.get(via, 0) != cb["created"][via]:
            c.fail(f"the truth has {created.get(via, 0)} CB event(s) created by {via}, the application {cb['created'][via]}")
    rejects = [r for r in lines if r["kind"] == "cb_reject"]
    if len(rejects) != cb["rejects"]:
        c.fail(f"the driver rejected {len(rejects)} operation(s) on CB events, the application provoked {cb['rejects']}: "
               f"{rejects[:4]}")
    conv = {r["event"] for r in lines if r["kind"] == "cb_implicit"}
    want = set(cb["regular"]) if implicit else set()
    if conv != want:
        c.fail(f"implicitly converted events {sorted(conv)[:4]} (of zecoll's own: {sorted(conv - want)[:4]}), "
               f"expected the application's {sorted(want)[:4]}")
    offloaded = [json.loads(l) for l in open(os.path.join(work, "truth.jsonl")) if l.endswith("\n") and '"offload"' in l]
    if len(offloaded) != facts.get("offloaded", 0):
        c.fail(f"zesim ran {len(offloaded)} copies on a copy engine, the application appended "
               f"{facts.get('offloaded', 0)} to lists with the copy-offload hint")
    gen = facts.get("driver_gen", 2026)
    wrong = [(o["kind"], o["src"], o["dst"], o["bytes"]) for o in offloaded if not offload_allowed(o, gen, integrated)]
    if wrong:
        c.fail(f"zesim offloaded operations a {gen} driver{' (integrated)' if integrated else ''} would not: {wrong[:4]}")
    kinds = sorted({(o["kind"], o["src"], o["dst"], o["bytes"] <= SMALL) for o in offloaded}, key=str)
    c.note(f"copy offload, driver {gen}{' integrated' if integrated else ''}: {len(offloaded)} offloaded of "
           f"kinds {kinds}")
    c.note(f"CB events: {created}, {len(rejects)} rejection(s) the application provoked, "
           f"{len(conv)} implicit conversion(s) of the application's regular events")


def main():
    argv = sys.argv[1:]
    if not argv or argv[0] != "run":
        sys.exit(__doc__)
    import argparse
    ap = argparse.ArgumentParser()
    for flag in ("--app", "--zesim", "--libdir", "--work"):
        ap.add_argument(flag, required=True)
    ap.add_argument("--arg", action="append")
    ap.add_argument("--env", action="append")
    ap.add_argument("--timeout", type=int, default=120)
    ap.add_argument("--preload-first")
    ap.add_argument("--preload", action="append")
    a = ap.parse_args(argv[1:])
    c = check_trace.run(a)
    if not c.failures:
        implicit = any(kv == "ZESIM_IMPLICIT_CB=1" for kv in a.env or [])
        integrated = any(kv == "ZESIM_INTEGRATED=1" for kv in a.env or [])
        cb_checks(c, a.work, implicit, integrated)
    for n in c.notes:
        print("# " + n)
    for f in c.failures[:40]:
        print("not ok - " + f)
    print("ok - trace and counter-based events match ground truth" if not c.failures else f"# {len(c.failures)} failure(s)")
    return 1 if c.failures else 0


if __name__ == "__main__":
    sys.exit(main())
