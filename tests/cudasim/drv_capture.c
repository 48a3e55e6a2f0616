/* drv_capture.c: the stream-taking capture and graph calls: cuStreamBeginCapture (_v2),
 * cuStreamEndCapture, cuStreamIsCapturing, cuStreamGetCaptureInfo (_v3), cuGraphLaunch.
 *
 * Built twice, like drv_queue.c (the second build gives the _ptsz exports, where stream 0 is the
 * calling thread's per-thread default stream). The semantics are drv_graph.c's. The capture
 * info reports status, id and graph; the dependency and edge outputs are always empty (a
 * single-stream capture's open end is its last node, which the simulator does not expose). */
#include "cudasim.h"
#include "sim.h"

static CUresult begin(CUstream h, CUstreamCaptureMode mode)
{
    struct CUstream_st *s;
    CUresult r = dls_sim_stream_resolve(h, SIM_PTDS, &s);
    return r == CUDA_SUCCESS ? dls_sim_capture_begin(s, mode) : r;
}

CUresult CUDAAPI cuStreamBeginCapture(CUstream hStream, CUstreamCaptureMode mode)
{
    DRV_PARAMS(cuStreamBeginCapture) p = {hStream, mode};
    DRV_CALL(cuStreamBeginCapture, &p, NULL, begin(hStream, mode));
}

static CUresult end(CUstream h, CUgraph *graph)
{
    struct CUstream_st *s;
    CUresult r = dls_sim_stream_resolve(h, SIM_PTDS, &s);
    return r == CUDA_SUCCESS ? dls_sim_capture_end(s, graph) : r;
}

CUresult CUDAAPI cuStreamEndCapture(CUstream hStream, CUgraph *phGraph)
{
    DRV_PARAMS(cuStreamEndCapture) p = {hStream, phGraph};
    DRV_CALL(cuStreamEndCapture, &p, NULL, end(hStream, phGraph));
}

static CUresult info(CUstream h, CUstreamCaptureStatus *st, cuuint64_t *id, CUgraph *graph, const CUgraphNode **deps,
                     const CUgraphEdgeData **edges, size_t *ndeps)
{
    struct CUstream_st *s;
    if (!st)
        return CUDA_ERROR_INVALID_VALUE;
    CUresult r = dls_sim_stream_resolve(h, SIM_PTDS, &s);
    if (r != CUDA_SUCCESS)
        return r;
    dls_sim_capture_status(s, st, id, graph);
    if (deps)
        *deps = NULL;
    if (edges)
        *edges = NULL;
    if (ndeps)
        *ndeps = 0;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuStreamIsCapturing(CUstream hStream, CUstreamCaptureStatus *captureStatus)
{
    DRV_PARAMS(cuStreamIsCapturing) p = {hStream, captureStatus};
    DRV_CALL(cuStreamIsCapturing, &p, NULL, info(hStream, captureStatus, NULL, NULL, NULL, NULL, NULL));
}

CUresult CUDAAPI cuStreamGetCaptureInfo(CUstream hStream, CUstreamCaptureStatus *captureStatus_out, cuuint64_t *id_out,
                                        CUgraph *graph_out, const CUgraphNode **dependencies_out,
                                        const CUgraphEdgeData **edgeData_out, size_t *numDependencies_out)
{
    DRV_PARAMS(cuStreamGetCaptureInfo)
    p = {hStream, captureStatus_out, id_out, graph_out, dependencies_out, edgeData_out, numDependencies_out};
    DRV_CALL(cuStreamGetCaptureInfo, &p, NULL,
             info(hStream, captureStatus_out, id_out, graph_out, dependencies_out, edgeData_out, numDependencies_out));
}

static CUresult graph_launch(CUgraphExec x, CUstream h)
{
    struct CUstream_st *s;
    CUresult r = dls_sim_stream_resolve(h, SIM_PTDS, &s);
    return r == CUDA_SUCCESS ? dls_sim_graph_launch(x, s) : r;
}

CUresult CUDAAPI cuGraphLaunch(CUgraphExec hGraphExec, CUstream hStream)
{
    DRV_PARAMS(cuGraphLaunch) p = {hGraphExec, hStream};
    DRV_CALL(cuGraphLaunch, &p, NULL, graph_launch(hGraphExec, hStream));
}

const dls_sim_proc SIM_TABLE(dls_sim_procs_capture)[] = {
    SIM_PROC(cuStreamBeginCapture),   SIM_PROC(cuStreamEndCapture), SIM_PROC(cuStreamIsCapturing),
    SIM_PROC(cuStreamGetCaptureInfo), SIM_PROC(cuGraphLaunch),      {NULL, NULL},
};
