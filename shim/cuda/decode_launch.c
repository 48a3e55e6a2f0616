/* The reader of the one launch shape the work decoder does not read (decode.h): the multi-device
 * cooperative launch, one operation per device. */
#include "decode_launch.h"

#include "kparams.h"

int dls_cuda_decode_launch_devices(dls_cuda_op *op, const CUpti_CallbackData *cb, unsigned index,
                                   const CUDA_LAUNCH_PARAMS *list, unsigned n, dls_cuda_scratch *scratch)
{
    if (!list || index >= n)
        return 0;
    const CUDA_LAUNCH_PARAMS *l = &list[index];
    dls_cuda_decode_on_stream(op, DLS_OP_LAUNCH, cb, l->hStream, 0, 1);
    if (!scratch) { /* no room for its words */
        op->flags |= DLS_OPF_CONSERVATIVE;
        return 1;
    }
    op->words = scratch->words;
    if (!dls_cuda_kernel_words(l->function, l->kernelParams, NULL, scratch->words, DLS_SCRATCH_WORDS, &op->nwords))
        op->flags |= DLS_OPF_CONSERVATIVE;
    return 1;
}
