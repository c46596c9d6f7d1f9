! Fortran probe, `use mpi` binding, or mpif.h with -DPROBE_MPIFH (one source, built twice by run.sh):
! the MPI calls whose routing mpi/fortran.md documents.
program probe_f
#ifndef PROBE_MPIFH
  use mpi
#endif
  implicit none
#ifdef PROBE_MPIFH
  include 'mpif.h'
  character(*), parameter :: binding = 'mpif.h'
#else
  character(*), parameter :: binding = 'use mpi'
#endif
  integer :: ierr, rank, nprocs, newcomm, req, buf, sbuf, rsum, rin
  integer :: status(MPI_STATUS_SIZE)
  double precision :: t0
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  t0 = MPI_Wtime()
  buf = 42
  if (rank == 0) then
    call MPI_Send(buf, 1, MPI_INTEGER, 1, 7, MPI_COMM_WORLD, ierr)
  else if (rank == 1) then
    call MPI_Recv(buf, 1, MPI_INTEGER, 0, 7, MPI_COMM_WORLD, status, ierr)
    print '(a,i0,a,i0)', binding // ' recv status: source=', status(MPI_SOURCE), ' tag=', status(MPI_TAG)
  end if
  call MPI_Bcast(buf, 1, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
  sbuf = rank
  call MPI_Allreduce(sbuf, rsum, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  rin = rank + 1
  call MPI_Allreduce(MPI_IN_PLACE, rin, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  call MPI_Comm_split(MPI_COMM_WORLD, mod(rank, 2), rank, newcomm, ierr)
  if (rank == 0) then
    call MPI_Isend(buf, 1, MPI_INTEGER, 1, 8, MPI_COMM_WORLD, req, ierr)
  else if (rank == 1) then
    call MPI_Irecv(buf, 1, MPI_INTEGER, 0, 8, MPI_COMM_WORLD, req, ierr)
  end if
  if (rank < 2) call MPI_Wait(req, status, ierr)
  call MPI_Comm_free(newcomm, ierr)
  if (rank == 0) print '(a,i0,a,i0,a,i0)', binding // ' probe done: buf=', buf, ' sum=', rsum, ' inplace=', rin
  call MPI_Finalize(ierr)
end program probe_f
