# SPDX-License-Identifier: MIT
"""The communication matrix recomputed from the archive with python3-otf2, independently of the
aggregator: messages and bytes per (communicator, sender, receiver) world-rank pair, counted at
the send (MpiSend, MpiIsend), communicator ranks mapped to world ranks through the
communicator's group (an intercommunicator's peer is in the group the caller is not in)."""
import collections
import math


def _members(grp, rank_of_loc):
    if grp is None or str(getattr(grp, "group_type", "")).endswith("COMM_SELF"):
        return None
    return [rank_of_loc[m._ref] for m in grp.members]


def world_of(defs, info):
    """comm ref -> function (local rank, my world rank) -> world rank"""
    rank_of_loc = {ref: x["rank"] for ref, x in info.items()}
    out = {}
    for c in defs.comms:
        if type(c).__name__ == "InterComm":
            a = _members(getattr(c, "group_a", None) or getattr(c, "groupA", None), rank_of_loc) or []
            b = _members(getattr(c, "group_b", None) or getattr(c, "groupB", None), rank_of_loc) or []
            out[c._ref] = lambda p, me, a=a, b=b: (b if me in a else a)[p]
        else:
            m = _members(c.group, rank_of_loc)
            out[c._ref] = (lambda p, me: me) if m is None else (lambda p, me, m=m: m[p])
    return out


def matrix(sends, info):
    """{(comm, src, dst): [messages, bytes]} of the sends (loc ref, comm ref, receiver, bytes, world map)"""
    mat = collections.defaultdict(lambda: [0, 0])
    for ref, comm, peer, nbytes, w in sends:
        me = info[ref]["rank"]
        m = mat[(comm, me, w[comm](peer, me))]
        m[0] += 1
        m[1] += nbytes
    return dict(mat)


def check_matrix(C, A, R):
    """the report's matrix (per communicator and summed) against the archive's; its sums against
    the MPI section's bytes: each message's bytes are in a function's bytes twice (send, receive)"""
    want = matrix(A["sends"], A["info"])
    cm = R.get("comm_matrix")
    C.true("comm_matrix in the report", cm is not None)
    if cm is None:
        return
    got = {}
    for c in cm["by_communicator"]:
        for p in c["pairs"]:
            got[(c["comm_id"], p["sender"], p["receiver"])] = [p["messages"], p["bytes"]]
    C.eq("communication matrix per communicator", got, want)
    summed = collections.defaultdict(lambda: [0, 0])
    for (_, s, d), (n, b) in want.items():
        summed[(s, d)][0] += n
        summed[(s, d)][1] += b
    C.eq("communication matrix, communicators summed",
         {(p["sender"], p["receiver"]): [p["messages"], p["bytes"]] for p in cm["pairs"]}, dict(summed))
    C.eq("matrix totals", (cm["messages"], cm["bytes"]), (sum(v[0] for v in want.values()), sum(v[1] for v in want.values())))
    coll = sum(c["bytes"] for c in R["mpi"]["collectives"])
    fn = sum(m["bytes"] for m in R["mpi"]["functions"])
    C.eq("matrix bytes x 2 = MPI functions' bytes - collectives' bytes", 2 * cm["bytes"], fn - coll)


# ---------------------------------------------------------------------------------------------
# wait states, recomputed from the archive's events (docs/report-schema.md, wait_states)

NXN = {"ALLGATHER", "ALLGATHERV", "ALLTOALL", "ALLTOALLV", "ALLTOALLW", "ALLREDUCE", "REDUCE_SCATTER",
       "REDUCE_SCATTER_BLOCK"}
CLASS_ORDER = ["Late Sender", "Late Receiver", "Wait at NxN", "Wait at Barrier", "Late Broadcast", "Late Scatter",
               "Early Reduce", "Early Gather"]


