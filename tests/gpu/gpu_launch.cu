/* gpu_launch: a launch-heavy loop, to measure what observing every launch costs.
 *
 *   gpu_launch <launches> [pending]
 * Launches an empty kernel <launches> times on one non-blocking stream (after 1000 untimed
 * warm-up launches), given a device buffer no exchange covers, waits for them, and prints
 *   "launch: launches=<n> pending=<0|1> ns_issue=<ns> ns_complete=<ns>"
 * (host issue time per launch, and time to completion per launch). Without `pending` no tensor is
 * ever exchanged: under dlsync this is the cost of a launch while nothing is tracked. With
 * `pending` the fake MXNet (libfakemx) first writes a tensor on its stream and exports it with
 * MXNDArrayToDLPack; the tensor stays live and unused until the loop ends, so each launch is
 * tested against a tracked tensor that waits for its first use. Exits 2 on a CUDA error or a bad
 * argument. */
#include "fakefw.h"

#include <cuda_runtime_api.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define PENDING_N 256 /* floats in the pending tensor */

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

int main(int argc, char **argv)
{
    long n = argc >= 2 && argc <= 3 ? strtol(argv[1], NULL, 10) : 0;
    int pending = argc == 3 && strcmp(argv[2], "pending") == 0;
    if (n < 1 || (argc == 3 && !pending)) {
        fprintf(stderr, "usage: gpu_launch <launches> [pending]\n");
        return 2;
    }
    cudaStream_t s;
    int *other;
    ck(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
    ck(cudaMalloc((void **)&other, 64 * sizeof(int)), "cudaMalloc");
    DLManagedTensor *t = NULL;
    if (pending) { /* written, exported, never used: it waits for its first use */
        mx_init(FW_NON_BLOCKING);
        mx_array *a = mx_empty(PENDING_N, kDLCUDA);
        mx_fill(a, 1.0f);
        if (MXNDArrayToDLPack(a, &t)) {
            fprintf(stderr, "gpu_launch: MXNDArrayToDLPack failed\n");
            return 2;
        }
    }
    for (int i = 0; i < 1000; i++)
        k_empty<<<1, 1, 0, s>>>(other);
    ck(cudaStreamSynchronize(s), "warm-up");
    double t0 = now_ns();
    for (long i = 0; i < n; i++)
        k_empty<<<1, 1, 0, s>>>(other);
    ck(cudaGetLastError(), "launch");
    double t1 = now_ns();
    ck(cudaStreamSynchronize(s), "cudaStreamSynchronize");
    double t2 = now_ns();
    printf("launch: launches=%ld pending=%d ns_issue=%.1f ns_complete=%.1f\n", n, pending, (t1 - t0) / (double)n,
           (t2 - t0) / (double)n);
    if (t)
        t->deleter(t);
    ck(cudaFree(other), "cudaFree");
    ck(cudaStreamDestroy(s), "cudaStreamDestroy");
    return 0;
}
