/* demo_race.c: shows, on the CUDA simulator, the stream race dlsync exists to fix: a producer
 * writes a tensor on its stream, a consumer reads it on another stream. Without synchronization
 * the consumer reads stale data; with an event recorded after the write and waited for on the
 * consumer's stream it reads the produced data. The producer's stream is held while the consumer
 * is enqueued (a simulator gate), so the outcome is the same on every run. */
#include <stdint.h>
#include <stdio.h>

#include <cuda_runtime_api.h>

#include "cudasim.h"

enum { N = 4 };

static void fill(void **args)
{
    float *x = *(float **)args[0];
    for (int i = 0; i < N; i++)
        x[i] = *(float *)args[1];
}

static void copy(void **args)
{
    float *dst = *(float **)args[0];
    const float *src = *(const float **)args[1];
    for (int i = 0; i < N; i++)
        dst[i] = src[i];
}

static int check(cudaError_t e, const char *what)
{
    if (e != cudaSuccess)
        fprintf(stderr, "demo_race: %s failed: %s\n", what, cudaGetErrorString(e));
    return e != cudaSuccess;
}

/* Runs the exchange once; returns the value the consumer saw, or -1 on a CUDA error. */
static float exchange(CUfunction fill_k, CUfunction copy_k, int with_event)
{
    cudaStream_t producer, consumer;
    cudaEvent_t ready;
    float *tensor, *seen, value = 42.0f, host[N];
    dim3 one = {1, 1, 1};
    if (check(cudaStreamCreateWithFlags(&producer, cudaStreamNonBlocking), "stream") ||
        check(cudaStreamCreateWithFlags(&consumer, cudaStreamNonBlocking), "stream") ||
        check(cudaEventCreateWithFlags(&ready, cudaEventDisableTiming), "event") ||
        check(cudaMalloc((void **)&tensor, sizeof host), "cudaMalloc") ||
        check(cudaMalloc((void **)&seen, sizeof host), "cudaMalloc") ||
        check(cudaMemset(tensor, 0, sizeof host), "cudaMemset") ||
        check(cudaDeviceSynchronize(), "cudaDeviceSynchronize"))
        return -1;

    cudasim_stream_hold(producer); /* the producer's GPU is "busy" */
    void *fill_args[] = {&tensor, &value};
    void *copy_args[] = {&seen, &tensor};
    if (check(cudaLaunchKernel((const void *)fill_k, one, one, fill_args, 0, producer), "launch"))
        return -1;
    if (with_event && (check(cudaEventRecord(ready, producer), "cudaEventRecord") ||
                       check(cudaStreamWaitEvent(consumer, ready, 0), "cudaStreamWaitEvent")))
        return -1;
    if (check(cudaLaunchKernel((const void *)copy_k, one, one, copy_args, 0, consumer), "launch"))
        return -1;
    cudasim_settle(); /* everything that can run has run */
    cudasim_stream_release(producer);
    if (check(cudaStreamSynchronize(consumer), "cudaStreamSynchronize") ||
        check(cudaMemcpy(host, seen, sizeof host, cudaMemcpyDeviceToHost), "cudaMemcpy") ||
        check(cudaDeviceSynchronize(), "cudaDeviceSynchronize"))
        return -1;
    cudaFree(tensor);
    cudaFree(seen);
    cudaEventDestroy(ready);
    cudaStreamDestroy(producer);
    cudaStreamDestroy(consumer);
    return host[0];
}

int main(void)
{
    size_t two_ptrs[] = {sizeof(float *), sizeof(float *)};
    size_t ptr_float[] = {sizeof(float *), sizeof(float)};
    CUfunction fill_k = cudasim_register_kernel("fill", fill, 2, ptr_float);
    CUfunction copy_k = cudasim_register_kernel("consume", copy, 2, two_ptrs);

    printf("producer writes 42.0 on stream A; consumer reads it on stream B\n\n");
    float racy = exchange(fill_k, copy_k, 0);
    printf("[race]  no synchronization:                         consumer read %5.1f  %s\n", racy,
           racy == 42.0f ? "(correct)" : "<- STALE: read before the producer wrote");
    float fixed = exchange(fill_k, copy_k, 1);
    printf("[fixed] cudaEventRecord(A) + cudaStreamWaitEvent(B): consumer read %5.1f  %s\n", fixed,
           fixed == 42.0f ? "(correct)" : "<- WRONG");
    return racy == 0.0f && fixed == 42.0f ? 0 : 1;
}
