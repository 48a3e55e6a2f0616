/* gen_loader SEED synced|racy [--items N] [--print]: one generated data loader, made from SEED, in
 * the shape of a training job's input pipeline, and long: hundreds to thousands of items, so that
 * every bounded structure of dlsync's model (a stream's recent history, the forgotten streams, the
 * event and stream tables, the deferred queue) wraps many times. --items N sets the number of
 * items (the rest of the plan is SEED's).
 *
 * Loader threads (1-8) and consumer threads (1-8) share a bounded host queue (a mutex and a
 * condition variable, which dlsync cannot see) and a pool of 2-12 device buffers, each on a stream
 * of a kind from the program's set (a non-blocking or a blocking stream made at start, the
 * filling loader's per-thread stream, the legacy stream), all busy at once. A loader takes a free
 * buffer (most programs: the one put back last, still hot; others: the one put back first), makes its stream wait for the event the buffer's last consumer recorded (if any) and
 * destroys that event, fills the buffer (a memset, or a kernel; some fills after a slow kernel),
 * creates an event and records it, exports the buffer through the fake MXNet's legacy C API
 * (MXNDArrayToDLPack) and queues it with the event. A consumer pops it, imports it (the fake TVM's
 * TVMArrayFromDLPack) for a stream of a kind from the program's set (one made for this import and
 * destroyed after the release, its work pending; the thread's per-thread stream; the legacy
 * stream), makes that stream wait for the loader's event and destroys the event, reads the buffer
 * (its last byte copied to pinned host memory, or a kernel), then either synchronizes its stream
 * or creates and records an event for the next fill (the program's share of each), releases the
 * tensor and puts the buffer back in the pool with that event, for any loader to fill again.
 * Released export structs are handed to the next export (mx_reuse_exports), so DLManagedTensor
 * addresses come round on other threads; events and streams are made and destroyed per item, so
 * their handles come round too.
 *
 * `synced`: every hazard is ordered by the program as above. `racy`: a few items (1 in 8 to 1 in
 * 64) drop the fill's event, the consumer's wait for it, or the handback (no event, no
 * synchronize); the first item on the pool's first buffer (non-blocking, read on a non-blocking
 * stream made for it, after a slow kernel) drops both, so every racy program has a race.
 *
 * The trace's notes (tests/synth/oracle.h) name each item's exchange L<loader>i<item>: export,
 * fill, import, use, release. Prints "exports N released M" (M deleters reached the producer: all
 * N must) and "reads N wrong W" (W reads that did not see their item's bytes; every read of a
 * synced program must), one "wrong: ..." line per wrong read before it (at most 20); --print first
 * prints the plan. Exits 0, or 2 on a CUDA error. */
#define GEN_NAME "gen_loader"
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
#define MAX_POOL 12
#define MAX_SIDE 8 /* loaders, consumers */
#define MAX_QUEUE 8
#define SLOW_US 200 /* a slow fill's kernel before the write */

typedef enum { K_NON_BLOCKING, K_BLOCKING, K_PER_THREAD, K_LEGACY, K_COUNT } kind;
static const char *const kind_name[] = {"non-blocking", "blocking", "per-thread", "legacy"};

/* What orders an item by hand: bit 0 the read after the fill (the fill's event and the consumer's
 * wait for it), bit 1 the next fill after the read (the handback). A racy item drops one; DROP_EVENT
 * says that a dropped fill ordering leaves out the event itself, not only the wait. */
enum { SYNC_FILL = 1, SYNC_READ = 2, DROP_EVENT = 4 };

typedef struct {
    mx_array *a;
    kind k;
    cudaStream_t s;       /* non-blocking and blocking: its own (per-thread, legacy: the filler's) */
    cudaEvent_t handback; /* recorded by the buffer's last consumer, or NULL */
    unsigned char value;  /* the byte of its latest fill */
} buffer;

typedef struct {
    int sync;              /* SYNC_*, DROP_EVENT */
    int slow, kernel_fill; /* a slow kernel before the fill; a kernel as the fill (else a memset) */
    int read_by_kernel;    /* else a copy of the last byte to pinned memory */
    int sync_stream;       /* the handback: a stream synchronize, else an event */
    unsigned delay_us;     /* the consumer's pause before its read */
    kind ck;               /* the consumer's stream */
    char label[24];        /* its exchange in the trace's notes */
    /* filled in by the run */
    int buf;
    unsigned char value;
    cudaEvent_t filled;
    DLManagedTensor *t;
    tvm_array *h;
    unsigned char *copy; /* the copy's pinned destination (one byte of g_pinned) */
} item;

