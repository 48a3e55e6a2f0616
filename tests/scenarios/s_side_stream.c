/* Scenario side_stream: the producer writes on its own non-blocking stream and the consumer reads
 * on its own non-blocking stream; racy: nothing orders them (the classic missing-wait bug of
 * legacy to_dlpack/from_dlpack pairs); correct: an event recorded after the write is waited for
 * on the consumer stream. */
#include "fakefw.h"
#include "scen.h"
#include "scen_backend.h"

#define N 4

int main(int argc, char **argv)
{
    int racy = scen_racy(argc, argv);
    mx_init(FW_NON_BLOCKING);
    tvm_init(FW_NON_BLOCKING);
    mx_array *a = scen_held_write(N);
    DLManagedTensor *t;
    void *h;
    if (MXNDArrayToDLPack(a, &t) || TVMArrayFromDLPack(t, &h))
        return 2;
    mx_free(a);
    if (!racy)
        scen_order(mx_stream(), tvm_stream());
    tvm_read(h);
    scen_finish(h, 1, N);
    return 0;
}
