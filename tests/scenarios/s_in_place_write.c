/* Scenario in_place_write: the consumer writes the imported tensor in place on its own stream (a
 * copy into it) while the producer goes on reading its own array on its stream: the producer's
 * read, which the host enqueued after the write, reads the old data. Correct twin: the producer's
 * stream waits for the consumer's write. */
#include "fakefw.h"
#include "scen.h"
#include "scen_backend.h"

#define N 4

int main(int argc, char **argv)
{
    int racy = scen_racy(argc, argv);
    mx_init(FW_NON_BLOCKING);
    tvm_init(FW_NON_BLOCKING);
    mx_array *a = mx_empty(N, kDLCUDA), *src = mx_empty(N, kDLCUDA);
    mx_fill(a, 0);
    mx_fill(src, SCEN_VALUE);
    mx_sync();
    DLManagedTensor *t;
    void *h;
    if (MXNDArrayToDLPack(a, &t) || TVMArrayFromDLPack(t, &h))
        return 2;
    scen_hold(tvm_stream());
    if (cudaMemcpyAsync(t->dl_tensor.data, mx_data(src), N * sizeof(float), cudaMemcpyDeviceToDevice, tvm_stream()))
        return 2;
    if (!racy)
        scen_order(tvm_stream(), mx_stream());
    mx_read(a); /* the producer reads its own array */
    scen_settle();
    scen_release(tvm_stream());
    float seen[N];
    for (int i = 0; i < N; i++)
        seen[i] = mx_result(a, i);
    scen_verdict(seen, N, SCEN_VALUE);
    tvm_sync();
    tvm_free(h);
    mx_free(a);
    mx_free(src);
    return 0;
}
