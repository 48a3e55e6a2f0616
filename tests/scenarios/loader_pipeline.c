/* A hand-synchronized data-loader pipeline, every hazard ordered by the program itself: loader
 * threads and consumer threads share a bounded host queue and a pool of device buffers, each on a
 * stream of its own. A loader takes a free buffer, makes its stream wait for the event the
 * buffer's last consumer recorded (if any), fills it, records a new event and exports the buffer
 * (MXNDArrayToDLPack), and queues it with the event. A consumer imports it on a stream made for
 * the import, makes that stream wait for the loader's event (destroyed right after), copies the
 * last byte to pinned memory, then either synchronizes (every SYNC_EVERY-th item of its own, 0:
 * never) and checks the byte, or records an event for the next fill; it releases the tensor
 * (destroying the import's stream) and gives the buffer back with that event.
 * Arguments: loaders consumers items stream-kind [sync-every, default 5 [buffers, default 6, at
 * most MAX_POOL]] (fakefw.h's kinds).
 * Prints "exchanges: N wrong: M". Exits 2 on a CUDA error. */
#include "fakepool.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define MAX_POOL 128
#define QUEUE 4
#define BYTES 4096

typedef struct {
    pool_array *buffer;
    cudaEvent_t ready; /* recorded by its last consumer (NULL: synchronized, or never used) */
} free_buffer;

typedef struct {
    DLManagedTensor *t;
    cudaEvent_t filled;
    pool_array *buffer;
    int value;
} item;

static free_buffer g_pool[MAX_POOL];
static int g_nfree;
static item g_queue[QUEUE];
static int g_queued, g_head;
static int g_items, g_produced, g_consumed, g_wrong, g_sync_every = 5;
static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_cv = PTHREAD_COND_INITIALIZER;

static void *loader(void *arg)
{
    (void)arg;
    for (;;) {
        pthread_mutex_lock(&g_mu);
        while (g_nfree == 0 && g_produced < g_items)
            pthread_cond_wait(&g_cv, &g_mu);
        if (g_produced >= g_items) {
            pthread_mutex_unlock(&g_mu);
            return NULL;
        }
        free_buffer b = g_pool[--g_nfree];
        int value = 1 + g_produced++ % 250;
        pthread_mutex_unlock(&g_mu);
        if (b.ready)
            pool_wait_event(b.buffer, b.ready);
        pool_fill(b.buffer, value);
        cudaEvent_t filled = pool_event(b.buffer);
        DLManagedTensor *t;
        if (MXNDArrayToDLPack(b.buffer, &t))
            exit(2);
        pthread_mutex_lock(&g_mu);
        while (g_queued == QUEUE)
            pthread_cond_wait(&g_cv, &g_mu);
        g_queue[(g_head + g_queued++) % QUEUE] = (item){t, filled, b.buffer, value};
        pthread_cond_broadcast(&g_cv);
        pthread_mutex_unlock(&g_mu);
    }
}

static void *consumer(void *arg)
{
    (void)arg;
    unsigned char *bytes; /* one pinned byte per item: a copy pending on one stream is never overwritten */
    fw_check(cudaMallocHost((void **)&bytes, (size_t)g_items), "pipeline", "pinned");
    for (int mine = 0;; mine++) {
        pthread_mutex_lock(&g_mu);
        while (g_queued == 0 && g_consumed < g_items)
            pthread_cond_wait(&g_cv, &g_mu);
        if (g_consumed >= g_items) {
            pthread_mutex_unlock(&g_mu);
            return NULL;
        }
        item it = g_queue[g_head];
        unsigned char *byte = bytes + g_consumed++;
        g_head = (g_head + 1) % QUEUE;
        g_queued--;
        pthread_cond_broadcast(&g_cv);
        pthread_mutex_unlock(&g_mu);
        pool_array *a;
        if (MXNDArrayFromDLPack(it.t, (void **)&a))
            exit(2);
        pool_wait_event(a, it.filled);
        pool_read_last(a, byte);
        cudaEvent_t ready = NULL;
        if (g_sync_every && mine % g_sync_every == 0) {
            pool_sync(a);
            if (*byte != it.value)
                __atomic_add_fetch(&g_wrong, 1, __ATOMIC_RELAXED);
        } else {
            ready = pool_event(a);
        }
        pool_release(a);
        pthread_mutex_lock(&g_mu);
        g_pool[g_nfree++] = (free_buffer){it.buffer, ready};
        pthread_cond_broadcast(&g_cv);
        pthread_mutex_unlock(&g_mu);
    }
}

int main(int argc, char **argv)
{
    if (argc < 5) {
        fprintf(stderr, "usage: loader_pipeline loaders consumers items stream-kind [sync-every [buffers]]\n");
        return 2;
    }
    int loaders = atoi(argv[1]), consumers = atoi(argv[2]);
    fw_stream_kind kind = (fw_stream_kind)atoi(argv[4]);
    g_items = atoi(argv[3]);
    if (argc > 5)
        g_sync_every = atoi(argv[5]);
    int buffers = argc > 6 ? atoi(argv[6]) : 6;
    if (loaders < 1 || consumers < 1 || loaders + consumers > 64 || g_items < 1 || buffers < 1 || buffers > MAX_POOL)
        return 2;
    pool_set_import_kind(kind);
    for (int i = 0; i < buffers; i++)
        g_pool[i] = (free_buffer){pool_make(BYTES, kind), NULL};
    g_nfree = buffers;
    pthread_t threads[64];
    int n = 0;
    for (int i = 0; i < loaders; i++)
        pthread_create(&threads[n++], NULL, loader, NULL);
    for (int i = 0; i < consumers; i++)
        pthread_create(&threads[n++], NULL, consumer, NULL);
    for (int i = 0; i < n; i++)
        pthread_join(threads[i], NULL);
    fw_check(cudaDeviceSynchronize(), "pipeline", "synchronize");
    printf("exchanges: %d wrong: %d\n", g_items, g_wrong);
    return 0;
}
