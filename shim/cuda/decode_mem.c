/* Decoding of driver copies, sets and frees into byte ranges (see decode.h). Linear async copies
 * and async sets are the work lane's (decode_work.h).
 *
 * Linear copies and sets give their exact ranges; 2D and 3D forms their bounding range; a CUarray
 * side is not linear memory and gives no range. Synchronous forms run on the default stream of
 * the call (legacy, or per-thread for _ptds forms) and are not DLS_OPF_ASYNC. Legacy entry
 * points with 32-bit device pointers (CUdeviceptr_v1) are not handled. */
#include "decode.h"

#include "drv.h"

#define P(type) ((const type##_params *)cb->functionParams)
#define CBID(name) CUPTI_DRIVER_TRACE_CBID_##name

/* Common part of a copy or set on stream h. */
static void on_stream(dls_cuda_op *op, dls_op_kind kind, const CUpti_CallbackData *cb, CUstream h, int per_thread,
                      int async)
{
    op->kind = kind;
    if (async)
        op->flags |= DLS_OPF_ASYNC;
    dls_cuda_decode_stream(op, h, per_thread, cb);
}

/* A linear copy of n bytes; an address of 0 is a CUarray side (no range). */
static void copy1(dls_cuda_op *op, dls_cuda_scratch *sc, uintptr_t dst, uintptr_t src, size_t n)
{
    if (src)
        dls_cuda_decode_range(op, sc, src, n, DLS_ACCESS_READ);
    if (dst)
        dls_cuda_decode_range(op, sc, dst, n, DLS_ACCESS_WRITE);
}

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

static void copy2d(dls_cuda_op *op, dls_cuda_scratch *sc, const CUDA_MEMCPY2D *c)
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

static void copy3d(dls_cuda_op *op, dls_cuda_scratch *sc, const CUDA_MEMCPY3D *c)
{
    if (!c) {
        op->flags |= DLS_OPF_CONSERVATIVE;
        return;
    }
    COPY3D_SIDE(op, sc, c, src, DLS_ACCESS_READ);
    COPY3D_SIDE(op, sc, c, dst, DLS_ACCESS_WRITE);
}

static void copy3d_peer(dls_cuda_op *op, dls_cuda_scratch *sc, const CUDA_MEMCPY3D_PEER *c)
{
    if (!c) {
        op->flags |= DLS_OPF_CONSERVATIVE;
        return;
    }
    COPY3D_SIDE(op, sc, c, src, DLS_ACCESS_READ);
    COPY3D_SIDE(op, sc, c, dst, DLS_ACCESS_WRITE);
}

static void batch(dls_cuda_op *op, dls_cuda_scratch *sc, CUdeviceptr *dsts, CUdeviceptr *srcs, size_t *sizes,
                  size_t count)
{
    if (!dsts || !srcs || !sizes) {
        op->flags |= DLS_OPF_CONSERVATIVE;
        return;
    }
    for (size_t i = 0; i < count && !(op->flags & DLS_OPF_CONSERVATIVE); i++)
        copy1(op, sc, (uintptr_t)dsts[i], (uintptr_t)srcs[i], sizes[i]);
}

/* The allocation being freed, asked at ENTER (afterwards the driver no longer knows it) and
 * remembered for the EXIT of the same call on this thread. */
static __thread struct {
    uintptr_t ptr, base;
    size_t size;
} t_free;

static void free_range(dls_cuda_op *op, dls_cuda_scratch *sc, const CUpti_CallbackData *cb, uintptr_t ptr)
{
    op->kind = DLS_OP_FREE;
    if (cb->callbackSite == CUPTI_API_ENTER) {
        CUdeviceptr base = 0;
        size_t size = 0;
        t_free.ptr = ptr;
        t_free.base = t_free.size = 0;
        if (dls_drv_pointer_get_attribute(&base, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, (CUdeviceptr)ptr) ==
                CUDA_SUCCESS &&
            dls_drv_pointer_get_attribute(&size, CU_POINTER_ATTRIBUTE_RANGE_SIZE, (CUdeviceptr)ptr) == CUDA_SUCCESS) {
            t_free.base = (uintptr_t)base;
            t_free.size = size;
        }
    }
    if (ptr && t_free.ptr == ptr && t_free.size)
        dls_cuda_decode_range(op, sc, t_free.base, t_free.size, DLS_ACCESS_WRITE);
    else if (ptr)
        op->flags |= DLS_OPF_CONSERVATIVE;
}

/* Case bodies, one per cbid, each reading its own parameter struct. */
/* A(name, field): an address parameter; NONE: the side is a CUarray. */
#define A(name, field) (uintptr_t) P(name)->field
#define NONE 0
#define COPY(name, dst, src, ptd, async, strm)              \
    case CBID(name):                                        \
        on_stream(op, DLS_OP_MEMCPY, cb, strm, ptd, async); \
        copy1(op, sc, dst, src, P(name)->ByteCount);        \
        return 1;
