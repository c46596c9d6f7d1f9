/* SPDX-License-Identifier: MIT */
/* A token travels around the ring of all ranks, several rounds, with blocking MPI_Send/MPI_Recv.
 * Each round has its own tag, element count and direction; every rank adds its rank to every
 * element of the token before passing it on, so the receiver can check exactly which ranks the
 * token visited. Then one MPI_Sendrecv round (everybody sends right, receives from the left)
 * and one MPI_Sendrecv_replace round (the other way), and one MPI_Recv with MPI_STATUS_IGNORE.
 *
 * Messages per rank (n ranks): ROUNDS sends + ROUNDS receives, 1 Sendrecv, 1 Sendrecv_replace,
 * 1 extra send/receive pair. Deterministic: every message has a fixed source, destination,
 * tag and size.
 *
 * usage: mpirun -np N mpi_ring            (N >= 2) */
#include "mt_common.h"

#include <stdint.h>

typedef struct round_desc {
    int tag;
    int count; /* elements of the token */
    int dir;   /* +1: to rank+1, -1: to rank-1 */
    int use_double;
} round_desc_t;

/* Sizes from one element (eager) to 256 KiB (rendezvous on every transport). */
static const round_desc_t rounds[] = {
    {.tag = 100, .count = 1, .dir = +1},
    {.tag = 101, .count = 16, .dir = +1},
    {.tag = 102, .count = 1000, .dir = -1},
    {.tag = 103, .count = 65536, .dir = +1},
    {.tag = 104, .count = 300, .dir = +1, .use_double = 1},
    {.tag = 105, .count = 7, .dir = -1},
};
#define ROUNDS ((int)(sizeof rounds / sizeof rounds[0]))

static int64_t base_value(int round, int i)
{
    return (int64_t)round * 1000003 + (int64_t)i * 7;
}

/* Sum of the ranks the token visited before arriving at `rank`, starting at rank 0 and
 * travelling in direction dir. */
static int64_t visited_sum(int rank, int size, int dir)
{
    int64_t s = 0;
    for (int r = 0; r != rank; r = (r + dir + size) % size)
        s += r;
    return s;
}

