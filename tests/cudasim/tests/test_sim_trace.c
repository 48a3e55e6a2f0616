/* test_sim_trace.c: the trace (tests/cudasim/trace.h): calls' C/R lines and their nesting,
 * streams, operations with their accesses, event records and waits, dependencies, host waits,
 * allocations, notes, graph launches.
 *
 * The program runs itself again with CUDASIM_TRACE set (the trace is chosen when libcuda.so.1
 * loads); each test writes a note, acts, and reads the lines after its note. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cuda_runtime_api.h>
#include <cupti_driver_cbid.h>

#include "cudasim.h"
#include "cudasim_hook.h"
#include "simtest.h"

#define MAX_TOKENS 24

/* One trace line split at spaces: tok[0] is the stamp, tok[1] the tag. */
typedef struct {
    char *text, *copy; /* the line, and the copy its tokens point into */
    int ntok;
    char *tok[MAX_TOKENS];
} line;

static char g_path[256];
static line *g_lines;
static size_t g_nlines;
static unsigned g_marks;

static void free_lines(void)
{
    for (size_t i = 0; i < g_nlines; i++) {
        free(g_lines[i].text);
        free(g_lines[i].copy);
    }
    free(g_lines);
    g_lines = NULL;
    g_nlines = 0;
}

/* Reads the whole trace again. */
static void load(void)
{
    free_lines();
    FILE *f = fopen(g_path, "r");
    assert_non_null(f);
    char buf[4096];
    size_t cap = 0;
    while (fgets(buf, sizeof buf, f)) {
        buf[strcspn(buf, "\n")] = '\0';
        if (g_nlines == cap) {
            cap = cap ? cap * 2 : 256;
            g_lines = realloc(g_lines, cap * sizeof *g_lines);
            assert_non_null(g_lines);
        }
        line *l = &g_lines[g_nlines++];
        l->text = strdup(buf);
        assert_non_null(l->text);
        char *save = NULL;
        l->copy = strdup(buf);
        assert_non_null(l->copy);
        l->ntok = 0;
        for (char *t = strtok_r(l->copy, " ", &save); t && l->ntok < MAX_TOKENS; t = strtok_r(NULL, " ", &save))
            l->tok[l->ntok++] = t;
    }
    fclose(f);
}

/* Writes a note naming this test and returns a label the lines after it are found by. */
static size_t mark(const char *name)
{
    char label[128];
    snprintf(label, sizeof label, "mark-%u-%s", ++g_marks, name);
    cudasim_trace_note("%s", label);
    load();
    for (size_t i = 0; i < g_nlines; i++)
        if (g_lines[i].ntok >= 5 && strcmp(g_lines[i].tok[1], "N") == 0 && strcmp(g_lines[i].tok[4], label) == 0)
            return i;
    fail_msg("note %s not in the trace", label);
    return 0;
}

/* The index of the first line at or after `from` whose tokens after the stamp match the pattern
 * (tokens separated by spaces, "*" matches any one token, the line may have more tokens), or
 * (size_t)-1. */
