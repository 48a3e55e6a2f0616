/* test_sim_controls.c: the simulator's test controls (forced errors, call counts, durations,
 * gates on the special handles, settle, the seeded jitter) and driver entry points fetched by
 * name (cuGetProcAddress), plus error names and strings. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include <pthread.h>

#include <cuda_runtime_api.h>

#include "cudasim.h"
#include "simtest.h"

static int setup(void **state)
{
    (void)state;
    simtest_init();
    return 0;
}

static void fail_next_fails_one_call_without_doing_it(void **state)
{
    (void)state;
    CUdeviceptr d = 0;
    void *p = NULL;
    cudasim_fail_next("cuMemAlloc", CUDA_ERROR_OUT_OF_MEMORY);
    assert_int_equal(cuMemAlloc(&d, 8), CUDA_ERROR_OUT_OF_MEMORY);
    assert_int_equal(d, 0);
    assert_int_equal(cuMemAlloc(&d, 8), CUDA_SUCCESS);
    cuMemFree(d);
    cudasim_fail_next("cudaMalloc", (CUresult)cudaErrorMemoryAllocation);
    assert_int_equal(cudaMalloc(&p, 8), cudaErrorMemoryAllocation);
    assert_null(p);
    assert_int_equal(cudaGetLastError(), cudaErrorMemoryAllocation);
    cudasim_fail_next("cuStreamSynchronize", CUDA_ERROR_LAUNCH_FAILED);
    cudasim_fail_next("cuStreamSynchronize", CUDA_ERROR_ILLEGAL_ADDRESS);
    assert_int_equal(cuStreamSynchronize(NULL), CUDA_ERROR_LAUNCH_FAILED);
    assert_int_equal(cuStreamSynchronize(NULL), CUDA_ERROR_ILLEGAL_ADDRESS);
    assert_int_equal(cuStreamSynchronize(NULL), CUDA_SUCCESS);
    cudasim_fail_next("cuEventRecord", CUDA_ERROR_UNKNOWN);
    cudasim_reset_counts();
    CUevent e;
    assert_int_equal(cuEventCreate(&e, 0), CUDA_SUCCESS);
    assert_int_equal(cuEventRecord(e, NULL), CUDA_SUCCESS);
    cuEventDestroy(e);
}

static void call_counts_match_versions_and_runtime_calls(void **state)
{
    (void)state;
    void *p;
    cudasim_reset_counts();
    assert_int_equal(cudasim_call_count("cuMemAlloc"), 0);
    assert_int_equal(cudaMalloc(&p, 8), cudaSuccess);
    assert_int_equal(cudasim_call_count("cudaMalloc"), 1);
    assert_int_equal(cudasim_call_count("cudaMalloc_v3020"), 1);
    assert_int_equal(cudasim_call_count("cuMemAlloc"), 1);
    assert_int_equal(cudasim_call_count("cuMemAlloc_v2"), 1);
    assert_int_equal(cudasim_call_count("cuMemAllocHost"), 0);
    assert_int_equal(cudasim_call_count("cuMem"), 0);
    cudaFree(p);
    assert_int_equal(cuStreamSynchronize(NULL), CUDA_SUCCESS);
    assert_int_equal(cuStreamSynchronize(CU_STREAM_PER_THREAD), CUDA_SUCCESS);
    assert_int_equal(cudaStreamSynchronize(0), cudaSuccess);
    assert_int_equal(cudasim_call_count("cuStreamSynchronize"), 3);
    assert_int_equal(cudasim_call_count("cudaStreamSynchronize"), 1);
    cudasim_reset_counts();
    assert_int_equal(cudasim_call_count("cuStreamSynchronize"), 0);
}

static void durations_apply_to_named_kernels(void **state)
{
    (void)state;
    assert_int_equal(cudasim_set_kernel_duration("no_such_kernel", 10), -1);
    assert_int_equal(cudasim_set_kernel_duration("store_int", 0), 0);
}

static void gates_on_special_handles(void **state)
{
    (void)state;
    int *x = simtest_dev_int(0);
    assert_int_equal(cudasim_stream_hold(CU_STREAM_LEGACY), 0);
    assert_int_equal(simtest_store(NULL, x, 1), CUDA_SUCCESS);
    cudasim_settle();
    assert_int_equal(cuStreamQuery(NULL), CUDA_ERROR_NOT_READY);
    assert_int_equal(cudasim_stream_release(NULL), 0);
    assert_int_equal(cuStreamSynchronize(NULL), CUDA_SUCCESS);
    assert_int_equal(*x, 1);
    int bogus = 0;
    assert_int_equal(cudasim_stream_hold((CUstream)(void *)&bogus), -1);
}

static void settle_returns_with_nothing_runnable(void **state)
{
    (void)state;
    CUstream a, b;
    CUevent e;
    int *x = simtest_dev_int(0), log[8];
    assert_int_equal(cuStreamCreate(&a, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
    assert_int_equal(cuStreamCreate(&b, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
    assert_int_equal(cuEventCreate(&e, 0), CUDA_SUCCESS);
    simtest_log(log, 0, 1);
    cudasim_stream_hold(a);
    assert_int_equal(simtest_store(a, x, 1), CUDA_SUCCESS);
    assert_int_equal(cuEventRecord(e, a), CUDA_SUCCESS);
    assert_int_equal(simtest_append(b, 1), CUDA_SUCCESS);
    assert_int_equal(cuStreamWaitEvent(b, e, 0), CUDA_SUCCESS);
    assert_int_equal(simtest_append(b, 2), CUDA_SUCCESS);
    cudasim_settle();
    assert_int_equal(simtest_log(log, 8, 0), 1);
    cudasim_stream_release(a);
    assert_int_equal(cuStreamSynchronize(b), CUDA_SUCCESS);
    assert_int_equal(simtest_log(log, 8, 1), 2);
    cuEventDestroy(e);
    cuStreamDestroy(a);
    cuStreamDestroy(b);
}

static void entry_points_by_name(void **state)
{
    (void)state;
    void *fn = NULL;
    CUdriverProcAddressQueryResult q = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    assert_int_equal(cuGetProcAddress("cuMemAlloc", &fn, 13000, CU_GET_PROC_ADDRESS_DEFAULT, &q), CUDA_SUCCESS);
    assert_int_equal(q, CU_GET_PROC_ADDRESS_SUCCESS);
    assert_ptr_equal(fn, (void *)cuMemAlloc);
    assert_int_equal(cuGetProcAddress("cuStreamSynchronize", &fn, 13000, CU_GET_PROC_ADDRESS_DEFAULT, &q),
                     CUDA_SUCCESS);
    assert_ptr_equal(fn, (void *)cuStreamSynchronize);
    void *ptsz = NULL;
    assert_int_equal(
        cuGetProcAddress("cuStreamSynchronize", &ptsz, 13000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, &q),
        CUDA_SUCCESS);
    assert_non_null(ptsz);
    assert_ptr_not_equal(ptsz, fn);
    cudasim_reset_counts();
    assert_int_equal(((CUresult(*)(CUstream))ptsz)(NULL), CUDA_SUCCESS);
    assert_int_equal(cudasim_call_count("cuStreamSynchronize_ptsz"), 1);
    assert_int_equal(cuGetProcAddress("cuNoSuchThing", &fn, 13000, 0, &q), CUDA_ERROR_NOT_FOUND);
    assert_int_equal(q, CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
    assert_null(fn);
}

static void error_names(void **state)
{
    (void)state;
    const char *s = NULL;
    assert_int_equal(cuGetErrorName(CUDA_ERROR_INVALID_HANDLE, &s), CUDA_SUCCESS);
    assert_string_equal(s, "CUDA_ERROR_INVALID_HANDLE");
    assert_int_equal(cuGetErrorString(CUDA_ERROR_NOT_READY, &s), CUDA_SUCCESS);
    assert_string_equal(s, "device not ready");
    assert_int_equal(cuGetErrorName((CUresult)12345, &s), CUDA_ERROR_INVALID_VALUE);
    assert_string_equal(cudaGetErrorName(cudaErrorInvalidResourceHandle), "cudaErrorInvalidResourceHandle");
    assert_string_equal(cudaGetErrorString(cudaSuccess), "no error");
}

#define SEED_THREADS 3
#define DRAWS 24

/* Makes DRAWS calls and notes the jitter's draw after each (each call draws at its ENTER and
 * before its EXIT). */
