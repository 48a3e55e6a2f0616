/* Benchmark: what dlsync adds, in callgrind instructions (whole process, the simulator
 * included), per stream operation, per host-function launch, per legacy exchange and per log
 * record. The probe is this program run as a child: OPS cudaMemsetAsync of a buffer no exchange
 * covers, on one stream, HOSTFN cudaLaunchHostFunc of an empty function there, EXCH legacy
 * exchanges of a device tensor (MXNDArrayToDLPack, TVMArrayFromDLPack, release), STREAMS bare
 * stream creations and destructions, and XSTREAMS legacy exchanges whose consumer creates a
 * stream for each import and destroys it after the release (as MXNet-style code does), with LIVE exchanged tensors kept live (exported, waiting for their
 * first use) across the operations; with LIVE > 1 they are allocated around the memset buffer,
 * spread over the heap.
 * Each figure is the difference between two runs that differ only in OPS (HOSTFN, EXCH), divided by
 * the difference, minus the same difference of a baseline run: the simulator's own work cancels
 * out. Two baselines: no CUPTI subscriber at all, and the null subscriber (libnullsub.so, injected
 * through CUDA_INJECTION64_PATH), which enables exactly the callbacks dlsync enables in that mode
 * and returns from each at once. Against the first the figure includes the CUPTI dispatch of
 * dlsync's callbacks (on a GPU, the driver's work; here, the simulator's); against the second it
 * is dlsync's own cost. Per-operation figures count the probe's calling thread, where dlsync's
 * callbacks and deferred work run (valgrind --separate-threads=yes --fair-sched=yes, the median
 * of three runs, one with 10,000 live tensors): the simulator's stream worker threads stand for
 * the GPU, and how often they sleep and are woken varies with the calling thread's speed, by
 * about +-50 instructions per operation from run to run. Prints each figure with the commands
 * that measured it, and below each figure a budget holds its verdict line (tests/bench/budget.h:
 * fix, fix with one tensor pending and check per operation, fix per exchange, per log record, fix
 * per stream create + destroy and per exchange with a stream the consumer creates for it).
 * Needs valgrind; no assertions. */
#include "../bench/budget.h"
#include "dls_test.h"
#include "fakefw.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define N 64
#define OPS1 1000
#define OPS2 3000
#define EXCH1 200
#define EXCH2 600
#define SPREAD 10000

static int env_int(const char *name)
{
    const char *v = getenv(name);
    return v ? atoi(v) : 0;
}

static void CUDART_CB nothing(void *arg)
{
    (void)arg;
}

/* The probe. */
static int child(void)
{
    int ops = env_int("COST_OPS"), exch = env_int("COST_EXCH"), live = env_int("COST_LIVE");
    int hostfn = env_int("COST_HOSTFN"), streams = env_int("COST_STREAMS"), xstreams = env_int("COST_XSTREAMS");
    mx_init(FW_NON_BLOCKING);
    tvm_init(FW_NON_BLOCKING);
    DLManagedTensor **held = calloc((size_t)live + 1, sizeof *held);
    mx_array **arrays = calloc((size_t)live + 1, sizeof *arrays);
    if (!held || !arrays)
        return 2;
    void *target = NULL;
    for (int i = 0; i <= live; i++) {
        if (i == live / 2 && cudaMalloc(&target, N * sizeof(float)) != cudaSuccess)
            return 2;
        if (i < live && !(arrays[i] = mx_empty(N + i % 7, kDLCUDA)))
            return 2;
        if (i < live && MXNDArrayToDLPack(arrays[i], &held[i]))
            return 2;
    }
    cudaStream_t s = mx_stream();
    for (int i = 0; i < ops; i++)
        if (cudaMemsetAsync(target, 0, N * sizeof(float), s) != cudaSuccess)
            return 2;
    for (int i = 0; i < hostfn; i++)
        if (cudaLaunchHostFunc(s, nothing, NULL) != cudaSuccess)
            return 2;
    for (int i = 0; i < streams; i++) {
        cudaStream_t c;
        if (cudaStreamCreateWithFlags(&c, cudaStreamNonBlocking) != cudaSuccess || cudaStreamDestroy(c) != cudaSuccess)
            return 2;
    }
    mx_array *a = mx_empty(N, kDLCUDA);
    for (int i = 0; i < exch; i++) {
        DLManagedTensor *t;
        void *h;
        if (MXNDArrayToDLPack(a, &t) || TVMArrayFromDLPack(t, &h))
            return 2;
        tvm_free(h);
    }
    for (int i = 0; i < xstreams; i++) { /* the consumer's own stream for each import */
        cudaStream_t c;
        DLManagedTensor *t;
        void *h;
        if (cudaStreamCreateWithFlags(&c, cudaStreamNonBlocking) != cudaSuccess || MXNDArrayToDLPack(a, &t) ||
            TVMArrayFromDLPack(t, &h))
            return 2;
        tvm_free(h);
        if (cudaStreamDestroy(c) != cudaSuccess)
            return 2;
    }
    if (cudaStreamSynchronize(s) != cudaSuccess)
        return 2;
    for (int i = 0; i < live; i++) {
        held[i]->deleter(held[i]);
        mx_free(arrays[i]);
    }
    mx_free(a);
    free(held);
    free(arrays);
    return 0;
}

