/* SPDX-License-Identifier: MIT */
/* Collectives on sub-communicators.
 *
 *   world --MPI_Comm_split(color = rank % 2, key = rank)--> half   (even ranks | odd ranks)
 *   half  --MPI_Comm_dup-->                                  dup
 *   half  --MPI_Intercomm_create(leader 0, peer world, remote leader world 1 or 0)--> inter
 *
 * On `half` and on `dup` (in that order) every rank runs, with verified results:
 *   Bcast, Reduce, Allreduce (MAX, and SUM with MPI_IN_PLACE), Gather, Gatherv, Scatter,
 *   Scatterv, Allgather, Allgatherv, Alltoall, Alltoallv, Barrier, Scan, Exscan,
 *   Reduce_scatter_block
 * with roots spread over the communicator. On `inter` rank i of each half exchanges one
 * message with rank i of the other half (MPI_Sendrecv). World also gets a Barrier and an
 * Allreduce. All communicators are freed with MPI_Comm_free; one more, a dup of world, first
 * fails to be freed (an attribute's delete callback refuses) and is used once more. The halves
 * are named "even" and "odd", the dup of world by every rank but 0, each differently.
 *
 * usage: mpirun -np N mpi_coll_split      (N >= 2; 4 in the tests) */
#include "mt_common.h"

#include <stdint.h>

#define MAXN 64 /* ranks per sub-communicator supported by the fixed-size buffers */

static int comm_rank(MPI_Comm c)
{
    int r;
    MT_MPI(MPI_Comm_rank(c, &r));
    return r;
}

static int comm_size(MPI_Comm c)
{
    int n;
    MT_MPI(MPI_Comm_size(c, &n));
    return n;
}

/* All collectives on c; `salt` makes the values differ between communicators. Returns the
 * number of collective calls made. */
