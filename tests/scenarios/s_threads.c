/* Scenario threads: a producer thread fills and exports a tensor on its own stream and hands it
 * to a consumer thread, which imports it and reads it on its stream. Racy: the producer hands
 * the tensor over with its write pending; correct: it synchronizes its stream first. */
#include "fakefw.h"
#include "scen.h"
#include "scen_backend.h"

#include <pthread.h>

#define N 4

static int g_racy;
static DLManagedTensor *g_t;
static void *g_h;
static cudaStream_t g_producer_stream;

static void *producer(void *arg)
{
    (void)arg;
    mx_array *a = mx_empty(N, kDLCUDA);
    mx_fill(a, 0);
    mx_sync();
    g_producer_stream = mx_stream();
    scen_hold(g_producer_stream);
    mx_fill(a, 42);
    if (!g_racy) {
        scen_release(g_producer_stream);
        mx_sync();
    }
    if (MXNDArrayToDLPack(a, &g_t))
        g_t = NULL;
    mx_free(a);
    return NULL;
}

static void *consumer(void *arg)
{
    (void)arg;
    if (TVMArrayFromDLPack(g_t, &g_h) == 0)
        tvm_read(g_h);
    return NULL;
}

int main(int argc, char **argv)
{
    g_racy = scen_racy(argc, argv);
    mx_init(FW_NON_BLOCKING);
    tvm_init(FW_NON_BLOCKING);
    pthread_t p, c;
    if (pthread_create(&p, NULL, producer, NULL) || pthread_join(p, NULL) || !g_t)
        return 2;
    if (pthread_create(&c, NULL, consumer, NULL) || pthread_join(c, NULL) || !g_h)
        return 2;
    scen_settle();
    scen_release(g_producer_stream);
    float seen[N];
    for (int i = 0; i < N; i++)
        seen[i] = tvm_result(g_h, 0, i);
    scen_verdict(seen, N, 42);
    tvm_free(g_h);
    return 0;
}
