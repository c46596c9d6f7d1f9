/* SPDX-License-Identifier: MIT */
/* Fortran entry points of MPI_Init, MPI_Init_thread, MPI_Finalize, MPI_Pcontrol, MPI_Abort and
 * MPI_Comm_set_name (both manglings: mpi_<name>_ for mpif.h and `use mpi`, mpi_<name>_f08_ for
 * `use mpi_f08`), and the
 * helpers of the generated Fortran entry points (zc_mpi_fortran_gen.c). Open MPI's Fortran layer
 * calls PMPI_* directly, so without these a Fortran program reaches none of the C wrappers
 * (mpi/fortran.md). The init/finalize steps are the ones the C MPI_Init/MPI_Finalize take
 * (zc_mpi_init_done, zc_mpi_finalize_prepare in zc_mpi_special.c). */
#include "zc_mpi_fortran.h"
#include "zc_mpi_gen.h"
#include "zc_log.h"

#include <errno.h>
#include <stdlib.h>

/* Status-ignore sentinels: MPI_F_STATUS(ES)_IGNORE (libmpi.so) point to the Fortran sentinels
 * mpi_fortran_status(es)_ignore_, which mpif.h programs own (common blocks) and which mpi_f08's
 * MPI_STATUS(ES)_IGNORE are bound to (BIND(C), defined in libmpi_usempif08.so and libmpi.so): the
 * dynamic linker gives every user the same address. Both are checked. */
#pragma weak MPI_F_STATUS_IGNORE
#pragma weak MPI_F_STATUSES_IGNORE
extern MPI_Fint mpi_fortran_status_ignore_[];
extern MPI_Fint mpi_fortran_statuses_ignore_[];
#pragma weak mpi_fortran_status_ignore_
#pragma weak mpi_fortran_statuses_ignore_
#ifdef MPICH /* MPICH's mpi_f08 passes its own objects (measured: mpi_wait_f08_ compares with them) */
#pragma weak MPIR_F08_MPI_STATUS_IGNORE_OBJ
#pragma weak MPIR_F08_MPI_STATUSES_IGNORE_OBJ
#define ZC_F08_IGNORED(p, obj) (&(obj) != NULL && (const void *)(p) == (const void *)&(obj))
#else
#define ZC_F08_IGNORED(p, obj) false
#endif

/* ---------------------------------------------------------------- helpers of the generated code */
bool zc_mpi_f_status_ignored(const MPI_Fint *st) {
    if (!st) return false;
    if (&MPI_F_STATUS_IGNORE != NULL && st == MPI_F_STATUS_IGNORE) return true;
    if (ZC_F08_IGNORED(st, MPIR_F08_MPI_STATUS_IGNORE_OBJ)) return true;
    return mpi_fortran_status_ignore_ != NULL && st == mpi_fortran_status_ignore_;
}

bool zc_mpi_f_statuses_ignored(const MPI_Fint *sts) {
    if (!sts) return false;
    if (&MPI_F_STATUSES_IGNORE != NULL && sts == MPI_F_STATUSES_IGNORE) return true;
    if (ZC_F08_IGNORED(sts, MPIR_F08_MPI_STATUSES_IGNORE_OBJ)) return true;
    return mpi_fortran_statuses_ignore_ != NULL && sts == mpi_fortran_statuses_ignore_;
}

MPI_Fint *zc_mpi_f_statuses(MPI_Fint *stack, int n_stack, MPI_Fint *fsts, int n) {
    if (!zc_mpi_f_statuses_ignored(fsts)) return fsts;
    if (n <= n_stack) return stack;
    MPI_Fint *s = malloc((size_t)n * ZC_F_STATUS_SIZE * sizeof(MPI_Fint));
    return s ? s : fsts; /* out of memory: MPI ignores them, completions carry no status */
}

/* PMPI_Status_f2c of either sentinel is an MPI error (fatal under MPI_ERRORS_ARE_FATAL): not called on them */
static bool sentinel(const MPI_Fint *f) { return zc_mpi_f_status_ignored(f) || zc_mpi_f_statuses_ignored(f); }