static int run_collectives(MPI_Comm c, const char *name, int salt)
{
    const int r = comm_rank(c), n = comm_size(c);
    MT_REQUIRE(n <= MAXN, "%s: %d ranks, at most %d supported", name, n, MAXN);
    int calls = 0;

    /* Bcast from the last rank. */
    {
        int32_t buf[8];
        for (int i = 0; i < 8; ++i)
            buf[i] = (r == n - 1) ? salt * 100 + i : -1;
        MT_MPI(MPI_Bcast(buf, 8, MPI_INT32_T, n - 1, c));
        ++calls;
        for (int i = 0; i < 8; ++i)
            MT_REQUIRE(buf[i] == salt * 100 + i, "%s Bcast: buf[%d] = %d", name, i, buf[i]);
    }
    /* Reduce (SUM) to rank 0. */
    {
        int64_t in[4], out[4] = {-1, -1, -1, -1};
        for (int i = 0; i < 4; ++i)
            in[i] = (int64_t)(r + 1) * (i + 1);
        MT_MPI(MPI_Reduce(in, out, 4, MPI_INT64_T, MPI_SUM, 0, c));
        ++calls;
        if (r == 0)
            for (int i = 0; i < 4; ++i)
                MT_REQUIRE(out[i] == (int64_t)(i + 1) * n * (n + 1) / 2, "%s Reduce: out[%d] = %lld",
                           name, i, (long long)out[i]);
    }
    /* Allreduce MAX, then SUM in place. */
    {
        int32_t in = r * 3 + salt, out = -1;
        MT_MPI(MPI_Allreduce(&in, &out, 1, MPI_INT32_T, MPI_MAX, c));
        ++calls;
        MT_REQUIRE(out == (n - 1) * 3 + salt, "%s Allreduce MAX: %d", name, out);
        double v[3];
        for (int i = 0; i < 3; ++i)
            v[i] = r + i;
        MT_MPI(MPI_Allreduce(MPI_IN_PLACE, v, 3, MPI_DOUBLE, MPI_SUM, c));
        ++calls;
        for (int i = 0; i < 3; ++i)
            MT_REQUIRE(v[i] == n * (n - 1) / 2.0 + (double)n * i, "%s Allreduce SUM in place: v[%d] = %g",
                       name, i, v[i]);
    }
    /* Gather two ints per rank at rank 1 % n. */
    {
        const int root = 1 % n;
        int32_t in[2] = {r, salt}, out[2 * MAXN];
        MT_MPI(MPI_Gather(in, 2, MPI_INT32_T, out, 2, MPI_INT32_T, root, c));
        ++calls;
        if (r == root)
            for (int j = 0; j < n; ++j)
                MT_REQUIRE(out[2 * j] == j && out[2 * j + 1] == salt, "%s Gather: slot %d = {%d,%d}",
                           name, j, out[2 * j], out[2 * j + 1]);
    }
    /* Gatherv at rank 0: rank j sends j + 1 ints. */
    {
        int32_t in[MAXN], out[MAXN * (MAXN + 1) / 2];
        int counts[MAXN], displs[MAXN], total = 0;
        for (int j = 0; j < n; ++j) {
            counts[j] = j + 1;
            displs[j] = total;
            total += counts[j];
        }
        for (int k = 0; k <= r; ++k)
            in[k] = r * 10 + k;
        MT_MPI(MPI_Gatherv(in, r + 1, MPI_INT32_T, out, counts, displs, MPI_INT32_T, 0, c));
        ++calls;
        if (r == 0)
            for (int j = 0; j < n; ++j)
                for (int k = 0; k <= j; ++k)
                    MT_REQUIRE(out[displs[j] + k] == j * 10 + k, "%s Gatherv: rank %d element %d = %d",
                               name, j, k, out[displs[j] + k]);
    }
    /* Scatter three ints per rank from rank 0. */
    {
        int32_t in[3 * MAXN], out[3] = {-1, -1, -1};
        if (r == 0)
            for (int j = 0; j < 3 * n; ++j)
                in[j] = j + salt;
        MT_MPI(MPI_Scatter(in, 3, MPI_INT32_T, out, 3, MPI_INT32_T, 0, c));
        ++calls;
        for (int k = 0; k < 3; ++k)
            MT_REQUIRE(out[k] == 3 * r + k + salt, "%s Scatter: out[%d] = %d", name, k, out[k]);
    }
    /* Scatterv from the last rank: rank j gets j + 2 ints. */
    {
        int32_t in[MAXN * (MAXN + 3) / 2 + MAXN], out[MAXN + 2];
        int counts[MAXN], displs[MAXN], total = 0;
        for (int j = 0; j < n; ++j) {
            counts[j] = j + 2;
            displs[j] = total;
            total += counts[j];
        }
        if (r == n - 1)
            for (int j = 0; j < n; ++j)
                for (int k = 0; k < counts[j]; ++k)
                    in[displs[j] + k] = j * 100 + k;
        MT_MPI(MPI_Scatterv(in, counts, displs, MPI_INT32_T, out, r + 2, MPI_INT32_T, n - 1, c));
        ++calls;
        for (int k = 0; k < r + 2; ++k)
            MT_REQUIRE(out[k] == r * 100 + k, "%s Scatterv: out[%d] = %d", name, k, out[k]);
    }
    /* Allgather one int. */
    {
        int32_t in = r * r + salt, out[MAXN];
        MT_MPI(MPI_Allgather(&in, 1, MPI_INT32_T, out, 1, MPI_INT32_T, c));
        ++calls;
        for (int j = 0; j < n; ++j)
            MT_REQUIRE(out[j] == j * j + salt, "%s Allgather: out[%d] = %d", name, j, out[j]);
    }
    /* Allgatherv: rank j contributes j + 1 doubles. */
    {
        double in[MAXN], out[MAXN * (MAXN + 1) / 2];
        int counts[MAXN], displs[MAXN], total = 0;
        for (int j = 0; j < n; ++j) {
            counts[j] = j + 1;
            displs[j] = total;
            total += counts[j];
        }
        for (int k = 0; k <= r; ++k)
            in[k] = r + k / 8.0;
        MT_MPI(MPI_Allgatherv(in, r + 1, MPI_DOUBLE, out, counts, displs, MPI_DOUBLE, c));
        ++calls;
        for (int j = 0; j < n; ++j)
            for (int k = 0; k <= j; ++k)
                MT_REQUIRE(out[displs[j] + k] == j + k / 8.0, "%s Allgatherv: rank %d element %d = %g",
                           name, j, k, out[displs[j] + k]);
    }
    /* Alltoall: one int to every rank. */
    {
        int32_t in[MAXN], out[MAXN];
        for (int j = 0; j < n; ++j)
            in[j] = r * 100 + j;
        MT_MPI(MPI_Alltoall(in, 1, MPI_INT32_T, out, 1, MPI_INT32_T, c));
        ++calls;
        for (int j = 0; j < n; ++j)
            MT_REQUIRE(out[j] == j * 100 + r, "%s Alltoall: from %d got %d", name, j, out[j]);
    }
    /* Alltoallv: rank r sends j + 1 ints to rank j (so receives r + 1 ints from everybody). */
    {
        int32_t in[MAXN * (MAXN + 1) / 2], out[MAXN * (MAXN + 1)];
        int scounts[MAXN], sdispls[MAXN], rcounts[MAXN], rdispls[MAXN], st = 0, rt = 0;
        for (int j = 0; j < n; ++j) {
            scounts[j] = j + 1;
            sdispls[j] = st;
            st += scounts[j];
            rcounts[j] = r + 1;
            rdispls[j] = rt;
            rt += rcounts[j];
        }
        for (int j = 0; j < n; ++j)
            for (int k = 0; k < scounts[j]; ++k)
                in[sdispls[j] + k] = r * 1000 + j * 10 + k;
        MT_MPI(MPI_Alltoallv(in, scounts, sdispls, MPI_INT32_T, out, rcounts, rdispls, MPI_INT32_T,
                             c));
        ++calls;
        for (int j = 0; j < n; ++j)
            for (int k = 0; k < rcounts[j]; ++k)
                MT_REQUIRE(out[rdispls[j] + k] == j * 1000 + r * 10 + k,
                           "%s Alltoallv: from %d element %d = %d", name, j, k, out[rdispls[j] + k]);
    }
    MT_MPI(MPI_Barrier(c));
    ++calls;
    /* Scan and Exscan (SUM of rank + 1). */
    {
        int64_t in = r + 1, out = -1;
        MT_MPI(MPI_Scan(&in, &out, 1, MPI_INT64_T, MPI_SUM, c));
        ++calls;
        MT_REQUIRE(out == (int64_t)(r + 1) * (r + 2) / 2, "%s Scan: %lld", name, (long long)out);
        out = -1;
        MT_MPI(MPI_Exscan(&in, &out, 1, MPI_INT64_T, MPI_SUM, c));
        ++calls;
        if (r > 0) /* undefined on rank 0 */
            MT_REQUIRE(out == (int64_t)r * (r + 1) / 2, "%s Exscan: %lld", name, (long long)out);
    }
    /* Reduce_scatter_block: two ints per rank. */
    {
        int32_t in[2 * MAXN], out[2] = {-1, -1};
        for (int d = 0; d < n; ++d)
            for (int k = 0; k < 2; ++k)
                in[2 * d + k] = r + d + k;
        MT_MPI(MPI_Reduce_scatter_block(in, out, 2, MPI_INT32_T, MPI_SUM, c));
        ++calls;
        for (int k = 0; k < 2; ++k)
            MT_REQUIRE(out[k] == n * (n - 1) / 2 + n * (r + k), "%s Reduce_scatter_block: out[%d] = %d",
                       name, k, out[k]);
    }
    return calls;
}

