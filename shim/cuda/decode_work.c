/* Decoding of the work lane's calls: the kernel launches, linear async copies and async sets
 * that make up almost all of a program's stream work (see decode.h). This is the one place
 * their parameter structs are read: dls_cuda_decode builds their dls_cuda_op from the work. */
#include "decode.h"

#include "kparams.h"

#define P(type) ((const type##_params *)cb->functionParams)
#define CBID(name) CUPTI_DRIVER_TRACE_CBID_##name

/* Appends [addr, addr + n) unless it is empty (or, for a copy side, a CUarray: address 0). */
static void range(dls_cuda_work *w, uintptr_t addr, size_t n, unsigned access)
{
    if (n)
        w->ranges[w->nranges++] = (dls_cuda_range){.addr = addr, .len = n, .access = access};
}

static void copy(dls_cuda_work *w, CUstream h, int ptsz, uintptr_t dst, uintptr_t src, size_t n)
{
    w->kind = DLS_OP_MEMCPY;
    w->handle = (uintptr_t)h;
    w->per_thread = ptsz;
    if (src)
        range(w, src, n, DLS_ACCESS_READ);
    if (dst)
        range(w, dst, n, DLS_ACCESS_WRITE);
}

static void set(dls_cuda_work *w, CUstream h, int ptsz, uintptr_t dst, size_t n)
{
    w->kind = DLS_OP_MEMSET;
    w->handle = (uintptr_t)h;
    w->per_thread = ptsz;
    range(w, dst, n, DLS_ACCESS_WRITE);
}

void dls_cuda_work_launch(dls_cuda_work *w, CUstream h, int ptsz, CUfunction f, void **kernel_params, void **extra,
                          uint64_t *words, uint32_t cap)
{
    w->kind = DLS_OP_LAUNCH;
    w->handle = (uintptr_t)h;
    w->per_thread = ptsz;
    w->words = words;
    w->flags |= dls_cuda_kernel_words(f, kernel_params, extra, words, cap, &w->nwords) ? DLS_OPF_WORDS_EXACT
                                                                                       : DLS_OPF_CONSERVATIVE;
}

#define A(name, field) (uintptr_t) P(name)->field
#define NONE 0
#define COPY(name, dst, src, ptsz)                                     \
    case CBID(name):                                                   \
        copy(w, P(name)->hStream, ptsz, dst, src, P(name)->ByteCount); \
        return 1;
#define SET(name, elsize, ptsz)                                                              \
    case CBID(name):                                                                         \
        set(w, P(name)->hStream, ptsz, (uintptr_t)P(name)->dstDevice, P(name)->N *(elsize)); \
        return 1;
#define SET2D(name, elsize, ptsz)                                                                        \
    case CBID(name):                                                                                     \
        set(w, P(name)->hStream, ptsz, (uintptr_t)P(name)->dstDevice,                                    \
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

void dls_cuda_work_init(dls_cuda_work *w)
{
    w->flags = DLS_OPF_ASYNC;
    w->nranges = w->nwords = 0;
    w->words = NULL;
}

void dls_cuda_op_from_work(dls_cuda_op *op, const dls_cuda_work *w, const CUpti_CallbackData *cb,
                           dls_cuda_scratch *scratch)
{
    op->kind = w->kind;
    op->flags |= w->flags;
    dls_cuda_decode_stream(op, (CUstream)w->handle, w->per_thread, cb);
    for (uint32_t i = 0; i < w->nranges; i++)
        dls_cuda_decode_range(op, scratch, w->ranges[i].addr, w->ranges[i].len, w->ranges[i].access);
    op->words = w->words;
    op->nwords = w->nwords;
}

int dls_cuda_decode_work(CUpti_CallbackId cbid, const CUpti_CallbackData *cb, dls_cuda_work *w, uint64_t *words,
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
