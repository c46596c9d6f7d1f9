! SPDX-License-Identifier: MIT
! The program of zc_fortran_mpi.F90 through `use mpi_f08`: the calls reach libzecoll.so's
! mpi_<name>_f08_ entry points. Handles are TYPE(MPI_Comm), TYPE(MPI_Request), ...; statuses
! TYPE(MPI_Status). About half of the calls omit the optional ierror (Open MPI then passes NULL).
! Same traffic as zc_fortran_mpi.F90 (check_fortran_trace.py judges both the same way).
program zc_fortran_mpi_f08
  use mpi_f08
  implicit none
  integer, parameter :: n = 3, nreq = 4
  integer :: ierr, rank, nranks, left, right, i, k, idx, outcount, done, provided
  type(MPI_Status) :: status, statuses(nreq)
  type(MPI_Request) :: reqs(nreq), preqs(2)
  integer :: indices(nreq)
  integer :: sbuf(64), rbuf(64), rbufs(64, nreq), sbufs(64, nreq)
  integer :: cnt(n), res(n), big(64), counts(4), displs(4), rcounts(4), rdispls(4)
  type(MPI_Datatype) :: stypes(4), rtypes(4)
  logical :: flag
  integer :: color, subrank, subsize, peer
  type(MPI_Comm) :: sub, dup
  character(len=8) :: subname

#ifdef ZC_INIT_THREAD
  call MPI_Init_thread(MPI_THREAD_FUNNELED, provided, ierr)
#else
  call MPI_Init(ierr)
  provided = 0
