/* Scenario exchange_api_view: the DLPack C exchange API's non-owning NoSync export: the consumer
 * gets a DLTensor describing the producer's array with dltensor_from_py_object_no_sync (which
 * orders nothing) and reads its memory while the producer keeps it. Racy: the consumer reads on
 * its own stream; correct: it first makes its stream wait for the one current_work_stream names. */
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
    DLTensor view;
    void *producer;
    if (!api || api->dltensor_from_py_object_no_sync(a, &view) || api->current_work_stream(kDLCUDA, 0, &producer))
        return 2;
    tvm_array *h = tvm_view(&view);
    if (!racy)
        scen_order((cudaStream_t)producer, tvm_stream());
    tvm_read(h);
    scen_finish(h, 1, N);
    mx_free(a);
    return 0;
}
