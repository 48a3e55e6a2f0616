/* cupti_callbacks.c: the simulated libcupti.so.13, callback API subset.
 *
 * Models two CUPTI generations, chosen by CUDASIM_CUPTI_VERSION (the API version cuptiGetVersion
 * reports; default: CUPTI_API_VERSION of the headers, 130001):
 * - before 13.2 (< 130200): one subscriber at a time; a second gets
 *   CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED and cuptiSubscribe_v2 writes the holder's name
 *   into oldSubscriberName. A structSize larger than this generation's struct is refused with
 *   CUPTI_ERROR_INVALID_PARAMETER, as the real CUPTI 13.0 does (docs/gpu-results-2026-11-30.md).
 * - 13.2 and later: CUpti_SubscriberParams.allowMultipleSubscribers (shim/cuda/cupti_subscriber.h).
 *   Subscribers that all asked for it coexist (up to MAX_SUBSCRIBERS); one that did not ask, or
 *   an existing one that did not, makes the new subscription fail as above. Each subscriber has
 *   its own enable state and userdata and receives exactly the callbacks it enabled.
 *   CUDASIM_CUPTI_NO_MULTI=1 models one that cannot fulfil the request (CUPTI's static library):
 *   asking for it fails with CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED, naming nobody.
 * Per-callback enable state in every domain, callbacks for the driver, runtime and resource
 * domains as libcuda.so.1 reports them (including calls made from inside a callback), result
 * strings, the version. A program that defines cudasim_cupti_probe (cudasim.h), visible to
 * dlsym, has it called as the library is loaded and at each cuptiSubscribe(_v2) and
 * cuptiEnableCallback, so that it can see what its caller holds. CUDASIM_CUPTI_BUSY=<name> makes every subscription fail as if the tool
 * <name> (say, Nsight) already held CUPTI. Does not model: activity buffers, the synchronize,
 * NVTX and state domains' events (they can be enabled; nothing reports them), profiling APIs. */
#include <dlfcn.h>
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

#include "../../shim/cuda/cupti_subscriber.h"
#include "cudasim.h"
#include "cudasim_hook.h"

#define MAX_CBIDS 1024 /* above CUPTI_DRIVER_TRACE_CBID_SIZE and every other domain's size */
#define MAX_SUBSCRIBERS 4

struct CUpti_Subscriber_st {
    atomic_int active;
    int multi; /* asked for allowMultipleSubscribers */
    CUpti_CallbackFunc callback;
    void *userdata;
    char name[CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN];
    atomic_uchar enabled[CUPTI_CB_DOMAIN_SIZE][MAX_CBIDS];
};

static struct CUpti_Subscriber_st g_subs[MAX_SUBSCRIBERS];

/* The program's probe (cudasim.h), found as the library is loaded; NULL: none. */
static cudasim_cupti_probe_fn g_probe;

__attribute__((constructor)) static void find_probe(void)
{
    g_probe = (cudasim_cupti_probe_fn)dlsym(RTLD_DEFAULT, "cudasim_cupti_probe");
    if (g_probe)
        g_probe(CUDASIM_PROBE_LOAD, 0, 0, 0);
}

/* How many active subscribers enabled each callback: the hook returns at once for the calls no
 * one listens to (every API call reaches it). */
static atomic_uint g_listeners[CUPTI_CB_DOMAIN_SIZE][MAX_CBIDS];

/* Sets subscriber s's enable flag of (domain, cbid), keeping g_listeners in step. */
static void set_enabled(struct CUpti_Subscriber_st *s, unsigned domain, unsigned cbid, int on)
{
    if (atomic_exchange(&s->enabled[domain][cbid], on ? 1 : 0) != (on ? 1 : 0)) {
        if (on)
            atomic_fetch_add(&g_listeners[domain][cbid], 1);
        else
            atomic_fetch_sub(&g_listeners[domain][cbid], 1);
    }
}
static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;

/* The API version this process's simulated CUPTI reports. */
static uint32_t api_version(void)
{
    const char *v = getenv("CUDASIM_CUPTI_VERSION");
    return v && *v ? (uint32_t)strtoul(v, NULL, 10) : CUPTI_API_VERSION;
}

