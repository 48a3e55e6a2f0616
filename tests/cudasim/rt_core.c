/* rt_core.c: the simulated runtime's initialization, devices, errors, memory, streams and events
 * that have no per-thread-stream variant, and kernel parameter info.
 *
 * Models: lazy initialization (cuInit, primary context of the current device made current),
 * cudaSetDevice / cudaGetDevice per host thread, the sticky-free last error of the thread,
 * allocation, peer copies (cudaMemcpyPeer / cudaMemcpyPeerAsync: the driver's peer copies between
 * the devices' primary contexts), stream and event creation with flags, device synchronize,
 * param info, pointer attributes, cudaDeviceReset (the driver's primary context reset). Does not model: device properties, peer access enablement, managed memory, the fatbin
 * registration that maps host stubs to kernels (a simulated kernel's CUfunction is its `func`). */
#include <pthread.h>
#include <string.h>

#include "rt.h"

#define DPTR(p) ((CUdeviceptr)(uintptr_t)(p))

static __thread int tls_device;
static __thread cudaError_t tls_last_error;
static pthread_once_t g_init_once = PTHREAD_ONCE_INIT;
static CUresult g_init_result;

static void init_driver(void)
{
    g_init_result = cuInit(0);
}

static cudaError_t make_current(int dev)
{
    CUcontext ctx;
    CUresult r = cuDevicePrimaryCtxRetain(&ctx, dev);
    if (r == CUDA_SUCCESS)
        r = cuCtxSetCurrent(ctx);
    return (cudaError_t)r;
}

cudaError_t dls_rt_ready(void)
{
    pthread_once(&g_init_once, init_driver);
    if (g_init_result != CUDA_SUCCESS)
        return (cudaError_t)g_init_result;
    CUcontext cur = NULL;
    cuCtxGetCurrent(&cur);
    return cur ? cudaSuccess : make_current(tls_device);
}

cudaError_t dls_rt_record(cudaError_t err)
{
    if (err != cudaSuccess && err != cudaErrorNotReady)
        tls_last_error = err;
    return err;
}

static const struct {
    cudaError_t code;
    const char *name, *text;
} g_errors[] = {
    {cudaSuccess, "cudaSuccess", "no error"},
    {cudaErrorInvalidValue, "cudaErrorInvalidValue", "invalid argument"},
    {cudaErrorMemoryAllocation, "cudaErrorMemoryAllocation", "out of memory"},
    {cudaErrorInitializationError, "cudaErrorInitializationError", "initialization error"},
    {cudaErrorInvalidMemcpyDirection, "cudaErrorInvalidMemcpyDirection", "invalid copy direction for memcpy"},
    {cudaErrorNoDevice, "cudaErrorNoDevice", "no CUDA-capable device is detected"},
    {cudaErrorInvalidDevice, "cudaErrorInvalidDevice", "invalid device ordinal"},
    {cudaErrorDeviceUninitialized, "cudaErrorDeviceUninitialized", "invalid device context"},
    {cudaErrorInvalidResourceHandle, "cudaErrorInvalidResourceHandle", "invalid resource handle"},
    {cudaErrorSymbolNotFound, "cudaErrorSymbolNotFound", "named symbol not found"},
    {cudaErrorNotReady, "cudaErrorNotReady", "device not ready"},
    {cudaErrorIllegalAddress, "cudaErrorIllegalAddress", "an illegal memory access was encountered"},
    {cudaErrorLaunchFailure, "cudaErrorLaunchFailure", "unspecified launch failure"},
    {cudaErrorNotSupported, "cudaErrorNotSupported", "operation not supported"},
    {cudaErrorUnknown, "cudaErrorUnknown", "unknown error"},
};

static const char *error_text(cudaError_t e, int want_text)
{
    for (size_t i = 0; i < sizeof g_errors / sizeof g_errors[0]; i++)
        if (g_errors[i].code == e)
            return want_text ? g_errors[i].text : g_errors[i].name;
    return "unrecognized error code";
}