static void run_round(int k, void *buf_i, double *buf_d)
{
    const round_desc_t *rd = &rounds[k];
    const int to = (mt_rank + rd->dir + mt_size) % mt_size;
    const int from = (mt_rank - rd->dir + mt_size) % mt_size;
    int32_t *bi = buf_i;
    MPI_Datatype type = rd->use_double ? MPI_DOUBLE : MPI_INT32_T;
    void *buf = rd->use_double ? (void *)buf_d : buf_i;
    MPI_Status st;

    if (mt_rank != 0) {
        MT_MPI(MPI_Recv(buf, rd->count, type, from, rd->tag, MPI_COMM_WORLD, &st));
        MT_REQUIRE(st.MPI_SOURCE == from && st.MPI_TAG == rd->tag,
                   "round %d: status source %d tag %d, expected %d/%d", k, st.MPI_SOURCE,
                   st.MPI_TAG, from, rd->tag);
        mt_expect_count(&st, type, rd->count, "ring token");
        const int64_t vs = visited_sum(mt_rank, mt_size, rd->dir);
        for (int i = 0; i < rd->count; ++i) {
            const int64_t want = base_value(k, i) + vs;
            const int64_t got = rd->use_double ? (int64_t)buf_d[i] : bi[i];
            MT_REQUIRE(got == want, "round %d: token[%d] = %lld on arrival, expected %lld", k, i,
                       (long long)got, (long long)want);
        }
    } else {
        for (int i = 0; i < rd->count; ++i) {
            if (rd->use_double)
                buf_d[i] = (double)base_value(k, i);
            else
                bi[i] = (int32_t)base_value(k, i);
        }
    }
    for (int i = 0; i < rd->count; ++i) {
        if (rd->use_double)
            buf_d[i] += mt_rank;
        else
            bi[i] += mt_rank;
    }
    MT_MPI(MPI_Send(buf, rd->count, type, to, rd->tag, MPI_COMM_WORLD));
    if (mt_rank == 0) {
        MT_MPI(MPI_Recv(buf, rd->count, type, from, rd->tag, MPI_COMM_WORLD, &st));
        mt_expect_count(&st, type, rd->count, "ring token (back at rank 0)");
        const int64_t all = (int64_t)mt_size * (mt_size - 1) / 2;
        for (int i = 0; i < rd->count; ++i) {
            const int64_t want = base_value(k, i) + all;
            const int64_t got = rd->use_double ? (int64_t)buf_d[i] : bi[i];
            MT_REQUIRE(got == want, "round %d: token[%d] = %lld after the full ring, expected %lld",
                       k, i, (long long)got, (long long)want);
        }
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    mt_init(argv[0], 2);

    int max_count = 0;
    for (int k = 0; k < ROUNDS; ++k)
        max_count = rounds[k].count > max_count ? rounds[k].count : max_count;
    int32_t *buf_i = calloc((size_t)max_count, sizeof *buf_i);
    double *buf_d = calloc((size_t)max_count, sizeof *buf_d);
    MT_REQUIRE(buf_i && buf_d, "out of memory");

    for (int k = 0; k < ROUNDS; ++k)
        run_round(k, buf_i, buf_d);

    /* One MPI_Sendrecv round: send my rank to the right, receive the left neighbour's. */
    const int right = (mt_rank + 1) % mt_size, left = (mt_rank - 1 + mt_size) % mt_size;
    int32_t mine[4] = {mt_rank, mt_rank * 10, mt_rank * 100, -mt_rank}, theirs[4] = {-1, -1, -1, -1};
    MPI_Status st;
    MT_MPI(MPI_Sendrecv(mine, 4, MPI_INT32_T, right, 200, theirs, 4, MPI_INT32_T, left, 200,
                        MPI_COMM_WORLD, &st));
    MT_REQUIRE(st.MPI_SOURCE == left && st.MPI_TAG == 200, "Sendrecv: status %d/%d",
               st.MPI_SOURCE, st.MPI_TAG);
    mt_expect_count(&st, MPI_INT32_T, 4, "Sendrecv");
    MT_REQUIRE(theirs[0] == left && theirs[1] == left * 10 && theirs[2] == left * 100 &&
                   theirs[3] == -left,
               "Sendrecv: got {%d,%d,%d,%d} from rank %d", theirs[0], theirs[1], theirs[2],
               theirs[3], left);

    /* One MPI_Sendrecv_replace round the other way (8 doubles). */
    double rep[8];
    for (int i = 0; i < 8; ++i)
        rep[i] = mt_rank + 0.5 * i;
    MT_MPI(MPI_Sendrecv_replace(rep, 8, MPI_DOUBLE, left, 201, right, 201, MPI_COMM_WORLD, &st));
    MT_REQUIRE(st.MPI_SOURCE == right, "Sendrecv_replace: source %d, expected %d", st.MPI_SOURCE,
               right);
    for (int i = 0; i < 8; ++i)
        MT_REQUIRE(rep[i] == right + 0.5 * i, "Sendrecv_replace: element %d = %g from rank %d", i,
                   rep[i], right);

    /* A receive with MPI_STATUS_IGNORE: the tool must find source, tag and size itself. */
    int64_t v = 1000 + mt_rank, got = -1;
    if (mt_rank % 2 == 0) { /* safe ordering without relying on eager sends */
        MT_MPI(MPI_Send(&v, 1, MPI_INT64_T, right, 300, MPI_COMM_WORLD));
        MT_MPI(MPI_Recv(&got, 1, MPI_INT64_T, left, 300, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    } else {
        MT_MPI(MPI_Recv(&got, 1, MPI_INT64_T, left, 300, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        MT_MPI(MPI_Send(&v, 1, MPI_INT64_T, right, 300, MPI_COMM_WORLD));
    }
    MT_REQUIRE(got == 1000 + left, "STATUS_IGNORE receive: got %lld, expected %d", (long long)got,
               1000 + left);

    free(buf_i);
    free(buf_d);
    char summary[160];
    snprintf(summary, sizeof summary,
             "%d ring rounds (tags 100-%d, 1..%d elements), Sendrecv, Sendrecv_replace, "
             "STATUS_IGNORE receive",
             ROUNDS, 100 + ROUNDS - 1, max_count);
    mt_pass(summary);
    MPI_Finalize();
    return 0;
}