/* What runs beside the probe: nothing, dlsync in a mode, or the null subscriber enabling what
 * dlsync enables in fix (driver callbacks) or in check (driver and runtime callbacks). */
typedef enum { WITH_NOTHING, WITH_SHIM, WITH_NULL_FIX, WITH_NULL_CHECK } with;

/* One setting of the probe: what runs beside it, the shim's mode, log on or off, live tensors. */
typedef struct {
    with w;
    const char *mode;
    int log;
    int live;
} setting;

/* What the probe repeats. */
typedef enum { UNIT_OP, UNIT_HOSTFN, UNIT_EXCH, UNIT_STREAM, UNIT_XSTREAM } unit;

/* 1 for the units counted on the probe's calling thread only (the others: the whole process). */
static int calling_thread(unit u)
{
    return u == UNIT_OP || u == UNIT_STREAM || u == UNIT_XSTREAM;
}

/* The "totals:" figure of a callgrind output file; -1 when there is none. */
static double thread_total(const char *path)
{
    FILE *f = fopen(path, "r");
    char line[256];
    double v = -1;
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "totals: ", 8))
            v = atof(line + 8);
    if (f)
        fclose(f);
    return v;
}

/* The probe's instruction total under callgrind with n repetitions of u (of its calling thread
 * only when calling_thread(u)); -1 when it failed. */
