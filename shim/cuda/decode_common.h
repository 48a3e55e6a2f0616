/* What every decoder of an operation shares (decode.h says how decoding reads parameters). */
#ifndef DLS_CUDA_DECODE_COMMON_H
#define DLS_CUDA_DECODE_COMMON_H

#include "cuda_api.h"
#include "ops.h"
#include "thread.h"

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

#endif
