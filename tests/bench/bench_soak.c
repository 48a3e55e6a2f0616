/* Benchmark: whether dlsync's memory stays bounded by what is live over a long run, on the CUDA
 * simulator. The probe (this program run as a child) is a loader/consumer pipeline synchronized by
 * hand, as a careful author writes it: LOADERS threads take a free buffer of a recycled pool of
 * POOL buffers (the fake producer's arrays, tests/api/fakeprod.h), make the producer's side stream
 * wait for the buffer's last read (its `read` event, recorded by whichever consumer read it), write
 * it, export it (MXNDArrayToDLPack) and record its `written` event; CONSUMERS threads take a
 * written buffer, create a stream for the import, make it wait for `written`, read the tensor there
 * into the consumer's own output, record `read`, release the tensor and destroy the stream. The
 * output is written on a new stream at each import, so that stream first waits for the consumer's
 * previous read (its `mine` event): without it the writes of one consumer's output would race each
 * other, and a model that keeps what the program never ordered would keep every stream. Events are
 * made once per buffer and handed across threads. As a driver's queue does, the pipeline keeps at
 * most INFLIGHT exchanges enqueued and not done: a host function the consumer enqueues after its
 * read counts each one done, and a loader waits (on a condition variable, which dlsync does not
 * see) while INFLIGHT are not. The probe prints the heap it still holds once every exchange is
 * over, every stream destroyed and the device synchronized (mallinfo2's bytes in use), and its peak
 * RSS (VmHWM), in bytes.
 *
 * The parent runs the probe for SOAK1 and 10 * SOAK1 exchanges (BENCH_SOAK=<n> sets SOAK1; the
 * simulator gives each stream a thread, and a run of 100,000 streams made and destroyed exhausts
 * the threads it may start before their workers exit, even without the shim) without the shim and
 * under fix and check, and prints dlsync's extra heap held at the end (the probe's minus the run
 * without the shim: the state dlsync keeps of what is no longer live) at each length, bytes per
 * exchange between them, and the extra's growth from one length to the other, which a goal holds
 * (budget.h); beside it the extra peak RSS, which the simulator's own memory (it keeps every stream
 * it made) makes too noisy to hold; and the races check reported (the pipeline is ordered: each one
 * is a false report). Exits 1 when a probe failed. */
#include "../bench/budget.h"
#include "dls_test.h"
#include "fakeprod.h"

#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LOADERS 4
#define CONSUMERS 4
#define POOL 16
#define N 64
#define SOAK1 2000
#define INFLIGHT 64

/* A buffer of the pool, with its events and the tensor exported from it while it is in flight. */
typedef struct {
    fp_array *a;
    cudaEvent_t written, read;
    DLManagedTensor *t;
} buffer;

/* A bounded queue of buffer indices, under its own lock. */
typedef struct {
    int items[POOL + 1];
    int head, count;
    pthread_mutex_t lock;
    pthread_cond_t cv;
} queue;

static buffer g_pool[POOL];
static queue g_free = {.lock = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};
static queue g_ready = {.lock = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};
static int g_per_loader, g_per_consumer;
static pthread_mutex_t g_flight_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_flight_cv = PTHREAD_COND_INITIALIZER;
static long g_started, g_done; /* exchanges, under g_flight_lock */
static float *g_dst[CONSUMERS];
static cudaEvent_t g_mine[CONSUMERS]; /* a consumer's latest read into its output */

static void put(queue *q, int item)
{
    pthread_mutex_lock(&q->lock);
    q->items[(q->head + q->count++) % (POOL + 1)] = item;
    pthread_cond_signal(&q->cv);
    pthread_mutex_unlock(&q->lock);
}

static int take(queue *q)
{
    pthread_mutex_lock(&q->lock);
    while (!q->count)
        pthread_cond_wait(&q->cv, &q->lock);
    int item = q->items[q->head];
    q->head = (q->head + 1) % (POOL + 1);
    q->count--;
    pthread_mutex_unlock(&q->lock);
    return item;
}

/* Host function: one exchange's read is done. */
static void CUDART_CB exchange_done(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&g_flight_lock);
    g_done++;
    pthread_cond_broadcast(&g_flight_cv);
    pthread_mutex_unlock(&g_flight_lock);
}