static size_t find(size_t from, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static size_t find(size_t from, const char *fmt, ...)
{
    char pat[512], *save = NULL, *want[MAX_TOKENS];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(pat, sizeof pat, fmt, ap);
    va_end(ap);
    int n = 0;
    for (char *t = strtok_r(pat, " ", &save); t && n < MAX_TOKENS; t = strtok_r(NULL, " ", &save))
        want[n++] = t;
    for (size_t i = from; i < g_nlines; i++) {
        const line *l = &g_lines[i];
        if (l->ntok < n + 1)
            continue;
        int ok = 1;
        for (int k = 0; k < n && ok; k++)
            ok = strcmp(want[k], "*") == 0 || strcmp(want[k], l->tok[k + 1]) == 0;
        if (ok)
            return i;
    }
    return (size_t)-1;
}

/* Like find, failing the test when there is no such line. */
#define must_find(from, ...)                                                 \
    ({                                                                       \
        size_t at_ = find((from), __VA_ARGS__);                              \
        if (at_ == (size_t)-1) {                                             \
            print_error("no line \"");                                       \
            print_error(__VA_ARGS__);                                        \
            print_error("\" in the trace after line %zu\n", (size_t)(from)); \
            fail();                                                          \
        }                                                                    \
        at_;                                                                 \
    })

static const char *tok(size_t i, int k)
{
    assert_true(i < g_nlines);
    assert_true(k < g_lines[i].ntok);
    return g_lines[i].tok[k];
}

static unsigned long long num(size_t i, int k)
{
    return strtoull(tok(i, k), NULL, 0);
}

static int tid(void)
{
    return (int)syscall(SYS_gettid);
}

/* The C line of the next call of `name` by this thread at or after `from`. */
static size_t call_line(size_t from, const char *name)
{
    return must_find(from, "C * %d %s", tid(), name);
}

static unsigned long long sid(CUstream s)
{
    unsigned long long id = 0;
    assert_int_equal(cuStreamGetId(s, &id), CUDA_SUCCESS);
    return id;
}

static CUstream g_a, g_b, g_c;

static int setup(void **state)
{
    (void)state;
    simtest_init_streams(&g_a, &g_b, &g_c);
    return 0;
}

static void calls_begin_and_end_in_host_order(void **state)
{
    (void)state;
    size_t m = mark("calls");
    int dev = -1;
    assert_int_equal(cuCtxGetDevice(&dev), CUDA_SUCCESS);
    unsigned long long id = 0;
    assert_int_equal(cuStreamGetId(g_a, &id), CUDA_SUCCESS);
    load();
    size_t c1 = call_line(m, "cuCtxGetDevice");
    size_t b1 = must_find(c1, "B %s", tok(c1, 2)), d1 = must_find(b1, "D %s", tok(c1, 2));
    size_t r1 = must_find(d1, "R %s", tok(c1, 2));
    size_t c2 = call_line(r1, "cuStreamGetId");
    must_find(c2, "R %s", tok(c2, 2));
    assert_true(num(c2, 2) > num(c1, 2));
    /* nothing happened in between: the body begins after the ENTER hook, ends before the EXIT's */
    assert_int_equal(num(b1, 0), num(c1, 0) + 1);
    assert_int_equal(num(d1, 0), num(b1, 0) + 1);
    assert_int_equal(num(r1, 0), num(d1, 0) + 1);
}

static void runtime_calls_nest_their_driver_calls(void **state)
{
    (void)state;
    size_t m = mark("nesting");
    void *p = NULL;
    assert_int_equal(cudaMalloc(&p, 64), cudaSuccess);
    load();
    size_t outer = call_line(m, "cudaMalloc_v3020");
    size_t inner = call_line(outer, "cuMemAlloc_v2");
    size_t alloc = must_find(inner, "M %p 64 %s", p, tok(inner, 2));
    size_t inner_r = must_find(alloc, "R %s", tok(inner, 2));
    must_find(inner_r, "R %s", tok(outer, 2));
    assert_int_equal(cudaFree(p), cudaSuccess);
    load();
    size_t fr = call_line(m, "cuMemFree_v2");
    must_find(fr, "F %p 64 %s", p, tok(fr, 2));
}

/* A hook that makes a call of its own inside cuCtxSynchronize's ENTER, as a tool does. */
static void nesting_hook(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void *data)
{
    const CUpti_CallbackData *d = data;
    if (domain == CUPTI_CB_DOMAIN_DRIVER_API && cbid == CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize &&
        d->callbackSite == CUPTI_API_ENTER) {
        CUcontext ctx;
        cuCtxGetCurrent(&ctx);
    }
}

static void calls_from_a_hook_nest_inside_the_call(void **state)
{
    (void)state;
    size_t m = mark("hook");
    cudasim_set_callback_hook(nesting_hook);
    assert_int_equal(cuCtxSynchronize(), CUDA_SUCCESS);
    cudasim_set_callback_hook(NULL);
    load();
    size_t outer = call_line(m, "cuCtxSynchronize");
    size_t inner = call_line(outer, "cuCtxGetCurrent");
    size_t inner_r = must_find(inner, "R %s", tok(inner, 2));
    size_t outer_r = must_find(outer, "R %s", tok(outer, 2));
    assert_true(inner_r < outer_r);
}

static void record_and_wait_across_streams(void **state)
{
    (void)state;
    CUevent e;
    int *x = simtest_dev_int(0);
    assert_int_equal(cuEventCreate(&e, 0), CUDA_SUCCESS);
    size_t m = mark("record-wait");
    cudasim_stream_hold(g_a);
    assert_int_equal(simtest_store(g_a, x, 1), CUDA_SUCCESS);
    assert_int_equal(cuEventRecord(e, g_a), CUDA_SUCCESS);
    assert_int_equal(cuStreamWaitEvent(g_b, e, 0), CUDA_SUCCESS);
    assert_int_equal(simtest_store(g_b, x, 2), CUDA_SUCCESS);
    cudasim_stream_release(g_a);
    assert_int_equal(cuStreamSynchronize(g_b), CUDA_SUCCESS);
    load();
    unsigned long long a = sid(g_a), b = sid(g_b);
    size_t rc = call_line(m, "cuEventRecord");
    size_t rec = must_find(rc, "O * %s %llu * record", tok(rc, 2), a);
    unsigned long long rec_seq = num(rec, 5);
    size_t ev = must_find(rec, "E %s", tok(rec, 2));
    assert_int_equal(ev, rec + 1);
    const char *event = tok(ev, 3);
    size_t wc = call_line(ev, "cuStreamWaitEvent");
    size_t wait = must_find(wc, "O * %s %llu * wait", tok(wc, 2), b);
    assert_int_equal(find(wait, "W %s %s", tok(wait, 2), event), wait + 1);
    must_find(wait, "P %s %llu %llu", tok(wait, 2), a, rec_seq);
    size_t kc = call_line(wait, "cuLaunchKernel");
    size_t k = must_find(kc, "O * %s %llu %llu kernel m:%p:4", tok(kc, 2), b, num(wait, 5) + 1, (void *)x);
    (void)k;
    size_t sc = call_line(m, "cuStreamSynchronize");
    must_find(sc, "H %s %llu %llu", tok(sc, 2), b, num(wait, 5) + 1);
    cuEventDestroy(e);
}

static void legacy_stream_work_gets_implicit_dependencies(void **state)
{
    (void)state;
    CUstream blocking;
    assert_int_equal(cuStreamCreate(&blocking, CU_STREAM_DEFAULT), CUDA_SUCCESS);
    int *x = simtest_dev_int(0), *y = simtest_dev_int(0); /* y: g_a's store runs beside the others */
    size_t m = mark("legacy");
    cudasim_stream_hold(blocking);
    assert_int_equal(simtest_store(blocking, x, 1), CUDA_SUCCESS);
    assert_int_equal(simtest_store(g_a, y, 2), CUDA_SUCCESS); /* non-blocking: no dependency */
    assert_int_equal(simtest_store(NULL, x, 3), CUDA_SUCCESS);
    assert_int_equal(simtest_store(blocking, x, 4), CUDA_SUCCESS);
    cudasim_stream_release(blocking);
    assert_int_equal(cuCtxSynchronize(), CUDA_SUCCESS);
    load();
    unsigned long long bl = sid(blocking), a = sid(g_a), legacy = sid(CU_STREAM_LEGACY);
    size_t k1 = must_find(m, "O * * %llu * kernel", bl);
    size_t k2 = must_find(m, "O * * %llu * kernel", a);
    size_t k3 = must_find(m, "O * * %llu * kernel", legacy);
    must_find(k3, "P %s %llu %s", tok(k3, 2), bl, tok(k1, 5));
    assert_int_equal(find(k3, "P %s %llu", tok(k3, 2), a), (size_t)-1);
    size_t k4 = must_find(k3 + 1, "O * * %llu * kernel", bl);
    must_find(k4, "P %s %llu %s", tok(k4, 2), legacy, tok(k3, 5));
    (void)k2;
    /* the context synchronize waited for each stream's snapshot */
    size_t cs = call_line(m, "cuCtxSynchronize");
    must_find(cs, "H %s %llu %s", tok(cs, 2), bl, tok(k4, 5));
    must_find(cs, "H %s %llu %s", tok(cs, 2), legacy, tok(k3, 5));
    must_find(cs, "H %s %llu %s", tok(cs, 2), a, tok(k2, 5));
    assert_int_equal(cuStreamDestroy(blocking), CUDA_SUCCESS);
}

static void nothing(void *unused)
{
    (void)unused;
}

static void accesses_of_copies_sets_and_kernels(void **state)
{
    (void)state;
    CUdeviceptr d;
    assert_int_equal(cuMemAlloc(&d, 256), CUDA_SUCCESS);
    char host[64] = {0};
    size_t m = mark("accesses");
    assert_int_equal(cuMemcpyHtoDAsync(d + 16, host, 32, g_a), CUDA_SUCCESS);
    assert_int_equal(cuMemsetD32Async(d + 64, 7, 8, g_a), CUDA_SUCCESS);
    assert_int_equal(cuMemsetD8Async(d, 1, 5, g_a), CUDA_SUCCESS);
    assert_int_equal(simtest_store(g_a, (int *)(uintptr_t)(d + 100), 5), CUDA_SUCCESS);
    assert_int_equal(simtest_append(g_a, 9), CUDA_SUCCESS);
    assert_int_equal(cuLaunchHostFunc(g_a, nothing, NULL), CUDA_SUCCESS);
    assert_int_equal(cuStreamSynchronize(g_a), CUDA_SUCCESS);
    load();
    unsigned long long a = sid(g_a);
    size_t c = must_find(m, "O * * %llu * copy r:%p:32 w:0x%llx:32", a, (void *)host, (unsigned long long)(d + 16));
    size_t s32 = must_find(c, "O * * %llu * set w:0x%llx:32", a, (unsigned long long)(d + 64));
    size_t s8 = must_find(s32, "O * * %llu * set w:0x%llx:5", a, (unsigned long long)d);
    size_t k = must_find(s8, "O * * %llu * kernel m:0x%llx:156", a, (unsigned long long)(d + 100));
    assert_int_equal(g_lines[k].ntok, 8);
    size_t k2 = must_find(k + 1, "O * * %llu * kernel", a);
    assert_int_equal(g_lines[k2].ntok, 7); /* an int argument accesses nothing */
    size_t h = must_find(k2, "O * * %llu * hostfn", a);
    assert_int_equal(g_lines[h].ntok, 7);
    assert_int_equal(cuMemFree(d), CUDA_SUCCESS);
}

static void host_waits(void **state)
{
    (void)state;
    CUevent e;
    int *x = simtest_dev_int(0);
    assert_int_equal(cuEventCreate(&e, 0), CUDA_SUCCESS);
    size_t m = mark("host-waits");
    assert_int_equal(simtest_store(g_c, x, 1), CUDA_SUCCESS);
    assert_int_equal(cuEventRecord(e, g_c), CUDA_SUCCESS);
    assert_int_equal(cuEventSynchronize(e), CUDA_SUCCESS);
    assert_int_equal(cuEventQuery(e), CUDA_SUCCESS);
    assert_int_equal(cuStreamQuery(g_c), CUDA_SUCCESS);
    int back = 0;
    assert_int_equal(cuMemcpyDtoH(&back, (CUdeviceptr)(uintptr_t)x, sizeof back), CUDA_SUCCESS);
    assert_int_equal(cuMemFree((CUdeviceptr)(uintptr_t)x), CUDA_SUCCESS);
    load();
    unsigned long long c = sid(g_c), legacy = sid(CU_STREAM_LEGACY);
    size_t rec = must_find(m, "O * * %llu * record", c);
    size_t ev = must_find(rec, "E %s", tok(rec, 2));
    size_t sync = call_line(m, "cuEventSynchronize");
    must_find(sync, "HE %s %s", tok(sync, 2), tok(ev, 3));
    size_t query = call_line(m, "cuEventQuery");
    must_find(query, "HE %s %s", tok(query, 2), tok(ev, 3));
    size_t squery = call_line(m, "cuStreamQuery");
    must_find(squery, "H %s %llu %s", tok(squery, 2), c, tok(rec, 5));
    size_t copy = call_line(m, "cuMemcpyDtoH_v2");
    size_t op = must_find(copy, "O * %s %llu * copy", tok(copy, 2), legacy);
    must_find(op, "H %s %llu %s", tok(copy, 2), legacy, tok(op, 5));
    size_t fr = call_line(m, "cuMemFree_v2");
    size_t h = must_find(fr, "H %s %llu %s", tok(fr, 2), c, tok(rec, 5));
    must_find(h, "F %p 4 %s", (void *)x, tok(fr, 2));
    cuEventDestroy(e);
}

static void streams_come_and_go(void **state)
{
    (void)state;
    CUstream s, nb;
    size_t m = mark("streams");
    assert_int_equal(cuStreamCreate(&s, CU_STREAM_DEFAULT), CUDA_SUCCESS);
    assert_int_equal(cuStreamCreate(&nb, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
    unsigned long long ctx_id = 0;
    assert_int_equal(cuCtxGetId(NULL, &ctx_id), CUDA_SUCCESS);
    unsigned long long id = sid(s), nb_id = sid(nb);
    assert_int_equal(cuStreamDestroy(s), CUDA_SUCCESS);
    load();
    must_find(m, "S %llu %llu 0 user 1", id, ctx_id);
    must_find(m, "S %llu %llu 0 user 0", nb_id, ctx_id);
    size_t d = call_line(m, "cuStreamDestroy_v2");
    must_find(d, "X %llu %s", id, tok(d, 2));
    assert_int_equal(cuStreamDestroy(nb), CUDA_SUCCESS);
}

static unsigned long long g_thread_stream;

static void *per_thread_worker(void *arg)
{
    int *x = arg;
    CUcontext ctx;
    cuDevicePrimaryCtxRetain(&ctx, 0);
    cuCtxSetCurrent(ctx);
    simtest_store(CU_STREAM_PER_THREAD, x, 4);
    cuStreamGetId(CU_STREAM_PER_THREAD, &g_thread_stream);
    cuStreamSynchronize(CU_STREAM_PER_THREAD);
    return (void *)(intptr_t)tid();
}

static void per_thread_streams_and_other_threads(void **state)
{
    (void)state;
    int *x = simtest_dev_int(0);
    size_t m = mark("threads");
    pthread_t t;
    void *other;
    assert_int_equal(pthread_create(&t, NULL, per_thread_worker, x), 0);
    assert_int_equal(pthread_join(t, &other), 0);
    load();
    int otid = (int)(intptr_t)other;
    size_t c = must_find(m, "C * %d cuLaunchKernel", otid);
    size_t s = must_find(c, "S %llu * 0 ptds 1", g_thread_stream);
    must_find(s, "O * %s %llu 1 kernel", tok(c, 2), g_thread_stream);
    must_find(s, "X %llu 0", g_thread_stream); /* retired as the thread exited, by no call */
}

static void notes_are_one_line(void **state)
{
    (void)state;
    size_t m = mark("notes");
    cudasim_trace_note("hello %d\nworld", 5);
    load();
    size_t n = must_find(m + 1, "N 0 %d hello 5 world", tid());
    assert_int_equal(g_lines[n].ntok, 7);
}

static void graph_launches_trace_each_node(void **state)
{
    (void)state;
    int *x = simtest_dev_int(0), *y = simtest_dev_int(0);
    CUgraph g;
    CUgraphExec ge;
    size_t m = mark("graph");
    assert_int_equal(cuStreamBeginCapture(g_a, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_SUCCESS);
    assert_int_equal(simtest_store(g_a, x, 1), CUDA_SUCCESS);
    assert_int_equal(cuMemcpyDtoDAsync((CUdeviceptr)(uintptr_t)y, (CUdeviceptr)(uintptr_t)x, 4, g_a), CUDA_SUCCESS);
    assert_int_equal(cuStreamEndCapture(g_a, &g), CUDA_SUCCESS);
    assert_int_equal(cuGraphInstantiateWithFlags(&ge, g, 0), CUDA_SUCCESS);
    load();
    assert_int_equal(find(m, "O"), (size_t)-1); /* captured work does not run */
    size_t m2 = mark("graph-launch");
    assert_int_equal(cuGraphLaunch(ge, g_b), CUDA_SUCCESS);
    assert_int_equal(cuStreamSynchronize(g_b), CUDA_SUCCESS);
    load();
    unsigned long long b = sid(g_b);
    size_t launch = call_line(m2, "cuGraphLaunch");
    size_t k = must_find(launch, "O * %s %llu * kernel m:%p:4", tok(launch, 2), b, (void *)x);
    size_t gk = must_find(k, "G %s * 1", tok(k, 2));
    size_t c = must_find(k, "O * %s %llu * copy r:%p:4 w:%p:4", tok(launch, 2), b, (void *)x, (void *)y);
    must_find(c, "G %s %s 2", tok(c, 2), tok(gk, 3));
    assert_int_equal(num(c, 5), num(k, 5) + 1);
    cuGraphExecDestroy(ge);
    cuGraphDestroy(g);
}

int main(int argc, char **argv)
{
    (void)argc;
    const char *dir = getenv("TMPDIR");
    snprintf(g_path, sizeof g_path, "%s/test_sim_trace.%d", dir && *dir ? dir : "/tmp", (int)getpid());
    if (!getenv("TEST_SIM_TRACE_CHILD")) { /* run again with the trace on (same pid) */
        setenv("TEST_SIM_TRACE_CHILD", "1", 1);
        char env[300];
        snprintf(env, sizeof env, "%s/test_sim_trace.%%p", dir && *dir ? dir : "/tmp");
        setenv("CUDASIM_TRACE", env, 1);
        execv("/proc/self/exe", argv);
        perror("test_sim_trace: execv");
        return 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(calls_begin_and_end_in_host_order),
        cmocka_unit_test(runtime_calls_nest_their_driver_calls),
        cmocka_unit_test(calls_from_a_hook_nest_inside_the_call),
        cmocka_unit_test(record_and_wait_across_streams),
        cmocka_unit_test(legacy_stream_work_gets_implicit_dependencies),
        cmocka_unit_test(accesses_of_copies_sets_and_kernels),
        cmocka_unit_test(host_waits),
        cmocka_unit_test(streams_come_and_go),
        cmocka_unit_test(per_thread_streams_and_other_threads),
        cmocka_unit_test(notes_are_one_line),
        cmocka_unit_test(graph_launches_trace_each_node),
    };
    int failed = cmocka_run_group_tests(tests, setup, NULL);
    free_lines();
    if (!failed)
        unlink(g_path);
    return failed;
}