typedef struct {
    int id, nitems;
    item *it;
} loader;

static buffer g_pool[MAX_POOL];
static int g_npool;
static int g_free[MAX_POOL], g_nfree; /* the pool: buffers not in use, in the order put back */
static int g_lifo;                    /* the pool hands out the buffer put back last (else the one put back first) */
static loader g_loaders[MAX_SIDE];
static int g_nloaders, g_nconsumers, g_queue_cap, g_loaders_left;
static unsigned g_buffer_kinds, g_consumer_kinds; /* bit k: kind k is in the program's set */
static item *g_queue[MAX_QUEUE];
static int g_qhead, g_qlen;
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_cv = PTHREAD_COND_INITIALIZER;
static CUfunction g_write, g_delay;
static int g_forced; /* racy: the item that takes this buffer first orders nothing (-1: none) */
static pthread_barrier_t g_start;
static unsigned char *g_pinned; /* one byte per item, allocated before the threads start */

static void pause_us(unsigned us)
{
    if (us) {
        struct timespec ts = {0, (long)us * 1000};
        nanosleep(&ts, NULL);
    }
}

/* ---- the plan ---- */

/* A kind from set `kinds` (bit k: kind k). */
static kind pick_kind(uint64_t *x, unsigned kinds)
{
    kind k;
    do
        k = (kind)below(x, K_COUNT);
    while (!(kinds & (1u << k)));
    return k;
}

/* A set of stream kinds: one kind alone (most often non-blocking, the issue's), or several. */
static unsigned pick_kinds(uint64_t *x)
{
    switch (below(x, 6)) {
    case 0:
    case 1:
        return 1u << K_NON_BLOCKING;
    case 2:
        return 1u << (1 + below(x, K_COUNT - 1));
    default: {
        unsigned k = (unsigned)below(x, 1u << K_COUNT);
        return k ? k : (1u << K_COUNT) - 1;
    }
    }
}

static void plan(uint64_t seed, int racy, long items)
{
    uint64_t x = seed * 0x9e3779b97f4a7c15ull | 1;
    for (int i = 0; i < 4; i++)
        next(&x);
    static const int sides[] = {1, 2, 2, 2, 3, 4, 6, 8};
    g_nloaders = sides[below(&x, 8)];
    g_nconsumers = sides[below(&x, 8)];
    g_npool = 2 + (int)below(&x, MAX_POOL - 1);
    g_queue_cap = 1 + (int)below(&x, MAX_QUEUE);
    g_lifo = below(&x, 4) != 0;
    g_buffer_kinds = pick_kinds(&x);
    g_consumer_kinds = pick_kinds(&x);
    static const long lengths[] = {100, 300, 1000, 3000};
    long length = lengths[below(&x, 4)] + (long)below(&x, 1000); /* a length class, a length within it */
    items = items > 0 ? items : length;                          /* the rest of the plan is the seed's either way */
    unsigned sync_share = below(&x, 6);                          /* the consumer synchronizes 0, 1 in 5, ... 5 in 5 */
    unsigned drop_every = 8u << below(&x, 4);                    /* racy: 1 item in 8 .. 64 drops an ordering */
    for (int b = 0; b < g_npool; b++) {
        g_pool[b].k = pick_kind(&x, g_buffer_kinds);
        g_pool[b].value = (unsigned char)(b * 20 + 1);
    }
    if (racy)
        g_pool[0].k = K_NON_BLOCKING;
    for (int l = 0; l < g_nloaders; l++) {
        loader *p = &g_loaders[l];
        p->id = l;
        p->nitems = (int)(items / g_nloaders + (l < items % g_nloaders));
        p->it = calloc((size_t)p->nitems + 1, sizeof *p->it);
        if (!p->it)
            exit(2);
        for (int k = 0; k < p->nitems; k++) {
            item *it = &p->it[k];
            it->sync = SYNC_FILL | SYNC_READ;
            if (racy && below(&x, drop_every) == 0)
                it->sync = (int)below(&x, 3) | (below(&x, 2) ? DROP_EVENT : 0); /* 0, 1 or 2 */
            it->slow = below(&x, 8) == 0;
            it->kernel_fill = below(&x, 4) == 0;
            it->read_by_kernel = below(&x, 4) == 0;
            it->sync_stream = below(&x, 5) < sync_share;
            it->delay_us = below(&x, 8) == 0 ? 20 : 0;
            it->ck = pick_kind(&x, g_consumer_kinds);
            snprintf(it->label, sizeof it->label, "L%di%d", l, k);
            it->buf = -1;
        }
    }
    g_forced = racy ? 0 : -1;
    g_nfree = 0;
    for (int b = 0; b < g_npool; b++) /* buffer 0 taken first */
        g_free[g_nfree++] = g_lifo ? g_npool - 1 - b : b;
}

