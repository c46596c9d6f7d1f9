/* SPDX-License-Identifier: MIT */
/* Non-blocking point-to-point and collective communication, every completion path:
 *
 *   1  Isend/Irecv with both neighbours, MPI_Waitall                          tags 10, 11
 *   2  Irecv from every other rank, completed by an MPI_Waitany loop          tag 20
 *   3  the same with an MPI_Waitsome loop                                     tag 30
 *   4  MPI_Test polling loop on an Irecv                                      tag 40
 *   5  MPI_Testall polling loop                                               tag 50
 *   6  persistent MPI_Send_init/MPI_Recv_init: MPI_Startall + MPI_Waitall, then MPI_Start +
 *      MPI_Wait, over several iterations; MPI_Request_free at the end         tags 60, 61
 *   7  MPI_ANY_SOURCE / MPI_ANY_TAG receives at rank 0 (MPI_Recv and MPI_Irecv)  tags 70+r, 90+r
 *   8  MPI_STATUS_IGNORE / MPI_STATUSES_IGNORE on completions (throughout)
 *   9  a cancelled MPI_Irecv: MPI_Cancel + MPI_Wait + MPI_Test_cancelled     tag 999
 *  10  MPI_Ibcast, MPI_Iallreduce, MPI_Ibarrier, each completed with MPI_Wait; then Ibcast and
 *      Iallreduce in flight together, completed with MPI_Waitall
 *
 * The messages are deterministic (fixed source, destination, tag and size); only the number of
 * MPI_Test/Testall/Waitsome calls depends on timing.
 *
 * usage: mpirun -np N mpi_nonblocking     (N >= 2) */
#include "mt_common.h"

#include <stdint.h>

#define MAXN 256
#define PERSIST_ITERS 5

static int right_of(int r) { return (r + 1) % mt_size; }
static int left_of(int r) { return (r - 1 + mt_size) % mt_size; }

/* Message from src to dst in phase `tag`: count ints, values derived from all three. */
static int msg_count(int src, int dst, int tag) { return 1 + (src * 7 + dst * 3 + tag) % 50; }
static int32_t msg_value(int src, int dst, int tag, int i) { return src * 1000000 + dst * 10000 + tag * 10 + i; }

static void fill(int32_t *buf, int src, int dst, int tag)
{
    for (int i = 0, n = msg_count(src, dst, tag); i < n; ++i)
        buf[i] = msg_value(src, dst, tag, i);
}

static void verify(const int32_t *buf, const MPI_Status *st, int src, int dst, int tag,
                   const char *what)
{
    const int n = msg_count(src, dst, tag);
    if (st) {
        MT_REQUIRE(st->MPI_SOURCE == src && st->MPI_TAG == tag, "%s: status source %d tag %d, expected %d/%d",
                   what, st->MPI_SOURCE, st->MPI_TAG, src, tag);
        mt_expect_count(st, MPI_INT32_T, n, what);
    }
    for (int i = 0; i < n; ++i)
        MT_REQUIRE(buf[i] == msg_value(src, dst, tag, i), "%s: from %d element %d = %d, expected %d",
                   what, src, i, buf[i], msg_value(src, dst, tag, i));
}

/* 1: neighbours, Waitall with statuses. */
static void phase_waitall(void)
{
    const int r = mt_rank, L = left_of(r), R = right_of(r);
    int32_t sL[64], sR[64], rL[64], rR[64];
    MPI_Request req[4];
    MPI_Status st[4];
    fill(sR, r, R, 10);
    fill(sL, r, L, 11);
    MT_MPI(MPI_Irecv(rL, 64, MPI_INT32_T, L, 10, MPI_COMM_WORLD, &req[0]));
    MT_MPI(MPI_Irecv(rR, 64, MPI_INT32_T, R, 11, MPI_COMM_WORLD, &req[1]));
    MT_MPI(MPI_Isend(sR, msg_count(r, R, 10), MPI_INT32_T, R, 10, MPI_COMM_WORLD, &req[2]));
    MT_MPI(MPI_Isend(sL, msg_count(r, L, 11), MPI_INT32_T, L, 11, MPI_COMM_WORLD, &req[3]));
    MT_MPI(MPI_Waitall(4, req, st));
    verify(rL, &st[0], L, r, 10, "Waitall (from left)");
    verify(rR, &st[1], R, r, 11, "Waitall (from right)");
    for (int i = 0; i < 4; ++i)
        MT_REQUIRE(req[i] == MPI_REQUEST_NULL, "Waitall left request %d active", i);
}

