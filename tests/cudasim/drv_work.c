/* drv_work.c: stream work that touches memory: copies, sets, kernel launches.
 *
 * Built twice, like drv_queue.c: the second build gives the _ptds / _ptsz exports, where stream 0
 * is the calling thread's per-thread default stream.
 * Models: all memory is host memory, so every copy direction (peer copies between devices
 * included) is a memmove run on the stream's worker; synchronous copies run on the default stream and return when done; synchronous sets
 * are asynchronous to the host (as on a GPU for device memory); kernel arguments are copied when
 * the launch is enqueued (from kernelParams, or from a CU_LAUNCH_PARAM_BUFFER_POINTER buffer).
 * Does not model: pitched / 2D / 3D / array copies, pageable-memory staging, launch attributes,
 * grid shape (a kernel body runs once per launch), device faults.
 * On a capturing stream the work becomes a graph node (drv_sched.c); a synchronous copy there
 * fails with CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED and invalidates the capture. */
#include <stdlib.h>
#include <string.h>

#include "cudasim.h"
#include "sim.h"

static CUresult copy(void *dst, const void *src, size_t n, CUstream h, int wait)
{
    struct CUstream_st *s;
    if ((!dst || !src) && n)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = dls_sim_stream_resolve(h, SIM_PTDS, &s);
    if (r == CUDA_SUCCESS && wait)
        r = dls_sim_capture_forbids_sync(s);
    if (r != CUDA_SUCCESS)
        return r;
    dls_sim_op *op = dls_sim_op_new(SIM_OP_COPY);
    op->u.copy.dst = dst;
    op->u.copy.src = src;
    op->u.copy.n = n;
    uint64_t seq = dls_sim_enqueue(s, op, NULL);
    if (wait)
        dls_sim_wait(s, seq);
    return CUDA_SUCCESS;
}

#define PTR(d) ((void *)(uintptr_t)(d))

CUresult CUDAAPI cuMemcpy(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount)
{
    DRV_PARAMS(cuMemcpy) p = {dst, src, ByteCount};
    DRV_CALL(cuMemcpy, &p, NULL, copy(PTR(dst), PTR(src), ByteCount, NULL, 1));
}

CUresult CUDAAPI cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t ByteCount, CUstream hStream)
{
    DRV_PARAMS(cuMemcpyAsync) p = {dst, src, ByteCount, hStream};
    DRV_CALL(cuMemcpyAsync, &p, NULL, copy(PTR(dst), PTR(src), ByteCount, hStream, 0));
}

CUresult CUDAAPI cuMemcpyHtoD(CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount)
{
    DRV_PARAMS(cuMemcpyHtoD) p = {dstDevice, srcHost, ByteCount};
    DRV_CALL(cuMemcpyHtoD, &p, NULL, copy(PTR(dstDevice), srcHost, ByteCount, NULL, 1));
}

CUresult CUDAAPI cuMemcpyDtoH(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount)
{
    DRV_PARAMS(cuMemcpyDtoH) p = {dstHost, srcDevice, ByteCount};
    DRV_CALL(cuMemcpyDtoH, &p, NULL, copy(dstHost, PTR(srcDevice), ByteCount, NULL, 1));
}

CUresult CUDAAPI cuMemcpyDtoD(CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount)
{
    DRV_PARAMS(cuMemcpyDtoD) p = {dstDevice, srcDevice, ByteCount};
    DRV_CALL(cuMemcpyDtoD, &p, NULL, copy(PTR(dstDevice), PTR(srcDevice), ByteCount, NULL, 1));
}

CUresult CUDAAPI cuMemcpyHtoDAsync(CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount, CUstream hStream)
{
    DRV_PARAMS(cuMemcpyHtoDAsync) p = {dstDevice, srcHost, ByteCount, hStream};
    DRV_CALL(cuMemcpyHtoDAsync, &p, NULL, copy(PTR(dstDevice), srcHost, ByteCount, hStream, 0));
}

CUresult CUDAAPI cuMemcpyDtoHAsync(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount, CUstream hStream)
{
    DRV_PARAMS(cuMemcpyDtoHAsync) p = {dstHost, srcDevice, ByteCount, hStream};
    DRV_CALL(cuMemcpyDtoHAsync, &p, NULL, copy(dstHost, PTR(srcDevice), ByteCount, hStream, 0));
}

