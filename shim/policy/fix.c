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
static size_t pending_epochs(dls_hb_epoch *out, size_t n, size_t cap) DLS_REQUIRES(dls_pol_g.lock)
{
    const dls_pol_stream *s;
    DLS_POL_EACH_STREAM (s) {
        if (s->last <= s->done || s->removed)
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
static size_t front_epochs(const dls_pol_x *x, dls_hb_epoch *out, size_t cap) DLS_REQUIRES(dls_pol_g.lock)
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
    DLS_REQUIRES(dls_pol_g.lock)
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

/* The position of use u an access in direction dir on stream `to` is ordered after (0: none):
 * its latest access when the access may write, its latest that may write when it reads; between
 * two streams of the consumer's side (neither a producer stream of x) only a known write counts,
 * two kernels there being the consumer's own business (a read-read pair in the common case). */
static uint64_t wait_target(const dls_pol_x *x, const dls_pol_use *u, uint64_t to, dls_pol_dir dir)
    DLS_REQUIRES(dls_pol_g.lock)
{
    if (dir == DLS_POL_WRITES)
        return u->pos;
    int consumer_side = !dls_pol_x_produced_on(x, to) && !dls_pol_x_produced_on(x, u->stream);
    if (dir == DLS_POL_MAY_WRITE)
        return consumer_side ? u->known : u->pos;
    return consumer_side ? u->known : u->write;
}

/* Plans `to` (NULL: the host) after the uses of x on other streams that an access in direction
 * dir (DLS_POL_WRITES: after all of them) is ordered after (wait_target), waits logged with
 * reason `why`: on the event recorded right after a use's latest access when that is the one
 * waited for (exactly that access), else after the use's stream as it is when the ordering is
 * made (and after every pending stream when x had more streams than it keeps). */
static void after_uses(dls_pol_plan *p, dls_pol_x *x, dls_pol_stream *to, dls_pol_dir dir, const char *why)
    DLS_REQUIRES(dls_pol_g.lock)
{
    dls_hb_epoch c[EPOCHS];
    size_t n = 0;
    uint64_t probe = to ? to->id : DLS_POL_HOST_STREAM;
    for (unsigned i = 0; i < x->nuse && n < EPOCHS; i++) {
        const dls_pol_use *u = &x->use[i];
        dls_hb_epoch at = {.stream = u->stream, .pos = wait_target(x, u, probe, to ? dir : DLS_POL_WRITES)};
        if (!at.pos || dls_pol_ordered(p->tid, probe, DLS_HB_NOW, &at))
            continue;
        if (u->after && at.pos == u->pos)
            dls_pol_plan_after(p, u->after, to, x->xid, "event-wait", why);
        else
            c[n++] = at;
    }
    if (x->overflow & DLS_POL_OVER_USES)
        n = pending_epochs(c, n, EPOCHS);
    dls_pol_plan_frontier(p, c, n, to, x->xid, "event-wait", why, NULL);
}

int dls_pol_fix_use(dls_pol_plan *p, const dls_pol_access *a, dls_pol_stream *st)
{
    int consumer = 0;
    for (dls_pol_x *x = dls_pol_g.live; x; x = x->next) {
        if (!dls_pol_touches(a, x->lo, x->lo, x->hi))
            continue;
        consumer |= !produced_only_on(x, st);
        if (x->nuse && !st->capturing && !p->to_capturing) {
            dls_pol_dir dir = dls_pol_direction(a, x, st->id);
            after_uses(p, x, st, dir,
                       dir != DLS_POL_READS ? "may write while another stream's use is pending"
                                            : "use while another stream's write is pending");
        }
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

/* The eager release fence: plans x's producer streams (the host when none can be named) after
 * the uses of x. */
static void fence_now(dls_pol_plan *p, dls_pol_x *x) DLS_REQUIRES(dls_pol_g.lock)
{
    unsigned nprod = 0;
    for (unsigned i = 0; i < x->nfront; i++) {
        dls_pol_stream *s = dls_pol_stream_find(x->front[i].at.stream);
        if (!s || s->removed || (s->kind == DLS_STREAM_PER_THREAD && s->owner != p->tid) || s->capturing)
            continue;
        nprod++;
        after_uses(p, x, s, DLS_POL_WRITES, "release: producer stream after the consumer's work");
    }
    if (!nprod || (x->overflow & DLS_POL_OVER_PRODUCERS))
        after_uses(p, x, NULL, DLS_POL_WRITES, "release: producer streams unknown");
}

int dls_pol_fix_release(dls_pol_plan *p, dls_pol_x *x)
{
    if (x->nuse && dls_pol_x_uses_complete(x, p->tid, DLS_HB_NOW))
        return 0;          /* used, and the host saw the uses complete: done with it */
    if (x->host_visible) { /* the host may reuse the memory without any CUDA operation */
        if (!dls_pol_x_uses_complete(x, p->tid, DLS_HB_NOW))
            after_uses(p, x, NULL, DLS_POL_WRITES, "release: host-visible memory");
        return 0;
    }
    for (dls_pol_x *r = dls_pol_g.released, *next; r; r = next) { /* forget fences no longer needed */
        next = r->next;
        if (dls_pol_x_released_done(r, p->tid, DLS_HB_NOW))
            dls_pol_x_drop(r);
    }
    if (dls_pol_g.nreleased == DLS_POL_RELEASED) { /* full: the oldest fence is made now */
        dls_pol_x *old = dls_pol_g.released;
        while (old->next)
            old = old->next;
        fence_now(p, old);
        dls_pol_x_drop(old);
    }
    dls_pol_x_release(x); /* watched on: the consumer's accesses after the release count for the fence */
    return 1;
}

void dls_pol_fix_reuse(dls_pol_plan *p, const dls_pol_access *a, dls_pol_stream *st)
{
    for (dls_pol_x *x = dls_pol_g.released, *next; x; x = next) {
        next = x->next;
        if (!dls_pol_reuses(a, x))
            continue;
        if (dls_pol_x_released_done(x, p->tid, DLS_HB_NOW)) {
            dls_pol_x_drop(x);
            continue;
        }
        if (st->capturing || p->to_capturing)
            continue;
        after_uses(p, x, st, DLS_POL_WRITES, "release: reuse of the memory after the consumer's work");
        fix_stream_as(p, x, st, "event-wait", "first use on this stream, after the release");
        /* the memory is reused whole by its producer or by a known write: later users are ordered
         * after it by the program itself, and the consumer's accesses after it are its own bug (a
         * graph launch's known writes need not cover what it may touch: not a whole reuse) */
        if (dls_pol_reuses_all(a, x) &&
            (dls_pol_x_produced_on(x, st->id) ||
             (a->kind != DLS_OP_GRAPH_LAUNCH && dls_pol_direction(a, x, st->id) == DLS_POL_WRITES)))
            dls_pol_plan_mark(p, x->xid, st->id, DLS_POL_MARK_DROP);
    }
}

void dls_pol_fix_free(dls_pol_plan *p, const dls_pol_access *a)
{
    for (dls_pol_x *x = dls_pol_x_first(); x; x = dls_pol_x_next(x))
        if (x->nuse && dls_pol_reuses(a, x) && !dls_pol_x_uses_complete(x, p->tid, DLS_HB_NOW))
            after_uses(p, x, NULL, DLS_POL_WRITES, "free: the memory after the consumer's work");
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
