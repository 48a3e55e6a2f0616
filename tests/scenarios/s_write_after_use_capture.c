/* Scenario write_after_use_capture: write_after_use with the producer's recycling captured into a
 * CUDA graph: the producer captures the clearing of the buffer on its stream and launches the
 * graph while the consumer's copy of the tensor is pending. No wait may be injected into the
 * capture: fix orders the graph's launch after the copy. Correct twin: the producer's stream waits
 * for the copy before the launch. */
#include "fakefw.h"
#include "scen.h"
#include "scen_backend.h"

#define N 4

int main(int argc, char **argv)
{
    int racy = scen_racy(argc, argv);
    DLManagedTensor *t;
    void *h;
    mx_array *a = scen_synced_handover(N, &t, &h);
    float *copy;
    if (cudaMalloc((void **)&copy, N * sizeof(float)))
        return 2;
    scen_hold(tvm_stream());
    if (cudaMemcpyAsync(copy, t->dl_tensor.data, N * sizeof(float), cudaMemcpyDeviceToDevice, tvm_stream()))
        return 2;
    cudaStream_t s = mx_stream();
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    if (cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed) != cudaSuccess ||
        cudaMemsetAsync(mx_data(a), 0, N * sizeof(float), s) != cudaSuccess || /* the buffer recycled */
        cudaStreamEndCapture(s, &graph) != cudaSuccess || cudaGraphInstantiate(&exec, graph, 0) != cudaSuccess)
        return 2;
    if (!racy)
        scen_order(tvm_stream(), s);
    if (cudaGraphLaunch(exec, s) != cudaSuccess)
        return 2;
    scen_settle();
    scen_release(tvm_stream());
    float seen[N];
    if (cudaStreamSynchronize(tvm_stream()) || cudaMemcpy(seen, copy, sizeof seen, cudaMemcpyDeviceToHost))
        return 2;
    scen_verdict(seen, N, SCEN_VALUE);
    mx_sync();
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
    tvm_free(h);
    mx_free(a);
    cudaFree(copy);
    return 0;
}
