/* Decoding of CUPTI driver-API callbacks into dls_cuda_op.
 *
 * Parameter structs are read only as generated_cuda_meta.h declares them. The decoders fill the
 * call-specific part of an op (kind, stream, event, ranges, words, flags); the callback fills
 * phase, result, names, thread and correlation ids. Ranges and words live in a caller-provided
 * scratch area (thread-local in the observer), so decoding never allocates. */
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
 * 0 when the call has no operation at that index or is not handled. `cb` must be the call's
 * CUpti_CallbackData; at ENTER output parameters (a created stream or event) are not read. */
int dls_cuda_decode(CUpti_CallbackId cbid, const CUpti_CallbackData *cb, unsigned index, dls_cuda_op *op,
                    dls_cuda_scratch *scratch);

/* The per-area decoders behind dls_cuda_decode: same contract, but they return -1 for a cbid
 * outside their area. */
int dls_cuda_decode_launch(CUpti_CallbackId cbid, const CUpti_CallbackData *cb, unsigned index, dls_cuda_op *op,
                           dls_cuda_scratch *scratch);
int dls_cuda_decode_mem(CUpti_CallbackId cbid, const CUpti_CallbackData *cb, dls_cuda_op *op,
                        dls_cuda_scratch *scratch);
int dls_cuda_decode_sync(CUpti_CallbackId cbid, const CUpti_CallbackData *cb, dls_cuda_op *op);

/* The work lane's decoder (decode_work.h inline, decode_work.c out of line): fills *w's
 * call-specific part (kind, flags, handle, per_thread, ranges, words, the latter in
 * words[0..cap)) and empties its sink note, for a launch, linear async copy or async set.
 * Returns 1, or 0 when cbid is not one of those (or has no parameters). */
int dls_cuda_decode_work(CUpti_CallbackId cbid, const CUpti_CallbackData *cb, dls_cuda_work *w, uint64_t *words,
                         uint32_t cap);

/* Fills w (initialized) as the launch of f on stream h, its argument words in words[0..cap). */
void dls_cuda_work_launch(dls_cuda_work *w, CUstream h, int ptsz, CUfunction f, void **kernel_params, void **extra,
                          uint64_t *words, uint32_t cap);

/* Fills the call-specific part of op (zeroed but for cbid) from w: kind, flags, the resolved
 * stream, ranges (into scratch) and words (w's). */
void dls_cuda_op_from_work(dls_cuda_op *op, const dls_cuda_work *w, const CUpti_CallbackData *cb,
                           dls_cuda_scratch *scratch);

/* Helpers shared by the decoders. */

/* Sets op->stream from handle h (per_thread_call: the call is a _ptsz/_ptds form). */
void dls_cuda_decode_stream(dls_cuda_op *op, CUstream h, int per_thread_call, const CUpti_CallbackData *cb);

/* Appends a range to op (in scratch); a zero-length range is skipped; when scratch is full the
 * op becomes conservative. */
void dls_cuda_decode_range(dls_cuda_op *op, dls_cuda_scratch *scratch, uintptr_t addr, size_t len, unsigned access);

#endif
