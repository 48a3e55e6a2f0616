/* The CUPTI callback (see callback.h). */
#include "callback.h"

#include "../common/mutex.h"
#include "../common/ownfd.h"
#include "cbids.h"
#include "decode.h"
#include "decode_life.h"
#include "decode_work.h"
#include "drv.h"
#include "kparams.h"
#include "ranges.h"
#include "identity.h"
#include "thread.h"

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* The receivers (see ops.h): a table that lives as long as the process, so that replacing it
 * needs no lock and keeps nothing. */
static _Atomic(const dls_cuda_receivers *) g_receivers;
/* Its `begins` receiver, on its own: every handled ENTER reads it, the early-returning ones too. */
static _Atomic(void (*)(uint32_t, int)) g_begins;

/* The ENTER gate (see ops.h) as registered, and as the callback reads it: with DLSYNC_DEBUG_OPS
 * on, no gate (every ENTER is delivered), so the callback reads one pointer. The setters are
 * serialized; a NULL gate is open. */
static dls_mutex g_setting = PTHREAD_MUTEX_INITIALIZER;
static const atomic_int *g_gate_set;
static atomic_int g_debug;
static _Atomic(const atomic_int *) g_gate;

/* Publishes the gate the callback reads from what is registered (g_setting held). */
static void publish_gate(void)
{
    int debug = atomic_load_explicit(&g_debug, memory_order_relaxed);
    atomic_store_explicit(&g_gate, debug ? NULL : g_gate_set, memory_order_release);
}

void dls_cuda_set_receivers(const dls_cuda_receivers *r)
{
    dls_mutex_lock(&g_setting);
    g_gate_set = r ? r->watching : NULL;
    publish_gate();
    atomic_store_explicit(&g_begins, r ? r->begins : NULL, memory_order_release);
    atomic_store_explicit(&g_receivers, r, memory_order_release);
    dls_mutex_unlock(&g_setting);
}

void dls_cuda_callback_set_debug(int on)
{
    dls_mutex_lock(&g_setting);
    atomic_store_explicit(&g_debug, on != 0, memory_order_relaxed);
    publish_gate();
    dls_mutex_unlock(&g_setting);
}

/* 1 when the ENTER of stream work is to be delivered. */
static int gate_open(void)
{
    const atomic_int *g = atomic_load_explicit(&g_gate, memory_order_acquire);
    return !g || atomic_load_explicit(g, memory_order_acquire);
}

/* Keeps the thread's stack of open driver calls at each phase of call `corr` and notes in
 * t->nested whether the call is nested in another. An EXIT pops its call and whatever was opened
 * above it (ENTERs whose EXIT never came); an EXIT whose ENTER was not seen counts as nested
 * when some call is open. */
static void track_call(dls_cuda_thread *t, uint32_t corr, int enter)
{
    if (enter) {
        t->nested = t->nopen > 0;
        if (t->nopen < DLS_CUDA_OPEN_CALLS)
            t->open[t->nopen] = corr;
        t->nopen++;
        return;
    }
    unsigned kept = t->nopen < DLS_CUDA_OPEN_CALLS ? t->nopen : DLS_CUDA_OPEN_CALLS;
    for (unsigned i = kept; i-- > 0;)
        if (t->open[i] == corr) {
            t->nopen = i;
            t->nested = i > 0;
            return;
        }
    if (t->nopen > DLS_CUDA_OPEN_CALLS) /* one of those not kept */
        t->nopen--;
    t->nested = t->nopen > 0;
}

/* Runtime frames: the outermost runtime call in progress on a thread (an EXIT whose ENTER was
 * not seen, the observer having started in between, pops nothing). */
static void on_runtime(dls_cuda_thread *t, const CUpti_CallbackData *cb)
{
    if (cb->callbackSite == CUPTI_API_ENTER) {
        if (t->rt_depth++ == 0)
            t->rt_name = cb->functionName;
    } else if (t->rt_depth > 0) {
        t->rt_depth--;
    }
}

/* Writes line (n bytes, room for one more) to stderr as "dlsync: <line>\n". */
static void debug_print(char *line, size_t n)
{
    line[n++] = '\n';
    dls_ownfd_stderr(line, n);
}

static void debug_print_op(const dls_cuda_op *op)
{
    char line[512] = "dlsync: ";
    debug_print(line, 8 + dls_cuda_op_format(op, line + 8, sizeof line - 9));
}

