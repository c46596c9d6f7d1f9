/* SPDX-License-Identifier: MIT */
/* MPI messages and collectives while a process is read: communicator ranks mapped to world ranks
 * (A13), the communication matrix and message sizes into the statistics, and for the wait states
 * (zc_agg_waits.c) one record per message end and per blocking collective: a wait needs the
 * other rank's times, which another reader may hold, so rank 0 matches the gathered records.
 * A receive's time is its completing call's (the blocking receive, or the Wait/Test), its posting
 * time the MpiIrecvRequest's; a record gets its call's Leave when the call closes. */
#include "zc_agg_read.h"

#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- groups (definitions) */
int agg_group_keep(struct agg_defs *d, uint32_t self, uint8_t type, uint32_t n, const uint64_t *members) {
    if (self >= d->nmgroups) {
        uint32_t nn = self + 1;
        struct agg_mgroup *g = realloc(d->mgroups, nn * sizeof(*g));
        if (!g) return -1;
        memset(g + d->nmgroups, 0, (nn - d->nmgroups) * sizeof(*g));
        d->mgroups = g;
        d->nmgroups = nn;
    }
    struct agg_mgroup *g = &d->mgroups[self];
    free(g->m);
    g->m = n ? malloc(n * sizeof(uint64_t)) : NULL;
    if (n && !g->m) return -1;
    if (n) memcpy(g->m, members, n * sizeof(uint64_t));
    g->n = n;
    g->type = type;
    if (type == OTF2_GROUP_TYPE_COMM_LOCATIONS) d->mpi_locs_group = self;
    return 0;
}

void agg_groups_free(struct agg_defs *d) {
    for (uint32_t i = 0; i < d->nmgroups; i++) free(d->mgroups[i].m);
    free(d->mgroups);
    d->mgroups = NULL;
    d->nmgroups = 0;
}

static uint32_t group_world(const struct agg_defs *d, uint32_t g, uint32_t local) {
    if (g >= d->nmgroups || local >= d->mgroups[g].n || d->mpi_locs_group >= d->nmgroups) return AGG_NONE;
    const struct agg_mgroup *L = &d->mgroups[d->mpi_locs_group];
    uint64_t ix = d->mgroups[g].m[local];
    return ix < L->n ? (uint32_t)(L->m[ix] & 0xffffffffu) : AGG_NONE;
}

static bool group_has(const struct agg_defs *d, uint32_t g, uint32_t world) {
    if (g >= d->nmgroups) return false;
    for (uint32_t k = 0; k < d->mgroups[g].n; k++)
        if (group_world(d, g, k) == world) return true;
    return false;
}

uint32_t agg_comm_world(const struct agg_defs *d, uint32_t comm, uint32_t local, uint32_t self) {
    if (comm >= d->ncomms || !d->comms[comm].defined) return AGG_NONE;
    const struct agg_comm *c = &d->comms[comm];
    if (c->group < d->nmgroups && d->mgroups[c->group].type == OTF2_GROUP_TYPE_COMM_SELF) return self;
    if (!c->inter) return group_world(d, c->group, local);
    /* an intercommunicator's peer is in the group the caller is not in */
    return group_world(d, group_has(d, c->group, self) ? c->group_b : c->group, local);
}

bool agg_is_l0_sync(const char *n) {
    return strcmp(n, "zeCommandQueueSynchronize") == 0 || strcmp(n, "zeEventHostSynchronize") == 0 ||
           strcmp(n, "zeFenceHostSynchronize") == 0 || strcmp(n, "zeContextSystemBarrier") == 0;
}

/* ---------------------------------------------------------------- records */
/* a record of the MPI call open on l, waiting for its Leave */
static uint64_t *call_record(struct pctx *c, struct lst *l, uint64_t type) {
    if (l->stream || l->depth == 0) return NULL;
    const struct frame *f = &l->fr[l->depth - 1];
    if (c->d->regions[f->region].host_class != AGG_H_MPI) return NULL;
    if (l->npend == l->cappend) {
        uint32_t nc = l->cappend ? 2 * l->cappend : 4;
        size_t *p = realloc(l->pend, nc * sizeof(*p));
        if (!p) {
            c->s->oom = true;
            return NULL;
        }
        l->pend = p;
        l->cappend = nc;
    }
    size_t i = agg_rec_add(c->s, type);
    if (i == SIZE_MAX) return NULL;
    l->pend[l->npend++] = i;
    uint64_t *w = agg_rec(c->s, i);
    w[5] = f->t;
    w[6] = f->t; /* until its Leave */
    w[7] = (uint64_t)f->region << 8;
    w[8] = l->li;
    return w;
}

