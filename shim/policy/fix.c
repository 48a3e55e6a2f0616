/* fix mode: which orderings the shim adds (an event wait of a consumer stream on a producer
 * stream, host waits for host-visible memory, lazy release fences) and the fallback when
 * exchanges cannot be modelled. The functions here plan (dls_pol_plan, lock held); order.c makes
 * the orderings without the lock and commits them. Capturing streams never receive an injected
 * operation (the graph launch is ordered instead: capture_use, exch.h). */
#include "fix.h"

#include "../common/config.h"
#include "../cuda/drv.h"
#include "../cuda/observer.h"
#include "../report/order_log.h"
#include "../report/warn.h"
#include "access.h"
#include "complete.h"
#include "exch.h"
#include "stream_table.h"

#include <errno.h>
#include <stdio.h>

/* The `what` of waits made at a graph launch for a use captured into the graph. */
static const char CAPTURE_END_WAIT[] = "capture-end-wait";

/* Appends to out[0..n) the latest position of every stream with work not known complete (cap
 * entries at most); returns the new count. */
static size_t pending_epochs(dls_hb_epoch *out, size_t n, size_t cap)
{
    for (size_t i = 0; i < dls_pol_g.cap; i++) {
        const dls_pol_stream *s = dls_pol_g.streams[i];
        if (!s || s->last <= s->done || s->removed)
            continue;
        if (n == cap) {
            dls_warn_once("fix-pending-streams",
                          "more than %zu streams have pending work; a tensor used on "
                          "too many streams waits for the first %zu only",
                          cap, cap);
            break;
        }
        out[n].stream = s->id;
        out[n].pos = s->last;
        n++;
    }
    return n;
}

/* x's frontier as plain epochs: its producer entries, or, when it has more producer streams than
 * it keeps, every stream with pending work (cap entries at most). */
static size_t front_epochs(const dls_pol_x *x, dls_hb_epoch *out, size_t cap)
{
    if (!(x->overflow & DLS_POL_OVER_PRODUCERS)) {
        size_t n = 0;
        for (unsigned i = 0; i < x->nfront; i++)
            if (dls_pol_stream_find(x->front[i].at.stream)) /* a forgotten stream's work is complete */
                out[n++] = x->front[i].at;
        return n;
    }
    return pending_epochs(out, 0, cap);
}

#define EPOCHS 256 /* conservative frontier of an overflowed exchange planned per round */

/* Plans st after x's frontier with the waits logged as `what`. */
static void fix_stream_as(dls_pol_plan *p, dls_pol_x *x, dls_pol_stream *st, const char *what, const char *reason)
{
    if (dls_pol_x_is_ordered(x, st->id))
        return;
    if (st->capturing || p->to_capturing) {
        x->captured = 1;
        return;
    }
    dls_hb_epoch f[EPOCHS];
    size_t nw = 0;
    dls_pol_plan_frontier(p, f, front_epochs(x, f, EPOCHS), st, x->xid, what, reason, &nw);
    if (nw && what == CAPTURE_END_WAIT)
        dls_warn_once("fix-capture",
                      "an exchanged tensor was used by work captured into a CUDA graph before "
                      "it was ordered; the shim orders the graph's launch instead of the capturing stream");
    dls_pol_plan_mark(p, x->xid, st->id, DLS_POL_MARK_ORDERED);
}

void dls_pol_fix_stream(dls_pol_plan *p, dls_pol_x *x, dls_pol_stream *st, const char *reason)
{
    fix_stream_as(p, x, st, "event-wait", reason);
}

/* 1 when st is x's only producer stream: the producer's own reuse of the memory is ordered
 * after an access on st by the stream itself, so an access there needs no after event (another
 * stream's reuse is fenced by an event recorded at reuse time instead). */
static int produced_only_on(const dls_pol_x *x, const dls_pol_stream *st)
{
    return x->nfront == 1 && !(x->overflow & DLS_POL_OVER_PRODUCERS) && x->front[0].at.stream == st->id;
}

int dls_pol_fix_use(dls_pol_plan *p, const dls_pol_access *a, dls_pol_stream *st)
{
    int consumer = 0;
    for (dls_pol_x *x = dls_pol_g.live; x; x = x->next) {
        if (!dls_pol_touches(a, x->lo, x->lo, x->hi))
            continue;
        consumer |= !produced_only_on(x, st);
        if (dls_pol_x_is_ordered(x, st->id))
            continue;
        if (a->kind != DLS_OP_GRAPH_LAUNCH)
            fix_stream_as(p, x, st, "event-wait", "first use on this stream");
        else if (x->captured)
            fix_stream_as(p, x, st, CAPTURE_END_WAIT, "graph launch of work captured after the export");
        else
            fix_stream_as(p, x, st, "event-wait", "graph launch after the export");
    }
    return consumer;
}

void dls_pol_fix_import(dls_pol_plan *p, dls_pol_x *x)
{
    dls_hb_epoch f[EPOCHS];
    dls_pol_plan_frontier(p, f, front_epochs(x, f, EPOCHS), NULL, x->xid, "event-wait", "host-visible tensor imported",
                          NULL);
}

/* Plans `to` (NULL: the host) after x's consumer accesses, waits logged with reason `why`: on
 * the event recorded right after an access when it has one (exactly that access), else after
 * the access's stream as it is when the ordering is made (and after every pending stream when x
 * had more consumer streams than it keeps). */