static void debug_print_work(const dls_cuda_work *w)
{
    char line[512] = "dlsync: ";
    debug_print(line, 8 + dls_cuda_work_format(w, line + 8, sizeof line - 9));
}

/* The API a driver call is reported under: the outermost runtime call in progress on the thread
 * or else the driver function. */
static const char *annotate(const dls_cuda_thread *t, const CUpti_CallbackData *cb)
{
    return t->rt_depth > 0 ? t->rt_name : cb->functionName;
}

/* The call's CUresult at EXIT, 0 at ENTER. */
static int result_of(const CUpti_CallbackData *cb, int enter)
{
    return !enter && cb->functionReturnValue ? (int)*(const CUresult *)cb->functionReturnValue : 0;
}

/* The work lane: a launch, copy or set decoded from its parameters (or the decode its delivered
 * ENTER kept), with its stream resolved, for its receiver. Returns 0 when the call is not one
 * the work decoder reads. */
static int deliver_work(dls_cuda_thread *t, const dls_cuda_receivers *r, CUpti_CallbackId cbid,
                        const CUpti_CallbackData *cb, int enter)
{
    dls_cuda_work *w = &t->work;
    int kept = !enter && t->work_kept && t->work_cbid == cbid && w->correlation_id == cb->correlationId &&
               t->work_params == cb->functionParams;
    t->work_kept = 0;
    if (!kept) {
        dls_cuda_scratch *scratch = dls_cuda_thread_scratch(t);
        if (!dls_cuda_decode_work(cbid, cb, w, scratch ? scratch->words : NULL, scratch ? DLS_SCRATCH_WORDS : 0))
            return 0;
        w->api = annotate(t, cb);
        w->name = w->kind == DLS_OP_LAUNCH ? cb->symbolName : NULL;
        w->tid = t->tid;
        w->correlation_id = cb->correlationId;
        w->stream = dls_cuda_stream_resolve_latest(&t->latest, (CUstream)w->handle, w->per_thread, cb->context);
    }
    w->phase = enter ? DLS_PHASE_ENTER : DLS_PHASE_EXIT;
    w->result = result_of(cb, enter);
    w->nested = t->nested;
    if (enter) {
        t->work_kept = 1;
        t->work_cbid = cbid;
        t->work_params = cb->functionParams;
    }
    if (atomic_load_explicit(&g_debug, memory_order_relaxed))
        debug_print_work(w);
    if (r)
        r->work(w); /* its CUDA calls are the shim's (drv.h) */
    return 1;
}

/* The lifetime lane (ops.h): a stream's creation, or the destruction of a stream no model holds,
 * told to its receiver at its EXIT as a call with nothing to model. Returns 0 when the call is
 * not one of these (or DLSYNC_DEBUG_OPS is on): deliver_ops then reads it. */
static int deliver_lifetime(dls_cuda_thread *t, const dls_cuda_receivers *r, CUpti_CallbackId cbid,
                            const CUpti_CallbackData *cb, int enter)
{
    dls_op_kind kind;
    if (atomic_load_explicit(&g_debug, memory_order_relaxed) || !dls_cuda_decode_lifetime(cbid, cb, &kind))
        return 0;
    if (!enter && r)
        r->lifetime(t->nested);
    if (kind == DLS_OP_STREAM_DESTROY) /* see deliver_op */
        dls_cuda_streams_invalidate();
    return 1;
}

/* Delivers decoded operation *op of call cb (named `api`) in its phase to the op receiver, then
 * ages the identity caches its destruction invalidates (a stream's: at its ENTER and its EXIT). */
static void deliver_op(dls_cuda_thread *t, const dls_cuda_receivers *r, const CUpti_CallbackData *cb, int enter,
                       const char *api, dls_cuda_op *op)
{
    op->phase = enter ? DLS_PHASE_ENTER : DLS_PHASE_EXIT;
    op->result = result_of(cb, enter);
    op->api = api;
    op->name = op->kind == DLS_OP_LAUNCH ? cb->symbolName : NULL;
    op->tid = t->tid;
    op->correlation_id = cb->correlationId;
    op->nested = t->nested;
    if (atomic_load_explicit(&g_debug, memory_order_relaxed))
        debug_print_op(op);
    if (r)
        r->op(op);
    if (op->kind == DLS_OP_STREAM_DESTROY) /* at ENTER too: another thread's stream made as this one goes may
                                            * get its handle before this EXIT (the EXIT keeps the ENTER's
                                            * resolution, decode_sync.h) */
        dls_cuda_streams_invalidate();
    if (!enter && op->kind == DLS_OP_EVENT_DESTROY)
        dls_cuda_event_forget((CUevent)op->event, op->event_id);
}

