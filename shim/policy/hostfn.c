/* Observed completion through host functions (see hostfn.h).
 *
 * A mark is one event of the shim's own, recorded on a stream at the ENTER of a host-function
 * launch there, just before the host function H is enqueued. H starts only once the mark is
 * complete, and the mark completes only once everything enqueued before it has. The hb engine
 * models the mark as an event record told only after the real record was made, as a call that
 * began when the launch planned it and ended after the record: until then no other thread can be
 * ordered through it (a legacy-stream mark would otherwise join every blocking stream before the
 * driver's legacy stream holds it), and its capture holds only what was enqueued before it began.
 * A mark goes FREE -> RECORDING (the launching thread records it, no lock held, hb not told) ->
 * LIVE (told, queryable), and back to FREE when evicted, oldest first, by a
 * later launch. A LIVE mark is pinned while a thread queries it without the lock, and a pinned mark
 * is never evicted, so its event is never re-recorded or destroyed under a query. A mark seen
 * complete stays so: later threads learn it without asking the driver.
 *
 * Every function but dls_pol_hostfn_launch and dls_pol_hostfn_query runs with dls_pol_g.lock
 * held; those two make their CUDA calls with no dlsync lock held. */
#include "hostfn.h"

#include "../cuda/drv.h"
#include "../report/warn.h"
#include "access.h"
#include "check.h"
#include "complete.h"
#include "exch.h"
#include "queue.h"
#include "lock.h"
#include "ring.h"
#include "stream_table.h"

/* A thread id no kernel thread has: the engine's thread used to ask what a mark's completion
 * would order. */
#define PROBE_THREAD UINT64_MAX

typedef enum { MARK_FREE = 0, MARK_RECORDING, MARK_LIVE } mark_state;

typedef dls_pol_hostfn_mark mark;

/* The marks live in the policy's state (types.h), which one reset clears. */
static mark *const g_marks = dls_pol_g.hostfn.marks;

/* A FREE slot, or the oldest unpinned LIVE one (its hb event forgotten); -1 when all are busy. */
static int reserve(void)
{
    int best = -1;
    for (int i = 0; i < DLS_POL_HOSTFN; i++) {
        const mark *m = &g_marks[i];
        if (m->state == MARK_FREE)
            return i;
        if (m->state == MARK_LIVE && !m->pins && (best < 0 || m->age < g_marks[best].age))
            best = i;
    }
    if (best >= 0) {
        dls_hb_event_remove(dls_pol_g.hb, g_marks[best].evid);
        g_marks[best].state = MARK_FREE;
        dls_pol_g.hostfn.nlive--;
    }
    return best;
}

/* Records the mark's event (*ev of context *evctx, replaced when the stream's context differs)
 * on stream `handle` of context `sctx`, with that context current; refuses a stream that is
 * capturing (asked only while some stream captures). No lock held. Returns 1 when recorded. */
static int record_mark(uintptr_t handle, uintptr_t sctx, unsigned ncapturing, CUevent *ev, CUcontext *evctx)
{
    int pushed = 0, ok = 0;
    if (dls_drv_ctx_enter((CUcontext)sctx, &pushed) != CUDA_SUCCESS)
        return 0;
    CUstreamCaptureStatus cs = CU_STREAM_CAPTURE_STATUS_NONE;
    CUcontext want = (CUcontext)sctx;
    if (!want)
        dls_drv_ctx_get_current(&want);
    if (ncapturing &&
        (dls_drv_stream_is_capturing((CUstream)handle, &cs) != CUDA_SUCCESS || cs != CU_STREAM_CAPTURE_STATUS_NONE))
        goto out;
    if (*ev && *evctx != want) {
        dls_drv_event_destroy(*ev);
        *ev = NULL;
    }
    *evctx = want;
    CUresult r = CUDA_SUCCESS;
    if (!*ev && (r = dls_drv_event_create(ev, CU_EVENT_DISABLE_TIMING)) != CUDA_SUCCESS)
        *ev = NULL;
    if (*ev)
        r = dls_drv_event_record(*ev, (CUstream)handle);
    ok = r == CUDA_SUCCESS;
    if (!ok)
        dls_warn_once("hostfn-mark",
                      "the shim could not record its event before a host function (CUDA error "
                      "%d); work a host thread waited for through a host function may be reported as racy",
                      (int)r);
out:
    dls_drv_ctx_leave(pushed);
    return ok;
}