CUresult CUDAAPI cuMemcpyDtoDAsync(CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount, CUstream hStream)
{
    DRV_PARAMS(cuMemcpyDtoDAsync) p = {dstDevice, srcDevice, ByteCount, hStream};
    DRV_CALL(cuMemcpyDtoDAsync, &p, NULL, copy(PTR(dstDevice), PTR(srcDevice), ByteCount, hStream, 0));
}

/* A peer copy names the contexts of both sides; all memory is host memory, so it is a copy. */
static CUresult copy_peer(CUdeviceptr dst, CUcontext dctx, CUdeviceptr src, CUcontext sctx, size_t n, CUstream h,
                          int wait)
{
    if (!dctx || dctx->magic != SIM_MAGIC_CTX || !sctx || sctx->magic != SIM_MAGIC_CTX)
        return CUDA_ERROR_INVALID_CONTEXT;
    return copy(PTR(dst), PTR(src), n, h, wait);
}

CUresult CUDAAPI cuMemcpyPeer(CUdeviceptr dstDevice, CUcontext dstContext, CUdeviceptr srcDevice, CUcontext srcContext,
                              size_t ByteCount)
{
    DRV_PARAMS(cuMemcpyPeer) p = {dstDevice, dstContext, srcDevice, srcContext, ByteCount};
    DRV_CALL(cuMemcpyPeer, &p, NULL, copy_peer(dstDevice, dstContext, srcDevice, srcContext, ByteCount, NULL, 1));
}

CUresult CUDAAPI cuMemcpyPeerAsync(CUdeviceptr dstDevice, CUcontext dstContext, CUdeviceptr srcDevice,
                                   CUcontext srcContext, size_t ByteCount, CUstream hStream)
{
    DRV_PARAMS(cuMemcpyPeerAsync) p = {dstDevice, dstContext, srcDevice, srcContext, ByteCount, hStream};
    DRV_CALL(cuMemcpyPeerAsync, &p, NULL,
             copy_peer(dstDevice, dstContext, srcDevice, srcContext, ByteCount, hStream, 0));
}

