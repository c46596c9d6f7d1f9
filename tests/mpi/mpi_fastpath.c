/* SPDX-License-Identifier: MIT */
/* The fast paths of MPI_Isend, MPI_Irecv, MPI_Wait, MPI_Waitall and MPI_Send (mpi/zc_mpi_req.h)
 * and every way out of them, in one MPI_THREAD_SINGLE job (the writer matches requests). Each rank
 * exchanges with its partner (rank ^ 1; the last of an odd count with itself), ITERS rounds of
 *   Irecv + Isend (0 to 4 doubles) + an Isend to MPI_PROC_NULL, and an MPI_REQUEST_NULL, completed
 *   by one MPI_Waitall of the 4, by MPI_Wait one at a time, or both; statuses asked for (checked:
 *   source, tag, count) or ignored;
 *   then Irecv + a blocking MPI_Send or MPI_Ssend (0 to 4 doubles) + an MPI_Send to MPI_PROC_NULL
 *   (the call recorded, no message), completed by MPI_Wait (LAMMPS's halo exchange);
 * while the communicator changes every round between MPI_COMM_WORLD and a duplicate (the fast
 * path's communicator id misses), calls fail (MPI_ERRORS_RETURN: an Isend to a rank that does
 * not exist, an Irecv with a negative tag: the call is recorded, no request; NULL where a
 * request's address belongs), sends of a derived datatype freed after each use, a Waitall of more
 * requests than the fast path takes, blocking sends of such a type, and halfway a persistent exchange (the request table is
 * used from then on: Waitall takes the general path). Run with ZECOLL_BUFFER_EVENTS=1024, calls
 * also meet a full buffer. The trace checker matches every message and request.
 *
 * Messages per rank: 2 x ITERS + 1 (persistent) + BIG + 3 x ITERS / 40 (datatypes).
 *
 * usage: mpirun -np N mpi_fastpath          (N >= 2) */
#include "mt_common.h"

#define ITERS 400
#define BIG 10

static double value(int src, int it, int i) { return src * 1e6 + it * 10 + i; }

static void check_status(const MPI_Status *st, int src, int tag, int n) {
    int count = -1;
    MT_MPI(MPI_Get_count(st, MPI_DOUBLE, &count));
    if (st->MPI_SOURCE != src || st->MPI_TAG != tag || count != n)
        mt_die("status: source %d tag %d count %d, want %d %d %d", st->MPI_SOURCE, st->MPI_TAG, count, src, tag, n);
}