void dls_pol_hostfn_launch(const dls_cuda_op *op)
{
    dls_pol_lock();
    dls_pol_stream *st = dls_pol_stream_get(&op->stream, op->tid);
    int slot = st && !st->capturing && dls_pol_g.hb ? reserve() : -1;
    if (slot < 0) {
        dls_pol_unlock();
        return;
    }
    mark *m = &g_marks[slot];
    /* RECORDING keeps the slot; hb learns of the mark only once its record is made (below). */
    *m = (mark){.state = MARK_RECORDING, .stream = st->id, .ev = m->ev, .ctx = m->ctx};
    uintptr_t handle = st->handle, sctx = st->ctx;
    CUevent ev = m->ev;
    CUcontext evctx = m->ctx;
    uint64_t planned = dls_pol_applied() + 1; /* every call applied now precedes the record */
    unsigned ncapturing = atomic_load_explicit(&dls_pol_g.ncapturing, memory_order_relaxed);
    dls_pol_unlock();
    int ok = record_mark(handle, sctx, ncapturing, &ev, &evctx);
    dls_pol_lock();
    m->ev = ev;
    m->ctx = evctx;
    st = ok ? dls_pol_stream_find(m->stream) : NULL;
    m->evid = st ? dls_pol_snap_id() : 0;
    dls_hb_when when = {.begin = planned, .end = dls_pol_end_now()};
    uint64_t pos;
    if (st && !dls_hb_event_record(dls_pol_g.hb, op->tid, st->id, m->evid, when, &pos)) {
        st->last = pos;
        m->state = MARK_LIVE;
        m->age = ++dls_pol_g.hostfn.mark_age;
        dls_pol_g.hostfn.nlive++;
    } else {
        m->state = MARK_FREE;
    }
    dls_pol_unlock();
}

/* 1 when a host thread that saw m complete would be ordered after position f. */
static int mark_after(const mark *m, const dls_hb_epoch *f)
{
    int o = 0;
    dls_hb *hb = dls_pol_g.hb;
    dls_hb_thread_remove(hb, PROBE_THREAD);
    if (!dls_hb_sync_event(hb, PROBE_THREAD, m->evid) &&
        dls_hb_ordered(hb, PROBE_THREAD, DLS_POL_HOST_STREAM, f->stream, f->pos, &o))
        o = 0;
    dls_hb_thread_remove(hb, PROBE_THREAD);
    return o;
}

/* Thread tid observed m complete. */
static void learn(mark *m, uint64_t tid) DLS_REQUIRES(dls_pol_g.lock)
{
    m->complete = 1;
    dls_hb_sync_event(dls_pol_g.hb, tid, m->evid);
    dls_pol_stream *s = dls_pol_stream_find(m->stream);
    if (s)
        dls_pol_stream_done(s, dls_hb_event_covers(dls_pol_g.hb, m->evid, m->stream), dls_pol_end_now());
}

/* Adds mark i to ask (pinned) unless it is there already. */
static void ask_add(dls_pol_hostfn_ask *ask, int i)
{
    for (unsigned k = 0; k < ask->n; k++)
        if (ask->slot[k] == i)
            return;
    g_marks[i].pins++;
    ask->slot[ask->n] = i;
    ask->ev[ask->n] = g_marks[i].ev;
    ask->ctx[ask->n] = g_marks[i].ctx;
    ask->complete[ask->n] = 0;
    ask->n++;
}

/* For frontier entry f that the next operation is not ordered after: learns a complete mark after
 * it, or else adds the LIVE marks after it to ask. */
static void marks_after(const dls_hb_epoch *f, dls_pol_hostfn_ask *ask, uint64_t tid) DLS_REQUIRES(dls_pol_g.lock)
{
    for (int i = 0; i < DLS_POL_HOSTFN; i++) {
        mark *m = &g_marks[i];
        if (m->state != MARK_LIVE || !mark_after(m, f))
            continue;
        if (m->complete) {
            learn(m, tid);
            return;
        }
        ask_add(ask, i);
    }
}

int dls_pol_hostfn_wanted(const dls_pol_access *a, const dls_pol_stream *st, uint64_t tid, dls_pol_hostfn_ask *ask)
{
    ask->n = 0;
    if (!dls_pol_g.hostfn.nlive)
        return 0;
    for (dls_pol_x *x = dls_pol_g.live; x; x = x->next) {
        if (dls_pol_x_is_ordered(x, st->id) || !dls_pol_touches(a, x->lo, x->lo, x->hi))
            continue;
        for (unsigned i = 0; i < x->nfront; i++)
            if (!dls_pol_ordered(tid, st->id, DLS_HB_NOW, &x->front[i].at))
                marks_after(&x->front[i].at, ask, tid);
    }
    return ask->n > 0;
}

void dls_pol_hostfn_query(dls_pol_hostfn_ask *ask)
{
    for (unsigned k = 0; k < ask->n; k++) {
        int pushed = 0;
        if (dls_drv_ctx_enter(ask->ctx[k], &pushed) != CUDA_SUCCESS)
            continue;
        ask->complete[k] = dls_drv_event_query(ask->ev[k]) == CUDA_SUCCESS;
        dls_drv_ctx_leave(pushed);
    }
}

void dls_pol_hostfn_learn(const dls_pol_hostfn_ask *ask, uint64_t tid)
{
    for (unsigned k = 0; k < ask->n; k++) {
        mark *m = &g_marks[ask->slot[k]];
        m->pins--;
        if (ask->complete[k])
            learn(m, tid);
    }
}
