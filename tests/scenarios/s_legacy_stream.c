/* Scenario legacy_stream: the producer writes on a blocking stream (cudaStreamCreate); the
 * consumer reads on the legacy default stream in the correct twin (implicitly ordered after
 * every blocking stream) and on a non-blocking stream in the racy one (exempt from that rule). */
#include "fakefw.h"
#include "scen.h"
#include "scen_backend.h"

#define N 4

int main(int argc, char **argv)
{
    int racy = scen_racy(argc, argv);
    mx_init(FW_BLOCKING);
    tvm_init(racy ? FW_NON_BLOCKING : FW_LEGACY);
    mx_array *a = mx_empty(N, kDLCUDA);
    mx_fill(a, 0);
    mx_sync();
    scen_hold(mx_stream());
    mx_fill(a, 42);
    DLManagedTensor *t;
    void *h;
    if (MXNDArrayToDLPack(a, &t) || TVMArrayFromDLPack(t, &h))
        return 2;
    mx_free(a);
    tvm_read(h);
    scen_settle();
    scen_release(mx_stream());
    float seen[N];
    for (int i = 0; i < N; i++)
        seen[i] = tvm_result(h, 0, i);
    scen_verdict(seen, N, 42);
    tvm_free(h);
    return 0;
}
