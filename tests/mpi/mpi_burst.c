/* SPDX-License-Identifier: MIT */
/* Bursts of requests completed by single calls: every rank posts BURST receives from its left
 * neighbour and BURST sends to its right one (distinct tags, one int each: the value says which
 * message it is) and completes them all with one MPI_Waitall, then the same with MPI_Testall
 * polling and with MPI_Waitsome. Run with ZECOLL_BUFFER_EVENTS=1024, a completing call records
 * more events than a buffer holds: its region is split over buffers (Enter and the first events
 * go out with the full buffer, the rest and the Leave follow), and calls start with the buffer
 * nearly full. The trace checker matches every message.
 *
 * Messages per rank: 3 * ROUNDS * BURST sends and as many receives.
 *
 * usage: mpirun -np N mpi_burst            (N >= 2) */
#include "mt_common.h"

#define BURST 600
#define ROUNDS 2

static void post(int round, int left, int right, int *rbuf, int *sbuf, MPI_Request *rq) {
    for (int i = 0; i < BURST; i++) {
        MT_MPI(MPI_Irecv(&rbuf[i], 1, MPI_INT, left, 1000 * round + i, MPI_COMM_WORLD, &rq[i]));
        sbuf[i] = round * 1000000 + mt_rank * BURST + i;
        MT_MPI(MPI_Isend(&sbuf[i], 1, MPI_INT, right, 1000 * round + i, MPI_COMM_WORLD, &rq[BURST + i]));
    }
}

static void check(int round, int left, const int *rbuf) {
    for (int i = 0; i < BURST; i++)
        if (rbuf[i] != round * 1000000 + left * BURST + i)
            mt_die("round %d message %d: got %d, want %d", round, i, rbuf[i], round * 1000000 + left * BURST + i);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    mt_init(argv[0], 2);
    int left = (mt_rank + mt_size - 1) % mt_size, right = (mt_rank + 1) % mt_size;
    static int rbuf[BURST], sbuf[BURST];
    static MPI_Request rq[2 * BURST];
    static MPI_Status st[2 * BURST];
    int round = 0;
    for (int r = 0; r < ROUNDS; r++) {
        /* one Waitall completes 2 * BURST requests */
        post(++round, left, right, rbuf, sbuf, rq);
        MT_MPI(MPI_Waitall(2 * BURST, rq, MPI_STATUSES_IGNORE));
        check(round, left, rbuf);
        /* Testall until done: each unsuccessful test records one test event */
        post(++round, left, right, rbuf, sbuf, rq);
        int flag = 0;
        while (!flag) MT_MPI(MPI_Testall(2 * BURST, rq, &flag, st));
        check(round, left, rbuf);
        /* Waitsome until every request completed */
        post(++round, left, right, rbuf, sbuf, rq);
        int left_to_do = 2 * BURST, idx[2 * BURST], out;
        while (left_to_do > 0) {
            MT_MPI(MPI_Waitsome(2 * BURST, rq, &out, idx, st));
            if (out == MPI_UNDEFINED) mt_die("Waitsome: no active request left, %d outstanding", left_to_do);
            left_to_do -= out;
        }
        check(round, left, rbuf);
    }
    mt_pass("bursts of requests completed by one call");
    MPI_Finalize();
    return 0;
}