/* The delete callback of the attribute on `kept`: refuses once (an error fails MPI_Comm_free),
 * then agrees once refusals is set to -1. */
static int refusals;
static int refuse_delete(MPI_Comm c, int keyval, void *attr, void *extra)
{
    (void)c, (void)keyval, (void)attr, (void)extra;
    if (refusals < 0) return MPI_SUCCESS;
    refusals++;
    return MPI_ERR_OTHER;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    mt_init(argv[0], 2);
    const int wr = mt_rank, ws = mt_size, color = wr % 2;

    MPI_Comm half = MPI_COMM_NULL, dup = MPI_COMM_NULL, inter = MPI_COMM_NULL;
    MT_MPI(MPI_Comm_split(MPI_COMM_WORLD, color, wr, &half));
    MT_MPI(MPI_Comm_set_name(half, color ? "odd" : "even"));
    const int hr = comm_rank(half), hs = comm_size(half);
    MT_REQUIRE(hs == (ws + 1 - color) / 2 && hr == wr / 2,
               "split: rank %d of %d in the %s half, expected %d of %d", hr, hs,
               color ? "odd" : "even", wr / 2, (ws + 1 - color) / 2);
    /* The members of the half, as world ranks. */
    {
        MPI_Group wg, hg;
        int hranks[MAXN], wranks[MAXN];
        MT_REQUIRE(hs <= MAXN, "too many ranks");
        MT_MPI(MPI_Comm_group(MPI_COMM_WORLD, &wg));
        MT_MPI(MPI_Comm_group(half, &hg));
        for (int i = 0; i < hs; ++i)
            hranks[i] = i;
        MT_MPI(MPI_Group_translate_ranks(hg, hs, hranks, wg, wranks));
        for (int i = 0; i < hs; ++i)
            MT_REQUIRE(wranks[i] == 2 * i + color, "half rank %d is world rank %d", i, wranks[i]);
        MT_MPI(MPI_Group_free(&hg));
        MT_MPI(MPI_Group_free(&wg));
    }
    MT_MPI(MPI_Comm_dup(half, &dup));
    int cmp = -1;
    MT_MPI(MPI_Comm_compare(half, dup, &cmp));
    MT_REQUIRE(cmp == MPI_CONGRUENT, "Comm_compare(half, dup) = %d, expected MPI_CONGRUENT", cmp);

    int calls = run_collectives(half, "half", 1 + color);
    calls += run_collectives(dup, "dup", 11 + color);

    /* Intercommunicator between the halves; leaders are world ranks 0 and 1. */
    MT_MPI(MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, color ? 0 : 1, 77, &inter));
    int is_inter = 0, rsize = -1;
    MT_MPI(MPI_Comm_test_inter(inter, &is_inter));
    MT_MPI(MPI_Comm_remote_size(inter, &rsize));
    MT_REQUIRE(is_inter, "Intercomm_create did not give an intercommunicator");
    MT_REQUIRE(rsize == (ws + color) / 2, "remote group of %d ranks, expected %d", rsize,
               (ws + color) / 2);
    int exchanged = 0;
    if (hr < rsize) { /* rank i of one half <-> rank i of the other */
        int32_t mine = wr, theirs = -1;
        MPI_Status st;
        MT_MPI(MPI_Sendrecv(&mine, 1, MPI_INT32_T, hr, 78, &theirs, 1, MPI_INT32_T, hr, 78, inter,
                            &st));
        MT_REQUIRE(st.MPI_SOURCE == hr, "intercomm Sendrecv: source %d, expected %d", st.MPI_SOURCE,
                   hr);
        MT_REQUIRE(theirs == 2 * hr + (1 - color), "intercomm Sendrecv: got world rank %d, expected %d",
                   theirs, 2 * hr + (1 - color));
        exchanged = 1;
    }

    /* Some world traffic too. */
    MT_MPI(MPI_Barrier(MPI_COMM_WORLD));
    int32_t x = exchanged, nx = -1;
    MT_MPI(MPI_Allreduce(&x, &nx, 1, MPI_INT32_T, MPI_SUM, MPI_COMM_WORLD));
    MT_REQUIRE(nx == 2 * (ws / 2), "%d ranks exchanged over the intercommunicator, expected %d", nx,
               2 * (ws / 2));

    /* A free that fails: an attribute's delete callback refuses (MPI 4.1 section 7.7.4), the
     * communicator lives on and is used again, then freed for good. Its later collective must
     * keep its definition (the checker counts the definitions exactly). */
    MPI_Comm kept = MPI_COMM_NULL;
    MT_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &kept));
    MT_MPI(MPI_Comm_set_errhandler(kept, MPI_ERRORS_RETURN));
    int keyval = MPI_KEYVAL_INVALID;
    MT_MPI(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, refuse_delete, &keyval, NULL));
    MT_MPI(MPI_Comm_set_attr(kept, keyval, &refusals));
    MT_MPI(MPI_Barrier(kept));
    /* named after its definition was made, differently per rank and not at all on rank 0: the
     * trace takes the lowest naming rank's name ("kept_by_rank_1") */
    if (wr > 0) {
        char name[32];
        snprintf(name, sizeof(name), "kept_by_rank_%d", wr);
        MT_MPI(MPI_Comm_set_name(kept, name));
    }
    MPI_Comm before = kept;
    int rc = MPI_Comm_free(&kept);
    MT_REQUIRE(rc != MPI_SUCCESS && kept == before && refusals == 1,
               "MPI_Comm_free with a refusing delete callback: rc %d, handle %s, %d refusals", rc,
               kept == before ? "kept" : "changed", refusals);
    int32_t y = wr, ny = -1;
    MT_MPI(MPI_Allreduce(&y, &ny, 1, MPI_INT32_T, MPI_SUM, kept));
    MT_REQUIRE(ny == ws * (ws - 1) / 2, "Allreduce on the communicator kept alive: %d", ny);
    refusals = -1; /* now the callback agrees */
    MT_MPI(MPI_Comm_free(&kept));
    MT_MPI(MPI_Comm_free_keyval(&keyval));

    MT_MPI(MPI_Comm_free(&inter));
    MT_MPI(MPI_Comm_free(&dup));
    MT_MPI(MPI_Comm_free(&half));
    MT_REQUIRE(inter == MPI_COMM_NULL && dup == MPI_COMM_NULL && half == MPI_COMM_NULL,
               "MPI_Comm_free did not reset the handles");

    char summary[200];
    snprintf(summary, sizeof summary,
             "split into 2 halves + dup: %d verified collective calls per rank, intercommunicator "
             "exchange, communicators freed",
             calls);
    mt_pass(summary);
    MPI_Finalize();
    return 0;
}
