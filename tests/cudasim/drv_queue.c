/* drv_queue.c: stream-ordered driver calls that are not data movement: stream synchronize /
 * query / wait-event / properties, event records, host functions.
 *
 * Built twice: normally (stream 0 = legacy default stream) and with
 * CUDA_API_PER_THREAD_DEFAULT_STREAM, which cuda.h turns into the _ptsz exports where stream 0
 * is the calling thread's per-thread default stream.
 * Models: host syncs that return after the covered work; event records only on a stream of the
 * event's context; waits on events of any context or device; a legacy-stream synchronize also waits
 * for the blocking streams' earlier work (it enqueues a marker that carries the implicit waits).
 * A synchronize or query of a capturing stream fails with CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED
 * and invalidates the capture; records and waits on a capturing stream follow drv_sched.c.
 * Does not model: stream callbacks (cuStreamAddCallback), memory operations (cuStreamWaitValue). */
#include "cudasim.h"
#include "sim.h"

/* Resolves h into *s for a host synchronize or query; fails (and invalidates the capture, as
 * dls_sim_capture_forbids_sync does) when the stream is capturing. */
static CUresult resolve_for_host_sync(CUstream h, struct CUstream_st **s)
{
    CUresult r = dls_sim_stream_resolve(h, SIM_PTDS, s);
    return r == CUDA_SUCCESS ? dls_sim_capture_forbids_sync(*s) : r;
}

