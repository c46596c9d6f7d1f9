/* Fortran-level interposer (the fix): Fortran entry points that convert the Fortran arguments
 * and call the C MPI_* entry points, so the C wrappers of interpose_c.c (linked into the same
 * library) see Fortran calls too. Shown for MPI_Init/Send/Recv/Allreduce/Finalize, for the
 * mpif.h / use mpi symbols (mpi_send_) and the mpi_f08 symbols (mpi_send_f08_). Not a complete
 * tool: no MPI_BOTTOM, no MPI_IN_PLACE sentinel translation beyond Allreduce, no mpi_send__ /
 * MPI_SEND name variants (gfortran only emits mpi_send_). */
#include <mpi.h>
#include <stdio.h>
#include <unistd.h>

#define FSAY(name) do { \
        char line_[96]; \
        int n_ = snprintf(line_, sizeof line_, "[pid %d] [F %s]\n", (int)getpid(), name); \
        if (n_ > 0) { ssize_t w_ = write(2, line_, (size_t)n_); (void)w_; } \
    } while (0)

/* Fortran sentinels (weak: resolved at load time to the copy the program uses): the addresses of Open MPI's Fortran common blocks (libmpi_mpifh.so /
 * libmpi_usempi_ignore_tkr.so); MPI_IN_PLACE/MPI_STATUS_IGNORE in Fortran are these addresses. */
extern int mpi_fortran_in_place_ __attribute__((weak));
extern int mpi_fortran_status_ignore_ __attribute__((weak));

#ifdef PROBE_NO_SENTINEL_FIX /* negative control: pass Fortran's MPI_IN_PLACE through unchanged */
static void *f_buf(void *p) { return p; }
#else
static void *f_buf(void *p) { return p == (void *)&mpi_fortran_in_place_ ? MPI_IN_PLACE : p; }
#endif

static void status_out(const MPI_Status *c, MPI_Fint *f)
{
    if (f != (MPI_Fint *)&mpi_fortran_status_ignore_) PMPI_Status_c2f(c, f);
}

/* ---- mpif.h and `use mpi` (ignore-TKR module: same external symbols) ---- */
void mpi_init_(MPI_Fint *ierr);
void mpi_init_(MPI_Fint *ierr)
{
    FSAY("mpi_init_");
    int argc = 0; char **argv = NULL;
    *ierr = MPI_Init(&argc, &argv);
}

void mpi_finalize_(MPI_Fint *ierr);
void mpi_finalize_(MPI_Fint *ierr) { FSAY("mpi_finalize_"); *ierr = MPI_Finalize(); }

void mpi_send_(void *buf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *dest, MPI_Fint *tag, MPI_Fint *comm, MPI_Fint *ierr);
void mpi_send_(void *buf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *dest, MPI_Fint *tag, MPI_Fint *comm, MPI_Fint *ierr)
{
    FSAY("mpi_send_");
    *ierr = MPI_Send(buf, *count, PMPI_Type_f2c(*type), *dest, *tag, PMPI_Comm_f2c(*comm));
}

void mpi_recv_(void *buf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *src, MPI_Fint *tag, MPI_Fint *comm, MPI_Fint *status, MPI_Fint *ierr);
void mpi_recv_(void *buf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *src, MPI_Fint *tag, MPI_Fint *comm, MPI_Fint *status, MPI_Fint *ierr)
{
    FSAY("mpi_recv_");
    MPI_Status cs;
    *ierr = MPI_Recv(buf, *count, PMPI_Type_f2c(*type), *src, *tag, PMPI_Comm_f2c(*comm), &cs);
    if (*ierr == MPI_SUCCESS) status_out(&cs, status);
}

void mpi_allreduce_(void *sbuf, void *rbuf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *op, MPI_Fint *comm, MPI_Fint *ierr);
void mpi_allreduce_(void *sbuf, void *rbuf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *op, MPI_Fint *comm, MPI_Fint *ierr)
{
    FSAY("mpi_allreduce_");
    *ierr = MPI_Allreduce(f_buf(sbuf), rbuf, *count, PMPI_Type_f2c(*type), PMPI_Op_f2c(*op), PMPI_Comm_f2c(*comm));
}

/* ---- use mpi_f08: TYPE(MPI_Comm) etc. hold one INTEGER (MPI_VAL), passed by reference, so the
 * C side sees MPI_Fint *; the optional ierror is NULL when the caller omits it. ---- */
void mpi_init_f08_(MPI_Fint *ierr);
void mpi_init_f08_(MPI_Fint *ierr)
{
    FSAY("mpi_init_f08_");
    int argc = 0; char **argv = NULL;
    int rc = MPI_Init(&argc, &argv);
    if (ierr) *ierr = rc;
}

void mpi_finalize_f08_(MPI_Fint *ierr);
void mpi_finalize_f08_(MPI_Fint *ierr) { FSAY("mpi_finalize_f08_"); int rc = MPI_Finalize(); if (ierr) *ierr = rc; }

void mpi_send_f08_(void *buf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *dest, MPI_Fint *tag, MPI_Fint *comm, MPI_Fint *ierr);
void mpi_send_f08_(void *buf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *dest, MPI_Fint *tag, MPI_Fint *comm, MPI_Fint *ierr)
{
    FSAY(ierr ? "mpi_send_f08_ (ierror present)" : "mpi_send_f08_ (ierror absent: NULL)");
    int rc = MPI_Send(buf, *count, PMPI_Type_f2c(*type), *dest, *tag, PMPI_Comm_f2c(*comm));
    if (ierr) *ierr = rc;
}

/* TYPE(MPI_Status) is a SEQUENCE type laid out like the Fortran status array (MPI_F08_status):
 * convert with MPI_Status_c2f. */
void mpi_recv_f08_(void *buf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *src, MPI_Fint *tag, MPI_Fint *comm, MPI_Fint *status, MPI_Fint *ierr);
void mpi_recv_f08_(void *buf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *src, MPI_Fint *tag, MPI_Fint *comm, MPI_Fint *status, MPI_Fint *ierr)
{
    FSAY("mpi_recv_f08_");
    MPI_Status cs;
    int rc = MPI_Recv(buf, *count, PMPI_Type_f2c(*type), *src, *tag, PMPI_Comm_f2c(*comm), &cs);
    if (rc == MPI_SUCCESS) status_out(&cs, status);
    if (ierr) *ierr = rc;
}

void mpi_allreduce_f08_(void *sbuf, void *rbuf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *op, MPI_Fint *comm, MPI_Fint *ierr);
void mpi_allreduce_f08_(void *sbuf, void *rbuf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *op, MPI_Fint *comm, MPI_Fint *ierr)
{
    FSAY("mpi_allreduce_f08_");
    int rc = MPI_Allreduce(f_buf(sbuf), rbuf, *count, PMPI_Type_f2c(*type), PMPI_Op_f2c(*op), PMPI_Comm_f2c(*comm));
    if (ierr) *ierr = rc;
}
