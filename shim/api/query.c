/* The query API of dlsync.h: the shim's state, the race reports, the exchanges and the
 * injected orderings so far. Exchanges are kept by an observer placed in front of the installed
 * one (the policy's) once recording starts; it forwards every call unchanged. */
#include "dlsync.h"

#include "../common/mutex.h"
#include "../common/config.h"
#include "../common/export.h"
#include "../hooks/extent.h"
#include "../hooks/policy_hooks.h"
#include "../report/history.h"
#include "../report/race.h"
#include "../report/race_entries.h"
#include "../report/summary.h"

#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

/* The first `size` bytes of *out, when size covers version 1's struct ending with `last`. */
#define FITS(out, last) ((out) && (out)->size >= offsetof(__typeof__(*(out)), last) + sizeof((out)->last))

DLS_EXPORT int dlsync_query_version(void)
{
    return DLSYNC_QUERY_VERSION;
}

static const char *const g_stacks[] = {"both", "native", "python"};

/* The exchange recorder: set while recording, in front of `g_next`. */
static dls_mutex g_tap_lock = PTHREAD_MUTEX_INITIALIZER;
static const dls_exchange_observer *g_next;
static int g_recording;

DLS_EXPORT int dlsync_state(dlsync_state_info *info)
{
    if (!FITS(info, injections))
        return DLSYNC_ERR_ARGUMENT;
    size_t size = info->size < sizeof *info ? info->size : sizeof *info;
    const dls_config *c = dls_config_get();
    dlsync_state_info s = {
        .size = (uint32_t)size,
        .version = DLSYNC_QUERY_VERSION,
        .shim_version = DLS_VERSION,
        .mode = dls_mode_name(c->mode),
        .cupti = dls_summary_cupti(),
        .stack = (unsigned)c->stack < 3 ? g_stacks[c->stack] : "both",
        .recording = __atomic_load_n(&g_recording, __ATOMIC_ACQUIRE),
        .exchanges = dls_summary_get(DLS_COUNT_EXCHANGES),
        .exports = dls_summary_get(DLS_COUNT_EXPORTS),
        .imports = dls_summary_get(DLS_COUNT_IMPORTS),
        .releases = dls_summary_get(DLS_COUNT_RELEASES),
        .ops = dls_summary_get(DLS_COUNT_OPS),
        .races = dls_summary_get(DLS_COUNT_RACES),
        .injected = dls_summary_get(DLS_COUNT_INJECTED),
        .fallbacks = dls_summary_get(DLS_COUNT_FALLBACKS),
        .race_reports = dls_race_entries(),
        .injections = dls_history_injections(),
    };
    memcpy(info, &s, size);
    return DLSYNC_OK;
}

DLS_EXPORT int dlsync_race(uint64_t index, dlsync_race_info *info)
{
    if (!FITS(info, text))
        return DLSYNC_ERR_ARGUMENT;
    dls_race_entry e;
    unsigned count;
    if (dls_race_entry_get((size_t)index, &e, &count))
        return DLSYNC_ERR_NOT_FOUND;
    size_t size = info->size < sizeof *info ? info->size : sizeof *info;
    dlsync_race_info r = {
        .size = (uint32_t)size,
        .count = count,
        .xid = e.xid,
        .kind = e.kind,
        .framework = e.framework,
        .symbol = e.symbol,
        .producer_op = e.producer_op,
        .consumer_op = e.consumer_op,
        .producer_stack = e.producer_stack,
        .consumer_stack = e.consumer_stack,
        .fix = e.fix,
        .text = e.text,
    };
    memcpy(info, &r, size);
    return DLSYNC_OK;
}

/* ---- the exchange recorder ---- */

static void fill_side(char *fw, size_t nfw, char *sym, size_t nsym, const dls_profile *p)
{
    snprintf(fw, nfw, "%s", p ? p->framework : "");
    snprintf(sym, nsym, "%s", p ? dls_profile_name(p) : "");
}

/* The entry of x, from the one kept (an import or release of a tensor recorded before) or made
 * anew from x. */
static void entry_of(const dls_exchange *x, dls_history_exchange *e)
{
    if (!dls_history_get_exchange(x->xid, e))
        return;
    memset(e, 0, sizeof *e);
    e->xid = x->xid;
    fill_side(e->producer, sizeof e->producer, e->producer_symbol, sizeof e->producer_symbol, x->producer);
    const char *dev = dls_device_type_name(x->device.device_type);
    snprintf(e->device, sizeof e->device, "%s", dev ? dev : "unknown");
    e->device_id = x->device.device_id;
    char dtype[sizeof e->dtype];
    snprintf(e->dtype, sizeof e->dtype, "%s", dls_dtype_name(x->dtype, dtype, sizeof dtype));
    dls_managed_view v;
    if (!dls_managed_view_of((void *)x->tensor, x->versioned, &v) && v.tensor->ndim >= 0 && v.tensor->shape) {
        e->ndim = v.tensor->ndim;
        for (int i = 0; i < e->ndim && i < DLS_HISTORY_NDIM; i++)
            e->shape[i] = v.tensor->shape[i];
    }
}

