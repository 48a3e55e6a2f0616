/* The helpers every decoder shares (see decode.h): the operation's stream, kind and ranges.
 * The bottom of the decoders: decode.c and the shape readers call it, it calls none of them. */
#include "decode_common.h"

#include "identity.h"

void dls_cuda_decode_stream(dls_cuda_op *op, CUstream h, int per_thread_call, const CUpti_CallbackData *cb)
{
    op->flags |= DLS_OPF_HAS_STREAM;
    op->stream = *dls_cuda_stream_resolve_latest(&dls_cuda_thread_self()->latest, h, per_thread_call, cb->context);
}

void dls_cuda_decode_on_stream(dls_cuda_op *op, dls_op_kind kind, const CUpti_CallbackData *cb, CUstream h,
                               int per_thread_call, int async)
{
    op->kind = kind;
    if (async)
        op->flags |= DLS_OPF_ASYNC;
    dls_cuda_decode_stream(op, h, per_thread_call, cb);
}

void dls_cuda_decode_range(dls_cuda_op *op, dls_cuda_scratch *scratch, uintptr_t addr, size_t len, unsigned access)
{
    if (len == 0)
        return;
    if (!scratch || op->nranges == DLS_SCRATCH_RANGES) {
        op->flags |= DLS_OPF_CONSERVATIVE;
        return;
    }
    op->ranges = scratch->ranges;
    scratch->ranges[op->nranges++] = (dls_cuda_range){.addr = addr, .len = len, .access = access};
}
