/* The lifetime decoder (decode.h says how decoding reads parameters). */
#ifndef DLS_CUDA_DECODE_LIFE_H
#define DLS_CUDA_DECODE_LIFE_H

#include "cuda_api.h"
#include "ops.h"

/* The lifetime decoder, for the calls of calls.def's STREAM_CREATE and
 * STREAM_DESTROY rows that no model can hold: every creation (a stream is modelled from its
 * first operation), and the destruction of a stream never resolved. It does the identity's part
 * of the call (the creation kept in the thread's cache, the destroyed stream remembered for its
 * EXIT), sets *kind to DLS_OP_STREAM_CREATE or DLS_OP_STREAM_DESTROY and returns 1. Returns 0 for
 * any other call, for one reported without parameters, and for the destruction of a resolved
 * stream: dls_cuda_decode reads those. */
int dls_cuda_decode_lifetime(CUpti_CallbackId cbid, const CUpti_CallbackData *cb, dls_op_kind *kind);

#endif
