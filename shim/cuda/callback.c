/* The CUPTI callback (see callback.h). */
#include "callback.h"

#include "../common/ownfd.h"
#include "cbids.h"
#include "decode.h"
#include "decode_work.h"
#include "drv.h"
#include "kparams.h"
#include "identity.h"

#include <errno.h>
#include <pthread.h>
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

int dls_cuda_set_sink(dls_cuda_sink fn, void *user)
{
    sink_pair *p = NULL;
    if (fn) {
        p = malloc(sizeof *p);
        if (!p)
            return ENOMEM;
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
    return 0;
}

/* The work lane's receiver and the ENTER gate (see ops.h) as registered, and as the callback
 * reads them: with DLSYNC_DEBUG_OPS on, no work sink (every phase goes to the sink, which
 * prints it) and no gate (every ENTER is delivered), so the hot path reads one pointer each.
 * The setters are serialized; a NULL gate is open. */
static pthread_mutex_t g_setting = PTHREAD_MUTEX_INITIALIZER;
static dls_cuda_work_sink g_work_sink_set;
static const atomic_int *g_gate_set;
static atomic_int g_debug;
static _Atomic(dls_cuda_work_sink) g_work_sink;
static _Atomic(const atomic_int *) g_gate;

/* Publishes what the callback reads from what is registered (g_setting held). */
static void publish_settings(void)
{
    int debug = atomic_load_explicit(&g_debug, memory_order_relaxed);
    atomic_store_explicit(&g_work_sink, debug ? NULL : g_work_sink_set, memory_order_release);
    atomic_store_explicit(&g_gate, debug ? NULL : g_gate_set, memory_order_release);
}

void dls_cuda_set_work_sink(dls_cuda_work_sink fn)
{
    pthread_mutex_lock(&g_setting);
    g_work_sink_set = fn;
    publish_settings();
    pthread_mutex_unlock(&g_setting);
}

void dls_cuda_set_enter_gate(const atomic_int *watching)
{
    pthread_mutex_lock(&g_setting);
    g_gate_set = watching;
    publish_settings();
    pthread_mutex_unlock(&g_setting);
}

void dls_cuda_callback_set_debug(int on)
{
    pthread_mutex_lock(&g_setting);
    atomic_store_explicit(&g_debug, on != 0, memory_order_relaxed);
    publish_settings();
    pthread_mutex_unlock(&g_setting);
}

/* 1 when the ENTER of stream work is to be delivered. */
static int gate_open(void)
{
    const atomic_int *g = atomic_load_explicit(&g_gate, memory_order_acquire);
    return !g || atomic_load_explicit(g, memory_order_acquire);
}

/* Runtime frames: the outermost runtime call in progress on a thread. */
static atomic_uint_fast64_t g_rt_epoch = 1;

void dls_cuda_callback_reset_runtime_frames(void)
{
    atomic_fetch_add_explicit(&g_rt_epoch, 1, memory_order_acq_rel);
}

/* Everything the callback keeps per thread, in one thread-local object: the shim is a shared
 * object, so each access to a thread-local costs a call to the TLS resolver, and the callback
 * takes the object's address once per delivery. `kept` is the launch, copy or set decoded at the
 * ENTER of the driver call (cbid, corr, params): the EXIT of that call delivers it again instead
 * of decoding it twice (these calls have no output parameter, so both phases decode the same).
 * Any other decode on the thread replaces the scratch area, so it clears `kept` first. `work` is
 * the same for the work lane: the work decoded at an ENTER the work sink took; `latest` is the
 * thread's memo of dls_cuda_stream_attached. */
#define OPEN_CALLS 4 /* driver calls a thread is inside that nesting keeps apart */

typedef struct {
    uint64_t open_epoch;       /* g_rt_epoch when `open` was last valid */
    uint32_t open[OPEN_CALLS]; /* correlation ids of the driver calls the thread is inside */
    unsigned nopen;            /* how many (more than OPEN_CALLS: the rest are not kept) */
    int nested;                /* the phase being delivered is of a nested call (track_call) */
    uint64_t rt_epoch;
    int rt_depth;
    const char *rt_name;
    uint32_t rt_corr;
    uint64_t tid;
    int delivering;
    int kept_valid;
    CUpti_CallbackId kept_cbid;
    uint32_t kept_corr;
    const void *kept_params;
    dls_cuda_op kept;
    int work_valid;
    const void *work_params;
    dls_cuda_work work;
    CUpti_CallbackId lane_cbid; /* the call last in the work sink (kept: its ENTER; `declined` delivers it) */
    const CUpti_CallbackData *lane_call;
    dls_cuda_stream_latest latest;
    dls_cuda_scratch scratch;
} thread_state;

static __thread thread_state t_state __attribute__((tls_model("local-dynamic")));

/* Keeps the thread's stack of open driver calls at each phase of call `corr` and notes in
 * t->nested whether the call is nested in another. An EXIT pops its call and whatever was opened
 * above it (ENTERs whose EXIT never came); an EXIT whose ENTER was not seen counts as nested
 * when some call is open. Switching callbacks (dls_cuda_callback_reset_runtime_frames) forgets
 * the stack. */
static inline void track_call(thread_state *t, uint32_t corr, int enter)
{
    uint64_t epoch = atomic_load_explicit(&g_rt_epoch, memory_order_relaxed);
    if (__builtin_expect(t->open_epoch != epoch, 0)) { /* callbacks were switched: forget open calls */
        t->open_epoch = epoch;
        t->nopen = 0;
    }
    if (enter) {
        t->nested = t->nopen > 0;
        if (t->nopen < OPEN_CALLS)
            t->open[t->nopen] = corr;
        t->nopen++;
        return;
    }
    unsigned kept = t->nopen < OPEN_CALLS ? t->nopen : OPEN_CALLS;
    for (unsigned i = kept; i-- > 0;)
        if (t->open[i] == corr) {
            t->nopen = i;
            t->nested = i > 0;
            return;
        }
    if (t->nopen > OPEN_CALLS) /* one of those not kept */
        t->nopen--;
    t->nested = t->nopen > 0;
}

static void on_runtime(thread_state *t, const CUpti_CallbackData *cb)
{
    uint64_t epoch = atomic_load_explicit(&g_rt_epoch, memory_order_acquire);
    if (t->rt_epoch != epoch) {
        t->rt_epoch = epoch;
        t->rt_depth = 0;
    }
    if (cb->callbackSite == CUPTI_API_ENTER) {
        if (t->rt_depth++ == 0) {
            t->rt_name = cb->functionName;
            t->rt_corr = cb->correlationId;
        }
    } else if (t->rt_depth > 0) {
        t->rt_depth--;
    }
}

static void debug_print(const dls_cuda_op *op)
{
    char line[512];
    size_t n = 8;
    memcpy(line, "dlsync: ", n);
    n += dls_cuda_op_format(op, line + n, sizeof line - n - 1);
    line[n++] = '\n';
    dls_ownfd_stderr(line, n);
}

/* 1 when `cbid` decodes to one launch, copy or set, calls with no output parameter (the EXIT
 * may reuse the ENTER's decode). */
static int single_op(CUpti_CallbackId cbid, const dls_cuda_op *op)
{
    if (op->kind == DLS_OP_MEMCPY || op->kind == DLS_OP_MEMSET)
        return 1;
    return op->kind == DLS_OP_LAUNCH && cbid != CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernelMultiDevice;
}

/* Decodes the index-th operation of the call: the ENTER's first operation straight into the
 * kept slot, the EXIT's reusing the launch, copy or set kept at its ENTER (no copy), any other
 * into *local. Returns the op, or NULL when the call has no operation at that index. */
static dls_cuda_op *decode(thread_state *t, CUpti_CallbackId cbid, const CUpti_CallbackData *cb, unsigned index,
                           int exit, dls_cuda_op *local)
{
    if (exit && index == 0 && t->kept_valid && t->kept_cbid == cbid && t->kept_corr == cb->correlationId &&
        t->kept_params == cb->functionParams) {
        t->kept_valid = 0;
        return &t->kept;
    }
    t->kept_valid = t->work_valid = 0;
    dls_cuda_op *op = !exit && index == 0 ? &t->kept : local;
    if (!dls_cuda_decode(cbid, cb, index, op, &t->scratch))
        return NULL;
    if (op == &t->kept && single_op(cbid, op)) {
        t->kept_cbid = cbid;
        t->kept_corr = cb->correlationId;
        t->kept_params = cb->functionParams;
        t->kept_valid = 1;
    }
    return op;
}

/* The API a driver call is reported under: the outermost runtime call in progress on the thread
 * (*rt_corr: its correlation id) or else the driver function. */
static const char *annotate(thread_state *t, const CUpti_CallbackData *cb, uint32_t *rt_corr)
{
    uint64_t epoch = atomic_load_explicit(&g_rt_epoch, memory_order_acquire);
    int under_runtime = t->rt_depth > 0 && t->rt_epoch == epoch;
    *rt_corr = under_runtime ? t->rt_corr : 0;
    return under_runtime ? t->rt_name : cb->functionName;
}

static void on_driver(thread_state *t, CUpti_CallbackId cbid, const CUpti_CallbackData *cb)
{
    dls_cuda_cbid_class cls = dls_cuda_cbid_class_of(cbid);
    int exit = cb->callbackSite == CUPTI_API_EXIT;
    if (cls == DLS_CBID_INVALIDATION) {
        if (exit) {
            dls_cuda_streams_invalidate();
            dls_cuda_kparams_invalidate();
        }
        return;
    }
    if (!t->tid)
        t->tid = (uint64_t)syscall(SYS_gettid);
    uint32_t rt_corr;
    const char *api = annotate(t, cb, &rt_corr);
    int debug = atomic_load_explicit(&g_debug, memory_order_relaxed);
    dls_cuda_op local, *op;
    for (unsigned i = 0; (op = decode(t, cbid, cb, i, exit, &local)); i++) {
        op->phase = exit ? DLS_PHASE_EXIT : DLS_PHASE_ENTER;
        op->result = exit && cb->functionReturnValue ? (int)*(const CUresult *)cb->functionReturnValue : 0;
        op->api = api;
        op->name = op->kind == DLS_OP_LAUNCH ? cb->symbolName : NULL;
        op->tid = t->tid;
        op->correlation_id = cb->correlationId;
        op->rt_correlation_id = rt_corr;
        op->nested = t->nested;
        if (debug)
            debug_print(op);
        sink_pair *s = atomic_load_explicit(&g_sink, memory_order_acquire);
        if (s)
            s->fn(op, s->user);
        if (exit && op->kind == DLS_OP_STREAM_DESTROY)
            dls_cuda_streams_invalidate();
        if (exit && op->kind == DLS_OP_EVENT_DESTROY)
            dls_cuda_event_forget((CUevent)op->event);
        if (single_op(cbid, op))
            break; /* its only operation */
    }
}

/* The general way: the call as a dls_cuda_op for the sink (runtime calls annotate the thread);
 * `tracked`: the lane already kept the thread's open calls for this phase. */
__attribute__((noinline)) static void deliver_phase(CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                                                    const CUpti_CallbackData *cb, int tracked)
{
    thread_state *t = &t_state;
    __asm__("" : "+r"(t)); /* the address is resolved once: the compiler may not recompute it per use */
    if (!cb || dls_drv_in_shim() || t->delivering)
        return;
    if (domain == CUPTI_CB_DOMAIN_DRIVER_API && !tracked)
        track_call(t, cb->correlationId, cb->callbackSite == CUPTI_API_ENTER);
    t->delivering = 1;
    if (domain == CUPTI_CB_DOMAIN_RUNTIME_API)
        on_runtime(t, cb);
    else if (domain == CUPTI_CB_DOMAIN_DRIVER_API)
        on_driver(t, cbid, cb);
    t->delivering = 0;
}

/* The general way for a phase the lane has not seen. */
static void deliver(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const CUpti_CallbackData *cb)
{
    deliver_phase(domain, cbid, cb, 0);
}

/* A phase the work sink declined: the work is not kept, and the sink gets the phase the general
 * way (the call is the thread's lane_cbid and lane_call). Out of line and reading the thread's
 * state, so that the lane keeps no value across the work sink's call. */
__attribute__((noinline)) static void declined(void)
{
    thread_state *t = &t_state;
    t->work_valid = 0;
    deliver_phase(CUPTI_CB_DOMAIN_DRIVER_API, t->lane_cbid, t->lane_call, 1);
}

static void lane_launch(CUpti_CallbackId cbid, const CUpti_CallbackData *cb, int enter);
static void lane_copy_set(CUpti_CallbackId cbid, const CUpti_CallbackData *cb, int enter);

/* A thread's first call down the lane: its id is read once, then the lane goes on. */
__attribute__((noinline, cold)) static void lane_first(CUpti_CallbackId cbid, const CUpti_CallbackData *cb, int enter,
                                                       int launch)
{
    t_state.tid = (uint64_t)syscall(SYS_gettid);
    if (launch)
        lane_launch(cbid, cb, enter);
    else
        lane_copy_set(cbid, cb, enter);
}

/* The work lane: a launch, copy or set decoded straight from its parameters for the work sink,
 * with no dls_cuda_op and no stream resolved (at the EXIT, what is attached to the thread's
 * resolution of the stream); the general way when there is no work sink, the call is not one
 * the lane decodes, or the work sink does not take the phase. `launch`: the call is a launch
 * (class DLS_CBID_LAUNCH); the lane of copies and sets calls nothing but tail calls and the
 * work sink, so it needs no frame. */
static inline __attribute__((always_inline)) void lane(CUpti_CallbackId cbid, const CUpti_CallbackData *cb, int enter,
                                                       int launch)
{
    dls_cuda_work_sink fn = atomic_load_explicit(&g_work_sink, memory_order_acquire);
    if (!fn) {
        deliver(CUPTI_CB_DOMAIN_DRIVER_API, cbid, cb);
        return;
    }
    thread_state *t = &t_state;
    __asm__("" : "+r"(t)); /* the address is resolved once */
    if (dls_drv_in_shim())
        return; /* ignored, as the general way ignores it (the sinks' CUDA calls are the shim's) */
    if (__builtin_expect(!t->tid, 0)) {
        lane_first(cbid, cb, enter, launch);
        return;
    }
    track_call(t, cb->correlationId, enter);
    dls_cuda_work *w = &t->work;
    int kept = !enter && t->work_valid && t->lane_cbid == cbid && w->correlation_id == cb->correlationId &&
               t->work_params == cb->functionParams;
    t->work_valid = 0;
    if (!kept) {
        if (!(launch ? dls_cuda_decode_launch_work_inline(cbid, cb, w, t->scratch.words, DLS_SCRATCH_WORDS)
                     : dls_cuda_decode_copy_set_inline(cbid, cb, w))) {
            deliver_phase(CUPTI_CB_DOMAIN_DRIVER_API, cbid, cb, 1);
            return;
        }
        if (launch)
            t->kept_valid = 0; /* the scratch area was rewritten */
        uint32_t rt_corr;
        w->api = annotate(t, cb, &rt_corr);
        w->name = launch ? cb->symbolName : NULL;
        w->tid = t->tid;
        w->ctx = (uintptr_t)cb->context;
        w->correlation_id = cb->correlationId;
    }
    w->nested = t->nested;
    t->lane_cbid = cbid;
    t->lane_call = cb;
    if (enter) {
        w->result = 0;
        t->work_valid = 1; /* kept for the EXIT of the same call (lane_cbid), unless the work sink declines */
        t->work_params = cb->functionParams;
    } else {
        w->result = cb->functionReturnValue ? (int)*(const CUresult *)cb->functionReturnValue : 0;
        w->attached = dls_cuda_stream_attached(&t->latest, (CUstream)w->handle, w->per_thread, (CUcontext)w->ctx);
    }
    if (!fn(w, enter ? DLS_PHASE_ENTER : DLS_PHASE_EXIT)) /* its CUDA calls are the shim's (drv.h) */
        declined();
}

__attribute__((noinline)) static void lane_launch(CUpti_CallbackId cbid, const CUpti_CallbackData *cb, int enter)
{
    lane(cbid, cb, enter, 1);
}

__attribute__((noinline)) static void lane_copy_set(CUpti_CallbackId cbid, const CUpti_CallbackData *cb, int enter)
{
    lane(cbid, cb, enter, 0);
}

void CUPTIAPI dls_cuda_callback(void *userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void *cbdata)
{
    (void)userdata;
    const CUpti_CallbackData *cb = cbdata;
    if (domain == CUPTI_CB_DOMAIN_DRIVER_API && cb) {
        dls_cuda_cbid_class cls = dls_cuda_cbid_class_of(cbid);
        if (cls >= DLS_CBID_STREAM_WORK && cls <= DLS_CBID_LAUNCH) {
            int enter = cb->callbackSite == CUPTI_API_ENTER;
            if (enter &&
                !gate_open()) { /* nothing watched: the ENTER of work that only enqueues has nothing to order, */
                if (!dls_drv_in_shim())
                    track_call(&t_state, cb->correlationId, 1); /* but the call is open (ops.h, nested) */
                return;
            }
            if (cls == DLS_CBID_LAUNCH)
                lane_launch(cbid, cb, enter);
            else
                lane_copy_set(cbid, cb, enter);
            return;
        }
    }
    deliver(domain, cbid, cb);
}
