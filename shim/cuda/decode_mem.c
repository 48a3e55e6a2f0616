/* The readers of the memory shapes the work decoder does not read (decode.h): 2D and 3D copies,
 * batches and frees, into byte ranges. Linear copies and sets are read by their rows' cases
 * (decode_work.c, and decode.c for the synchronous copies).
 *
 * 2D and 3D copies give their bounding range; a CUarray side is not linear memory and gives no
 * range. Synchronous forms run on the default stream of the call (legacy, or per-thread for _ptds
 * forms) and are not DLS_OPF_ASYNC. */
#include "decode_mem.h"

#include "ranges.h"

#include "drv.h"

/* Base address of one side of a 2D/3D copy, or 0 for an array. */
static uintptr_t side_base(CUmemorytype t, const void *host, CUdeviceptr dev)
{
    switch (t) {
    case CU_MEMORYTYPE_HOST:
        return (uintptr_t)host;
    case CU_MEMORYTYPE_DEVICE:
    case CU_MEMORYTYPE_UNIFIED:
        return (uintptr_t)dev;
    default:
        return 0;
    }
}

void dls_cuda_decode_copy_2d(dls_cuda_op *op, dls_cuda_scratch *sc, const CUDA_MEMCPY2D *c)
{
    if (!c) {
        op->flags |= DLS_OPF_CONSERVATIVE;
        return;
    }
    size_t rows = c->Height;
    uintptr_t s = side_base(c->srcMemoryType, c->srcHost, c->srcDevice);
    uintptr_t d = side_base(c->dstMemoryType, c->dstHost, c->dstDevice);
    if (s && rows)
        dls_cuda_decode_range(op, sc, s + c->srcY * c->srcPitch + c->srcXInBytes,
                              (rows - 1) * c->srcPitch + c->WidthInBytes, DLS_ACCESS_READ);
    if (d && rows)
        dls_cuda_decode_range(op, sc, d + c->dstY * c->dstPitch + c->dstXInBytes,
                              (rows - 1) * c->dstPitch + c->WidthInBytes, DLS_ACCESS_WRITE);
}

/* CUDA_MEMCPY3D and CUDA_MEMCPY3D_PEER name their fields alike. */
#define COPY3D_SIDE(op, sc, c, pre, access)                                                                         \
    do {                                                                                                            \
        uintptr_t b_ = side_base((c)->pre##MemoryType, (c)->pre##Host, (c)->pre##Device);                           \
        if (b_ && (c)->Height && (c)->Depth)                                                                        \
            dls_cuda_decode_range(                                                                                  \
                op, sc, b_ + ((c)->pre##Z * (c)->pre##Height + (c)->pre##Y) * (c)->pre##Pitch + (c)->pre##XInBytes, \
                (((c)->Depth - 1) * (c)->pre##Height + (c)->Height - 1) * (c)->pre##Pitch + (c)->WidthInBytes,      \
                access);                                                                                            \
    } while (0)

void dls_cuda_decode_copy_3d(dls_cuda_op *op, dls_cuda_scratch *sc, const CUDA_MEMCPY3D *c)
{
    if (!c) {
        op->flags |= DLS_OPF_CONSERVATIVE;
        return;
    }
    COPY3D_SIDE(op, sc, c, src, DLS_ACCESS_READ);
    COPY3D_SIDE(op, sc, c, dst, DLS_ACCESS_WRITE);
}

void dls_cuda_decode_copy_3d_peer(dls_cuda_op *op, dls_cuda_scratch *sc, const CUDA_MEMCPY3D_PEER *c)
{
    if (!c) {
        op->flags |= DLS_OPF_CONSERVATIVE;
        return;
    }
    COPY3D_SIDE(op, sc, c, src, DLS_ACCESS_READ);
    COPY3D_SIDE(op, sc, c, dst, DLS_ACCESS_WRITE);
}

void dls_cuda_decode_batch(dls_cuda_op *op, dls_cuda_scratch *sc, const CUdeviceptr *dsts, const CUdeviceptr *srcs,
                           const size_t *sizes, size_t count)
{
    if (!dsts || !srcs || !sizes) {
        op->flags |= DLS_OPF_CONSERVATIVE;
        return;
    }
    for (size_t i = 0; i < count && !(op->flags & DLS_OPF_CONSERVATIVE); i++) {
        if (srcs[i]) /* an address of 0 gives no range */
            dls_cuda_decode_range(op, sc, (uintptr_t)srcs[i], sizes[i], DLS_ACCESS_READ);
        if (dsts[i])
            dls_cuda_decode_range(op, sc, (uintptr_t)dsts[i], sizes[i], DLS_ACCESS_WRITE);
    }
}

/* The allocation being freed, asked at ENTER and remembered for the EXIT of the same call. */
static __thread struct {
    uintptr_t ptr, base, ctx;
    size_t size;
} t_free;

void dls_cuda_decode_free(dls_cuda_op *op, dls_cuda_scratch *sc, const CUpti_CallbackData *cb, uintptr_t ptr)
{
    op->kind = DLS_OP_FREE;
    if (cb->callbackSite == CUPTI_API_ENTER) {
        CUdeviceptr base = 0;
        size_t size = 0;
        CUcontext ctx = NULL;
        t_free.ptr = ptr;
        t_free.base = t_free.size = t_free.ctx = 0;
        dls_cuda_ranges_age();
        if (dls_drv_pointer_get_attribute(&base, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, (CUdeviceptr)ptr) ==
                CUDA_SUCCESS &&
            dls_drv_pointer_get_attribute(&size, CU_POINTER_ATTRIBUTE_RANGE_SIZE, (CUdeviceptr)ptr) == CUDA_SUCCESS) {
            t_free.base = (uintptr_t)base;
            t_free.size = size;
        }
        if (ptr && dls_drv_pointer_get_attribute(&ctx, CU_POINTER_ATTRIBUTE_CONTEXT, (CUdeviceptr)ptr) == CUDA_SUCCESS)
            t_free.ctx = (uintptr_t)ctx;
    }
    if (ptr && t_free.ptr == ptr && t_free.size)
        dls_cuda_decode_range(op, sc, t_free.base, t_free.size, DLS_ACCESS_WRITE);
    else if (ptr)
        op->flags |= DLS_OPF_CONSERVATIVE;
    op->ctx = ptr && t_free.ptr == ptr ? t_free.ctx : 0;
}
