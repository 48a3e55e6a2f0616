/* fix mode: the orderings the shim adds (event record on a producer stream + stream wait on the
 * consumer stream, host waits, lazy release fences, the no-observer fallback), the event pool, and
 * their `inject` / `fallback` log records. Capturing streams never receive an injected operation
 * (see pol.h: the graph launch is ordered instead). Runs with dls_pol_g.lock held (the no-observer
 * fallback excepted); the CUDA calls made here only enqueue work, except the host waits, which
 * block the calling thread as the program's own synchronize would.
 *
 * Failures: any CUDA call may fail. A failed event creation or record falls back to
 * synchronizing the producer stream on the host; a failed stream wait to synchronizing the
 * recorded event on the host; a failed host wait to a stream synchronize, then a context
 * synchronize. Each kind of failure is warned about once; the program's data stays correct
 * whenever any fallback succeeds, and nothing is changed when all fail. */
#include "pol.h"

#include "../cuda/drv.h"
#include "../cuda/observer.h"
#include "../report/nvtx.h"
#include "../report/log.h"
#include "../report/summary.h"
#include "../report/warn.h"

#include <errno.h>
#include <stdio.h>

#define POOL 64

/* The `what` of waits made at a graph launch for a use captured into the graph. */
static const char CAPTURE_END_WAIT[] = "capture-end-wait";

/* Free events, each created in context ctx with CU_EVENT_DISABLE_TIMING. */
static struct {
    CUevent ev;
    CUcontext ctx;
} g_pool[POOL];
static unsigned g_npool;

/* A free event of context ctx (the current one when NULL; *ctx is set to it), created with ctx
 * current when the pool has none: the caller has entered ctx. NULL when creation failed. */
static CUevent pool_get(CUcontext *ctx)
{
    if (!*ctx)
        dls_drv_ctx_get_current(ctx);
    for (unsigned i = 0; i < g_npool; i++)
        if (g_pool[i].ctx == *ctx) {
            CUevent e = g_pool[i].ev;
            g_pool[i] = g_pool[--g_npool];
            return e;
        }
    CUevent e = NULL;
    CUresult r = dls_drv_event_create(&e, CU_EVENT_DISABLE_TIMING);
    if (r != CUDA_SUCCESS) {
        dls_warn_once("fix-event-create", "cuEventCreate failed (CUDA error %d); ordering exchanges with host "
                      "synchronization instead", (int)r);
        return NULL;
    }
    return e;
}

static void pool_put(CUevent e, CUcontext ctx)
{
    if (g_npool < POOL) {
        g_pool[g_npool].ev = e;
        g_pool[g_npool].ctx = ctx;
        g_npool++;
    } else {
        dls_drv_event_destroy(e);
    }
}

/* `"key": {"id", "handle", "kind"}` of st, or null. */
static void stream_json(dls_json *j, const char *key, const dls_pol_stream *st)
{
    if (!st) {
        dls_json_raw(j, key, "null");
        return;
    }
    dls_json_object(j, key);
    dls_json_u64(j, "id", st->id);
    dls_json_hex(j, "handle", st->handle);
    dls_json_str(j, "kind", dls_cuda_stream_kind_name(st->kind));
    dls_json_close(j, '}');
}

static void log_inject(uint64_t xid, const char *what, const dls_pol_stream *from, const dls_pol_stream *to,
                       const char *reason)
{
    dls_summary_add(DLS_COUNT_INJECTED, 1);
    if (dls_nvtx_active()) {
        char m[64];
        snprintf(m, sizeof m, "inject %s xid %llu", what, (unsigned long long)xid);
        dls_nvtx_mark(m);
    }
    if (!dls_log_enabled())
        return;
    dls_json j;
    dls_log_begin(&j, "inject");
    dls_json_u64(&j, "xid", xid);
    dls_json_str(&j, "what", what);
    stream_json(&j, "from", from);
    stream_json(&j, "to", to);
    dls_json_str(&j, "reason", reason);
    dls_log_write(&j);
}

