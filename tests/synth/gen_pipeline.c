/* gen_pipeline SEED synced|racy [--print]: one generated data-loader pipeline, made from SEED, in
 * the shape of users' programs (a DataLoader, DALI, an inference server).
 *
 * Loader threads (2-4, up to 8 in wide programs) take a buffer from a pool of 6 (each buffer lives
 * on a stream of its own kind: the legacy stream, the loader's per-thread stream, a blocking or a
 * non-blocking stream; on one of two devices; some in pinned host memory), fill it after a random
 * delay (on the host, or a slow kernel before the write; the write a kernel or a memset), export
 * it through the fake MXNet's legacy C API (MXNDArrayToDLPack) and push it on a bounded host
 * queue (a mutex and a condition variable, which dlsync cannot see). Consumer threads (2-4, up to 8)
 * pop an item, import it (the fake TVM's TVMArrayFromDLPack) on a stream of a random kind (the
 * legacy stream, the thread's per-thread stream, or one created for the item and destroyed after
 * it with its work pending) of either device, read it after a random delay (a kernel, or an
 * asynchronous copy to pinned memory; pinned buffers are read on the host too), release it and
 * put the buffer back in the pool, for any loader to fill again. Released export structs are
 * handed to the next export (mx_reuse_exports), so DLManagedTensor addresses come round on
 * other threads.
 *
 * Each item has two hazards: the read before the fill, and the next fill before the read.
 * `synced`: the program orders both by hand: the loader records an event after the fill and the
 * consumer's stream waits for it after the handoff (a pinned buffer: the consumer synchronizes
 * with that event before its host read, before or after the import); the consumer records an
 * event after its read, which the loader's stream waits for before the buffer's next fill, or
 * synchronizes its stream.
 * `racy`: each item leaves out one, both or neither, and one buffer at least is on a non-blocking
 * stream and has an item that leaves out both.
 *
 * The trace's notes (tests/synth/oracle.h) name each item's exchange L<loader>i<item>: export,
 * fill, import, hostread, use, release. Prints "exports N released M" (M deleters reached the producer:
 * all N must) and "reads N wrong W" (W reads that did not see their item's
 * value; every read of a synced program must), one "wrong: ..." line per wrong read before it;
 * --print first prints the program. Exits 0, or 2 on a CUDA error. */
#define GEN_NAME "gen_pipeline"
#include "cudasim.h"
#include "fakefw.h"
#include "gen_common.h"
#include "scen_backend.h"

#include <cuda.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define N 64 /* floats per buffer */
#define POOL 6
#define MAX_SIDE 8 /* loaders, consumers */
#define MAX_ITEMS 12
#define DEVICES 2
#define SLOW_US 300 /* a slow fill's kernel before the write */
#define MAX_QUEUE 4

typedef enum { K_LEGACY, K_PER_THREAD, K_BLOCKING, K_NON_BLOCKING, K_COUNT } kind;
static const char *const kind_name[] = {"legacy", "per-thread", "blocking", "non-blocking"};

/* What orders an item by hand: bit 0 the read after the fill, bit 1 the next fill after the read. */
enum { SYNC_FILL = 1, SYNC_READ = 2 };

typedef struct {
    mx_array *a;
    int dev, host_visible;
    kind k;
    cudaStream_t s;            /* blocking and non-blocking: its own (legacy, per-thread: the filler's) */
    cudaEvent_t filled;        /* recorded after each fill (on the buffer's device) */
    cudaEvent_t read[DEVICES]; /* recorded after a read on a stream of that device */
    int read_dev;              /* the device whose `read` event the next fill waits for, or -1 */
} buffer;

/* One item as planned by its loader, and what its consumer did. */
typedef struct {
    unsigned fill_delay, read_delay; /* host microseconds */
    int slow, memset_fill;           /* a slow kernel before the fill; a memset as the fill */
    int sync;                        /* SYNC_* */
    int read_by_copy, sync_stream;   /* the consumer reads by a copy; synchronizes instead of an event */
    int host_sync_first;             /* pinned: the consumer waits for the fill before the import */
    kind ck;                         /* the consumer's stream */
    int cdev;
    float value;
    char label[24]; /* its exchange in the trace's notes */
    /* filled in by the run */
    int buf;
    tvm_array *h;
    float *copy; /* the copy's pinned destination */
    float host_seen;
} item;