static unsigned domain_size(CUpti_CallbackDomain d)
{
    switch (d) {
    case CUPTI_CB_DOMAIN_DRIVER_API:
        return CUPTI_DRIVER_TRACE_CBID_SIZE;
    case CUPTI_CB_DOMAIN_RUNTIME_API:
        return CUPTI_RUNTIME_TRACE_CBID_SIZE;
    case CUPTI_CB_DOMAIN_RESOURCE:
        return CUPTI_CBID_RESOURCE_SIZE;
    case CUPTI_CB_DOMAIN_SYNCHRONIZE:
        return CUPTI_CBID_SYNCHRONIZE_SIZE;
    case CUPTI_CB_DOMAIN_NVTX:
        return CUPTI_CBID_NVTX_SIZE;
    case CUPTI_CB_DOMAIN_STATE:
        return CUPTI_CBID_STATE_SIZE;
    default:
        return 0;
    }
}

static void hook(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void *cbdata)
{
    if (cbid >= MAX_CBIDS || (unsigned)domain >= CUPTI_CB_DOMAIN_SIZE ||
        !atomic_load_explicit(&g_listeners[domain][cbid], memory_order_relaxed))
        return;
    for (int i = 0; i < MAX_SUBSCRIBERS; i++) {
        struct CUpti_Subscriber_st *s = &g_subs[i];
        if (atomic_load_explicit(&s->active, memory_order_acquire) &&
            atomic_load_explicit(&s->enabled[domain][cbid], memory_order_relaxed))
            s->callback(s->userdata, domain, cbid, cbdata);
    }
}

static void copy_name(char *dst, size_t size, const char *src)
{
    if (dst && size)
        snprintf(dst, size, "%s", src);
}

/* With g_lock held: a subscriber that refuses a newcomer (`multi`: it asked to share), or NULL. */
static struct CUpti_Subscriber_st *refusing_holder(int multi)
{
    for (int i = 0; i < MAX_SUBSCRIBERS; i++)
        if (atomic_load(&g_subs[i].active) && (!multi || !g_subs[i].multi))
            return &g_subs[i];
    return NULL;
}

/* With g_lock held: a free slot, or NULL. */
static struct CUpti_Subscriber_st *free_slot(void)
{
    for (int i = 0; i < MAX_SUBSCRIBERS; i++)
        if (!atomic_load(&g_subs[i].active))
            return &g_subs[i];
    return NULL;
}

