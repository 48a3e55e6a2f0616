/* The readers of events and of stream, event and graph lifetimes (decode.h): an event and its
 * id, a stream, event, captured graph or executable graph known only at the EXIT of the call that
 * makes it, a stream resolved before its destruction. The calls that order work (records, waits,
 * synchronizes, queries, host functions, capture begins, graph launches) are read by their cases
 * in decode.c. */
#include "decode_sync.h"

#include "identity.h"

void dls_cuda_decode_event(dls_cuda_op *op, CUevent e)
{
    op->flags |= DLS_OPF_HAS_EVENT;
    op->event = (uintptr_t)e;
    op->event_id = dls_cuda_event_id(e);
}

/* An event being destroyed and its id at ENTER, for the EXIT of the same call on this thread. */
static __thread struct {
    uintptr_t handle;
    uint64_t id;
} t_event_destroying;

void dls_cuda_decode_event_destroy(dls_cuda_op *op, const CUpti_CallbackData *cb, CUevent e)
{
    dls_cuda_decode_event(op, e);
    if (cb->callbackSite == CUPTI_API_ENTER) {
        t_event_destroying.handle = (uintptr_t)e;
        t_event_destroying.id = op->event_id;
    } else if (t_event_destroying.handle == (uintptr_t)e) {
        op->event_id = t_event_destroying.id;
        t_event_destroying.handle = 0;
    }
}

/* A stream being destroyed, as resolved at ENTER, for the EXIT of the same call on this thread. */
static __thread struct {
    uintptr_t handle;
    dls_cuda_stream s;
} t_destroying;

void dls_cuda_decode_destroyed(const CUpti_CallbackData *cb, CUstream h, dls_cuda_stream *s)
{
    if (cb->callbackSite == CUPTI_API_ENTER) {
        dls_cuda_stream_resolve_destroyed(h, 0, cb->context, s);
        t_destroying.handle = (uintptr_t)h;
        t_destroying.s = *s;
    } else if (t_destroying.handle == (uintptr_t)h) {
        *s = t_destroying.s;
    } else {
        dls_cuda_stream_resolve(h, 0, cb->context, s);
    }
}

void dls_cuda_decode_stream_destroy(dls_cuda_op *op, const CUpti_CallbackData *cb, CUstream h)
{
    op->kind = DLS_OP_STREAM_DESTROY;
    op->flags |= DLS_OPF_HAS_STREAM;
    dls_cuda_decode_destroyed(cb, h, &op->stream);
}

/* 1 at the successful EXIT of a call (its output parameters are then written). */
static int succeeded(const CUpti_CallbackData *cb)
{
    return cb->callbackSite == CUPTI_API_EXIT && cb->functionReturnValue &&
           *(const CUresult *)cb->functionReturnValue == CUDA_SUCCESS;
}

int dls_cuda_decode_created(const CUpti_CallbackData *cb, const CUstream *ph, unsigned flags, int current,
                            dls_cuda_stream *s)
{
    if (!ph || !succeeded(cb))
        return 0;
    dls_cuda_stream_resolve_created(*ph, current ? cb->context : NULL, flags, s);
    return 1;
}

void dls_cuda_decode_stream_create(dls_cuda_op *op, const CUpti_CallbackData *cb, const CUstream *ph, unsigned flags,
                                   int current)
{
    op->kind = DLS_OP_STREAM_CREATE;
    if (dls_cuda_decode_created(cb, ph, flags, current, &op->stream))
        op->flags |= DLS_OPF_HAS_STREAM;
}

void dls_cuda_decode_event_create(dls_cuda_op *op, const CUpti_CallbackData *cb, const CUevent *pe)
{
    op->kind = DLS_OP_EVENT_CREATE;
    if (!pe || !succeeded(cb))
        return;
    op->flags |= DLS_OPF_HAS_EVENT;
    op->event = (uintptr_t)*pe;
    op->event_id = dls_cuda_event_id_new(*pe);
}

void dls_cuda_decode_capture_end(dls_cuda_op *op, const CUpti_CallbackData *cb, CUstream h, int per_thread_call,
                                 const CUgraph *ph)
{
    dls_cuda_decode_on_stream(op, DLS_OP_CAPTURE_END, cb, h, per_thread_call, 0);
    if (ph && succeeded(cb))
        op->graph = (uintptr_t)*ph;
}

void dls_cuda_decode_graph_instantiate(dls_cuda_op *op, const CUpti_CallbackData *cb, const CUgraphExec *ph, CUgraph g)
{
    op->kind = DLS_OP_GRAPH_INSTANTIATE;
    if (!ph || !succeeded(cb))
        return;
    op->graph = (uintptr_t)g;
    op->exec = (uintptr_t)*ph;
}
