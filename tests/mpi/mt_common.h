/* SPDX-License-Identifier: MIT */
/* mt_common.h: helpers shared by the MPI test programs (header-only).
 *
 * Every program checks its own results. A failed check prints
 *   "<program>: rank <r>: FAIL: <message>"
 * on stderr and ends the whole job with MPI_Abort(MPI_COMM_WORLD, 1), so mpirun exits non-zero
 * and no rank is left waiting for a message that never comes. MPI calls go through MT_MPI(),
 * which reports the failed call with MPI's error string (MPI_COMM_WORLD is switched to
 * MPI_ERRORS_RETURN by mt_init(); communicators derived from it inherit that). */
#ifndef MT_COMMON_H
#define MT_COMMON_H

#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__GNUC__)
#define MT_PRINTF(a, b) __attribute__((format(printf, a, b)))
#define MT_UNUSED __attribute__((unused))
#else
#define MT_PRINTF(a, b)
#define MT_UNUSED
#endif

static const char *mt_prog = "mpi_test";
static int mt_rank = -1;
static int mt_size = 0;

MT_UNUSED MT_PRINTF(1, 2) static _Noreturn void mt_die(const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "%s: rank %d: FAIL: %s\n", mt_prog, mt_rank, msg);
    fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
    exit(1); /* MPI_Abort does not return; keep the compiler and a broken MPI honest */
}

MT_UNUSED static void mt_fail_call(const char *expr, int rc, const char *file, int line)
{
    char err[MPI_MAX_ERROR_STRING] = "";
    int len = 0;
    if (MPI_Error_string(rc, err, &len) != MPI_SUCCESS)
        snprintf(err, sizeof err, "unknown MPI error");
    mt_die("%s returned %d (%s) at %s:%d", expr, rc, err, file, line);
}

/* Check an MPI call. */
#define MT_MPI(call)                                                                          \
    do {                                                                                      \
        int mt_rc_ = (call);                                                                  \
        if (mt_rc_ != MPI_SUCCESS)                                                            \
            mt_fail_call(#call, mt_rc_, __FILE__, __LINE__);                                  \
    } while (0)

/* Check a condition. */
#define MT_REQUIRE(cond, ...)                                                                 \
    do {                                                                                      \
        if (!(cond))                                                                          \
            mt_die(__VA_ARGS__);                                                              \
    } while (0)

/* After MPI_Init/MPI_Init_thread: remember the program name, rank and size, make MPI errors
 * return codes, and require at least min_ranks ranks. */
MT_UNUSED static void mt_init(const char *argv0, int min_ranks)
{
    const char *slash = argv0 ? strrchr(argv0, '/') : NULL;
    mt_prog = slash ? slash + 1 : (argv0 ? argv0 : "mpi_test");
    MT_MPI(MPI_Comm_rank(MPI_COMM_WORLD, &mt_rank));
    MT_MPI(MPI_Comm_size(MPI_COMM_WORLD, &mt_size));
    MT_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    MT_REQUIRE(mt_size >= min_ranks, "needs at least %d ranks, got %d", min_ranks, mt_size);
}

/* Print "<program>: <message>" on stdout from rank 0 only. */
MT_UNUSED MT_PRINTF(1, 2) static void mt_info0(const char *fmt, ...)
{
    if (mt_rank != 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    printf("%s: ", mt_prog);
    vprintf(fmt, ap);
    printf("\n");
    va_end(ap);
    fflush(stdout);
}

/* Check the element count of a received message. */
MT_UNUSED static void mt_expect_count(const MPI_Status *st, MPI_Datatype type, int want,
                                      const char *what)
{
    int got = -1;
    MT_MPI(MPI_Get_count(st, type, &got));
    MT_REQUIRE(got == want, "%s: received %d elements, expected %d", what, got, want);
}

/* Every rank reports success; rank 0 prints PASS once all did. */
MT_UNUSED static void mt_pass(const char *summary)
{
    int ok = 1, all = 0;
    MT_MPI(MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    MT_REQUIRE(all == mt_size, "only %d of %d ranks finished", all, mt_size);
    mt_info0("PASS: %s (%d ranks)", summary, mt_size);
}

#endif /* MT_COMMON_H */
