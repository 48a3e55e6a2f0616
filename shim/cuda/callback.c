/* The CUPTI callback (see callback.h). */
#include "callback.h"

#include "../common/config.h"
#include "cbids.h"
#include "decode.h"
#include "drv.h"
#include "kparams.h"
#include "streams.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* The sink: published as one immutable pair; replaced pairs are kept (a delivering thread may
 * still read one) on a list. */
typedef struct sink_pair {
    dls_cuda_sink fn;
    void *user;
    struct sink_pair *replaced;
} sink_pair;

static _Atomic(sink_pair *) g_sink;
static _Atomic(sink_pair *) g_replaced;

void dls_cuda_set_sink(dls_cuda_sink fn, void *user)
{
    sink_pair *p = NULL;
    if (fn) {
        p = malloc(sizeof *p);
        if (!p)
            return;
        p->fn = fn;
        p->user = user;
        p->replaced = NULL;
    }
    sink_pair *old = atomic_exchange_explicit(&g_sink, p, memory_order_acq_rel);
    if (old) {
        old->replaced = atomic_load_explicit(&g_replaced, memory_order_relaxed);
        while (!atomic_compare_exchange_weak_explicit(&g_replaced, &old->replaced, old, memory_order_acq_rel,
                                                      memory_order_relaxed))
            ;
    }
}

/* Runtime frames: the outermost runtime call in progress on this thread. */
static atomic_uint_fast64_t g_rt_epoch = 1;
static __thread struct {
    uint64_t epoch;
    int depth;
    const char *name;
    uint32_t corr;
} t_rt;

void dls_cuda_callback_reset_runtime_frames(void)
{
    atomic_fetch_add_explicit(&g_rt_epoch, 1, memory_order_acq_rel);
}

static void on_runtime(const CUpti_CallbackData *cb)
{
    uint64_t epoch = atomic_load_explicit(&g_rt_epoch, memory_order_acquire);
    if (t_rt.epoch != epoch) {
        t_rt.epoch = epoch;
        t_rt.depth = 0;
    }
    if (cb->callbackSite == CUPTI_API_ENTER) {
        if (t_rt.depth++ == 0) {
            t_rt.name = cb->functionName;
            t_rt.corr = cb->correlationId;
        }
    } else if (t_rt.depth > 0) {
        t_rt.depth--;
    }
}

static __thread uint64_t t_tid;
static __thread int t_delivering;
static __thread dls_cuda_scratch t_scratch;

static void debug_print(const dls_cuda_op *op)
{
    char line[512];
    size_t n = 8;
    memcpy(line, "dlsync: ", n);
    n += dls_cuda_op_format(op, line + n, sizeof line - n - 1);
    line[n++] = '\n';
    ssize_t w = write(2, line, n);
    (void)w;
}

static void on_driver(CUpti_CallbackId cbid, const CUpti_CallbackData *cb)
{
    if (dls_cuda_cbid_is_invalidation(cbid)) {
        if (cb->callbackSite == CUPTI_API_EXIT) {
            dls_cuda_streams_invalidate();
            dls_cuda_kparams_invalidate();
        }
        return;
    }
    if (!t_tid)
        t_tid = (uint64_t)syscall(SYS_gettid);
    uint64_t epoch = atomic_load_explicit(&g_rt_epoch, memory_order_acquire);
    int under_runtime = t_rt.depth > 0 && t_rt.epoch == epoch;
    int debug = dls_config_get()->debug_ops;
    int exit = cb->callbackSite == CUPTI_API_EXIT;
    dls_cuda_op op;
    for (unsigned i = 0; dls_cuda_decode(cbid, cb, i, &op, &t_scratch); i++) {
        op.phase = exit ? DLS_PHASE_EXIT : DLS_PHASE_ENTER;
        op.result = exit && cb->functionReturnValue ? (int)*(const CUresult *)cb->functionReturnValue : 0;
        op.api = under_runtime ? t_rt.name : cb->functionName;
        op.name = op.kind == DLS_OP_LAUNCH ? cb->symbolName : NULL;
        op.tid = t_tid;
        op.correlation_id = cb->correlationId;
        op.rt_correlation_id = under_runtime ? t_rt.corr : 0;
        if (debug)
            debug_print(&op);
        sink_pair *s = atomic_load_explicit(&g_sink, memory_order_acquire);
        if (s)
            s->fn(&op, s->user);
        if (exit && op.kind == DLS_OP_STREAM_DESTROY)
            dls_cuda_streams_invalidate();
        if (exit && op.kind == DLS_OP_EVENT_DESTROY)
            dls_cuda_event_forget((CUevent)op.event);
    }
}

void CUPTIAPI dls_cuda_callback(void *userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                                const void *cbdata)
{
    (void)userdata;
    if (!cbdata || dls_drv_in_shim() || t_delivering)
        return;
    t_delivering = 1;
    if (domain == CUPTI_CB_DOMAIN_RUNTIME_API)
        on_runtime(cbdata);
    else if (domain == CUPTI_CB_DOMAIN_DRIVER_API)
        on_driver(cbid, cbdata);
    t_delivering = 0;
}
