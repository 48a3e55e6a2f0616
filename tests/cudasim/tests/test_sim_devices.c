/* test_sim_devices.c: two devices (CUDASIM_DEVICES=2) and CUDA's context rules: each device has
 * its own primary context and legacy stream; the legacy and per-thread handles name the current
 * context's stream; cudaSetDevice and the context stack (push / pop / set) switch the current
 * context; an event records only on a stream of the context it was created in
 * (CUDA_ERROR_INVALID_HANDLE otherwise, as cuda.h documents for cuEventRecord), while a stream
 * may wait on an event of another device; peer copies move data between the devices; a reset
 * primary context is a new context. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include <cuda_runtime_api.h>

#include "cudasim.h"
#include "simtest.h"

static CUcontext g_ctx[2];

static int setup(void **state)
{
    (void)state;
    g_ctx[0] = simtest_init();
    assert_int_equal(cuDevicePrimaryCtxRetain(&g_ctx[1], 1), CUDA_SUCCESS);
    return 0;
}

/* Makes device dev's primary context current (replacing the top of the stack). */
static void use(int dev)
{
    assert_int_equal(cuCtxSetCurrent(g_ctx[dev]), CUDA_SUCCESS);
}

static unsigned long long stream_id(CUstream s)
{
    unsigned long long id = 0;
    assert_int_equal(cuStreamGetId(s, &id), CUDA_SUCCESS);
    return id;
}

static CUcontext current(void)
{
    CUcontext c = NULL;
    assert_int_equal(cuCtxGetCurrent(&c), CUDA_SUCCESS);
    return c;
}

static void each_device_has_its_own_context_and_default_streams(void **state)
{
    (void)state;
    int n = 0;
    assert_int_equal(cuDeviceGetCount(&n), CUDA_SUCCESS);
    assert_int_equal(n, 2);
    assert_ptr_not_equal(g_ctx[0], g_ctx[1]);
    unsigned long long legacy[2], per_thread[2];
    for (int d = 0; d < 2; d++) {
        use(d);
        legacy[d] = stream_id(CU_STREAM_LEGACY);
        per_thread[d] = stream_id(CU_STREAM_PER_THREAD);
        assert_int_equal(stream_id(NULL), legacy[d]);
        CUcontext c = NULL;
        assert_int_equal(cuStreamGetCtx(CU_STREAM_LEGACY, &c), CUDA_SUCCESS);
        assert_ptr_equal(c, g_ctx[d]);
        CUdevice dev = -1;
        assert_int_equal(cuCtxGetDevice(&dev), CUDA_SUCCESS);
        assert_int_equal(dev, d);
    }
    assert_true(legacy[0] != legacy[1]);
    assert_true(per_thread[0] != per_thread[1]);
    use(0);
}

static void set_device_and_the_context_stack_switch_the_current_context(void **state)
{
    (void)state;
    assert_int_equal(cudaSetDevice(1), cudaSuccess);
    assert_ptr_equal(current(), g_ctx[1]);
    int dev = -1;
    assert_int_equal(cudaGetDevice(&dev), cudaSuccess);
    assert_int_equal(dev, 1);
    assert_int_equal(cudaSetDevice(0), cudaSuccess);
    assert_ptr_equal(current(), g_ctx[0]);
    assert_int_equal(cudaSetDevice(2), cudaErrorInvalidDevice);

    assert_int_equal(cuCtxPushCurrent(g_ctx[1]), CUDA_SUCCESS);
    assert_ptr_equal(current(), g_ctx[1]);
    CUcontext popped = NULL;
    assert_int_equal(cuCtxPopCurrent(&popped), CUDA_SUCCESS);
    assert_ptr_equal(popped, g_ctx[1]);
    assert_ptr_equal(current(), g_ctx[0]);
    /* set replaces the top; popping the last context leaves none current */
    assert_int_equal(cuCtxPushCurrent(g_ctx[0]), CUDA_SUCCESS);
    use(1);
    assert_int_equal(cuCtxPopCurrent(NULL), CUDA_SUCCESS);
    assert_ptr_equal(current(), g_ctx[0]);
    assert_int_equal(cuCtxPopCurrent(&popped), CUDA_SUCCESS);
    assert_null(current());
    assert_int_equal(cuCtxPopCurrent(&popped), CUDA_ERROR_INVALID_CONTEXT);
    assert_int_equal(cuCtxPushCurrent(NULL), CUDA_ERROR_INVALID_CONTEXT);
    assert_int_equal(cuCtxPushCurrent(g_ctx[0]), CUDA_SUCCESS);
}

