/* gpu_pipeline: a legacy producer -> consumer pipeline on a GPU, for dlsync's demo and figures.
 *
 *   gpu_pipeline racy|devsync|events <exchanges> [later]
 * Exchange i: the producer ("mxnet", libfakemx) fills buffer i % 8 with the value i + 1 on its
 * non-blocking stream (scen_write: spins SCEN_SPIN_CYCLES first) and exports it with
 * MXNDArrayToDLPack; the consumer ("tvm", libfaketvm) imports it with TVMArrayFromDLPack, copies
 * it on its own non-blocking stream into result slot i (pinned memory), and releases it: right
 * after enqueuing the copy, or with `later` when the buffer comes round again (just before the
 * producer's next write of it, as a pipeline that keeps its inputs for a while).
 *   racy     nothing orders the two streams, as in legacy code (dlsync fix must make it right)
 *   devsync  cudaDeviceSynchronize before each export: the common workaround
 *   events   synchronized by hand, as a careful author would: an event recorded on the
 *            producer's stream after its write, the consumer's stream waiting on it before the
 *            copy; an event recorded on the consumer's stream after the copy, the producer's
 *            stream waiting on it before its next write of that buffer (the release ordered the
 *            same way); the program dlsync fix should come close to
 * After the last exchange it waits for the device and counts the slots that do not hold their
 * exchange's value. Prints one line:
 *   "pipeline: mode=<m> release=<at-once|later> exchanges=<n> wrong=<w> total_ms=<t> us_per_exchange=<u>"
 * and exits 0 (2 on a CUDA error or a bad argument; framework errors exit 2 inside them). */
#include "fakefw.h"
#include "scen_backend.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define N 256  /* floats per exchanged tensor */
#define BUFS 8 /* producer buffers, reused in turn */

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void ck(cudaError_t e, const char *what)
{
    if (e != cudaSuccess) {
        fprintf(stderr, "gpu_pipeline: %s: %s\n", what, cudaGetErrorString(e));
        exit(2);
    }
}

int main(int argc, char **argv)
{
    long n = argc == 3 || argc == 4 ? strtol(argv[2], NULL, 10) : 0;
    int devsync = n > 0 && strcmp(argv[1], "devsync") == 0, events = n > 0 && strcmp(argv[1], "events") == 0;
    int later = argc == 4 && strcmp(argv[3], "later") == 0;
    if (n < 1 || (!devsync && !events && strcmp(argv[1], "racy") != 0) || (argc == 4 && !later)) {
        fprintf(stderr, "usage: gpu_pipeline racy|devsync|events <exchanges> [later]\n");
        return 2;
    }
    mx_init(FW_NON_BLOCKING);
    tvm_init(FW_NON_BLOCKING);
    mx_array *buf[BUFS];
    for (int k = 0; k < BUFS; k++) {
        buf[k] = mx_empty(N, kDLCUDA);
        mx_fill(buf[k], 0);
    }
    float *res;
    ck(cudaMallocHost((void **)&res, (size_t)n * N * sizeof(float)), "cudaMallocHost");
    memset(res, 0, (size_t)n * N * sizeof(float));
    cudaEvent_t written, read[BUFS]; /* events: after the write; after the copy of each buffer */
    ck(cudaEventCreateWithFlags(&written, cudaEventDisableTiming), "cudaEventCreateWithFlags");
    for (int k = 0; k < BUFS; k++)
        ck(cudaEventCreateWithFlags(&read[k], cudaEventDisableTiming), "cudaEventCreateWithFlags");
    ck(cudaDeviceSynchronize(), "cudaDeviceSynchronize");

    tvm_array *held[BUFS] = {NULL};
    double t0 = now_ms();
    for (long i = 0; i < n; i++) {
        if (held[i % BUFS]) { /* `later`: released when its buffer comes round again */
            tvm_free(held[i % BUFS]);
            held[i % BUFS] = NULL;
        }
        if (events && i >= BUFS) /* the buffer's last copy is done before it is written again */
            ck(cudaStreamWaitEvent(mx_stream(), read[i % BUFS], 0), "cudaStreamWaitEvent");
        mx_fill(buf[i % BUFS], (float)(i + 1));
        if (events) {
            ck(cudaEventRecord(written, mx_stream()), "cudaEventRecord");
            ck(cudaStreamWaitEvent(tvm_stream(), written, 0), "cudaStreamWaitEvent");
        }
        if (devsync)
            ck(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
        DLManagedTensor *t;
        void *h;
        if (MXNDArrayToDLPack(buf[i % BUFS], &t) || TVMArrayFromDLPack(t, &h))
            return 2;
        scen_read(tvm_stream(), (const float *)t->dl_tensor.data, res + i * N, N);
        if (events)
            ck(cudaEventRecord(read[i % BUFS], tvm_stream()), "cudaEventRecord");
        if (later)
            held[i % BUFS] = h;
        else
            tvm_free(h);
    }
    for (int k = 0; k < BUFS; k++)
        if (held[k])
            tvm_free(held[k]);
    ck(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    double t1 = now_ms();

    long wrong = 0;
    for (long i = 0; i < n; i++)
        for (int j = 0; j < N; j++)
            if (res[i * N + j] != (float)(i + 1)) {
                wrong++;
                break;
            }
    printf("pipeline: mode=%s release=%s exchanges=%ld wrong=%ld total_ms=%.3f us_per_exchange=%.2f\n", argv[1],
           later ? "later" : "at-once", n, wrong, t1 - t0, (t1 - t0) * 1e3 / (double)n);
    for (int k = 0; k < BUFS; k++) {
        mx_free(buf[k]);
        cudaEventDestroy(read[k]);
    }
    cudaEventDestroy(written);
    cudaFreeHost(res);
    return 0;
}
