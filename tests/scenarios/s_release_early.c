/* Scenario release_early: the consumer calls the DLPack deleter and only then launches the kernel
 * that reads the tensor (as cuTile was seen to); the producer's caching allocator hands the memory
 * to a new array, which the producer overwrites on its own stream while that read is pending.
 * Correct twin: the consumer releases the tensor once its read is done. */
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
    float *seen;
    if (cudaMallocHost((void **)&seen, N * sizeof(float)))
        return 2;
    const float *data = t->dl_tensor.data;
    mx_free(a);
    scen_hold(tvm_stream());
    if (racy)
        tvm_release(h);                     /* the deleter first */
    scen_read(tvm_stream(), data, seen, N); /* the consumer's kernel, with the pointer it kept */
    if (!racy) {
        scen_release(tvm_stream());
        tvm_sync();
        tvm_release(h);
    }
    mx_array *c = mx_empty(N, kDLCUDA); /* a's block, from the cache */
    mx_fill(c, 7);
    scen_settle();
    scen_release(tvm_stream());
    if (cudaStreamSynchronize(tvm_stream()))
        return 2;
    scen_verdict(seen, N, SCEN_VALUE);
    tvm_free(h);
    mx_sync();
    mx_free(c);
    cudaFreeHost(seen);
    return 0;
}