class MpiEvents:
    """What read_archive's event loop hands over: message ends and blocking collectives, each with
    its MPI call's Enter (and Leave, filled when the call closes)."""

    def __init__(self, info, world):
        self.info, self.world = info, world
        self.sends, self.recvs, self.colls, self.post, self.seq = [], [], [], {}, collections.Counter()

    def event(self, kind, ref, ev, t, st):
        if not st or str(st[-1]["region"].paradigm) != "Paradigm.MPI":
            return
        f = st[-1]
        me = self.info[ref]["rank"]
        if kind == "MpiIrecvRequest":
            self.post[(ref, ev.request_id)] = t
            return
        rec = {"loc": ref, "enter": f["t"], "fn": f["region"].name, "frame": f}
        if kind in ("MpiSend", "MpiIsend"):
            comm = ev.communicator._ref
            rec.update(comm=comm, src=me, dst=self.world[comm](ev.receiver, me), tag=ev.msg_tag, t=t,
                       blocking=kind == "MpiSend")
            self.sends.append(rec)
        elif kind in ("MpiRecv", "MpiIrecv"):
            comm = ev.communicator._ref
            post = f["t"] if kind == "MpiRecv" else self.post.pop((ref, ev.request_id), f["t"])
            rec.update(comm=comm, src=self.world[comm](ev.sender, me), dst=me, tag=ev.msg_tag, t=post,
                       blocking=kind == "MpiRecv")
            self.recvs.append(rec)
        elif kind == "MpiCollectiveEnd":
            comm = ev.communicator._ref
            op = str(ev.collective_op).split(".")[-1]
            root = ev.root
            rw = None if root in (None, 0xFFFFFFFF) else self.world[comm](root, me)
            rec.update(comm=comm, rank=me, op=op, root=rw, seq=self.seq[(me, comm)])
            self.seq[(me, comm)] += 1
            self.colls.append(rec)
        else:
            return
        f.setdefault("recs", []).append(rec)

    @staticmethod
    def leave(f, t):
        for rec in f.get("recs", ()):
            rec["leave"] = t


def wait_states(M, offsets):
    """{(class, waiting, blamed): [waits, ns, waits below, ns below]}"""
    sd = collections.defaultdict(float)
    for loc, offs in offsets.items():
        for _, _, s in offs:
            sd[loc & 0xFFFFFFFF] = max(sd[loc & 0xFFFFFFFF], s)
    unc = {r: math.ceil(v) for r, v in sd.items()}
    waits = {}  # (loc, enter) -> (wait, class index, blamed, waiting)

    def add(cls, waiting, blamed, rec, w):
        if w <= 0:
            return
        key = (rec["loc"], rec["enter"])
        cand = (w, -CLASS_ORDER.index(cls), -blamed, waiting)
        if key not in waits or cand > waits[key]:
            waits[key] = cand
    groups = collections.defaultdict(lambda: ([], []))
    for s in M.sends:
        groups[(s["comm"], s["src"], s["dst"], s["tag"])][0].append(s)
    for r in M.recvs:
        groups[(r["comm"], r["src"], r["dst"], r["tag"])][1].append(r)
    for (_, src, dst, _), (ss, rr) in groups.items():
        ss.sort(key=lambda x: (x["t"], x["loc"], x["enter"]))
        rr.sort(key=lambda x: (x["t"], x["loc"], x["enter"]))
        for s, r in zip(ss, rr):
            if s["enter"] > r["enter"] and r["leave"] > r["enter"]:
                add("Late Sender", dst, src, r, min(s["enter"] - r["enter"], r["leave"] - r["enter"]))
            if s["blocking"] and r["t"] > s["enter"] and (s["fn"] == "MPI_Ssend" or (s["fn"] == "MPI_Send" and s["leave"] > r["t"])):
                add("Late Receiver", src, dst, s, min(r["t"], s["leave"]) - s["enter"])
    inst = collections.defaultdict(list)
    for c in M.colls:
        inst[(c["comm"], c["seq"])].append(c)
    for members in inst.values():
        members.sort(key=lambda x: x["rank"])
        op, root = members[0]["op"], members[0]["root"]
        last = max(members, key=lambda x: (x["enter"], -x["rank"]))
        if op == "BARRIER" or op in NXN:
            for m in members:
                if m is not last:
                    add("Wait at Barrier" if op == "BARRIER" else "Wait at NxN", m["rank"], last["rank"], m,
                        min(last["enter"] - m["enter"], m["leave"] - m["enter"]))
            continue
        rt = [m for m in members if m["rank"] == root]
        if not rt:
            continue
        rt = rt[0]
        others = [m for m in members if m is not rt]
        if op in ("BCAST", "SCATTER", "SCATTERV"):
            for m in others:
                if rt["enter"] > m["enter"]:
                    add("Late Broadcast" if op == "BCAST" else "Late Scatter", m["rank"], root, m,
                        min(rt["enter"] - m["enter"], m["leave"] - m["enter"]))
        elif op in ("REDUCE", "GATHER", "GATHERV") and others:
            first = min(others, key=lambda x: (x["enter"], x["rank"]))
            if first["enter"] > rt["enter"]:
                add("Early Reduce" if op == "REDUCE" else "Early Gather", root, first["rank"], rt,
                    min(first["enter"] - rt["enter"], rt["leave"] - rt["enter"]))
    out = collections.defaultdict(lambda: [0, 0, 0, 0])
    for w, ci, nb, waiting in waits.values():
        cls, blamed = CLASS_ORDER[-ci], -nb
        o = out[(cls, waiting, blamed)]
        if w > unc.get(waiting, 0) + unc.get(blamed, 0):
            o[0] += 1
            o[1] += w
        else:
            o[2] += 1
            o[3] += w
    return dict(out)


