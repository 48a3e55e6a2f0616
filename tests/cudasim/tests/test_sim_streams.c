/* test_sim_streams.c: stream semantics of the simulator: asynchronous to the host, in order per
 * stream, concurrent across streams, host syncs, unique never-reused ids, properties, a worker
 * thread only for a stream given work. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdatomic.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cuda_runtime_api.h>

#include "cudasim.h"
#include "simtest.h"

static int setup(void **state)
{
    (void)state;
    simtest_init();
    return 0;
}

static void launch_returns_before_the_kernel_runs(void **state)
{
    (void)state;
    CUstream s;
    int *x = simtest_dev_int(0);
    assert_int_equal(cuStreamCreate(&s, 0), CUDA_SUCCESS);
    assert_int_equal(cudasim_stream_hold(s), 0);
    assert_int_equal(simtest_store(s, x, 7), CUDA_SUCCESS);
    cudasim_settle();
    assert_int_equal(cuStreamQuery(s), CUDA_ERROR_NOT_READY);
    assert_int_equal(*x, 0);
    assert_int_equal(cudasim_stream_release(s), 0);
    assert_int_equal(cuStreamSynchronize(s), CUDA_SUCCESS);
    assert_int_equal(*x, 7);
    assert_int_equal(cuStreamQuery(s), CUDA_SUCCESS);
    cuStreamDestroy(s);
    cuMemFree((CUdeviceptr)(uintptr_t)x);
}

static void work_on_one_stream_runs_in_submission_order(void **state)
{
    (void)state;
    CUstream s;
    int log[300];
    assert_int_equal(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
    simtest_log(log, 0, 1);
    for (int i = 0; i < 300; i++)
        assert_int_equal(simtest_append(s, i), CUDA_SUCCESS);
    assert_int_equal(cuStreamSynchronize(s), CUDA_SUCCESS);
    assert_int_equal(simtest_log(log, 300, 1), 300);
    for (int i = 0; i < 300; i++)
        assert_int_equal(log[i], i);
    cuStreamDestroy(s);
}

/* A kernel on stream A that can only finish once a kernel on stream B has run: the two must run
 * at the same time. */
static atomic_int g_flag;
static void wait_flag(void **args)
{
    (void)args;
    while (!atomic_load(&g_flag))
        ;
}
static void set_flag(void **args)
{
    (void)args;
    atomic_store(&g_flag, 1);
}

