/* drv_graph.c: capture sequences and graphs: the capture state behind drv_capture.c, graph
 * objects (cuGraphInstantiateWithFlags, cuGraphExecDestroy, cuGraphDestroy) and what a graph
 * launch enqueues.
 *
 * Models (real CUDA's rules that the shim depends on):
 * - cuStreamBeginCapture starts a capture sequence on a stream, in any mode; the legacy stream
 *   cannot capture (CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED), nor a stream already capturing
 *   (CUDA_ERROR_ILLEGAL_STATE). While it captures, work enqueued on it (kernels, copies, sets,
 *   host functions) becomes graph nodes, in order, and does not run. An event record marks the
 *   event as recorded in the capture: host waits on it fail with CUDA_ERROR_CAPTURED_EVENT.
 *   A wait on a record of the same capture adds nothing (a single-stream capture is a chain);
 *   on a record made outside capture it is an external event wait node with
 *   CU_EVENT_WAIT_EXTERNAL, and without that flag CUDA_ERROR_STREAM_CAPTURE_ISOLATION (the CUDA
 *   programming guide: waiting on a non-captured event from a capturing stream without
 *   cudaEventWaitExternal is invalid); on another capture's record CUDA_ERROR_STREAM_CAPTURE_MERGE.
 * - Host synchronization of a capturing stream (synchronize, query, synchronous copy) fails with
 *   CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED. Every capture error invalidates the sequence: later
 *   work is dropped, cuStreamIsCapturing answers INVALIDATED, and cuStreamEndCapture ends it
 *   with CUDA_ERROR_STREAM_CAPTURE_INVALIDATED and no graph.
 * - cuStreamEndCapture must come from the thread that began the capture unless its mode is
 *   RELAXED (CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD); on a stream not capturing it fails with
 *   CUDA_ERROR_ILLEGAL_STATE.
 * - cuGraphInstantiateWithFlags copies the nodes (kernel arguments as captured); cuGraphLaunch
 *   enqueues them in capture order on the launch stream as that stream's work (an external wait
 *   node waits for its event's latest record as of the launch). Launching into a capturing stream
 *   captures the nodes there.
 * Does not model: cross-stream capture (a stream outside capture waiting on a captured event,
 * the fork that would join it, gets CUDA_ERROR_NOT_SUPPORTED), the modes' restrictions on unsafe
 * calls from other threads, the legacy stream's CUDA_ERROR_STREAM_CAPTURE_IMPLICIT, context
 * synchronization during capture, graphs built node by node, graph update, instantiation flags
 * (accepted, ignored), concurrent launches of one executable graph on several streams. */
#include <stdlib.h>
#include <string.h>

#include "cudasim.h"
#include "sim.h"

static unsigned long long g_next_capture; /* guarded by the scheduler lock */
static atomic_ullong g_next_exec;

static void free_nodes(dls_sim_op *op);

void dls_sim_capture_add_locked(struct CUstream_st *s, dls_sim_op *op)
{
    dls_sim_op_drop_deps_locked(op);
    op->next = NULL;
    if (s->cap->invalidated) {
        dls_sim_op_free(op);
        return;
    }
    struct CUgraph_st *g = s->cap->graph;
    if (g->tail)
        g->tail->next = op;
    else
        g->head = op;
    g->tail = op;
    g->nnodes++;
}

void dls_sim_capture_drop_locked(struct CUstream_st *s)
{
    free_nodes(s->cap->graph->head);
    free(s->cap->graph);
    free(s->cap);
    s->cap = NULL;
}

CUresult dls_sim_capture_invalidate_locked(struct CUstream_st *s, CUresult err)
{
    s->cap->invalidated = 1;
    return err;
}

CUresult dls_sim_capture_forbids_sync(struct CUstream_st *s)
{
    dls_sim_lock();
    CUresult r = s->cap ? dls_sim_capture_invalidate_locked(s, CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED) : CUDA_SUCCESS;
    dls_sim_unlock();
    return r;
}

static void free_nodes(dls_sim_op *op)
{
    while (op) {
        dls_sim_op *next = op->next;
        dls_sim_op_free(op);
        op = next;
    }
}

