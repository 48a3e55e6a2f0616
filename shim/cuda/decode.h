/* Decoding of CUPTI driver-API callbacks: the work lane's calls into dls_cuda_work, every other
 * call into dls_cuda_op.
 *
 * Parameter structs are read only as generated_cuda_meta.h declares them, and only in the cases
 * generated from calls.def (decode_work.c, decode.c), which hand the fields a row names to its
 * shape's reader. The decoders fill the call-specific part of a work or an op (kind, stream as
 * passed, event, ranges, words, flags); the callback fills phase, result, names, thread and
 * correlation ids, and resolves a work's stream. Words and an op's ranges live in a
 * caller-provided scratch area (thread-local in the observer), so decoding never allocates. */
#ifndef DLS_CUDA_DECODE_H
#define DLS_CUDA_DECODE_H

#include "cuda_api.h"
#include "ops.h"

#define DLS_SCRATCH_RANGES 256
#define DLS_SCRATCH_WORDS 1024

typedef struct {
    dls_cuda_range ranges[DLS_SCRATCH_RANGES];
    uint64_t words[DLS_SCRATCH_WORDS];
} dls_cuda_scratch;

/* Decodes the index-th operation of driver call `cbid` (every handled call is one operation,
 * except cuLaunchCooperativeKernelMultiDevice: one per device). Returns 1 when *op was filled,
 * 0 when the call has no operation at that index or is not one of its calls: the rows of
 * calls.def but those of the work decoder (dls_cuda_decode_work). `cb` must be the call's
 * CUpti_CallbackData; at ENTER output parameters (a created stream or event) are not read.
 * Ranges and words are kept in *scratch; with a NULL scratch (no memory for one) an operation
 * that has any is conservative. */
int dls_cuda_decode(CUpti_CallbackId cbid, const CUpti_CallbackData *cb, unsigned index, dls_cuda_op *op,
                    dls_cuda_scratch *scratch);

/* The work decoder (decode_work.c): fills *w's call-specific part (kind, flags, handle,
 * per_thread, ranges, words, the latter in words[0..cap)) for a call of the work lane: a launch of
 * calls.def's LAUNCH, LAUNCH_EX and LAUNCH_LEGACY rows, an asynchronous linear copy or a set
 * (synchronous sets too: without DLS_OPF_ASYNC, on the call's default stream). Returns 1, or 0
 * when cbid is not one of those (or has no parameters): then dls_cuda_decode reads it. */
int dls_cuda_decode_work(CUpti_CallbackId cbid, const CUpti_CallbackData *cb, dls_cuda_work *w, uint64_t *words,
                         uint32_t cap);

/* The helpers and readers of the shapes of calls.def, each given the parameters its rows name;
 * dls_cuda_decode calls them from its cases. op is zeroed but for cbid; ranges go into scratch. */

/* Sets op->stream from handle h (per_thread_call: the call is a _ptsz/_ptds form). */
void dls_cuda_decode_stream(dls_cuda_op *op, CUstream h, int per_thread_call, const CUpti_CallbackData *cb);

/* Sets op->kind, DLS_OPF_ASYNC when async, and op->stream from handle h (as dls_cuda_decode_stream). */
void dls_cuda_decode_on_stream(dls_cuda_op *op, dls_op_kind kind, const CUpti_CallbackData *cb, CUstream h,
                               int per_thread_call, int async);

/* Appends a range to op (in scratch); a zero-length range is skipped; when scratch is NULL or full the
 * op becomes conservative. */
void dls_cuda_decode_range(dls_cuda_op *op, dls_cuda_scratch *scratch, uintptr_t addr, size_t len, unsigned access);

/* decode_launch.c. The launch of device index of a multi-device cooperative launch
 * (list[0..n)), its argument words in scratch: returns 1, or 0 when there is no such device. */
int dls_cuda_decode_launch_devices(dls_cuda_op *op, const CUpti_CallbackData *cb, unsigned index,
                                   const CUDA_LAUNCH_PARAMS *list, unsigned n, dls_cuda_scratch *scratch);

/* decode_mem.c. The bounding ranges of a 2D, 3D or 3D peer copy descriptor c (NULL:
 * conservative); a CUarray side gives no range. dls_cuda_decode_copy_nd picks the reader by c's
 * type. */