CUptiResult CUPTIAPI cuptiSubscribe_v2(CUpti_SubscriberHandle *subscriber, CUpti_CallbackFunc callback, void *userdata,
                                       CUpti_SubscriberParams *pParams)
{
    if (g_probe)
        g_probe(CUDASIM_PROBE_SUBSCRIBE, 0, 0, 0);
    if (!subscriber || !callback)
        return CUPTI_ERROR_INVALID_PARAMETER;
    const dls_cupti_subscriber_params *p = (const dls_cupti_subscriber_params *)pParams;
    uint32_t version = api_version();
    if (p && (p->structSize < DLS_CUPTI_SUBSCRIBER_PARAMS_SIZE_BASE ||
              p->structSize > dls_cupti_subscriber_params_size(version)))
        return CUPTI_ERROR_INVALID_PARAMETER;
    int multi = p && p->structSize >= DLS_CUPTI_SUBSCRIBER_PARAMS_SIZE_MULTI && p->allowMultipleSubscribers;
    char *old = p ? p->oldSubscriberName : NULL;
    size_t old_size = p ? p->oldSubscriberSize : 0;
    const char *no_multi = getenv("CUDASIM_CUPTI_NO_MULTI");
    if (multi && no_multi && strcmp(no_multi, "1") == 0)
        return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
    const char *busy = getenv("CUDASIM_CUPTI_BUSY");
    if (busy && *busy) {
        copy_name(old, old_size, busy);
        return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
    }
    pthread_mutex_lock(&g_lock);
    struct CUpti_Subscriber_st *holder = refusing_holder(multi);
    struct CUpti_Subscriber_st *s = holder ? NULL : free_slot();
    if (!s) {
        copy_name(old, old_size, holder ? holder->name : "CUPTI (every simulated slot taken)");
        pthread_mutex_unlock(&g_lock);
        return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
    }
    s->multi = multi;
    s->callback = callback;
    s->userdata = userdata;
    if (p && p->subscriberName)
        snprintf(s->name, sizeof s->name, "CUPTI for %.*s", CUPTI_SUBSCRIBER_NAME_MAX_LEN, p->subscriberName);
    else
        snprintf(s->name, sizeof s->name, "CUPTI");
    for (unsigned d = 0; d < CUPTI_CB_DOMAIN_SIZE; d++)
        for (unsigned i = 0; i < MAX_CBIDS; i++)
            set_enabled(s, d, i, 0);
    cudasim_set_callback_hook(hook);
    atomic_store_explicit(&s->active, 1, memory_order_release);
    pthread_mutex_unlock(&g_lock);
    *subscriber = s;
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiSubscribe(CUpti_SubscriberHandle *subscriber, CUpti_CallbackFunc callback, void *userdata)
{
    return cuptiSubscribe_v2(subscriber, callback, userdata, NULL);
}

static int valid(CUpti_SubscriberHandle s)
{
    return s >= g_subs && s < g_subs + MAX_SUBSCRIBERS && atomic_load(&s->active);
}

CUptiResult CUPTIAPI cuptiUnsubscribe(CUpti_SubscriberHandle subscriber)
{
    pthread_mutex_lock(&g_lock);
    if (!valid(subscriber)) {
        pthread_mutex_unlock(&g_lock);
        return CUPTI_ERROR_INVALID_PARAMETER;
    }
    atomic_store(&subscriber->active, 0);
    for (unsigned d = 0; d < CUPTI_CB_DOMAIN_SIZE; d++)
        for (unsigned i = 0; i < MAX_CBIDS; i++)
            set_enabled(subscriber, d, i, 0);
    pthread_mutex_unlock(&g_lock);
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiEnableCallback(uint32_t enable, CUpti_SubscriberHandle subscriber,
                                         CUpti_CallbackDomain domain, CUpti_CallbackId cbid)
{
    if (g_probe)
        g_probe(CUDASIM_PROBE_ENABLE, enable, (unsigned)domain, (unsigned)cbid);
    if (!valid(subscriber) || cbid >= domain_size(domain))
        return CUPTI_ERROR_INVALID_PARAMETER;
    set_enabled(subscriber, domain, cbid, enable);
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiEnableDomain(uint32_t enable, CUpti_SubscriberHandle subscriber, CUpti_CallbackDomain domain)
{
    unsigned n = domain_size(domain);
    if (!valid(subscriber) || !n)
        return CUPTI_ERROR_INVALID_PARAMETER;
    for (unsigned i = 0; i < n; i++)
        set_enabled(subscriber, domain, i, enable);
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
    *enable = atomic_load(&subscriber->enabled[domain][cbid]);
    return CUPTI_SUCCESS;
}

static const struct {
    CUptiResult code;
    const char *text;
} g_results[] = {
    {CUPTI_SUCCESS, "CUPTI_SUCCESS"},
    {CUPTI_ERROR_INVALID_PARAMETER, "CUPTI_ERROR_INVALID_PARAMETER"},
    {CUPTI_ERROR_INVALID_DEVICE, "CUPTI_ERROR_INVALID_DEVICE"},
    {CUPTI_ERROR_INVALID_CONTEXT, "CUPTI_ERROR_INVALID_CONTEXT"},
    {CUPTI_ERROR_INVALID_OPERATION, "CUPTI_ERROR_INVALID_OPERATION"},
    {CUPTI_ERROR_OUT_OF_MEMORY, "CUPTI_ERROR_OUT_OF_MEMORY"},
    {CUPTI_ERROR_NOT_INITIALIZED, "CUPTI_ERROR_NOT_INITIALIZED"},
    {CUPTI_ERROR_NOT_SUPPORTED, "CUPTI_ERROR_NOT_SUPPORTED"},
    {CUPTI_ERROR_INSUFFICIENT_PRIVILEGES, "CUPTI_ERROR_INSUFFICIENT_PRIVILEGES"},
    {CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED, "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED"},
    {CUPTI_ERROR_UNKNOWN, "CUPTI_ERROR_UNKNOWN"},
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
    *version = api_version();
    return CUPTI_SUCCESS;
}
