/* SPDX-License-Identifier: MIT */
/* zecoll-synth --waits: every rank, after its allreduces, runs planted wait states of known
 * durations at the same (global) times: late senders and late receivers between the ranks of
 * each pair (2k, 2k + 1), late senders below the clock-offset uncertainty, a late broadcast root,
 * an early reduce root and one slow rank before a barrier. The expected wait states (these and
 * the Wait at NxN of the allreduces) are computed here from the planted times, as the report's
 * "wait_states.by_pair" spells them. Times are rank 0's; with --skew they are written skewed and
 * the clock offsets undo it exactly. The uncertainty of a pair is the sum of its ranks' offset
 * standard deviations (zc_synth_defs.c: 1 us, rank 0: 0). */
#include "zc_synth.h"

#include <stdlib.h>

enum { LS, LR, NXN, BAR, LBC, LSC, ERE, EGA, NCLS };
static const char *const cls_name[NCLS] = {"Late Sender",    "Late Receiver", "Wait at NxN",  "Wait at Barrier",
                                           "Late Broadcast", "Late Scatter",  "Early Reduce", "Early Gather"};

/* ---------------------------------------------------------------- the expected waits */
struct xw {
    uint32_t cls, a, b;
    uint64_t n, ns, nb, nsb;
};
static struct xw *xw;
static size_t nxw, capxw;
static uint64_t (*ar)[4][2]; /* [rank][allreduce]: enter, duration */

static uint64_t unc(uint32_t r) { return r ? 1000 : 0; }

static void expect(uint32_t cls, uint32_t waiting, uint32_t blamed, uint64_t wait) {
    if (!wait) return;
    size_t i = 0;
    while (i < nxw && !(xw[i].cls == cls && xw[i].a == waiting && xw[i].b == blamed)) i++;
    if (i == nxw) {
        if (nxw == capxw) {
            capxw = capxw ? 2 * capxw : 64;
            xw = realloc(xw, capxw * sizeof(*xw));
            if (!xw) abort();
        }
        xw[nxw++] = (struct xw){cls, waiting, blamed, 0, 0, 0, 0};
    }
    if (wait > unc(waiting) + unc(blamed)) xw[i].n++, xw[i].ns += wait;
    else xw[i].nb++, xw[i].nsb += wait;
}

void synth_waits_allreduce(const struct opts *o, uint32_t r, uint32_t m, uint64_t enter, uint64_t dur) {
    if (!ar && !(ar = calloc(o->ranks, sizeof(*ar)))) abort();
    ar[r][m][0] = enter;
    ar[r][m][1] = dur;
}

static int cmp_xw(const void *x, const void *y) {
    const struct xw *a = x, *b = y;
    if (a->cls != b->cls) return a->cls < b->cls ? -1 : 1;
    if (a->a != b->a) return a->a < b->a ? -1 : 1;
    return (a->b > b->b) - (a->b < b->b);
}

/* ---------------------------------------------------------------- writing */
#define W (c->o->ranks) /* MPI_COMM_WORLD's id (zc_synth_defs.c) */

static void enter(struct ctx *c, uint64_t t, uint32_t region) {
    synth_tick(c, t);
    OTF2_EvtWriter_Enter(c->w, NULL, SYNTH_LT(c, t), region);
}

static void leave(struct ctx *c, uint64_t t, uint32_t region) {
    synth_tick(c, t);
    OTF2_EvtWriter_Leave(c->w, NULL, SYNTH_LT(c, t), region);
}

/* a blocking send [a, b) to rank `to` */
static uint64_t send(struct ctx *c, uint32_t region, uint64_t a, uint64_t b, uint32_t to, uint32_t tag, uint64_t bytes) {
    enter(c, a, region);
    synth_tick(c, a);
    OTF2_EvtWriter_MpiSend(c->w, NULL, SYNTH_LT(c, a), to, W, tag, bytes);
    leave(c, b, region);
    return b - a;
}

/* a blocking receive [a, b) from rank `from`, its message at b */
static uint64_t recv(struct ctx *c, uint64_t a, uint64_t b, uint32_t from, uint32_t tag, uint64_t bytes) {
    enter(c, a, R_MPI_RECV);
    synth_tick(c, b);
    OTF2_EvtWriter_MpiRecv(c->w, NULL, SYNTH_LT(c, b), from, W, tag, bytes);
    leave(c, b, R_MPI_RECV);
    return b - a;
}

static uint64_t coll(struct ctx *c, uint32_t region, OTF2_CollectiveOp op, uint32_t root, uint64_t a, uint64_t b,
                     uint64_t sent, uint64_t recvd) {
    enter(c, a, region);
    synth_tick(c, a);
    OTF2_EvtWriter_MpiCollectiveBegin(c->w, NULL, SYNTH_LT(c, a));
    synth_tick(c, b);
    OTF2_EvtWriter_MpiCollectiveEnd(c->w, NULL, SYNTH_LT(c, b), op, W, root, sent, recvd);
    leave(c, b, region);
    return b - a;
}

