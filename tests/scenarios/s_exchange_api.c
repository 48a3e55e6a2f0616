/* Scenario exchange_api: the DLPack C exchange API's managed NoSync export, as tvm-ffi consumes a
 * paddle tensor: the consumer reads the producer's table from its capsule, takes the tensor with
 * managed_tensor_from_py_object_no_sync (which orders nothing) and imports it with
 * TVMFFITensorFromDLPackVersioned. Racy: the consumer reads on its own stream; correct: it first
 * makes its stream wait for the one current_work_stream names, as the API asks. */
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
    const fw_exchange_api *api = PyCapsule_GetPointer(mx_exchange_api_capsule(), "dlpack_exchange_api");
    fw_managed_versioned *t;
    void *h, *producer;
    if (!api || api->managed_tensor_from_py_object_no_sync(a, &t) || TVMFFITensorFromDLPackVersioned(t, 0, 0, &h) ||
        api->current_work_stream(kDLCUDA, 0, &producer))
        return 2;
    mx_free(a);
    if (!racy)
        scen_order((cudaStream_t)producer, tvm_stream());
    tvm_read(h);
    scen_finish(h, 1, N);
    return 0;
}
