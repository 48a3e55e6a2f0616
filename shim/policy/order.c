/* Orderings the shim makes: planned under the policy lock, made without it, committed after
 * (see pol.h), with the pooled events they use and their `inject` / `fallback` log records.
 *
 * Making one ordering `to` after `from`: record a pooled event on `from` and make `to` wait on it
 * (the host: synchronize the event). Failures fall back: a failed event creation or record to
 * synchronizing `from` on the host; a failed stream wait to synchronizing the event; a failed
 * host wait to a stream synchronize, then a context synchronize. Each kind of failure is warned
 * about once; the program's data stays correct whenever a fallback succeeds, and nothing is
 * changed when all fail. A capturing stream never receives an injected operation. What was made
 * is committed to hb from the capture of `from` taken when it was planned, so work other
 * threads enqueued meanwhile is never taken for ordered. */
#include "pol.h"

#include "../cuda/drv.h"
#include "../report/history.h"
#include "../report/log.h"
#include "../report/nvtx.h"
#include "../report/summary.h"
#include "../report/warn.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#define POOL 64 /* free events kept; more are destroyed by the next pool_get */

/* Free events, each created in the context of stream `of` with CU_EVENT_DISABLE_TIMING, keyed
 * by the context's handle and id: a context destroyed (cuCtxDestroy, cudaDeviceReset) takes its
 * events with it, and a new one may get the same handle. The pool's lock is a leaf below the
 * policy lock: after events return here under it, so pool_put never calls the driver; the array
 * grows instead, and pool_get (never under the policy lock) destroys what exceeds POOL. */
static pthread_mutex_t g_pool_lock = PTHREAD_MUTEX_INITIALIZER;
typedef struct {
    CUevent ev;
    uintptr_t ctx;
    uint64_t ctx_id;
} pooled;
static pooled *g_pool;
static unsigned g_npool, g_cap;

/* A free event of the context of stream w, the one returned last (created when the pool has none;
 * the caller has entered that context and holds no dlsync lock). Events of an earlier context at the same handle
 * are forgotten, never touched again; while the pool holds more than POOL, a few more events of
 * w's context are taken out and destroyed. NULL when creation failed (warned once). */
static CUevent pool_get(const dls_pol_stream *w)
{
    CUevent e = NULL, extra[8];
    unsigned nextra = 0;
    pthread_mutex_lock(&g_pool_lock);
    for (unsigned i = g_npool; i-- > 0 && (!e || (g_npool > POOL && nextra < sizeof extra / sizeof *extra));) {
        if (g_pool[i].ctx != w->ctx)
            continue;
        if (g_pool[i].ctx_id == w->ctx_id) {
            if (e)
                extra[nextra++] = g_pool[i].ev;
            else
                e = g_pool[i].ev;
        }
        g_pool[i] = g_pool[--g_npool];
    }
    pthread_mutex_unlock(&g_pool_lock);
    for (unsigned i = 0; i < nextra; i++)
        dls_drv_event_destroy(extra[i]);
    if (e)
        return e;
    CUresult r = dls_drv_event_create(&e, CU_EVENT_DISABLE_TIMING);
    if (r != CUDA_SUCCESS) {
        dls_warn_once("fix-event-create",
                      "cuEventCreate failed (CUDA error %d); ordering exchanges with host "
                      "synchronization instead",
                      (int)r);
        return NULL;
    }
    return e;
}

/* Returns event e of the context of stream w to the pool; any thread, policy lock held or not.
 * No driver call: when the array cannot grow, e is left to its context (never reused). */
static void pool_put(CUevent e, const dls_pol_stream *w)
{
    pthread_mutex_lock(&g_pool_lock);
    if (g_npool == g_cap) {
        unsigned cap = g_cap ? 2 * g_cap : POOL;
        pooled *p = realloc(g_pool, cap * sizeof *p);
        if (p) {
            g_pool = p;
            g_cap = cap;
        }
    }
    if (g_npool < g_cap)
        g_pool[g_npool++] = (pooled){e, w->ctx, w->ctx_id};
    pthread_mutex_unlock(&g_pool_lock);
}

