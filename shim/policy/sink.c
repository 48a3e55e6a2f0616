/* The policy's receivers of the observer's operations (see sink.h). Fast path: the ENTER of an
 * operation that touches no watched range costs its access record and a lock-free question to
 * the index; the EXIT of an operation that only enqueues work fills its record in the lock-free
 * queue (no allocation after a stream's first sight). */
#include "sink.h"

#include "../common/config.h"
#include "../cuda/cuda_api.h"
#include "../cuda/drv.h"
#include "../report/summary.h"
#include "access.h"
#include "check.h"
#include "complete.h"
#include "events.h"
#include "exch.h"
#include "fix.h"
#include "graphs.h"
#include "hostfn.h"
#include "index.h"
#include "lock.h"
#include "queue.h"
#include "recording.h"
#include "stream_table.h"
#include "thread.h"

#include <pthread.h>

static pthread_key_t g_thread_key;
static pthread_once_t g_key_once = PTHREAD_ONCE_INIT;

/* Thread exit: the thread id may be reused, so the engine forgets what this one knew. */
static void thread_exit(void *arg)
{
    dls_pol_lock();
    dls_hb_thread_remove(dls_pol_g.hb, (uint64_t)(uintptr_t)arg);
    dls_pol_unlock();
}

static void make_key(void)
{
    pthread_key_create(&g_thread_key, thread_exit);
}

static void register_thread(dls_pol_thread *pt, uint64_t tid)
{
    if (pt->registered)
        return;
    pt->registered = 1;
    pthread_once(&g_key_once, make_key);
    pthread_setspecific(g_thread_key, (void *)(uintptr_t)tid);
}

/* 1 when op is looked at on ENTER: a memory operation on a stream, or (fix) a stream-ordered free,
 * which may hand released memory to other work. */
static int entered(const dls_cuda_op *op)
{
    if (!(op->flags & DLS_OPF_HAS_STREAM))
        return 0;
    if (op->kind == DLS_OP_FREE)
        return (op->flags & DLS_OPF_ASYNC) && dls_pol_g.mode == DLS_MODE_FIX;
    return dls_pol_is_memory_op(op->kind);
}

/* 1 when op makes the host wait for work: a synchronize, a query (complete when it succeeds), a
 * synchronous copy or a synchronous free. */
static int host_sync(const dls_cuda_op *op)
{
    switch (op->kind) {
    case DLS_OP_EVENT_SYNC:
    case DLS_OP_EVENT_QUERY:
    case DLS_OP_STREAM_SYNC:
    case DLS_OP_STREAM_QUERY:
    case DLS_OP_CTX_SYNC:
        return 1;
    case DLS_OP_MEMCPY:
        return !(op->flags & DLS_OPF_ASYNC) && (op->flags & DLS_OPF_HAS_STREAM);
    case DLS_OP_FREE: /* freeing NULL (no range, not conservative) frees nothing and waits for nothing */
        return !(op->flags & DLS_OPF_ASYNC) && (op->nranges || (op->flags & DLS_OPF_CONSERVATIVE));
    default:
        return 0;
    }
}

/* At the delivered ENTER of call corr (nested: ops.h): the thread's horizon catches up with the
 * host clock, unless its begin was stamped already (dls_pol_begins). */
static void enter_horizon(dls_pol_thread *pt, uint32_t corr, int nested)
{
    if (corr == 0 || pt->begun_corr != corr)
        dls_pol_horizon_enter(&pt->horizon, nested);
}

/* At the drain of the lock that the ENTER of a call took: fix learns that the call's body begins
 * after what is applied (it orders at bodies); check judges the call as of its begin. */
static void drained_horizon(dls_pol_thread *pt, int nested)
{
    if (dls_pol_g.mode == DLS_MODE_FIX)
        dls_pol_horizon_raise(&pt->horizon, dls_pol_applied() + 1, nested);
}