MPI_Status *zc_mpi_f_status_array(MPI_Status *stack, int n_stack, const MPI_Fint *fsts, int n) {
    if (n <= 0 || !fsts || sentinel(fsts)) return NULL;
    MPI_Status *s = n <= n_stack ? stack : malloc((size_t)n * sizeof(*s));
    if (!s) return NULL;
    for (int i = 0; i < n; i++)
        if (PMPI_Status_f2c(fsts + (size_t)i * ZC_F_STATUS_SIZE, &s[i]) != MPI_SUCCESS)
            s[i].MPI_SOURCE = MPI_PROC_NULL; /* nothing the recorder trusts */
    return s;
}

const MPI_Status *zc_mpi_f_status(MPI_Status *st, const MPI_Fint *fst) {
    if (!fst || sentinel(fst) || PMPI_Status_f2c(fst, st) != MPI_SUCCESS) return NULL;
    return st;
}

MPI_Request *zc_mpi_f_requests(MPI_Request *stack, int n_stack, const MPI_Fint *freqs, int n) {
    if (n <= 0 || !freqs) return NULL;
    MPI_Request *r = n <= n_stack ? stack : malloc((size_t)n * sizeof(*r));
    if (r)
        for (int i = 0; i < n; i++) r[i] = PMPI_Request_f2c(freqs[i]);
    return r;
}

int *zc_mpi_f_indices(int *stack, int n_stack, const MPI_Fint *findices, int n, int base) {
    if (n <= 0 || !findices) return NULL;
    int *x = n <= n_stack ? stack : malloc((size_t)n * sizeof(*x));
    if (x)
        for (int i = 0; i < n; i++) x[i] = (int)findices[i] - base;
    return x;
}

#ifdef ZC_MPI_F08_NEXT
typedef void zc_ft_any(MPI_Fint *n, MPI_Fint *reqs, MPI_Fint *index, MPI_Fint *status, MPI_Fint *ierror);
typedef void zc_ft_tany(MPI_Fint *n, MPI_Fint *reqs, MPI_Fint *index, MPI_Fint *flag, MPI_Fint *status,
                        MPI_Fint *ierror);
typedef void zc_ft_some(MPI_Fint *n, MPI_Fint *reqs, MPI_Fint *outcount, MPI_Fint *indices, MPI_Fint *statuses,
                        MPI_Fint *ierror);

/* weak, as every MPI symbol of libzecoll.so (zc_mpi_internal.h): a strong reference here made the
 * flavour's partial link strong for the generated wrappers' too (the ASan build failed to link) */
#pragma weak PMPI_Isend
#pragma weak PMPI_Wait

/* Runs inside a call of ours (the C calls the MPI makes are not recorded); races only redo it. */
int zc_mpi_f08_index_base(enum zc_f08_idx which, void *fn) {
    static int known[ZC_F08_TESTSOME + 1]; /* base + 1; 0: not asked yet */
    int k = __atomic_load_n(&known[which], __ATOMIC_RELAXED);
    if (k) return k - 1;
    int base = 1, saved = errno;
    MPI_Request r;
    if (fn && PMPI_Isend && PMPI_Wait && PMPI_Isend(NULL, 0, MPI_BYTE, MPI_PROC_NULL, 0, MPI_COMM_SELF, &r) == MPI_SUCCESS) {
        MPI_Fint n = 2, reqs[2] = {MPI_Request_c2f(MPI_REQUEST_NULL), MPI_Request_c2f(r)};
        MPI_Fint idx[2] = {-1, -1}, out = 0, flag = 0, ierr = -1, sts[2 * ZC_F_STATUS_SIZE];
        switch (which) {
        case ZC_F08_WAITANY: ((zc_ft_any *)fn)(&n, reqs, &idx[0], sts, &ierr), out = 1; break;
        case ZC_F08_TESTANY: ((zc_ft_tany *)fn)(&n, reqs, &idx[0], &flag, sts, &ierr), out = flag != 0; break;
        default: ((zc_ft_some *)fn)(&n, reqs, &out, idx, sts, &ierr); break;
        }
        if (ierr == MPI_SUCCESS && out == 1 && (idx[0] == 1 || idx[0] == 2)) base = (int)idx[0] - 1;
        else ZC_WARN("cannot tell the base of the indices MPI's mpi_f08 returns; taken as 1");
        MPI_Request left = MPI_Request_f2c(reqs[1]); /* not completed by the probe: completed here */
        if (left != MPI_REQUEST_NULL) PMPI_Wait(&left, MPI_STATUS_IGNORE);
    }
    __atomic_store_n(&known[which], base + 1, __ATOMIC_RELAXED);
    errno = saved;
    return base;
}
#endif