static void *loader(void *arg)
{
    (void)arg;
    for (int i = 0; i < g_per_loader; i++) {
        pthread_mutex_lock(&g_flight_lock);
        while (g_started - g_done >= INFLIGHT)
            pthread_cond_wait(&g_flight_cv, &g_flight_lock);
        g_started++;
        pthread_mutex_unlock(&g_flight_lock);
        buffer *b = &g_pool[take(&g_free)];
        if (cudaStreamWaitEvent(fp_side_stream(), b->read, 0) != cudaSuccess || fp_write(b->a, (float)i) ||
            MXNDArrayToDLPack(b->a, &b->t) || cudaEventRecord(b->written, fp_side_stream()) != cudaSuccess)
            return arg;
        put(&g_ready, (int)(b - g_pool));
    }
    return NULL;
}

static void *consumer(void *arg)
{
    float *dst = g_dst[(intptr_t)arg];
    cudaEvent_t mine = g_mine[(intptr_t)arg];
    for (int i = 0; i < g_per_consumer; i++) {
        buffer *b = &g_pool[take(&g_ready)];
        cudaStream_t s;
        if (cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess ||
            cudaStreamWaitEvent(s, b->written, 0) != cudaSuccess || cudaStreamWaitEvent(s, mine, 0) != cudaSuccess ||
            fp_read(s, b->t->dl_tensor.data, dst, N) || cudaEventRecord(b->read, s) != cudaSuccess ||
            cudaEventRecord(mine, s) != cudaSuccess || cudaLaunchHostFunc(s, exchange_done, NULL) != cudaSuccess)
            return b;
        DLManagedTensor *t = b->t;
        b->t = NULL;
        t->deleter(t);
        if (cudaStreamDestroy(s) != cudaSuccess)
            return b;
        put(&g_free, (int)(b - g_pool));
    }
    return NULL;
}

/* Peak resident set of this process in bytes (VmHWM), or -1. */
static double peak_rss(void)
{
    char *status = dls_read_file("/proc/self/status");
    const char *hwm = status ? strstr(status, "VmHWM:") : NULL;
    double v = hwm ? atof(hwm + 6) * 1024 : -1;
    free(status);
    return v;
}

/* The probe: n exchanges through the pipeline; prints its peak RSS. */
static int probe(int n)
{
    g_per_loader = n / LOADERS;
    g_per_consumer = g_per_loader * LOADERS / CONSUMERS;
    for (int i = 0; i < POOL; i++) {
        if (!(g_pool[i].a = fp_new(N)) ||
            cudaEventCreateWithFlags(&g_pool[i].written, cudaEventDisableTiming) != cudaSuccess ||
            cudaEventCreateWithFlags(&g_pool[i].read, cudaEventDisableTiming) != cudaSuccess)
            return 2;
        put(&g_free, i);
    }
    for (int i = 0; i < CONSUMERS; i++)
        if (cudaMalloc((void **)&g_dst[i], N * sizeof(float)) != cudaSuccess ||
            cudaEventCreateWithFlags(&g_mine[i], cudaEventDisableTiming) != cudaSuccess)
            return 2;
    pthread_t l[LOADERS], c[CONSUMERS];
    for (int i = 0; i < LOADERS; i++)
        pthread_create(&l[i], NULL, loader, NULL);
    for (intptr_t i = 0; i < CONSUMERS; i++)
        pthread_create(&c[i], NULL, consumer, (void *)i);
    int failed = 0;
    for (int i = 0; i < LOADERS; i++) {
        void *r;
        pthread_join(l[i], &r);
        failed |= r != NULL;
    }
    for (int i = 0; i < CONSUMERS; i++) {
        void *r;
        pthread_join(c[i], &r);
        failed |= r != NULL;
    }
    if (failed || cudaDeviceSynchronize() != cudaSuccess) {
        fprintf(stderr, "bench_soak: the pipeline failed\n");
        return 2;
    }
    printf("%.0f %.0f\n", (double)mallinfo2().uordblks, peak_rss());
    return 0;
}

/* The probe's heap held at the end for n exchanges, without the shim (mode NULL) or in `mode`,
 * with in *rss its peak RSS and in *races the races check reported; -1 when it failed. */
