/* C-level PMPI interposer: defines C entry points MPI_* that print "[C MPI_x]" and forward to
 * PMPI_x. Preloaded into the Fortran probes, it shows whether Open MPI's Fortran layer calls the
 * C MPI_* symbols (interposable) or PMPI_* directly (not interposable). */
#include <mpi.h>
#include <stdio.h>
#include <unistd.h>

#define SAY(name) do { \
        char line_[96]; \
        int n_ = snprintf(line_, sizeof line_, "[pid %d] [C %s]\n", (int)getpid(), name); \
        if (n_ > 0) { ssize_t w_ = write(2, line_, (size_t)n_); (void)w_; } \
    } while (0)

int MPI_Init(int *argc, char ***argv) { SAY("MPI_Init"); return PMPI_Init(argc, argv); }
int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{ SAY("MPI_Init_thread"); return PMPI_Init_thread(argc, argv, required, provided); }
int MPI_Finalize(void) { SAY("MPI_Finalize"); return PMPI_Finalize(); }
int MPI_Comm_rank(MPI_Comm comm, int *rank) { SAY("MPI_Comm_rank"); return PMPI_Comm_rank(comm, rank); }
int MPI_Comm_size(MPI_Comm comm, int *size) { SAY("MPI_Comm_size"); return PMPI_Comm_size(comm, size); }
int MPI_Send(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm)
{ SAY("MPI_Send"); return PMPI_Send(buf, count, datatype, dest, tag, comm); }
int MPI_Recv(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm, MPI_Status *status)
{ SAY("MPI_Recv"); return PMPI_Recv(buf, count, datatype, source, tag, comm, status); }
int MPI_Bcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm)
{ SAY("MPI_Bcast"); return PMPI_Bcast(buffer, count, datatype, root, comm); }
int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{ SAY("MPI_Allreduce"); return PMPI_Allreduce(sendbuf, recvbuf, count, datatype, op, comm); }
int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm)
{ SAY("MPI_Comm_split"); return PMPI_Comm_split(comm, color, key, newcomm); }
int MPI_Comm_free(MPI_Comm *comm) { SAY("MPI_Comm_free"); return PMPI_Comm_free(comm); }
int MPI_Isend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm, MPI_Request *request)
{ SAY("MPI_Isend"); return PMPI_Isend(buf, count, datatype, dest, tag, comm, request); }
int MPI_Irecv(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm, MPI_Request *request)
{ SAY("MPI_Irecv"); return PMPI_Irecv(buf, count, datatype, source, tag, comm, request); }
int MPI_Wait(MPI_Request *request, MPI_Status *status) { SAY("MPI_Wait"); return PMPI_Wait(request, status); }
double MPI_Wtime(void) { SAY("MPI_Wtime"); return PMPI_Wtime(); }
