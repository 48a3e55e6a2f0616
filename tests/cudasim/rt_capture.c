/* rt_capture.c: the simulated runtime's stream capture and graph calls: cudaStreamBeginCapture,
 * cudaStreamEndCapture, cudaStreamIsCapturing, cudaGraphLaunch (built twice like rt_work.c: the
 * second build gives their _ptsz forms), and, in the first build only, cudaGraphInstantiate,
 * cudaGraphInstantiateWithFlags, cudaGraphExecDestroy, cudaGraphDestroy. Each is the driver call
 * beneath it (semantics in drv_graph.c); capture modes and statuses have the same values in both
 * APIs. */
#include "rt.h"

cudaError_t CUDARTAPI cudaStreamBeginCapture(cudaStream_t stream, enum cudaStreamCaptureMode mode)
{
#define API RT_PICK(cudaStreamBeginCapture_v10000, cudaStreamBeginCapture_ptsz_v10000)
    RT_PARAMS(API) p = {stream, mode};
    RT_CALL(API, &p, NULL, (cudaError_t)cuStreamBeginCapture(stream, (CUstreamCaptureMode)mode));
#undef API
}

cudaError_t CUDARTAPI cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t *pGraph)
{
#define API RT_PICK(cudaStreamEndCapture_v10000, cudaStreamEndCapture_ptsz_v10000)
    RT_PARAMS(API) p = {stream, pGraph};
    RT_CALL(API, &p, NULL, (cudaError_t)cuStreamEndCapture(stream, pGraph));
#undef API
}

cudaError_t CUDARTAPI cudaStreamIsCapturing(cudaStream_t stream, enum cudaStreamCaptureStatus *pCaptureStatus)
{
#define API RT_PICK(cudaStreamIsCapturing_v10000, cudaStreamIsCapturing_ptsz_v10000)
    RT_PARAMS(API) p = {stream, pCaptureStatus};
    RT_CALL(API, &p, NULL, (cudaError_t)cuStreamIsCapturing(stream, (CUstreamCaptureStatus *)pCaptureStatus));
#undef API
}

cudaError_t CUDARTAPI cudaGraphLaunch(cudaGraphExec_t graphExec, cudaStream_t stream)
{
#define API RT_PICK(cudaGraphLaunch_v10000, cudaGraphLaunch_ptsz_v10000)
    RT_PARAMS(API) p = {graphExec, stream};
    RT_CALL(API, &p, NULL, (cudaError_t)cuGraphLaunch(graphExec, stream));
#undef API
}

#ifndef CUDA_API_PER_THREAD_DEFAULT_STREAM
cudaError_t CUDARTAPI cudaGraphInstantiate(cudaGraphExec_t *pGraphExec, cudaGraph_t graph, unsigned long long flags)
{
    RT_PARAMS(cudaGraphInstantiate_v12000) p = {pGraphExec, graph, flags};
    RT_CALL(cudaGraphInstantiate_v12000, &p, NULL, (cudaError_t)cuGraphInstantiateWithFlags(pGraphExec, graph, flags));
}

cudaError_t CUDARTAPI cudaGraphInstantiateWithFlags(cudaGraphExec_t *pGraphExec, cudaGraph_t graph,
                                                    unsigned long long flags)
{
    RT_PARAMS(cudaGraphInstantiateWithFlags_v11040) p = {pGraphExec, graph, flags};
    RT_CALL(cudaGraphInstantiateWithFlags_v11040, &p, NULL,
            (cudaError_t)cuGraphInstantiateWithFlags(pGraphExec, graph, flags));
}

cudaError_t CUDARTAPI cudaGraphExecDestroy(cudaGraphExec_t graphExec)
{
    RT_PARAMS(cudaGraphExecDestroy_v10000) p = {graphExec};
    RT_CALL(cudaGraphExecDestroy_v10000, &p, NULL, (cudaError_t)cuGraphExecDestroy(graphExec));
}

cudaError_t CUDARTAPI cudaGraphDestroy(cudaGraph_t graph)
{
    RT_PARAMS(cudaGraphDestroy_v10000) p = {graph};
    RT_CALL(cudaGraphDestroy_v10000, &p, NULL, (cudaError_t)cuGraphDestroy(graph));
}
#endif
