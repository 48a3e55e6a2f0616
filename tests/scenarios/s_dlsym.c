/* Scenario dlsym: as side_stream, but the program finds the exchange functions with
 * dlopen(RTLD_NOLOAD) + dlsym(handle, ...), as language bindings do; racy: no ordering;
 * correct: an event recorded after the write is waited for on the consumer stream. */
#include "fakefw.h"
#include "scen.h"
#include "scen_backend.h"

#include <dlfcn.h>

#define N 4

int main(int argc, char **argv)
{
    int racy = scen_racy(argc, argv);
    mx_init(FW_NON_BLOCKING);
    tvm_init(FW_NON_BLOCKING);
    mx_array *a = scen_held_write(N);
    DLManagedTensor *t;
    void *h;
    void *mx = dlopen("libfakemx.so", RTLD_NOW | RTLD_NOLOAD);
    void *tvm = dlopen("libfaketvm.so", RTLD_NOW | RTLD_NOLOAD);
    int (*to)(void *, DLManagedTensor **) = NULL;
    int (*from)(DLManagedTensor *, void **) = NULL;
    if (mx)
        *(void **)&to = dlsym(mx, "MXNDArrayToDLPack");
    if (tvm)
        *(void **)&from = dlsym(tvm, "TVMArrayFromDLPack");
    if (!to || !from || to(a, &t) || from(t, &h))
        return 2;
    mx_free(a);
    if (!racy)
        scen_order(mx_stream(), tvm_stream());
    tvm_read(h);
    scen_finish(h, 1, N);
    return 0;
}