static void log_fallback(const char *reason, const char *detail)
{
    dls_summary_add(DLS_COUNT_FALLBACKS, 1);
    if (!dls_log_enabled())
        return;
    dls_json j;
    dls_log_begin(&j, "fallback");
    dls_json_str(&j, "reason", reason);
    dls_json_str(&j, "detail", detail);
    dls_log_write(&j);
}

/* Warns once that the shim could not make the context of stream w current (it then cannot name
 * w's default stream, record an event there, or synchronize it). */
static void warn_ctx(const dls_pol_stream *w, CUresult r)
{
    dls_warn_once("fix-ctx", "cuCtxPushCurrent failed (CUDA error %d) for the context of stream %llu",
                  (int)r, (unsigned long long)w->id);
}

/* The host waits for all of w's work by synchronizing it (or its context), with w's context
 * current; 0 or EIO. */
static int host_sync_stream(dls_pol_stream *w, uint64_t tid, uint64_t xid, const char *why)
{
    int pushed = 0;
    CUresult r = dls_drv_ctx_enter((CUcontext)w->ctx, &pushed), rs = CUDA_ERROR_INVALID_HANDLE;
    if (r == CUDA_SUCCESS) {
        if (!(w->kind == DLS_STREAM_PER_THREAD && w->owner != tid))
            rs = dls_drv_stream_synchronize((CUstream)w->handle);
        if (rs != CUDA_SUCCESS)
            r = dls_drv_ctx_synchronize();
        dls_drv_ctx_leave(pushed);
    } else {
        warn_ctx(w, r);
    }
    if (rs == CUDA_SUCCESS) {
        dls_hb_sync_stream(dls_pol_g.hb, tid, w->id);
        dls_pol_stream_done(w, w->last);
        log_inject(xid, "host-wait", w, NULL, why);
        return 0;
    }
    if (r == CUDA_SUCCESS) {
        dls_hb_sync_context(dls_pol_g.hb, tid, (uint64_t)w->ctx);
        dls_pol_streams_done_ctx(w->ctx);
        log_inject(xid, "context-sync", w, NULL, why);
        return 0;
    }
    dls_warn_once("fix-host-sync", "the shim could not synchronize with stream %llu (CUDA error %d); an "
                  "exchanged tensor may be used before it is ready", (unsigned long long)w->id, (int)r);
    log_fallback("ordering failed", "stream and context synchronize failed");
    return EIO;
}

/* Records a pooled event of w's context at the current end of w, with that context current
 * (an event records only on a stream of its own context; w's default-stream handle means the
 * stream of the context it was observed in). Sets *ctx to the event's context; NULL when the
 * event could not be made or recorded (warned once). */