static void after_consumers(dls_pol_plan *p, dls_pol_x *x, dls_pol_stream *to, const char *why)
{
    dls_hb_epoch c[EPOCHS];
    size_t n = 0;
    uint64_t probe = to ? to->id : DLS_POL_HOST_STREAM;
    for (unsigned i = 0; i < x->ncons && n < EPOCHS; i++) {
        const dls_pol_touch *t = &x->cons[i];
        if (dls_pol_ordered(p->tid, probe, &t->at))
            continue;
        if (!t->after)
            c[n++] = t->at;
        else
            dls_pol_plan_after(p, t->after, to, x->xid, "event-wait", why);
    }
    if (x->overflow & DLS_POL_OVER_CONSUMERS)
        n = pending_epochs(c, n, EPOCHS);
    dls_pol_plan_frontier(p, c, n, to, x->xid, "event-wait", why, NULL);
}

/* 1 when thread tid knows every consumer access of x complete. */
static int cons_complete(const dls_pol_x *x, uint64_t tid)
{
    if (x->overflow & DLS_POL_OVER_CONSUMERS)
        return 0;
    for (unsigned i = 0; i < x->ncons; i++)
        if (!dls_pol_ordered(tid, DLS_POL_HOST_STREAM, &x->cons[i].at))
            return 0;
    return 1;
}

/* The eager release fence: plans x's producer streams (the host when none can be named) after
 * the consumer's accesses. */
static void fence_now(dls_pol_plan *p, dls_pol_x *x)
{
    unsigned nprod = 0;
    for (unsigned i = 0; i < x->nfront; i++) {
        dls_pol_stream *s = dls_pol_stream_find(x->front[i].at.stream);
        if (!s || s->removed || (s->kind == DLS_STREAM_PER_THREAD && s->owner != p->tid) || s->capturing)
            continue;
        nprod++;
        if (!dls_pol_x_is_ordered(x, s->id))
            after_consumers(p, x, s, "release: producer stream after the consumer's work");
    }
    if (!nprod || (x->overflow & DLS_POL_OVER_PRODUCERS))
        after_consumers(p, x, NULL, "release: producer streams unknown");
}

int dls_pol_fix_release(dls_pol_plan *p, dls_pol_x *x)
{
    if ((!x->ncons && !(x->overflow & DLS_POL_OVER_CONSUMERS)) || cons_complete(x, p->tid))
        return 0;
    if (x->host_visible) { /* the host may reuse the memory without any CUDA operation */
        after_consumers(p, x, NULL, "release: host-visible memory");
        return 0;
    }
    for (dls_pol_x *r = dls_pol_g.released, *next; r; r = next) { /* forget fences the host saw complete */
        next = r->next;
        if (cons_complete(r, p->tid))
            dls_pol_x_drop(r);
    }
    if (dls_pol_g.nreleased == DLS_POL_RELEASED) { /* full: the oldest fence is made now */
        dls_pol_x *old = dls_pol_g.released;
        while (old->next)
            old = old->next;
        fence_now(p, old);
        dls_pol_x_drop(old);
    }
    x->nordered = 0;
    dls_pol_x_release(x);
    return 1;
}

void dls_pol_fix_reuse(dls_pol_plan *p, const dls_pol_access *a, dls_pol_stream *st)
{
    for (dls_pol_x *x = dls_pol_g.released, *next; x; x = next) {
        next = x->next;
        if (!dls_pol_reuses(a, x))
            continue;
        if (cons_complete(x, p->tid)) {
            dls_pol_x_drop(x);
            continue;
        }
        unsigned drop = dls_pol_reuses_all(a, x) ? DLS_POL_MARK_DROP : 0;
        if (dls_pol_x_is_ordered(x, st->id)) {
            if (drop)
                dls_pol_x_drop(x);
            continue;
        }
        if (st->capturing || p->to_capturing)
            continue;
        after_consumers(p, x, st, "release: first reuse of the memory");
        dls_pol_plan_mark(p, x->xid, st->id, DLS_POL_MARK_ORDERED | drop);
    }
}

int dls_pol_fix_no_observer(void)
{
    if (!dls_drv())
        return 0;
    char detail[512];
    if (!dls_cuda_observer_active())
        snprintf(detail, sizeof detail,
                 "no CUDA observer (%s): synchronizing the producer's contexts (the "
                 "current one and every device's) at export",
                 dls_cuda_observer_reason());
    else
        snprintf(detail, sizeof detail,
                 "the model lost track of some CUDA work (out of memory): synchronizing "
                 "the producer's contexts (the current one and every device's) at export");
    if (!dls_cuda_observer_active() && !dls_cuda_observer_warned()) /* a degraded model was warned about */
        dls_warn_once("fix-no-observer", "%s", detail);
    CUresult r = dls_drv_synchronize_devices();
    if (r != CUDA_SUCCESS)
        dls_warn_once("fix-no-observer-sync", "cuCtxSynchronize failed (CUDA error %d) at an export", (int)r);
    dls_order_log_fallback(dls_cuda_observer_active() ? "model degraded" : "no CUDA observer", detail);
    return r == CUDA_SUCCESS ? 0 : EIO;
}
