/* test_sim_events.c: events: record / query / synchronize, waits that order a stream after the
 * most recent record before the wait, never-recorded events, destroy with a wait pending. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <cuda_runtime_api.h>

#include "cudasim.h"
#include "simtest.h"

static CUstream g_a, g_b, g_c;

static int setup(void **state)
{
    (void)state;
    simtest_init_streams(&g_a, &g_b, &g_c);
    return 0;
}

static void record_query_synchronize(void **state)
{
    (void)state;
    CUevent e;
    int *x = simtest_dev_int(0);
    assert_int_equal(cuEventCreate(&e, CU_EVENT_DEFAULT), CUDA_SUCCESS);
    cudasim_stream_hold(g_a);
    assert_int_equal(simtest_store(g_a, x, 9), CUDA_SUCCESS);
    assert_int_equal(cuEventRecord(e, g_a), CUDA_SUCCESS);
    cudasim_settle();
    assert_int_equal(cuEventQuery(e), CUDA_ERROR_NOT_READY);
    cudasim_stream_release(g_a);
    assert_int_equal(cuEventSynchronize(e), CUDA_SUCCESS);
    assert_int_equal(*x, 9);
    assert_int_equal(cuEventQuery(e), CUDA_SUCCESS);
    assert_int_equal(cuEventDestroy(e), CUDA_SUCCESS);
}

static void never_recorded_event_is_complete_and_its_wait_is_a_no_op(void **state)
{
    (void)state;
    CUevent e;
    int *x = simtest_dev_int(0);
    assert_int_equal(cuEventCreate(&e, CU_EVENT_DISABLE_TIMING), CUDA_SUCCESS);
    assert_int_equal(cuEventQuery(e), CUDA_SUCCESS);
    assert_int_equal(cuEventSynchronize(e), CUDA_SUCCESS);
    cudasim_stream_hold(g_a);
    assert_int_equal(simtest_store(g_a, x, 1), CUDA_SUCCESS);
    assert_int_equal(cuStreamWaitEvent(g_b, e, 0), CUDA_SUCCESS);
    assert_int_equal(simtest_store(g_b, x, 2), CUDA_SUCCESS);
    assert_int_equal(cuStreamSynchronize(g_b), CUDA_SUCCESS);
    assert_int_equal(*x, 2);
    cudasim_stream_release(g_a);
    assert_int_equal(cuStreamSynchronize(g_a), CUDA_SUCCESS);
    cuEventDestroy(e);
}

static void wait_uses_the_most_recent_record_before_it(void **state)
{
    (void)state;
    CUevent e;
    int *x = simtest_dev_int(0), *seen = simtest_dev_int(0);
    assert_int_equal(cuEventCreate(&e, 0), CUDA_SUCCESS);
    /* an older record on a free stream, then the one that matters on a held stream */
    assert_int_equal(cuEventRecord(e, g_c), CUDA_SUCCESS);
    cudasim_stream_hold(g_a);
    assert_int_equal(simtest_store(g_a, x, 5), CUDA_SUCCESS);
    assert_int_equal(cuEventRecord(e, g_a), CUDA_SUCCESS);
    assert_int_equal(cuStreamWaitEvent(g_b, e, 0), CUDA_SUCCESS);
    /* a later record does not change what the wait waits for */
    assert_int_equal(cuEventRecord(e, g_c), CUDA_SUCCESS);
    assert_int_equal(simtest_copy(g_b, seen, x), CUDA_SUCCESS);
    cudasim_settle();
    assert_int_equal(cuStreamQuery(g_b), CUDA_ERROR_NOT_READY);
    assert_int_equal(cuEventQuery(e), CUDA_SUCCESS);
    cudasim_stream_release(g_a);
    assert_int_equal(cuStreamSynchronize(g_b), CUDA_SUCCESS);
    assert_int_equal(*seen, 5);
    cuEventDestroy(e);
}

static void destroying_the_event_keeps_a_pending_wait(void **state)
{
    (void)state;
    CUevent e;
    int *x = simtest_dev_int(0), *seen = simtest_dev_int(0);
    assert_int_equal(cuEventCreate(&e, 0), CUDA_SUCCESS);
    cudasim_stream_hold(g_a);
    assert_int_equal(simtest_store(g_a, x, 6), CUDA_SUCCESS);
    assert_int_equal(cuEventRecord(e, g_a), CUDA_SUCCESS);
    assert_int_equal(cuStreamWaitEvent(g_b, e, 0), CUDA_SUCCESS);
    assert_int_equal(cuEventDestroy(e), CUDA_SUCCESS);
    assert_int_equal(simtest_copy(g_b, seen, x), CUDA_SUCCESS);
    cudasim_settle();
    assert_int_equal(*seen, 0);
    cudasim_stream_release(g_a);
    assert_int_equal(cuStreamSynchronize(g_b), CUDA_SUCCESS);
    assert_int_equal(*seen, 6);
}

static void bad_handles_are_rejected(void **state)
{
    (void)state;
    CUevent e;
    assert_int_equal(cuEventCreate(&e, 0), CUDA_SUCCESS);
    assert_int_equal(cuStreamWaitEvent(g_a, NULL, 0), CUDA_ERROR_INVALID_HANDLE);
    assert_int_equal(cuEventRecord(NULL, g_a), CUDA_ERROR_INVALID_HANDLE);
    assert_int_equal(cuStreamWaitEvent(g_a, e, 0x40), CUDA_ERROR_INVALID_VALUE);
    assert_int_equal(cuEventDestroy(e), CUDA_SUCCESS);
}

static void runtime_events(void **state)
{
    (void)state;
    cudaEvent_t e;
    int *x = simtest_dev_int(0), *seen = simtest_dev_int(0);
    assert_int_equal(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), cudaSuccess);
    cudasim_stream_hold(g_a);
    assert_int_equal(cudaMemsetAsync(x, 3, sizeof(int), g_a), cudaSuccess);
    assert_int_equal(cudaEventRecord(e, g_a), cudaSuccess);
    assert_int_equal(cudaStreamWaitEvent(g_b, e, 0), cudaSuccess);
    assert_int_equal(simtest_copy(g_b, seen, x), CUDA_SUCCESS);
    cudasim_settle();
    assert_int_equal(cudaEventQuery(e), cudaErrorNotReady);
    cudasim_stream_release(g_a);
    assert_int_equal(cudaEventSynchronize(e), cudaSuccess);
    assert_int_equal(cudaStreamSynchronize(g_b), cudaSuccess);
    assert_int_equal(*seen, 0x03030303);
    assert_int_equal(cudaEventDestroy(e), cudaSuccess);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(record_query_synchronize),
        cmocka_unit_test(never_recorded_event_is_complete_and_its_wait_is_a_no_op),
        cmocka_unit_test(wait_uses_the_most_recent_record_before_it),
        cmocka_unit_test(destroying_the_event_keeps_a_pending_wait),
        cmocka_unit_test(bad_handles_are_rejected),
        cmocka_unit_test(runtime_events),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
