/* libfakeprof.so: a fake CUPTI profiler, as Nsight Systems or the PyTorch profiler (Kineto) would
 * be, for test_profilers. It subscribes when the program calls fakeprof_subscribe (before or
 * after CUDA starts), or when the CUDA driver calls its InitializeInjection (named in
 * CUDA_INJECTION64_PATH, as Nsight Systems loads itself). Like a real profiler that shares, it
 * subscribes with cuptiSubscribe_v2 and asks for CUPTI's multi-subscriber mode when the loaded
 * CUPTI can share (13.3 and later), unless FAKEPROF_ALONE=1 (a profiler that does not share).
 *
 * It enables only the runtime's cudaLaunchKernel and counts the launches it is told about; a
 * callback for anything else, or with other userdata, is counted as wrong. At exit it prints
 * "profiler: subscribed launches=N wrong=N" or "profiler: refused by <holder>" on stdout. */
#include <cupti.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../shim/cuda/cupti_subscriber.h"

typedef struct {
    int tried, subscribed, launches, wrong;
    char holder[CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN];
} profiler;

static profiler g_prof;

static void CUPTIAPI on_callback(void *userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void *data)
{
    const CUpti_CallbackData *d = data;
    if (userdata != &g_prof || domain != CUPTI_CB_DOMAIN_RUNTIME_API ||
        cbid != CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000) {
        g_prof.wrong++;
        return;
    }
    if (d->callbackSite == CUPTI_API_ENTER)
        g_prof.launches++;
}

/* Subscribes the profiler; exits 2 on an error other than a refusal. */
void fakeprof_subscribe(void);

void fakeprof_subscribe(void)
{
    uint32_t version = 0;
    if (cuptiGetVersion(&version) != CUPTI_SUCCESS)
        version = 0;
    const char *alone_env = getenv("FAKEPROF_ALONE");
    int alone = alone_env && strcmp(alone_env, "1") == 0;
    dls_cupti_subscriber_params p = {
        .structSize = dls_cupti_subscriber_params_size(version),
        .subscriberName = "fakeprof",
        .oldSubscriberName = g_prof.holder,
        .oldSubscriberSize = sizeof g_prof.holder,
        .allowMultipleSubscribers = (uint8_t)(dls_cupti_can_share(version) && !alone),
    };
    CUpti_SubscriberHandle sub;
    g_prof.tried = 1;
    CUptiResult r = cuptiSubscribe_v2(&sub, on_callback, &g_prof, (CUpti_SubscriberParams *)&p);
    if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED)
        return;
    if (r != CUPTI_SUCCESS || cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_RUNTIME_API,
                                                  CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000) != CUPTI_SUCCESS) {
        fprintf(stderr, "fakeprof: CUPTI error %d\n", (int)r);
        exit(2);
    }
    g_prof.subscribed = 1;
}

/* Called by the CUDA driver at cuInit when CUDA_INJECTION64_PATH names this library. */
int InitializeInjection(void);

int InitializeInjection(void)
{
    fakeprof_subscribe();
    return 1;
}

__attribute__((destructor)) static void print_outcome(void)
{
    if (g_prof.subscribed)
        printf("profiler: subscribed launches=%d wrong=%d\n", g_prof.launches, g_prof.wrong);
    else if (g_prof.tried)
        printf("profiler: refused by %s\n", g_prof.holder);
    fflush(stdout);
}
