/* A CUDA program with its own CUPTI tool, as a profiler would be: initializes CUDA, allocates,
 * sets and frees device memory, then subscribes to CUPTI itself and prints "subscribe=<result>"
 * (0 when it got the subscription). Built against the CUDA simulator. */
#include <cuda.h>
#include <cupti_callbacks.h>
#include <stdio.h>

static void CUPTIAPI on_callback(void *user, CUpti_CallbackDomain d, CUpti_CallbackId id, const void *data)
{
    (void)user, (void)d, (void)id, (void)data;
}

int main(void)
{
    CUdevice dev;
    CUcontext ctx;
    CUdeviceptr p;
    if (cuInit(0) != CUDA_SUCCESS || cuDeviceGet(&dev, 0) != CUDA_SUCCESS ||
        cuDevicePrimaryCtxRetain(&ctx, dev) != CUDA_SUCCESS || cuCtxSetCurrent(ctx) != CUDA_SUCCESS ||
        cuMemAlloc(&p, 64) != CUDA_SUCCESS || cuMemsetD8(p, 1, 64) != CUDA_SUCCESS ||
        cuCtxSynchronize() != CUDA_SUCCESS || cuMemFree(p) != CUDA_SUCCESS) {
        fprintf(stderr, "hygiene_cuda: CUDA failed\n");
        return 1;
    }
    CUpti_SubscriberHandle sub;
    CUptiResult r = cuptiSubscribe(&sub, on_callback, NULL);
    printf("subscribe=%d\n", (int)r);
    if (r == CUPTI_SUCCESS)
        cuptiUnsubscribe(sub);
    return 0;
}