#define COPY_SYNC(name, dst, src, ptd) COPY(name, dst, src, ptd, 0, NULL)
#define COPY_ND(name, fn, ptd, async, strm)                 \
    case CBID(name):                                        \
        on_stream(op, DLS_OP_MEMCPY, cb, strm, ptd, async); \
        fn(op, sc, P(name)->pCopy);                         \
        return 1;
#define BATCH(name, ptsz)                                                            \
    case CBID(name):                                                                 \
        on_stream(op, DLS_OP_MEMCPY, cb, P(name)->hStream, ptsz, 1);                 \
        batch(op, sc, P(name)->dsts, P(name)->srcs, P(name)->sizes, P(name)->count); \
        return 1;
#define BATCH3D(name, ptsz)                                          \
    case CBID(name):                                                 \
        on_stream(op, DLS_OP_MEMCPY, cb, P(name)->hStream, ptsz, 1); \
        op->flags |= DLS_OPF_CONSERVATIVE;                           \
        return 1;
#define SET(name, elsize, ptd, async, strm)                                                                   \
    case CBID(name):                                                                                          \
        on_stream(op, DLS_OP_MEMSET, cb, strm, ptd, async);                                                   \
        dls_cuda_decode_range(op, sc, (uintptr_t)P(name)->dstDevice, P(name)->N *(elsize), DLS_ACCESS_WRITE); \
        return 1;
#define SET2D(name, elsize, ptd, async, strm)                                                            \
    case CBID(name):                                                                                     \
        on_stream(op, DLS_OP_MEMSET, cb, strm, ptd, async);                                              \
        if (P(name)->Height)                                                                             \
            dls_cuda_decode_range(op, sc, (uintptr_t)P(name)->dstDevice,                                 \
                                  (P(name)->Height - 1) * P(name)->dstPitch + P(name)->Width * (elsize), \
                                  DLS_ACCESS_WRITE);                                                     \
        return 1;

