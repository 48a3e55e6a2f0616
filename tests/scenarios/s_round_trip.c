/* Scenario round_trip: A -> B -> A. The producer (mxnet) exports a tensor, the consumer (tvm)
 * takes it (correctly ordered), overwrites it in place on its own stream, and exports it back;
 * the producer imports it and reads it on its stream. Racy: the way back has no ordering;
 * correct: an event recorded on the consumer stream is waited for by the producer stream. */
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
    mx_fill(a, 1);
    DLManagedTensor *t, *back;
    void *h, *b;
    if (MXNDArrayToDLPack(a, &t) || TVMArrayFromDLPack(t, &h))
        return 2;
    mx_free(a);
    scen_order(mx_stream(), tvm_stream());
    scen_hold(tvm_stream());
    tvm_fill(h, 42);
    if (TVMArrayToDLPack(h, &back) || MXNDArrayFromDLPack(back, &b))
        return 2;
    if (!racy)
        scen_order(tvm_stream(), mx_stream());
    mx_read(b);
    scen_settle();
    scen_release(tvm_stream());
    float seen[N];
    for (int i = 0; i < N; i++)
        seen[i] = mx_result(b, i);
    scen_verdict(seen, N, 42);
    mx_free(b);
    tvm_sync();
    tvm_free(h);
    return 0;
}
