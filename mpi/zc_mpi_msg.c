/* SPDX-License-Identifier: MIT */
/* Events of messages: point-to-point sends and receives and collectives, with their sizes in
 * bytes (a datatype's size when the thread's cache does not hold it: zc_mpi_req.h). */
#include "zc_mpi_internal.h"

#include <errno.h>
#include <string.h>

uint64_t zc_mpi_type_bytes_slow(int64_t count, MPI_Datatype t, struct zc_mpi_tsz *e) {
    int err = errno;
    int sz = 0;
    uint64_t b = 0;
    if (PMPI_Type_size(t, &sz) == MPI_SUCCESS && sz >= 0) {
        b = (uint64_t)count * (uint64_t)sz;
        if (e->h != (uintptr_t)t || e->sz1 == 0) { /* not known to be derived: is it predefined? */
            int ni, na, nd, comb = -1;
            bool named = PMPI_Type_get_envelope && PMPI_Type_get_envelope(t, &ni, &na, &nd, &comb) == MPI_SUCCESS &&
                         comb == MPI_COMBINER_NAMED;
            e->h = (uintptr_t)t;
            e->sz1 = named ? (int64_t)sz + 1 : -1;
        }
    }
    errno = err;
    return b;
}

/* ---------------------------------------------------------------- point to point */
/* before the MPI call: held until zc_mpi_open */
void zc_mpi_ev_send(struct zc_mpi_call *c, int64_t count, MPI_Datatype t, int peer, int tag, MPI_Comm comm) {
    c->has_pre = false;
    if (!c->t || peer == MPI_PROC_NULL) return;
    c->pre = (struct zc_ev){c->t0, ZC_EV_MPI_SEND, zc_mpi_comm_id(comm), zc_mpi_bytes_of(count, t), zc_mpi_peer_tag(peer, tag), 0};
    c->has_pre = true;
}

void zc_mpi_ev_recv(struct zc_mpi_call *c, MPI_Datatype t, MPI_Comm comm, const MPI_Status *st) {
    if (!c->t || !st || st->MPI_SOURCE == MPI_PROC_NULL) return;
    int count = 0;
    if (PMPI_Get_count(st, t, &count) != MPI_SUCCESS || count == MPI_UNDEFINED) count = 0;
    uint64_t bytes = zc_mpi_bytes_of(count, t);
    uint32_t comm_id = zc_mpi_comm_id(comm);
    *zc_mpi_slots(c, 1) = (struct zc_ev){c->t1, ZC_EV_MPI_RECV, comm_id, bytes, zc_mpi_peer_tag(st->MPI_SOURCE, st->MPI_TAG), 0};
}

/* ---------------------------------------------------------------- collectives */
/* count i of an int or (wide: large-count forms) MPI_Count array */
static int64_t count_at(const void *counts, bool wide, int i) {
    return wide ? ((const MPI_Count *)counts)[i] : ((const int *)counts)[i];
}

static uint64_t sum_bytes(const void *counts, bool wide, int n, MPI_Datatype t, const MPI_Datatype *types) {
    uint64_t s = 0;
    for (int i = 0; counts && i < n; i++) s += zc_mpi_bytes_of(count_at(counts, wide, i), types ? types[i] : t);
    return s;
}

/* The size of comm's group, or of its remote group if it is an intercommunicator (*inter). */
static int peer_group_size(MPI_Comm comm, int *inter) {
    int size = 1;
    *inter = 0;
    PMPI_Comm_test_inter(comm, inter);
    if (*inter) PMPI_Comm_remote_size(comm, &size);
    else PMPI_Comm_size(comm, &size);
    return size;
}

/* Entries of a collective's per-peer arrays on comm: the (remote) group size, or for neighbourhood
 * collectives the neighbours it receives from (in) and sends to (out). */
void zc_mpi_coll_peers(MPI_Comm comm, int neighbor, int *in, int *out) {
    int inter;
    *in = *out = peer_group_size(comm, &inter);
    if (!neighbor) return;
    int topo = MPI_UNDEFINED, rank = 0;
    *in = *out = 0;
    PMPI_Topo_test(comm, &topo);
    PMPI_Comm_rank(comm, &rank);
    if (topo == MPI_CART) {
        int nd = 0;
        PMPI_Cartdim_get(comm, &nd);
        *in = *out = 2 * nd;
    } else if (topo == MPI_GRAPH) {
        PMPI_Graph_neighbors_count(comm, rank, in);
        *out = *in;
    } else if (topo == MPI_DIST_GRAPH) {
        int w = 0;
        PMPI_Dist_graph_neighbors_count(comm, in, out, &w);
    }
}

