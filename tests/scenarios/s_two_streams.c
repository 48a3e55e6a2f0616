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
    mx_array *a = scen_held_write(N);
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
    scen_finish(h, 2, N);
    cudaStreamDestroy(second);
    return 0;
}