CUresult dls_sim_capture_begin(struct CUstream_st *s, CUstreamCaptureMode mode)
{
    if (mode != CU_STREAM_CAPTURE_MODE_GLOBAL && mode != CU_STREAM_CAPTURE_MODE_THREAD_LOCAL &&
        mode != CU_STREAM_CAPTURE_MODE_RELAXED)
        return CUDA_ERROR_INVALID_VALUE;
    if (s->kind == SIM_STREAM_LEGACY)
        return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    dls_sim_capture *c = calloc(1, sizeof *c);
    struct CUgraph_st *g = calloc(1, sizeof *g);
    if (!c || !g) {
        free(c);
        free(g);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    g->magic = SIM_MAGIC_GRAPH;
    c->graph = g;
    c->mode = mode;
    c->thread = pthread_self();
    dls_sim_lock();
    if (s->cap) {
        dls_sim_unlock();
        free(c);
        free(g);
        return CUDA_ERROR_ILLEGAL_STATE;
    }
    c->id = ++g_next_capture;
    s->cap = c;
    dls_sim_unlock();
    return CUDA_SUCCESS;
}

CUresult dls_sim_capture_end(struct CUstream_st *s, CUgraph *graph)
{
    if (!graph)
        return CUDA_ERROR_INVALID_VALUE;
    dls_sim_lock();
    dls_sim_capture *c = s->cap;
    if (!c) {
        dls_sim_unlock();
        return CUDA_ERROR_ILLEGAL_STATE;
    }
    if (c->mode != CU_STREAM_CAPTURE_MODE_RELAXED && !pthread_equal(c->thread, pthread_self())) {
        dls_sim_unlock();
        return CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD;
    }
    s->cap = NULL;
    dls_sim_unlock();
    CUresult r = CUDA_SUCCESS;
    if (c->invalidated) {
        free_nodes(c->graph->head);
        free(c->graph);
        *graph = NULL;
        r = CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
    } else {
        *graph = c->graph;
    }
    free(c);
    return r;
}

void dls_sim_capture_status(struct CUstream_st *s, CUstreamCaptureStatus *st, cuuint64_t *id, CUgraph *graph)
{
    dls_sim_lock();
    const dls_sim_capture *c = s->cap;
    if (st)
        *st = !c               ? CU_STREAM_CAPTURE_STATUS_NONE
              : c->invalidated ? CU_STREAM_CAPTURE_STATUS_INVALIDATED
                               : CU_STREAM_CAPTURE_STATUS_ACTIVE;
    if (id)
        *id = c ? c->id : 0;
    if (graph)
        *graph = c ? c->graph : NULL;
    dls_sim_unlock();
}

/* A copy of node n, owning its own kernel argument copies. */
static dls_sim_op *clone_node(const dls_sim_op *n)
{
    dls_sim_op *op = dls_sim_op_new(n->kind);
    op->u = n->u;
    if (n->kind == SIM_OP_KERNEL) {
        const struct CUfunc_st *k = n->u.k.f;
        op->u.k.buf = malloc(k->argbytes ? k->argbytes : 1);
        op->u.k.args = calloc(k->nparams ? k->nparams : 1, sizeof(void *));
        if (!op->u.k.buf || !op->u.k.args)
            abort();
        memcpy(op->u.k.buf, n->u.k.buf, k->argbytes);
        for (unsigned i = 0; i < k->nparams; i++)
            op->u.k.args[i] = op->u.k.buf + k->offsets[i];
    }
    return op;
}

static CUresult instantiate(CUgraphExec *ph, CUgraph g)
{
    if (!ph || !g || g->magic != SIM_MAGIC_GRAPH)
        return CUDA_ERROR_INVALID_VALUE;
    struct CUgraphExec_st *x = calloc(1, sizeof *x);
    if (!x)
        return CUDA_ERROR_OUT_OF_MEMORY;
    x->magic = SIM_MAGIC_EXEC;
    x->id = atomic_fetch_add(&g_next_exec, 1) + 1;
    dls_sim_op **tail = &x->head;
    for (const dls_sim_op *n = g->head; n; n = n->next) {
        *tail = clone_node(n);
        tail = &(*tail)->next;
    }
    x->nnodes = g->nnodes;
    *ph = x;
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuGraphInstantiateWithFlags(CUgraphExec *phGraphExec, CUgraph hGraph, unsigned long long flags)
{
    cuGraphInstantiateWithFlags_params p = {phGraphExec, hGraph, flags};
    DRV_CALL(cuGraphInstantiateWithFlags, &p, NULL, instantiate(phGraphExec, hGraph));
}

static CUresult exec_destroy(CUgraphExec x)
{
    if (!x || x->magic != SIM_MAGIC_EXEC)
        return CUDA_ERROR_INVALID_VALUE;
    x->magic = 0;
    free_nodes(x->head);
    free(x);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuGraphExecDestroy(CUgraphExec hGraphExec)
{
    cuGraphExecDestroy_params p = {hGraphExec};
    DRV_CALL(cuGraphExecDestroy, &p, NULL, exec_destroy(hGraphExec));
}

static CUresult graph_destroy(CUgraph g)
{
    if (!g || g->magic != SIM_MAGIC_GRAPH)
        return CUDA_ERROR_INVALID_VALUE;
    g->magic = 0;
    free_nodes(g->head);
    free(g);
    return CUDA_SUCCESS;
}

CUresult CUDAAPI cuGraphDestroy(CUgraph hGraph)
{
    cuGraphDestroy_params p = {hGraph};
    DRV_CALL(cuGraphDestroy, &p, NULL, graph_destroy(hGraph));
}

CUresult dls_sim_graph_launch(CUgraphExec x, struct CUstream_st *s)
{
    if (!x || x->magic != SIM_MAGIC_EXEC)
        return CUDA_ERROR_INVALID_VALUE;
    dls_sim_lock();
    unsigned wait_flags = s->cap ? CU_EVENT_WAIT_EXTERNAL : 0;
    dls_sim_unlock();
    unsigned node = 0;
    for (const dls_sim_op *n = x->head; n; n = n->next) {
        node++;
        if (n->kind != SIM_OP_EXT_WAIT) {
            dls_sim_op *op = clone_node(n);
            op->gexec = x->id;
            op->gnode = node;
            dls_sim_enqueue(s, op, NULL);
            continue;
        }
        CUresult r = dls_sim_event_wait_node(s, n->u.wait.e, wait_flags, x->id, node);
        if (r != CUDA_SUCCESS)
            return r;
    }
    return CUDA_SUCCESS;
}

const dls_sim_proc dls_sim_procs_graph[] = {
    SIM_PROC(cuGraphInstantiateWithFlags),
    SIM_PROC(cuGraphInstantiate),
    SIM_PROC(cuGraphExecDestroy),
    SIM_PROC(cuGraphDestroy),
    {NULL, NULL},
};
