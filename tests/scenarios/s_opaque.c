/* Scenario opaque: as side_stream, but the consumer kernel gets the tensor inside a 16 KiB
 * parameter block passed by value, too large for the shim to scan, so it must treat the launch
 * as touching everything (conservative path); racy: no ordering; correct: an event wait. */
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
    tvm_read_opaque(h);
    scen_finish(h, 1, N);
    return 0;
}