/* The op lane, every other call: its operations (one, but for a multi-device launch) for its
 * receiver. */
static void deliver_ops(dls_cuda_thread *t, const dls_cuda_receivers *r, CUpti_CallbackId cbid,
                        const CUpti_CallbackData *cb, int enter)
{
    int kept = !enter && t->op_kept && t->op_cbid == cbid && t->op.correlation_id == cb->correlationId &&
               t->op_params == cb->functionParams;
    t->op_kept = 0;
    if (kept) {
        dls_cuda_op op = t->op;
        deliver_op(t, r, cb, enter, op.api, &op);
        return;
    }
    const char *api = annotate(t, cb);
    dls_cuda_op op;
    dls_cuda_scratch *scratch = dls_cuda_thread_scratch(t);
    unsigned n = 0;
    for (; dls_cuda_decode(cbid, cb, n, &op, scratch); n++)
        deliver_op(t, r, cb, enter, api, &op);
    if (enter && n == 1 && (op.kind == DLS_OP_EVENT_RECORD || op.kind == DLS_OP_STREAM_WAIT_EVENT)) {
        t->op = op; /* its inputs only: the EXIT of the same call delivers it again */
        t->op_kept = 1;
        t->op_cbid = cbid;
        t->op_params = cb->functionParams;
    }
}

static void on_driver(dls_cuda_thread *t, CUpti_CallbackId cbid, const CUpti_CallbackData *cb)
{
    dls_cuda_cbid_class cls = dls_cuda_cbid_class_of(cbid);
    if (cls == DLS_CBID_UNHANDLED)
        return;
    int enter = cb->callbackSite == CUPTI_API_ENTER;
    track_call(t, cb->correlationId, enter);
    if (enter) {
        void (*begins)(uint32_t, int) = atomic_load_explicit(&g_begins, memory_order_acquire);
        if (begins)
            begins(cb->correlationId, t->nested);
    }
    if (cls == DLS_CBID_RANGES || cls == DLS_CBID_INVALIDATION) {
        if (enter) /* a context destroyed or reset frees its memory too */
            dls_cuda_ranges_age();
        if (!enter && cls == DLS_CBID_INVALIDATION) {
            dls_cuda_contexts_invalidate();
            dls_cuda_kparams_invalidate();
        }
        return;
    }
    int work = cls == DLS_CBID_STREAM_WORK;
    if (enter && work && !gate_open())
        return; /* nothing watched: the ENTER of work that only enqueues has nothing to order */
    if (enter && cls == DLS_CBID_MADE)
        return; /* what the call makes is known at its EXIT */
    if (!t->tid)
        t->tid = (uint64_t)syscall(SYS_gettid);
    const dls_cuda_receivers *r = atomic_load_explicit(&g_receivers, memory_order_acquire);
    t->delivering = 1;
    t->current = cb->context; /* none of these calls changes it: the shim's context entries read it */
    if (!(work ? deliver_work(t, r, cbid, cb, enter) : deliver_lifetime(t, r, cbid, cb, enter)))
        deliver_ops(t, r, cbid, cb, enter);
    t->current = NULL;
    t->delivering = 0;
}

void CUPTIAPI dls_cuda_callback(void *userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void *cbdata)
{
    (void)userdata;
    const CUpti_CallbackData *cb = cbdata;
    if (!cb)
        return;
    dls_cuda_thread *t = dls_cuda_thread_self();
    if (domain == CUPTI_CB_DOMAIN_RUNTIME_API)
        on_runtime(t, cb); /* the shim makes no runtime calls of its own */
    else if (domain == CUPTI_CB_DOMAIN_DRIVER_API && t->guarded == 0 && !t->delivering)
        on_driver(t, cbid, cb); /* the shim's own driver calls (drv.h) are not the program's, nor is a call made
                                 * inside a delivery */
}
