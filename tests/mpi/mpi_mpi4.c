/* SPDX-License-Identifier: MIT */
/* The MPI-4.0 communication calls the collector records (mpi/mpi_api.spec, "MPI 4.0"), on an MPI
 * that declares them (MPICH 4.0; Open MPI 4.1 does not: the program skips itself, exit 77):
 *   - large-count forms: MPI_Send_c/MPI_Recv_c, MPI_Isend_c/MPI_Irecv_c + MPI_Waitall,
 *     MPI_Allreduce_c, MPI_Bcast_c, MPI_Alltoallv_c (MPI_Count count arrays);
 *   - persistent collectives: MPI_Allreduce_init started 3 times (MPI_Start, MPI_Wait),
 *     MPI_Bcast_init started twice through MPI_Startall + MPI_Waitall, both freed;
 *   - MPI_Isendrecv and MPI_Isendrecv_replace around the ring;
 *   - partitioned communication: rank 2k sends PARTS partitions to rank 2k+1 (MPI_Psend_init,
 *     MPI_Precv_init, MPI_Start, MPI_Pready per partition, MPI_Wait).
 * Every value received is checked. Point-to-point messages (n ranks, n even): n Send_c, n Isend_c,
 * n Isendrecv, n Isendrecv_replace, n/2 partitioned: 4.5 n (18 with 4 ranks).
 *
 * usage: mpirun -np N mpi_mpi4   (N even, >= 2) */
#include "mt_common.h"

#include <stdbool.h>

#if MPI_VERSION < 4
int main(void)
{
    printf("mpi_mpi4: SKIP: this mpi.h is MPI %d.%d\n", MPI_VERSION, MPI_SUBVERSION);
    return 77;
}
#else

#define N 1000
#define PARTS 4

static int right(void) { return (mt_rank + 1) % mt_size; }
static int left(void) { return (mt_rank + mt_size - 1) % mt_size; }

static void fill(int *b, MPI_Count n, int who, int salt)
{
    for (MPI_Count i = 0; i < n; i++)
        b[i] = who * 100000 + salt * 1000 + (int)(i % 1000);
}

static void expect(const int *b, MPI_Count n, int who, int salt, const char *what)
{
    for (MPI_Count i = 0; i < n; i++)
        MT_REQUIRE(b[i] == who * 100000 + salt * 1000 + (int)(i % 1000), "%s: element %lld is %d", what,
                   (long long)i, b[i]);
}

