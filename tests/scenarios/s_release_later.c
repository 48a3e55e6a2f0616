/* Scenario release_later: the consumer reads tensor A on its stream, goes on with other work there
 * (a read of a second exchanged tensor) and releases A only afterwards, as a pipeline releases a
 * buffer when its slot comes round again; the producer's caching allocator hands A's memory to a
 * new array, which the producer overwrites on its own stream while the read of A is still pending.
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
    mx_array *a = mx_empty(N, kDLCUDA), *b = mx_empty(N, kDLCUDA);
    mx_fill(a, SCEN_VALUE);
    mx_fill(b, SCEN_VALUE);
    mx_sync();
    DLManagedTensor *ta, *tb;
    void *ha, *hb;
    if (MXNDArrayToDLPack(a, &ta) || TVMArrayFromDLPack(ta, &ha) || MXNDArrayToDLPack(b, &tb) ||
        TVMArrayFromDLPack(tb, &hb))
        return 2;
    mx_free(a);
    scen_hold(tvm_stream());
    tvm_read(ha);
    tvm_read(hb); /* later work of the consumer's stream */
    if (!racy) {
        scen_release(tvm_stream());
        tvm_sync();
    }
    tvm_release(ha);
    mx_array *c = mx_empty(N, kDLCUDA); /* a's block, from the cache */
    mx_fill(c, 7);
    scen_settle();
    scen_release(tvm_stream());
    float seen[N];
    for (int i = 0; i < N; i++)
        seen[i] = tvm_result(ha, 0, i);
    scen_verdict(seen, N, SCEN_VALUE);
    tvm_free(ha);
    tvm_free(hb);
    mx_sync();
    mx_free(b);
    mx_free(c);
    return 0;
}