/* A collective as this rank sees it: the roles of its buffers (mpi/README.md) and its communicator. */
struct coll {
    MPI_Datatype stype, rtype;
    const void *scounts, *rcounts; /* int, or MPI_Count if wide */
    const MPI_Datatype *stypes, *rtypes;
    int size, rank, nin, nout; /* (remote) group size, rank; peers received from and sent to */
    bool inter, is_root, neighbor, wide;
    uint64_t sb, rb;           /* the bytes of scount and rcount */
};

/* Operations with a root: what it sends or receives, and the others. */
static bool rooted_bytes(OTF2_CollectiveOp op, const struct coll *k, uint64_t *sent, uint64_t *recvd) {
    switch (op) {
    case OTF2_COLLECTIVE_OP_BCAST:
        if (k->is_root) *sent = k->sb;
        else *recvd = k->rb;
        return true;
    case OTF2_COLLECTIVE_OP_GATHER:
        if (!k->inter || !k->is_root) *sent = k->sb;
        if (k->is_root) *recvd = (uint64_t)k->size * k->rb;
        return true;
    case OTF2_COLLECTIVE_OP_GATHERV:
        if (!k->inter || !k->is_root) *sent = k->sb;
        if (k->is_root) *recvd = sum_bytes(k->rcounts, k->wide, k->size, k->rtype, NULL);
        return true;
    case OTF2_COLLECTIVE_OP_SCATTER:
        if (k->is_root) *sent = (uint64_t)k->size * k->sb;
        if (!k->inter || !k->is_root) *recvd = k->rb;
        return true;
    case OTF2_COLLECTIVE_OP_SCATTERV:
        if (k->is_root) *sent = sum_bytes(k->scounts, k->wide, k->size, k->stype, NULL);
        if (!k->inter || !k->is_root) *recvd = k->rb;
        return true;
    case OTF2_COLLECTIVE_OP_REDUCE:
        *sent = k->sb;
        if (k->is_root) *recvd = k->rb;
        return true;
    default: return false;
    }
}

/* Operations without a root (neighbourhood ones among them: ALLGATHER... and ALLTOALL...). */
static void rootless_bytes(OTF2_CollectiveOp op, const struct coll *k, uint64_t *sent, uint64_t *recvd) {
    switch (op) {
    case OTF2_COLLECTIVE_OP_BARRIER: break;
    case OTF2_COLLECTIVE_OP_ALLGATHER:
        *sent = k->neighbor ? (uint64_t)k->nout * k->sb : k->sb;
        *recvd = (uint64_t)k->nin * k->rb;
        break;
    case OTF2_COLLECTIVE_OP_ALLGATHERV:
        *sent = k->neighbor ? (uint64_t)k->nout * k->sb : k->sb;
        *recvd = sum_bytes(k->rcounts, k->wide, k->nin, k->rtype, NULL);
        break;
    case OTF2_COLLECTIVE_OP_ALLTOALL:
        *sent = (uint64_t)k->nout * k->sb;
        *recvd = (uint64_t)k->nin * k->rb;
        break;
    case OTF2_COLLECTIVE_OP_ALLTOALLV:
        *sent = sum_bytes(k->scounts, k->wide, k->nout, k->stype, NULL);
        *recvd = sum_bytes(k->rcounts, k->wide, k->nin, k->rtype, NULL);
        break;
    case OTF2_COLLECTIVE_OP_ALLTOALLW:
        *sent = sum_bytes(k->scounts, k->wide, k->nout, k->stype, k->stypes);
        *recvd = sum_bytes(k->rcounts, k->wide, k->nin, k->rtype, k->rtypes);
        break;
    case OTF2_COLLECTIVE_OP_REDUCE_SCATTER:
        *sent = sum_bytes(k->rcounts, k->wide, k->size, k->stype != MPI_DATATYPE_NULL_ZC ? k->stype : k->rtype, NULL);
        *recvd = k->rcounts ? zc_mpi_bytes_of(count_at(k->rcounts, k->wide, k->rank < k->size ? k->rank : 0), k->rtype) : 0;
        break;
    case OTF2_COLLECTIVE_OP_REDUCE_SCATTER_BLOCK:
        *sent = (uint64_t)k->size * k->rb;
        *recvd = k->rb;
        break;
    default: /* ALLREDUCE, SCAN, EXSCAN */
        *sent = k->sb;
        *recvd = k->rb;
        break;
    }
}