MPI_Datatype *zc_mpi_f_types(MPI_Datatype *stack, int n_stack, const MPI_Fint *ftypes, MPI_Comm comm, int neighbor,
                             bool recv_side) {
    if (!ftypes || !comm) return NULL;
    int nin = 0, nout = 0;
    zc_mpi_coll_peers(comm, neighbor, &nin, &nout);
    int n = recv_side ? nin : nout;
    if (n <= 0) return NULL;
    MPI_Datatype *t = n <= n_stack ? stack : malloc((size_t)n * sizeof(*t));
    if (t)
        for (int i = 0; i < n; i++) t[i] = PMPI_Type_f2c(ftypes[i]); /* invalid handle: NULL, 0 bytes */
    return t;
}

void zc_mpi_f_ev_recv(struct zc_mpi_call *c, MPI_Datatype t, MPI_Comm comm, const MPI_Fint *fst) {
    MPI_Status st;
    const MPI_Status *s = zc_mpi_f_status(&st, fst);
    if (s && comm) zc_mpi_ev_recv(c, t, comm, s);
}

/* ---------------------------------------------------------------- the hand-written ones: their steps */
typedef void zc_ft_ierr(MPI_Fint *ierror);
typedef void zc_ft_init_thread(MPI_Fint *required, MPI_Fint *provided, MPI_Fint *ierror);
#ifdef ZC_MPI_F08_NEXT /* MPICH's mpi_f08 MPI_Pcontrol has an optional ierror (measured: it stores there) */
typedef void zc_ft_pcontrol(MPI_Fint *level, MPI_Fint *ierror);
#define ZC_F_PCONTROL_PARAMS (MPI_Fint * level, MPI_Fint * ierror)
#define ZC_F_PCONTROL_IERROR ierror
#define ZC_F_PCONTROL_CALL(p) p(level, ierror)
#else /* MPI_PCONTROL(LEVEL) has no ierror in Open MPI's bindings */
typedef void zc_ft_pcontrol(MPI_Fint *level);
#define ZC_F_PCONTROL_PARAMS (MPI_Fint * level)
#define ZC_F_PCONTROL_IERROR NULL
#define ZC_F_PCONTROL_CALL(p) p(level)
#endif
typedef void zc_ft_abort(MPI_Fint *comm, MPI_Fint *errorcode, MPI_Fint *ierror);
/* a CHARACTER argument's length comes after all arguments (gfortran >= 8: size_t) */
typedef void zc_ft_set_name(MPI_Fint *comm, char *name, MPI_Fint *ierror, size_t name_len);
/* Open MPI's Fortran profiling entries (libmpi_mpifh.so, libmpi_usempif08.so) */
extern zc_ft_ierr pmpi_init_, pmpi_init_f08_, pmpi_finalize_, pmpi_finalize_f08_;
extern zc_ft_init_thread pmpi_init_thread_, pmpi_init_thread_f08_;
extern zc_ft_pcontrol pmpi_pcontrol_, pmpi_pcontrol_f08_;
extern zc_ft_abort pmpi_abort_, pmpi_abort_f08_;
extern zc_ft_set_name pmpi_comm_set_name_, pmpi_comm_set_name_f08_;
#pragma weak pmpi_comm_set_name_
#pragma weak pmpi_comm_set_name_f08_
#pragma weak pmpi_abort_
#pragma weak pmpi_abort_f08_
#pragma weak pmpi_init_
#pragma weak pmpi_init_f08_
#pragma weak pmpi_init_thread_
#pragma weak pmpi_init_thread_f08_
#pragma weak pmpi_finalize_
#pragma weak pmpi_finalize_f08_
#pragma weak pmpi_pcontrol_
#pragma weak pmpi_pcontrol_f08_
/* ours */
zc_ft_ierr mpi_init_, mpi_init_f08_, mpi_finalize_, mpi_finalize_f08_;
zc_ft_init_thread mpi_init_thread_, mpi_init_thread_f08_;
zc_ft_pcontrol mpi_pcontrol_, mpi_pcontrol_f08_;
zc_ft_abort mpi_abort_, mpi_abort_f08_;
zc_ft_set_name mpi_comm_set_name_, mpi_comm_set_name_f08_;