typedef struct {
    int id, nitems;
    item it[MAX_ITEMS];
} loader;

static buffer g_pool[POOL];
static int g_free[POOL], g_nfree; /* the pool: buffers not in use */
static loader g_loaders[MAX_SIDE];
static int g_nloaders, g_nconsumers, g_queue_cap, g_loaders_left;
static item *g_queue[MAX_QUEUE];
static DLManagedTensor *g_queue_t[MAX_QUEUE];
static int g_qhead, g_qlen;
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_cv = PTHREAD_COND_INITIALIZER;
static CUfunction g_write, g_delay;
static int g_racy;
static int g_forced; /* racy: the item that takes this buffer first orders nothing (-1: none) */
static pthread_barrier_t g_start;

static void pause_us(unsigned us)
{
    if (us) {
        struct timespec ts = {0, (long)us * 1000};
        nanosleep(&ts, NULL);
    }
}

/* ---- the plan ---- */

static void plan(uint64_t seed, int racy)
{
    uint64_t x = seed * 0x9e3779b97f4a7c15ull | 1;
    for (int i = 0; i < 4; i++)
        next(&x);
    int wide = below(&x, 4) == 0;
    g_nloaders = wide ? 4 + (int)below(&x, MAX_SIDE - 3) : 2 + (int)below(&x, 3);
    g_nconsumers = wide ? 4 + (int)below(&x, MAX_SIDE - 3) : 2 + (int)below(&x, 3);
    g_queue_cap = 2 + (int)below(&x, MAX_QUEUE - 1);
    static const unsigned delays[] = {0, 0, 20, 100};
    for (int b = 0; b < POOL; b++) {
        buffer *f = &g_pool[b];
        f->dev = below(&x, 3) == 0;
        f->k = (kind)below(&x, K_COUNT);
        f->host_visible = below(&x, 6) == 0;
        f->read_dev = -1;
    }
    int nb = (int)below(&x, POOL); /* racy: this buffer is non-blocking, first in the pool, and the
                                      first item that takes it orders nothing (take_buffer) */
    if (racy) {
        g_pool[nb].k = K_NON_BLOCKING;
        g_pool[nb].host_visible = 0;
    }
    for (int l = 0; l < g_nloaders; l++) {
        loader *p = &g_loaders[l];
        p->id = l;
        p->nitems = (wide ? 2 : 4) + (int)below(&x, wide ? 5 : MAX_ITEMS - 3);
        for (int k = 0; k < p->nitems; k++) {
            item *it = &p->it[k];
            memset(it, 0, sizeof *it);
            it->fill_delay = delays[below(&x, 4)];
            it->read_delay = delays[below(&x, 4)];
            it->slow = below(&x, 4) == 0;
            it->memset_fill = below(&x, 3) == 0;
            it->sync = racy ? (int)below(&x, 4) : SYNC_FILL | SYNC_READ;
            it->read_by_copy = below(&x, 3) == 0;
            it->sync_stream = below(&x, 3) == 0;
            it->host_sync_first = below(&x, 2);
            it->ck = (kind)below(&x, K_COUNT);
            it->cdev = below(&x, 3) == 0;
            it->value = (float)(1000 * (l + 1) + k + 1);
            snprintf(it->label, sizeof it->label, "L%di%d", l, k);
            it->buf = -1;
        }
    }
    g_forced = racy ? nb : -1;
    g_nfree = 0;
    g_free[g_nfree++] = nb;
    for (int b = 0; b < POOL; b++)
        if (b != nb)
            g_free[g_nfree++] = b;
}

static void print_plan(void)
{
    printf("%d loaders, %d consumers, queue of %d\n", g_nloaders, g_nconsumers, g_queue_cap);
    for (int b = 0; b < POOL; b++)
        printf("buffer %d: %s%s of device %d\n", b, kind_name[g_pool[b].k], g_pool[b].host_visible ? " (pinned)" : "",
               g_pool[b].dev);
    for (int l = 0; l < g_nloaders; l++)
        for (int k = 0; k < g_loaders[l].nitems; k++) {
            const item *it = &g_loaders[l].it[k];
            printf("L%di%d: fill after %u us%s by %s, %s%s, read on %s of device %d after %u us by %s, then %s\n", l, k,
                   it->fill_delay, it->slow ? " and a slow kernel" : "", it->memset_fill ? "memset" : "kernel",
                   it->sync & SYNC_FILL ? "fill event waited for" : "fill not ordered",
                   it->sync & SYNC_READ ? "" : ", next fill not ordered", kind_name[it->ck], it->cdev, it->read_delay,
                   it->read_by_copy ? "copy" : "kernel",
                   it->sync & SYNC_READ ? (it->sync_stream ? "stream synchronize" : "read event") : "nothing");
            if (it->sync & SYNC_FILL)
                printf("L%di%d: a pinned buffer's fill is waited for on the host %s the import\n", l, k,
                       it->host_sync_first ? "before" : "after");
        }
}

