/* The side_stream exchange under a fake profiler: a second CUPTI client, as Nsight Systems or the
 * PyTorch profiler (Kineto) would be, subscribing before CUDA starts (FAKEPROF=before: before
 * dlsync subscribes at cuInit) or after it (FAKEPROF=after), or not at all (unset). Like a real
 * profiler it asks for CUPTI's multi-subscriber mode when the loaded CUPTI offers it.
 *
 * The profiler enables only the runtime's cudaLaunchKernel and counts the launches it is told
 * about; a callback for anything else, or with other userdata, is counted as wrong. Besides the
 * scenario's two lines, prints "profiler: subscribed launches=N wrong=N" or
 * "profiler: refused by <holder>". */
#include <cuda_runtime_api.h>
#include <cupti.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../shim/cuda/cupti_subscriber.h"
#include "scen.h"

typedef struct {
    int subscribed, launches, wrong;
    char holder[CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN];
} profiler;

static profiler g_prof;

static void CUPTIAPI on_callback(void *userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                                 const void *data)
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

static void subscribe(void)
{
    uint32_t version = 0;
    if (cuptiGetVersion(&version) != CUPTI_SUCCESS)
        version = 0;
    dls_cupti_subscriber_params p = {
        .structSize = dls_cupti_subscriber_params_size(version),
        .subscriberName = "fakeprof",
        .oldSubscriberName = g_prof.holder,
        .oldSubscriberSize = sizeof g_prof.holder,
        .allowMultipleSubscribers = (uint8_t)dls_cupti_has_multi_subscriber(version),
    };
    CUpti_SubscriberHandle sub;
    CUptiResult r = cuptiSubscribe_v2(&sub, on_callback, &g_prof, (CUpti_SubscriberParams *)&p);
    if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED)
        return;
    if (r != CUPTI_SUCCESS ||
        cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000) !=
            CUPTI_SUCCESS) {
        fprintf(stderr, "fakeprof: CUPTI error %d\n", (int)r);
        exit(2);
    }
    g_prof.subscribed = 1;
}

int main(int argc, char **argv)
{
    int racy = scen_racy(argc, argv);
    const char *when = getenv("FAKEPROF");
    if (when && strcmp(when, "before") == 0)
        subscribe();
    cudaFree(NULL); /* starts CUDA: dlsync subscribes now */
    if (when && strcmp(when, "after") == 0)
        subscribe();
    scen_side_stream(racy, 4);
    if (g_prof.subscribed)
        printf("profiler: subscribed launches=%d wrong=%d\n", g_prof.launches, g_prof.wrong);
    else if (when)
        printf("profiler: refused by %s\n", g_prof.holder);
    return 0;
}