/* Open MPI's entry not found (no Fortran MPI library in the process): MPI_ERR_INTERN in ierror. */
static bool f_missing(bool found, MPI_Fint *ierror) {
    if (!found && ierror) *ierror = MPI_ERR_INTERN;
    return !found;
}

/* Our step before the PMPI call, taken only when libmpi came with the program (as in C), errno kept. */
static void f_before(void (*step)(void)) {
    if (!zc_mpi_linked()) return;
    int saved = errno;
    step();
    errno = saved;
}

/* p (MPI_Init) or pt (MPI_Init_thread), as resolved; both NULL: no Fortran MPI library at all. */
static void f_init(zc_ft_ierr *p, zc_ft_init_thread *pt, MPI_Fint *required, MPI_Fint *provided, MPI_Fint *ierror) {
    if (f_missing(p || pt, ierror)) return;
    if (!zc_mpi_linked()) { /* libmpi came after us (dlopen): pass through, as the C MPI_Init does */
        if (pt) pt(required, provided, ierror);
        else p(ierror);
        return;
    }
    MPI_Fint own = MPI_SUCCESS, *e = ierror ? ierror : &own; /* mpi_f08: ierror is optional */
    struct zc_mpi_special s;
    zc_mpi_special_begin(&s);
    if (pt) pt(required, provided, e);
    else p(e);
    int saved = errno;
    zc_mpi_special_end(&s);
    if (*e == MPI_SUCCESS) zc_mpi_init_done(pt ? ZC_MPI_MPI_Init_thread : ZC_MPI_MPI_Init, &s);
    errno = saved;
}

static void f_finalize(zc_ft_ierr *p, MPI_Fint *ierror) {
    if (f_missing(p != NULL, ierror)) return;
    f_before(zc_mpi_finalize_prepare);
    p(ierror);
}

/* As the C MPI_Pcontrol: the calls that start and stop recording are both recorded. */
static void f_pcontrol(zc_ft_pcontrol *p, MPI_Fint *level, MPI_Fint *ierror) {
    if (!p) return;
    int lv = level ? (int)*level : -1;
    if (lv > 0) zc_win_pcontrol(lv);
    struct zc_mpi_call c;
    if (!zc_mpi_linked() || !zc_mpi_begin(&c, ZC_MPI_MPI_Pcontrol, ZC_MPI_PASS)) {
        ZC_F_PCONTROL_CALL(p);
    } else {
        ZC_F_PCONTROL_CALL(p);
        int saved = errno;
        zc_mpi_end(&c, ZC_MPI_MPI_Pcontrol);
        errno = saved;
    }
    if (lv == 0) zc_win_pcontrol(0);
}

static void f_abort(zc_ft_abort *p, MPI_Fint *comm, MPI_Fint *errorcode, MPI_Fint *ierror) {
    if (f_missing(p != NULL, ierror)) return;
    f_before(zc_mpi_abort_prepare);
    p(comm, errorcode, ierror);
}

/* MPI_COMM_SET_NAME: hand-written because of its CHARACTER argument (the generator skips those);
 * the name is read back from MPI (zc_mpi_comm_named), which has taken the blanks off. */
