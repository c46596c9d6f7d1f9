/* Fortran-level interposer, variant B: the Fortran entry point reads what a recorder needs (C
 * handles via MPI_*_f2c, counts) and forwards the untouched Fortran arguments to Open MPI's
 * Fortran profiling entry (pmpi_send_, pmpi_send_f08_), so Open MPI itself translates
 * MPI_IN_PLACE, MPI_BOTTOM, MPI_STATUS_IGNORE, LOGICALs, strings. Shown for Send, Allreduce,
 * Isend and Wait (the request handle seen at Isend and at Wait is the same C MPI_Request). */
#include <mpi.h>
#include <stdio.h>
#include <unistd.h>

#define FSAYF(...) do { \
        char line_[160]; \
        int n_ = snprintf(line_, sizeof line_, __VA_ARGS__); \
        if (n_ > 0) { ssize_t w_ = write(2, line_, (size_t)n_); (void)w_; } \
    } while (0)

/* Open MPI's Fortran PMPI entry points (libmpi_mpifh.so, libmpi_usempif08.so) */
void pmpi_send_(void *, MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *);
void pmpi_allreduce_(void *, void *, MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *);
void pmpi_isend_(void *, MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *);
void pmpi_wait_(MPI_Fint *, MPI_Fint *, MPI_Fint *);
void pmpi_send_f08_(void *, MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *);
void pmpi_allreduce_f08_(void *, void *, MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *);
void pmpi_isend_f08_(void *, MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *);
void pmpi_wait_f08_(MPI_Fint *, MPI_Fint *, MPI_Fint *);

static void rec(const char *fn, MPI_Fint count, MPI_Fint type, MPI_Fint comm)
{
    int tsize = 0, rank = -1;
    PMPI_Type_size(PMPI_Type_f2c(type), &tsize);
    PMPI_Comm_rank(PMPI_Comm_f2c(comm), &rank);
    FSAYF("[pid %d] [FB %s] bytes=%d comm_rank=%d\n", (int)getpid(), fn, (int)count * tsize, rank);
}

#define DEFINE_ALL(SUF)                                                                           \
void mpi_send##SUF(void *b, MPI_Fint *c, MPI_Fint *t, MPI_Fint *d, MPI_Fint *g, MPI_Fint *m, MPI_Fint *e); \
void mpi_send##SUF(void *b, MPI_Fint *c, MPI_Fint *t, MPI_Fint *d, MPI_Fint *g, MPI_Fint *m, MPI_Fint *e)  \
{ rec("mpi_send" #SUF, *c, *t, *m); pmpi_send##SUF(b, c, t, d, g, m, e); }                        \
void mpi_allreduce##SUF(void *s, void *r, MPI_Fint *c, MPI_Fint *t, MPI_Fint *o, MPI_Fint *m, MPI_Fint *e); \
void mpi_allreduce##SUF(void *s, void *r, MPI_Fint *c, MPI_Fint *t, MPI_Fint *o, MPI_Fint *m, MPI_Fint *e)  \
{ rec("mpi_allreduce" #SUF, *c, *t, *m); pmpi_allreduce##SUF(s, r, c, t, o, m, e); }             \
void mpi_isend##SUF(void *b, MPI_Fint *c, MPI_Fint *t, MPI_Fint *d, MPI_Fint *g, MPI_Fint *m, MPI_Fint *q, MPI_Fint *e); \
void mpi_isend##SUF(void *b, MPI_Fint *c, MPI_Fint *t, MPI_Fint *d, MPI_Fint *g, MPI_Fint *m, MPI_Fint *q, MPI_Fint *e)  \
{                                                                                                 \
    rec("mpi_isend" #SUF, *c, *t, *m);                                                            \
    pmpi_isend##SUF(b, c, t, d, g, m, q, e);                                                      \
    FSAYF("[pid %d] [FB mpi_isend" #SUF "] -> C request %p (Fortran handle %d)\n", (int)getpid(), \
          (void *)PMPI_Request_f2c(*q), (int)*q);                                                 \
}                                                                                                 \
void mpi_wait##SUF(MPI_Fint *q, MPI_Fint *st, MPI_Fint *e);                                       \
void mpi_wait##SUF(MPI_Fint *q, MPI_Fint *st, MPI_Fint *e)                                        \
{                                                                                                 \
    FSAYF("[pid %d] [FB mpi_wait" #SUF "] C request %p (Fortran handle %d)\n", (int)getpid(),     \
          (void *)PMPI_Request_f2c(*q), (int)*q);                                                 \
    pmpi_wait##SUF(q, st, e);                                                                     \
}

DEFINE_ALL(_)
DEFINE_ALL(_f08_)
