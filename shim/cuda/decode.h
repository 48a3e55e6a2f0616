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
#include "thread.h"

/* Decodes the index-th operation of driver call `cbid` (every handled call is one operation,
 * except cuLaunchCooperativeKernelMultiDevice: one per device). Returns 1 when *op was filled,
 * 0 when the call has no operation at that index or is not one of its calls: the rows of
 * calls.def but those of the work decoder (dls_cuda_decode_work). `cb` must be the call's
 * CUpti_CallbackData; at ENTER output parameters (a created stream or event) are not read.
 * Ranges and words are kept in *scratch; with a NULL scratch (no memory for one) an operation
 * that has any is conservative. */
int dls_cuda_decode(CUpti_CallbackId cbid, const CUpti_CallbackData *cb, unsigned index, dls_cuda_op *op,
                    dls_cuda_scratch *scratch);

#endif
