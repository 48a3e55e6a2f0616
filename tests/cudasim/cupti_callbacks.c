/* cupti_callbacks.c: the simulated libcupti.so.13, callback API subset.
 *
 * Models CUPTI's subscription rules version by version, chosen by CUDASIM_CUPTI_VERSION (the API
 * version cuptiGetVersion reports; default: CUPTI_API_VERSION of the headers, 130001) and
 * CUDASIM_DRIVER_VERSION (the CUDA version the driver reports, cuDriverGetVersion; default
 * CUDA_VERSION of the headers, 13000; 13030 stands for a driver of the r610 branch, CUDA 13.3's):
 * - Struct sizes: before 13.2 (< 130200) CUpti_SubscriberParams ends at oldSubscriberSize and a
 *   larger structSize is refused with CUPTI_ERROR_INVALID_PARAMETER, as the real CUPTI 13.0 does
 *   (docs/gpu-results-2026-11-30.md); 13.2 adds allowMultipleSubscribers
 *   (shim/cuda/cupti_subscriber.h).
 * - Without multi-subscriber mode (before 13.3, or a driver older than r610: CUPTI's
 *   documentation, "Legacy Initialization"), one subscriber at a time: a second gets
 *   CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED and cuptiSubscribe_v2 writes the holder's name
 *   into oldSubscriberName, whatever either asked: a first subscriber that asks for
 *   allowMultipleSubscribers gets CUPTI alone, with CUPTI_SUCCESS (as the real CUPTI 13.2.86 did
 *   on the H200 of docs/gpu-results-2026-12-04.md, refusing Kineto after it). Nothing is
 *   remembered once the subscriber leaves.
 * - With it (13.3 or later and an r610+ driver), the first successful subscription fixes the
 *   process's mode for the life of the process, even after that subscriber leaves: its family
 *   (cuptiSubscribe, or cuptiSubscribe_v2) and whether it shares (cuptiSubscribe_v2 with
 *   allowMultipleSubscribers=1). A subscription of the other family is refused, and so is one
 *   whose request differs from the mode; in the shared mode subscribers that ask to share coexist
 *   (up to MAX_SUBSCRIBERS), in the single one they come one at a time. A refusal names the
 *   holder, or the subscriber that fixed the mode.
 * - cuptiFinalize detaches CUPTI from the process (cupti_activity.h: it "destroys and cleans up all
 *   the resources associated with CUPTI"): every subscription ends, and the activity API's state
 *   (cupti_activity.c) is dropped. The mode stays fixed.
 * Each subscriber has its own enable state and userdata and receives exactly the callbacks it
 * enabled. Per-callback enable state in every domain, callbacks for the driver, runtime and
 * resource domains as libcuda.so.1 reports them (including calls made from inside a callback),
 * result strings, the version. A program that defines cudasim_cupti_probe (cudasim.h), visible to
 * dlsym, has it called as the library is loaded and at each cuptiSubscribe(_v2) and
 * cuptiEnableCallback, so that it can see what its caller holds. CUDASIM_CUPTI_BUSY=<name> makes
 * every subscription fail as if the tool <name> (say, Nsight) already held CUPTI. Does not model:
 * the synchronize, NVTX and state domains' events (they can be enabled; nothing reports them),
 * the per-subscriber (_v2) activity functions, profiling APIs. */
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
#include "cupti_sim.h"

#define MAX_CBIDS 1024 /* above CUPTI_DRIVER_TRACE_CBID_SIZE and every other domain's size */
#define MAX_SUBSCRIBERS 4

struct CUpti_Subscriber_st {
    atomic_int active;
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
    if (atomic_load_explicit(&cudasim_cupti_activity_kinds, memory_order_relaxed))
        cudasim_cupti_activity_note(domain, cbdata);
    unsigned left = cbid < MAX_CBIDS && (unsigned)domain < CUPTI_CB_DOMAIN_SIZE
                        ? atomic_load_explicit(&g_listeners[domain][cbid], memory_order_relaxed)
                        : 0;
    for (int i = 0; i < MAX_SUBSCRIBERS && left; i++) { /* up to the last one listening */
        struct CUpti_Subscriber_st *s = &g_subs[i];
        if (atomic_load_explicit(&s->enabled[domain][cbid], memory_order_relaxed)) {
            left--;
            if (atomic_load_explicit(&s->active, memory_order_acquire))
                s->callback(s->userdata, domain, cbid, cbdata);
        }
    }
}

static void copy_name(char *dst, size_t size, const char *src)
{
    if (dst && size)
        snprintf(dst, size, "%s", src);
}

void cudasim_cupti_install_hook(void)
{
    cudasim_set_callback_hook(hook);
}

/* The process's mode, once fixed (with multi-subscriber mode only; under g_lock). */
static struct {
    int fixed;
    int v2;     /* fixed by cuptiSubscribe_v2 */
    int shared; /* fixed by a request for allowMultipleSubscribers */
    char first[CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN];
} g_mode;

/* 1 when this CUPTI, with this driver, has multi-subscriber mode. The driver's version is read as
 * libcuda.so.1 reports it, without making a call that subscribers would be told about. */
static int has_multi_subscriber_mode(void)
{
    return dls_cupti_can_share(api_version()) && dls_cupti_driver_can_share(cudasim_driver_version());
}

