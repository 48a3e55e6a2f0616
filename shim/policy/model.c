/* The CUDA operation sink: every observed operation becomes hb engine calls, ring entries and
 * consumer accesses; operations that may touch an exchanged tensor are checked (check) or
 * ordered (fix) at ENTER, after asking whether host-function marks show the producer's work
 * complete, and so (fix) are those that reuse released memory, stream-ordered frees included.
 * A host-function launch records its mark at ENTER. See pol.h for the model.
 *
 * Fast path: ENTER of an operation that touches no watched range costs a kind test and a
 * bounding-box test without the lock; EXIT takes the lock for the hb operation and one ring
 * write (no allocation after a stream's first sight). */
#include "pol.h"

#include "../common/config.h"
#include "../cuda/cuda_api.h"
#include "../report/summary.h"

#include <pthread.h>

static pthread_key_t g_thread_key;
static pthread_once_t g_key_once = PTHREAD_ONCE_INIT;
static __thread int t_registered;

/* Thread exit: the thread id may be reused, so the engine forgets what this one knew. */
static void thread_exit(void *arg)
{
    pthread_mutex_lock(&dls_pol_g.lock);
    dls_hb_thread_remove(dls_pol_g.hb, (uint64_t)(uintptr_t)arg);
    pthread_mutex_unlock(&dls_pol_g.lock);
}

static void make_key(void)
{
    pthread_key_create(&g_thread_key, thread_exit);
}

static void register_thread(uint64_t tid)
{
    if (t_registered)
        return;
    t_registered = 1;
    pthread_once(&g_key_once, make_key);
    pthread_setspecific(g_thread_key, (void *)(uintptr_t)tid);
}

static int is_memory_op(dls_op_kind k)
{
    return k == DLS_OP_LAUNCH || k == DLS_OP_MEMCPY || k == DLS_OP_MEMSET || k == DLS_OP_GRAPH_LAUNCH;
}

/* 1 when op is looked at on ENTER: a memory operation on a stream, or (fix) a stream-ordered free,
 * which may hand released memory to other work. */
static int entered(const dls_cuda_op *op)
{
    if (!(op->flags & DLS_OPF_HAS_STREAM))
        return 0;
    if (op->kind == DLS_OP_FREE)
        return (op->flags & DLS_OPF_ASYNC) && dls_pol_g.mode == DLS_MODE_FIX;
    return is_memory_op(op->kind);
}

/* An operation enqueued on a stream: hb op, ring entry, consumer accesses (none while the stream
 * captures: the work is recorded into a graph, not run). */
static void enqueue(const dls_cuda_op *op)
{
    dls_pol_stream *st = dls_pol_stream_get(&op->stream, op->tid);
    uint64_t pos;
    if (!st || st->capturing || dls_hb_op(dls_pol_g.hb, op->tid, st->id, op->correlation_id, &pos))
        return;
    st->last = pos;
    if (!is_memory_op(op->kind))
        return;
    dls_pol_ring_append(st, op, pos);
    if (dls_pol_may_touch(op))
        for (dls_pol_x *x = dls_pol_g.live; x; x = x->next)
            if (dls_pol_op_touches(op, x->lo, x->hi))
                dls_pol_x_note_access(x, st->id, pos, dls_pol_op_name(op));
    if (op->kind == DLS_OP_MEMCPY && !(op->flags & DLS_OPF_ASYNC)) { /* synchronous copy */
        dls_hb_sync_stream(dls_pol_g.hb, op->tid, st->id);
        dls_pol_stream_done(st, pos);
    }
}

static void sync_stream(const dls_cuda_op *op)
{
    dls_pol_stream *st = dls_pol_stream_get(&op->stream, op->tid);
    if (st && !dls_hb_sync_stream(dls_pol_g.hb, op->tid, st->id))
        dls_pol_stream_done(st, st->last);
}