/* `"key": {"id", "handle", "kind"}` of st, or null. */
static void stream_json(dls_rec *j, const char *key, const dls_pol_stream *st)
{
    if (!st) {
        dls_rec_raw(j, key, "null");
        return;
    }
    dls_rec_object(j, key);
    dls_rec_u64(j, "id", st->id);
    dls_rec_hex(j, "handle", st->handle);
    dls_rec_str(j, "kind", dls_cuda_stream_kind_name(st->kind));
    dls_rec_close(j, '}');
}

static void log_inject(const dls_pol_order *o, const char *what, int host)
{
    dls_summary_add(DLS_COUNT_INJECTED, 1);
    dls_history_inject(o->xid, what, o->from ? o->from->id : 0, host || !o->to ? 0 : o->to->id, o->why);
    if (dls_nvtx_active()) {
        char m[64];
        snprintf(m, sizeof m, "inject %s xid %llu", what, (unsigned long long)o->xid);
        dls_nvtx_mark(m);
    }
    if (!dls_log_enabled())
        return;
    dls_rec j;
    dls_log_begin(&j, "inject");
    dls_rec_u64(&j, "xid", o->xid);
    dls_rec_str(&j, "what", what);
    stream_json(&j, "from", o->from);
    stream_json(&j, "to", host ? NULL : o->to);
    dls_rec_str(&j, "reason", o->why);
    dls_log_write(&j);
}

void dls_pol_log_fallback(const char *reason, const char *detail)
{
    dls_summary_add(DLS_COUNT_FALLBACKS, 1);
    if (!dls_log_enabled())
        return;
    dls_rec j;
    dls_log_begin(&j, "fallback");
    dls_rec_str(&j, "reason", reason);
    dls_rec_str(&j, "detail", detail);
    dls_log_write(&j);
}

void dls_pol_plan_init(dls_pol_plan *p, uint64_t tid)
{
    p->tid = tid;
    p->to_capturing = 0;
    p->more = 0;
    p->rc = 0;
    p->n = p->nmark = 0;
}

/* 1 when thread tid can name stream s (another thread's per-thread stream it cannot). */
static int nameable(const dls_pol_stream *s, uint64_t tid)
{
    return !(s->kind == DLS_STREAM_PER_THREAD && s->owner != tid);
}

/* The next free ordering of p, set up to order `to` after `from` (lock held); NULL when the plan
 * is full (p->more is set). */
static dls_pol_order *plan_order(dls_pol_plan *p, dls_pol_stream *from, dls_pol_stream *to, uint64_t xid,
                                 const char *what, const char *why)
{
    if (p->n == DLS_POL_PLAN) {
        p->more = 1;
        return NULL;
    }
    dls_pol_order *o = &p->o[p->n++];
    o->from = from;
    o->to = to;
    o->snap = 0;
    o->ctx_snap = 0;
    o->xid = xid;
    o->what = what;
    o->why = why;
    o->from_capturing = from->capturing;
    o->after = NULL;
    o->how = DLS_POL_HOW_PENDING;
    return o;
}

int dls_pol_plan_frontier(dls_pol_plan *p, const dls_hb_epoch *f, size_t n, dls_pol_stream *to, uint64_t xid,
                          const char *what, const char *why, size_t *nwaits)
{
    if (nwaits)
        *nwaits = 0;
    if (!n)
        return 0;
    dls_hb_epoch waits[DLS_POL_PLAN];
    size_t nw = 0;
    uint64_t probe = to ? to->id : DLS_POL_HOST_STREAM;
    if (dls_hb_frontier_waits(dls_pol_g.hb, p->tid, probe, f, n, waits, DLS_POL_PLAN, &nw)) {
        dls_warn_once("policy-waits", "the model could not tell which producer streams are ordered (out of "
                                      "memory); waiting for all of them");
        for (nw = 0; nw < n && nw < DLS_POL_PLAN; nw++)
            waits[nw] = f[nw];
        nw = n;
    }
    int rc = nw > DLS_POL_PLAN ? -1 : 0;
    for (size_t i = 0; i < nw && i < DLS_POL_PLAN; i++) {
        dls_pol_stream *w = dls_pol_stream_find(waits[i].stream);
        if (!w)
            continue;
        unsigned k = 0;
        while (k < p->n && !(p->o[k].from == w && p->o[k].to == to && !p->o[k].after))
            k++;
        if (k < p->n)
            continue; /* already planned */
        dls_pol_order *o = plan_order(p, w, to, xid, what, why);
        if (!o) {
            rc = -1;
            break;
        }
        o->snap = dls_pol_snap_stream(w);
    }
    if (rc)
        p->more = 1;
    if (nwaits)
        *nwaits = nw;
    return rc;
}

