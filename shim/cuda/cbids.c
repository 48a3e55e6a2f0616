/* The CUPTI callback ids the observer enables, one by one, and their classes (see cbids.h).
 *
 * Driver ids: every call the decoders handle, plus the calls that invalidate cached state
 * (module and library unloads, context destruction and reset). Runtime ids: the runtime calls
 * whose names annotate the driver operations beneath them. One list of driver ids makes both the
 * enable table and the class table. */
#include "cbids.h"

#define D(name) CUPTI_DRIVER_TRACE_CBID_##name
#define R(name) CUPTI_RUNTIME_TRACE_CBID_##name

/* Every driver id the observer enables, with its class. STREAM_WORK: copies with "Async" in their
 * name, every set (a synchronous set waits for nothing the policy models), graph launches. */
#define DRIVER_IDS(X)                               \
    X(cuLaunch, LAUNCH)                             \
    X(cuLaunchCooperativeKernel, LAUNCH)            \
    X(cuLaunchCooperativeKernelMultiDevice, LAUNCH) \
    X(cuLaunchCooperativeKernel_ptsz, LAUNCH)       \
    X(cuLaunchGrid, LAUNCH)                         \
    X(cuLaunchGridAsync, LAUNCH)                    \
    X(cuLaunchKernel, LAUNCH)                       \
    X(cuLaunchKernelEx, LAUNCH)                     \
    X(cuLaunchKernelEx_ptsz, LAUNCH)                \
    X(cuLaunchKernel_ptsz, LAUNCH)                  \
    X(cuCtxSynchronize, ALWAYS)                     \
    X(cuCtxSynchronize_v2, ALWAYS)                  \
    X(cuEventCreate, ALWAYS)                        \
    X(cuEventDestroy, ALWAYS)                       \
    X(cuEventDestroy_v2, ALWAYS)                    \
    X(cuEventQuery, ALWAYS)                         \
    X(cuEventRecord, ALWAYS)                        \
    X(cuEventRecordWithFlags, ALWAYS)               \
    X(cuEventRecordWithFlags_ptsz, ALWAYS)          \
    X(cuEventRecord_ptsz, ALWAYS)                   \
    X(cuEventSynchronize, ALWAYS)                   \
    X(cuGraphLaunch, STREAM_WORK)                   \
    X(cuGraphLaunch_ptsz, STREAM_WORK)              \
    X(cuStreamBeginCapture, ALWAYS)                 \
    X(cuStreamBeginCapture_ptsz, ALWAYS)            \
    X(cuStreamBeginCapture_v2, ALWAYS)              \
    X(cuStreamBeginCapture_v2_ptsz, ALWAYS)         \
    X(cuStreamBeginCaptureToGraph, ALWAYS)          \
    X(cuStreamBeginCaptureToGraph_ptsz, ALWAYS)     \
    X(cuStreamEndCapture, ALWAYS)                   \
    X(cuStreamEndCapture_ptsz, ALWAYS)              \
    X(cuGreenCtxStreamCreate, ALWAYS)               \
    X(cuLaunchHostFunc, ALWAYS)                     \
    X(cuLaunchHostFunc_ptsz, ALWAYS)                \
    X(cuMemFreeAsync, ALWAYS)                       \
    X(cuMemFreeAsync_ptsz, ALWAYS)                  \
    X(cuMemFreeHost, ALWAYS)                        \
    X(cuMemFree_v2, ALWAYS)                         \
    X(cuMemcpy, ALWAYS)                             \
    X(cuMemcpy2DAsync_v2, STREAM_WORK)              \
    X(cuMemcpy2DAsync_v2_ptsz, STREAM_WORK)         \
    X(cuMemcpy2DUnaligned_v2, ALWAYS)               \
    X(cuMemcpy2DUnaligned_v2_ptds, ALWAYS)          \
    X(cuMemcpy2D_v2, ALWAYS)                        \
    X(cuMemcpy2D_v2_ptds, ALWAYS)                   \
    X(cuMemcpy3DAsync_v2, STREAM_WORK)              \
    X(cuMemcpy3DAsync_v2_ptsz, STREAM_WORK)         \
    X(cuMemcpy3DBatchAsync, STREAM_WORK)            \
    X(cuMemcpy3DBatchAsync_ptsz, STREAM_WORK)       \
    X(cuMemcpy3DBatchAsync_v2, STREAM_WORK)         \
    X(cuMemcpy3DBatchAsync_v2_ptsz, STREAM_WORK)    \
    X(cuMemcpy3DPeer, ALWAYS)                       \
    X(cuMemcpy3DPeerAsync, STREAM_WORK)             \
    X(cuMemcpy3DPeerAsync_ptsz, STREAM_WORK)        \
    X(cuMemcpy3DPeer_ptds, ALWAYS)                  \
    X(cuMemcpy3D_v2, ALWAYS)                        \
    X(cuMemcpy3D_v2_ptds, ALWAYS)                   \
    X(cuMemcpyAsync, STREAM_WORK)                   \
    X(cuMemcpyAsync_ptsz, STREAM_WORK)              \
    X(cuMemcpyAtoA_v2, ALWAYS)                      \
    X(cuMemcpyAtoA_v2_ptds, ALWAYS)                 \
    X(cuMemcpyAtoD_v2, ALWAYS)                      \
    X(cuMemcpyAtoD_v2_ptds, ALWAYS)                 \
    X(cuMemcpyAtoHAsync_v2, STREAM_WORK)            \
    X(cuMemcpyAtoHAsync_v2_ptsz, STREAM_WORK)       \
    X(cuMemcpyAtoH_v2, ALWAYS)                      \
    X(cuMemcpyAtoH_v2_ptds, ALWAYS)                 \
    X(cuMemcpyBatchAsync, STREAM_WORK)              \
    X(cuMemcpyBatchAsync_ptsz, STREAM_WORK)         \
    X(cuMemcpyBatchAsync_v2, STREAM_WORK)           \
    X(cuMemcpyBatchAsync_v2_ptsz, STREAM_WORK)      \
    X(cuMemcpyDtoA_v2, ALWAYS)                      \
    X(cuMemcpyDtoA_v2_ptds, ALWAYS)                 \
    X(cuMemcpyDtoDAsync_v2, STREAM_WORK)            \
    X(cuMemcpyDtoDAsync_v2_ptsz, STREAM_WORK)       \
    X(cuMemcpyDtoD_v2, ALWAYS)                      \
    X(cuMemcpyDtoD_v2_ptds, ALWAYS)                 \
    X(cuMemcpyDtoHAsync_v2, STREAM_WORK)            \
    X(cuMemcpyDtoHAsync_v2_ptsz, STREAM_WORK)       \
    X(cuMemcpyDtoH_v2, ALWAYS)                      \
    X(cuMemcpyDtoH_v2_ptds, ALWAYS)                 \
    X(cuMemcpyHtoAAsync_v2, STREAM_WORK)            \
    X(cuMemcpyHtoAAsync_v2_ptsz, STREAM_WORK)       \
    X(cuMemcpyHtoA_v2, ALWAYS)                      \
    X(cuMemcpyHtoA_v2_ptds, ALWAYS)                 \
    X(cuMemcpyHtoDAsync_v2, STREAM_WORK)            \
    X(cuMemcpyHtoDAsync_v2_ptsz, STREAM_WORK)       \
    X(cuMemcpyHtoD_v2, ALWAYS)                      \
    X(cuMemcpyHtoD_v2_ptds, ALWAYS)                 \
    X(cuMemcpyPeer, ALWAYS)                         \
    X(cuMemcpyPeerAsync, STREAM_WORK)               \
    X(cuMemcpyPeerAsync_ptsz, STREAM_WORK)          \
    X(cuMemcpyPeer_ptds, ALWAYS)                    \
    X(cuMemcpy_ptds, ALWAYS)                        \
    X(cuMemsetD16Async, STREAM_WORK)                \
    X(cuMemsetD16Async_ptsz, STREAM_WORK)           \
    X(cuMemsetD16_v2, STREAM_WORK)                  \
    X(cuMemsetD16_v2_ptds, STREAM_WORK)             \
    X(cuMemsetD2D16Async, STREAM_WORK)              \
    X(cuMemsetD2D16Async_ptsz, STREAM_WORK)         \
    X(cuMemsetD2D16_v2, STREAM_WORK)                \
    X(cuMemsetD2D16_v2_ptds, STREAM_WORK)           \
    X(cuMemsetD2D32Async, STREAM_WORK)              \
    X(cuMemsetD2D32Async_ptsz, STREAM_WORK)         \
    X(cuMemsetD2D32_v2, STREAM_WORK)                \
    X(cuMemsetD2D32_v2_ptds, STREAM_WORK)           \
    X(cuMemsetD2D8Async, STREAM_WORK)               \
    X(cuMemsetD2D8Async_ptsz, STREAM_WORK)          \
    X(cuMemsetD2D8_v2, STREAM_WORK)                 \
    X(cuMemsetD2D8_v2_ptds, STREAM_WORK)            \
    X(cuMemsetD32Async, STREAM_WORK)                \
    X(cuMemsetD32Async_ptsz, STREAM_WORK)           \
    X(cuMemsetD32_v2, STREAM_WORK)                  \
    X(cuMemsetD32_v2_ptds, STREAM_WORK)             \
    X(cuMemsetD8Async, STREAM_WORK)                 \
    X(cuMemsetD8Async_ptsz, STREAM_WORK)            \
    X(cuMemsetD8_v2, STREAM_WORK)                   \
    X(cuMemsetD8_v2_ptds, STREAM_WORK)              \
    X(cuStreamAddCallback, ALWAYS)                  \
    X(cuStreamAddCallback_ptsz, ALWAYS)             \
    X(cuStreamCreate, ALWAYS)                       \
    X(cuStreamCreateWithPriority, ALWAYS)           \
    X(cuStreamDestroy, ALWAYS)                      \
    X(cuStreamDestroy_v2, ALWAYS)                   \
    X(cuStreamQuery, ALWAYS)                        \
    X(cuStreamQuery_ptsz, ALWAYS)                   \
    X(cuStreamSynchronize, ALWAYS)                  \
    X(cuStreamSynchronize_ptsz, ALWAYS)             \
    X(cuStreamWaitEvent, ALWAYS)                    \
    X(cuStreamWaitEvent_ptsz, ALWAYS)               \
    X(cuModuleUnload, INVALIDATION)                 \
    X(cuLibraryUnload, INVALIDATION)                \
    X(cuCtxDestroy_v2, INVALIDATION)                \
    X(cuDevicePrimaryCtxReset_v2, INVALIDATION)     \
    X(cuDevicePrimaryCtxRelease_v2, INVALIDATION)

