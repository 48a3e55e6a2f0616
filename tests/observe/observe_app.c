/* An application for the observer's end-to-end tests: runs on the simulated CUDA runtime and
 * performs each kind of stream operation a known number of times (see test_observe.c), through
 * the runtime API so every call also reaches the driver beneath it. Prints "app done" at the end;
 * exits 1 when a call fails. */
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <string.h>

#include "cudasim.h"

static int failed;

static void check(cudaError_t e, const char *what)
{
    if (e != cudaSuccess) {
        fprintf(stderr, "app: %s failed (%d)\n", what, (int)e);
        failed = 1;
    }
}

static void scale(void **args)
{
    float *p = *(float **)args[0];
    int n = *(int *)args[1];
    for (int i = 0; i < n; i++)
        p[i] *= 2.0f;
}

static void host_fn(void *user)
{
    (void)user;
}

int main(void)
{
    size_t sizes[2] = {sizeof(float *), sizeof(int)};
    CUfunction f = cudasim_register_kernel("scale", scale, 2, sizes);
    cudaStream_t s;
    cudaEvent_t e;
    float *d, *h;
    check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
    check(cudaMalloc((void **)&d, 64 * sizeof(float)), "cudaMalloc");
    check(cudaMallocHost((void **)&h, 64 * sizeof(float)), "cudaMallocHost");
    memset(h, 0, 64 * sizeof(float));
    check(cudaMemcpyAsync(d, h, 64 * sizeof(float), cudaMemcpyHostToDevice, s), "cudaMemcpyAsync");
    check(cudaMemsetAsync(d, 0, 16 * sizeof(float), s), "cudaMemsetAsync");
    int n = 64;
    void *args[] = {&d, &n};
    check(cudaLaunchKernel((const void *)f, (dim3){1, 1, 1}, (dim3){1, 1, 1}, args, 0, s), "cudaLaunchKernel");
    check(cudaEventCreate(&e), "cudaEventCreate");
    check(cudaEventRecord(e, s), "cudaEventRecord");
    check(cudaStreamWaitEvent(0, e, 0), "cudaStreamWaitEvent");
    check(cudaLaunchHostFunc(s, host_fn, NULL), "cudaLaunchHostFunc");
    check(cudaEventSynchronize(e), "cudaEventSynchronize");
    check(cudaEventQuery(e), "cudaEventQuery");
    check(cudaStreamSynchronize(s), "cudaStreamSynchronize");
    check(cudaStreamQuery(s), "cudaStreamQuery");
    check(cudaMemcpy(h, d, 64 * sizeof(float), cudaMemcpyDeviceToHost), "cudaMemcpy");
    check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    check(cudaEventDestroy(e), "cudaEventDestroy");
    check(cudaStreamDestroy(s), "cudaStreamDestroy");
    check(cudaFree(d), "cudaFree");
    check(cudaFreeHost(h), "cudaFreeHost");
    printf("app done\n");
    return failed;
}
