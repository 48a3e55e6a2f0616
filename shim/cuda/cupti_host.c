/* Hosting the program's CUPTI clients on dlsync's subscription (see cupti_host.h). */
#include "cupti_host.h"

#include "../common/compiler.h"
#include "../common/config.h"
#include "../common/thread_block.h"
#include "callback.h"

#include <cupti_driver_cbid.h>
#include <cupti_nvtx_cbid.h>
#include <cupti_runtime_cbid.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#define MAX_IDS 1024        /* above every domain's size (domain_size) */
#define CORRELATION_DEPTH 8 /* nested API calls a thread keeps the clients' correlation data for */

/* One hosted client. A slot is free (0), being set up or torn down (1), or active (2); its
 * fields are written while it is 1 only. */
typedef struct {
    atomic_int state;
    CUpti_CallbackFunc callback;
    void *userdata;
    atomic_uchar enabled[CUPTI_CB_DOMAIN_SIZE][MAX_IDS];
} client;

static client g_clients[DLS_CUPTI_HOST_CLIENTS];
static atomic_uchar g_own[CUPTI_CB_DOMAIN_SIZE][MAX_IDS];   /* the ids dlsync enabled */
static atomic_uint g_wanted[CUPTI_CB_DOMAIN_SIZE][MAX_IDS]; /* active clients that enabled each id */
static atomic_int g_hosting;                                /* a client was ever hosted */
static _Atomic(const dls_cupti_table *) g_table;            /* set once dlsync's subscription is live */
static CUpti_SubscriberHandle g_sub;                        /* written before g_table */

enum { SUBSCRIBE, SUBSCRIBE_V2, UNSUBSCRIBE, ENABLE_CALLBACK, ENABLE_DOMAIN, ENABLE_ALL, GET_STATE, FINALIZE, N_HOOKS };
static void *_Atomic g_real[N_HOOKS]; /* the CUPTI functions the program's slots stood for */

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
_Static_assert(CUPTI_DRIVER_TRACE_CBID_SIZE <= MAX_IDS && CUPTI_RUNTIME_TRACE_CBID_SIZE <= MAX_IDS,
               "a callback domain has more ids than the host keeps");

/* The active hosted client behind handle h, or NULL when h is not the host's. */
static client *hosted(CUpti_SubscriberHandle h)
{
    for (int i = 0; i < DLS_CUPTI_HOST_CLIENTS; i++)
        if ((void *)h == (void *)&g_clients[i])
            return atomic_load_explicit(&g_clients[i].state, memory_order_acquire) == 2 ? &g_clients[i] : NULL;
    return NULL;
}

static int is_host_handle(CUpti_SubscriberHandle h)
{
    return (void *)h >= (void *)g_clients && (void *)h < (void *)(g_clients + DLS_CUPTI_HOST_CLIENTS);
}

/* Makes dlsync's subscription deliver (domain, cbid) exactly while dlsync or a client wants it.
 * Concurrent changes converge: each caller checks the wish again after its CUPTI call. */
static void sync_real(const dls_cupti_table *t, CUpti_CallbackDomain domain, CUpti_CallbackId cbid) DLS_UNLOCKED
{
    for (int tries = 0; tries < 8; tries++) {
        uint32_t want = atomic_load(&g_own[domain][cbid]) || atomic_load(&g_wanted[domain][cbid]);
        t->enable_callback(want, g_sub, domain, cbid);
        if (want == (uint32_t)(atomic_load(&g_own[domain][cbid]) || atomic_load(&g_wanted[domain][cbid])))
            return;
    }
}

/* Sets client c's wish for (domain, cbid) and dlsync's subscription with it. */
static void set_enabled(client *c, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, int on) DLS_UNLOCKED
{
    const dls_cupti_table *t = atomic_load_explicit(&g_table, memory_order_acquire);
    if (atomic_exchange(&c->enabled[domain][cbid], on ? 1 : 0) == (on ? 1 : 0))
        return;
    if (on)
        atomic_fetch_add(&g_wanted[domain][cbid], 1);
    else
        atomic_fetch_sub(&g_wanted[domain][cbid], 1);
    if (!atomic_load(&g_own[domain][cbid]))
        sync_real(t, domain, cbid);
}

static void set_domain(client *c, CUpti_CallbackDomain domain, int on) DLS_UNLOCKED
{
    unsigned n = domain_size(domain);
    for (unsigned i = 0; i < n; i++)
        set_enabled(c, domain, (CUpti_CallbackId)i, on);
}

