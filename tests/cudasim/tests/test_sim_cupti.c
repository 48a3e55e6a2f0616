/* test_sim_cupti.c: the simulated CUPTI callback API: one subscriber, enable state, ENTER/EXIT
 * pairs with the real params structs, return values, symbol names, correlation, runtime calls
 * reporting the driver calls beneath them, calls made inside callbacks, resource callbacks; the
 * struct size of the generation before 13.2. The rules of sharing are test_sim_cupti_modes'. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <cuda_runtime_api.h>
#include <cupti.h>

#include "../../../shim/cuda/cupti_subscriber.h"
#include "cudasim.h"
#include "simtest.h"

typedef struct {
    CUpti_CallbackDomain domain;
    CUpti_CallbackId cbid;
    CUpti_ApiCallbackSite site;
    uint32_t correlation;
    uint64_t carried; /* *correlationData seen at EXIT */
    CUresult ret;
    char symbol[32];
    CUstream stream;  /* resource domain */
    const void *func; /* cudaLaunchKernel's params->func */
} record;

static record g_rec[256];
static int g_n;
static int g_call_inside; /* when set, the cuMemAlloc ENTER callback calls cuCtxGetDevice */
static CUpti_SubscriberHandle g_sub;

static void CUPTIAPI on_callback(void *user, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void *data)
{
    (void)user;
    if (g_n == 256)
        return;
    record *r = &g_rec[g_n++];
    memset(r, 0, sizeof *r);
    r->domain = domain;
    r->cbid = cbid;
    if (domain == CUPTI_CB_DOMAIN_RESOURCE) {
        r->stream = ((const CUpti_ResourceData *)data)->resourceHandle.stream;
        return;
    }
    const CUpti_CallbackData *d = data;
    r->site = d->callbackSite;
    r->correlation = d->correlationId;
    if (domain == CUPTI_CB_DOMAIN_RUNTIME_API && cbid == CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000)
        r->func = ((const cudaLaunchKernel_v7000_params *)d->functionParams)->func;
    if (d->symbolName)
        snprintf(r->symbol, sizeof r->symbol, "%s", d->symbolName);
    if (d->callbackSite == CUPTI_API_ENTER) {
        *d->correlationData = 0xC0FFEEull + d->correlationId;
        if (g_call_inside && cbid == CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2) {
            CUdevice dev;
            g_call_inside = 0;
            cuCtxGetDevice(&dev);
        }
    } else {
        r->carried = *d->correlationData;
        if (domain == CUPTI_CB_DOMAIN_DRIVER_API)
            r->ret = *(CUresult *)d->functionReturnValue;
        else
            r->ret = (CUresult) * (cudaError_t *)d->functionReturnValue;
    }
}

static int setup(void **state)
{
    (void)state;
    simtest_init();
    CUpti_SubscriberParams p = {.structSize = CUpti_SubscriberParams_STRUCT_SIZE, .subscriberName = "simtest"};
    assert_int_equal(cuptiSubscribe_v2(&g_sub, on_callback, NULL, &p), CUPTI_SUCCESS);
    return 0;
}

static int find(int from, CUpti_CallbackDomain dom, CUpti_CallbackId cbid, CUpti_ApiCallbackSite site)
{
    for (int i = from; i < g_n; i++)
        if (g_rec[i].domain == dom && g_rec[i].cbid == cbid && g_rec[i].site == site)
            return i;
    return -1;
}

/* Asserts that the first recorded (dom, cbid) call has an ENTER and an EXIT with the recorded
 * (inner_dom, inner_cbid, inner_site) callback between them; returns the index of that ENTER
 * and, when inner is not NULL, stores the inner callback's index there. */
static int assert_nested(CUpti_CallbackDomain dom, CUpti_CallbackId cbid, CUpti_CallbackDomain inner_dom,
                         CUpti_CallbackId inner_cbid, CUpti_ApiCallbackSite inner_site, int *inner)
{
    int outer = find(0, dom, cbid, CUPTI_API_ENTER);
    int in = find(0, inner_dom, inner_cbid, inner_site);
    int outer_exit = find(0, dom, cbid, CUPTI_API_EXIT);
    assert_true(outer >= 0 && in > outer && outer_exit > in);
    if (inner)
        *inner = in;
    return outer;
}

