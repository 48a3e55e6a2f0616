/* libnullsub.so: a CUPTI subscriber that does nothing, for bench_cost. Loaded by the CUDA driver
 * through CUDA_INJECTION64_PATH, its InitializeInjection subscribes to CUPTI and enables exactly
 * the callback ids dlsync's observer enables (the same tables, shim/cuda/cbids.c): every driver
 * id, and the runtime ids too when NULLSUB_RUNTIME=1 (dlsync enables them in every mode but fix).
 * Its callback returns at once. A run with it pays the CUPTI dispatch of those callbacks (on a
 * GPU, the driver's work; here, the simulator's) and nothing else, so the difference to a run
 * with dlsync is dlsync's own cost. Prints nothing; a failed subscription exits 3 at once, so a
 * figure is never measured against a run without callbacks. */
#include "../../shim/cuda/cbids.h" /* first: it includes the CUDA headers its own way */

#include <stdlib.h>
#include <string.h>

static void CUPTIAPI nothing(void *userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void *data)
{
    (void)userdata;
    (void)domain;
    (void)cbid;
    (void)data;
}

static void enable(CUpti_SubscriberHandle sub, CUpti_CallbackDomain dom, const CUpti_CallbackId *t, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (cuptiEnableCallback(1, sub, dom, t[i]) != CUPTI_SUCCESS)
            exit(3);
}

/* The driver's entry point (CUDA_INJECTION64_PATH). Returns 1. */
__attribute__((visibility("default"))) int InitializeInjection(void);

int InitializeInjection(void)
{
    CUpti_SubscriberHandle sub;
    if (cuptiSubscribe(&sub, nothing, NULL) != CUPTI_SUCCESS)
        exit(3);
    size_t n;
    const CUpti_CallbackId *d = dls_cuda_driver_cbids(&n);
    enable(sub, CUPTI_CB_DOMAIN_DRIVER_API, d, n);
    const char *rt = getenv("NULLSUB_RUNTIME");
    if (rt && strcmp(rt, "1") == 0) {
        const CUpti_CallbackId *r = dls_cuda_runtime_cbids(&n);
        enable(sub, CUPTI_CB_DOMAIN_RUNTIME_API, r, n);
    }
    return 1;
}
