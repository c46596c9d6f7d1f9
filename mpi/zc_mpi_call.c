/* SPDX-License-Identifier: MIT */
/* A recorded MPI call's life out of line (the inline path is zc_mpi_internal.h): the functions'
 * regions, the thread's first call and PAPI-sampled calls, calls while recording is off, the
 * slow open, overflow and close of a call's record, and the tails of the fast paths (zc_mpi_req.h). */
#include "zc_mpi_internal.h"
#include "zc_mpi_gen.h"

#include <errno.h>
#include <stdlib.h>

/* A call's events go to its thread's location in one batch when it returns: one ZC_EV_CALL
 * record (Enter and Leave) holding the events inside it. Events of what the call starts (MpiSend,
 * MpiIsend, MpiIrecvRequest, a non-blocking collective's request, MpiCollectiveBegin) carry the
 * Enter time, those of what it finishes (receives, completions, tests, MpiCollectiveEnd) the
 * Leave time: two clock reads per call, whatever it records. ts == 0 marks "the Leave time". */

_Thread_local struct zc_mpi_tls zc_mpi_tls __attribute__((tls_model("initial-exec")));
uint32_t zc_mpi_region_cache[ZC_MPI_FN_COUNT] = {[0 ... ZC_MPI_FN_COUNT - 1] = ZC_NO_ID};

/* ---------------------------------------------------------------- regions, first call, PAPI */
uint32_t zc_mpi_region(uint32_t fn) {
    uint32_t r = __atomic_load_n(&zc_mpi_region_cache[fn], __ATOMIC_RELAXED);
    if (r != ZC_NO_ID) return r;
    r = zc_def_region(zc_mpi_fn_names[fn], (enum zc_region_role)zc_mpi_fn_role[fn], ZC_PARADIGM_MPI);
    __atomic_store_n(&zc_mpi_region_cache[fn], r, __ATOMIC_RELAXED); /* ZC_NO_ID (failed): asked again */
    return r;
}

/* PAPI counters at a sampled call's Enter (read after its Enter time was taken): the Metric
 * records and the Enter are written now, before the MPI call; its events follow it, and its end
 * reads the counters again before the Leave (zc_mpi_close_slow). */
static void papi_enter(struct zc_mpi_call *c, uint32_t fn) {
    struct zc_ev ev[ZC_PAPI_MAX_RECS + 1];
    size_t k = zc_papi_read(c->t, ev);
    if (!k) return; /* no counters (PAPI off, or failed just now): the ordinary path */
    zc_papi_stamp(ev, k, c->t0);
    ev[k] = (struct zc_ev){c->t0, ZC_EV_ENTER, zc_mpi_region(fn), 0, 0, 0};
    struct zc_loc *l = c->t->loc;
    if (zc_own_begin(l)) zc_own_put(l, ev, k + 1);
    zc_own_end(l);
    c->papi = true;
}

/* The thread's first tracked call (registration), and every call while PAPI counts. */
bool zc_mpi_begin_slow(struct zc_mpi_call *c, uint32_t fn) {
    zc_mpi_tls.err = &errno;
    c->papi = false;
    struct zc_thread *t = zc_tls_thread;
    bool rec = zc_active() && zc_on(ZC_F_MPI);
    if (!t && rec) t = zc_thread_get();
    c->t = rec ? t : NULL;
    if (!c->t) return true;
    c->t0 = zc_tick();
    /* owners that lock, or calls that begin with an Enter: zc_mpi_open's slow path */
    if (zc_own_locked || zc_on(ZC_F_PAPI)) __atomic_store_n(&zc_mpi_open_slowly, true, __ATOMIC_RELAXED);
    /* sampled only when recorded: whatever turns recording off turns sampling off with it */
    if (zc_on(ZC_F_PAPI)) papi_enter(c, fn);
    else /* PAPI off (for good): the inline and fast paths from the next call on; never freed (zc_loc.c) */
        zc_mpi_tls.t = c->tok = t;
    return true;
}

/* ---------------------------------------------------------------- recording off */
/* Recording is off: a KEEP call is tracked without events; a DONE call only if requests started
 * while recording are pending (it is then recorded if it takes one of them: zc_mpi_closed_taken). */