void dls_cuda_decode_copy_2d(dls_cuda_op *op, dls_cuda_scratch *scratch, const CUDA_MEMCPY2D *c);
void dls_cuda_decode_copy_3d(dls_cuda_op *op, dls_cuda_scratch *scratch, const CUDA_MEMCPY3D *c);
void dls_cuda_decode_copy_3d_peer(dls_cuda_op *op, dls_cuda_scratch *scratch, const CUDA_MEMCPY3D_PEER *c);
#define dls_cuda_decode_copy_nd(op, scratch, c) \
    _Generic((c), const CUDA_MEMCPY2D *: dls_cuda_decode_copy_2d, const CUDA_MEMCPY3D *: dls_cuda_decode_copy_3d, \
             const CUDA_MEMCPY3D_PEER *: dls_cuda_decode_copy_3d_peer)(op, scratch, c)

/* The ranges of a batch of count linear copies (dsts, srcs, sizes: NULL makes it conservative). */
void dls_cuda_decode_batch(dls_cuda_op *op, dls_cuda_scratch *scratch, const CUdeviceptr *dsts, const CUdeviceptr *srcs,
                           const size_t *sizes, size_t count);

/* A free of the allocation at ptr: its whole range, asked of the driver at ENTER and remembered
 * for the EXIT of the same call on this thread (afterwards the driver no longer knows it); an
 * allocation the driver does not know is conservative, freeing NULL touches nothing. */
void dls_cuda_decode_free(dls_cuda_op *op, dls_cuda_scratch *scratch, const CUpti_CallbackData *cb, uintptr_t ptr);

/* decode_sync.c. Sets op's event (and its id) to e. */
void dls_cuda_decode_event(dls_cuda_op *op, CUevent e);

/* The same for a destruction of e: the id is e's as of the call's ENTER, remembered for the EXIT
 * of the same call on this thread (by then the driver may have handed the handle to an event
 * another thread created, which has an id of its own). */
void dls_cuda_decode_event_destroy(dls_cuda_op *op, const CUpti_CallbackData *cb, CUevent e);

/* A stream's creation and destruction, as the general decoder's ops and as the lifetime decoder
 * (dls_cuda_decode_lifetime) read them. */

/* 1 at a successful EXIT of a creation, with the stream *ph made into *s, its kind from the
 * creation flags (identity.h, dls_cuda_stream_resolve_created); `current`: 1 when the call made
 * it in the current context (cb->context), which the driver is then not asked. Else 0. */
int dls_cuda_decode_created(const CUpti_CallbackData *cb, const CUstream *ph, unsigned flags, int current,
                            dls_cuda_stream *s);

/* Stream h, being destroyed, into *s: resolved at ENTER (the driver forgets it during the call;
 * identity.h, dls_cuda_stream_resolve_destroyed) and remembered for the EXIT of the same call on
 * this thread. */
void dls_cuda_decode_destroyed(const CUpti_CallbackData *cb, CUstream h, dls_cuda_stream *s);

/* The ops of a creation (the stream known at a successful EXIT) and of a destruction. */
void dls_cuda_decode_stream_create(dls_cuda_op *op, const CUpti_CallbackData *cb, const CUstream *ph, unsigned flags,
                                   int current);
void dls_cuda_decode_stream_destroy(dls_cuda_op *op, const CUpti_CallbackData *cb, CUstream h);

/* decode_life.c. The lifetime decoder, for the calls of calls.def's STREAM_CREATE and
 * STREAM_DESTROY rows that no model can hold: every creation (a stream is modelled from its
 * first operation), and the destruction of a stream never resolved. It does the identity's part
 * of the call (the creation kept in the thread's cache, the destroyed stream remembered for its
 * EXIT), sets *kind to DLS_OP_STREAM_CREATE or DLS_OP_STREAM_DESTROY and returns 1. Returns 0 for
 * any other call, for one reported without parameters, and for the destruction of a resolved
 * stream: dls_cuda_decode reads those. */
int dls_cuda_decode_lifetime(CUpti_CallbackId cbid, const CUpti_CallbackData *cb, dls_op_kind *kind);

/* A capture's end on h (per_thread_call: a _ptsz form): the graph *ph made, known at a successful
 * EXIT (else 0). */
void dls_cuda_decode_capture_end(dls_cuda_op *op, const CUpti_CallbackData *cb, CUstream h, int per_thread_call,
                                 const CUgraph *ph);

/* An instantiation of graph g: the executable graph *ph known at a successful EXIT (else op's
 * graph and exec stay 0). */
void dls_cuda_decode_graph_instantiate(dls_cuda_op *op, const CUpti_CallbackData *cb, const CUgraphExec *ph, CUgraph g);

/* An event creation: the event *pe known at a successful EXIT, with a fresh id. */
void dls_cuda_decode_event_create(dls_cuda_op *op, const CUpti_CallbackData *cb, const CUevent *pe);

#endif
