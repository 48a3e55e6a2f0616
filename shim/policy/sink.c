/* The policy's receivers of the observer's operations (see sink.h). Fast path: the ENTER of an
 * operation that touches no watched range costs its access record and a lock-free question to
 * the index; the EXIT of an operation that only enqueues work (an event record or a stream's
 * wait for one too) fills its record in the lock-free queue (no allocation after a stream's
 * first sight). */
#include "sink.h"

#include "../common/config.h"
#include "../report/summary.h"
#include "access.h"
#include "events.h"
#include "host_sync.h"
#include "hostfn.h"
#include "index.h"
#include "kinds.h"
#include "lifetime.h"
#include "lock.h"
#include "queue.h"
#include "recording.h"
#include "stream_table.h"
#include "thread.h"
#include "watched.h"

/* At the delivered ENTER of call corr (nested: ops.h): the thread's horizon catches up with the
 * host clock, unless its begin was stamped already (dls_pol_check_on_begins). */
static void enter_horizon(dls_pol_thread *pt, uint32_t corr, int nested)
{
    if (corr == 0 || pt->begun_corr != corr)
        dls_pol_horizon_enter(&pt->horizon, nested);
}

/* The EXIT of op, made by a call of stamps `when`, applied (lock held; `host_sync`: op is a host
 * synchronize). A failed call gets here only when op is a host synchronize or its kind ends on
 * error (kinds.def). */
static void on_exit_locked(dls_pol_thread *pt, const dls_cuda_op *op, dls_hb_when when, int host_sync)
    DLS_REQUIRES(dls_pol_g.lock)
{
    if (host_sync)
        dls_pol_sync_exit(pt, op, when);
    else /* lifetimes and captures */
        dls_pol_lifetime_exit(op);
}

/* ENTER of access a on stream s: one the index clears goes no further, and when `deferrable` its
 * EXIT is told so (exit_marks); one that may touch is checked or ordered (watched.h). */
static void stream_enter(dls_pol_thread *pt, const dls_pol_access *a, const dls_cuda_stream *s, uint64_t tid,
                         int nested, int deferrable)
{
    uint64_t cleared;
    if (!dls_pol_index_clears(a, &cleared)) {
        dls_pol_watched_enter(pt, a, s, tid, nested);
    } else if (deferrable) {
        pt->cleared_corr = a->op; /* its EXIT need not ask the index again */
        pt->cleared = cleared;
    }
}

/* What the EXIT of deferred operation corr by thread tid adds to its record: while memory is
 * watched, (fix) the event recorded right after a consumer access, and whether its ENTER found
 * it touching nothing. */
static inline void exit_marks(dls_pol_thread *pt, dls_pol_rec *r, uint32_t corr, uint64_t tid)
{
    r->after = NULL;
    r->cleared = 0;
    if (!atomic_load_explicit(dls_pol_index_watching(), memory_order_relaxed))
        return;
    if (pt->after_st && pt->after_corr == corr) /* a consumer access (fix) */
        r->after = dls_pol_after_make(pt->after_st, tid);
    dls_pol_stream_drop(pt->after_st);
    pt->after_st = NULL;
    r->cleared = pt->cleared_corr == corr ? pt->cleared : 0;
}

/* Queues the filled record r (taken from the queue with `ticket`, or local: NULL q) for the next
 * holder of the lock; a full queue is applied at once. Then the calling thread knows its call
 * returned (its horizon passes the call's end; `nested`: see dls_pol_horizon_raise). */
static inline void defer_publish(dls_pol_thread *pt, dls_pol_rec *q, uint64_t ticket, const dls_pol_rec *r, int nested)
{
    uint64_t end;
    if (q) {
        dls_pol_defer_publish(q, ticket);
        end = dls_pol_ticket_end(ticket);
    } else {
        end = dls_pol_apply_now(r);
    }
    dls_pol_horizon_raise(&pt->horizon, end + 1, nested);
}

/* 1 when op records a user event (its record is in flight until queued: recording.h). */
static int records_event(const dls_cuda_op *op)
{
    return op->kind == DLS_OP_EVENT_RECORD && (op->flags & DLS_OPF_HAS_EVENT);
}

/* The EXIT of op, an operation that only enqueues work: deferred, with no lock. An event record or
 * wait (dls_pol_is_event_order) takes it once, at its thread's first, to register the thread (the
 * model forgets it at the thread's exit); a wait is in doubt when another thread's record of its
 * event is in flight, asked before the claim, so that a record that ended before is claimed before
 * it. */
static void defer(dls_pol_thread *pt, const dls_cuda_op *op)
{
    if (dls_pol_is_event_order(op->kind) && !pt->registered) {
        dls_pol_lock();
        dls_pol_thread_register(pt, op->tid);
        dls_pol_unlock();
    }
    int in_doubt = op->kind == DLS_OP_STREAM_WAIT_EVENT && dls_pol_recording_other(op->event_id);
    uint64_t ticket = 0; /* set by a claim that finds room */
    dls_pol_rec local, *q = dls_pol_defer_claim(&ticket), *r = q ? q : &local;
    dls_pol_rec_of_op(op, r, pt->horizon.h);
    r->in_doubt = in_doubt;
    exit_marks(pt, r, op->correlation_id, op->tid);
    defer_publish(pt, q, ticket, r, op->nested);
    if (records_event(op))
        dls_pol_recording_end();
}