static CUevent record_on(const dls_pol_stream *w, CUcontext *ctx)
{
    *ctx = (CUcontext)w->ctx;
    int pushed = 0;
    CUresult r = dls_drv_ctx_enter(*ctx, &pushed);
    if (r != CUDA_SUCCESS) {
        warn_ctx(w, r);
        return NULL;
    }
    CUevent ev = pool_get(ctx);
    if (ev && (r = dls_drv_event_record(ev, (CUstream)w->handle)) != CUDA_SUCCESS) {
        dls_warn_once("fix-event-record", "cuEventRecord failed (CUDA error %d); ordering exchanges with "
                      "host synchronization instead", (int)r);
        pool_put(ev, *ctx);
        ev = NULL;
    }
    dls_drv_ctx_leave(pushed);
    return ev;
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

/* Orders `to` (NULL: the host) after the current work of stream w; an event wait is logged as
 * `what`. Returns 0 or EIO. */
static int order_after(dls_pol_stream *w, dls_pol_stream *to, uint64_t tid, uint64_t xid, const char *what,
                       const char *why)
{
    if (w->capturing) { /* a record there would be captured, a host sync would break the capture */
        dls_warn_once("fix-capture-source", "stream %llu is being captured into a CUDA graph while work the "
                      "shim must wait for is pending on it; that ordering is not made", (unsigned long long)w->id);
        log_fallback("ordering failed", "the stream to wait for is capturing");
        return EIO;
    }
    if (w->kind == DLS_STREAM_PER_THREAD && w->owner != tid) /* not nameable from this thread */
        return host_sync_stream(w, tid, xid, why);
    CUcontext ctx;
    CUevent ev = record_on(w, &ctx);
    if (!ev)
        return host_sync_stream(w, tid, xid, why);
    uint64_t evid = DLS_POL_OWN_EVENT + dls_pol_g.own_op;
    uint64_t pos = w->last;
    if (!dls_hb_event_record(dls_pol_g.hb, tid, w->id, evid, dls_pol_g.own_op++, &pos))
        w->last = pos;
    int rc = 0;
    CUresult r;
    if (to) {
        r = wait_on(to, ev);
        if (r == CUDA_SUCCESS) {
            if (!dls_hb_event_wait(dls_pol_g.hb, tid, to->id, evid, dls_pol_g.own_op++, &pos))
                to->last = pos;
            log_inject(xid, what, w, to, why);
        } else {
            dls_warn_once("fix-stream-wait", "cuStreamWaitEvent failed (CUDA error %d); waiting on the host "
                          "instead", (int)r);
            to = NULL;
        }
    }
    if (!to) {
        r = dls_drv_event_synchronize(ev);
        if (r == CUDA_SUCCESS) {
            dls_hb_sync_event(dls_pol_g.hb, tid, evid);
            dls_pol_stream_done(w, pos);
            log_inject(xid, "host-wait", w, NULL, why);
        } else {
            rc = host_sync_stream(w, tid, xid, why);
        }
    }
    dls_hb_event_remove(dls_pol_g.hb, evid);
    pool_put(ev, ctx);
    return rc;
}

/* Orders `to` (NULL: the host, through the probe stream) after f[0..n), logging event waits as
 * `what`; *nwaits (may be NULL) = the number of streams waited for. Returns 0 or EIO. */
static int order_after_frontier(const dls_hb_epoch *f, size_t n, dls_pol_stream *to, uint64_t tid, uint64_t xid,
                                const char *what, const char *why, size_t *nwaits)
{
    if (nwaits)
        *nwaits = 0;
    if (!n)
        return 0;
    dls_hb_epoch waits[DLS_POL_MAXF + DLS_POL_MAXC];
    size_t nw = 0;
    uint64_t probe = to ? to->id : DLS_POL_HOST_STREAM;
    if (dls_hb_frontier_waits(dls_pol_g.hb, tid, probe, f, n, waits, sizeof waits / sizeof *waits, &nw))
        return EIO;
    int rc = 0;
    for (size_t i = 0; i < nw && i < sizeof waits / sizeof *waits; i++) {
        dls_pol_stream *w = dls_pol_stream_find(waits[i].stream);
        if (w && order_after(w, to, tid, xid, what, why))
            rc = EIO;
    }
    if (nwaits)
        *nwaits = nw;
    return rc;
}

/* x's frontier as plain epochs. */
static size_t front_epochs(const dls_pol_x *x, dls_hb_epoch *out)
{
    for (unsigned i = 0; i < x->nfront; i++)
        out[i] = x->front[i].at;
    return x->nfront;
}

/* 1 when st is being captured into a graph (then it must not receive a wait): tracked from the
 * capture calls, or, for a stream joined to a capture, as the driver says (asked only while some
 * stream captures: no stream can be joined to a capture otherwise). */
static int capturing(const dls_pol_stream *st)
{
    if (st->capturing)
        return 1;
    if (!dls_pol_g.ncapturing)
        return 0;
    CUstreamCaptureStatus cs = CU_STREAM_CAPTURE_STATUS_NONE;
    return dls_drv_stream_is_capturing((CUstream)st->handle, &cs) == CUDA_SUCCESS &&
           cs != CU_STREAM_CAPTURE_STATUS_NONE;
}

/* dls_pol_fix_stream, with the event waits logged as `what`. */
static int fix_stream_as(dls_pol_x *x, dls_pol_stream *st, uint64_t tid, const char *what, const char *reason)
{
    if (dls_pol_x_is_ordered(x, st->id))
        return 0;
    if (capturing(st)) {
        x->captured = 1;
        return 0;
    }
    dls_hb_epoch f[DLS_POL_MAXF];
    size_t nw = 0;
    int rc = order_after_frontier(f, front_epochs(x, f), st, tid, x->xid, what, reason, &nw);
    if (nw && what == CAPTURE_END_WAIT)
        dls_warn_once("fix-capture", "an exchanged tensor was used by work captured into a CUDA graph before "
                      "it was ordered; the shim orders the graph's launch instead of the capturing stream");
    if (!rc)
        dls_pol_x_mark_ordered(x, st->id);
    return rc;
}

int dls_pol_fix_stream(dls_pol_x *x, dls_pol_stream *st, uint64_t tid, const char *reason)
{
    return fix_stream_as(x, st, tid, "event-wait", reason);
}

void dls_pol_fix_op(const dls_cuda_op *op, dls_pol_stream *st, uint64_t tid)
{
    for (dls_pol_x *x = dls_pol_g.live; x; x = x->next) {
        if (dls_pol_x_is_ordered(x, st->id) || !dls_pol_op_touches(op, x->lo, x->hi))
            continue;
        if (op->kind != DLS_OP_GRAPH_LAUNCH)
            fix_stream_as(x, st, tid, "event-wait", "first use on this stream");
        else if (x->captured)
            fix_stream_as(x, st, tid, CAPTURE_END_WAIT, "graph launch of work captured after the export");
        else
            fix_stream_as(x, st, tid, "event-wait", "graph launch after the export");
    }
}

void dls_pol_fix_import(dls_pol_x *x, uint64_t tid)
{
    dls_hb_epoch f[DLS_POL_MAXF];
    order_after_frontier(f, front_epochs(x, f), NULL, tid, x->xid, "event-wait", "host-visible tensor imported", NULL);
}

/* x's consumer accesses as plain epochs. */
static size_t cons_epochs(const dls_pol_x *x, dls_hb_epoch *out)
{
    for (unsigned i = 0; i < x->ncons; i++)
        out[i] = x->cons[i].at;
    return x->ncons;
}

/* 1 when thread tid knows every consumer access of x complete. */
static int cons_complete(const dls_pol_x *x, uint64_t tid)
{
    for (unsigned i = 0; i < x->ncons; i++) {
        int o = 0;
        if (dls_hb_ordered(dls_pol_g.hb, tid, DLS_POL_HOST_STREAM, x->cons[i].at.stream, x->cons[i].at.pos, &o) ||
            !o)
            return 0;
    }
    return 1;
}

/* The eager release fence: orders x's producer streams (the host when none can be named) after
 * the consumer's accesses now. */
static void fence_now(dls_pol_x *x, uint64_t tid)
{
    dls_hb_epoch c[DLS_POL_MAXC];
    size_t nc = cons_epochs(x, c);
    unsigned nprod = 0;
    for (unsigned i = 0; i < x->nfront; i++) {
        dls_pol_stream *p = dls_pol_stream_find(x->front[i].at.stream);
        if (!p || p->removed || (p->kind == DLS_STREAM_PER_THREAD && p->owner != tid) || capturing(p))
            continue;
        nprod++;
        if (!dls_pol_x_is_ordered(x, p->id))
            order_after_frontier(c, nc, p, tid, x->xid, "event-wait", "release: producer stream after the "
                                 "consumer's work", NULL);
    }
    if (!nprod)
        order_after_frontier(c, nc, NULL, tid, x->xid, "event-wait", "release: producer streams unknown", NULL);
}

int dls_pol_fix_release(dls_pol_x *x, uint64_t tid)
{
    if (!x->ncons || cons_complete(x, tid))
        return 0;
    if (x->host_visible) { /* the host may reuse the memory without any CUDA operation */
        dls_hb_epoch c[DLS_POL_MAXC];
        order_after_frontier(c, cons_epochs(x, c), NULL, tid, x->xid, "event-wait", "release: host-visible memory",
                             NULL);
        return 0;
    }
    for (dls_pol_x *r = dls_pol_g.released, *next; r; r = next) { /* forget fences the host saw complete */
        next = r->next;
        if (cons_complete(r, tid))
            dls_pol_x_drop(r);
    }
    if (dls_pol_g.nreleased == DLS_POL_RELEASED) { /* full: the oldest fence is made now */
        dls_pol_x *old = dls_pol_g.released;
        while (old->next)
            old = old->next;
        fence_now(old, tid);
        dls_pol_x_drop(old);
    }
    x->nordered = 0;
    dls_pol_x_release(x);
    return 1;
}

/* 1 when op uses or frees memory of released x (a stream-ordered free counts: the allocator may
 * hand the memory to other work ordered after the free). */
static int reuses(const dls_cuda_op *op, const dls_pol_x *x)
{
    if (op->kind != DLS_OP_FREE)
        return dls_pol_op_touches(op, x->lo, x->hi);
    if (op->flags & DLS_OPF_CONSERVATIVE)
        return 1;
    for (uint32_t i = 0; i < op->nranges; i++)
        if (op->ranges[i].addr < x->hi && x->lo < op->ranges[i].addr + op->ranges[i].len)
            return 1;
    return 0;
}

/* 1 when op reuses all of released x: conservative, a launch given the start of the range or of
 * its allocation, or a copy, set or free range covering it. Later users of the memory are then
 * ordered after op by the program itself (or race with op, not with the consumer). */
static int reuses_all(const dls_cuda_op *op, const dls_pol_x *x)
{
    if (op->kind == DLS_OP_GRAPH_LAUNCH || (op->flags & DLS_OPF_CONSERVATIVE))
        return 1;
    for (uint32_t i = 0; i < op->nwords; i++)
        if (op->words[i] == x->lo || op->words[i] == x->alo)
            return 1;
    for (uint32_t i = 0; i < op->nranges; i++)
        if (op->ranges[i].addr <= x->lo && x->hi <= op->ranges[i].addr + op->ranges[i].len)
            return 1;
    return 0;
}

void dls_pol_fix_reuse(const dls_cuda_op *op, dls_pol_stream *st, uint64_t tid)
{
    for (dls_pol_x *x = dls_pol_g.released, *next; x; x = next) {
        next = x->next;
        if (!reuses(op, x))
            continue;
        if (cons_complete(x, tid)) {
            dls_pol_x_drop(x);
            continue;
        }
        if (!dls_pol_x_is_ordered(x, st->id)) {
            dls_hb_epoch c[DLS_POL_MAXC];
            if (capturing(st) || order_after_frontier(c, cons_epochs(x, c), st, tid, x->xid, "event-wait",
                                                      "release: first reuse of the memory", NULL))
                continue;
            dls_pol_x_mark_ordered(x, st->id);
        }
        if (reuses_all(op, x))
            dls_pol_x_drop(x);
    }
}

void dls_pol_fix_no_observer(void)
{
    if (!dls_drv())
        return;
    char detail[512];
    snprintf(detail, sizeof detail, "no CUDA observer (%s): synchronizing the producer context at export",
             dls_cuda_observer_reason());
    if (!dls_cuda_observer_warned())
        dls_warn_once("fix-no-observer", "%s", detail);
    CUresult r = dls_drv_ctx_synchronize();
    if (r != CUDA_SUCCESS)
        dls_warn_once("fix-no-observer-sync", "cuCtxSynchronize failed (CUDA error %d) at an export", (int)r);
    log_fallback("no CUDA observer", detail);
}
