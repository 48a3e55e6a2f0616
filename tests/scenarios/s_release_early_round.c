/* Scenario release_early_round: release_early when the memory comes round again through a new
 * export: the consumer calls the deleter of the first tensor and then launches its read; the
 * producer's allocator hands the block to a new array, which the producer fills and exports to
 * the consumer again while that read is pending. Correct twin: the consumer releases the first
 * tensor once its read is done. */
#include "fakefw.h"
#include "scen.h"
#include "scen_backend.h"

#define N 4

int main(int argc, char **argv)
{
    int racy = scen_racy(argc, argv);
    DLManagedTensor *t, *t2;
    void *h, *h2;
    mx_array *a = scen_synced_handover(N, &t, &h);
    float *seen;
    if (cudaMallocHost((void **)&seen, N * sizeof(float)))
        return 2;
    const float *data = t->dl_tensor.data;
    mx_free(a);
    scen_hold(tvm_stream());
    if (racy)
        tvm_release(h); /* the deleter first */
    scen_read(tvm_stream(), data, seen, N);
    if (!racy) {
        scen_release(tvm_stream());
        tvm_sync();
        tvm_release(h);
    }
    mx_array *c = mx_empty(N, kDLCUDA); /* a's block, from the cache */
    mx_fill(c, 7);
    if (MXNDArrayToDLPack(c, &t2) || TVMArrayFromDLPack(t2, &h2)) /* and round again */
        return 2;
    scen_settle();
    scen_release(tvm_stream());
    if (cudaStreamSynchronize(tvm_stream()))
        return 2;
    scen_verdict(seen, N, SCEN_VALUE);
    tvm_free(h);
    tvm_free(h2);
    mx_sync();
    mx_free(c);
    cudaFreeHost(seen);
    return 0;
}
