/* A host wait of the shim on one thread must not hold up another thread's launches. The main
 * thread writes a pinned tensor on MXNet's stream (held, so the write stays pending) and exports
 * it; thread A imports it into TVM, so fix waits on the host for the write. While A waits, the
 * main thread launches LAUNCHES kernels on a stream of its own, then looks whether A is still
 * waiting, releases the write and checks what A sees. Prints "launched during the wait: 1|0" and
 * "host read: <value>". Exits 2 on a CUDA error. */
#include "fakefw.h"
#include "scen.h"
#include "scen_backend.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

#define N 4
#define LAUNCHES 100

static DLManagedTensor *g_t;
static void *g_h;
static atomic_int g_imported;

static void *importer(void *arg)
{
    (void)arg;
    fw_check(cudaFree(NULL), "stall", "cudaFree"); /* this thread's context, as a framework thread has */
    if (TVMArrayFromDLPack(g_t, &g_h) == 0)
        atomic_store(&g_imported, 1);
    return NULL;
}

int main(void)
{
    mx_init(FW_NON_BLOCKING);
    tvm_init(FW_NON_BLOCKING);
    cudaStream_t mine;
    float *dst;
    fw_check(cudaStreamCreateWithFlags(&mine, cudaStreamNonBlocking), "stall", "stream");
    fw_check(cudaMalloc((void **)&dst, N * sizeof(float)), "stall", "cudaMalloc");
    mx_array *a = mx_empty(N, kDLCUDAHost);
    mx_fill(a, 0);
    mx_sync();
    scen_hold(mx_stream());
    mx_fill(a, SCEN_VALUE);
    if (MXNDArrayToDLPack(a, &g_t))
        return 2;
    pthread_t t;
    if (pthread_create(&t, NULL, importer, NULL))
        return 2;
    int waiting = scen_await_host_sync() == 0; /* A waits on the host for the held write */
    for (int i = 0; i < LAUNCHES; i++)
        scen_write(mine, dst, N, (float)i);
    int during = waiting && !atomic_load(&g_imported);
    scen_release(mx_stream());
    pthread_join(t, NULL);
    printf("launched during the wait: %d\n", during);
    printf("host read: %g\n", g_h ? tvm_host_get(g_h, N - 1) : -1.0);
    fw_check(cudaStreamSynchronize(mine), "stall", "cudaStreamSynchronize");
    return 0;
}