/* Ends client c's subscription: disables its ids, then frees its slot. */
static void end_client(client *c) DLS_UNLOCKED
{
    int active = 2;
    if (!atomic_compare_exchange_strong(&c->state, &active, 1))
        return;
    for (unsigned d = CUPTI_CB_DOMAIN_DRIVER_API; d < CUPTI_CB_DOMAIN_SIZE; d++)
        set_domain(c, (CUpti_CallbackDomain)d, 0);
    atomic_store_explicit(&c->state, 0, memory_order_release);
}

/* ---- the dispatcher ---- */

/* The clients' correlation data of the API calls a thread is inside, newest last. */
typedef struct {
    unsigned n;
    struct {
        CUpti_CallbackDomain domain;
        uint32_t correlation;
        uint64_t data[DLS_CUPTI_HOST_CLIENTS];
    } call[CORRELATION_DEPTH];
} correlations;

static dls_thread_block g_corr_block = DLS_THREAD_BLOCK_INIT(sizeof(correlations));
static __thread correlations *t_corr;

/* The clients' correlation data for this phase of an API call: a new entry at ENTER, the ENTER's
 * at EXIT (which drops it and any left above it); NULL when memory is short. */
static uint64_t *correlation_data(CUpti_CallbackDomain domain, const CUpti_CallbackData *cb)
{
    correlations *c = t_corr ? t_corr : dls_thread_block_new(&g_corr_block, (void **)&t_corr);
    if (!c)
        return NULL;
    if (cb->callbackSite == CUPTI_API_ENTER) {
        if (c->n == CORRELATION_DEPTH) { /* the oldest goes: its EXIT finds nothing */
            memmove(&c->call[0], &c->call[1], sizeof c->call[0] * (CORRELATION_DEPTH - 1));
            c->n--;
        }
        c->call[c->n].domain = domain;
        c->call[c->n].correlation = cb->correlationId;
        memset(c->call[c->n].data, 0, sizeof c->call[c->n].data);
        return c->call[c->n++].data;
    }
    for (unsigned i = c->n; i-- > 0;)
        if (c->call[i].domain == domain && c->call[i].correlation == cb->correlationId) {
            c->n = i; /* the entry stays readable until the next ENTER on this thread */
            return c->call[i].data;
        }
    return NULL;
}

/* Calls each active client that enabled (domain, cbid). */
static void deliver(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void *cbdata)
{
    int api = domain == CUPTI_CB_DOMAIN_DRIVER_API || domain == CUPTI_CB_DOMAIN_RUNTIME_API;
    uint64_t *corr = api && cbdata ? correlation_data(domain, cbdata) : NULL;
    for (int i = 0; i < DLS_CUPTI_HOST_CLIENTS; i++) {
        client *c = &g_clients[i];
        if (atomic_load_explicit(&c->state, memory_order_acquire) != 2 ||
            !atomic_load_explicit(&c->enabled[domain][cbid], memory_order_relaxed))
            continue;
        if (!api || !cbdata) {
            c->callback(c->userdata, domain, cbid, cbdata);
            continue;
        }
        uint64_t spare = 0;
        CUpti_CallbackData own = *(const CUpti_CallbackData *)cbdata;
        own.correlationData = corr ? &corr[i] : &spare;
        c->callback(c->userdata, domain, cbid, &own);
    }
}

/* The dispatch once a client was hosted: kept out of line, so that until then a callback costs
 * one load and a tail call. */
static DLS_NOINLINE void dispatch_hosting(void *userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                                          const void *cbdata)
{
    if ((unsigned)domain >= CUPTI_CB_DOMAIN_SIZE || cbid >= MAX_IDS)
        return;
    if (atomic_load_explicit(&g_own[domain][cbid], memory_order_relaxed))
        dls_cuda_callback(userdata, domain, cbid, cbdata);
    if (atomic_load_explicit(&g_wanted[domain][cbid], memory_order_relaxed))
        deliver(domain, cbid, cbdata);
}

void CUPTIAPI dls_cupti_host_dispatch(void *userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                                      const void *cbdata)
{
    if (DLS_UNLIKELY(atomic_load_explicit(&g_hosting, memory_order_relaxed)))
        dispatch_hosting(userdata, domain, cbid, cbdata);
    else
        dls_cuda_callback(userdata, domain, cbid, cbdata);
}

void dls_cupti_host_own(CUpti_CallbackDomain domain, CUpti_CallbackId cbid)
{
    if ((unsigned)domain < CUPTI_CB_DOMAIN_SIZE && cbid < MAX_IDS)
        atomic_store(&g_own[domain][cbid], 1);
}

void dls_cupti_host_start(const dls_cupti_table *t, CUpti_SubscriberHandle sub)
{
    g_sub = sub;
    atomic_store_explicit(&g_table, t, memory_order_release);
}