/* 1 when op's EXIT only enqueues work on its stream (then it may be deferred). */
static int deferrable(const dls_cuda_op *op)
{
    if (!(op->flags & DLS_OPF_HAS_STREAM))
        return 0;
    switch (op->kind) {
    case DLS_OP_LAUNCH:
    case DLS_OP_MEMSET:
    case DLS_OP_HOST_FUNC:
    case DLS_OP_GRAPH_LAUNCH:
        return 1;
    case DLS_OP_MEMCPY:
    case DLS_OP_FREE:
        return (op->flags & DLS_OPF_ASYNC) != 0;
    default:
        return 0;
    }
}

/* The deferred record of op, made by a call that began at stamp `begin`, its stream to be found
 * when applied. */
static void make_rec(const dls_cuda_op *op, dls_pol_rec *r, uint64_t begin)
{
    r->tid = op->tid;
    r->begin = begin;
    r->stream = op->stream;
    r->after = NULL;
    r->cleared = 0;
    r->e.a.kind = op->kind;
    if (dls_pol_is_memory_op(op->kind)) {
        dls_pol_access a;
        dls_pol_access_of_op(&a, op);
        dls_pol_entry_store(&r->e, &a);
    }
}

/* The capture of what host synchronize op, of a call that began at `begin`, will complete (ENTER;
 * check captures as of the begin, fix what is told by now: see complete.h). */
static uint64_t snap_of(const dls_cuda_op *op, uint64_t begin)
{
    if (dls_pol_g.mode != DLS_MODE_CHECK)
        begin = DLS_HB_NOW;
    dls_pol_stream *st;
    switch (op->kind) {
    case DLS_OP_EVENT_SYNC:
    case DLS_OP_EVENT_QUERY: /* with a record in flight, the call may complete it or the one before */
        return dls_pol_recording_other(op->event_id) ? 0 : dls_pol_snap_event(op->event_id);
    case DLS_OP_STREAM_SYNC:
    case DLS_OP_STREAM_QUERY:
    case DLS_OP_MEMCPY:
        st = (op->flags & DLS_OPF_HAS_STREAM) ? dls_pol_stream_get(&op->stream, op->tid) : NULL;
        return st ? dls_pol_snap_stream(st, begin) : 0;
    case DLS_OP_CTX_SYNC:
        return dls_pol_snap_ctx(op->ctx, begin);
    default: /* a synchronous free waits for its allocation's context only (nothing when that is not
              * known); fix's free_enter first waits for the consumers' pending uses of watched memory
              * on other contexts */
        return op->ctx ? dls_pol_snap_ctx(op->ctx, begin) : 0;
    }
}

/* ENTER of a host synchronize: capture (the EXIT of the same call applies it). */
static void sync_enter(dls_pol_thread *pt, const dls_cuda_op *op)
{
    dls_pol_lock();
    drained_horizon(pt, op->nested);
    register_thread(pt, op->tid);
    dls_pol_snap_drop(pt->snap); /* an earlier ENTER whose EXIT never came */
    pt->snap = snap_of(op, pt->horizon.h);
    pt->sync_corr = op->correlation_id;
    dls_pol_unlock();
}

/* A synchronous copy (lock held): an operation, and the host waited for what its stream had at
 * ENTER (the caller applies that capture) and for the copy itself, with what the copy was ordered
 * after (hb decides how much of that is known when another thread's work on the stream may have
 * been enqueued before the copy, dls_hb_capture_op). */
static void sync_copy(const dls_cuda_op *op, dls_hb_when when)
{
    dls_pol_rec r;
    make_rec(op, &r, when.begin);
    dls_pol_stream *st = dls_pol_stream_get(&op->stream, op->tid);
    uint64_t before = st ? st->last : 0;
    dls_pol_apply(&r, when.end);
    if (!st || st->last == before) /* a stream in a forgotten one's hb slot starts past position 0 */
        return;                    /* not an operation of the stream (captured into a graph, say) */
    uint64_t done = dls_pol_snap_id();
    if (dls_hb_capture_op(dls_pol_g.hb, done, op->tid, st->id, r.begin) == 0)
        dls_pol_snap_complete(done, op->tid, when.end);
    else
        dls_pol_snap_drop(done);
}

