/* rt_work.c: the simulated runtime's stream-ordered calls: copies, sets, launches, host
 * functions, stream synchronize / query / properties, event records and waits.
 *
 * Built twice: normally and with CUDA_API_PER_THREAD_DEFAULT_STREAM, which cuda_runtime_api.h
 * turns into the _ptsz / _ptds exports; that build calls the driver's per-thread variants, so
 * stream 0 means the calling thread's per-thread default stream there, as in real CUDA.
 * Models: cudaMemcpy's synchronous semantics (on the default stream), every memcpy kind over
 * host memory, cudaLaunchKernel / cudaLaunchKernelExC with a simulated kernel's CUfunction as
 * `func` (launch attributes ignored). Does not model: 2D/3D/array/symbol copies. */
#include <stdint.h>

#include "rt.h"

#define DPTR(p) ((CUdeviceptr)(uintptr_t)(p))

static cudaError_t memcpy_sync(void *dst, const void *src, size_t n, enum cudaMemcpyKind kind)
{
    switch (kind) {
    case cudaMemcpyHostToDevice:
        return (cudaError_t)cuMemcpyHtoD(DPTR(dst), src, n);
    case cudaMemcpyDeviceToHost:
        return (cudaError_t)cuMemcpyDtoH(dst, DPTR(src), n);
    case cudaMemcpyDeviceToDevice:
        return (cudaError_t)cuMemcpyDtoD(DPTR(dst), DPTR(src), n);
    case cudaMemcpyHostToHost:
    case cudaMemcpyDefault:
        return (cudaError_t)cuMemcpy(DPTR(dst), DPTR(src), n);
    }
    return cudaErrorInvalidMemcpyDirection;
}

cudaError_t CUDARTAPI cudaMemcpy(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind)
{
#define API RT_PICK(cudaMemcpy_v3020, cudaMemcpy_ptds_v7000)
    RT_PARAMS(API) p = {dst, src, count, kind};
    RT_CALL(API, &p, NULL, memcpy_sync(dst, src, count, kind));
#undef API
}

static cudaError_t memcpy_async(void *dst, const void *src, size_t n, enum cudaMemcpyKind kind, cudaStream_t s)
{
    switch (kind) {
    case cudaMemcpyHostToDevice:
        return (cudaError_t)cuMemcpyHtoDAsync(DPTR(dst), src, n, s);
    case cudaMemcpyDeviceToHost:
        return (cudaError_t)cuMemcpyDtoHAsync(dst, DPTR(src), n, s);
    case cudaMemcpyDeviceToDevice:
        return (cudaError_t)cuMemcpyDtoDAsync(DPTR(dst), DPTR(src), n, s);
    case cudaMemcpyHostToHost:
    case cudaMemcpyDefault:
        return (cudaError_t)cuMemcpyAsync(DPTR(dst), DPTR(src), n, s);
    }
    return cudaErrorInvalidMemcpyDirection;
}

cudaError_t CUDARTAPI cudaMemcpyAsync(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind,
                                      cudaStream_t stream)
{
#define API RT_PICK(cudaMemcpyAsync_v3020, cudaMemcpyAsync_ptsz_v7000)
    RT_PARAMS(API) p = {dst, src, count, kind, stream};
    RT_CALL(API, &p, NULL, memcpy_async(dst, src, count, kind, stream));
#undef API
}

cudaError_t CUDARTAPI cudaMemset(void *devPtr, int value, size_t count)
{
#define API RT_PICK(cudaMemset_v3020, cudaMemset_ptds_v7000)
    RT_PARAMS(API) p = {devPtr, value, count};
    RT_CALL(API, &p, NULL, (cudaError_t)cuMemsetD8(DPTR(devPtr), (unsigned char)value, count));
#undef API
}

cudaError_t CUDARTAPI cudaMemsetAsync(void *devPtr, int value, size_t count, cudaStream_t stream)
{
#define API RT_PICK(cudaMemsetAsync_v3020, cudaMemsetAsync_ptsz_v7000)
    RT_PARAMS(API) p = {devPtr, value, count, stream};
    RT_CALL(API, &p, NULL, (cudaError_t)cuMemsetD8Async(DPTR(devPtr), (unsigned char)value, count, stream));
#undef API
}