/* ---- the program's calls ---- */

/* Hosts a subscription CUPTI refused (`real`: the subscribe function the program called), when
 * dlsync's subscription is live in that CUPTI library and a slot is free. */
static CUptiResult host(void *real, CUpti_SubscriberHandle *subscriber, CUpti_CallbackFunc callback, void *userdata)
{
    const dls_cupti_table *t = atomic_load_explicit(&g_table, memory_order_acquire);
    if (!t || (real != (void *)t->subscribe && real != (void *)t->subscribe_v2) || !subscriber || !callback)
        return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
    for (int i = 0; i < DLS_CUPTI_HOST_CLIENTS; i++) {
        client *c = &g_clients[i];
        int free_slot = 0;
        if (!atomic_compare_exchange_strong(&c->state, &free_slot, 1))
            continue;
        c->callback = callback;
        c->userdata = userdata;
        atomic_store(&g_hosting, 1);
        atomic_store_explicit(&c->state, 2, memory_order_release);
        *subscriber = (CUpti_SubscriberHandle)(void *)c;
        return CUPTI_SUCCESS;
    }
    return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
}

static CUptiResult CUPTIAPI host_subscribe(CUpti_SubscriberHandle *subscriber, CUpti_CallbackFunc callback,
                                           void *userdata) DLS_UNLOCKED
{
    void *real = atomic_load(&g_real[SUBSCRIBE]);
    CUptiResult r = ((CUptiResult(CUPTIAPI *)(CUpti_SubscriberHandle *, CUpti_CallbackFunc, void *))real)(
        subscriber, callback, userdata);
    return r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED ? host(real, subscriber, callback, userdata) : r;
}

static CUptiResult CUPTIAPI host_subscribe_v2(CUpti_SubscriberHandle *subscriber, CUpti_CallbackFunc callback,
                                              void *userdata, CUpti_SubscriberParams *params) DLS_UNLOCKED
{
    void *real = atomic_load(&g_real[SUBSCRIBE_V2]);
    CUptiResult r = ((CUptiResult(CUPTIAPI *)(CUpti_SubscriberHandle *, CUpti_CallbackFunc, void *,
                                              CUpti_SubscriberParams *))real)(subscriber, callback, userdata, params);
    return r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED ? host(real, subscriber, callback, userdata) : r;
}

static CUptiResult CUPTIAPI host_unsubscribe(CUpti_SubscriberHandle subscriber) DLS_UNLOCKED
{
    client *c = hosted(subscriber);
    if (c) {
        end_client(c);
        return CUPTI_SUCCESS;
    }
    if (is_host_handle(subscriber))
        return CUPTI_ERROR_INVALID_PARAMETER;
    return ((CUptiResult(CUPTIAPI *)(CUpti_SubscriberHandle))atomic_load(&g_real[UNSUBSCRIBE]))(subscriber);
}

static CUptiResult CUPTIAPI host_enable_callback(uint32_t enable, CUpti_SubscriberHandle subscriber,
                                                 CUpti_CallbackDomain domain, CUpti_CallbackId cbid) DLS_UNLOCKED
{
    client *c = hosted(subscriber);
    if (c) {
        if (cbid >= domain_size(domain))
            return CUPTI_ERROR_INVALID_PARAMETER;
        set_enabled(c, domain, cbid, enable != 0);
        return CUPTI_SUCCESS;
    }
    if (is_host_handle(subscriber))
        return CUPTI_ERROR_INVALID_PARAMETER;
    return ((CUptiResult(CUPTIAPI *)(uint32_t, CUpti_SubscriberHandle, CUpti_CallbackDomain,
                                     CUpti_CallbackId))atomic_load(&g_real[ENABLE_CALLBACK]))(enable, subscriber,
                                                                                              domain, cbid);
}

static CUptiResult CUPTIAPI host_enable_domain(uint32_t enable, CUpti_SubscriberHandle subscriber,
                                               CUpti_CallbackDomain domain) DLS_UNLOCKED
{
    client *c = hosted(subscriber);
    if (c) {
        if (!domain_size(domain))
            return CUPTI_ERROR_INVALID_PARAMETER;
        set_domain(c, domain, enable != 0);
        return CUPTI_SUCCESS;
    }
    if (is_host_handle(subscriber))
        return CUPTI_ERROR_INVALID_PARAMETER;
    return ((CUptiResult(CUPTIAPI *)(uint32_t, CUpti_SubscriberHandle, CUpti_CallbackDomain))atomic_load(
        &g_real[ENABLE_DOMAIN]))(enable, subscriber, domain);
}