static void streams_run_concurrently(void **state)
{
    (void)state;
    CUstream a, b;
    CUfunction waiter = cudasim_register_kernel("wait_flag", wait_flag, 0, NULL);
    CUfunction setter = cudasim_register_kernel("set_flag", set_flag, 0, NULL);
    assert_int_equal(cuStreamCreate(&a, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
    assert_int_equal(cuStreamCreate(&b, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
    atomic_store(&g_flag, 0);
    assert_int_equal(cuLaunchKernel(waiter, 1, 1, 1, 1, 1, 1, 0, a, NULL, NULL), CUDA_SUCCESS);
    assert_int_equal(cuLaunchKernel(setter, 1, 1, 1, 1, 1, 1, 0, b, NULL, NULL), CUDA_SUCCESS);
    assert_int_equal(cuStreamSynchronize(a), CUDA_SUCCESS);
    assert_int_equal(atomic_load(&g_flag), 1);
    cuStreamDestroy(a);
    cuStreamDestroy(b);
}

static void a_held_stream_does_not_block_another(void **state)
{
    (void)state;
    CUstream a, b;
    int *x = simtest_dev_int(0), *y = simtest_dev_int(0);
    assert_int_equal(cuStreamCreate(&a, 0), CUDA_SUCCESS);
    assert_int_equal(cuStreamCreate(&b, 0), CUDA_SUCCESS);
    cudasim_stream_hold(a);
    assert_int_equal(simtest_store(a, x, 1), CUDA_SUCCESS);
    assert_int_equal(simtest_store(b, y, 2), CUDA_SUCCESS);
    assert_int_equal(cuStreamSynchronize(b), CUDA_SUCCESS);
    assert_int_equal(*y, 2);
    assert_int_equal(cuStreamQuery(a), CUDA_ERROR_NOT_READY);
    cudasim_stream_release(a);
    assert_int_equal(cuCtxSynchronize(), CUDA_SUCCESS);
    assert_int_equal(*x, 1);
    cuStreamDestroy(a);
    cuStreamDestroy(b);
}

static void host_syncs_wait_for_slow_work(void **state)
{
    (void)state;
    CUstream s;
    int *x = simtest_dev_int(0);
    assert_int_equal(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
    assert_int_equal(cudasim_set_kernel_duration("store_int", 20000), 0);
    assert_int_equal(simtest_store(s, x, 3), CUDA_SUCCESS);
    assert_int_equal(cuStreamSynchronize(s), CUDA_SUCCESS);
    assert_int_equal(*x, 3);
    assert_int_equal(simtest_store(s, x, 4), CUDA_SUCCESS);
    assert_int_equal(cuCtxSynchronize(), CUDA_SUCCESS);
    assert_int_equal(*x, 4);
    assert_int_equal(simtest_store(s, x, 5), CUDA_SUCCESS);
    while (cuStreamQuery(s) == CUDA_ERROR_NOT_READY)
        ;
    assert_int_equal(*x, 5);
    assert_int_equal(cudasim_set_kernel_duration("store_int", 0), 0);
    cuStreamDestroy(s);
}

static int g_logged_at_host_fn;
static void count_log(void *user)
{
    int tmp[1];
    *(int *)user = simtest_log(tmp, 0, 0);
}

static void host_functions_run_in_stream_order(void **state)
{
    (void)state;
    CUstream s;
    int log[4];
    assert_int_equal(cuStreamCreate(&s, 0), CUDA_SUCCESS);
    simtest_log(log, 0, 1);
    g_logged_at_host_fn = -1;
    assert_int_equal(simtest_append(s, 1), CUDA_SUCCESS);
    assert_int_equal(simtest_append(s, 2), CUDA_SUCCESS);
    assert_int_equal(cuLaunchHostFunc(s, count_log, &g_logged_at_host_fn), CUDA_SUCCESS);
    assert_int_equal(simtest_append(s, 3), CUDA_SUCCESS);
    assert_int_equal(cuLaunchHostFunc(s, NULL, NULL), CUDA_ERROR_INVALID_VALUE);
    assert_int_equal(cuStreamSynchronize(s), CUDA_SUCCESS);
    assert_int_equal(g_logged_at_host_fn, 2);
    assert_int_equal(simtest_log(log, 4, 1), 3);
    cuStreamDestroy(s);
}

/* Fills tids (room for max) with the process's thread ids; returns how many. */
static int list_threads(pid_t *tids, int max)
{
    DIR *d = opendir("/proc/self/task");
    assert_non_null(d);
    int n = 0;
    for (struct dirent *e; (e = readdir(d)) && n < max;) {
        int tid = atoi(e->d_name); /* 0 for "." and ".." */
        if (tid > 0)
            tids[n++] = (pid_t)tid;
    }
    closedir(d);
    return n;
}

static int contains(const pid_t *tids, int n, pid_t tid)
{
    for (int i = 0; i < n; i++)
        if (tids[i] == tid)
            return 1;
    return 0;
}

static void note_tid(void *user)
{
    *(pid_t *)user = (pid_t)syscall(SYS_gettid);
}

/* A GPU makes no thread per stream: the simulator starts a stream's worker at its first work to
 * run, and that worker runs it. Marks that complete at once need none. */
static void a_stream_starts_its_worker_at_its_first_work(void **state)
{
    (void)state;
    pid_t before[256], now[256];
    int nbefore = list_threads(before, 256);
    CUstream s;
    CUevent e;
    assert_int_equal(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
    assert_int_equal(cuEventCreate(&e, 0), CUDA_SUCCESS);
    assert_int_equal(cuEventRecord(e, s), CUDA_SUCCESS);
    assert_int_equal(cuStreamSynchronize(s), CUDA_SUCCESS);
    int nnow = list_threads(now, 256);
    for (int i = 0; i < nnow; i++)
        assert_true(contains(before, nbefore, now[i]));
    pid_t ran_on = 0;
    assert_int_equal(cuLaunchHostFunc(s, note_tid, &ran_on), CUDA_SUCCESS);
    assert_int_equal(cuStreamSynchronize(s), CUDA_SUCCESS);
    assert_int_not_equal(ran_on, 0);
    assert_int_not_equal(ran_on, (pid_t)syscall(SYS_gettid));
    assert_false(contains(before, nbefore, ran_on));
    assert_int_equal(cuEventDestroy(e), CUDA_SUCCESS);
    assert_int_equal(cuStreamDestroy(s), CUDA_SUCCESS);
}

static void stream_ids_are_unique_and_never_reused(void **state)
{
    (void)state;
    unsigned long long ids[20], legacy_id, ptds_id;
    assert_int_equal(cuStreamGetId(CU_STREAM_LEGACY, &legacy_id), CUDA_SUCCESS);
    assert_int_equal(cuStreamGetId(CU_STREAM_PER_THREAD, &ptds_id), CUDA_SUCCESS);
    assert_int_not_equal(legacy_id, ptds_id);
    for (int i = 0; i < 20; i++) {
        CUstream s;
        assert_int_equal(cuStreamCreate(&s, 0), CUDA_SUCCESS);
        assert_int_equal(cuStreamGetId(s, &ids[i]), CUDA_SUCCESS);
        assert_int_equal(cuStreamDestroy(s), CUDA_SUCCESS);
        assert_int_not_equal(ids[i], legacy_id);
        assert_int_not_equal(ids[i], ptds_id);
        for (int j = 0; j < i; j++)
            assert_int_not_equal(ids[i], ids[j]);
    }
}

static void stream_properties(void **state)
{
    (void)state;
    CUstream nb, prio;
    unsigned flags = 99;
    int p = 0;
    CUcontext ctx = NULL, cur = NULL;
    CUstreamCaptureStatus cap = CU_STREAM_CAPTURE_STATUS_ACTIVE;
    assert_int_equal(cuCtxGetCurrent(&cur), CUDA_SUCCESS);
    assert_int_equal(cuStreamCreate(&nb, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
    assert_int_equal(cuStreamCreateWithPriority(&prio, 0, -1), CUDA_SUCCESS);
    assert_int_equal(cuStreamGetFlags(nb, &flags), CUDA_SUCCESS);
    assert_int_equal(flags, CU_STREAM_NON_BLOCKING);
    assert_int_equal(cuStreamGetFlags(prio, &flags), CUDA_SUCCESS);
    assert_int_equal(flags, CU_STREAM_DEFAULT);
    assert_int_equal(cuStreamGetPriority(prio, &p), CUDA_SUCCESS);
    assert_int_equal(p, -1);
    assert_int_equal(cuStreamGetCtx(nb, &ctx), CUDA_SUCCESS);
    assert_ptr_equal(ctx, cur);
    assert_int_equal(cuStreamIsCapturing(nb, &cap), CUDA_SUCCESS);
    assert_int_equal(cap, CU_STREAM_CAPTURE_STATUS_NONE);
    assert_int_equal(cuStreamCreate(&nb, 0x80), CUDA_ERROR_INVALID_VALUE);
    assert_int_equal(cuStreamDestroy(CU_STREAM_LEGACY), CUDA_ERROR_INVALID_HANDLE);
    assert_int_equal(cuStreamDestroy(prio), CUDA_SUCCESS);
    assert_int_equal(cuStreamQuery(prio), CUDA_ERROR_INVALID_HANDLE);
}

static void runtime_streams_map_to_driver_streams(void **state)
{
    (void)state;
    cudaStream_t s;
    unsigned flags = 0;
    unsigned long long a = 0, b = 0;
    int *x = simtest_dev_int(0);
    assert_int_equal(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
    assert_int_equal(cudaStreamGetFlags(s, &flags), cudaSuccess);
    assert_int_equal(flags, cudaStreamNonBlocking);
    assert_int_equal(cudaStreamGetId(s, &a), cudaSuccess);
    assert_int_equal(cuStreamGetId(s, &b), CUDA_SUCCESS);
    assert_int_equal(a, b);
    cudasim_stream_hold(s);
    assert_int_equal(cudaMemsetAsync(x, 1, sizeof(int), s), cudaSuccess);
    assert_int_equal(cudaStreamQuery(s), cudaErrorNotReady);
    assert_int_equal(cudaGetLastError(), cudaSuccess);
    cudasim_stream_release(s);
    assert_int_equal(cudaStreamSynchronize(s), cudaSuccess);
    assert_int_equal(*x, 0x01010101);
    assert_int_equal(cudaStreamDestroy(s), cudaSuccess);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(launch_returns_before_the_kernel_runs),
        cmocka_unit_test(work_on_one_stream_runs_in_submission_order),
        cmocka_unit_test(streams_run_concurrently),
        cmocka_unit_test(a_held_stream_does_not_block_another),
        cmocka_unit_test(host_syncs_wait_for_slow_work),
        cmocka_unit_test(host_functions_run_in_stream_order),
        cmocka_unit_test(stream_ids_are_unique_and_never_reused),
        cmocka_unit_test(stream_properties),
        cmocka_unit_test(runtime_streams_map_to_driver_streams),
        cmocka_unit_test(a_stream_starts_its_worker_at_its_first_work),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