static double instructions(const setting *s, unit u, int n)
{
    char self[1024], shim[1024], cupti[1024], preload[2048], e_pre[2100], e_mode[64], e_ops[64];
    char e_exch[64], e_live[64], e_cupti[1100], e_log[300], log[256], e_hostfn[64], nullsub[1024];
    char e_inject[1100], e_streams[64], e_xstreams[64];
    dls_build_path(self, sizeof self, "tests/bench_cost");
    dls_build_path(shim, sizeof shim, "lib/libdlsync.so");
    dls_build_path(cupti, sizeof cupti, "cudasim/libcupti.so.13");
    dls_build_path(nullsub, sizeof nullsub, "scenarios/libnullsub.so");
    int shimmed = s->w == WITH_SHIM, null = s->w == WITH_NULL_FIX || s->w == WITH_NULL_CHECK;
    snprintf(e_pre, sizeof e_pre, "LD_PRELOAD=%s", shimmed ? dls_preload_value(preload, sizeof preload, shim) : "");
    snprintf(e_mode, sizeof e_mode, "DLSYNC_MODE=%s", shimmed ? s->mode : "");
    snprintf(e_ops, sizeof e_ops, "COST_OPS=%d", u == UNIT_OP ? n : 0);
    snprintf(e_hostfn, sizeof e_hostfn, "COST_HOSTFN=%d", u == UNIT_HOSTFN ? n : 0);
    snprintf(e_exch, sizeof e_exch, "COST_EXCH=%d", u == UNIT_EXCH ? n : 0);
    snprintf(e_streams, sizeof e_streams, "COST_STREAMS=%d", u == UNIT_STREAM ? n : 0);
    snprintf(e_xstreams, sizeof e_xstreams, "COST_XSTREAMS=%d", u == UNIT_XSTREAM ? n : 0);
    snprintf(e_live, sizeof e_live, "COST_LIVE=%d", s->live);
    snprintf(e_cupti, sizeof e_cupti, "DLSYNC_CUPTI=%s", cupti);
    snprintf(log, sizeof log, "/tmp/dls_bench_cost.%d.jsonl", (int)getpid());
    snprintf(e_log, sizeof e_log, "DLSYNC_LOG=%s", s->log ? log : "");
    snprintf(e_inject, sizeof e_inject, "CUDA_INJECTION64_PATH=%s", null ? nullsub : "");
    const char *env[] = {e_pre,
                         e_mode,
                         e_ops,
                         e_hostfn,
                         e_exch,
                         e_live,
                         e_cupti,
                         e_log,
                         "COST_CHILD=1",
                         e_inject,
                         s->w == WITH_NULL_CHECK ? "NULLSUB_RUNTIME=1" : "NULLSUB_RUNTIME=0",
                         e_streams,
                         e_xstreams,
                         NULL};
    char out[300], thread1[320], e_out[340];
    snprintf(out, sizeof out, "/tmp/dls_bench_cost.%d.cg", (int)getpid());
    snprintf(thread1, sizeof thread1, "%s-01", out);
    snprintf(e_out, sizeof e_out, "--callgrind-out-file=%s", calling_thread(u) ? out : "/dev/null");
    const char *op_argv[] = {"valgrind", "--tool=callgrind", "--separate-threads=yes", "--fair-sched=yes", e_out, self,
                             NULL};
    const char *whole_argv[] = {"valgrind", "--tool=callgrind", e_out, self, NULL};
    const char *const *argv = calling_thread(u) ? op_argv : whole_argv;
    dls_run_result r;
    if (dls_run(argv, env, &r) != 0)
        return -1;
    const char *c = strstr(r.err, "Collected : ");
    double v = r.status == 0 && c ? atof(c + 12) : -1;
    if (calling_thread(u) && v >= 0)
        v = thread_total(thread1);
    if (r.status != 0)
        fprintf(stderr, "bench_cost: probe failed (status %d):\n%s\n", r.status, r.err);
    dls_run_free(&r);
    unlink(log);
    for (int i = 1; calling_thread(u) && i < 100; i++) { /* the per-thread files */
        snprintf(thread1, sizeof thread1, "%s-%02d", out, i);
        unlink(thread1);
    }
    return v;
}

/* Instructions per unit u of the probe in setting s (UNIT_OP: the median of three, but one run
 * with 10,000 live tensors, whose set-up takes minutes under valgrind). */
static double per_unit(const setting *s, unit u)
{
    int fewer = u == UNIT_EXCH || u == UNIT_STREAM || u == UNIT_XSTREAM;
    int n1 = fewer ? EXCH1 : OPS1, n2 = fewer ? EXCH2 : OPS2;
    double v[3];
    int runs = u == UNIT_OP && s->live < SPREAD ? 3 : 1;
    for (int i = 0; i < runs; i++) {
        double a = instructions(s, u, n1), b = instructions(s, u, n2);
        if (a < 0 || b < 0)
            return -1;
        v[i] = (b - a) / (n2 - n1);
    }
    if (runs == 1)
        return v[0];
    double lo = v[0] < v[1] ? v[0] : v[1], hi = v[0] < v[1] ? v[1] : v[0];
    return v[2] < lo ? lo : v[2] > hi ? hi : v[2];
}

/* The command that measures a setting (the figure is the difference of two such runs). */
static void print_command(const setting *s, unit u)
{
    const char *many = u == UNIT_OP || u == UNIT_HOSTFN ? "{1000,3000}" : "{200,600}";
    printf("      COST_CHILD=1 COST_OPS=%s COST_HOSTFN=%s COST_EXCH=%s COST_STREAMS=%s COST_XSTREAMS=%s COST_LIVE=%d",
           u == UNIT_OP ? many : "0", u == UNIT_HOSTFN ? many : "0", u == UNIT_EXCH ? many : "0",
           u == UNIT_STREAM ? many : "0", u == UNIT_XSTREAM ? many : "0", s->live);
    if (s->w == WITH_SHIM)
        printf(" DLSYNC_MODE=%s LD_PRELOAD=build/lib/libdlsync.so DLSYNC_CUPTI=build/cudasim/libcupti.so.13%s", s->mode,
               s->log ? " DLSYNC_LOG=/tmp/log.jsonl" : "");
    else if (s->w != WITH_NOTHING)
        printf(" CUDA_INJECTION64_PATH=build/scenarios/libnullsub.so%s",
               s->w == WITH_NULL_CHECK ? " NULLSUB_RUNTIME=1" : "");
    printf(" valgrind --tool=callgrind %sbuild/tests/bench_cost\n",
           calling_thread(u) ? "--separate-threads=yes --fair-sched=yes (thread 1) " : "");
}

