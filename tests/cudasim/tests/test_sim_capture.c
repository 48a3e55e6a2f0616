/* test_sim_capture.c: stream capture and graphs: captured work does not run until the graph is
 * launched, then runs in capture order on the launch stream with the arguments it was captured
 * with; host syncs of a capturing stream fail and invalidate the capture; waits on events
 * recorded outside capture (isolation error, or an external wait node resolved at launch);
 * captured events; begin/end errors and modes; the runtime forms; CUPTI callbacks with the real
 * callback ids and params structs. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <pthread.h>
#include <cmocka.h>

#include <cuda_runtime_api.h>
#include <cupti.h>

#include "cudasim.h"
#include "simtest.h"

/* The per-thread-default-stream form of cuMemcpyDtoH (declared by cuda.h only in that build). */
CUresult CUDAAPI cuMemcpyDtoH_v2_ptds(void *dstHost, CUdeviceptr srcDevice, size_t ByteCount);

static CUstream g_a, g_b, g_c;

static int setup(void **state)
{
    (void)state;
    simtest_init_streams(&g_a, &g_b, &g_c);
    return 0;
}

static CUstreamCaptureStatus status_of(CUstream s)
{
    CUstreamCaptureStatus st = (CUstreamCaptureStatus)-1;
    assert_int_equal(cuStreamIsCapturing(s, &st), CUDA_SUCCESS);
    return st;
}

