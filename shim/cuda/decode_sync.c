/* Decoding of driver calls that order work rather than touch memory: events, stream waits,
 * stream and context synchronization and queries, stream creation and destruction, host
 * functions, stream capture begin / end and graph launches (see decode.h). */
#include "decode.h"

#include "streams.h"

#define P(type) ((const type##_params *)cb->functionParams)
#define CBID(name) CUPTI_DRIVER_TRACE_CBID_##name

static void set_event(dls_cuda_op *op, CUevent e)
{
    op->flags |= DLS_OPF_HAS_EVENT;
    op->event = (uintptr_t)e;
    op->event_id = dls_cuda_event_id(e);
}

static void on_stream(dls_cuda_op *op, dls_op_kind kind, const CUpti_CallbackData *cb, CUstream h, int per_thread)
{
    op->kind = kind;
    dls_cuda_decode_stream(op, h, per_thread, cb);
}

/* A stream being destroyed: resolved at ENTER (the driver forgets it during the call) and
 * remembered for the EXIT of the same call on this thread. */
static __thread struct {
    uintptr_t handle;
    dls_cuda_stream s;
} t_destroying;

static void stream_destroy(dls_cuda_op *op, const CUpti_CallbackData *cb, CUstream h)
{
    op->kind = DLS_OP_STREAM_DESTROY;
    if (cb->callbackSite == CUPTI_API_ENTER) {
        dls_cuda_decode_stream(op, h, 0, cb);
        t_destroying.handle = (uintptr_t)h;
        t_destroying.s = op->stream;
    } else if (t_destroying.handle == (uintptr_t)h) {
        op->flags |= DLS_OPF_HAS_STREAM;
        op->stream = t_destroying.s;
    } else {
        dls_cuda_decode_stream(op, h, 0, cb);
    }
}

/* A created stream is known at a successful EXIT; its kind comes from the creation flags. */
static void stream_create(dls_cuda_op *op, const CUpti_CallbackData *cb, CUstream *ph, unsigned flags)
{
    op->kind = DLS_OP_STREAM_CREATE;
    if (cb->callbackSite != CUPTI_API_EXIT || !ph || !cb->functionReturnValue ||
        *(const CUresult *)cb->functionReturnValue != CUDA_SUCCESS)
        return;
    dls_cuda_decode_stream(op, *ph, 0, cb);
    op->stream.kind = (flags & CU_STREAM_NON_BLOCKING) ? DLS_STREAM_NON_BLOCKING : DLS_STREAM_BLOCKING;
}

static void event_create(dls_cuda_op *op, const CUpti_CallbackData *cb, CUevent *pe, unsigned flags)
{
    op->kind = DLS_OP_EVENT_CREATE;
    op->event_flags = flags;
    if (cb->callbackSite != CUPTI_API_EXIT || !pe || !cb->functionReturnValue ||
        *(const CUresult *)cb->functionReturnValue != CUDA_SUCCESS)
        return;
    op->flags |= DLS_OPF_HAS_EVENT;
    op->event = (uintptr_t)*pe;
    op->event_id = dls_cuda_event_id_new(*pe);
}

#define RECORD(name, ptsz, flags_)                                      \
    case CBID(name):                                                    \
        on_stream(op, DLS_OP_EVENT_RECORD, cb, P(name)->hStream, ptsz); \
        set_event(op, P(name)->hEvent);                                 \
        op->event_flags = flags_;                                       \
        op->flags |= DLS_OPF_ASYNC;                                     \
        return 1;
#define ON_EVENT(name, kind_)           \
    case CBID(name):                    \
        op->kind = kind_;               \
        set_event(op, P(name)->hEvent); \
        return 1;
#define ON_STREAM(name, kind_, ptsz, async)               \
    case CBID(name):                                      \
        on_stream(op, kind_, cb, P(name)->hStream, ptsz); \
        if (async)                                        \
            op->flags |= DLS_OPF_ASYNC;                   \
        return 1;
#define WAIT(name, ptsz)                                                     \
    case CBID(name):                                                         \
        on_stream(op, DLS_OP_STREAM_WAIT_EVENT, cb, P(name)->hStream, ptsz); \
        set_event(op, P(name)->hEvent);                                      \
        op->flags |= DLS_OPF_ASYNC;                                          \
        return 1;

