/* CUPTI loading and subscription (see observer.h). */
#include "observer.h"

#include "../common/mutex.h"
#include "../common/config.h"
#include "../report/summary.h"
#include "../report/warn.h"
#include "callback.h"
#include "cbids.h"
#include "cupti.h"
#include "cupti_host.h"
#include "cupti_search.h"
#include "ranges.h"
#include "cupti_subscriber.h"
#include "drv.h"

#include <dlfcn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

/* g_lock guards the start's state; it is never held across a loader or CUPTI call (dlopen,
 * dlsym, cuptiSubscribe, cuptiEnableCallback): what to do is decided under it, and done after it
 * is released. */
static dls_mutex g_lock = PTHREAD_MUTEX_INITIALIZER;
static int g_started DLS_GUARDED_BY(g_lock); /* a thread claimed the start */
static atomic_int g_active;
static dls_cupti_table g_cupti; /* filled once, by the starting thread */
static CUpti_SubscriberHandle g_sub;
static atomic_int g_warned;
/* Written under g_lock before the start, then by the starting thread alone. */
static char g_reason[DLS_PATH_MAX + 320] = "CUDA was not initialized in this process (no observer started)";

int dls_cuda_observer_active(void)
{
    return atomic_load_explicit(&g_active, memory_order_acquire);
}

const char *dls_cuda_observer_reason(void)
{
    return dls_cuda_observer_active() ? "active" : g_reason;
}

void dls_cuda_observer_set_reason(const char *reason)
{
    dls_mutex_lock(&g_lock);
    if (!g_started)
        snprintf(g_reason, sizeof g_reason, "%s", reason);
    dls_mutex_unlock(&g_lock);
}

/* What running without the observer means in the configured mode (README: the fallback). */
static const char *consequence(void)
{
    switch (dls_config_get()->mode) {
    case DLS_MODE_FIX:
        return "fix synchronizes the producer's context at each export instead";
    case DLS_MODE_CHECK:
        return "check cannot check exchanges";
    default:
        return "no CUDA operation is observed";
    }
}

/* On the starting thread: fails the start with a reason and the one warning about it (the policy's
 * fallbacks then stay silent: dls_cuda_observer_reason). */
static int fail(const char *key, const char *reason)
{
    snprintf(g_reason, sizeof g_reason, "%s", reason);
    dls_warn_once(key, "%s; running without CUDA observation: %s", reason, consequence());
    atomic_store_explicit(&g_warned, 1, memory_order_release);
    return 0;
}

int dls_cuda_observer_warned(void)
{
    return atomic_load_explicit(&g_warned, memory_order_acquire);
}

/* dlopens the first CUPTI candidate that loads; NULL when none does. */
static void *load_cupti(void) DLS_UNLOCKED
{
    const char *forced = dls_config_get()->cupti_path;
    if (forced)
        return dlopen(forced, RTLD_NOW | RTLD_LOCAL);
    static char libs[8][DLS_PATH_MAX];
    static char cands[32][DLS_PATH_MAX];
    size_t nlibs = dls_cuda_loaded_libs(libs, 8);
    const char *loaded[8];
    for (size_t i = 0; i < nlibs; i++)
        loaded[i] = libs[i];
    size_t n = dls_cupti_candidates(loaded, nlibs, cands, 32);
    for (size_t i = 0; i < n; i++) {
        void *h = dlopen(cands[i], RTLD_NOW | RTLD_LOCAL);
        if (h)
            return h;
    }
    return NULL;
}

/* Enables the ids of one table. No lock held. */
static void enable_table(CUpti_CallbackDomain dom, const CUpti_CallbackId *t, size_t n) DLS_UNLOCKED
{
    for (size_t i = 0; i < n; i++) {
        dls_cupti_host_own(dom, t[i]);
        g_cupti.enable_callback(1, g_sub, dom, t[i]);
    }
}

/* 1 when operations should carry the runtime function that made them (`api`): the runtime
 * domain's callbacks only name operations, which only check's reports and DLSYNC_DEBUG_OPS
 * show; fix, which reports no operation, spares every CUDA call those two callbacks. */
static int runtime_names_wanted(void)
{
    const dls_config *c = dls_config_get();
    return c->mode != DLS_MODE_FIX || c->debug_ops;
}

/* Subscribes dls_cupti_host_dispatch (which runs dls_cuda_callback) as "dlsync" (cuptiSubscribe_v2 when there is one, its structSize
 * as CUPTI `version` knows it), asking for multi-subscriber mode when `multi`. On refusal the
 * holder's name is in holder (CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN bytes). */
static CUptiResult subscribe(uint32_t version, int multi, char *holder) DLS_UNLOCKED
{
    if (!g_cupti.subscribe_v2)
        return g_cupti.subscribe(&g_sub, dls_cupti_host_dispatch, NULL);
    dls_cupti_subscriber_params p = {
        .structSize = dls_cupti_subscriber_params_size(version),
        .subscriberName = "dlsync",
        .oldSubscriberName = holder,
        .oldSubscriberSize = CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN,
        .allowMultipleSubscribers = (uint8_t)multi,
    };
    /* The 13.2 layout, of which CUPTI reads the structSize bytes it knows (cupti_subscriber.h). */
    return g_cupti.subscribe_v2(&g_sub, dls_cupti_host_dispatch, NULL, (CUpti_SubscriberParams *)&p);
}

/* Why a subscription is alone (no sharing to ask for), into why: the CUPTI's version (0: unknown)
 * and the driver's (cuDriverGetVersion; 0: unknown). */