/* The null subscriber that enables what the shim enables in setting s (WITH_NOTHING for trace,
 * which subscribes to nothing). */
static with null_of(const setting *s)
{
    if (!strcmp(s->mode, "trace"))
        return WITH_NOTHING;
    return !strcmp(s->mode, "fix") ? WITH_NULL_FIX : WITH_NULL_CHECK;
}

/* Per-unit baselines, measured once per (baseline, live count). */
typedef struct {
    with w;
    int live;
    double v;
} baseline;

static double baseline_of(baseline *b, size_t *nb, with w, int live, unit u, int print)
{
    for (size_t i = 0; i < *nb; i++)
        if (b[i].w == w && b[i].live == live)
            return b[i].v;
    setting s = {w, NULL, 0, live};
    b[*nb] = (baseline){w, live, per_unit(&s, u)};
    static const char *const names[] = {"no subscriber", "", "null subscriber (fix's callbacks)",
                                        "null subscriber (check's callbacks)"};
    if (print) {
        printf("    baseline: %-48s %8.0f instructions\n", names[w], b[*nb].v);
        print_command(&s, u);
    }
    return b[(*nb)++].v;
}

/* Prints the figure of shim setting s against no subscriber and against its null subscriber;
 * returns the first (dlsync's own cost), or -1 when a run failed. */
static double print_figure(const char *name, const setting *s, unit u, baseline *b, size_t *nb)
{
    double none = baseline_of(b, nb, WITH_NOTHING, s->live, u, 1);
    double null = baseline_of(b, nb, null_of(s), s->live, u, 1);
    double v = per_unit(s, u);
    printf("    %-58s own %+6.0f   with CUPTI dispatch %+6.0f instructions\n", name, v - null, v - none);
    print_command(s, u);
    return v < 0 || none < 0 || null < 0 ? -1 : v - null;
}

/* The figures of this benchmark that a budget holds. */
static const dls_budget_id g_held[] = {
    DLS_BUDGET_FIX_OP,     DLS_BUDGET_FIX_PENDING_OP,        DLS_BUDGET_CHECK_OP,           DLS_BUDGET_FIX_EXCHANGE,
    DLS_BUDGET_LOG_RECORD, DLS_BUDGET_STREAM_CREATE_DESTROY, DLS_BUDGET_FIX_STREAM_EXCHANGE};

