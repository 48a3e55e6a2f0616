/* The traits of each operation kind, read from one table with a row per dls_op_kind (kinds.def):
 * whether it touches memory, is looked at on ENTER, may be deferred, makes the host wait and for
 * what, and what its ENTER and EXIT give the model. The receivers (sink.c) dispatch on them. */
#ifndef DLS_POL_KINDS_H
#define DLS_POL_KINDS_H

#include "../common/export.h"
#include "../cuda/ops.h"

/* When a trait holds for an operation of a kind whose row names it (the `when` columns). */
typedef enum {
    DLS_POL_NEVER = 0,
    DLS_POL_ALWAYS,
    DLS_POL_IF_ASYNC,          /* a form not ordered with the host (DLS_OPF_ASYNC) */
    DLS_POL_IF_ASYNC_IN_FIX,   /* the same, in mode fix */
    DLS_POL_IF_SYNC_ON_STREAM, /* a form ordered with the host, on a stream */
    DLS_POL_IF_SYNC_FREEING,   /* a form ordered with the host that frees something: a range, or
                                  conservative (may free anything) */
} dls_pol_when;

/* What a host synchronize completes (the `waits` column; host_sync.c captures it at ENTER). */
typedef enum {
    DLS_POL_WAITS_NONE = 0,   /* not a host synchronize */
    DLS_POL_WAITS_EVENT,      /* its event's latest record */
    DLS_POL_WAITS_STREAM,     /* its stream's work */
    DLS_POL_WAITS_CONTEXT,    /* its context's work (every context's when that is not known) */
    DLS_POL_WAITS_ALLOCATION, /* the work of its allocation's context (nothing when that is not known) */
} dls_pol_waits;

/* A row of kinds.def. */
typedef struct {
    unsigned char entered, deferred, host_sync; /* dls_pol_when */
    unsigned char waits;                        /* dls_pol_waits */
    unsigned char exit_models_nothing, forgets_at_enter, ends_on_error;
} dls_pol_kind_traits;

/* The table: dls_pol_kinds[k] is kind k's row. */
extern const dls_pol_kind_traits dls_pol_kinds[DLS_OP_KIND_COUNT] DLS_HIDDEN;

/* 1 for the operations that touch memory (history entries, touch tests): the table's `memory`
 * column, read at compile time (every deferred record and history entry asks). */
static inline int dls_pol_is_memory_op(dls_op_kind k)
{
    return 0
#define KIND(name, memory, entered, deferred, host_sync, waits, nothing, forgets, errors) \
    || ((memory) && k == DLS_OP_##name)
#include "kinds.def"
#undef KIND
        ;
}

/* 1 for an event record or a stream's wait for an event: deferred like work, applied as hb's
 * event calls (queue.c). */
static inline int dls_pol_is_event_order(dls_op_kind k)
{
    return k == DLS_OP_EVENT_RECORD || k == DLS_OP_STREAM_WAIT_EVENT;
}

/* Whether `when` holds for op (`fix`: the mode is fix). */
static inline int dls_pol_holds(unsigned when, const dls_cuda_op *op, int fix)
{
    int async = (op->flags & DLS_OPF_ASYNC) != 0;
    switch (when) {
    case DLS_POL_ALWAYS:
        return 1;
    case DLS_POL_IF_ASYNC:
        return async;
    case DLS_POL_IF_ASYNC_IN_FIX:
        return async && fix;
    case DLS_POL_IF_SYNC_ON_STREAM:
        return !async && (op->flags & DLS_OPF_HAS_STREAM);
    case DLS_POL_IF_SYNC_FREEING:
        return !async && (op->nranges || (op->flags & DLS_OPF_CONSERVATIVE));
    default:
        return 0;
    }
}

/* 1 when op, an operation on a stream, is looked at on ENTER (`fix`: the mode is fix). */
static inline int dls_pol_entered(const dls_cuda_op *op, int fix)
{
    return (op->flags & DLS_OPF_HAS_STREAM) && dls_pol_holds(dls_pol_kinds[op->kind].entered, op, fix);
}

/* 1 when op's EXIT only enqueues work on its stream (then it may be deferred). */
static inline int dls_pol_deferrable(const dls_cuda_op *op)
{
    return (op->flags & DLS_OPF_HAS_STREAM) && dls_pol_holds(dls_pol_kinds[op->kind].deferred, op, 0);
}

/* 1 when op makes the host wait for work (host_sync.h). */
static inline int dls_pol_host_sync(const dls_cuda_op *op)
{
    return dls_pol_holds(dls_pol_kinds[op->kind].host_sync, op, 0);
}

#endif
