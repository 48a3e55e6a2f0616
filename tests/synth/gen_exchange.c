/* gen_exchange SEED synced|racy [--print]: one generated exchange program, made from SEED.
 *
 * Up to 8 threads, each running its own legacy producer (the fake MXNet: MXNDArrayToDLPack) and
 * consumer (the fake TVM: TVMArrayFromDLPack) for up to 16 rounds, on two simulated devices. A
 * round: the producer writes a value of its own on a stream of any kind (legacy, per-thread,
 * blocking, non-blocking) on one device, now and then with a slow kernel; synchronizes or not;
 * exports; the consumer imports on a stream of any kind (pooled, or created for the round and
 * destroyed after it) on either device, reads after a random delay and releases, at once or
 * after waiting for its read. Memory comes from the producer's caching allocator, so a block a
 * consumer released is written again by the next round of any thread (release and reuse).
 * Between rounds, threads make random host synchronizations of every kind and small operations
 * on the legacy stream. Every other pair of seeds is legacy-heavy: eight threads on one
 * device's legacy, blocking and per-thread streams only. The simulator's jitter
 * (CUDASIM_JITTER_US) makes calls of different threads overlap in every order.
 *
 * `synced`: every round is ordered by the program itself (an event recorded after the write and
 * waited for by the consumer's stream, a host synchronization of every kind, a synchronous copy,
 * or the legacy stream's implicit rule), and every release waits for the read. `racy`: some
 * rounds leave the order out or get it wrong (an event recorded before the write, an unrelated
 * stream synchronized), release at once, and one round at least is a slow unordered write on
 * non-blocking streams. Host order says what every read must see: the value its round wrote.
 *
 * Prints "exports N released M" (M deleters reached the producer: all N must) and "reads N wrong W"
 * (W reads that saw something else), with one "wrong: ..." line per
 * wrong read before it; --print first prints the program, one line per round. Exits 0, or 2 on
 * a CUDA error. */
#define GEN_NAME "gen_exchange"
#include "cudasim.h"
#include "fakefw.h"
#include "gen_common.h"
#include "scen_backend.h"

#include <cuda.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define N 64 /* floats per tensor */
#define MAX_THREADS 8
#define MAX_ROUNDS 16
#define DEVICES 2
#define SLOW_US 2000 /* how long a slow write waits to start */

typedef enum { K_LEGACY, K_PER_THREAD, K_BLOCKING, K_NON_BLOCKING, K_COUNT } kind;
static const char *const kind_name[] = {"legacy", "per-thread", "blocking", "non-blocking"};

/* How a round orders the read after the write (the first three do not). */
typedef enum {
    S_NONE,               /* nothing */
    S_EVENT_BEFORE_WRITE, /* an event recorded before the write, waited for by the consumer's stream */
    S_OTHER_STREAM,       /* a synchronize of a stream the write is not on */
    S_EVENT,              /* an event recorded after the write, waited for by the consumer's stream */
    S_STREAM_SYNC,        /* cudaStreamSynchronize of the producer's stream */
    S_EVENT_SYNC,         /* cudaEventSynchronize of an event recorded after the write */
    S_DEVICE_SYNC,        /* cudaDeviceSynchronize on the producer's device */
    S_CTX_SYNC,           /* cuCtxSynchronize of the producer's context */
    S_STREAM_QUERY,       /* cudaStreamQuery until it says done */
    S_EVENT_QUERY,        /* cudaEventQuery of an event recorded after the write until it says done */
    S_SYNC_COPY,          /* a synchronous cudaMemcpy (the legacy stream waits for blocking streams) */
    S_IMPLICIT,           /* the legacy stream's rule, or one stream: the kinds order it */
    S_COUNT
} order;
static const char *const order_name[] = {"none",         "event-before-write", "other-stream", "event",
                                         "stream-sync",  "event-sync",         "device-sync",  "ctx-sync",
                                         "stream-query", "event-query",        "sync-copy",    "implicit"};

typedef struct {
    int pdev, cdev;
    kind pk, ck;
    int fresh;        /* the consumer's stream is created for the round */
    int host_visible; /* pinned host memory */
    int slow;         /* the write takes SLOW_US */
    unsigned delay;   /* microseconds before the read */
    order how;
    int wait_release; /* the consumer waits for its read before releasing */
    int sprinkle;     /* after the round: 0 nothing, 1 device sync, 2 legacy op, 3 query, 4 ctx sync */
    int forced;       /* the racy program's round that must race (see g_window) */
} round_plan;