static CUptiResult CUPTIAPI host_enable_all(uint32_t enable, CUpti_SubscriberHandle subscriber) DLS_UNLOCKED
{
    client *c = hosted(subscriber);
    if (c) {
        for (unsigned d = CUPTI_CB_DOMAIN_DRIVER_API; d < CUPTI_CB_DOMAIN_SIZE; d++)
            set_domain(c, (CUpti_CallbackDomain)d, enable != 0);
        return CUPTI_SUCCESS;
    }
    if (is_host_handle(subscriber))
        return CUPTI_ERROR_INVALID_PARAMETER;
    return ((CUptiResult(CUPTIAPI *)(uint32_t, CUpti_SubscriberHandle))atomic_load(&g_real[ENABLE_ALL]))(enable,
                                                                                                         subscriber);
}

static CUptiResult CUPTIAPI host_get_state(uint32_t *enable, CUpti_SubscriberHandle subscriber,
                                           CUpti_CallbackDomain domain, CUpti_CallbackId cbid) DLS_UNLOCKED
{
    client *c = hosted(subscriber);
    if (c) {
        if (!enable || cbid >= domain_size(domain))
            return CUPTI_ERROR_INVALID_PARAMETER;
        *enable = atomic_load(&c->enabled[domain][cbid]);
        return CUPTI_SUCCESS;
    }
    if (is_host_handle(subscriber))
        return CUPTI_ERROR_INVALID_PARAMETER;
    return ((CUptiResult(CUPTIAPI *)(uint32_t *, CUpti_SubscriberHandle, CUpti_CallbackDomain,
                                     CUpti_CallbackId))atomic_load(&g_real[GET_STATE]))(enable, subscriber, domain,
                                                                                        cbid);
}

static CUptiResult CUPTIAPI host_finalize(void) DLS_UNLOCKED
{
    if (atomic_load_explicit(&g_table, memory_order_acquire)) {
        for (int i = 0; i < DLS_CUPTI_HOST_CLIENTS; i++)
            end_client(&g_clients[i]);
        return CUPTI_SUCCESS;
    }
    return ((CUptiResult(CUPTIAPI *)(void))atomic_load(&g_real[FINALIZE]))();
}

/* ---- the engine's hooks ---- */

/* The entry standing for `real` as hook `i`: the first function seen wins; another one (a second
 * CUPTI library) is declined, its callers keep calling it directly. */
static void *entry_for(int i, void *real, void *entry)
{
    void *expected = NULL;
    if (atomic_compare_exchange_strong(&g_real[i], &expected, real) || expected == real)
        return entry;
    return NULL;
}

#define HOOK_ENTRY(index, fn)                      \
    static void *entry_##index(void *real)         \
    {                                              \
        return entry_for(index, real, (void *)fn); \
    }
HOOK_ENTRY(SUBSCRIBE, host_subscribe)
HOOK_ENTRY(SUBSCRIBE_V2, host_subscribe_v2)
HOOK_ENTRY(UNSUBSCRIBE, host_unsubscribe)
HOOK_ENTRY(ENABLE_CALLBACK, host_enable_callback)
HOOK_ENTRY(ENABLE_DOMAIN, host_enable_domain)
HOOK_ENTRY(ENABLE_ALL, host_enable_all)
HOOK_ENTRY(GET_STATE, host_get_state)
HOOK_ENTRY(FINALIZE, host_finalize)
#undef HOOK_ENTRY

#define HOOK(index, symbol)                                                                                    \
    {                                                                                                          \
        .name = symbol, .entry_for = entry_##index, .by_dlsym = 1, .base_namespace_only = 1, .skip_definer = 1 \
    }
static const dls_engine_hook g_hooks[] = {
    HOOK(SUBSCRIBE, "cuptiSubscribe"),        HOOK(SUBSCRIBE_V2, "cuptiSubscribe_v2"),
    HOOK(UNSUBSCRIBE, "cuptiUnsubscribe"),    HOOK(ENABLE_CALLBACK, "cuptiEnableCallback"),
    HOOK(ENABLE_DOMAIN, "cuptiEnableDomain"), HOOK(ENABLE_ALL, "cuptiEnableAllDomains"),
    HOOK(GET_STATE, "cuptiGetCallbackState"), HOOK(FINALIZE, "cuptiFinalize"),
};
#undef HOOK

const dls_engine_hook *dls_cupti_host_hooks(size_t *n)
{
    const dls_config *c = dls_config_get();
    int subscribes =
        c->mode == DLS_MODE_FIX || c->mode == DLS_MODE_CHECK || (c->mode == DLS_MODE_TRACE && c->debug_ops);
    *n = subscribes ? sizeof g_hooks / sizeof *g_hooks : 0;
    return g_hooks;
}