/* EXIT of a host synchronize, made by a call of stamps `when` (lock held): a successful one
 * completes its capture. */
static void sync_exit(dls_pol_thread *pt, const dls_cuda_op *op, dls_hb_when when)
{
    uint64_t snap = pt->sync_corr == op->correlation_id ? pt->snap : 0;
    if (snap)
        pt->snap = 0;
    if (op->result != 0) {
        dls_pol_snap_drop(snap);
        return;
    }
    if (op->kind == DLS_OP_MEMCPY)
        sync_copy(op, when);
    dls_pol_snap_complete(snap, op->tid, when.end);
}

/* 1 when the EXIT of op has nothing for the model: a creation (a stream is modelled from its
 * first operation, an event from its first record), a stream's destruction (removed at ENTER:
 * stream_destroy_enter), or a graph's or executable graph's destruction or update (forgotten at
 * ENTER: graph_forget). */
static int exit_models_nothing(const dls_cuda_op *op)
{
    return op->kind == DLS_OP_STREAM_CREATE || op->kind == DLS_OP_EVENT_CREATE || op->kind == DLS_OP_STREAM_DESTROY ||
           op->kind == DLS_OP_GRAPH_DESTROY || op->kind == DLS_OP_GRAPH_EXEC_CHANGED;
}

/* ENTER of a stream's destruction: the stream leaves the legacy rules now. The driver may destroy
 * it before the call's EXIT, and whether a legacy-stream operation enqueued after that waits for
 * its pending work, CUDA does not say. A stream never resolved is not modelled but by its id. */
static void stream_destroy_enter(const dls_cuda_op *op)
{
    if (!(op->flags & DLS_OPF_HAS_STREAM) || !op->stream.resolved)
        return;
    dls_pol_lock();
    dls_pol_stream *st = dls_pol_stream_find(op->stream.id);
    if (st)
        dls_pol_stream_remove(st);
    dls_pol_unlock();
}

/* ENTER of a graph's destruction or an executable graph's destruction or update: what it writes
 * is forgotten now, while the handle is still the caller's. By the call's EXIT the driver may
 * have given the handle to a graph another thread made meanwhile, which would be forgotten
 * instead. */
static void graph_forget(const dls_cuda_op *op)
{
    dls_pol_lock();
    if (op->kind == DLS_OP_GRAPH_DESTROY)
        dls_pol_graph_destroyed(op->graph);
    else
        dls_pol_graph_exec_changed(op->exec);
    dls_pol_unlock();
}

/* The EXIT of op, made by a call of stamps `when`, applied (lock held). */
static void on_exit_locked(dls_pol_thread *pt, const dls_cuda_op *op, dls_hb_when when)
{
    dls_hb *hb = dls_pol_g.hb;
    dls_pol_stream *st;
    uint64_t pos;
    if (host_sync(op)) {
        sync_exit(pt, op, when);
        return;
    }
    if (op->result != 0 && !(op->kind == DLS_OP_CAPTURE_END && op->result == CUDA_ERROR_STREAM_CAPTURE_INVALIDATED))
        return; /* an invalidated capture still ends */
    switch (op->kind) {
    case DLS_OP_EVENT_RECORD:
        st = dls_pol_stream_get(&op->stream, op->tid);
        if (st && !st->capturing && !dls_hb_event_record(hb, op->tid, st->id, op->event_id, when, &pos))
            st->last = pos;
        break;
    case DLS_OP_STREAM_WAIT_EVENT: /* with a record in flight, it may wait for that one or the one before */
        st = dls_pol_stream_get(&op->stream, op->tid);
        if (st && !st->capturing &&
            !(dls_pol_recording_other(op->event_id) ? dls_hb_op(hb, op->tid, st->id, when, &pos)
                                                    : dls_hb_event_wait(hb, op->tid, st->id, op->event_id, when, &pos)))
            st->last = pos;
        break;
    case DLS_OP_EVENT_DESTROY:
        dls_hb_event_remove(hb, op->event_id);
        break;
    case DLS_OP_CAPTURE_BEGIN:
        if ((st = dls_pol_stream_get(&op->stream, op->tid)) && !st->capturing) {
            st->capturing = 1;
            atomic_fetch_add_explicit(&dls_pol_g.ncapturing, 1, memory_order_relaxed);
            dls_pol_graph_capture_begin(st->id);
        }
        break;
    case DLS_OP_CAPTURE_END:
        if ((st = dls_pol_stream_get(&op->stream, op->tid)) && st->capturing) {
            st->capturing = 0;
            atomic_fetch_sub_explicit(&dls_pol_g.ncapturing, 1, memory_order_relaxed);
            dls_pol_graph_capture_end(st->id, op->result == 0 ? op->graph : 0);
        }
        break;
    case DLS_OP_GRAPH_INSTANTIATE:
        dls_pol_graph_instantiated(op->graph, op->exec);
        break;
    default:
        break;
    }
}