static void print_kinds(const char *what, unsigned kinds)
{
    printf("%s:", what);
    for (int k = 0; k < K_COUNT; k++)
        if (kinds & (1u << k))
            printf(" %s", kind_name[k]);
    printf("\n");
}

static void print_plan(void)
{
    long items = 0, handbacks = 0, drops = 0;
    for (int l = 0; l < g_nloaders; l++)
        for (int k = 0; k < g_loaders[l].nitems; k++) {
            const item *it = &g_loaders[l].it[k];
            items++;
            handbacks += (it->sync & SYNC_READ) && !it->sync_stream;
            drops += (it->sync & (SYNC_FILL | SYNC_READ)) != (SYNC_FILL | SYNC_READ);
        }
    printf("%d loaders, %d consumers, queue of %d, pool of %d (%s), %ld items (%ld handed back by event, %ld "
           "with an ordering dropped)\n",
           g_nloaders, g_nconsumers, g_queue_cap, g_npool,
           g_lifo ? "last put back first out" : "first put back first out", items, handbacks, drops);
    print_kinds("buffer streams", g_buffer_kinds);
    print_kinds("consumer streams", g_consumer_kinds);
    for (int b = 0; b < g_npool; b++)
        printf("buffer %d: %s\n", b, kind_name[g_pool[b].k]);
    for (int l = 0; l < g_nloaders; l++)
        for (int k = 0; k < g_loaders[l].nitems; k++) {
            const item *it = &g_loaders[l].it[k];
            if ((it->sync & (SYNC_FILL | SYNC_READ)) == (SYNC_FILL | SYNC_READ))
                continue;
            printf("L%di%d: %s%s\n", l, k,
                   it->sync & SYNC_FILL    ? ""
                   : it->sync & DROP_EVENT ? "no fill event; "
                                           : "fill event not waited for; ",
                   it->sync & SYNC_READ ? "" : "no handback");
        }
}

/* ---- the run ---- */

/* The stream of buffer f for the calling thread. */
static cudaStream_t buffer_stream(const buffer *f)
{
    return f->k == K_LEGACY ? cudaStreamLegacy : f->k == K_PER_THREAD ? cudaStreamPerThread : f->s;
}

/* Takes the pool's first free buffer for item it (the racy program's forced item: see plan). */
static int take_buffer(item *it)
{
    pthread_mutex_lock(&g_lock);
    while (!g_nfree)
        pthread_cond_wait(&g_cv, &g_lock);
    int b = g_free[g_lifo ? g_nfree - 1 : 0];
    if (!g_lifo)
        memmove(g_free, g_free + 1, (size_t)(g_nfree - 1) * sizeof *g_free);
    g_nfree--;
    if (b == g_forced) { /* slow, unordered, on non-blocking streams */
        g_forced = -1;
        it->sync = DROP_EVENT;
        it->slow = 1;
        it->ck = K_NON_BLOCKING;
    }
    pthread_mutex_unlock(&g_lock);
    return b;
}

static void put_buffer(int b, cudaEvent_t handback)
{
    pthread_mutex_lock(&g_lock);
    g_pool[b].handback = handback;
    g_free[g_nfree++] = b;
    pthread_cond_broadcast(&g_cv);
    pthread_mutex_unlock(&g_lock);
}