uint64_t synth_write_waits(struct ctx *c) {
    const uint32_t R = c->o->ranks, r = c->r, k = r / 2, root = R - 1, slow = R / 2;
    const uint64_t P = c->waits_at, j = r % 20;
    const bool paired = (r | 1) < R; /* rank 2k + 1 exists */
    uint64_t mpi = 0;
    /* late sender: 2k + 1 receives from P, 2k sends ls later */
    uint64_t ls = 10000 + 3000 * (k % 20);
    if (paired && r % 2 == 0) mpi += send(c, R_MPI_SEND, P + ls, P + ls + 500, r + 1, 1, 64);
    if (paired && r % 2 == 1) mpi += recv(c, P, P + ls + 1000, r - 1, 1, 64), expect(LS, r, r - 1, ls);
    /* late receiver: 2k + 1's synchronous send waits lr for 2k's receive */
    uint64_t Q = P + 100000, lr = 8000 + 2000 * (k % 20);
    if (paired && r % 2 == 1) mpi += send(c, R_MPI_SSEND, Q, Q + lr + 800, r - 1, 2, 128), expect(LR, r, r - 1, lr);
    if (paired && r % 2 == 0) mpi += recv(c, Q + lr, Q + lr + 900, r + 1, 2, 128);
    /* late senders of 700 ns: below the pair's uncertainty (1 us with rank 0, else 2 us) */
    uint64_t S = P + 200000;
    if (paired && r % 2 == 0) mpi += send(c, R_MPI_SEND, S + 700, S + 900, r + 1, 3, 8);
    if (paired && r % 2 == 1) mpi += recv(c, S, S + 1000, r - 1, 3, 8), expect(LS, r, r - 1, 700);
    /* late broadcast: the last rank, the root, enters 50 us after the others' start */
    uint64_t B = P + 300000, in = r == root ? B + 50000 : B + j * 1000;
    mpi += coll(c, R_MPI_BCAST, OTF2_COLLECTIVE_OP_BCAST, root, in, B + 52000, r == root ? 8 * (R - 1) : 0, r == root ? 0 : 8);
    if (r != root) expect(LBC, r, root, B + 50000 - in);
    /* early reduce: root 0 enters 30 us before rank 1 (the first other) */
    uint64_t E = P + 400000;
    in = r == 0 ? E : E + 30000 + ((r - 1) % 20) * 1000;
    mpi += coll(c, R_MPI_REDUCE, OTF2_COLLECTIVE_OP_REDUCE, 0, in, E + 60000, r ? 8 : 0, r ? 0 : 8 * (R - 1));
    if (r == 0 && R > 1) expect(ERE, 0, 1, 30000);
    /* a barrier the slow rank enters 40 us late */
    uint64_t F = P + 500000;
    in = r == slow ? F + 40000 : F + j * 500;
    mpi += coll(c, R_MPI_BARRIER, OTF2_COLLECTIVE_OP_BARRIER, OTF2_COLLECTIVE_ROOT_NONE, in, F + 42000, 0, 0);
    if (r != slow) expect(BAR, r, slow, F + 40000 - in);
    return mpi;
}

/* ---------------------------------------------------------------- expected */
void synth_waits_expected(FILE *ex, const struct opts *o) {
    for (uint32_t m = 0; ar && m < 4; m++) { /* the allreduces: everybody waits for the last to enter */
        uint32_t last = 0;
        for (uint32_t r = 1; r < o->ranks; r++)
            if (ar[r][m][0] > ar[last][m][0]) last = r;
        for (uint32_t r = 0; r < o->ranks; r++) {
            uint64_t w = ar[last][m][0] - ar[r][m][0];
            if (r != last) expect(NXN, r, last, w < ar[r][m][1] ? w : ar[r][m][1]);
        }
    }
    qsort(xw, nxw, sizeof(*xw), cmp_xw);
    uint64_t ns = 0;
    fputs(",\n\"waits\":{\"by_pair\":[", ex);
    for (size_t i = 0; i < nxw; i++) {
        ns += xw[i].ns;
        fprintf(ex, "%s{\"wait_state\":\"%s\",\"waiting\":%u,\"blamed\":%u,\"waits\":%llu,\"ns\":%llu,"
                    "\"waits_below_uncertainty\":%llu,\"ns_below_uncertainty\":%llu}",
                i ? ",\n" : "\n", cls_name[xw[i].cls], xw[i].a, xw[i].b, (unsigned long long)xw[i].n,
                (unsigned long long)xw[i].ns, (unsigned long long)xw[i].nb, (unsigned long long)xw[i].nsb);
    }
    fprintf(ex, "],\"ns\":%llu}", (unsigned long long)ns);
}
