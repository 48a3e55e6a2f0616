/* Scenario write_after_use_devices: write_after_use across two devices: the producer's tensor
 * is on device 0, the consumer reads it (a peer read) on its stream of device 1, and the producer
 * clears the buffer on its own stream while that read is pending. Correct twin: the producer's
 * stream waits for the consumer's read (an event recorded on device 1). */
#include "fakefw.h"
#include "scen.h"
#include "scen_backend.h"

#define N 4

int main(int argc, char **argv)
{
    int racy = scen_racy(argc, argv);
    scen_devices(2);
    mx_init(FW_NON_BLOCKING);
    tvm_init(FW_NON_BLOCKING);
    mx_array *a = mx_empty(N, kDLCUDA);
    mx_fill(a, SCEN_VALUE);
    mx_sync();
    DLManagedTensor *t;
    void *h;
    if (MXNDArrayToDLPack(a, &t) || cudaSetDevice(1) || TVMArrayFromDLPack(t, &h))
        return 2;
    scen_hold(tvm_stream());
    tvm_read(h);
    cudaStream_t consumer = tvm_stream();
    if (cudaSetDevice(0))
        return 2;
    if (!racy)
        scen_order_across(1, consumer, mx_stream());
    if (cudaMemsetAsync(mx_data(a), 0, N * sizeof(float), mx_stream())) /* the buffer recycled */
        return 2;
    scen_settle();
    scen_release(consumer);
    float seen[N];
    for (int i = 0; i < N; i++)
        seen[i] = tvm_result(h, 0, i);
    scen_verdict(seen, N, SCEN_VALUE);
    mx_sync();
    tvm_free(h);
    mx_free(a);
    return 0;
}
