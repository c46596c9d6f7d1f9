# SPDX-License-Identifier: MIT
"""The communication matrix recomputed from the archive with python3-otf2, independently of the
aggregator: messages and bytes per (communicator, sender, receiver) world-rank pair, counted at
the send (MpiSend, MpiIsend), communicator ranks mapped to world ranks through the
communicator's group (an intercommunicator's peer is in the group the caller is not in)."""
import collections


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
