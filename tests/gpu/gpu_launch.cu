/* gpu_launch: a loop of stream operations, to measure what observing each one costs.
 *
 *   gpu_launch <ops> [copy] [pending]
 * Issues <ops> operations on one non-blocking stream (after 1000 untimed warm-up operations of
 * the same kind), on device buffers no exchange covers, waits for them, and prints
 *   "launch: kind=<launch|copy> ops=<n> pending=<0|1> ns_issue=<ns> ns_complete=<ns>"
 * (host issue time per operation, and time to completion per operation). The operations are
 * empty kernel launches, or with `copy` a cudaMemsetAsync and a device-to-device cudaMemcpyAsync
 * in turn (the other class of stream work dlsync orders). Without `pending` no tensor is ever
 * exchanged: under dlsync this is the cost of an operation while nothing is tracked. With
 * `pending` the fake MXNet (libfakemx) first writes a tensor on its stream and exports it with
 * MXNDArrayToDLPack; the tensor stays live and unused until the loop ends, so each operation is
 * tested against a tracked tensor that waits for its first use. Exits 2 on a CUDA error or a bad
 * argument. */
#include "fakefw.h"

#include <cuda_runtime_api.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define PENDING_N 256 /* floats in the pending tensor */
#define COPY_BYTES 256
#define WARM_UP 1000

__global__ static void k_empty(int *unused)
{
    (void)unused;
}

static void ck(cudaError_t e, const char *what)
{
    if (e != cudaSuccess) {
        fprintf(stderr, "gpu_launch: %s: %s\n", what, cudaGetErrorString(e));
        exit(2);
    }
}

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* Operation i of the loop on stream s: a launch, or a set / a copy in turn. */
static void issue(int copy, long i, cudaStream_t s, int *a, int *b)
{
    if (!copy)
        k_empty<<<1, 1, 0, s>>>(a);
    else if (i % 2 == 0)
        cudaMemsetAsync(a, (int)(i & 0xff), COPY_BYTES, s);
    else
        cudaMemcpyAsync(b, a, COPY_BYTES, cudaMemcpyDeviceToDevice, s);
}

int main(int argc, char **argv)
{
    long n = argc >= 2 ? strtol(argv[1], NULL, 10) : 0;
    int copy = 0, pending = 0, bad = n < 1 || argc > 4;
    for (int i = 2; i < argc; i++) {
        if (strcmp(argv[i], "copy") == 0)
            copy = 1;
        else if (strcmp(argv[i], "pending") == 0)
            pending = 1;
        else
            bad = 1;
    }
    if (bad) {
        fprintf(stderr, "usage: gpu_launch <ops> [copy] [pending]\n");
        return 2;
    }
    cudaStream_t s;
    int *a, *b;
    ck(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
    ck(cudaMalloc((void **)&a, COPY_BYTES), "cudaMalloc");
    ck(cudaMalloc((void **)&b, COPY_BYTES), "cudaMalloc");
    DLManagedTensor *t = NULL;
    if (pending) { /* written, exported, never used: it waits for its first use */
        mx_init(FW_NON_BLOCKING);
        mx_array *p = mx_empty(PENDING_N, kDLCUDA);
        mx_fill(p, 1.0f);
        if (MXNDArrayToDLPack(p, &t)) {
            fprintf(stderr, "gpu_launch: MXNDArrayToDLPack failed\n");
            return 2;
        }
    }
    for (long i = 0; i < WARM_UP; i++)
        issue(copy, i, s, a, b);
    ck(cudaStreamSynchronize(s), "warm-up");
    double t0 = now_ns();
    for (long i = 0; i < n; i++)
        issue(copy, i, s, a, b);
    ck(cudaGetLastError(), copy ? "set or copy" : "launch");
    double t1 = now_ns();
    ck(cudaStreamSynchronize(s), "cudaStreamSynchronize");
    double t2 = now_ns();
    printf("launch: kind=%s ops=%ld pending=%d ns_issue=%.1f ns_complete=%.1f\n", copy ? "copy" : "launch", n, pending,
           (t1 - t0) / (double)n, (t2 - t0) / (double)n);
    if (t)
        t->deleter(t);
    ck(cudaFree(a), "cudaFree");
    ck(cudaFree(b), "cudaFree");
    ck(cudaStreamDestroy(s), "cudaStreamDestroy");
    return 0;
}