void agg_comm_leave(struct pctx *c, struct lst *l, uint64_t t) {
    for (uint32_t k = 0; k < l->npend; k++) agg_rec(c->s, l->pend[k])[6] = t;
    l->npend = 0;
}

void agg_comm_free(struct pctx *c) {
    for (uint32_t i = 0; c->ls && i < c->nls; i++) free(c->ls[i].pend);
    agg_map_free(&c->irecv_post);
    agg_map_free(&c->coll_seq);
}

/* the bytes of a message or collective: into the open region and its function's size classes */
static void add_bytes(struct pctx *c, struct lst *l, uint64_t bytes) {
    if (!l->depth) return;
    struct frame *f = &l->fr[l->depth - 1];
    f->bytes += bytes;
    if (l->stream) return;
    struct agg_acc *a = agg_stats_get(c->s, T_MPI_SIZE, f->region, agg_size_class(bytes), 0);
    if (a) {
        a->n++;
        a->bytes += bytes;
    }
}

/* a message end: send (the peer is the receiver) or receive (the peer is the sender) */
static OTF2_CallbackCode message(void *ud, OTF2_LocationRef loc, uint64_t t, uint32_t peer, uint32_t comm, uint32_t tag,
                                 uint64_t len, bool send, bool blocking, uint64_t req) {
    struct pctx *c = ud;
    struct lst *l = agg_ev_record(c, loc, t);
    if (!l) return OTF2_CALLBACK_INTERRUPT;
    if (l->stream) return OTF2_CALLBACK_SUCCESS;
    add_bytes(c, l, len);
    uint32_t other = agg_comm_world(c->d, comm, peer, c->rank);
    if (other == AGG_NONE) return OTF2_CALLBACK_SUCCESS;
    uint32_t src = send ? c->rank : other, dst = send ? other : c->rank;
    if (send) {
        struct agg_acc *a = agg_stats_get(c->s, T_MSG, comm, src, dst);
        if (a) {
            a->n++;
            a->bytes += len;
        }
    }
    uint64_t *w = call_record(c, l, send ? REC_SEND : REC_RECV);
    if (!w) return OTF2_CALLBACK_SUCCESS;
    w[1] = comm;
    w[2] = (uint64_t)src << 32 | dst;
    w[3] = tag;
    w[4] = send ? t : w[5];
    w[7] |= blocking;
    w[9] = len;
    if (!send && !blocking) { /* posted when its MpiIrecvRequest was recorded */
        size_t j = agg_map_find(&c->irecv_post, (uint64_t)l->li << 44 ^ req);
        if (j != SIZE_MAX) {
            w[4] = c->irecv_post.v0[j];
            agg_map_del(&c->irecv_post, j);
        }
    }
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode cb_send(OTF2_LocationRef loc, OTF2_TimeStamp t, void *ud, OTF2_AttributeList *al, uint32_t peer,
                                 OTF2_CommRef comm, uint32_t tag, uint64_t len) {
    return message(ud, loc, t, peer, comm, tag, len, true, true, 0);
}

static OTF2_CallbackCode cb_recv(OTF2_LocationRef loc, OTF2_TimeStamp t, void *ud, OTF2_AttributeList *al, uint32_t peer,
                                 OTF2_CommRef comm, uint32_t tag, uint64_t len) {
    return message(ud, loc, t, peer, comm, tag, len, false, true, 0);
}

static OTF2_CallbackCode cb_isend(OTF2_LocationRef loc, OTF2_TimeStamp t, void *ud, OTF2_AttributeList *al, uint32_t peer,
                                  OTF2_CommRef comm, uint32_t tag, uint64_t len, uint64_t req) {
    return message(ud, loc, t, peer, comm, tag, len, true, false, req);
}

static OTF2_CallbackCode cb_irecv(OTF2_LocationRef loc, OTF2_TimeStamp t, void *ud, OTF2_AttributeList *al, uint32_t peer,
                                  OTF2_CommRef comm, uint32_t tag, uint64_t len, uint64_t req) {
    return message(ud, loc, t, peer, comm, tag, len, false, false, req);
}

static OTF2_CallbackCode cb_irecv_req(OTF2_LocationRef loc, OTF2_TimeStamp t, void *ud, OTF2_AttributeList *al,
                                      uint64_t req) {
    struct pctx *c = ud;
    struct lst *l = agg_ev_record(c, loc, t);
    if (!l) return OTF2_CALLBACK_INTERRUPT;
    agg_map_put(&c->irecv_post, (uint64_t)l->li << 44 ^ req, t, 0);
    return OTF2_CALLBACK_SUCCESS;
}

/* a blocking collective: its bytes, communicator, and its record (the k-th on this communicator) */
static OTF2_CallbackCode coll_end(void *ud, OTF2_LocationRef loc, uint64_t t, OTF2_CollectiveOp op, uint32_t comm,
                                  uint32_t root, uint64_t sent, uint64_t recvd, bool blocking) {
    struct pctx *c = ud;
    struct lst *l = agg_ev_record(c, loc, t);
    if (!l) return OTF2_CALLBACK_INTERRUPT;
    add_bytes(c, l, sent + recvd);
    if (l->depth) l->fr[l->depth - 1].comm = comm;
    if (!blocking || l->stream) return OTF2_CALLBACK_SUCCESS;
    size_t j = agg_map_find(&c->coll_seq, comm);
    uint64_t seq = j == SIZE_MAX ? 0 : c->coll_seq.v0[j];
    if (j == SIZE_MAX) agg_map_put(&c->coll_seq, comm, 1, 0);
    else c->coll_seq.v0[j]++;
    uint64_t *w = call_record(c, l, REC_COLL);
    if (!w) return OTF2_CALLBACK_SUCCESS;
    uint32_t rw = root == OTF2_UNDEFINED_UINT32 ? AGG_NONE : agg_comm_world(c->d, comm, root, c->rank);
    w[1] = comm;
    w[2] = (uint64_t)c->rank << 32 | (seq & 0xffffffffu);
    w[3] = (uint64_t)op << 32 | rw;
    w[4] = w[5]; /* REC_COLL keeps its enter in w[4] too: the same layout as the messages */
    return OTF2_CALLBACK_SUCCESS;
}

static OTF2_CallbackCode cb_coll_end(OTF2_LocationRef loc, OTF2_TimeStamp t, void *ud, OTF2_AttributeList *al,
                                     OTF2_CollectiveOp op, OTF2_CommRef comm, uint32_t root, uint64_t sent, uint64_t recvd) {
    return coll_end(ud, loc, t, op, comm, root, sent, recvd, true);
}

static OTF2_CallbackCode cb_nbc_end(OTF2_LocationRef loc, OTF2_TimeStamp t, void *ud, OTF2_AttributeList *al,
                                    OTF2_CollectiveOp op, OTF2_CommRef comm, uint32_t root, uint64_t sent, uint64_t recvd,
                                    uint64_t req) {
    return coll_end(ud, loc, t, op, comm, root, sent, recvd, false);
}

void agg_comm_callbacks(OTF2_GlobalEvtReaderCallbacks *cb) {
    OTF2_GlobalEvtReaderCallbacks_SetMpiSendCallback(cb, cb_send);
    OTF2_GlobalEvtReaderCallbacks_SetMpiRecvCallback(cb, cb_recv);
    OTF2_GlobalEvtReaderCallbacks_SetMpiIsendCallback(cb, cb_isend);
    OTF2_GlobalEvtReaderCallbacks_SetMpiIrecvCallback(cb, cb_irecv);
    OTF2_GlobalEvtReaderCallbacks_SetMpiIrecvRequestCallback(cb, cb_irecv_req);
    OTF2_GlobalEvtReaderCallbacks_SetMpiCollectiveEndCallback(cb, cb_coll_end);
    OTF2_GlobalEvtReaderCallbacks_SetNonBlockingCollectiveCompleteCallback(cb, cb_nbc_end);
}
