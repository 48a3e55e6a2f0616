/* Identity of streams and events as the observer reports them.
 *
 * Streams: a handle as passed to a driver call (NULL, CU_STREAM_LEGACY, CU_STREAM_PER_THREAD or
 * a real CUstream; NULL means the per-thread stream in _ptsz/_ptds calls) is resolved to the
 * driver's stream id, its context (for a default-stream handle: the context current at the call,
 * which the handle names a stream of), that context's device, and its kind, through the shim's guarded driver calls. Results
 * are cached per thread without locks; destroying a stream or a context invalidates every
 * thread's cache (a global generation), so a handle reused after destroy is resolved afresh.
 *
 * Events: the driver has no event id, so each CUevent handle gets a process-unique id at its
 * creation (or first sight) and loses it at destroy; a reused handle gets a new id. */
#ifndef DLS_CUDA_STREAMS_H
#define DLS_CUDA_STREAMS_H

#include "cuda_api.h"
#include "ops.h"

/* Resolves `h` as passed to a driver call. `per_thread_call` is 1 for _ptsz/_ptds entry points
 * (where NULL means the per-thread stream). `cur_ctx` is the context current to the calling
 * thread (CUpti_CallbackData.context). Always fills *out; out->resolved is 0 when the driver
 * could not give the id (no libcuda, old driver, invalid handle). */
void dls_cuda_stream_resolve(CUstream h, int per_thread_call, CUcontext cur_ctx, dls_cuda_stream *out);

/* The pointer attached to the calling thread's cached resolution of h (same arguments as
 * dls_cuda_stream_resolve), or NULL when there is none: h is not cached on this thread, or a
 * stream or context was destroyed since it was (the resolution and what is attached to it are
 * then stale together). Lock-free, no driver call. */
void *dls_cuda_stream_attached(CUstream h, int per_thread_call, CUcontext cur_ctx);

/* Attaches p to the calling thread's cached resolution of h, when it is still cached and
 * resolves to stream id `id` (so a resolution invalidated meanwhile never carries p). */
void dls_cuda_stream_attach(CUstream h, int per_thread_call, CUcontext cur_ctx, uint64_t id, void *p);

/* Invalidates cached resolutions in every thread (call after a stream or context is destroyed). */
void dls_cuda_streams_invalidate(void);

/* The id of event `e`, assigning a new one when it has none (ids start at 1). 0 for NULL. */
uint64_t dls_cuda_event_id(CUevent e);

/* Gives `e` a new id (an event was just created with this handle) and returns it. */
uint64_t dls_cuda_event_id_new(CUevent e);

/* Forgets `e` (destroyed): its next sighting gets a new id. */
void dls_cuda_event_forget(CUevent e);

#endif