static void *draw(void *arg)
{
    unsigned *out = arg;
    CUcontext ctx;
    for (int i = 0; i < DRAWS; i++) {
        cuCtxGetCurrent(&ctx);
        out[i] = cudasim_jitter_last_draw();
    }
    return NULL;
}

/* The draws of SEED_THREADS threads started one after another (so their first calls come in
 * that order), with the jitter seeded. The calling thread makes no call meanwhile. */
static void draws_of(unsigned long long seed, unsigned out[SEED_THREADS][DRAWS])
{
    cudasim_set_seed(seed);
    cudasim_set_jitter(1);
    for (int t = 0; t < SEED_THREADS; t++) {
        pthread_t th;
        assert_int_equal(pthread_create(&th, NULL, draw, out[t]), 0);
        assert_int_equal(pthread_join(th, NULL), 0);
    }
    cudasim_set_jitter(0);
}

static void a_seed_makes_each_threads_jitter_a_replay(void **state)
{
    (void)state;
    static unsigned first[SEED_THREADS][DRAWS], again[SEED_THREADS][DRAWS], other[SEED_THREADS][DRAWS];
    draws_of(42, first);
    draws_of(42, again);
    draws_of(43, other);
    assert_memory_equal(first, again, sizeof first);
    for (int t = 0; t < SEED_THREADS; t++) {
        assert_memory_not_equal(first[t], other[t], sizeof first[t]);
        for (int u = 0; u < t; u++)
            assert_memory_not_equal(first[t], first[u], sizeof first[t]); /* each its own sequence */
        int distinct = 0;
        for (int i = 1; i < DRAWS; i++)
            distinct += first[t][i] != first[t][i - 1];
        assert_true(distinct > DRAWS / 2);
    }
    /* numbers go by first calls, whichever thread makes them: here this thread is number 1 */
    unsigned mine[DRAWS];
    cudasim_set_seed(42);
    cudasim_set_jitter(1);
    draw(mine);
    cudasim_set_jitter(0);
    assert_memory_equal(mine, first[0], sizeof mine);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(fail_next_fails_one_call_without_doing_it),
        cmocka_unit_test(call_counts_match_versions_and_runtime_calls),
        cmocka_unit_test(durations_apply_to_named_kernels),
        cmocka_unit_test(gates_on_special_handles),
        cmocka_unit_test(settle_returns_with_nothing_runnable),
        cmocka_unit_test(entry_points_by_name),
        cmocka_unit_test(error_names),
        cmocka_unit_test(a_seed_makes_each_threads_jitter_a_replay),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