bool zc_mpi_begin_closed(struct zc_mpi_call *c, uint32_t fn, int mode) {
    (void)fn;
    if (!zc_mpi_ready() || zc_mpi_nested()) return false;
    if (mode == ZC_MPI_DONE && !zc_mpi_closed_pending()) return false;
    c->tok = zc_mpi_tls.fast;
    zc_mpi_tls.fast = ZC_MPI_INSIDE;
    zc_mpi_tls.err = &errno; /* the thread's first tracked call may be this one */
    c->closed = true;
    c->papi = false;
    c->t = NULL;
    return true;
}

void zc_mpi_closed_taken(struct zc_mpi_call *c, struct zc_req *const *ris, int n) {
    /* the writer's handles carry no record: any of them may be one started while recording */
    bool any = zc_mpi_deferred && zc_mpi_tls.raw_pending;
    for (int i = 0; ris && i < n && !any; i++) any = ris[i] && (zr_is_v(ris[i]) || ris[i]->active);
    if (!any || !zc_on(ZC_F_MPI)) return;
    struct zc_thread *t = zc_thread_get();
    if (!t) return;
    c->t = t;
    c->t0 = zc_tick();
    /* owners that lock take zc_mpi_open's slow path (as zc_mpi_begin_slow arranges) */
    if (zc_own_locked) __atomic_store_n(&zc_mpi_open_slowly, true, __ATOMIC_RELAXED);
}

/* ---------------------------------------------------------------- the slow open and close */
bool zc_mpi_open_slowly;

/* The buffer is full: out it goes (the caller owns the location); the flush is recorded as the
 * collector's region after the call's events, whose times it follows. */
static void call_flush(struct zc_mpi_call *c, struct zc_loc *l) {
    uint64_t f0 = zc_tick();
    zc_loc_write_out(l);
    if (!c->f1) c->f0 = f0;
    c->f1 = zc_tick();
}

/* The region not defined yet, no room for the call's record, or owners lock. */
void zc_mpi_open_slow(struct zc_mpi_call *c, uint32_t fn) {
    c->region = zc_mpi_region(fn);
    c->split = false;
    c->f1 = 0;
    struct zc_loc *l = c->t->loc;
    if (!zc_mpi_own(c, l, ZC_MPI_OPEN_SLOW)) return;
    if (l->n + 2 > l->lim) call_flush(c, l);
    c->at = l->n;
    if (c->papi) c->split = true; /* its Enter is out (papi_enter): events, then counters and Leave */
    else l->buf[c->at++] = (struct zc_ev){c->t0, ZC_EV_CALL, c->region, c->t1, 0, ZC_CALL_RUN};
}

/* The call's events fill the buffer: Enter and the events so far go out with it, a Leave after
 * the rest ends the call. */
void zc_mpi_more(struct zc_mpi_call *c) {
    struct zc_loc *l = c->l;
    if (c->mode == ZC_MPI_OPEN) { /* from here on the slow close */
        c->mode = ZC_MPI_OPEN_SLOW;
        c->split = false;
        c->f1 = 0;
    }
    if (!c->split) { /* the call's record: the last ZC_EV_CALL, before the events inside it */
        size_t at = c->at;
        while (at > 0 && l->buf[at - 1].type != ZC_EV_CALL) at--;
        struct zc_ev *e = &l->buf[at - 1];
        c->region = e->a;
        *e = (struct zc_ev){c->t0, ZC_EV_ENTER, c->region, 0, 0, 0};
        c->split = true;
    }
    zc_loc_publish(l, c->at); /* the Enter and the events so far go out with the buffer */
    call_flush(c, l);
    c->at = l->n;
}

/* A call whose events went out in two buffers, or after a flush: the buffer's reserve (beyond
 * lim) holds the Leave and the flush region. */
void zc_mpi_close_slow(struct zc_mpi_call *c) {
    struct zc_loc *l = c->l;
    if (c->papi) { /* counters read inside the region: its Leave after them */
        struct zc_ev m[ZC_PAPI_MAX_RECS];
        size_t k = zc_papi_read(c->t, m);
        uint64_t t1 = zc_tick();
        zc_papi_stamp(m, k, t1);
        for (size_t i = 0; i < k; i++) l->buf[c->at++] = m[i]; /* the reserve beyond lim holds them */
        l->buf[c->at++] = (struct zc_ev){t1, ZC_EV_LEAVE, c->region, 0, 0, 0};
    } else if (c->split) {
        l->buf[c->at++] = (struct zc_ev){c->t1, ZC_EV_LEAVE, c->region, 0, 0, 0};
    }
    /* the collector's own region: not counted as the application's (zc_loc.c) */
    if (c->f1) l->buf[c->at++] = (struct zc_ev){c->f0, ZC_EV_CALL, zc_region_flush, c->f1, 0, 0};
    zc_loc_publish(l, c->at);
    zc_own_end(l);
}