int dls_cuda_decode_mem(CUpti_CallbackId cbid, const CUpti_CallbackData *cb, dls_cuda_op *op, dls_cuda_scratch *sc)
{
    switch (cbid) {
        COPY_SYNC(cuMemcpyHtoD_v2, A(cuMemcpyHtoD_v2, dstDevice), A(cuMemcpyHtoD_v2, srcHost), 0)
        COPY_SYNC(cuMemcpyHtoD_v2_ptds, A(cuMemcpyHtoD_v2_ptds, dstDevice), A(cuMemcpyHtoD_v2_ptds, srcHost), 1)
        COPY_SYNC(cuMemcpyDtoH_v2, A(cuMemcpyDtoH_v2, dstHost), A(cuMemcpyDtoH_v2, srcDevice), 0)
        COPY_SYNC(cuMemcpyDtoH_v2_ptds, A(cuMemcpyDtoH_v2_ptds, dstHost), A(cuMemcpyDtoH_v2_ptds, srcDevice), 1)
        COPY_SYNC(cuMemcpyDtoD_v2, A(cuMemcpyDtoD_v2, dstDevice), A(cuMemcpyDtoD_v2, srcDevice), 0)
        COPY_SYNC(cuMemcpyDtoD_v2_ptds, A(cuMemcpyDtoD_v2_ptds, dstDevice), A(cuMemcpyDtoD_v2_ptds, srcDevice), 1)
        COPY_SYNC(cuMemcpy, A(cuMemcpy, dst), A(cuMemcpy, src), 0)
        COPY_SYNC(cuMemcpy_ptds, A(cuMemcpy_ptds, dst), A(cuMemcpy_ptds, src), 1)
        COPY_SYNC(cuMemcpyPeer, A(cuMemcpyPeer, dstDevice), A(cuMemcpyPeer, srcDevice), 0)
        COPY_SYNC(cuMemcpyPeer_ptds, A(cuMemcpyPeer_ptds, dstDevice), A(cuMemcpyPeer_ptds, srcDevice), 1)
        COPY_SYNC(cuMemcpyDtoA_v2, NONE, A(cuMemcpyDtoA_v2, srcDevice), 0)
        COPY_SYNC(cuMemcpyDtoA_v2_ptds, NONE, A(cuMemcpyDtoA_v2_ptds, srcDevice), 1)
        COPY_SYNC(cuMemcpyAtoD_v2, A(cuMemcpyAtoD_v2, dstDevice), NONE, 0)
        COPY_SYNC(cuMemcpyAtoD_v2_ptds, A(cuMemcpyAtoD_v2_ptds, dstDevice), NONE, 1)
        COPY_SYNC(cuMemcpyHtoA_v2, NONE, A(cuMemcpyHtoA_v2, srcHost), 0)
        COPY_SYNC(cuMemcpyHtoA_v2_ptds, NONE, A(cuMemcpyHtoA_v2_ptds, srcHost), 1)
        COPY_SYNC(cuMemcpyAtoH_v2, A(cuMemcpyAtoH_v2, dstHost), NONE, 0)
        COPY_SYNC(cuMemcpyAtoH_v2_ptds, A(cuMemcpyAtoH_v2_ptds, dstHost), NONE, 1)
        COPY_SYNC(cuMemcpyAtoA_v2, NONE, NONE, 0)
        COPY_SYNC(cuMemcpyAtoA_v2_ptds, NONE, NONE, 1)
        COPY_ND(cuMemcpy2D_v2, copy2d, 0, 0, NULL)
        COPY_ND(cuMemcpy2D_v2_ptds, copy2d, 1, 0, NULL)
        COPY_ND(cuMemcpy2DUnaligned_v2, copy2d, 0, 0, NULL)
        COPY_ND(cuMemcpy2DUnaligned_v2_ptds, copy2d, 1, 0, NULL)
        COPY_ND(cuMemcpy2DAsync_v2, copy2d, 0, 1, P(cuMemcpy2DAsync_v2)->hStream)
        COPY_ND(cuMemcpy2DAsync_v2_ptsz, copy2d, 1, 1, P(cuMemcpy2DAsync_v2_ptsz)->hStream)
        COPY_ND(cuMemcpy3D_v2, copy3d, 0, 0, NULL)
        COPY_ND(cuMemcpy3D_v2_ptds, copy3d, 1, 0, NULL)
        COPY_ND(cuMemcpy3DAsync_v2, copy3d, 0, 1, P(cuMemcpy3DAsync_v2)->hStream)
        COPY_ND(cuMemcpy3DAsync_v2_ptsz, copy3d, 1, 1, P(cuMemcpy3DAsync_v2_ptsz)->hStream)
        COPY_ND(cuMemcpy3DPeer, copy3d_peer, 0, 0, NULL)
        COPY_ND(cuMemcpy3DPeer_ptds, copy3d_peer, 1, 0, NULL)
        COPY_ND(cuMemcpy3DPeerAsync, copy3d_peer, 0, 1, P(cuMemcpy3DPeerAsync)->hStream)
        COPY_ND(cuMemcpy3DPeerAsync_ptsz, copy3d_peer, 1, 1, P(cuMemcpy3DPeerAsync_ptsz)->hStream)
        BATCH(cuMemcpyBatchAsync, 0)
        BATCH(cuMemcpyBatchAsync_ptsz, 1)
        BATCH(cuMemcpyBatchAsync_v2, 0)
        BATCH(cuMemcpyBatchAsync_v2_ptsz, 1)
        BATCH3D(cuMemcpy3DBatchAsync, 0)
        BATCH3D(cuMemcpy3DBatchAsync_ptsz, 1)
        BATCH3D(cuMemcpy3DBatchAsync_v2, 0)
        BATCH3D(cuMemcpy3DBatchAsync_v2_ptsz, 1)
        SET(cuMemsetD8_v2, 1, 0, 0, NULL)
        SET(cuMemsetD8_v2_ptds, 1, 1, 0, NULL)
        SET(cuMemsetD16_v2, 2, 0, 0, NULL)
        SET(cuMemsetD16_v2_ptds, 2, 1, 0, NULL)
        SET(cuMemsetD32_v2, 4, 0, 0, NULL)
        SET(cuMemsetD32_v2_ptds, 4, 1, 0, NULL)
        SET2D(cuMemsetD2D8_v2, 1, 0, 0, NULL)
        SET2D(cuMemsetD2D8_v2_ptds, 1, 1, 0, NULL)
        SET2D(cuMemsetD2D16_v2, 2, 0, 0, NULL)
        SET2D(cuMemsetD2D16_v2_ptds, 2, 1, 0, NULL)
        SET2D(cuMemsetD2D32_v2, 4, 0, 0, NULL)
        SET2D(cuMemsetD2D32_v2_ptds, 4, 1, 0, NULL)
    case CBID(cuMemFree_v2):
        free_range(op, sc, cb, (uintptr_t)P(cuMemFree_v2)->dptr);
        return 1;
    case CBID(cuMemFreeHost):
        free_range(op, sc, cb, (uintptr_t)P(cuMemFreeHost)->p);
        return 1;
    case CBID(cuMemFreeAsync):
        free_range(op, sc, cb, (uintptr_t)P(cuMemFreeAsync)->dptr);
        op->flags |= DLS_OPF_ASYNC;
        dls_cuda_decode_stream(op, P(cuMemFreeAsync)->hStream, 0, cb);
        return 1;
    case CBID(cuMemFreeAsync_ptsz):
        free_range(op, sc, cb, (uintptr_t)P(cuMemFreeAsync_ptsz)->dptr);
        op->flags |= DLS_OPF_ASYNC;
        dls_cuda_decode_stream(op, P(cuMemFreeAsync_ptsz)->hStream, 1, cb);
        return 1;
    default:
        return -1;
    }
}
