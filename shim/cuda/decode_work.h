/* The work lane's decoder, inline: the kernel launches, linear async copies and async sets that
 * make up almost all of a program's stream work. This is the one place their parameter structs
 * are read; the observer's callback decodes with it in place, and dls_cuda_decode_work
 * (decode_work.c) is the same decoder out of line, from which dls_cuda_decode builds their
 * dls_cuda_op. */
#ifndef DLS_CUDA_DECODE_WORK_H
#define DLS_CUDA_DECODE_WORK_H

#include "decode.h"

#define P(type) ((const type##_params *)cb->functionParams)
#define CBID(name) CUPTI_DRIVER_TRACE_CBID_##name

/* Appends [addr, addr + n) unless it is empty (or, for a copy side, a CUarray: address 0). */
static inline void dls_cuda_work_range(dls_cuda_work *w, uintptr_t addr, size_t n, unsigned access)
{
    if (n)
        w->ranges[w->nranges++] = (dls_cuda_range){.addr = addr, .len = n, .access = access};
}

static inline void dls_cuda_work_copy(dls_cuda_work *w, CUstream h, int ptsz, uintptr_t dst, uintptr_t src, size_t n)
{
    w->kind = DLS_OP_MEMCPY;
    w->handle = (uintptr_t)h;
    w->per_thread = ptsz;
    if (src)
        dls_cuda_work_range(w, src, n, DLS_ACCESS_READ);
    if (dst)
        dls_cuda_work_range(w, dst, n, DLS_ACCESS_WRITE);
}

static inline void dls_cuda_work_set(dls_cuda_work *w, CUstream h, int ptsz, uintptr_t dst, size_t n)
{
    w->kind = DLS_OP_MEMSET;
    w->handle = (uintptr_t)h;
    w->per_thread = ptsz;
    dls_cuda_work_range(w, dst, n, DLS_ACCESS_WRITE);
}

/* Empties w's flags, ranges, words and sink note for a decoder to fill. */
static inline void dls_cuda_work_init(dls_cuda_work *w)
{
    w->flags = DLS_OPF_ASYNC;
    w->nranges = w->nwords = 0;
    w->words = NULL;
    w->sink_note = 0;
}

#define A(name, field) (uintptr_t) P(name)->field
#define NONE 0
#define COPY(name, dst, src, ptsz)                                                   \
    case CBID(name):                                                                 \
        dls_cuda_work_copy(w, P(name)->hStream, ptsz, dst, src, P(name)->ByteCount); \
        return 1;
#define SET(name, elsize, ptsz)                                                                            \
    case CBID(name):                                                                                       \
        dls_cuda_work_set(w, P(name)->hStream, ptsz, (uintptr_t)P(name)->dstDevice, P(name)->N *(elsize)); \
        return 1;
#define SET2D(name, elsize, ptsz)                                                                                      \
    case CBID(name):                                                                                                   \
        dls_cuda_work_set(w, P(name)->hStream, ptsz, (uintptr_t)P(name)->dstDevice,                                    \
                          P(name)->Height ? (P(name)->Height - 1) * P(name)->dstPitch + P(name)->Width *(elsize) : 0); \
        return 1;
#define KERNEL(name, ptsz, extra_)                                                                              \
    case CBID(name):                                                                                            \
        dls_cuda_work_launch(w, P(name)->hStream, ptsz, P(name)->f, P(name)->kernelParams, extra_, words, cap); \
        return 1;
#define KERNEL_EX(name, ptsz)                                                                        \
    case CBID(name):                                                                                 \
        dls_cuda_work_launch(w, P(name)->config ? P(name)->config->hStream : NULL, ptsz, P(name)->f, \
                             P(name)->kernelParams, P(name)->extra, words, cap);                     \
        return 1;

/* The launch forms of dls_cuda_decode_work (decode.h), inline; their words are read out of line
 * (dls_cuda_work_launch). */
static inline __attribute__((always_inline)) int dls_cuda_decode_launch_work_inline(CUpti_CallbackId cbid,
                                                                                    const CUpti_CallbackData *cb,
                                                                                    dls_cuda_work *w, uint64_t *words,
                                                                                    uint32_t cap)
{
    if (!cb->functionParams)
        return 0;
    dls_cuda_work_init(w);
    switch (cbid) {
        KERNEL(cuLaunchKernel, 0, P(cuLaunchKernel)->extra)
        KERNEL(cuLaunchKernel_ptsz, 1, P(cuLaunchKernel_ptsz)->extra)
        KERNEL(cuLaunchCooperativeKernel, 0, NULL)
        KERNEL(cuLaunchCooperativeKernel_ptsz, 1, NULL)
        KERNEL_EX(cuLaunchKernelEx, 0)
        KERNEL_EX(cuLaunchKernelEx_ptsz, 1)
    default:
        return 0;
    }
}