static void captured_work_runs_only_when_launched_in_capture_order(void **state)
{
    (void)state;
    int *x = simtest_dev_int(0);
    int log[8];
    simtest_log(log, 8, 1);
    assert_int_equal(cuStreamBeginCapture(g_a, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_SUCCESS);
    assert_int_equal(status_of(g_a), CU_STREAM_CAPTURE_STATUS_ACTIVE);
    assert_int_equal(status_of(g_b), CU_STREAM_CAPTURE_STATUS_NONE);
    CUstreamCaptureStatus st;
    cuuint64_t id = 0;
    CUgraph during = NULL;
    assert_int_equal(cuStreamGetCaptureInfo(g_a, &st, &id, &during, NULL, NULL, NULL), CUDA_SUCCESS);
    assert_int_equal(st, CU_STREAM_CAPTURE_STATUS_ACTIVE);
    assert_true(id != 0);
    assert_non_null(during);
    assert_int_equal(simtest_store(g_a, x, 5), CUDA_SUCCESS);
    assert_int_equal(simtest_append(g_a, 1), CUDA_SUCCESS);
    assert_int_equal(simtest_append(g_a, 2), CUDA_SUCCESS);
    int v = 3;
    assert_int_equal(cuMemsetD32Async((CUdeviceptr)(uintptr_t)x, 9, 0, g_a), CUDA_SUCCESS);
    assert_int_equal(simtest_append(g_a, v), CUDA_SUCCESS);
    v = 4; /* arguments are captured by value */
    cudasim_settle();
    assert_int_equal(*x, 0);
    assert_int_equal(simtest_log(log, 8, 0), 0);
    CUgraph g = NULL;
    assert_int_equal(cuStreamEndCapture(g_a, &g), CUDA_SUCCESS);
    assert_ptr_equal(g, during);
    assert_int_equal(status_of(g_a), CU_STREAM_CAPTURE_STATUS_NONE);
    CUgraphExec x1;
    assert_int_equal(cuGraphInstantiate(&x1, g, 0), CUDA_SUCCESS);
    assert_int_equal(cuGraphDestroy(g), CUDA_SUCCESS); /* the executable graph keeps its copy */
    cudasim_stream_hold(g_b);
    assert_int_equal(cuGraphLaunch(x1, g_b), CUDA_SUCCESS);
    cudasim_settle();
    assert_int_equal(*x, 0); /* it runs on the launch stream, held here */
    cudasim_stream_release(g_b);
    assert_int_equal(cuGraphLaunch(x1, g_b), CUDA_SUCCESS);
    assert_int_equal(cuStreamSynchronize(g_b), CUDA_SUCCESS);
    assert_int_equal(*x, 5);
    assert_int_equal(simtest_log(log, 8, 1), 6);
    const int want[] = {1, 2, 3, 1, 2, 3};
    assert_memory_equal(log, want, sizeof want);
    assert_int_equal(cuGraphExecDestroy(x1), CUDA_SUCCESS);
    assert_int_equal(cuGraphExecDestroy(NULL), CUDA_ERROR_INVALID_VALUE);
}

static void host_syncs_of_a_capturing_stream_fail_and_invalidate_it(void **state)
{
    (void)state;
    static const char *const which[] = {"sync", "query", "copy"};
    int *x = simtest_dev_int(0);
    int host = 0;
    for (int i = 0; i < 3; i++) {
        assert_int_equal(cuStreamBeginCapture(g_a, CU_STREAM_CAPTURE_MODE_RELAXED), CUDA_SUCCESS);
        CUresult r = i == 0 ? cuStreamSynchronize(g_a) : i == 1 ? cuStreamQuery(g_a) : CUDA_SUCCESS;
        if (i == 2) { /* a synchronous copy on a capturing per-thread stream */
            CUgraph empty;
            assert_int_equal(cuStreamEndCapture(g_a, &empty), CUDA_SUCCESS);
            assert_int_equal(cuGraphDestroy(empty), CUDA_SUCCESS);
            assert_int_equal(cuStreamBeginCapture(CU_STREAM_PER_THREAD, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_SUCCESS);
            r = cuMemcpyDtoH_v2_ptds(&host, (CUdeviceptr)(uintptr_t)x, sizeof host);
        }
        CUstream s = i == 2 ? CU_STREAM_PER_THREAD : g_a;
        assert_int_equal(r, CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
        assert_int_equal(status_of(s), CU_STREAM_CAPTURE_STATUS_INVALIDATED);
        assert_int_equal(simtest_store(s, x, 1), CUDA_SUCCESS); /* dropped */
        CUgraph g = (CUgraph)1;
        assert_int_equal(cuStreamEndCapture(s, &g), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
        assert_null(g);
        assert_int_equal(status_of(s), CU_STREAM_CAPTURE_STATUS_NONE);
        assert_int_equal(cuStreamSynchronize(s), CUDA_SUCCESS);
        if (*x != 0)
            fail_msg("%s: dropped work ran", which[i]);
    }
}

static void waits_on_events_recorded_outside_capture(void **state)
{
    (void)state;
    int *x = simtest_dev_int(0);
    CUevent e;
    assert_int_equal(cuEventCreate(&e, CU_EVENT_DISABLE_TIMING), CUDA_SUCCESS);
    assert_int_equal(cuEventRecord(e, g_c), CUDA_SUCCESS);
    assert_int_equal(cuStreamWaitEvent(g_b, e, CU_EVENT_WAIT_EXTERNAL), CUDA_ERROR_INVALID_VALUE);
    /* Without CU_EVENT_WAIT_EXTERNAL: an isolation error that invalidates the capture. */
    assert_int_equal(cuStreamBeginCapture(g_a, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_SUCCESS);
    assert_int_equal(cuStreamWaitEvent(g_a, e, 0), CUDA_ERROR_STREAM_CAPTURE_ISOLATION);
    assert_int_equal(status_of(g_a), CU_STREAM_CAPTURE_STATUS_INVALIDATED);
    CUgraph g;
    assert_int_equal(cuStreamEndCapture(g_a, &g), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
    /* With it: an external wait node, resolved against the event's record at launch time. */
    assert_int_equal(cuStreamBeginCapture(g_a, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_SUCCESS);
    assert_int_equal(cuStreamWaitEvent(g_a, e, CU_EVENT_WAIT_EXTERNAL), CUDA_SUCCESS);
    assert_int_equal(simtest_store(g_a, x, 7), CUDA_SUCCESS);
    assert_int_equal(cuStreamEndCapture(g_a, &g), CUDA_SUCCESS);
    CUgraphExec ex;
    assert_int_equal(cuGraphInstantiateWithFlags(&ex, g, 0), CUDA_SUCCESS);
    cudasim_stream_hold(g_c);
    assert_int_equal(simtest_store(g_c, x, 1), CUDA_SUCCESS);
    assert_int_equal(cuEventRecord(e, g_c), CUDA_SUCCESS);
    assert_int_equal(cuGraphLaunch(ex, g_b), CUDA_SUCCESS);
    cudasim_settle();
    assert_int_equal(*x, 0);
    cudasim_stream_release(g_c);
    assert_int_equal(cuStreamSynchronize(g_b), CUDA_SUCCESS);
    assert_int_equal(*x, 7);
    cuGraphExecDestroy(ex);
    cuGraphDestroy(g);
    cuEventDestroy(e);
}

static void events_recorded_in_a_capture(void **state)
{
    (void)state;
    CUevent e;
    assert_int_equal(cuEventCreate(&e, CU_EVENT_DISABLE_TIMING), CUDA_SUCCESS);
    assert_int_equal(cuStreamBeginCapture(g_a, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_SUCCESS);
    assert_int_equal(cuEventRecord(e, g_a), CUDA_SUCCESS);
    assert_int_equal(cuEventQuery(e), CUDA_ERROR_CAPTURED_EVENT);
    assert_int_equal(cuEventSynchronize(e), CUDA_ERROR_CAPTURED_EVENT);
    assert_int_equal(cuStreamWaitEvent(g_a, e, 0), CUDA_SUCCESS);             /* same capture: nothing to add */
    assert_int_equal(cuStreamWaitEvent(g_b, e, 0), CUDA_ERROR_NOT_SUPPORTED); /* fork: not modelled */
    assert_int_equal(cuStreamBeginCapture(g_b, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_SUCCESS);
    assert_int_equal(cuStreamWaitEvent(g_b, e, 0), CUDA_ERROR_STREAM_CAPTURE_MERGE);
    CUgraph g;
    assert_int_equal(cuStreamEndCapture(g_b, &g), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
    assert_int_equal(status_of(g_a), CU_STREAM_CAPTURE_STATUS_ACTIVE);
    assert_int_equal(cuStreamEndCapture(g_a, &g), CUDA_SUCCESS);
    assert_int_equal(cuEventRecord(e, g_a), CUDA_SUCCESS); /* recorded for real again */
    assert_int_equal(cuEventSynchronize(e), CUDA_SUCCESS);
    cuGraphDestroy(g);
    cuEventDestroy(e);
}

static void *end_from_other_thread(void *arg)
{
    CUgraph g = NULL;
    cuCtxSetCurrent(*(CUcontext *)arg);
    CUresult r = cuStreamEndCapture(g_a, &g);
    if (g)
        cuGraphDestroy(g);
    return (void *)(intptr_t)r;
}

static void begin_and_end_errors_and_modes(void **state)
{
    (void)state;
    CUgraph g;
    assert_int_equal(cuStreamBeginCapture(CU_STREAM_LEGACY, CU_STREAM_CAPTURE_MODE_GLOBAL),
                     CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
    assert_int_equal(cuStreamBeginCapture(g_a, (CUstreamCaptureMode)7), CUDA_ERROR_INVALID_VALUE);
    assert_int_equal(cuStreamEndCapture(g_a, &g), CUDA_ERROR_ILLEGAL_STATE);
    CUcontext ctx;
    cuCtxGetCurrent(&ctx);
    static const CUstreamCaptureMode modes[] = {CU_STREAM_CAPTURE_MODE_GLOBAL, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL,
                                                CU_STREAM_CAPTURE_MODE_RELAXED};
    for (int m = 0; m < 3; m++) {
        assert_int_equal(cuStreamBeginCapture(g_a, modes[m]), CUDA_SUCCESS);
        assert_int_equal(cuStreamBeginCapture(g_a, modes[m]), CUDA_ERROR_ILLEGAL_STATE);
        pthread_t t;
        void *ret;
        pthread_create(&t, NULL, end_from_other_thread, &ctx);
        pthread_join(t, &ret);
        CUresult want =
            modes[m] == CU_STREAM_CAPTURE_MODE_RELAXED ? CUDA_SUCCESS : CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD;
        assert_int_equal((CUresult)(intptr_t)ret, want);
        if (want != CUDA_SUCCESS) {
            assert_int_equal(cuStreamEndCapture(g_a, &g), CUDA_SUCCESS);
            cuGraphDestroy(g);
        }
        assert_int_equal(status_of(g_a), CU_STREAM_CAPTURE_STATUS_NONE);
    }
}

/* Driver callbacks seen by the test subscriber: cbid and, for the calls checked, a params field. */
static struct {
    CUpti_CallbackId cbid;
    CUpti_ApiCallbackSite site;
    const void *handle;
    int mode;
} g_seen[512];
static int g_nseen;

static void CUPTIAPI on_driver(void *user, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void *data)
{
    (void)user;
    const CUpti_CallbackData *d = data;
    if (domain != CUPTI_CB_DOMAIN_DRIVER_API || g_nseen == 512)
        return;
    g_seen[g_nseen].cbid = cbid;
    g_seen[g_nseen].site = d->callbackSite;
    switch (cbid) {
    case CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCapture_v2:
        g_seen[g_nseen].handle = ((const cuStreamBeginCapture_v2_params *)d->functionParams)->hStream;
        g_seen[g_nseen].mode = ((const cuStreamBeginCapture_v2_params *)d->functionParams)->mode;
        break;
    case CUPTI_DRIVER_TRACE_CBID_cuStreamEndCapture:
        g_seen[g_nseen].handle =
            d->callbackSite == CUPTI_API_EXIT ? *((const cuStreamEndCapture_params *)d->functionParams)->phGraph : NULL;
        break;
    case CUPTI_DRIVER_TRACE_CBID_cuGraphInstantiateWithFlags:
        g_seen[g_nseen].handle = ((const cuGraphInstantiateWithFlags_params *)d->functionParams)->hGraph;
        break;
    case CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch:
        g_seen[g_nseen].handle = ((const cuGraphLaunch_params *)d->functionParams)->hStream;
        break;
    default:
        break;
    }
    g_nseen++;
}

static int seen(CUpti_CallbackId cbid, CUpti_ApiCallbackSite site)
{
    for (int i = 0; i < g_nseen; i++)
        if (g_seen[i].cbid == cbid && g_seen[i].site == site)
            return i;
    return -1;
}

static void runtime_forms_and_their_callbacks(void **state)
{
    (void)state;
    CUpti_SubscriberHandle sub;
    assert_int_equal(cuptiSubscribe(&sub, on_driver, NULL), CUPTI_SUCCESS);
    assert_int_equal(cuptiEnableDomain(1, sub, CUPTI_CB_DOMAIN_DRIVER_API), CUPTI_SUCCESS);
    int *x = simtest_dev_int(0);
    cudasim_reset_counts();
    assert_int_equal(cudaStreamBeginCapture(g_a, cudaStreamCaptureModeThreadLocal), cudaSuccess);
    enum cudaStreamCaptureStatus st;
    assert_int_equal(cudaStreamIsCapturing(g_a, &st), cudaSuccess);
    assert_int_equal(st, cudaStreamCaptureStatusActive);
    assert_int_equal(cudaMemsetAsync(x, 1, sizeof *x, g_a), cudaSuccess);
    assert_int_equal(cudaStreamSynchronize(g_a), cudaErrorStreamCaptureUnsupported);
    cudaGraph_t g;
    assert_int_equal(cudaStreamEndCapture(g_a, &g), cudaErrorStreamCaptureInvalidated);
    assert_int_equal(cudaStreamBeginCapture(g_a, cudaStreamCaptureModeThreadLocal), cudaSuccess);
    assert_int_equal(cudaMemsetAsync(x, 1, sizeof *x, g_a), cudaSuccess);
    assert_int_equal(cudaStreamEndCapture(g_a, &g), cudaSuccess);
    cudaGraphExec_t ex, ex2;
    assert_int_equal(cudaGraphInstantiate(&ex, g, 0), cudaSuccess);
    assert_int_equal(cudaGraphInstantiateWithFlags(&ex2, g, 0), cudaSuccess);
    assert_int_equal(cudaGraphLaunch(ex, g_b), cudaSuccess);
    assert_int_equal(cudaStreamSynchronize(g_b), cudaSuccess);
    assert_int_equal(*x, 0x01010101);
    assert_int_equal(cudaGraphExecDestroy(ex), cudaSuccess);
    assert_int_equal(cudaGraphExecDestroy(ex2), cudaSuccess);
    assert_int_equal(cudaGraphDestroy(g), cudaSuccess);
    assert_int_equal(cudasim_call_count("cudaStreamBeginCapture"), 2);
    assert_int_equal(cudasim_call_count("cuStreamBeginCapture"), 2);
    assert_int_equal(cudasim_call_count("cuGraphInstantiateWithFlags"), 2);
    assert_int_equal(cudasim_call_count("cudaGraphLaunch"), 1);
    cuptiUnsubscribe(sub);

    int i = seen(CUPTI_DRIVER_TRACE_CBID_cuStreamBeginCapture_v2, CUPTI_API_ENTER);
    assert_true(i >= 0);
    assert_ptr_equal(g_seen[i].handle, g_a);
    assert_int_equal(g_seen[i].mode, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL);
    i = seen(CUPTI_DRIVER_TRACE_CBID_cuStreamEndCapture, CUPTI_API_EXIT);
    assert_true(i >= 0);
    assert_null(g_seen[i].handle); /* the first capture was invalidated */
    i = seen(CUPTI_DRIVER_TRACE_CBID_cuGraphInstantiateWithFlags, CUPTI_API_ENTER);
    assert_true(i >= 0);
    assert_ptr_equal(g_seen[i].handle, g);
    i = seen(CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch, CUPTI_API_ENTER);
    assert_true(i >= 0);
    assert_ptr_equal(g_seen[i].handle, g_b);
    assert_true(seen(CUPTI_DRIVER_TRACE_CBID_cuStreamIsCapturing, CUPTI_API_EXIT) >= 0);
    assert_true(seen(CUPTI_DRIVER_TRACE_CBID_cuGraphExecDestroy, CUPTI_API_EXIT) >= 0);
    assert_true(seen(CUPTI_DRIVER_TRACE_CBID_cuGraphDestroy, CUPTI_API_EXIT) >= 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(captured_work_runs_only_when_launched_in_capture_order),
        cmocka_unit_test(host_syncs_of_a_capturing_stream_fail_and_invalidate_it),
        cmocka_unit_test(waits_on_events_recorded_outside_capture),
        cmocka_unit_test(events_recorded_in_a_capture),
        cmocka_unit_test(begin_and_end_errors_and_modes),
        cmocka_unit_test(runtime_forms_and_their_callbacks),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