#define ROW(name, cls) {D(name), DLS_CBID_##cls == DLS_CBID_LAUNCH},
static const dls_cuda_cbid g_driver[] = {DRIVER_IDS(ROW)};
#undef ROW

#define CLASS(name, cls) [D(name)] = DLS_CBID_##cls,
const unsigned char dls_cuda_cbid_classes[CUPTI_DRIVER_TRACE_CBID_SIZE] = {DRIVER_IDS(CLASS)};
#undef CLASS

static const dls_cuda_cbid g_runtime[] = {
    {R(cudaLaunch_v3020), 1},
    {R(cudaLaunchKernel_v7000), 1},
    {R(cudaLaunch_ptsz_v7000), 1},
    {R(cudaLaunchKernel_ptsz_v7000), 1},
    {R(cudaLaunchCooperativeKernel_v9000), 1},
    {R(cudaLaunchCooperativeKernel_ptsz_v9000), 1},
    {R(cudaLaunchCooperativeKernelMultiDevice_v9000), 1},
    {R(cudaLaunchKernelExC_v11060), 1},
    {R(cudaLaunchKernelExC_ptsz_v11060), 1},
    {R(__cudaLaunchKernel_v13000), 1},
    {R(__cudaLaunchKernel_ptsz_v13000), 1},
    {R(cudaFree_v3020), 0},
    {R(cudaFreeHost_v3020), 0},
    {R(cudaMemcpy_v3020), 0},
    {R(cudaMemcpy2D_v3020), 0},
    {R(cudaMemcpyToArray_v3020), 0},
    {R(cudaMemcpy2DToArray_v3020), 0},
    {R(cudaMemcpy2DFromArray_v3020), 0},
    {R(cudaMemcpyArrayToArray_v3020), 0},
    {R(cudaMemcpy2DArrayToArray_v3020), 0},
    {R(cudaMemcpyToSymbol_v3020), 0},
    {R(cudaMemcpyFromSymbol_v3020), 0},
    {R(cudaMemcpyAsync_v3020), 0},
    {R(cudaMemcpyToArrayAsync_v3020), 0},
    {R(cudaMemcpy2DAsync_v3020), 0},
    {R(cudaMemcpy2DToArrayAsync_v3020), 0},
    {R(cudaMemcpy2DFromArrayAsync_v3020), 0},
    {R(cudaMemcpyToSymbolAsync_v3020), 0},
    {R(cudaMemcpyFromSymbolAsync_v3020), 0},
    {R(cudaMemset_v3020), 0},
    {R(cudaMemset2D_v3020), 0},
    {R(cudaMemsetAsync_v3020), 0},
    {R(cudaMemset2DAsync_v3020), 0},
    {R(cudaThreadSynchronize_v3020), 0},
    {R(cudaStreamCreate_v3020), 0},
    {R(cudaStreamDestroy_v3020), 0},
    {R(cudaStreamSynchronize_v3020), 0},
    {R(cudaStreamQuery_v3020), 0},
    {R(cudaEventCreate_v3020), 0},
    {R(cudaEventCreateWithFlags_v3020), 0},
    {R(cudaEventRecord_v3020), 0},
    {R(cudaEventDestroy_v3020), 0},
    {R(cudaEventSynchronize_v3020), 0},
    {R(cudaEventQuery_v3020), 0},
    {R(cudaMemset3D_v3020), 0},
    {R(cudaMemset3DAsync_v3020), 0},
    {R(cudaMemcpy3D_v3020), 0},
    {R(cudaMemcpy3DAsync_v3020), 0},
    {R(cudaStreamWaitEvent_v3020), 0},
    {R(cudaMemcpyPeer_v4000), 0},
    {R(cudaMemcpyPeerAsync_v4000), 0},
    {R(cudaMemcpy3DPeer_v4000), 0},
    {R(cudaMemcpy3DPeerAsync_v4000), 0},
    {R(cudaDeviceSynchronize_v3020), 0},
    {R(cudaStreamAddCallback_v5000), 0},
    {R(cudaStreamCreateWithFlags_v5000), 0},
    {R(cudaStreamDestroy_v5050), 0},
    {R(cudaStreamCreateWithPriority_v5050), 0},
    {R(cudaMemcpy_ptds_v7000), 0},
    {R(cudaMemcpy2D_ptds_v7000), 0},
    {R(cudaMemcpyToArray_ptds_v7000), 0},
    {R(cudaMemcpy2DToArray_ptds_v7000), 0},
    {R(cudaMemcpy2DFromArray_ptds_v7000), 0},
    {R(cudaMemcpyArrayToArray_ptds_v7000), 0},
    {R(cudaMemcpy2DArrayToArray_ptds_v7000), 0},
    {R(cudaMemcpyToSymbol_ptds_v7000), 0},
    {R(cudaMemcpyFromSymbol_ptds_v7000), 0},
    {R(cudaMemcpyAsync_ptsz_v7000), 0},
    {R(cudaMemcpyToArrayAsync_ptsz_v7000), 0},
    {R(cudaMemcpy2DAsync_ptsz_v7000), 0},
    {R(cudaMemcpy2DToArrayAsync_ptsz_v7000), 0},
    {R(cudaMemcpy2DFromArrayAsync_ptsz_v7000), 0},
    {R(cudaMemcpyToSymbolAsync_ptsz_v7000), 0},
    {R(cudaMemcpyFromSymbolAsync_ptsz_v7000), 0},
    {R(cudaMemset_ptds_v7000), 0},
    {R(cudaMemset2D_ptds_v7000), 0},
    {R(cudaMemsetAsync_ptsz_v7000), 0},
    {R(cudaMemset2DAsync_ptsz_v7000), 0},
    {R(cudaStreamSynchronize_ptsz_v7000), 0},
    {R(cudaStreamQuery_ptsz_v7000), 0},
    {R(cudaEventRecord_ptsz_v7000), 0},
    {R(cudaMemset3D_ptds_v7000), 0},
    {R(cudaMemset3DAsync_ptsz_v7000), 0},
    {R(cudaMemcpy3D_ptds_v7000), 0},
    {R(cudaMemcpy3DAsync_ptsz_v7000), 0},
    {R(cudaStreamWaitEvent_ptsz_v7000), 0},
    {R(cudaStreamAddCallback_ptsz_v7000), 0},
    {R(cudaMemcpy3DPeer_ptds_v7000), 0},
    {R(cudaMemcpy3DPeerAsync_ptsz_v7000), 0},
    {R(cudaLaunchHostFunc_v10000), 0},
    {R(cudaLaunchHostFunc_ptsz_v10000), 0},
    {R(cudaGraphLaunch_v10000), 0},
    {R(cudaGraphLaunch_ptsz_v10000), 0},
    {R(cudaStreamBeginCapture_v10000), 0},
    {R(cudaStreamBeginCapture_ptsz_v10000), 0},
    {R(cudaStreamBeginCaptureToGraph_v12030), 0},
    {R(cudaStreamBeginCaptureToGraph_ptsz_v12030), 0},
    {R(cudaStreamEndCapture_v10000), 0},
    {R(cudaStreamEndCapture_ptsz_v10000), 0},
    {R(cudaEventRecordWithFlags_v11010), 0},
    {R(cudaEventRecordWithFlags_ptsz_v11010), 0},
    {R(cudaFreeAsync_v11020), 0},
    {R(cudaFreeAsync_ptsz_v11020), 0},
    {R(cudaMemcpyBatchAsync_v12080), 0},
    {R(cudaMemcpyBatchAsync_ptsz_v12080), 0},
    {R(cudaMemcpy3DBatchAsync_v12080), 0},
    {R(cudaMemcpy3DBatchAsync_ptsz_v12080), 0},
    {R(cudaMemcpyBatchAsync_v13000), 0},
    {R(cudaMemcpyBatchAsync_ptsz_v13000), 0},
    {R(cudaMemcpy3DBatchAsync_v13000), 0},
    {R(cudaMemcpy3DBatchAsync_ptsz_v13000), 0},
};

const dls_cuda_cbid *dls_cuda_driver_cbids(size_t *n)
{
    *n = sizeof g_driver / sizeof g_driver[0];
    return g_driver;
}

const dls_cuda_cbid *dls_cuda_runtime_cbids(size_t *n)
{
    *n = sizeof g_runtime / sizeof g_runtime[0];
    return g_runtime;
}