cudaError_t CUDARTAPI cudaLaunchKernel(const void *func, dim3 gridDim, dim3 blockDim, void **args, size_t sharedMem,
                                       cudaStream_t stream)
{
#define API RT_PICK(cudaLaunchKernel_v7000, cudaLaunchKernel_ptsz_v7000)
    RT_PARAMS(API) p = {func, gridDim, blockDim, args, sharedMem, stream};
    CUfunction f = (CUfunction)(uintptr_t)func;
    RT_CALL(API, &p, cudasim_kernel_name(f),
            (cudaError_t)cuLaunchKernel(f, gridDim.x, gridDim.y, gridDim.z, blockDim.x, blockDim.y, blockDim.z,
                                        (unsigned)sharedMem, stream, args, NULL));
#undef API
}

static cudaError_t launch_ex(const cudaLaunchConfig_t *c, const void *func, void **args)
{
    if (!c)
        return cudaErrorInvalidValue;
    CUlaunchConfig dc = {
        .gridDimX = c->gridDim.x,
        .gridDimY = c->gridDim.y,
        .gridDimZ = c->gridDim.z,
        .blockDimX = c->blockDim.x,
        .blockDimY = c->blockDim.y,
        .blockDimZ = c->blockDim.z,
        .sharedMemBytes = (unsigned)c->dynamicSmemBytes,
        .hStream = c->stream,
    };
    return (cudaError_t)cuLaunchKernelEx(&dc, (CUfunction)(uintptr_t)func, args, NULL);
}

cudaError_t CUDARTAPI cudaLaunchKernelExC(const cudaLaunchConfig_t *config, const void *func, void **args)
{
#define API RT_PICK(cudaLaunchKernelExC_v11060, cudaLaunchKernelExC_ptsz_v11060)
    RT_PARAMS(API) p = {config, func, args};
    RT_CALL(API, &p, cudasim_kernel_name((CUfunction)(uintptr_t)func), launch_ex(config, func, args));
#undef API
}

cudaError_t CUDARTAPI cudaLaunchHostFunc(cudaStream_t stream, cudaHostFn_t fn, void *userData)
{
#define API RT_PICK(cudaLaunchHostFunc_v10000, cudaLaunchHostFunc_ptsz_v10000)
    RT_PARAMS(API) p = {stream, fn, userData};
    RT_CALL(API, &p, NULL, (cudaError_t)cuLaunchHostFunc(stream, fn, userData));
#undef API
}

cudaError_t CUDARTAPI cudaStreamSynchronize(cudaStream_t stream)
{
#define API RT_PICK(cudaStreamSynchronize_v3020, cudaStreamSynchronize_ptsz_v7000)
    RT_PARAMS(API) p = {stream};
    RT_CALL(API, &p, NULL, (cudaError_t)cuStreamSynchronize(stream));
#undef API
}

cudaError_t CUDARTAPI cudaStreamQuery(cudaStream_t stream)
{
#define API RT_PICK(cudaStreamQuery_v3020, cudaStreamQuery_ptsz_v7000)
    RT_PARAMS(API) p = {stream};
    RT_CALL(API, &p, NULL, (cudaError_t)cuStreamQuery(stream));
#undef API
}

cudaError_t CUDARTAPI cudaStreamGetId(cudaStream_t hStream, unsigned long long *streamId)
{
#define API RT_PICK(cudaStreamGetId_v12000, cudaStreamGetId_ptsz_v12000)
    RT_PARAMS(API) p = {hStream, streamId};
    RT_CALL(API, &p, NULL, (cudaError_t)cuStreamGetId(hStream, streamId));
#undef API
}

cudaError_t CUDARTAPI cudaStreamGetFlags(cudaStream_t hStream, unsigned int *flags)
{
#define API RT_PICK(cudaStreamGetFlags_v5050, cudaStreamGetFlags_ptsz_v7000)
    RT_PARAMS(API) p = {hStream, flags};
    RT_CALL(API, &p, NULL, (cudaError_t)cuStreamGetFlags(hStream, flags));
#undef API
}

cudaError_t CUDARTAPI cudaEventRecord(cudaEvent_t event, cudaStream_t stream)
{
#define API RT_PICK(cudaEventRecord_v3020, cudaEventRecord_ptsz_v7000)
    RT_PARAMS(API) p = {event, stream};
    RT_CALL(API, &p, NULL, (cudaError_t)cuEventRecord(event, stream));
#undef API
}

cudaError_t CUDARTAPI cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int flags)
{
#define API RT_PICK(cudaStreamWaitEvent_v3020, cudaStreamWaitEvent_ptsz_v7000)
    RT_PARAMS(API) p = {stream, event, flags};
    RT_CALL(API, &p, NULL, (cudaError_t)cuStreamWaitEvent(stream, event, flags));
#undef API
}