void dls_pol_plan_after(dls_pol_plan *p, dls_pol_after *a, dls_pol_stream *to, uint64_t xid, const char *what,
                        const char *why)
{
    for (unsigned k = 0; k < p->n; k++)
        if (p->o[k].after == a && p->o[k].to == to)
            return; /* already planned */
    dls_pol_order *o = plan_order(p, a->st, to, xid, what, why);
    if (!o)
        return;
    o->after = dls_pol_after_get(a);
    o->snap = a->snap ? dls_pol_snap_event(a->snap) : 0;
    o->from_capturing = 0; /* a was recorded before: waiting on it captures nothing */
}

void dls_pol_plan_mark(dls_pol_plan *p, uint64_t xid, uint64_t stream, unsigned flags)
{
    if (p->nmark == DLS_POL_PLAN) {
        p->more = 1;
        return;
    }
    p->mark[p->nmark].xid = xid;
    p->mark[p->nmark].stream = stream;
    p->mark[p->nmark].flags = flags;
    p->nmark++;
}

/* Warns once that the shim could not make the context of stream w current (it then cannot name
 * w's default stream, record an event there, or synchronize it). */
static void warn_ctx(const dls_pol_stream *w, CUresult r)
{
    dls_warn_once("fix-ctx", "cuCtxPushCurrent failed (CUDA error %d) for the context of stream %llu", (int)r,
                  (unsigned long long)w->id);
}

/* The host waits for all of from's work, with from's context current: a stream synchronize, else
 * a context synchronize (whose capture is taken just before it, under the lock). */
static void host_sync(dls_pol_order *o, uint64_t tid)
{
    int pushed = 0;
    CUresult r = dls_drv_ctx_enter((CUcontext)o->from->ctx, &pushed), rs = CUDA_ERROR_INVALID_HANDLE;
    if (r == CUDA_SUCCESS) {
        if (nameable(o->from, tid))
            rs = dls_drv_stream_synchronize((CUstream)o->from->handle);
        if (rs != CUDA_SUCCESS) {
            dls_pol_lock();
            o->ctx_snap = dls_pol_snap_ctx(o->from->ctx);
            dls_pol_unlock();
            r = dls_drv_ctx_synchronize();
        }
        dls_drv_ctx_leave(pushed);
    } else {
        warn_ctx(o->from, r);
    }
    if (rs == CUDA_SUCCESS) {
        o->how = DLS_POL_HOW_HOST_STREAM;
        log_inject(o, "host-wait", 1);
    } else if (r == CUDA_SUCCESS) {
        o->how = DLS_POL_HOW_HOST_CTX;
        log_inject(o, "context-sync", 1);
    } else {
        dls_warn_once("fix-host-sync",
                      "the shim could not synchronize with stream %llu (CUDA error %d); an "
                      "exchanged tensor may be used before it is ready",
                      (unsigned long long)o->from->id, (int)r);
        dls_pol_log_fallback("ordering failed", "stream and context synchronize failed");
        o->how = DLS_POL_HOW_FAILED;
    }
}

/* Records a pooled event of w's context at the current end of w, with that context current
 * (an event records only on a stream of its own context; w's default-stream handle means the
 * stream of the context it was observed in). NULL when the event could not be made or recorded
 * (warned once). */