static void second_subscriber_is_refused_with_the_holders_name(void **state)
{
    (void)state;
    CUpti_SubscriberHandle other;
    char old[CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN] = "";
    CUpti_SubscriberParams p = {.structSize = CUpti_SubscriberParams_STRUCT_SIZE,
                                .subscriberName = "intruder",
                                .oldSubscriberName = old,
                                .oldSubscriberSize = sizeof old};
    assert_int_equal(cuptiSubscribe(&other, on_callback, NULL), CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED);
    assert_int_equal(cuptiSubscribe_v2(&other, on_callback, NULL, &p), CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED);
    assert_non_null(strstr(old, "simtest"));
}

static void enable_state(void **state)
{
    (void)state;
    uint32_t on = 7;
    assert_int_equal(
        cuptiGetCallbackState(&on, g_sub, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel),
        CUPTI_SUCCESS);
    assert_int_equal(on, 0);
    assert_int_equal(cuptiEnableCallback(1, g_sub, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel),
                     CUPTI_SUCCESS);
    cuptiGetCallbackState(&on, g_sub, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel);
    assert_int_equal(on, 1);
    g_n = 0;
    CUdeviceptr d;
    assert_int_equal(cuMemAlloc(&d, 16), CUDA_SUCCESS); /* not enabled: not reported */
    assert_int_equal(simtest_store(NULL, (int *)(uintptr_t)d, 1), CUDA_SUCCESS);
    assert_int_equal(g_n, 2);
    assert_int_equal(g_rec[0].cbid, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel);
    assert_int_equal(cuptiEnableCallback(0, g_sub, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel),
                     CUPTI_SUCCESS);
    assert_int_equal(cuptiEnableCallback(1, g_sub, CUPTI_CB_DOMAIN_DRIVER_API, 100000), CUPTI_ERROR_INVALID_PARAMETER);
    cuMemFree(d);
}

static void enter_and_exit_carry_params_result_and_correlation(void **state)
{
    (void)state;
    assert_int_equal(cuptiEnableDomain(1, g_sub, CUPTI_CB_DOMAIN_DRIVER_API), CUPTI_SUCCESS);
    g_n = 0;
    CUdeviceptr d = 0;
    assert_int_equal(cuMemAlloc(&d, 64), CUDA_SUCCESS);
    int enter = find(0, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2, CUPTI_API_ENTER);
    int exit_ = find(0, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2, CUPTI_API_EXIT);
    assert_true(enter >= 0 && exit_ > enter);
    assert_int_equal(g_rec[enter].correlation, g_rec[exit_].correlation);
    assert_int_equal(g_rec[exit_].carried, 0xC0FFEEull + g_rec[enter].correlation);
    assert_int_equal(g_rec[exit_].ret, CUDA_SUCCESS);

    g_n = 0;
    int *x = (int *)(uintptr_t)d;
    assert_int_equal(simtest_store(NULL, x, 3), CUDA_SUCCESS);
    int launch = find(0, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, CUPTI_API_ENTER);
    assert_true(launch >= 0);
    assert_string_equal(g_rec[launch].symbol, "store_int");

    cudasim_fail_next("cuMemFree", CUDA_ERROR_INVALID_VALUE);
    g_n = 0;
    assert_int_equal(cuMemFree(d), CUDA_ERROR_INVALID_VALUE);
    exit_ = find(0, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuMemFree_v2, CUPTI_API_EXIT);
    assert_true(exit_ >= 0);
    assert_int_equal(g_rec[exit_].ret, CUDA_ERROR_INVALID_VALUE);
    assert_int_equal(cuMemFree(d), CUDA_SUCCESS);
    cuptiEnableDomain(0, g_sub, CUPTI_CB_DOMAIN_DRIVER_API);
}

