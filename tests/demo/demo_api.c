/* demo_api: a new consumer asks a legacy producer for a tensor through the C API (dlsync.h).
 *
 * The fake MXNet of the scenario corpus (libfakemx.so) writes 42 into an array on its own
 * stream, which is held busy; the consumer wants the array on its own stream. It looks
 * dlsync_to_dlpack up at run time: with libdlsync.so loaded it gets a tensor already ordered
 * on its stream; without it, it falls back to a device synchronize (the common workaround).
 * Prints what the consumer read and which path it took. */
#include "dlsync.h"
#include "fakefw.h"
#include "scen_backend.h"

#include <dlfcn.h>
#include <stdio.h>

#define N 4

int main(void)
{
    mx_init(FW_NON_BLOCKING);
    mx_array *a = mx_empty(N, kDLCUDA);
    mx_fill(a, 0);
    mx_sync();
    cudaStream_t mine;
    float *seen;
    if (cudaStreamCreateWithFlags(&mine, cudaStreamNonBlocking) != cudaSuccess ||
        cudaMallocHost((void **)&seen, N * sizeof(float)) != cudaSuccess)
        return 2;
    scen_hold(mx_stream()); /* the producer's GPU is busy */
    mx_fill(a, 42);

    dlsync_to_dlpack_fn to_dlpack = (dlsync_to_dlpack_fn)dlsym(RTLD_DEFAULT, "dlsync_to_dlpack");
    const float *data;
    DLManagedTensorVersioned *t = NULL;
    DLManagedTensor *legacy = NULL;
    if (to_dlpack) {
        int rc = to_dlpack("mxnet", a, (intptr_t)mine, &t);
        if (rc != DLSYNC_OK) {
            dlsync_status_string_fn str = (dlsync_status_string_fn)dlsym(RTLD_DEFAULT, "dlsync_status_string");
            fprintf(stderr, "demo_api: dlsync_to_dlpack: %s\n", str ? str(rc) : "failed");
            return 2;
        }
        data = t->dl_tensor.data;
        printf("path: dlsync_to_dlpack(\"mxnet\", array, my_stream) -> tensor ordered on my stream, DLPack %u.%u\n",
               t->version.major, t->version.minor);
    } else {
        if (MXNDArrayToDLPack(a, &legacy))
            return 2;
        data = legacy->dl_tensor.data;
        printf("path: no dlsync loaded -> legacy export + cudaDeviceSynchronize()\n");
        cudaDeviceSynchronize();
    }
    scen_read(mine, data, seen, N);
    scen_settle();
    scen_release(mx_stream());
    cudaStreamSynchronize(mine);
    printf("consumer read %g %g %g %g: %s\n", seen[0], seen[1], seen[2], seen[3],
           seen[0] == 42 && seen[3] == 42 ? "correct" : "STALE");
    if (t)
        t->deleter(t);
    if (legacy)
        legacy->deleter(legacy);
    mx_free(a);
    cudaFreeHost(seen);
    return 0;
}
