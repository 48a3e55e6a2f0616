/* Orderings the shim makes: planned under the policy lock, made without it, committed after (see
 * order.h).
 *
 * Making one ordering `to` after `from`: record a pooled event on `from` and make `to` wait on it
 * (the host: synchronize the event). Failures fall back: a failed event creation or record to
 * synchronizing `from` on the host; a failed stream wait to synchronizing the event; a failed
 * host wait to a stream synchronize, then a context synchronize. Each kind of failure is warned
 * about once; the program's data stays correct whenever a fallback succeeds, and nothing is
 * changed when all fail. A capturing stream never receives an injected operation. What was made
 * is committed to hb from the capture of `from` taken when it was planned, so work other
 * threads enqueued meanwhile is never taken for ordered. */
#include "order.h"

#include "../cuda/drv.h"
#include "../report/order_log.h"
#include "../report/warn.h"
#include "complete.h"
#include "events.h"
#include "exch.h"
#include "queue.h"
#include "lock.h"
#include "stream_table.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

/* A stream as the records name it. */
static dls_order_stream named(const dls_pol_stream *st)
{
    return (dls_order_stream){.id = st->id, .handle = st->handle, .kind = dls_cuda_stream_kind_name(st->kind)};
}

/* Writes the `inject` record of ordering o made as `what` (`host`: the host waited). */
static void log_inject(const dls_pol_order *o, const char *what, int host)
{
    dls_order_stream from = named(o->from), to = host || !o->to ? (dls_order_stream){0} : named(o->to);
    dls_order_log_inject(o->xid, what, &from, host || !o->to ? NULL : &to, o->why);
}