/* 2 and 3: all-to-all exchange; receives completed by Waitany (some=0) or Waitsome (some=1). */
static void phase_any_some(int some)
{
    const int r = mt_rank, n = mt_size, tag = some ? 30 : 20;
    static int32_t sbuf[MAXN][64], rbuf[MAXN][64];
    MPI_Request rreq[MAXN], sreq[MAXN];
    int peers = 0, peer_of[MAXN];
    MT_REQUIRE(n <= MAXN, "too many ranks");
    for (int p = 0; p < n; ++p) {
        if (p == r)
            continue;
        peer_of[peers] = p;
        MT_MPI(MPI_Irecv(rbuf[peers], 64, MPI_INT32_T, p, tag, MPI_COMM_WORLD, &rreq[peers]));
        ++peers;
    }
    for (int k = 0; k < peers; ++k) {
        const int p = peer_of[k];
        fill(sbuf[k], r, p, tag);
        MT_MPI(MPI_Isend(sbuf[k], msg_count(r, p, tag), MPI_INT32_T, p, tag, MPI_COMM_WORLD, &sreq[k]));
    }
    int done = 0, calls = 0;
    if (!some) {
        for (;;) {
            int idx = -1;
            MPI_Status st;
            MT_MPI(MPI_Waitany(peers, rreq, &idx, &st));
            ++calls;
            if (idx == MPI_UNDEFINED)
                break;
            MT_REQUIRE(idx >= 0 && idx < peers, "Waitany index %d", idx);
            verify(rbuf[idx], &st, peer_of[idx], r, tag, "Waitany");
            ++done;
        }
    } else {
        int idx[MAXN];
        MPI_Status st[MAXN];
        for (;;) {
            int outcount = -1;
            MT_MPI(MPI_Waitsome(peers, rreq, &outcount, idx, st));
            ++calls;
            if (outcount == MPI_UNDEFINED)
                break;
            MT_REQUIRE(outcount >= 1 && outcount <= peers, "Waitsome outcount %d", outcount);
            for (int k = 0; k < outcount; ++k)
                verify(rbuf[idx[k]], &st[k], peer_of[idx[k]], r, tag, "Waitsome");
            done += outcount;
        }
    }
    MT_REQUIRE(done == peers, "%s completed %d of %d receives", some ? "Waitsome" : "Waitany", done,
               peers);
    MT_REQUIRE(calls >= 2, "%s loop ended after %d calls", some ? "Waitsome" : "Waitany", calls);
    MT_MPI(MPI_Waitall(peers, sreq, MPI_STATUSES_IGNORE));
}

/* 4: MPI_Test polling. */
static void phase_test(void)
{
    const int r = mt_rank, L = left_of(r), R = right_of(r);
    int32_t s[64], rb[64];
    MPI_Request rr, sr;
    MPI_Status st;
    fill(s, r, R, 40);
    MT_MPI(MPI_Irecv(rb, 64, MPI_INT32_T, L, 40, MPI_COMM_WORLD, &rr));
    MT_MPI(MPI_Isend(s, msg_count(r, R, 40), MPI_INT32_T, R, 40, MPI_COMM_WORLD, &sr));
    int flag = 0;
    long polls = 0;
    while (!flag) {
        MT_MPI(MPI_Test(&rr, &flag, &st));
        ++polls;
    }
    verify(rb, &st, L, r, 40, "Test loop");
    MT_REQUIRE(rr == MPI_REQUEST_NULL, "completed MPI_Test left the request active");
    MT_MPI(MPI_Wait(&sr, MPI_STATUS_IGNORE));
    MT_REQUIRE(polls >= 1, "no MPI_Test call");
}