/* ---- the run ---- */

/* The stream of buffer f for the calling thread (its device is current). */
static cudaStream_t buffer_stream(const buffer *f)
{
    return f->k == K_LEGACY ? cudaStreamLegacy : f->k == K_PER_THREAD ? cudaStreamPerThread : f->s;
}

/* Takes the pool's first buffer for item it (the racy program's forced item: see plan). */
static int take_buffer(item *it)
{
    pthread_mutex_lock(&g_lock);
    while (!g_nfree)
        pthread_cond_wait(&g_cv, &g_lock);
    int b = g_free[0];
    memmove(g_free, g_free + 1, (size_t)--g_nfree * sizeof *g_free);
    if (b == g_forced) { /* slow, unordered, on non-blocking streams */
        g_forced = -1;
        it->sync = 0;
        it->slow = 1;
        it->ck = K_NON_BLOCKING;
    }
    pthread_mutex_unlock(&g_lock);
    return b;
}

static void put_buffer(int b)
{
    pthread_mutex_lock(&g_lock);
    g_free[g_nfree++] = b;
    pthread_cond_broadcast(&g_cv);
    pthread_mutex_unlock(&g_lock);
}

static void fill(item *it, buffer *f, const char *x)
{
    ck(cudaSetDevice(f->dev), "cudaSetDevice");
    cudaStream_t s = buffer_stream(f);
    if ((it->sync & SYNC_READ) && f->read_dev >= 0) /* after the previous item's read */
        ck(cudaStreamWaitEvent(s, f->read[f->read_dev], 0), "cudaStreamWaitEvent");
    f->read_dev = -1;
    pause_us(it->fill_delay);
    float *d = mx_data(f->a);
    int n = N;
    float v = it->value;
    void *args[] = {&d, &n, &v};
    if (it->slow)
        ckd(cuLaunchKernel(g_delay, 1, 1, 1, 1, 1, 1, 0, (CUstream)s, args, NULL), "cuLaunchKernel");
    if (it->memset_fill) {
        uint32_t bits;
        memcpy(&bits, &v, sizeof bits);
        ckd(cuMemsetD32Async((CUdeviceptr)(uintptr_t)d, bits, N, (CUstream)s), "cuMemsetD32Async");
    } else {
        ckd(cuLaunchKernel(g_write, 1, 1, 1, 1, 1, 1, 0, (CUstream)s, args, NULL), "cuLaunchKernel");
    }
    cudasim_trace_note("fill %s", x);
    if (it->sync & SYNC_FILL)
        ck(cudaEventRecord(f->filled, s), "cudaEventRecord");
}

static void *loader_main(void *arg)
{
    loader *p = arg;
    pthread_barrier_wait(&g_start);
    for (int k = 0; k < p->nitems; k++) {
        item *it = &p->it[k];
        const char *x = it->label;
        it->buf = take_buffer(it);
        buffer *f = &g_pool[it->buf];
        fill(it, f, x);
        DLManagedTensor *t;
        if (MXNDArrayToDLPack(f->a, &t))
            exit(2);
        cudasim_trace_note("export %s %p %zu", x, t->dl_tensor.data, (size_t)N * sizeof(float));
        pthread_mutex_lock(&g_lock);
        while (g_qlen == g_queue_cap)
            pthread_cond_wait(&g_cv, &g_lock);
        int slot = (g_qhead + g_qlen++) % MAX_QUEUE;
        g_queue[slot] = it;
        g_queue_t[slot] = t;
        pthread_cond_broadcast(&g_cv);
        pthread_mutex_unlock(&g_lock);
    }
    pthread_mutex_lock(&g_lock);
    g_loaders_left--;
    pthread_cond_broadcast(&g_cv);
    pthread_mutex_unlock(&g_lock);
    return NULL;
}

