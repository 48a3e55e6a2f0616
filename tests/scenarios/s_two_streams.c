/* Scenario two_streams: one export consumed on two streams (the consumer's own and a second
 * one it creates). Racy: only the first stream waits for the producer (the second use is the
 * bug); correct: both wait. */
#include "fakefw.h"
#include "scen.h"
#include "scen_backend.h"

#define N 4

int main(int argc, char **argv)
{
    int racy = scen_racy(argc, argv);
    mx_init(FW_NON_BLOCKING);
    tvm_init(FW_NON_BLOCKING);
    cudaStream_t second;
    if (cudaStreamCreateWithFlags(&second, cudaStreamNonBlocking) != cudaSuccess)
        return 2;
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
    scen_order(mx_stream(), tvm_stream());
    if (!racy)
        scen_order(mx_stream(), second);
    tvm_read(h);
    tvm_read_on(h, second);
    scen_settle();
    scen_release(mx_stream());
    float seen[2 * N];
    for (int i = 0; i < N; i++) {
        seen[i] = tvm_result(h, 0, i);
        seen[N + i] = tvm_result(h, 1, i);
    }
    scen_verdict(seen, 2 * N, 42);
    tvm_free(h);
    cudaStreamDestroy(second);
    return 0;
}