/* 1 when the driver says stream s is capturing (asked only while some stream captures: a stream
 * joined to a capture by an event is not seen by the capture calls). No lock held. */
static int joined_capture(const dls_cuda_stream *s)
{
    if (!atomic_load_explicit(&dls_pol_g.ncapturing, memory_order_relaxed))
        return 0;
    CUstreamCaptureStatus cs = CU_STREAM_CAPTURE_STATUS_NONE;
    CUstream h = s->kind == DLS_STREAM_LEGACY       ? CU_STREAM_LEGACY
                 : s->kind == DLS_STREAM_PER_THREAD ? CU_STREAM_PER_THREAD
                                                    : (CUstream)s->handle;
    return dls_drv_stream_is_capturing(h, &cs) == CUDA_SUCCESS && cs != CU_STREAM_CAPTURE_STATUS_NONE;
}

/* What memory_enter's rounds look at: access a of thread tid on stream s. */
typedef struct {
    dls_pol_thread *pt;
    const dls_pol_access *a;
    const dls_cuda_stream *s;
    uint64_t tid;
} use_round_arg;

/* One round of memory_enter (dls_pol_round): the access checked, or its orderings planned. */
static int use_round(dls_pol_plan *plan, void *arg)
{
    use_round_arg *u = arg;
    dls_pol_stream *st = dls_pol_stream_get(u->s, u->tid);
    if (st && st->capturing) {
        dls_pol_capture_use(u->a, st);
    } else if (st && dls_pol_g.mode == DLS_MODE_FIX) {
        if (dls_pol_fix_use(plan, u->a, st) && dls_pol_is_memory_op(u->a->kind)) {
            u->pt->after_corr = u->a->op; /* its EXIT records the after event */
            u->pt->after_st = st;
        }
        dls_pol_fix_reuse(plan, u->a, st);
    } else if (st && st->kind == DLS_STREAM_LEGACY && u->a->op) {
        u->pt->legacy_corr = u->a->op; /* judged at its EXIT (legacy_verdict) */
        u->pt->legacy_st = st;
    } else if (st) {
        dls_pol_check_use(u->a, st, u->tid, u->pt->horizon.h);
    }
    return 0;
}

/* check, at the EXIT of a call of thread tid that returns `result`: the verdict on its
 * legacy-stream access a, which its ENTER left for now (use_round). The legacy rule joins a
 * blocking stream as of the call's begin only if the stream's destruction did not begin before
 * the call ended: CUDA does not say that the legacy stream waits for a destroyed stream's work,
 * and a destruction that another thread begins while the call is under way is seen only now. */
static void legacy_verdict(dls_pol_thread *pt, const dls_pol_access *a, uint64_t tid, int result)
{
    pt->legacy_corr = 0;
    if (result != 0) /* nothing was enqueued */
        return;
    dls_pol_lock();
    dls_pol_check_use(a, pt->legacy_st, tid, pt->horizon.h);
    dls_pol_unlock();
}

/* ENTER of access a (a call of thread tid on stream s; `nested`: ops.h) that may touch a watched
 * range: checked, or ordered in rounds of plans carried out without the lock. */
