/* Scenario release_reuse: the consumer starts a read of the tensor on its stream and releases
 * the tensor at once; the producer's caching allocator hands the same memory to a new array,
 * which the producer overwrites on its own stream while the consumer's read is still pending.
 * Correct twin: the consumer synchronizes its stream before releasing. */
#include "fakefw.h"
#include "scen.h"
#include "scen_backend.h"

#define N 4

int main(int argc, char **argv)
{
    int racy = scen_racy(argc, argv);
    mx_init(FW_NON_BLOCKING);
    tvm_init(FW_NON_BLOCKING);
    mx_array *a = mx_empty(N, kDLCUDA);
    mx_fill(a, 42);
    mx_sync();
    DLManagedTensor *t;
    void *h;
    if (MXNDArrayToDLPack(a, &t) || TVMArrayFromDLPack(t, &h))
        return 2;
    mx_free(a);
    scen_hold(tvm_stream());
    tvm_read(h);
    if (!racy) {
        scen_release(tvm_stream());
        tvm_sync();
    }
    tvm_release(h);
    mx_array *b = mx_empty(N, kDLCUDA); /* the same block, from the cache */
    mx_fill(b, 7);
    scen_settle();
    scen_release(tvm_stream());
    float seen[N];
    for (int i = 0; i < N; i++)
        seen[i] = tvm_result(h, 0, i);
    scen_verdict(seen, N, 42);
    tvm_free(h);
    mx_sync();
    mx_free(b);
    return 0;
}