static CUresult stream_sync(CUstream h)
{
    struct CUstream_st *s;
    CUresult r = resolve_for_host_sync(h, &s);
    if (r != CUDA_SUCCESS)
        return r;
    uint64_t seq =
        s->kind == SIM_STREAM_LEGACY ? dls_sim_enqueue(s, dls_sim_op_new(SIM_OP_MARK), NULL) : dls_sim_position(s);
    dls_sim_wait(s, seq);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamSynchronize(CUstream hStream)
{
    DRV_PARAMS(cuStreamSynchronize) p = {hStream};
    DRV_CALL(cuStreamSynchronize, &p, NULL, stream_sync(hStream));
}

static CUresult stream_query(CUstream h)
{
    struct CUstream_st *s;
    CUresult r = resolve_for_host_sync(h, &s);
    if (r != CUDA_SUCCESS)
        return r;
    return dls_sim_stream_idle(s) ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
}

CUresult CUDAAPI cuStreamQuery(CUstream hStream)
{
    DRV_PARAMS(cuStreamQuery) p = {hStream};
    DRV_CALL(cuStreamQuery, &p, NULL, stream_query(hStream));
}

static CUresult stream_wait_event(CUstream h, CUevent e, unsigned flags)
{
    struct CUstream_st *s;
    if (!e || e->magic != SIM_MAGIC_EVENT)
        return CUDA_ERROR_INVALID_HANDLE;
    if (flags & ~(unsigned)CU_EVENT_WAIT_EXTERNAL)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = dls_sim_stream_resolve(h, SIM_PTDS, &s);
    return r == CUDA_SUCCESS ? dls_sim_event_wait(s, e, flags) : r;
}

CUresult CUDAAPI cuStreamWaitEvent(CUstream hStream, CUevent hEvent, unsigned int Flags)
{
    DRV_PARAMS(cuStreamWaitEvent) p = {hStream, hEvent, Flags};
    DRV_CALL(cuStreamWaitEvent, &p, NULL, stream_wait_event(hStream, hEvent, Flags));
}

/* What the property getters read: all fixed at creation. */
enum prop { PROP_ID, PROP_FLAGS, PROP_CTX, PROP_PRIORITY };

static CUresult stream_prop(CUstream h, enum prop which, void *out)
{
    struct CUstream_st *s;
    if (!out)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = dls_sim_stream_resolve(h, SIM_PTDS, &s);
    if (r != CUDA_SUCCESS)
        return r;
    switch (which) {
    case PROP_ID:
        *(unsigned long long *)out = s->id;
        break;
    case PROP_FLAGS:
        *(unsigned int *)out = s->flags;
        break;
    case PROP_CTX:
        *(CUcontext *)out = s->ctx;
        break;
    case PROP_PRIORITY:
        *(int *)out = s->priority;
        break;
    }
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamGetId(CUstream hStream, unsigned long long *streamId)
{
    DRV_PARAMS(cuStreamGetId) p = {hStream, streamId};
    DRV_CALL(cuStreamGetId, &p, NULL, stream_prop(hStream, PROP_ID, streamId));
}

CUresult CUDAAPI cuStreamGetFlags(CUstream hStream, unsigned int *flags)
{
    DRV_PARAMS(cuStreamGetFlags) p = {hStream, flags};
    DRV_CALL(cuStreamGetFlags, &p, NULL, stream_prop(hStream, PROP_FLAGS, flags));
}

CUresult CUDAAPI cuStreamGetCtx(CUstream hStream, CUcontext *pctx)
{
    DRV_PARAMS(cuStreamGetCtx) p = {hStream, pctx};
    DRV_CALL(cuStreamGetCtx, &p, NULL, stream_prop(hStream, PROP_CTX, pctx));
}

CUresult CUDAAPI cuStreamGetPriority(CUstream hStream, int *priority)
{
    DRV_PARAMS(cuStreamGetPriority) p = {hStream, priority};
    DRV_CALL(cuStreamGetPriority, &p, NULL, stream_prop(hStream, PROP_PRIORITY, priority));
}

/* As in CUDA, the event and the stream must belong to the same context (a NULL, legacy or
 * per-thread handle names the current context's stream), and that context must not have been
 * reset since the event was created. */
static CUresult event_record(CUevent e, CUstream h)
{
    struct CUstream_st *s;
    if (!e || e->magic != SIM_MAGIC_EVENT)
        return CUDA_ERROR_INVALID_HANDLE;
    CUresult r = dls_sim_stream_resolve(h, SIM_PTDS, &s);
    if (r == CUDA_SUCCESS && (s->ctx != e->ctx || e->ctx_uid != s->ctx->uid))
        r = CUDA_ERROR_INVALID_HANDLE;
    return r == CUDA_SUCCESS ? dls_sim_event_record(e, s) : r;
}

CUresult CUDAAPI cuEventRecord(CUevent hEvent, CUstream hStream)
{
    DRV_PARAMS(cuEventRecord) p = {hEvent, hStream};
    DRV_CALL(cuEventRecord, &p, NULL, event_record(hEvent, hStream));
}

CUresult CUDAAPI cuEventRecordWithFlags(CUevent hEvent, CUstream hStream, unsigned int flags)
{
    DRV_PARAMS(cuEventRecordWithFlags) p = {hEvent, hStream, flags};
    DRV_CALL(cuEventRecordWithFlags, &p, NULL, event_record(hEvent, hStream));
}

static CUresult launch_host_func(CUstream h, CUhostFn fn, void *user)
{
    struct CUstream_st *s;
    if (!fn)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = dls_sim_stream_resolve(h, SIM_PTDS, &s);
    if (r != CUDA_SUCCESS)
        return r;
    dls_sim_op *op = dls_sim_op_new(SIM_OP_HOSTFN);
    op->u.host.fn = fn;
    op->u.host.user = user;
    dls_sim_enqueue(s, op, NULL);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuLaunchHostFunc(CUstream hStream, CUhostFn fn, void *userData)
{
    DRV_PARAMS(cuLaunchHostFunc) p = {hStream, fn, userData};
    DRV_CALL(cuLaunchHostFunc, &p, NULL, launch_host_func(hStream, fn, userData));
}

const dls_sim_proc SIM_TABLE(dls_sim_procs_queue)[] = {
    SIM_PROC(cuStreamSynchronize),
    SIM_PROC(cuStreamQuery),
    SIM_PROC(cuStreamWaitEvent),
    SIM_PROC(cuStreamGetId),
    SIM_PROC(cuStreamGetFlags),
    SIM_PROC(cuStreamGetCtx),
    SIM_PROC(cuStreamGetPriority),
    SIM_PROC(cuEventRecord),
    SIM_PROC(cuEventRecordWithFlags),
    SIM_PROC(cuLaunchHostFunc),
    {NULL, NULL},
};