static void an_event_records_only_in_its_own_context(void **state)
{
    (void)state;
    CUstream s0, s1;
    CUevent e0;
    use(0);
    assert_int_equal(cuStreamCreate(&s0, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
    assert_int_equal(cuEventCreate(&e0, CU_EVENT_DISABLE_TIMING), CUDA_SUCCESS);
    use(1);
    assert_int_equal(cuStreamCreate(&s1, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
    assert_int_equal(cuEventRecord(e0, s1), CUDA_ERROR_INVALID_HANDLE);
    assert_int_equal(cuEventRecord(e0, CU_STREAM_LEGACY), CUDA_ERROR_INVALID_HANDLE);
    assert_int_equal(cuEventRecord(e0, NULL), CUDA_ERROR_INVALID_HANDLE);
    assert_int_equal(cuEventRecord(e0, CU_STREAM_PER_THREAD), CUDA_ERROR_INVALID_HANDLE);
    assert_int_equal(cuEventRecordWithFlags(e0, s1, 0), CUDA_ERROR_INVALID_HANDLE);
    /* the stream's context decides, not the current one */
    assert_int_equal(cuEventRecord(e0, s0), CUDA_SUCCESS);
    use(0);
    assert_int_equal(cuEventRecord(e0, CU_STREAM_LEGACY), CUDA_SUCCESS);
    assert_int_equal(cuEventSynchronize(e0), CUDA_SUCCESS);
    cuEventDestroy(e0);
    cuStreamDestroy(s0);
    cuStreamDestroy(s1);
}

static void the_legacy_handle_names_the_current_context_stream(void **state)
{
    (void)state;
    use(0);
    int *x = simtest_dev_int(0);
    assert_int_equal(cudasim_stream_hold(CU_STREAM_LEGACY), 0);
    assert_int_equal(simtest_store(CU_STREAM_LEGACY, x, 1), CUDA_SUCCESS);
    use(1);
    int *y = simtest_dev_int(0);
    assert_int_equal(simtest_store(CU_STREAM_LEGACY, y, 2), CUDA_SUCCESS);
    cudasim_settle();
    assert_int_equal(*y, 2); /* device 1's legacy stream is not held */
    assert_int_equal(*x, 0);
    assert_int_equal(cuStreamQuery(CU_STREAM_LEGACY), CUDA_SUCCESS);
    use(0);
    assert_int_equal(cuStreamQuery(CU_STREAM_LEGACY), CUDA_ERROR_NOT_READY);
    assert_int_equal(cudasim_stream_release(CU_STREAM_LEGACY), 0);
    assert_int_equal(cuStreamSynchronize(CU_STREAM_LEGACY), CUDA_SUCCESS);
    assert_int_equal(*x, 1);
}

static void a_stream_waits_on_an_event_of_another_device(void **state)
{
    (void)state;
    CUstream s0, s1;
    CUevent e0;
    use(0);
    int *x = simtest_dev_int(0);
    assert_int_equal(cuStreamCreate(&s0, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
    assert_int_equal(cuEventCreate(&e0, CU_EVENT_DISABLE_TIMING), CUDA_SUCCESS);
    assert_int_equal(cudasim_stream_hold(s0), 0);
    assert_int_equal(simtest_store(s0, x, 7), CUDA_SUCCESS);
    assert_int_equal(cuEventRecord(e0, s0), CUDA_SUCCESS);
    use(1);
    int *seen = simtest_dev_int(-1);
    assert_int_equal(cuStreamCreate(&s1, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
    assert_int_equal(cuStreamWaitEvent(s1, e0, 0), CUDA_SUCCESS);
    assert_int_equal(simtest_copy(s1, seen, x), CUDA_SUCCESS);
    cudasim_settle();
    assert_int_equal(*seen, -1);
    assert_int_equal(cuStreamQuery(s1), CUDA_ERROR_NOT_READY);
    assert_int_equal(cudasim_stream_release(s0), 0);
    assert_int_equal(cuStreamSynchronize(s1), CUDA_SUCCESS);
    assert_int_equal(*seen, 7);
    cuEventDestroy(e0);
    cuStreamDestroy(s0);
    cuStreamDestroy(s1);
    use(0);
}

static void peer_copies_move_data_between_devices_in_stream_order(void **state)
{
    (void)state;
    use(0);
    int *src = simtest_dev_int(5);
    use(1);
    int *dst = simtest_dev_int(0), *dst2 = simtest_dev_int(0);
    CUstream s1;
    assert_int_equal(cuStreamCreate(&s1, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
    assert_int_equal(cudasim_stream_hold(s1), 0);
    assert_int_equal(cuMemcpyPeerAsync((CUdeviceptr)(uintptr_t)dst, g_ctx[1], (CUdeviceptr)(uintptr_t)src, g_ctx[0],
                                       sizeof(int), s1),
                     CUDA_SUCCESS);
    assert_int_equal(cudaMemcpyPeerAsync(dst2, 1, src, 0, sizeof(int), s1), cudaSuccess);
    cudasim_settle();
    assert_int_equal(*dst, 0);
    assert_int_equal(cudasim_stream_release(s1), 0);
    assert_int_equal(cuStreamSynchronize(s1), CUDA_SUCCESS);
    assert_int_equal(*dst, 5);
    assert_int_equal(*dst2, 5);
    *src = 6;
    assert_int_equal(
        cuMemcpyPeer((CUdeviceptr)(uintptr_t)dst, g_ctx[1], (CUdeviceptr)(uintptr_t)src, g_ctx[0], sizeof(int)),
        CUDA_SUCCESS);
    assert_int_equal(*dst, 6);
    assert_int_equal(cudaMemcpyPeer(dst2, 1, src, 0, sizeof(int)), cudaSuccess);
    assert_int_equal(*dst2, 6);
    assert_int_equal(
        cuMemcpyPeerAsync((CUdeviceptr)(uintptr_t)dst, NULL, (CUdeviceptr)(uintptr_t)src, g_ctx[0], sizeof(int), s1),
        CUDA_ERROR_INVALID_CONTEXT);
    assert_int_equal(cudaMemcpyPeerAsync(dst, 3, src, 0, sizeof(int), s1), cudaErrorInvalidDevice);
    cuStreamDestroy(s1);
    use(0);
}

/* After cudaDeviceReset the primary context is a new one at the same handle: a new id, a new
 * legacy stream, and the events of the old one cannot be recorded any more. */
static void a_reset_context_is_a_new_context(void **state)
{
    (void)state;
    use(1);
    unsigned long long id = 0, id_after = 0;
    CUevent old, fresh;
    assert_int_equal(cuCtxGetId(NULL, &id), CUDA_SUCCESS);
    unsigned long long legacy = stream_id(CU_STREAM_LEGACY);
    assert_int_equal(cuEventCreate(&old, CU_EVENT_DISABLE_TIMING), CUDA_SUCCESS);
    assert_int_equal(cudaSetDevice(1), cudaSuccess);
    assert_int_equal(cudaDeviceReset(), cudaSuccess);
    assert_ptr_equal(current(), g_ctx[1]);
    assert_int_equal(cuCtxGetId(NULL, &id_after), CUDA_SUCCESS);
    assert_true(id_after != id);
    assert_true(stream_id(CU_STREAM_LEGACY) != legacy);
    assert_int_equal(cuEventRecord(old, CU_STREAM_LEGACY), CUDA_ERROR_INVALID_HANDLE);
    assert_int_equal(cuEventCreate(&fresh, CU_EVENT_DISABLE_TIMING), CUDA_SUCCESS);
    assert_int_equal(cuEventRecord(fresh, CU_STREAM_LEGACY), CUDA_SUCCESS);
    cuEventDestroy(fresh);
    assert_int_equal(cudaSetDevice(0), cudaSuccess);
    use(0);
}

int main(void)
{
    setenv("CUDASIM_DEVICES", "2", 1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(each_device_has_its_own_context_and_default_streams),
        cmocka_unit_test(set_device_and_the_context_stack_switch_the_current_context),
        cmocka_unit_test(an_event_records_only_in_its_own_context),
        cmocka_unit_test(the_legacy_handle_names_the_current_context_stream),
        cmocka_unit_test(a_stream_waits_on_an_event_of_another_device),
        cmocka_unit_test(peer_copies_move_data_between_devices_in_stream_order),
        cmocka_unit_test(a_reset_context_is_a_new_context),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
