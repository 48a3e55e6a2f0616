/* sim_injection.c: a CUDA_INJECTION64_PATH library for test_sim_injection: InitializeInjection
 * counts its calls and subscribes to CUPTI, counting driver callbacks from then on. */
#include <stdatomic.h>

#include <cupti.h>

atomic_int sim_injection_inits;
atomic_int sim_injection_callbacks;

static void CUPTIAPI on_callback(void *user, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void *data)
{
    (void)user;
    (void)domain;
    (void)cbid;
    if (((const CUpti_CallbackData *)data)->callbackSite == CUPTI_API_ENTER)
        atomic_fetch_add(&sim_injection_callbacks, 1);
}

__attribute__((visibility("default"))) int InitializeInjection(void)
{
    CUpti_SubscriberHandle sub;
    atomic_fetch_add(&sim_injection_inits, 1);
    if (cuptiSubscribe(&sub, on_callback, NULL) != CUPTI_SUCCESS)
        return 0;
    cuptiEnableDomain(1, sub, CUPTI_CB_DOMAIN_DRIVER_API);
    return 1;
}
