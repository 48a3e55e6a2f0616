/* Stress: exchanges made while other threads synchronize with the host. Half of the threads
 * (argument 1: the number of threads) repeat (argument 2: this many times, default 150) export -> import -> read of a freshly written
 * tensor (MXNet writes on its stream, the write takes 200 us on the simulator; TVM reads on its
 * own); the other half call cudaDeviceSynchronize and cudaFreeHost in a loop. A synchronize that
 * began before a write must not make the write count as complete. Prints
 * "exchanges: N stale: M" (reads that did not see their write). Exits 2 on a CUDA error. */
#include "cudasim.h"
#include "fakefw.h"
#include "scen_backend.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#define N 4
#define WRITE_US 200

static atomic_int g_stale, g_exchanges, g_running;
static int g_rounds = 150;

static void *exchanger(void *arg)
{
    int id = (int)(intptr_t)arg;
    for (int r = 0; r < g_rounds; r++) {
        float v = (float)(id * 1000 + r + 1);
        mx_array *a = mx_empty(N, kDLCUDA);
        mx_fill(a, v);
        DLManagedTensor *t;
        void *h;
        if (MXNDArrayToDLPack(a, &t) || TVMArrayFromDLPack(t, &h))
            exit(2);
        mx_free(a);
        tvm_read(h);
        for (int i = 0; i < N; i++)
            if (tvm_result(h, 0, i) != v) {
                atomic_fetch_add(&g_stale, 1);
                break;
            }
        atomic_fetch_add(&g_exchanges, 1);
        tvm_free(h);
    }
    atomic_fetch_sub(&g_running, 1);
    return NULL;
}

static void *syncer(void *arg)
{
    (void)arg;
    for (unsigned i = 0; atomic_load(&g_running) > 0; i++) {
        if (i % 2) {
            fw_check(cudaDeviceSynchronize(), "stress", "cudaDeviceSynchronize");
        } else {
            float *p;
            fw_check(cudaMallocHost((void **)&p, sizeof *p), "stress", "cudaMallocHost");
            fw_check(cudaFreeHost(p), "stress", "cudaFreeHost");
        }
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int threads = argc > 1 ? atoi(argv[1]) : 16;
    if (argc > 2)
        g_rounds = atoi(argv[2]);
    if (threads < 2 || threads > 256 || g_rounds < 1)
        return 2;
    mx_init(FW_NON_BLOCKING);
    tvm_init(FW_NON_BLOCKING);
    cudasim_set_kernel_duration("scen_write", WRITE_US);
    pthread_t th[256];
    atomic_store(&g_running, threads / 2);
    for (int i = 0; i < threads; i++)
        if (pthread_create(&th[i], NULL, i % 2 ? syncer : exchanger, (void *)(intptr_t)i))
            return 2;
    for (int i = 0; i < threads; i++)
        pthread_join(th[i], NULL);
    printf("exchanges: %d stale: %d\n", atomic_load(&g_exchanges), atomic_load(&g_stale));
    return 0;
}
