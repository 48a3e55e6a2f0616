/* cupti_callbacks.c: the simulated libcupti.so.13, callback API subset.
 *
 * Models: one subscriber at a time (a second gets CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED,
 * and cuptiSubscribe_v2 writes the holder's name into oldSubscriberName), per-callback enable
 * state in every domain, callbacks for the driver, runtime and resource domains as libcuda.so.1
 * reports them (including calls made from inside a callback), result strings, the version.
 * CUDASIM_CUPTI_BUSY=<name> makes every subscription fail as if the tool <name> (say, Nsight)
 * already held CUPTI. Does not model: activity buffers, the synchronize, NVTX and state domains'
 * events (they can be enabled; nothing reports them), profiling APIs. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cupti_callbacks.h>
#include <cupti_result.h>
#include <cupti_version.h>
#include <cupti_driver_cbid.h>
#include <cupti_runtime_cbid.h>
#include <cupti_nvtx_cbid.h>

#include "cudasim_hook.h"

#define MAX_CBIDS 1024 /* above CUPTI_DRIVER_TRACE_CBID_SIZE and every other domain's size */

struct CUpti_Subscriber_st {
    CUpti_CallbackFunc callback;
    void *userdata;
    char name[CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN];
};

static struct CUpti_Subscriber_st g_sub;
static atomic_int g_active;
static atomic_uchar g_enabled[CUPTI_CB_DOMAIN_SIZE][MAX_CBIDS];
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;

static unsigned domain_size(CUpti_CallbackDomain d)
{
    switch (d) {
    case CUPTI_CB_DOMAIN_DRIVER_API: return CUPTI_DRIVER_TRACE_CBID_SIZE;
    case CUPTI_CB_DOMAIN_RUNTIME_API: return CUPTI_RUNTIME_TRACE_CBID_SIZE;
    case CUPTI_CB_DOMAIN_RESOURCE: return CUPTI_CBID_RESOURCE_SIZE;
    case CUPTI_CB_DOMAIN_SYNCHRONIZE: return CUPTI_CBID_SYNCHRONIZE_SIZE;
    case CUPTI_CB_DOMAIN_NVTX: return CUPTI_CBID_NVTX_SIZE;
    case CUPTI_CB_DOMAIN_STATE: return CUPTI_CBID_STATE_SIZE;
    default: return 0;
    }
}

static void hook(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void *cbdata)
{
    if (!atomic_load_explicit(&g_active, memory_order_acquire))
        return;
    if (cbid >= MAX_CBIDS || (unsigned)domain >= CUPTI_CB_DOMAIN_SIZE ||
        !atomic_load_explicit(&g_enabled[domain][cbid], memory_order_relaxed))
        return;
    g_sub.callback(g_sub.userdata, domain, cbid, cbdata);
}

static void copy_name(char *dst, size_t size, const char *src)
{
    if (dst && size)
        snprintf(dst, size, "%s", src);
}