static void persistent(int peer, int tag) {
    double s = value(mt_rank, tag, 0), r = 0;
    MPI_Request rq[2];
    MT_MPI(MPI_Recv_init(&r, 1, MPI_DOUBLE, peer, tag, MPI_COMM_WORLD, &rq[0]));
    MT_MPI(MPI_Send_init(&s, 1, MPI_DOUBLE, peer, tag, MPI_COMM_WORLD, &rq[1]));
    MT_MPI(MPI_Startall(2, rq));
    MT_MPI(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
    MT_MPI(MPI_Request_free(&rq[0]));
    MT_MPI(MPI_Request_free(&rq[1]));
    if (r != value(peer, tag, 0)) mt_die("persistent: got %g", r);
}

static void big(int peer) {
    double s[BIG], r[BIG];
    MPI_Request rq[2 * BIG];
    for (int i = 0; i < BIG; i++) {
        s[i] = value(mt_rank, 7000 + i, 0);
        MT_MPI(MPI_Irecv(&r[i], 1, MPI_DOUBLE, peer, 7000 + i, MPI_COMM_WORLD, &rq[i]));
        MT_MPI(MPI_Isend(&s[i], 1, MPI_DOUBLE, peer, 7000 + i, MPI_COMM_WORLD, &rq[BIG + i]));
    }
    MT_MPI(MPI_Waitall(2 * BIG, rq, MPI_STATUSES_IGNORE));
    for (int i = 0; i < BIG; i++)
        if (r[i] != value(peer, 7000 + i, 0)) mt_die("big: message %d got %g", i, r[i]);
}

/* Sends whose size the wrapper takes from its per-thread cache of predefined datatypes (MPI_INT
 * beside MPI_DOUBLE) or asks of MPI (a derived type, freed after each use, so that its handle
 * is reused for one of another size): the checker matches each send's bytes with the receive's,
 * which come from the status. Three messages per call, the last a blocking send. */
static void datatypes(int peer, int round) {
    int n = 1 + round % 3, ib = round, ir = -1;
    double s[4], r[8];
    for (int i = 0; i < n; i++) s[i] = value(mt_rank, round, i);
    MPI_Datatype t;
    MT_MPI(MPI_Type_contiguous(n, MPI_DOUBLE, &t));
    MT_MPI(MPI_Type_commit(&t));
    MPI_Request rq[4];
    MPI_Status st[4];
    MT_MPI(MPI_Irecv(r, 8, MPI_DOUBLE, peer, 8000 + round, MPI_COMM_WORLD, &rq[0]));
    MT_MPI(MPI_Irecv(&ir, 1, MPI_INT, peer, 8500 + round, MPI_COMM_WORLD, &rq[1]));
    MT_MPI(MPI_Isend(s, 1, t, peer, 8000 + round, MPI_COMM_WORLD, &rq[2]));
    MT_MPI(MPI_Isend(&ib, 1, MPI_INT, peer, 8500 + round, MPI_COMM_WORLD, &rq[3]));
    MT_MPI(MPI_Waitall(4, rq, st));
    double r2[8];
    MT_MPI(MPI_Irecv(r2, 8, MPI_DOUBLE, peer, 8700 + round, MPI_COMM_WORLD, &rq[0]));
    MT_MPI(MPI_Send(s, 1, t, peer, 8700 + round, MPI_COMM_WORLD));
    MT_MPI(MPI_Wait(&rq[0], &st[1]));
    MT_MPI(MPI_Type_free(&t));
    check_status(&st[0], peer, 8000 + round, n);
    check_status(&st[1], peer, 8700 + round, n);
    if (ir != round || r[n - 1] != value(peer, round, n - 1) || r2[n - 1] != value(peer, round, n - 1))
        mt_die("datatypes round %d: got %d, %g, %g", round, ir, r[n - 1], r2[n - 1]);
}

/* NULL where the address of a request belongs: MPI reports it (MPI_ERRORS_RETURN); the wrappers,
 * which read handles before and after the call, must not read through it. (MPI_Comm_free(NULL)
 * faults inside Open MPI 4.1 itself, so it is not called here; its wrapper reads it guarded.) */
static void null_handles(void) {
    int flag = 0, idx = 0, out = 0, ind[2];
#define MT_FAILS(call) \
    if ((call) == MPI_SUCCESS) mt_die("%s succeeded", #call)
    MT_FAILS(MPI_Wait(NULL, MPI_STATUS_IGNORE));
    MT_FAILS(MPI_Test(NULL, &flag, MPI_STATUS_IGNORE));
    MT_FAILS(MPI_Request_free(NULL));
    MT_FAILS(MPI_Start(NULL));
    MT_FAILS(MPI_Cancel(NULL));
    MT_FAILS(MPI_Waitall(2, NULL, MPI_STATUSES_IGNORE));
    MT_FAILS(MPI_Testall(2, NULL, &flag, MPI_STATUSES_IGNORE));
    MT_FAILS(MPI_Waitany(2, NULL, &idx, MPI_STATUS_IGNORE));
    MT_FAILS(MPI_Waitsome(2, NULL, &out, ind, MPI_STATUSES_IGNORE));
#undef MT_FAILS
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    mt_init(argv[0], 2);
    int peer = mt_rank ^ 1;
    if (peer >= mt_size) peer = mt_rank;
    MPI_Comm dup;
    MT_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    double sb[4], rb[8];
    MPI_Request rq[4];
    MPI_Status st[4];
    for (int it = 0; it < ITERS; it++) {
        MPI_Comm comm = it % 2 ? dup : MPI_COMM_WORLD;
        int n = it % 5;
        for (int i = 0; i < n; i++) sb[i] = value(mt_rank, it, i);
        MT_MPI(MPI_Irecv(rb, 8, MPI_DOUBLE, peer, it, comm, &rq[0]));
        MT_MPI(MPI_Isend(sb, n, MPI_DOUBLE, peer, it, comm, &rq[1]));
        MT_MPI(MPI_Isend(sb, 1, MPI_DOUBLE, MPI_PROC_NULL, it, comm, &rq[2]));
        rq[3] = MPI_REQUEST_NULL;
        switch (it % 6) {
        case 0:
        case 1:
            MT_MPI(MPI_Waitall(4, rq, st));
            check_status(&st[0], peer, it, n);
            break;
        case 2:
        case 3: MT_MPI(MPI_Waitall(4, rq, MPI_STATUSES_IGNORE)); break;
        case 4: /* one at a time, the null handle too */
            MT_MPI(MPI_Wait(&rq[1], MPI_STATUS_IGNORE));
            MT_MPI(MPI_Wait(&rq[0], &st[0]));
            check_status(&st[0], peer, it, n);
            MT_MPI(MPI_Wait(&rq[2], MPI_STATUS_IGNORE));
            MT_MPI(MPI_Wait(&rq[3], MPI_STATUS_IGNORE));
            break;
        default:
            MT_MPI(MPI_Wait(&rq[0], MPI_STATUS_IGNORE));
            MT_MPI(MPI_Waitall(3, &rq[1], MPI_STATUSES_IGNORE));
        }
        for (int i = 0; i < n; i++)
            if (rb[i] != value(peer, it, i)) mt_die("round %d value %d: got %g", it, i, rb[i]);
        /* blocking sends (the partner's receive is posted first: MPI_Ssend cannot wait forever) */
        MT_MPI(MPI_Irecv(rb, 8, MPI_DOUBLE, peer, 20000 + it, comm, &rq[0]));
        if (it % 2) MT_MPI(MPI_Ssend(sb, n, MPI_DOUBLE, peer, 20000 + it, comm));
        else MT_MPI(MPI_Send(sb, n, MPI_DOUBLE, peer, 20000 + it, comm));
        MT_MPI(MPI_Send(sb, 1, MPI_DOUBLE, MPI_PROC_NULL, it, comm));
        MT_MPI(MPI_Wait(&rq[0], &st[0]));
        check_status(&st[0], peer, 20000 + it, n);
        for (int i = 0; i < n; i++)
            if (rb[i] != value(peer, it, i)) mt_die("round %d blocking send, value %d: got %g", it, i, rb[i]);
        if (it % 40 == 0) {
            MPI_Request bad = MPI_REQUEST_NULL;
            if (MPI_Isend(sb, 1, MPI_DOUBLE, mt_size + 5, 1, MPI_COMM_WORLD, &bad) == MPI_SUCCESS)
                mt_die("an Isend to rank %d succeeded", mt_size + 5);
            if (MPI_Irecv(rb, 1, MPI_DOUBLE, peer, -7, MPI_COMM_WORLD, &bad) == MPI_SUCCESS)
                mt_die("an Irecv with tag -7 succeeded");
            null_handles();
            datatypes(peer, it / 40);
        }
        if (it == ITERS / 4) big(peer);
        if (it == ITERS / 2) persistent(peer, 9000);
    }
    MT_MPI(MPI_Comm_free(&dup));
    mt_pass("the fast paths and every way out of them");
    MPI_Finalize();
    return 0;
}