/* The consumer's stream of kind k on the current device (created ones are destroyed by it). */
static cudaStream_t consumer_stream(kind k)
{
    cudaStream_t s = k == K_LEGACY ? cudaStreamLegacy : cudaStreamPerThread;
    if (k == K_BLOCKING || k == K_NON_BLOCKING)
        ck(cudaStreamCreateWithFlags(&s, k == K_NON_BLOCKING ? cudaStreamNonBlocking : 0), "cudaStreamCreateWithFlags");
    return s;
}

static void consume(item *it, DLManagedTensor *t)
{
    buffer *f = &g_pool[it->buf];
    const char *x = it->label;
    ck(cudaSetDevice(it->cdev), "cudaSetDevice");
    cudaStream_t cs = consumer_stream(it->ck);
    void *h;
    if (f->host_visible && (it->sync & SYNC_FILL) && it->host_sync_first)
        ck(cudaEventSynchronize(f->filled), "cudaEventSynchronize");
    cudasim_trace_note("import %s", x);
    if (TVMArrayFromDLPack(t, &h))
        exit(2);
    it->h = h;
    if (f->host_visible) { /* pinned memory is read on the host too */
        if ((it->sync & SYNC_FILL) && !it->host_sync_first)
            ck(cudaEventSynchronize(f->filled), "cudaEventSynchronize");
        cudasim_trace_note("hostread %s", x);
        it->host_seen = tvm_host_get(h, N - 1);
    }
    if (it->sync & SYNC_FILL)
        ck(cudaStreamWaitEvent(cs, f->filled, 0), "cudaStreamWaitEvent");
    pause_us(it->read_delay);
    if (it->read_by_copy) {
        ck(cudaMallocHost((void **)&it->copy, N * sizeof(float)), "cudaMallocHost");
        ck(cudaMemcpyAsync(it->copy, mx_data(f->a), N * sizeof(float), cudaMemcpyDefault, cs), "cudaMemcpyAsync");
    } else {
        tvm_read_on(h, cs);
    }
    cudasim_trace_note("use %s", x);
    if ((it->sync & SYNC_READ) && it->sync_stream) {
        ck(cudaStreamSynchronize(cs), "cudaStreamSynchronize");
    } else if (it->sync & SYNC_READ) {
        ck(cudaEventRecord(f->read[it->cdev], cs), "cudaEventRecord");
        f->read_dev = it->cdev; /* the buffer is this thread's until it is put back */
    }
    cudasim_trace_note("release %s", x);
    tvm_release(h);
    if (it->ck == K_BLOCKING || it->ck == K_NON_BLOCKING)
        ck(cudaStreamDestroy(cs), "cudaStreamDestroy"); /* its work may still be pending */
    put_buffer(it->buf);
}

static void *consumer_main(void *arg)
{
    (void)arg;
    pthread_barrier_wait(&g_start);
    for (;;) {
        pthread_mutex_lock(&g_lock);
        while (!g_qlen && g_loaders_left)
            pthread_cond_wait(&g_cv, &g_lock);
        if (!g_qlen) {
            pthread_mutex_unlock(&g_lock);
            return NULL;
        }
        item *it = g_queue[g_qhead];
        DLManagedTensor *t = g_queue_t[g_qhead];
        g_qhead = (g_qhead + 1) % MAX_QUEUE;
        g_qlen--;
        pthread_cond_broadcast(&g_cv);
        pthread_mutex_unlock(&g_lock);
        consume(it, t);
    }
}

