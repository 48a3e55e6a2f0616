/* gpu_launch: a launch-heavy loop, to measure what observing every launch costs.
 *
 *   gpu_launch <launches>
 * Launches an empty kernel <launches> times on one non-blocking stream (after 1000 untimed
 * warm-up launches), waits for them, and prints
 *   "launch: <launches> launches, <ns> ns/launch (host issue), <ns> ns/launch (to completion)".
 * Exits 2 on a CUDA error or a bad argument. No tensor is ever exchanged, so under dlsync this is
 * the cost of a launch while nothing waits for its first use. */
#include <cuda_runtime_api.h>

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

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
    long n = argc == 2 ? strtol(argv[1], NULL, 10) : 0;
    if (n < 1) {
        fprintf(stderr, "usage: gpu_launch <launches>\n");
        return 2;
    }
    cudaStream_t s;
    ck(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
    for (int i = 0; i < 1000; i++)
        k_empty<<<1, 1, 0, s>>>(nullptr);
    ck(cudaStreamSynchronize(s), "warm-up");
    double t0 = now_ns();
    for (long i = 0; i < n; i++)
        k_empty<<<1, 1, 0, s>>>(nullptr);
    ck(cudaGetLastError(), "launch");
    double t1 = now_ns();
    ck(cudaStreamSynchronize(s), "cudaStreamSynchronize");
    double t2 = now_ns();
    printf("launch: launches=%ld ns_issue=%.1f ns_complete=%.1f\n", n, (t1 - t0) / (double)n, (t2 - t0) / (double)n);
    ck(cudaStreamDestroy(s), "cudaStreamDestroy");
    return 0;
}
