! SPDX-License-Identifier: MIT
! MPI-4.0 calls without buffers from `use mpi_f08` (MPICH: its binding sends them to PMPI_* itself,
! so only the collector's mpi_<name>_f08_ entry points see them; mpi/README.md, "Flavours"):
!
!   - MPI_Barrier_init, started 3 times (MPI_Start, MPI_Wait), freed: 3 BARRIER collectives;
!   - MPI_Comm_idup_with_info of MPI_COMM_WORLD (MPI_Wait), an MPI_Allreduce on the copy (checked),
!     MPI_Comm_free;
!   - partitioned communication: rank 2k sends PARTS partitions of CNT integers to rank 2k+1
!     (MPI_Psend_init / MPI_Precv_init: buffers, so the C wrappers record them), marked ready with
!     MPI_Pready (partition 0), MPI_Pready_range (1..2) and MPI_Pready_list (3); the receiver asks
!     MPI_Parrived for partition 0 once before MPI_Wait; every value received is checked.
! Messages: one partitioned message per pair (n/2 with n ranks), PARTS * CNT * 4 bytes.
! Any failure prints "mpi_mpi4_f08: rank <r>: FAIL: ..." and calls MPI_Abort (exit status 1).
!
! usage: mpirun -np N mpi_mpi4_f08       (N even, >= 2)
program mpi_mpi4_f08
  use mpi_f08
  implicit none
  integer, parameter :: PARTS = 4, CNT = 256
  integer :: ierr, rank, nranks, i, mine, total
  integer :: buf(PARTS * CNT)
  integer(kind=MPI_COUNT_KIND) :: pcount
  logical :: arrived
  type(MPI_Request) :: req
  type(MPI_Comm) :: dup
  type(MPI_Status) :: st

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)
  if (nranks < 2 .or. mod(nranks, 2) /= 0) call fail('needs an even number of ranks')

  ! ---- persistent barrier ----
  call MPI_Barrier_init(MPI_COMM_WORLD, MPI_INFO_NULL, req, ierr)
  call check(ierr, 'MPI_Barrier_init')
  do i = 1, 3
    call MPI_Start(req, ierr)
    call check(ierr, 'MPI_Start')
    call MPI_Wait(req, st, ierr)
    call check(ierr, 'MPI_Wait (barrier)')
  end do
  call MPI_Request_free(req, ierr)

  ! ---- non-blocking duplicate with info ----
  call MPI_Comm_idup_with_info(MPI_COMM_WORLD, MPI_INFO_NULL, dup, req, ierr)
  call check(ierr, 'MPI_Comm_idup_with_info')
  call MPI_Wait(req, MPI_STATUS_IGNORE, ierr)
  mine = rank + 1
  call MPI_Allreduce(mine, total, 1, MPI_INTEGER, MPI_SUM, dup, ierr)
  if (total /= nranks * (nranks + 1) / 2) call fail('MPI_Allreduce on the idup copy')
  call MPI_Comm_free(dup, ierr)

  ! ---- partitioned ----
  pcount = CNT
  if (mod(rank, 2) == 0) then
    do i = 1, PARTS * CNT
      buf(i) = rank * 100000 + i
    end do
    call MPI_Psend_init(buf, PARTS, pcount, MPI_INTEGER, rank + 1, 7, MPI_COMM_WORLD, MPI_INFO_NULL, req, ierr)
    call check(ierr, 'MPI_Psend_init')
    call MPI_Start(req, ierr)
    call MPI_Pready(0, req, ierr)
    call check(ierr, 'MPI_Pready')
    call MPI_Pready_range(1, 2, req, ierr)
    call check(ierr, 'MPI_Pready_range')
    call MPI_Pready_list(1, [3], req, ierr)
    call check(ierr, 'MPI_Pready_list')
    call MPI_Wait(req, MPI_STATUS_IGNORE, ierr)
    call check(ierr, 'MPI_Wait (psend)')
  else
    buf = -1
    call MPI_Precv_init(buf, PARTS, pcount, MPI_INTEGER, rank - 1, 7, MPI_COMM_WORLD, MPI_INFO_NULL, req, ierr)
    call check(ierr, 'MPI_Precv_init')
    call MPI_Start(req, ierr)
    ! once, whatever it says (polling until it says yes would record a call per poll)
    call MPI_Parrived(req, 0, arrived, ierr)
    call check(ierr, 'MPI_Parrived')
    call MPI_Wait(req, st, ierr)
    call check(ierr, 'MPI_Wait (precv)')
    do i = 1, PARTS * CNT
      if (buf(i) /= (rank - 1) * 100000 + i) call fail('partitioned data')
    end do
  end if
  call MPI_Request_free(req, ierr)

  call MPI_Finalize(ierr)
  if (rank == nranks - 1) print '(a,i0,a)', 'mpi_mpi4_f08 rank ', rank, ': PASS'

contains

  subroutine check(e, what)
    integer, intent(in) :: e
    character(len=*), intent(in) :: what
    if (e /= MPI_SUCCESS) call fail(what)
  end subroutine check

  subroutine fail(what)
    character(len=*), intent(in) :: what
    integer :: e2
    print '(a,i0,a,a)', 'mpi_mpi4_f08: rank ', rank, ': FAIL: ', what
    call MPI_Abort(MPI_COMM_WORLD, 1, e2)
  end subroutine fail

end program mpi_mpi4_f08