typedef struct {
    int id;
    int nrounds;
    round_plan r[MAX_ROUNDS];
    float value[MAX_ROUNDS];
    float host_seen[MAX_ROUNDS]; /* what the host read of a host-visible tensor */
    tvm_array *h[MAX_ROUNDS];
    cudaStream_t pool[2][DEVICES][K_COUNT]; /* created streams (blocking, non-blocking): the producer's
                                               and the consumer's, per device */
} thread_plan;

/* The racy program's forced round holds this for writing from its write to its read, and every
 * other round holds it for reading: another thread's context synchronize or legacy-stream
 * operation could otherwise order the write before the read, and the reference would rightly
 * find the round ordered (host order is the calls' real time order). */
static pthread_rwlock_t g_window;

static thread_plan g_threads[MAX_THREADS];
static int g_nthreads;
static CUfunction g_write, g_delay;
static float *g_scratch[DEVICES]; /* device memory for the synchronous copies and legacy ops */
static pthread_barrier_t g_start;

/* 1 when the kinds alone order a read on ck after a write on pk (same device): the legacy
 * stream and a blocking one, or one default stream. */
static int kinds_order(kind pk, kind ck)
{
    int pb = pk == K_BLOCKING || pk == K_PER_THREAD, cb = ck == K_BLOCKING || ck == K_PER_THREAD;
    return (pk == K_LEGACY && (cb || ck == K_LEGACY)) || (pb && ck == K_LEGACY) ||
           (pk == K_PER_THREAD && ck == K_PER_THREAD);
}

/* A round the program orders itself. Host-visible memory is ordered on the host only (the
 * consumer may read it there). */
static order synced_order(uint64_t *x, const round_plan *r)
{
    for (;;) {
        order o = (order)(S_EVENT + below(x, S_COUNT - S_EVENT));
        if (r->host_visible && (o == S_EVENT || o == S_IMPLICIT))
            continue;
        if (o == S_IMPLICIT && (r->pdev != r->cdev || r->fresh || !kinds_order(r->pk, r->ck)))
            continue;
        if (o == S_SYNC_COPY && r->pk == K_NON_BLOCKING)
            continue; /* the legacy stream does not wait for non-blocking streams */
        return o;
    }
}

/* A family of programs: every kind of stream on two devices, or (legacy-heavy) eight threads on
 * one device's legacy, blocking and per-thread streams, with legacy-stream operations between
 * rounds: the shape of a CuPy program, whose default stream is the legacy stream and whose new
 * streams are blocking. */
typedef enum { F_MIXED, F_LEGACY_HEAVY } family;
static family g_family;

static kind any_kind(uint64_t *x)
{
    if (g_family == F_LEGACY_HEAVY)
        return (kind)below(x, K_NON_BLOCKING);
    return (kind)below(x, K_COUNT);
}

static void plan_round(uint64_t *x, round_plan *r, int racy, int force_race)
{
    memset(r, 0, sizeof *r);
    int heavy = g_family == F_LEGACY_HEAVY;
    r->pdev = !heavy && below(x, 4) == 0;
    r->cdev = !heavy && below(x, 3) == 0 ? 1 - r->pdev : r->pdev;
    r->pk = any_kind(x);
    r->ck = any_kind(x);
    r->fresh = (r->ck == K_BLOCKING || r->ck == K_NON_BLOCKING) && below(x, 2);
    r->host_visible = !heavy && below(x, 8) == 0;
    r->slow = below(x, heavy ? 2 : 3) == 0;
    static const unsigned delays[] = {0, 0, 20, 100};
    r->delay = delays[below(x, 4)];
    r->sprinkle = heavy ? (below(x, 3) ? 2 : 1 + below(x, 4)) : below(x, 3) ? 0 : 1 + below(x, 4);
    if (force_race) { /* slow, unordered, on streams no rule orders */
        r->forced = 1;
        r->pk = r->ck = heavy ? K_BLOCKING : K_NON_BLOCKING;
        r->host_visible = 0;
        r->slow = 1;
        r->how = S_NONE;
        r->wait_release = below(x, 2);
        return;
    }
    if (racy && below(x, 3) == 0) {
        static const order wrong[] = {S_NONE, S_NONE, S_NONE, S_EVENT_BEFORE_WRITE, S_OTHER_STREAM};
        r->how = wrong[below(x, 5)];
        r->wait_release = below(x, 3) == 0;
    } else {
        r->how = synced_order(x, r);
        r->wait_release = !racy || below(x, 2);
    }
}