static void why_alone(char *why, size_t n, uint32_t version, int driver)
{
    if (!g_cupti.subscribe_v2)
        snprintf(why, n, "this CUPTI has no cuptiSubscribe_v2; sharing needs CUPTI 13.3 and an r610 driver");
    else if (!dls_cupti_can_share(version))
        snprintf(why, n, "CUPTI %u.%u shares no subscription; sharing needs CUPTI 13.3 and an r610 driver",
                 version / 10000, version / 100 % 100);
    else
        snprintf(why, n, "the driver (CUDA %d.%d) shares no subscription; sharing needs an r610 driver (CUDA 13.3)",
                 driver / 1000, driver % 1000 / 10);
}

/* Enables the ids of every domain observed. No lock held. */
static void enable_ids(void) DLS_UNLOCKED
{
    size_t nd, nr;
    const CUpti_CallbackId *d = dls_cuda_driver_cbids(&nd);
    const CUpti_CallbackId *rt = dls_cuda_runtime_cbids(&nr);
    enable_table(CUPTI_CB_DOMAIN_DRIVER_API, d, nd);
    if (runtime_names_wanted())
        enable_table(CUPTI_CB_DOMAIN_RUNTIME_API, rt, nr);
}

/* The start, on the one thread that makes it (no lock held). */
static int start_unlocked(void) DLS_UNLOCKED
{
    const dls_config *c = dls_config_get();
    if (c->mode == DLS_MODE_OFF) {
        snprintf(g_reason, sizeof g_reason, "DLSYNC_MODE=off");
        return 0;
    }
    /* trace records exchanges only: watching every CUDA call would cost each launch for nothing
     * (DLSYNC_DEBUG_OPS=1 still observes, to print the operations). */
    if (c->mode == DLS_MODE_TRACE && !c->debug_ops) {
        snprintf(g_reason, sizeof g_reason, "DLSYNC_MODE=trace records exchanges only");
        return 0;
    }
    dls_cuda_callback_set_debug(c->debug_ops);
    void *lib = load_cupti();
    if (!lib) {
        char why[DLS_PATH_MAX + 192];
        const char *forced = dls_config_get()->cupti_path;
        const char *err = dlerror();
        if (forced)
            snprintf(why, sizeof why, "could not load CUPTI from DLSYNC_CUPTI=%s (%s)", forced, err ? err : "?");
        else
            snprintf(why, sizeof why,
                     "could not find CUPTI beside the CUDA libraries or as libcupti.so.13 (set DLSYNC_CUPTI)");
        return fail("cuda-no-cupti", why);
    }
    dls_cupti_resolve(lib, &g_cupti);
    if ((!g_cupti.subscribe_v2 && !g_cupti.subscribe) || !g_cupti.enable_callback)
        return fail("cuda-cupti-symbols", "the CUPTI library lacks cuptiSubscribe / cuptiEnableCallback");
    uint32_t version = 0;
    if (!g_cupti.get_version || g_cupti.get_version(&version) != CUPTI_SUCCESS)
        version = 0;
    int driver = 0;
    if (dls_drv_driver_get_version(&driver) != CUDA_SUCCESS)
        driver = 0;
    /* Shared mode is asked for only where CUPTI has it: elsewhere a request is granted as a single
     * subscription, so asking would only make dlsync say "shared" where it is alone. */
    int multi = g_cupti.subscribe_v2 && dls_cupti_can_share(version) && dls_cupti_driver_can_share(driver);
    static char mode_why[200]; /* the summary keeps it */
    char holder[CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN + 1] = "";
    int asked = multi;
    CUptiResult r = subscribe(version, multi, holder);
    if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED && multi) {
        /* The process's mode was fixed by an earlier subscriber that did not ask to share: alone,
         * in the same family, is still better than no observer (granted once it left). */
        snprintf(mode_why, sizeof mode_why, "the process's CUPTI mode was fixed alone by %.*s, which subscribed first",
                 CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN, holder[0] ? holder : "another tool");
        multi = 0;
        holder[0] = '\0';
        r = subscribe(version, multi, holder);
    } else if (!multi)
        why_alone(mode_why, sizeof mode_why, version, driver);
    if (r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
        char reason[400];
        snprintf(reason, sizeof reason, "CUPTI subscription held by %s (%s)", holder[0] ? holder : "another tool",
                 asked ? "a tool that does not share CUPTI" : mode_why);
        return fail("cuda-subscriber", reason);
    }
    if (r != CUPTI_SUCCESS) {
        char reason[64];
        snprintf(reason, sizeof reason, "cuptiSubscribe failed (CUPTI error %d)", (int)r);
        return fail("cuda-subscribe", reason);
    }
    if (multi)
        snprintf(mode_why, sizeof mode_why, "CUPTI %u.%u with a CUDA %d.%d driver: multi-subscriber mode",
                 version / 10000, version / 100 % 100, driver / 1000, driver % 1000 / 10);
    dls_summary_set_cupti(multi ? "shared" : "exclusive", mode_why);
    enable_ids();
    dls_cuda_ranges_watch(1); /* every call that frees or unmaps memory is seen from now on */
    dls_cupti_host_start(&g_cupti, g_sub);
    atomic_store_explicit(&g_active, 1, memory_order_release);
    return 1;
}

int dls_cuda_observer_start(void)
{
    dls_mutex_lock(&g_lock);
    int first = !g_started;
    g_started = 1;
    dls_mutex_unlock(&g_lock);
    if (first)
        start_unlocked();
    return dls_cuda_observer_active();
}
