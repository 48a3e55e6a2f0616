/* Scenario overlap_views: one buffer of 2N floats, written in two halves by two kernels given
 * the base and the middle of the buffer; two overlapping views are exported ([0, N) and
 * [N/2, 3N/2)) and the consumer reads the second, whose first part comes from the kernel given
 * the base pointer. Racy: no ordering; correct: an event wait. */
#include "fakefw.h"
#include "scen.h"
#include "scen_backend.h"

#define N 4

int main(int argc, char **argv)
{
    int racy = scen_racy(argc, argv);
    mx_init(FW_NON_BLOCKING);
    tvm_init(FW_NON_BLOCKING);
    mx_array *a = mx_empty(2 * N, kDLCUDA);
    mx_fill(a, 0);
    mx_sync();
    mx_array *lo = mx_view(a, 0, N), *hi = mx_view(a, N, N);
    mx_array *v1 = mx_view(a, 0, N), *v2 = mx_view(a, N / 2, N);
    scen_hold(mx_stream());
    mx_fill(lo, 42);
    mx_fill(hi, 42);
    DLManagedTensor *t1, *t2;
    void *h1, *h2;
    if (MXNDArrayToDLPack(v1, &t1) || MXNDArrayToDLPack(v2, &t2) || TVMArrayFromDLPack(t1, &h1) ||
        TVMArrayFromDLPack(t2, &h2))
        return 2;
    if (!racy)
        scen_order(mx_stream(), tvm_stream());
    tvm_read(h2);
    scen_settle();
    scen_release(mx_stream());
    float seen[N];
    for (int i = 0; i < N; i++)
        seen[i] = tvm_result(h2, 0, i);
    scen_verdict(seen, N, 42);
    tvm_free(h2);
    tvm_free(h1);
    mx_free(v1);
    mx_free(v2);
    mx_free(lo);
    mx_free(hi);
    mx_free(a);
    return 0;
}