static const dls_exchange_observer *next(void)
{
    return __atomic_load_n(&g_next, __ATOMIC_ACQUIRE);
}

static void *tap_export(void *ctx, const dls_exchange *x)
{
    (void)ctx;
    dls_history_exchange e;
    entry_of(x, &e);
    dls_history_put_exchange(&e);
    const dls_exchange_observer *n = next();
    return n && n->on_export ? n->on_export(n->ctx, x) : x->policy;
}

static void *tap_import(void *ctx, const dls_exchange *x)
{
    (void)ctx;
    dls_history_exchange e;
    entry_of(x, &e);
    e.imports++;
    fill_side(e.consumer, sizeof e.consumer, e.consumer_symbol, sizeof e.consumer_symbol, x->consumer);
    dls_history_put_exchange(&e);
    const dls_exchange_observer *n = next();
    return n && n->on_import ? n->on_import(n->ctx, x) : x->policy;
}

static void tap_release(void *ctx, const dls_exchange *x)
{
    (void)ctx;
    dls_history_exchange e;
    entry_of(x, &e);
    e.released = 1;
    dls_history_put_exchange(&e);
    const dls_exchange_observer *n = next();
    if (n && n->on_release)
        n->on_release(n->ctx, x);
}

static void tap_double_release(void *ctx, const void *tensor, uint64_t xid)
{
    (void)ctx;
    const dls_exchange_observer *n = next();
    if (n && n->on_double_release)
        n->on_double_release(n->ctx, tensor, xid);
}

static const dls_exchange_observer g_tap = {
    .on_export = tap_export,
    .on_import = tap_import,
    .on_release = tap_release,
    .on_double_release = tap_double_release,
};

DLS_EXPORT int dlsync_record_exchanges(int on)
{
    if (dls_config_get()->mode == DLS_MODE_OFF)
        return DLSYNC_ERR_UNSUPPORTED;
    dls_mutex_lock(&g_tap_lock);
    const dls_exchange_observer *now = dls_exchange_get_observer();
    if (on && now != &g_tap) {
        __atomic_store_n(&g_next, now, __ATOMIC_RELEASE);
        dls_exchange_set_observer(&g_tap);
    } else if (!on && now == &g_tap) {
        dls_exchange_set_observer(next());
    }
    __atomic_store_n(&g_recording, on ? 1 : 0, __ATOMIC_RELEASE);
    dls_mutex_unlock(&g_tap_lock);
    return DLSYNC_OK;
}

DLS_EXPORT int dlsync_exchange(uint64_t xid, dlsync_exchange_info *info)
{
    if (!FITS(info, shape))
        return DLSYNC_ERR_ARGUMENT;
    dls_history_exchange e;
    if (dls_history_get_exchange(xid, &e))
        return DLSYNC_ERR_NOT_FOUND;
    size_t size = info->size < sizeof *info ? info->size : sizeof *info;
    dlsync_exchange_info r = {
        .size = (uint32_t)size,
        .imports = e.imports,
        .xid = e.xid,
        .released = e.released,
        .device_id = e.device_id,
        .ndim = e.ndim,
    };
    memcpy(r.producer, e.producer, sizeof r.producer);
    memcpy(r.producer_symbol, e.producer_symbol, sizeof r.producer_symbol);
    memcpy(r.consumer, e.consumer, sizeof r.consumer);
    memcpy(r.consumer_symbol, e.consumer_symbol, sizeof r.consumer_symbol);
    memcpy(r.device, e.device, sizeof r.device);
    memcpy(r.dtype, e.dtype, sizeof r.dtype);
    memcpy(r.shape, e.shape, sizeof r.shape);
    memcpy(info, &r, size);
    return DLSYNC_OK;
}

DLS_EXPORT int dlsync_injection(uint64_t number, dlsync_injection_info *info)
{
    if (!FITS(info, reason))
        return DLSYNC_ERR_ARGUMENT;
    dls_history_injection e;
    if (dls_history_get_injection(number, &e))
        return DLSYNC_ERR_NOT_FOUND;
    size_t size = info->size < sizeof *info ? info->size : sizeof *info;
    dlsync_injection_info r = {
        .size = (uint32_t)size,
        .number = e.seq,
        .xid = e.xid,
        .from_stream = e.from_stream,
        .to_stream = e.to_stream,
    };
    memcpy(r.what, e.what, sizeof r.what);
    memcpy(r.reason, e.reason, sizeof r.reason);
    memcpy(info, &r, size);
    return DLSYNC_OK;
}