static void make_pool(void)
{
    for (int b = 0; b < POOL; b++) {
        buffer *f = &g_pool[b];
        ck(cudaSetDevice(f->dev), "cudaSetDevice");
        f->a = mx_empty(N, f->host_visible ? kDLCUDAHost : kDLCUDA);
        if (f->k == K_BLOCKING || f->k == K_NON_BLOCKING)
            ck(cudaStreamCreateWithFlags(&f->s, f->k == K_NON_BLOCKING ? cudaStreamNonBlocking : 0),
               "cudaStreamCreateWithFlags");
        ck(cudaEventCreateWithFlags(&f->filled, cudaEventDisableTiming), "cudaEventCreateWithFlags");
        for (int d = 0; d < DEVICES; d++) {
            ck(cudaSetDevice(d), "cudaSetDevice");
            ck(cudaEventCreateWithFlags(&f->read[d], cudaEventDisableTiming), "cudaEventCreateWithFlags");
        }
    }
    for (int d = 0; d < DEVICES; d++) { /* every kernel loaded: a first load waits for its context */
        ck(cudaSetDevice(d), "cudaSetDevice");
        float *p = mx_data(g_pool[0].a);
        int n = 0;
        float v = 0;
        void *args[] = {&p, &n, &v};
        ckd(cuLaunchKernel(g_write, 1, 1, 1, 1, 1, 1, 0, NULL, args, NULL), "cuLaunchKernel");
        ckd(cuLaunchKernel(g_delay, 1, 1, 1, 1, 1, 1, 0, NULL, args, NULL), "cuLaunchKernel");
        scen_read(cudaStreamLegacy, p, p, 0);
        ck(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    }
}

/* Checks every read against its item's value; returns the wrong ones (printed). */
static int check_reads(int *reads)
{
    int wrong = 0;
    for (int l = 0; l < g_nloaders; l++)
        for (int k = 0; k < g_loaders[l].nitems; k++) {
            item *it = &g_loaders[l].it[k];
            const buffer *f = &g_pool[it->buf];
            float seen = it->copy ? it->copy[N - 1] : tvm_seen(it->h, 0, N - 1);
            int ok = 1;
            for (int i = 0; i < N; i++)
                ok &= (it->copy ? it->copy[i] : tvm_seen(it->h, 0, i)) == it->value;
            if (f->host_visible && it->host_seen != it->value) {
                ok = 0;
                seen = it->host_seen;
            }
            ++*reads;
            if (!ok) {
                wrong++;
                printf("wrong: L%di%d saw %g, not %g (buffer %d: %s of device %d; read on %s of device %d)\n", l, k,
                       seen, it->value, it->buf, kind_name[f->k], f->dev, kind_name[it->ck], it->cdev);
            }
            tvm_discard(it->h);
            if (it->copy)
                cudaFreeHost(it->copy);
        }
    return wrong;
}

int main(int argc, char **argv)
{
    if (argc < 3 || (strcmp(argv[2], "synced") && strcmp(argv[2], "racy"))) {
        fprintf(stderr, "usage: gen_pipeline SEED synced|racy [--print]\n");
        return 2;
    }
    uint64_t seed = strtoull(argv[1], NULL, 0);
    g_racy = strcmp(argv[2], "racy") == 0;
    plan(seed, g_racy);
    if (argc > 3 && strcmp(argv[3], "--print") == 0)
        print_plan();
    scen_devices(DEVICES);
    size_t sizes[] = {sizeof(float *), sizeof(int), sizeof(float)};
    g_write = cudasim_register_kernel("pipe_write", k_write, 3, sizes);
    g_delay = cudasim_register_kernel("pipe_delay", k_delay, 3, sizes);
    if (!g_write || !g_delay || cudasim_set_kernel_duration("pipe_delay", SLOW_US) != 0)
        return 2;
    mx_reuse_exports(1);
    make_pool();
    cudasim_trace_note("program gen_pipeline %llu %s", (unsigned long long)seed, argv[2]);
    g_loaders_left = g_nloaders;
    pthread_t tids[2 * MAX_SIDE];
    int n = 0;
    pthread_barrier_init(&g_start, NULL, (unsigned)(g_nloaders + g_nconsumers));
    for (int l = 0; l < g_nloaders; l++)
        if (pthread_create(&tids[n++], NULL, loader_main, &g_loaders[l]))
            return 2;
    for (int c = 0; c < g_nconsumers; c++)
        if (pthread_create(&tids[n++], NULL, consumer_main, NULL))
            return 2;
    for (int i = 0; i < n; i++)
        pthread_join(tids[i], NULL);
    for (int d = 0; d < DEVICES; d++) {
        ck(cudaSetDevice(d), "cudaSetDevice");
        ck(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    }
    int reads = 0, wrong = check_reads(&reads);
    printf("exports %d released %lu\n", reads, mx_exports_released()); /* one export per read */
    printf("reads %d wrong %d\n", reads, wrong);
    return 0;
}
