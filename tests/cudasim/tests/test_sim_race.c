/* test_sim_race.c: the deliberate producer/consumer race across two streams. The producer's
 * stream is held while the consumer's read is enqueued; cudasim_settle makes the outcome
 * deterministic: without synchronization the consumer reads stale data, with an event wait it
 * is blocked until the producer ran and then reads the produced value. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "cudasim.h"
#include "simtest.h"

enum { STALE = 1, PRODUCED = 42 };

typedef struct {
    CUstream producer, consumer;
    int *data, *seen;
} race;

static int setup(void **state)
{
    static race r;
    simtest_init();
    assert_int_equal(cuStreamCreate(&r.producer, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
    assert_int_equal(cuStreamCreate(&r.consumer, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
    r.data = simtest_dev_int(STALE);
    r.seen = simtest_dev_int(0);
    *state = &r;
    return 0;
}

static int teardown(void **state)
{
    race *r = *state;
    cuMemFree((CUdeviceptr)(uintptr_t)r->data);
    cuMemFree((CUdeviceptr)(uintptr_t)r->seen);
    cuStreamDestroy(r->producer);
    cuStreamDestroy(r->consumer);
    return 0;
}

static void reset(race *r)
{
    int v = STALE;
    assert_int_equal(cuMemcpyHtoD((CUdeviceptr)(uintptr_t)r->data, &v, sizeof v), CUDA_SUCCESS);
}

static void unsynchronized_consumer_reads_stale_data(void **state)
{
    race *r = *state;
    reset(r);
    assert_int_equal(cudasim_stream_hold(r->producer), 0);
    assert_int_equal(simtest_store(r->producer, r->data, PRODUCED), CUDA_SUCCESS);
    assert_int_equal(simtest_copy(r->consumer, r->seen, r->data), CUDA_SUCCESS);
    cudasim_settle();
    assert_int_equal(cuStreamQuery(r->consumer), CUDA_SUCCESS);
    assert_int_equal(*r->seen, STALE);
    assert_int_equal(cudasim_stream_release(r->producer), 0);
    assert_int_equal(cuStreamSynchronize(r->producer), CUDA_SUCCESS);
    assert_int_equal(*r->data, PRODUCED);
    assert_int_equal(*r->seen, STALE);
}

static void event_wait_makes_consumer_read_produced_data(void **state)
{
    race *r = *state;
    CUevent ready;
    reset(r);
    assert_int_equal(cuEventCreate(&ready, CU_EVENT_DISABLE_TIMING), CUDA_SUCCESS);
    assert_int_equal(cudasim_stream_hold(r->producer), 0);
    assert_int_equal(simtest_store(r->producer, r->data, PRODUCED), CUDA_SUCCESS);
    assert_int_equal(cuEventRecord(ready, r->producer), CUDA_SUCCESS);
    assert_int_equal(cuStreamWaitEvent(r->consumer, ready, 0), CUDA_SUCCESS);
    assert_int_equal(simtest_copy(r->consumer, r->seen, r->data), CUDA_SUCCESS);
    cudasim_settle();
    assert_int_equal(cuStreamQuery(r->consumer), CUDA_ERROR_NOT_READY);
    assert_int_equal(cudasim_stream_release(r->producer), 0);
    assert_int_equal(cuStreamSynchronize(r->consumer), CUDA_SUCCESS);
    assert_int_equal(*r->seen, PRODUCED);
    assert_int_equal(cuEventDestroy(ready), CUDA_SUCCESS);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(unsynchronized_consumer_reads_stale_data),
        cmocka_unit_test(event_wait_makes_consumer_read_produced_data),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
