/* SPDX-License-Identifier: MIT */
/* MPI_THREAD_MULTIPLE: NTHREADS threads per rank communicate at the same time.
 *
 * The main thread duplicates MPI_COMM_WORLD once per thread (tcomm[t]). Then thread t, on
 * every rank concurrently:
 *   - exchanges ITERS messages with thread t of both neighbour ranks on MPI_COMM_WORLD
 *     (Isend/Irecv + Waitall; tags 1000 + 100 * t + iteration, so threads never match each
 *     other's messages) and a blocking MPI_Sendrecv on world (tag 5000 + t);
 *   - on its own communicator tcomm[t]: MPI_Sendrecv around the ring (tag t), MPI_Allreduce,
 *     MPI_Bcast; then duplicates tcomm[t] (MPI_Comm_dup is collective on tcomm[t], which only
 *     thread t uses on every rank, so this is legal concurrently with the other threads),
 *     runs an MPI_Allreduce on the duplicate and frees it.
 * The main thread joins the threads, checks them, and frees the tcomm[t].
 *
 * If the MPI library does not provide MPI_THREAD_MULTIPLE the program prints SKIP and exits
 * with 77 on every rank.
 *
 * usage: mpirun -np N mpi_threads        (N >= 2) */
#include "mt_common.h"

#include <pthread.h>
#include <stdint.h>

#define NTHREADS 4
#define ITERS 8
#define COUNT 32

typedef struct thread_arg {
    int t;
    MPI_Comm comm;
    int checks;
} thread_arg_t;

static int32_t value(int src, int dst, int t, int it, int i)
{
    return ((src * 16 + dst) * 16 + t) * 100000 + it * 100 + i;
}