/* The params pointer is the real struct: checked while the call is in flight. */
static CUdeviceptr *g_expect_dptr;
static size_t g_expect_size;
static int g_params_ok;
static void CUPTIAPI check_params(void *user, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void *data)
{
    (void)user;
    const CUpti_CallbackData *d = data;
    if (domain == CUPTI_CB_DOMAIN_DRIVER_API && cbid == CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2) {
        const cuMemAlloc_v2_params *p = d->functionParams;
        g_params_ok += p->dptr == g_expect_dptr && p->bytesize == g_expect_size;
        g_params_ok += strcmp(d->functionName, "cuMemAlloc_v2") == 0;
    }
}

static void params_point_at_the_real_struct(void **state)
{
    (void)state;
    CUpti_SubscriberHandle s2;
    CUdeviceptr d;
    assert_int_equal(cuptiUnsubscribe(g_sub), CUPTI_SUCCESS);
    assert_int_equal(cuptiSubscribe(&s2, check_params, NULL), CUPTI_SUCCESS);
    cuptiEnableCallback(1, s2, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2);
    g_expect_dptr = &d;
    g_expect_size = 96;
    g_params_ok = 0;
    assert_int_equal(cuMemAlloc(&d, 96), CUDA_SUCCESS);
    assert_int_equal(g_params_ok, 4); /* ENTER and EXIT, two checks each */
    cuMemFree(d);
    assert_int_equal(cuptiUnsubscribe(s2), CUPTI_SUCCESS);
    assert_int_equal(cuptiSubscribe(&g_sub, on_callback, NULL), CUPTI_SUCCESS);
}

static void runtime_call_reports_driver_calls_beneath_it(void **state)
{
    (void)state;
    assert_int_equal(cuptiEnableAllDomains(1, g_sub), CUPTI_SUCCESS);
    g_n = 0;
    void *p = NULL;
    assert_int_equal(cudaMalloc(&p, 32), cudaSuccess);
    int drv;
    int rt_enter =
        assert_nested(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020,
                      CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2, CUPTI_API_ENTER, &drv);
    assert_int_not_equal(g_rec[rt_enter].correlation, g_rec[drv].correlation);

    g_n = 0;
    dim3 one = {1, 1, 1};
    int value = 2;
    void *args[] = {&p, &value};
    assert_int_equal(cudaLaunchKernel((const void *)simtest_store_kernel(), one, one, args, 0, 0), cudaSuccess);
    rt_enter = find(0, CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, CUPTI_API_ENTER);
    drv = find(0, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, CUPTI_API_ENTER);
    assert_true(rt_enter >= 0 && drv > rt_enter);
    assert_string_equal(g_rec[rt_enter].symbol, "store_int");
    assert_ptr_equal(g_rec[rt_enter].func, simtest_store_kernel());
    assert_int_equal(cudaDeviceSynchronize(), cudaSuccess);
    assert_int_equal(*(int *)p, 2);
    cudaFree(p);
    cuptiEnableAllDomains(0, g_sub);
}

static void calls_inside_callbacks_are_reported(void **state)
{
    (void)state;
    cuptiEnableDomain(1, g_sub, CUPTI_CB_DOMAIN_DRIVER_API);
    g_n = 0;
    g_call_inside = 1;
    CUdeviceptr d;
    assert_int_equal(cuMemAlloc(&d, 8), CUDA_SUCCESS);
    assert_nested(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2, CUPTI_CB_DOMAIN_DRIVER_API,
                  CUPTI_DRIVER_TRACE_CBID_cuCtxGetDevice, CUPTI_API_EXIT, NULL);
    cuMemFree(d);
    cuptiEnableDomain(0, g_sub, CUPTI_CB_DOMAIN_DRIVER_API);
}

static void stream_resource_callbacks(void **state)
{
    (void)state;
    cuptiEnableDomain(1, g_sub, CUPTI_CB_DOMAIN_RESOURCE);
    g_n = 0;
    CUstream s;
    assert_int_equal(cuStreamCreate(&s, 0), CUDA_SUCCESS);
    assert_int_equal(cuStreamDestroy(s), CUDA_SUCCESS);
    assert_int_equal(g_n, 2);
    assert_int_equal(g_rec[0].cbid, CUPTI_CBID_RESOURCE_STREAM_CREATED);
    assert_ptr_equal(g_rec[0].stream, s);
    assert_int_equal(g_rec[1].cbid, CUPTI_CBID_RESOURCE_STREAM_DESTROY_STARTING);
    assert_ptr_equal(g_rec[1].stream, s);
    cuptiEnableDomain(0, g_sub, CUPTI_CB_DOMAIN_RESOURCE);
}