void dls_pol_plan_init(dls_pol_plan *p, uint64_t tid)
{
    p->tid = tid;
    p->to_capturing = 0;
    p->more = 0;
    p->rc = 0;
    p->n = p->nmark = 0;
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
    o->from = dls_pol_stream_hold(from); /* both are read while the lock is released */
    o->to = dls_pol_stream_hold(to);
    o->snap = 0;
    o->ctx_snap = 0;
    o->xid = xid;
    o->what = what;
    o->why = why;
    o->from_capturing = from->capturing;
    o->from_destroyed = from->removed;
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
        o->snap = dls_pol_snap_stream(w, DLS_HB_NOW);
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
    o->snap = a->pos ? dls_pol_snap_at(a->st, a->pos) : 0;
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

/* The host waits for all of from's work, with from's context current: a stream synchronize, else
 * (from destroyed, or another thread's per-thread stream) a context synchronize, whose capture
 * is taken just before it, under the lock. */
static void host_sync(dls_pol_order *o, uint64_t tid)
{
    int pushed = 0;
    CUresult r = dls_drv_ctx_enter((CUcontext)o->from->ctx, &pushed), rs = CUDA_ERROR_INVALID_HANDLE;
    if (r == CUDA_SUCCESS) {
        if (dls_pol_nameable(o->from, tid) && !o->from_destroyed)
            rs = dls_drv_stream_synchronize((CUstream)o->from->handle);
        if (rs != CUDA_SUCCESS) {
            dls_pol_lock();
            o->ctx_snap = dls_pol_snap_ctx(o->from->ctx, DLS_HB_NOW);
            dls_pol_unlock();
            r = dls_drv_ctx_synchronize();
        }
        dls_drv_ctx_leave(pushed);
    } else {
        dls_pol_warn_ctx(o->from, r);
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
        dls_order_log_fallback("ordering failed", "stream and context synchronize failed");
        o->how = DLS_POL_HOW_FAILED;
    }
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
static void act(dls_pol_order *o, uint64_t tid) DLS_UNLOCKED
{
    if (o->from_capturing) { /* a record there would be captured, a host sync would break the capture */
        dls_warn_once("fix-capture-source",
                      "stream %llu is being captured into a CUDA graph while work the "
                      "shim must wait for is pending on it; that ordering is not made",
                      (unsigned long long)o->from->id);
        dls_order_log_fallback("ordering failed", "the stream to wait for is capturing");
        o->how = DLS_POL_HOW_FAILED;
        return;
    }
    if (o->to && capturing_now(o->to)) {
        o->how = DLS_POL_HOW_CAPTURING;
        return;
    }
    /* an after point still due on a stream destroyed since is not recorded: its handle may name
     * another stream by now (the destroy's ENTER records what is due; this is a race with it) */
    CUevent ev = !o->after ? NULL : dls_pol_after_event(o->after, !o->from_destroyed);
    int own = !ev; /* recorded here, on the stream as it is now */
    if (own && o->from_destroyed) {
        dls_warn_once("fix-destroyed-source",
                      "work the shim must wait for is pending on a stream the program destroyed; it waits for "
                      "that stream's context on the host instead");
        host_sync(o, tid);
        return;
    }
    if (own && !dls_pol_nameable(o->from, tid)) {
        host_sync(o, tid);
        return;
    }
    if (own)
        ev = dls_pol_event_record_on(o->from);
    if (!ev) {
        host_sync(o, tid);
        return;
    }
    CUresult r = CUDA_SUCCESS;
    if (o->to && (r = wait_on(o->to, ev)) == CUDA_SUCCESS) {
        o->how = DLS_POL_HOW_WAIT;
        log_inject(o, o->what, 0);
        if (own)
            dls_pol_event_put(ev, o->from);
        return;
    }
    if (o->to)
        dls_warn_once("fix-stream-wait", "cuStreamWaitEvent failed (CUDA error %d); waiting on the host instead",
                      (int)r);
    r = dls_drv_event_synchronize(ev);
    if (own)
        dls_pol_event_put(ev, o->from);
    if (r == CUDA_SUCCESS) {
        o->how = DLS_POL_HOW_HOST_EVENT;
        log_inject(o, "host-wait", 1);
    } else {
        host_sync(o, tid);
    }
}

/* Commits one ordering to the model (lock held); its calls were made after stamp `planned`. */
static void commit(dls_pol_order *o, uint64_t tid, uint64_t planned) DLS_REQUIRES(dls_pol_g.lock)
{
    uint64_t pos;
    dls_hb_when when = {.begin = planned, .end = dls_pol_end_now()};
    switch (o->how) {
    case DLS_POL_HOW_WAIT:
        if (o->snap && !dls_hb_event_wait(dls_pol_g.hb, tid, o->to->id, o->snap, when, &pos))
            o->to->last = pos;
        break;
    case DLS_POL_HOW_HOST_EVENT:
    case DLS_POL_HOW_HOST_STREAM:
        dls_pol_snap_complete(o->snap, tid, when.end);
        o->snap = 0;
        break;
    case DLS_POL_HOW_HOST_CTX:
        dls_pol_snap_complete(o->ctx_snap, tid, when.end);
        dls_pol_snap_complete(o->snap, tid, when.end);
        o->ctx_snap = o->snap = 0;
        break;
    default:
        break;
    }
    dls_pol_snap_drop(o->snap);
    dls_pol_snap_drop(o->ctx_snap);
    dls_pol_after_put(o->after);
    dls_pol_stream_drop(o->from);
    dls_pol_stream_drop(o->to);
}

/* The exchange with id xid, live or released, or NULL. */
static dls_pol_x *find_x(uint64_t xid) DLS_REQUIRES(dls_pol_g.lock)
{
    for (dls_pol_x *x = dls_pol_x_first(); x; x = dls_pol_x_next(x))
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

int dls_pol_plan_rounds(dls_pol_plan *p, dls_pol_round round, void *arg)
{
    for (int i = 0; i < DLS_POL_ROUNDS; i++) {
        p->more = 0;
        if (round(p, arg))
            break;
        int more = p->more;
        dls_pol_plan_carry_out(p);
        if (!more)
            break;
    }
    return p->rc;
}