/* cudaGetErrorName/String and the last-error calls are reported but need no initialization. */
#define RT_REPORT(api, params_ptr, type, expr)                                                                    \
    do {                                                                                                          \
        cudasim_call c_;                                                                                          \
        cudasim_call_enter(&c_, CUPTI_CB_DOMAIN_RUNTIME_API, RT_CAT(CUPTI_RUNTIME_TRACE_CBID_, api), RT_STR(api), \
                           (params_ptr), NULL);                                                                   \
        type r_ = (expr);                                                                                         \
        cudasim_call_exit(&c_, &r_);                                                                              \
        return r_;                                                                                                \
    } while (0)

const char *CUDARTAPI cudaGetErrorName(cudaError_t error)
{
    RT_PARAMS(cudaGetErrorName_v6050) p = {error};
    RT_REPORT(cudaGetErrorName_v6050, &p, const char *, error_text(error, 0));
}

const char *CUDARTAPI cudaGetErrorString(cudaError_t error)
{
    RT_PARAMS(cudaGetErrorString_v3020) p = {error};
    RT_REPORT(cudaGetErrorString_v3020, &p, const char *, error_text(error, 1));
}

static cudaError_t take_last_error(int clear)
{
    cudaError_t e = tls_last_error;
    if (clear)
        tls_last_error = cudaSuccess;
    return e;
}

cudaError_t CUDARTAPI cudaGetLastError(void)
{
    RT_REPORT(cudaGetLastError_v3020, NULL, cudaError_t, take_last_error(1));
}

cudaError_t CUDARTAPI cudaPeekAtLastError(void)
{
    RT_REPORT(cudaPeekAtLastError_v3020, NULL, cudaError_t, take_last_error(0));
}

static cudaError_t int_out(int *out, int value)
{
    if (!out)
        return cudaErrorInvalidValue;
    *out = value;
    return cudaSuccess;
}

cudaError_t CUDARTAPI cudaDriverGetVersion(int *driverVersion)
{
    RT_PARAMS(cudaDriverGetVersion_v3020) p = {driverVersion};
    RT_CALL(cudaDriverGetVersion_v3020, &p, NULL, (cudaError_t)cuDriverGetVersion(driverVersion));
}

cudaError_t CUDARTAPI cudaRuntimeGetVersion(int *runtimeVersion)
{
    RT_PARAMS(cudaRuntimeGetVersion_v3020) p = {runtimeVersion};
    RT_CALL(cudaRuntimeGetVersion_v3020, &p, NULL, int_out(runtimeVersion, CUDART_VERSION));
}

cudaError_t CUDARTAPI cudaGetDeviceCount(int *count)
{
    RT_PARAMS(cudaGetDeviceCount_v3020) p = {count};
    RT_CALL(cudaGetDeviceCount_v3020, &p, NULL, (cudaError_t)cuDeviceGetCount(count));
}

cudaError_t CUDARTAPI cudaGetDevice(int *device)
{
    RT_PARAMS(cudaGetDevice_v3020) p = {device};
    RT_CALL(cudaGetDevice_v3020, &p, NULL, int_out(device, tls_device));
}

static cudaError_t set_device(int dev)
{
    int n = 0;
    cuDeviceGetCount(&n);
    if (dev < 0 || dev >= n)
        return cudaErrorInvalidDevice;
    tls_device = dev;
    return make_current(dev);
}

cudaError_t CUDARTAPI cudaSetDevice(int device)
{
    RT_PARAMS(cudaSetDevice_v3020) p = {device};
    RT_CALL(cudaSetDevice_v3020, &p, NULL, set_device(device));
}

cudaError_t CUDARTAPI cudaDeviceReset(void)
{
    RT_CALL(cudaDeviceReset_v3020, NULL, NULL, (cudaError_t)cuDevicePrimaryCtxReset(tls_device));
}

cudaError_t CUDARTAPI cudaDeviceSynchronize(void)
{
    RT_CALL(cudaDeviceSynchronize_v3020, NULL, NULL, (cudaError_t)cuCtxSynchronize());
}

cudaError_t CUDARTAPI cudaMalloc(void **devPtr, size_t size)
{
    RT_PARAMS(cudaMalloc_v3020) p = {devPtr, size};
    RT_CALL(cudaMalloc_v3020, &p, NULL, (cudaError_t)cuMemAlloc((CUdeviceptr *)devPtr, size));
}

