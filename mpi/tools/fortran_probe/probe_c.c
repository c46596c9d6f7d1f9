/* Control: the same calls from C, to show that interpose_c.c works when the C API is used. */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    int rank, buf = 42, sum = 0, me;
    MPI_Comm newcomm;
    MPI_Request req;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    me = rank;
    (void)MPI_Wtime();
    if (rank == 0) MPI_Send(&buf, 1, MPI_INT, 1, 7, MPI_COMM_WORLD);
    else if (rank == 1) MPI_Recv(&buf, 1, MPI_INT, 0, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Bcast(&buf, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Allreduce(&me, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &newcomm);
    if (rank == 0) MPI_Isend(&buf, 1, MPI_INT, 1, 8, MPI_COMM_WORLD, &req);
    else if (rank == 1) MPI_Irecv(&buf, 1, MPI_INT, 0, 8, MPI_COMM_WORLD, &req);
    if (rank < 2) MPI_Wait(&req, MPI_STATUS_IGNORE);
    MPI_Comm_free(&newcomm);
    if (rank == 0) printf("C probe done: buf=%d sum=%d\n", buf, sum);
    MPI_Finalize();
    return 0;
}
