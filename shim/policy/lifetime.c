/* Lifetimes and captures as the receivers see them (see lifetime.h). */
#include "lifetime.h"

#include "graphs.h"
#include "lock.h"
#include "stream_table.h"
#include "superseded.h"

#include "../cuda/drv.h"

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

void dls_pol_thread_watch(dls_pol_thread *pt, uint64_t tid)
{
    pt->registered = 1;
    pthread_once(&g_key_once, make_key);
    pthread_setspecific(g_thread_key, (void *)(uintptr_t)tid);
}

/* ENTER of a stream's destruction: the stream leaves the legacy rules now. The driver may destroy
 * it before the call's EXIT, and whether a legacy-stream operation enqueued after that waits for
 * its pending work, CUDA does not say. A stream never resolved is not modelled but by its id. */
static void stream_destroy_enter(const dls_cuda_op *op)
{
    if (!(op->flags & DLS_OPF_HAS_STREAM) || !op->stream.resolved)
        return;
    dls_pol_lock();
    dls_pol_stream_reap(); /* before this thread finds a stream */
    dls_pol_stream *st = dls_pol_stream_find(op->stream.id);
    if (st) {
        dls_pol_stream_remove(st);
        dls_pol_forget_superseded();
    }
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

void dls_pol_lifetime_enter(const dls_cuda_op *op)
{
    if (op->kind == DLS_OP_STREAM_DESTROY)
        stream_destroy_enter(op);
    else
        graph_forget(op);
}

void dls_pol_lifetime_exit(const dls_cuda_op *op)
{
    dls_pol_stream *st;
    if (op->result != 0 && !(op->kind == DLS_OP_CAPTURE_END && op->result == CUDA_ERROR_STREAM_CAPTURE_INVALIDATED))
        return; /* an invalidated capture still ends */
    switch (op->kind) {
    case DLS_OP_EVENT_DESTROY:
        dls_hb_event_remove(dls_pol_g.hb, op->event_id);
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

int dls_pol_driver_capturing(const dls_cuda_stream *s)
{
    CUstreamCaptureStatus cs = CU_STREAM_CAPTURE_STATUS_NONE;
    CUstream h = s->kind == DLS_STREAM_LEGACY       ? CU_STREAM_LEGACY
                 : s->kind == DLS_STREAM_PER_THREAD ? CU_STREAM_PER_THREAD
                                                    : (CUstream)s->handle;
    return dls_drv_stream_is_capturing(h, &cs) == CUDA_SUCCESS && cs != CU_STREAM_CAPTURE_STATUS_NONE;
}