static void plan(uint64_t seed, int racy)
{
    uint64_t x = seed * 0x9e3779b97f4a7c15ull | 1;
    for (int i = 0; i < 4; i++)
        next(&x);
    g_family = seed / 2 % 2 ? F_LEGACY_HEAVY : F_MIXED;
    g_nthreads = g_family == F_LEGACY_HEAVY ? MAX_THREADS : 1 + (int)below(&x, MAX_THREADS);
    int forced = racy ? (int)below(&x, (unsigned)g_nthreads) : -1;
    for (int t = 0; t < g_nthreads; t++) {
        thread_plan *p = &g_threads[t];
        p->id = t;
        p->nrounds = 4 + (int)below(&x, MAX_ROUNDS - 3);
        int forced_round = t == forced ? (int)below(&x, (unsigned)p->nrounds) : -1;
        for (int k = 0; k < p->nrounds; k++) {
            plan_round(&x, &p->r[k], racy, k == forced_round);
            p->value[k] = (float)(1000 * (t + 1) + k + 1);
        }
    }
}

static void print_plan(void)
{
    printf("%s, %d threads\n", g_family == F_LEGACY_HEAVY ? "legacy-heavy" : "mixed", g_nthreads);
    for (int t = 0; t < g_nthreads; t++)
        for (int k = 0; k < g_threads[t].nrounds; k++) {
            const round_plan *r = &g_threads[t].r[k];
            printf("thread %d round %d: write %s%s on %s of device %d, %s, read on %s%s of device %d after %u us, "
                   "release %s, then %d\n",
                   t, k, r->slow ? "slow" : "fast", r->host_visible ? " (pinned)" : "", kind_name[r->pk], r->pdev,
                   order_name[r->how], r->fresh ? "a new " : "", kind_name[r->ck], r->cdev, r->delay,
                   r->wait_release ? "after the read" : "at once", r->sprinkle);
        }
}

enum { PRODUCER, CONSUMER };

/* The stream of kind k on device dev for `who` of thread p (created ones are pooled, each on its
 * own device whatever device is current; the default streams are the current device's, shared
 * by both). */
static cudaStream_t stream_of(thread_plan *p, int who, kind k, int dev)
{
    if (k == K_LEGACY)
        return cudaStreamLegacy;
    if (k == K_PER_THREAD)
        return cudaStreamPerThread;
    cudaStream_t *s = &p->pool[who][dev][k];
    if (!*s) {
        int current;
        ck(cudaGetDevice(&current), "cudaGetDevice");
        ck(cudaSetDevice(dev), "cudaSetDevice");
        ck(cudaStreamCreateWithFlags(s, k == K_NON_BLOCKING ? cudaStreamNonBlocking : 0), "cudaStreamCreateWithFlags");
        ck(cudaSetDevice(current), "cudaSetDevice");
    }
    return *s;
}

/* The producer's write of v on stream s; a slow one starts only after a kernel of SLOW_US (the
 * simulator writes when a kernel starts and lets its duration pass after). */
static void write_on(cudaStream_t s, float *p, float v, int slow)
{
    int n = N;
    void *args[] = {&p, &n, &v};
    if (slow)
        ckd(cuLaunchKernel(g_delay, 1, 1, 1, 1, 1, 1, 0, (CUstream)s, args, NULL), "cuLaunchKernel");
    ckd(cuLaunchKernel(g_write, 1, 1, 1, 1, 1, 1, 0, (CUstream)s, args, NULL), "cuLaunchKernel");
}

static void pause_us(unsigned us)
{
    if (us) {
        struct timespec ts = {0, (long)us * 1000};
        nanosleep(&ts, NULL);
    }
}

