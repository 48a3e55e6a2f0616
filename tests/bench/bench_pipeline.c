/* Benchmark: what dlsync's `fix` costs and what it saves, on the CUDA simulator, with the fake
 * legacy producer of the API tests (tests/api/fakeprod.h: MXNDArrayToDLPack on a side stream).
 * Runs itself as a child in each setting and prints medians of RUNS runs and ratios:
 *   1. exchange cost: one exchange (producer write, wrapped export, consumer read of the tensor,
 *      release), instant kernels, shim preloaded with DLSYNC_MODE=off vs fix (fix injects an
 *      event record and a stream wait before the read, an event record right after it, and a
 *      wait on that event before the producer's next write of the released memory), and, for
 *      reference, two record + wait pairs written in the program with the shim off (what the
 *      simulator itself costs for them);
 *   2. the simulator's own host time per cudaEventRecord and per cudaStreamWaitEvent (on idle
 *      streams, median of RUNS x EVENTS), without the shim and with it in fix (the CUPTI
 *      callbacks and dlsync's observer included);
 *   3. pipeline: ITERS steps in which the host prepares the next input (HOST_US of host time,
 *      a data loader's share, spent sleeping) and then exchanges a tensor whose kernels take
 *      KERNEL_US each on the producer's and the consumer's streams (kernels sleep: the two
 *      streams overlap on any number of cores): unsynchronized (racy, no shim), a
 *      cudaDeviceSynchronize at every exchange (the common workaround, no shim: the host cannot
 *      prepare while the device works), the program synchronized by hand as a careful author
 *      would (no shim: an event after the producer's write that the consumer's stream waits
 *      on, an event after the read that the producer's next write of the buffer waits on, the
 *      release ordered the same way; what the ordering itself costs on the simulator), and
 *      dlsync fix (no synchronization in the program); for both release patterns of the
 *      consumer (right after enqueuing its read, and when the buffer comes round again);
 *      printed as exchanges per second and fix's speed as ratios to the hand-synced, the
 *      device-synchronized and the racy runs;
 *   4. read-read: one exchange, then ITERS steps in which the host prepares (HOST_US) and both
 *      sides go on reading the tensor on their own streams, with copies (fix orders nothing:
 *      copies say they read) and with KERNEL_US kernels (fix orders every producer kernel after
 *      the consumer's and back: a kernel may write), unsynchronized without the shim and in fix;
 *   5. with valgrind: instructions per kernel launch in fix (callgrind, the difference between
 *      runs of 2*LAUNCHES and LAUNCHES launches on memory no exchange touches) while no
 *      exchanged tensor waits for its first use, and while one does;
 *   6. what a user pays per exchange, whole path (exchange_path: the producer's next write
 *      after its wait on the last read, the write, the export, the program's own event record
 *      and wait when it orders the exchange itself, the consumer's launch and release), in fix
 *      and in check against DLSYNC_MODE=off, for an already-ordered exchange (the program's
 *      own events) and a legacy one that needs dlsync's wait: the instructions added on the
 *      calling thread (callgrind collecting exchange_path and its callees, where dlsync's
 *      callbacks run), split into the CUPTI dispatch of its callbacks (a subscriber that
 *      enables them and does nothing, libnullsub.so) and dlsync's own, of which the simulator
 *      carrying out dlsync's own driver calls (what its guarded calls, dls_drv_*, spend in the
 *      simulator, read from the same profile: callgrind_calls.h), and dlsync's own driver calls
 *      (the simulator's trace, CUDASIM_TRACE:
 *      every call's C line, named; the program's calls are the same in every mode, so the
 *      difference to the run with DLSYNC_MODE=off is the calls dlsync made), each the
 *      difference of runs of PATH2 and PATH1 exchanges; with the budgets and goals that hold
 *      them (tests/bench/budget.h). */
