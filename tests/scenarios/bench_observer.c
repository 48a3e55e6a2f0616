/* Benchmark: the observer's cost per kernel launch, on the CUDA simulator, for a launch that
 * touches no exchanged tensor and for one that reads a live exchanged tensor, without the shim
 * and with it in trace, check and fix. Runs itself as a child in each setting (the fake
 * frameworks of the scenarios: one live exchange from mxnet to tvm) and prints ns per launch
 * (median of RUNS runs) with the ratio to no shim, and, when valgrind is installed,
 * instructions per launch (callgrind: the difference between runs of 2*LAUNCHES and LAUNCHES
 * launches, divided by LAUNCHES). No assertions. */
#include "dls_test.h"
#include "fakefw.h"
#include "scen_backend.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define RUNS 5
#define LAUNCHES 4000
#define N 64

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* The child: one live exchange, then `n` launches touching it or not; prints ns per launch. */
static int child(const char *what, int n)
{
    mx_init(FW_NON_BLOCKING);
    tvm_init(FW_NON_BLOCKING);
    mx_array *a = mx_empty(N, kDLCUDA), *other = mx_empty(N, kDLCUDA);
    mx_fill(a, 1);
    DLManagedTensor *t;
    void *h;
    if (MXNDArrayToDLPack(a, &t) || TVMArrayFromDLPack(t, &h))
        return 2;
    float *dst;
    if (cudaMalloc((void **)&dst, N * sizeof(float)) != cudaSuccess)
        return 2;
    int touch = strcmp(what, "touch") == 0;
    const float *src = touch ? (const float *)t->dl_tensor.data : NULL;
    mx_read(other); /* makes the other array's memory the untouched source */
    double t0 = now_ns();
    for (int i = 0; i < n; i++) {
        if (touch)
            scen_read(tvm_stream(), src, dst, N);
        else
            scen_write(tvm_stream(), dst, N, 2.0f);
    }
    double t1 = now_ns();
    tvm_sync();
    printf("%.1f\n", (t1 - t0) / n);
    tvm_free(h);
    mx_free(a);
    mx_free(other);
    return 0;
}

static int cmp(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

/* Runs the child once; returns ns per launch, or callgrind's instruction total with `vg`. */
static double run(const char *what, const char *mode, int n, int vg)
{
    char self[1024], shim[1024], preload[2048], pre_env[2100], mode_env[64], child_env[64], n_env[64];
    dls_build_path(self, sizeof self, "tests/bench_observer");
    dls_build_path(shim, sizeof shim, "lib/libdlsync.so");
    dls_preload_value(preload, sizeof preload, shim);
    snprintf(pre_env, sizeof pre_env, "LD_PRELOAD=%s", mode ? preload : "");
    snprintf(mode_env, sizeof mode_env, "DLSYNC_MODE=%s", mode ? mode : "");
    snprintf(child_env, sizeof child_env, "BENCH_CHILD=%s", what);
    snprintf(n_env, sizeof n_env, "BENCH_LAUNCHES=%d", n);
    const char *env[] = {pre_env, mode_env, child_env, n_env, "DLSYNC_LOG=", "CUDA_INJECTION64_PATH=", NULL};
    const char *plain[] = {self, NULL};
    const char *grind[] = {"valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", self, NULL};
    dls_run_result r;
    if (dls_run(vg ? grind : plain, env, &r) != 0)
        return -1;
    double v = -1;
    if (vg) {
        const char *c = strstr(r.err, "Collected : ");
        v = c && r.status == 0 ? atof(c + 12) : -1;
    } else if (r.status == 0) {
        v = atof(r.out);
    }
    dls_run_free(&r);
    return v;
}

int main(void)
{
    const char *c = getenv("BENCH_CHILD");
    if (c)
        return child(c, getenv("BENCH_LAUNCHES") ? atoi(getenv("BENCH_LAUNCHES")) : LAUNCHES);
    static const char *const modes[] = {NULL, "trace", "check", "fix"};
    static const char *const whats[] = {"untouched", "touch"};
    int vg = system("valgrind --version >/dev/null 2>&1") == 0;
    printf("per kernel launch on the simulator (%d launches, median of %d runs)\n", LAUNCHES, RUNS);
    printf("%-10s %-10s %10s %8s %14s %8s\n", "launch", "mode", "ns/op", "ratio", "instr/launch", "ratio");
    for (int w = 0; w < 2; w++) {
        double base_ns = 0, base_ir = 0;
        for (int m = 0; m < 4; m++) {
            double v[RUNS];
            for (int i = 0; i < RUNS; i++)
                v[i] = run(whats[w], modes[m], LAUNCHES, 0);
            qsort(v, RUNS, sizeof *v, cmp);
            double ns = v[RUNS / 2], ir = -1;
            if (vg) {
                double a = run(whats[w], modes[m], LAUNCHES / 4, 1), b = run(whats[w], modes[m], LAUNCHES / 2, 1);
                ir = a < 0 || b < 0 ? -1 : (b - a) / (LAUNCHES / 4);
            }
            if (m == 0) {
                base_ns = ns;
                base_ir = ir;
            }
            printf("%-10s %-10s %10.1f %8.2f %14.0f %8.2f\n", whats[w], modes[m] ? modes[m] : "no shim", ns,
                   base_ns > 0 ? ns / base_ns : 0, ir, base_ir > 0 ? ir / base_ir : 0);
        }
    }
    printf("measured with: BENCH_CHILD=untouched|touch BENCH_LAUNCHES=<n> [LD_PRELOAD=build/lib/libdlsync.so "
           "DLSYNC_MODE=<mode>] [valgrind --tool=callgrind] build/tests/bench_observer (instructions: the "
           "difference of n=%d and n=%d, divided by %d)\n",
           LAUNCHES / 4, LAUNCHES / 2, LAUNCHES / 4);
    return 0;
}