/* 5: MPI_Testall polling on a receive and a send. */
static void phase_testall(void)
{
    const int r = mt_rank, L = left_of(r), R = right_of(r);
    int32_t s[64], rb[64];
    MPI_Request req[2];
    MPI_Status st[2];
    fill(s, r, L, 50);
    MT_MPI(MPI_Irecv(rb, 64, MPI_INT32_T, R, 50, MPI_COMM_WORLD, &req[0]));
    MT_MPI(MPI_Isend(s, msg_count(r, L, 50), MPI_INT32_T, L, 50, MPI_COMM_WORLD, &req[1]));
    int flag = 0;
    while (!flag)
        MT_MPI(MPI_Testall(2, req, &flag, st));
    verify(rb, &st[0], R, r, 50, "Testall");
}

/* 6: persistent requests. */
static void phase_persistent(void)
{
    const int r = mt_rank, L = left_of(r), R = right_of(r);
    int32_t s[64], rb[64], s2[64], rb2[64];
    MPI_Request req[2], req2[2];
    /* The send buffer is rewritten before every start; the sizes stay fixed. */
    MT_MPI(MPI_Recv_init(rb, 64, MPI_INT32_T, L, 60, MPI_COMM_WORLD, &req[0]));
    MT_MPI(MPI_Send_init(s, msg_count(r, R, 60), MPI_INT32_T, R, 60, MPI_COMM_WORLD, &req[1]));
    MT_MPI(MPI_Recv_init(rb2, 64, MPI_INT32_T, R, 61, MPI_COMM_WORLD, &req2[0]));
    MT_MPI(MPI_Send_init(s2, msg_count(r, L, 61), MPI_INT32_T, L, 61, MPI_COMM_WORLD, &req2[1]));
    for (int it = 0; it < PERSIST_ITERS; ++it) {
        MPI_Status st[2];
        fill(s, r, R, 60);
        s[0] += it;
        memset(rb, 0xff, sizeof rb);
        MT_MPI(MPI_Startall(2, req));
        MT_MPI(MPI_Waitall(2, req, st));
        MT_REQUIRE(req[0] != MPI_REQUEST_NULL && req[1] != MPI_REQUEST_NULL,
                   "persistent requests freed by MPI_Waitall");
        rb[0] -= it;
        verify(rb, &st[0], L, r, 60, "persistent (Startall)");

        fill(s2, r, L, 61);
        s2[1] += 2 * it;
        MT_MPI(MPI_Start(&req2[0]));
        MT_MPI(MPI_Start(&req2[1]));
        MPI_Status st2;
        MT_MPI(MPI_Wait(&req2[1], MPI_STATUS_IGNORE));
        MT_MPI(MPI_Wait(&req2[0], &st2));
        rb2[1] -= 2 * it;
        verify(rb2, &st2, R, r, 61, "persistent (Start)");
    }
    for (int i = 0; i < 2; ++i) {
        MT_MPI(MPI_Request_free(&req[i]));
        MT_MPI(MPI_Request_free(&req2[i]));
    }
}