int dls_cuda_decode_sync(CUpti_CallbackId cbid, const CUpti_CallbackData *cb, dls_cuda_op *op)
{
    switch (cbid) {
        RECORD(cuEventRecord, 0, 0)
        RECORD(cuEventRecord_ptsz, 1, 0)
        RECORD(cuEventRecordWithFlags, 0, P(cuEventRecordWithFlags)->flags)
        RECORD(cuEventRecordWithFlags_ptsz, 1, P(cuEventRecordWithFlags_ptsz)->flags)
        WAIT(cuStreamWaitEvent, 0)
        WAIT(cuStreamWaitEvent_ptsz, 1)
        ON_EVENT(cuEventQuery, DLS_OP_EVENT_QUERY)
        ON_EVENT(cuEventSynchronize, DLS_OP_EVENT_SYNC)
        ON_EVENT(cuEventDestroy, DLS_OP_EVENT_DESTROY)
        ON_EVENT(cuEventDestroy_v2, DLS_OP_EVENT_DESTROY)
        ON_STREAM(cuStreamSynchronize, DLS_OP_STREAM_SYNC, 0, 0)
        ON_STREAM(cuStreamSynchronize_ptsz, DLS_OP_STREAM_SYNC, 1, 0)
        ON_STREAM(cuStreamQuery, DLS_OP_STREAM_QUERY, 0, 0)
        ON_STREAM(cuStreamQuery_ptsz, DLS_OP_STREAM_QUERY, 1, 0)
        ON_STREAM(cuLaunchHostFunc, DLS_OP_HOST_FUNC, 0, 1)
        ON_STREAM(cuLaunchHostFunc_ptsz, DLS_OP_HOST_FUNC, 1, 1)
        ON_STREAM(cuStreamAddCallback, DLS_OP_HOST_FUNC, 0, 1)
        ON_STREAM(cuStreamAddCallback_ptsz, DLS_OP_HOST_FUNC, 1, 1)
        ON_STREAM(cuStreamBeginCapture, DLS_OP_CAPTURE_BEGIN, 0, 0)
        ON_STREAM(cuStreamBeginCapture_ptsz, DLS_OP_CAPTURE_BEGIN, 1, 0)
        ON_STREAM(cuStreamBeginCapture_v2, DLS_OP_CAPTURE_BEGIN, 0, 0)
        ON_STREAM(cuStreamBeginCapture_v2_ptsz, DLS_OP_CAPTURE_BEGIN, 1, 0)
        ON_STREAM(cuStreamBeginCaptureToGraph, DLS_OP_CAPTURE_BEGIN, 0, 0)
        ON_STREAM(cuStreamBeginCaptureToGraph_ptsz, DLS_OP_CAPTURE_BEGIN, 1, 0)
        ON_STREAM(cuStreamEndCapture, DLS_OP_CAPTURE_END, 0, 0)
        ON_STREAM(cuStreamEndCapture_ptsz, DLS_OP_CAPTURE_END, 1, 0)
    case CBID(cuGraphLaunch):
        on_stream(op, DLS_OP_GRAPH_LAUNCH, cb, P(cuGraphLaunch)->hStream, 0);
        op->flags |= DLS_OPF_ASYNC | DLS_OPF_CONSERVATIVE;
        return 1;
    case CBID(cuGraphLaunch_ptsz):
        on_stream(op, DLS_OP_GRAPH_LAUNCH, cb, P(cuGraphLaunch_ptsz)->hStream, 1);
        op->flags |= DLS_OPF_ASYNC | DLS_OPF_CONSERVATIVE;
        return 1;
    case CBID(cuCtxSynchronize):
        op->kind = DLS_OP_CTX_SYNC;
        op->ctx = (uintptr_t)cb->context;
        return 1;
    case CBID(cuCtxSynchronize_v2):
        op->kind = DLS_OP_CTX_SYNC;
        op->ctx = (uintptr_t)(P(cuCtxSynchronize_v2)->ctx ? P(cuCtxSynchronize_v2)->ctx : cb->context);
        return 1;
    case CBID(cuStreamCreate):
        stream_create(op, cb, P(cuStreamCreate)->phStream, P(cuStreamCreate)->Flags);
        return 1;
    case CBID(cuStreamCreateWithPriority):
        stream_create(op, cb, P(cuStreamCreateWithPriority)->phStream, P(cuStreamCreateWithPriority)->flags);
        return 1;
    case CBID(cuGreenCtxStreamCreate):
        stream_create(op, cb, P(cuGreenCtxStreamCreate)->phStream, P(cuGreenCtxStreamCreate)->flags);
        return 1;
    case CBID(cuStreamDestroy):
        stream_destroy(op, cb, P(cuStreamDestroy)->hStream);
        return 1;
    case CBID(cuStreamDestroy_v2):
        stream_destroy(op, cb, P(cuStreamDestroy_v2)->hStream);
        return 1;
    case CBID(cuEventCreate):
        event_create(op, cb, P(cuEventCreate)->phEvent, P(cuEventCreate)->Flags);
        return 1;
    default:
        return -1;
    }
}
