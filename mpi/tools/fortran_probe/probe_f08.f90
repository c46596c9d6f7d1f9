! Fortran probe, mpi_f08 binding: same calls as probe_mpifh.f90 with the MPI-3 f08 handle types.
program probe_f08
  use mpi_f08
  implicit none
  integer :: rank, nprocs, buf, sbuf, rsum, rin
  type(MPI_Comm) :: newcomm
  type(MPI_Request) :: req
  type(MPI_Status) :: status
  double precision :: t0
  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs)
  t0 = MPI_Wtime()
  buf = 42
  if (rank == 0) then
    call MPI_Send(buf, 1, MPI_INTEGER, 1, 7, MPI_COMM_WORLD)
  else if (rank == 1) then
    call MPI_Recv(buf, 1, MPI_INTEGER, 0, 7, MPI_COMM_WORLD, status)
    print '(a,i0,a,i0)', 'mpi_f08 recv status: source=', status%MPI_SOURCE, ' tag=', status%MPI_TAG
  end if
  call MPI_Bcast(buf, 1, MPI_INTEGER, 0, MPI_COMM_WORLD)
  sbuf = rank
  call MPI_Allreduce(sbuf, rsum, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  rin = rank + 1
  call MPI_Allreduce(MPI_IN_PLACE, rin, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  call MPI_Comm_split(MPI_COMM_WORLD, mod(rank, 2), rank, newcomm)
  if (rank == 0) then
    call MPI_Isend(buf, 1, MPI_INTEGER, 1, 8, MPI_COMM_WORLD, req)
  else if (rank == 1) then
    call MPI_Irecv(buf, 1, MPI_INTEGER, 0, 8, MPI_COMM_WORLD, req)
  end if
  if (rank < 2) call MPI_Wait(req, status)
  call MPI_Comm_free(newcomm)
  if (rank == 0) print '(a,i0,a,i0,a,i0)', 'mpi_f08 probe done: buf=', buf, ' sum=', rsum, ' inplace=', rin
  call MPI_Finalize()
end program probe_f08