/* The ENTER (delivered while memory is watched) of a launch, copy or set is the op lane's ENTER of
 * the same operation; at the EXIT its record is filled in the queue with the stream as resolved,
 * found (or, at its first sight, added) when the record is applied: the record the op lane builds
 * (test_policy: the_work_lane_defers_what_the_op_lane_would). */
void dls_pol_on_work(const dls_cuda_work *w)
{
    dls_pol_thread *pt = dls_pol_thread_self();
    if (w->phase == DLS_PHASE_ENTER) {
        enter_horizon(pt, w->correlation_id, w->nested);
        if (dls_pol_after_any_due())
            dls_pol_after_due_enter(w->stream);
        dls_pol_access_of_work(&pt->entered, w);
        pt->entered_corr = w->correlation_id;
        stream_enter(pt, &pt->entered, w->stream, w->tid, w->nested, 1);
        return;
    }
    if (pt->legacy_corr == w->correlation_id) {
        dls_pol_access built, *a = &pt->entered; /* its ENTER built it, unless another call came between */
        if (pt->entered_corr != w->correlation_id) {
            dls_pol_access_of_work(&built, w);
            a = &built;
        }
        dls_pol_legacy_verdict(pt, a, w->tid, w->result);
    }
    if (w->result) {
        dls_summary_add(DLS_COUNT_OPS, 1);
        return;
    }
    uint64_t ticket = 0; /* set by a claim that finds room */
    dls_pol_rec local, *q = dls_pol_defer_claim(&ticket), *r = q ? q : &local;
    r->tid = w->tid;
    r->begin = pt->horizon.h;
    r->stream = *w->stream;
    if (pt->entered_corr == w->correlation_id) /* its ENTER built the access */
        dls_pol_entry_store(&r->e, &pt->entered);
    else
        dls_pol_entry_of_work(&r->e, w);
    pt->entered_corr = 0;
    exit_marks(pt, r, w->correlation_id, w->tid);
    defer_publish(pt, q, ticket, r, w->nested);
}

void dls_pol_check_on_begins(uint32_t corr, int nested)
{
    dls_pol_thread *pt = dls_pol_thread_self();
    dls_pol_horizon_enter(&pt->horizon, nested);
    pt->begun_corr = corr;
}

void dls_pol_on_lifetime(int nested)
{
    dls_summary_add(DLS_COUNT_OPS, 1);
    dls_pol_horizon_enter(&dls_pol_thread_self()->horizon, nested);
}

void dls_pol_check_on_lifetime(int nested)
{
    (void)nested; /* the thread's next call stamps its begin (dls_pol_check_on_begins) */
    dls_summary_add(DLS_COUNT_OPS, 1);
}

void dls_pol_on_op(const dls_cuda_op *op)
{
    dls_pol_thread *pt = dls_pol_thread_self();
    if (op->phase == DLS_PHASE_ENTER) {
        enter_horizon(pt, op->correlation_id, op->nested);
        if (records_event(op))
            dls_pol_recording_begin(op->event_id); /* until its EXIT is queued */
        int host_sync = dls_pol_host_sync(op);
        if (dls_pol_after_any_due() && (op->flags & DLS_OPF_HAS_STREAM) && op->kind != DLS_OP_EVENT_RECORD &&
            !host_sync)
            dls_pol_after_due_enter(&op->stream);
        if (op->kind == DLS_OP_HOST_FUNC && (op->flags & DLS_OPF_HAS_STREAM)) {
            dls_pol_hostfn_launch(op);
            return;
        }
        /* a synchronous copy is entered too, so that its capture includes what is injected */
        if (dls_pol_entered(op, dls_pol_g.mode == DLS_MODE_FIX)) {
            dls_pol_access a;
            dls_pol_access_of_op(&a, op);
            stream_enter(pt, &a, &op->stream, op->tid, op->nested, dls_pol_deferrable(op));
        }
        if (dls_pol_kinds[op->kind].forgets_at_enter)
            dls_pol_lifetime_enter(op);
        if (op->kind == DLS_OP_FREE && host_sync)
            dls_pol_watched_free(pt, op);
        if (host_sync)
            dls_pol_sync_enter(pt, op);
        return;
    }
    if (pt->legacy_corr == op->correlation_id) {
        dls_pol_access a;
        dls_pol_access_of_op(&a, op);
        dls_pol_legacy_verdict(pt, &a, op->tid, op->result);
    }
    if (dls_pol_deferrable(op) && op->result == 0) { /* counted in the summary when applied */
        defer(pt, op);
        return;
    }
    dls_summary_add(DLS_COUNT_OPS, 1);
    if (dls_pol_kinds[op->kind].exit_models_nothing) {
        if (dls_pol_g.mode == DLS_MODE_FIX) /* check stamps the thread's next call at its begin */
            dls_pol_horizon_enter(&pt->horizon, op->nested);
        return;
    }
    int host_sync = dls_pol_host_sync(op);
    if (op->result != 0 && !host_sync && !dls_pol_kinds[op->kind].ends_on_error) {
        if (records_event(op))
            dls_pol_recording_end(); /* a failed record changes nothing */
        return;
    }
    uint64_t begin = pt->horizon.h; /* nothing raised it since the call began */
    dls_pol_lock();
    dls_pol_thread_register(pt, op->tid);
    uint64_t end = dls_pol_end_now();
    on_exit_locked(pt, op, (dls_hb_when){.begin = begin, .end = end}, host_sync);
    dls_pol_horizon_raise(&pt->horizon, end + 1, op->nested);
    dls_pol_unlock();
}