#include "../bench/budget.h"
#include "callgrind_calls.h"
#include "dls_test.h"
#include "cudasim.h"
#include "fakeprod.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define RUNS 5
#define EXCHANGES 2000
#define ITERS 100
#define KERNEL_US 500
#define HOST_US 500
#define EVENTS 2000
#define LAUNCHES 2000
#define N 256
#define WINDOW 4
#define PATH1 200
#define PATH2 600

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void sleep_us(unsigned us)
{
    struct timespec ts = {0, (long)us * 1000L};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

/* How the program orders an exchange itself. */
enum { ORDER_NONE, ORDER_DEVICE_SYNC, ORDER_EVENTS };

/* The program's own events of ORDER_EVENTS: after the write, after the read of each buffer. */
static cudaEvent_t g_written, g_read[WINDOW];

/* One exchange of buffer `slot`: write on the producer's stream, export, read on `consumer`,
 * ordered as `order` says. The tensor is released at once (*held NULL) or kept in *held until the
 * slot comes round again. */
__attribute__((noinline)) static void exchange_path(fp_array *a, int slot, cudaStream_t consumer, float *dst, int order,
                                                    DLManagedTensor **held)
{
    DLManagedTensor *t;
    if (held && *held)
        (*held)->deleter(*held);
    if (order == ORDER_EVENTS)
        cudaStreamWaitEvent(fp_side_stream(), g_read[slot], 0);
    fp_write(a, 1);
    if (MXNDArrayToDLPack(a, &t))
        exit(2);
    if (order == ORDER_DEVICE_SYNC)
        cudaDeviceSynchronize();
    if (order == ORDER_EVENTS) {
        cudaEventRecord(g_written, fp_side_stream());
        cudaStreamWaitEvent(consumer, g_written, 0);
    }
    fp_read(consumer, t->dl_tensor.data, dst, N);
    if (order == ORDER_EVENTS)
        cudaEventRecord(g_read[slot], consumer);
    if (held)
        *held = t;
    else
        t->deleter(t);
}

/* Child of the read-read variant: one exchange of a, then ITERS steps of host preparation and a
 * read of the tensor on each side (kernels, or copies); prints the median ns of one step. */
static int read_read(fp_array *a, cudaStream_t consumer, float *dst, int kernels)
{
    float *pdst;
    DLManagedTensor *t;
    if (cudaMalloc((void **)&pdst, N * sizeof(float)) != cudaSuccess || fp_write(a, 1) || MXNDArrayToDLPack(a, &t))
        return 2;
    const float *data = t->dl_tensor.data;
    if (kernels)
        cudasim_set_kernel_duration("fp_read", KERNEL_US);
    double per[RUNS];
    for (int r = 0; r < RUNS; r++) {
        double t0 = now_ns();
        for (int i = 0; i < ITERS; i++) {
            sleep_us(HOST_US);
            if (kernels) {
                fp_read(consumer, data, dst, N);
                fp_read(fp_side_stream(), data, pdst, N);
            } else {
                cudaMemcpyAsync(dst, data, N * sizeof(float), cudaMemcpyDeviceToDevice, consumer);
                cudaMemcpyAsync(pdst, data, N * sizeof(float), cudaMemcpyDeviceToDevice, fp_side_stream());
            }
        }
        cudaDeviceSynchronize();
        per[r] = (now_ns() - t0) / ITERS;
    }
    t->deleter(t);
    qsort(per, RUNS, sizeof *per, cmp);
    printf("%.0f\n", per[RUNS / 2]);
    return 0;
}

/* Child: prints the median ns of one exchange (what = "exchange") or of one pipeline step. */
static int child(const char *what, int order, int window)
{
    cudaStream_t consumer;
    float *dst;
    fp_array *a = fp_new(N), *ring[WINDOW];
    for (int i = 0; i < WINDOW; i++)
        ring[i] = fp_new(N);
    if (!a || cudaStreamCreateWithFlags(&consumer, cudaStreamNonBlocking) != cudaSuccess ||
        cudaMalloc((void **)&dst, N * sizeof(float)) != cudaSuccess ||
        cudaEventCreateWithFlags(&g_written, cudaEventDisableTiming) != cudaSuccess)
        return 2;
    for (int i = 0; i < WINDOW; i++)
        if (cudaEventCreateWithFlags(&g_read[i], cudaEventDisableTiming) != cudaSuccess)
            return 2;
    if (strcmp(what, "readread") == 0)
        return read_read(a, consumer, dst, order == ORDER_DEVICE_SYNC);
    if (strcmp(what, "launches") == 0) {
        int n = atoi(getenv("BENCH_LAUNCHES")), pending = getenv("BENCH_PENDING") != NULL;
        DLManagedTensor *t = NULL;
        if (pending && MXNDArrayToDLPack(a, &t)) /* exported, never used: waits for first use */
            return 2;
        float *other;
        cudaMalloc((void **)&other, N * sizeof(float));
        for (int i = 0; i < n; i++)
            fp_read(consumer, other, dst, N);
        cudaDeviceSynchronize();
        if (t)
            t->deleter(t);
        return 0;
    }
    if (strcmp(what, "record") == 0 || strcmp(what, "wait") == 0) { /* host time of one call, in ns */
        int wait = strcmp(what, "wait") == 0;
        double per[RUNS];
        for (int r = 0; r < RUNS; r++) {
            double spent = 0;
            for (int i = 0; i < EVENTS; i++) {
                double t0 = now_ns();
                cudaEventRecord(g_written, fp_side_stream());
                double t1 = now_ns();
                cudaStreamWaitEvent(consumer, g_written, 0);
                spent += wait ? now_ns() - t1 : t1 - t0;
            }
            per[r] = spent / EVENTS;
        }
        qsort(per, RUNS, sizeof *per, cmp);
        printf("%.0f\n", per[RUNS / 2]);
        return 0;
    }
    /* BENCH_EXCHANGES=<n>: one run of n exchanges, for callgrind and the simulator's trace. */
    const char *counted = getenv("BENCH_EXCHANGES");
    int pipeline = strcmp(what, "pipeline") == 0, n = pipeline ? ITERS : counted ? atoi(counted) : EXCHANGES;
    int runs = counted ? 1 : RUNS;
    if (pipeline) {
        cudasim_set_kernel_duration("fp_write", KERNEL_US);
        cudasim_set_kernel_duration("fp_read", KERNEL_US);
    }
    double per[RUNS];
    for (int r = 0; r < runs; r++) {
        double t0 = now_ns();
        DLManagedTensor *held[WINDOW] = {NULL};
        for (int i = 0; i < n; i++)
            if (pipeline) {
                sleep_us(HOST_US); /* the host prepares the next input */
                exchange_path(ring[i % WINDOW], i % WINDOW, consumer, dst, order, window ? &held[i % WINDOW] : NULL);
            } else {
                exchange_path(a, 0, consumer, dst, order, NULL);
            }
        for (int i = 0; i < WINDOW; i++)
            if (held[i])
                held[i]->deleter(held[i]);
        cudaDeviceSynchronize();
        per[r] = (now_ns() - t0) / n;
    }
    qsort(per, (size_t)runs, sizeof *per, cmp);
    printf("%.0f\n", per[runs / 2]);
    return 0;
}

/* Runs this binary as a child with the given settings and returns what it printed (a number). */
static double run(const char *what, const char *mode, int order, const char *const *pre, const char *extra)
{
    char self[1024], shim[1024], cupti[1024], preload[2048], e_pre[2100], e_mode[64], e_what[64];
    dls_build_path(self, sizeof self, "tests/bench_pipeline");
    dls_build_path(shim, sizeof shim, "lib/libdlsync.so");
    dls_build_path(cupti, sizeof cupti, "cudasim/libcupti.so.13");
    snprintf(e_pre, sizeof e_pre, "LD_PRELOAD=%s", mode ? dls_preload_value(preload, sizeof preload, shim) : "");
    snprintf(e_mode, sizeof e_mode, "DLSYNC_MODE=%s", mode ? mode : "");
    snprintf(e_what, sizeof e_what, "BENCH_CHILD=%s%s", what,
             order == ORDER_DEVICE_SYNC ? ":sync"
             : order == ORDER_EVENTS    ? ":events"
                                        : "");
    char e_cupti[1100];
    snprintf(e_cupti, sizeof e_cupti, "DLSYNC_CUPTI=%s", cupti);
    const char *env[] = {
        e_pre, e_mode, e_what, e_cupti, "CUDA_INJECTION64_PATH=", "DLSYNC_LOG=", extra ? extra : "BENCH_PENDING=",
        NULL};
    const char *argv[12];
    int k = 0;
    for (; pre && pre[k]; k++)
        argv[k] = pre[k];
    argv[k++] = self;
    argv[k] = NULL;
    dls_run_result res;
    if (dls_run(argv, env, &res) != 0 || res.status != 0) {
        fprintf(stderr, "bench_pipeline: child %s/%s failed\n", what, mode ? mode : "no shim");
        return -1;
    }
    double v = atof(res.out);
    if (pre) { /* callgrind: "==pid== Collected : N" on stderr */
        const char *c = strstr(res.err, "Collected : ");
        v = c ? atof(c + 12) : -1;
    }
    dls_run_free(&res);
    return v;
}

/* Instructions per launch in fix mode (pending: one exchanged tensor waits for first use). */
static double per_launch(int pending)
{
    static const char *const vg[] = {"valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", NULL};
    char one[64], two[64];
    snprintf(one, sizeof one, "BENCH_LAUNCHES=%d", LAUNCHES);
    snprintf(two, sizeof two, "BENCH_LAUNCHES=%d", 2 * LAUNCHES);
    setenv("BENCH_PENDING", "1", 1);
    if (!pending)
        unsetenv("BENCH_PENDING");
    double a = run("launches", "fix", ORDER_NONE, vg, one), b = run("launches", "fix", ORDER_NONE, vg, two);
    unsetenv("BENCH_PENDING");
    return a < 0 || b < 0 ? -1 : (b - a) / LAUNCHES;
}

/* The environment of a whole-path child: the shim in `mode`, n exchanges ordered as `order`,
 * and `extra` (NULL: none). Mode "null" or "null-runtime" runs no shim but libnullsub.so, a CUPTI
 * subscriber that enables the callbacks fix (or, with the runtime's, check) enables and does
 * nothing: what the CUPTI dispatch of those callbacks costs. env must hold 9 entries; the
 * strings live in buf (size 4096). */
static void path_env(const char **env, char *buf, const char *mode, int order, int n, const char *extra)
{
    char shim[1024], cupti[1024], preload[2048], nullsub[1024];
    int null = strncmp(mode, "null", 4) == 0;
    dls_build_path(shim, sizeof shim, "lib/libdlsync.so");
    dls_build_path(cupti, sizeof cupti, "cudasim/libcupti.so.13");
    dls_build_path(nullsub, sizeof nullsub, "scenarios/libnullsub.so");
    int k = 0, len = 0;
    const char *fmt[] = {"LD_PRELOAD=%s",   "DLSYNC_MODE=%s",     "BENCH_CHILD=exchange%s",
                         "DLSYNC_CUPTI=%s", "BENCH_EXCHANGES=%d", "CUDA_INJECTION64_PATH=%s"};
    for (int i = 0; i < 6; i++) {
        env[k++] = buf + len;
        len += 1 + (i == 0   ? snprintf(buf + len, 4096 - len, fmt[i],
                                      null ? "" : dls_preload_value(preload, sizeof preload, shim))
                      : i == 1 ? snprintf(buf + len, 4096 - len, fmt[i], null ? "off" : mode)
                    : i == 2 ? snprintf(buf + len, 4096 - len, fmt[i], order == ORDER_EVENTS ? ":events" : "")
                    : i == 3 ? snprintf(buf + len, 4096 - len, fmt[i], cupti)
                    : i == 4 ? snprintf(buf + len, 4096 - len, fmt[i], n)
                             : snprintf(buf + len, 4096 - len, fmt[i], null ? nullsub : ""));
    }
    env[k++] = "DLSYNC_LOG=";
    env[k++] = extra ? extra : strcmp(mode, "null-runtime") == 0 ? "NULLSUB_RUNTIME=1" : "CUDASIM_TRACE=";
    env[k] = NULL;
}

/* Instructions of the calling thread inside exchange_path over n exchanges (callgrind); -1 when
 * the run failed. *drv gets those spent in the driver calls dlsync made itself (its guarded
 * calls, dls_drv_*, into the simulator). */
static double path_instructions(const char *mode, int order, int n, double *drv)
{
    char self[1024], envbuf[4096], out[128], out1[160], e_out[160];
    const char *env[9];
    dls_build_path(self, sizeof self, "tests/bench_pipeline");
    snprintf(out, sizeof out, "/tmp/dls_bench_path.%d.cg", (int)getpid());
    snprintf(out1, sizeof out1, "%s-01", out);
    snprintf(e_out, sizeof e_out, "--callgrind-out-file=%s", out);
    path_env(env, envbuf, mode, order, n, NULL);
    const char *argv[] = {
        "valgrind", "--tool=callgrind", "--separate-threads=yes", "--toggle-collect=exchange_path", e_out, self, NULL};
    dls_run_result r;
    double v = -1;
    if (dls_run(argv, env, &r) == 0) {
        char *text = r.status == 0 ? dls_read_file(out1) : NULL;
        const char *t = text ? strstr(text, "\ntotals: ") : NULL;
        v = t ? atof(t + 9) : -1;
        *drv = t ? dls_cg_calls_out(text, "dls_drv_", "dls_") : 0;
        free(text);
        dls_run_free(&r);
    }
    for (int i = 1; i < 100; i++) { /* the per-thread files */
        snprintf(out1, sizeof out1, "%s-%02d", out, i);
        unlink(out1);
    }
    return v;
}

/* Driver and runtime calls by name, from a simulator trace. */
#define NAMES 96
typedef struct {
    char name[64];
    double count[4]; /* fix or check at PATH1 and PATH2, off at PATH1 and PATH2 */
} call_count;

/* Adds the calls of the trace of a run of n exchanges in `mode` to counts (column col); -1 when
 * the run failed. */
static int path_calls(const char *mode, int order, int n, call_count *counts, int *ncounts, int col)
{
    char self[1024], envbuf[4096], trace[128], e_trace[160], line[256];
    const char *env[9];
    dls_build_path(self, sizeof self, "tests/bench_pipeline");
    snprintf(trace, sizeof trace, "/tmp/dls_bench_path.%d.trace", (int)getpid());
    snprintf(e_trace, sizeof e_trace, "CUDASIM_TRACE=%s", trace);
    path_env(env, envbuf, mode, order, n, e_trace);
    const char *argv[] = {self, NULL};
    dls_run_result r;
    if (dls_run(argv, env, &r) != 0)
        return -1;
    int ok = r.status == 0;
    dls_run_free(&r);
    FILE *f = ok ? fopen(trace, "r") : NULL;
    while (f && fgets(line, sizeof line, f)) {
        char tag[4], name[64];
        unsigned long st, call, tid;
        if (sscanf(line, "%lu %3s %lu %lu %63s", &st, tag, &call, &tid, name) != 5 || strcmp(tag, "C") != 0)
            continue;
        int i = 0;
        while (i < *ncounts && strcmp(counts[i].name, name) != 0)
            i++;
        if (i == *ncounts) {
            if (*ncounts == NAMES)
                continue;
            memset(&counts[i], 0, sizeof counts[i]);
            snprintf(counts[i].name, sizeof counts[i].name, "%s", name);
            (*ncounts)++;
        }
        counts[i].count[col]++;
    }
    if (f)
        fclose(f);
    unlink(trace);
    return f ? 0 : -1;
}

/* Prints what `mode` adds to the whole path of an exchange ordered as `order` (its title
 * `what`) against DLSYNC_MODE=off, instructions and driver calls, each with the verdict line of
 * the figure that holds it (instr_budget, calls_budget; -1: none). */
static void print_path(const char *what, const char *mode, int order, int instr_budget, int calls_budget)
{
    const char *null = strcmp(mode, "fix") == 0 ? "null" : "null-runtime"; /* fix enables no runtime callbacks */
    double drv1, drv2, none;
    double fix1 = path_instructions(mode, order, PATH1, &drv1), fix2 = path_instructions(mode, order, PATH2, &drv2);
    double off1 = path_instructions("off", order, PATH1, &none), off2 = path_instructions("off", order, PATH2, &none);
    double null1 = path_instructions(null, order, PATH1, &none), null2 = path_instructions(null, order, PATH2, &none);
    double added =
        fix1 < 0 || fix2 < 0 || off1 < 0 || off2 < 0 ? -1 : ((fix2 - fix1) - (off2 - off1)) / (PATH2 - PATH1);
    double dispatch =
        null1 < 0 || null2 < 0 || off1 < 0 || off2 < 0 ? -1 : ((null2 - null1) - (off2 - off1)) / (PATH2 - PATH1);
    double driver = (drv2 - drv1) / (PATH2 - PATH1);
    printf("%s, %s: %.0f instructions per exchange on the calling thread with DLSYNC_MODE=off, %s adds %.0f: %.0f "
           "the CUPTI dispatch of its callbacks (a subscriber that does nothing, libnullsub.so), %.0f its own\n",
           what, mode, (off2 - off1) / (PATH2 - PATH1), mode, added, dispatch, added - dispatch);
    printf("  of its own, %.0f the simulator carrying out dlsync's own driver calls (what dls_drv_* spend in calls "
           "to the simulator, in the same profile)\n",
           driver);
    printf("  measured with: BENCH_CHILD=exchange%s BENCH_EXCHANGES={%d,%d} DLSYNC_MODE=off|%s "
           "LD_PRELOAD=build/lib/libdlsync.so DLSYNC_CUPTI=build/cudasim/libcupti.so.13 valgrind --tool=callgrind "
           "--separate-threads=yes --toggle-collect=exchange_path build/tests/bench_pipeline (thread 1's totals); "
           "the dispatch: the same without LD_PRELOAD and with CUDA_INJECTION64_PATH=build/scenarios/libnullsub.so%s\n",
           order == ORDER_EVENTS ? ":events" : "", PATH1, PATH2, mode,
           strcmp(null, "null") == 0 ? "" : " NULLSUB_RUNTIME=1");
    if (instr_budget >= 0)
        dls_budget_print((dls_budget_id)instr_budget, added);
    static call_count counts[NAMES];
    int n = 0, failed = path_calls(mode, order, PATH1, counts, &n, 0) | path_calls(mode, order, PATH2, counts, &n, 1) |
                        path_calls("off", order, PATH1, counts, &n, 2) | path_calls("off", order, PATH2, counts, &n, 3);
    double calls = 0;
    printf("  %s's own driver calls per exchange (fix minus off, by name):", mode);
    for (int i = 0; i < n; i++) {
        double d =
            ((counts[i].count[1] - counts[i].count[0]) - (counts[i].count[3] - counts[i].count[2])) / (PATH2 - PATH1);
        calls += d;
        if (d != 0)
            printf(" %s %+.2f", counts[i].name, d);
    }
    printf("\n  measured with: BENCH_CHILD=exchange%s BENCH_EXCHANGES={%d,%d} DLSYNC_MODE=off|%s "
           "LD_PRELOAD=build/lib/libdlsync.so DLSYNC_CUPTI=build/cudasim/libcupti.so.13 CUDASIM_TRACE=/tmp/trace "
           "build/tests/bench_pipeline (the C lines, by name)\n",
           order == ORDER_EVENTS ? ":events" : "", PATH1, PATH2, mode);
    if (calls_budget >= 0)
        dls_budget_print((dls_budget_id)calls_budget, failed ? -1 : calls);
}

/* The whole-path figures (6. above). */
static void print_paths(void)
{
    print_path("already-ordered exchange (the program's own events), whole path", "fix", ORDER_EVENTS,
               DLS_BUDGET_FIX_ORDERED_PATH, DLS_BUDGET_FIX_ORDERED_CALLS);
    print_path("legacy exchange that needs its wait, whole path", "fix", ORDER_NONE, DLS_BUDGET_FIX_LEGACY_PATH,
               DLS_BUDGET_FIX_LEGACY_CALLS);
    print_path("already-ordered exchange (the program's own events), whole path", "check", ORDER_EVENTS,
               DLS_BUDGET_CHECK_ORDERED_PATH, -1);
    print_path("legacy exchange that needs its wait, whole path", "check", ORDER_NONE, -1, -1);
}

int main(void)
{
    const char *c = getenv("BENCH_CHILD");
    if (c) {
        char what[32];
        snprintf(what, sizeof what, "%s", c);
        char *colon = strchr(what, ':');
        if (colon)
            *colon = '\0';
        if (strcmp(what, "launches") == 0 && !getenv("BENCH_LAUNCHES"))
            return 2;
        int order = !colon ? ORDER_NONE : strcmp(colon + 1, "events") == 0 ? ORDER_EVENTS : ORDER_DEVICE_SYNC;
        return child(what, order, getenv("BENCH_WINDOW") != NULL);
    }
    double off = run("exchange", "off", ORDER_NONE, NULL, NULL), fix = run("exchange", "fix", ORDER_NONE, NULL, NULL),
           events = run("exchange", "off", ORDER_EVENTS, NULL, NULL);
    printf("exchange cost (instant kernels, median of %d x %d): shim off %.0f ns, fix %.0f ns, "
           "fix adds %.0f ns per exchange\n",
           RUNS, EXCHANGES, off, fix, fix - off);
    printf("  the program's own two event record + wait pairs per exchange, shim off: %.0f ns (the "
           "simulator's share of fix's cost: %.0f ns)\n",
           events, events - off);
    printf("  measured with: BENCH_CHILD=exchange[:events] DLSYNC_MODE=off|fix LD_PRELOAD=build/lib/libdlsync.so "
           "build/tests/bench_pipeline\n");
    double rec = run("record", NULL, ORDER_NONE, NULL, NULL), wait = run("wait", NULL, ORDER_NONE, NULL, NULL),
           rec_fix = run("record", "fix", ORDER_NONE, NULL, NULL),
           wait_fix = run("wait", "fix", ORDER_NONE, NULL, NULL);
    printf("simulator host time per call (idle streams, median of %d x %d): cudaEventRecord %.1f us, "
           "cudaStreamWaitEvent %.1f us; with dlsync fix (CUPTI callbacks and observer included): %.1f us, %.1f us\n",
           RUNS, EVENTS, rec / 1e3, wait / 1e3, rec_fix / 1e3, wait_fix / 1e3);
    printf("  measured with: BENCH_CHILD=record|wait [DLSYNC_MODE=fix LD_PRELOAD=build/lib/libdlsync.so] "
           "build/tests/bench_pipeline\n");
    for (int w = 1; w >= 0; w--) {
        const char *win = w ? "BENCH_WINDOW=1" : NULL;
        double racy = run("pipeline", NULL, ORDER_NONE, NULL, win),
               sync = run("pipeline", NULL, ORDER_DEVICE_SYNC, NULL, win),
               own = run("pipeline", NULL, ORDER_EVENTS, NULL, win),
               fixed = run("pipeline", "fix", ORDER_NONE, NULL, win);
        printf("pipeline, %s (%d steps over %d buffers: %d us of host preparation, then %d us kernels on two "
               "streams; median of %d):\n",
               w ? "consumer releases each tensor when its buffer comes round again"
                 : "consumer releases each tensor right after enqueuing its read",
               ITERS, WINDOW, HOST_US, KERNEL_US, RUNS);
        printf("  unsynchronized (racy)        %8.0f exchanges/s\n", 1e9 / racy);
        printf("  device synchronize each time %8.0f exchanges/s\n", 1e9 / sync);
        printf("  synchronized by hand         %8.0f exchanges/s  %.2fx the racy run (what ordering costs here)\n",
               1e9 / own, racy / own);
        printf("  dlsync fix                   %8.0f exchanges/s  fix / hand-synced %.2fx, fix / device-sync %.2fx, "
               "fix / racy %.2fx (speed)\n",
               1e9 / fixed, own / fixed, sync / fixed, racy / fixed);
        printf("  measured with: BENCH_CHILD=pipeline[:sync|:events]%s [DLSYNC_MODE=fix "
               "LD_PRELOAD=build/lib/libdlsync.so] build/tests/bench_pipeline\n",
               w ? " BENCH_WINDOW=1" : "");
    }
    for (int kernels = 0; kernels < 2; kernels++) {
        int how = kernels ? ORDER_DEVICE_SYNC : ORDER_NONE; /* the child's ":sync" suffix selects kernels */
        double plain = run("readread", NULL, how, NULL, NULL), fixed = run("readread", "fix", how, NULL, NULL);
        printf("read-read after the handover, with %s (%d steps: %d us of host preparation, then a read on each "
               "side; median of %d): unsynchronized %.0f steps/s, dlsync fix %.0f steps/s, fix / unsynchronized "
               "%.2fx (speed)%s\n",
               kernels ? "kernels" : "copies", ITERS, HOST_US, RUNS, 1e9 / plain, 1e9 / fixed, plain / fixed,
               kernels ? "; kernels may write, so fix orders each side's read after the other's" : "");
        printf("  measured with: BENCH_CHILD=readread%s [DLSYNC_MODE=fix LD_PRELOAD=build/lib/libdlsync.so] "
               "build/tests/bench_pipeline\n",
               kernels ? ":sync" : "");
    }
    if (system("valgrind --version >/dev/null 2>&1") != 0) {
        printf("per-launch and whole-path instructions: valgrind not installed, skipped\n");
        static const dls_budget_id held[] = {DLS_BUDGET_FIX_ORDERED_PATH, DLS_BUDGET_FIX_ORDERED_CALLS,
                                             DLS_BUDGET_FIX_LEGACY_PATH, DLS_BUDGET_FIX_LEGACY_CALLS,
                                             DLS_BUDGET_CHECK_ORDERED_PATH};
        for (size_t i = 0; i < sizeof held / sizeof *held; i++)
            dls_budget_print(held[i], -1);
        return 0;
    }
    double idle = per_launch(0), pending = per_launch(1);
    printf("per-launch cost in fix (callgrind, instructions per cudaLaunchKernel incl. the simulator): "
           "nothing pending %.0f, one tensor pending first use %.0f\n",
           idle, pending);
    printf("  measured with: BENCH_CHILD=launches BENCH_LAUNCHES=<n> [BENCH_PENDING=1] DLSYNC_MODE=fix "
           "LD_PRELOAD=lib/libdlsync.so valgrind --tool=callgrind tests/bench_pipeline, n=%d and %d\n",
           LAUNCHES, 2 * LAUNCHES);
    print_paths();
    return 0;
}