static void *thread_main(void *p)
{
    thread_arg_t *a = p;
    const int t = a->t, r = mt_rank, n = mt_size;
    const int R = (r + 1) % n, L = (r - 1 + n) % n;
    int32_t sR[COUNT], sL[COUNT], rL[COUNT], rR[COUNT];

    for (int it = 0; it < ITERS; ++it) {
        const int tag = 1000 + 100 * t + it;
        const int cnt = 1 + (it * 5 + t) % COUNT;
        for (int i = 0; i < cnt; ++i) {
            sR[i] = value(r, R, t, it, i);
            sL[i] = value(r, L, t, it, i) ^ 0x40000000;
        }
        MPI_Request q[4];
        MPI_Status st[4];
        MT_MPI(MPI_Irecv(rL, COUNT, MPI_INT32_T, L, tag, MPI_COMM_WORLD, &q[0]));
        MT_MPI(MPI_Irecv(rR, COUNT, MPI_INT32_T, R, tag, MPI_COMM_WORLD, &q[1]));
        MT_MPI(MPI_Isend(sR, cnt, MPI_INT32_T, R, tag, MPI_COMM_WORLD, &q[2]));
        MT_MPI(MPI_Isend(sL, cnt, MPI_INT32_T, L, tag, MPI_COMM_WORLD, &q[3]));
        MT_MPI(MPI_Waitall(4, q, st));
        mt_expect_count(&st[0], MPI_INT32_T, cnt, "thread exchange (from left)");
        mt_expect_count(&st[1], MPI_INT32_T, cnt, "thread exchange (from right)");
        MT_REQUIRE(st[0].MPI_TAG == tag && st[1].MPI_TAG == tag, "thread %d: tags %d/%d, expected %d", t,
                   st[0].MPI_TAG, st[1].MPI_TAG, tag);
        for (int i = 0; i < cnt; ++i) {
            MT_REQUIRE(rL[i] == value(L, r, t, it, i), "thread %d iteration %d: from left [%d] = %d", t,
                       it, i, rL[i]);
            MT_REQUIRE(rR[i] == (value(R, r, t, it, i) ^ 0x40000000),
                       "thread %d iteration %d: from right [%d] = %d", t, it, i, rR[i]);
        }
        a->checks += 2;
    }

    /* blocking Sendrecv on world */
    {
        int32_t mine = value(r, R, t, 99, 0), theirs = -1;
        MPI_Status st;
        MT_MPI(MPI_Sendrecv(&mine, 1, MPI_INT32_T, R, 5000 + t, &theirs, 1, MPI_INT32_T, L, 5000 + t,
                            MPI_COMM_WORLD, &st));
        MT_REQUIRE(theirs == value(L, r, t, 99, 0), "thread %d: world Sendrecv got %d", t, theirs);
        a->checks++;
    }

    /* on the thread's own communicator */
    {
        int32_t mine = r * 10 + t, theirs = -1;
        MPI_Status st;
        MT_MPI(MPI_Sendrecv(&mine, 1, MPI_INT32_T, R, t, &theirs, 1, MPI_INT32_T, L, t, a->comm, &st));
        MT_REQUIRE(theirs == L * 10 + t, "thread %d: Sendrecv on its communicator got %d", t, theirs);
        int64_t in = (int64_t)(r + 1) * (t + 1), sum = -1;
        MT_MPI(MPI_Allreduce(&in, &sum, 1, MPI_INT64_T, MPI_SUM, a->comm));
        MT_REQUIRE(sum == (int64_t)(t + 1) * n * (n + 1) / 2, "thread %d: Allreduce %lld", t,
                   (long long)sum);
        int32_t b[4];
        for (int i = 0; i < 4; ++i)
            b[i] = r == t % n ? t * 1000 + i : -1;
        MT_MPI(MPI_Bcast(b, 4, MPI_INT32_T, t % n, a->comm));
        for (int i = 0; i < 4; ++i)
            MT_REQUIRE(b[i] == t * 1000 + i, "thread %d: Bcast b[%d] = %d", t, i, b[i]);

        MPI_Comm sub = MPI_COMM_NULL;
        MT_MPI(MPI_Comm_dup(a->comm, &sub));
        int32_t x = t + r, mx = -1;
        MT_MPI(MPI_Allreduce(&x, &mx, 1, MPI_INT32_T, MPI_MAX, sub));
        MT_REQUIRE(mx == t + n - 1, "thread %d: Allreduce on the duplicate: %d", t, mx);
        MT_MPI(MPI_Comm_free(&sub));
        a->checks += 4;
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int provided = MPI_THREAD_SINGLE;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    mt_init(argv[0], 2);
    if (provided < MPI_THREAD_MULTIPLE) {
        mt_info0("SKIP: MPI_THREAD_MULTIPLE not provided (got level %d)", provided);
        MPI_Finalize();
        return 77;
    }

    thread_arg_t args[NTHREADS];
    pthread_t th[NTHREADS];
    for (int t = 0; t < NTHREADS; ++t) {
        args[t] = (thread_arg_t){.t = t, .comm = MPI_COMM_NULL};
        MT_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &args[t].comm));
        char name[32];
        snprintf(name, sizeof name, "thread-%d", t);
        MT_MPI(MPI_Comm_set_name(args[t].comm, name));
    }
    for (int t = 0; t < NTHREADS; ++t) {
        int rc = pthread_create(&th[t], NULL, thread_main, &args[t]);
        MT_REQUIRE(rc == 0, "pthread_create: %s", strerror(rc));
    }
    int checks = 0;
    for (int t = 0; t < NTHREADS; ++t) {
        int rc = pthread_join(th[t], NULL);
        MT_REQUIRE(rc == 0, "pthread_join: %s", strerror(rc));
        MT_REQUIRE(args[t].checks == 2 * ITERS + 5, "thread %d made %d checks, expected %d", t,
                   args[t].checks, 2 * ITERS + 5);
        checks += args[t].checks;
    }
    for (int t = 0; t < NTHREADS; ++t)
        MT_MPI(MPI_Comm_free(&args[t].comm));

    char summary[160];
    snprintf(summary, sizeof summary,
             "%d threads per rank under MPI_THREAD_MULTIPLE, %d checks per rank, per-thread "
             "communicators duplicated and freed",
             NTHREADS, checks);
    mt_pass(summary);
    MPI_Finalize();
    return 0;
}