static void fill(item *it, buffer *f)
{
    cudaStream_t s = buffer_stream(f);
    if (f->handback) { /* after the previous item's read */
        ck(cudaStreamWaitEvent(s, f->handback, 0), "cudaStreamWaitEvent");
        ck(cudaEventDestroy(f->handback), "cudaEventDestroy");
        f->handback = NULL;
    }
    f->value = (unsigned char)(f->value % 126 + 1); /* never the previous fill's; a normal float's bytes */
    it->value = f->value;
    float *d = mx_data(f->a);
    if (it->slow) {
        void *args[] = {&d, &(int){0}, &(float){0}};
        ckd(cuLaunchKernel(g_delay, 1, 1, 1, 1, 1, 1, 0, (CUstream)s, args, NULL), "cuLaunchKernel");
    }
    if (it->kernel_fill) {
        int n = N;
        float v;
        memset(&v, it->value, sizeof v);
        void *args[] = {&d, &n, &v};
        ckd(cuLaunchKernel(g_write, 1, 1, 1, 1, 1, 1, 0, (CUstream)s, args, NULL), "cuLaunchKernel");
    } else {
        ck(cudaMemsetAsync(d, it->value, N * sizeof(float), s), "cudaMemsetAsync");
    }
    cudasim_trace_note("fill %s", it->label);
    if ((it->sync & SYNC_FILL) || !(it->sync & DROP_EVENT)) {
        ck(cudaEventCreateWithFlags(&it->filled, cudaEventDisableTiming), "cudaEventCreateWithFlags");
        ck(cudaEventRecord(it->filled, s), "cudaEventRecord");
    }
}

static void *loader_main(void *arg)
{
    loader *p = arg;
    ck(cudaSetDevice(0), "cudaSetDevice"); /* the driver API's calls need the thread's context */
    pthread_barrier_wait(&g_start);
    for (int k = 0; k < p->nitems; k++) {
        item *it = &p->it[k];
        it->buf = take_buffer(it);
        buffer *f = &g_pool[it->buf];
        fill(it, f);
        if (MXNDArrayToDLPack(f->a, &it->t))
            exit(2);
        cudasim_trace_note("export %s %p %zu", it->label, it->t->dl_tensor.data, (size_t)N * sizeof(float));
        pthread_mutex_lock(&g_lock);
        while (g_qlen == g_queue_cap)
            pthread_cond_wait(&g_cv, &g_lock);
        g_queue[(g_qhead + g_qlen++) % MAX_QUEUE] = it;
        pthread_cond_broadcast(&g_cv);
        pthread_mutex_unlock(&g_lock);
    }
    pthread_mutex_lock(&g_lock);
    g_loaders_left--;
    pthread_cond_broadcast(&g_cv);
    pthread_mutex_unlock(&g_lock);
    return NULL;
}

static void consume(item *it)
{
    buffer *f = &g_pool[it->buf];
    cudaStream_t cs = it->ck == K_LEGACY ? cudaStreamLegacy : cudaStreamPerThread;
    int made = it->ck == K_NON_BLOCKING || it->ck == K_BLOCKING;
    if (made)
        ck(cudaStreamCreateWithFlags(&cs, it->ck == K_NON_BLOCKING ? cudaStreamNonBlocking : cudaStreamDefault),
           "cudaStreamCreateWithFlags");
    cudasim_trace_note("import %s", it->label);
    void *h;
    if (TVMArrayFromDLPack(it->t, &h))
        exit(2);
    it->h = h;
    if (it->filled) {
        if (it->sync & SYNC_FILL)
            ck(cudaStreamWaitEvent(cs, it->filled, 0), "cudaStreamWaitEvent");
        ck(cudaEventDestroy(it->filled), "cudaEventDestroy");
    }
    pause_us(it->delay_us);
    if (it->read_by_kernel) {
        tvm_read_on(h, cs);
    } else {
        ck(cudaMemcpyAsync(it->copy, (char *)mx_data(f->a) + N * sizeof(float) - 1, 1, cudaMemcpyDeviceToHost, cs),
           "cudaMemcpyAsync");
    }
    cudasim_trace_note("use %s", it->label);
    cudaEvent_t handback = NULL;
    if ((it->sync & SYNC_READ) && it->sync_stream) {
        ck(cudaStreamSynchronize(cs), "cudaStreamSynchronize");
    } else if (it->sync & SYNC_READ) {
        ck(cudaEventCreateWithFlags(&handback, cudaEventDisableTiming), "cudaEventCreateWithFlags");
        ck(cudaEventRecord(handback, cs), "cudaEventRecord");
    }
    cudasim_trace_note("release %s", it->label);
    tvm_release(h);
    if (made)
        ck(cudaStreamDestroy(cs), "cudaStreamDestroy"); /* its work may still be pending */
    put_buffer(it->buf, handback);
}

static void *consumer_main(void *arg)
{
    (void)arg;
    ck(cudaSetDevice(0), "cudaSetDevice");
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
        g_qhead = (g_qhead + 1) % MAX_QUEUE;
        g_qlen--;
        pthread_cond_broadcast(&g_cv);
        pthread_mutex_unlock(&g_lock);
        consume(it);
    }
}

