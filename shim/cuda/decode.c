/* Dispatch of driver callbacks to the area decoders, and their shared helpers (see decode.h). */
#include "decode.h"

#include "cbids.h"
#include "streams.h"

void dls_cuda_decode_stream(dls_cuda_op *op, CUstream h, int per_thread_call, const CUpti_CallbackData *cb)
{
    op->flags |= DLS_OPF_HAS_STREAM;
    dls_cuda_stream_resolve(h, per_thread_call, cb->context, &op->stream);
}

void dls_cuda_decode_range(dls_cuda_op *op, dls_cuda_scratch *scratch, uintptr_t addr, size_t len, unsigned access)
{
    if (len == 0)
        return;
    if (op->nranges == DLS_SCRATCH_RANGES) {
        op->flags |= DLS_OPF_CONSERVATIVE;
        return;
    }
    op->ranges = scratch->ranges;
    scratch->ranges[op->nranges++] = (dls_cuda_range){.addr = addr, .len = len, .access = access};
}

int dls_cuda_decode(CUpti_CallbackId cbid, const CUpti_CallbackData *cb, unsigned index, dls_cuda_op *op,
                    dls_cuda_scratch *scratch)
{
    *op = (dls_cuda_op){.cbid = cbid};
    if (!cb || (!cb->functionParams && cbid != CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize))
        return 0; /* cuCtxSynchronize is the one handled call without parameters */
    dls_cuda_work w;
    if (dls_cuda_decode_work(cbid, cb, &w, scratch->words, DLS_SCRATCH_WORDS)) {
        if (index)
            return 0;
        dls_cuda_op_from_work(op, &w, cb, scratch);
        return 1;
    }
    if (dls_cuda_cbid_class_of(cbid) == DLS_CBID_LAUNCH) {
        int r = dls_cuda_decode_launch(cbid, cb, index, op, scratch);
        return r < 0 ? 0 : r;
    }
    if (index)
        return 0;
    int r = dls_cuda_decode_mem(cbid, cb, op, scratch);
    if (r < 0)
        r = dls_cuda_decode_sync(cbid, cb, op);
    return r < 0 ? 0 : r;
}