cudaError_t CUDARTAPI cudaFree(void *devPtr)
{
    RT_PARAMS(cudaFree_v3020) p = {devPtr};
    RT_CALL(cudaFree_v3020, &p, NULL, (cudaError_t)cuMemFree((CUdeviceptr)(uintptr_t)devPtr));
}

cudaError_t CUDARTAPI cudaMallocHost(void **ptr, size_t size)
{
    RT_PARAMS(cudaMallocHost_v3020) p = {ptr, size};
    RT_CALL(cudaMallocHost_v3020, &p, NULL, (cudaError_t)cuMemAllocHost(ptr, size));
}

cudaError_t CUDARTAPI cudaFreeHost(void *ptr)
{
    RT_PARAMS(cudaFreeHost_v3020) p = {ptr};
    RT_CALL(cudaFreeHost_v3020, &p, NULL, (cudaError_t)cuMemFreeHost(ptr));
}

/* A peer copy between the primary contexts of two devices, on `stream` (synchronous when
 * `wait`), as the runtime makes it. */
static cudaError_t memcpy_peer(void *dst, int ddev, const void *src, int sdev, size_t n, cudaStream_t stream, int wait)
{
    CUcontext dctx, sctx;
    CUresult r = cuDevicePrimaryCtxRetain(&dctx, ddev);
    if (r != CUDA_SUCCESS)
        return r == CUDA_ERROR_INVALID_DEVICE ? cudaErrorInvalidDevice : (cudaError_t)r;
    r = cuDevicePrimaryCtxRetain(&sctx, sdev);
    if (r == CUDA_SUCCESS) {
        r = wait ? cuMemcpyPeer(DPTR(dst), dctx, DPTR(src), sctx, n)
                 : cuMemcpyPeerAsync(DPTR(dst), dctx, DPTR(src), sctx, n, stream);
        cuDevicePrimaryCtxRelease(sdev);
    } else if (r == CUDA_ERROR_INVALID_DEVICE) {
        r = (CUresult)cudaErrorInvalidDevice;
    }
    cuDevicePrimaryCtxRelease(ddev);
    return (cudaError_t)r;
}

cudaError_t CUDARTAPI cudaMemcpyPeer(void *dst, int dstDevice, const void *src, int srcDevice, size_t count)
{
    RT_PARAMS(cudaMemcpyPeer_v4000) p = {dst, dstDevice, src, srcDevice, count};
    RT_CALL(cudaMemcpyPeer_v4000, &p, NULL, memcpy_peer(dst, dstDevice, src, srcDevice, count, NULL, 1));
}

cudaError_t CUDARTAPI cudaMemcpyPeerAsync(void *dst, int dstDevice, const void *src, int srcDevice, size_t count,
                                          cudaStream_t stream)
{
    RT_PARAMS(cudaMemcpyPeerAsync_v4000) p = {dst, dstDevice, src, srcDevice, count, stream};
    RT_CALL(cudaMemcpyPeerAsync_v4000, &p, NULL, memcpy_peer(dst, dstDevice, src, srcDevice, count, stream, 0));
}

static cudaError_t pointer_attributes(struct cudaPointerAttributes *a, const void *ptr)
{
    if (!a)
        return cudaErrorInvalidValue;
    unsigned int type = 0;
    int dev = -2;
    CUdeviceptr dptr = 0;
    void *hptr = NULL;
    CUpointer_attribute which[] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
                                   CU_POINTER_ATTRIBUTE_DEVICE_POINTER, CU_POINTER_ATTRIBUTE_HOST_POINTER};
    void *data[] = {&type, &dev, &dptr, &hptr};
    CUresult r = cuPointerGetAttributes(4, which, data, (CUdeviceptr)(uintptr_t)ptr);
    if (r != CUDA_SUCCESS)
        return (cudaError_t)r;
    memset(a, 0, sizeof *a);
    a->type = type == CU_MEMORYTYPE_DEVICE ? cudaMemoryTypeDevice
              : type == CU_MEMORYTYPE_HOST ? cudaMemoryTypeHost
                                           : cudaMemoryTypeUnregistered;
    a->device = type ? dev : -2;
    a->devicePointer = (void *)(uintptr_t)dptr;
    a->hostPointer = hptr;
    return cudaSuccess;
}

