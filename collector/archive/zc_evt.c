/* SPDX-License-Identifier: MIT */
/* zc_evt_write: the collector's event records as OTF2 events (zc_evt.h). */
#include "zc_evt.h"

/* a message (zc_ev.h): a = communicator, b = bytes, c = peer << 32 | tag, d = request id */
static OTF2_ErrorCode write_p2p(OTF2_EvtWriter *w, const struct zc_ev *x) {
    uint32_t peer = (uint32_t)(x->c >> 32), tag = (uint32_t)x->c;
    switch (x->type) {
    case ZC_EV_MPI_SEND: return OTF2_EvtWriter_MpiSend(w, NULL, x->ts, peer, x->a, tag, x->b);
    case ZC_EV_MPI_ISEND: return OTF2_EvtWriter_MpiIsend(w, NULL, x->ts, peer, x->a, tag, x->b, x->d);
    case ZC_EV_MPI_RECV: return OTF2_EvtWriter_MpiRecv(w, NULL, x->ts, peer, x->a, tag, x->b);
    default: return OTF2_EvtWriter_MpiIrecv(w, NULL, x->ts, peer, x->a, tag, x->b, x->d); /* ZC_EV_MPI_IRECV */
    }
}

OTF2_ErrorCode zc_evt_write(OTF2_EvtWriter *w, const struct zc_ev *ev, size_t n, uint32_t param_callsite,
                            const uint8_t *metric_types, uint64_t *ts_min, uint64_t *ts_max) {
    OTF2_ErrorCode e = OTF2_SUCCESS;
    size_t leave_at = SIZE_MAX;
    const struct zc_ev *call = NULL;
    uint64_t lo = *ts_min, hi = *ts_max;
    for (size_t i = 0; i < n && e == OTF2_SUCCESS; i++) {
        if (i > leave_at) { /* the end of a call's events (a record may have taken the next one too) */
            e = OTF2_EvtWriter_Leave(w, NULL, call->b, call->a);
            leave_at = SIZE_MAX;
            if (e != OTF2_SUCCESS) break;
        }
        const struct zc_ev *x = &ev[i];
        if (x->type == ZC_EV_MPI_NOP) continue; /* resolved to nothing (zc_loc_resolver) */
        if (x->ts < lo) lo = x->ts;
        if (x->ts > hi) hi = x->ts;
        switch (x->type) {
        case ZC_EV_ENTER: e = OTF2_EvtWriter_Enter(w, NULL, x->ts, x->a); break;
        case ZC_EV_LEAVE: e = OTF2_EvtWriter_Leave(w, NULL, x->ts, x->a); break;
        case ZC_EV_PARAM_U64: e = OTF2_EvtWriter_ParameterUnsignedInt(w, NULL, x->ts, x->a, x->b); break;
        case ZC_EV_RMA_GET: e = OTF2_EvtWriter_RmaGet(w, NULL, x->ts, x->a, (uint32_t)(x->c >> 32), x->b, x->c & 0xffffffffu); break;
        case ZC_EV_RMA_PUT: e = OTF2_EvtWriter_RmaPut(w, NULL, x->ts, x->a, (uint32_t)(x->c >> 32), x->b, x->c & 0xffffffffu); break;
        case ZC_EV_RMA_COMPLETE: e = OTF2_EvtWriter_RmaOpCompleteBlocking(w, NULL, x->ts, x->a, x->c); break;
        case ZC_EV_BUFFER_FLUSH: e = OTF2_EvtWriter_BufferFlush(w, NULL, x->ts, x->b); break;
        case ZC_EV_MEASUREMENT: /* recording windows (the writer places them) */
            e = OTF2_EvtWriter_MeasurementOnOff(w, NULL, x->ts, x->a ? OTF2_MEASUREMENT_ON : OTF2_MEASUREMENT_OFF);
            break;
        case ZC_EV_CALL: /* a whole host call (zc_ev.h): its Leave follows the d records inside it */
            e = OTF2_EvtWriter_Enter(w, NULL, x->ts, x->a);
            if (e == OTF2_SUCCESS && x->c) e = OTF2_EvtWriter_ParameterUnsignedInt(w, NULL, x->ts, param_callsite, x->c);
            if (x->d && i + x->d < n) {
                leave_at = i + x->d;
                call = x;
            } else if (e == OTF2_SUCCESS) {
                e = OTF2_EvtWriter_Leave(w, NULL, x->b, x->a);
            }
            if (x->b > hi) hi = x->b;
            break;
        case ZC_EV_CALL_IRECV: /* an MPI_Irecv and its request (zc_ev.h) */
            e = OTF2_EvtWriter_Enter(w, NULL, x->ts, x->a);
            if (e == OTF2_SUCCESS && x->c) e = OTF2_EvtWriter_ParameterUnsignedInt(w, NULL, x->ts, param_callsite, x->c);
            if (e == OTF2_SUCCESS) e = OTF2_EvtWriter_MpiIrecvRequest(w, NULL, x->ts, x->d);
            if (e == OTF2_SUCCESS) e = OTF2_EvtWriter_Leave(w, NULL, x->b, x->a);
            if (x->b > hi) hi = x->b;
            break;
        case ZC_EV_MPI_SEND:
        case ZC_EV_MPI_ISEND:
        case ZC_EV_MPI_RECV:
        case ZC_EV_MPI_IRECV: e = write_p2p(w, x); break;
        case ZC_EV_MPI_ISEND_COMPLETE: e = OTF2_EvtWriter_MpiIsendComplete(w, NULL, x->ts, x->d); break;
        case ZC_EV_MPI_IRECV_REQUEST: e = OTF2_EvtWriter_MpiIrecvRequest(w, NULL, x->ts, x->d); break;
        case ZC_EV_MPI_REQUEST_TEST: e = OTF2_EvtWriter_MpiRequestTest(w, NULL, x->ts, x->d); break;
        case ZC_EV_MPI_REQUEST_CANCELLED: e = OTF2_EvtWriter_MpiRequestCancelled(w, NULL, x->ts, x->d); break;
        case ZC_EV_MPI_COLL_BEGIN: e = OTF2_EvtWriter_MpiCollectiveBegin(w, NULL, x->ts); break;
        case ZC_EV_MPI_COLL_END:
            e = OTF2_EvtWriter_MpiCollectiveEnd(w, NULL, x->ts, (OTF2_CollectiveOp)(x->d >> 32), x->a, (uint32_t)x->d,
                                                x->b, x->c);
            break;
        case ZC_EV_METRIC: {
            /* the values: b, c, d here and in the ZC_EV_METRIC_MORE records after it (zc_ev.h) */
            uint32_t nv = x->a;
            OTF2_MetricValue v[ZC_PAPI_MAX_EVENTS];
            size_t more = nv ? (nv + ZC_PAPI_PER_REC - 1) / ZC_PAPI_PER_REC - 1 : 0;
            if (!metric_types || nv == 0 || nv > ZC_PAPI_MAX_EVENTS || i + more >= n) break; /* cannot happen */
            for (uint32_t j = 0; j < nv; j++) {
                const struct zc_ev *r = &ev[i + j / ZC_PAPI_PER_REC];
                uint32_t k = j % ZC_PAPI_PER_REC;
                v[j].unsigned_int = k == 0 ? r->b : k == 1 ? r->c : r->d;
            }
            e = OTF2_EvtWriter_Metric(w, NULL, x->ts, 0, (uint8_t)nv, (const OTF2_Type *)metric_types, v);
            i += more;
            break;
        }
        case ZC_EV_MPI_NBC_REQUEST: e = OTF2_EvtWriter_NonBlockingCollectiveRequest(w, NULL, x->ts, x->d); break;
        case ZC_EV_MPI_NBC_COMPLETE:
            /* its request id is in the record that follows (zc_mpi puts both at once) */
            if (i + 1 < n && ev[i + 1].type == ZC_EV_MPI_NBC_REQID) {
                e = OTF2_EvtWriter_NonBlockingCollectiveComplete(w, NULL, x->ts, (OTF2_CollectiveOp)(x->d >> 32), x->a,
                                                                 (uint32_t)x->d, x->b, x->c, ev[i + 1].d);
                i++;
            }
            break;
        default: break;
        }
    }
    if (e == OTF2_SUCCESS && leave_at != SIZE_MAX) e = OTF2_EvtWriter_Leave(w, NULL, call->b, call->a);
    *ts_min = lo;
    *ts_max = hi;
    return e;
}
