/* Scenario release_early_threads: release_early across threads: a producer thread exports the
 * tensor, a consumer thread imports it, calls the deleter and then launches its read on its own
 * stream; after it returned (the program joins it), another producer thread takes the memory from
 * the allocator's cache and overwrites it on its own stream while the read is pending. Correct
 * twin: the consumer releases the tensor once its read is done. */
#include "fakefw.h"
#include "scen.h"
#include "scen_backend.h"

#include <pthread.h>

#define N 4

static int g_racy;
static DLManagedTensor *g_t;
static cudaStream_t g_consumer_stream;
static float *g_seen;

static void *producer(void *arg)
{
    (void)arg;
    mx_array *a = mx_empty(N, kDLCUDA);
    mx_fill(a, SCEN_VALUE);
    mx_sync();
    if (MXNDArrayToDLPack(a, &g_t))
        g_t = NULL;
    mx_free(a);
    return NULL;
}

static void *consumer(void *arg)
{
    (void)arg;
    void *h;
    if (TVMArrayFromDLPack(g_t, &h))
        return NULL;
    const float *data = g_t->dl_tensor.data;
    g_consumer_stream = tvm_stream();
    scen_hold(g_consumer_stream);
    if (g_racy)
        tvm_release(h); /* the deleter first */
    scen_read(g_consumer_stream, data, g_seen, N);
    if (!g_racy) {
        scen_release(g_consumer_stream);
        tvm_sync();
        tvm_release(h);
    }
    tvm_free(h);
    return NULL;
}

static void *reuser(void *arg)
{
    mx_array *c = mx_empty(N, kDLCUDA); /* the exported block, from the cache */
    mx_fill(c, 7);
    *(mx_array **)arg = c;
    return NULL;
}

int main(int argc, char **argv)
{
    g_racy = scen_racy(argc, argv);
    mx_init(FW_NON_BLOCKING);
    tvm_init(FW_NON_BLOCKING);
    if (cudaMallocHost((void **)&g_seen, N * sizeof(float)))
        return 2;
    pthread_t p, c, r;
    mx_array *reused = NULL;
    if (pthread_create(&p, NULL, producer, NULL) || pthread_join(p, NULL) || !g_t)
        return 2;
    if (pthread_create(&c, NULL, consumer, NULL) || pthread_join(c, NULL))
        return 2;
    if (pthread_create(&r, NULL, reuser, &reused) || pthread_join(r, NULL))
        return 2;
    scen_settle();
    scen_release(g_consumer_stream);
    if (cudaStreamSynchronize(g_consumer_stream) || cudaDeviceSynchronize())
        return 2;
    scen_verdict(g_seen, N, SCEN_VALUE);
    mx_free(reused);
    cudaFreeHost(g_seen);
    return 0;
}