/* 7: wildcard receives at rank 0. */
static void phase_wildcards(void)
{
    const int r = mt_rank, n = mt_size;
    int32_t buf[64];
    if (r != 0) {
        fill(buf, r, 0, 70 + r);
        MT_MPI(MPI_Send(buf, msg_count(r, 0, 70 + r), MPI_INT32_T, 0, 70 + r, MPI_COMM_WORLD));
        int32_t b2[64];
        fill(b2, r, 0, 90 + r);
        MT_MPI(MPI_Send(b2, msg_count(r, 0, 90 + r), MPI_INT32_T, 0, 90 + r, MPI_COMM_WORLD));
        return;
    }
    /* Each sender's two messages arrive in order (non-overtaking), but messages of different
     * senders interleave arbitrarily: the first n-1 are taken with MPI_Recv, the rest with
     * MPI_Irecv + MPI_Wait, both with MPI_ANY_SOURCE and MPI_ANY_TAG. */
    int got[MAXN] = {0};
    MT_REQUIRE(n <= MAXN, "too many ranks");
    for (int k = 0; k < 2 * (n - 1); ++k) {
        MPI_Status st;
        if (k < n - 1) {
            MT_MPI(MPI_Recv(buf, 64, MPI_INT32_T, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
        } else {
            MPI_Request q;
            MT_MPI(MPI_Irecv(buf, 64, MPI_INT32_T, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &q));
            MT_MPI(MPI_Wait(&q, &st));
        }
        const int src = st.MPI_SOURCE;
        MT_REQUIRE(src > 0 && src < n && got[src] < 2, "ANY_SOURCE/ANY_TAG: unexpected source %d", src);
        const int want_tag = (got[src] == 0 ? 70 : 90) + src;
        verify(buf, &st, src, 0, want_tag, k < n - 1 ? "ANY_SOURCE/ANY_TAG Recv" : "ANY_SOURCE/ANY_TAG Irecv");
        ++got[src];
    }
}

/* 9: a receive nobody will match, cancelled. */
static void phase_cancel(void)
{
    int32_t buf[4];
    MPI_Request q;
    MPI_Status st;
    MT_MPI(MPI_Irecv(buf, 4, MPI_INT32_T, left_of(mt_rank), 999, MPI_COMM_WORLD, &q));
    MT_MPI(MPI_Cancel(&q));
    MT_MPI(MPI_Wait(&q, &st));
    int cancelled = 0;
    MT_MPI(MPI_Test_cancelled(&st, &cancelled));
    MT_REQUIRE(cancelled, "MPI_Test_cancelled says the unmatched Irecv was not cancelled");
}

/* 10: non-blocking collectives. */
static void phase_icoll(void)
{
    const int r = mt_rank, n = mt_size;
    MPI_Request q;
    int32_t b[16];
    for (int i = 0; i < 16; ++i)
        b[i] = r == 0 ? 500 + i : -1;
    MT_MPI(MPI_Ibcast(b, 16, MPI_INT32_T, 0, MPI_COMM_WORLD, &q));
    MT_MPI(MPI_Wait(&q, MPI_STATUS_IGNORE));
    for (int i = 0; i < 16; ++i)
        MT_REQUIRE(b[i] == 500 + i, "Ibcast: b[%d] = %d", i, b[i]);

    int64_t in = r + 1, out = -1;
    MT_MPI(MPI_Iallreduce(&in, &out, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD, &q));
    MT_MPI(MPI_Wait(&q, MPI_STATUS_IGNORE));
    MT_REQUIRE(out == (int64_t)n * (n + 1) / 2, "Iallreduce: %lld", (long long)out);

    MT_MPI(MPI_Ibarrier(MPI_COMM_WORLD, &q));
    MPI_Status st;
    MT_MPI(MPI_Wait(&q, &st));

    /* two in flight, then Waitall */
    MPI_Request qq[2];
    double d[4];
    for (int i = 0; i < 4; ++i)
        d[i] = r == n - 1 ? 0.25 * i : -1.0;
    int32_t mx = r * 5, mxo = -1;
    MT_MPI(MPI_Ibcast(d, 4, MPI_DOUBLE, n - 1, MPI_COMM_WORLD, &qq[0]));
    MT_MPI(MPI_Iallreduce(&mx, &mxo, 1, MPI_INT32_T, MPI_MAX, MPI_COMM_WORLD, &qq[1]));
    MT_MPI(MPI_Waitall(2, qq, MPI_STATUSES_IGNORE));
    for (int i = 0; i < 4; ++i)
        MT_REQUIRE(d[i] == 0.25 * i, "Ibcast (2 in flight): d[%d] = %g", i, d[i]);
    MT_REQUIRE(mxo == (n - 1) * 5, "Iallreduce (2 in flight): %d", mxo);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    mt_init(argv[0], 2);
    phase_waitall();
    phase_any_some(0);
    phase_any_some(1);
    phase_test();
    phase_testall();
    phase_persistent();
    phase_wildcards();
    phase_cancel();
    phase_icoll();
    mt_pass("Waitall, Waitany, Waitsome, Test, Testall, persistent Startall/Start x5, "
            "ANY_SOURCE/ANY_TAG, cancelled Irecv, Ibcast/Iallreduce/Ibarrier");
    MPI_Finalize();
    return 0;
}