static CUresult set(CUdeviceptr dst, int kind, unsigned value, size_t n, CUstream h)
{
    struct CUstream_st *s;
    if (!dst && n)
        return CUDA_ERROR_INVALID_VALUE;
    if (kind == SIM_OP_SET32 && (dst & 3))
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = dls_sim_stream_resolve(h, SIM_PTDS, &s);
    if (r != CUDA_SUCCESS)
        return r;
    dls_sim_op *op = dls_sim_op_new(kind);
    op->u.set.dst = PTR(dst);
    op->u.set.value = value;
    op->u.set.n = n;
    dls_sim_enqueue(s, op, NULL);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemsetD8(CUdeviceptr dstDevice, unsigned char uc, size_t N)
{
    DRV_PARAMS(cuMemsetD8) p = {dstDevice, uc, N};
    DRV_CALL(cuMemsetD8, &p, NULL, set(dstDevice, SIM_OP_SET8, uc, N, NULL));
}

CUresult CUDAAPI cuMemsetD32(CUdeviceptr dstDevice, unsigned int ui, size_t N)
{
    DRV_PARAMS(cuMemsetD32) p = {dstDevice, ui, N};
    DRV_CALL(cuMemsetD32, &p, NULL, set(dstDevice, SIM_OP_SET32, ui, N, NULL));
}

CUresult CUDAAPI cuMemsetD8Async(CUdeviceptr dstDevice, unsigned char uc, size_t N, CUstream hStream)
{
    DRV_PARAMS(cuMemsetD8Async) p = {dstDevice, uc, N, hStream};
    DRV_CALL(cuMemsetD8Async, &p, NULL, set(dstDevice, SIM_OP_SET8, uc, N, hStream));
}

CUresult CUDAAPI cuMemsetD32Async(CUdeviceptr dstDevice, unsigned int ui, size_t N, CUstream hStream)
{
    DRV_PARAMS(cuMemsetD32Async) p = {dstDevice, ui, N, hStream};
    DRV_CALL(cuMemsetD32Async, &p, NULL, set(dstDevice, SIM_OP_SET32, ui, N, hStream));
}

/* Finds the packed argument buffer in a cuLaunchKernel `extra` array. */
static int extra_buffer(void **extra, const void **buf, size_t *size)
{
    *buf = NULL;
    *size = 0;
    for (size_t i = 0; extra && extra[i] != CU_LAUNCH_PARAM_END; i += 2) {
        if (extra[i] == CU_LAUNCH_PARAM_BUFFER_POINTER)
            *buf = extra[i + 1];
        else if (extra[i] == CU_LAUNCH_PARAM_BUFFER_SIZE)
            *size = *(const size_t *)extra[i + 1];
        else
            return -1;
    }
    return 0;
}

static CUresult launch(CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                       CUstream h, void **params, void **extra)
{
    struct CUfunc_st *k = dls_sim_kernel(f);
    struct CUstream_st *s;
    if (!k)
        return CUDA_ERROR_INVALID_HANDLE;
    if (!gx || !gy || !gz || !bx || !by || !bz || (params && extra))
        return CUDA_ERROR_INVALID_VALUE;
    const void *packed = NULL;
    size_t packed_size = 0;
    if (!params &&
        (extra_buffer(extra, &packed, &packed_size) != 0 || (k->nparams && (!packed || packed_size < k->argbytes))))
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = dls_sim_stream_resolve(h, SIM_PTDS, &s);
    if (r != CUDA_SUCCESS)
        return r;
    if (dls_sim_kernel_first_load(k, s->ctx))
        dls_sim_ctx_sync(s->ctx);
    dls_sim_op *op = dls_sim_op_new(SIM_OP_KERNEL);
    op->u.k.f = k;
    op->u.k.buf = malloc(k->argbytes ? k->argbytes : 1);
    op->u.k.args = calloc(k->nparams ? k->nparams : 1, sizeof(void *));
    if (!op->u.k.buf || !op->u.k.args)
        abort();
    for (unsigned i = 0; i < k->nparams; i++) {
        const void *src = params ? params[i] : (const unsigned char *)packed + k->offsets[i];
        memcpy(op->u.k.buf + k->offsets[i], src, k->sizes[i]);
        op->u.k.args[i] = op->u.k.buf + k->offsets[i];
    }
    dls_sim_enqueue(s, op, NULL);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuLaunchKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ,
                                unsigned int blockDimX, unsigned int blockDimY, unsigned int blockDimZ,
                                unsigned int sharedMemBytes, CUstream hStream, void **kernelParams, void **extra)
{
    DRV_PARAMS(cuLaunchKernel)
    p = {f,         gridDimX,       gridDimY, gridDimZ,     blockDimX, blockDimY,
         blockDimZ, sharedMemBytes, hStream,  kernelParams, extra};
    DRV_CALL(cuLaunchKernel, &p, cudasim_kernel_name(f),
             launch(f, gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, hStream, kernelParams, extra));
}

static CUresult launch_ex(const CUlaunchConfig *c, CUfunction f, void **params, void **extra)
{
    if (!c)
        return CUDA_ERROR_INVALID_VALUE;
    return launch(f, c->gridDimX, c->gridDimY, c->gridDimZ, c->blockDimX, c->blockDimY, c->blockDimZ, c->hStream,
                  params, extra);
}

CUresult CUDAAPI cuLaunchKernelEx(const CUlaunchConfig *config, CUfunction f, void **kernelParams, void **extra)
{
    DRV_PARAMS(cuLaunchKernelEx) p = {config, f, kernelParams, extra};
    DRV_CALL(cuLaunchKernelEx, &p, cudasim_kernel_name(f), launch_ex(config, f, kernelParams, extra));
}

const dls_sim_proc SIM_TABLE(dls_sim_procs_work)[] = {
    SIM_PROC(cuMemcpy),
    SIM_PROC(cuMemcpyAsync),
    SIM_PROC(cuMemcpyHtoD),
    SIM_PROC(cuMemcpyDtoH),
    SIM_PROC(cuMemcpyDtoD),
    SIM_PROC(cuMemcpyHtoDAsync),
    SIM_PROC(cuMemcpyDtoHAsync),
    SIM_PROC(cuMemcpyDtoDAsync),
    SIM_PROC(cuMemcpyPeer),
    SIM_PROC(cuMemcpyPeerAsync),
    SIM_PROC(cuMemsetD8),
    SIM_PROC(cuMemsetD32),
    SIM_PROC(cuMemsetD8Async),
    SIM_PROC(cuMemsetD32Async),
    SIM_PROC(cuLaunchKernel),
    SIM_PROC(cuLaunchKernelEx),
    {NULL, NULL},
};
