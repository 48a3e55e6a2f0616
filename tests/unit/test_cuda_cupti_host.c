/* Unit tests of the CUPTI host (cuda/cupti_host.h) against a recording stand-in for CUPTI: a
 * refused subscription is hosted only once dlsync's subscription is live; the host enables in CUPTI
 * exactly the ids dlsync or a client wants; the dispatcher runs dlsync's own callback only for
 * dlsync's ids and each client's for the ids it enabled, with its userdata and correlation data of
 * its own; cuptiFinalize ends the clients without detaching dlsync. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "cuda/cupti_host.h"
#include "cuda/thread.h"

#include <cupti_driver_cbid.h>
#include <cupti_runtime_cbid.h>

/* ---- the stand-in for CUPTI ---- */

static CUptiResult g_subscribe_result;
static int g_finalized;
static uint32_t g_real_enabled[CUPTI_CB_DOMAIN_SIZE][1024]; /* dlsync's subscription, as CUPTI holds it */
static int g_real_enable_calls;
static struct CUpti_Subscriber_st *const DLSYNC_SUB = (struct CUpti_Subscriber_st *)(uintptr_t)0x1000;

static CUptiResult CUPTIAPI fake_subscribe(CUpti_SubscriberHandle *s, CUpti_CallbackFunc cb, void *ud)
{
    (void)s;
    (void)cb;
    (void)ud;
    return g_subscribe_result;
}

static CUptiResult CUPTIAPI fake_subscribe_v2(CUpti_SubscriberHandle *s, CUpti_CallbackFunc cb, void *ud,
                                              CUpti_SubscriberParams *p)
{
    (void)p;
    return fake_subscribe(s, cb, ud);
}

static CUptiResult CUPTIAPI fake_enable_callback(uint32_t on, CUpti_SubscriberHandle s, CUpti_CallbackDomain d,
                                                 CUpti_CallbackId id)
{
    assert_ptr_equal(s, DLSYNC_SUB); /* a hosted handle never reaches CUPTI */
    g_real_enabled[d][id] = on;
    g_real_enable_calls++;
    return CUPTI_SUCCESS;
}

static CUptiResult CUPTIAPI fake_finalize(void)
{
    g_finalized++;
    return CUPTI_SUCCESS;
}

static const dls_cupti_table g_table = {
    .subscribe = fake_subscribe, .subscribe_v2 = fake_subscribe_v2, .enable_callback = fake_enable_callback};

/* The host's entries, as the binding engine gets them for the stand-in's functions. */
typedef struct {
    CUptiResult(CUPTIAPI *subscribe)(CUpti_SubscriberHandle *, CUpti_CallbackFunc, void *);
    CUptiResult(CUPTIAPI *unsubscribe)(CUpti_SubscriberHandle);
    CUptiResult(CUPTIAPI *enable_callback)(uint32_t, CUpti_SubscriberHandle, CUpti_CallbackDomain, CUpti_CallbackId);
    CUptiResult(CUPTIAPI *enable_domain)(uint32_t, CUpti_SubscriberHandle, CUpti_CallbackDomain);
    CUptiResult(CUPTIAPI *get_state)(uint32_t *, CUpti_SubscriberHandle, CUpti_CallbackDomain, CUpti_CallbackId);
    CUptiResult(CUPTIAPI *finalize)(void);
} entries;

static void *entry(const char *name, void *real)
{
    size_t n;
    const dls_engine_hook *h = dls_cupti_host_hooks(&n);
    assert_true(n > 0);
    for (size_t i = 0; i < n; i++)
        if (strcmp(h[i].name, name) == 0) {
            assert_true(h[i].by_dlsym && h[i].skip_definer);
            return h[i].entry_for(real);
        }
    fail_msg("no hook for %s", name);
    return NULL;
}

static entries g_e;

/* ---- a client ---- */

typedef struct {
    int calls, foreign;
    uint64_t seen_at_exit;
} client;

static void CUPTIAPI on_client(void *user, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void *data)
{
    client *c = user;
    const CUpti_CallbackData *d = data;
    if (domain != CUPTI_CB_DOMAIN_RUNTIME_API || cbid != CUPTI_RUNTIME_TRACE_CBID_cudaMemset_v3020) {
        c->foreign++;
        return;
    }
    c->calls++;
    if (d->callbackSite == CUPTI_API_ENTER)
        *d->correlationData = (uint64_t)(uintptr_t)c;
    else
        c->seen_at_exit = *d->correlationData;
}

/* One runtime-domain phase of call `corr` (id cbid) through the dispatcher, with CUPTI's own
 * correlation slot `slot`. */
static void dispatch(CUpti_CallbackId cbid, CUpti_ApiCallbackSite site, uint32_t corr, uint64_t *slot)
{
    CUpti_CallbackData d;
    memset(&d, 0, sizeof d);
    d.callbackSite = site;
    d.functionName = "cudaSomething";
    d.correlationId = corr;
    d.correlationData = slot;
    dls_cupti_host_dispatch(NULL, CUPTI_CB_DOMAIN_RUNTIME_API, cbid, &d);
}