static CUevent record_on(const dls_pol_stream *w)
{
    int pushed = 0;
    CUresult r = dls_drv_ctx_enter((CUcontext)w->ctx, &pushed);
    if (r != CUDA_SUCCESS) {
        warn_ctx(w, r);
        return NULL;
    }
    CUevent ev = pool_get(w);
    if (ev && (r = dls_drv_event_record(ev, (CUstream)w->handle)) != CUDA_SUCCESS) {
        dls_warn_once("fix-event-record",
                      "cuEventRecord failed (CUDA error %d); ordering exchanges with "
                      "host synchronization instead",
                      (int)r);
        pool_put(ev, w);
        ev = NULL;
    }
    dls_drv_ctx_leave(pushed);
    return ev;
}

dls_pol_after *dls_pol_after_record(dls_pol_stream *st, uint64_t tid)
{
    if (!nameable(st, tid) || atomic_load_explicit(&dls_pol_g.ncapturing, memory_order_relaxed))
        return NULL; /* an event recorded into a capture would be a node of the graph */
    dls_pol_after *a = malloc(sizeof *a);
    if (!a)
        return NULL;
    a->ev = record_on(st);
    if (!a->ev) {
        free(a);
        return NULL;
    }
    a->st = st;
    a->snap = 0;
    a->refs = 1;
    return a;
}

void dls_pol_after_placed(dls_pol_after *a)
{
    a->snap = dls_pol_snap_stream(a->st);
}

dls_pol_after *dls_pol_after_get(dls_pol_after *a)
{
    if (a)
        a->refs++;
    return a;
}

void dls_pol_after_put(dls_pol_after *a)
{
    if (!a || --a->refs)
        return;
    pool_put(a->ev, a->st);
    dls_pol_snap_drop(a->snap);
    free(a);
}

/* Makes stream `to` wait for ev, with to's context current (its default-stream handle means the
 * stream of the context it was observed in; the event may belong to any context). */
static CUresult wait_on(const dls_pol_stream *to, CUevent ev)
{
    int pushed = 0;
    CUresult r = dls_drv_ctx_enter((CUcontext)to->ctx, &pushed);
    if (r != CUDA_SUCCESS)
        return r;
    r = dls_drv_stream_wait_event((CUstream)to->handle, ev, 0);
    dls_drv_ctx_leave(pushed);
    return r;
}

/* 1 when the driver says `to` is capturing (asked only while some stream captures). */
static int capturing_now(const dls_pol_stream *to)
{
    if (!atomic_load_explicit(&dls_pol_g.ncapturing, memory_order_relaxed))
        return 0;
    CUstreamCaptureStatus cs = CU_STREAM_CAPTURE_STATUS_NONE;
    return dls_drv_stream_is_capturing((CUstream)to->handle, &cs) == CUDA_SUCCESS &&
           cs != CU_STREAM_CAPTURE_STATUS_NONE;
}

/* Makes one ordering (no lock held). */
static void act(dls_pol_order *o, uint64_t tid)
{
    if (o->from_capturing) { /* a record there would be captured, a host sync would break the capture */
        dls_warn_once("fix-capture-source",
                      "stream %llu is being captured into a CUDA graph while work the "
                      "shim must wait for is pending on it; that ordering is not made",
                      (unsigned long long)o->from->id);
        dls_pol_log_fallback("ordering failed", "the stream to wait for is capturing");
        o->how = DLS_POL_HOW_FAILED;
        return;
    }
    if (o->to && capturing_now(o->to)) {
        o->how = DLS_POL_HOW_CAPTURING;
        return;
    }
    if (!o->after && !nameable(o->from, tid)) {
        host_sync(o, tid);
        return;
    }
    CUevent ev = o->after ? o->after->ev : record_on(o->from);
    if (!ev) {
        host_sync(o, tid);
        return;
    }
    CUresult r = CUDA_SUCCESS;
    if (o->to && (r = wait_on(o->to, ev)) == CUDA_SUCCESS) {
        o->how = DLS_POL_HOW_WAIT;
        log_inject(o, o->what, 0);
        if (!o->after)
            pool_put(ev, o->from);
        return;
    }
    if (o->to)
        dls_warn_once("fix-stream-wait", "cuStreamWaitEvent failed (CUDA error %d); waiting on the host instead",
                      (int)r);
    r = dls_drv_event_synchronize(ev);
    if (!o->after)
        pool_put(ev, o->from);
    if (r == CUDA_SUCCESS) {
        o->how = DLS_POL_HOW_HOST_EVENT;
        log_inject(o, "host-wait", 1);
    } else {
        host_sync(o, tid);
    }
}