/* ---------------------------------------------------------------- fast paths */
bool zc_mpi_fast_start, zc_mpi_fast_done;
/* The fast paths need: MPI ready, the writer matching requests (zc_mpi_deferred), TSC ticks,
 * owners that need no lock, MPI recording on and PAPI off; completions also an empty request
 * table. All of these are settled by the time MPI is ready, and change afterwards only towards
 * the general path (PAPI failing off is ignored: the general path still records right). */
static void fast_update(void) {
    bool on = zc_mpi_ready() && zc_mpi_deferred && zc_tsc && !zc_own_locked && zc_on(ZC_F_MPI) && !zc_on(ZC_F_PAPI) &&
              !__atomic_load_n(&zc_mpi_open_slowly, __ATOMIC_RELAXED);
    __atomic_store_n(&zc_mpi_fast_start, on, __ATOMIC_RELEASE);
    __atomic_store_n(&zc_mpi_fast_done, on && !zc_mpi_rt_used, __ATOMIC_RELEASE);
}
void zc_mpi_set_ready(bool on) {
    atomic_store_explicit(&zc_mpi_is_ready, on, memory_order_release);
    fast_update();
}

/* What the fast path does not finish (zc_mpi_req.h): the general path's open, request and close,
 * from the ticks the fast path read, errno kept as MPI left it. The fast path set
 * zc_mpi_tls.fast to ZC_MPI_INSIDE: calls made in here are nested. */
static void fast_call(struct zc_mpi_call *c, struct zc_thread *t, uint32_t fn, uint64_t t0, uint64_t t1) {
    c->t = t;
    c->t0 = t0;
    c->papi = false;
    c->closed = false;
    c->has_pre = false;
    c->tok = t;
    zc_mpi_open_at(c, fn, t1);
}

void zc_mpi_fast_req_slow(struct zc_thread *t, uint32_t fn, uint64_t t0, uint64_t t1, int rc, bool send, uint64_t bytes,
                          uint64_t peer_tag, MPI_Comm comm, const MPI_Request *request) {
    int e = errno;
    struct zc_mpi_call c;
    fast_call(&c, t, fn, t0, t1);
    /* zc_mpi_req_new of a request the writer matches (the fast paths run only then) */
    MPI_Request h = rc == MPI_SUCCESS ? *request : MPI_REQUEST_NULL;
    if (c.t && h != MPI_REQUEST_NULL) {
        uint32_t comm_id = zc_mpi_comm_id(comm);
        zc_mpi_tls.raw_pending++;
        *zc_mpi_slots(&c, 1) = zc_mpi_start_h(t0, send, comm_id, bytes, peer_tag, h);
    }
    zc_mpi_close(&c);
    errno = e;
}

void zc_mpi_fast_send_slow(struct zc_thread *t, uint32_t fn, uint64_t t0, uint64_t t1, uint64_t bytes, int peer,
                           uint64_t peer_tag, MPI_Comm comm) {
    int e = errno;
    struct zc_mpi_call c;
    fast_call(&c, t, fn, t0, t1);
    /* zc_mpi_ev_send's event: none to MPI_PROC_NULL */
    if (c.t && peer != MPI_PROC_NULL)
        *zc_mpi_slots(&c, 1) = (struct zc_ev){t0, ZC_EV_MPI_SEND, zc_mpi_comm_id(comm), bytes, peer_tag, 0};
    zc_mpi_close(&c);
    errno = e;
}

void zc_mpi_fast_all_slow(struct zc_thread *t, uint32_t fn, uint64_t t0, uint64_t t1, int rc, int n,
                          const MPI_Request *before, const MPI_Request *after, const MPI_Status *sts) {
    int e = errno;
    struct zc_mpi_call c;
    fast_call(&c, t, fn, t0, t1);
    zc_mpi_settle_all(&c, before, NULL, n, after, rc, 1, false, sts);
    zc_mpi_close(&c);
    errno = e;
}

