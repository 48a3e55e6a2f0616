/* Benchmark: the shim under several launching threads, on the CUDA simulator.
 * - Throughput: 1, 2, 4 and 8 threads, each launching kernels on its own non-blocking stream
 *   (one live exchange in the process, untouched by the launches), without the shim and under
 *   fix; launches per second in total (median of RUNS runs) and the ratio to no shim.
 * - Stall: one thread imports a pinned tensor whose producer write takes 1 s, so fix waits on
 *   the host for it; meanwhile another thread makes one unrelated launch. Prints how long that
 *   launch took (a launch blocked by the host wait takes most of the second).
 * Each figure comes from a child process of this program. No assertions. */
#include "cudasim.h"
#include "dls_test.h"
#include "fakefw.h"
#include "scen_backend.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define RUNS 3
#define LAUNCHES 20000 /* per thread */
#define MAX_THREADS 8
#define N 64
#define WAIT_US 1000000

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static pthread_barrier_t g_start;

static void *launcher(void *arg)
{
    int n = *(const int *)arg;
    mx_array *a = mx_empty(N, kDLCUDA);
    mx_fill(a, 0); /* the stream exists before the clock starts */
    mx_sync();
    pthread_barrier_wait(&g_start);
    for (int i = 0; i < n; i++)
        mx_fill(a, (float)i);
    mx_sync();
    mx_free(a);
    return NULL;
}

/* Child: `threads` threads launching; prints launches per second. */
static int child_throughput(int threads, int n)
{
    mx_init(FW_NON_BLOCKING);
    tvm_init(FW_NON_BLOCKING);
    mx_array *x = mx_empty(N, kDLCUDA);
    mx_fill(x, 1);
    DLManagedTensor *t;
    void *h;
    if (MXNDArrayToDLPack(x, &t) || TVMArrayFromDLPack(t, &h))
        return 2;
    pthread_t th[MAX_THREADS];
    pthread_barrier_init(&g_start, NULL, (unsigned)threads + 1);
    for (int i = 0; i < threads; i++)
        if (pthread_create(&th[i], NULL, launcher, &n))
            return 2;
    pthread_barrier_wait(&g_start);
    double t0 = now_ns();
    for (int i = 0; i < threads; i++)
        pthread_join(th[i], NULL);
    double t1 = now_ns();
    printf("%.0f\n", (double)threads * n / ((t1 - t0) / 1e9));
    tvm_free(h);
    mx_free(x);
    return 0;
}

static DLManagedTensor *g_pinned;
static volatile int g_imported;

static void *importer(void *arg)
{
    (void)arg;
    void *h;
    if (TVMArrayFromDLPack(g_pinned, &h) == 0)
        g_imported = 1;
    return NULL;
}

/* Child: prints the microseconds one unrelated launch took while another thread waited on the
 * host for a 1 s producer write (at import of a pinned tensor). */
static int child_stall(void)
{
    mx_init(FW_NON_BLOCKING);
    tvm_init(FW_NON_BLOCKING);
    mx_array *a = mx_empty(N, kDLCUDAHost), *other = mx_empty(N, kDLCUDA);
    mx_fill(a, 0);
    mx_fill(other, 0);
    mx_sync();
    cudasim_set_kernel_duration("scen_write", WAIT_US);
    mx_fill(a, 42);
    if (MXNDArrayToDLPack(a, &g_pinned))
        return 2;
    cudasim_set_kernel_duration("scen_write", 0);
    cudaStream_t s;
    if (cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess)
        return 2;
    pthread_t th;
    if (pthread_create(&th, NULL, importer, NULL))
        return 2;
    usleep(100000); /* the importer is inside its host wait by now */
    float *dst;
    if (cudaMalloc((void **)&dst, N * sizeof(float)) != cudaSuccess)
        return 2;
    double t0 = now_ns();
    scen_write(s, dst, N, 1.0f);
    double t1 = now_ns();
    pthread_join(th, NULL);
    printf("%.0f\n", (t1 - t0) / 1e3);
    return g_imported ? 0 : 2;
}

static int cmp(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

/* Runs the child once (mode NULL: without the shim); returns its figure, or -1. */
static double run(const char *what, int threads, const char *mode)
{
    char self[1024], shim[1024], preload[2048], pre_env[2100], mode_env[64], child_env[64], t_env[64];
    dls_build_path(self, sizeof self, "tests/bench_threads");
    dls_build_path(shim, sizeof shim, "lib/libdlsync.so");
    dls_preload_value(preload, sizeof preload, shim);
    snprintf(pre_env, sizeof pre_env, "LD_PRELOAD=%s", mode ? preload : "");
    snprintf(mode_env, sizeof mode_env, "DLSYNC_MODE=%s", mode ? mode : "");
    snprintf(child_env, sizeof child_env, "BENCH_CHILD=%s", what);
    snprintf(t_env, sizeof t_env, "BENCH_THREADS=%d", threads);
    const char *env[] = {pre_env, mode_env, child_env, t_env, "DLSYNC_LOG=", "CUDA_INJECTION64_PATH=", NULL};
    const char *argv[] = {self, NULL};
    return dls_run_number(argv, env);
}

static double median(const char *what, int threads, const char *mode)
{
    double v[RUNS];
    for (int i = 0; i < RUNS; i++)
        v[i] = run(what, threads, mode);
    qsort(v, RUNS, sizeof *v, cmp);
    return v[RUNS / 2];
}

int main(void)
{
    const char *c = getenv("BENCH_CHILD");
    if (c && !strcmp(c, "stall"))
        return child_stall();
    if (c)
        return child_throughput(atoi(getenv("BENCH_THREADS") ? getenv("BENCH_THREADS") : "1"), LAUNCHES);
    printf("launch throughput, %d launches per thread, each thread on its own stream (median of %d runs)\n", LAUNCHES,
           RUNS);
    printf("%-8s %14s %14s %8s\n", "threads", "no shim /s", "fix /s", "ratio");
    for (int t = 1; t <= MAX_THREADS; t *= 2) {
        double base = median("throughput", t, NULL), fix = median("throughput", t, "fix");
        printf("%-8d %14.0f %14.0f %8.2f\n", t, base, fix, base > 0 ? fix / base : 0);
    }
    printf("stall: one unrelated launch while another thread waits %d ms on the host (fix): %.0f us\n", WAIT_US / 1000,
           median("stall", 1, "fix"));
    return 0;
}