/* Bytes this rank contributes (sent) and obtains (received): the payload of its send and receive
 * buffers as the operation uses them on this rank (mpi/README.md). */
static void coll_bytes(OTF2_CollectiveOp op, int flags, MPI_Comm comm, int64_t scount, MPI_Datatype stype, int64_t rcount,
                       MPI_Datatype rtype, const void *scounts, const void *rcounts, const MPI_Datatype *stypes,
                       const MPI_Datatype *rtypes, int root, uint64_t *sent, uint64_t *recvd) {
    bool neighbor = flags & ZC_COLL_NEIGHBOR;
    struct coll k = {stype, rtype, scounts, rcounts, stypes, rtypes, .neighbor = neighbor, .wide = flags & ZC_COLL_WIDE};
    int inter;
    k.size = peer_group_size(comm, &inter);
    k.inter = inter != 0;
    PMPI_Comm_rank(comm, &k.rank);
    zc_mpi_coll_peers(comm, neighbor, &k.nin, &k.nout);
    k.is_root = k.inter ? root == MPI_ROOT : root == k.rank;
    k.sb = zc_mpi_bytes_of(scount, stype);
    k.rb = zc_mpi_bytes_of(rcount, rtype);
    *sent = *recvd = 0;
    if (!rooted_bytes(op, &k, sent, recvd)) rootless_bytes(op, &k, sent, recvd);
}

static uint32_t otf2_root(OTF2_CollectiveOp op, int root) {
    return root == ZC_MPI_NO_ROOT || root < 0 ? OTF2_COLLECTIVE_ROOT_NONE : (uint32_t)root;
}

/* before the MPI call: held until zc_mpi_open */
void zc_mpi_coll_begin(struct zc_mpi_call *c) {
    c->has_pre = false;
    if (!c->t) return;
    c->pre = (struct zc_ev){c->t0, ZC_EV_MPI_COLL_BEGIN, 0, 0, 0, 0};
    c->has_pre = true;
}

void zc_mpi_coll_end(struct zc_mpi_call *c, OTF2_CollectiveOp op, int flags, MPI_Comm comm, int64_t scount,
                     MPI_Datatype stype, int64_t rcount, MPI_Datatype rtype, const void *scounts, const void *rcounts,
                     const MPI_Datatype *stypes, const MPI_Datatype *rtypes, int root) {
    if (!c->t) return;
    uint64_t sent, recvd;
    coll_bytes(op, flags, comm, scount, stype, rcount, rtype, scounts, rcounts, stypes, rtypes, root, &sent, &recvd);
    uint32_t comm_id = zc_mpi_comm_id(comm);
    *zc_mpi_slots(c, 1) = (struct zc_ev){c->t1, ZC_EV_MPI_COLL_END, comm_id, sent, recvd, ((uint64_t)op << 32) | otf2_root(op, root)};
}

void zc_mpi_icoll(struct zc_mpi_call *c, OTF2_CollectiveOp op, int flags, MPI_Comm comm, int64_t scount,
                  MPI_Datatype stype, int64_t rcount, MPI_Datatype rtype, const void *scounts, const void *rcounts,
                  const MPI_Datatype *stypes, const MPI_Datatype *rtypes, int root, MPI_Request req) {
    /* a persistent one is kept even while recording is off: a later MPI_Start may be recorded */
    bool persistent = flags & ZC_COLL_PERSISTENT;
    if ((!c->t && !persistent) || req == MPI_REQUEST_NULL) return;
    struct zc_req *ri = zr_alloc();
    if (!ri) return;
    memset(ri, 0, sizeof(*ri));
    ri->kind = persistent ? ZC_MPI_REQ_PNBC : ZC_MPI_REQ_NBC;
    ri->owner = c->t;
    ri->comm = zc_mpi_comm_id(comm);
    ri->op = op;
    ri->root = otf2_root(op, root);
    /* the counts are read now: the app may reuse its arrays before completion */
    coll_bytes(op, flags, comm, scount, stype, rcount, rtype, scounts, rcounts, stypes, rtypes, root, &ri->bytes,
               &ri->recvd);
    if (!persistent) zr_activate(c, ri);
    zr_insert(req, ri);
}
