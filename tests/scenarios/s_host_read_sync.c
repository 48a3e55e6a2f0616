/* Scenario host_read_sync: the producer copies its result into pinned host memory with an
 * asynchronous device-to-host copy and exports the host tensor (kDLCUDAHost) at once; the consumer
 * imports it and synchronizes the device, as numpy code after a from_dlpack might. Racy: it reads
 * on the host first and synchronizes after (the copy may still be in flight when it reads);
 * correct: it synchronizes right after the import, then reads. */
#include "fakefw.h"
#include "scen.h"
#include "scen_backend.h"

#define N 4

int main(int argc, char **argv)
{
    int racy = scen_racy(argc, argv);
    mx_init(FW_NON_BLOCKING);
    tvm_init(FW_NON_BLOCKING);
    mx_array *dev = mx_empty(N, kDLCUDA), *host = mx_empty(N, kDLCUDAHost);
    mx_fill(dev, 0);
    mx_fill(host, 0);
    mx_sync();
    scen_hold(mx_stream());
    mx_fill(dev, 42);
    mx_copy(host, dev);
    DLManagedTensor *t;
    void *h;
    if (MXNDArrayToDLPack(host, &t) || TVMArrayFromDLPack(t, &h))
        return 2;
    if (!racy) {
        scen_release(mx_stream());
        if (cudaDeviceSynchronize() != cudaSuccess)
            return 2;
    }
    float seen[N];
    for (int i = 0; i < N; i++)
        seen[i] = tvm_host_get(h, i);
    if (racy) {
        scen_release(mx_stream());
        if (cudaDeviceSynchronize() != cudaSuccess)
            return 2;
    }
    scen_verdict(seen, N, 42);
    tvm_free(h);
    mx_free(host);
    mx_free(dev);
    return 0;
}
