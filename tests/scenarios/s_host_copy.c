/* Scenario host_copy: the producer computes on the device and copies the result into pinned
 * host memory with an asynchronous device-to-host copy, then exports the host tensor
 * (kDLCUDAHost); the consumer reads it on the host right after import. Racy: the copy may still
 * be in flight; correct: the producer synchronizes its stream before the export. */
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
    if (!racy) {
        scen_release(mx_stream());
        mx_sync();
    }
    DLManagedTensor *t;
    void *h;
    if (MXNDArrayToDLPack(host, &t) || TVMArrayFromDLPack(t, &h))
        return 2;
    float seen[N];
    for (int i = 0; i < N; i++)
        seen[i] = tvm_host_get(h, i);
    scen_settle();
    scen_release(mx_stream());
    scen_verdict(seen, N, 42);
    tvm_free(h);
    mx_free(host);
    mx_free(dev);
    return 0;
}
