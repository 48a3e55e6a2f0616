/* test_sim_legacy.c: the legacy default stream synchronizes with the blocking streams of its
 * context both ways; non-blocking streams are exempt; the per-thread default stream (handle
 * CU_STREAM_PER_THREAD, and stream 0 in _ptsz calls) is a blocking stream, one per host thread.
 * Each case holds the first stream, enqueues on the second, settles, and checks whether the
 * second already ran. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "cudasim.h"
#include "simtest.h"

CUresult CUDAAPI cuLaunchKernel_ptsz(CUfunction f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ,
                                     unsigned int blockDimX, unsigned int blockDimY, unsigned int blockDimZ,
                                     unsigned int sharedMemBytes, CUstream hStream, void **kernelParams, void **extra);

static int setup(void **state)
{
    (void)state;
    simtest_init();
    return 0;
}

/* Holds `first`, writes 1 there, copies it on `second`, settles: returns whether the copy
 * already ran (it read the stale 0); then releases and drains both. */
static int second_ran_before_first(CUstream first, CUstream second)
{
    int *x = simtest_dev_int(0), *seen = simtest_dev_int(-1);
    assert_int_equal(cudasim_stream_hold(first), 0);
    assert_int_equal(simtest_store(first, x, 1), CUDA_SUCCESS);
    assert_int_equal(simtest_copy(second, seen, x), CUDA_SUCCESS);
    cudasim_settle();
    int ran = *seen != -1;
    if (ran)
        assert_int_equal(*seen, 0);
    assert_int_equal(cudasim_stream_release(first), 0);
    assert_int_equal(cuCtxSynchronize(), CUDA_SUCCESS);
    assert_int_equal(*seen, 1 - ran);
    return ran;
}

static void legacy_waits_for_blocking_streams(void **state)
{
    (void)state;
    CUstream s;
    assert_int_equal(cuStreamCreate(&s, CU_STREAM_DEFAULT), CUDA_SUCCESS);
    assert_false(second_ran_before_first(s, NULL));
    assert_false(second_ran_before_first(s, CU_STREAM_LEGACY));
    cuStreamDestroy(s);
}

static void blocking_streams_wait_for_legacy(void **state)
{
    (void)state;
    CUstream s;
    assert_int_equal(cuStreamCreate(&s, CU_STREAM_DEFAULT), CUDA_SUCCESS);
    assert_false(second_ran_before_first(NULL, s));
    cuStreamDestroy(s);
}

static void non_blocking_streams_are_exempt(void **state)
{
    (void)state;
    CUstream nb;
    assert_int_equal(cuStreamCreate(&nb, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
    assert_true(second_ran_before_first(nb, NULL));
    assert_true(second_ran_before_first(NULL, nb));
    cuStreamDestroy(nb);
}

static void blocking_streams_do_not_wait_for_each_other(void **state)
{
    (void)state;
    CUstream a, b;
    assert_int_equal(cuStreamCreate(&a, CU_STREAM_DEFAULT), CUDA_SUCCESS);
    assert_int_equal(cuStreamCreate(&b, CU_STREAM_DEFAULT), CUDA_SUCCESS);
    assert_true(second_ran_before_first(a, b));
    cuStreamDestroy(a);
    cuStreamDestroy(b);
}

static void per_thread_stream_is_blocking(void **state)
{
    (void)state;
    CUstream nb;
    assert_int_equal(cuStreamCreate(&nb, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
    assert_false(second_ran_before_first(CU_STREAM_PER_THREAD, CU_STREAM_LEGACY));
    assert_false(second_ran_before_first(CU_STREAM_LEGACY, CU_STREAM_PER_THREAD));
    assert_true(second_ran_before_first(CU_STREAM_PER_THREAD, nb));
    cuStreamDestroy(nb);
}

static void ptsz_stream_zero_is_the_per_thread_stream(void **state)
{
    (void)state;
    int *x = simtest_dev_int(0);
    int value = 4;
    void *args[] = {&x, &value};
    assert_int_equal(cudasim_stream_hold(CU_STREAM_PER_THREAD), 0);
    assert_int_equal(cuLaunchKernel_ptsz(simtest_store_kernel(), 1, 1, 1, 1, 1, 1, 0, NULL, args, NULL), CUDA_SUCCESS);
    cudasim_settle();
    assert_int_equal(cuStreamQuery(CU_STREAM_PER_THREAD), CUDA_ERROR_NOT_READY);
    assert_int_equal(*x, 0);
    assert_int_equal(cudasim_stream_release(CU_STREAM_PER_THREAD), 0);
    assert_int_equal(cuStreamSynchronize(CU_STREAM_PER_THREAD), CUDA_SUCCESS);
    assert_int_equal(*x, 4);
}

static void *other_thread_stream_id(void *ctx)
{
    unsigned long long *id = malloc(sizeof *id);
    assert_non_null(id);
    assert_int_equal(cuCtxSetCurrent(ctx), CUDA_SUCCESS);
    assert_int_equal(cuStreamGetId(CU_STREAM_PER_THREAD, id), CUDA_SUCCESS);
    return id;
}

static void one_per_thread_stream_per_host_thread(void **state)
{
    (void)state;
    unsigned long long mine = 0, again = 0, *theirs;
    CUcontext ctx;
    pthread_t t;
    assert_int_equal(cuCtxGetCurrent(&ctx), CUDA_SUCCESS);
    assert_int_equal(cuStreamGetId(CU_STREAM_PER_THREAD, &mine), CUDA_SUCCESS);
    assert_int_equal(cuStreamGetId(CU_STREAM_PER_THREAD, &again), CUDA_SUCCESS);
    assert_int_equal(mine, again);
    assert_int_equal(pthread_create(&t, NULL, other_thread_stream_id, ctx), 0);
    assert_int_equal(pthread_join(t, (void **)&theirs), 0);
    assert_int_not_equal(*theirs, mine);
    free(theirs);
}

static void legacy_synchronize_waits_for_blocking_streams(void **state)
{
    (void)state;
    CUstream s;
    int *x = simtest_dev_int(0);
    assert_int_equal(cuStreamCreate(&s, CU_STREAM_DEFAULT), CUDA_SUCCESS);
    assert_int_equal(cudasim_set_kernel_duration("store_int", 20000), 0);
    assert_int_equal(simtest_store(s, x, 8), CUDA_SUCCESS);
    assert_int_equal(cuStreamSynchronize(NULL), CUDA_SUCCESS);
    assert_int_equal(*x, 8);
    assert_int_equal(cudasim_set_kernel_duration("store_int", 0), 0);
    cuStreamDestroy(s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(legacy_waits_for_blocking_streams),
        cmocka_unit_test(blocking_streams_wait_for_legacy),
        cmocka_unit_test(non_blocking_streams_are_exempt),
        cmocka_unit_test(blocking_streams_do_not_wait_for_each_other),
        cmocka_unit_test(per_thread_stream_is_blocking),
        cmocka_unit_test(ptsz_stream_zero_is_the_per_thread_stream),
        cmocka_unit_test(one_per_thread_stream_per_host_thread),
        cmocka_unit_test(legacy_synchronize_waits_for_blocking_streams),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