/* Commits one ordering to the model (lock held); its calls were made after stamp `planned`. */
static void commit(dls_pol_order *o, uint64_t tid, uint64_t planned)
{
    uint64_t pos;
    dls_hb_when when = {.begin = planned, .end = dls_pol_applied()};
    switch (o->how) {
    case DLS_POL_HOW_WAIT:
        if (o->snap && !dls_hb_event_wait(dls_pol_g.hb, tid, o->to->id, o->snap, when, &pos))
            o->to->last = pos;
        break;
    case DLS_POL_HOW_HOST_EVENT:
    case DLS_POL_HOW_HOST_STREAM:
        dls_pol_snap_complete(o->snap, tid);
        o->snap = 0;
        break;
    case DLS_POL_HOW_HOST_CTX:
        dls_pol_snap_complete(o->ctx_snap, tid);
        dls_pol_snap_complete(o->snap, tid);
        o->ctx_snap = o->snap = 0;
        break;
    default:
        break;
    }
    dls_pol_snap_drop(o->snap);
    dls_pol_snap_drop(o->ctx_snap);
    dls_pol_after_put(o->after);
}

/* The exchange with id xid, live or released, or NULL. */
static dls_pol_x *find_x(uint64_t xid)
{
    for (int list = 0; list < 2; list++)
        for (dls_pol_x *x = list ? dls_pol_g.released : dls_pol_g.live; x; x = x->next)
            if (x->xid == xid)
                return x;
    return NULL;
}

/* How the orderings to `stream` went: the worst of them. */
static dls_pol_how outcome_to(const dls_pol_plan *p, uint64_t stream)
{
    dls_pol_how worst = DLS_POL_HOW_WAIT;
    for (unsigned i = 0; i < p->n; i++)
        if (p->o[i].to && p->o[i].to->id == stream &&
            (p->o[i].how == DLS_POL_HOW_FAILED || p->o[i].how == DLS_POL_HOW_CAPTURING) && worst != DLS_POL_HOW_FAILED)
            worst = p->o[i].how;
    return worst;
}

void dls_pol_plan_carry_out(dls_pol_plan *p)
{
    if (!p->n && !p->nmark)
        return;
    uint64_t planned = dls_pol_applied() + 1; /* every call applied now precedes the orderings' calls */
    if (p->n) {
        dls_pol_unlock();
        for (unsigned i = 0; i < p->n; i++)
            act(&p->o[i], p->tid);
        dls_pol_lock();
    }
    for (unsigned i = 0; i < p->n; i++) {
        commit(&p->o[i], p->tid, planned);
        if (p->o[i].how == DLS_POL_HOW_FAILED)
            p->rc = EIO;
    }
    for (unsigned i = 0; i < p->nmark; i++) {
        dls_pol_x *x = find_x(p->mark[i].xid);
        dls_pol_how how = outcome_to(p, p->mark[i].stream);
        if (!x || how == DLS_POL_HOW_FAILED)
            continue;
        if (how == DLS_POL_HOW_CAPTURING) {
            x->captured = 1;
            continue;
        }
        if (p->mark[i].flags & DLS_POL_MARK_ORDERED)
            dls_pol_x_mark_ordered(x, p->mark[i].stream);
        if ((p->mark[i].flags & DLS_POL_MARK_DROP) && x->released)
            dls_pol_x_drop(x);
    }
    p->n = p->nmark = 0;
}