/* With g_lock held: an active subscriber, or NULL. */
static struct CUpti_Subscriber_st *any_holder(void)
{
    for (int i = 0; i < MAX_SUBSCRIBERS; i++)
        if (atomic_load(&g_subs[i].active))
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

/* With g_lock held: whom a subscription of family `v2` asking to share (`multi`) is refused by
 * (written to old), or NULL when it may proceed; *refused is 1 on a refusal. */
static const char *refusal(int v2, int multi, int *refused)
{
    struct CUpti_Subscriber_st *holder = any_holder();
    *refused = 1;
    if (!has_multi_subscriber_mode()) {
        *refused = holder != NULL;
        return holder ? holder->name : NULL;
    }
    if (!g_mode.fixed) {
        *refused = 0;
        return NULL;
    }
    if (v2 != g_mode.v2 || multi != g_mode.shared)
        return holder ? holder->name : g_mode.first;
    if (!g_mode.shared && holder)
        return holder->name;
    if (!free_slot())
        return "CUPTI (every simulated slot taken)";
    *refused = 0;
    return NULL;
}

/* A subscription of family `v2` (cuptiSubscribe_v2, else cuptiSubscribe) with `p` (may be NULL). */
static CUptiResult subscribe(int v2, CUpti_SubscriberHandle *subscriber, CUpti_CallbackFunc callback, void *userdata,
                             const dls_cupti_subscriber_params *p)
{
    if (g_probe)
        g_probe(CUDASIM_PROBE_SUBSCRIBE, 0, 0, 0);
    if (!subscriber || !callback)
        return CUPTI_ERROR_INVALID_PARAMETER;
    uint32_t version = api_version();
    if (p && (p->structSize < DLS_CUPTI_SUBSCRIBER_PARAMS_SIZE_BASE ||
              p->structSize > dls_cupti_subscriber_params_size(version)))
        return CUPTI_ERROR_INVALID_PARAMETER;
    int multi = p && p->structSize >= DLS_CUPTI_SUBSCRIBER_PARAMS_SIZE_MULTI && p->allowMultipleSubscribers;
    char *old = p ? p->oldSubscriberName : NULL;
    size_t old_size = p ? p->oldSubscriberSize : 0;
    const char *busy = getenv("CUDASIM_CUPTI_BUSY");
    if (busy && *busy) {
        copy_name(old, old_size, busy);
        return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
    }
    pthread_mutex_lock(&g_lock);
    int refused;
    const char *by = refusal(v2, multi, &refused);
    if (refused) {
        if (by)
            copy_name(old, old_size, by);
        pthread_mutex_unlock(&g_lock);
        return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
    }
    struct CUpti_Subscriber_st *s = free_slot();
    s->callback = callback;
    s->userdata = userdata;
    if (p && p->subscriberName)
        snprintf(s->name, sizeof s->name, "CUPTI for %.*s", CUPTI_SUBSCRIBER_NAME_MAX_LEN, p->subscriberName);
    else
        snprintf(s->name, sizeof s->name, "CUPTI");
    if (has_multi_subscriber_mode() && !g_mode.fixed) {
        g_mode.fixed = 1;
        g_mode.v2 = v2;
        g_mode.shared = multi;
        snprintf(g_mode.first, sizeof g_mode.first, "%s", s->name);
    }
    if (g_mode.fixed && g_mode.shared)
        copy_name(old, old_size, g_mode.first); /* the documented report of the first subscriber */
    for (unsigned d = 0; d < CUPTI_CB_DOMAIN_SIZE; d++)
        for (unsigned i = 0; i < MAX_CBIDS; i++)
            set_enabled(s, d, i, 0);
    cudasim_cupti_install_hook();
    atomic_store_explicit(&s->active, 1, memory_order_release);
    pthread_mutex_unlock(&g_lock);
    *subscriber = s;
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiSubscribe_v2(CUpti_SubscriberHandle *subscriber, CUpti_CallbackFunc callback, void *userdata,
                                       CUpti_SubscriberParams *pParams)
{
    return subscribe(1, subscriber, callback, userdata, (const dls_cupti_subscriber_params *)pParams);
}

CUptiResult CUPTIAPI cuptiSubscribe(CUpti_SubscriberHandle *subscriber, CUpti_CallbackFunc callback, void *userdata)
{
    return subscribe(0, subscriber, callback, userdata, NULL);
}

static int valid(CUpti_SubscriberHandle s)
{
    return s >= g_subs && s < g_subs + MAX_SUBSCRIBERS && atomic_load(&s->active);
}

/* With g_lock held: ends s's subscription and clears its enable state. */
static void end_subscription(struct CUpti_Subscriber_st *s)
{
    atomic_store(&s->active, 0);
    for (unsigned d = 0; d < CUPTI_CB_DOMAIN_SIZE; d++)
        for (unsigned i = 0; i < MAX_CBIDS; i++)
            set_enabled(s, d, i, 0);
}

CUptiResult CUPTIAPI cuptiUnsubscribe(CUpti_SubscriberHandle subscriber)
{
    pthread_mutex_lock(&g_lock);
    if (!valid(subscriber)) {
        pthread_mutex_unlock(&g_lock);
        return CUPTI_ERROR_INVALID_PARAMETER;
    }
    end_subscription(subscriber);
    pthread_mutex_unlock(&g_lock);
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiFinalize(void)
{
    pthread_mutex_lock(&g_lock);
    for (int i = 0; i < MAX_SUBSCRIBERS; i++)
        if (atomic_load(&g_subs[i].active))
            end_subscription(&g_subs[i]);
    pthread_mutex_unlock(&g_lock);
    cudasim_cupti_activity_finalize();
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