/* The producer's side of the ordering, after the write (e: an event of the producer's device). */
static void order_producer(const round_plan *r, cudaStream_t ps, cudaEvent_t e)
{
    switch (r->how) {
    case S_EVENT:
        ck(cudaEventRecord(e, ps), "cudaEventRecord");
        break;
    case S_STREAM_SYNC:
        ck(cudaStreamSynchronize(ps), "cudaStreamSynchronize");
        break;
    case S_EVENT_SYNC:
        ck(cudaEventRecord(e, ps), "cudaEventRecord");
        ck(cudaEventSynchronize(e), "cudaEventSynchronize");
        break;
    case S_DEVICE_SYNC:
        ck(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
        break;
    case S_CTX_SYNC:
        ckd(cuCtxSynchronize(), "cuCtxSynchronize");
        break;
    case S_STREAM_QUERY:
        while (cudaStreamQuery(ps) == cudaErrorNotReady)
            pause_us(10);
        break;
    case S_EVENT_QUERY:
        ck(cudaEventRecord(e, ps), "cudaEventRecord");
        while (cudaEventQuery(e) == cudaErrorNotReady)
            pause_us(10);
        break;
    case S_SYNC_COPY:
        ck(cudaMemcpy(g_scratch[r->pdev], g_scratch[r->pdev] + 1, sizeof(float), cudaMemcpyDeviceToDevice),
           "cudaMemcpy");
        break;
    default:
        break;
    }
}

/* Something between rounds: a host synchronization or a small legacy-stream operation. */
static void sprinkle(thread_plan *p, const round_plan *r)
{
    switch (r->sprinkle) {
    case 1:
        ck(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
        break;
    case 2:
        ck(cudaMemsetAsync(g_scratch[r->cdev] + 2 + p->id, 0, sizeof(float), cudaStreamLegacy), "cudaMemsetAsync");
        break;
    case 3:
        (void)cudaStreamQuery(stream_of(p, CONSUMER, K_BLOCKING, r->cdev));
        break;
    case 4:
        ckd(cuCtxSynchronize(), "cuCtxSynchronize");
        break;
    default:
        break;
    }
}

static void run_round(thread_plan *p, int k)
{
    const round_plan *r = &p->r[k];
    float v = p->value[k];
    ck(cudaSetDevice(r->pdev), "cudaSetDevice");
    cudaStream_t ps = stream_of(p, PRODUCER, r->pk, r->pdev);
    cudaEvent_t e = NULL;
    if (r->how == S_EVENT || r->how == S_EVENT_SYNC || r->how == S_EVENT_QUERY || r->how == S_EVENT_BEFORE_WRITE)
        ck(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), "cudaEventCreateWithFlags");
    mx_array *a = mx_empty(N, r->host_visible ? kDLCUDAHost : kDLCUDA);
    if (r->how == S_EVENT_BEFORE_WRITE)
        ck(cudaEventRecord(e, ps), "cudaEventRecord");
    if (r->forced)
        pthread_rwlock_wrlock(&g_window);
    write_on(ps, mx_data(a), v, r->slow);
    char x[32]; /* the exchange's label in the trace's notes (tests/synth/oracle.h) */
    snprintf(x, sizeof x, "t%dr%d", p->id, k);
    cudasim_trace_note("fill %s", x);
    order_producer(r, ps, e);
    DLManagedTensor *t;
    if (MXNDArrayToDLPack(a, &t))
        exit(2);
    cudasim_trace_note("export %s %p %zu", x, t->dl_tensor.data, (size_t)N * sizeof(float));
    mx_free(a);
    ck(cudaSetDevice(r->cdev), "cudaSetDevice");
    cudaStream_t cs;
    if (r->fresh)
        ck(cudaStreamCreateWithFlags(&cs, r->ck == K_NON_BLOCKING ? cudaStreamNonBlocking : 0),
           "cudaStreamCreateWithFlags");
    else
        cs = stream_of(p, CONSUMER, r->ck, r->cdev);
    void *h;
    cudasim_trace_note("import %s", x);
    if (TVMArrayFromDLPack(t, &h))
        exit(2);
    p->h[k] = h;
    if (r->host_visible) { /* the consumer may read host-visible memory on the host: it does */
        cudasim_trace_note("hostread %s", x);
        p->host_seen[k] = tvm_host_get(h, N - 1);
    }
    if (r->how == S_EVENT || r->how == S_EVENT_BEFORE_WRITE)
        ck(cudaStreamWaitEvent(cs, e, 0), "cudaStreamWaitEvent");
    if (r->how == S_OTHER_STREAM)
        ck(cudaStreamSynchronize(stream_of(p, CONSUMER, r->pk == K_BLOCKING ? K_NON_BLOCKING : K_BLOCKING, r->cdev)),
           "cudaStreamSynchronize");
    pause_us(r->delay);
    tvm_read_on(h, cs);
    cudasim_trace_note("use %s", x);
    if (r->forced)
        pthread_rwlock_unlock(&g_window);
    if (r->wait_release)
        ck(cudaStreamSynchronize(cs), "cudaStreamSynchronize");
    cudasim_trace_note("release %s", x); /* before: the deleter gives the block back to the cache */
    tvm_release(h);
    if (r->fresh)
        ck(cudaStreamDestroy(cs), "cudaStreamDestroy");
    ck(cudaSetDevice(r->pdev), "cudaSetDevice");
    if (e)
        ck(cudaEventDestroy(e), "cudaEventDestroy");
    sprinkle(p, r);
}

static void *thread_main(void *arg)
{
    thread_plan *p = arg;
    pthread_barrier_wait(&g_start);
    for (int k = 0; k < p->nrounds; k++) {
        if (!p->r[k].forced)
            pthread_rwlock_rdlock(&g_window);
        run_round(p, k);
        if (!p->r[k].forced)
            pthread_rwlock_unlock(&g_window);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 3 || (strcmp(argv[2], "synced") && strcmp(argv[2], "racy"))) {
        fprintf(stderr, "usage: gen_exchange SEED synced|racy [--print]\n");
        return 2;
    }
    uint64_t seed = strtoull(argv[1], NULL, 0);
    plan(seed, strcmp(argv[2], "racy") == 0);
    if (argc > 3 && strcmp(argv[3], "--print") == 0)
        print_plan();
    scen_devices(DEVICES);
    size_t sizes[] = {sizeof(float *), sizeof(int), sizeof(float)};
    g_write = cudasim_register_kernel("gen_write", k_write, 3, sizes);
    g_delay = cudasim_register_kernel("gen_delay", k_delay, 3, sizes);
    if (!g_write || !g_delay || cudasim_set_kernel_duration("gen_delay", SLOW_US) != 0)
        return 2;
    for (int d = 0; d < DEVICES; d++) { /* and every kernel loaded: a first load waits for its context */
        ck(cudaSetDevice(d), "cudaSetDevice");
        ck(cudaMalloc((void **)&g_scratch[d], (2 + MAX_THREADS) * sizeof(float)), "cudaMalloc");
        write_on(cudaStreamLegacy, g_scratch[d], 0, 1);
        scen_read(cudaStreamLegacy, g_scratch[d], g_scratch[d] + 1, 1);
        ck(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    }
    pthread_rwlockattr_t wa; /* the forced round must not wait for every other round to end */
    pthread_rwlockattr_init(&wa);
    pthread_rwlockattr_setkind_np(&wa, PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
    pthread_rwlock_init(&g_window, &wa);
    pthread_t tids[MAX_THREADS];
    pthread_barrier_init(&g_start, NULL, (unsigned)g_nthreads);
    for (int t = 0; t < g_nthreads; t++)
        if (pthread_create(&tids[t], NULL, thread_main, &g_threads[t]))
            return 2;
    for (int t = 0; t < g_nthreads; t++)
        pthread_join(tids[t], NULL);
    for (int d = 0; d < DEVICES; d++) {
        ck(cudaSetDevice(d), "cudaSetDevice");
        ck(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    }
    int reads = 0, wrong = 0;
    for (int t = 0; t < g_nthreads; t++)
        for (int k = 0; k < g_threads[t].nrounds; k++) {
            tvm_array *h = g_threads[t].h[k];
            float want = g_threads[t].value[k], seen = tvm_seen(h, 0, 0);
            int ok = 1;
            for (int i = 0; i < N; i++)
                ok &= tvm_seen(h, 0, i) == want;
            if (g_threads[t].r[k].host_visible && g_threads[t].host_seen[k] != want) {
                ok = 0;
                seen = g_threads[t].host_seen[k];
            }
            reads++;
            if (!ok) {
                wrong++;
                const round_plan *r = &g_threads[t].r[k];
                printf("wrong: thread %d round %d saw %g, not %g (%s write on %s of device %d, %s, read on %s of "
                       "device %d)\n",
                       t, k, seen, want, r->slow ? "slow" : "fast", kind_name[r->pk], r->pdev, order_name[r->how],
                       kind_name[r->ck], r->cdev);
            }
            tvm_discard(h);
        }
    printf("exports %d released %lu\n", reads, mx_exports_released()); /* one export per read */
    printf("reads %d wrong %d\n", reads, wrong);
    return 0;
}