static double run(const char *mode, int n, double *rss, int *races)
{
    char self[1024], shim[1024], cupti[1024], preload[2048], e_pre[2100], e_mode[64], e_n[64], e_cupti[1100];
    dls_build_path(self, sizeof self, "tests/bench_soak");
    dls_build_path(shim, sizeof shim, "lib/libdlsync.so");
    dls_build_path(cupti, sizeof cupti, "cudasim/libcupti.so.13");
    snprintf(e_pre, sizeof e_pre, "LD_PRELOAD=%s", mode ? dls_preload_value(preload, sizeof preload, shim) : "");
    snprintf(e_mode, sizeof e_mode, "DLSYNC_MODE=%s", mode ? mode : "");
    snprintf(e_n, sizeof e_n, "SOAK_CHILD=%d", n);
    snprintf(e_cupti, sizeof e_cupti, "DLSYNC_CUPTI=%s", cupti);
    const char *env[] = {e_pre, e_mode, e_n, e_cupti, "CUDA_INJECTION64_PATH=", "DLSYNC_LOG=", NULL};
    const char *argv[] = {self, NULL};
    dls_run_result r;
    if (dls_run(argv, env, &r) != 0)
        return -1;
    char *end = r.out;
    double v = r.status == 0 ? strtod(r.out, &end) : -1;
    *rss = r.status == 0 ? atof(end) : -1;
    const char *summary = strstr(r.err, "check summary: ");
    *races = summary ? atoi(summary + 15) : 0;
    if (v < 0)
        fprintf(stderr, "bench_soak: probe %s/%d failed (status %d):\n%s\n", mode ? mode : "no shim", n, r.status,
                r.err);
    dls_run_free(&r);
    return v;
}

int main(void)
{
    const char *c = getenv("SOAK_CHILD");
    if (c)
        return probe(atoi(c));
    const char *len = getenv("BENCH_SOAK");
    int n1 = len ? atoi(len) : SOAK1, n2 = 10 * n1, races1, races2;
    double rss1, rss2, none1 = run(NULL, n1, &rss1, &races1), none2 = run(NULL, n2, &rss2, &races2);
    int failed = none1 < 0 || none2 < 0;
    printf("soak: a hand-synchronized pipeline, %d loader and %d consumer threads, a pool of %d buffers, a stream "
           "made per import; without the shim: heap held at the end %.1f MB, peak RSS %.1f MB (%d exchanges); "
           "%.1f MB, %.1f MB (%d)\n",
           LOADERS, CONSUMERS, POOL, none1 / 1e6, rss1 / 1e6, n1, none2 / 1e6, rss2 / 1e6, n2);
    static const char *const modes[] = {"fix", "check"};
    static const dls_budget_id goals[] = {DLS_BUDGET_FIX_SOAK_GROWTH, DLS_BUDGET_CHECK_SOAK_GROWTH};
    for (int m = 0; m < 2; m++) {
        double mrss1, mrss2, a = run(modes[m], n1, &mrss1, &races1), b = run(modes[m], n2, &mrss2, &races2);
        int ok = a >= 0 && b >= 0 && none1 >= 0 && none2 >= 0;
        failed |= !ok;
        double extra1 = a - none1, extra2 = b - none2;
        printf("  %-5s dlsync's extra heap held at the end %+.2f MB at %d exchanges, %+.2f MB at %d: %.1f bytes per "
               "exchange between them\n",
               modes[m], extra1 / 1e6, n1, extra2 / 1e6, n2, (extra2 - extra1) / (n2 - n1));
        printf("        extra peak RSS %+.2f MB, %+.2f MB: %.1f bytes per exchange\n", (mrss1 - rss1) / 1e6,
               (mrss2 - rss2) / 1e6, ((mrss2 - rss2) - (mrss1 - rss1)) / (n2 - n1));
        if (m == 1)
            printf("        races reported on the ordered pipeline: %d at %d exchanges, %d at %d\n", races1, n1, races2,
                   n2);
        printf("  measured with: SOAK_CHILD={%d,%d} [DLSYNC_MODE=%s LD_PRELOAD=build/lib/libdlsync.so "
               "DLSYNC_CUPTI=build/cudasim/libcupti.so.13] build/tests/bench_soak (prints the heap in use and VmHWM)\n",
               n1, n2, modes[m]);
        /* The growth of the extra; an extra of less than a page counts as one page. */
        double base = extra1 > 4096 ? extra1 : 4096;
        dls_budget_print(goals[m], ok ? (extra2 > extra1 ? 100 * (extra2 - extra1) / base : 0) : -1);
    }
    return failed;
}
