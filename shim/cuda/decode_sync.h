/* The readers of events, streams' creation and destruction, captures and graphs (decode.h). */
#ifndef DLS_CUDA_DECODE_SYNC_H
#define DLS_CUDA_DECODE_SYNC_H

#include "decode_common.h"

/* Sets op's event (and its id) to e. */
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