static void large_count(int *s, int *r)
{
    MPI_Status st;
    fill(s, N, mt_rank, 1);
    if (mt_rank % 2 == 0) { /* even ranks send first: no deadlock for any even n */
        MT_MPI(MPI_Send_c(s, N, MPI_INT, right(), 1, MPI_COMM_WORLD));
        MT_MPI(MPI_Recv_c(r, N, MPI_INT, left(), 1, MPI_COMM_WORLD, &st));
    } else {
        MT_MPI(MPI_Recv_c(r, N, MPI_INT, left(), 1, MPI_COMM_WORLD, &st));
        MT_MPI(MPI_Send_c(s, N, MPI_INT, right(), 1, MPI_COMM_WORLD));
    }
    MPI_Count got = 0;
    MT_MPI(MPI_Get_count_c(&st, MPI_INT, &got));
    MT_REQUIRE(got == N, "MPI_Recv_c: %lld elements", (long long)got);
    expect(r, N, left(), 1, "MPI_Recv_c");

    MPI_Request q[2];
    fill(s, N / 2, mt_rank, 2);
    MT_MPI(MPI_Irecv_c(r, N / 2, MPI_INT, left(), 2, MPI_COMM_WORLD, &q[0]));
    MT_MPI(MPI_Isend_c(s, N / 2, MPI_INT, right(), 2, MPI_COMM_WORLD, &q[1]));
    MT_MPI(MPI_Waitall(2, q, MPI_STATUSES_IGNORE));
    expect(r, N / 2, left(), 2, "MPI_Irecv_c");

    int one = mt_rank + 1, sum = 0;
    MT_MPI(MPI_Allreduce_c(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    MT_REQUIRE(sum == mt_size * (mt_size + 1) / 2, "MPI_Allreduce_c: %d", sum);
    fill(r, 10, 0, 3);
    MT_MPI(MPI_Bcast_c(r, 10, MPI_INT, 0, MPI_COMM_WORLD));
    expect(r, 10, 0, 3, "MPI_Bcast_c");

    /* every rank sends k+1 ints to rank k */
    MPI_Count sc[64], rc[64];
    MPI_Aint sd[64], rd[64];
    MT_REQUIRE(mt_size <= 64, "too many ranks");
    for (int k = 0; k < mt_size; k++) {
        sc[k] = k + 1;
        sd[k] = k == 0 ? 0 : sd[k - 1] + sc[k - 1];
        rc[k] = mt_rank + 1;
        rd[k] = k * (mt_rank + 1);
    }
    for (int i = 0; i < N; i++) s[i] = mt_rank;
    MT_MPI(MPI_Alltoallv_c(s, sc, sd, MPI_INT, r, rc, rd, MPI_INT, MPI_COMM_WORLD));
    for (int k = 0; k < mt_size; k++)
        MT_REQUIRE(r[rd[k]] == k, "MPI_Alltoallv_c: from %d got %d", k, r[rd[k]]);
}

static void persistent(void)
{
    int in = 0, out = 0;
    MPI_Request ar, br[1];
    MT_MPI(MPI_Allreduce_init(&in, &out, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD, MPI_INFO_NULL, &ar));
    for (int i = 0; i < 3; i++) {
        in = mt_rank * 10 + i;
        MT_MPI(MPI_Start(&ar));
        MT_MPI(MPI_Wait(&ar, MPI_STATUS_IGNORE));
        MT_REQUIRE(out == (mt_size - 1) * 10 + i, "MPI_Allreduce_init round %d: %d", i, out);
    }
    MT_MPI(MPI_Request_free(&ar));
    int b[8];
    MT_MPI(MPI_Bcast_init(b, 8, MPI_INT, 1, MPI_COMM_WORLD, MPI_INFO_NULL, &br[0]));
    for (int i = 0; i < 2; i++) {
        fill(b, 8, mt_rank == 1 ? 1 : 9, 4 + i);
        MT_MPI(MPI_Startall(1, br));
        MT_MPI(MPI_Waitall(1, br, MPI_STATUSES_IGNORE));
        expect(b, 8, 1, 4 + i, "MPI_Bcast_init");
    }
    MT_MPI(MPI_Request_free(&br[0]));
}

static void isendrecv(int *s, int *r)
{
    MPI_Request q;
    fill(s, 100, mt_rank, 5);
    MT_MPI(MPI_Isendrecv(s, 100, MPI_INT, right(), 5, r, 100, MPI_INT, left(), 5, MPI_COMM_WORLD, &q));
    /* not the status: MPICH 4.0.2 leaves an Isendrecv's status unset (zeros, measured) */
    MT_MPI(MPI_Wait(&q, MPI_STATUS_IGNORE));
    expect(r, 100, left(), 5, "MPI_Isendrecv");
    fill(r, 50, mt_rank, 6);
    MT_MPI(MPI_Isendrecv_replace(r, 50, MPI_INT, left(), 6, right(), 6, MPI_COMM_WORLD, &q));
    MT_MPI(MPI_Wait(&q, MPI_STATUS_IGNORE));
    expect(r, 50, right(), 6, "MPI_Isendrecv_replace");
}

static void partitioned(int *s, int *r)
{
    MPI_Request q;
    bool sender = mt_rank % 2 == 0;
    int peer = sender ? mt_rank + 1 : mt_rank - 1;
    if (sender) {
        MT_MPI(MPI_Psend_init(s, PARTS, N / PARTS, MPI_INT, peer, 7, MPI_COMM_WORLD, MPI_INFO_NULL, &q));
        fill(s, N, mt_rank, 7);
        MT_MPI(MPI_Start(&q));
        for (int p = PARTS - 1; p >= 0; p--) MT_MPI(MPI_Pready(p, q));
    } else {
        MT_MPI(MPI_Precv_init(r, PARTS, N / PARTS, MPI_INT, peer, 7, MPI_COMM_WORLD, MPI_INFO_NULL, &q));
        MT_MPI(MPI_Start(&q));
    }
    MT_MPI(MPI_Wait(&q, MPI_STATUS_IGNORE));
    if (!sender) expect(r, N, peer, 7, "MPI_Precv_init");
    MT_MPI(MPI_Request_free(&q));
}

int main(int argc, char **argv)
{
    MT_MPI(MPI_Init(&argc, &argv));
    mt_init(argv[0], 2);
    MT_REQUIRE(mt_size % 2 == 0, "needs an even number of ranks");
    static int s[N], r[N];
    large_count(s, r);
    persistent();
    isendrecv(s, r);
    partitioned(s, r);
    mt_pass("large-count, persistent collectives, Isendrecv, partitioned");
    MT_MPI(MPI_Finalize());
    return 0;
}
#endif
