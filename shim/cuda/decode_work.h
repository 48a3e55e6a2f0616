/* The work decoder: a call of the work lane into a dls_cuda_work (decode.h says how decoding
 * reads parameters). */
#ifndef DLS_CUDA_DECODE_WORK_H
#define DLS_CUDA_DECODE_WORK_H

#include "cuda_api.h"
#include "ops.h"

/* Fills *w's call-specific part (kind, flags, handle,
 * per_thread, ranges, words, the latter in words[0..cap)) for a call of the work lane: a launch of
 * calls.def's LAUNCH, LAUNCH_EX and LAUNCH_LEGACY rows, an asynchronous linear copy or a set
 * (synchronous sets too: without DLS_OPF_ASYNC, on the call's default stream). Returns 1, or 0
 * when cbid is not one of those (or has no parameters): then dls_cuda_decode reads it. */
int dls_cuda_decode_work(CUpti_CallbackId cbid, const CUpti_CallbackData *cb, dls_cuda_work *w, uint64_t *words,
                         uint32_t cap);

#endif
