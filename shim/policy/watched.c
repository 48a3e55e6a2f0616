/* The ENTER of an operation that may touch watched memory (the index could not clear it): check
 * judges it, fix orders it, in rounds of plans carried out without the lock (order.h), after
 * asking whether host-function marks show the producer's work complete (hostfn.h). */
#include "watched.h"

#include "check.h"
#include "events.h"
#include "exch.h"
#include "fix.h"
#include "hostfn.h"
#include "index.h"
#include "lifetime.h"
#include "lock.h"
#include "order.h"
#include "queue.h"
#include "stream_table.h"

#include "../common/config.h"

/* What dls_pol_watched_enter's rounds look at: access a of thread tid on stream s. */
typedef struct {
    dls_pol_thread *pt;
    const dls_pol_access *a;
    const dls_cuda_stream *s;
    uint64_t tid;
} use_round_arg;

/* One round of dls_pol_watched_enter (dls_pol_round): the access checked, or its orderings planned. */
static int use_round(dls_pol_plan *plan, void *arg) DLS_REQUIRES(dls_pol_g.lock)
{
    use_round_arg *u = arg;
    dls_pol_stream *st = dls_pol_stream_get(u->s, u->tid);
    if (st && st->capturing) {
        dls_pol_capture_use(u->a, st);
    } else if (st && dls_pol_g.mode == DLS_MODE_FIX) {
        if (dls_pol_fix_use(plan, u->a, st) && dls_pol_is_memory_op(u->a->kind)) {
            u->pt->after_corr = u->a->op; /* its EXIT records the after event */
            dls_pol_stream_drop(u->pt->after_st);
            u->pt->after_st = dls_pol_stream_hold(st);
        }
        dls_pol_fix_reuse(plan, u->a, st);
    } else if (st && st->kind == DLS_STREAM_LEGACY && u->a->op) {
        u->pt->legacy_corr = u->a->op; /* judged at its EXIT (dls_pol_legacy_verdict) */
        dls_pol_stream_drop(u->pt->legacy_st);
        u->pt->legacy_st = dls_pol_stream_hold(st);
    } else if (st) {
        dls_pol_check_use(u->a, st, u->tid, u->pt->horizon.h);
    }
    return 0;
}

void dls_pol_legacy_verdict(dls_pol_thread *pt, const dls_pol_access *a, uint64_t tid, int result)
{
    pt->legacy_corr = 0;
    if (result != 0) /* nothing was enqueued */
        return;
    dls_pol_lock();
    dls_pol_check_use(a, pt->legacy_st, tid, pt->horizon.h);
    dls_pol_stream_drop(pt->legacy_st);
    pt->legacy_st = NULL;
    dls_pol_unlock();
}

void dls_pol_watched_enter(dls_pol_thread *pt, const dls_pol_access *a, const dls_cuda_stream *s, uint64_t tid,
                           int nested)
{
    dls_pol_plan plan;
    dls_pol_plan_init(&plan, tid);
    plan.to_capturing = dls_pol_g.mode == DLS_MODE_FIX && dls_pol_joined_capture(s);
    dls_pol_lock();
    dls_pol_horizon_drained(&pt->horizon, nested);
    dls_pol_thread_register(pt, tid);
    dls_pol_stream *st = dls_pol_stream_get(s, tid);
    dls_pol_hostfn_ask ask;
    if (st && !st->capturing && dls_pol_hostfn_wanted(a, st, tid, &ask)) {
        dls_pol_unlock(); /* the driver is asked with no lock held */
        dls_pol_hostfn_query(&ask);
        dls_pol_lock();
        dls_pol_hostfn_learn(&ask, tid);
    }
    use_round_arg u = {.pt = pt, .a = a, .s = s, .tid = tid};
    dls_pol_plan_rounds(&plan, use_round, &u);
    dls_pol_unlock();
}

/* One round of dls_pol_watched_free (dls_pol_round): the waits for the pending uses of access `arg`. */
static int free_round(dls_pol_plan *plan, void *arg) DLS_REQUIRES(dls_pol_g.lock)
{
    dls_pol_fix_free(plan, arg);
    return 0;
}

void dls_pol_watched_free(dls_pol_thread *pt, const dls_cuda_op *op)
{
    dls_pol_access a;
    dls_pol_access_of_op(&a, op);
    uint64_t cleared;
    if (dls_pol_index_clears(&a, &cleared))
        return;
    dls_pol_plan plan;
    dls_pol_plan_init(&plan, op->tid);
    dls_pol_lock();
    dls_pol_thread_register(pt, op->tid);
    if (dls_pol_g.mode == DLS_MODE_CHECK)
        dls_pol_check_free(&a, op->ctx, op->tid, pt->horizon.h);
    if (dls_pol_g.mode == DLS_MODE_FIX)
        dls_pol_plan_rounds(&plan, free_round, &a);
    dls_pol_unlock();
}

void dls_pol_after_due_enter(const dls_cuda_stream *s)
{
    dls_pol_after *a = s->resolved ? dls_pol_after_take_due(s->id) : NULL;
    if (!a)
        return;
    dls_pol_lock();
    int held = a->refs > 1; /* by more than the due slot's reference */
    if (!held)
        dls_pol_after_put(a);
    dls_pol_unlock();
    if (!held)
        return;
    (void)dls_pol_after_event(a, 1);
    dls_pol_lock();
    dls_pol_after_put(a);
    dls_pol_unlock();
}
