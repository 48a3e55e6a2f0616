/* The host synchronizes' ENTER and EXIT (see host_sync.h). */
#include "host_sync.h"

#include "check.h"
#include "complete.h"
#include "lifetime.h"
#include "lock.h"
#include "queue.h"
#include "recording.h"
#include "stream_table.h"

#include "../common/config.h"

/* The capture of what host synchronize op, of a call that began at `begin`, will complete (ENTER;
 * check captures as of the begin, fix what is told by now: see complete.h). */
static uint64_t snap_of(const dls_cuda_op *op, uint64_t begin) DLS_REQUIRES(dls_pol_g.lock)
{
    if (dls_pol_g.mode != DLS_MODE_CHECK)
        begin = DLS_HB_NOW;
    dls_pol_stream *st;
    switch (dls_pol_kinds[op->kind].waits) {
    case DLS_POL_WAITS_EVENT: /* with a record in flight, the call may complete it or the one before */
        return dls_pol_recording_other(op->event_id) ? 0 : dls_pol_snap_event(op->event_id);
    case DLS_POL_WAITS_STREAM:
        st = (op->flags & DLS_OPF_HAS_STREAM) ? dls_pol_stream_get(&op->stream, op->tid) : NULL;
        return st ? dls_pol_snap_stream(st, begin) : 0;
    case DLS_POL_WAITS_CONTEXT:
        return dls_pol_snap_ctx(op->ctx, begin);
    case DLS_POL_WAITS_ALLOCATION: /* a synchronous free waits for its allocation's context only (nothing
                                    * when that is not known); fix's free_enter first waits for the
                                    * consumers' pending uses of watched memory on other contexts */
        return op->ctx ? dls_pol_snap_ctx(op->ctx, begin) : 0;
    default: /* not a host synchronize */
        return 0;
    }
}

void dls_pol_sync_enter(dls_pol_thread *pt, const dls_cuda_op *op)
{
    dls_pol_lock();
    dls_pol_horizon_drained(&pt->horizon, op->nested);
    dls_pol_thread_register(pt, op->tid);
    dls_pol_snap_drop(pt->snap); /* an earlier ENTER whose EXIT never came */
    pt->snap = snap_of(op, pt->horizon.h);
    pt->sync_corr = op->correlation_id;
    dls_pol_unlock();
}

/* A synchronous copy (lock held): an operation, and the host waited for what its stream had at
 * ENTER (the caller applies that capture) and for the copy itself, with what the copy was ordered
 * after (hb decides how much of that is known when another thread's work on the stream may have
 * been enqueued before the copy, dls_hb_capture_op). */
static void sync_copy(const dls_cuda_op *op, dls_hb_when when) DLS_REQUIRES(dls_pol_g.lock)
{
    dls_pol_rec r;
    dls_pol_rec_of_op(op, &r, when.begin);
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

void dls_pol_sync_exit(dls_pol_thread *pt, const dls_cuda_op *op, dls_hb_when when)
{
    uint64_t snap = pt->sync_corr == op->correlation_id ? pt->snap : 0;
    if (snap)
        pt->snap = 0;
    if (op->result != 0) {
        dls_pol_snap_drop(snap);
    } else {
        if (op->kind == DLS_OP_MEMCPY)
            sync_copy(op, when);
        dls_pol_snap_complete(snap, op->tid, when.end);
    }
    if (atomic_load_explicit(&dls_pol_g.nhost, memory_order_relaxed))
        dls_pol_check_host(); /* watched pages whose producer's writes it completed */
}