CUptiResult CUPTIAPI cuptiSubscribe_v2(CUpti_SubscriberHandle *subscriber,
                                       CUpti_CallbackFunc callback, void *userdata,
                                       CUpti_SubscriberParams *pParams)
{
    if (!subscriber || !callback)
        return CUPTI_ERROR_INVALID_PARAMETER;
    char *old = pParams ? pParams->oldSubscriberName : NULL;
    size_t old_size = pParams ? pParams->oldSubscriberSize : 0;
    const char *busy = getenv("CUDASIM_CUPTI_BUSY");
    if (busy && *busy) {
        copy_name(old, old_size, busy);
        return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
    }
    pthread_mutex_lock(&g_lock);
    if (atomic_load(&g_active)) {
        copy_name(old, old_size, g_sub.name);
        pthread_mutex_unlock(&g_lock);
        return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
    }
    g_sub.callback = callback;
    g_sub.userdata = userdata;
    if (pParams && pParams->subscriberName)
        snprintf(g_sub.name, sizeof g_sub.name, "CUPTI for %.*s", CUPTI_SUBSCRIBER_NAME_MAX_LEN,
                 pParams->subscriberName);
    else
        snprintf(g_sub.name, sizeof g_sub.name, "CUPTI");
    for (unsigned d = 0; d < CUPTI_CB_DOMAIN_SIZE; d++)
        for (unsigned i = 0; i < MAX_CBIDS; i++)
            atomic_store(&g_enabled[d][i], 0);
    cudasim_set_callback_hook(hook);
    atomic_store_explicit(&g_active, 1, memory_order_release);
    pthread_mutex_unlock(&g_lock);
    *subscriber = &g_sub;
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiSubscribe(CUpti_SubscriberHandle *subscriber,
                                    CUpti_CallbackFunc callback, void *userdata)
{
    return cuptiSubscribe_v2(subscriber, callback, userdata, NULL);
}

static int valid(CUpti_SubscriberHandle s)
{
    return s == &g_sub && atomic_load(&g_active);
}

CUptiResult CUPTIAPI cuptiUnsubscribe(CUpti_SubscriberHandle subscriber)
{
    pthread_mutex_lock(&g_lock);
    if (!valid(subscriber)) {
        pthread_mutex_unlock(&g_lock);
        return CUPTI_ERROR_INVALID_PARAMETER;
    }
    atomic_store(&g_active, 0);
    pthread_mutex_unlock(&g_lock);
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiEnableCallback(uint32_t enable, CUpti_SubscriberHandle subscriber,
                                         CUpti_CallbackDomain domain, CUpti_CallbackId cbid)
{
    if (!valid(subscriber) || cbid >= domain_size(domain))
        return CUPTI_ERROR_INVALID_PARAMETER;
    atomic_store(&g_enabled[domain][cbid], enable ? 1 : 0);
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiEnableDomain(uint32_t enable, CUpti_SubscriberHandle subscriber,
                                       CUpti_CallbackDomain domain)
{
    unsigned n = domain_size(domain);
    if (!valid(subscriber) || !n)
        return CUPTI_ERROR_INVALID_PARAMETER;
    for (unsigned i = 0; i < n; i++)
        atomic_store(&g_enabled[domain][i], enable ? 1 : 0);
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiEnableAllDomains(uint32_t enable, CUpti_SubscriberHandle subscriber)
{
    if (!valid(subscriber))
        return CUPTI_ERROR_INVALID_PARAMETER;
    for (unsigned d = CUPTI_CB_DOMAIN_DRIVER_API; d < CUPTI_CB_DOMAIN_SIZE; d++)
        cuptiEnableDomain(enable, subscriber, (CUpti_CallbackDomain)d);
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiGetCallbackState(uint32_t *enable, CUpti_SubscriberHandle subscriber,
                                           CUpti_CallbackDomain domain, CUpti_CallbackId cbid)
{
    if (!enable || !valid(subscriber) || cbid >= domain_size(domain))
        return CUPTI_ERROR_INVALID_PARAMETER;
    *enable = atomic_load(&g_enabled[domain][cbid]);
    return CUPTI_SUCCESS;
}

static const struct { CUptiResult code; const char *text; } g_results[] = {
    { CUPTI_SUCCESS, "CUPTI_SUCCESS" },
    { CUPTI_ERROR_INVALID_PARAMETER, "CUPTI_ERROR_INVALID_PARAMETER" },
    { CUPTI_ERROR_INVALID_DEVICE, "CUPTI_ERROR_INVALID_DEVICE" },
    { CUPTI_ERROR_INVALID_CONTEXT, "CUPTI_ERROR_INVALID_CONTEXT" },
    { CUPTI_ERROR_INVALID_OPERATION, "CUPTI_ERROR_INVALID_OPERATION" },
    { CUPTI_ERROR_OUT_OF_MEMORY, "CUPTI_ERROR_OUT_OF_MEMORY" },
    { CUPTI_ERROR_NOT_INITIALIZED, "CUPTI_ERROR_NOT_INITIALIZED" },
    { CUPTI_ERROR_NOT_SUPPORTED, "CUPTI_ERROR_NOT_SUPPORTED" },
    { CUPTI_ERROR_INSUFFICIENT_PRIVILEGES, "CUPTI_ERROR_INSUFFICIENT_PRIVILEGES" },
    { CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED,
      "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED" },
    { CUPTI_ERROR_UNKNOWN, "CUPTI_ERROR_UNKNOWN" },
};

CUptiResult CUPTIAPI cuptiGetResultString(CUptiResult result, const char **str)
{
    if (!str)
        return CUPTI_ERROR_INVALID_PARAMETER;
    for (size_t i = 0; i < sizeof g_results / sizeof g_results[0]; i++) {
        if (g_results[i].code == result) {
            *str = g_results[i].text;
            return CUPTI_SUCCESS;
        }
    }
    *str = "CUPTI_ERROR_UNKNOWN";
    return CUPTI_ERROR_INVALID_PARAMETER;
}

CUptiResult CUPTIAPI cuptiGetVersion(uint32_t *version)
{
    if (!version)
        return CUPTI_ERROR_INVALID_PARAMETER;
    *version = CUPTI_API_VERSION;
    return CUPTI_SUCCESS;
}
