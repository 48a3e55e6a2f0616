/* test_sim_lifetimes.c: valid programs whose objects die while work that needs them is pending,
 * which the simulator must run without crashing (most useful under make sim-sanitize / sim-tsan):
 * streams destroyed with pending work that other streams wait for, events recorded on streams
 * destroyed since, per-thread default streams of threads that exited with work pending, many
 * threads creating and destroying streams (more than the 1024 streams the simulator once
 * capped), memory freed while another context's stream still has queued work on it, and freed
 * addresses handed out again. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdatomic.h>

#include "cudasim.h"
#include "simtest.h"

/* More streams than the simulator's old table held, made by each test on its own. */
#define MANY 1100

static CUcontext g_ctx[2];
static CUstream g_a, g_b, g_c;

/* A zeroed device array of n ints. */
static int *dev_ints(size_t n)
{
    CUdeviceptr d;
    assert_int_equal(cuMemAlloc(&d, n * sizeof(int)), CUDA_SUCCESS);
    assert_int_equal(cuMemsetD32(d, 0, n), CUDA_SUCCESS);
    assert_int_equal(cuCtxSynchronize(), CUDA_SUCCESS);
    return (int *)(uintptr_t)d;
}

static int setup(void **state)
{
    (void)state;
    g_ctx[0] = simtest_init();
    assert_int_equal(cuDevicePrimaryCtxRetain(&g_ctx[1], 1), CUDA_SUCCESS);
    assert_int_equal(cuStreamCreate(&g_a, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
    assert_int_equal(cuStreamCreate(&g_b, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
    assert_int_equal(cuStreamCreate(&g_c, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
    return 0;
}

/* Each round writes its own slot: stores on different streams are not ordered. */
static void destroyed_streams_pending_work_runs_and_is_waited_for(void **state)
{
    (void)state;
    int *x = dev_ints(MANY + 1), *seen = dev_ints(MANY + 1);
    CUevent e;
    assert_int_equal(cuEventCreate(&e, CU_EVENT_DISABLE_TIMING), CUDA_SUCCESS);
    for (int i = 1; i <= MANY; i++) {
        CUstream s;
        assert_int_equal(cuStreamCreate(&s, i % 2 ? CU_STREAM_NON_BLOCKING : CU_STREAM_DEFAULT), CUDA_SUCCESS);
        int held = i % 16 == 0; /* now and then the work is still queued when the stream dies */
        if (held)
            cudasim_stream_hold(s);
        assert_int_equal(simtest_store(s, &x[i], i), CUDA_SUCCESS);
        assert_int_equal(cuEventRecord(e, s), CUDA_SUCCESS);
        assert_int_equal(cuStreamDestroy(s), CUDA_SUCCESS);
        assert_int_equal(cuStreamWaitEvent(g_a, e, 0), CUDA_SUCCESS);
        assert_int_equal(simtest_copy(g_a, &seen[i], &x[i]), CUDA_SUCCESS);
        if (held) {
            cudasim_settle();
            assert_int_equal(cuStreamQuery(g_a), CUDA_ERROR_NOT_READY);
            cudasim_release_all();
        }
        if (i % 64 == 0 || held) {
            assert_int_equal(cuStreamSynchronize(g_a), CUDA_SUCCESS);
            assert_int_equal(seen[i], i);
        }
    }
    assert_int_equal(cuStreamSynchronize(g_a), CUDA_SUCCESS);
    for (int i = 1; i <= MANY; i++)
        assert_int_equal(seen[i], i);
    cuEventDestroy(e);
    cuMemFree((CUdeviceptr)(uintptr_t)x);
    cuMemFree((CUdeviceptr)(uintptr_t)seen);
}

static void legacy_stream_waits_for_a_destroyed_blocking_stream(void **state)
{
    (void)state;
    int *x = simtest_dev_int(0), *seen = simtest_dev_int(0);
    for (int i = 1; i <= MANY; i++) {
        CUstream s;
        assert_int_equal(cuStreamCreate(&s, CU_STREAM_DEFAULT), CUDA_SUCCESS);
        int held = i % 32 == 0;
        if (held)
            cudasim_stream_hold(s);
        assert_int_equal(simtest_store(s, x, i), CUDA_SUCCESS);
        assert_int_equal(cuStreamDestroy(s), CUDA_SUCCESS);
        assert_int_equal(simtest_copy(CU_STREAM_LEGACY, seen, x), CUDA_SUCCESS); /* implicitly after s */
        if (held) {
            cudasim_settle();
            assert_int_equal(cuStreamQuery(CU_STREAM_LEGACY), CUDA_ERROR_NOT_READY);
            cudasim_release_all();
            assert_int_equal(cuStreamSynchronize(CU_STREAM_LEGACY), CUDA_SUCCESS);
            assert_int_equal(*seen, i);
        }
    }
    assert_int_equal(cuCtxSynchronize(), CUDA_SUCCESS);
    assert_int_equal(*seen, MANY);
}

static void events_of_destroyed_streams_can_be_waited_for_and_synchronized(void **state)
{
    (void)state;
    int *x = simtest_dev_int(0);
    enum { KEEP = 8 };
    CUevent kept[KEEP];
    for (int k = 0; k < KEEP; k++)
        assert_int_equal(cuEventCreate(&kept[k], 0), CUDA_SUCCESS);
    for (int i = 1; i <= MANY; i++) {
        CUstream s;
        CUevent e = kept[i % KEEP];
        assert_int_equal(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
        cudasim_stream_hold(s);
        assert_int_equal(simtest_store(s, x, i), CUDA_SUCCESS);
        assert_int_equal(cuEventRecord(e, s), CUDA_SUCCESS);
        assert_int_equal(cuStreamDestroy(s), CUDA_SUCCESS);
        if (i % 8 == 0) {
            cudasim_settle();
            assert_int_equal(cuEventQuery(e), CUDA_ERROR_NOT_READY);
        }
        cudasim_release_all();
        assert_int_equal(cuEventSynchronize(e), CUDA_SUCCESS);
        assert_int_equal(*x, i);
        assert_int_equal(cuEventQuery(e), CUDA_SUCCESS);
        /* and later, long after the stream drained, a wait on its record */
        CUevent old = kept[(i + 1) % KEEP];
        assert_int_equal(cuStreamWaitEvent(g_b, old, 0), CUDA_SUCCESS);
        assert_int_equal(cuEventSynchronize(old), CUDA_SUCCESS);
    }
    assert_int_equal(cuStreamSynchronize(g_b), CUDA_SUCCESS);
    for (int k = 0; k < KEEP; k++)
        assert_int_equal(cuEventDestroy(kept[k]), CUDA_SUCCESS);
}

/* A thread that leaves work queued on its per-thread stream (held) and an event recorded after
 * it, then exits. */
typedef struct {
    int *x;
    int value;
    CUevent e;
} exiting_job;

static void *leave_work_and_exit(void *arg)
{
    exiting_job *j = arg;
    cuCtxSetCurrent(g_ctx[0]);
    cudasim_stream_hold(CU_STREAM_PER_THREAD);
    simtest_store(CU_STREAM_PER_THREAD, &j->x[j->value], j->value);
    cuEventRecord(j->e, CU_STREAM_PER_THREAD);
    return NULL;
}

static void per_thread_streams_of_exited_threads_finish_their_work(void **state)
{
    (void)state;
    int *x = dev_ints(MANY + 1), *seen = dev_ints(MANY + 1);
    CUevent e;
    assert_int_equal(cuEventCreate(&e, CU_EVENT_DISABLE_TIMING), CUDA_SUCCESS);
    for (int i = 1; i <= MANY; i++) {
        exiting_job j = {x, i, e};
        pthread_t t;
        assert_int_equal(pthread_create(&t, NULL, leave_work_and_exit, &j), 0);
        assert_int_equal(pthread_join(t, NULL), 0);
        assert_int_equal(cuStreamWaitEvent(g_c, e, 0), CUDA_SUCCESS);
        assert_int_equal(simtest_copy(g_c, &seen[i], &x[i]), CUDA_SUCCESS);
        if (i % 128 == 0) {
            cudasim_settle();
            assert_int_equal(cuEventQuery(e), CUDA_ERROR_NOT_READY);
        }
        cudasim_release_all(); /* nobody else can open the exited thread's gate */
        if (i % 128 == 0) {
            assert_int_equal(cuStreamSynchronize(g_c), CUDA_SUCCESS);
            assert_int_equal(seen[i], i);
        }
    }
    assert_int_equal(cuEventSynchronize(e), CUDA_SUCCESS);
    assert_int_equal(cuStreamSynchronize(g_c), CUDA_SUCCESS);
    for (int i = 1; i <= MANY; i++)
        assert_int_equal(seen[i], i);
    cuEventDestroy(e);
    cuMemFree((CUdeviceptr)(uintptr_t)x);
    cuMemFree((CUdeviceptr)(uintptr_t)seen);
}

/* 8 producers, each with a consumer: per round, the producer makes a stream, writes the round's
 * value with a slow kernel, records an event, destroys the stream and hands the event over; the
 * consumer makes a stream, waits for the event, copies the value, destroys its stream and the
 * event. Memory is allocated and freed on the way, so addresses come back while streams work. */
#define PAIRS 8
#define ROUNDS 80

typedef struct {
    int *values; /* ROUNDS ints written by the producer */
    int *seen;   /* ROUNDS ints copied by the consumer */
    CUevent ev[ROUNDS];
    atomic_int ready; /* rounds handed over */
} pair;

static pair g_pairs[PAIRS];
static CUfunction g_slow;

static void slow_store_body(void **args)
{
    **(int **)args[0] = *(int *)args[1];
}

static void *producer(void *arg)
{
    pair *p = arg;
    cuCtxSetCurrent(g_ctx[0]);
    for (int r = 0; r < ROUNDS; r++) {
        CUstream s;
        CUevent e;
        CUdeviceptr scratch;
        int *dst = &p->values[r], v = r + 1;
        void *args[] = {&dst, &v};
        if (cuStreamCreate(&s, r % 2 ? CU_STREAM_NON_BLOCKING : CU_STREAM_DEFAULT) != CUDA_SUCCESS ||
            cuEventCreate(&e, CU_EVENT_DISABLE_TIMING) != CUDA_SUCCESS)
            return (void *)1;
        cuLaunchKernel(g_slow, 1, 1, 1, 1, 1, 1, 0, s, args, NULL);
        cuEventRecord(e, s);
        cuStreamDestroy(s);
        p->ev[r] = e;
        atomic_store(&p->ready, r + 1);
        if (cuMemAlloc(&scratch, 64 + 64 * (size_t)(r % 4)) == CUDA_SUCCESS)
            cuMemFree(scratch);
    }
    return NULL;
}

static void *consumer(void *arg)
{
    pair *p = arg;
    cuCtxSetCurrent(g_ctx[0]);
    for (int r = 0; r < ROUNDS; r++) {
        while (atomic_load(&p->ready) <= r)
            sched_yield();
        CUstream s;
        if (cuStreamCreate(&s, CU_STREAM_NON_BLOCKING) != CUDA_SUCCESS)
            return (void *)1;
        cuStreamWaitEvent(s, p->ev[r], 0);
        cuEventDestroy(p->ev[r]);
        simtest_copy(s, &p->seen[r], &p->values[r]);
        if (r % 10 == 9)
            cuStreamSynchronize(s);
        cuStreamDestroy(s);
    }
    return NULL;
}

static void threads_create_and_destroy_streams_while_others_wait_on_their_events(void **state)
{
    (void)state;
    size_t sizes[] = {sizeof(int *), sizeof(int)};
    g_slow = cudasim_register_kernel("lifetimes_slow_store", slow_store_body, 2, sizes);
    assert_non_null(g_slow);
    cudasim_set_kernel_duration("lifetimes_slow_store", 200);
    pthread_t t[2 * PAIRS];
    for (int i = 0; i < PAIRS; i++) {
        CUdeviceptr v, s;
        assert_int_equal(cuMemAlloc(&v, ROUNDS * sizeof(int)), CUDA_SUCCESS);
        assert_int_equal(cuMemAlloc(&s, ROUNDS * sizeof(int)), CUDA_SUCCESS);
        g_pairs[i].values = (int *)(uintptr_t)v;
        g_pairs[i].seen = (int *)(uintptr_t)s;
        atomic_store(&g_pairs[i].ready, 0);
    }
    for (int i = 0; i < PAIRS; i++) {
        assert_int_equal(pthread_create(&t[2 * i], NULL, producer, &g_pairs[i]), 0);
        assert_int_equal(pthread_create(&t[2 * i + 1], NULL, consumer, &g_pairs[i]), 0);
    }
    for (int i = 0; i < 2 * PAIRS; i++) {
        void *failed = NULL;
        assert_int_equal(pthread_join(t[i], &failed), 0);
        assert_null(failed);
    }
    assert_int_equal(cuCtxSynchronize(), CUDA_SUCCESS);
    for (int i = 0; i < PAIRS; i++) {
        for (int r = 0; r < ROUNDS; r++)
            assert_int_equal(g_pairs[i].seen[r], r + 1);
        cuMemFree((CUdeviceptr)(uintptr_t)g_pairs[i].values);
        cuMemFree((CUdeviceptr)(uintptr_t)g_pairs[i].seen);
    }
    cudasim_set_kernel_duration("lifetimes_slow_store", 0);
}

static void memory_freed_under_another_contexts_queued_work(void **state)
{
    (void)state;
    enum { N = 4096 };
    CUdeviceptr x, again;
    unsigned char *host;
    assert_int_equal(cuCtxSetCurrent(g_ctx[0]), CUDA_SUCCESS);
    assert_int_equal(cuMemAlloc(&x, N), CUDA_SUCCESS);
    assert_int_equal(cuMemsetD8(x, 7, N), CUDA_SUCCESS);
    assert_int_equal(cuCtxSynchronize(), CUDA_SUCCESS);
    /* device 1 queues a read of device 0's buffer (a peer copy) and a write into it */
    assert_int_equal(cuCtxSetCurrent(g_ctx[1]), CUDA_SUCCESS);
    assert_int_equal(cuMemAllocHost((void **)&host, N), CUDA_SUCCESS);
    CUstream s;
    assert_int_equal(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
    cudasim_stream_hold(s);
    assert_int_equal(cuMemcpyPeerAsync((CUdeviceptr)(uintptr_t)host, g_ctx[1], x, g_ctx[0], N, s), CUDA_SUCCESS);
    assert_int_equal(cuMemsetD8Async(x, 9, N, s), CUDA_SUCCESS);
    /* device 0 frees it: its own context is idle, so the free returns at once */
    assert_int_equal(cuCtxSetCurrent(g_ctx[0]), CUDA_SUCCESS);
    assert_int_equal(cuMemFree(x), CUDA_SUCCESS);
    /* a new allocation does not get memory that queued work still touches */
    assert_int_equal(cuMemAlloc(&again, N), CUDA_SUCCESS);
    assert_true(again != x);
    assert_int_equal(cuMemsetD8(again, 1, N), CUDA_SUCCESS);
    assert_int_equal(cuCtxSynchronize(), CUDA_SUCCESS);
    cudasim_stream_release(s);
    assert_int_equal(cuStreamSynchronize(s), CUDA_SUCCESS);
    assert_int_equal(host[0], 7);
    assert_int_equal(host[N - 1], 7);
    unsigned char b = 0;
    assert_int_equal(cuMemcpyDtoH(&b, again + N - 1, 1), CUDA_SUCCESS);
    assert_int_equal(b, 1);
    assert_int_equal(cuStreamDestroy(s), CUDA_SUCCESS);
    /* once nothing queued touches it, x's block is handed out again, as real allocators do */
    CUdeviceptr third;
    assert_int_equal(cuMemAlloc(&third, N), CUDA_SUCCESS);
    assert_true(third == x);
    assert_int_equal(cuMemFree(third), CUDA_SUCCESS);
    assert_int_equal(cuMemFree(again), CUDA_SUCCESS);
    assert_int_equal(cuCtxSetCurrent(g_ctx[1]), CUDA_SUCCESS);
    assert_int_equal(cuMemFreeHost(host), CUDA_SUCCESS);
    assert_int_equal(cuCtxSetCurrent(g_ctx[0]), CUDA_SUCCESS);
}

static void pinned_memory_freed_under_another_contexts_queued_work(void **state)
{
    (void)state;
    enum { N = 1024 };
    unsigned char *pinned;
    CUdeviceptr d1;
    assert_int_equal(cuCtxSetCurrent(g_ctx[0]), CUDA_SUCCESS);
    assert_int_equal(cuMemAllocHost((void **)&pinned, N), CUDA_SUCCESS);
    assert_int_equal(cuCtxSetCurrent(g_ctx[1]), CUDA_SUCCESS);
    assert_int_equal(cuMemAlloc(&d1, N), CUDA_SUCCESS);
    CUstream s;
    assert_int_equal(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
    cudasim_stream_hold(s);
    assert_int_equal(cuMemcpyDtoHAsync(pinned, d1, N, s), CUDA_SUCCESS); /* writes the pinned block */
    assert_int_equal(cuCtxSetCurrent(g_ctx[0]), CUDA_SUCCESS);
    assert_int_equal(cuMemFreeHost(pinned), CUDA_SUCCESS);
    cudasim_stream_release(s);
    assert_int_equal(cuStreamSynchronize(s), CUDA_SUCCESS);
    assert_int_equal(cuStreamDestroy(s), CUDA_SUCCESS);
    assert_int_equal(cuCtxSetCurrent(g_ctx[1]), CUDA_SUCCESS);
    assert_int_equal(cuMemFree(d1), CUDA_SUCCESS);
    assert_int_equal(cuCtxSetCurrent(g_ctx[0]), CUDA_SUCCESS);
}

/* test_sim_lifetimes [PATTERN]: runs the tests whose names match PATTERN (cmocka's filter). */
int main(int argc, char **argv)
{
    if (argc > 1)
        cmocka_set_test_filter(argv[1]);
    setenv("CUDASIM_DEVICES", "2", 1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(destroyed_streams_pending_work_runs_and_is_waited_for),
        cmocka_unit_test(legacy_stream_waits_for_a_destroyed_blocking_stream),
        cmocka_unit_test(events_of_destroyed_streams_can_be_waited_for_and_synchronized),
        cmocka_unit_test(per_thread_streams_of_exited_threads_finish_their_work),
        cmocka_unit_test(threads_create_and_destroy_streams_while_others_wait_on_their_events),
        cmocka_unit_test(memory_freed_under_another_contexts_queued_work),
        cmocka_unit_test(pinned_memory_freed_under_another_contexts_queued_work),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