static void unsubscribe_stops_callbacks_and_frees_the_slot(void **state)
{
    (void)state;
    cuptiEnableDomain(1, g_sub, CUPTI_CB_DOMAIN_DRIVER_API);
    assert_int_equal(cuptiUnsubscribe(g_sub), CUPTI_SUCCESS);
    g_n = 0;
    CUdevice dev;
    assert_int_equal(cuCtxGetDevice(&dev), CUDA_SUCCESS);
    assert_int_equal(g_n, 0);
    assert_int_equal(cuptiUnsubscribe(g_sub), CUPTI_ERROR_INVALID_PARAMETER);
    assert_int_equal(cuptiSubscribe(&g_sub, on_callback, NULL), CUPTI_SUCCESS);
    uint32_t on = 1;
    cuptiGetCallbackState(&on, g_sub, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuCtxGetDevice);
    assert_int_equal(on, 0);
}

static void result_strings_and_version(void **state)
{
    (void)state;
    const char *s = NULL;
    uint32_t v = 0;
    assert_int_equal(cuptiGetResultString(CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED, &s), CUPTI_SUCCESS);
    assert_string_equal(s, "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED");
    assert_int_equal(cuptiGetVersion(&v), CUPTI_SUCCESS);
    assert_int_equal(v, CUPTI_API_VERSION);
}

/* One subscriber of the multi-subscriber tests: what it was told, with which userdata. */
typedef struct {
    CUpti_SubscriberHandle h;
    int calls, foreign;
    CUpti_CallbackDomain domain;
    CUpti_CallbackId cbid;
} listener;

static void CUPTIAPI on_listener(void *user, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void *data)
{
    (void)data;
    listener *l = user;
    if (domain == l->domain && cbid == l->cbid)
        l->calls++;
    else
        l->foreign++;
}

/* Subscribes l (asking for multi-subscriber mode when `multi`) with the 13.2 struct; returns the
 * result and the holder's name in old. */
static CUptiResult subscribe_listener(listener *l, int multi, char *old, size_t old_size)
{
    dls_cupti_subscriber_params p = {.structSize = DLS_CUPTI_SUBSCRIBER_PARAMS_SIZE_MULTI,
                                     .subscriberName = multi ? "sharing" : "alone",
                                     .oldSubscriberName = old,
                                     .oldSubscriberSize = old_size,
                                     .allowMultipleSubscribers = (uint8_t)multi};
    CUptiResult r = cuptiSubscribe_v2(&l->h, on_listener, l, (CUpti_SubscriberParams *)&p);
    if (r == CUPTI_SUCCESS)
        assert_int_equal(cuptiEnableCallback(1, l->h, l->domain, l->cbid), CUPTI_SUCCESS);
    return r;
}

static void the_old_generation_refuses_the_13_2_struct(void **state)
{
    (void)state;
    listener l = {.domain = CUPTI_CB_DOMAIN_DRIVER_API, .cbid = CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2};
    assert_int_equal(cuptiUnsubscribe(g_sub), CUPTI_SUCCESS);
    assert_int_equal(subscribe_listener(&l, 1, NULL, 0), CUPTI_ERROR_INVALID_PARAMETER);
    assert_int_equal(cuptiSubscribe(&g_sub, on_callback, NULL), CUPTI_SUCCESS);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(second_subscriber_is_refused_with_the_holders_name),
        cmocka_unit_test(enable_state),
        cmocka_unit_test(enter_and_exit_carry_params_result_and_correlation),
        cmocka_unit_test(params_point_at_the_real_struct),
        cmocka_unit_test(runtime_call_reports_driver_calls_beneath_it),
        cmocka_unit_test(calls_inside_callbacks_are_reported),
        cmocka_unit_test(stream_resource_callbacks),
        cmocka_unit_test(unsubscribe_stops_callbacks_and_frees_the_slot),
        cmocka_unit_test(result_strings_and_version),
        cmocka_unit_test(the_old_generation_refuses_the_13_2_struct),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
