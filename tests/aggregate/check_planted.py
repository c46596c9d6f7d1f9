# SPDX-License-Identifier: MIT
"""The wait states and GPU idle that tests/mpi/mpi_waits.c planted, recovered from the report.

The program makes a rank late by D (slept, then completed on the collector's clock) only after it
has received a message the waiting rank sent right before entering the waiting call. So, in true
time, the late rank's entry (or the receive it posts) is at least D after that send's entry, and
each planted wait is at least

    lower = D x k - (the waiting call's entry - the preceding send's entry)     [waiting rank's clock]
            - u(waiting, blamed) - granularity

(k = r for rank r's late send, else 1). u is the clock-offset uncertainty the archive carries
(each rank's largest offset standard deviation, half its best ping-pong round trip, summed over
the two ranks: the aggregator's own uncertainty, A4); the granularity is one timer tick per
timestamp converted to another rank's clock (OTF2 rounds the interpolated offset). The host clock
is read with clock_gettime there (the test sets ZECOLL_HOST_CLOCK), so no TSC conversion error
adds to it. However loaded the machine, the bound holds: time the waiting rank lost between its
send and its call is subtracted (measured on its own clock), a late rank that is descheduled only
waits longer. A collective's blamed rank is the last to enter: it is the planted one only if the
plant held for every waiting rank (every lower > 0); otherwise only the waiting time is asserted.

Asserted, per planted (class, waiting rank, blamed rank): the report's by_pair row counts at least
the planted calls whose lower bound exceeds u (so they are findings, not below the uncertainty)
and at least the sum of their lower bounds; the by_function (class, function) and by_rank rows
as much; at most the waiting rank's calls' durations (a wait never exceeds its call). The GPU idle
of the waiting rank attributed to (class, function, blamed) in gpu_idle.in_mpi is at least the
overlap of [entry, entry + lower] with the rank's device idle gaps (from the archive's device
records). The findings name a wait state and GPU idle. A plant that the machine's load disturbed
(the waiting rank descheduled for about D, so lower <= u) is counted and left out; more than half
of them disturbed fails. The exact values are check_comm.py's."""
import collections
import math

NXN_FN = {"ALLREDUCE": "MPI_Allreduce", "BCAST": "MPI_Bcast", "BARRIER": "MPI_Barrier"}
CLASS_OF = {"ALLREDUCE": "Wait at NxN", "BCAST": "Late Broadcast", "BARRIER": "Wait at Barrier"}
# what may carry each class (upper bounds: a wait is at most its call's duration)
FUNCS = {"Late Sender": {"MPI_Recv"}, "Late Receiver": {"MPI_Send", "MPI_Ssend"}, "Wait at NxN": {"MPI_Allreduce"},
         "Late Broadcast": {"MPI_Bcast"}, "Wait at Barrier": {"MPI_Barrier"}}


def rank_uncertainty(offsets):
    """rank -> ceil of its largest offset standard deviation (check_comm.wait_states' rule)"""
    sd = collections.defaultdict(float)
    for loc, offs in offsets.items():
        for _, _, s in offs:
            sd[loc & 0xFFFFFFFF] = max(sd[loc & 0xFFFFFFFF], s)
    return {r: math.ceil(v) for r, v in sd.items()}


def planted_calls(P, A):
    """[(class, waiting, blamed, function, enter, lower, clean)]: every planted wait and its bound"""
    M = A["mpi_events"]
    unc = rank_uncertainty(A["offsets"])
    tick = max(1, math.ceil(1e9 / A["resolution"])) if A.get("resolution") else 1
    gran = 2 * tick
    D, n, tags = P["delay_ns"], P["ranks"], P["tags"]

    def u(a, b):
        return unc.get(a, 0) + unc.get(b, 0)

    def send(src, dst, tag, fn=None):
        s = [x for x in M.sends if x["src"] == src and x["dst"] == dst and x["tag"] == tag and (fn is None or x["fn"] == fn)]
        assert len(s) == 1, f"one send {src}->{dst} tag {tag} expected in the archive, found {len(s)}"
        return s[0]

    out = []
    for r in range(1, n):
        go = send(0, r, tags["go"])
        rv = [x for x in M.recvs if x["dst"] == 0 and x["src"] == r and x["tag"] == tags["late_sender"]]
        assert len(rv) == 1, f"one receive of rank {r}'s late message expected, found {len(rv)}"
        lower = r * D - (rv[0]["enter"] - go["enter"]) - u(0, r) - gran
        out.append(["Late Sender", 0, r, "MPI_Recv", rv[0]["enter"], lower, True])
    tok, ss = send(0, 1, tags["late_receiver_go"]), send(0, 1, tags["late_receiver"], "MPI_Ssend")
    out.append(["Late Receiver", 0, 1, "MPI_Ssend", ss["enter"], D - (ss["enter"] - tok["enter"]) - u(0, 1) - gran, True])
    for op, late, tag in (("ALLREDUCE", P["nxn_late"], tags["nxn"]), ("BCAST", P["bcast_root"], tags["bcast"]),
                          ("BARRIER", P["barrier_late"], tags["barrier"])):
        rows = []
        for i in range(n):
            if i == late:
                continue
            t = send(i, late, tag)
            c = min((x for x in M.colls if x["rank"] == i and x["op"] == op and x["enter"] > t["enter"]),
                    key=lambda x: x["enter"])
            rows.append([CLASS_OF[op], i, late, NXN_FN[op], c["enter"], D - (c["enter"] - t["enter"]) - u(i, late) - gran, True])
        # the last to enter is blamed (Bcast: always the root): the planted rank where every plant held
        held = op == "BCAST" or all(x[5] > 0 for x in rows)
        for x in rows:
            x[6] = held
        out += rows
    return out, u


