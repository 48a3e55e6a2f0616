/* drv_stream.c: creating and destroying streams and events; host waits on events.
 *
 * Models: blocking and non-blocking streams (priority is stored, not used), stream ids that are
 * never reused, resource callbacks at stream creation and destruction, event creation with flags
 * in the current context, which lists its events (timing and blocking-sync flags are accepted and
 * ignored; a reset context keeps the old events listed, unrecordable), event synchronize / query
 * from any context (both fail with CUDA_ERROR_CAPTURED_EVENT on an event last recorded in a
 * capturing stream).
 * Does not model: interprocess events, event timing (cuEventElapsedTime). */
#include <stdlib.h>

#include "cudasim.h"
#include "sim.h"

static CUresult stream_create(CUstream *ph, unsigned flags, int priority)
{
    if (!ph || (flags & ~(unsigned)CU_STREAM_NON_BLOCKING))
        return CUDA_ERROR_INVALID_VALUE;
    struct CUctx_st *ctx = dls_sim_current_ctx();
    if (!ctx)
        return CUDA_ERROR_INVALID_CONTEXT;
    struct CUstream_st *s = dls_sim_stream_new(ctx, SIM_STREAM_USER, flags, priority);
    if (!s)
        return CUDA_ERROR_OUT_OF_MEMORY;
    *ph = s;
    cudasim_report_resource(CUPTI_CBID_RESOURCE_STREAM_CREATED, ctx, s);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamCreate(CUstream *phStream, unsigned int Flags)
{
    cuStreamCreate_params p = {phStream, Flags};
    DRV_CALL(cuStreamCreate, &p, NULL, stream_create(phStream, Flags, 0));
}

CUresult CUDAAPI cuStreamCreateWithPriority(CUstream *phStream, unsigned int flags, int priority)
{
    cuStreamCreateWithPriority_params p = {phStream, flags, priority};
    DRV_CALL(cuStreamCreateWithPriority, &p, NULL, stream_create(phStream, flags, priority));
}

static CUresult stream_destroy(CUstream h)
{
    struct CUstream_st *s;
    if (!h || h == CU_STREAM_LEGACY || h == CU_STREAM_PER_THREAD)
        return CUDA_ERROR_INVALID_HANDLE;
    CUresult r = dls_sim_stream_resolve(h, 0, &s);
    if (r != CUDA_SUCCESS)
        return r;
    cudasim_report_resource(CUPTI_CBID_RESOURCE_STREAM_DESTROY_STARTING, s->ctx, s);
    dls_sim_stream_retire(s);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamDestroy(CUstream hStream)
{
    DRV_PARAMS(cuStreamDestroy) p = {hStream};
    DRV_CALL(cuStreamDestroy, &p, NULL, stream_destroy(hStream));
}

static unsigned long long g_next_event; /* scheduler lock */

static CUresult event_create(CUevent *ph, unsigned flags)
{
    if (!ph)
        return CUDA_ERROR_INVALID_VALUE;
    struct CUctx_st *ctx = dls_sim_current_ctx();
    if (!ctx)
        return CUDA_ERROR_INVALID_CONTEXT;
    struct CUevent_st *e = calloc(1, sizeof *e);
    if (!e)
        return CUDA_ERROR_OUT_OF_MEMORY;
    e->magic = SIM_MAGIC_EVENT;
    e->ctx = ctx;
    e->ctx_uid = ctx->uid;
    dls_sim_lock();
    e->id = ++g_next_event;
    e->next_in_ctx = ctx->events;
    ctx->events = e;
    dls_sim_unlock();
    e->flags = flags;
    *ph = e;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuEventCreate(CUevent *phEvent, unsigned int Flags)
{
    cuEventCreate_params p = {phEvent, Flags};
    DRV_CALL(cuEventCreate, &p, NULL, event_create(phEvent, Flags));
}

static CUresult event_destroy(CUevent e)
{
    if (!e || e->magic != SIM_MAGIC_EVENT)
        return CUDA_ERROR_INVALID_HANDLE;
    e->magic = 0;
    dls_sim_lock();
    struct CUevent_st **link = &e->ctx->events;
    while (*link != e)
        link = &(*link)->next_in_ctx;
    *link = e->next_in_ctx;
    if (e->s)
        dls_sim_stream_put_locked(e->s);
    dls_sim_unlock();
    free(e);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuEventDestroy(CUevent hEvent)
{
    DRV_PARAMS(cuEventDestroy) p = {hEvent};
    DRV_CALL(cuEventDestroy, &p, NULL, event_destroy(hEvent));
}

static CUresult event_sync(CUevent e)
{
    if (!e || e->magic != SIM_MAGIC_EVENT)
        return CUDA_ERROR_INVALID_HANDLE;
    return dls_sim_event_host_wait(e, 1);
}

CUresult CUDAAPI cuEventSynchronize(CUevent hEvent)
{
    cuEventSynchronize_params p = {hEvent};
    DRV_CALL(cuEventSynchronize, &p, NULL, event_sync(hEvent));
}

static CUresult event_query(CUevent e)
{
    if (!e || e->magic != SIM_MAGIC_EVENT)
        return CUDA_ERROR_INVALID_HANDLE;
    return dls_sim_event_host_wait(e, 0);
}

CUresult CUDAAPI cuEventQuery(CUevent hEvent)
{
    cuEventQuery_params p = {hEvent};
    DRV_CALL(cuEventQuery, &p, NULL, event_query(hEvent));
}

const dls_sim_proc dls_sim_procs_stream[] = {
    SIM_PROC(cuStreamCreate), SIM_PROC(cuStreamCreateWithPriority), SIM_PROC(cuStreamDestroy), SIM_PROC(cuEventCreate),
    SIM_PROC(cuEventDestroy), SIM_PROC(cuEventSynchronize),         SIM_PROC(cuEventQuery),    {NULL, NULL},
};
