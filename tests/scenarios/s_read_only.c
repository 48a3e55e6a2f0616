/* Scenario read_only: a tensor exported read-only (DLPack 1.x READ_ONLY, through the DLPack C
 * exchange API), after which both sides go on reading it: the consumer with kernels on its stream,
 * the producer with copies of its own array on its. Racy: the consumer's first read is not
 * ordered after the producer's write (fix orders that one, and nothing after it: the consumer's
 * kernels on a read-only tensor are reads); correct: the consumer's stream waits for the write
 * first, and nothing is ordered at all. SCEN_WRITABLE=1 exports it without the flag: the
 * consumer's kernels may then write, and fix orders the producer's copies after them. */
#include "fakefw.h"
#include "scen.h"
#include "scen_backend.h"

#include <stdlib.h>

#define N 4

int main(int argc, char **argv)
{
    int racy = scen_racy(argc, argv);
    mx_init(FW_NON_BLOCKING);
    tvm_init(FW_NON_BLOCKING);
    mx_array *a = scen_held_write(N), *b = mx_empty(N, kDLCUDA);
    if (!getenv("SCEN_WRITABLE"))
        mx_set_read_only(a);
    const fw_exchange_api *api = PyCapsule_GetPointer(mx_exchange_api_capsule(), "dlpack_exchange_api");
    fw_managed_versioned *t;
    void *h;
    if (!api || api->managed_tensor_from_py_object_no_sync(a, &t) || TVMFFITensorFromDLPackVersioned(t, 0, 0, &h))
        return 2;
    if (!racy)
        scen_order(mx_stream(), tvm_stream());
    for (int i = 0; i < 2; i++) {
        tvm_read(h);   /* the consumer's kernel */
        mx_copy(b, a); /* the producer's copy of its own array */
    }
    scen_finish(h, 2, N);
    mx_sync();
    mx_free(a);
    mx_free(b);
    return 0;
}
