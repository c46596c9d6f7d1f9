/* SPDX-License-Identifier: MIT */
/* The collector's event records (struct zc_ev) and their types: what a location buffer holds,
 * what the writer turns into OTF2 events and the salvage journal stores. The bottom of the house:
 * includes nothing of the collector. */
#ifndef ZC_EV_H
#define ZC_EV_H

#include <stdbool.h>
#include <stdint.h>

enum zc_ev_type {
    ZC_EV_ENTER = 1,   /* a = region */
    ZC_EV_LEAVE,       /* a = region */
    ZC_EV_PARAM_U64,   /* a = parameter, b = value */
    ZC_EV_RMA_GET,     /* a = window, b = bytes, c = remote << 32 | matching id (low 32 bits) */
    ZC_EV_RMA_PUT,     /* same fields */
    ZC_EV_RMA_COMPLETE, /* a = window, c = matching id */
    ZC_EV_BUFFER_FLUSH, /* b = stop time */
    /* MPI: a = local communicator, b = bytes, c = peer rank in the communicator << 32 | tag,
     * d = request id. Collectives: b = sent, c = received, d = op << 32 | root. */
    ZC_EV_MPI_SEND,
    ZC_EV_MPI_ISEND,
    ZC_EV_MPI_ISEND_COMPLETE, /* d = request id */
    ZC_EV_MPI_IRECV_REQUEST,  /* d = request id */
    ZC_EV_MPI_RECV,
    ZC_EV_MPI_IRECV,
    ZC_EV_MPI_REQUEST_TEST,      /* d = request id */
    ZC_EV_MPI_REQUEST_CANCELLED, /* d = request id */
    ZC_EV_MPI_COLL_BEGIN,
    ZC_EV_MPI_COLL_END,
    ZC_EV_MPI_NBC_REQUEST,  /* d = request id */
    ZC_EV_MPI_NBC_COMPLETE, /* as COLL_END; always followed by ZC_EV_MPI_NBC_REQID in the same put */
    ZC_EV_MPI_NBC_REQID,    /* d = request id of the NBC_COMPLETE before it */
    /* Requests the MPI layer leaves to the writer to match (mpi/zc_mpi_resolve.c: MPI_THREAD_SINGLE
     * and FUNNELED, where one thread makes every MPI call): d = the MPI_Request handle. The
     * writer turns them into the events above, with request ids, or into ZC_EV_MPI_NOP. */
    ZC_EV_MPI_ISEND_H,  /* as ZC_EV_MPI_ISEND */
    ZC_EV_MPI_IRECV_H,  /* a = communicator */
    ZC_EV_MPI_DONE_H,   /* a = flags (ZC_DONE_STATUS; bits above), b, c: the status as the MPI layer read it (it decodes them) */
    ZC_EV_MPI_TEST_H,   /* tested, not completed */
    ZC_EV_MPI_FREE_H,   /* MPI_Request_free: no completion will be recorded */
    ZC_EV_MPI_NOP,      /* nothing to write (inside a call's run) */
    /* A whole host call in one record (thread locations): ts = Enter, b = Leave time, a = region,
     * c = callsite id (0 = none). Written as Enter, [ParameterUnsignedInt "callsite id"], Leave. */
    ZC_EV_CALL,
    /* MeasurementOnOff, a = 1 on, 0 off: placed by the writer (writer/zc_writer.c), never recorded */
    ZC_EV_MEASUREMENT,
    /* PAPI counters (zc_papi.h): a = number of values, b, c, d = the first three; the others
     * follow in ZC_EV_METRIC_MORE records (b, c, d each, same ts), always in the same put. One
     * OTF2 Metric of the process's metric class. */
    ZC_EV_METRIC,
    ZC_EV_METRIC_MORE,
    /* An MPI_Irecv and its request in one record (thread locations; the fast path, mpi/zc_mpi_req.h):
     * ts = Enter and the request's time, a = region, b = Leave time, d = request id, c = callsite
     * id (0 = none). Written as Enter, [ParameterUnsignedInt "callsite id"], MpiIrecvRequest,
     * Leave: the events of a ZC_EV_CALL followed by a ZC_EV_MPI_IRECV_REQUEST, one record fewer
     * for every stage after the call (conversion, matching, journal, encoder). As the MPI layer
     * writes it, before the writer matches it (mpi/zc_mpi_resolve.c): c = communicator, d = the
     * MPI_Request handle. */
    ZC_EV_CALL_IRECV,
};

/* ZC_EV_CALL.d = ZC_CALL_RUN: the call holds the MPI event records that follow it (an MPI call
 * writes its record before it knows how many; the writer counts them, zc_evt_normalize). */
#define ZC_CALL_RUN UINT64_MAX
static inline bool zc_ev_in_call(uint32_t type) { return type >= ZC_EV_MPI_SEND && type <= ZC_EV_MPI_NOP; }
/* A record of a whole call: ZC_EV_CALL or ZC_EV_CALL_IRECV (ts = Enter, b = Leave, a = region) */
static inline bool zc_ev_is_call(uint32_t type) { return type == ZC_EV_CALL || type == ZC_EV_CALL_IRECV; }
enum { ZC_DONE_STATUS = 1 }; /* ZC_EV_MPI_DONE_H.a: a status came */

struct zc_ev {
    uint64_t ts;
    uint32_t type;
    uint32_t a;
    uint64_t b, c, d;
};

enum zc_loc_kind { ZC_LOC_THREAD, ZC_LOC_DEVICE };

/* The layout of PAPI's records (ZC_EV_METRIC, ZC_EV_METRIC_MORE; core/zc_papi.h reads them) */
#define ZC_PAPI_MAX_EVENTS 16 /* per process; more are named in the warning and not counted */
#define ZC_PAPI_PER_REC 3     /* values per ZC_EV_METRIC / ZC_EV_METRIC_MORE record (b, c, d) */
#define ZC_PAPI_MAX_RECS ((ZC_PAPI_MAX_EVENTS + ZC_PAPI_PER_REC - 1) / ZC_PAPI_PER_REC)

#endif
