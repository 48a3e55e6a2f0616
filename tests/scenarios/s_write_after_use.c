/* Scenario write_after_use: a data loader recycles its output buffer while the consumer's
 * asynchronous copy of the exported tensor is still pending (as DALI's plugins were seen to): the
 * producer clears the buffer on its own stream, and the copy, which the host enqueued first, reads
 * the cleared data. Correct twin: the producer's stream waits for the consumer's copy before the
 * buffer is reused. */
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
    if (!racy)
        scen_order(tvm_stream(), mx_stream());
    if (cudaMemsetAsync(mx_data(a), 0, N * sizeof(float), mx_stream())) /* the buffer recycled */
        return 2;
    scen_settle();
    scen_release(tvm_stream());
    float seen[N];
    if (cudaStreamSynchronize(tvm_stream()) || cudaMemcpy(seen, copy, sizeof seen, cudaMemcpyDeviceToHost))
        return 2;
    scen_verdict(seen, N, SCEN_VALUE);
    mx_sync();
    tvm_free(h);
    mx_free(a);
    cudaFree(copy);
    return 0;
}
