/* The readers of the launch shapes the work decoder does not read (decode.h): the multi-device
 * cooperative launch, one operation per device, and the legacy cuLaunch* forms. */
#include "decode.h"
#include "decode_work.h"

int dls_cuda_decode_launch_devices(dls_cuda_op *op, const CUpti_CallbackData *cb, unsigned index,
                                   const CUDA_LAUNCH_PARAMS *list, unsigned n, dls_cuda_scratch *scratch)
{
    if (!list || index >= n)
        return 0;
    const CUDA_LAUNCH_PARAMS *l = &list[index];
    dls_cuda_work w;
    dls_cuda_work_init(&w);
    dls_cuda_work_launch(&w, l->hStream, 0, l->function, l->kernelParams, NULL, scratch->words, DLS_SCRATCH_WORDS);
    dls_cuda_op_from_work(op, &w, cb, scratch);
    return 1;
}

void dls_cuda_decode_launch_legacy(dls_cuda_op *op, const CUpti_CallbackData *cb, CUstream h)
{
    op->kind = DLS_OP_LAUNCH;
    op->flags |= DLS_OPF_ASYNC | DLS_OPF_CONSERVATIVE;
    dls_cuda_decode_stream(op, h, 0, cb);
}
