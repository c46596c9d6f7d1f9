# SPDX-License-Identifier: MIT
"""mpi4py loads libmpi with dlopen, after libzecoll.so: the collector's weak PMPI references stay
unresolved, so every MPI call must pass through untouched (resolved by name) and give the right
results. Run under mpirun with libzecoll.so preloaded; prints one PASS line per rank."""
import sys

from mpi4py import MPI

c = MPI.COMM_WORLD
r, n = c.Get_rank(), c.Get_size()
total = c.allreduce(r + 1)
left = c.sendrecv(r, dest=(r + 1) % n, source=(r - 1) % n)
sub = c.Split(r % 2, r)
subsum = sub.allreduce(1)
req = c.isend(r * 10, dest=(r + 1) % n, tag=3)
got = c.recv(source=(r - 1) % n, tag=3)
req.wait()
sub.Free()
ok = total == n * (n + 1) // 2 and left == (r - 1) % n and got == ((r - 1) % n) * 10 and subsum == len(range(r % 2, n, 2))
print(f"mpi4py rank {r}: {'PASS' if ok else 'FAIL'} total={total} left={left} got={got} subsum={subsum}")
sys.exit(0 if ok else 1)
