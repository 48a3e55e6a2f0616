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
#ifndef DLS_CUDA_IDENTITY_H
#define DLS_CUDA_IDENTITY_H

#include "cuda_api.h"
#include "ops.h"

#include <stdatomic.h>
#include <stdint.h>

/* Resolves `h` as passed to a driver call. `per_thread_call` is 1 for _ptsz/_ptds entry points
 * (where NULL means the per-thread stream). `cur_ctx` is the context current to the calling
 * thread (CUpti_CallbackData.context). Always fills *out; out->resolved is 0 when the driver
 * could not give the id (no libcuda, old driver, invalid handle). */
void dls_cuda_stream_resolve(CUstream h, int per_thread_call, CUcontext cur_ctx, dls_cuda_stream *out);

/* The per-thread cache of resolutions (identity.c; read inline by dls_cuda_stream_attached):
 * direct-mapped by canonical handle and, for default streams, the context; a slot is valid while
 * its generation is the current one (dls_cuda_streams_invalidate starts a new one). */
#define DLS_CUDA_STREAM_SLOTS 64
typedef struct {
    uint64_t gen; /* 0 = empty */
    uintptr_t key;
    uintptr_t key_ctx;
    dls_cuda_stream s;
    void *attached; /* dls_cuda_stream_attach's pointer; NULL: none */
} dls_cuda_stream_slot;
extern atomic_uint_fast64_t dls_cuda_stream_gen;
extern __thread dls_cuda_stream_slot dls_cuda_stream_cache[DLS_CUDA_STREAM_SLOTS]
    __attribute__((tls_model("local-dynamic")));

/* The canonical handle of h and its kind as far as the handle tells (default streams). */
static inline CUstream dls_cuda_stream_canonical(CUstream h, int per_thread_call, dls_stream_kind *kind)
{
    CUstream canonical = h ? h : per_thread_call ? CU_STREAM_PER_THREAD : CU_STREAM_LEGACY;
    *kind = canonical == CU_STREAM_LEGACY       ? DLS_STREAM_LEGACY
            : canonical == CU_STREAM_PER_THREAD ? DLS_STREAM_PER_THREAD
                                                : DLS_STREAM_UNKNOWN;
    return canonical;
}

/* The calling thread's cache slot for canonical handle `canonical` of kind `kind` (default
 * streams belong to the current context; real handles are global), with its key. */
static inline dls_cuda_stream_slot *dls_cuda_stream_slot_of(CUstream canonical, dls_stream_kind kind, CUcontext cur_ctx,
                                                            uintptr_t *key, uintptr_t *key_ctx)
{
    *key = (uintptr_t)canonical;
    *key_ctx = kind == DLS_STREAM_UNKNOWN ? 0 : (uintptr_t)cur_ctx;
    return &dls_cuda_stream_cache[((*key >> 4) ^ (*key_ctx >> 4) ^ *key) % DLS_CUDA_STREAM_SLOTS];
}

/* The slot holding h's resolution in the current generation, or NULL. */
static inline dls_cuda_stream_slot *dls_cuda_stream_cached(CUstream h, int per_thread_call, CUcontext cur_ctx)
{
    dls_stream_kind kind;
    uintptr_t key, key_ctx;
    CUstream canonical = dls_cuda_stream_canonical(h, per_thread_call, &kind);
    dls_cuda_stream_slot *slot = dls_cuda_stream_slot_of(canonical, kind, cur_ctx, &key, &key_ctx);
    uint64_t gen = atomic_load_explicit(&dls_cuda_stream_gen, memory_order_acquire);
    return slot->gen == gen && slot->key == key && slot->key_ctx == key_ctx ? slot : NULL;
}

/* A thread's latest answer of dls_cuda_stream_attached that found a pointer, keyed by the
 * arguments as passed and the generation: a thread enqueues mostly on the stream it used last,
 * and this is asked before the hash look-up. The caller keeps it per thread (zeroed: none). */
typedef struct {
    uintptr_t handle, ctx;
    int per_thread;
    uint64_t gen;
    void *attached;
} dls_cuda_stream_latest;

/* The pointer attached to the calling thread's cached resolution of h (same arguments as
 * dls_cuda_stream_resolve), or NULL when there is none: h is not cached on this thread, or a
 * stream or context was destroyed since it was (the resolution and what is attached to it are
 * then stale together). `latest` is the calling thread's own. Lock-free, no driver call;
 * inline: every launch's EXIT asks it. */
static inline void *dls_cuda_stream_attached(dls_cuda_stream_latest *latest, CUstream h, int per_thread_call,
                                             CUcontext cur_ctx)
{
    uint64_t gen = atomic_load_explicit(&dls_cuda_stream_gen, memory_order_acquire);
    if (latest->handle == (uintptr_t)h && latest->ctx == (uintptr_t)cur_ctx && latest->per_thread == per_thread_call &&
        latest->gen == gen)
        return latest->attached;
    dls_cuda_stream_slot *slot = dls_cuda_stream_cached(h, per_thread_call, cur_ctx);
    if (!slot || !slot->attached)
        return NULL;
    *latest = (dls_cuda_stream_latest){(uintptr_t)h, (uintptr_t)cur_ctx, per_thread_call, slot->gen, slot->attached};
    return slot->attached;
}

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