int main(void)
{
    if (getenv("COST_CHILD"))
        return child();
    if (system("valgrind --version >/dev/null 2>&1") != 0) {
        printf("bench_cost: valgrind not installed, skipped\n");
        for (size_t i = 0; i < sizeof g_held / sizeof *g_held; i++)
            dls_budget_print(g_held[i], -1);
        return 0;
    }
    printf("instructions added by dlsync (callgrind, whole process; a baseline run's instructions "
           "subtracted)\n");
    printf("  \"own\": against the null subscriber (libnullsub.so: the same CUPTI callbacks enabled, empty); "
           "\"with CUPTI dispatch\": against no subscriber\n");
    static const setting op_settings[] = {
        {WITH_SHIM, "trace", 0, 0}, {WITH_SHIM, "check", 0, 0},    {WITH_SHIM, "fix", 0, 0},
        {WITH_SHIM, "fix", 0, 1},   {WITH_SHIM, "fix", 0, SPREAD}, {WITH_SHIM, "check", 0, SPREAD},
    };
    static const char *const op_names[] = {
        "trace",
        "check",
        "fix",
        "fix, one exchanged tensor pending",
        "fix, 10000 exchanged tensors pending, spread over the heap",
        "check, 10000 exchanged tensors live, spread over the heap",
    };
    static const int op_budgets[] = {-1, DLS_BUDGET_CHECK_OP, DLS_BUDGET_FIX_OP, DLS_BUDGET_FIX_PENDING_OP, -1, -1};
    baseline b[16];
    size_t nb = 0;
    double one = 0;
    printf(
        "  per cudaMemsetAsync on one stream, touching no exchanged tensor (the calling thread, median of 3 runs):\n");
    for (size_t i = 0; i < sizeof op_settings / sizeof *op_settings; i++) {
        double v = print_figure(op_names[i], &op_settings[i], UNIT_OP, b, &nb);
        if (op_budgets[i] >= 0)
            dls_budget_print((dls_budget_id)op_budgets[i], v);
        if (op_settings[i].live == 1)
            one = v;
        if (op_settings[i].live == SPREAD && !strcmp(op_settings[i].mode, "fix") && one > 0)
            printf("      (own cost %.2fx the cost with one pending)\n", v / one);
    }
    static const setting h_settings[] = {{WITH_SHIM, "check", 0, 0}, {WITH_SHIM, "fix", 0, 0}};
    static const char *const h_names[] = {"check (one event record before each)", "fix"};
    printf("  per cudaLaunchHostFunc of an empty function on one stream:\n");
    nb = 0;
    for (size_t i = 0; i < sizeof h_settings / sizeof *h_settings; i++)
        print_figure(h_names[i], &h_settings[i], UNIT_HOSTFN, b, &nb);
    static const setting x_settings[] = {
        {WITH_NOTHING, NULL, 0, 0}, {WITH_SHIM, "fix", 0, 0},   {WITH_SHIM, "check", 0, 0},
        {WITH_SHIM, "trace", 0, 0}, {WITH_SHIM, "trace", 1, 0},
    };
    static const char *const x_names[] = {"no shim", "fix", "check", "trace, log off", "trace, log on"};
    double xv[5];
    printf("  per legacy exchange of a device tensor (export + import + release):\n");
    for (size_t i = 0; i < sizeof x_settings / sizeof *x_settings; i++) {
        xv[i] = per_unit(&x_settings[i], UNIT_EXCH);
        if (i == 0)
            printf("    %-58s %8.0f instructions\n", x_names[i], xv[i]);
        else
            printf("    %-58s %+8.0f instructions\n", x_names[i], xv[i] - xv[0]);
        print_command(&x_settings[i], UNIT_EXCH);
        if (i == 1)
            dls_budget_print(DLS_BUDGET_FIX_EXCHANGE, xv[0] < 0 || xv[1] < 0 ? -1 : xv[1] - xv[0]);
    }
    printf("  per log record (3 records per exchange: export, import, release): %.0f instructions\n",
           (xv[4] - xv[3]) / 3);
    printf("      the difference of the two trace runs above, divided by 3\n");
    dls_budget_print(DLS_BUDGET_LOG_RECORD, xv[3] < 0 || xv[4] < 0 ? -1 : (xv[4] - xv[3]) / 3);
    static const setting s_settings[] = {
        {WITH_NOTHING, NULL, 0, 0}, {WITH_SHIM, "fix", 0, 0}, {WITH_SHIM, "check", 0, 0}};
    static const char *const s_names[] = {"no shim", "fix", "check"};
    static const struct {
        unit u;
        const char *title;
        dls_budget_id fix_budget; /* holds fix's figure */
    } s_units[] = {
        {UNIT_STREAM, "per stream create + destroy (cudaStreamCreateWithFlags, cudaStreamDestroy; the calling thread)",
         DLS_BUDGET_STREAM_CREATE_DESTROY},
        {UNIT_XSTREAM,
         "per legacy exchange with a stream the consumer creates for it (create, export, import, "
         "release, destroy; the calling thread)",
         DLS_BUDGET_FIX_STREAM_EXCHANGE},
    };
    for (size_t k = 0; k < sizeof s_units / sizeof *s_units; k++) {
        printf("  %s:\n", s_units[k].title);
        double none = 0;
        for (size_t i = 0; i < sizeof s_settings / sizeof *s_settings; i++) {
            double v = per_unit(&s_settings[i], s_units[k].u);
            if (i == 0) {
                none = v;
                printf("    %-58s %8.0f instructions\n", s_names[i], v);
            } else {
                printf("    %-58s %+8.0f instructions\n", s_names[i], v - none);
            }
            print_command(&s_settings[i], s_units[k].u);
            if (s_settings[i].w == WITH_SHIM && !strcmp(s_settings[i].mode, "fix"))
                dls_budget_print(s_units[k].fix_budget, v < 0 || none < 0 ? -1 : v - none);
        }
    }
    return 0;
}