static void memory_enter(dls_pol_thread *pt, const dls_pol_access *a, const dls_cuda_stream *s, uint64_t tid,
                         int nested)
{
    dls_pol_plan plan;
    dls_pol_plan_init(&plan, tid);
    plan.to_capturing = dls_pol_g.mode == DLS_MODE_FIX && joined_capture(s);
    dls_pol_lock();
    drained_horizon(pt, nested);
    register_thread(pt, tid);
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

/* One round of free_enter (dls_pol_round): the waits for the pending uses of access `arg`. */
static int free_round(dls_pol_plan *plan, void *arg)
{
    dls_pol_fix_free(plan, arg);
    return 0;
}

/* ENTER of synchronous free op that may hand back watched memory: checked for pending uses on
 * other contexts, or (fix) the host waits for the consumer's pending uses of it first, in rounds
 * of plans carried out without the lock. */
static void free_enter(dls_pol_thread *pt, const dls_cuda_op *op)
{
    dls_pol_access a;
    dls_pol_access_of_op(&a, op);
    uint64_t cleared;
    if (dls_pol_index_clears(&a, &cleared))
        return;
    dls_pol_plan plan;
    dls_pol_plan_init(&plan, op->tid);
    dls_pol_lock();
    register_thread(pt, op->tid);
    if (dls_pol_g.mode == DLS_MODE_CHECK)
        dls_pol_check_free(&a, op->ctx, op->tid, pt->horizon.h);
    if (dls_pol_g.mode == DLS_MODE_FIX)
        dls_pol_plan_rounds(&plan, free_round, &a);
    dls_pol_unlock();
}

/* ENTER of an operation about to be enqueued on stream s that changes what the end of s means
 * (not an event record or a host synchronize): the after point due there is recorded now, while
 * it still marks exactly its access, when a use or an ordering still holds it; else dropped. */
static void after_due_enter(const dls_cuda_stream *s)
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

/* ENTER of access a on stream s (see memory_enter): one the index clears goes no further, and
 * when `deferrable` its EXIT is told so (exit_marks); one that may touch is checked or ordered. */
static void stream_enter(dls_pol_thread *pt, const dls_pol_access *a, const dls_cuda_stream *s, uint64_t tid,
                         int nested, int deferrable)
{
    uint64_t cleared;
    if (!dls_pol_index_clears(a, &cleared)) {
        memory_enter(pt, a, s, tid, nested);
    } else if (deferrable) {
        pt->cleared_corr = a->op; /* its EXIT need not ask the index again */
        pt->cleared = cleared;
    }
}

/* What the EXIT of deferred operation corr by thread tid adds to its record: while memory is
 * watched, (fix) the event recorded right after a consumer access, and whether its ENTER found
 * it touching nothing. */
static void exit_marks(dls_pol_thread *pt, dls_pol_rec *r, uint32_t corr, uint64_t tid)
{
    r->after = NULL;
    r->cleared = 0;
    if (!atomic_load_explicit(dls_pol_index_watching(), memory_order_relaxed))
        return;
    if (pt->after_st && pt->after_corr == corr) /* a consumer access (fix) */
        r->after = dls_pol_after_make(pt->after_st, tid);
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

/* The EXIT of op, an operation that only enqueues work: deferred, with no lock. */
static void defer(dls_pol_thread *pt, const dls_cuda_op *op)
{
    uint64_t ticket = 0; /* set by a claim that finds room */
    dls_pol_rec local, *q = dls_pol_defer_claim(&ticket), *r = q ? q : &local;
    make_rec(op, r, pt->horizon.h);
    exit_marks(pt, r, op->correlation_id, op->tid);
    defer_publish(pt, q, ticket, r, op->nested);
}

/* The ENTER (delivered while memory is watched) of a launch, copy or set is the sink's ENTER of
 * the same operation; at the EXIT its record is filled in the queue with the stream as resolved,
 * found (or, at its first sight, added) when the record is applied: the record the sink builds
 * (test_policy: the_work_lane_defers_what_the_sink_would). */
void dls_pol_work(const dls_cuda_work *w)
{
    dls_pol_thread *pt = dls_pol_thread_self();
    if (w->phase == DLS_PHASE_ENTER) {
        enter_horizon(pt, w->correlation_id, w->nested);
        after_due_enter(w->stream);
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
        legacy_verdict(pt, a, w->tid, w->result);
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

void dls_pol_begins(uint32_t corr, int nested)
{
    dls_pol_thread *pt = dls_pol_thread_self();
    dls_pol_horizon_enter(&pt->horizon, nested);
    pt->begun_corr = corr;
}

void dls_pol_call(int nested)
{
    dls_summary_add(DLS_COUNT_OPS, 1);
    dls_pol_horizon_enter(&dls_pol_thread_self()->horizon, nested);
}

void dls_pol_check_call(int nested)
{
    (void)nested; /* the thread's next call stamps its begin (dls_pol_begins) */
    dls_summary_add(DLS_COUNT_OPS, 1);
}

void dls_pol_sink(const dls_cuda_op *op)
{
    dls_pol_thread *pt = dls_pol_thread_self();
    if (op->phase == DLS_PHASE_ENTER) {
        enter_horizon(pt, op->correlation_id, op->nested);
        if (op->kind == DLS_OP_EVENT_RECORD && (op->flags & DLS_OPF_HAS_EVENT))
            dls_pol_recording_begin(op->event_id); /* until its EXIT is applied */
        if ((op->flags & DLS_OPF_HAS_STREAM) && op->kind != DLS_OP_EVENT_RECORD && !host_sync(op))
            after_due_enter(&op->stream);
        if (op->kind == DLS_OP_HOST_FUNC && (op->flags & DLS_OPF_HAS_STREAM)) {
            dls_pol_hostfn_launch(op);
            return;
        }
        if (entered(op)) { /* a synchronous copy too, so that its capture includes what is injected */
            dls_pol_access a;
            dls_pol_access_of_op(&a, op);
            stream_enter(pt, &a, &op->stream, op->tid, op->nested, deferrable(op));
        }
        if (op->kind == DLS_OP_GRAPH_DESTROY || op->kind == DLS_OP_GRAPH_EXEC_CHANGED)
            graph_forget(op);
        if (op->kind == DLS_OP_STREAM_DESTROY)
            stream_destroy_enter(op);
        if (op->kind == DLS_OP_FREE && host_sync(op))
            free_enter(pt, op);
        if (host_sync(op))
            sync_enter(pt, op);
        return;
    }
    if (pt->legacy_corr == op->correlation_id) {
        dls_pol_access a;
        dls_pol_access_of_op(&a, op);
        legacy_verdict(pt, &a, op->tid, op->result);
    }
    if (deferrable(op) && op->result == 0) { /* counted in the summary when applied */
        defer(pt, op);
        return;
    }
    dls_summary_add(DLS_COUNT_OPS, 1);
    if (exit_models_nothing(op)) {
        if (dls_pol_g.mode == DLS_MODE_FIX) /* check stamps the thread's next call at its begin */
            dls_pol_horizon_enter(&pt->horizon, op->nested);
        return;
    }
    int recording = op->kind == DLS_OP_EVENT_RECORD && (op->flags & DLS_OPF_HAS_EVENT);
    if (op->result != 0 && !host_sync(op) && op->kind != DLS_OP_CAPTURE_END) {
        if (recording)
            dls_pol_recording_end();
        return;
    }
    uint64_t begin = pt->horizon.h; /* nothing raised it since the call began */
    dls_pol_lock();
    register_thread(pt, op->tid);
    uint64_t end = dls_pol_end_now();
    on_exit_locked(pt, op, (dls_hb_when){.begin = begin, .end = end});
    if (host_sync(op) && atomic_load_explicit(&dls_pol_g.nhost, memory_order_relaxed))
        dls_pol_check_host(); /* watched pages whose producer's writes it completed */
    if (recording)
        dls_pol_recording_end(); /* after the record is in the model */
    dls_pol_horizon_raise(&pt->horizon, end + 1, op->nested);
    dls_pol_unlock();
}