static void hosting_follows_the_rules(void **state)
{
    (void)state;
    g_e.subscribe = entry("cuptiSubscribe", (void *)fake_subscribe);
    g_e.unsubscribe = entry("cuptiUnsubscribe", (void *)fake_finalize); /* never reached for hosted handles */
    g_e.enable_callback = entry("cuptiEnableCallback", (void *)fake_enable_callback);
    g_e.enable_domain = entry("cuptiEnableDomain", (void *)fake_finalize);
    g_e.get_state = entry("cuptiGetCallbackState", (void *)fake_finalize);
    g_e.finalize = entry("cuptiFinalize", (void *)fake_finalize);
    /* A second CUPTI library's function is declined: its callers keep calling it. */
    assert_null(entry("cuptiSubscribe", (void *)fake_subscribe_v2));

    client a = {0}, b = {0};
    CUpti_SubscriberHandle ha, hb;
    /* Before dlsync's subscription is live, CUPTI's answer stands. */
    g_subscribe_result = CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
    assert_int_equal(g_e.subscribe(&ha, on_client, &a), CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED);
    assert_int_equal(g_e.finalize(), CUPTI_SUCCESS);
    assert_int_equal(g_finalized, 1);

    /* dlsync's subscription: its own id is cudaLaunchKernel. */
    dls_cupti_host_own(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000);
    dls_cupti_host_start(&g_table, DLSYNC_SUB);
    assert_int_equal(g_e.subscribe(&ha, on_client, &a), CUPTI_SUCCESS);
    assert_int_equal(g_e.subscribe(&hb, on_client, &b), CUPTI_SUCCESS);
    assert_ptr_not_equal(ha, hb);

    /* A client's id is enabled in CUPTI; one dlsync holds already is not touched. */
    assert_int_equal(g_e.enable_callback(1, ha, CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaMemset_v3020),
                     CUPTI_SUCCESS);
    assert_int_equal(g_real_enabled[CUPTI_CB_DOMAIN_RUNTIME_API][CUPTI_RUNTIME_TRACE_CBID_cudaMemset_v3020], 1);
    int calls = g_real_enable_calls;
    assert_int_equal(
        g_e.enable_callback(1, ha, CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000),
        CUPTI_SUCCESS);
    assert_int_equal(g_real_enable_calls, calls);
    assert_int_equal(g_e.enable_callback(1, hb, CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaMemset_v3020),
                     CUPTI_SUCCESS);
    uint32_t on = 0;
    assert_int_equal(g_e.get_state(&on, hb, CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaMemset_v3020),
                     CUPTI_SUCCESS);
    assert_int_equal(on, 1);

    /* A client-only id costs dlsync nothing: its callback does not run (no runtime call opens on
     * the thread); each client gets its call with its own userdata and correlation data. */
    dls_cuda_thread *t = dls_cuda_thread_self();
    uint64_t slot = 0;
    dispatch(CUPTI_RUNTIME_TRACE_CBID_cudaMemset_v3020, CUPTI_API_ENTER, 7, &slot);
    assert_int_equal(t->rt_depth, 0);
    dispatch(CUPTI_RUNTIME_TRACE_CBID_cudaMemset_v3020, CUPTI_API_EXIT, 7, &slot);
    assert_int_equal(a.calls, 2);
    assert_int_equal(b.calls, 2);
    assert_int_equal(a.seen_at_exit, (uint64_t)(uintptr_t)&a);
    assert_int_equal(b.seen_at_exit, (uint64_t)(uintptr_t)&b);
    assert_int_equal(slot, 0); /* CUPTI's own slot is dlsync's */
    /* dlsync's own id still reaches dlsync. */
    dispatch(CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, CUPTI_API_ENTER, 8, &slot);
    assert_int_equal(t->rt_depth, 1);
    dispatch(CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, CUPTI_API_EXIT, 8, &slot);
    assert_int_equal(t->rt_depth, 0);

    /* Disabling: the id stays enabled in CUPTI while another client wants it. */
    assert_int_equal(g_e.enable_domain(0, ha, CUPTI_CB_DOMAIN_RUNTIME_API), CUPTI_SUCCESS);
    assert_int_equal(g_real_enabled[CUPTI_CB_DOMAIN_RUNTIME_API][CUPTI_RUNTIME_TRACE_CBID_cudaMemset_v3020], 1);
    assert_int_equal(g_e.unsubscribe(hb), CUPTI_SUCCESS);
    assert_int_equal(g_real_enabled[CUPTI_CB_DOMAIN_RUNTIME_API][CUPTI_RUNTIME_TRACE_CBID_cudaMemset_v3020], 0);
    assert_int_equal(g_real_enabled[CUPTI_CB_DOMAIN_RUNTIME_API][CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000], 0);
    assert_int_equal(g_e.unsubscribe(hb), CUPTI_ERROR_INVALID_PARAMETER);
    dispatch(CUPTI_RUNTIME_TRACE_CBID_cudaMemset_v3020, CUPTI_API_ENTER, 9, &slot);
    assert_int_equal(a.calls + b.calls, 4);

    /* The program's cuptiFinalize ends the clients and leaves dlsync's subscription. */
    assert_int_equal(g_e.enable_callback(1, ha, CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaMemset_v3020),
                     CUPTI_SUCCESS);
    assert_int_equal(g_e.finalize(), CUPTI_SUCCESS);
    assert_int_equal(g_finalized, 1);
    assert_int_equal(g_real_enabled[CUPTI_CB_DOMAIN_RUNTIME_API][CUPTI_RUNTIME_TRACE_CBID_cudaMemset_v3020], 0);
    assert_int_equal(g_e.enable_callback(1, ha, CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaMemset_v3020),
                     CUPTI_ERROR_INVALID_PARAMETER);
    /* A subscription CUPTI grants is CUPTI's. */
    g_subscribe_result = CUPTI_SUCCESS;
    assert_int_equal(g_e.subscribe(&ha, on_client, &a), CUPTI_SUCCESS);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(hosting_follows_the_rules),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
