/* The general decoder: one case per row of calls.def (see decode.h); the helpers the shapes
 * share are in decode_common.c. */
#include "decode.h"

#include "decode_common.h"
#include "decode_launch.h"
#include "decode_mem.h"
#include "decode_sync.h"

#include "cbids.h"

/* 1 when call cbid may have operations beyond the first (its row is LAUNCH_DEVICES). */
static int several_ops(CUpti_CallbackId cbid)
{
    switch (cbid) {
#define LAUNCH_DEVICES(name, class) case CUPTI_DRIVER_TRACE_CBID_##name:
#include "calls.def"
        return 1;
    default:
        return 0;
    }
}

/* The general decoder's cases: one per row of calls.def the work decoder does not read. Each
 * reads its call's parameters as `p` (calls.def's F). The shapes with rules of their own come
 * first: a multi-device launch is one operation per device, and cuCtxSynchronize has no
 * parameters. Every other call is one operation (none at an index above 0: several_ops) and
 * decodes nothing when reported without its parameters. */
#define CASE(name)                                   \
    case CUPTI_DRIVER_TRACE_CBID_##name: {           \
        const name##_params *p = cb->functionParams; \
        if (index || !p)                             \
            return 0;
#define END_CASE \
    return 1;    \
    }
#define IS_LAUNCH(name, class) \
    _Static_assert(DLS_CBID_##class == DLS_CBID_STREAM_WORK, #name ": a launch is stream work")
#define IS_MADE(name, class) \
    _Static_assert(DLS_CBID_##class == DLS_CBID_MADE, #name ": a call that makes a handle is of class MADE")

/* The shapes with rules of their own. */
#define LAUNCH_DEVICES(name, class)                                                                             \
    case CUPTI_DRIVER_TRACE_CBID_##name: {                                                                      \
        IS_LAUNCH(name, class);                                                                                 \
        const name##_params *p = cb->functionParams;                                                            \
        return p && dls_cuda_decode_launch_devices(op, cb, index, p->launchParamsList, p->numDevices, scratch); \
    }
#define CTX_SYNC_CURRENT(name, class)     \
    case CUPTI_DRIVER_TRACE_CBID_##name:  \
        if (index)                        \
            return 0;                     \
        op->kind = DLS_OP_CTX_SYNC;       \
        op->ctx = (uintptr_t)cb->context; \
        return 1;

/* The rows of one operation, read from their parameters. A linear copy here is a synchronous
 * one (the asynchronous ones are the work decoder's). */
#define COPY(name, class, ptsz, async, stream, dst, src)                                              \
    CASE(name)                                                                                        \
    if (async)                                                                                        \
        return 0;                                                                                     \
    dls_cuda_decode_on_stream(op, DLS_OP_MEMCPY, cb, stream, ptsz, 0);                                \
    dls_cuda_decode_range(op, scratch, (uintptr_t)(src), (src) ? p->ByteCount : 0, DLS_ACCESS_READ);  \
    dls_cuda_decode_range(op, scratch, (uintptr_t)(dst), (dst) ? p->ByteCount : 0, DLS_ACCESS_WRITE); \
    END_CASE
#define COPY_ND(name, class, ptsz, async, stream)                          \
    CASE(name)                                                             \
    dls_cuda_decode_on_stream(op, DLS_OP_MEMCPY, cb, stream, ptsz, async); \
    dls_cuda_decode_copy_nd(op, scratch, p->pCopy);                        \
    END_CASE
#define BATCH(name, class, ptsz)                                              \
    CASE(name)                                                                \
    dls_cuda_decode_on_stream(op, DLS_OP_MEMCPY, cb, p->hStream, ptsz, 1);    \
    dls_cuda_decode_batch(op, scratch, p->dsts, p->srcs, p->sizes, p->count); \
    END_CASE
#define FREE(name, class, ptsz, async, stream, ptr)          \
    CASE(name)                                               \
    dls_cuda_decode_free(op, scratch, cb, (uintptr_t)(ptr)); \
    if (async) {                                             \
        op->flags |= DLS_OPF_ASYNC;                          \
        dls_cuda_decode_stream(op, stream, ptsz, cb);        \
    }                                                        \
    END_CASE
#define RECORD(name, class, ptsz)                                                \
    CASE(name)                                                                   \
    dls_cuda_decode_on_stream(op, DLS_OP_EVENT_RECORD, cb, p->hStream, ptsz, 1); \
    dls_cuda_decode_event(op, p->hEvent);                                        \
    END_CASE
#define WAIT(name, class, ptsz)                                                       \
    CASE(name)                                                                        \
    dls_cuda_decode_on_stream(op, DLS_OP_STREAM_WAIT_EVENT, cb, p->hStream, ptsz, 1); \
    dls_cuda_decode_event(op, p->hEvent);                                             \
    END_CASE
#define EVENT(name, class, op_kind)                       \
    CASE(name)                                            \
    op->kind = DLS_OP_##op_kind;                          \
    if (op->kind == DLS_OP_EVENT_DESTROY)                 \
        dls_cuda_decode_event_destroy(op, cb, p->hEvent); \
    else                                                  \
        dls_cuda_decode_event(op, p->hEvent);             \
    END_CASE
#define ON_STREAM(name, class, op_kind, ptsz, async)                              \
    CASE(name)                                                                    \
    dls_cuda_decode_on_stream(op, DLS_OP_##op_kind, cb, p->hStream, ptsz, async); \
    END_CASE
#define ANY_MEMORY(name, class, op_kind, ptsz)                                \
    CASE(name)                                                                \
    dls_cuda_decode_on_stream(op, DLS_OP_##op_kind, cb, p->hStream, ptsz, 1); \
    op->flags |= DLS_OPF_CONSERVATIVE;                                        \
    END_CASE
#define GRAPH_LAUNCH(name, class, ptsz, graph_exec)                              \
    CASE(name)                                                                   \
    dls_cuda_decode_on_stream(op, DLS_OP_GRAPH_LAUNCH, cb, p->hStream, ptsz, 1); \
    op->flags |= DLS_OPF_CONSERVATIVE;                                           \
    op->exec = (uintptr_t)(graph_exec);                                          \
    END_CASE
#define CAPTURE_END(name, class, ptsz)                                 \
    CASE(name)                                                         \
    dls_cuda_decode_capture_end(op, cb, p->hStream, ptsz, p->phGraph); \
    END_CASE
#define GRAPH_INSTANTIATE(name, class)                                    \
    CASE(name)                                                            \
    dls_cuda_decode_graph_instantiate(op, cb, p->phGraphExec, p->hGraph); \
    IS_MADE(name, class);                                                 \
    END_CASE
#define GRAPH_EXEC_CHANGED(name, class)   \
    CASE(name)                            \
    op->kind = DLS_OP_GRAPH_EXEC_CHANGED; \
    op->exec = (uintptr_t)p->hGraphExec;  \
    END_CASE
#define GRAPH_DESTROY(name, class)    \
    CASE(name)                        \
    op->kind = DLS_OP_GRAPH_DESTROY;  \
    op->graph = (uintptr_t)p->hGraph; \
    END_CASE
#define CTX_SYNC(name, class)                             \
    CASE(name)                                            \
    op->kind = DLS_OP_CTX_SYNC;                           \
    op->ctx = (uintptr_t)(p->ctx ? p->ctx : cb->context); \
    END_CASE
#define STREAM_CREATE(name, class, flags, current)                      \
    CASE(name)                                                          \
    dls_cuda_decode_stream_create(op, cb, p->phStream, flags, current); \
    IS_MADE(name, class);                                               \
    END_CASE
#define STREAM_DESTROY(name, class)                     \
    CASE(name)                                          \
    dls_cuda_decode_stream_destroy(op, cb, p->hStream); \
    END_CASE
#define EVENT_CREATE(name, class)                     \
    CASE(name)                                        \
    dls_cuda_decode_event_create(op, cb, p->phEvent); \
    IS_MADE(name, class);                             \
    END_CASE

/* The work decoder's rows (dls_cuda_decode_work). */
#define LAUNCH(name, class, ptsz, extra)
#define LAUNCH_EX(name, class, ptsz)
#define LAUNCH_LEGACY(name, class, stream)
#define SET(name, class, ptsz, async, stream, elsize)
#define SET_2D(name, class, ptsz, async, stream, elsize)

/* A row no case reads must be a call with nothing to decode. */
#define CALL(name, class)                                                                            \
    _Static_assert(DLS_CBID_##class == DLS_CBID_INVALIDATION || DLS_CBID_##class == DLS_CBID_RANGES, \
                   #name ": every call but an invalidation or a range change is decoded");

int dls_cuda_decode(CUpti_CallbackId cbid, const CUpti_CallbackData *cb, unsigned index, dls_cuda_op *op,
                    dls_cuda_scratch *scratch)
{
    if (!cb || (index && !several_ops(cbid)))
        return 0;
    *op = (dls_cuda_op){0};
    switch (cbid) {
#include "calls.def"
    default:
        return 0;
    }
}