def check_waits(C, A, R):
    """the report's wait states per (class, waiting, blamed) against the recomputed ones"""
    ws = R.get("wait_states")
    C.true("wait_states in the report", ws is not None)
    if ws is None:
        return
    want = wait_states(A["mpi_events"], A["offsets"])
    got = {(x["wait_state"], x["waiting"], x["blamed"]): [x["waits"], x["ns"], x["waits_below_uncertainty"],
                                                          x["ns_below_uncertainty"]] for x in ws["by_pair"]}
    C.eq("wait states by (class, waiting, blamed)", got, want)
    C.eq("wait-state time", ws["ns"], sum(v[1] for v in want.values()))


# ---------------------------------------------------------------------------------------------
# GPU idle by what the host did, recomputed from the archive (docs/report-schema.md, gpu_idle)

SYNC = {"zeCommandQueueSynchronize", "zeEventHostSynchronize", "zeFenceHostSynchronize", "zeContextSystemBarrier"}


def union(iv):
    """[(s, e)] -> merged list; touching intervals merge, zero-length ones split gaps (also check_report.py's)"""
    out = []
    for s, e in sorted(iv):
        if out and s <= out[-1][1]:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e])
    return out


def minus(a, b):
    """merged intervals a without merged intervals b"""
    out = []
    for s, e in a:
        for bs, be in b:
            if be <= s or bs >= e:
                continue
            if bs > s:
                out.append([s, bs])
            s = max(s, be)
            if s >= e:
                break
        if s < e:
            out.append([s, e])
    return out


def measure(iv):
    return sum(e - s for s, e in iv)


def gpu_idle(A):
    """{rank: (mpi, l0 sync, outside recording, compute)} ns of its devices' gaps between busy periods"""
    info = A["info"]
    busy = collections.defaultdict(list)
    for d in A["dev_recs"]:
        if d["role"] != "RegionRole.BARRIER":
            busy[(d["rank"], info[d["ref"]]["dev_ref"])].append((d["start"], d["end"]))
    sync = collections.defaultdict(list)
    for r, ref, name, s, e in A["regions"]:
        if not info[ref]["stream"] and name in SYNC:
            sync[r].append((s, e))
    off = collections.defaultdict(list)
    for ref, w in A["off_windows"].items():
        if not info[ref]["stream"]:
            off[info[ref]["rank"]] += [tuple(x) for x in w]
    out = collections.defaultdict(lambda: [0, 0, 0, 0])
    for (r, _), iv in busy.items():
        u = union(iv)
        gaps = minus([[u[0][0], u[-1][1]]], u)
        rest = gaps
        for k, states in enumerate((A["mpi_iv"].get(r, []), sync[r], off[r])):
            s = union(states)
            inside = minus(rest, minus(rest, s))
            out[r][k] += measure(inside)
            rest = minus(rest, s)
        out[r][3] += measure(rest)
    return {r: tuple(v) for r, v in out.items()}


def check_gpu_idle(C, A, R):
    want = gpu_idle(A)
    got = {x["rank"]: (x["mpi_ns"], x["l0_sync_ns"], x["outside_recording_ns"], x["host_compute_ns"])
           for x in R["gpu_idle"]["by_rank"]}
    C.eq("GPU idle per rank by host cause (MPI, L0 sync, off, compute)", got, want)