static void on_exit_locked(const dls_cuda_op *op)
{
    dls_hb *hb = dls_pol_g.hb;
    dls_pol_stream *st;
    uint64_t pos;
    switch (op->kind) {
    case DLS_OP_LAUNCH:
    case DLS_OP_MEMCPY:
    case DLS_OP_MEMSET:
    case DLS_OP_HOST_FUNC:
    case DLS_OP_GRAPH_LAUNCH:
        if (op->flags & DLS_OPF_HAS_STREAM)
            enqueue(op);
        break;
    case DLS_OP_FREE:
        if ((op->flags & DLS_OPF_ASYNC) && (op->flags & DLS_OPF_HAS_STREAM)) {
            enqueue(op);
        } else { /* cuMemFree waits for the device's work before it returns */
            dls_hb_sync_all(hb, op->tid);
            dls_pol_streams_done_ctx(0);
        }
        break;
    case DLS_OP_EVENT_RECORD:
        st = dls_pol_stream_get(&op->stream, op->tid);
        if (st && !st->capturing && !dls_hb_event_record(hb, op->tid, st->id, op->event_id, op->correlation_id, &pos)) {
            st->last = pos;
            dls_pol_event_note(op->event_id, st->id, pos);
        }
        break;
    case DLS_OP_STREAM_WAIT_EVENT:
        st = dls_pol_stream_get(&op->stream, op->tid);
        if (st && !st->capturing && !dls_hb_event_wait(hb, op->tid, st->id, op->event_id, op->correlation_id, &pos))
            st->last = pos;
        break;
    case DLS_OP_EVENT_SYNC:
    case DLS_OP_EVENT_QUERY: /* EXIT with result 0: complete */
        dls_hb_sync_event(hb, op->tid, op->event_id);
        dls_pol_event_done(op->event_id);
        break;
    case DLS_OP_STREAM_SYNC:
    case DLS_OP_STREAM_QUERY:
        sync_stream(op);
        break;
    case DLS_OP_CTX_SYNC:
        dls_hb_sync_context(hb, op->tid, (uint64_t)op->ctx);
        dls_pol_streams_done_ctx(op->ctx);
        break;
    case DLS_OP_STREAM_CREATE:
        if (op->flags & DLS_OPF_HAS_STREAM)
            dls_pol_stream_get(&op->stream, op->tid);
        break;
    case DLS_OP_STREAM_DESTROY:
        st = (op->flags & DLS_OPF_HAS_STREAM) && op->stream.resolved ? dls_pol_stream_find(op->stream.id) : NULL;
        if (st && !st->removed && !dls_hb_stream_remove(hb, st->id))
            st->removed = 1;
        break;
    case DLS_OP_EVENT_DESTROY:
        dls_hb_event_remove(hb, op->event_id);
        break;
    case DLS_OP_CAPTURE_BEGIN:
        if ((st = dls_pol_stream_get(&op->stream, op->tid)) && !st->capturing) {
            st->capturing = 1;
            dls_pol_g.ncapturing++;
        }
        break;
    case DLS_OP_CAPTURE_END:
        if ((st = dls_pol_stream_get(&op->stream, op->tid)) && st->capturing) {
            st->capturing = 0;
            dls_pol_g.ncapturing--;
        }
        break;
    default:
        break;
    }
}

void dls_pol_sink(const dls_cuda_op *op, void *user)
{
    (void)user;
    if (op->phase == DLS_PHASE_ENTER) {
        if (op->kind == DLS_OP_HOST_FUNC && (op->flags & DLS_OPF_HAS_STREAM)) {
            dls_pol_hostfn_launch(op);
            return;
        }
        if (!entered(op) || !dls_pol_may_touch(op))
            return;
        pthread_mutex_lock(&dls_pol_g.lock);
        register_thread(op->tid);
        dls_pol_stream *st = dls_pol_stream_get(&op->stream, op->tid);
        dls_pol_hostfn_ask ask;
        if (st && !st->capturing && dls_pol_hostfn_wanted(op, st, op->tid, &ask)) {
            pthread_mutex_unlock(&dls_pol_g.lock); /* the driver is asked with no lock held */
            dls_pol_hostfn_query(&ask);
            pthread_mutex_lock(&dls_pol_g.lock);
            dls_pol_hostfn_learn(&ask, op->tid);
        }
        if (st && st->capturing)
            dls_pol_capture_use(op, st);
        else if (st) {
            if (dls_pol_g.mode == DLS_MODE_FIX) {
                dls_pol_fix_op(op, st, op->tid);
                dls_pol_fix_reuse(op, st, op->tid);
            } else
                dls_pol_check_op(op, st, op->tid);
        }
        pthread_mutex_unlock(&dls_pol_g.lock);
        return;
    }
    dls_summary_add(DLS_COUNT_OPS, 1);
    if (op->result != 0 && !(op->kind == DLS_OP_CAPTURE_END && op->result == CUDA_ERROR_STREAM_CAPTURE_INVALIDATED))
        return; /* an invalidated capture still ends */
    pthread_mutex_lock(&dls_pol_g.lock);
    register_thread(op->tid);
    on_exit_locked(op);
    pthread_mutex_unlock(&dls_pol_g.lock);
}