static void f_set_name(zc_ft_set_name *p, MPI_Fint *comm, char *name, MPI_Fint *ierror, size_t name_len) {
    if (f_missing(p != NULL, ierror)) return;
    /* forwarded as given: mpi_f08's absent ierror stays absent (an error then goes to the
     * communicator's handler, and the name read back is whatever MPI kept) */
    p(comm, name, ierror, name_len);
    if ((ierror && *ierror != MPI_SUCCESS) || !zc_mpi_linked() || !zc_mpi_ready()) return;
    int saved = errno;
    zc_mpi_comm_named(PMPI_Comm_f2c(*comm));
    errno = saved;
}

/* ---------------------------------------------------------------- the entry points */
/* Both manglings of a hand-written entry point: mpi_<name>_ (mpif.h, `use mpi`) and
 * mpi_<name>_f08_ (`use mpi_f08`), each handing its own Open MPI entry (p, of type t) to body. */
#ifdef ZC_MPI_F08_NEXT /* the MPICH ABI: only mpi_f08 calls PMPI_* itself (gen_mpi_fortran.py) */
#define ZC_F_ENTRIES(name, t, params, body)                                                                    \
    __attribute__((visibility("default"))) void mpi_##name##_f08_ params {                                     \
        t *p;                                                                                                  \
        ZC_F_NEXT(p, "mpi_" #name "_f08_");                                                                    \
        body;                                                                                                  \
    }
#define ZC_F_ENTRY(name) {"mpi_" #name "_f08_", (void *)&mpi_##name##_f08_}
#else
#define ZC_F_ENTRIES(name, t, params, body)                                                                    \
    __attribute__((visibility("default"))) void mpi_##name##_ params {                                         \
        t *p;                                                                                                  \
        ZC_F_RESOLVE(p, pmpi_##name##_);                                                                       \
        body;                                                                                                  \
    }                                                                                                          \
    __attribute__((visibility("default"))) void mpi_##name##_f08_ params {                                     \
        t *p;                                                                                                  \
        ZC_F_RESOLVE(p, pmpi_##name##_f08_);                                                                   \
        body;                                                                                                  \
    }
#define ZC_F_ENTRY(name) {"mpi_" #name "_", (void *)&mpi_##name##_}, {"mpi_" #name "_f08_", (void *)&mpi_##name##_f08_}
#endif

ZC_F_ENTRIES(init, zc_ft_ierr, (MPI_Fint *ierror), f_init(p, NULL, NULL, NULL, ierror))
ZC_F_ENTRIES(init_thread, zc_ft_init_thread, (MPI_Fint *required, MPI_Fint *provided, MPI_Fint *ierror),
             f_init(NULL, p, required, provided, ierror))
ZC_F_ENTRIES(finalize, zc_ft_ierr, (MPI_Fint *ierror), f_finalize(p, ierror))
ZC_F_ENTRIES(abort, zc_ft_abort, (MPI_Fint *comm, MPI_Fint *errorcode, MPI_Fint *ierror),
             f_abort(p, comm, errorcode, ierror))
ZC_F_ENTRIES(pcontrol, zc_ft_pcontrol, ZC_F_PCONTROL_PARAMS, f_pcontrol(p, level, ZC_F_PCONTROL_IERROR))
ZC_F_ENTRIES(comm_set_name, zc_ft_set_name, (MPI_Fint *comm, char *name, MPI_Fint *ierror, size_t name_len),
             f_set_name(p, comm, name, ierror, name_len))

/* the hand-written entry points, for the dispatch (zc_mpi_dispatch.c) */
const struct zc_mpi_entry zc_mpi_fh_entries[] = {ZC_F_ENTRY(init),  ZC_F_ENTRY(init_thread), ZC_F_ENTRY(finalize),
                                                 ZC_F_ENTRY(abort), ZC_F_ENTRY(pcontrol),    ZC_F_ENTRY(comm_set_name)};
const unsigned zc_mpi_fh_nentries = sizeof(zc_mpi_fh_entries) / sizeof(zc_mpi_fh_entries[0]);