def gaps_of(A, rank):
    """the rank's device idle gaps between busy periods (check_comm.gpu_idle's rule, all its devices)"""
    from check_comm import minus, union
    busy = collections.defaultdict(list)
    for d in A["dev_recs"]:
        if d["rank"] == rank and d["role"] != "RegionRole.BARRIER":
            busy[A["info"][d["ref"]]["dev_ref"]].append((d["start"], d["end"]))
    out = []
    for iv in busy.values():
        un = union(iv)
        out += minus([[un[0][0], un[-1][1]]], un)
    return out


def check_planted(C, A, R, P):
    calls, u = planted_calls(P, A)
    ws, gi = R["wait_states"], R["gpu_idle"]
    by_pair = {(x["wait_state"], x["waiting"], x["blamed"]): x for x in ws["by_pair"]}
    by_fn = {(x["wait_state"], x["function"]): x for x in ws["by_function"]}
    by_rank = {(x["wait_state"], x["rank"]): x for x in ws["by_rank"]}
    in_mpi = {(x["rank"], x["wait_state"], x["function"], x.get("blamed")): x["idle_ns"] for x in gi["in_mpi"]}
    idle_rank = {x["rank"]: x["mpi_ns"] for x in gi["by_rank"]}
    dur = collections.defaultdict(int)  # (rank, function) -> total duration of its calls
    for r, ref, name, s, e in A["regions"]:
        if not A["info"][ref]["stream"]:
            dur[(r, name)] += e - s
    pair, fn, rank, idle, idle_r = (collections.defaultdict(lambda: [0, 0]) for _ in range(5))
    disturbed = 0
    for cls, w, b, f, enter, lower, clean in calls:
        counted = lower > u(w, b)  # above the uncertainty: the aggregator counts it as a wait
        if not counted or not clean:
            disturbed += 1
        if lower <= 0:
            continue
        if not clean:  # another rank entered the collective last: its waiting time still holds
            rank[(cls, w)][1] += lower
            continue
        for acc, key in ((pair, (cls, w, b)), (fn, (cls, f)), (rank, (cls, w))):
            acc[key][0] += counted
            acc[key][1] += lower
        ov = sum(max(0, min(e, enter + lower) - max(s, enter)) for s, e in gaps_of(A, w))
        idle[(w, cls, f, b)][1] += ov
        idle_r[w][1] += ov
    for (cls, w, b), (k, ns) in pair.items():
        x = by_pair.get((cls, w, b))
        C.true(f"planted {cls}: rank {w} waiting for rank {b} is not in wait_states.by_pair", x is not None)
        if x is None:
            continue
        C.true(f"{cls} ({w} for {b}): {x['waits']} waits reported, at least {k} planted", x["waits"] >= k)
        C.true(f"{cls} ({w} for {b}): {x['ns']} ns reported, the planted waits are at least {ns} ns", x["ns"] >= ns)
        hi = sum(dur[(w, f)] for f in FUNCS[cls])
        C.true(f"{cls} ({w} for {b}): {x['ns']} ns reported, more than rank {w}'s calls last ({hi} ns)",
               x["ns"] + x["ns_below_uncertainty"] <= hi)
    for (cls, f), (k, ns) in fn.items():
        x = by_fn.get((cls, f), {"waits": 0, "ns": 0})
        C.true(f"{cls} in {f}: {x['waits']} waits / {x['ns']} ns reported, planted at least {k} / {ns}",
               x["waits"] >= k and x["ns"] >= ns)
    for (cls, w), (k, ns) in rank.items():
        x = by_rank.get((cls, w), {"waits": 0, "ns": 0})
        C.true(f"{cls} of rank {w}: {x['waits']} waits / {x['ns']} ns reported, planted at least {k} / {ns}",
               x["waits"] >= k and x["ns"] >= ns)
    for key, (_, ns) in idle.items():
        got = in_mpi.get(key, 0)
        C.true(f"GPU idle of rank {key[0]} in {key[2]} ({key[1]}, blamed rank {key[3]}): {got} ns reported, "
               f"the planted wait keeps it idle at least {ns} ns", got >= ns)
    for w, (_, ns) in idle_r.items():
        C.true(f"GPU idle of rank {w} in MPI: {idle_rank.get(w, 0)} ns reported, planted at least {ns} ns",
               idle_rank.get(w, 0) >= ns)
    # a waiting rank descheduled for about D between its send and its call leaves no room for that
    # plant (then only what is left of it is asserted); with most plants gone the test would check little
    C.true(f"{disturbed} of {len(calls)} plants disturbed by the machine's load (lower bound <= u, or another rank "
           "entered a collective last): too few left to judge", 2 * disturbed <= len(calls))
    texts = [x["text"] for x in R["findings"]["items"]]
    C.true(f"no finding names a wait state: {texts}",
           any(c in t for t in texts for c in ("Late Sender", "Late Receiver", "Wait at", "Late Broadcast")))
    C.true(f"no finding names the GPUs' idle time: {texts}", any("idle" in t for t in texts))
    return len(calls), disturbed
