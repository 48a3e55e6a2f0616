/* Scenario kernel_pair: write_after_use with kernels: the producer's stream is ordered before the
 * consumer's read kernel, then the producer recycles the buffer with a kernel of its own while
 * that read is pending. A kernel is only known to maybe write, so check counts the pair without
 * listing it (DLSYNC_KERNEL_PAIRS=1 lists it) and fix orders it. Correct twin: the producer's stream
 * waits for the read too. */
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
    mx_fill(a, SCEN_VALUE);
    DLManagedTensor *t;
    void *h;
    if (MXNDArrayToDLPack(a, &t) || TVMArrayFromDLPack(t, &h))
        return 2;
    scen_order(mx_stream(), tvm_stream());
    scen_hold(tvm_stream());
    tvm_read(h);
    if (!racy)
        scen_order(tvm_stream(), mx_stream());
    mx_fill(a, 7); /* the buffer recycled by a kernel */
    scen_settle();
    scen_release(tvm_stream());
    float seen[N];
    for (int i = 0; i < N; i++)
        seen[i] = tvm_result(h, 0, i);
    scen_verdict(seen, N, SCEN_VALUE);
    mx_sync();
    tvm_free(h);
    mx_free(a);
    return 0;
}
