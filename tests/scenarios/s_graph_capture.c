/* Scenario graph_capture: the consumer captures its read of the tensor into a CUDA graph on its
 * own stream (relaxed mode: the read allocates its pinned result buffer while capturing) and
 * launches the graph on that stream. Racy: nothing orders the launch after the producer's write;
 * correct: the consumer waits on an event recorded after the write before it launches the graph
 * (the usual pattern: a graph captured once, its inputs ordered at each launch). */
#include "fakefw.h"
#include "scen.h"
#include "scen_backend.h"

#define N 4

int main(int argc, char **argv)
{
    int racy = scen_racy(argc, argv);
    mx_init(FW_NON_BLOCKING);
    tvm_init(FW_NON_BLOCKING);
    mx_array *a = scen_held_write(N);
    DLManagedTensor *t;
    void *h;
    if (MXNDArrayToDLPack(a, &t) || TVMArrayFromDLPack(t, &h))
        return 2;
    mx_free(a);
    cudaStream_t s = tvm_stream();
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    if (cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed) != cudaSuccess)
        return 2;
    tvm_read(h);
    if (cudaStreamEndCapture(s, &graph) != cudaSuccess || cudaGraphInstantiate(&exec, graph, 0) != cudaSuccess)
        return 2;
    if (!racy)
        scen_order(mx_stream(), s);
    if (cudaGraphLaunch(exec, s) != cudaSuccess)
        return 2;
    scen_finish(h, 1, N);
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
    return 0;
}
