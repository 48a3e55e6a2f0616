/* Identity of streams and events as the observer reports them.
 *
 * Streams: a handle as passed to a driver call (NULL, CU_STREAM_LEGACY, CU_STREAM_PER_THREAD or
 * a real CUstream; NULL means the per-thread stream in _ptsz/_ptds calls) is resolved to the
 * driver's stream id, its context (for a default-stream handle: the context current at the call,
 * which the handle names a stream of), that context's device, and its kind, through the shim's
 * guarded driver calls. A stream is resolved at its creation from what the call tells (its flags,
 * the current context), and its id is asked at its first use; a stream destroyed before any
 * use is never asked about. Results are cached per thread without locks, and a
 * context's id and device once per thread and context; destroying a stream invalidates every
 * thread's stream cache (a global generation), so a handle reused after destroy is resolved
 * afresh; destroying or resetting a context invalidates both caches.
 *
 * Events: the driver has no event id, so each CUevent handle gets a process-unique id at its
 * creation (or first sight) and loses it at destroy; a reused handle gets a new id. A destroy
 * names the id the handle had at its ENTER: the driver may give the handle to another thread's
 * new event before the destroy's EXIT is seen. */
#ifndef DLS_CUDA_IDENTITY_H
#define DLS_CUDA_IDENTITY_H

#include "../common/export.h"
#include "cuda_api.h"
#include "ops.h"
#include "thread.h"

#include <stdatomic.h>
#include <stdint.h>

/* Resolves `h` as passed to a driver call. `per_thread_call` is 1 for _ptsz/_ptds entry points
 * (where NULL means the per-thread stream). `cur_ctx` is the context current to the calling
 * thread (CUpti_CallbackData.context). Always fills *out; out->resolved is 0 when the driver
 * could not give the id (no libcuda, old driver, invalid handle). */
void dls_cuda_stream_resolve(CUstream h, int per_thread_call, CUcontext cur_ctx, dls_cuda_stream *out);

/* Resolves stream h, which a call just created with `flags` in context ctx (the calling thread's
 * current context; NULL when the stream's context is not known, then the driver is asked as by
 * dls_cuda_stream_resolve), and keeps what the call tells in the thread's cache: the driver is
 * asked nothing but, once per context, the context's id and device. The stream's id is asked at
 * its first resolution on this thread: out->resolved is 0 until then. */
void dls_cuda_stream_resolve_created(CUstream h, CUcontext ctx, unsigned flags, dls_cuda_stream *out);

/* Resolves h, about to be destroyed, as dls_cuda_stream_resolve does, except for a stream this
 * thread created whose id no thread has asked since: no one can have resolved it, so it is left
 * unresolved (out->resolved 0) and the driver is not asked. */
void dls_cuda_stream_resolve_destroyed(CUstream h, int per_thread_call, CUcontext cur_ctx, dls_cuda_stream *out);

/* The generation of resolutions: a resolution made in an earlier one is stale. */
extern atomic_uint_fast64_t dls_cuda_stream_gen DLS_HIDDEN;

/* h resolved as dls_cuda_stream_resolve resolves it, through the calling thread's latest
 * resolutions, one of which it replaces on a miss (an unresolved stream is not kept). The result
 * points into `latest`: valid until the next call with it. Lock-free; inline: every operation
 * the lanes deliver asks it. */
static inline const dls_cuda_stream *dls_cuda_stream_resolve_latest(dls_cuda_stream_latest *latest, CUstream h,
                                                                    int per_thread_call, CUcontext cur_ctx)
{
    uint64_t gen = atomic_load_explicit(&dls_cuda_stream_gen, memory_order_acquire);
    __typeof__(latest->one[0]) *e = &latest->one[((uintptr_t)h ^ (uintptr_t)h >> 7) % DLS_CUDA_LATEST];
    if (e->gen == gen && e->handle == (uintptr_t)h && e->ctx == (uintptr_t)cur_ctx && e->per_thread == per_thread_call)
        return &e->s;
    dls_cuda_stream_resolve(h, per_thread_call, cur_ctx, &e->s);
    e->handle = (uintptr_t)h;
    e->ctx = (uintptr_t)cur_ctx;
    e->per_thread = per_thread_call;
    e->gen = e->s.resolved ? gen : 0;
    return &e->s;
}

/* Invalidates cached stream resolutions in every thread (call after a stream is destroyed). */
void dls_cuda_streams_invalidate(void);

/* Invalidates cached stream resolutions and context facts in every thread (call after a context
 * may have been destroyed or reset, or a module unloaded). */
void dls_cuda_contexts_invalidate(void);

/* The id of event `e`, assigning a new one when it has none (ids start at 1). 0 for NULL. */
uint64_t dls_cuda_event_id(CUevent e);

/* Gives `e` a new id (an event was just created with this handle) and returns it. */
uint64_t dls_cuda_event_id_new(CUevent e);

/* Forgets `e`, destroyed while it had id `id`: its next sighting gets a new id. Nothing when e
 * has another id by now (the handle was given to an event created since, on another thread). */
void dls_cuda_event_forget(CUevent e, uint64_t id);

#endif
