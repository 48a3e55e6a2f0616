/* Names and one-line formatting of observed operations (see ops.h). */
#include "ops.h"

#include <stdio.h>

static const char *const kind_names[DLS_OP_KIND_COUNT] = {
    [DLS_OP_LAUNCH] = "launch",
    [DLS_OP_MEMCPY] = "memcpy",
    [DLS_OP_MEMSET] = "memset",
    [DLS_OP_HOST_FUNC] = "host-func",
    [DLS_OP_GRAPH_LAUNCH] = "graph-launch",
    [DLS_OP_EVENT_CREATE] = "event-create",
    [DLS_OP_EVENT_RECORD] = "event-record",
    [DLS_OP_EVENT_DESTROY] = "event-destroy",
    [DLS_OP_STREAM_WAIT_EVENT] = "stream-wait-event",
    [DLS_OP_EVENT_SYNC] = "event-sync",
    [DLS_OP_EVENT_QUERY] = "event-query",
    [DLS_OP_STREAM_SYNC] = "stream-sync",
    [DLS_OP_STREAM_QUERY] = "stream-query",
    [DLS_OP_CTX_SYNC] = "ctx-sync",
    [DLS_OP_STREAM_CREATE] = "stream-create",
    [DLS_OP_STREAM_DESTROY] = "stream-destroy",
    [DLS_OP_FREE] = "free",
    [DLS_OP_CAPTURE_BEGIN] = "capture-begin",
    [DLS_OP_CAPTURE_END] = "capture-end",
    [DLS_OP_GRAPH_INSTANTIATE] = "graph-instantiate",
    [DLS_OP_GRAPH_EXEC_CHANGED] = "graph-exec-changed",
    [DLS_OP_GRAPH_DESTROY] = "graph-destroy",
};

const char *dls_cuda_op_kind_name(dls_op_kind k)
{
    return (unsigned)k < DLS_OP_KIND_COUNT ? kind_names[k] : "unknown";
}

const char *dls_cuda_stream_kind_name(dls_stream_kind k)
{
    switch (k) {
    case DLS_STREAM_NONE:
        return "none";
    case DLS_STREAM_LEGACY:
        return "legacy";
    case DLS_STREAM_PER_THREAD:
        return "per-thread";
    case DLS_STREAM_BLOCKING:
        return "blocking";
    case DLS_STREAM_NON_BLOCKING:
        return "non-blocking";
    default:
        return "unknown";
    }
}

/* The line of dls_cuda_op_format from its parts (stream NULL: none). */
static size_t format_line(char *buf, size_t n, dls_op_phase phase, dls_op_kind kind, const char *api,
                          const dls_cuda_stream *stream, uint64_t event_id, uint32_t nranges, uint32_t nwords,
                          unsigned flags, int result, const char *name)
{
    if (!n)
        return 0;
    int m = snprintf(buf, n,
                     "op %s %s api=%s stream=%llu/%s event=%llu ranges=%u words=%u conservative=%d result=%d name=%s",
                     phase == DLS_PHASE_ENTER ? "enter" : "exit", dls_cuda_op_kind_name(kind), api ? api : "?",
                     stream ? (unsigned long long)stream->id : 0ull,
                     dls_cuda_stream_kind_name(stream ? stream->kind : DLS_STREAM_NONE), (unsigned long long)event_id,
                     nranges, nwords, (flags & DLS_OPF_CONSERVATIVE) != 0, result, name ? name : "-");
    if (m < 0) {
        buf[0] = '\0';
        return 0;
    }
    return (size_t)m < n ? (size_t)m : n - 1;
}

size_t dls_cuda_op_format(const dls_cuda_op *op, char *buf, size_t n)
{
    return format_line(buf, n, op->phase, op->kind, op->api, (op->flags & DLS_OPF_HAS_STREAM) ? &op->stream : NULL,
                       (op->flags & DLS_OPF_HAS_EVENT) ? op->event_id : 0, op->nranges, op->nwords, op->flags,
                       op->result, op->name);
}

size_t dls_cuda_work_format(const dls_cuda_work *w, char *buf, size_t n)
{
    return format_line(buf, n, w->phase, w->kind, w->api, w->stream, 0, w->nranges, w->nwords, w->flags, w->result,
                       w->name);
}