static void make_pool(void)
{
    for (int b = 0; b < g_npool; b++) {
        buffer *f = &g_pool[b];
        f->a = mx_empty(N, kDLCUDA);
        if (f->k == K_BLOCKING || f->k == K_NON_BLOCKING)
            ck(cudaStreamCreateWithFlags(&f->s, f->k == K_NON_BLOCKING ? cudaStreamNonBlocking : cudaStreamDefault),
               "cudaStreamCreateWithFlags");
    }
    float *p = mx_data(g_pool[0].a); /* every kernel loaded: a first load waits for its context */
    int n = 0;
    float v = 0;
    void *args[] = {&p, &n, &v};
    ckd(cuLaunchKernel(g_write, 1, 1, 1, 1, 1, 1, 0, NULL, args, NULL), "cuLaunchKernel");
    ckd(cuLaunchKernel(g_delay, 1, 1, 1, 1, 1, 1, 0, NULL, args, NULL), "cuLaunchKernel");
    scen_read(cudaStreamLegacy, p, p, 0);
    ck(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
}

/* Checks every read against its item's bytes; returns the wrong ones (the first 20 printed). */
static int check_reads(int *reads)
{
    int wrong = 0;
    for (int l = 0; l < g_nloaders; l++)
        for (int k = 0; k < g_loaders[l].nitems; k++) {
            item *it = &g_loaders[l].it[k];
            unsigned char seen;
            if (!it->read_by_kernel) {
                seen = *it->copy;
            } else {
                float v = tvm_seen(it->h, 0, N - 1);
                unsigned char bytes[sizeof v];
                memcpy(bytes, &v, sizeof v);
                seen = bytes[0] == bytes[1] && bytes[0] == bytes[2] && bytes[0] == bytes[3] ? bytes[0] : 0;
            }
            ++*reads;
            if (seen != it->value && ++wrong <= 20)
                printf("wrong: %s saw %u, not %u (buffer %d: %s; read on %s)\n", it->label, seen, it->value, it->buf,
                       kind_name[g_pool[it->buf].k], kind_name[it->ck]);
            tvm_discard(it->h);
        }
    return wrong;
}

int main(int argc, char **argv)
{
    if (argc < 3 || (strcmp(argv[2], "synced") && strcmp(argv[2], "racy"))) {
        fprintf(stderr, "usage: gen_loader SEED synced|racy [--items N] [--print]\n");
        return 2;
    }
    uint64_t seed = strtoull(argv[1], NULL, 0);
    int racy = strcmp(argv[2], "racy") == 0, print = 0;
    long items = 0;
    for (int i = 3; i < argc; i++) {
        if (strcmp(argv[i], "--print") == 0)
            print = 1;
        else if (strcmp(argv[i], "--items") == 0 && i + 1 < argc)
            items = strtol(argv[++i], NULL, 0);
    }
    plan(seed, racy, items);
    if (print)
        print_plan();
    scen_devices(1);
    size_t sizes[] = {sizeof(float *), sizeof(int), sizeof(float)};
    g_write = cudasim_register_kernel("loader_write", k_write, 3, sizes);
    g_delay = cudasim_register_kernel("loader_delay", k_delay, 3, sizes);
    if (!g_write || !g_delay || cudasim_set_kernel_duration("loader_delay", SLOW_US) != 0)
        return 2;
    mx_reuse_exports(1);
    make_pool();
    long total = 0;
    for (int l = 0; l < g_nloaders; l++)
        total += g_loaders[l].nitems;
    ck(cudaMallocHost((void **)&g_pinned, (size_t)total + 1), "cudaMallocHost");
    for (int l = 0, i = 0; l < g_nloaders; l++)
        for (int k = 0; k < g_loaders[l].nitems; k++)
            g_loaders[l].it[k].copy = &g_pinned[i++];
    cudasim_trace_note("program gen_loader %llu %s", (unsigned long long)seed, argv[2]);
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
    ck(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    int reads = 0, wrong = check_reads(&reads);
    printf("exports %d released %lu\n", reads, mx_exports_released()); /* one export per read */
    printf("reads %d wrong %d\n", reads, wrong);
    for (int l = 0; l < g_nloaders; l++)
        free(g_loaders[l].it);
    cudaFreeHost(g_pinned);
    return 0;
}