/* The copies and sets of dls_cuda_decode_work (decode.h), inline; they call nothing. */
static inline __attribute__((always_inline)) int
dls_cuda_decode_copy_set_inline(CUpti_CallbackId cbid, const CUpti_CallbackData *cb, dls_cuda_work *w)
{
    if (!cb->functionParams)
        return 0;
    dls_cuda_work_init(w);
    switch (cbid) {
        COPY(cuMemcpyHtoDAsync_v2, A(cuMemcpyHtoDAsync_v2, dstDevice), A(cuMemcpyHtoDAsync_v2, srcHost), 0)
        COPY(cuMemcpyHtoDAsync_v2_ptsz, A(cuMemcpyHtoDAsync_v2_ptsz, dstDevice), A(cuMemcpyHtoDAsync_v2_ptsz, srcHost),
             1)
        COPY(cuMemcpyDtoHAsync_v2, A(cuMemcpyDtoHAsync_v2, dstHost), A(cuMemcpyDtoHAsync_v2, srcDevice), 0)
        COPY(cuMemcpyDtoHAsync_v2_ptsz, A(cuMemcpyDtoHAsync_v2_ptsz, dstHost), A(cuMemcpyDtoHAsync_v2_ptsz, srcDevice),
             1)
        COPY(cuMemcpyDtoDAsync_v2, A(cuMemcpyDtoDAsync_v2, dstDevice), A(cuMemcpyDtoDAsync_v2, srcDevice), 0)
        COPY(cuMemcpyDtoDAsync_v2_ptsz, A(cuMemcpyDtoDAsync_v2_ptsz, dstDevice),
             A(cuMemcpyDtoDAsync_v2_ptsz, srcDevice), 1)
        COPY(cuMemcpyAsync, A(cuMemcpyAsync, dst), A(cuMemcpyAsync, src), 0)
        COPY(cuMemcpyAsync_ptsz, A(cuMemcpyAsync_ptsz, dst), A(cuMemcpyAsync_ptsz, src), 1)
        COPY(cuMemcpyPeerAsync, A(cuMemcpyPeerAsync, dstDevice), A(cuMemcpyPeerAsync, srcDevice), 0)
        COPY(cuMemcpyPeerAsync_ptsz, A(cuMemcpyPeerAsync_ptsz, dstDevice), A(cuMemcpyPeerAsync_ptsz, srcDevice), 1)
        COPY(cuMemcpyHtoAAsync_v2, NONE, A(cuMemcpyHtoAAsync_v2, srcHost), 0)
        COPY(cuMemcpyHtoAAsync_v2_ptsz, NONE, A(cuMemcpyHtoAAsync_v2_ptsz, srcHost), 1)
        COPY(cuMemcpyAtoHAsync_v2, A(cuMemcpyAtoHAsync_v2, dstHost), NONE, 0)
        COPY(cuMemcpyAtoHAsync_v2_ptsz, A(cuMemcpyAtoHAsync_v2_ptsz, dstHost), NONE, 1)
        SET(cuMemsetD8Async, 1, 0)
        SET(cuMemsetD8Async_ptsz, 1, 1)
        SET(cuMemsetD16Async, 2, 0)
        SET(cuMemsetD16Async_ptsz, 2, 1)
        SET(cuMemsetD32Async, 4, 0)
        SET(cuMemsetD32Async_ptsz, 4, 1)
        SET2D(cuMemsetD2D8Async, 1, 0)
        SET2D(cuMemsetD2D8Async_ptsz, 1, 1)
        SET2D(cuMemsetD2D16Async, 2, 0)
        SET2D(cuMemsetD2D16Async_ptsz, 2, 1)
        SET2D(cuMemsetD2D32Async, 4, 0)
        SET2D(cuMemsetD2D32Async_ptsz, 4, 1)
    default:
        return 0;
    }
}

#undef P
#undef CBID
#undef A
#undef NONE
#undef COPY
#undef SET
#undef SET2D
#undef KERNEL
#undef KERNEL_EX

#endif