#endif
  call check(ierr, 'MPI_Init')
  call MPI_Pcontrol(1)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)
  if (nranks /= 4) call fail('needs exactly 4 ranks')
  right = mod(rank + 1, nranks)
  left = mod(rank + nranks - 1, nranks)
  do i = 1, 64
    sbuf(i) = 1000 * rank + i
  end do

  ! ---- blocking: ring to the right (status), ring to the left (ANY_SOURCE, STATUS_IGNORE) ----
  if (mod(rank, 2) == 0) then
    call MPI_Send(sbuf, msg(10 + rank), MPI_INTEGER, right, 10 + rank, MPI_COMM_WORLD, ierr)
    call MPI_Recv(rbuf, 64, MPI_INTEGER, left, 10 + left, MPI_COMM_WORLD, status)
  else
    call MPI_Recv(rbuf, 64, MPI_INTEGER, left, 10 + left, MPI_COMM_WORLD, status, ierr)
    call MPI_Send(sbuf, msg(10 + rank), MPI_INTEGER, right, 10 + rank, MPI_COMM_WORLD)
  end if
  call expect_status(status, left, 10 + left, 'MPI_Recv')
  if (rbuf(1) /= 1000 * left + 1) call fail('MPI_Recv data')
  if (mod(rank, 2) == 0) then
    call MPI_Send(sbuf, msg(20), MPI_INTEGER, left, 20, MPI_COMM_WORLD, ierr)
    call MPI_Recv(rbuf, 64, MPI_INTEGER, MPI_ANY_SOURCE, 20, MPI_COMM_WORLD, MPI_STATUS_IGNORE)
  else
    call MPI_Recv(rbuf, 64, MPI_INTEGER, MPI_ANY_SOURCE, 20, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
    call MPI_Send(sbuf, msg(20), MPI_INTEGER, left, 20, MPI_COMM_WORLD)
  end if
  if (rbuf(1) /= 1000 * right + 1) call fail('MPI_Recv (STATUS_IGNORE) data')

  ! ---- Sendrecv, Sendrecv_replace (STATUS_IGNORE) ----
  call MPI_Sendrecv(sbuf, msg(30), MPI_INTEGER, right, 30, rbuf, 64, MPI_INTEGER, left, 30, &
                    MPI_COMM_WORLD, status, ierr)
  call expect_status(status, left, 30, 'MPI_Sendrecv')
  big = sbuf
  call MPI_Sendrecv_replace(big, msg(31), MPI_INTEGER, left, 31, MPI_ANY_SOURCE, 31, MPI_COMM_WORLD, &
                            MPI_STATUS_IGNORE)
  if (big(1) /= 1000 * right + 1) call fail('MPI_Sendrecv_replace data')

  ! ---- Isend/Irecv + Wait (status, STATUS_IGNORE) ----
  call MPI_Irecv(rbuf, 64, MPI_INTEGER, left, 40, MPI_COMM_WORLD, reqs(1), ierr)
  call MPI_Isend(sbuf, msg(40), MPI_INTEGER, right, 40, MPI_COMM_WORLD, reqs(2))
  call MPI_Wait(reqs(1), status, ierr)
  call expect_status(status, left, 40, 'MPI_Wait')
  call MPI_Wait(reqs(2), MPI_STATUS_IGNORE)
  if (reqs(1) /= MPI_REQUEST_NULL .or. reqs(2) /= MPI_REQUEST_NULL) call fail('MPI_Wait: handles not reset')

  ! ---- Waitall (statuses), then Waitall (STATUSES_IGNORE, ANY_SOURCE) ----
  call post4(41, left, right)
  call MPI_Waitall(nreq, reqs, statuses, ierr)
  call check(ierr, 'MPI_Waitall')
  call expect_status(statuses(1), left, 41, 'MPI_Waitall(1)')
  call expect_status(statuses(2), right, 42, 'MPI_Waitall(2)')
  call post4(43, MPI_ANY_SOURCE, MPI_ANY_SOURCE)
  call MPI_Waitall(nreq, reqs, MPI_STATUSES_IGNORE, ierr)
  call check(ierr, 'MPI_Waitall (STATUSES_IGNORE)')
  if (rbufs(1, 1) /= 1000 * left + 1 .or. rbufs(1, 2) /= 1000 * right + 2) call fail('MPI_Waitall data')

  ! ---- Waitany (status; 1-based index), then Waitany (STATUS_IGNORE) ----
  call post4(45, left, right)
  do k = 1, nreq
    call MPI_Waitany(nreq, reqs, idx, status, ierr)
#ifdef ZC_MPICH_QUIRKS
    if (idx /= MPI_UNDEFINED) idx = idx + 1 ! MPICH 4.0.2's mpi_f08 MPI_Waitany: 0-based (measured)
#endif
    call check(ierr, 'MPI_Waitany')
    if (idx < 1 .or. idx > nreq) call fail('MPI_Waitany: index out of 1..4')
    if (reqs(idx) /= MPI_REQUEST_NULL) call fail('MPI_Waitany: completed handle not reset')
    if (idx == 1) call expect_status(status, left, 45, 'MPI_Waitany(1)')
    if (idx == 2) call expect_status(status, right, 46, 'MPI_Waitany(2)')
  end do
  call MPI_Waitany(nreq, reqs, idx, status, ierr)
  if (idx /= MPI_UNDEFINED) call fail('MPI_Waitany on null requests: index not MPI_UNDEFINED')
  call post4(47, MPI_ANY_SOURCE, right)
  do k = 1, nreq
    call MPI_Waitany(nreq, reqs, idx, MPI_STATUS_IGNORE)
#ifdef ZC_MPICH_QUIRKS
    if (idx /= MPI_UNDEFINED) idx = idx + 1 ! MPICH 4.0.2's mpi_f08 MPI_Waitany: 0-based (measured)
#endif
    if (idx < 1 .or. idx > nreq) call fail('MPI_Waitany (STATUS_IGNORE): index out of 1..4')
  end do

  ! ---- Testsome (statuses; 1-based indices), then Testsome (STATUSES_IGNORE) ----
  call post4(49, left, right)
  done = 0
  do while (done < nreq)
    call MPI_Testsome(nreq, reqs, outcount, indices, statuses, ierr)
#ifdef ZC_MPICH_QUIRKS
    if (outcount /= MPI_UNDEFINED) indices(1:outcount) = indices(1:outcount) + 1 ! 0-based too
#endif
    call check(ierr, 'MPI_Testsome')
    if (outcount == MPI_UNDEFINED) call fail('MPI_Testsome: MPI_UNDEFINED before all completed')
    do k = 1, outcount
      idx = indices(k)
      if (idx < 1 .or. idx > nreq) call fail('MPI_Testsome: index out of 1..4')
      if (idx == 1) call expect_status(statuses(k), left, 49, 'MPI_Testsome(1)')
      if (idx == 2) call expect_status(statuses(k), right, 50, 'MPI_Testsome(2)')
    end do
    done = done + outcount
  end do
  call post4(51, MPI_ANY_SOURCE, MPI_ANY_SOURCE)
  done = 0
  do while (done < nreq)
    call MPI_Testsome(nreq, reqs, outcount, indices, MPI_STATUSES_IGNORE, ierr)
#ifdef ZC_MPICH_QUIRKS
    if (outcount /= MPI_UNDEFINED) indices(1:outcount) = indices(1:outcount) + 1 ! 0-based too
#endif
    done = done + outcount
  end do

  ! ---- Waitsome (statuses) ----
  call post4(53, left, MPI_ANY_SOURCE)
  done = 0
  do while (done < nreq)
    call MPI_Waitsome(nreq, reqs, outcount, indices, statuses)
#ifdef ZC_MPICH_QUIRKS
    if (outcount /= MPI_UNDEFINED) indices(1:outcount) = indices(1:outcount) + 1 ! 0-based too
#endif
    do k = 1, outcount
      if (indices(k) == 2) call expect_status(statuses(k), right, 54, 'MPI_Waitsome(2)')
    end do
    done = done + outcount
  end do

  ! ---- Test (LOGICAL flag), Testany (STATUS_IGNORE), Testall (statuses) ----
  call MPI_Irecv(rbuf, 64, MPI_INTEGER, MPI_ANY_SOURCE, 55, MPI_COMM_WORLD, reqs(1), ierr)
  call MPI_Isend(sbuf, msg(55), MPI_INTEGER, right, 55, MPI_COMM_WORLD, reqs(2))
  flag = .false.
  do while (.not. flag)
    call MPI_Test(reqs(1), flag, status, ierr)
  end do
  call expect_status(status, left, 55, 'MPI_Test')
  call MPI_Wait(reqs(2), status)
  call post4(56, left, right)
  done = 0
  do while (done < nreq)
    call MPI_Testany(nreq, reqs, idx, flag, MPI_STATUS_IGNORE, ierr)
#ifdef ZC_MPICH_QUIRKS
    if (flag .and. idx /= MPI_UNDEFINED) idx = idx + 1 ! 0-based too
#endif
    if (flag .and. idx /= MPI_UNDEFINED) then
      if (idx < 1 .or. idx > nreq) call fail('MPI_Testany: index out of 1..4')
      done = done + 1
    end if
  end do
  call post4(58, left, right)
  flag = .false.
  do while (.not. flag)
    call MPI_Testall(nreq, reqs, flag, statuses)
  end do
  call expect_status(statuses(1), left, 58, 'MPI_Testall(1)')
  call expect_status(statuses(2), right, 59, 'MPI_Testall(2)')

  ! ---- persistent requests: Startall + Waitall, Start + Wait, Request_free ----
  call MPI_Recv_init(rbuf, 64, MPI_INTEGER, left, 60, MPI_COMM_WORLD, preqs(1), ierr)
  call MPI_Send_init(sbuf, msg(60), MPI_INTEGER, right, 60, MPI_COMM_WORLD, preqs(2))
  call MPI_Startall(2, preqs, ierr)
  call MPI_Waitall(2, preqs, statuses)
  call expect_status(statuses(1), left, 60, 'persistent Waitall')
  call MPI_Start(preqs(1), ierr)
  call MPI_Start(preqs(2))
  call MPI_Wait(preqs(2), MPI_STATUS_IGNORE, ierr)
  call MPI_Wait(preqs(1), status)
  call expect_status(status, left, 60, 'persistent Wait')
  call MPI_Request_free(preqs(1), ierr)
  call MPI_Request_free(preqs(2))

  ! ---- collectives on MPI_COMM_WORLD (INTEGER, n = 3; see check_fortran_trace.py) ----
  cnt = (/ rank + 1, rank + 2, rank + 3 /)
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  res = cnt
  call MPI_Bcast(res, n, MPI_INTEGER, 0, MPI_COMM_WORLD)
  if (res(1) /= 1) call fail('MPI_Bcast')
  call MPI_Allreduce(cnt, res, n, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (res(1) /= 10) call fail('MPI_Allreduce')
  res = cnt
  call MPI_Allreduce(MPI_IN_PLACE, res, n, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  if (res(1) /= 10) call fail('MPI_Allreduce (MPI_IN_PLACE)')
  call MPI_Reduce(cnt, res, n, MPI_INTEGER, MPI_MAX, 0, MPI_COMM_WORLD, ierr)
  if (rank == 0 .and. res(1) /= 4) call fail('MPI_Reduce')
  call MPI_Gather(cnt, n, MPI_INTEGER, big, n, MPI_INTEGER, 0, MPI_COMM_WORLD)
  if (rank == 0 .and. big(4) /= 2) call fail('MPI_Gather')
  do i = 1, 4
    counts(i) = i
    displs(i) = (i - 1) * i / 2
  end do
  call MPI_Gatherv(sbuf, rank + 1, MPI_INTEGER, big, counts, displs, MPI_INTEGER, 1, MPI_COMM_WORLD, ierr)
  if (rank == 1 .and. big(2) /= 1001) call fail('MPI_Gatherv')
  call MPI_Scatter(sbuf, n, MPI_INTEGER, res, n, MPI_INTEGER, 2, MPI_COMM_WORLD)
  if (res(1) /= 2000 + 3 * rank + 1) call fail('MPI_Scatter')
  call MPI_Scatterv(sbuf, counts, displs, MPI_INTEGER, big, rank + 1, MPI_INTEGER, 3, MPI_COMM_WORLD, ierr)
  if (big(1) /= 3000 + displs(rank + 1) + 1) call fail('MPI_Scatterv')
  call MPI_Allgather(cnt, n, MPI_INTEGER, big, n, MPI_INTEGER, MPI_COMM_WORLD)
  if (big(10) /= 4) call fail('MPI_Allgather')
  call MPI_Allgatherv(sbuf, rank + 1, MPI_INTEGER, big, counts, displs, MPI_INTEGER, MPI_COMM_WORLD, ierr)
  if (big(7) /= 3001) call fail('MPI_Allgatherv')
  call MPI_Alltoall(sbuf, n, MPI_INTEGER, big, n, MPI_INTEGER, MPI_COMM_WORLD)
  if (big(4) /= 1000 + 3 * rank + 1) call fail('MPI_Alltoall')
  ! v and w: to rank j go j + 1 INTEGERs; from everyone come rank + 1
  do i = 1, 4
    rcounts(i) = rank + 1
    rdispls(i) = (i - 1) * (rank + 1)
    stypes(i) = MPI_INTEGER
    rtypes(i) = MPI_INTEGER
  end do
  call MPI_Alltoallv(sbuf, counts, displs, MPI_INTEGER, big, rcounts, rdispls, MPI_INTEGER, MPI_COMM_WORLD, ierr)
  if (big(rank + 2) /= 1000 + displs(rank + 1) + 1) call fail('MPI_Alltoallv')
  displs = displs * 4
  rdispls = rdispls * 4
  call MPI_Alltoallw(sbuf, counts, displs, stypes, big, rcounts, rdispls, rtypes, MPI_COMM_WORLD)
  if (big(rank + 2) /= 1000 + displs(rank + 1) / 4 + 1) call fail('MPI_Alltoallw')
  displs = displs / 4
  call MPI_Reduce_scatter_block(sbuf, res, n, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  call MPI_Reduce_scatter(sbuf, big, counts, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  call MPI_Scan(cnt, res, n, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (res(1) /= (rank + 1) * (rank + 2) / 2) call fail('MPI_Scan')
  call MPI_Exscan(cnt, res, n, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  if (rank > 0 .and. res(1) /= rank * (rank + 1) / 2) call fail('MPI_Exscan')
  call MPI_Ibarrier(MPI_COMM_WORLD, reqs(1), ierr)
  call MPI_Iallreduce(cnt, res, n, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, reqs(2))
  call MPI_Ibcast(big, n, MPI_INTEGER, 1, MPI_COMM_WORLD, reqs(3), ierr)
  call MPI_Waitall(3, reqs, MPI_STATUSES_IGNORE)
  if (res(1) /= 10) call fail('MPI_Iallreduce')

  ! ---- a split communicator: even and odd ranks ----
  color = mod(rank, 2)
  call MPI_Comm_split(MPI_COMM_WORLD, color, rank, sub, ierr)
  call check(ierr, 'MPI_Comm_split')
  ! named with trailing blanks (MPI takes them off: the trace says 'even' and 'odd'); ierror absent
  subname = 'odd'
  if (color == 0) subname = 'even'
  call MPI_Comm_set_name(sub, subname)
  call MPI_Comm_rank(sub, subrank, ierr)
  call MPI_Comm_size(sub, subsize, ierr)
  if (subsize /= 2 .or. subrank /= rank / 2) call fail('MPI_Comm_split: rank/size')
  call MPI_Allreduce(cnt, res, n, MPI_INTEGER, MPI_SUM, sub, ierr)
  if (res(1) /= 2 * color + 4) call fail('MPI_Allreduce on the split communicator')
  res = cnt
  call MPI_Bcast(res, n, MPI_INTEGER, 0, sub)
  if (res(1) /= color + 1) call fail('MPI_Bcast on the split communicator')
  call MPI_Barrier(sub, ierr)
  peer = 1 - subrank
  call MPI_Sendrecv(sbuf, msg(70), MPI_INTEGER, peer, 70, rbuf, 64, MPI_INTEGER, peer, 70, sub, status)
  call expect_status(status, peer, 70, 'MPI_Sendrecv on the split communicator')
  call MPI_Comm_free(sub, ierr)
  if (sub /= MPI_COMM_NULL) call fail('MPI_Comm_free')
  call MPI_Comm_dup(MPI_COMM_WORLD, dup)
  call MPI_Barrier(dup, ierr)
  call MPI_Comm_set_name(dup, 'world dup', ierr)
  call MPI_Comm_free(dup)

  call MPI_Finalize(ierr)
  call check(ierr, 'MPI_Finalize')
  if (rank == 0) print '(a, i0)', 'zc_fortran_mpi_f08: ok, thread level ', provided

contains

  integer function msg(tag)
    integer, intent(in) :: tag
    msg = mod(tag, 7) + 1
  end function

  ! receives tag t from src1 into 1, tag t+1 from src2 into 2; sends tag t to the right (3), t+1 to
  ! the left (4)
  subroutine post4(t, src1, src2)
    integer, intent(in) :: t, src1, src2
    call MPI_Irecv(rbufs(1, 1), 64, MPI_INTEGER, src1, t, MPI_COMM_WORLD, reqs(1), ierr)
    call MPI_Irecv(rbufs(1, 2), 64, MPI_INTEGER, src2, t + 1, MPI_COMM_WORLD, reqs(2))
    sbufs(:, 3) = sbuf
    sbufs(:, 4) = sbuf + 1
    call MPI_Isend(sbufs(1, 3), msg(t), MPI_INTEGER, right, t, MPI_COMM_WORLD, reqs(3), ierr)
    call MPI_Isend(sbufs(1, 4), msg(t + 1), MPI_INTEGER, left, t + 1, MPI_COMM_WORLD, reqs(4))
  end subroutine

  subroutine expect_status(st, src, tag, what)
    type(MPI_Status), intent(in) :: st
    integer, intent(in) :: src, tag
    character(*), intent(in) :: what
    integer :: c, e
    call MPI_Get_count(st, MPI_INTEGER, c, e)
    if (st%MPI_SOURCE /= src .or. st%MPI_TAG /= tag .or. c /= msg(tag)) then
      print '(a, i0, 4a, 3(a, i0))', 'zc_fortran_mpi_f08: rank ', rank, ': FAIL: ', what, ': status ', &
        'source=', st%MPI_SOURCE, ' tag=', st%MPI_TAG, ' count=', c
      call MPI_Abort(MPI_COMM_WORLD, 1, e)
    end if
  end subroutine

  subroutine check(e, what)
    integer, intent(in) :: e
    character(*), intent(in) :: what
    if (e /= MPI_SUCCESS) call fail(what)
  end subroutine

  subroutine fail(what)
    character(*), intent(in) :: what
    integer :: e
    print '(a, i0, 2a)', 'zc_fortran_mpi_f08: rank ', rank, ': FAIL: ', what
    call MPI_Abort(MPI_COMM_WORLD, 1, e)
  end subroutine
end program
