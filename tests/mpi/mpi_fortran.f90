! SPDX-License-Identifier: MIT
! Fortran MPI through `use mpi`: Open MPI's Fortran bindings call the C PMPI layer directly, so
! only the collector's Fortran entry points (mpi_<name>_, mpi/zc_mpi_fortran.c) see these calls.
!
!   - a token of 4 integers goes around the ring 3 times (MPI_Send/MPI_Recv, tag 10 + round);
!     every rank adds its rank, rank 0 checks the sum after each round;
!   - MPI_Allreduce (SUM) on MPI_COMM_WORLD;
!   - MPI_Comm_split into even and odd ranks, MPI_Allreduce and MPI_Bcast on the half,
!     MPI_Comm_free.
! Any failure prints "mpi_fortran: rank <r>: FAIL: ..." and calls MPI_Abort (exit status 1).
!
! usage: mpirun -np N mpi_fortran       (N >= 2)
program mpi_fortran
  use mpi
  implicit none
  integer :: ierr, rank, nranks, right, left, round, i, color, half, hrank, hsize
  integer :: token(4), status(MPI_STATUS_SIZE), cnt
  integer :: mine, total, want
  double precision :: dval, dsum
  integer :: bval(3)

  call MPI_Init(ierr)
  call check(ierr, 'MPI_Init')
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)
  if (nranks < 2) call fail('needs at least 2 ranks')
  right = mod(rank + 1, nranks)
  left = mod(rank - 1 + nranks, nranks)

  ! ---- ring ----
  do round = 1, 3
    if (rank == 0) then
      do i = 1, 4
        token(i) = 1000 * round + i
      end do
      call MPI_Send(token, 4, MPI_INTEGER, right, 10 + round, MPI_COMM_WORLD, ierr)
      call check(ierr, 'MPI_Send')
      call MPI_Recv(token, 4, MPI_INTEGER, left, 10 + round, MPI_COMM_WORLD, status, ierr)
      call check(ierr, 'MPI_Recv')
      do i = 1, 4
        want = 1000 * round + i + nranks * (nranks - 1) / 2
        if (token(i) /= want) call fail('ring: wrong token after a full round')
      end do
    else
      call MPI_Recv(token, 4, MPI_INTEGER, left, 10 + round, MPI_COMM_WORLD, status, ierr)
      call check(ierr, 'MPI_Recv')
      if (status(MPI_SOURCE) /= left .or. status(MPI_TAG) /= 10 + round) &
        call fail('ring: wrong status')
      call MPI_Get_count(status, MPI_INTEGER, cnt, ierr)
      if (cnt /= 4) call fail('ring: wrong element count')
      token = token + rank
      call MPI_Send(token, 4, MPI_INTEGER, right, 10 + round, MPI_COMM_WORLD, ierr)
      call check(ierr, 'MPI_Send')
    end if
  end do

  ! ---- Allreduce on world ----
  mine = rank + 1
  call MPI_Allreduce(mine, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  call check(ierr, 'MPI_Allreduce')
  if (total /= nranks * (nranks + 1) / 2) call fail('Allreduce on world: wrong sum')

  ! ---- Comm_split into even and odd ranks ----
  color = mod(rank, 2)
  call MPI_Comm_split(MPI_COMM_WORLD, color, rank, half, ierr)
  call check(ierr, 'MPI_Comm_split')
  call MPI_Comm_rank(half, hrank, ierr)
  call MPI_Comm_size(half, hsize, ierr)
  if (hrank /= rank / 2 .or. hsize /= (nranks + 1 - color) / 2) call fail('Comm_split: wrong rank or size')
  dval = dble(rank)
  call MPI_Allreduce(dval, dsum, 1, MPI_DOUBLE_PRECISION, MPI_SUM, half, ierr)
  call check(ierr, 'MPI_Allreduce (half)')
  ! sum of the world ranks with this parity
  want = 0
  do i = color, nranks - 1, 2
    want = want + i
  end do
  if (nint(dsum) /= want) call fail('Allreduce on the half: wrong sum')
  if (hrank == 0) then
    bval = (/ 7, 8, 9 + color /)
  else
    bval = -1
  end if
  call MPI_Bcast(bval, 3, MPI_INTEGER, 0, half, ierr)
  call check(ierr, 'MPI_Bcast (half)')
  if (bval(1) /= 7 .or. bval(2) /= 8 .or. bval(3) /= 9 + color) call fail('Bcast on the half: wrong data')
  call MPI_Comm_free(half, ierr)
  call check(ierr, 'MPI_Comm_free')
  if (half /= MPI_COMM_NULL) call fail('MPI_Comm_free did not reset the handle')

  mine = 1
  call MPI_Allreduce(mine, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (total /= nranks) call fail('not all ranks finished')
  if (rank == 0) write (*, '(a,i0,a)') 'mpi_fortran: PASS: ring x3, Allreduce, Comm_split + &
    &Allreduce/Bcast on the halves (', nranks, ' ranks)'
  call MPI_Finalize(ierr)

contains

  subroutine check(code, what)
    integer, intent(in) :: code
    character(len=*), intent(in) :: what
    if (code /= MPI_SUCCESS) call fail(what // ' failed')
  end subroutine check

  subroutine fail(msg)
    character(len=*), intent(in) :: msg
    integer :: e
    write (0, '(a,i0,a,a)') 'mpi_fortran: rank ', rank, ': FAIL: ', msg
    call MPI_Abort(MPI_COMM_WORLD, 1, e)
    stop 1
  end subroutine fail

end program mpi_fortran