cudaError_t CUDARTAPI cudaPointerGetAttributes(struct cudaPointerAttributes *attributes, const void *ptr)
{
    RT_PARAMS(cudaPointerGetAttributes_v4000) p = {attributes, ptr};
    RT_CALL(cudaPointerGetAttributes_v4000, &p, NULL, pointer_attributes(attributes, ptr));
}

cudaError_t CUDARTAPI cudaStreamCreate(cudaStream_t *pStream)
{
    RT_PARAMS(cudaStreamCreate_v3020) p = {pStream};
    RT_CALL(cudaStreamCreate_v3020, &p, NULL, (cudaError_t)cuStreamCreate(pStream, 0));
}

cudaError_t CUDARTAPI cudaStreamCreateWithFlags(cudaStream_t *pStream, unsigned int flags)
{
    RT_PARAMS(cudaStreamCreateWithFlags_v5000) p = {pStream, flags};
    RT_CALL(cudaStreamCreateWithFlags_v5000, &p, NULL, (cudaError_t)cuStreamCreate(pStream, flags));
}

cudaError_t CUDARTAPI cudaStreamCreateWithPriority(cudaStream_t *pStream, unsigned int flags, int priority)
{
    RT_PARAMS(cudaStreamCreateWithPriority_v5050) p = {pStream, flags, priority};
    RT_CALL(cudaStreamCreateWithPriority_v5050, &p, NULL,
            (cudaError_t)cuStreamCreateWithPriority(pStream, flags, priority));
}

cudaError_t CUDARTAPI cudaStreamDestroy(cudaStream_t stream)
{
    RT_PARAMS(cudaStreamDestroy_v5050) p = {stream};
    RT_CALL(cudaStreamDestroy_v5050, &p, NULL, (cudaError_t)cuStreamDestroy(stream));
}

cudaError_t CUDARTAPI cudaEventCreate(cudaEvent_t *event)
{
    RT_PARAMS(cudaEventCreate_v3020) p = {event};
    RT_CALL(cudaEventCreate_v3020, &p, NULL, (cudaError_t)cuEventCreate(event, 0));
}

cudaError_t CUDARTAPI cudaEventCreateWithFlags(cudaEvent_t *event, unsigned int flags)
{
    RT_PARAMS(cudaEventCreateWithFlags_v3020) p = {event, flags};
    RT_CALL(cudaEventCreateWithFlags_v3020, &p, NULL, (cudaError_t)cuEventCreate(event, flags));
}

cudaError_t CUDARTAPI cudaEventDestroy(cudaEvent_t event)
{
    RT_PARAMS(cudaEventDestroy_v3020) p = {event};
    RT_CALL(cudaEventDestroy_v3020, &p, NULL, (cudaError_t)cuEventDestroy(event));
}

cudaError_t CUDARTAPI cudaEventSynchronize(cudaEvent_t event)
{
    RT_PARAMS(cudaEventSynchronize_v3020) p = {event};
    RT_CALL(cudaEventSynchronize_v3020, &p, NULL, (cudaError_t)cuEventSynchronize(event));
}

cudaError_t CUDARTAPI cudaEventQuery(cudaEvent_t event)
{
    RT_PARAMS(cudaEventQuery_v3020) p = {event};
    RT_CALL(cudaEventQuery_v3020, &p, NULL, (cudaError_t)cuEventQuery(event));
}

cudaError_t CUDARTAPI cudaFuncGetParamInfo(const void *func, size_t paramIndex, size_t *paramOffset, size_t *paramSize)
{
    RT_PARAMS(cudaFuncGetParamInfo_v12040) p = {func, paramIndex, paramOffset, paramSize};
    RT_CALL(cudaFuncGetParamInfo_v12040, &p, NULL,
            (cudaError_t)cuFuncGetParamInfo((CUfunction)(uintptr_t)func, paramIndex, paramOffset, paramSize));
}
